#!/usr/bin/env bash
# scripts/tsan.sh -- ThreadSanitizer over the threaded parts: the engine's worker pool
# (tests/test_pipeline) and `sbf classify` / `sbf filter` with several threads, mate files
# read at once, and records encoded by the workers (SBF_ENCODE=1, the GPU path on the CPU), FASTQ
# read in place (mapped, and gzip through the read-ahead thread), two outputs written at once.
# Builds without CUDA under ${TSAN_DIR:-/tmp/sbf-tsan}; prints one line per run and exits
# non-zero if any run reports a race. Needs gcc, libhts-dev, libcmocka-dev.
set -uo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
dir=${TSAN_DIR:-/tmp/sbf-tsan}
mkdir -p "$dir"
cd "$dir" || exit 1
flags=(-g -O1 -fsanitize=thread -Wno-tsan -std=gnu11 -D_GNU_SOURCE -I"$root/plugin")
engine=("$root"/filters/*.c "$root"/bam/*.c "$root"/gpu/sbf_gpu_none.c)
libs=(-lhts -lpthread -lm)
grep -q '^#define HAVE_ISAL 1' "$root/config.h" && libs+=(-lisal)   # gzip input through ISA-L
gcc "${flags[@]}" -o test_pipeline "$root/tests/test_pipeline.c" "${engine[@]}" "$root/plugin/sbf_api.c" \
    "$root/plugin/sbf_engine.c" "$root/plugin/sbf_pipeline.c" -lcmocka "${libs[@]}" || exit 1
gcc "${flags[@]}" -DSBF_CUDA_VERSION='"none"' -o sbf "$root"/plugin/sbf_*.c "${engine[@]}" "${libs[@]}" || exit 1
data=$root/tests/data
./sbf build -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" lambda="$data/lambda.fa.gz" 2> /dev/null || exit 1
zcat "$data/human_slice.fa.gz" "$data/ecoli_slice.fa.gz" > ref.fa
wgsim -N 20000 -1 150 -2 150 -S 5 ref.fa r1.fq r2.fq > /dev/null 2>&1 && samtools import -1 r1.fq -2 r2.fq -o r.bam 2> /dev/null || exit 1
gzip -c r1.fq > r1.fq.gz && gzip -c r2.fq > r2.fq.gz || exit 1
status=0
run() {
    "$@" > /dev/null 2> tsan.err
    local rc=$? races
    races=$(grep -c 'WARNING: ThreadSanitizer' tsan.err)
    printf 'exit %d, %d race report(s): %s\n' "$rc" "$races" "$*"
    [ "$rc" -eq 0 ] && [ "$races" -eq 0 ] || status=1
}
run ./test_pipeline
run ./sbf classify -x idx.sbf -K 100K -@ 4 -o o.bam r.bam
run env SBF_ENCODE=1 ./sbf classify -x idx.sbf -K 100K -@ 4 --hits -o e.bam r.bam
run env SBF_ENCODE=1 ./sbf filter -x idx.sbf -K 50K -@ 4 --remove human -1 a.fq -2 b.fq r1.fq r2.fq
run env SBF_ENCODE=1 ./sbf classify -x idx.sbf -K 50K -@ 2 --split 'x_%.fq.gz' r.bam
# FASTQ in place: mapped plain files and gzip through the read-ahead, mates on two threads,
# both mate files written at once, the CPU engine's kept query threads
run env SBF_ENCODE=1 ./sbf classify -x idx.sbf -K 20K -@ 3 -O fastq -1 c1.fq -2 c2.fq r1.fq r2.fq
run ./sbf classify -x idx.sbf -K 20K -@ 3 -O fastq -1 g1.fq -2 g2.fq r1.fq.gz r2.fq.gz
exit $status
