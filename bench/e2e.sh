#!/usr/bin/env bash
# bench/e2e.sh -- end-to-end screening speed on the GPU machine, against samtools on the same
# files in the same run: the pipeline (reading, batching, transfers, writing) is what limits
# sbf there, so the bar is the I/O rate itself.
#
# Usage (on the GPU machine, from the repository root, carrying .devrt .devdata sbf):
#   bash bench/e2e.sh            env: PAIRS [10000000], THREADS [16], WORK [/tmp/sbf-e2e], RUNS [1]
# (RUNS > 1: each row is the median of RUNS runs; every run's time goes to stderr; ONLY_DATA=1:
# build the workload and the index, run nothing)
# Workload: PAIRS 2x150 pairs simulated by wgsim from human chr20 (THREADS wgsim processes with
# their own seeds), as an unaligned BAM (samtools import) and as FASTQ (plain and BGZF). Index:
# chr20 + E. coli + lambda (+ any other .devdata/*.fa.gz). Prints a table: seconds, reads/s,
# Gbp/s of input, ratio to the matching samtools baseline.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-} PATH=$PWD/.devrt/bin:$PATH
SBF=${SBF:-$PWD/sbf}
K=(${BATCH:+-K "$BATCH"})   # BATCH: -K of every sbf run (default: sbf's)
P=${PAIRS:-10000000}
T=${THREADS:-16}
work=${WORK:-/tmp/sbf-e2e}
mkdir -p "$work"
cd "$work" || exit 1
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.4g\", $1 }"; }   # (no bc on the GPU machine)
# timed LABEL CMD...: the median wall seconds of RUNS runs of CMD into $secs (the last run's
# stderr in LABEL.err; the page cache is warm for every run alike)
runs=${RUNS:-1}
timed() {
    local label=$1 t0 all=()
    shift
    for ((r = 0; r < runs; ++r)); do
        t0=$(now)
        "$@" 2> "$label.err" || { echo "e2e: $label failed: $(tail -n 3 "$label.err")"; secs=NaN; return 1; }
        all+=("$(calc "$(now) - $t0")")
    done
    secs=$(printf '%s\n' "${all[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    echo "# $label: ${all[*]} s" >&2
}
rows=()
# row LABEL SECONDS VS [PAIRS]
row() { local p=${4:-$P}; rows+=("$(printf '| %-52s | %7.2f | %10.0f | %6.2f | %s |' "$1" "$2" "$(calc "2 * $p / $2")" \
    "$(calc "2 * $p * 150 / $2 / 1e9")" "$3")"); }

# ---- data ----
if [ ! -s r1.fq ]; then
    zcat "$OLDPWD/.devdata/20.fa.gz" > chr20.fa
    per=$((P / T))
    for ((i = 0; i < T; ++i)); do
        wgsim -N $per -1 150 -2 150 -e 0.002 -r 0.001 -S $((i + 1)) chr20.fa w1_$i.fq w2_$i.fq > /dev/null 2>&1 &
    done
    wait
    # names made unique across the wgsim processes
    for m in 1 2; do
        for ((i = 0; i < T; ++i)); do sed "1~4s/^@/@p${i}_/" w${m}_$i.fq; done > r$m.fq
        rm -f w${m}_*.fq
    done
fi
[ -s reads.bam ] || samtools import -@ "$T" -1 r1.fq -2 r2.fq -o reads.bam 2> /dev/null
[ -s r1.fq.gz ] || { bgzip -@ "$T" -c r1.fq > r1.fq.gz && bgzip -@ "$T" -c r2.fq > r2.fq.gz; }
refs=(human="$OLDPWD/.devdata/20.fa.gz")
for f in "$OLDPWD"/.devdata/*.fa*.gz; do
    b=$(basename "$f"); b=${b%%.*}
    [ "$b" = 20 ] || refs+=("$b=$f")
done
[ -s idx.sbf ] || "$SBF" build --gpu 0 -@ "$T" -o idx.sbf "${refs[@]}" 2> build.err
[ "${ONLY_DATA:-0}" = 1 ] && { echo "e2e: workload ready in $work"; exit 0; }
echo "# $P pairs 2x150; $(ls -l reads.bam | awk '{ printf "BAM %.2f GB", $5 / 1e9 }'); index: ${refs[*]%%=*}; $T threads"
nvidia-smi --query-gpu=name --format=csv,noheader

# ---- BAM -> BAM ----
timed copy samtools view -@ "$T" -b -o copy.bam reads.bam; base_bam=$secs
row "samtools view -@$T -b (copy)" "$base_bam" "1.00"
timed count samtools view -@ "$T" -c reads.bam > /dev/null; row "samtools view -@$T -c (decode only)" "$secs" "-"
timed classify "$SBF" classify "${K[@]}" -@ "$T" --stats -x idx.sbf -o tagged.bam reads.bam
row "sbf classify BAM -> tagged BAM (GPU)" "$secs" "$(calc "$base_bam / $secs")x"
grep -h "stages" classify.err | sed 's/^/# /'
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
if [ "$gpus" -ge 2 ]; then
    timed classify2 "$SBF" classify "${K[@]}" -@ "$T" --stats --gpu all -x idx.sbf -o tagged2.bam reads.bam
    row "sbf classify BAM -> tagged BAM ($gpus GPUs)" "$secs" "$(calc "$base_bam / $secs")x"
    grep -h "stages" classify2.err | sed 's/^/# /'
fi
timed classify_cpu "$SBF" classify "${K[@]}" -@ "$T" --gpu none -x idx.sbf -o tagged_cpu.bam reads.bam
row "sbf classify BAM -> tagged BAM (CPU engine)" "$secs" "$(calc "$base_bam / $secs")x"

# ---- FASTQ -> FASTQ, uncompressed ----
timed cat_fq sh -c 'cat r1.fq > c1.fq && cat r2.fq > c2.fq'; row "cat both mate files (copy)" "$secs" "-"
timed filter_fq "$SBF" filter "${K[@]}" -@ "$T" --stats -x idx.sbf --remove human -1 f1.fq -2 f2.fq r1.fq r2.fq
row "sbf filter FASTQ -> FASTQ (host removed)" "$secs" "$(calc "2 * $P * 150 / $secs / 4e9") of 4 Gbp/s"
grep -h "stages" filter_fq.err | sed 's/^/# /'
# the same run with the queries skipped (SBF_NULL_ENGINE=1) and every read kept, written to
# /dev/null: the ceiling of reading and batching
timed filter_io env SBF_NULL_ENGINE=1 "$SBF" filter "${K[@]}" -@ "$T" --stats -x idx.sbf --remove human -1 /dev/null -2 /dev/null r1.fq r2.fq
row "sbf filter FASTQ, queries skipped (I/O ceiling)" "$secs" "-"
grep -h "stages" filter_io.err | sed 's/^/# /'

# ---- BGZF FASTQ -> BGZF FASTQ ----
timed roundtrip sh -c "samtools import -@ $T -1 r1.fq.gz -2 r2.fq.gz -O bam,level=1 -o rt.bam && samtools fastq -@ $T -c 1 -1 rt1.fq.gz -2 rt2.fq.gz rt.bam"
base_gz=$secs; row "samtools import + fastq (BGZF round trip)" "$base_gz" "1.00"
timed filter_gz "$SBF" filter "${K[@]}" -@ "$T" --stats -x idx.sbf --remove human -1 f1.fq.gz -2 f2.fq.gz r1.fq.gz r2.fq.gz
row "sbf filter BGZF FASTQ -> BGZF FASTQ" "$secs" "$(calc "$base_gz / $secs")x"
grep -h "stages" filter_gz.err | sed 's/^/# /'

# ---- plain gzip (one stream per file, which htslib decompresses on one thread) ----
G=$((P < 1000000 ? P : 1000000))
if [ ! -s g1.fq.gz ]; then
    head -n $((4 * G)) r1.fq | gzip -1 > g1.fq.gz & head -n $((4 * G)) r2.fq | gzip -1 > g2.fq.gz & wait
fi
timed gunzip sh -c 'gzip -dc g1.fq.gz > /dev/null'; base_gunzip=$secs
row "gzip -dc of one mate file ($G reads; one stream)" "$secs" "-" "$((G / 2))"
timed filter_gzip "$SBF" filter "${K[@]}" -@ "$T" --stats -x idx.sbf --remove human -1 fz1.fq -2 fz2.fq g1.fq.gz g2.fq.gz
row "sbf filter gzip FASTQ ($G pairs) -> FASTQ" "$secs" "$(calc "$base_gunzip / $secs")x of one gzip -dc" "$G"
grep -h "stages" filter_gzip.err | sed 's/^/# /'

echo
echo "| run | seconds | reads/s | Gbp/s in | vs baseline |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
