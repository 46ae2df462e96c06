#!/usr/bin/env bash
# rename.sh -- sbf classify/filter --rename: every written record is named by its fragment's
# number (1, 2, ... in input order; both mates alike), across batches, for FASTQ and BAM output,
# SAM and FASTQ input, tag, split and filter modes, on the workers' encoding path and the
# writer's; no original read name reaches any output; input with secondary or supplementary
# records is refused (one line, no output); the summaries say so.
# TAP-like output (tests/tap.sh). Run by `make check` or by hand: tests/rename.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
C=(--gpu none)
"$SBF" build "${C[@]}" -o idx.sbf human="$data/human_slice.fa.gz" lambda="$data/lambda.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
# 600 pairs, named after their source and position (names that must not leak)
for g in human lambda; do
  f=$data/${g}_slice.fa.gz; [ -e "$f" ] || f=$data/$g.fa.gz
  zcat "$f" | awk -v g=$g '/^>/ { next } { s = s $0 } END {
    q = sprintf("%100s", ""); gsub(/ /, "I", q)
    for (i = 0; i < 300; ++i) {
      m = substr(s, 1 + 90 * i, 100); r = ""
      for (j = 100; j > 0; --j) r = r substr("TGCA", index("ACGT", substr(m, j, 1)), 1)
      printf "@secret_%s_%d/1\n%s\n+\n%s\n", g, i, m, q > ("r1_" g ".fq")
      printf "@secret_%s_%d/2\n%s\n+\n%s\n", g, i, r, q > ("r2_" g ".fq") } }'
done
cat r1_human.fq r1_lambda.fq > r1.fq
cat r2_human.fq r2_lambda.fq > r2.fq
no_secret() { ! grep -q secret "$@"; }

"$SBF" classify "${C[@]}" -x idx.sbf --rename -K 4K --json j.json -o tag.fq r1.fq r2.fq 2> err
check "classify --rename, FASTQ pairs (batches of 4 kbp): exit 0" test $? -eq 0
check "... every name a number, mates alike: 1, 1, 2, 2, ... 600, 600" \
  bash -c "awk 'NR % 4 == 1 { print substr(\$1, 2) }' tag.fq | cmp -s - <(seq 600 | awk '{ print; print }')"
check "... no original name in the output" no_secret tag.fq
check "... the records are those of a run without --rename, names apart" \
  bash -c "'$SBF' classify --gpu none -x idx.sbf -o plain.fq r1.fq r2.fq 2> /dev/null &&
         cmp -s <(awk 'NR % 4 != 1' plain.fq) <(awk 'NR % 4 != 1' tag.fq) &&
         cmp -s <(awk 'NR % 4 == 1 { sub(/^@[^\t]*/, \"\"); print }' plain.fq) <(awk 'NR % 4 == 1 { sub(/^@[^\t]*/, \"\"); print }' tag.fq)"
check "... JSON \"renamed\": true, and stderr says so" \
  sh -c "grep -q '\"renamed\": true,' j.json && grep -q '^  names: replaced by fragment numbers (--rename)$' err"
SBF_NO_ENCODE=1 "$SBF" classify "${C[@]}" -x idx.sbf --rename -K 4K -o tag_writer.fq r1.fq r2.fq 2> /dev/null
check "... the writer's path: the same bytes as the workers'" cmp -s tag.fq tag_writer.fq

"$SBF" filter "${C[@]}" -x idx.sbf --rename --remove human -1 f1.fq -2 f2.fq r1.fq r2.fq 2> /dev/null
check "filter --rename -1/-2: the 300 lambda pairs, numbered as in the input (301..600), mates alike" \
  bash -c "awk 'NR % 4 == 1 { print substr(\$1, 2) }' f1.fq | cmp -s - <(seq 301 600) &&
         awk 'NR % 4 == 1 { print substr(\$1, 2) }' f2.fq | cmp -s - <(seq 301 600)"
check "... no original name in either file" no_secret f1.fq f2.fq

"$SBF" classify "${C[@]}" -x idx.sbf --rename --split 'sp_%.fq' r1.fq r2.fq 2> /dev/null
check "classify --rename --split: names are numbers, each fragment once over the files" \
  bash -c "cat sp_*.fq | awk 'NR % 4 == 1 { print substr(\$1, 2) }' | sort -n | uniq | cmp -s - <(seq 600)"
check "... no original name in any split file" no_secret sp_*.fq

samtools import -1 r1.fq -2 r2.fq -o in.bam 2> /dev/null
"$SBF" classify "${C[@]}" -x idx.sbf --rename -o out.bam in.bam 2> /dev/null
check "classify --rename, BAM in and out: 1200 records named 1..600, mates alike" \
  bash -c "samtools view out.bam | cut -f1 | cmp -s - <(seq 600 | awk '{ print; print }')"
check "... no original name in the BAM (records or header)" sh -c "! samtools view -h out.bam | grep -q secret"

# a secondary record: its name could not be numbered
samtools view -h in.bam | awk 'BEGIN { OFS = "\t" } /^@/ { print; next } { print; if (++n == 5) { $2 += 256; print } }' |
  samtools view -b -o sec.bam - 2> /dev/null
"$SBF" classify "${C[@]}" -x idx.sbf --rename -o sec_out.bam sec.bam > /dev/null 2> err
rc=$?
if [ $rc -eq 1 ] && [ "$(cat err)" = "sbf classify: --rename: sec.bam holds secondary or supplementary records, whose names would be written unchanged: leave them out first (samtools view -F 0x900)" ] && [ ! -e sec_out.bam ]; then
  ok "--rename with a secondary record: refused, one line, no output"
else not_ok "--rename with a secondary record: refused, one line, no output" "exit $rc" "$(head -3 err)" "$(ls sec_out* 2> /dev/null)"; fi
"$SBF" classify "${C[@]}" -x idx.sbf -o nosec.bam sec.bam 2> /dev/null
check "... without --rename the same input is tagged (the secondary record kept)" \
  test "$(samtools view -c nosec.bam)" -eq 1201

tap_end
