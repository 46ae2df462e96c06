#!/usr/bin/env bash
# screen.sh -- end-to-end tests of read screening (`sbf classify`, `sbf filter`) on real genome
# slices (tests/data/*_slice.fa.gz, lambda) and reads simulated from them with wgsim: accuracy,
# record preservation in BAM/CRAM/FASTQ, order, pairs, split outputs, summaries, errors.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/screen.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
for tool in samtools wgsim bgzip; do
  command -v $tool > /dev/null || { echo "Bail out! $tool is needed (apt-get install samtools tabix)"; exit 1; }
done
cd "$work" || exit 1

# ---- data: an index of four real genomes, reads of known origin --------------------------------
"$SBF" build -@ 2 -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" \
  saureus="$data/saureus_slice.fa.gz" lambda="$data/lambda.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
for g in human_slice ecoli_slice saureus_slice lambda; do
  zcat "$data/$g.fa.gz" > $g.fa
  wgsim -N 150 -1 100 -2 100 -e 0.005 -r 0.001 -S 7 $g.fa ${g}_1.fq ${g}_2.fq > /dev/null 2>&1
done
# random reads belong to no target
awk 'BEGIN { srand(3); for (i = 0; i < 50; ++i) { s = ""; for (j = 0; j < 100; ++j) s = s substr("ACGT", int(rand() * 4) + 1, 1);
       q = sprintf("%100s", ""); gsub(/ /, "I", q); for (m = 1; m <= 2; ++m) printf "@random_%d/%d\n%s\n+\n%s\n", i, m, s, q > ("random_" m ".fq") } }'
cat human_slice_1.fq ecoli_slice_1.fq saureus_slice_1.fq lambda_1.fq random_1.fq > r1.fq
cat human_slice_2.fq ecoli_slice_2.fq saureus_slice_2.fq lambda_2.fq random_2.fq > r2.fq
total_pairs=650

# truth: the genome the read came from (wgsim names reads after the contig)
truth() { awk 'NR % 4 == 1 { split(substr($1, 2), a, "_"); t = a[1]; if (t == "random") t = "none"; print t }' "$1"; }
# category: the sb tag of a FASTQ comment
category() { awk 'NR % 4 == 1 { for (i = 2; i <= NF; ++i) if ($i ~ /^sb:Z:/) print substr($i, 6) }' "$1"; }

# ---- classification of simulated reads ------------------------------------------------------------
"$SBF" classify -x idx.sbf -o tagged_1.fq -1 tagged_1.fq -2 tagged_2.fq r1.fq r2.fq 2> err > /dev/null
check "-o with -1/-2 is refused" grep -q -- "-o cannot be used with -1 and -2" err
"$SBF" classify -x idx.sbf -1 tagged_1.fq -2 tagged_2.fq --summary s.tsv --json s.json r1.fq r2.fq 2> err
check "classify pairs from two files: exit 0" test $? -eq 0
paste <(truth r1.fq) <(category tagged_1.fq) > truth_vs_call
right=$(awk '$1 == $2' truth_vs_call | wc -l)
wrong=$(awk '$2 != "none" && $2 != "multi" && $1 != $2' truth_vs_call | wc -l)
check "at least 97% of pairs in the right category ($right of $total_pairs)" test "$right" -ge $((total_pairs * 97 / 100))
check "no pair assigned to a wrong target ($wrong)" test "$wrong" -eq 0
check "random pairs are 'none'" test "$(awk '$1 == "none" && $2 != "none"' truth_vs_call | wc -l)" -eq 0
check "mates always share a category" cmp -s <(category tagged_1.fq) <(category tagged_2.fq)
check "records and order kept (names, sequences, qualities)" \
  cmp -s <(awk 'NR % 4 == 1 { print $1 } NR % 4 != 1' tagged_1.fq) <(awk 'NR % 4 == 1 { print $1 } NR % 4 != 1' r1.fq)
