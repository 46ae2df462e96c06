#!/usr/bin/env bash
# bench/gpu.sh -- the GPU engine's figures on the GPU machine (doc/PERFORMANCE.md,
# doc/gpu-notes.md): build and query Gkmer/s on human chr20 and on a random sequence of
# RANDOM_BASES bases (default 3 Gbp), 1 and 8 targets, reads from pinned host memory against
# device-resident ones, and the false-positive rate of 10^8 random 31-mers. CUDA events after
# a warm-up, median of RUNS runs (default 10). Prints the table last.
# Carried like tests/gpu/run.sh (which runs this after its correctness checks):
#   .devrt (../shared/device/pack-runtime.sh), .devdata (the Debian genomes), bench/sbf-gpu-bench
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-}
./bench/sbf-gpu-bench -r .devdata/20.fa.gz -g "${RANDOM_BASES:-3000000000}" -R "${RUNS:-10}"
