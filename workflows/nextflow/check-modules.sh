#!/usr/bin/env bash
# check-modules.sh -- what can be checked of the Nextflow modules without Nextflow (not in Debian):
#  1. each main.nf parses as Groovy (Debian's groovy 2.4; the stub's second `def args`/`def prefix`,
#     legal in Nextflow where script: and stub: are separate closures, is renamed for this parse);
#  2. the script: and stub: blocks, rendered by Groovy with a sample meta/task (as Nextflow does:
#     GString interpolation, then stripIndent), run with bash -ue on tiny data (tests/data) and
#     write every file the output: block declares, and a versions.yml with sbf's version.
# Needs: groovy and a JRE (apt-get install groovy), samtools, wgsim, sbf (SBF=path, default the
# build's ./sbf). Usage: workflows/nextflow/check-modules.sh   (KEEP=1 keeps the work folder)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SBF=${SBF:-$root/sbf}
for tool in groovy samtools wgsim; do
  command -v $tool > /dev/null || { echo "check-modules: $tool is needed" >&2; exit 2; }
done
if [ -z "${JAVA_HOME:-}" ] && [ ! -x /usr/lib/jvm/default-java/bin/java ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")") && export JAVA_HOME
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-nf-check.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" && ln -s "$SBF" "$work/bin/sbf" && export PATH=$work/bin:$PATH
failed=0
pass() { echo "ok - $1"; }
fail() { echo "FAILED - $1"; failed=1; }
cd "$work" || exit 1

# data: an index, 50 pairs from human and 50 from lambda, as two FASTQ files and one BAM
sbf build -o idx.sbf human="$root/tests/data/human_slice.fa.gz" lambda="$root/tests/data/lambda.fa.gz" 2> /dev/null || exit 1
for g in human_slice lambda; do
  zcat "$root/tests/data/$g.fa.gz" > $g.fa
  wgsim -N 50 -1 100 -2 100 -e 0.005 -S 5 $g.fa ${g}_1.fq ${g}_2.fq > /dev/null 2>&1
done
cat human_slice_1.fq lambda_1.fq > r_1.fq && cat human_slice_2.fq lambda_2.fq > r_2.fq
samtools import -1 r_1.fq -2 r_2.fq -o r.bam 2> /dev/null

for m in filter classify; do
  main=$here/modules/sbf/$m/main.nf
  awk '/^    stub:/ { s = 1 } s && /^    def (args|prefix) / { sub(/def /, "") } { print }' "$main" > parse_$m.groovy
  if groovyc -d classes parse_$m.groovy > parse_$m.log 2>&1; then pass "$m: main.nf parses"; else fail "$m: main.nf does not parse: $(cat parse_$m.log)"; fi
done

