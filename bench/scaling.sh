#!/usr/bin/env bash
# bench/scaling.sh -- one GPU against several, where the GPU is the limit (GPU machine).
# Reads in memory through the C API (bench/sbf-pipeline-bench: blocking sbf_query and the
# pipeline), then `sbf classify` from a BAM, each with the e2e index (5 targets) and with a
# 64-target index (chr20 cut into slices of 1 Mbp, up to 64 of them: a filter per slice).
# Usage (after bench/e2e.sh, which leaves its workload in WORK):
#   bash bench/scaling.sh        env: WORK [/tmp/sbf-e2e], READS [4000000], THREADS [16]
# Carry: .devrt .devdata sbf bench/sbf-pipeline-bench
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-} PATH=$PWD/.devrt/bin:$PATH
root=$PWD
work=${WORK:-/tmp/sbf-e2e}
T=${THREADS:-16}
cd "$work" || { echo "scaling: run bench/e2e.sh first (no $work)"; exit 1; }
nvidia-smi -L
if [ ! -s t64.sbf ]; then
    mkdir -p slices
    awk -v dir=slices 'BEGIN { n = 0 } /^>/ { next }
        { seq = seq $0
          while (length(seq) >= 1000000) {   # slices that are mostly N (centromere, gaps) are left out
              s = substr(seq, 1, 1000000); seq = substr(seq, 1000001); t = s
              if (gsub(/[ACGTacgt]/, "", t) < 500000) continue
              f = sprintf("%s/s%02d.fa", dir, n++); print ">s" n > f; print s > f; close(f) } }' chr20.fa
    args=()
    for f in slices/s*.fa; do b=$(basename "$f" .fa); args+=("$b=$f"); done
    args=("${args[@]:0:64}")
    "$root/sbf" build --gpu 0 -@ "$T" -o t64.sbf "${args[@]}" 2> t64.err || { cat t64.err; exit 1; }
fi
for idx in idx.sbf t64.sbf; do
    echo "== $idx, reads in memory (C API)"
    "$root/bench/sbf-pipeline-bench" "$idx" r1.fq "${READS:-4000000}"
done
echo "== t64.sbf, sbf classify BAM -> tagged BAM"
for g in 0 all; do
    t0=$(date +%s.%N)
    "$root/sbf" classify -@ "$T" --gpu "$g" --stats -x t64.sbf -o t64_$g.bam reads.bam 2> t64_$g.err || { tail -3 t64_$g.err; exit 1; }
    echo "--gpu $g: $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }") s; $(grep stages t64_$g.err)"
done
cmp <(samtools view t64_0.bam) <(samtools view t64_all.bam) && echo "identical tagged BAM on one GPU and on all"