sum_tsv=$(awk 'NR > 1 && ($1 == "multiMatch" || $1 == "noMatch") { s += $2 } END { print s }' s.tsv)
sum_tsv=$((sum_tsv + $(awk 'NR > 1 && $1 != "multiMatch" && $1 != "noMatch" { s += $2 - $4 } END { print s }' s.tsv)))
check "summary TSV: categories add up to the $total_pairs pairs" test "$sum_tsv" -eq $total_pairs
check "summary TSV header is BioBloom's" test "$(head -n 1 s.tsv)" = "$(printf 'filter_id\thits\tmisses\tshared\trate_hit\trate_miss\trate_shared')"
check "JSON: pairs in = pairs out = $total_pairs" grep -q "\"in\": {\"pairs\": $total_pairs, \"reads\": $((2 * total_pairs))" s.json
check "JSON: unit and output stated" grep -q "\"out\": {\"pairs\": $total_pairs" s.json
check "stderr summary names the unit" grep -q "^sbf classify: $total_pairs pairs" err

# ---- compressed input with decompression threads: BGZF (parallel) and plain gzip ---------------
bgzip -c r1.fq > r1.fq.gz && gzip -c r2.fq > r2.fq.gz
"$SBF" classify -x idx.sbf -@ 3 -1 z_1.fq.gz -2 z_2.fq.gz r1.fq.gz r2.fq.gz 2> err
check "BGZF + gzip input, -@ 3, BGZF output: exit 0" test $? -eq 0
check "... same records as from plain files" cmp -s <(zcat z_1.fq.gz) tagged_1.fq
check "... output is BGZF" test "$(head -c 4 z_2.fq.gz | od -An -tx1 | tr -d ' ')" = 1f8b0804

# ---- the same pairs interleaved, from stdin to stdout ---------------------------------------------
paste -d '\n' <(paste - - - - < r1.fq) <(paste - - - - < r2.fq) | tr '\t' '\n' > inter.fq
cat inter.fq | "$SBF" classify -x idx.sbf --interleaved - > inter_tagged.fq 2> err
check "interleaved FASTQ from stdin: exit 0" test $? -eq 0 || cat err
check "interleaved gives the pairs' categories" cmp -s <(category inter_tagged.fq | awk 'NR % 2') <(category tagged_1.fq)
head -n 4 inter.fq > odd.fq
"$SBF" classify -x idx.sbf --interleaved odd.fq > odd_out.fq 2> err
check "interleaved input with an odd record count fails" test $? -eq 1
check "... naming the mateless record" grep -q "has no mate" err

# ---- mismatched mate files ------------------------------------------------------------------------
sed '1s/.*/@not_the_same_name/' r2.fq > r2_bad.fq
"$SBF" classify -x idx.sbf -o bad.fq r1.fq r2_bad.fq 2> err
check "mismatched mate names: exit 1" test $? -eq 1
check "... error names both records" grep -q "mate names differ at pair 1: '.*' in r1.fq and 'not_the_same_name' in r2_bad.fq" err
check "... and no output is left" test ! -e bad.fq
head -n 8 r2.fq > r2_short.fq
"$SBF" classify -x idx.sbf -o bad.fq r1.fq r2_short.fq 2> err
check "mate files of different lengths: exit 1 and an error" grep -q "mate files hold different numbers of reads" err

# ---- BAM in, BAM out: every record and field kept --------------------------------------------------
samtools import -1 r1.fq -2 r2.fq -o in.bam 2> /dev/null
# a secondary alignment record must pass through untagged and uncounted
samtools view -h in.bam | awk 'BEGIN { OFS = "\t" } /^@/ { print; next } { print; if (NR == 10) { $2 = $2 + 256; print } }' |
  samtools view -b -o in2.bam - 2> /dev/null
"$SBF" classify -x idx.sbf --json b.json -o out.bam in2.bam 2> err
check "BAM -> BAM: exit 0" test $? -eq 0
strip_tags() { samtools view "$1" | sed -E 's/\t(sb:Z|ss:f):[^\t]*//g'; }
check "every record and field kept, in order, apart from the tags" \
  test "$(samtools view -c in2.bam)" -eq $((2 * total_pairs + 1)) -a "$(strip_tags out.bam | md5sum)" = "$(samtools view in2.bam | md5sum)"
