#!/usr/bin/env bash
# report.sh -- `--report FILE.html`: the page is self-contained (no script, no external
# reference), holds the categories, counts and parameters of the run, and loads in headless
# Chromium without errors, rendering to a PNG. Skipped (not failed) without chromium.
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
check "a score chart per target" test "$(grep -c 'aria-label="score distribution"' report.html)" -eq 2
check "the run's parameters" grep -q 'score &gt;= 3, hits &gt;= 1, margin 0.02, repeats of 24+ bases masked' report.html

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  n=$((n + 1)); echo "ok $n - renders in headless Chromium # SKIP chromium not installed"
else
  # --dump-dom: the page after loading; --screenshot: rendered to a PNG. Console errors (a bad
  # SVG, a failed load) are logged with "CONSOLE" or "Uncaught".
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
    --dump-dom "file://$work/report.html" > dom.html 2> chromium.err
  check "Chromium loads the page" grep -q 'aria-label="score distribution"' dom.html
  check "... without console errors" test "$(grep -ciE 'CONSOLE|Uncaught|Failed to load|ERR_' chromium.err)" -eq 0
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --window-size=1000,1400 \
    --screenshot="$work/report.png" "file://$work/report.html" > /dev/null 2>&1
  check "... and renders it to a PNG" test "$(head -c 8 report.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a -a \
    "$(wc -c < report.png)" -gt 20000
fi
tap_end
