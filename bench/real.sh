#!/usr/bin/env bash
# bench/real.sh -- accuracy of sbf classify on REAL sequencing reads, with BBDuk (k=31) and
# Kraken2 beside it, the truth being minimap2's placement of every read on the same targets.
#
# Usage: bench/real.sh            (from anywhere; Debian 12 as root, apt-get reachable)
# Env:   SBF [the repository's ./sbf]  the sbf to test (an installed one: its ../lib joins LD_LIBRARY_PATH)
#        SBF_ARGS ['']        extra options of every 'sbf classify', e.g. SBF_ARGS="-s 0.1"
#        SBF_BUILD_ARGS ['']  extra options of 'sbf build' (the index is cached per value)
#        REAL_DIR [${TMPDIR:-/tmp}/sbf-real]  cache: packages' reads, targets, truth, BBDuk
#        REAL_OUT [$REAL_DIR/results.tsv]     the table as TSV (one row per set and tool)
#        SETS ['']            only these sets (space-separated names of bench/real/sets.tsv)
#        TARGET_SETS ['plain relatives']  the target sets: bench/real/targets-<name>.tsv each
#        SHARED_DATA [<repo>/../shared/data]  where 'shared:' paths of a targets file point
#        SKIP_BBDUK=1, SKIP_KRAKEN2=1  leave BBDuk or Kraken2 out
#        THREADS [2]          threads of minimap2, BBDuk, Kraken2 and sbf build (not of classify)
#        PREP_ONLY=1          stop once the sets are in $REAL_DIR/sets (bench/host.sh uses them)
#
# Sets: bench/real/sets.tsv (REAL reads from Debian *-examples packages and from small files
# in bench/real/data/, see bench/real/README.md; one synthetic low-complexity check, labelled).
# Target sets: bench/real/targets-plain.tsv (human = chr20 + chrM, E. coli K-12, lambda, DWV,
# VDV-1...) and targets-relatives.tsv (the same plus other E. coli lineages, Shigella,
# Klebsiella, Salmonella and S. aureus: E. coli K-12 reads among their relatives). Every set
# runs against every target set; the table has one block per target set.
# Truth: minimap2 (-x sr / map-ont / map-pb) against all targets at once; a read's truth is
# the target of its primary alignment with MAPQ >= 20, otherwise 'unmapped'. Every read is
# single-end: the mates of paired sets are separate reads.
# sbf: one index of all targets (default parameters), 'sbf classify' once per set; the
# category is the sb:Z: tag. BBDuk: k=31, one run per target (all sets at once, cached):
# matched by one target = that target, by several = multi, by none = none. Kraken2: a
# database of the same targets with a hand-made taxonomy (cached), LCA root = multi.
# The first run prepares $REAL_DIR (a few minutes); later runs only classify (< 1 min).
set -euo pipefail
trap 'echo "real.sh: FAILED (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

t_start=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
real=$here/real
SBF=${SBF:-$(cd "$here/.." && pwd)/sbf}
SBF_ARGS=${SBF_ARGS:-}
SBF_BUILD_ARGS=${SBF_BUILD_ARGS:-}
REAL_DIR=${REAL_DIR:-${TMPDIR:-/tmp}/sbf-real}
REAL_OUT=${REAL_OUT:-$REAL_DIR/results.tsv}
THREADS=${THREADS:-2}
SETS=${SETS:-}
TARGET_SETS=${TARGET_SETS:-plain relatives}
SHARED_DATA=${SHARED_DATA:-$(cd "$here/../.." && pwd)/shared/data}
SKIP_BBDUK=${SKIP_BBDUK:-}
SKIP_KRAKEN2=${SKIP_KRAKEN2:-}
doc=/usr/share/doc

die() { echo "real.sh: $*" >&2; exit 1; }
log() { echo "[real.sh $(date +%T)] $*" >&2; }

