#!/usr/bin/env bash
# bench/host.sh -- host removal head to head, in the form the field reports it: the share of
# host reads removed and the share of microbial reads kept, with wall time, CPU time and peak
# memory, for sbf (plain and masked host index), BBDuk, Kraken2, bowtie2 --very-sensitive
# (hostile's method for short reads) and minimap2 (its method for long reads), all given the
# same host: human chr20 + chrM (GRCh37, vt-examples, 63 Mbp).
#
# Usage: bench/host.sh            (from anywhere; Debian 12 as root, apt-get reachable)
# Env:   SBF [the repository's ./sbf]   the sbf to test
#        SBF_ARGS ['']        extra options of every 'sbf filter'
#        HOST_DIR [${TMPDIR:-/tmp}/sbf-host]  cache: genomes, simulated reads, indexes, runs
#        REAL_DIR [${TMPDIR:-/tmp}/sbf-real]  bench/real.sh's cache (its real read sets)
#        THREADS [2]          threads of every tool (and of the builds)
#        REPS [3]             timed runs of each tool on each input (medians are shown)
#        PAIRS [10000]        simulated Illumina pairs per microbial genome
#        HOST_PAIRS [50000]   simulated Illumina pairs of the host
#        LONG [300]           simulated long reads per microbial genome
#        HOST_LONG [2000]     simulated long reads of the host
#        TOOLS ['sbf sbf_masked sbf_strict bbduk kraken2 bowtie2 minimap2']  the tools to run
#        STRICT_SCORE [5]     sbf_strict: the masked index with 'sbf filter -s STRICT_SCORE' (a
#                             pair goes when chance alone gives its hits 10^-5 or less)
#        MAPQ_MIN [10]        bowtie2's MAPQ rule: its second row removes a pair only when a
#                             mate aligns with at least this MAPQ
#        HOST_OUT [$HOST_DIR/results.tsv]  the table as TSV
#
# Inputs (each tool reads each one and writes the reads it keeps):
#   sim_short  SIMULATED 2x150 Illumina pairs (art_illumina, HiSeq 2500 profile, 400 bp
#              fragments): HOST_PAIRS from the host, PAIRS from each microbial genome of
#              bench/host/genomes.tsv (bacteria, viruses, a protist, a fungus; 'held-out' ones
#              are not in the masked index's mask).
#   sim_long   SIMULATED noisy long reads (pbsim, CLR model, mean 6 kbp, 87% accuracy).
#   real_short REAL Illumina reads (bench/real.sh's sets): human chr20, chrM and RNA-seq reads;
#              E. coli MiSeq, measles sample, phiX.
#   real_long  REAL long reads: E. coli ONT and PacBio CLR, lambda ONT, S. aureus ONT.
# Truth: a host read is one of host origin (simulated from it, or a real read whose primary
#   minimap2 alignment against host + microbes is on the host) that minimap2 places on the host
#   (an alignment, primary or not, over at least half of the read; a pair: either mate);
#   a microbial read is one simulated from a microbe, or a real read whose primary alignment is
#   on its organism's genome with MAPQ >= 20. 'kept' counts the microbial reads that minimap2
#   does not place on the host (the field's 'reads no aligner places on the host'); 'kept, all'
#   counts every microbial read. A pair is one unit: removed when the tool removes it.
# The first run prepares $HOST_DIR (bowtie2-build of chr20 takes about 10 min on 2 cores);
# later runs only screen.
set -euo pipefail
trap 'echo "host.sh: FAILED (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

t_start=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SBF=${SBF:-$(cd "$here/.." && pwd)/sbf}
SBF_ARGS=${SBF_ARGS:-}
HOST_DIR=${HOST_DIR:-${TMPDIR:-/tmp}/sbf-host}
REAL_DIR=${REAL_DIR:-${TMPDIR:-/tmp}/sbf-real}
HOST_OUT=${HOST_OUT:-$HOST_DIR/results.tsv}
THREADS=${THREADS:-2}
REPS=${REPS:-3}
PAIRS=${PAIRS:-10000}
HOST_PAIRS=${HOST_PAIRS:-50000}
LONG=${LONG:-300}
HOST_LONG=${HOST_LONG:-2000}
TOOLS=${TOOLS:-sbf sbf_masked sbf_strict bbduk kraken2 bowtie2 minimap2}
STRICT_SCORE=${STRICT_SCORE:-5}
MAPQ_MIN=${MAPQ_MIN:-10}
doc=/usr/share/doc

