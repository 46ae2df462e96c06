#!/usr/bin/env bash
# hostile.sh -- hostile inputs and faults for the screening commands: each case checks the exact
# error line (or notice), the exit status, and that no output is left behind looking complete
# (neither the final file nor a temporary one). TAP-like output as tests/cli.sh.
# Run by `make check` or by hand: tests/hostile.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
testbin=${testbin:-$(dirname "$SBF")/tests}
for tool in samtools bgzip; do
  command -v $tool > /dev/null || { echo "Bail out! $tool is needed (apt-get install samtools tabix)"; exit 1; }
done
cd "$work" || exit 1

# expect NAME STATUS 'FIRST STDERR LINE' OUTPUT CMD...: runs CMD; checks its exit status, the first
# line of its stderr, and that OUTPUT (a path, or - for none) does not exist afterwards, nor any
# temporary file in this folder.
expect() {
  local name=$1 want=$2 line=$3 out=$4
  shift 4
  rm -f ./*.tmp.*
  "$@" > stdout 2> stderr
  local got=$? first
  first=$(head -n 1 stderr)
  if [ "$got" -ne "$want" ]; then not_ok "$name" "exit status $got, expected $want" "stderr: $first"
  elif [ "$first" != "$line" ]; then not_ok "$name" "stderr: '$first'" "wanted: '$line'"
  elif [ "$out" != - ] && [ -e "$out" ]; then not_ok "$name" "$out was left behind"
  elif ls | grep -q '\.tmp\.'; then not_ok "$name" "a temporary file was left: $(ls | grep '\.tmp\.')"
  else ok "$name"; fi
}

# ---- data: a small index, reads from its genomes ------------------------------------------------
"$SBF" build -o idx.sbf lambda="$data/lambda.fa.gz" ecoli="$data/ecoli_slice.fa.gz" 2> /dev/null ||
  { echo "Bail out! sbf build failed"; exit 1; }
zcat "$data/lambda.fa.gz" "$data/ecoli_slice.fa.gz" > ref.fa
# 400 reads of 100 bp taken every 97 bases, as FASTQ pairs (mate 2 reverse-complemented)
awk '/^>/ { next } { g = g $0 } END {
       q = sprintf("%100s", ""); gsub(/ /, "I", q)
       for (i = 0; i < 400; ++i) { s = substr(g, 1 + 97 * i, 100); r = ""
         for (j = 100; j >= 1; --j) r = r (index("ACGT", substr(s, j, 1)) ? substr("TGCA", index("ACGT", substr(s, j, 1)), 1) : "N")
         printf "@r%d/1\n%s\n+\n%s\n", i, s, q > "r1.fq"; printf "@r%d/2\n%s\n+\n%s\n", i, r, q > "r2.fq" } }' ref.fa
samtools import -1 r1.fq -2 r2.fq -o r.bam 2> /dev/null
gzip -c r1.fq > r1.fq.gz
bgzip -c r1.fq > r1.fq.bgz
samtools faidx ref.fa
awk 'BEGIN { OFS = "\t"; print "@HD\tVN:1.6\tSO:coordinate" } /^>/ { c = substr($1, 2); next } { s[c] = s[c] $0 }
     END { for (c in s) print "@SQ", "SN:" c, "LN:" length(s[c]); for (c in s) for (p = 1; p + 100 <= length(s[c]); p += 500)
             print "m" p, 0, c, p, 60, "100M", "*", 0, 0, substr(s[c], p, 100), "*" }' ref.fa > mapped.sam
(grep '^@' mapped.sam; grep -v '^@' mapped.sam | sort -k3,3 -k4,4n) | samtools view -C -T ref.fa -o mapped.cram - 2> /dev/null
half() { head -c $(($(wc -c < "$1") / 2)) "$1" > "$2"; }

# ---- damaged and odd inputs ----------------------------------------------------------------------
half r1.fq.gz trunc.fq.gz
expect "truncated gzip FASTQ" 1 "sbf classify: trunc.fq.gz: read error or truncated compressed data after 0 records" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq trunc.fq.gz
half r1.fq.bgz trunc.fq.bgz
expect "truncated BGZF FASTQ" 1 "sbf classify: trunc.fq.bgz: read error or truncated compressed data after 0 records" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq trunc.fq.bgz
half r.bam trunc.bam
expect "truncated BAM" 1 "sbf classify: trunc.bam: truncated or corrupt BAM after 342 records" out.bam \
  "$SBF" classify -x idx.sbf -o out.bam trunc.bam
half mapped.cram trunc.cram
expect "truncated CRAM" 1 "sbf classify: trunc.cram: cannot decode CRAM after 0 records (truncated, corrupt, or its reference is not available: give it with -T)" out.cram \
  "$SBF" classify -x idx.sbf -T ref.fa -o out.cram trunc.cram
mkdir -p noref
mv ref.fa ref_hidden.fa; mv ref.fa.fai ref_hidden.fa.fai
expect "CRAM without its reference" 1 "sbf classify: mapped.cram: cannot decode CRAM after 0 records (truncated, corrupt, or its reference is not available: give it with -T)" out.bam \
  env REF_PATH="$work/noref/%s" REF_CACHE="$work/noref/%s" "$SBF" classify -x idx.sbf -o out.bam mapped.cram
mv ref_hidden.fa ref.fa; mv ref_hidden.fa.fai ref.fa.fai
expect "CRAM with -T: fine" 0 "sbf classify: 157 reads, 0.0 Mbp in 0.00 s" - \
  sh -c "'$SBF' classify -x idx.sbf -T ref.fa -o ok.cram mapped.cram 2>&1 >/dev/null | sed -E 's/ in [0-9.]+ s.*/ in 0.00 s/' >&2"
# found by fuzz_reads: a CRAM container header asking htslib 1.16 for an 8.5 GB buffer
expect "CRAM with a corrupt container header" 1 "sbf classify: $data/corrupt_container.cram: cannot open as CRAM" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq "$data/corrupt_container.cram"
printf '@a\nACGTACGT\n+\nIIII\n' > shortq.fq
expect "FASTQ quality shorter than the sequence" 1 "sbf classify: shortq.fq: record 'a': quality and sequence lengths differ" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq shortq.fq
printf '@a\nACGTACGT\n+\n' > cut.fq
expect "FASTQ record cut after '+'" 1 "sbf classify: cut.fq: record 'a': quality and sequence lengths differ" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq cut.fq
printf '@HD\tVN:1.6\nr1\tnot-a-flag\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\n' > bad.sam
expect "SAM with a broken record" 1 "sbf classify: bad.sam: truncated or corrupt SAM after 0 records" out.sam \
  "$SBF" classify -x idx.sbf -o out.sam bad.sam
head -c 3000 /dev/urandom > garbage.bin; printf '\x00\x01\x02' >> garbage.bin
expect "binary garbage" 1 "sbf classify: garbage.bin: not FASTA, FASTQ, SAM, BAM or CRAM (looks like unknown data)" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq garbage.bin
expect "missing input" 1 "sbf classify: nothere.fq: cannot open: No such file or directory" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq nothere.fq
mkdir adir
expect "a folder as input" 1 "sbf classify: adir: cannot read: Is a directory" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq adir
: > empty.fq
expect "empty input: no reads, exit 0" 0 "sbf classify: 0 reads, 0.0 Mbp in 0.00 s" - \
  sh -c "'$SBF' classify -x idx.sbf -o empty_out.fq empty.fq 2>&1 >/dev/null | sed -E 's/ in [0-9.]+ s.*/ in 0.00 s/' >&2"
if [ -e empty_out.fq ] && [ ! -s empty_out.fq ]; then ok "empty input gives an empty output"; else not_ok "empty input gives an empty output"; fi
awk 'BEGIN { srand(5); printf "@big\n"; for (i = 0; i < 10000000; i += 100) { s = ""; for (j = 0; j < 100; ++j) s = s substr("ACGT", int(rand() * 4) + 1, 1); printf "%s", s } printf "\n" }' > big.fa
expect "a 10 Mbp read is classified" 0 "sbf classify: 1 reads, 10.0 Mbp in 0.00 s" - \
  sh -c "'$SBF' classify -x idx.sbf -o big_out.fa big.fa 2>&1 >/dev/null | sed -E 's/ in [0-9.]+ s.*/ in 0.00 s/' >&2"
if grep -q 'sb:Z:none' big_out.fa; then ok "... as none (random sequence)"; else not_ok "... as none (random sequence)"; fi
printf '@n1\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n' > alln.fq
"$SBF" classify -x idx.sbf alln.fq > alln_out.fq 2> stderr
if grep -q 'sb:Z:none' alln_out.fq && grep -q '(1 without a valid k-mer)' stderr; then ok "a read of only N: none, counted without a valid k-mer"
else not_ok "a read of only N: none, counted without a valid k-mer" "$(cat stderr)"; fi

# ---- pairs ------------------------------------------------------------------------------------------
head -n 396 r2.fq > r2_short.fq
expect "mate files of different lengths" 1 "sbf classify: r2_short.fq ends after 99 reads but r1.fq goes on: the mate files hold different numbers of reads" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq r1.fq r2_short.fq
sed '401s/.*/@other\/2/' r2.fq > r2_renamed.fq
expect "mates with different names" 1 "sbf filter: mate names differ at pair 101: 'r100/1' in r1.fq and 'other/2' in r2_renamed.fq" out.fq \
  "$SBF" filter -x idx.sbf -1 out.fq -2 out2.fq r1.fq r2_renamed.fq
# -K 2K: batches of 10 pairs, so after the first batch both mate files are read at once (one
# thread each): the same errors, and the same output as one batch
expect "mate files of different lengths, read at once (-K 2K)" 1 "sbf classify: r2_short.fq ends after 99 reads but r1.fq goes on: the mate files hold different numbers of reads" out.fq \
  "$SBF" classify -x idx.sbf -K 2K -o out.fq r1.fq r2_short.fq
head -n 396 r1.fq > r1_short.fq
expect "the first mate file shorter, read at once (-K 2K)" 1 "sbf classify: r1_short.fq ends after 99 reads but r2.fq goes on: the mate files hold different numbers of reads" out.fq \
  "$SBF" classify -x idx.sbf -K 2K -o out.fq r1_short.fq r2.fq
expect "mates with different names, read at once (-K 2K)" 1 "sbf filter: mate names differ at pair 101: 'r100/1' in r1.fq and 'other/2' in r2_renamed.fq" out.fq \
  "$SBF" filter -x idx.sbf -K 2K -1 out.fq -2 out2.fq r1.fq r2_renamed.fq
"$SBF" classify -x idx.sbf -K 2K -o small_k.fq r1.fq r2.fq 2> /dev/null && "$SBF" classify -x idx.sbf -o one_k.fq r1.fq r2.fq 2> /dev/null
if [ -s one_k.fq ] && cmp -s small_k.fq one_k.fq; then ok "pairs read at once: the output of one batch, mates side by side"
else not_ok "pairs read at once: the output of one batch, mates side by side"; fi
expect "two inputs from stdin" 1 "sbf classify: only one of the two inputs can be standard input" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq - -
expect "-1 without -2" 1 "sbf filter: -1 and -2 go together (one file per mate)" out.fq \
  "$SBF" filter -x idx.sbf -1 out.fq r1.fq r2.fq

# ---- damaged indexes -------------------------------------------------------------------------------
: > empty.sbf
expect "empty index" 1 "sbf classify: empty.sbf: not an sbf index (file too short)" out.fq \
  "$SBF" classify -x empty.sbf -o out.fq r1.fq
head -c 5000 idx.sbf > trunc.sbf
expect "truncated index" 1 "sbf classify: trunc.sbf: truncated index (5000 of $(wc -c < idx.sbf) bytes)" out.fq \
  "$SBF" classify -x trunc.sbf -o out.fq r1.fq
cp idx.sbf flip.sbf && printf '\xff' | dd of=flip.sbf bs=1 seek=20000 conv=notrunc 2> /dev/null
expect "index with a flipped byte" 1 "sbf classify: flip.sbf: corrupt filter of target 'lambda' (checksum mismatch)" out.fq \
  "$SBF" classify -x flip.sbf -o out.fq r1.fq
"$testbin/index_version" idx.sbf v2.sbf 2
expect "index of another format version" 1 "sbf classify: v2.sbf: index format version 2, this sbf reads version 1: rebuild the index" out.fq \
  "$SBF" classify -x v2.sbf -o out.fq r1.fq
expect "a FASTA given as index" 1 "sbf classify: ref.fa: not an sbf index (bad magic)" out.fq \
  "$SBF" classify -x ref.fa -o out.fq r1.fq

expect "a target named 'none' is refused at build time" 1 "sbf build: target name 'none' is reserved: classification reports reads that match several targets as 'multi' and those that match none as 'none'" none.sbf \
  "$SBF" build -o none.sbf none="$data/lambda.fa.gz"

# ---- outputs ---------------------------------------------------------------------------------------
expect "standard output is /dev/full" 1 "sbf classify: standard output: write failed: No space left on device" - \
  sh -c "'$SBF' classify -x idx.sbf r1.fq > /dev/full"
expect "-o /dev/full" 1 "sbf classify: /dev/full: write failed: No space left on device" - \
  "$SBF" classify -x idx.sbf -o /dev/full r1.fq
expect "output folder missing" 1 "sbf classify: nodir/out.fq: cannot create a temporary file: No such file or directory" - \
  "$SBF" classify -x idx.sbf -o nodir/out.fq r1.fq
expect "output folder not writable" 1 "sbf classify: /proc/out.fq: cannot create a temporary file: No such file or directory" - \
  "$SBF" classify -x idx.sbf -o /proc/out.fq r1.fq
expect "--summary to a missing folder: no outputs kept" 1 "sbf classify: nodir/s.tsv: cannot create a temporary file: No such file or directory" out.fq \
  "$SBF" classify -x idx.sbf -o out.fq --summary nodir/s.tsv r1.fq
cp r1.fq keep.fq
expect "output path equal to the input" 1 "sbf classify: keep.fq is an input: refusing to overwrite it" - \
  "$SBF" classify -x idx.sbf -o keep.fq keep.fq
ln -s keep.fq link.fq
expect "output path a link to the input" 1 "sbf classify: link.fq is an input: refusing to overwrite it" - \
  "$SBF" classify -x idx.sbf -o link.fq keep.fq
if cmp -s keep.fq r1.fq; then ok "... the input is intact"; else not_ok "... the input is intact"; fi
expect "unknown -O" 1 "sbf classify: -O: unknown output format 'vcf' (sam, bam, cram, fastq, fasta; fastq.gz, fasta.gz, sam.gz for BGZF)" out.vcf \
  "$SBF" classify -x idx.sbf -O vcf -o out.vcf r1.fq
expect "--write-index on FASTQ output" 1 "sbf classify: out.fq: --write-index needs BAM or CRAM output" out.fq \
  "$SBF" classify -x idx.sbf --write-index -o out.fq r1.fq
(grep '^@' mapped.sam; grep -v '^@' mapped.sam | sort -k4,4nr) > unsorted.sam
expect "--write-index on unsorted BAM" 1 "sbf classify: out.bam: cannot write record 'm47501' (--write-index needs coordinate-sorted records)" out.bam \
  "$SBF" classify -x idx.sbf --write-index -o out.bam unsorted.sam
expect "--split together with -o" 1 "sbf classify: --split writes its own files: -o, -1 and -2 cannot be used with it" - \
  "$SBF" classify -x idx.sbf --split 's_%.fq' -o out.fq r1.fq

# ---- signals: nothing partial is left ------------------------------------------------------------------
for i in $(seq 500); do cat r1.fq; done > many_1.fq
for i in $(seq 500); do cat r2.fq; done > many_2.fq
sig_case() {   # NAME SIGNAL STATUS
  env --default-signal="$2" "$SBF" classify -x idx.sbf -K 1K -o sig.bam --summary sig.tsv many_1.fq many_2.fq 2> /dev/null &
  local pid=$!
  sleep 0.3
  kill -"$2" $pid 2> /dev/null
  wait $pid
  local got=$?
  if [ "$got" -eq "$3" ] && [ ! -e sig.bam ] && [ ! -e sig.tsv ] && ! ls | grep -q '\.tmp\.'; then ok "$1"
  else not_ok "$1" "exit $got (wanted $3); left: $(ls | grep -E 'sig|\.tmp\.' | tr '\n' ' ')"; fi
}
sig_case "SIGINT mid-run leaves no output" INT 130
sig_case "SIGTERM mid-run leaves no output" TERM 143
"$SBF" classify -x idx.sbf -K 1K --json pipe.json many_1.fq many_2.fq 2> /dev/null | head -n 2 > /dev/null
status=${PIPESTATUS[0]}
if [ "$status" -eq 141 ] && [ ! -e pipe.json ] && ! ls | grep -q '\.tmp\.'; then ok "SIGPIPE (| head) leaves no --json file"
else not_ok "SIGPIPE (| head) leaves no --json file" "exit $status; left: $(ls | grep -E 'pipe|\.tmp\.' | tr '\n' ' ')"; fi

# ---- load: 10x the input with small batches, memory stays flat and the output is complete ---------
for i in $(seq 10); do cat many_1.fq; done > load_1.fq
for i in $(seq 10); do cat many_2.fq; done > load_2.fq
peak() { sed -n 's/.*peak RSS \([0-9.]*\) MiB.*/\1/p' "$1"; }
"$SBF" classify -x idx.sbf -K 64K --gpu none --stats -o l1.bam many_1.fq many_2.fq 2> l1.err &&
  "$SBF" classify -x idx.sbf -K 64K --gpu none --stats -o l10.bam load_1.fq load_2.fq 2> l10.err
r1=$(peak l1.err) r10=$(peak l10.err)
if [ -n "$r1" ] && [ -n "$r10" ] && awk -v a="$r1" -v b="$r10" 'BEGIN { exit !(b <= a + 8) }'; then
  ok "10x the input (2,000,000 pairs, -K 64K): peak RSS $r10 MiB against $r1 MiB"
else not_ok "10x the input: peak RSS flat" "1x: $r1 MiB, 10x: $r10 MiB"; fi
if [ "$(samtools view -c l10.bam)" -eq 4000000 ]; then ok "... and every record is written"
else not_ok "... and every record is written" "$(samtools view -c l10.bam) records"; fi
rm -f load_1.fq load_2.fq l1.bam l10.bam

# ---- no GPU, or not enough GPU memory: the CPU engine with a notice ----------------------------------
if "$SBF" --version | grep -q '^GPU 0:'; then
  # two filters (94.7 + 58.6 KiB) and, for each of the device's two workers, two batches of
  # 1 M bases (the GPU default of -K) at 2 bytes per base
  line="sbf classify: notice: the index and batches need 8.1 MiB on the GPU, more than --gpu-mem-limit 1.0 KiB: using the CPU engine"
  line7="sbf classify: notice: no GPU number 7 (devices 0 to $(($("$SBF" --version | grep -c '^GPU ') - 1))): using the CPU engine"
else
  line="sbf classify: notice: GPU 0 requested but no CUDA device is usable: using the CPU engine"
  line7="sbf classify: notice: GPU 7 requested but no CUDA device is usable: using the CPU engine"
fi
expect "--gpu 0 --gpu-mem-limit 1K: CPU engine and a notice" 0 "$line" - \
  "$SBF" classify -x idx.sbf --gpu 0 --gpu-mem-limit 1K -o gpu_out.fq r1.fq
"$SBF" classify -x idx.sbf --gpu none -o cpu_out.fq r1.fq 2> /dev/null
if cmp -s gpu_out.fq cpu_out.fq; then ok "... with the same output"; else not_ok "... with the same output"; fi
expect "--gpu 7: no such device" 0 "$line7" - \
  "$SBF" classify -x idx.sbf --gpu 7 -o gpu7.fq r1.fq
expect "--gpu 1,1: a device listed twice" 1 "sbf classify: --gpu 1,1: device 1 is listed twice" twice.fq \
  "$SBF" classify -x idx.sbf --gpu 1,1 -o twice.fq r1.fq
expect "--gpu 0,: an empty list item" 1 \
  "sbf classify: invalid value '0,' for --gpu: expected auto, none, all or device numbers (0,1)" comma.fq \
  "$SBF" classify -x idx.sbf --gpu 0, -o comma.fq r1.fq
# every device (or, without one, the CPU engine with a notice): the same output
"$SBF" classify -x idx.sbf --gpu all -o all_out.fq r1.fq 2> all.err
if cmp -s all_out.fq cpu_out.fq; then ok "--gpu all: the CPU engine's output"; else not_ok "--gpu all: the CPU engine's output"; fi
if "$SBF" --version | grep -q '^GPU 0:' || grep -qx "sbf classify: notice: --gpu all but no CUDA device is usable: using the CPU engine" all.err; then
  ok "--gpu all without a GPU: a notice"; else not_ok "--gpu all without a GPU: a notice" "$(head -n 1 all.err)"; fi

tap_end
