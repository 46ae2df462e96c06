#!/usr/bin/env bash
# reference.sh -- sbf's filters against an independent reference implementation
# (tests/reference_filter.c, written from doc/format.md and the comments of filters/sbf_kmer.h,
# sharing no code with sbf): indexes of real genomes built by `sbf build` at the defaults and at
# other parameter sets must hold, byte for byte, the filter arrays the reference computes, with
# the header and metadata the format describes (k-mers of a DUST score of 50 or more left out,
# the default, or of --dust N; version 4: each target's filter lies in columns
# of a panel; the panels must be those the rule of doc/format.md "Panels" forms, and every panel's
# whole array, unused columns zero, must equal the reference's); the long-read layer the same
# way (k 21, 8 bits per k-mer, the adapters listed in filters/sbf_adapters.c left out, counted
# in each target's masked k-mers); and every k-mer of a real genome
# (both strands) must test present, through the panel layout, in the index `sbf build` made of it
# (no false negatives).
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/reference.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
testbin=${testbin:-$(dirname "$SBF")/tests}
ref=$testbin/reference_filter
if [ ! -x "$ref" ]; then # by hand, without make check: compile it
  ref=$work/reference_filter
  ${CC:-cc} -std=gnu11 -O2 -o "$ref" "$srcdir/reference_filter.c" -lm ||
    { echo "Bail out! cannot compile $srcdir/reference_filter.c"; exit 1; }
fi
cd "$work" || exit 1

# ---- genomes: the real slices, and one with what real files have besides ACGT ------------------
for g in human_slice ecoli_slice saureus_slice lambda; do zcat "$data/$g.fa.gz" > $g.fa; done
# mixed.fa, from lambda: lower case, N runs, IUPAC codes (R, y, n), RNA (U), 61/70/80-column lines,
# a record shorter than k, one of exactly k, an empty one, homopolymer and tandem repeats
awk 'NR > 1 { s = s $0 } END {
  r1 = substr(s, 1, 3000); r1 = substr(r1, 1, 199) tolower(substr(r1, 200, 500)) substr(r1, 700)
  r1 = substr(r1, 1, 999) "NNNNN" substr(r1, 1005); r1 = substr(r1, 1, 1499) "R" substr(r1, 1501)
  r1 = substr(r1, 1, 1799) "y" substr(r1, 1801)
  r2 = substr(s, 3001, 2000); gsub(/T/, "U", r2); r2 = substr(r2, 1, 50) "n" substr(r2, 52)
  r6 = sprintf("%48s", ""); gsub(/ /, "A", r6); for (i = 0; i < 18; ++i) r6 = r6 "AC"; for (i = 0; i < 9; ++i) r6 = r6 "AGG"
  r6 = r6 substr(s, 6001, 500)
  print ">r1 mixed case, N, IUPAC"; for (i = 1; i <= length(r1); i += 70) print substr(r1, i, 70)
  print ">r2 RNA"; for (i = 1; i <= length(r2); i += 61) print substr(r2, i, 61)
  print ">r3 shorter than k\n" substr(s, 5001, 20) "\n>r4 one 31-mer\n" substr(s, 5101, 31) "\n>r5 empty"
  print ">r6 low complexity"; for (i = 1; i <= length(r6); i += 80) print substr(r6, i, 80)
}' lambda.fa > mixed.fa
sed 's/$/\r/' mixed.fa > mixed_crlf.fa # Windows line ends
if ! grep -q '[acgtn]' mixed.fa || ! grep -q N mixed.fa || ! grep -q U mixed.fa; then
  echo "Bail out! mixed.fa lacks lower case, N or U"; exit 1