die() { echo "host.sh: $*" >&2; exit 1; }
log() { echo "[host.sh $(date +%T)] $*" >&2; }

[ -x "$SBF" ] || die "sbf not found or not executable: $SBF (set SBF=...)"
SBF=$(cd "$(dirname "$SBF")" && pwd)/$(basename "$SBF")
if [ -d "$(dirname "$SBF")/../lib" ]; then
    export LD_LIBRARY_PATH=$(cd "$(dirname "$SBF")/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
sbf_version=$("$SBF" --version 2>&1 | head -1) || die "'$SBF --version' failed"
for t in $TOOLS; do
    case $t in sbf|sbf_masked|sbf_strict|bbduk|kraken2|bowtie2|minimap2) ;; *) die "unknown tool in TOOLS: $t" ;; esac
done
for v in REPS PAIRS HOST_PAIRS LONG HOST_LONG THREADS MAPQ_MIN STRICT_SCORE; do
    [[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -gt 0 ] || die "$v must be a positive integer (got '${!v}')"
done

echo "# bench/host.sh: host removal, host = human chr20 + chrM (63 Mbp), $THREADS threads per tool"
echo "# command: SBF=$SBF SBF_ARGS='$SBF_ARGS' STRICT_SCORE=$STRICT_SCORE THREADS=$THREADS REPS=$REPS PAIRS=$PAIRS HOST_PAIRS=$HOST_PAIRS LONG=$LONG HOST_LONG=$HOST_LONG $0"
echo "# sbf version: $sbf_version; machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo)"

mkdir -p "$HOST_DIR"/{genomes,reads,truth,idx,runs}
cd "$HOST_DIR"

# ---------------------------------------------------------------- packages
pkgs=(minimap2 bbmap kraken2 bowtie2 samtools seqtk art-nextgen-simulation-tools pbsim time xz-utils
      vt-examples ragout-examples bowtie-examples bowtie2-examples kleborate-examples kmer-examples
      smalt-examples gasic-examples)
. "$here/need-packages.sh"
need_packages "${pkgs[@]}"
for t in minimap2 samtools seqtk bbduk.sh kraken2 kraken2-build bowtie2 bowtie2-build art_illumina pbsim; do
    command -v $t > /dev/null || die "$t not found after install"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found"
pbsim_model=/usr/share/pbsim/models/model_qc_clr
[ -s $pbsim_model ] || die "pbsim's CLR model $pbsim_model missing"

# ---------------------------------------------------------------- genomes
# genomes/NAME.fa: every contig renamed NAME__<n>, so that an alignment tells the genome.
source_cat() { # SOURCE PATH -> the FASTA on stdout
    local src=$1 path=$2 f
    case $src in
        committed) f=$here/$path ;;
        *) f=$doc/${path%%:*} ;;
    esac
    [ -s "$f" ] || die "genome file $f missing (source $src)"
    case $path in
        *.tar.gz:*) tar xzOf "$f" "${path#*:}" ;;
        *.xz) xz -dc "$f" ;;
        *.gz) zcat "$f" ;;
        *) cat "$f" ;;
    esac
}
renamed() { awk -v n=$1 '/^>/ { print ">" n "__" (++i); next } { print }'; }
declare -A kind_of=() mask_of=()
gnames=()
while IFS=$'\t' read -r name kind mask src path; do
    case $name in ''|'#'*) continue ;; esac
    case $mask in yes|held-out) ;; *) die "genomes.tsv: $name: mask must be yes or held-out" ;; esac
    gnames+=("$name"); kind_of[$name]=$kind; mask_of[$name]=$mask
    [ -s genomes/$name.fa ] && continue
    source_cat "$src" "$path" | renamed $name > genomes/$name.fa.tmp
    grep -q '^>' genomes/$name.fa.tmp || die "genome $name: no sequence in $path"
    mv genomes/$name.fa.tmp genomes/$name.fa
