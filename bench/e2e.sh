#!/usr/bin/env bash
# bench/e2e.sh -- end-to-end screening speed on the GPU machine, every sbf row beside a baseline
# that reads and writes the same bytes, in the same run: the pipeline (reading, batching,
# transfers, writing) is what limits sbf there, so the bar is the copy of the same files.
#
# Usage (on the GPU machine, from the repository root, carrying .devrt .devdata sbf):
#   bash bench/e2e.sh     env: PAIRS [10000000], THREADS [16], WORK [/tmp/sbf-e2e], RUNS [3],
#                              HOST_SHARE [50] (percent of pairs from the host), BATCH (-K)
# Each row is the median of RUNS runs, wall and CPU (user + system) seconds (every run's times go
# to stderr); ONLY_DATA=1 builds the
# workload and the index and runs nothing; ROWS picks sections [bam fastq bgzf gzip], and
# `levels` (not run by default): the BAM row at compression levels 0, 1 and the default, with the
# queries skipped too, to tell compression's share from the rest.
# Workload: PAIRS 2x150 pairs simulated by wgsim, HOST_SHARE% from human chr20 (the host) and
# the rest from E. coli MG1655, interleaved in blocks (THREADS wgsim processes with their own
# seeds), as an unaligned BAM (samtools import) and as FASTQ (plain, BGZF, and gzip for the
# first million pairs). Index: chr20 + E. coli + lambda (+ any other .devdata/*.fa.gz).
# Pairs of rows (equal work: the same input read, every record written):
#   BAM -> tagged BAM            against  samtools view -@T -b (a copy); and the copy of sbf's
#                                tagged output, which writes sbf's bytes (the tags included)
#   FASTQ -> tagged FASTQ        against  cat of both mate files to files
#   BGZF -> tagged BGZF          against  bgzip -dc | bgzip -@T -c, level 6 (bgzip's) for both
#   gzip -> tagged FASTQ         against  gzip -dc of both files to files
# plus sbf filter --remove human (writes the non-host pairs: say how many), the read-only pass
# (FASTQ to /dev/null with the queries skipped: SBF_NULL_ENGINE), and the CPU engine. Each row
# prints the records it wrote. Prints a table: seconds, Gbp/s of input, ratio to its baseline.
#
# HOST=big: a human-sized host. The target `human` is chr20 (63 Mbp, real) plus BIG_RECORDS
# [30] records of 100 Mbp of uniform random sequence (bench/randfa.c, carried as
# bench/sbf-randfa: the GPU machine has no 3 Gbp genome and the carry limit is 64 MiB), 3.06
# Gbp in all, beside E. coli and lambda; the reads are the same (chr20's reads are host reads of
# it). First rows: the index built on the GPU and on the CPU engine (wall, CPU seconds, peak
# RSS by GNU time, carried as .devrt/bin/time; the two indexes compared byte for byte) beside
# `cat` of the FASTA inputs and of the index, then opening (classify 10 reads, both engines);
# and ten samples of 10 pairs as ten commands and as one with --samples (both engines); then
# every section above against this index. Its files live in WORK/big (about 9 GB).
# BUILD_ROWS=0 leaves the build rows out (the index is built once, untimed, if missing);
# BUILD_RUNS sets their runs apart from RUNS (a human-sized build takes 30-50 s).
# GZIP_ROW=1 adds the host as one gzip'd FASTA file, as GRCh38 and T2T come (sbf build inflates
# plain gzip on its threads, bam/sbf_pgzip.c; the file is THREADS pieces, each `gzip -1`'d,
# concatenated: members of plain gzip, made in seconds once per WORK).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-} PATH=$PWD/.devrt/bin:$PATH
SBF=${SBF:-$PWD/sbf}
K=(${BATCH:+-K "$BATCH"})   # BATCH: -K of every sbf run (default: sbf's)
P=${PAIRS:-10000000}
T=${THREADS:-16}
H=${HOST_SHARE:-50}
work=${WORK:-/tmp/sbf-e2e}
want() { [[ " ${ROWS:-bam fastq bgzf gzip} " == *" $1 "* ]]; }
want levels && ROWS="${ROWS} bam_data"   # the levels section reads the BAM
mkdir -p "$work"
cd "$work" || exit 1
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.4g\", $1 }"; }   # (no bc on the GPU machine)
runs=${RUNS:-3}
# timed LABEL CMD...: the median wall seconds of RUNS runs of CMD into $secs (the last run's
# stderr in LABEL.err; the page cache is warm for every run alike)
timed() {
    local label=$1 all=() cpus=() TIMEFORMAT='%R %U %S' wall user sys
    shift
    for ((r = 0; r < runs; ++r)); do
        # every run writes new files on a clean page cache: replacing a file (cat's truncation,
        # sbf's rename of its temporary file) makes ext4 flush its data at close, and the
        # previous run's dirty pages throttle the next one's writes; both made runs of the same
        # command 2x apart
        rm -f -- $OUTPUTS
        sync
        # bash's time: the wall time, and the CPU time of the command and every process it
        # waited for (user + system), so rows show what each side spends, not only how long
        { time "$@" 2> "$label.err"; } 2> "$label.time" ||
            { echo "e2e: $label failed: $(tail -n 3 "$label.err")"; secs=NaN cpu=NaN; return 1; }
        read -r wall user sys < "$label.time"
        last_wall=$wall
        all+=("$wall")
        cpus+=("$(calc "$user + $sys")")
    done
    median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    secs=$(median "${all[@]}")
    cpu=$(median "${cpus[@]}")
    echo "# $label: ${all[*]} s (CPU ${cpus[*]} s)" >&2
}
OUTPUTS="lv.bam copy.bam tagged.bam tagged2.bam tagged_cpu.bam c1.fq c2.fq t1.fq t2.fq f1.fq f2.fq rt1.fq.gz rt2.fq.gz tz1.fq.gz tz2.fq.gz d1.fq d2.fq gz1.fq gz2.fq"
fq_records() { local n=0 f; for f in "$@"; do n=$((n + $(wc -l < "$f") / 4)); done; echo $n; }
gz_records() { local n=0 f; for f in "$@"; do n=$((n + $(bgzip -dc "$f" | wc -l) / 4)); done; echo $n; }
rows=()
# row LABEL SECONDS VS RECORDS_WRITTEN [PAIRS]
# (the CPU seconds are those of the timed call just before; IN_GBP, when set, is the input's
# size instead of PAIRS pairs of 2x150)
# Each row goes to stderr too as it is made: a call cut short by its time limit keeps its rows.
row() { local p=${5:-$P}; rows+=("$(printf '| %-50s | %7.2f | %6.1f | %6.2f | %-22s | %11s |' "$1" "$2" "$cpu" \
    "$(calc "${IN_GBP:-2 * $p * 150 / 1e9} / $2")" "$3" "$4")"); echo "e2e row: ${rows[-1]}" >&2; }

