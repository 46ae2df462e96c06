#!/usr/bin/env bash
# multiqc.sh -- MultiQC (Debian 12: 1.14) on a folder of sbf --summary TSV files: its biobloomtools
# module must find every one (by content, whatever the file name), name the samples after the
# files, and report sbf's hit counts; with workflows/multiqc/multiqc_config.yaml the section is
# called sbf. Reads simulated with wgsim from three genome slices (tests/data). doc/multiqc.md
# says what MultiQC needs. Without multiqc it prints one skipped case and exits 0.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/multiqc.sh (KEEP=1).
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
mqc_config=$srcdir/../workflows/multiqc/multiqc_config.yaml
if ! command -v multiqc > /dev/null; then
  echo "ok 1 - multiqc reads sbf summaries # SKIP multiqc not installed"
  echo "1..1"
  exit 0
fi
for tool in samtools wgsim; do
  command -v $tool > /dev/null || { echo "Bail out! $tool is needed (apt-get install samtools)"; exit 1; }
done
cd "$work" || exit 1
export XDG_CACHE_HOME=$work/cache MPLCONFIGDIR=$work/cache/matplotlib

"$SBF" build -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" lambda="$data/lambda.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
for g in human_slice ecoli_slice saureus_slice lambda; do zcat "$data/$g.fa.gz" > $g.fa; done
# sim SAMPLE SEED GENOME=PAIRS...: SAMPLE_1.fq, SAMPLE_2.fq
sim() {
  local s=$1 seed=$2 spec
  shift 2
  : > ${s}_1.fq && : > ${s}_2.fq
  for spec in "$@"; do
    wgsim -N "${spec#*=}" -1 100 -2 100 -e 0.005 -r 0.001 -S "$seed" "${spec%=*}.fa" a.fq b.fq > /dev/null 2>&1
    cat a.fq >> ${s}_1.fq && cat b.fq >> ${s}_2.fq
    seed=$((seed + 1))
  done
}
sim S1 41 human_slice=150 ecoli_slice=30 lambda=20
sim S2 51 human_slice=10 ecoli_slice=90 saureus_slice=25 # saureus is in no target: noMatch
sim S3 61 lambda=70 human_slice=5
samtools import -1 S3_1.fq -2 S3_2.fq -o S3.bam 2> /dev/null
mkdir summaries
# three file names: sbf's usual, BioBloom's (_summary.tsv), a bare one; a JSON summary beside them
"$SBF" classify -x idx.sbf -o /dev/null --summary summaries/S1.summary.tsv --json summaries/S1.summary.json S1_1.fq S1_2.fq 2> /dev/null &&
  "$SBF" filter -x idx.sbf --remove human -o /dev/null --summary summaries/S2_summary.tsv S2_1.fq S2_2.fq 2> /dev/null &&
  "$SBF" classify -x idx.sbf -O fastq -o /dev/null --summary summaries/S3.tsv S3.bam 2> /dev/null ||
  { echo "Bail out! sbf classify/filter failed"; exit 1; }
# a TSV that is not a summary (sbf query's) must not be taken for one
"$SBF" query -x idx.sbf -o summaries/S4.query.tsv S3_1.fq 2> /dev/null
declare -A file=([S1]=summaries/S1.summary.tsv [S2]=summaries/S2_summary.tsv [S3]=summaries/S3.tsv)
declare -A pairs=([S1]=200 [S2]=125 [S3]=75)
for s in S1 S2 S3; do
  check "$s: sbf's summary adds up to the ${pairs[$s]} pairs" test "$(awk 'NR > 1 { s += ($1 == "multiMatch" || $1 == "noMatch") ? $2 : $2 - $4 } END { print s }' ${file[$s]})" -eq ${pairs[$s]}
done

# ---- MultiQC with its defaults ---------------------------------------------------------------------
multiqc -f -o report summaries > multiqc.log 2>&1
check "multiqc summaries/: exit 0" test $? -eq 0 || sed 's/^/#   /' multiqc.log | tail -n 20
check "biobloomtools module found 3 reports" grep -q "biobloomtools | Found 3 reports" multiqc.log
d=report/multiqc_data
check "multiqc_data/multiqc_biobloomtools.txt: Sample, the targets, multiMatch, noMatch" \
  test "$(head -n 1 $d/multiqc_biobloomtools.txt 2> /dev/null)" = "$(printf 'Sample\thuman\tecoli\tlambda\tmultiMatch\tnoMatch')"
check "samples named after the files (S1.summary.tsv, S2_summary.tsv, S3.tsv): S1 S2 S3" \
  test "$(cut -f 1 $d/multiqc_biobloomtools.txt 2> /dev/null | tail -n +2 | sort | tr '\n' ' ')" = "S1 S2 S3 "
# each sample's row in MultiQC's data = the hits column of sbf's TSV, target by target
row() { awk -F '\t' -v s="$2" '$1 == s { $1 = ""; print substr($0, 2) }' OFS=' ' "$1"; }
hits() { awk -F '\t' 'NR > 1 { printf "%s%s", sep, $2; sep = " " } END { print "" }' "$1"; }
for s in S1 S2 S3; do
  check "$s: MultiQC's counts = sbf's hits ($(hits ${file[$s]}))" test "$(row $d/multiqc_biobloomtools.txt $s)" = "$(hits ${file[$s]})"
