#!/usr/bin/env bash
# inplace.sh -- FASTQ parsed in place (bam/sbf_reads.c, sbf_fastq_span), plain, gzip (ISA-L) or
# BGZF, gives exactly what the general parser gives. The oracle is the same plain file with
# SBF_NO_INPLACE=1 (every record through kseq's parser, bam/sbf_fastx.c): every output file and
# every error message must equal its, and `--stats` must say how many records each run parsed
# in place (all, none for the oracle, some where the file changes form).
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
if command -v bgzip > /dev/null; then BGZIP='bgzip -c'; else echo "Bail out! bgzip (tabix) is needed"; exit 1; fi

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

# same NAME IN WANT [sbf args...]: IN as it is, gzipped (inflated by ISA-L where sbf has it) and
# bgzipped, each parsed in place, writes the same bytes and exits as IN through the general
# parser (SBF_NO_INPLACE: the oracle); each in-place run parsed WANT records in place ("all":
# every record), the oracle none; after an error, the same message (file names made alike) and
# no output left
same() {
  local name=$1 in=$2 want=$3 z
  shift 3
  gzip -c "$in" > "$in.gz"; $BGZIP "$in" > "$in.bgz"
  SBF_NO_INPLACE=1 "$SBF" "$@" --stats -o oracle.out "$in" > /dev/null 2> oracle.err; local ro=$?
  local total; total=$(stats_in_place oracle.err); total=${total#* of }
  [ "$want" = all ] && want=$total
  if [ $ro -eq 0 ] && [ "$(stats_in_place oracle.err)" != "0 of $total" ]; then
    not_ok "$name: the oracle parsed nothing in place" "--stats says '$(stats_in_place oracle.err)'"; return
  fi
  for z in "" .gz .bgz; do
    "$SBF" "$@" --stats -o got.out "$in$z" > /dev/null 2> got.err; local rg=$?
    local got; got=$(stats_in_place got.err)
    if [ $rg -ne $ro ]; then
      not_ok "$name ($in$z): exit $ro as the oracle" "exit $rg: $(grep -v 'stages\|limit:\|input:\|notice' got.err | head -n 2)"; return
    elif [ $ro -eq 0 ] && ! cmp -s got.out oracle.out; then
      not_ok "$name ($in$z): the same bytes as the oracle" "$(cmp got.out oracle.out 2>&1 | head -n 1)"; return
    elif [ $ro -eq 0 ] && [ "$got" != "$want of $total" ]; then
      not_ok "$name ($in$z): $want of $total records parsed in place" "--stats says '$got'"; return
    elif [ $ro -ne 0 ] && [ "$(grep -v 'stages\|limit:\|input:\|notice' got.err | sed "s|$in$z|$in|g")" != "$(grep -v 'stages\|limit:\|input:\|notice' oracle.err)" ]; then
      not_ok "$name ($in$z): the oracle's message" "got: $(head -n 1 got.err)" "oracle: $(grep -v notice oracle.err | head -n 1)"; return
    elif [ $ro -ne 0 ] && { [ -e got.out ] || [ -e oracle.out ]; }; then
      not_ok "$name ($in$z): no output left after the error"; return
    fi
    rm -f got.out
  done
  rm -f oracle.out
  if [ $ro -eq 0 ]; then ok "$name: plain, gzip and BGZF in place write the oracle's bytes, $want of $total records in place"
  else ok "$name: plain, gzip and BGZF exit $ro with the oracle's message, nothing written"; fi
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
  "$SBF" classify "${C[@]}" -x idx.sbf -K $K --stats -O fastq -1 z1.fq -2 z2.fq p_1.fq.gz p_2.fq.gz 2> z.err; rz=$?
  SBF_NO_INPLACE=1 "$SBF" classify "${C[@]}" -x idx.sbf -K $K -O fastq -1 b1.fq -2 b2.fq p_1.fq p_2.fq 2> b.err; rb=$?
  if [ $ra -ne 0 ] || [ $rb -ne 0 ] || [ $rz -ne 0 ]; then
    not_ok "pairs -K $K: exit 0" "$(cat a.err z.err b.err | grep -v notice | head -n 3)"
  elif ! cmp -s a1.fq b1.fq || ! cmp -s a2.fq b2.fq || ! cmp -s z1.fq b1.fq || ! cmp -s z2.fq b2.fq; then
    not_ok "pairs -K $K: both mate files as the oracle writes them (plain and gzip input)"
  elif [ "$(stats_in_place a.err)" != "6000 of 6000" ] || [ "$(stats_in_place z.err)" != "6000 of 6000" ] ||
       [ "$(wc -l < a2.fq)" -ne 12000 ]; then
    not_ok "pairs -K $K: every record parsed in place and written" "$(stats_in_place a.err), $(wc -l < a2.fq) lines"
  else
    ok "pairs -K $K (records held back between batches): plain and gzip mates as the oracle's, 6000 in place"
  fi
done

# --stats says how each mate file was decompressed (plain gzip: ISA-L where sbf has it, zlib
# else; on a GPU run a large one goes to the input pool's threads: tests/gpu/run.sh)
dec() { sed -n 's/.*; decompression: \(.*\)$/\1/p' "$1"; }
case "$(dec a.err)|$(dec z.err)" in
  "none|gzip (ISA-L)" | "none|gzip (zlib)") ok "--stats' input line: decompression none (plain), gzip (gzip mates)" ;;
  *) not_ok "--stats' input line names the decompression" "plain: '$(dec a.err)', gzip: '$(dec z.err)'" ;;
