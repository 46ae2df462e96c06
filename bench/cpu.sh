#!/usr/bin/env bash
# bench/cpu.sh -- the CPU engine on human chr20 (vt-examples), k=31, 16 bits per k-mer, default
# parameters: build time (sbf build, file to index, 1 and 2 threads, median of RUNS runs), index
# size, false positives of 10^7 random 31-mers, query k-mers/s with 1 and THREADS threads on
# every scan path this CPU runs (SBF_SIMD), and `sbf filter --gpu none` end to end on plain
# FASTQ (PAIRS wgsim pairs 2x150, half chr20, half E. coli; Mbp/s per core, median of RUNS).
#   bench/cpu.sh [RUNS]          results: a table on stdout (copied into doc/PERFORMANCE.md)
#   env: THREADS [2], PAIRS [1000000], PARTS [build fpr paths filter] (the sections to run; the
#        index is built once whatever PARTS says), REF and OTHER (bench/genomes.sh), NO_MAKE=1
#        (use the sbf and bench/sbf-bench already built: the GPU machine has no compiler)
#   PARTS=big (not run by default; issue 27): queries per second per core against chr20 and
#        against a human-sized index, chr20 + BIG_RECORDS [30] x 100 Mbp of random sequence
#        (bench/sbf-randfa), 1 and THREADS threads, the same sbf-bench measurement for both
#        (400,000 150 bp reads of the indexed sequence, and random reads); needs about 3 bytes
#        of memory per indexed base
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
. bench/genomes.sh
[ "${NO_MAKE:-0}" = 1 ] || make -s sbf bench/sbf-bench bench/sbf-randfa
part() { [[ " ${PARTS:-build fpr paths filter} " == *" $1 "* ]]; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
./sbf --version | grep -E '^(sbf|CPU scan)'
T=${THREADS:-2}
paths=$(./sbf --version | sed -n 's/^CPU scan: .*this CPU runs: \(.*\))$/\1/p' | tr -d ,)
if part build; then
for t in 1 "$T"; do
  for i in $(seq "$runs"); do seconds ./sbf build -@ "$t" -o "$work/chr20.sbf" "$ref"; done > "$work/build$t"
done
./sbf info "$work/chr20.sbf"
echo
printf '%-44s %s\n' "build chr20, 1 thread (s, median of $runs)" "$(median < "$work/build1")"
printf '%-44s %s\n' "build chr20, $T threads (s, median of $runs)" "$(median < "$work/build$T")"
printf '%-44s %s\n' "index size (bytes)" "$(stat -c %s "$work/chr20.sbf")"
else
  ./sbf build -@ "$T" -o "$work/chr20.sbf" human="$ref" > /dev/null 2>&1
fi
if part fpr; then
for t in 1 "$T"; do
  ./bench/sbf-bench -r "$ref" -o "$other" -@ "$t" -n 10000000 -v 1000000 -q 400000 > "$work/q$t"
done
# columns of sbf-bench: see its --header
awk -F'\t' '{printf "%-44s %s\n", "build, insertion only, 1 thread (Mkmer/s)", $11;
             printf "%-44s %.6f%%\n", "FPR, 10^7 random 31-mers (predicted " $13*100 "%)", $14*100;
             printf "%-44s %.6f%%\n", "FPR, E. coli k-mers", $15*100;
             printf "%-44s %.4f%%\n", "FPR, one-base variants of chr20 k-mers", $16*100;
             printf "%-44s %s\n", "query, 1 thread, chr20 reads (Mkmer/s)", $17;
             printf "%-44s %s\n", "query, 1 thread, random reads (Mkmer/s)", $18}' "$work/q1"
awk -F'\t' -v t="$T" '{printf "%-44s %s\n", "query, " t " threads, chr20 reads (Mkmer/s)", $17;
             printf "%-44s %s\n", "query, " t " threads, random reads (Mkmer/s)", $18}' "$work/q$T"
fi
# a human-sized index against chr20's: the CPU engine when the filter is far larger than the caches
if part big; then
  nbig=${BIG_RECORDS:-30}
  { zcat "$ref"; for i in $(seq "$nbig"); do ./bench/sbf-randfa "$i" 1 100000000 "rand$i"; done; } > "$work/big.fa"
  for t in 1 "$T"; do
    for ix in chr20 big; do
      r=$ref; [ $ix = big ] && r=$work/big.fa
      for i in $(seq "$runs"); do
        ./bench/sbf-bench -r "$r" -o "$other" -@ "$t" -n 10000 -v 1000 -q 400000 2> /dev/null
      done > "$work/$ix$t"
    done
    for col in 17:indexed 18:random; do
      c=${col%%:*}
      a=$(cut -f"$c" "$work/chr20$t" | median) b=$(cut -f"$c" "$work/big$t" | median)
      printf '%-44s %s / %s (big/chr20 %s)\n' "query, $t thread(s), ${col#*:} reads, chr20 / big" "$a" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
    done
  done
  rm -f "$work/big.fa"
fi
# every scan path, 1 and T threads (queries only: -n/-v small), median of RUNS
part paths && for p in $paths; do
  for t in 1 "$T"; do
    for i in $(seq "$runs"); do
      SBF_SIMD=$p ./bench/sbf-bench -r "$ref" -o "$other" -@ "$t" -n 10000 -v 1000 -q 400000 2> /dev/null
    done > "$work/p$p$t"
    printf '%-44s %s / %s\n' "query, $p path, $t thread(s) (chr20 / random)" \
      "$(cut -f17 "$work/p$p$t" | median)" "$(cut -f18 "$work/p$p$t" | median)"
  done
done
# end to end: sbf filter --gpu none, plain FASTQ in and out, every scan path
if part filter && command -v wgsim > /dev/null; then
  P=${PAIRS:-1000000}
  zcat "$ref" > "$work/chr20.fa"
  zcat "$other" > "$work/ecoli.fa"
  wgsim -N $((P / 2)) -1 150 -2 150 -e 0.002 -r 0.001 -S 1 "$work/chr20.fa" "$work/h1.fq" "$work/h2.fq" > /dev/null 2>&1 &
  wgsim -N $((P / 2)) -1 150 -2 150 -e 0.002 -r 0.001 -S 2 "$work/ecoli.fa" "$work/e1.fq" "$work/e2.fq" > /dev/null 2>&1
  wait
  cat "$work/h1.fq" "$work/e1.fq" > "$work/r1.fq"
  cat "$work/h2.fq" "$work/e2.fq" > "$work/r2.fq"
  mbp=$(awk 'NR % 4 == 2 { n += length($0) } END { print n / 1e6 }' "$work/r1.fq" "$work/r2.fq")
  for p in $paths; do
    for i in $(seq "$runs"); do
      rm -f "$work/f1.fq" "$work/f2.fq"
      SBF_SIMD=$p seconds ./sbf filter --gpu none -@ "$T" -x "$work/chr20.sbf" --remove "$(./sbf info "$work/chr20.sbf" | awk '/^target +bases/ { getline; print $1; exit }')" \
        -1 "$work/f1.fq" -2 "$work/f2.fq" "$work/r1.fq" "$work/r2.fq" 2> /dev/null
    done > "$work/f$p"
    s=$(median < "$work/f$p")
    printf '%-44s %s s, %s Mbp/s per core\n' "filter $P pairs --gpu none -@$T, $p path" "$s" \
      "$(awk -v m="$mbp" -v s="$s" -v t="$T" 'BEGIN { printf "%.1f", m / s / t }')"
  done
elif part filter; then
  echo "filter end to end: skipped (wgsim missing: apt-get install samtools wgsim)"
fi
