#!/usr/bin/env bash
# options.sh -- nothing the user said is lost: an option given twice adds up (-x, --remove,
# --keep, categorize's -f) or is refused with one line naming it; an option that would do
# nothing in its combination is refused. Each refusal checks the exact message, exit status 1
# and that no output was written. TAP-like output (tests/tap.sh).
# Run by `make check` or by hand: tests/options.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
C=(--gpu none)

# refused NAME 'FIRST STDERR LINE' OUTPUT CMD...: exit 1, that first line, OUTPUT (or -) absent,
# nothing on stdout
refused() {
  local name=$1 line=$2 out=$3
  shift 3
  "$@" > stdout 2> stderr
  local got=$? first
  first=$(head -n 1 stderr)
  if [ "$got" -ne 1 ]; then not_ok "$name" "exit status $got, expected 1" "stderr: $first"
  elif [ "$first" != "$line" ]; then not_ok "$name" "stderr: '$first'" "wanted: '$line'"
  elif [ "$out" != - ] && [ -e "$out" ]; then not_ok "$name" "$out was written"
  elif [ -s stdout ]; then not_ok "$name" "stdout: $(head -c 100 stdout)"
  else ok "$name"; fi
}

# ---- data: three targets, 300 pairs from each -------------------------------------------------------
"$SBF" build "${C[@]}" -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" \
  lambda="$data/lambda.fa.gz" 2> build.err || { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
for g in human ecoli lambda; do
  f=$data/${g}_slice.fa.gz; [ -e "$f" ] || f=$data/$g.fa.gz
  zcat "$f" | awk -v g=$g '/^>/ { next } { s = s $0 } END {
    q = sprintf("%100s", ""); gsub(/ /, "I", q)
    for (i = 0; i < 300; ++i) printf "@%s_%d\n%s\n+\n%s\n", g, i, substr(s, 1 + 91 * i, 100), q }'
done > reads.fq
"$SBF" build "${C[@]}" -o h.sbf human="$data/human_slice.fa.gz" 2> /dev/null &&
  "$SBF" build "${C[@]}" -o e.sbf ecoli="$data/ecoli_slice.fa.gz" 2> /dev/null ||
  { echo "Bail out! sbf build failed"; exit 1; }
names() { awk 'NR % 4 == 1 { n = substr($1, 2); sub(/_.*/, "", n); c[n]++ } END { for (n in c) printf "%s:%d ", n, c[n]; print "" }' "$1" | tr ' ' '\n' | sort | tr '\n' ' '; }

# ---- filter: --remove and --keep add up ------------------------------------------------------------
"$SBF" filter -x idx.sbf "${C[@]}" --remove human --remove ecoli -o out.fq reads.fq 2> err
check "--remove human --remove ecoli: exit 0" test $? -eq 0
got=$(names out.fq)
if [ "$got" = " lambda:300 " ]; then ok "--remove human --remove ecoli: both removed, lambda kept"
else not_ok "--remove human --remove ecoli: both removed, lambda kept" "written: $got"; fi
"$SBF" filter -x idx.sbf "${C[@]}" --remove human,ecoli -o out2.fq reads.fq 2> /dev/null
check "... the same reads as --remove human,ecoli" cmp -s out.fq out2.fq
"$SBF" filter -x idx.sbf "${C[@]}" --keep human --keep lambda -o keep.fq reads.fq 2> err
got=$(names keep.fq)
if [ "$got" = " human:300 lambda:300 " ]; then ok "--keep human --keep lambda: both kept"
else not_ok "--keep human --keep lambda: both kept" "written: $got"; fi
refused "--remove then --keep: refused" "sbf filter: --remove and --keep cannot be used together" out3.fq \
  "$SBF" filter -x idx.sbf "${C[@]}" --remove human --keep ecoli -o out3.fq reads.fq
refused "--remove naming no target: refused" \
  "sbf filter: no target 'mouse' in idx.sbf (targets: human, ecoli, lambda)" out3.fq \
  "$SBF" filter -x idx.sbf "${C[@]}" --remove human --remove mouse -o out3.fq reads.fq

# ---- an option with a value, given twice: refused -----------------------------------------------------
refused "classify -o twice" "sbf classify: -o/--output given twice: give it once" b.fq \
  "$SBF" classify -x idx.sbf "${C[@]}" -o a.fq -o b.fq reads.fq
check "... and the first output was not written either" test ! -e a.fq
refused "classify --json twice" "sbf classify: --json given twice: give it once" - \
  "$SBF" classify -x idx.sbf "${C[@]}" --json a.json --json b.json -o /dev/null reads.fq
refused "classify -s twice" "sbf classify: -s/--min-score given twice: give it once" - \
  "$SBF" classify -x idx.sbf "${C[@]}" -s 3 --min-score 4 -o /dev/null reads.fq
