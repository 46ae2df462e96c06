#!/usr/bin/env bash
# bench/accuracy.sh -- accuracy and speed of read screening, sbf against BBDuk, on 2x150 pairs
# simulated with wgsim (0.2% errors) from real genomes of Debian packages.
#
# Usage: bench/accuracy.sh [WORKDIR]     (from the repository root, after building ./sbf)
# Env:   HOST_PAIRS [100000]  OTHER_PAIRS per non-host genome [20000]  THREADS [2]  RUNS [3]
#        SBF [./sbf]  SBF_ARGS [empty]: extra scoring options for every sbf classify/filter run.
#        SWEEP ['' = the defaults only]: option sets separated by '|', e.g.
#          SWEEP='|-s 0.1|-s 0.5 --margin 0|--min-hits 5'; each set (after SBF_ARGS) is one real
#          `sbf classify` + `sbf filter` run and one row; options are passed through as they are
#          (split on blanks, no quoting).
#        SKIP_BBDUK=1 to leave BBDuk out. Packages: vt-examples ragout-examples bowtie2-examples
#        kleborate-examples kmer-examples samtools (wgsim) bbmap time bc (apt-get if missing).
# The defaults (200,000 pairs) take about 70 s on the 2-core development VM from an empty
# WORKDIR (reads, index and BBDuk included); the figures in doc/ACCURACY.md were taken with
# HOST_PAIRS=500000 OTHER_PAIRS=100000. Reads and indexes are kept in WORKDIR and remade when
# HOST_PAIRS/OTHER_PAIRS or `sbf --version` change.
#
# Host: human chr20. Others: E. coli MG1655, S. aureus N315, K. pneumoniae HS11286,
# M. tuberculosis H37Rv, phage lambda. One index holds all six (k=31, defaults).
#
# Where the figures come from: only from what the sbf binary under test writes; the script has
# no copy of the scoring rule. Each option set is run as
#   sbf classify -x idx.sbf -@ THREADS SBF_ARGS SET -O fastq -o tagged.fq all_1.fq all_2.fq
#   sbf filter   -x idx.sbf -@ THREADS SBF_ARGS SET --remove human -O fastq -1 kept_1.fq -2 kept_2.fq all_1.fq all_2.fq
# and the true source of every pair is its read name (@<genome>_<n>/<mate>, set below).
# - host / non-host pairs removed: the pairs that `sbf filter --remove human` did not write
#   (that is the real host removal: category human, or multi with human among the tied targets);
# - correct best target (non-host), multi, none, wrong: the sb:Z: category that `sbf classify`
#   wrote on each pair, against the pair's source genome; per genome in the headline table.
# The run fails when a sbf run fails, when the two mates of a pair differ in category, when a
# count does not add up to the number of pairs, or when filter and classify disagree (a pair
# classified human but written, or classified as another single target or none but removed),
# or when the timed `sbf filter --gpu none` keeps a different number of pairs than the
# accuracy run (default engine) with the same SBF_ARGS.
# Prints: the headline figures and per-genome counts (SBF_ARGS), the sweep (one row per SWEEP
# set), then the timed runs (median wall seconds, reads/s, peak RSS) of `sbf filter --remove
# human` (with SBF_ARGS) and of BBDuk with the same k and threads, then the RSS check on a 10x
# larger input. Results go to doc/ACCURACY.md by hand.
set -euo pipefail
SBF=${SBF:-$PWD/sbf}
work=${1:-${TMPDIR:-/tmp}/sbf-accuracy}
HOST_PAIRS=${HOST_PAIRS:-100000}
OTHER_PAIRS=${OTHER_PAIRS:-20000}
THREADS=${THREADS:-2}
RUNS=${RUNS:-3}
SBF_ARGS=${SBF_ARGS:-}
SWEEP=${SWEEP:-}
host=human

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "accuracy.sh: error: $*" >&2; exit 1; }
log() { echo "[accuracy.sh $(date +%T)] $*" >&2; }
# run_sbf LOG CMD...: runs CMD with stderr to LOG; on a non-zero exit status shows LOG and stops
run_sbf() {
    local log=$1
    shift
    "$@" 2> "$log" || { local rc=$?; cat "$log" >&2; die "exit status $rc: $*"; }
}