[ -x "$SBF" ] || die "sbf not found or not executable: $SBF (set SBF=...)"
SBF=$(cd "$(dirname "$SBF")" && pwd)/$(basename "$SBF")
if [ -d "$(dirname "$SBF")/../lib" ]; then
    sbf_lib=$(cd "$(dirname "$SBF")/../lib" && pwd)
    export LD_LIBRARY_PATH=$sbf_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
sbf_version=$("$SBF" --version 2>&1) || die "'$SBF --version' failed: $sbf_version"

echo "# bench/real.sh: real-read accuracy of sbf classify against minimap2's truth"
echo "# command: SBF=$SBF SBF_ARGS='$SBF_ARGS' SBF_BUILD_ARGS='$SBF_BUILD_ARGS' REAL_DIR=$REAL_DIR $0 $*"
echo "# sbf version: $(echo "$sbf_version" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"

mkdir -p "$REAL_DIR"/{targets,sets,truth,idx,bbduk,run}
cd "$REAL_DIR"

# ---------------------------------------------------------------- packages
pkgs=(minimap2 bbmap samtools seqtk vt-examples ragout-examples bowtie2-examples gasic-examples
      staden-io-lib-examples nim-hts-examples any2fasta-examples python3-nanoget-examples
      qcat-examples wtdbg2-examples seqkit-examples vsearch-examples kraken2 kleborate-examples
      bowtie-examples xz-utils)
. "$here/need-packages.sh"
need_packages "${pkgs[@]}"
for t in minimap2 samtools seqtk bbduk.sh kraken2 kraken2-build xz; do command -v $t > /dev/null || die "$t not found after install"; done
for f in staden-io-lib/test/data/9827_rand3.sam.gz nim-hts-examples/HG02002.bam.gz any2fasta/examples/test.fq.gz \
         gasic/examples/reads/SRR059298_subset.fastq.gz python3-nanoget/examples/nanotest/reads.fastq.gz \
         qcat/examples/qcat/test/data/nobarcode_1k.fastq.gz qcat/examples/qcat/test/data/barcode_1k.fastq.gz \
         wtdbg2-examples/selfSampleData.tar.gz seqkit-examples/tests/pcs109_5k.fq.gz vsearch-examples/BioMarKs50k.fsa.gz; do
    [ -s $doc/$f ] || die "$doc/$f missing although its package is installed (does a dpkg path-exclude drop /usr/share/doc?)"
