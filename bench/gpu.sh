#!/usr/bin/env bash
# bench/gpu.sh -- the GPU engine's figures on the GPU machine (doc/PERFORMANCE.md,
# doc/gpu-notes.md): build and query Gkmer/s on human chr20 and on a random sequence of
# RANDOM_BASES bases (default 3 Gbp), 1 target and TARGETS targets (default 8; a list such as
# 8,32,128 measures each), reads from pinned host memory against device-resident ones, and the
# false-positive rate of 10^8 random 31-mers; PANELS (e.g. 8,32,128): those target counts in
# wide panels (format 3) besides TARGETS' plain ones. CUDA events after a warm-up, median of RUNS runs
# (default 10).
# When bench/sbf-gpu-bench-prev exists (bench/gpu-prev.sh builds it from the previous kernels'
# revision), it runs first in the same call, and the table printed last shows both: previous,
# this tree, and their ratio. Without it, the table has this tree's column only.
# Carried like tests/gpu/run.sh (which runs this after its correctness checks):
#   .devrt (../shared/device/pack-runtime.sh), .devdata (the Debian genomes), bench/sbf-gpu-bench
#   [bench/sbf-gpu-bench-prev bench/sbf-gpu-bench-prev.rev]
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-}
args=(-r .devdata/20.fa.gz -g "${RANDOM_BASES:-3000000000}" -R "${RUNS:-10}" -T "${TARGETS:-8}")
# PANELS=8,32,128: those target counts in wide panels too (format 3; an older benchmark's -Q ran
# the 0.5 prototype of the layout)
[ -n "${PANELS:-}" ] && args+=(-Q "$PANELS")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
prev_name=
if [ -x bench/sbf-gpu-bench-prev ]; then
  prev_name=$(cut -d' ' -f1 bench/sbf-gpu-bench-prev.rev 2> /dev/null || echo previous)
  echo "== previous kernels ($(cat bench/sbf-gpu-bench-prev.rev 2> /dev/null || echo 'revision unknown'))"
  # an older benchmark may take -T as one number only: give it the largest count asked for
  prev_args=("${args[@]}")
  if ! ./bench/sbf-gpu-bench-prev -h 2>&1 | grep -q 'TARGETS\[,'; then
    prev_args[7]=$(tr ',' '\n' <<< "${TARGETS:-8}" | sort -n | tail -n 1)
  fi
  ./bench/sbf-gpu-bench-prev "${prev_args[@]}" | tee "$out/prev.txt"
fi
echo "== this tree"
./bench/sbf-gpu-bench "${args[@]}" | tee "$out/new.txt"
# One row per figure, keyed by what it measures (the kernel names in parentheses left out).
awk -v prev_name="$prev_name" '
  function key_and_value(   i, desc, rate) {
    for (i = 1; i <= NF; ++i) if ($i == "Gkmer/s") rate = $(i - 1)
    if ($2 == "build") { K = $1 " build"; V = rate; return 1 }
    if ($2 == "query") {
      desc = $0; sub(/.*Gkmer\/s +/, "", desc); sub(/ \(query [^)]*\)$/, "", desc); sub(/: [0-9]+% of device-resident$/, "", desc)
      K = $1 " query, " desc; V = rate; return 1
    }
    if ($2 == "FPR") { for (i = 1; i <= NF; ++i) if ($i == "=") V = $(i + 1); K = $1 " false positives"; return 1 }
    return 0
  }
  FNR == 1 { file++ }
  key_and_value() {
    if (file == 1 && prev_name != "") { prev[K] = V; next }
    order[++n] = K; cur[K] = V
  }
  END {
    print ""
    if (prev_name != "") {
      printf "%-100s %12s %12s %7s\n", "figure (Gkmer/s, or false positives)", prev_name, "this tree", "ratio"
      for (i = 1; i <= n; ++i) {
        K = order[i]; r = "";
        if (K in prev && prev[K] + 0 > 0 && K !~ /false positives/) r = sprintf("%.3f", cur[K] / prev[K])
        printf "%-100s %12s %12s %7s\n", K, (K in prev) ? prev[K] : "-", cur[K], r
      }
    } else {
      printf "%-100s %12s\n", "figure (Gkmer/s, or false positives)", "this tree"
      for (i = 1; i <= n; ++i) printf "%-100s %12s\n", order[i], cur[order[i]]
    }
  }' $([ -n "$prev_name" ] && echo "$out/prev.txt") "$out/new.txt"