check "header kept, @PG added" test "$(samtools view -H out.bam | grep -c '^@PG.*ID:sbf')" -eq 1
check "@PG's CL is the command as typed" \
  test "$(samtools view -H out.bam | grep '^@PG.*ID:sbf' | grep -o 'CL:.*')" = "CL:sbf classify -x idx.sbf --json b.json -o out.bam in2.bam"
check "the secondary record is passed through untagged" \
  test "$(samtools view -f 256 out.bam | grep -c 'sb:Z')" -eq 0 -a "$(samtools view -c -f 256 out.bam)" -eq 1
check "secondary not counted: $total_pairs fragments" grep -q "\"in\": {\"fragments\": $total_pairs, \"reads\": $((2 * total_pairs))" b.json
check "BAM categories equal the FASTQ run's" cmp -s <(samtools view -F 256 -f 64 out.bam | grep -o 'sb:Z:[^[:space:]]*' | cut -c6-) <(category tagged_1.fq)
n_human=$(category tagged_1.fq | grep -c '^human$')
check "samtools view -d sb:human selects the human reads" test "$(samtools view -c -d sb:human out.bam)" -eq $((2 * n_human))
"$SBF" classify -x idx.sbf --no-PG --hits --tags XC,XS,XH -O sam in.bam > out.sam 2> err
check "--no-PG, --hits and --tags" test "$(grep -c '^@PG.*ID:sbf' out.sam)" -eq 0 -a "$(grep -v '^@' out.sam | grep -c 'XC:Z:.*XS:f:.*XH:B:I,')" -eq $((2 * total_pairs))

# mate files of two formats (BAM + FASTQ): the engine gets 4-bit codes and text in one batch
samtools import -0 r1.fq -o m1.bam 2> /dev/null
"$SBF" classify -x idx.sbf -O fastq m1.bam r2.fq 2> /dev/null > mixed.fq
check "BAM mate 1 + FASTQ mate 2 score like two FASTQ files" cmp -s <(category mixed.fq | awk 'NR % 2') <(category tagged_1.fq)

# ---- CRAM with its reference -----------------------------------------------------------------------
cat human_slice.fa ecoli_slice.fa > ref.fa && samtools faidx ref.fa
# reads placed where they come from: exact slices of the references, mapped records
awk 'BEGIN { OFS = "\t"; print "@HD\tVN:1.6\tSO:coordinate" }
     /^>/ { name = substr($1, 2); next } { seq[name] = seq[name] $0 }
     END { n = 0; for (c in seq) print "@SQ", "SN:" c, "LN:" length(seq[c]) > "/dev/stderr";
           for (c in seq) for (p = 1; p + 100 <= length(seq[c]); p += 997)
             print "m" n++, 0, c, p, 60, "100M", "*", 0, 0, substr(seq[c], p, 100), "*" }' ref.fa > body.sam 2> sq.sam
sort -k3,3 -k4,4n body.sam > body_sorted.sam
(echo -e "@HD\tVN:1.6\tSO:coordinate"; sort sq.sam; cat body_sorted.sam) | samtools view -C -T ref.fa -o in.cram - 2> /dev/null
"$SBF" classify -x idx.sbf -T ref.fa -o out.cram --write-index in.cram 2> err
check "CRAM -> CRAM with -T: exit 0" test $? -eq 0 || cat err
check "CRAM output decodes with the reference and keeps every record" \
  cmp -s <(samtools view -T ref.fa out.cram | sed -E 's/\t(sb:Z|ss:f):[^\t]*//g') <(samtools view -T ref.fa in.cram)
check "--write-index wrote out.cram.crai" test -s out.cram.crai
check "mapped human reads are tagged human" \
  test "$(samtools view -T ref.fa out.cram | awk '$3 ~ /^human/ && !/sb:Z:human/' | wc -l)" -eq 0

