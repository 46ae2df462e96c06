#!/usr/bin/env bash
# bench/accuracy.sh -- accuracy and speed of read screening, sbf against BBDuk, on 2x150 pairs
# simulated with wgsim (0.2% errors) from real genomes of Debian packages.
#
# Usage: bench/accuracy.sh [WORKDIR]     (from the repository root, after building ./sbf)
# Env:   HOST_PAIRS [500000]  OTHER_PAIRS per non-host genome [100000]  THREADS [2]  RUNS [3]
#        SKIP_BBDUK=1 to leave BBDuk out. Packages: vt-examples ragout-examples bowtie2-examples
#        kleborate-examples kmer-examples samtools bbmap (installed with apt-get if missing).
#
# Host: human chr20. Others: E. coli MG1655, S. aureus N315, K. pneumoniae HS11286,
# M. tuberculosis H37Rv, phage lambda. One index holds all six (k=31, defaults).
# Prints: a sweep of the scoring parameters (host pairs removed, non-host pairs removed,
# correct best target among non-host pairs), then the timed runs (median wall seconds, reads/s,
# peak RSS) of `sbf filter --remove human` and of BBDuk with the same k and threads, then the
# RSS check on a 10x larger input. Results go to doc/ACCURACY.md by hand.
set -euo pipefail
SBF=${SBF:-$PWD/sbf}
work=${1:-${TMPDIR:-/tmp}/sbf-accuracy}
HOST_PAIRS=${HOST_PAIRS:-500000}
OTHER_PAIRS=${OTHER_PAIRS:-100000}
THREADS=${THREADS:-2}
RUNS=${RUNS:-3}
mkdir -p "$work/genomes"
cd "$work"

need=()
for p in vt-examples ragout-examples bowtie2-examples kleborate-examples kmer-examples samtools bbmap; do
    dpkg -s "$p" > /dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

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
    [ -s genomes/$g.fa ] || ${src[$g]} > genomes/$g.fa
done

# ---- reads: names carry the truth (SPECIES_N) ----
if [ ! -s all_1.fq ]; then
    : > all_1.fq
    : > all_2.fq
    seed=11
    for g in "${names[@]}"; do
        n=$OTHER_PAIRS
        [ $g = human ] && n=$HOST_PAIRS
        wgsim -N "$n" -1 150 -2 150 -e 0.002 -r 0.001 -S $((seed++)) genomes/$g.fa r1.fq r2.fq > /dev/null 2>&1
        for m in 1 2; do
            awk -v g=$g -v m=$m 'NR % 4 == 1 { printf "@%s_%d/%d\n", g, (NR + 3) / 4, m; next } { print }' r$m.fq >> all_$m.fq
        done
    done
    rm -f r1.fq r2.fq
fi
total=$(($(wc -l < all_1.fq) / 4))
echo "# $total pairs: $HOST_PAIRS human, $OTHER_PAIRS from each of ${names[*]:1}"

targets=()
for g in "${names[@]}"; do targets+=("$g=genomes/$g.fa"); done
[ -s idx.sbf ] || "$SBF" build -@ "$THREADS" -o idx.sbf "${targets[@]}" 2> build.log
echo "# index: $(ls -l idx.sbf | awk '{ printf "%.1f MiB", $5 / 1048576 }')"

