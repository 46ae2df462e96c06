#!/usr/bin/env bash
# scripts/fuzz.sh -- build the libFuzzer targets (tests/fuzz/*.c) with clang, ASan and UBSan, and
# run each for a while on its corpus.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]     (default: 60 s, every target)
# Env:   FUZZ_DIR (build and corpora; default ${TMPDIR:-/tmp}/sbf-fuzz), JOBS (parallel jobs per
#        target, default 1).
# Needs: clang, libclang-rt-14-dev (Debian 12), libhts-dev. Seeds: tests/fuzz/corpus/TARGET/.
# Crashes are written to FUZZ_DIR/crashes/TARGET/; copy each into tests/fuzz/regress/TARGET/,
# fix it, and `make check` replays every file there (tests/fuzz/replay.sh).
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_index fuzz_reads fuzz_classify fuzz_fastx)
dir=${FUZZ_DIR:-${TMPDIR:-/tmp}/sbf-fuzz}
mkdir -p "$dir/bin"
command -v clang > /dev/null || { echo "fuzz: clang is needed (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

# the engine's sources, without CUDA and without the command's main()
sources=("$root"/filters/*.c "$root"/bam/*.c "$root"/plugin/sbf_api.c "$root"/gpu/sbf_gpu_none.c)
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
       -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=gnu11 -I"$root/plugin" -D_GNU_SOURCE)
for t in "${targets[@]}"; do
    clang "${flags[@]}" -o "$dir/bin/$t" "$root/tests/fuzz/$t.c" "${sources[@]}" -lhts -lpthread -lm
done

for t in "${targets[@]}"; do
    mkdir -p "$dir/corpus/$t" "$dir/crashes/$t"
    echo "== $t: $seconds s (corpus $dir/corpus/$t, seeds tests/fuzz/corpus/$t)"
    par=()
    [ "${JOBS:-1}" -gt 1 ] && par=(-jobs="$JOBS" -workers="$JOBS")
    # one log per run (runs of one target may overlap); CPU seconds from the shell's `times`.
    # -malloc_limit_mb: htslib 1.16 asks for 8.5 GB for some corrupt CRAM headers and never
    # touches it (doc/RELIABILITY.md): above the RSS limit so the fuzzer looks past it.
    log=$dir/$t.$(date +%Y%m%d-%H%M%S).$$.log
    (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 "$dir/bin/$t" -max_total_time="$seconds" "${par[@]}" \
        -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=16384 -print_final_stats=1 \
        -artifact_prefix="$dir/crashes/$t/" "$dir/corpus/$t" "$root/tests/fuzz/corpus/$t" > "$log" 2>&1
     status=$?; times > "$log.cpu"; exit $status) ||
        echo "fuzz: $t stopped with a finding: see $log and $dir/crashes/$t/"
    grep -aE "^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Done [0-9]+ runs)" \
        "$log" || true
    grep -aE "cov: [0-9]+" "$log" | tail -n 1
    echo "CPU (user, system) of the fuzzer: $(sed -n 2p "$log.cpu")"
done