fi
# pieces of lambda of a few hundred bases and one of 40 (a single shard): small targets that form
# a panel of their own, away from the slices, and one that joins no panel (a plain one)
awk 'NR > 1 { s = s $0 } END {
  print ">t1" > "tiny.fa"; print substr(s, 1, 300) > "tiny.fa"; print ">t2" > "tiny.fa"; print substr(s, 1001, 330) > "tiny.fa"
  print ">u" > "tiny2.fa"; print substr(s, 2001, 120) > "tiny2.fa"
  print ">w" > "wee.fa"; print substr(s, 3001, 40) > "wee.fa"
}' lambda.fa
slices=(human=human_slice.fa ecoli=ecoli_slice.fa saureus=saureus_slice.fa lambda=lambda.fa)
# the adapters every target's long-read layer leaves out, as filters/sbf_adapters.c lists them
sed -n 's/^ *{"\([a-z0-9_]*\)", "\([ACGT]*\)"},.*/>\1\n\2/p' "$srcdir/../filters/sbf_adapters.c" > adapters.fa
if [ "$(grep -c '^>' adapters.fa)" -lt 15 ]; then echo "Bail out! cannot read the adapters of filters/sbf_adapters.c"; exit 1; fi
# lambda with an adapter inside: the layer leaves its k-mers out
awk 'NR > 1 { s = s $0 } END { print ">lambda_with_adapter"; print substr(s, 1, 5000) "GGTTGTTTCTGTTGGTGCTGATATTGCTAGATCGGAAGAGCACACGTCTGAACTCCAGTCA" substr(s, 5001, 5000) }' \
  lambda.fa > adapted.fa

# compare LABEL "BUILD OPTIONS" K M S H SHARD_BITS BITS_PER_KMER DUST NAME=FASTA...: sbf build, then
# the reference: one case per filter ("N bytes compared, D differ"), one for the header, the
# metadata and the counts (bases, k-mer positions, shards, fill, predicted FPR, panels); one case
# per panel ("panel P: N bytes compared, D differ": the whole array, every member placed in it)
compare() {
  local label=$1 opts=$2 params="$3 $4 $5 $6 $7 $8 $9"
  shift 9
  # shellcheck disable=SC2086 # opts and params are word lists
  if ! "$SBF" build $opts -o "$label.sbf" "$@" 2> "$label.err"; then
    not_ok "$label: sbf build $opts" "$(head -c 300 "$label.err")"
    return
  fi
  # shellcheck disable=SC2086
  reference "$label" build "$label.sbf" $params "$@"
}

# compare_layer LABEL H SHARD_BITS NAME=FASTA...: the long-read layer of LABEL.sbf (built by
# compare) against the reference: k 21, m = s = 15, 8 bits per k-mer, the adapters of
# filters/sbf_adapters.c left out of every target
compare_layer() {
  local label=$1
  shift
  reference "$label, long-read layer" layer "$label.sbf" adapters.fa "$@"
}

