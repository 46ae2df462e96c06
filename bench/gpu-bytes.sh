#!/usr/bin/env bash
# bench/gpu-bytes.sh -- bytes the query kernel reads per k-mer, by target count, on the GPU
# machine: Nsight Compute (ncu --clock-control none, never changing the GPU's clocks) counts
# DRAM bytes read and L2-to-L1 bytes of every launch of the multi-target query kernel while
# sbf-gpu-bench queries READS reads of 150 bp from chr20 (and as many random reads) against
# T copies of the chr20 filter (113.5 MiB each), for each T of TARGETS (default "8 32 128"), in
# both layouts: plain panels (each its own filter, at its own address: format 2's layout) and wide
# panels (format 3, up to 64 columns per panel). One line per T and layout: k-mers, DRAM bytes
# per k-mer, L2->L1 bytes per k-mer. LAYOUTS="panel" (or "plain") measures one layout only.
# The k-mer rates come from bench/gpu.sh (ncu serialises and slows the launches).
# Carried: .devrt .devdata bench/sbf-gpu-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-}
reads=${READS:-200000}
layouts=${LAYOUTS:-plain panel} # either or both
command -v ncu > /dev/null || { echo "gpu-bytes.sh: ncu not found" >&2; exit 2; }
printf '%-8s %-6s %14s %16s %16s  %s\n' targets layout k-mers "DRAM B/k-mer" "L2->L1 B/k-mer" kernel
# sum_launches CSV T LAYOUT KMERS: one line of the table from ncu's launches of that layout's kernel
sum_launches() {
  awk -F'","' -v T="$2" -v layout="$3" -v kmers="$4" '
    /^"ID"/ { for (i = 1; i <= NF; ++i) { gsub(/"/, "", $i); col[$i] = i } next }
    !("Kernel Name" in col) { next }
    {
      name = $col["Kernel Name"]
      if (layout == "panel" && name !~ /query_panel/) next
      if (layout == "plain" && T > 1 && name !~ /, 8,|<8,|, 8>/ && name !~ /query_warp/) next   # the 1-target launches
      if (layout == "plain" && T == 1 && name ~ /, 8,|<8,|, 8>/) next
      v = $col["dram__bytes_read.sum"]; gsub(/[",]/, "", v); dram += v
      v = $col["lts__t_sectors_srcunit_tex_op_read.sum"]; gsub(/[",]/, "", v); l2 += 32 * v
      if (kname == "") { kname = name; sub(/\(.*/, "", kname) }
    }
    END { printf "%-8s %-6s %14d %16.1f %16.1f  %s\n", T, layout, kmers, dram / kmers, l2 / kmers, kname }' "$1"
}
ncu_bench() { # ARGS...: the benchmark under ncu, its CSV on stdout
  ncu --clock-control none --csv --page raw --print-units base -k regex:query --metrics \
    dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum ./bench/sbf-gpu-bench "$@" 2> /dev/null
}
for T in ${TARGETS:-8 32 128}; do
  csv=$(mktemp)
  # plain panels (one filter per target, format 2's layout): -T T copies at their own addresses.
  # -R 1: one warm-up and one timed run per read set; -n 0: no false-positive count; -P: no
  # pinned runs. Every k-mer of a 150 bp read is valid in both read sets (clean chr20 windows,
  # random ACGT): 2 read sets x 2 runs x READS x 120 k-mers
  if [[ " $layouts " == *" plain "* ]]; then
    ncu_bench -r .devdata/20.fa.gz -q "$reads" -R 1 -P -n 0 -T "$T" > "$csv" ||
      { echo "gpu-bytes.sh: ncu failed for $T targets" >&2; rm -f "$csv"; exit 1; }
    sum_launches "$csv" "$T" plain "$((4 * reads * 120))"
  fi
  # wide panels (format 3): -Q T, the chr20 reads only: a warm-up, one timed run and the hits
  # check, each one launch per panel: 3 x READS x 120 k-mers
  if [ "$T" -gt 1 ] && [[ " $layouts " == *" panel "* ]]; then
    ncu_bench -r .devdata/20.fa.gz -q "$reads" -R 1 -P -n 0 -T 1 -Q "$T" > "$csv" ||
      { echo "gpu-bytes.sh: ncu failed for $T targets in panels" >&2; rm -f "$csv"; exit 1; }
    sum_launches "$csv" "$T" panel "$((3 * reads * 120))"
  fi
  rm -f "$csv"
done
