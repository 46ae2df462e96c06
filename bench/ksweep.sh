#!/usr/bin/env bash
# bench/ksweep.sh -- the batch size (-K) against end-to-end speed on the GPU machine: small
# batches keep the records of the batches in circulation in the CPU caches; large ones make
# fewer, larger GPU calls. Runs on bench/e2e.sh's workload (run that first).
# Usage: bash bench/ksweep.sh     env: WORK [/tmp/sbf-e2e], THREADS [16], SIZES ["512K 1M 2M 4M 16M"],
#                                       IDX [idx.sbf; big/big.sbf for HOST=big], ROWS [bam fastq],
#                                       GPU [auto; none: the CPU engine]
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-} PATH=$PWD/.devrt/bin:$PATH
SBF=${SBF:-$PWD/sbf}
T=${THREADS:-16}
IDX=${IDX:-idx.sbf}
GPU=${GPU:-auto}
want() { [[ " ${ROWS:-bam fastq} " == *" $1 "* ]]; }
cd "${WORK:-/tmp/sbf-e2e}" || exit 1
echo "| -K | BAM -> tagged BAM (s) | FASTQ -> FASTQ (s) | BAM stages | FASTQ stages |"
echo "|---|---|---|---|---|"
for k in ${SIZES:-512K 1M 2M 4M 16M}; do
    : > k_bam.err; : > k_fq.err
    rm -f k.bam k1.fq k2.fq; sync   # a replaced file is flushed at close (bench/e2e.sh)
    t0=$(date +%s.%N)
    want bam && { "$SBF" classify -K "$k" -@ "$T" --gpu "$GPU" --stats -x "$IDX" -o k.bam reads.bam 2> k_bam.err || { tail -2 k_bam.err; exit 1; }; }
    t1=$(date +%s.%N)
    want fastq && { "$SBF" filter -K "$k" -@ "$T" --gpu "$GPU" --stats -x "$IDX" --remove human -1 k1.fq -2 k2.fq r1.fq r2.fq 2> k_fq.err || { tail -2 k_fq.err; exit 1; }; }
    t2=$(date +%s.%N)
    st() { sed -n 's/.*stages (seconds): //p' "$1" | sed 's/ (busy [0-9]*%)//g; s/; peak.*//'; }
    printf '| %s | %.2f | %.2f | %s | %s |\n' "$k" "$(awk "BEGIN { print $t1 - $t0 }")" "$(awk "BEGIN { print $t2 - $t1 }")" \
        "$(st k_bam.err)" "$(st k_fq.err)"
done