done
# and they are the simulated numbers: human ecoli lambda multiMatch noMatch, within 2 pairs
close() { # GOT WANT: two lists of numbers, each GOT within 2 of its WANT
  awk -v g="$1" -v w="$2" 'BEGIN { n = split(g, a, " "); if (n != split(w, b, " ")) exit 1;
    for (i = 1; i <= n; ++i) if (a[i] - b[i] > 2 || b[i] - a[i] > 2) exit 1 }'; }
check "S1: 150 human, 30 ecoli, 20 lambda in MultiQC's data" close "$(row $d/multiqc_biobloomtools.txt S1)" "150 30 20 0 0"
check "S2: 10 human, 90 ecoli, 25 noMatch in MultiQC's data" close "$(row $d/multiqc_biobloomtools.txt S2)" "10 90 0 0 25"
check "S3 (BAM): 5 human, 70 lambda in MultiQC's data" close "$(row $d/multiqc_biobloomtools.txt S3)" "5 0 70 0 0"
check "multiqc_sources.txt: the 3 summaries, not the query TSV nor the JSON" \
  test "$(grep -c '^BioBloom Tools' $d/multiqc_sources.txt)" -eq 3 -a "$(grep -cE 'S4.query.tsv|\.json' $d/multiqc_sources.txt)" -eq 0
check "the report has the BioBloom Tools section" grep -q 'id="biobloomtools"' report/multiqc_report.html

# ---- with workflows/multiqc/multiqc_config.yaml: the section is sbf's ---------------------------
multiqc -f -c "$mqc_config" -o report2 summaries > multiqc2.log 2>&1
check "multiqc -c workflows/multiqc/multiqc_config.yaml: exit 0" test $? -eq 0 || sed 's/^/#   /' multiqc2.log | tail -n 20
check "... the section is called sbf" grep -q '<h2 id="sbf"' report2/multiqc_report.html
check "... multiqc_biobloomtools_sbf.txt holds the same numbers" \
  cmp -s report2/multiqc_data/multiqc_biobloomtools_sbf.txt $d/multiqc_biobloomtools.txt

# ---- provenance: the JSON summary is custom content (doc/multiqc.md) -------------------------------
# prov/S2_mqc.json: MultiQC takes it without configuration; summaries/S1.summary.json (the
# workflow's name) only with the config. Both rows must carry what sbf info --check says.
"$SBF" build -o masked.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" --mask human="$data/lambda.fa.gz" 2> build2.err ||
  { echo "Bail out! sbf build --mask failed: $(cat build2.err)"; exit 1; }
mkdir prov
"$SBF" filter -x masked.sbf --remove human --rename -o /dev/null --json prov/S2_mqc.json S2_1.fq S2_2.fq 2> /dev/null ||
  { echo "Bail out! sbf filter --json failed"; exit 1; }
sum_masked=$("$SBF" info --check masked.sbf 2> /dev/null | cut -d' ' -f1)
sum_idx=$("$SBF" info --check idx.sbf 2> /dev/null | cut -d' ' -f1)
col() { # FILE SAMPLE COLUMN: MultiQC's value
  awk -F '\t' -v s="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == c) k = i; next } $1 == s && k { print $k }' "$1"; }
multiqc -f -o report4 prov > multiqc4.log 2>&1
check "multiqc prov/ (S2_mqc.json, no config): exit 0" test $? -eq 0 || sed 's/^/#   /' multiqc4.log | tail -n 20
t=report4/multiqc_data/multiqc_sbf_provenance_table.txt
check "... custom content sbf_provenance found 1 sample" grep -q "sbf_provenance: Found 1 samples" multiqc4.log
check "... S2: the checksum sbf info --check prints ($sum_masked)" test "$(col $t S2 checksum)" = "$sum_masked" -a -n "$sum_masked"
check "... S2: the index, the command, --rename" test "$(col $t S2 index)|$(col $t S2 command)|$(col $t S2 renamed)" = "masked.sbf|sbf filter|yes"
check "... S2: the target human with its masks" bash -c "grep -q 'human (masks: lambda.fa.gz, low complexity: DUST >= 50; [0-9]* k-mers left out); ecoli' $t"
check "... S2: pairs in 125, removed = in - out = the JSON's" test "$(col $t S2 'pairs in')" = 125 -a \
  "$(col $t S2 'pairs removed')" = "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["in"]["pairs"] - j["out"]["pairs"])' prov/S2_mqc.json)"
check "... S2: the scoring rule" bash -c "grep -q 'score >= 3' $t"
multiqc -f -c "$mqc_config" -o report5 summaries > multiqc5.log 2>&1
check "with the config, summaries/S1.summary.json is found: S1 classify against idx.sbf ($sum_idx)" \
  test "$(col report5/multiqc_data/multiqc_sbf_provenance_table.txt S1 command)|$(col report5/multiqc_data/multiqc_sbf_provenance_table.txt S1 checksum)" = "sbf classify|$sum_idx"
check "... and the report has the provenance section" grep -q 'sbf: index and provenance' report5/multiqc_report.html

# ---- what MultiQC keys on: the first line --------------------------------------------------------
mkdir other && tail -n +2 summaries/S1.summary.tsv > other/S5.summary.tsv && cp summaries/S1.summary.tsv other/S6.data
multiqc -f -o report3 other > multiqc3.log 2>&1
check "a summary without its header line is not found; any file name with it is (S6.data)" \
  test "$(cut -f 1 report3/multiqc_data/multiqc_biobloomtools.txt 2> /dev/null | tail -n +2 | tr '\n' ' ')" = "S6 "

tap_end
