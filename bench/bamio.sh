#!/usr/bin/env bash
# bench/bamio.sh -- where the BAM row's time goes at many threads (issue 27): in one call, each
# thread count T of THREADS, rounds alternating between
#   copy      samtools view -@T -b (the baseline of bench/e2e.sh's BAM row)
#   copy+     samtools view -@(T + T/4) -b: as many htslib threads as sbf starts at -@T
#   io        SBF_NULL_ENGINE=1 sbf classify -@T: sbf's reading, batching, encoding and
#             writing with no lookups (every read 'none'): the I/O path alone
#   engine    sbf classify -@T with the index (GPU auto, or GPU=none for the CPU engine)
# on the same unaligned BAM, the output removed and the disks synced before each run; medians
# of RUNS, CPU seconds, and the median run's --stats stage line for each sbf row. On the
# 2-core VM the I/O path matched the copy (doc/PERFORMANCE.md, "BAM records in place"); on a
# 16-core GPU machine it did not (3.99-4.52 s against 3.13-3.56 s, doc/gpu-notes.md): this is
# the matrix to find out why. Needs the workload of bench/e2e.sh (ONLY_DATA=1) and GNU time.
#   WORK=/tmp/e2e IDX=big/big.sbf THREADS="16 12 24" RUNS=3 bash bench/bamio.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
work=${WORK:-/tmp/e2e} idx=${IDX:-idx.sbf} runs=${RUNS:-3} gpu=${GPU:-auto}
SBF=${SBF:-$root/sbf} TIME=${TIME:-/usr/bin/time}
cd "$work" 2> /dev/null || { echo "bamio.sh: no workload in $work (bench/e2e.sh with ONLY_DATA=1 makes it)" >&2; exit 2; }
for f in reads.bam "$idx"; do [ -s "$f" ] || { echo "bamio.sh: $work/$f is missing" >&2; exit 2; }; done
[ -x "$TIME" ] || { echo "bamio.sh: needs GNU time ($TIME; set TIME)" >&2; exit 2; }
[ -x "$SBF" ] || { echo "bamio.sh: no sbf at $SBF" >&2; exit 2; }
command -v samtools > /dev/null || { echo "bamio.sh: needs samtools" >&2; exit 2; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"; rm -f bamio.bam' EXIT
# the first run against an index verifies its filters and leaves a record: not in the rounds
"$SBF" classify --gpu "$gpu" -x "$idx" -o "$tmp/warm.bam" reads.bam 2> /dev/null ||
  { echo "bamio.sh: sbf classify fails on $work/reads.bam" >&2; exit 1; }
run() {   # NAME T ARGS...: one timed run into bamio.bam; its time line appended to $tmp/NAME.T
  local name=$1 t=$2
  shift 2
  rm -f bamio.bam; sync
  "$TIME" -f "%e %U %S" -o "$tmp/time" "$@" 2> "$tmp/err" ||
    { echo "bamio.sh: $name -@$t failed: $(head -n 2 "$tmp/err")" >&2; exit 1; }
  read -r wall user sys < "$tmp/time"
  echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" >> "$tmp/$name.$t"
  # the stage line and, on the same line, where the CPU went (--stats' pools, reader, writer)
  grep -q 'stages' "$tmp/err" &&
    echo "$wall $(grep -h 'stages' "$tmp/err") | $(grep -ho 'CPU (seconds).*' "$tmp/err")" >> "$tmp/$name.$t.stages"
}
threads=${THREADS:-16}
for round in $(seq "$runs"); do
  for t in $threads; do
    run copy "$t" samtools view -@"$t" -b -o bamio.bam reads.bam
    run copy+ "$t" samtools view -@"$((t + t / 4))" -b -o bamio.bam reads.bam
    run io "$t" env SBF_NULL_ENGINE=1 "$SBF" classify --gpu "$gpu" -@ "$t" --stats -x "$idx" -o bamio.bam reads.bam
    run engine "$t" "$SBF" classify --gpu "$gpu" -@ "$t" --stats -x "$idx" -o bamio.bam reads.bam
  done
  echo "round $round of $runs done" >&2
done
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "# $(samtools view -c reads.bam) records of $work/reads.bam; index $idx; --gpu $gpu; medians of $runs (rounds alternate)"
echo
echo "| run | -@ | seconds (each run) | median | CPU-s | vs the copy at -@ |"
echo "|---|---|---|---|---|---|"
for t in $threads; do
  base=$(cut -d' ' -f1 "$tmp/copy.$t" | median)
  for name in copy copy+ io engine; do
    m=$(cut -d' ' -f1 "$tmp/$name.$t" | median) c=$(cut -d' ' -f2 "$tmp/$name.$t" | median)
    printf '| %s | %s | %s | %.2f | %.1f | %.2fx |\n' "$name" "$t" "$(cut -d' ' -f1 "$tmp/$name.$t" | tr '\n' ' ')" \
      "$m" "$c" "$(awk -v b="$base" -v m="$m" 'BEGIN { print b / m }')"
  done
done
echo
for t in $threads; do
  for name in io engine; do   # the stage line of the run whose time is nearest the median
    m=$(cut -d' ' -f1 "$tmp/$name.$t" | median)
    echo "$name -@$t: $(awk -v m="$m" '{ d = $1 - m; d = d < 0 ? -d : d; if (NR == 1 || d < best) { best = d; line = $0 } } END { print line }' "$tmp/$name.$t.stages" | cut -d' ' -f2-)"
  done
done
