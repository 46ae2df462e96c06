#!/usr/bin/env bash
# workflows.sh -- runs workflows/snakemake/Snakefile with Debian's snakemake on tiny data: an index
# built by the workflow from three genome slices (tests/data), three samples simulated with wgsim
# (paired FASTQ gzip, paired FASTQ plain, unaligned BAM), host removal and classification of each,
# the collected table, the declared resources, a re-run, a run on a given index, and (when multiqc
# is installed) the workflow's MultiQC report. Checks the real counts against the simulated reads.
# Without snakemake it prints one skipped case and exits 0 (quickstart test installs it).
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/workflows.sh (KEEP=1 keeps
# the work folder).
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
snakefile=$srcdir/../workflows/snakemake/Snakefile
if ! command -v snakemake > /dev/null; then
  echo "ok 1 - snakemake workflow # SKIP snakemake not installed"
  echo "1..1"
  exit 0
fi
for tool in samtools wgsim; do
  command -v $tool > /dev/null || { echo "Bail out! $tool is needed (apt-get install samtools)"; exit 1; }
done
case $SBF in /*) ;; *) SBF=$PWD/$SBF ;; esac
cd "$work" || exit 1
export XDG_CACHE_HOME=$work/cache # snakemake's caches stay in the work folder

# ---- reads of known origin: wgsim names each read after its contig (human_chr20_..., ecoli_...) --
mkdir reads
for g in human_slice ecoli_slice saureus_slice lambda; do zcat "$data/$g.fa.gz" > $g.fa; done
# sim SAMPLE SEED GENOME=PAIRS...: appends the pairs to reads/SAMPLE_1.fq and reads/SAMPLE_2.fq
sim() {
  local s=$1 seed=$2 spec
  shift 2
  for spec in "$@"; do
    wgsim -N "${spec#*=}" -1 100 -2 100 -e 0.005 -r 0.001 -S "$seed" "${spec%=*}.fa" a.fq b.fq > /dev/null 2>&1
    cat a.fq >> reads/${s}_1.fq && cat b.fq >> reads/${s}_2.fq
    seed=$((seed + 1))
  done
}
sim S1 11 human_slice=120 ecoli_slice=60 lambda=20
sim S2 21 human_slice=40 ecoli_slice=100 saureus_slice=30 # saureus is not in the index: none
sim S3 31 human_slice=80 lambda=40
declare -A pairs=([S1]=200 [S2]=170 [S3]=120) human=([S1]=120 [S2]=40 [S3]=80)
declare -A unit=([S1]=pairs [S2]=pairs [S3]=fragments) # S3 is a BAM: pairs recognised by flags
gzip reads/S1_1.fq reads/S1_2.fq
samtools import -1 reads/S3_1.fq -2 reads/S3_2.fq -o reads/S3.bam 2> /dev/null && rm reads/S3_?.fq
check "simulated reads: $((200 + 170 + 120)) pairs" test "$(zcat reads/S1_1.fq.gz | wc -l)" -eq 800 -a \
  "$(wc -l < reads/S2_2.fq)" -eq 680 -a "$(samtools view -c reads/S3.bam)" -eq 240

have_multiqc=0
command -v multiqc > /dev/null && have_multiqc=1
cat > config.yaml << EOF
sbf: $SBF
references:
  human: $data/human_slice.fa.gz
  ecoli: $data/ecoli_slice.fa.gz
  lambda: $data/lambda.fa.gz
masks:
  human: $data/saureus_slice.fa.gz
samples:
  S1: {r1: $work/reads/S1_1.fq.gz, r2: $work/reads/S1_2.fq.gz}
  S2: {r1: $work/reads/S2_1.fq, r2: $work/reads/S2_2.fq}
  S3: {bam: $work/reads/S3.bam}
steps: [filter, classify]
remove: human
threads: 2
build_threads: 2
mem_mb: 1000
gpus: 1
multiqc: $([ $have_multiqc = 1 ] && echo true || echo false)
EOF

# ---- the workflow: build the index, filter and classify three samples, collect ------------------
snakemake --cores 2 --resources gpu=1 -p -s "$snakefile" --configfile config.yaml --directory run > run.log 2>&1
status=$?
if [ $status -eq 0 ]; then ok "snakemake --cores 2 --resources gpu=1: exit 0"; else
  not_ok "snakemake --cores 2 --resources gpu=1: exit 0" "exit $status; last lines of the log:" "$(tail -n 20 run.log)"; fi
r=run/results
expected="$r/index/screen.sbf $r/index/screen.sbf.checksum $r/sbf_summary.tsv"
for s in S1 S2 S3; do
  expected+=" $r/clean/${s}_R1.fastq.gz $r/clean/${s}_R2.fastq.gz $r/logs/filter/$s.log $r/logs/classify/$s.log"
  for step in filter classify; do expected+=" $r/$step/$s.summary.tsv $r/$step/$s.summary.json"; done
done
missing=
for f in $expected; do [ -s "$f" ] || missing+=" $f"; done
check "every expected output exists and is not empty (22 files)${missing:+; missing:$missing}" test -z "$missing"
check "sbf build ran once, on the three references" test "$(grep -c '^rule sbf_build:' run.log)" -eq 1 -a \
  "$("$SBF" info "$r/index/screen.sbf" 2> /dev/null | awk '/^masked$/ { exit } $1 ~ /^(human|ecoli|lambda)$/ && $NF ~ /_slice|lambda/' | wc -l)" -eq 3
check "... the human target masked by the config's mask, the others not (all by low complexity, the default)" \
  sh -c "'$SBF' info --json '$r/index/screen.sbf' | sed '/long_read_layer/,\$d' | grep -q '\"name\": \"human\", .*\"masks\": \[\"$data/saureus_slice.fa.gz\", \"(low complexity: DUST >= 50)\"\]' &&
         [ \$('$SBF' info --json '$r/index/screen.sbf' | sed '/long_read_layer/,\$d' | grep -c '\"masks\": \[\"(low complexity: DUST >= 50)\"\]') -eq 2 ]"
check "... its checksum manifest is what sbf info --check prints for it" \
  sh -c "[ -s '$r/index/screen.sbf.checksum' ] &&
         [ \"\$('$SBF' info --check '$r/index/screen.sbf' | cut -d' ' -f1)\" = \"\$(cut -d' ' -f1 '$r/index/screen.sbf.checksum')\" ]"

# the JSON's count in or out: json_count FILE in|out
json_count() { sed -n "s/.*\"$2\": {\"[a-z]*\": \([0-9]*\),.*/\1/p" "$1"; }
# the fragments of each category in a summary TSV: a target's hits minus shared, multiMatch, noMatch
tsv_categories() { awk 'NR > 1 { print $1, ($1 == "multiMatch" || $1 == "noMatch") ? $2 : $2 - $4 }' "$1"; }
tsv_sum() { tsv_categories "$1" | awk '{ s += $2 } END { print s + 0 }'; }
tsv_get() { tsv_categories "$1" | awk -v t="$2" '$1 == t { print $2 }'; }
tsv_hits() { awk -v t="$2" '$1 == t { print $2 }' "$1"; }
fq_pairs() { zcat "$1" | awk 'END { print NR / 4 }'; }
# origin of each pair left: the contig name's first word before '_' (human, ecoli, lambda, saureus)
origins() { zcat "$1" | awk 'NR % 4 == 1 { split(substr($1, 2), a, "_"); print a[1] }'; }
within() { local got=$1 want=$2 tol=$3; [ -n "$got" ] && [ $((got - want)) -le "$tol" ] && [ $((want - got)) -le "$tol" ]; }

for s in S1 S2 S3; do
  N=${pairs[$s]} H=${human[$s]} u=${unit[$s]}
  c=$r/classify/$s.summary f=$r/filter/$s.summary
  check "$s classify: JSON counts $N $u in, $N out" \
    eval 'grep -q "\"in\": {\"$u\": $N, \"reads\": $((2 * N))" $c.json && [ "$(json_count $c.json out)" = "$N" ]'
  check "$s classify: the summary TSV's categories add up to the $N input pairs" test "$(tsv_sum $c.tsv)" -eq "$N"
  check "$s classify: human $H (+-3) as simulated ($(tsv_get $c.tsv human))" within "$(tsv_get $c.tsv human)" $H 3
  case $s in
  S1) check "$s classify: ecoli 60 (+-2), lambda 20 (+-2), noMatch 0" \
        eval 'within "$(tsv_get $c.tsv ecoli)" 60 2 && within "$(tsv_get $c.tsv lambda)" 20 2 && [ "$(tsv_get $c.tsv noMatch)" -eq 0 ]' ;;
  S2) check "$s classify: ecoli 100 (+-2), the 30 S. aureus pairs noMatch (+-2)" \
        eval 'within "$(tsv_get $c.tsv ecoli)" 100 2 && within "$(tsv_get $c.tsv noMatch)" 30 2' ;;
  S3) check "$s classify: lambda 40 (+-2), ecoli 0" \
        eval 'within "$(tsv_get $c.tsv lambda)" 40 2 && [ "$(tsv_get $c.tsv ecoli)" -eq 0 ]' ;;
  esac
  out=$(json_count $f.json out)
  check "$s filter: the clean R1 and R2 files hold the $out pairs the JSON says were written" \
    test -n "$out" -a "$(fq_pairs $r/clean/${s}_R1.fastq.gz)" = "$out" -a "$(fq_pairs $r/clean/${s}_R2.fastq.gz)" = "$out"
  check "$s filter: removed (in - out) = the human hits of its summary ($(tsv_hits $f.tsv human))" \
    test "$(( $(json_count $f.json in) - out ))" -eq "$(tsv_hits $f.tsv human)"
  left=$(origins $r/clean/${s}_R1.fastq.gz | grep -c '^human')
  kept=$(origins $r/clean/${s}_R1.fastq.gz | grep -vc '^human')
  check "$s filter: no human pair left ($left), >= 97% of the $((N - H)) other pairs kept ($kept)" \
    test "$left" -eq 0 -a "$kept" -ge $(((N - H) * 97 / 100))
  check "$s: filter and classify give the same categories" cmp -s $f.tsv $c.tsv