[ -x "$SBF" ] || die "no sbf binary at $SBF (set SBF=)"
mkdir -p "$work/genomes"
cd "$work"

. "$here/need-packages.sh"
need_packages vt-examples ragout-examples bowtie2-examples kleborate-examples kmer-examples samtools bbmap time bc

# ---- genomes ----
doc=/usr/share/doc
declare -A src=(
    [human]="zcat $doc/vt/examples/ref/20.fa.gz"
    [ecoli]="zcat $doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz"
    [saureus]="zcat $doc/ragout/examples/S.Aureus/references/N315.fasta.gz"
    [kpneumoniae]="xzcat $doc/kleborate/examples/data/Klebs_HS11286.fna.xz"
    [mtuberculosis]="tar xzOf $doc/kmer-examples/test_data.tar.gz GCF_000195955.2_ASM19595v2_genomic.fna"
    [lambda]="zcat $doc/bowtie2/examples/reference/lambda_virus.fa.gz"
)
names=(human ecoli saureus kpneumoniae mtuberculosis lambda)
for g in "${names[@]}"; do
    if [ ! -s "genomes/$g.fa" ]; then
        ${src[$g]} > "genomes/$g.fa.tmp" || die "cannot extract the $g genome: ${src[$g]}"
        mv "genomes/$g.fa.tmp" "genomes/$g.fa"
    fi
done

# ---- reads: names carry the truth (GENOME_N); regenerated when the sizes change ----
if [ ! -s all_1.fq ] || [ "$(cat reads.params 2> /dev/null)" != "$HOST_PAIRS $OTHER_PAIRS" ]; then
    rm -f reads.params all_1.fq all_2.fq
    : > all_1.fq.tmp
    : > all_2.fq.tmp
    seed=11
    for g in "${names[@]}"; do
        n=$OTHER_PAIRS
        [ "$g" = "$host" ] && n=$HOST_PAIRS
        wgsim -N "$n" -1 150 -2 150 -e 0.002 -r 0.001 -S $((seed++)) genomes/$g.fa r1.fq r2.fq > /dev/null 2> wgsim.log \
            || { cat wgsim.log >&2; die "wgsim failed on $g"; }
        for m in 1 2; do
            awk -v g=$g -v m=$m 'NR % 4 == 1 { printf "@%s_%d/%d\n", g, (NR + 3) / 4, m; next } { print }' r$m.fq >> all_$m.fq.tmp
        done
    done
    rm -f r1.fq r2.fq
    mv all_1.fq.tmp all_1.fq
    mv all_2.fq.tmp all_2.fq
    echo "$HOST_PAIRS $OTHER_PAIRS" > reads.params