done
# r-bioc-shortread's example reads: the .deb is fetched with apt-get download and unpacked
# into $REAL_DIR/deb (not installed: that would pull in R).
shortread=$REAL_DIR/deb/usr/lib/R/site-library/ShortRead/extdata
if [ ! -d "$shortread" ]; then
    log "apt-get download r-bioc-shortread (unpacked under $REAL_DIR/deb, not installed)"
    mkdir -p debdl && rm -f debdl/*.deb
    ( cd debdl && apt-get download -qq r-bioc-shortread ) > /dev/null 2>&1 \
        || { apt-get update -qq && ( cd debdl && apt-get download -qq r-bioc-shortread ); } \
        || die "apt-get download r-bioc-shortread failed"
    rm -rf deb.tmp && dpkg-deb -x debdl/r-bioc-shortread_*.deb deb.tmp && rm -rf deb && mv deb.tmp deb
    [ -d "$shortread" ] || die "r-bioc-shortread has no $shortread"
fi

# ---------------------------------------------------------------- sets
# sets/NAME.fq: 4-line FASTQ, reads renamed NAME.1, NAME.2, ... (unique over all sets).
fq_rename() { seqtk seq - | awk -v s=$1 'NR % 4 == 1 { print "@" s "." (++i); next } NR % 4 == 3 { print "+"; next } { print }'; }
bam_fq() { samtools fastq -F 0x900 -N - 2> /dev/null; }   # primary records; mates as single reads
prep_human_chr20_il() { zcat "$real/data/strelka_NA12891_NA12892_chr20.fq.gz"; }
prep_human_mt_il() { zcat "$real/data/strelka_NA12878_chrM.fq.gz"; }
prep_human_rna_il() { zcat "$shortread/E-MTAB-1147/ERR127302_1_subset.fastq.gz"; }
prep_human_chr1_il() { zcat $doc/staden-io-lib/test/data/9827_rand3.sam.gz | bam_fq; }
prep_human_chr6_il() { zcat $doc/nim-hts-examples/HG02002.bam.gz | bam_fq; }
prep_ecoli_miseq() { zcat $doc/any2fasta/examples/test.fq.gz; }
prep_beevirus_il() { zcat $doc/gasic/examples/reads/SRR059298_subset.fastq.gz | awk 'NR <= 200000'; }
prep_measles_il() { zcat "$real/data/sequana_Hm2_measles_R1.fastq.gz"; }
prep_phix_il36() { seqtk seq -Q64 -V "$shortread/Data/C1-36Firecrest/Bustard/GERALD/s_1_sequence.txt"; }   # Phred+64
prep_ecoli_ont() { zcat $doc/python3-nanoget/examples/nanotest/reads.fastq.gz; }
prep_lambda_ont() { zcat $doc/qcat/examples/qcat/test/data/nobarcode_1k.fastq.gz; }
prep_ecoli_pacbio() { tar xzOf $doc/wtdbg2-examples/selfSampleData.tar.gz selfSampleData/pacbio_filtered.fastq | awk 'NR <= 8000'; }
prep_saureus_ont_neg() { zcat $doc/qcat/examples/qcat/test/data/barcode_1k.fastq.gz | seqtk seq - | awk '
    NR % 4 == 1 { keep = / truebc=1( |$)/ } keep'; }
prep_protist_454_neg() { zcat $doc/vsearch-examples/BioMarKs50k.fsa.gz | seqtk seq -U -F I - | awk 'NR <= 40000'; }
prep_sirv_ont_neg() { zcat $doc/seqkit-examples/tests/pcs109_5k.fq.gz; }
# chimera_ont: REAL reads joined end to end (the set's only construction): E. coli K-12 ONT reads
# (ecoli_ont's) and S. aureus ONT reads (saureus_ont_neg's), each >= 2 kb and aligned by
# minimap2 -x map-ont over >= 90% of its length to its own genome with MAPQ >= 20 and no other
# alignment (so that no part is itself a chimera); every E. coli read joined to one S. aureus
# read (fewer of those pass: they are used in turn), E. coli first in odd pairs, S. aureus
# first in even ones.
whole_reads() { # REF.fa READS.fq: the reads of READS.fq that pass, as FASTQ
    minimap2 -t $THREADS -x map-ont --secondary=no "$1" "$2" 2> /dev/null \
        | awk 'BEGIN { FS = "\t" } { n[$1]++; ok[$1] = $2 >= 2000 && $12 >= 20 && ($4 - $3) >= 0.9 * $2 }
               END { for (r in n) if (n[r] == 1 && ok[r]) print r }' | sort > "$2.names"
    seqtk subseq "$2" "$2.names"
}
prep_chimera_ont() {
    local d=$REAL_DIR/chimera
    mkdir -p $d
    prep_ecoli_ont | seqtk seq - > $d/ecoli.fq
    prep_saureus_ont_neg | seqtk seq - > $d/saureus.fq
    whole_reads $doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz $d/ecoli.fq | paste - - - - > $d/ecoli.tsv
    whole_reads $doc/ragout/examples/S.Aureus/references/USA300_FPR3757.fasta.gz $d/saureus.fq | paste - - - - > $d/saureus.tsv
    [ -s $d/ecoli.tsv ] && [ -s $d/saureus.tsv ] || die "chimera_ont: no whole E. coli or S. aureus read"
    awk 'BEGIN { FS = "\t" } NR == FNR { ns++; s[ns] = $2; sq[ns] = $4; next } {
        i++; e = $2; eq = $4; j = (i - 1) % ns + 1
        print "@chimera_" i " " (i % 2 ? "ecoli+saureus" : "saureus+ecoli") " " length(e) "+" length(s[j])
        print (i % 2 ? e s[j] : s[j] e); print "+"; print (i % 2 ? eq sq[j] : sq[j] eq) }' $d/saureus.tsv $d/ecoli.tsv
}
prep_lowcomplexity() {
    # SYNTHETIC (the only synthetic set): 10 reads of each pattern, 50..250 bp, half of them
    # with 1% substitutions; then 40 reads of sirv_ont_neg (no indexed organism) cut to
    # 100 bp with a 50 bp poly-G tail (a two-colour Illumina artefact).
    awk 'BEGIN {
        srand(7); split("G A T AC AT AGG", pat, " "); split("ACGT", b, "")
        for (p = 1; p <= 6; p++) for (i = 0; i < 10; i++) {
            len = 50 + 20 * i; s = ""
            while (length(s) < len) s = s pat[p]
            s = substr(s, 1, len)
            if (i % 2) for (j = 1; j <= len; j++) if (rand() < 0.01) s = substr(s, 1, j - 1) b[int(rand() * 4) + 1] substr(s, j + 1)
            q = s; gsub(/./, "I", q)
            print "@lc_" pat[p] "_" len; print s; print "+"; print q
        } }'
    zcat $doc/seqkit-examples/tests/pcs109_5k.fq.gz | seqtk seq - | awk 'NR % 4 == 2 && length($0) >= 300 && n < 40 {
        n++; s = substr($0, 101, 100) "GGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG"; q = s; gsub(/./, "I", q)
        print "@polyG_tail_" n; print s; print "+"; print q }'
}

declare -A stype=() spreset=() smapq=() srole=() sdesc=()
snames=()
while IFS=$'\t' read -r name type preset mapq role desc; do
    case $name in ''|'#'*) continue ;; esac
    if [ -n "$SETS" ] && [[ " $SETS " != *" $name "* ]]; then continue; fi
    declare -F prep_$name > /dev/null || die "set $name: no prep_$name in $0"
    snames+=("$name"); stype[$name]=$type; spreset[$name]=$preset; smapq[$name]=$mapq; srole[$name]=$role; sdesc[$name]=$desc
done < "$real/sets.tsv"
[ ${#snames[@]} -gt 0 ] || die "no set selected (SETS='$SETS')"
for s in "${snames[@]}"; do
    [ -s sets/$s.fq ] && continue
    log "reads of $s"
    prep_$s | fq_rename $s > sets/$s.fq.tmp
    [ -s sets/$s.fq.tmp ] || die "set $s: no reads"
    mv sets/$s.fq.tmp sets/$s.fq
done
if [ -n "${PREP_ONLY:-}" ]; then log "sets ready in $REAL_DIR/sets (PREP_ONLY)"; exit 0; fi

# ---------------------------------------------------------------- target sets
# targets/<tset>/NAME.fa: every contig renamed NAME__<contig>, so that a contig tells its target.
# A targets file may also hold '#!role<TAB>SET<TAB>ROLE' (SET has another role against this
# target set: saureus_ont_neg is 'pos' once S. aureus is indexed) and '#!skip<TAB>SET' (SET is
# not run against it: chimera_ont needs both of its species indexed).
declare -A tnames_of=() role_of=() skip_of=()
target_path() { # PATH of a targets file -> the file it names
    case $1 in
        /*) echo "$1" ;;
        shared:*) echo "$SHARED_DATA/${1#shared:}" ;;
        *) echo "$real/data/$1" ;;
    esac
}
prepare_targets() { # TSET: targets/TSET/NAME.fa and all.fa; sets tnames_of, role_of, skip_of
    local ts=$1 file=$real/targets-$1.tsv name pkg path f t sig names=()
    declare -A src=()
    [ -s "$file" ] || die "target set $ts: $file missing"
    mkdir -p targets/$ts
    while IFS=$'\t' read -r name pkg path; do
        case $name in
            '#!role') role_of[$ts.$pkg]=$path; continue ;;
            '#!skip') skip_of[$ts.$pkg]=1; continue ;;
            ''|'#'*) continue ;;
        esac
        path=$(target_path "$path")
        [ -s "$path" ] || die "target set $ts, target $name: $path missing (${pkg})"
        [ -n "${src[$name]:-}" ] || names+=("$name")
        src[$name]="${src[$name]:-} $path"
    done < "$file"
    tnames_of[$ts]="${names[*]}"
    for t in "${names[@]}"; do
        # the cache follows the files' contents, not their paths
        sig=$(for f in ${src[$t]}; do md5sum < "$f"; done | md5sum | cut -c1-32)
        [ -s targets/$ts/$t.fa ] && [ "$(cat targets/$ts/$t.src 2>/dev/null)" = "$sig" ] && continue
        log "target set $ts, target $t:${src[$t]}"
        for f in ${src[$t]}; do
            case $f in *.xz) xz -dc "$f" | seqtk seq -U - ;; *) seqtk seq -U "$f" ;; esac
        done | awk -v t=$t '/^>/ { sub(/^>/, ">" t "__") } { print }' > targets/$ts/$t.fa.tmp
        mv targets/$ts/$t.fa.tmp targets/$ts/$t.fa
        echo "$sig" > targets/$ts/$t.src
        rm -f targets/$ts/all.fa
    done
    if [ ! -s targets/$ts/all.fa ] || [ "$(cat targets/$ts/all.names 2>/dev/null)" != "${names[*]}" ]; then
        for t in "${names[@]}"; do cat targets/$ts/$t.fa; done > targets/$ts/all.fa.tmp
        mv targets/$ts/all.fa.tmp targets/$ts/all.fa
        echo "${names[*]}" > targets/$ts/all.names
        rm -rf idx/$ts truth/$ts
    fi
    mkdir -p idx/$ts truth/$ts
}

# ---------------------------------------------------------------- truth (minimap2)
truth_of() { # TSET SET: truth/TSET/SET.tsv
    local ts=$1 s=$2 p=${spreset[$2]}
    [ -s truth/$ts/$s.tsv ] && [ "$(cat truth/$ts/$s.mapq 2>/dev/null)" = "${smapq[$s]}" ] && return 0
    if [ ! -s idx/$ts/truth.$p.mmi ]; then
        log "minimap2 -x $p index of target set $ts"
        minimap2 -t $THREADS -x $p -d idx/$ts/truth.$p.mmi.tmp targets/$ts/all.fa 2> idx/$ts/truth.$p.log \
            || { tail idx/$ts/truth.$p.log >&2; die "minimap2 -d failed"; }
        mv idx/$ts/truth.$p.mmi.tmp idx/$ts/truth.$p.mmi
    fi
    log "truth of $s against $ts (minimap2 -x $p)"
    minimap2 -t $THREADS -a -x $p --secondary=no idx/$ts/truth.$p.mmi sets/$s.fq 2> truth/$ts/$s.log \
        | samtools view -F 0x900 - \
        | awk -v q=${smapq[$s]} 'BEGIN { FS = OFS = "\t" } {
            t = "unmapped"
            if (int($2 / 4) % 2 == 0 && $5 >= q) { t = $3; sub(/__.*/, "", t) }
            print $1, t }' > truth/$ts/$s.tsv.tmp
    [ "$(wc -l < truth/$ts/$s.tsv.tmp)" = "$(awk 'END { print NR / 4 }' sets/$s.fq)" ] \
        || die "truth of $s: minimap2 did not report every read (truth/$ts/$s.log)"
    mv truth/$ts/$s.tsv.tmp truth/$ts/$s.tsv
    echo "${smapq[$s]}" > truth/$ts/$s.mapq
}

