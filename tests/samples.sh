#!/usr/bin/env bash
# samples.sh -- `--samples LIST` of sbf filter and sbf classify: every sample's outputs equal
# those of a run of its own (byte for byte, FASTQ and the --split files; the JSON names the
# sample), the index is opened once (--stats), a list or an option that cannot work is refused
# before any sample runs (exit 1, one line naming the list's line, nothing written), and a
# sample that fails stops the command with the earlier samples complete, its own outputs
# absent and the later ones not run.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/samples.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1

"$SBF" build --gpu none -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
# sample A: the test pairs; B: 300 pairs cut from the human slice; C: one file of single reads
cp "$data/pairs_1.fq" a_1.fq
cp "$data/pairs_2.fq" a_2.fq
zcat "$data/human_slice.fa.gz" | awk '!/^>/ { printf "%s", $0 } END { print "" }' > human.seq
awk 'BEGIN { srand(5); getline h < "human.seq"; q = sprintf("%150s", ""); gsub(/ /, "I", q)
  for (i = 0; i < 300; ++i) { p = 1 + int(rand() * (length(h) - 400))
    printf "@b%d/1\n%s\n+\n%s\n", i, substr(h, p, 150), q > "b_1.fq"
    printf "@b%d/2\n%s\n+\n%s\n", i, substr(h, p + 200, 150), q > "b_2.fq" } }'
head -n 200 "$data/pairs_1.fq" > c.fq
printf '# three samples\nA\ta_1.fq\ta_2.fq\n\nB\tb_1.fq\tb_2.fq\nC\tc.fq\n' > list.tsv
[ "$(wc -l < b_1.fq)" -eq 1200 ] || { echo "Bail out! sample B was not made"; exit 1; }

# inputs and the list are the test's; everything else in the folder is an output
outputs() { ls | grep -v -e '^[abc]_' -e '^c\.fq$' -e '\.tsv$' -e '^idx.sbf$' -e '^human.seq$' -e '\.err$' -e '^single' | sort | tr '\n' ' '; }

# ---- every sample as a run of its own ----
"$SBF" filter -x idx.sbf --remove human --samples list.tsv -1 'f_{sample}_1.fq' -2 'f_{sample}_2.fq' \
  --json '{sample}.json' --stats > stdout 2> run.err
rc=$?
same=1
for s in A B C; do
  l=$(echo $s | tr ABC abc)
  if [ $s = C ]; then in=(c.fq); else in=(${l}_1.fq ${l}_2.fq); fi
  "$SBF" filter -x idx.sbf --remove human -1 single_1.fq -2 single_2.fq "${in[@]}" 2> single.err || same=0
  cmp -s single_1.fq f_${s}_1.fq && cmp -s single_2.fq f_${s}_2.fq || same=0
  grep -q "\"sample\": \"$s\"" $s.json || same=0
done
if [ $rc -eq 0 ] && [ $same = 1 ] && [ ! -s stdout ] &&
   [ "$(grep -c '^sbf filter: sample [ABC] ([123] of 3): ' run.err)" = 3 ] &&
   tail -n 1 run.err | grep -q '^sbf filter: 3 samples done in [0-9.]* s, the index opened once$' &&
   [ "$(outputs)" = "A.json B.json C.json f_A_1.fq f_A_2.fq f_B_1.fq f_B_2.fq f_C_1.fq f_C_2.fq stdout " ]; then
  ok "filter --samples: each sample's mates and JSON equal a run of its own"
else
  not_ok "filter --samples: each sample's mates and JSON equal a run of its own" "exit $rc, same $same" \
    "stderr: $(head -n 3 run.err)" "outputs: $(outputs)"
fi
# B's reads are human: all removed; A and C keep some
check "filter --samples: the samples' counts differ (B all human, A not)" \
  [ "$(grep -c . f_B_1.fq)" -eq 0 -a "$(grep -c . f_A_1.fq)" -gt 0 ]
check "filter --samples: the index opened once (--stats: 2 samples used the first one's)" \
  [ "$(grep -c 'opening (seconds): 1 index [0-9.]* (opened for an earlier sample)' run.err)" -eq 2 ]
rm -f f_* *.json run.err stdout

