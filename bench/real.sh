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
#        SKIP_BBDUK=1, SKIP_KRAKEN2=1  leave BBDuk or Kraken2 out
#        THREADS [2]          threads of minimap2, BBDuk, Kraken2 and sbf build (not of classify)
#
# Sets: bench/real/sets.tsv (REAL reads from Debian *-examples packages and from small files
# in bench/real/data/, see bench/real/README.md; one synthetic low-complexity check, labelled).
# Targets: bench/real/targets.tsv (human = chr20 + chrM, E. coli K-12, lambda, DWV, VDV-1...).
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
      qcat-examples wtdbg2-examples seqkit-examples vsearch-examples kraken2)
need=()
for p in "${pkgs[@]}"; do dpkg -s "$p" > /dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    [ "$(id -u)" = 0 ] || die "missing Debian packages (${need[*]}): run as root or install them"
    apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" > apt.log 2>&1 \
        || { tail -20 apt.log >&2; die "apt-get install ${need[*]} failed (apt.log)"; }
fi
for t in minimap2 samtools seqtk bbduk.sh kraken2 kraken2-build; do command -v $t > /dev/null || die "$t not found after install"; done
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

# ---------------------------------------------------------------- targets
# targets/NAME.fa: every contig renamed NAME__<contig>, so that a contig tells its target.
tnames=()
declare -A tsrc=()
while IFS=$'\t' read -r name pkg path; do
    case $name in ''|'#'*) continue ;; esac
    case $path in /*) ;; *) path=$real/data/$path ;; esac
    [ -s "$path" ] || die "target $name: $path missing (package $pkg)"
    [ -n "${tsrc[$name]:-}" ] || tnames+=("$name")
    tsrc[$name]="${tsrc[$name]:-} $path"
done < "$real/targets.tsv"
for t in "${tnames[@]}"; do
    [ -s targets/$t.fa ] && continue
    log "target $t:${tsrc[$t]}"
    for f in ${tsrc[$t]}; do seqtk seq -U "$f"; done | awk -v t=$t '/^>/ { sub(/^>/, ">" t "__") } { print }' > targets/$t.fa.tmp
    mv targets/$t.fa.tmp targets/$t.fa
done
if [ ! -s targets/all.fa ] || [ "$(cat targets/all.names 2>/dev/null)" != "${tnames[*]}" ]; then
    for t in "${tnames[@]}"; do cat targets/$t.fa; done > targets/all.fa.tmp
    mv targets/all.fa.tmp targets/all.fa
    echo "${tnames[*]}" > targets/all.names
    rm -f idx/truth.*.mmi truth/*.tsv
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

# ---------------------------------------------------------------- truth (minimap2)
for s in "${snames[@]}"; do
    [ -s truth/$s.tsv ] && [ "$(cat truth/$s.mapq 2>/dev/null)" = "${smapq[$s]}" ] && continue
    p=${spreset[$s]}
    if [ ! -s idx/truth.$p.mmi ]; then
        log "minimap2 -x $p index of all targets"
        minimap2 -t $THREADS -x $p -d idx/truth.$p.mmi.tmp targets/all.fa 2> idx/truth.$p.log \
            || { tail idx/truth.$p.log >&2; die "minimap2 -d failed"; }
        mv idx/truth.$p.mmi.tmp idx/truth.$p.mmi
    fi
    log "truth of $s (minimap2 -x $p)"
    minimap2 -t $THREADS -a -x $p --secondary=no idx/truth.$p.mmi sets/$s.fq 2> truth/$s.log \
        | samtools view -F 0x900 - \
        | awk -v q=${smapq[$s]} 'BEGIN { FS = OFS = "\t" } {
            t = "unmapped"
            if (int($2 / 4) % 2 == 0 && $5 >= q) { t = $3; sub(/__.*/, "", t) }
            print $1, t }' > truth/$s.tsv.tmp
    [ "$(wc -l < truth/$s.tsv.tmp)" = "$(awk 'END { print NR / 4 }' sets/$s.fq)" ] \
        || die "truth of $s: minimap2 did not report every read (truth/$s.log)"
    mv truth/$s.tsv.tmp truth/$s.tsv
    echo "${smapq[$s]}" > truth/$s.mapq
done

# ---------------------------------------------------------------- sbf index (cached)
# the index is rebuilt when the sbf binary or its library changes (a libtool wrapper's too)
sbf_sum=$(for f in "$SBF" "$(dirname "$SBF")"/.libs/sbf "$(dirname "$SBF")"/.libs/lt-sbf \
              "$(dirname "$SBF")"/.libs/libsbf*.so* "$(dirname "$SBF")"/../lib/libsbf*.so*; do
              [ -f "$f" ] && md5sum < "$f"; done; true)