# reference LABEL ARGS...: run the reference, one case per filter and panel, one for the rest
reference() {
  local label=$1 out=$1.out
  out=${out//[ ,]/_}
  shift
  "$ref" "$@" > "$out" 2>&1
  local rc=$? line name
  while IFS= read -r line; do
    case $line in
      "ok filter "* | "ok panel "*) ok "$label: ${line#ok }" ;;
      "FAIL panel "*)
        name=${line#FAIL panel }
        not_ok "$label: ${line#FAIL }" "$(grep -F "# panel ${name%%:*}: first difference" "$out" | cut -c 3-)" ;;
      "FAIL filter "*)
        name=${line#FAIL filter }
        not_ok "$label: ${line#FAIL }" "$(grep -F "# target ${name%%:*}: first difference" "$out" | cut -c 3-)" ;;
    esac
  done < "$out"
  local checks bad
  checks=$(grep -c -e '^ok ' -e '^FAIL ' "$out")
  mapfile -t bad < <(grep -v -e '^ok ' -e '^# ' -e '^FAIL filter ' -e '^FAIL panel ' "$out" | head -n 8)
  if [ $rc -eq 0 ] && [ ${#bad[@]} -eq 0 ] && grep -q '^ok filter ' "$out"; then
    ok "$label: header, metadata and counts agree with the reference ($checks checks)"
  else
    not_ok "$label: header, metadata and counts agree with the reference" "exit status $rc" "${bad[@]}"
  fi
}

# present LABEL IDX TARGET FASTA: every k-mer of FASTA and of its reverse complement is in target
# TARGET (0-based) of IDX, by the reference's query on the file's bits; but those of a DUST score
# of 50 or more, which the default build leaves out
present() {
  local out
  out=$("$ref" present "$2" "$3" "$4" 50 2>&1)
  local rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^ok present: [1-9][0-9]* k-mers queried (both strands), 0 absent$'; then
    ok "$1: no false negatives: $(echo "$out" | grep '^ok present' | cut -c 13-)"
  else
    local bad
    mapfile -t bad < <(echo "$out" | grep -e '^FAIL ' -e '^# absent' -e '^[^#o]' | head -n 8)
    not_ok "$1: no false negatives" "exit status $rc" "${bad[@]}"
  fi
}

# ---- byte-for-byte comparisons ------------------------------------------------------------------
# the defaults (k 31, m = s = 25, H 2, 512-bit shards, 16 bits per k-mer), one thread
compare defaults "" 31 25 25 2 512 16 50 "${slices[@]}" mixed=mixed.fa crlf=mixed_crlf.fa adapted=adapted.fa
compare_layer defaults 2 512 "${slices[@]}" mixed=mixed.fa crlf=mixed_crlf.fa adapted=adapted.fa
# -k alone: m and s follow (k - 6); a target made of several files, not in a row; two threads
compare k21 "-k 21 -@ 2" 21 15 15 2 512 16 50 mix=human_slice.fa lambda=lambda.fa mix=ecoli_slice.fa mix=mixed.fa saureus=saureus_slice.fa
# m < s, H 3, 256-bit shards
compare k31-256 "-k 31 -m 21 -s 24 -H 3 --shard-bits 256 -@ 2 --dust 0" 31 21 24 3 256 16 0 "${slices[@]}" mixed=mixed.fa
compare_layer k31-256 3 256 "${slices[@]}" mixed=mixed.fa
# the edges: k = m = s = 32 (a full 64-bit word), the largest H, a fractional bits per k-mer
compare k32 "-k 32 -m 32 -s 32 -H 7 --bits-per-kmer 10.5 --dust 12" 32 32 32 7 512 10.5 12 human=human_slice.fa mixed=mixed.fa
# tiny words: k 5, m 3, s 4, H 1, few shards (repeats collide)
compare k5 "-k 5 -m 3 -s 4 -H 1 --shard-bits 256 --bits-per-kmer 3" 5 3 4 1 256 3 50 ecoli=ecoli_slice.fa mixed=mixed.fa
# several panels: the slices in one wide panel (targets of 2 and 3 columns), the small pieces in
# another, numbered first (panels go in the order of their first target, not of their forming),
# the 40-base piece plain; both wide panels have unused columns
compare panels "" 31 25 25 2 512 16 50 tiny=tiny.fa human=human_slice.fa wee=wee.fa ecoli=ecoli_slice.fa tiny2=tiny2.fa lambda=lambda.fa
compare_layer panels 2 512 tiny=tiny.fa human=human_slice.fa wee=wee.fa ecoli=ecoli_slice.fa tiny2=tiny2.fa lambda=lambda.fa
# --size: exact sizes (slack 0), equal targets in panels of a power of two: one of 2, one plain
compare size "--size 8K" 31 25 25 2 512 0 50 human=human_slice.fa ecoli=ecoli_slice.fa saureus=saureus_slice.fa

# ---- no false negatives at the defaults ------------------------------------------------------------
if [ -s defaults.sbf ]; then
  present "human slice" defaults.sbf 0 human_slice.fa
  present "E. coli slice" defaults.sbf 1 ecoli_slice.fa
  present "mixed (N, lower case, RNA)" defaults.sbf 4 mixed.fa
else
  not_ok "no false negatives" "defaults.sbf was not built"
fi
# through panels of every kind: several columns not from column 0, one column, a plain panel
if [ -s panels.sbf ]; then
  present "lambda (3 columns from column 4 of a wide panel)" panels.sbf 5 lambda.fa
  present "tiny (6 columns of a wide panel)" panels.sbf 0 tiny.fa
  present "tiny2 (1 column of a wide panel)" panels.sbf 4 tiny2.fa
  present "wee (a plain panel)" panels.sbf 2 wee.fa
else
  not_ok "no false negatives through panels" "panels.sbf was not built"
fi
# the whole E. coli K-12 MG1655 genome (4.6 Mb), when Debian's ragout-examples is installed
mg1655=/usr/share/doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz
if [ -r "$mg1655" ]; then
  zcat "$mg1655" > mg1655.fa
  compare "MG1655" "-@ 2" 31 25 25 2 512 16 50 ecoli=mg1655.fa
  present "E. coli K-12 MG1655" MG1655.sbf 0 mg1655.fa
else
  skip "E. coli K-12 MG1655: bytes and no false negatives" "$mg1655 not installed (apt-get install ragout-examples)"
fi
tap_end