# render MODULE script|stub META READS ARGS ACCELERATOR: the block's shell script, as Nextflow makes it
render() {
  { echo "def meta = $3; def reads = '$4'; def index = 'idx.sbf'"
    echo "def task = [ext: [args: '$5'], cpus: 2, accelerator: $6, process: 'SBF_${1^^}']"
    awk -v sec="$2:" '$1 == sec { on = 1; next }
      on && /^    """$/ { if (++q == 2) { print "    \"\"\".stripIndent()"; exit } print "    print \"\"\""; next }
      on { print }' "$here/modules/sbf/$1/main.nf"
  } > render.groovy
  groovy render.groovy
}
# case NAME MODULE BLOCK META READS ARGS ACCELERATOR EXPECTED-FILES...
case_() {
  local name=$1 m=$2 block=$3 meta=$4 reads=$5 args=$6 acc=$7 f missing=
  shift 7
  rm -rf "run_$name" && mkdir "run_$name" && cp r_1.fq r_2.fq r.bam idx.sbf "run_$name/"
  render $m $block "$meta" "$reads" "$args" $acc > "run_$name/.command.sh" 2> "run_$name/render.err" ||
    { fail "$name: rendering failed: $(cat "run_$name/render.err")"; return; }
  (cd "run_$name" && bash -ue .command.sh > .command.out 2> .command.err) ||
    { fail "$name: the script failed: $(tail -n 3 "run_$name/.command.err")"; return; }
  for f in "$@" versions.yml; do [ -e "run_$name/$f" ] || missing+=" $f"; done
  [ -z "$missing" ] || { fail "$name: missing$missing"; return; }
  grep -qx "    sbf: $(sbf --version | head -n 1 | sed 's/^sbf //')" "run_$name/versions.yml" &&
    grep -qx "\"SBF_${m^^}\":" "run_$name/versions.yml" || { fail "$name: versions.yml: $(cat "run_$name/versions.yml")"; return; }
  pass "$name: $block writes$(printf ' %s' "$@") versions.yml"
}
case_ filter_paired filter script "[id:'S1', single_end:false]" "r_1.fq r_2.fq" "--remove human" null \
  S1_1.clean.fastq.gz S1_2.clean.fastq.gz S1.summary.tsv S1.summary.json S1.sbf_filter.log
[ "$(zcat run_filter_paired/S1_1.clean.fastq.gz 2> /dev/null | grep -c '^@lambda')" -eq 50 ] &&
  [ "$(zcat run_filter_paired/S1_2.clean.fastq.gz 2> /dev/null | grep -c '^@human')" -eq 0 ] &&
  grep -q -- '--gpu none' run_filter_paired/.command.sh &&
  pass "filter_paired: the 50 lambda pairs kept (with --remove human), no human; --gpu none without an accelerator" ||
  fail "filter_paired: wrong reads kept or GPU option"
case_ filter_bam filter script "[id:'S2', single_end:false]" "r.bam" "" 1 \
  S2_1.clean.fastq.gz S2_2.clean.fastq.gz S2.summary.tsv S2.summary.json S2.sbf_filter.log
[ "$(zcat run_filter_bam/S2_1.clean.fastq.gz 2> /dev/null | awk 'END { print NR / 4 }')" = "$(awk '$1 == "noMatch" { print $2 }' run_filter_bam/S2.summary.tsv)" ] &&
  grep -q -- '--gpu auto' run_filter_bam/.command.sh &&
  pass "filter_bam: no --remove: only the noMatch pairs kept; --gpu auto with an accelerator" || fail "filter_bam: pairs kept or GPU option"
case_ filter_single filter script "[id:'S3', single_end:true]" "r_1.fq" "--remove human" null \
  S3.clean.fastq.gz S3.summary.tsv S3.summary.json S3.sbf_filter.log
case_ classify_paired classify script "[id:'S4', single_end:false]" "r_1.fq r_2.fq" "--hits" null \
  S4.sbf.bam S4.summary.tsv S4.summary.json S4.sbf_classify.log
lambda=$(awk '$1 == "lambda" { print $2 }' run_classify_paired/S4.summary.tsv)
[ "$(samtools view -c -d sb:lambda run_classify_paired/S4.sbf.bam 2> /dev/null)" -eq $((2 * lambda)) ] && [ "$lambda" -ge 48 ] &&
  [ "$(samtools view run_classify_paired/S4.sbf.bam 2> /dev/null | grep -c 'sh:B:I')" -eq 200 ] &&
  pass "classify_paired: the $lambda lambda pairs tagged sb:Z:lambda in the BAM, ext.args (--hits) passed" || fail "classify_paired: tags"
case_ classify_bam classify script "[id:'S5', single_end:false]" "r.bam" "" null \
  S5.sbf.bam S5.summary.tsv S5.summary.json S5.sbf_classify.log
case_ filter_stub filter stub "[id:'S6', single_end:false]" "r_1.fq r_2.fq" "" null \
  S6_1.clean.fastq.gz S6_2.clean.fastq.gz S6.summary.tsv S6.summary.json S6.sbf_filter.log
case_ classify_stub classify stub "[id:'S7', single_end:false]" "r.bam" "" null \
  S7.sbf.bam S7.summary.tsv S7.summary.json S7.sbf_classify.log
[ $failed -eq 0 ] && echo "check-modules: all passed" || echo "check-modules: FAILED"
exit $failed
