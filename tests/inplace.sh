#!/usr/bin/env bash
# inplace.sh -- plain FASTQ parsed in place (bam/sbf_reads.c, sbf_fastq_span) gives exactly what
# the general parser gives. The oracle is the same file gzipped: compressed input always goes
# through kseq's parser (bam/sbf_fastx.c), so every output file and every error message of the
# plain run must equal the gzip run's, and `--stats` must say how many records each run parsed
# in place (all of the plain ones, none of the gzip ones, some where the file changes form).
# Inputs: reads cut from the genome slices of tests/data with every header form (comments after
# a space or a tab, an empty comment, /1 /2 names), blocks crossed by small -K, a record larger
# than a block, pairs whose files run at different speeds (records held back between batches),
# standard input, and the forms the fast path leaves to kseq: bases on several lines, '\r\n',
# blank lines between records, no final newline, truncations.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/inplace.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
C=(--gpu none)

for g in human ecoli; do
  zcat "$data/${g}_slice.fa.gz" | awk '!/^>/ { printf "%s", $0 } END { print "" }' > $g.seq
done
"$SBF" build -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }

# reads N SEED LEN [MATE]: N FASTQ records of LEN bases (human, E. coli or random in turn), every
# header form in turn, qualities varied; MATE 1 or 2 adds /1 or /2 to the names
reads() {
  awk -v n="$1" -v seed="$2" -v len="$3" -v mate="${4:-}" 'BEGIN {
      srand(seed); getline h < "human.seq"; getline e < "ecoli.seq"
      q = "!#%+5:?@AFIJ"
      for (i = 0; i < n; ++i) {
        src = i % 3 == 0 ? h : i % 3 == 1 ? e : ""
        if (src != "") s = substr(src, 1 + int(rand() * (length(src) - len)), len)
        else { s = ""; for (j = 0; j < len; ++j) s = s substr("ACGT", int(rand() * 4) + 1, 1) }
        ql = ""; for (j = 0; j < len; ++j) ql = ql substr(q, int(rand() * 12) + 1, 1)
        name = "r" i (mate != "" ? "/" mate : "")
        f = i % 5
        hdr = f == 0 ? name : f == 1 ? name " 1:N:0:ACGT" : f == 2 ? name "\tBC:Z:x" : f == 3 ? name " " : name " a b"
        printf "@%s\n%s\n+%s\n%s\n", hdr, s, (i % 7 == 0 ? name : ""), ql
      }
    }'
}
stats_in_place() { sed -n 's/.*input: \([0-9]*\) of \([0-9]*\) records parsed in place.*/\1 of \2/p' "$1"; }