done < "$here/host/genomes.tsv"
[ ${#gnames[@]} -ge 20 ] || die "bench/host/genomes.tsv names ${#gnames[@]} genomes, 20 wanted"
if [ ! -s genomes/human.fa ]; then
    { zcat $doc/vt/examples/ref/20.fa.gz; zcat "$here/real/data/chrM_NC_012920.1.fa.gz"; } | renamed human > genomes/human.fa.tmp
    mv genomes/human.fa.tmp genomes/human.fa
fi
host=genomes/human.fa
glen() { awk '!/^>/ { n += length($0) } END { print n }' genomes/$1.fa; }
# The mask of the masked index: every genome marked 'yes'.
for g in "${gnames[@]}"; do [ ${mask_of[$g]} = yes ] && cat genomes/$g.fa; done > genomes/mask.fa.tmp
cmp -s genomes/mask.fa.tmp genomes/mask.fa 2> /dev/null && rm genomes/mask.fa.tmp || mv genomes/mask.fa.tmp genomes/mask.fa
for g in "${gnames[@]}"; do cat genomes/$g.fa; done | cat $host - > genomes/all.fa.tmp
cmp -s genomes/all.fa.tmp genomes/all.fa 2> /dev/null && rm genomes/all.fa.tmp || mv genomes/all.fa.tmp genomes/all.fa

# ---------------------------------------------------------------- reads
# Read names are ORIGIN:N (pairs: ORIGIN:N/1 and /2), ORIGIN a genome name or 'human'; real
# reads keep bench/real.sh's SET.N names.
rkey="$PAIRS.$HOST_PAIRS.$LONG.$HOST_LONG.$(cat $here/host/genomes.tsv | md5sum | cut -c1-8)"
sim_short() { # GENOME PAIRS SEED -> appends to reads/sim_short_{1,2}.fq.tmp
    local g=$1 n=$2 seed=$3 len cov d=reads/art.tmp
    len=$(glen $g)
    cov=$(awk -v n=$n -v l=$len 'BEGIN { printf "%.6f", n * 300 / l }')
    rm -rf $d && mkdir -p $d
    art_illumina -ss HS25 -i genomes/$g.fa -p -l 150 -f $cov -m 400 -s 30 -rs $seed -na -q -o $d/r > $d/log 2>&1 \
        || { tail $d/log >&2; die "art_illumina failed on $g"; }
    for m in 1 2; do
        awk -v g=$g -v m=$m 'NR % 4 == 1 { print "@" g ":" (++i) "/" m; next } NR % 4 == 3 { print "+"; next } { print }' \
            $d/r$m.fq >> reads/sim_short_$m.fq.tmp
    done
    rm -rf $d
}
sim_long() { # GENOME READS SEED -> appends to reads/sim_long.fq.tmp
    local g=$1 n=$2 seed=$3 len depth d=reads/pbsim.tmp
    len=$(glen $g)
    depth=$(awk -v n=$n -v l=$len 'BEGIN { printf "%.6f", n * 6000 / l }')
    rm -rf $d && mkdir -p $d
    ( cd $d && pbsim --data-type CLR --model_qc $pbsim_model --depth $depth --length-mean 6000 --length-sd 4000 \
          --accuracy-mean 0.87 --accuracy-sd 0.03 --seed $seed --prefix r ../../genomes/$g.fa > log 2>&1 ) \
        || { tail $d/log >&2; die "pbsim failed on $g"; }
    cat $d/r_*.fastq | awk -v g=$g 'NR % 4 == 1 { print "@" g ":" (++i); next } NR % 4 == 3 { print "+"; next } { print }' \
        >> reads/sim_long.fq.tmp
    rm -rf $d
}
if [ "$(cat reads/key 2> /dev/null)" != "$rkey" ]; then
    log "simulating reads (art_illumina HS25 2x150, pbsim CLR) of the host and ${#gnames[@]} genomes"
    rm -f reads/sim_*
    seed=1
    sim_short human $HOST_PAIRS $seed; sim_long human $HOST_LONG $seed
    for g in "${gnames[@]}"; do
        seed=$((seed + 1))
        sim_short $g $PAIRS $seed; sim_long $g $LONG $seed
    done
    for f in sim_short_1 sim_short_2 sim_long; do mv reads/$f.fq.tmp reads/$f.fq; done
    echo "$rkey" > reads/key
fi
short_real_sets="human_chr20_il human_mt_il human_rna_il ecoli_miseq measles_il phix_il36"
long_real_sets="ecoli_ont ecoli_pacbio lambda_ont saureus_ont_neg"
need=()
for s in $short_real_sets $long_real_sets; do [ -s "$REAL_DIR/sets/$s.fq" ] || need+=($s); done
if [ ${#need[@]} -gt 0 ]; then
    log "real read sets from bench/real.sh (PREP_ONLY): ${need[*]}"
    SBF=$SBF REAL_DIR=$REAL_DIR THREADS=$THREADS PREP_ONLY=1 SETS="${need[*]}" bash "$here/real.sh" > real.log 2>&1 \
        || { tail real.log >&2; die "bench/real.sh (PREP_ONLY) failed (real.log)"; }
fi
for s in $short_real_sets; do cat "$REAL_DIR/sets/$s.fq"; done > reads/real_short.fq
for s in $long_real_sets; do cat "$REAL_DIR/sets/$s.fq"; done > reads/real_long.fq
inputs="sim_short sim_long real_short real_long"
in_files() { case $1 in sim_short) echo reads/sim_short_1.fq reads/sim_short_2.fq ;; *) echo reads/$1.fq ;; esac; }
is_long() { case $1 in *_long) return 0 ;; esac; return 1; }

# ---------------------------------------------------------------- truth
# truth/INPUT.tsv: unit<TAB>origin<TAB>class<TAB>group; class H (host read on the host), M
# (microbial read no aligner places on the host), P (microbial read that minimap2 places on the
# host), X (neither: a host-origin read off the host, a real read of no known origin); group:
# the genome's mask column (yes / held-out), '-' for host reads.
unit_names() { awk 'NR % 4 == 1 { n = substr($1, 2); sub(/\/[12]$/, "", n); print n }' "$1"; }
placed() { # PRESET READS.fq -> names minimap2 places on the host: an alignment over >= half the read
    minimap2 -t $THREADS -x $1 $host "$2" 2> /dev/null | awk '$4 - $3 >= $2 / 2 { print $1 }' | sed 's,/[12]$,,' | sort -u
}
origin_of_real() { # READS.fq -> unit<TAB>genome of the primary alignment (MAPQ >= 20) on all.fa
    minimap2 -t $THREADS -x $1 --secondary=no genomes/all.fa "$2" 2> /dev/null \
        | awk 'BEGIN { FS = OFS = "\t" } $12 >= 20 && !($1 in seen) { seen[$1]; g = $6; sub(/__.*/, "", g); print $1, g }'
}
masks_tsv() { for g in "${gnames[@]}"; do printf '%s\t%s\n' $g ${mask_of[$g]}; done; }
classify_units() { # UNITS ORIGINS PLACED -> truth rows (origin file: unit<TAB>origin)
    awk 'BEGIN { FS = OFS = "\t" }
        FILENAME == ARGV[1] { grp[$1] = $2; next }
        FILENAME == ARGV[2] { org[$1] = $2; next }
        FILENAME == ARGV[3] { pl[$1]; next }
        { o = ($1 in org) ? org[$1] : "-"
          if (o == "human") c = ($1 in pl) ? "H" : "X"
          else if (o in grp) c = ($1 in pl) ? "P" : "M"
          else c = "X"
          print $1, o, c, (o in grp) ? grp[o] : "-" }' <(masks_tsv) "$2" "$3" "$1"
}
for in in $inputs; do
    [ -s truth/$in.tsv ] && [ "$(cat truth/$in.key 2> /dev/null)" = "$rkey" ] && continue
    log "truth of $in (minimap2 against the host$(case $in in real_*) echo ' and against host + microbes' ;; esac))"
    files=($(in_files $in))
    case $in in sim_short|real_short) preset=sr ;; sim_long) preset=map-pb ;; real_long) preset=map-ont ;; esac
    unit_names ${files[0]} > truth/$in.units
    for f in "${files[@]}"; do placed $preset $f; done | sort -u > truth/$in.placed
    case $in in
        sim_*) awk 'BEGIN { OFS = "\t" } { o = $1; sub(/:.*/, "", o); print $1, o }' truth/$in.units > truth/$in.origin ;;
        *) origin_of_real $preset ${files[0]} > truth/$in.origin ;;
    esac
    classify_units truth/$in.units truth/$in.origin truth/$in.placed > truth/$in.tsv.tmp
    mv truth/$in.tsv.tmp truth/$in.tsv
    echo "$rkey" > truth/$in.key
