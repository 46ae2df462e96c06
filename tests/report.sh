#!/usr/bin/env bash
# report.sh -- `--report FILE.html`: the page is self-contained (no script, no external
# reference), holds the categories, counts and parameters of the run, and loads in headless
# Chromium without errors, rendering to a PNG (skipped, not failed, without chromium). Each
# target's chart is of the calibrated score (the one the rule and ss:f use): its bins agree
# with the ss:f tags read by read, and the threshold line sits at the run's --min-score.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/report.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1

"$SBF" build -o idx.sbf lambda="$data/lambda.fa.gz" 'E. coli <K-12>'="$data/ecoli_slice.fa.gz" 2> /dev/null ||
  { echo "Bail out! sbf build failed"; exit 1; }
# 300 reads of lambda, 200 of E. coli, 100 random
zcat "$data/lambda.fa.gz" "$data/ecoli_slice.fa.gz" |
  awk '/^>/ { g++; next } { s[g] = s[g] $0 } END { srand(9); q = sprintf("%100s", ""); gsub(/ /, "I", q)
    for (i = 0; i < 600; ++i) { if (i < 300) r = substr(s[1], 1 + 150 * i, 100); else if (i < 500) r = substr(s[2], 1 + 140 * (i - 300), 100)
      else { r = ""; for (j = 0; j < 100; ++j) r = r substr("ACGT", int(rand() * 4) + 1, 1) }
      printf "@r%d\n%s\n+\n%s\n", i, r, q } }' > reads.fq
"$SBF" classify -x idx.sbf --report report.html --json s.json -o /dev/null reads.fq 2> err
check "classify --report: exit 0" test $? -eq 0
check "the page is HTML with inline SVG charts" grep -q '<svg xmlns="http://www.w3.org/2000/svg"' report.html
check "no script and nothing fetched from elsewhere" test "$(grep -ciE '<script|src=|href=|url\(|@import' report.html)" -eq 0
check "category counts on the page (300 lambda, 200 E. coli, 100 none)" \
  test "$(grep -c '>lambda: 300<\|>E. coli &lt;K-12&gt;: 200<\|>none: 100<' report.html)" -eq 3
check "target names are escaped" test "$(grep -c 'E. coli <K-12>' report.html)" -eq 0
check "a calibrated-score chart per target" \
  test "$(grep -c 'aria-label="calibrated score distribution"' report.html)" -eq 2
check "... its x axis is the calibrated score" test "$(grep -c '>calibrated score (-log10 chance; ss:f)<' report.html)" -eq 2
# lambda's chart: its 300 reads far above the axis's end (30+), the 300 others without a hit (0)
check "... lambda's reads in the open bin, the others at score 0" \
  test "$(grep -m 2 -o '<title>score 30+: [0-9]*\|<title>score 0-1: [0-9]*' report.html | tr '\n' ' ')" = \
  '<title>score 0-1: 300 <title>score 30+: 300 '
check "... and no chart of k-mer fractions called a score" test "$(grep -c 'score 0.95\|k-mers found / valid' report.html)" -eq 0

# The threshold line: where it sits on the first chart's score axis, from the ticks at 0 and 5.
threshold_at() {
  awk '/<\/svg>/ && t != "" { exit } /class="tick"/ && n < 2 { match($0, /x1="[0-9.]+"/); x[n++] = substr($0, RSTART + 4, RLENGTH - 5) }
    /class="threshold"/ { match($0, /x1="[0-9.]+"/); t = substr($0, RSTART + 4, RLENGTH - 5) }
    END { if (n < 2 || t == "") print "none"; else printf "%.2f\n", 5 * (t - x[0]) / (x[1] - x[0]) }' "$1"
}
at=$(threshold_at report.html)
check "the threshold line at the default --min-score (3; it is at $at)" test "$at" = 3.00
check "... labelled with it" test "$(grep -c '>threshold 3 (--min-score)<' report.html)" -eq 2
"$SBF" classify -x idx.sbf -s 5 --report report5.html -o /dev/null reads.fq 2> /dev/null
at=$(threshold_at report5.html)
check "-s 5: the line moves to 5 (it is at $at)" test "$at" = 5.00
check "... labelled with it" test "$(grep -c '>threshold 5 (--min-score)<' report5.html)" -eq 2
"$SBF" classify -x idx.sbf -s 50 --report report50.html -o /dev/null reads.fq 2> /dev/null
check "-s 50: the line at the axis's end, labelled beyond it" \
  test "$(threshold_at report50.html):$(grep -c '>threshold 50 (--min-score), beyond the axis<' report50.html)" = 31.00:2

# One target, lambda reads with 0-30% of their bases changed: scores spread over the axis. With
# one target a read's ss:f is its score in that target, so the chart's bins (0-1, ..., 29-30,
# 30+) are the ss:f values' bins, read by read.
"$SBF" build -o one.sbf lambda="$data/lambda.fa.gz" 2> /dev/null
zcat "$data/lambda.fa.gz" | awk '/^>/ { next } { s = s $0 } END { srand(11); q = sprintf("%100s", ""); gsub(/ /, "I", q)
  for (i = 0; i < 400; ++i) { r = substr(s, 1 + 113 * i, 100); p = 0.3 * i / 400; o = ""
    for (j = 1; j <= 100; ++j) { b = substr(r, j, 1); if (rand() < p) b = substr("ACGT", int(rand() * 4) + 1, 1); o = o b }
    printf "@m%d\n%s\n+\n%s\n", i, o, q } }' > mut.fq
"$SBF" classify -x one.sbf --report one.html -o tagged.fq mut.fq 2> /dev/null
tags=$(grep -o 'ss:f:[^[:space:]]*' tagged.fq | cut -d: -f3 |
  awk '{ b = int($1); if (b > 30) b = 30; c[b]++ } END { for (b = 0; b <= 30; ++b) printf "%d ", c[b] }')
chart=$(grep -o '<title>score [0-9+-]*: [0-9]*' one.html | awk '{ printf "%d ", $3 }')
check "one target: the chart's bins are the ss:f tags' bins ($chart)" test "$tags" = "$chart"
check "... and the scores spread (10 or more bins between 1 and 30 hold reads)" \
  test "$(echo "$chart" | awk '{ for (b = 2; b <= 30; ++b) n += $b > 0; print n }')" -ge 10
check "the run's parameters" grep -q 'score &gt;= 3, hits &gt;= 1, margin 0.02, repeats of 24+ bases masked' report.html

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  n=$((n + 1)); echo "ok $n - renders in headless Chromium # SKIP chromium not installed"
else
  # --dump-dom: the page after loading; --screenshot: rendered to a PNG. Console errors (a bad
  # SVG, a failed load) are logged with "CONSOLE" or "Uncaught".
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
    --dump-dom "file://$work/report.html" > dom.html 2> chromium.err
  check "Chromium loads the page" grep -q 'aria-label="calibrated score distribution"' dom.html
  check "... without console errors" test "$(grep -ciE 'CONSOLE|Uncaught|Failed to load|ERR_' chromium.err)" -eq 0
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --window-size=1000,1400 \
    --screenshot="$work/report.png" "file://$work/report.html" > /dev/null 2>&1
  check "... and renders it to a PNG" test "$(head -c 8 report.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a -a \
    "$(wc -c < report.png)" -gt 20000
fi
tap_end