# classify --split: a category pattern with the sample in it
"$SBF" classify -x idx.sbf --samples list.tsv --split 's_{sample}_%.fq' 2> run.err
rc=$?
same=1
for s in A B; do
  l=$(echo $s | tr AB ab)
  rm -rf one && mkdir one
  "$SBF" classify -x idx.sbf --split "one/s_${s}_%.fq" ${l}_1.fq ${l}_2.fq 2> single.err || same=0
  for f in one/*; do cmp -s "$f" "$(basename "$f")" || same=0; done
done
rm -rf one
check "classify --samples --split: each sample's category files equal a run of its own" [ $rc -eq 0 -a $same = 1 ]
rm -f s_* run.err

# ---- refused before any sample runs: exit 1, one line, nothing written ----
refused() {   # NAME MESSAGE SBF-ARGS...
  local name=$1 msg=$2 before
  shift 2
  before=$(outputs)
  "$SBF" "$@" > stdout 2> run.err
  local rc=$?
  rm -f stdout
  if [ $rc -eq 1 ] && [ "$(head -n 1 run.err)" = "$msg" ] && [ "$(outputs)" = "$before" ]; then ok "$name"
  else not_ok "$name" "exit $rc (want 1)" "stderr: $(head -n 2 run.err)" "want: $msg" "new: $(outputs)"; fi
  rm -f run.err
}
refused "an output without {sample}" \
  "sbf filter: with --samples, -o 'out.fq' must contain {sample} (each sample writes its own; e.g. -o '{sample}.fq.gz')" \
  filter -x idx.sbf --samples list.tsv -o out.fq
refused "a summary without {sample}" \
  "sbf filter: with --samples, --summary 'all.tsv' must contain {sample} (each sample writes its own; e.g. --summary '{sample}.tsv')" \
  filter -x idx.sbf --samples list.tsv -o '{sample}.fq' --summary all.tsv
refused "no reads output (standard output would mix the samples)" \
  "sbf filter: with --samples, name each sample's reads output: -o '{sample}.fq.gz' (or -1/-2, --split)" \
  filter -x idx.sbf --samples list.tsv
refused "an input on the command line as well" \
  "sbf filter: --samples names the inputs: give no input on the command line ('a_1.fq')" \
  filter -x idx.sbf --samples list.tsv -o '{sample}.fq' a_1.fq
refused "--samples given twice" "sbf filter: --samples given twice: give it once" \
  filter -x idx.sbf --samples list.tsv --samples list.tsv -o '{sample}.fq'
bad_list() {   # NAME MESSAGE LIST-CONTENT
  printf "$3" > bad.tsv
  refused "$1" "$2" filter -x idx.sbf --samples bad.tsv -o '{sample}.fq'
}
bad_list "a line of one field" "sbf filter: bad.tsv, line 2: one field: want NAME<tab>INPUT[<tab>INPUT2]" 'A\ta_1.fq\nB b_1.fq\n'
bad_list "a line of four fields" "sbf filter: bad.tsv, line 1: more than three fields: want NAME<tab>INPUT[<tab>INPUT2]" 'A\ta_1.fq\ta_2.fq\tx\n'
bad_list "a name twice" "sbf filter: bad.tsv, line 3: sample 'A' is also on line 1" 'A\ta_1.fq\n#\nA\tc.fq\n'
bad_list "a name with a slash" \
  "sbf filter: bad.tsv, line 1: sample name 'x/A': letters, digits, '.', '_' and '-' only, not first '.' or '-'" 'x/A\ta_1.fq\n'
bad_list "a missing input on the last line (the first sample does not run)" \
  "sbf filter: bad.tsv, line 2: sample 'B': nosuch.fq: No such file or directory" 'A\ta_1.fq\ta_2.fq\nB\tnosuch.fq\n'
bad_list "standard input as an input" "sbf filter: bad.tsv, line 1: sample 'A': standard input ('-') cannot be a sample's input" 'A\t-\n'
bad_list "a list without a sample" "sbf filter: bad.tsv: no sample in the list" '# nothing\n\n'
refused "two inputs with --interleaved" \
  "sbf filter: list.tsv, line 2: sample 'A' has two inputs: --interleaved reads pairs from one" \
  filter -x idx.sbf --samples list.tsv --interleaved -o '{sample}.fq'
refused "a list that does not exist" \
  "sbf filter: nosuch.tsv: cannot open the sample list: No such file or directory" \
  filter -x idx.sbf --samples nosuch.tsv -o '{sample}.fq'
rm -f bad.tsv

# ---- a sample that fails: the earlier ones complete, its outputs absent, the later ones not run ----
head -n 398 b_2.fq > b_2cut.fq   # 99.5 records: the last one cut in its sequence line
printf 'A\ta_1.fq\ta_2.fq\nB\tb_1.fq\tb_2cut.fq\nC\tc.fq\n' > fail.tsv
"$SBF" filter -x idx.sbf --remove human --samples fail.tsv -o 'o_{sample}.fq' 2> run.err
rc=$?
"$SBF" filter -x idx.sbf --remove human -o single.fq a_1.fq a_2.fq 2> single.err
if [ $rc -eq 1 ] && cmp -s single.fq o_A.fq && [ "$(outputs)" = "o_A.fq " ] &&
   [ "$(tail -n 1 run.err)" = "sbf filter: sample 'B' (line 2 of fail.tsv) failed: 1 of 3 samples done; the later ones were not run" ] &&
   ! grep -q 'sample C' run.err; then
  ok "a sample that fails stops the command: A complete, B absent, C not run"
else
  not_ok "a sample that fails stops the command: A complete, B absent, C not run" "exit $rc" \
    "stderr: $(tail -n 3 run.err)" "outputs: $(outputs)"
fi
tap_end
