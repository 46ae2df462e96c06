#!/usr/bin/env bash
# bench/gpu-bytes.sh -- bytes the query kernel reads per k-mer, by target count, on the GPU
# machine: Nsight Compute (ncu --clock-control none, never changing the GPU's clocks) counts
# DRAM bytes read and L2-to-L1 bytes of every launch of the multi-target query kernel while
# sbf-gpu-bench queries READS reads of 150 bp from chr20 (and as many random reads) against
# T copies of the chr20 filter (113.5 MiB each, at their own addresses), for each T of TARGETS
# (default "8 32 128"). One line per T: k-mers, DRAM bytes per k-mer, L2->L1 bytes per k-mer.
# The k-mer rates come from bench/gpu.sh (ncu serialises and slows the launches).
# Carried: .devrt .devdata bench/sbf-gpu-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-}
reads=${READS:-200000}
command -v ncu > /dev/null || { echo "gpu-bytes.sh: ncu not found" >&2; exit 2; }
printf '%-8s %14s %16s %16s  %s\n' targets k-mers "DRAM B/k-mer" "L2->L1 B/k-mer" kernel
for T in ${TARGETS:-8 32 128}; do
  csv=$(mktemp)
  # -R 1: one warm-up and one timed run per read set; -n 0: no false-positive count; -P: no pinned runs
  ncu --clock-control none --csv --page raw --print-units base -k regex:query --metrics \
    dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum \
    ./bench/sbf-gpu-bench -r .devdata/20.fa.gz -q "$reads" -R 1 -P -n 0 -T "$T" > "$csv" 2> /dev/null ||
    { echo "gpu-bytes.sh: ncu failed for $T targets" >&2; rm -f "$csv"; exit 1; }
  # every k-mer of a 150 bp read is valid in both read sets (clean chr20 windows, random ACGT):
  # 2 read sets x 2 runs x READS x 120 k-mers; only the multi-target kernel's launches are summed
  awk -F'","' -v T="$T" -v kmers="$((4 * reads * 120))" '
    /^"ID"/ { for (i = 1; i <= NF; ++i) { gsub(/"/, "", $i); col[$i] = i } next }
    !("Kernel Name" in col) { next }
    {
      name = $col["Kernel Name"]
      if (T > 1 && name !~ /, 8,|<8,|, 8>/ && name !~ /query_warp/) next   # the 1-target launches
      if (T == 1 && name ~ /, 8,|<8,|, 8>/) next
      v = $col["dram__bytes_read.sum"]; gsub(/[",]/, "", v); dram += v
      v = $col["lts__t_sectors_srcunit_tex_op_read.sum"]; gsub(/[",]/, "", v); l2 += 32 * v
      if (kname == "") { kname = name; sub(/\(.*/, "", kname) }
    }
    END { printf "%-8s %14d %16.1f %16.1f  %s\n", T, kmers, dram / kmers, l2 / kmers, kname }' "$csv"
  rm -f "$csv"
done