refused "filter -K twice" "sbf filter: -K/--batch given twice: give it once" - \
  "$SBF" filter -x idx.sbf "${C[@]}" -K 1M -K 2M -o /dev/null reads.fq
refused "filter --gpu twice" "sbf filter: --gpu given twice: give it once" - \
  "$SBF" filter -x idx.sbf --gpu none --gpu auto -o /dev/null reads.fq
"$SBF" classify -x h.sbf -x e.sbf "${C[@]}" -o two.fq reads.fq 2> err
check "classify -x twice: two indexes screened side by side (exit 0)" test $? -eq 0
got=$(awk 'NR % 4 == 1 { n = substr($1, 2); sub(/_.*/, "", n); c = ""; for (i = 2; i <= NF; ++i) if ($i ~ /^sb:Z:/) c = substr($i, 6)
           print n, c }' two.fq 2> /dev/null | sort | uniq -c | awk '{ printf "%s=%s:%d ", $2, $3, $1 }')
if [ "$got" = "ecoli=ecoli:300 human=human:300 lambda=none:300 " ]; then ok "... each read on its index's target"
else not_ok "... each read on its index's target" "got: $got"; fi
"$SBF" classify -x idx.sbf "${C[@]}" --stats --stats --no-PG --no-PG -o flags.fq reads.fq 2> err
check "a flag given twice is harmless (exit 0)" test $? -eq 0

# ---- query: one index --------------------------------------------------------------------------------
refused "query -x twice" "sbf query: one index per query (-x given twice); 'sbf classify' screens against several" q.tsv \
  "$SBF" query -x idx.sbf -x idx.sbf "${C[@]}" -o q.tsv reads.fq
refused "query -o twice" "sbf query: -o/--output given twice: give it once" q.tsv \
  "$SBF" query -x idx.sbf "${C[@]}" -o p.tsv -o q.tsv reads.fq

# ---- build ----------------------------------------------------------------------------------------------
refused "build --gpu 0,1" "sbf build: a build runs on one device: --gpu auto, none or one ID (screening takes several)" \
  b.sbf "$SBF" build --gpu 0,1 -o b.sbf "$data/lambda.fa.gz"
refused "build --gpu all" "sbf build: a build runs on one device: --gpu auto, none or one ID (screening takes several)" \
  b.sbf "$SBF" build --gpu all -o b.sbf "$data/lambda.fa.gz"
refused "build -k twice" "sbf build: -k/--kmer given twice: give it once" b.sbf \
  "$SBF" build "${C[@]}" -k 25 -k 27 -o b.sbf "$data/lambda.fa.gz"
refused "build --preset with -k" "sbf build: --preset long sets k: give --preset or -k, not both" b.sbf \
  "$SBF" build "${C[@]}" --preset long -k 21 -o b.sbf "$data/lambda.fa.gz"
refused "build --preset twice" "sbf build: --preset given twice: give it once" b.sbf \
  "$SBF" build "${C[@]}" --preset long --preset sr -o b.sbf "$data/lambda.fa.gz"
"$SBF" build "${C[@]}" --preset long -o long.sbf "$data/lambda.fa.gz" 2> err
check "build --preset long: k=25" sh -c "'$SBF' info long.sbf | grep -q '^parameters *k=25 m=19 s=19 '"

# ---- categorize (BioBloom's options) ----------------------------------------------------------------------
"$SBF" categorize "${C[@]}" -p two -f h.sbf -f e.sbf reads.fq 2> err
check "categorize -f twice: exit 0" test $? -eq 0
check "... both filters in the summary" \
  sh -c "cut -f1 two_summary.tsv | grep -qx human && cut -f1 two_summary.tsv | grep -qx ecoli"
"$SBF" categorize "${C[@]}" -p one -f "h.sbf e.sbf" reads.fq 2> /dev/null
check "... the same summary as -f \"h.sbf e.sbf\" (hits and rates)" \
  sh -c "cut -f1-7 two_summary.tsv > a; cut -f1-7 one_summary.tsv > b; cmp -s a b"
refused "categorize -g without --fq/--fa" "sbf categorize: -g compresses the read files of --fq or --fa: give one of them too" \
  g_summary.tsv "$SBF" categorize "${C[@]}" -p g -g -f h.sbf reads.fq
refused "categorize -i without -e" "sbf categorize: -i (a pair matches when either mate does) needs -e (paired reads)" \
  i_summary.tsv "$SBF" categorize "${C[@]}" -p i -i -f h.sbf reads.fq
refused "categorize --fq and --fa" "sbf categorize: --fq and --fa: give one (the format of the read files written)" \
  fa_summary.tsv "$SBF" categorize "${C[@]}" -p fa --fq --fa -f h.sbf reads.fq
refused "categorize -p twice" "sbf categorize: -p/--prefix given twice: give it once" p2_summary.tsv \
  "$SBF" categorize "${C[@]}" -p p1 -p p2 -f h.sbf reads.fq

tap_end