# ---- data ----
if [ ! -s r1.fq ]; then
    zcat "$OLDPWD/.devdata/20.fa.gz" > chr20.fa
    zcat "$OLDPWD/.devdata/MG1655-K12.fasta.gz" > ecoli.fa
    per=$((P / T)) host=$((P / T * H / 100))
    for ((i = 0; i < T; ++i)); do
        { wgsim -N $host -1 150 -2 150 -e 0.002 -r 0.001 -S $((i + 1)) chr20.fa h1_$i.fq h2_$i.fq > /dev/null 2>&1
          wgsim -N $((per - host)) -1 150 -2 150 -e 0.002 -r 0.001 -S $((i + 101)) ecoli.fa e1_$i.fq e2_$i.fq > /dev/null 2>&1; } &
    done
    wait
    # names made unique across the wgsim processes; host and E. coli blocks alternate
    for m in 1 2; do
        for ((i = 0; i < T; ++i)); do sed "1~4s/^@/@h${i}_/" h${m}_$i.fq; sed "1~4s/^@/@e${i}_/" e${m}_$i.fq; done > r$m.fq
        rm -f h${m}_*.fq e${m}_*.fq
    done
fi
P=$(($(wc -l < r1.fq) / 4))   # what wgsim made (it rounds per contig)
{ want bam || want bam_data; } && [ ! -s reads.bam ] && samtools import -@ "$T" -1 r1.fq -2 r2.fq -o reads.bam 2> /dev/null
want bgzf && [ ! -s r1.fq.gz ] && { bgzip -@ "$T" -c r1.fq > r1.fq.gz && bgzip -@ "$T" -c r2.fq > r2.fq.gz; }
G=$((P < 1000000 ? P : 1000000))
if want gzip && [ ! -s g1.fq.gz ]; then
    head -n $((4 * G)) r1.fq | gzip -6 > g1.fq.gz & head -n $((4 * G)) r2.fq | gzip -6 > g2.fq.gz & wait