fi
# the pairs of each genome, counted in the reads (wgsim splits -N over the contigs of a genome and
# may write a pair or two less than asked, e.g. for the seven replicons of K. pneumoniae)
total=$(($(wc -l < all_1.fq) / 4))
[ "$(($(wc -l < all_2.fq) / 4))" -eq "$total" ] || die "all_1.fq and all_2.fq differ in length (remove $work/reads.params)"
declare -A expect=()
while read -r g n; do expect[$g]=$n; done < <(awk 'NR % 4 == 1 { sub(/^@/, ""); sub(/_[0-9]+\/1$/, ""); c[$0]++ }
    END { for (g in c) print g, c[g] }' all_1.fq)
sum=0
for g in "${names[@]}"; do
    [ "${expect[$g]:-0}" -gt 0 ] || die "no pairs of $g in all_1.fq (remove $work/reads.params)"
    sum=$((sum + expect[$g]))
done
[ "$sum" -eq "$total" ] || die "all_1.fq holds reads of unknown sources (remove $work/reads.params)"
host_pairs=${expect[$host]}
version=$("$SBF" --version 2>&1 | head -n 1) || die "$SBF --version failed"
echo "# $version ($SBF)"
echo "# $total pairs: $(for g in "${names[@]}"; do printf '%s%s %s' "${sep:-}" "${expect[$g]}" "$g"; sep=', '; done)"

# the indexes are rebuilt when the sbf version changes
if [ "$(cat index.params 2> /dev/null)" != "$version" ]; then
    rm -f idx.sbf host.sbf index.params
fi
targets=()
for g in "${names[@]}"; do targets+=("$g=genomes/$g.fa"); done
if [ ! -s idx.sbf ]; then
    run_sbf build.log "$SBF" build -@ "$THREADS" -o idx.sbf.tmp "${targets[@]}"
    mv idx.sbf.tmp idx.sbf
fi
echo "$version" > index.params
echo "# index: $(ls -l idx.sbf | awk '{ printf "%.1f MiB", $5 / 1048576 }')"

# ---- accuracy: real sbf classify and sbf filter runs ----
# measure OPTIONS: runs classify and filter with OPTIONS (a string, split on blanks) and leaves
# in runs/N/counts.tsv the counts computed from their outputs; sets rundir=runs/N. A repeated
# option string reuses its run.
rundir=
declare -A run_of=()
nruns=0
rm -rf runs
measure() {
    local opts=()
    read -r -a opts <<< "$1"
    local key="${opts[*]}"
    if [ -n "${run_of["k $key"]+x}" ]; then
        rundir=${run_of["k $key"]}
        return
    fi
    local d=runs/$((nruns++))
    rm -rf "$d"
    mkdir -p "$d"
    printf '%s\n' "$key" > "$d/options"
    run_sbf "$d/classify.log" "$SBF" classify -x idx.sbf -@ "$THREADS" "${opts[@]}" -O fastq -o "$d/tagged.fq" all_1.fq all_2.fq
    run_sbf "$d/filter.log" "$SBF" filter -x idx.sbf -@ "$THREADS" "${opts[@]}" --remove "$host" -O fastq \
        -1 "$d/kept_1.fq" -2 "$d/kept_2.fq" all_1.fq all_2.fq
    [ "$(wc -l < "$d/kept_1.fq")" -eq "$(wc -l < "$d/kept_2.fq")" ] \
        || die "options '$key': sbf filter wrote $(wc -l < "$d/kept_1.fq") lines of mate 1 and $(wc -l < "$d/kept_2.fq") of mate 2"
    # counts.tsv: one row per genome: genome pairs correct multi none wrong removed; then
    # 'confusion <truth> <category> <pairs>' for the wrong calls
    awk -v genomes="${names[*]}" -v expect="$(for g in "${names[@]}"; do printf '%s ' "${expect[$g]}"; done)" \
        -v host="$host" -v total="$total" -v opts="$key" '
        function fail(msg) { printf "accuracy.sh: error: options \x27%s\x27: %s\n", opts, msg > "/dev/stderr"; bad = 1; exit 1 }
        # the base name (without /1 /2) and the source genome of a FASTQ header line
        function parse(line,   f, nm) {
            split(line, f, "\t")
            nm = f[1]
            if (nm !~ /^@[a-z]+_[0-9]+(\/[12])?$/) fail("unexpected read name: " line)
            sub(/^@/, "", nm); sub(/\/[12]$/, "", nm)
            pname = nm
            sub(/_[0-9]+$/, "", nm)
            if (!(nm in want)) fail("read of an unknown genome: " line)
            ptruth = nm
        }
        BEGIN {
            ng = split(genomes, gl, " "); split(expect, el, " ")
            for (i = 1; i <= ng; ++i) { want[gl[i]] = el[i]; target[gl[i]] = 1 }
        }
        # kept_1.fq: the pairs that sbf filter wrote
        FILENAME == ARGV[1] {
            if (FNR % 4 == 1) {
                parse($0)
                if (pname in kept) fail("sbf filter wrote " pname " twice")
                kept[pname] = 1; nkept++
            }
            next
        }
        # tagged.fq: both mates of each pair, one after the other
        FNR % 4 == 3 && !/^\+/ { fail("not FASTQ at record " (FNR + 1) / 4 " of tagged.fq: " $0) }
        FNR % 4 != 1 { next }
        {
            parse($0)
            cat = ""
            nf = split($0, f, "\t")
            for (i = 2; i <= nf; ++i) if (f[i] ~ /^sb:Z:/) { cat = substr(f[i], 6); break }
            if (cat == "") fail("no sb:Z: tag: " $0)
            if (cat != "multi" && cat != "none" && !(cat in target)) fail("unknown category " cat ": " $0)
            rec++
            if (rec % 2 == 1) { first = pname; firstcat = cat; next }
            if (pname != first) fail("mates out of step in tagged.fq: " first " then " pname)
            if (cat != firstcat) fail("the mates of " pname " have categories " firstcat " and " cat)
            if (pname in seen) fail("pair " pname " written twice by sbf classify")
            seen[pname] = 1
            pairs++; n[ptruth]++
            removed = !(pname in kept)
            if (removed) { rm[ptruth]++; nremoved++ }
            if (cat == host && !removed) fail("pair " pname " is classified " host " but sbf filter --remove " host " wrote it")
            if (cat != host && cat != "multi" && removed) fail("pair " pname " is classified " cat " but sbf filter --remove " host " removed it")
            if (cat == ptruth) correct[ptruth]++
            else if (cat == "multi") multi[ptruth]++
            else if (cat == "none") none[ptruth]++
            else { wrong[ptruth]++; conf[ptruth " " cat]++ }
        }
        END {
            if (bad) exit 1
            if (rec % 2) fail("tagged.fq ends in the middle of a pair")
            if (pairs != total) fail("sbf classify wrote " pairs " pairs, expected " total)
            if (nkept + nremoved != total) fail("sbf filter wrote pairs that classify did not see (" nkept " written + " nremoved " removed != " total ")")
            for (i = 1; i <= ng; ++i) {
                g = gl[i]
                if (n[g] != want[g]) fail(g ": " n[g] + 0 " pairs in the output, expected " want[g])
                if (correct[g] + multi[g] + none[g] + wrong[g] != want[g]) fail(g ": correct + multi + none + wrong != " want[g])
                printf "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", g, n[g], correct[g], multi[g], none[g], wrong[g], rm[g]
            }
            for (c in conf) { split(c, p, " "); printf "confusion\t%s\t%s\t%d\n", p[1], p[2], conf[c] }
        }' "$d/kept_1.fq" "$d/tagged.fq" > "$d/counts.tsv" || die "options '$key': the check of the outputs in $d failed"
    rm -f "$d/tagged.fq" "$d/kept_1.fq" "$d/kept_2.fq"
    run_of["k $key"]=$d
    rundir=$d
}
# row COUNTS.TSV: the host/non-host figures: host_pairs host_removed other_pairs other_removed
# correct multi none wrong (non-host), checked against the pair totals
sums() {
    awk -v host="$host" -v total="$total" -F '\t' '$1 == "confusion" { next }
        $1 == host { hn += $2; hr += $7; next }
        { on += $2; orm += $7; c += $3; m += $4; no += $5; w += $6 }
        END {
            if (hn + on != total || c + m + no + w != on) { print "accuracy.sh: error: counts do not add up in " FILENAME > "/dev/stderr"; exit 1 }
            print hn, hr, on, orm, c, m, no, w
        }' "$1"
}
pct() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { printf "%.*f%%", p, b ? 100 * a / b : 0 }'; }

label=${SBF_ARGS:-(defaults)}
measure "$SBF_ARGS"
d=$rundir
headline_kept=$(awk -F '\t' '$1 != "confusion" { k += $2 - $7 } END { print k }' "$d/counts.tsv")
read -r hn hr on orm c m no w < <(sums "$d/counts.tsv") || die "no figures from $d"
echo
echo "## Headline: sbf classify / sbf filter --remove $host, options: $label"
echo
echo "| figure | measured |"
echo "|---|---|"
echo "| host pairs removed (sbf filter) | $(pct "$hr" "$hn" 4) ($hr of $hn) |"
echo "| non-host pairs removed (sbf filter) | $(pct "$orm" "$on" 5) ($orm of $on) |"
echo "| correct best target, non-host (sbf classify) | $(pct "$c" "$on" 3) ($c of $on) |"
echo "| multi, non-host | $(pct "$m" "$on" 3) ($m) |"
echo "| none, non-host | $(pct "$no" "$on" 3) ($no) |"
echo "| wrong single target, non-host | $(pct "$w" "$on" 3) ($w) |"
echo
echo "Per genome (category of each pair from sbf classify; removed: pairs sbf filter --remove $host did not write):"
echo
echo "| genome | pairs | correct | multi | none | wrong | removed |"
echo "|---|---|---|---|---|---|---|"
awk -F '\t' '$1 != "confusion" { printf "| %s | %d | %d | %d | %d | %d | %d |\n", $1, $2, $3, $4, $5, $6, $7 }' "$d/counts.tsv"
if grep -q '^confusion' "$d/counts.tsv"; then
    echo
    echo "Wrong calls (source -> category: pairs): $(awk -F '\t' '$1 == "confusion" { printf "%s%s -> %s: %d", sep, $2, $3, $4; sep = ", " }' "$d/counts.tsv")"
fi

# ---- the sweep: one real run per option set ----
sets=()
IFS='|' read -r -a sets <<< "$SWEEP"
[ ${#sets[@]} -gt 0 ] || sets=("")
echo
echo "## Sweep (SBF_ARGS: ${SBF_ARGS:-none}; non-host: ${names[*]:1})"
echo
echo "| options | host pairs removed | non-host pairs removed | correct best target (non-host) | multi | none | wrong |"
echo "|---|---|---|---|---|---|---|"
for set in "${sets[@]}"; do
    words=()
    read -r -a words <<< "$set"
    rowlabel=${words[*]}
    measure "$SBF_ARGS $set"
    d=$rundir
    read -r hn hr on orm c m no w < <(sums "$d/counts.tsv") || die "no figures from $d"
    [ -n "$rowlabel" ] || { rowlabel="(defaults)"; [ -z "$SBF_ARGS" ] || rowlabel="(SBF_ARGS only)"; }
    echo "| $rowlabel | $(pct "$hr" "$hn" 4) | $(pct "$orm" "$on" 5) | $(pct "$c" "$on" 3) |" \
        "$(pct "$m" "$on" 3) | $(pct "$no" "$on" 3) | $(pct "$w" "$on" 3) |"
done

# ---- timed runs ----
read -r -a base_args <<< "$SBF_ARGS"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# run_timed LABEL CMD...: RUNS runs; prints median wall seconds and max RSS (MiB)
run_timed() {
    local label=$1
    shift
    local walls=() rss=0
    for ((i = 0; i < RUNS; ++i)); do
        /usr/bin/time -f "%e %M" -o time.txt "$@" > /dev/null 2> run.log || { cat run.log >&2; die "exit status of: $*"; }
        walls+=("$(cut -d' ' -f1 time.txt)")
        r=$(cut -d' ' -f2 time.txt)
        [ "$r" -gt "$rss" ] && rss=$r
    done
    local med
    med=$(printf '%s\n' "${walls[@]}" | median)
    printf '| %s | %s | %.0f | %.0f |\n' "$label" "$med" "$(echo "$total * 2 / $med" | bc -l)" "$((rss / 1024))"
    echo "$med" > "last_wall"
}
echo
echo "## Speed ($total pairs = $((2 * total)) reads, $THREADS threads, median of $RUNS runs; /usr/bin/time)"
echo
echo "| tool | wall s | reads/s | peak RSS MiB |"
echo "|---|---|---|---|"
run_timed "sbf filter --remove human (CPU engine)" "$SBF" filter -x idx.sbf "${base_args[@]}" --remove human --gpu none -@ "$THREADS" \
    -1 sbf_1.fq -2 sbf_2.fq all_1.fq all_2.fq
kept=$(($(wc -l < sbf_1.fq) / 4))
# the same reference as BBDuk's: an index of the host alone
if [ ! -s host.sbf ]; then
    run_sbf build.log "$SBF" build -@ "$THREADS" -o host.sbf.tmp human=genomes/human.fa
    mv host.sbf.tmp host.sbf
fi
run_timed "sbf filter, host-only index (CPU engine)" "$SBF" filter -x host.sbf "${base_args[@]}" --gpu none -@ "$THREADS" \
    -1 host_1.fq -2 host_2.fq all_1.fq all_2.fq
sbf_wall=$(cat last_wall)
if [ "${SKIP_BBDUK:-0}" != 1 ]; then
    # BBDuk: k=31 like sbf, host = chr20, a pair is removed when either mate has a k-mer of it.
    mem=$(awk '/MemTotal/ { printf "%dm", $2 / 1024 * 0.6 }' /proc/meminfo)
    run_timed "BBDuk k=31 ref=chr20" bbduk.sh -Xmx$mem in1=all_1.fq in2=all_2.fq out1=bb_1.fq out2=bb_2.fq \
        outm1=bbm_1.fq outm2=bbm_2.fq ref=genomes/human.fa k=31 threads="$THREADS" overwrite=t
    bb_wall=$(cat last_wall)
    grep -E "^(Time|Processing time|Reads Processed|Contaminants)" run.log | sed 's/^/# bbduk: /'
    bb_host_rm=$(awk 'NR % 4 == 1 && /^@human_/' bbm_1.fq | wc -l)
    bb_other_rm=$(awk 'NR % 4 == 1 && !/^@human_/' bbm_1.fq | wc -l)
    echo
    echo "BBDuk: host pairs removed $(echo "100 * $bb_host_rm / $host_pairs" | bc -l | cut -c1-8)%," \
        "non-host pairs removed $bb_other_rm of $((total - host_pairs)); wall-time ratio BBDuk/sbf (host-only" \
        "index): $(echo "$bb_wall / $sbf_wall" | bc -l | cut -c1-5)x"
fi
sbf_host_left=$(awk 'NR % 4 == 1 && /^@human_/' sbf_1.fq | wc -l)
echo "sbf: host pairs left $sbf_host_left of $host_pairs; non-host pairs kept $((kept - sbf_host_left)) of $((total - host_pairs))"
# the timed run (CPU engine) must write what the accuracy run (default engine) wrote
[ "$kept" -eq "$headline_kept" ] \
    || die "the timed sbf filter (--gpu none) wrote $kept pairs, the accuracy run $headline_kept"

# ---- memory does not grow with the input ----
for ((i = 0; i < 10; ++i)); do cat all_1.fq; done > big_1.fq
for ((i = 0; i < 10; ++i)); do cat all_2.fq; done > big_2.fq
echo
echo "## Peak RSS, 1x and 10x input (index $(du -m idx.sbf | cut -f1) MiB)"
echo
echo "| input | wall s | reads/s | peak RSS MiB |"
echo "|---|---|---|---|"
RUNS=1 run_timed "1x ($total pairs)" "$SBF" filter -x idx.sbf "${base_args[@]}" --remove human --gpu none -@ "$THREADS" -1 o1.fq -2 o2.fq all_1.fq all_2.fq
total=$((10 * total)) RUNS=1 run_timed "10x ($((10 * total)) pairs)" "$SBF" filter -x idx.sbf "${base_args[@]}" --remove human --gpu none -@ "$THREADS" -1 o1.fq -2 o2.fq big_1.fq big_2.fq
rm -f big_1.fq big_2.fq o1.fq o2.fq