# ---- split mode ------------------------------------------------------------------------------------
mkdir split
"$SBF" classify -x idx.sbf --split 'split/s_%_#.fq.gz' r1.fq r2.fq 2> err
check "split: exit 0" test $? -eq 0
check "split: one file per category and mate" test "$(ls split | wc -l)" -eq 12
check "split: the human file holds the human pairs" test "$(zcat split/s_human_1.fq.gz | awk 'NR % 4 == 1' | wc -l)" -eq "$n_human"
check "split: every record in the file of its category" \
  test "$(for f in split/*_1.fq.gz; do c=${f#split/s_}; c=${c%_1.fq.gz}; zcat "$f" | category /dev/stdin | grep -vcx "$c"; done | awk '{ s += $1 } END { print s }')" -eq 0
check "split: all pairs written once" test "$(zcat split/*_2.fq.gz | awk 'NR % 4 == 1' | wc -l)" -eq $total_pairs
# hostile target names cannot write outside the pattern's folder or hide there ('/' cannot be
# given on the command line: it would be read as part of a path)
"$SBF" build -o evil.sbf "..=$data/lambda.fa.gz" $'tab\there'"=$data/ecoli_slice.fa.gz" ".hidden=$data/saureus_slice.fa.gz" 2> /dev/null
mkdir -p deep/split2
(cd deep && "$SBF" classify -x ../evil.sbf --split 'split2/%.fq' ../lambda_1.fq 2> ../err)
check "split: target names '..', '.hidden' and one with a tab become safe file names" \
  test "$(cd deep/split2 && ls -A | sort | tr '\n' ' ')" = "_..fq _hidden.fq multi.fq none.fq tab_here.fq " -a ! -e deep/split2.fq
check "split: the lambda reads are in the file of target '..'" test "$(awk 'NR % 4 == 1' deep/split2/_..fq | wc -l)" -ge 140
"$SBF" classify -x idx.sbf --split 'split/x_#.fq' r1.fq 2> err
check "split pattern without % is refused" grep -q "has no %" err

# ---- filter mode (host removal) --------------------------------------------------------------------
"$SBF" filter -x idx.sbf --remove human -1 f_1.fq -2 f_2.fq --json f.json r1.fq r2.fq 2> err
check "filter --remove human: exit 0" test $? -eq 0
kept=$(awk 'NR % 4 == 1' f_1.fq | wc -l)
check "filter: $((total_pairs - n_human)) pairs kept" test "$kept" -eq $((total_pairs - n_human))
check "filter: mates stay in sync" cmp -s <(awk 'NR % 4 == 1 { sub(/\/1$/, "", $1); print $1 }' f_1.fq) <(awk 'NR % 4 == 1 { sub(/\/2$/, "", $1); print $1 }' f_2.fq)
check "filter: output untagged and unchanged" test "$(grep -c 'sb:Z' f_1.fq)" -eq 0
"$SBF" filter -x idx.sbf --remove human --invert r1.fq r2.fq 2> /dev/null > inv.fq
check "filter --invert: the human pairs, interleaved" test "$(awk 'NR % 4 == 1' inv.fq | wc -l)" -eq $((2 * n_human))
"$SBF" filter -x idx.sbf r1.fq r2.fq 2> /dev/null > all.fq
check "filter with no list removes every target" test "$(awk 'NR % 4 == 1' all.fq | wc -l)" -eq $((2 * $(category tagged_1.fq | grep -cE '^(none)$')))
"$SBF" filter -x idx.sbf --remove mouse r1.fq 2> err > /dev/null
check "filter: unknown target named with the list of targets" grep -q "no target 'mouse' in idx.sbf (targets: human, ecoli, saureus, lambda)" err

# ---- sbf categorize: biobloomcategorizer's options and file names ---------------------------------
mkdir cat && "$SBF" categorize -p cat/run -f idx.sbf -e --fq r1.fq r2.fq 2> err
check "categorize -e --fq: exit 0" test $? -eq 0
check "categorize: BioBloom's file names" test "$(cd cat && ls | tr '\n' ' ')" = \
  "run_ecoli_1.fq run_ecoli_2.fq run_human_1.fq run_human_2.fq run_lambda_1.fq run_lambda_2.fq run_multiMatch_1.fq run_multiMatch_2.fq run_noMatch_1.fq run_noMatch_2.fq run_saureus_1.fq run_saureus_2.fq run_summary.tsv "