fi
refs=(human="$OLDPWD/.devdata/20.fa.gz")
for f in "$OLDPWD"/.devdata/*.fa*.gz; do
    b=$(basename "$f"); b=${b%%.*}
    [ "$b" = 20 ] || refs+=("$b=$f")
done
idx=idx.sbf
host_desc="human chr20"
if [ "${HOST:-chr20}" = big ]; then
    nbig=${BIG_RECORDS:-30}
    RANDFA=${RANDFA:-$OLDPWD/bench/sbf-randfa}
    [ -x "$RANDFA" ] || { echo "e2e: HOST=big needs bench/sbf-randfa (make bench/sbf-randfa, carry it)"; exit 2; }
    mkdir -p big
    for ((i = 1; i <= nbig; ++i)); do
        [ -s big/rand_$i.fa ] || "$RANDFA" $i 1 100000000 rand$i > big/rand_$i.fa &
        ((i % T == 0)) && wait
    done
    wait
    for ((i = 1; i <= nbig; ++i)); do refs+=(human=big/rand_$i.fa); done
    idx=big/big.sbf
    host_desc="human = chr20 + $nbig x 100 Mbp random ($(awk "BEGIN { printf \"%.2f\", (63025520 + $nbig * 1e8) / 1e9 }") Gbp)"
    gtime=$(command -v time || true)
    [ -x "$OLDPWD/.devrt/bin/time" ] && gtime=$OLDPWD/.devrt/bin/time
    # build LABEL ENGINE OUT [REFS...]: the median of RUNS builds of REFS (default: the refs
    # above); peak RSS of the last into $rss ("N MB, R x the index"), the seconds its reading
    # of the files took into $read_s
    first_kmers() { "$SBF" info --json "$1" | grep -o '"kmers": [0-9]*' | head -n 1; }   # the host's
    build_big() {
        local label=$1 gpu=$2 out=$3
        shift 3
        local use=("$@")
        [ ${#use[@]} -gt 0 ] || use=("${refs[@]}")
        OUTPUTS="$out" runs=${BUILD_RUNS:-$runs} timed "$label" "$gtime" -f '%M' -o "$label.rss" "$SBF" build --gpu "$gpu" -@ "$T" --progress -o "$out" "${use[@]}"
        # the steps of the last build (seconds since its start; sbf build --progress)
        grep -E "sbf build: \[" "$label.err" | grep -v "\] read " | sed "s/^/# /" >&2
        read_s=$(grep -o '\[ *[0-9.]* s\] building' "$label.err" | grep -o '[0-9.]*' | head -n 1)
        rss=$(awk '{ printf "%.0f", $1 / 1024 }' "$label.rss")
        # issue 27's target is a ratio: peak RSS against the index's size
        rss="$rss MB, $(awk -v kb="$(cat "$label.rss")" -v b="$(stat -c %s "$out")" 'BEGIN { printf "%.2fx the index", kb * 1024 / b }')"
    }
fi
[ -s idx.sbf ] || "$SBF" build --gpu 0 -@ "$T" -o idx.sbf "${refs[@]:0:${#refs[@]}-${nbig:-0}}" 2> build.err
if [ "${ONLY_DATA:-0}" = 1 ]; then   # HOST=big's index too, as its untimed build below
    [ "$idx" = idx.sbf ] || [ -s "$idx" ] || "$SBF" build --gpu 0 -@ "$T" -o "$idx" "${refs[@]}" 2> build_big.err ||
        { echo "e2e: sbf build of the big index failed: $(tail -n 3 build_big.err)"; exit 1; }
    echo "e2e: workload ready in $work"; exit 0
fi
echo "# $P pairs 2x150, $H% from human chr20, the rest E. coli; $(ls -l r1.fq r2.fq | awk '{ s += $5 } END { printf "FASTQ %.2f GB", s / 1e9 }'); index: ${refs[*]%%=*} ($host_desc); $T threads; medians of $runs"
nvidia-smi --query-gpu=name --format=csv,noheader
# the host's CPU too: the CPU engine's rows move with it (about 4 us a read a thread on the H100
# machines' Xeon against 2.75 on an AMD EPYC; doc/PERFORMANCE.md, the 7af3f42 column)
echo "# CPU: $(lscpu 2> /dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) threads, L3 $(lscpu 2> /dev/null | sed -n 's/^L3 cache: *//p' | head -n 1)"
# the last run's --stats lines, and its time outside them: the process's wall time less the
# run's own (what the start before the run and the exit after it cost: a GPU run's CUDA
# driver and context, doc/PERFORMANCE.md)
stages() {
    grep -hE "stages|opening|input:" "$1.err" | sed "s/^/# /"
    local own
    own=$(grep -o '; wall [0-9.]*' "$1.err" | grep -o '[0-9.]*$' | tail -n 1)
    [ -n "$own" ] && echo "# $1: the last run's process $last_wall s, its --stats wall $own s: $(calc "$last_wall - $own") s outside it"
}