esac

# a mate name that differs in the second half of a batch (pairs are checked in two halves)
sed '9997s/^@r2499/@x2499/' p_2.fq > p_2bad.fq
"$SBF" classify "${C[@]}" -x idx.sbf -O fastq -1 m1.fq -2 m2.fq p_1.fq p_2bad.fq 2> m.err; r=$?
if [ $r -eq 1 ] && grep -q "mate names differ at pair 2500: 'r2499/1' in p_1.fq and 'x2499/2' in p_2bad.fq" m.err &&
   [ ! -e m1.fq ] && [ ! -e m2.fq ]; then
  ok "mate names differ at pair 2500 of 3000: exit 1, the pair and both names, no output"
else
  not_ok "mate names differ at pair 2500: exit 1 and the message" "exit $r: $(head -n 2 m.err)"
fi

# ---- standard input (a pipe: reads return less than asked) ---------------------------------------------
"$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq --stats - < <(cat plain.fq) > stdin.out 2> stdin.err
SBF_NO_INPLACE=1 "$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq plain.fq > gzin.out 2> /dev/null
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

# ---- gzip streams: several members, truncated, corrupt ----------------------------------------------
gzip -c head.fq > hh.gz; gzip -c tail.fq > tt.gz; cat hh.gz tt.gz > members.fq.gz; cat head.fq tail.fq > members.fq
"$SBF" classify "${C[@]}" -x idx.sbf -O fastq --stats -o members.out members.fq.gz 2> members.err
SBF_NO_INPLACE=1 "$SBF" classify "${C[@]}" -x idx.sbf -O fastq -o members.oracle members.fq 2> /dev/null
check "gzip of two members (concatenated files): every record, as the oracle" cmp -s members.out members.oracle
check "... 80 of 80 records in place" [ "$(stats_in_place members.err)" = "80 of 80" ]
head -c -100 plain.fq.gz > cut.fq.gz
size=$(stat -c %s plain.fq.gz); { head -c $((size / 2)) plain.fq.gz; printf '\377\377\377\377'; tail -c +$((size / 2 + 5)) plain.fq.gz; } > bad.fq.gz
for f in cut bad; do
  for mode in "in place" oracle; do
    if [ "$mode" = oracle ]; then e=(env SBF_NO_INPLACE=1); else e=(env); fi
    "${e[@]}" "$SBF" classify "${C[@]}" -x idx.sbf -O fastq -o $f.out $f.fq.gz 2> $f.err; r=$?
    # cut: the stream ends early; bad: garbage inflated before the checksum fails may first make
    # a record that does not parse (an error naming the file either way)
    if [ $f = cut ]; then want="$f.fq.gz: read error or truncated compressed data after [0-9]* records"; else want="^sbf classify: $f.fq.gz: "; fi
    if [ $r -eq 1 ] && grep -q "$want" $f.err && [ ! -e $f.out ]; then
      ok "gzip $([ $f = cut ] && echo 'cut 100 bytes short' || echo 'with 4 bytes overwritten') ($mode): exit 1, an error naming the file, no output"
    else
      not_ok "gzip $f ($mode): exit 1 and the message" "exit $r: $(grep -v notice $f.err | head -n 2)"
    fi
  done
done

