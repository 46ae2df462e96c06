#!/usr/bin/env bash
# bench/layer.sh -- what the long-read layer costs and buys (issue 26, doc/PERFORMANCE.md "The
# long-read layer"): the same targets built with the default index (k 31 and the k 21 layer)
# and with --long-layer none, on this machine, in one call:
#   - build seconds and index size (median of RUNS builds, THREADS threads);
#   - classify seconds of PAIRS wgsim pairs 2x150 (half chr20, half E. coli: no read reaches the
#     layer) and of the real long reads of bench/real.sh (ecoli_ont and ecoli_pacbio, twice),
#     the two indexes alternating, medians of RUNS; the answers of the short pairs compared.
#   bench/layer.sh [RUNS]   env: THREADS [2], PAIRS [1000000], REAL_DIR [/tmp/sbf-real] (run
#                           bench/real.sh once first), LONG (FASTQ files of long reads instead,
#                           read twice), ENGINE ["--gpu none"; "--gpu 0" for the GPU engine],
#                           SBF [./sbf], REF, OTHER (bench/genomes.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
. bench/genomes.sh
SBF=${SBF:-./sbf}
T=${THREADS:-2}
PAIRS=${PAIRS:-1000000}
REAL_DIR=${REAL_DIR:-${TMPDIR:-/tmp}/sbf-real}
work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-layer.XXXXXX")
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'; }

echo "# bench/layer.sh: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $("$SBF" --version | head -1)"
echo "# targets: human=$ref ecoli=$other; $T threads; classify ${ENGINE:---gpu none}; medians of $runs"
for v in layer flat; do
  opt=(); [ $v = flat ] && opt=(--long-layer none)
  for i in $(seq "$runs"); do seconds "$SBF" build --gpu none -@ "$T" "${opt[@]}" -o "$work/$v.sbf" human="$ref" ecoli="$other"; done | median > "$work/build.$v"
done
zcat -f "$ref" > "$work/chr20.fa"; zcat -f "$other" > "$work/ecoli.fa"
half=$((PAIRS / 2))
wgsim -N $half -1 150 -2 150 -e 0.002 -r 0.001 -S 1 "$work/chr20.fa" "$work/h1.fq" "$work/h2.fq" > /dev/null 2>&1
wgsim -N $((PAIRS - half)) -1 150 -2 150 -e 0.002 -r 0.001 -S 2 "$work/ecoli.fa" "$work/e1.fq" "$work/e2.fq" > /dev/null 2>&1
cat "$work/h1.fq" "$work/e1.fq" > "$work/r1.fq"; cat "$work/h2.fq" "$work/e2.fq" > "$work/r2.fq"
long=""
LONG=${LONG:-$REAL_DIR/sets/ecoli_ont.fq $REAL_DIR/sets/ecoli_pacbio.fq}
# shellcheck disable=SC2086 # a list of files
if ls $LONG > /dev/null 2>&1; then
  for i in 1 2; do for f in $LONG; do zcat -f "$f"; done; done > "$work/long.fq"
  long=$work/long.fq
fi
read -r -a engine <<< "${ENGINE:---gpu none}"
for i in $(seq "$runs"); do   # alternating
  for v in layer flat; do
    seconds "$SBF" classify "${engine[@]}" -@ "$T" -x "$work/$v.sbf" -o "$work/short.$v.bam" "$work/r1.fq" "$work/r2.fq" >> "$work/short.$v"
    [ -z "$long" ] || seconds "$SBF" classify "${engine[@]}" -@ "$T" -x "$work/$v.sbf" -o /dev/null "$long" >> "$work/long.$v"
  done
done
"$SBF" classify --gpu none -@ "$T" -x "$work/layer.sbf" --hits -o "$work/a.sam" "$work/r1.fq" "$work/r2.fq" 2> /dev/null
"$SBF" classify --gpu none -@ "$T" -x "$work/flat.sbf" --hits -o "$work/b.sam" "$work/r1.fq" "$work/r2.fq" 2> /dev/null
same=$(cmp -s <(grep -v '^@' "$work/a.sam") <(grep -v '^@' "$work/b.sam") && echo "identical" || echo "DIFFER")   # @PG names the index
printf '%-34s %14s %14s %8s\n' "" "default (layer)" "--long-layer none" "ratio"
row() { printf '%-34s %14s %14s %8s\n' "$1" "$2" "$3" "$(awk -v a="$2" -v b="$3" 'BEGIN { if (b > 0) printf "%.3f", a / b }')"; }
row "build, s" "$(cat "$work/build.layer")" "$(cat "$work/build.flat")"
row "index, MB" "$(( $(stat -c %s "$work/layer.sbf") / 1000000 ))" "$(( $(stat -c %s "$work/flat.sbf") / 1000000 ))"
row "classify $PAIRS pairs, s" "$(median < "$work/short.layer")" "$(median < "$work/short.flat")"
[ -z "$long" ] || row "classify $(($(wc -l < "$long") / 4)) long reads, s" "$(median < "$work/long.layer")" "$(median < "$work/long.flat")"
echo "# the pairs' records (tags and hits): $same"