# ---- HOST=big: the index built on both engines, and opened ----
if [ "$idx" != idx.sbf ]; then
  if [ "${BUILD_ROWS:-1}" = 0 ]; then   # the index only, built once and not timed
    [ -s "$idx" ] || "$SBF" build --gpu 0 -@ "$T" -o "$idx" "${refs[@]}" 2> build_big.err ||
        { echo "e2e: sbf build of the big index failed: $(tail -n 3 build_big.err)"; exit 1; }
  else
    ref_gbp=$(awk "BEGIN { printf \"%.3f\", (63025520 + 4641652 + 48502 + $nbig * 1e8) / 1e9 }")
    timed cat_refs sh -c "zcat -f ${refs[*]#*=} > /dev/null"; base=$secs
    IN_GBP=$ref_gbp row "zcat -f of the FASTA inputs to /dev/null" "$base" "1.00 (baseline)" "-"
    build_big build_gpu 0 "$idx"
    IN_GBP=$ref_gbp row "sbf build --gpu 0 -@$T (reading ${read_s} s; peak RSS $rss)" "$secs" "$(calc "$base / $secs")x cat" "$(ls -l "$idx" | awk '{ printf "%.2f GB", $5 / 1e9 }')"
    build_big build_cpu none big/big_cpu.sbf
    same=$(cmp -s "$idx" big/big_cpu.sbf && echo identical || echo DIFFERENT)
    IN_GBP=$ref_gbp row "sbf build --gpu none -@$T (reading ${read_s} s; peak RSS $rss)" "$secs" "$(calc "$base / $secs")x cat" "$same bytes"
    rm -f big/big_cpu.sbf
    # the same host as one plain FASTA file, as GRCh38 and T2T come (gzip there; plain here,
    # to spare the call a 3 GB gzip): one file is read in pieces on the threads
    [ -s big/one.fa ] || zcat -f "$OLDPWD/.devdata/20.fa.gz" big/rand_*.fa > big/one.fa
    others=("${refs[@]:1:${#refs[@]}-1-nbig}")
    build_big build_one 0 big/one.sbf human=big/one.fa "${others[@]}"
    IN_GBP=$ref_gbp row "the same from one FASTA file of the host (reading ${read_s} s; peak RSS $rss)" "$secs" "$(calc "$base / $secs")x cat" \
        "$([ "$(first_kmers big/one.sbf)" = "$(first_kmers "$idx")" ] && echo "same k-mers" || echo "k-mers DIFFER")"
    rm -f big/one.sbf
    if [ "${GZIP_ROW:-0}" = 1 ]; then
      # gzip -1 of pieces on T threads, the members concatenated: one plain-gzip file (not BGZF),
      # made in seconds, not 25 s
      [ -s big/one.fa.gz ] || {
        split -n "$T" -d -a 3 big/one.fa big/one.piece. &&
        ls big/one.piece.??? | xargs -P "$T" -n 1 gzip -1 &&
        cat big/one.piece.???.gz > big/one.fa.gz.tmp && rm -f big/one.piece.???.gz && mv big/one.fa.gz.tmp big/one.fa.gz; }
      build_big build_one_gz 0 big/one.sbf human=big/one.fa.gz "${others[@]}"
      IN_GBP=$ref_gbp row "the same from one gzip'd FASTA file (reading ${read_s} s; peak RSS $rss)" "$secs" "$(calc "$base / $secs")x cat" \
          "$([ "$(first_kmers big/one.sbf)" = "$(first_kmers "$idx")" ] && echo "same k-mers" || echo "k-mers DIFFER")"
      rm -f big/one.sbf
    fi
  fi
    timed cat_idx sh -c "cat $idx > /dev/null"
    IN_GBP=$(ls -l "$idx" | awk '{ printf "%.3f", $5 / 1e9 }') row "cat of the index to /dev/null (GB/s)" "$secs" "-" "-"
    head -n 40 r1.fq > few_1.fq; head -n 40 r2.fq > few_2.fq
    # the first run against a file verifies its filters and leaves a record (a cache folder of
    # its own here: every run is a first run); the later runs trust the record
    for e in 0 none; do
        OUTPUTS=few.fq timed open_first_$e sh -c "XDG_CACHE_HOME=\$(mktemp -d) exec \"$SBF\" classify --gpu $e -@ $T -x $idx -o few.fq few_1.fq few_2.fq"
        IN_GBP=0.000003 row "opening, first run (verifies): --gpu $e, 10 pairs" "$secs" "-" "$(fq_records few.fq)"
        OUTPUTS=few.fq timed open_$e "$SBF" classify --gpu $e -@ "$T" --stats -x "$idx" -o few.fq few_1.fq few_2.fq
        IN_GBP=0.000003 row "opening: sbf classify --gpu $e of 10 pairs" "$secs" "-" "$(fq_records few.fq)"
        grep -h "opening" open_$e.err | sed "s/^/# /"
        # ten samples of 10 pairs: ten commands, against one command with --samples (the
        # index opened, and put on the GPU, once)
        for i in 1 2 3 4 5 6 7 8 9 10; do printf 'S%d\tfew_1.fq\tfew_2.fq\n' $i; done > few.tsv
        OUTPUTS="few_S*.fq" timed samples10_$e sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do \"$SBF\" classify --gpu $e -@ $T -x $idx -o few_S\$i.fq few_1.fq few_2.fq || exit 1; done"
        base=$secs
        IN_GBP=0.00003 row "10 samples of 10 pairs, 10 commands: --gpu $e" "$secs" "1.00 (baseline)" "$(fq_records few_S*.fq)"
        OUTPUTS="few_S*.fq" timed samples1_$e "$SBF" classify --gpu $e -@ "$T" -x "$idx" --samples few.tsv -o 'few_{sample}.fq'
        IN_GBP=0.00003 row "the same, one command with --samples: --gpu $e" "$secs" "$(calc "$base / $secs")x 10 commands" "$(fq_records few_S*.fq)"
    done