check "categorize: every pair written once, mates in sync" \
  test "$(cat cat/*_1.fq | awk 'NR % 4 == 1' | wc -l)" -eq $total_pairs -a "$(cat cat/*_2.fq | awk 'NR % 4 == 1' | sed 's,/2$,,' | sort | md5sum)" = "$(cat cat/*_1.fq | awk 'NR % 4 == 1' | sed 's,/1$,,' | sort | md5sum)"
check "categorize: reads unchanged (no tags)" test "$(cat cat/*_1.fq | grep -c 'sb:Z:')" -eq 0
check "categorize: summary rows multiMatch and noMatch, counts add up" \
  test "$(awk '$1 == "multiMatch" || $1 == "noMatch" { s += $2 } $1 != "filter_id" && $1 != "multiMatch" && $1 != "noMatch" { s += $2 - $4 } END { print s }' cat/run_summary.tsv)" -eq $total_pairs
check "categorize: the human file holds the human pairs" test "$(awk 'NR % 4 == 1' cat/run_human_1.fq | grep -vc '^@human')" -eq 0 -a "$(awk 'NR % 4 == 1' cat/run_human_1.fq | wc -l)" -ge 145
hits_of() { awk -v t="$2" '$1 == t { print $2 }' "$1"; }
"$SBF" categorize -p cat/incl -f idx.sbf -e -i r1.fq r2.fq 2> /dev/null
check "categorize -i (either mate) matches at least as many pairs" test "$(hits_of cat/incl_summary.tsv lambda)" -ge "$(hits_of cat/run_summary.tsv lambda)"
check "categorize without --fq/--fa writes the summary only" test ! -e cat/incl_lambda_1.fq -a -s cat/incl_summary.tsv
"$SBF" build -o h.sbf human="$data/human_slice.fa.gz" 2> /dev/null && "$SBF" build -o e.sbf ecoli="$data/ecoli_slice.fa.gz" \
  saureus="$data/saureus_slice.fa.gz" lambda="$data/lambda.fa.gz" 2> /dev/null
"$SBF" categorize -p cat/two -f "h.sbf e.sbf" -e r1.fq r2.fq 2> /dev/null
check "categorize -f with two index files gives the one index's summary" cmp -s <(cut -f1-4 cat/two_summary.tsv) <(cut -f1-4 cat/run_summary.tsv)
"$SBF" categorize -p cat/gz -f idx.sbf -g --fa -s 40 r1.fq 2> /dev/null
check "categorize -g --fa -s 40 (bases): gzip FASTA outputs" test "$(zcat cat/gz_lambda.fa.gz | grep -c '^>')" -ge 140
"$SBF" categorize -f idx.sbf r1.fq r2.fq 2> err
check "categorize: two files without -e are refused" grep -q "two inputs are mates: add -e" err

# ---- --stats: stage timings, then the limiting stage in words ---------------------------------------
"$SBF" classify -x idx.sbf --gpu none --stats -o st.bam in2.bam 2> st.err
check "--stats: stage timings with the engine's busy share" grep -q "^sbf classify: stages (seconds): reading [0-9.]* (CPU [0-9.]*), CPU engine [0-9.]* (busy [0-9]*%), waiting for the engine [0-9.]*, queries [0-9.]* (in the engine [0-9.]*, masking and the rest -\{0,1\}[0-9.]*), scoring [0-9.]* and encoding [0-9.]* (seconds of [1-9][0-9]* workers\{0,1\}), writing [0-9.]* (CPU [0-9.]*; writer idle" st.err
check "--stats: the limiting stage named, with a remedy" grep -Eq "^sbf classify: limit: (reading|the engine|writing) \(busy [0-9]+% of the run\); " st.err
# the CUDA driver's start, which a GPU run waits for before its reader starts: said unless --gpu none
check "--stats: --gpu none counts no GPUs" test -s st.err -a "$(grep -c "GPUs counted" st.err)" = 0
"$SBF" classify -x idx.sbf --stats -o st_auto.bam in2.bam 2> st_auto.err
check "--stats: the GPUs' count timed when a GPU may be used" grep -q "^sbf classify: opening (seconds): 1 index [0-9.]* (filters verified: [0-9] now, [0-9] by an earlier run), GPUs counted in [0-9.]*" st_auto.err
# the pools' threads found by their names: -@ 8 starts 8 output threads and 8/2 input threads
"$SBF" classify -x idx.sbf --gpu none -@ 8 --stats -o st8.bam in2.bam 2> st8.err
check "--stats: CPU seconds of each pool, its threads counted" grep -Eq "^sbf classify: CPU \(seconds\): [0-9.]+ in all; output pool [0-9.]+ \(8 threads\), input pool [0-9.]+ \(4 threads\), reader [0-9.]+, writer [0-9.]+, query helpers [0-9.]+ \([1-9][0-9]* threads?, [0-9]+% of their blocks of reads for other workers' batches\), the rest" st8.err