# ---- the scoring sweep, from per-pair hit counts ----
"$SBF" query -x idx.sbf -@ "$THREADS" all_1.fq all_2.fq > hits.tsv
echo
echo "## Scoring sweep (non-host: ${names[*]:1})"
echo
echo "| min score | margin | host pairs removed | non-host pairs removed | correct best target (non-host) | multi | none |"
echo "|---|---|---|---|---|---|---|"
for s in 0.1 0.25 0.35 0.5 0.65; do
    for mg in 0 0.02 0.05; do
        awk -v s=$s -v mg=$mg -v minhits=3 'NR == 1 { for (i = 3; i <= NF; ++i) t[i] = $i; nt = NF; next }
        {
            split($1, a, "_"); truth = a[1]; n = $2; best = 3
            for (i = 4; i <= nt; ++i) if ($i > $best) best = i
            cat = "none"
            if (n > 0 && $best >= minhits && $best >= s * n) {
                tied = 0
                for (i = 3; i <= nt; ++i) if ($i >= minhits && $i >= s * n && $i >= $best - mg * n) { tied++; hit[i] = 1 } else hit[i] = 0
                cat = tied > 1 ? "multi" : t[best]
            }
            removed = cat == "human" || (cat == "multi" && hit[3])
            if (truth == "human") { host++; host_rm += removed }
            else { other++; other_rm += removed; correct += cat == truth; multi += cat == "multi"; none += cat == "none" }
        }
        END { printf "| %s | %s | %.4f%% | %.5f%% | %.3f%% | %.3f%% | %.3f%% |\n", s, mg, 100 * host_rm / host,
              100 * other_rm / other, 100 * correct / other, 100 * multi / other, 100 * none / other }' hits.tsv
    done
done

# ---- timed runs ----
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# run_timed LABEL CMD...: RUNS runs; prints median wall seconds and max RSS (MiB)
run_timed() {
    local label=$1
    shift
    local walls=() rss=0
    for ((i = 0; i < RUNS; ++i)); do
        /usr/bin/time -f "%e %M" -o time.txt "$@" > /dev/null 2> run.log || { cat run.log; exit 1; }
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
run_timed "sbf filter --remove human (CPU engine)" "$SBF" filter -x idx.sbf --remove human --gpu none -@ "$THREADS" \
    -1 sbf_1.fq -2 sbf_2.fq all_1.fq all_2.fq
kept=$(($(wc -l < sbf_1.fq) / 4))
# the same reference as BBDuk's: an index of the host alone
[ -s host.sbf ] || "$SBF" build -@ "$THREADS" -o host.sbf human=genomes/human.fa 2> build.log
run_timed "sbf filter, host-only index (CPU engine)" "$SBF" filter -x host.sbf --gpu none -@ "$THREADS" \
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
    echo "BBDuk: host pairs removed $(echo "100 * $bb_host_rm / $HOST_PAIRS" | bc -l | cut -c1-8)%," \
        "non-host pairs removed $bb_other_rm of $((total - HOST_PAIRS)); wall-time ratio BBDuk/sbf (host-only" \
        "index): $(echo "$bb_wall / $sbf_wall" | bc -l | cut -c1-5)x"
fi
sbf_host_left=$(awk 'NR % 4 == 1 && /^@human_/' sbf_1.fq | wc -l)
echo "sbf: host pairs left $sbf_host_left of $HOST_PAIRS; non-host pairs kept $((kept - sbf_host_left)) of $((total - HOST_PAIRS))"

# ---- memory does not grow with the input ----
for ((i = 0; i < 10; ++i)); do cat all_1.fq; done > big_1.fq
for ((i = 0; i < 10; ++i)); do cat all_2.fq; done > big_2.fq
echo
echo "## Peak RSS, 1x and 10x input (index $(du -m idx.sbf | cut -f1) MiB)"
echo
echo "| input | wall s | reads/s | peak RSS MiB |"
echo "|---|---|---|---|"
RUNS=1 run_timed "1x ($total pairs)" "$SBF" filter -x idx.sbf --remove human --gpu none -@ "$THREADS" -1 o1.fq -2 o2.fq all_1.fq all_2.fq
total=$((10 * total)) RUNS=1 run_timed "10x ($((10 * total)) pairs)" "$SBF" filter -x idx.sbf --remove human --gpu none -@ "$THREADS" -1 o1.fq -2 o2.fq big_1.fq big_2.fq
rm -f big_1.fq big_2.fq o1.fq o2.fq