fi

# ---- BAM -> BAM: every record written ----
if want bam; then
timed copy samtools view -@ "$T" -b -o copy.bam reads.bam; base=$secs
row "samtools view -@$T -b (copy)" "$base" "1.00 (baseline)" "$(samtools view -c -@ "$T" copy.bam)"
timed classify "$SBF" classify "${K[@]}" -@ "$T" --stats -x "$idx" -o tagged.bam reads.bam
row "sbf classify BAM -> tagged BAM (--gpu auto)" "$secs" "$(calc "$base / $secs")x the copy" "$(samtools view -c -@ "$T" tagged.bam)"
sbf_bam=$secs
# records and header, @PG aside (its command line differs by --gpu none), kept before the
# next timed run removes tagged.bam
bam_sum() { samtools view -h -@ "$T" "$1" | grep -v '^@PG' | md5sum; }
sum_bam_gpu=$(bam_sum tagged.bam)
stages classify
# the copy of sbf's own output: it writes the bytes sbf writes (the tags too, which deflate
# takes longer over than over the records alone), from an input of the same records
cp tagged.bam tagged_in.bam
timed copy_tagged samtools view -@ "$T" -b -o copy.bam tagged_in.bam
row "samtools view -@$T -b of sbf's tagged output (the same bytes out)" "$secs" "sbf (--gpu auto) $(calc "$secs / $sbf_bam")x this" "$(samtools view -c -@ "$T" copy.bam)"
rm -f tagged_in.bam
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
if [ "$gpus" -ge 2 ]; then
    timed classify2 "$SBF" classify "${K[@]}" -@ "$T" --stats --gpu all -x "$idx" -o tagged2.bam reads.bam
    row "sbf classify BAM -> tagged BAM ($gpus GPUs)" "$secs" "$(calc "$base / $secs")x the copy" "$(samtools view -c -@ "$T" tagged2.bam)"