done

# ---------------------------------------------------------------- indexes
# Each build is timed once: idx/TOOL.time holds 'wall user sys maxrss_kB'.
timed() { # TIMEFILE LOG CMD...: run CMD under GNU time
    local tf=$1 lg=$2; shift 2
    /usr/bin/time -f '%e %U %S %M' -o "$tf" "$@" > "$lg" 2>&1 || { tail "$lg" >&2; die "failed: $* ($lg)"; }
}
build_index() { # TOOL
    case $1 in
        sbf)   # cached per sbf binary
            [ -s idx/sbf.sbf ] && [ "$(cat idx/sbf.key 2> /dev/null)" = "$sbf_key" ] && return 0
            log "sbf build (plain host index)"
            timed idx/sbf.time idx/sbf.log "$SBF" build -@ $THREADS -o idx/sbf.sbf human=$host
            echo "$sbf_key" > idx/sbf.key ;;
        sbf_strict) build_index sbf_masked ;;
        sbf_masked)   # cached per sbf binary and mask
            [ -s idx/sbf_masked.sbf ] && [ "$(cat idx/sbf_masked.key 2> /dev/null)" = "$sbf_key.$mask_key" ] && return 0
            log "sbf build --mask (host masked against the 'yes' genomes of genomes.tsv)"
            timed idx/sbf_masked.time idx/sbf_masked.log "$SBF" build -@ $THREADS -o idx/sbf_masked.sbf human=$host --mask genomes/mask.fa
            echo "$sbf_key.$mask_key" > idx/sbf_masked.key ;;
        bbduk) : ;;   # BBDuk has no index file: it hashes the reference in every run
        kraken2)
            [ -s idx/kraken2/hash.k2d ] && return 0
            log "kraken2-build (host only, hand-made taxonomy: root 1, human 9606)"
            rm -rf idx/kraken2.tmp && mkdir -p idx/kraken2.tmp/taxonomy
            printf '1\t|\t1\t|\tno rank\t|\n9606\t|\t1\t|\tspecies\t|\n' > idx/kraken2.tmp/taxonomy/nodes.dmp
            printf '1\t|\troot\t|\t\t|\tscientific name\t|\n9606\t|\thuman\t|\t\t|\tscientific name\t|\n' > idx/kraken2.tmp/taxonomy/names.dmp
            awk '/^>/ { print ">" substr($1, 2) "|kraken:taxid|9606"; next } { print }' $host > idx/kraken2.tmp/host.fa
            kraken2-build --db idx/kraken2.tmp --add-to-library idx/kraken2.tmp/host.fa > idx/kraken2.add.log 2>&1 \
                || { tail idx/kraken2.add.log >&2; die "kraken2-build --add-to-library failed"; }
            timed idx/kraken2.time idx/kraken2.log kraken2-build --db idx/kraken2.tmp --build --threads $THREADS
            rm -rf idx/kraken2.tmp/library idx/kraken2.tmp/host.fa && rm -rf idx/kraken2 && mv idx/kraken2.tmp idx/kraken2 ;;
        bowtie2)
            [ -e idx/bowtie2.done ] && return 0
            log "bowtie2-build of the host (about 10 min on 2 cores)"
            timed idx/bowtie2.time idx/bowtie2.log bowtie2-build --threads $THREADS $host idx/host
            touch idx/bowtie2.done ;;
        minimap2)
            [ -s idx/host.map-ont.mmi ] && return 0
            log "minimap2 -d (map-ont)"
            timed idx/minimap2.time idx/minimap2.log minimap2 -x map-ont -t $THREADS -d idx/host.map-ont.mmi $host ;;
    esac
}
sbf_key=$(md5sum < "$SBF" | cut -c1-12)
mask_key=$(md5sum < genomes/mask.fa | cut -c1-12)
for t in $TOOLS; do build_index $t; done

