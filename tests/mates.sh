#!/usr/bin/env bash
# mates.sh -- the names of two mates are checked in every batch, on every input path: a
# mismatch deep in a file (pair 15,001 of 20,000) stops the run with exit 1, one line naming
# the pair, both names and both files, and no output left behind; the same files with the
# names right screen every pair (so the mismatch is what stops the run).
# Paths: two mate files plain, gzip (ISA-L), BGZF (each parsed in place), through kseq
# (SBF_NO_INPLACE=1), the first mate on standard input; one interleaved file; batches of the
# default size (one batch: pairs checked one by one), -K 2K (batches of a few pairs, both
# files read at once, bam/sbf_batch.c pair_range) and -K 1M (thousands of pairs a batch,
# checked in two halves on two threads).
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/mates.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
if command -v bgzip > /dev/null; then :; else echo "Bail out! bgzip (tabix) is needed"; exit 1; fi

zcat "$data/human_slice.fa.gz" | awk '!/^>/ { printf "%s", $0 } END { print "" }' > human.seq
"$SBF" build --gpu none -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }

# 20,000 pairs of 150 bases cut from the human slice; mate 2 of pair 15,001 renamed in p_2bad.fq
# and in the interleaved il_bad.fq
awk 'BEGIN { srand(11); getline h < "human.seq"; q = ""; for (j = 0; j < 150; ++j) q = q substr("#+5?AFIJ", j % 8 + 1, 1)
  for (i = 0; i < 20000; ++i) {
    p = 1 + int(rand() * (length(h) - 400))
    printf "@r%d/1\n%s\n+\n%s\n", i, substr(h, p, 150), q > "p_1.fq"
    printf "@r%d/2\n%s\n+\n%s\n", i, substr(h, p + 200, 150), q > "p_2.fq"
    printf "@r%d/1\n%s\n+\n%s\n@r%d/2\n%s\n+\n%s\n", i, substr(h, p, 150), q, i, substr(h, p + 200, 150), q > "il.fq"
  } }'
sed '60001s/.*/@x15000\/2/' p_2.fq > p_2bad.fq
sed '120005s/.*/@x15000\/2/' il.fq > il_bad.fq
for f in p_1 p_2 p_2bad il il_bad; do gzip -c $f.fq > $f.fq.gz; bgzip -c $f.fq > $f.fq.bgz; done
[ "$(sed -n 60001p p_2bad.fq)" = "@x15000/2" ] && [ "$(sed -n 120005p il_bad.fq)" = "@x15000/2" ] ||
  { echo "Bail out! the renamed records are not where the test expects them"; exit 1; }

# leftovers: anything in the folder that is not an input of this test (an output or its temporary)
leftovers() { ls | grep -v -e '^p_' -e '^il' -e '^idx.sbf$' -e '^human.seq$' -e '\.err$' -e '^stdout$'; }

# stops NAME MESSAGE ENV SBF-ARGS...: exit 1, exactly MESSAGE on stderr, no output left
stops() {
  local name=$1 msg=$2 env=$3
  shift 3
  rm -f out_1.fq out_2.fq out.fq
  env $env "$SBF" "$@" > stdout 2> run.err < "${STDIN_FILE:-/dev/null}"
  local rc=$? left; left=$(leftovers)
  # the notice that a test switch is set is not part of the error
  if [ $rc -eq 1 ] && [ "$(grep -v '^sbf filter: notice: SBF_NO_INPLACE is set' run.err)" = "$msg" ] && [ ! -s stdout ] && [ -z "$left" ]; then
    ok "$name"
  else
    not_ok "$name" "exit $rc (want 1)" "stderr: $(head -n 3 run.err)" "want: $msg" "left: $left"
  fi
}
# screens NAME PAIRS SBF-ARGS...: exit 0, the summary counts PAIRS pairs, both outputs written
screens() {
  local name=$1 pairs=$2
  shift 2
  rm -f out_1.fq out_2.fq out.fq
  "$SBF" "$@" > stdout 2> run.err < "${STDIN_FILE:-/dev/null}"
  local rc=$?
  if [ $rc -eq 0 ] && grep -q "^sbf filter: $pairs pairs ($((2 * pairs)) reads)," run.err; then
    ok "$name"
  else
    not_ok "$name" "exit $rc (want 0, $pairs pairs)" "stderr: $(head -n 5 run.err)"
  fi
}

F=(filter -x idx.sbf --gpu none --remove ecoli -1 out_1.fq -2 out_2.fq)
for K in "" 2K 1M; do
  kargs=(); [ -n "$K" ] && kargs=(-K "$K")
  kname=${K:+-K $K}; kname=${kname:-one batch}
  for z in "" .gz .bgz; do
    stops "two files$z, $kname: mate names differ at pair 15001" \
      "sbf filter: mate names differ at pair 15001: 'r15000/1' in p_1.fq$z and 'x15000/2' in p_2bad.fq$z" "" \
      "${F[@]}" "${kargs[@]}" p_1.fq$z p_2bad.fq$z
  done
  stops "two files through kseq (SBF_NO_INPLACE), $kname: mate names differ at pair 15001" \
    "sbf filter: mate names differ at pair 15001: 'r15000/1' in p_1.fq and 'x15000/2' in p_2bad.fq" SBF_NO_INPLACE=1 \
    "${F[@]}" "${kargs[@]}" p_1.fq p_2bad.fq
  STDIN_FILE=p_1.fq.gz stops "first mate on standard input, $kname: mate names differ at pair 15001" \
    "sbf filter: mate names differ at pair 15001: 'r15000/1' in - and 'x15000/2' in p_2bad.fq" "" \
    "${F[@]}" "${kargs[@]}" - p_2bad.fq
  for z in "" .bgz; do
    stops "interleaved$z, $kname: mates differ at pair 15001" \
      "sbf filter: il_bad.fq$z: interleaved mates differ: 'r15000/1' and 'x15000/2' (pair 15001)" "" \
      filter -x idx.sbf --gpu none --remove ecoli --interleaved -o out.fq "${kargs[@]}" il_bad.fq$z
  done
  # the controls: the same paths with the names right screen all 20,000 pairs
  screens "two files, $kname, names right: every pair screened" 20000 "${F[@]}" "${kargs[@]}" p_1.fq.gz p_2.fq.gz
  screens "interleaved, $kname, names right: every pair screened" 20000 \
    filter -x idx.sbf --gpu none --remove ecoli --interleaved -o out.fq "${kargs[@]}" il.fq
done
tap_end