# ---------------------------------------------------------------- sbf index (cached)
# the index is rebuilt when the sbf binary or its library changes (a libtool wrapper's too)
sbf_sum=$(for f in "$SBF" "$(dirname "$SBF")"/.libs/sbf "$(dirname "$SBF")"/.libs/lt-sbf \
              "$(dirname "$SBF")"/.libs/libsbf*.so* "$(dirname "$SBF")"/../lib/libsbf*.so*; do
              [ -f "$f" ] && md5sum < "$f"; done; true)
sbf_index() { # TSET: sets idx (the path)
    local ts=$1 t bargs=() key t0
    key=$( { echo "$sbf_version"; echo "$sbf_sum"; echo "$SBF_BUILD_ARGS"; cat targets/$ts/all.names; } | md5sum | cut -c1-12)
    idx=idx/$ts/sbf-$key.sbf
    [ -s $idx ] && return 0
    for t in ${tnames_of[$ts]}; do bargs+=("$t=targets/$ts/$t.fa"); done
    log "sbf build $SBF_BUILD_ARGS (target set $ts: ${tnames_of[$ts]})"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$SBF" build -@ $THREADS $SBF_BUILD_ARGS -o $idx.tmp "${bargs[@]}" 2> idx/$ts/sbf-$key.log \
        || { tail idx/$ts/sbf-$key.log >&2; die "sbf build failed (idx/$ts/sbf-$key.log)"; }
    mv $idx.tmp $idx
    log "sbf build: $(awk -v a=$t0 -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
}