# ---- BAM in place: records taken where they lie in the decompressed stream ------------------------
# same_bam NAME IN WANT [sbf args...]: IN (BAM) parsed in place writes the bytes and exits as
# the oracle (SBF_NO_INPLACE: every record through sam_read1), WANT records in place (the
# first record is always htslib's: it says whether the file suits); after an error, the
# oracle's message and no output
same_bam() {
  local name=$1 in=$2 want=$3
  shift 3
  SBF_NO_INPLACE=1 "$SBF" "$@" --stats -o oracle.out "$in" > /dev/null 2> oracle.err; local ro=$?
  "$SBF" "$@" --stats -o got.out "$in" > /dev/null 2> got.err; local rg=$?
  local total got; total=$(stats_in_place oracle.err); total=${total#* of }; got=$(stats_in_place got.err)
  if [ $ro -eq 0 ] && [ "$(stats_in_place oracle.err)" != "0 of $total" ]; then
    not_ok "$name: the oracle parsed nothing in place" "--stats says '$(stats_in_place oracle.err)'"
  elif [ $rg -ne $ro ]; then
    not_ok "$name: exit $ro as the oracle" "exit $rg: $(grep -v 'stages\|limit:\|input:\|notice' got.err | head -n 2)"
  elif [ $ro -eq 0 ] && ! cmp -s got.out oracle.out; then
    not_ok "$name: the same bytes as the oracle" "$(cmp got.out oracle.out 2>&1 | head -n 1)"
  elif [ $ro -eq 0 ] && [ "$got" != "$want of $total" ]; then
    not_ok "$name: $want of $total records parsed in place" "--stats says '$got'"
  elif [ $ro -ne 0 ] && [ "$(grep -v 'stages\|limit:\|input:\|notice' got.err)" != "$(grep -v 'stages\|limit:\|input:\|notice' oracle.err)" ]; then
    not_ok "$name: the oracle's message" "got: $(grep -v notice got.err | head -n 1)" "oracle: $(grep -v notice oracle.err | head -n 1)"
  elif [ $ro -ne 0 ] && { [ -e got.out ] || [ -e oracle.out ]; }; then
    not_ok "$name: no output left after the error"
  elif [ $ro -eq 0 ]; then
    ok "$name: the oracle's bytes, $want of $total records in place"
  else
    ok "$name: exit $ro with the oracle's message ($(grep -v notice oracle.err | head -n 1 | cut -c1-70)...), nothing written"
  fi
  rm -f got.out oracle.out
}

if command -v samtools > /dev/null; then
  samtools import -0 plain.fq -o u.bam 2> /dev/null
  samtools import -1 p_1.fq -2 p_2.fq -o up.bam 2> /dev/null
  same_bam "unaligned BAM, classify to BAM" u.bam 5999 classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
  same_bam "unaligned BAM, classify to FASTQ" u.bam 5999 classify "${C[@]}" -x idx.sbf -O fastq
  same_bam "unaligned BAM, -K 2K (1 MiB blocks crossed by records, shared by batches)" u.bam 5999 \
    classify "${C[@]}" -x idx.sbf -K 2K -O bam,level=1 --no-PG
  same_bam "unaligned BAM, filter --remove human to BAM" u.bam 5999 filter "${C[@]}" -x idx.sbf --remove human -O bam,level=1 --no-PG
  same_bam "unaligned BAM to SAM (htslib's writer: the tags make each record a copy)" u.bam 5999 \
    classify "${C[@]}" -x idx.sbf -O sam --no-PG
  same_bam "paired unaligned BAM, -K 2K (batches end between pairs)" up.bam 5999 \
    classify "${C[@]}" -x idx.sbf -K 2K -O bam,level=1 --no-PG
  # every 7th record left out: mates alone, and a batch that ends after one holds the next
  # record back for the next batch (a copy of it: its block may be reused before then)
  { samtools view -H up.bam; samtools view up.bam | awk 'NR % 7 != 0'; } | samtools view -b -o orphans.bam - 2> /dev/null
  same_bam "paired BAM with lone mates, -K 2K (records held back between batches)" orphans.bam 5142 \
    classify "${C[@]}" -x idx.sbf -K 2K -O bam,level=1 --no-PG
  same_bam "paired unaligned BAM, filter to FASTQ" up.bam 5999 filter "${C[@]}" -x idx.sbf --remove human -O fastq
  # two BAM files as the mates (-1/-2): pairs checked by name, a mismatch deep in the files
  samtools view -b -f 64 -o m1.bam up.bam 2> /dev/null; samtools view -b -f 128 -o m2.bam up.bam 2> /dev/null
  "$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq --stats -1 a1.fq -2 a2.fq m1.bam m2.bam 2> a.err; ra=$?
  SBF_NO_INPLACE=1 "$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq -1 b1.fq -2 b2.fq m1.bam m2.bam 2> b.err; rb=$?
  if [ $ra -eq 0 ] && [ $rb -eq 0 ] && cmp -s a1.fq b1.fq && cmp -s a2.fq b2.fq && [ "$(stats_in_place a.err)" = "5998 of 6000" ]; then
    ok "two BAM mate files, -K 2K: both FASTQ outputs as the oracle's, 5998 of 6000 records in place"
  else
    not_ok "two BAM mate files, -K 2K: the oracle's outputs" "exit $ra/$rb, $(stats_in_place a.err): $(grep -v notice a.err | head -n 2)"
  fi
  { samtools view -H m2.bam; samtools view m2.bam | awk 'BEGIN { OFS = "\t" } NR == 2500 { $1 = "other" } { print }'; } |
    samtools view -b -o m2bad.bam - 2> /dev/null
  for mode in "in place" oracle; do
    if [ "$mode" = oracle ]; then e=(env SBF_NO_INPLACE=1); else e=(env); fi
    "${e[@]}" "$SBF" classify "${C[@]}" -x idx.sbf -K 2K -O fastq -1 x1.fq -2 x2.fq m1.bam m2bad.bam 2> x.err; r=$?
    if [ $r -eq 1 ] && grep -q "mate names differ at pair 2500: 'r2499' in m1.bam and 'other' in m2bad.bam" x.err &&
       [ ! -e x1.fq ] && [ ! -e x2.fq ]; then
      ok "BAM mate names differ at pair 2500 of 3000, -K 2K ($mode): exit 1, the pair and both names, no output"
    else
      not_ok "BAM mate names differ at pair 2500 ($mode): exit 1 and the message" "exit $r: $(grep -v notice x.err | head -n 2)"
    fi
  done
  # the records' bytes in place are right, not only alike: the first read (human) is tagged human
  "$SBF" classify "${C[@]}" -x idx.sbf -O sam u.bam 2> /dev/null | grep -v '^@' | sed -n '4p;5p' > first.txt
  check "... records read in place are tagged right: the 4th human, the 5th E. coli" \
    [ "$(grep -o 'sb:Z:[a-z]*' first.txt | tr '\n' ' ')" = "sb:Z:human sb:Z:ecoli " ]
  # records that carry sbf's tags already: updated by htslib on a copy of each record
  "$SBF" classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG -o tagged.bam u.bam 2> /dev/null
  same_bam "BAM whose records have the tags already (updated, not appended)" tagged.bam 5999 \
    classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
  # a record far larger than a block (-K 2K: 1 MiB blocks): 5 Mbp of bases between short reads
  samtools import -0 big.fq -o big.bam 2> /dev/null
  same_bam "a 5 Mbp record among short ones (the block grows)" big.bam 20 classify "${C[@]}" -x idx.sbf -K 2K -O bam,level=1 --no-PG
  # aligned records (a CIGAR) after unaligned ones: each read by htslib from a copy (its CIGAR
  # aligned, its bin recomputed); a file that starts with one is not read in place at all
  { printf '@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr\tLN:100000\n'
    samtools view u.bam | head -n 3000
    samtools view u.bam | sed -n '3001,3003p' | awk -F'\t' 'BEGIN { OFS = "\t" } { $2 = 0; $3 = "chr"; $4 = 100; $5 = 60; $6 = length($10) "M"; print }'
    samtools view u.bam | tail -n +3004; } > mixed.sam
  samtools view -b -o mixed.bam mixed.sam 2> /dev/null
  same_bam "3 aligned records among unaligned ones" mixed.bam 5996 classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
  { printf '@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr\tLN:100000\n'; grep -v '^@' mixed.sam | sed -n '3001p'
    grep -v '^@' mixed.sam | head -n 200; } | samtools view -b -o aligned1.bam - 2> /dev/null
  same_bam "a file whose first record is aligned: read by htslib" aligned1.bam 0 classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
  # damage: cut short, a BGZF block overwritten in the middle
  size=$(stat -c %s up.bam)
  head -c $((size / 2)) up.bam > cut.bam
  same_bam "BAM cut in the middle" cut.bam 0 classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
  { head -c $((size / 2)) up.bam; printf '\377\377\377\377\377\377\377\377'; tail -c +$((size / 2 + 9)) up.bam; } > bad.bam
  same_bam "BAM with 8 bytes overwritten in the middle" bad.bam 0 classify "${C[@]}" -x idx.sbf -O bam,level=1 --no-PG
else
  skip "BAM in place" "samtools is not installed"
fi

tap_end