fi
timed classify_cpu "$SBF" classify "${K[@]}" -@ "$T" --gpu none -x "$idx" -o tagged_cpu.bam reads.bam
row "sbf classify BAM -> tagged BAM (CPU engine)" "$secs" "$(calc "$base / $secs")x the copy" "$(samtools view -c -@ "$T" tagged_cpu.bam)"
echo "# BAM -> tagged BAM, GPU run and CPU engine: $([ "$(bam_sum tagged_cpu.bam)" = "$sum_bam_gpu" ] && echo identical || echo DIFFERENT) records and header (@PG aside)"
fi

# ---- BAM at compression levels (ROWS=levels): what compression costs each side ----
if want levels; then
for lv in default 1 0; do
    if [ $lv = default ]; then so=(-b); oo=(); else so=(-b --output-fmt-option level=$lv); oo=(-O bam,level=$lv); fi
    [ $lv = 0 ] && so=(-u)
    timed lv_samtools samtools view -@ "$T" "${so[@]}" -o lv.bam reads.bam; base=$secs
    row "samtools view -@$T ${so[*]}" "$base" "1.00 (baseline)" "$(samtools view -c -@ "$T" lv.bam)"
    timed lv_sbf "$SBF" classify "${K[@]}" -@ "$T" --stats "${oo[@]}" -x "$idx" -o lv.bam reads.bam
    row "sbf classify ${oo[*]:--O bam (default level)}" "$secs" "$(calc "$base / $secs")x samtools" "$(samtools view -c -@ "$T" lv.bam)"
    stages lv_sbf
    if [ $lv = default ]; then
        timed lv_null env SBF_NULL_ENGINE=1 "$SBF" classify "${K[@]}" -@ "$T" --stats -x "$idx" -o lv.bam reads.bam
        row "sbf classify, queries skipped (SBF_NULL_ENGINE)" "$secs" "$(calc "$base / $secs")x samtools" "$(samtools view -c -@ "$T" lv.bam)"
    fi
done
fi