# ---- records encoded by the engine workers (the GPU path; SBF_ENCODE=1 forces it on the CPU
# engine) are byte for byte those the writer formats itself -------------------------------------
# (out.bam is tagged already: its tags are replaced, not appended, on both paths)
for spec in "enc.bam:in2.bam" "enc.fq.gz:r1.fq r2.fq" "enc.fq:r1.fq r2.fq" "enc.bam:r1.fq r2.fq" "enc.bam:out.bam"; do
  out=${spec%%:*} ins=${spec#*:}
  # enc.bam is written twice in this loop: a run that fails (and so skips the other) must not
  # leave the previous pass's files to compare
  rm -f "$out" "old_$out"
  SBF_ENCODE=1 "$SBF" classify -x idx.sbf -K 20K --hits --no-PG -@ 3 -o "$out" $ins 2> /dev/null &&
    "$SBF" classify -x idx.sbf -K 20K --hits --no-PG -@ 3 -o "old_$out" $ins 2> /dev/null
  check "records encoded by the workers: $ins -> $out, the same bytes" cmp -s "$out" "old_$out"
done
SBF_ENCODE=1 "$SBF" filter -x idx.sbf -K 20K --remove human -1 e_1.fq -2 e_2.fq r1.fq r2.fq 2> /dev/null &&
  "$SBF" filter -x idx.sbf -K 20K --remove human -1 o_1.fq -2 o_2.fq r1.fq r2.fq 2> /dev/null
check "filter with encoded records: the same two mate files" sh -c 'cmp -s e_1.fq o_1.fq && cmp -s e_2.fq o_2.fq && test -s e_1.fq'
SBF_ENCODE=1 "$SBF" classify -x idx.sbf -K 20K --no-PG --split 'e_%.bam' r1.fq r2.fq 2> /dev/null &&
  "$SBF" classify -x idx.sbf -K 20K --no-PG --split 'o_%.bam' r1.fq r2.fq 2> /dev/null
check "split with encoded records: the same files" sh -c 'for f in e_*.bam; do cmp -s "$f" "o_${f#e_}" || exit 1; done'

# ---- the CPU engine's workers (2 from -@ 8, 4 from -@ 16; small batches, so each has many)
# give -@ 1's bytes: BAM with hit tags, both mates of a filter, the JSON's counts ----------------
"$SBF" classify --gpu none -x idx.sbf -K 20K --hits --no-PG --json w1.json -o w1.bam r1.fq r2.fq 2> /dev/null &&
  "$SBF" filter --gpu none -x idx.sbf -K 20K --remove human -1 w1_1.fq -2 w1_2.fq r1.fq r2.fq 2> /dev/null
check "CPU engine, one worker: classify and filter ran" test $? -eq 0 -a -s w1.bam -a -s w1_1.fq
for t in 8 16; do
  w=$((t / 4))
  "$SBF" classify --gpu none -x idx.sbf -@ $t -K 20K --hits --no-PG --json w$t.json -o w$t.bam r1.fq r2.fq 2> w$t.err
  check "CPU engine, -@ $t: classify exit 0, $w workers named" \
    sh -c "test $? -eq 0 && grep -q 'engine CPU, $t threads in $w workers' w$t.err && grep -q '\"engine\": \"CPU, $t threads in $w workers' w$t.json"
  check "CPU engine, -@ $t ($w workers): BAM records those of one worker" \
    cmp -s <(samtools view w1.bam) <(samtools view w$t.bam)
  check "CPU engine, -@ $t ($w workers): the JSON's counts those of one worker" \
    cmp -s <(grep -v '"seconds"\|"reads_per_second"\|"engine"\|"data"' w1.json) \
           <(grep -v '"seconds"\|"reads_per_second"\|"engine"\|"data"' w$t.json)
  "$SBF" filter --gpu none -x idx.sbf -@ $t -K 20K --remove human -1 w${t}_1.fq -2 w${t}_2.fq r1.fq r2.fq 2> /dev/null
  check "CPU engine, -@ $t ($w workers): filter exit 0, both mate files those of one worker" \
    sh -c "test $? -eq 0 && cmp -s w1_1.fq w${t}_1.fq && cmp -s w1_2.fq w${t}_2.fq"
done

# ---- GPUs expected (the NVIDIA driver's device node there; SBF_EXPECT_GPU=1 says so anywhere):
# the engine opens with a GPU's workers, which answer on the CPU engine until the devices are
# counted; without a GPU they answer every read so. The bytes of one CPU worker either way -----
SBF_EXPECT_GPU=1 "$SBF" filter -x idx.sbf -@ 8 -K 20K --remove human --json x.json -1 x_1.fq -2 x_2.fq r1.fq r2.fq 2> x.err
check "GPUs expected: filter exit 0, both mate files those of one CPU worker" \
  sh -c "test $? -eq 0 && cmp -s w1_1.fq x_1.fq && cmp -s w1_2.fq x_2.fq"
check "GPUs expected: the switch said on stderr and in the JSON" \
  sh -c "grep -q 'notice: SBF_EXPECT_GPU is set' x.err && grep -q '\"test_switches\": \[\"SBF_EXPECT_GPU\"\]' x.json"
if ! "$SBF" --version 2> /dev/null | grep -q '^GPU 0:'; then
  check "GPUs expected, none there: the CPU engine in the GPU's 6 workers" grep -q 'engine CPU, 8 threads in 6 workers' x.err
fi

# ---- GPU and CPU engines give identical outputs (skipped without a GPU) ---------------------------
# Each comparison proves that both engines ran (exit 0, and the engine named in the --json
# summary) and that there was something to compare (non-empty outputs), then compares every
# output file (both mates, every split file).
# ran NAME JSON WANT_ENGINE STATUS: the run exited 0 and its JSON names the engine (CPU or GPU)
ran() {
  if [ "$4" -ne 0 ]; then not_ok "$1" "exit status $4"; return 1; fi
  local e; e=$(sed -n 's/.*"engine": "\([A-Z]*\).*/\1/p' "$2" 2> /dev/null)
  if [ "$e" != "$3" ]; then not_ok "$1" "engine '$e' in $2, expected $3"; return 1; fi
}
# same_files NAME A B...: pairs of files, every one non-empty, each pair equal
same_files() {
  local name=$1; shift
  while [ $# -ge 2 ]; do
    if [ ! -s "$1" ] || [ ! -s "$2" ]; then not_ok "$name" "$1 or $2 is empty or missing"; return; fi
    if ! cmp -s "$1" "$2"; then not_ok "$name" "$1 and $2 differ"; return; fi
    shift 2
  done
  ok "$name"
}
gpu_cases=("BAM classified on the GPU equals the CPU's, record for record" "filter on the GPU equals the CPU's (both mates)"
  "GPU: BAM records encoded by the workers, the same bytes" "GPU: FASTQ (BGZF) encoded by the workers, the same bytes"
  "GPU: split outputs encoded by the workers, the same bytes")
if "$SBF" --version | grep -q '^GPU 0:'; then
  "$SBF" classify -x idx.sbf --gpu none --hits --no-PG --json cpu.json -o cpu.bam in2.bam 2> /dev/null; c=$?
  "$SBF" classify -x idx.sbf --gpu 0 --hits --no-PG --json gpu.json -o gpu.bam in2.bam 2> gpu.err; g=$?
  if ran "${gpu_cases[0]}" cpu.json CPU $c && ran "${gpu_cases[0]}" gpu.json GPU $g; then
    samtools view cpu.bam > cpu.sam && samtools view gpu.bam > gpu.sam
    same_files "${gpu_cases[0]}" cpu.sam gpu.sam
  fi
  "$SBF" filter -x idx.sbf --gpu 0 --json g.json --remove human -1 g_1.fq -2 g_2.fq r1.fq r2.fq 2> /dev/null; g=$?
  "$SBF" filter -x idx.sbf --gpu none --json c.json --remove human -1 c_1.fq -2 c_2.fq r1.fq r2.fq 2> /dev/null; c=$?
  ran "${gpu_cases[1]}" c.json CPU $c && ran "${gpu_cases[1]}" g.json GPU $g &&
    same_files "${gpu_cases[1]}" c_1.fq g_1.fq c_2.fq g_2.fq
  # on a GPU the workers encode the records for the writer: the files are byte for byte those
  # of the writer's own formatting (SBF_NO_ENCODE=1), small batches so there are many
  "$SBF" classify -x idx.sbf --gpu 0 -K 20K --hits --no-PG --json e.json -o enc.bam in2.bam 2> /dev/null; g=$?
  SBF_NO_ENCODE=1 "$SBF" classify -x idx.sbf --gpu 0 -K 20K --hits --no-PG --json o.json -o old.bam in2.bam 2> /dev/null; c=$?
  ran "${gpu_cases[2]}" e.json GPU $g && ran "${gpu_cases[2]}" o.json GPU $c && same_files "${gpu_cases[2]}" enc.bam old.bam
  "$SBF" classify -x idx.sbf --gpu 0 -K 20K --json e.json -o enc.fq.gz r1.fq r2.fq 2> /dev/null; g=$?
  SBF_NO_ENCODE=1 "$SBF" classify -x idx.sbf --gpu 0 -K 20K --json o.json -o old.fq.gz r1.fq r2.fq 2> /dev/null; c=$?
  ran "${gpu_cases[3]}" e.json GPU $g && ran "${gpu_cases[3]}" o.json GPU $c && same_files "${gpu_cases[3]}" enc.fq.gz old.fq.gz
  "$SBF" classify -x idx.sbf --gpu 0 -K 20K --no-PG --json e.json --split 'enc_%.bam' r1.fq r2.fq 2> /dev/null; g=$?
  SBF_NO_ENCODE=1 "$SBF" classify -x idx.sbf --gpu 0 -K 20K --no-PG --json o.json --split 'old_%.bam' r1.fq r2.fq 2> /dev/null; c=$?
  pairs=(); for f in enc_*.bam; do pairs+=("$f" "old_${f#enc_}"); done
  ran "${gpu_cases[4]}" e.json GPU $g && ran "${gpu_cases[4]}" o.json GPU $c && same_files "${gpu_cases[4]}" "${pairs[@]}"
else
  for name in "${gpu_cases[@]}"; do skip "$name" "no GPU"; done
fi

# ---- outputs are complete or absent -----------------------------------------------------------------
"$SBF" classify -x idx.sbf -o r1.fq r1.fq 2> err
check "output equal to the input is refused" grep -q "r1.fq is an input" err
check "... and the input is intact" test "$(wc -l < r1.fq)" -eq $((4 * total_pairs))
printf '@x\nACGT\n+\nII\n' > badq.fq
"$SBF" classify -x idx.sbf -o bad.bam badq.fq 2> err
check "FASTQ with a quality length mismatch: exit 1, message, no output" \
  test $? -eq 1 -a ! -e bad.bam -a "$(grep -c "badq.fq: record 'x': quality and sequence lengths differ" err)" -eq 1
check "no temporary file left behind" test "$(ls | grep -c '\.tmp\.')" -eq 0

tap_end