# same NAME IN_PLAIN WANT_IN_PLACE [sbf args...]: the run on the plain file and on its gzip copy
# (the oracle) write the same bytes and exit alike; the plain run parsed WANT records in place
# ("all" for every record); stderr equal with the file names made alike
same() {
  local name=$1 in=$2 want=$3
  shift 3
  gzip -c "$in" > "$in.gz"
  "$SBF" "$@" --stats -o plain.out "$in" > /dev/null 2> plain.err; local rp=$?
  "$SBF" "$@" --stats -o gz.out "$in.gz" > /dev/null 2> gz.err; local rg=$?
  local got; got=$(stats_in_place plain.err)
  local total=${got#* of }
  [ "$want" = all ] && want=$total
  if [ $rp -ne $rg ]; then
    not_ok "$name: the same exit status" "plain $rp, gzip $rg: $(tail -n 2 plain.err gz.err)"
  elif [ $rp -eq 0 ] && ! cmp -s plain.out gz.out; then
    not_ok "$name: the same output bytes" "$(cmp plain.out gz.out 2>&1 | head -n 1)"
  elif [ $rp -eq 0 ] && [ "$got" != "$want of $total" ]; then
    not_ok "$name: $want records parsed in place" "--stats says '$got'"
  elif [ $rp -ne 0 ] && [ "$(grep -v 'stages\|limit:\|input:' plain.err)" != "$(grep -v 'stages\|limit:\|input:' gz.err | sed "s|$in.gz|$in|g")" ]; then
    not_ok "$name: the same error message" "plain: $(head -n 1 plain.err)" "gzip: $(head -n 1 gz.err)"
  elif [ $rp -ne 0 ] && { [ -e plain.out ] || [ -e gz.out ]; }; then
    not_ok "$name: no output left after the error"
  else
    if [ $rp -eq 0 ]; then ok "$name: exit 0, the same output as the gzip copy's, $got parsed in place"
    else ok "$name: exit $rp as the gzip copy, with the same message, nothing written"; fi
  fi
  rm -f plain.out gz.out
}

# ---- the plain form --------------------------------------------------------------------------------
reads 6000 1 150 > plain.fq
[ "$(wc -l < plain.fq)" -eq 24000 ] || { echo "Bail out! reads() made $(wc -l < plain.fq) lines"; exit 1; }
same "classify, every header form" plain.fq all classify "${C[@]}" -x idx.sbf -O fastq
same "classify -K 2K (a batch per 13 reads, blocks shared by batches)" plain.fq all classify "${C[@]}" -x idx.sbf -K 2K -O fastq
same "classify to BAM (records converted)" plain.fq all classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
same "filter --remove human" plain.fq all filter "${C[@]}" -x idx.sbf --remove human -O fastq
# the categories are right, not only alike: the first read (human) is tagged human
"$SBF" classify "${C[@]}" -x idx.sbf -O fastq plain.fq 2> /dev/null | head -n 1 > first.txt
check "... the first read is tagged human" grep -q 'sb:Z:human' first.txt

# a record far larger than a block (8 MiB): 5 Mbp of bases between short reads
{ reads 10 2 150; awk 'BEGIN { getline h < "human.seq"; s = h; while (length(s) < 5000000) s = s h
    s = substr(s, 1, 5000000); q = s; gsub(/./, "I", q); printf "@big\n%s\n+\n%s\n", s, q }'; reads 10 3 150; } > big.fq
same "a 5 Mbp record among short ones (the block grows)" big.fq all classify "${C[@]}" -x idx.sbf -O fastq

# ---- pairs: mate 2 reads longer, so the files fill a batch at different counts ------------------------
reads 3000 4 100 1 > p_1.fq
reads 3000 5 250 2 > p_2.fq
gzip -c p_1.fq > p_1.fq.gz; gzip -c p_2.fq > p_2.fq.gz
for K in 16M 5K; do
  "$SBF" classify "${C[@]}" -x idx.sbf -K $K --stats -O fastq -1 a1.fq -2 a2.fq p_1.fq p_2.fq 2> a.err; ra=$?
  "$SBF" classify "${C[@]}" -x idx.sbf -K $K -O fastq -1 b1.fq -2 b2.fq p_1.fq.gz p_2.fq.gz 2> b.err; rb=$?
  if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
    not_ok "pairs -K $K: exit 0" "$(cat a.err b.err | head -n 3)"
  elif ! cmp -s a1.fq b1.fq || ! cmp -s a2.fq b2.fq; then
    not_ok "pairs -K $K: both mate files as the gzip run writes them"
  elif [ "$(stats_in_place a.err)" != "6000 of 6000" ] || [ "$(wc -l < a2.fq)" -ne 12000 ]; then
    not_ok "pairs -K $K: every record parsed in place and written" "$(stats_in_place a.err), $(wc -l < a2.fq) lines"
  else
    ok "pairs -K $K (records held back between batches): both mate files as the gzip run's, 6000 in place"
  fi
done

# ---- standard input (a pipe: reads return less than asked) ---------------------------------------------
"$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq --stats - < <(cat plain.fq) > stdin.out 2> stdin.err
"$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq plain.fq.gz > gzin.out 2> /dev/null
check "standard input through a pipe: the same bytes" cmp -s stdin.out gzin.out
check "... all 6000 records parsed in place" [ "$(stats_in_place stdin.err)" = "6000 of 6000" ]

# ---- forms left to kseq's parser: identical results, in place up to where the form changes ---------
reads 40 6 120 > head.fq; reads 40 7 120 > tail.fq
{ cat head.fq; printf '@multi x\nACGTACGTAC\nGTACGTACGT\n+\nIIIIIIIIII\nIIIIIIIIII\n'; cat tail.fq; } > multiline.fq
same "bases and qualities on several lines after 40 plain records" multiline.fq 40 classify "${C[@]}" -x idx.sbf -O fastq
sed 's/$/\r/' head.fq > crlf.fq
same "'\\r\\n' line ends" crlf.fq 0 classify "${C[@]}" -x idx.sbf -O fastq
{ head -n 8 head.fq; echo; tail -n +9 head.fq; } > blank.fq
same "a blank line after 2 records" blank.fq 2 classify "${C[@]}" -x idx.sbf -O fastq
head -c -1 head.fq > nonl.fq
same "no newline at the end" nonl.fq 39 classify "${C[@]}" -x idx.sbf -O fastq
{ cat head.fq; printf '@r+\nACGT\n+\nII\n'; } > shortq.fq
same "qualities shorter than the bases at the end (an error)" shortq.fq 40 classify "${C[@]}" -x idx.sbf -O fastq
{ head -n 8 head.fq; printf '@long\nACGT\n+\nIIIIII\n'; tail -n +9 head.fq; } > longq.fq
same "qualities longer than the bases (an error)" longq.fq 2 classify "${C[@]}" -x idx.sbf -O fastq
head -c -200 head.fq > trunc.fq
same "a file cut inside its last record" trunc.fq 39 classify "${C[@]}" -x idx.sbf -O fastq
{ cat head.fq; printf '>fasta\nACGTACGT\n'; } > mixed.fq
same "a FASTA record after FASTQ ones" mixed.fq 40 classify "${C[@]}" -x idx.sbf -O fastq
printf '@only\n' > headonly.fq
same "a header alone" headonly.fq 0 classify "${C[@]}" -x idx.sbf -O fastq

tap_end
