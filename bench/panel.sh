#!/usr/bin/env bash
# bench/panel.sh -- a real bacterial panel in format 3's wide panels (doc/format.md "Panels"):
# 21 genomes of 5 species from Debian packages (ragout-examples: E. coli 2, H. pylori 5,
# S. aureus 5, V. cholerae 4; kleborate-examples: K. pneumoniae 4; bowtie-examples: E. coli 536),
# 1.6 to 5.7 Mbp. Builds one index with sbf build and prints, per target, its panel, its bits
# per k-mer against the 16 asked for, its predicted and measured false-positive rate (random
# 150 bp reads, every k-mer valid: the fraction of k-mers that test present) and how its own
# reads (wgsim, 2 x 10,000 pairs each, 0.2% errors) are classified against the whole panel.
#   bash bench/panel.sh [WORK_DIR]        (THREADS=8 by default, READS=1000000 random reads)
# Last, the speed of the panel index against one index per genome (the same targets as plain
# filters), on the CPU engine and, where sbf sees GPU 0, on the GPU (issue 27 d6).
set -euo pipefail
cd "$(dirname "$0")/.."
sbf=$PWD/sbf
threads=${THREADS:-8}
n_random=${READS:-1000000}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
doc=${DOC:-/usr/share/doc}   # DOC: where the packages' files lie (a copy of the same tree, on the GPU machine)
genomes=(
  ecoli_MG1655=$doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz
  ecoli_DH1=$doc/ragout/examples/E.Coli/references/DH1.fasta.gz
  ecoli_536=$doc/bowtie/examples/genomes/NC_008253.fna.gz
)
for f in $doc/ragout/examples/{H.Pylori,S.Aureus,V.Cholerae}/references/*.fasta.gz; do
  sp=$(basename "$(dirname "$(dirname "$f")")" | tr 'A-Z.' 'a-z_')
  genomes+=("${sp}_$(basename "$f" .fasta.gz)=$f")
done
for f in $doc/kleborate/examples/data/*.fna.xz; do
  [ -s "$work/$(basename "$f" .xz)" ] || xz -dc "$f" > "$work/$(basename "$f" .xz)"
  genomes+=("kpneumoniae_$(basename "$f" .fna.xz)=$work/$(basename "$f" .xz)")
done
for g in "${genomes[@]}"; do
  [ -r "${g#*=}" ] || { echo "panel.sh: ${g#*=} missing: apt-get install ragout-examples kleborate-examples bowtie-examples" >&2; exit 1; }
done
cd "$work"
echo "== sbf build: ${#genomes[@]} genomes"
/usr/bin/time -f "build: %e s, %M KiB peak" "$sbf" build -@ "$threads" -o panel.sbf "${genomes[@]}" 2>&1 | grep -v '^sbf build: '
"$sbf" info panel.sbf | sed -n '/^target/,$p'
"$sbf" info --json panel.sbf > info.json
# random reads: every k-mer valid, none from a genome (false positives only)
python3 -c "
import random, sys
random.seed(7)
out = sys.stdout
for i in range($n_random):
    s = ''.join(random.choices('ACGT', k=150))
    out.write(f'@r{i}\n{s}\n+\n' + 'I' * 150 + '\n')
" > random.fq
"$sbf" query -@ "$threads" -x panel.sbf random.fq > random.tsv
# own reads of each genome, classified against the whole panel
: > own.tsv
for g in "${genomes[@]}"; do
  name=${g%%=*} fa=${g#*=}
  case $fa in *.gz) zcat "$fa" > g.fa ;; *) cp "$fa" g.fa ;; esac
  wgsim -N 10000 -1 150 -2 150 -e 0.002 -r 0.001 -S 11 g.fa r1.fq r2.fq > /dev/null 2>&1
  "$sbf" classify -@ "$threads" -x panel.sbf --json c.json -o /dev/null r1.fq r2.fq 2> /dev/null
  python3 - "$name" c.json >> own.tsv <<'EOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
unit = d["unit"]   # pairs, for two mates
cats = {c["name"]: c[unit] for c in d["categories"]}
passing = {c["name"]: c.get("passing", 0) for c in d["categories"]}
total = sum(cats.values()) or 1
print(f"{name}\t{cats.get(name, 0) / total * 100:.2f}\t{passing.get(name, 0) / total * 100:.2f}\t{cats.get('multi', 0) / total * 100:.2f}\t{cats.get('none', 0) / total * 100:.2f}")
EOF
done
# speed: the panel index against one index per genome (what panels replace: each genome a
# plain filter of its own; one -x per genome, so each read is scanned once per index), the
# same reads (the random ones and one genome's own pairs), classify on each engine this machine
# has (the GPU's where `sbf --version` lists GPU 0), medians of RUNS [3] alternating runs
xs=()
for g in "${genomes[@]}"; do
  i=${#xs[@]}
  [ -s one_$i.sbf ] || "$sbf" build -@ "$threads" -o one_$i.sbf "$g" 2> /dev/null
  xs+=(-x one_$i.sbf)
done
cat random.fq r1.fq > speed.fq
engines=(none); "$sbf" --version | grep -q '^GPU 0:' && engines+=(0)
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
speed=()
for e in "${engines[@]}"; do
  for r in $(seq "${RUNS:-3}"); do
    for side in panel one; do
      if [ $side = panel ]; then ix=(-x panel.sbf); else ix=("${xs[@]}"); fi
      t0=$(date +%s.%N)
      "$sbf" classify --gpu $e -@ "$threads" "${ix[@]}" -o /dev/null speed.fq 2> /dev/null
      echo "$(date +%s.%N) - $t0" | awk '{ printf "%.3f\n", $1 - $3 }' >> t_${e}_$side
    done
  done
  a=$(median < t_${e}_panel) b=$(median < t_${e}_one)
  speed+=("$(printf '%-10s %12s %16s %8s' "$e" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')")")
  rm -f t_${e}_panel t_${e}_one
done
python3 - <<'EOF'
import json
info = json.load(open("info.json"))
rows = open("random.tsv").read().split("\n")
head = rows[0].lstrip("#").split("\t")
kmers = 0
hits = [0] * (len(head) - 2)
for line in rows[1:]:
    if not line:
        continue
    f = line.split("\t")
    kmers += int(f[1])
    for i, v in enumerate(f[2:]):
        hits[i] += int(v)
own = {l.split("\t")[0]: l.split("\t")[1:] for l in open("own.tsv").read().split("\n") if l}
print(f"\n{'target':26} {'Mbp':>5} {'panel':>8} {'bits/k-mer':>10} {'pred. FPR':>10} {'meas. FPR':>10} {'own: best':>9} {'passing':>8} {'multi':>6} {'none':>6}")
for i, t in enumerate(info["targets"]):
    bpk = t["bytes"] * 8 / t["kmers"]
    panel = "own" if t["panel_columns"] == 1 else f'{t["panel"]}: {t["columns"]}/{t["panel_columns"]}'
    o = own.get(t["name"], ["-"] * 4)
    print(f'{t["name"]:26} {t["bases"] / 1e6:5.2f} {panel:>8} {bpk:10.2f} {t["predicted_fpr"]:10.2e} {hits[i] / kmers:10.2e} {o[0]:>8}% {o[1]:>7}% {o[2]:>5}% {o[3]:>5}%')
print(f"\n{kmers} random k-mers ({len(rows) - 2} reads of 150 bp). Own reads: 10,000 wgsim pairs per genome (0.2% errors)")
print("classified against the whole panel: own: best = assigned to their genome; passing = their genome passes the score")
print("(with others: near-identical strains such as the two E. coli K-12 make reads multi); multi; none.")
EOF
echo
echo "speed: classify of $n_random random reads and the last genome's 10,000 own reads (mate 1) (-@ $threads), seconds, medians of ${RUNS:-3}"
printf '%-10s %12s %16s %8s\n' "--gpu" "panel index" "one per genome" "ratio"
printf '%s\n' "${speed[@]}"