# ---------------------------------------------------------------- runs
# run_TOOL INPUT DIR: read INPUT, write the reads kept in DIR/kept*.fq (bowtie2: DIR/aln.bam,
# from which both of its rules are read). Each tool runs with $THREADS threads.
run_sbf() { sbf_filter idx/sbf.sbf "$@"; }
run_sbf_masked() { sbf_filter idx/sbf_masked.sbf "$@"; }
run_sbf_strict() { sbf_filter idx/sbf_masked.sbf "$@" -s $STRICT_SCORE; }
sbf_filter() { # IDX INPUT DIR [OPTION...]
    local idx=$1 in=$2 d=$3 f=($(in_files $2))
    shift 3
    if [ ${#f[@]} = 2 ]; then
        "$SBF" filter -x $idx --remove human -@ $THREADS $SBF_ARGS "$@" -1 $d/kept_1.fq -2 $d/kept_2.fq "${f[@]}"
    else
        "$SBF" filter -x $idx --remove human -@ $THREADS $SBF_ARGS "$@" -o $d/kept.fq "${f[@]}"
    fi
}
run_bbduk() { # k=31 as bench/real.sh; BBDuk's defaults otherwise (a pair goes when either mate matches)
    local f=($(in_files $1))
    if [ ${#f[@]} = 2 ]; then
        bbduk.sh -Xmx6g threads=$THREADS ref=$host k=31 in=${f[0]} in2=${f[1]} out=$2/kept_1.fq out2=$2/kept_2.fq
    else
        bbduk.sh -Xmx6g threads=$THREADS ref=$host k=31 in=${f[0]} out=$2/kept.fq
    fi
}
run_kraken2() { # Kraken2's defaults (k=35, confidence 0): unclassified reads are kept
    local f=($(in_files $1))
    if [ ${#f[@]} = 2 ]; then
        kraken2 --db idx/kraken2 --threads $THREADS --paired --output /dev/null --unclassified-out $2/kept#.fq "${f[@]}"
    else
        kraken2 --db idx/kraken2 --threads $THREADS --output /dev/null --unclassified-out $2/kept.fq "${f[@]}"
    fi
}
run_bowtie2() { # hostile's command (-k 1 dropped so that MAPQ means something), --very-sensitive
    local f=($(in_files $1)) in
    if [ ${#f[@]} = 2 ]; then in="-1 ${f[0]} -2 ${f[1]}"; else in="-U ${f[0]}"; fi
    bowtie2 --very-sensitive --mm -p $THREADS -x idx/host $in | samtools view -b -o $2/aln.bam -
}
run_minimap2() { # hostile's long-read command: minimap2 -ax map-ont --secondary no; unmapped reads kept
    local f=($(in_files $1))
    minimap2 -ax map-ont --secondary=no -t $THREADS idx/host.map-ont.mmi "${f[@]}" | samtools fastq -f 4 - > $2/kept.fq
}
applies() { # TOOL INPUT: does the tool screen this input?
    case $1 in bowtie2) ! is_long $2 ;; minimap2) is_long $2 ;; *) return 0 ;; esac
}
removed_units() { # TOOL INPUT DIR -> removed unit names, one rule per line group (RULE<TAB>unit)
    case $1 in
        bowtie2)
            samtools view -F 0x900 $3/aln.bam | awk -v q=$MAPQ_MIN 'BEGIN { FS = OFS = "\t" }
                { n = $1; sub(/\/[12]$/, "", n)
                  if (int($2 / 4) % 2 == 0) { if (!(n in a)) { a[n]; print "bowtie2", n }
                                         if ($5 >= q && !(n in b)) { b[n]; print "bowtie2_mapq" q, n } } }' ;;
        *)
            awk -v t=$1 'BEGIN { OFS = "\t" } NR == FNR { k[$1]; next } !($1 in k) { print t, $1 }' \
                <(cat $3/kept*.fq | unit_names /dev/stdin) truth/$2.units ;;
    esac
}
median_time() { # TIMEFILE... -> 'wall cpu peak_kB runs', each the median over the runs
    local n=$#
    for c in 1 2 3; do
        cat "$@" | awk -v c=$c '{ print c == 2 ? $2 + $3 : (c == 3 ? $4 : $1) }' | sort -g | awk -v n=$n 'NR == int((n + 1) / 2)'
    done | paste -s -d' ' | sed "s/\$/ $n/"
}
rows=runs/rows.tsv
: > $rows
for in in $inputs; do
    for t in $TOOLS; do
        applies $t $in || continue
        d=runs/$t.$in
        rm -rf $d && mkdir -p $d
        log "$t on $in ($REPS run(s))"
        for r in $(seq $REPS); do
            rm -f $d/kept*.fq $d/aln.bam
            timed $d/time.$r $d/log bash -c "set -eo pipefail; $(declare -f in_files run_$t sbf_filter); $(declare -p SBF SBF_ARGS STRICT_SCORE THREADS host); run_$t $in $d"
        done
        removed_units $t $in $d > $d/removed.tsv
        # one row per rule: tool, input, host units, removed, microbial units (M), kept, M+P, kept, lost (yes / held-out), times
        for rule in $(cut -f1 $d/removed.tsv | sort -u; [ -s $d/removed.tsv ] || echo $t); do
            awk -v rule=$rule -v tool=$t -v inp=$in 'BEGIN { FS = OFS = "\t" }
                FILENAME == ARGV[1] { if ($1 == rule) rm[$2]; next }
                FILENAME == ARGV[2] { split($0, x, " "); tm = x[1] "\t" x[2] "\t" x[3] "\t" x[4]; next }
                { r = ($1 in rm) }
                $3 == "H" { h++; hr += r }
                $3 == "M" { mm++; mk += !r; if (r) { if ($4 == "yes") ly++; else lh++ } }
                $3 == "M" || $3 == "P" { ma++; mak += !r }
                END { print tool, rule, inp, h + 0, hr + 0, mm + 0, mk + 0, ma + 0, mak + 0, ly + 0, lh + 0, tm }' \
                $d/removed.tsv <(median_time $d/time.*) truth/$in.tsv >> $rows
        done
        # which genomes lose reads: runs/TOOL.INPUT/lost.tsv
        awk 'BEGIN { FS = OFS = "\t" } NR == FNR { rm[$2]; next } $3 == "M" && ($1 in rm) { n[$2]++ } END { for (g in n) print g, n[g] }' \
            <(awk -v t=$t '$1 == t' $d/removed.tsv) truth/$in.tsv | sort -k2,2nr > $d/lost.tsv
        rm -f $d/kept*.fq
    done
done

# ---------------------------------------------------------------- report
{
    printf 'tool\trule\tinput\thost_units\thost_removed\tmicrobial_units\tmicrobial_kept\tmicrobial_all\tmicrobial_all_kept\tlost_masked\tlost_heldout\twall_s\tcpu_s\tpeak_kB\truns\n'
    cat $rows
} > "$HOST_OUT"
pct() { awk -v a=$1 -v b=$2 'BEGIN { if (b == 0) printf "-"; else printf "%.4f%%", 100 * a / b }'; }
echo
echo "# Index builds ($THREADS threads): wall s, CPU s, peak RSS MB (BBDuk hashes the host in every run)"
printf '%-11s %8s %8s %8s %10s\n' tool wall_s cpu_s peak_MB index_MB
for t in $TOOLS; do
    [ -s idx/$t.time ] || continue
    case $t in sbf|sbf_masked) sz=$(du -m idx/$t.sbf | cut -f1) ;; kraken2) sz=$(du -sm idx/kraken2 | cut -f1) ;;
               bowtie2) sz=$(cat idx/host.*.bt2 | wc -c | awk '{ printf "%d", $1 / 1048576 }') ;; minimap2) sz=$(du -m idx/host.map-ont.mmi | cut -f1) ;; esac
    read -r w u s m < idx/$t.time
    printf '%-11s %8.1f %8.1f %8.0f %10s\n' $t $w $(awk -v u=$u -v s=$s 'BEGIN { print u + s }') $(awk -v m=$m 'BEGIN { print m / 1024 }') $sz
done
for in in $inputs; do
    echo
    echo "# $in: $(awk -F'\t' '{ n[$3]++ } END { printf "%d host units, %d microbial (no aligner places them on the host), %d microbial placed there, %d other", n["H"], n["M"], n["P"], n["X"] }' truth/$in.tsv)"
    printf '%-16s %18s %18s %18s %11s %8s %8s %8s\n' tool host_removed microbes_kept kept_all lost_mask/held wall_s cpu_s peak_MB
    awk -F'\t' -v inp=$in '$3 == inp' $rows | while IFS=$'\t' read -r t rule i h hr mm mk ma mak ly lh w c m n; do
        printf '%-16s %18s %18s %18s %11s %8.2f %8.2f %8.0f\n' $rule "$(pct $hr $h)" "$(pct $mk $mm)" "$(pct $mak $ma)" "$ly/$lh" $w $c $(awk -v m=$m 'BEGIN { print m / 1024 }')
    done
done
echo
echo "# medians of $REPS run(s); TSV: $HOST_OUT; per-genome losses: $HOST_DIR/runs/TOOL.INPUT/lost.tsv; $(( $(date +%s) - t_start )) s"
