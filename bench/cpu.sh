#!/usr/bin/env bash
# bench/cpu.sh -- the CPU engine on human chr20 (vt-examples), k=31, 16 bits per k-mer, default
# parameters: build time (sbf build, file to index, 1 and 2 threads, median of RUNS runs), index
# size, false positives of 10^7 random 31-mers, and query k-mers/s with 1 and 2 threads.
#   bench/cpu.sh [RUNS]          results: a table on stdout (copied into doc/PERFORMANCE.md)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
. bench/genomes.sh
make -s sbf bench/sbf-bench
work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
./sbf --version | head -n 1
for t in 1 2; do
  for i in $(seq "$runs"); do seconds ./sbf build -@ "$t" -o "$work/chr20.sbf" "$ref"; done > "$work/build$t"
done
./sbf info "$work/chr20.sbf"
echo
printf '%-44s %s\n' "build chr20, 1 thread (s, median of $runs)" "$(median < "$work/build1")"
printf '%-44s %s\n' "build chr20, 2 threads (s, median of $runs)" "$(median < "$work/build2")"
printf '%-44s %s\n' "index size (bytes)" "$(stat -c %s "$work/chr20.sbf")"
for t in 1 2; do
  ./bench/sbf-bench -r "$ref" -o "$other" -@ "$t" -n 10000000 -v 1000000 -q 400000 > "$work/q$t"
done
# columns of sbf-bench: see its --header
awk -F'\t' '{printf "%-44s %s\n", "build, insertion only, 1 thread (Mkmer/s)", $11;
             printf "%-44s %.6f%%\n", "FPR, 10^7 random 31-mers (predicted " $13*100 "%)", $14*100;
             printf "%-44s %.6f%%\n", "FPR, E. coli k-mers", $15*100;
             printf "%-44s %.4f%%\n", "FPR, one-base variants of chr20 k-mers", $16*100;
             printf "%-44s %s\n", "query, 1 thread, chr20 reads (Mkmer/s)", $17;
             printf "%-44s %s\n", "query, 1 thread, random reads (Mkmer/s)", $18}' "$work/q1"
awk -F'\t' '{printf "%-44s %s\n", "query, 2 threads, chr20 reads (Mkmer/s)", $17;
             printf "%-44s %s\n", "query, 2 threads, random reads (Mkmer/s)", $18}' "$work/q2"