# ---- plain FASTQ -> FASTQ: every record written ----
if want fastq; then
timed cat_fq sh -c 'cat r1.fq > c1.fq && cat r2.fq > c2.fq'; base=$secs
row "cat of both mate files to files" "$base" "1.00 (baseline)" "$(fq_records c1.fq c2.fq)"
timed classify_fq "$SBF" classify "${K[@]}" -@ "$T" --stats -x "$idx" -1 t1.fq -2 t2.fq r1.fq r2.fq
row "sbf classify FASTQ -> tagged FASTQ" "$secs" "$(calc "$base / $secs")x cat" "$(fq_records t1.fq t2.fq)"
stages classify_fq
timed filter_fq "$SBF" filter "${K[@]}" -@ "$T" --stats -x "$idx" --remove human -1 f1.fq -2 f2.fq r1.fq r2.fq
row "sbf filter FASTQ --remove human (writes the rest)" "$secs" "$(calc "$base / $secs")x cat" "$(fq_records f1.fq f2.fq)"
stages filter_fq
sum_gpu=$(cat f1.fq f2.fq | md5sum)
timed filter_fq_cpu "$SBF" filter "${K[@]}" -@ "$T" --gpu none --stats -x "$idx" --remove human -1 f1.fq -2 f2.fq r1.fq r2.fq
row "sbf filter FASTQ --remove human, CPU engine" "$secs" "$(calc "$base / $secs")x cat" "$(fq_records f1.fq f2.fq)"
stages filter_fq_cpu
echo "# filter --remove human, GPU run and CPU engine: $([ "$(cat f1.fq f2.fq | md5sum)" = "$sum_gpu" ] && echo identical || echo DIFFERENT) outputs"
timed read_fq sh -c 'cat r1.fq r2.fq > /dev/null'
row "cat of both mate files to /dev/null (read only)" "$secs" "-" "0"
timed filter_io env SBF_NULL_ENGINE=1 "$SBF" filter "${K[@]}" -@ "$T" --stats -x "$idx" --remove human -1 /dev/null -2 /dev/null r1.fq r2.fq
row "sbf, queries skipped, to /dev/null (I/O ceiling)" "$secs" "-" "(/dev/null)"
stages filter_io
fi

# ---- BGZF FASTQ -> BGZF FASTQ: every record written, level 6 on both sides ----
if want bgzf; then
timed roundtrip sh -c "bgzip -@ $T -dc r1.fq.gz | bgzip -@ $T -l 6 -c > rt1.fq.gz && bgzip -@ $T -dc r2.fq.gz | bgzip -@ $T -l 6 -c > rt2.fq.gz"
base=$secs; row "bgzip -dc \\| bgzip -c of both mates (-@$T, level 6)" "$base" "1.00 (baseline)" "$(gz_records rt1.fq.gz rt2.fq.gz)"
timed classify_gz "$SBF" classify "${K[@]}" -@ "$T" --stats -x "$idx" -O fastq.gz,level=6 -1 tz1.fq.gz -2 tz2.fq.gz r1.fq.gz r2.fq.gz
row "sbf classify BGZF -> tagged BGZF (level 6)" "$secs" "$(calc "$base / $secs")x the round trip" "$(gz_records tz1.fq.gz tz2.fq.gz)"
stages classify_gz
fi

# ---- plain gzip (one stream per file: htslib decompresses it on one thread) ----
if want gzip; then
timed gunzip sh -c 'gzip -dc g1.fq.gz > d1.fq & gzip -dc g2.fq.gz > d2.fq & wait'; base=$secs
row "gzip -dc of both files to files ($G pairs)" "$base" "1.00 (baseline)" "$(fq_records d1.fq d2.fq)" "$G"
timed classify_gzip "$SBF" classify "${K[@]}" -@ "$T" --stats -x "$idx" -1 gz1.fq -2 gz2.fq g1.fq.gz g2.fq.gz
row "sbf classify gzip FASTQ -> tagged FASTQ ($G pairs)" "$secs" "$(calc "$base / $secs")x gzip -dc" "$(fq_records gz1.fq gz2.fq)" "$G"
stages classify_gzip
fi

echo
echo "| run | seconds | CPU s | Gbp/s in | vs its baseline | records out |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