# ---------------------------------------------------------------- BBDuk k=31 and Kraken2 (cached)
# Both run once per target set over all its sets at once (a reference or database is loaded
# once); their results do not change between runs, so they are kept under
# bbduk/<tset>.<key>, kraken2/<tset>.<key>.
allreads() { # every set of the target set in one FASTQ (made once, removed at the end)
    if [ ! -s run/all.fq ]; then
        for s in "${tsets[@]}"; do cat sets/$s.fq; done > run/all.fq.tmp
        mv run/all.fq.tmp run/all.fq
    fi
}
# BBDuk: <bbdir>/<target>.names lists the reads with at least one 31-mer of the target
# (BBDuk defaults otherwise: hdist=0, maskmiddle=t, rcomp=t); one target = that target,
# several = multi, none = none.
bb_cat() { # set -> read<TAB>category on stdout
    awk -v s="$1." 'BEGIN { FS = OFS = "\t" }
        FILENAME ~ /\.names$/ { t = FILENAME; sub(/.*\//, "", t); sub(/\.names$/, "", t)
                                if (index($1, s) == 1) { if ($1 in c) c[$1] = "multi"; else c[$1] = t }; next }
        FNR % 4 == 1 { r = substr($1, 2); print r, (r in c) ? c[r] : "none" }' \
        "$bbdir"/*.names sets/$1.fq
}
run_bbduk() { # TSET (sets bbdir)
    local ts=$1 t
    bbdir=bbduk/$ts.$rkey
    [ -z "$SKIP_BBDUK" ] && [ ! -e $bbdir/done ] || return 0
    mkdir -p $bbdir
    for t in ${tnames_of[$ts]}; do
        [ -e $bbdir/$t.names ] && continue
        allreads
        log "BBDuk k=31 against $t (target set $ts, all sets at once)"
        bbduk.sh -Xmx4g threads=$THREADS in=run/all.fq ref=targets/$ts/$t.fa k=31 interleaved=f qin=33 \
            outm=$bbdir/$t.fq stats=$bbdir/$t.stats > $bbdir/$t.log 2>&1 \
            || { tail $bbdir/$t.log >&2; die "bbduk.sh failed ($bbdir/$t.log)"; }
        awk 'NR % 4 == 1 { print substr($1, 2) }' $bbdir/$t.fq > $bbdir/$t.names.tmp
        mv $bbdir/$t.names.tmp $bbdir/$t.names
        rm -f $bbdir/$t.fq
    done
    touch $bbdir/done
}
# Kraken2 (Debian kraken2, default k=35, confidence 0): a database of the same targets with a
# hand-made taxonomy (root 1; target i = taxid 100+i, a species under the root), so that an
# LCA at the root means 'multi', taxid 0 'none'.
run_kraken2() { # TSET (sets k2dir)
    local ts=$1 t i=100 k2db
    k2db=idx/$ts/kraken2-$(md5sum < targets/$ts/all.names | cut -c1-12)
    k2dir=kraken2/$ts.$rkey
    [ -z "$SKIP_KRAKEN2" ] || return 0
    if [ ! -s $k2db/hash.k2d ]; then
        log "kraken2-build of target set $ts (hand-made taxonomy)"
        rm -rf $k2db.tmp && mkdir -p $k2db.tmp/taxonomy
        printf '1\t|\t1\t|\tno rank\t|\n' > $k2db.tmp/taxonomy/nodes.dmp
        printf '1\t|\troot\t|\t\t|\tscientific name\t|\n' > $k2db.tmp/taxonomy/names.dmp
        for t in ${tnames_of[$ts]}; do
            i=$((i + 1))
            printf '%d\t|\t1\t|\tspecies\t|\n' $i >> $k2db.tmp/taxonomy/nodes.dmp
            printf '%d\t|\t%s\t|\t\t|\tscientific name\t|\n' $i $t >> $k2db.tmp/taxonomy/names.dmp
            awk -v id=$i '/^>/ { print ">" substr($1, 2) "|kraken:taxid|" id; next } { print }' targets/$ts/$t.fa > $k2db.tmp/$t.fa
            kraken2-build --db $k2db.tmp --add-to-library $k2db.tmp/$t.fa > $k2db.tmp/add.log 2>&1 \
                || { tail $k2db.tmp/add.log >&2; die "kraken2-build --add-to-library $t failed"; }
            rm -f $k2db.tmp/$t.fa
        done
        kraken2-build --db $k2db.tmp --build --threads $THREADS > $k2db.tmp/build.log 2>&1 \
            || { tail $k2db.tmp/build.log >&2; die "kraken2-build --build failed ($k2db.tmp/build.log)"; }
        rm -rf $k2db.tmp/library && rm -rf $k2db && mv $k2db.tmp $k2db
    fi
    [ ! -s $k2dir/calls.tsv ] || return 0
    allreads
    log "kraken2 on all sets at once (target set $ts)"
    mkdir -p $k2dir
    kraken2 --db $k2db --threads $THREADS --output $k2dir/out.tsv run/all.fq > $k2dir/log 2>&1 \
        || { tail $k2dir/log >&2; die "kraken2 failed ($k2dir/log)"; }
    awk -v names="${tnames_of[$ts]}" 'BEGIN { FS = OFS = "\t"; n = split(names, t, " "); for (i = 1; i <= n; i++) c[100 + i] = t[i]; c[0] = "none"; c[1] = "multi" }
        { if (!($3 in c)) { print "real.sh: kraken2 taxid " $3 > "/dev/stderr"; exit 1 }; print $2, c[$3] }' $k2dir/out.tsv > $k2dir/calls.tsv.tmp
    mv $k2dir/calls.tsv.tmp $k2dir/calls.tsv
    rm -f $k2dir/out.tsv
}

# ---------------------------------------------------------------- classify and tabulate
hdr="targets\ttool\tset\ttype\trole\treads\tmapped\tagree\tmissed\tmulti\twrong\tunmapped\tunm_assigned\tagree_pct\twrong_pct\tunm_assigned_pct\tsec"
rows=run/rows.tsv
: > $rows
declare -A idx_of=()
# tab TOOL SEC: the row of TOOL's calls for set $s against target set $ts (role $role)
tab() { awk -f "$real/tabulate.awk" -v tool=$1 -v set=$s -v type=${stype[$s]} -v role=$role -v sec=$2 \
            truth/$ts/$s.tsv run/$ts.$s.$1.tsv | sed "s/^/$ts\t/" >> $rows; }
for ts in $TARGET_SETS; do
    prepare_targets $ts
    tsets=()
    for s in "${snames[@]}"; do [ -n "${skip_of[$ts.$s]:-}" ] || tsets+=("$s"); done
    for s in "${tsets[@]}"; do truth_of $ts $s; done
    sbf_index $ts
    idx_of[$ts]=$idx
    rkey=$( { cat targets/$ts/all.names; for s in "${tsets[@]}"; do echo "$s $(wc -c < sets/$s.fq)"; done; } | md5sum | cut -c1-12)
    rm -f run/all.fq
    run_bbduk $ts
    run_kraken2 $ts
    rm -f run/all.fq
    for s in "${tsets[@]}"; do
        role=${role_of[$ts.$s]:-${srole[$s]}}
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$SBF" classify -x $idx $SBF_ARGS -o run/$ts.$s.fq sets/$s.fq 2> run/$ts.$s.log \
            || { tail run/$ts.$s.log >&2; die "sbf classify failed on $s (run/$ts.$s.log)"; }
        sec=$(awk -v a=$t0 -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
        awk 'BEGIN { OFS = "\t" } NR % 4 == 1 {
            c = ""; for (i = 2; i <= NF; i++) if (substr($i, 1, 5) == "sb:Z:") c = substr($i, 6)
            if (c == "") { print "real.sh: no sb:Z: tag on " $0 > "/dev/stderr"; exit 1 }
            print substr($1, 2), c }' run/$ts.$s.fq > run/$ts.$s.sbf.tsv
        tab sbf $sec
        if [ -z "$SKIP_BBDUK" ]; then
            bb_cat $s > run/$ts.$s.bbduk.tsv
            tab bbduk -
        fi
        if [ -z "$SKIP_KRAKEN2" ]; then
            awk -v s="$s." 'index($1, s) == 1' $k2dir/calls.tsv > run/$ts.$s.kraken2.tsv
            tab kraken2 -
        fi
    done
done
# totals of the 'pos' sets, per target set and tool
awk 'BEGIN { FS = OFS = "\t" } $5 == "pos" { k = $1 "\t" $2; n[k] += $6; m[k] += $7; a[k] += $8; mi[k] += $9; mu[k] += $10; w[k] += $11; u[k] += $12; ua[k] += $13; if (!(k in o)) o[k] = ++no }
    END { for (k in o) ord[o[k]] = k
          for (i = 1; i <= no; i++) { k = ord[i]
              print k, "ALL_pos", "-", "pos", n[k], m[k], a[k], mi[k], mu[k], w[k], u[k], ua[k],
                    p(a[k], m[k]), p(w[k], m[k]), p(ua[k], u[k]), "-" } }
    function p(x, y) { return y > 0 ? sprintf("%.2f", 100 * x / y) : "-" }' $rows > run/totals.tsv
{ printf "$hdr\n"; cat $rows run/totals.tsv; } > "$REAL_OUT.tmp"
mv "$REAL_OUT.tmp" "$REAL_OUT"

# ---------------------------------------------------------------- print
low=; for s in "${snames[@]}"; do [ "${smapq[$s]}" = 20 ] || low="$low, $s: ${smapq[$s]}"; done
[ -z "$low" ] || low=" (${low#, })"
for ts in $TARGET_SETS; do
    echo "# target set $ts: index $REAL_DIR/${idx_of[$ts]} ($(du -h ${idx_of[$ts]} | cut -f1)); targets: ${tnames_of[$ts]}"
done
echo "# truth: minimap2 primary, MAPQ >= 20$low, against the same target set"
echo "# agree%, wrong% of mapped; unassigned% = unm_assigned/unmapped. Roles neg and synth: no indexed"
echo "# organism, so every assigned read counts as wrong (wrong% of all reads). Role chimera: every"
echo "# read joins reads of two indexed species; agree = flagged (multi), wrong = one target named."
awk 'BEGIN { FS = "\t" }
    { printf "%-9s %-7s %-16s %-13s %-7s %7s %7s %7s %7s %6s %6s %7s %6s %7s %7s %7s %6s\n",
        $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 }' "$REAL_OUT" \
    | sed '1s/unm_assigned_pct/unassig%/; 1s/unm_assigned/unm_as/; 1s/agree_pct/agree%/; 1s/wrong_pct/wrong%/'
echo "# TSV: $REAL_OUT"
echo "# sets:"
for s in "${snames[@]}"; do echo "#   $s: ${sdesc[$s]}"; done
echo "# total time: $(( $(date +%s) - t_start )) s"