key=$( { echo "$sbf_version"; echo "$sbf_sum"; echo "$SBF_BUILD_ARGS"; cat targets/all.names; } | md5sum | cut -c1-12)
idx=idx/sbf-$key.sbf
if [ ! -s $idx ]; then
    bargs=()
    while IFS=$'\t' read -r name pkg path; do
        case $name in ''|'#'*) continue ;; esac
        case $path in /*) ;; *) path=$real/data/$path ;; esac
        bargs+=("$name=$path")
    done < "$real/targets.tsv"
    log "sbf build $SBF_BUILD_ARGS (${bargs[*]})"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$SBF" build -@ $THREADS $SBF_BUILD_ARGS -o $idx.tmp "${bargs[@]}" 2> idx/sbf-$key.log \
        || { tail idx/sbf-$key.log >&2; die "sbf build failed (idx/sbf-$key.log)"; }
    mv $idx.tmp $idx
    log "sbf build: $(awk -v a=$t0 -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
fi

# ---------------------------------------------------------------- BBDuk k=31 and Kraken2 (cached)
# Both run once over all sets at once (a reference or database is loaded once); their
# results do not change between runs, so they are kept under bbduk/<key>, kraken2/<key>.
rkey=$( { cat targets/all.names; for s in "${snames[@]}"; do echo "$s $(wc -c < sets/$s.fq)"; done; } | md5sum | cut -c1-12)
allreads() { # every selected set in one FASTQ (made once, removed at the end)
    if [ ! -s run/all.fq ]; then
        for s in "${snames[@]}"; do cat sets/$s.fq; done > run/all.fq.tmp
        mv run/all.fq.tmp run/all.fq
    fi
}
# BBDuk: bbduk/<key>/<target>.names lists the reads with at least one 31-mer of the target
# (BBDuk defaults otherwise: hdist=0, maskmiddle=t, rcomp=t); one target = that target,
# several = multi, none = none.
bb_cat() { # set -> read<TAB>category on stdout
    awk -v s="$1." 'BEGIN { FS = OFS = "\t" }
        FILENAME ~ /\.names$/ { t = FILENAME; sub(/.*\//, "", t); sub(/\.names$/, "", t)
                                if (index($1, s) == 1) { if ($1 in c) c[$1] = "multi"; else c[$1] = t }; next }
        FNR % 4 == 1 { r = substr($1, 2); print r, (r in c) ? c[r] : "none" }' \
        "$bbdir"/*.names sets/$1.fq
}
bbdir=bbduk/$rkey
if [ -z "$SKIP_BBDUK" ] && [ ! -e $bbdir/done ]; then
    mkdir -p $bbdir
    for t in "${tnames[@]}"; do
        [ -e $bbdir/$t.names ] && continue
        allreads
        log "BBDuk k=31 against $t (all sets at once)"
        bbduk.sh -Xmx4g threads=$THREADS in=run/all.fq ref=targets/$t.fa k=31 interleaved=f qin=33 \
            outm=$bbdir/$t.fq stats=$bbdir/$t.stats > $bbdir/$t.log 2>&1 \
            || { tail $bbdir/$t.log >&2; die "bbduk.sh failed ($bbdir/$t.log)"; }
        awk 'NR % 4 == 1 { print substr($1, 2) }' $bbdir/$t.fq > $bbdir/$t.names.tmp
        mv $bbdir/$t.names.tmp $bbdir/$t.names
        rm -f $bbdir/$t.fq
    done
    touch $bbdir/done
fi
# Kraken2 (Debian kraken2, default k=35, confidence 0): a database of the same targets with a
# hand-made taxonomy (root 1; target i = taxid 100+i, a species under the root), so that an
# LCA at the root means 'multi', taxid 0 'none'.
k2db=idx/kraken2-$(md5sum < targets/all.names | cut -c1-12)
k2dir=kraken2/$rkey
if [ -z "$SKIP_KRAKEN2" ] && [ ! -s $k2db/hash.k2d ]; then
    log "kraken2-build of all targets (hand-made taxonomy)"
    rm -rf $k2db.tmp && mkdir -p $k2db.tmp/taxonomy
    printf '1\t|\t1\t|\tno rank\t|\n' > $k2db.tmp/taxonomy/nodes.dmp
    printf '1\t|\troot\t|\t\t|\tscientific name\t|\n' > $k2db.tmp/taxonomy/names.dmp
    i=100
    for t in "${tnames[@]}"; do
        i=$((i + 1))
        printf '%d\t|\t1\t|\tspecies\t|\n' $i >> $k2db.tmp/taxonomy/nodes.dmp
        printf '%d\t|\t%s\t|\t\t|\tscientific name\t|\n' $i $t >> $k2db.tmp/taxonomy/names.dmp
        awk -v id=$i '/^>/ { print ">" substr($1, 2) "|kraken:taxid|" id; next } { print }' targets/$t.fa > $k2db.tmp/$t.fa
        kraken2-build --db $k2db.tmp --add-to-library $k2db.tmp/$t.fa > $k2db.tmp/add.log 2>&1 \
            || { tail $k2db.tmp/add.log >&2; die "kraken2-build --add-to-library $t failed"; }
        rm -f $k2db.tmp/$t.fa
    done
    kraken2-build --db $k2db.tmp --build --threads $THREADS > $k2db.tmp/build.log 2>&1 \
        || { tail $k2db.tmp/build.log >&2; die "kraken2-build --build failed ($k2db.tmp/build.log)"; }
    rm -rf $k2db.tmp/library && rm -rf $k2db && mv $k2db.tmp $k2db
fi
if [ -z "$SKIP_KRAKEN2" ] && [ ! -s $k2dir/calls.tsv ]; then
    allreads
    log "kraken2 on all sets at once"
    mkdir -p $k2dir
    kraken2 --db $k2db --threads $THREADS --output $k2dir/out.tsv run/all.fq > $k2dir/log 2>&1 \
        || { tail $k2dir/log >&2; die "kraken2 failed ($k2dir/log)"; }
    awk -v names="${tnames[*]}" 'BEGIN { FS = OFS = "\t"; n = split(names, t, " "); for (i = 1; i <= n; i++) c[100 + i] = t[i]; c[0] = "none"; c[1] = "multi" }
        { if (!($3 in c)) { print "real.sh: kraken2 taxid " $3 > "/dev/stderr"; exit 1 }; print $2, c[$3] }' $k2dir/out.tsv > $k2dir/calls.tsv.tmp
    mv $k2dir/calls.tsv.tmp $k2dir/calls.tsv
    rm -f $k2dir/out.tsv
fi
rm -f run/all.fq

# ---------------------------------------------------------------- classify and tabulate
hdr="tool\tset\ttype\trole\treads\tmapped\tagree\tmissed\tmulti\twrong\tunmapped\tunm_assigned\tagree_pct\twrong_pct\tunm_assigned_pct\tsec"
rows=run/rows.tsv
: > $rows
for s in "${snames[@]}"; do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$SBF" classify -x $idx $SBF_ARGS -o run/$s.fq sets/$s.fq 2> run/$s.log \
        || { tail run/$s.log >&2; die "sbf classify failed on $s (run/$s.log)"; }
    sec=$(awk -v a=$t0 -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    awk 'BEGIN { OFS = "\t" } NR % 4 == 1 {
        c = ""; for (i = 2; i <= NF; i++) if (substr($i, 1, 5) == "sb:Z:") c = substr($i, 6)
        if (c == "") { print "real.sh: no sb:Z: tag on " $0 > "/dev/stderr"; exit 1 }
        print substr($1, 2), c }' run/$s.fq > run/$s.sbf.tsv
    awk -f "$real/tabulate.awk" -v tool=sbf -v set=$s -v type=${stype[$s]} -v role=${srole[$s]} -v sec=$sec \
        truth/$s.tsv run/$s.sbf.tsv >> $rows
    if [ -z "$SKIP_BBDUK" ]; then
        bb_cat $s > run/$s.bbduk.tsv
        awk -f "$real/tabulate.awk" -v tool=bbduk -v set=$s -v type=${stype[$s]} -v role=${srole[$s]} -v sec=- \
            truth/$s.tsv run/$s.bbduk.tsv >> $rows
    fi
    if [ -z "$SKIP_KRAKEN2" ]; then
        awk -v s="$s." 'index($1, s) == 1' $k2dir/calls.tsv > run/$s.kraken2.tsv
        awk -f "$real/tabulate.awk" -v tool=kraken2 -v set=$s -v type=${stype[$s]} -v role=${srole[$s]} -v sec=- \
            truth/$s.tsv run/$s.kraken2.tsv >> $rows
    fi
done
# totals of the 'pos' sets, per tool
awk 'BEGIN { FS = OFS = "\t" } $4 == "pos" { k = $1; n[k] += $5; m[k] += $6; a[k] += $7; mi[k] += $8; mu[k] += $9; w[k] += $10; u[k] += $11; ua[k] += $12; if (!(k in o)) o[k] = ++no }
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
echo "# index: $REAL_DIR/$idx ($(du -h $idx | cut -f1)); targets: ${tnames[*]}; truth: minimap2 primary, MAPQ >= 20$low"
echo "# agree%, wrong% of mapped; unassigned% = unm_assigned/unmapped. Roles neg and synth: no indexed"
echo "# organism, so every assigned read counts as wrong (wrong% of all reads)."
awk 'BEGIN { FS = "\t" }
    { printf "%-7s %-16s %-13s %-5s %7s %7s %7s %7s %6s %6s %7s %6s %7s %7s %7s %6s\n",
        $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 }' "$REAL_OUT" \
    | sed '1s/unm_assigned_pct/unassig%/; 1s/unm_assigned/unm_as/; 1s/agree_pct/agree%/; 1s/wrong_pct/wrong%/'
echo "# TSV: $REAL_OUT"
echo "# sets:"
for s in "${snames[@]}"; do echo "#   $s: ${sdesc[$s]}"; done
echo "# total time: $(( $(date +%s) - t_start )) s"