done

# ---- the collected table ------------------------------------------------------------------------
t=$r/sbf_summary.tsv
check "sbf_summary.tsv: header and one line per sample and step" \
  test "$(head -n 1 $t)" = "$(printf 'sample\tstep\tunit\tin\tout\thuman\tecoli\tlambda\tmulti\tnone\tno_kmer')" -a "$(wc -l < $t)" -eq 7
bad=$(awk -F '\t' -v p="S1=200,S2=170,S3=120" 'BEGIN { split(p, a, ","); for (i in a) { split(a[i], b, "="); n[b[1]] = b[2] } }
  NR > 1 { s = 0; for (i = 6; i <= 10; ++i) s += $i; if ($4 != n[$1] || s != $4) print $1 "/" $2 }' $t)
check "sbf_summary.tsv: in = the pairs simulated = the sum of the categories${bad:+ (wrong: $bad)}" test -z "$bad" -a "$(wc -l < $t)" -eq 7
for s in S1 S3; do
  check "sbf_summary.tsv: $s's filter line = its JSON (out $(json_count $r/filter/$s.summary.json out), human $(tsv_get $r/filter/$s.summary.tsv human))" \
    test "$(awk -F '\t' -v s=$s '$1 == s && $2 == "filter" { print $5, $6 }' $t)" = \
    "$(json_count $r/filter/$s.summary.json out) $(tsv_get $r/filter/$s.summary.tsv human)"
done

# ---- resources: each sbf job asks for threads, memory and a GPU ---------------------------------
check "every sbf job declares mem_mb, gpu=1, nvidia_gpu=1 and slurm_extra=--gres=gpu:1 (7 jobs)" \
  test "$(grep -A 12 -E '^rule sbf_(build|filter|classify):' run.log | grep -cE '^ *resources: .*mem_mb=[0-9]+.*runtime=120, gpu=1, nvidia_gpu=1, slurm_extra=--gres=gpu:1')" -eq 7
check "threads: 2 per sbf job" test "$(grep -A 12 -E '^rule sbf_(build|filter|classify):' run.log | grep -c '^ *threads: 2$')" -eq 7
check "sbf filter ran with --remove human -@ 2 --gpu auto (its log: 2 threads)" \
  eval 'grep -q "/sbf filter -x results/index/screen.sbf --remove human -@ 2 --gpu auto " run.log && grep -q "engine .*2 threads" $r/logs/filter/S2.log'

# ---- a second run has nothing to do ---------------------------------------------------------------
snakemake --cores 2 -s "$snakefile" --configfile config.yaml --directory run > rerun.log 2>&1
check "a second run: exit 0, nothing to be done" grep -q "Nothing to be done" rerun.log

# ---- a given index, a sample sheet, classify only, no GPU asked for ----------------------------
cp "$r/index/screen.sbf" given.sbf && mkdir given
printf 'sample\tr1\tr2\tbam\n# a comment\nS1\t%s\t%s\t\nS2\t%s\t%s\t\nS3\t\t\t%s\n' reads/S1_1.fq.gz reads/S1_2.fq.gz \
  reads/S2_1.fq reads/S2_2.fq reads/S3.bam > given/sheet.tsv
sed -e '/^references:/,/^  lambda:/d' -e '/^masks:/,/^  human:/d' -e '/^samples:/,/^  S3:/d' -e 's/^steps:.*/steps: classify/' -e 's/^gpus:.*/gpus: 0/' \
  -e 's/^multiqc:.*/multiqc: false/' config.yaml > given.yaml && printf 'index: %s\nsample_sheet: sheet.tsv\n' "$work/given.sbf" >> given.yaml
ln -s ../reads given/reads # the sheet's relative paths are relative to --directory
snakemake --cores 2 -p -s "$snakefile" --configfile given.yaml --directory given > given.log 2>&1
check "given index, sample sheet, steps: classify: exit 0, no build, no filter" \
  test $? -eq 0 -a ! -e given/results/index -a ! -e given/results/clean -a "$(grep -c '^rule sbf_classify:' given.log)" -eq 3
check "... same summaries as the first run" \
  eval '(for s in S1 S2 S3; do cmp -s given/results/classify/$s.summary.tsv $r/classify/$s.summary.tsv || exit 1; done)'
check "... gpus: 0 asks for no GPU and runs sbf --gpu none" \
  test "$(grep -cE '^ *resources: .*gpu=0, nvidia_gpu=0' given.log)" -eq 3 -a "$(grep -c 'gres=gpu' given.log)" -eq 0 -a \
  "$(grep -c "/sbf classify -x $work/given.sbf -@ 2 --gpu none " given.log)" -eq 3

# ---- the workflow's MultiQC report ---------------------------------------------------------------
if [ $have_multiqc = 1 ]; then
  m=$r/multiqc/multiqc_data/multiqc_biobloomtools_sbf.txt
  want=$(for s in S1 S2 S3; do echo "$s $(tsv_hits $r/classify/$s.summary.tsv human) $(tsv_hits $r/classify/$s.summary.tsv noMatch)"; done)
  check "multiqc: the report's data lists S1 S2 S3 with their human and noMatch counts" \
    test -s $r/multiqc/multiqc_report.html -a "$(awk -F '\t' 'NR == 1 { for (i = 2; i <= NF; ++i) c[$i] = i; next } { print $1, $c["human"], $c["noMatch"] }' $m 2> /dev/null | sort)" = "$want"
  p=$r/multiqc/multiqc_data/multiqc_sbf_provenance_table.txt
  sum=$(cut -d' ' -f1 $r/index/screen.sbf.checksum 2> /dev/null)
  check "multiqc: the provenance table has S1 S2 S3 from sbf filter, each with the manifest's checksum ($sum), the masked human target and the pairs removed" \
    test -n "$sum" -a "$(awk -F '\t' -v s="$sum" 'NR == 1 { for (i = 2; i <= NF; ++i) c[$i] = i; next }
      $c["checksum"] == s && $c["targets"] ~ /^human \(masks: saureus_slice.fa.gz, low complexity: DUST >= 50; [0-9]+ k-mers left out\)/ && $c["command"] == "sbf filter" {
        print $1, $c["pairs removed"] + $c["fragments removed"] }' $p 2> /dev/null | sort | tr '\n' ' ')" = \
      "$(for s in S1 S2 S3; do printf '%s %s ' $s $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); u=j["unit"]; print(j["in"][u] - j["out"][u])' $r/filter/$s.summary.json); done)"
else
  ok "multiqc report of the workflow # SKIP multiqc not installed"
fi

tap_end
