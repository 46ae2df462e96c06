#!/usr/bin/env bash
# bench/sweep.sh -- the parameter sweep behind doc/parameters.md.
# For each (m, s, H, shard bits) on human chr20 at 16 bits per k-mer: build time, fill,
# predicted and measured false-positive rates (random 31-mers, E. coli k-mers, one-base variants
# of indexed k-mers) and query throughput. Needs vt-examples and ragout-examples (Debian).
#   bench/sweep.sh [OUT.tsv] [THREADS]     (default: doc/sweep-chr20.tsv, 1 thread)
# Environment: MS="16 21 25" SS="22 24" HS="1 2" SHARDS="512" to narrow the grid, or
# POINTS="m,s,H,shard ..." for a list of points instead of a grid;
# N (random k-mers), V (variants), Q (reads for speed) to change sample sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-doc/sweep-chr20.tsv}
threads=${2:-1}
. bench/genomes.sh
make -s bench/sbf-bench
: "${MS:=16 19 21 23 25 27}" "${SS:=20 22 24 26 28}" "${HS:=1 2 3}" "${SHARDS:=512}"
: "${N:=1000000}" "${V:=1000000}" "${Q:=100000}"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
./bench/sbf-bench --header > "$tmp"
if [ -z "${POINTS:-}" ]; then
  for shard in $SHARDS; do for m in $MS; do for s in $SS; do for h in $HS; do
    POINTS="${POINTS:-} $m,$s,$h,$shard"
  done; done; done; done
fi
for point in $POINTS; do
  IFS=, read -r m s h shard <<< "$point"
  ./bench/sbf-bench -r "$ref" -o "$other" -k 31 -m "$m" -s "$s" -H "$h" --shard-bits "$shard" --bits 16 \
    -@ "$threads" -n "$N" -v "$V" -q "$Q" | tee -a "$tmp"
done
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "sweep.sh: wrote $out" >&2
