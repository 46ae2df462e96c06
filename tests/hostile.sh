#!/usr/bin/env bash
# hostile.sh -- hostile inputs and faults for the screening commands: each case checks the exit
# status of sbf itself (never of a pipe's last command), the exact first line of its stderr (the
# error, naming the file and the problem; or the notice, or the summary line of a run that
# succeeds), its stdout (empty, or exactly the output expected), and the files it names: on a
# failure none of them is left behind, nor any temporary file (NAME.tmp.*), nor any other new file;
# on a success they are written, with the content expected. TAP-like output as tests/cli.sh.
# Run by `make check` or by hand: tests/hostile.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
testbin=${testbin:-$(dirname "$SBF")/tests}
for tool in samtools bgzip; do
  command -v $tool > /dev/null || { echo "Bail out! $tool is needed (apt-get install samtools tabix)"; exit 1; }
done
cd "$work" || exit 1

# The first line of a stderr file, with what changes from run to run in sbf's summary line (the
# seconds, the rate, the engine and its threads) written as T, R and E:
#   sbf classify: 400 reads, 0.0 Mbp in T s, R reads/s; engine E
# Only a well-formed tail is rewritten: anything else stays as it is, and so fails the comparison.
first_line() {
  head -n 1 "$1" | sed -E 's/ in [0-9]+\.[0-9]{2} s, [0-9]+ reads\/s; engine (CPU, [0-9]+ threads?( in [0-9]+ workers)?(, [a-z0-9]+ scan)?|GPU [0-9].*)$/ in T s, R reads\/s; engine E/'
}
# The entries of this folder, but for the files that hold a command's stdout and stderr.
listing() { ls -A | grep -vx -e stdout -e stderr; }
# hostile_encode.sh reruns this suite with SBF_ENCODE=1, which sbf announces on stderr (a test
# switch is never silent): that one notice line is taken out before the checks read stderr
unswitch() { if [ -n "${SBF_ENCODE:-}" ]; then sed -i '/^sbf [a-z]*: notice: SBF_ENCODE is set: /d' stderr; fi; }
# strays BEFORE [OUTPUTS]: the entries added to this folder or gone from it since BEFORE (a
# listing), other than OUTPUTS (space-separated paths: their first component; - is ignored).
strays() {
  local p allowed=//
  for p in ${2:-}; do [ "$p" = - ] || allowed="$allowed"$'\n'"${p%%/*}"; done
  diff <(echo "$1") <(listing) | sed -n 's/^[<>] //p' | grep -vxF -e "$allowed" | tr '\n' ' '
}
# left OUTPUTS: those of OUTPUTS that exist, and any temporary file beside one of them.
left() {
  local p
  for p in $1; do
    [ "$p" = - ] && continue
    if [ -e "$p" ] || [ -L "$p" ]; then printf '%s ' "$p"; fi
    compgen -G "$p.tmp.*" | tr '\n' ' '
  done
}
# missing OUTPUTS: those of OUTPUTS that do not exist, and any temporary file beside one of them.
missing() {
  local p
  for p in $1; do
    [ "$p" = - ] && continue
    [ -e "$p" ] || printf '%s ' "$p"
    compgen -G "$p.tmp.*" | tr '\n' ' '
  done
}

# expect NAME STATUS 'FIRST STDERR LINE' 'OUTPUTS' 'CHECK' CMD...
# Runs CMD -- sbf itself, or `env ... sbf` or a wrapper that execs it, never a pipe, so that its
# status is sbf's -- with stdin from /dev/null, stdout to ./stdout (or to $to when set: to=FILE
# expect ...) and stderr to ./stderr, and checks, each able to fail on its own:
#   - the exit status is STATUS;
#   - the first line of stderr is exactly LINE (see first_line); on a failure, the only line (the
#     error said once: no second message, no htslib [E::...] line);
#   - stdout is empty, unless OUTPUTS holds - (stdout is the output: CHECK reads ./stdout);
#   - OUTPUTS (space-separated paths): when STATUS is not 0 none of them exists afterwards (nor
#     before: the case would prove nothing), when STATUS is 0 each of them exists; either way no
#     temporary file OUTPUT.tmp.* is left beside one;
#   - no entry of this folder appeared or went away (on a success, but the OUTPUTS);
#   - CHECK, a shell condition ('' for none), holds: the content of the outputs, or of an input
#     that must stay intact.
expect() {
  local name=$1 want=$2 line=$3 outs=$4 cond=$5
  shift 5
  rm -f stdout stderr
  if [ "$want" -ne 0 ] && [ -n "$(left "$outs")" ]; then
    not_ok "$name" "exists before the run: $(left "$outs")"; return
  fi
  local before got first bad new
  before=$(listing)
  "$@" < /dev/null > "${to:-stdout}" 2> stderr
  got=$?
  unswitch
  first=$(first_line stderr)
  if [ "$want" -ne 0 ]; then bad=$(left "$outs") new=$(strays "$before")
  else bad=$(missing "$outs") new=$(strays "$before" "$outs"); fi
  if [ "$got" -ne "$want" ]; then not_ok "$name" "exit status $got, expected $want" "stderr: $first"
  elif [ "$first" != "$line" ]; then not_ok "$name" "stderr: '$first'" "wanted: '$line'"
  elif [ "$want" -ne 0 ] && [ "$(wc -l < stderr)" -ne 1 ]; then not_ok "$name" "more than the one line on stderr:" "$(sed -n 2p stderr)"
  elif [ -s stdout ] && [[ " $outs " != *" - "* ]]; then not_ok "$name" "stdout is not empty: $(head -c 200 stdout)"
  elif [ -n "$bad" ] && [ "$want" -ne 0 ]; then not_ok "$name" "left behind: $bad"
  elif [ -n "$bad" ]; then not_ok "$name" "not written, or a temporary file left: $bad"
  elif [ -n "$new" ]; then not_ok "$name" "entries of the folder appeared or went away: $new"
  elif [ -n "$cond" ] && ! eval "$cond"; then not_ok "$name" "failed: $cond"
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
# the summary line of a run that succeeds, for UNITS (as '400 reads' or '400 pairs (800 reads)') and MBP
summary() { echo "sbf classify: $1, $2 Mbp in T s, R reads/s; engine E"; }
# tagged_r1 FILE: FILE is r1.fq classified: its 400 records in order, each name line the read's
# name with the sb and ss tags, the sequences and qualities as in r1.fq
tagged_r1() {
  cmp -s <(awk 'NR % 4 == 1' "$1" | cut -f 1) <(awk 'NR % 4 == 1' r1.fq) &&
    [ "$(awk 'NR % 4 == 1' "$1" | grep -c '^@r[0-9]*/1	sb:Z:[a-z]*	ss:f:[-0-9.e]*$')" -eq 400 ] &&
    cmp -s <(awk 'NR % 4 != 1' "$1") <(awk 'NR % 4 != 1' r1.fq)
}

# ---- damaged and odd inputs ----------------------------------------------------------------------
half r1.fq.gz trunc.fq.gz
expect "truncated gzip FASTQ" 1 "sbf classify: trunc.fq.gz: read error or truncated compressed data after 0 records" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq trunc.fq.gz
half r1.fq.bgz trunc.fq.bgz
expect "truncated BGZF FASTQ" 1 "sbf classify: trunc.fq.bgz: read error or truncated compressed data after 0 records" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq trunc.fq.bgz
if command -v xz > /dev/null; then
  xz -c r1.fq > r1.fq.xz
  expect "xz-compressed FASTQ is refused by name" 1 "sbf classify: r1.fq.xz: xz-compressed; sbf reads plain, gzip or BGZF files: decompress it first (e.g. xz -dc FILE | sbf ... -)" out.fq '' \
    "$SBF" classify -x idx.sbf -o out.fq r1.fq.xz
  expect "xz-compressed reference is refused by sbf build" 1 "sbf build: r1.fq.xz: xz-compressed; sbf reads plain, gzip or BGZF files: decompress it first (e.g. xz -dc FILE | sbf ... -)" xz.sbf '' \
    "$SBF" build -o xz.sbf r1.fq.xz
  rm -f r1.fq.xz
fi
half r.bam trunc.bam
expect "truncated BAM" 1 "sbf classify: trunc.bam: truncated or corrupt BAM after 342 records" out.bam '' \
  "$SBF" classify -x idx.sbf -o out.bam trunc.bam
half mapped.cram trunc.cram
expect "truncated CRAM" 1 "sbf classify: trunc.cram: cannot decode CRAM after 0 records (truncated, corrupt, or its reference is not available: give it with -T)" out.cram '' \
  "$SBF" classify -x idx.sbf -T ref.fa -o out.cram trunc.cram
mkdir -p noref
mv ref.fa ref_hidden.fa; mv ref.fa.fai ref_hidden.fa.fai
expect "CRAM without its reference" 1 "sbf classify: mapped.cram: cannot decode CRAM after 0 records (truncated, corrupt, or its reference is not available: give it with -T)" out.bam '' \
  env REF_PATH="$work/noref/%s" REF_CACHE="$work/noref/%s" "$SBF" classify -x idx.sbf -o out.bam mapped.cram
mv ref_hidden.fa ref.fa; mv ref_hidden.fa.fai ref.fa.fai
# the same reads, names and sequences, as the input; each with an sb tag
expect "CRAM with -T: fine" 0 "$(summary '157 reads' 0.0)" ok.cram \
  'cmp -s <(samtools view -T ref.fa ok.cram | cut -f 1,10) <(samtools view -T ref.fa mapped.cram | cut -f 1,10) &&
   [ "$(samtools view -T ref.fa ok.cram | grep -c "	sb:Z:")" -eq 157 ]' \
  "$SBF" classify -x idx.sbf -T ref.fa -o ok.cram mapped.cram
# found by fuzz_reads: a CRAM container header asking htslib 1.16 for an 8.5 GB buffer
expect "CRAM with a corrupt container header" 1 "sbf classify: $data/corrupt_container.cram: cannot open as CRAM" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq "$data/corrupt_container.cram"
printf '@a\nACGTACGT\n+\nIIII\n' > shortq.fq
expect "FASTQ quality shorter than the sequence" 1 "sbf classify: shortq.fq: record 'a': quality and sequence lengths differ" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq shortq.fq
printf '@a\nACGTACGT\n+\n' > cut.fq
expect "FASTQ record cut after '+'" 1 "sbf classify: cut.fq: record 'a': quality and sequence lengths differ" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq cut.fq
printf '@HD\tVN:1.6\nr1\tnot-a-flag\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\n' > bad.sam
expect "SAM with a broken record" 1 "sbf classify: bad.sam: truncated or corrupt SAM after 0 records" out.sam '' \
  "$SBF" classify -x idx.sbf -o out.sam bad.sam
head -c 3000 /dev/urandom > garbage.bin; printf '\x00\x01\x02' >> garbage.bin
expect "binary garbage" 1 "sbf classify: garbage.bin: not FASTA, FASTQ, SAM, BAM or CRAM (looks like unknown data)" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq garbage.bin
expect "missing input" 1 "sbf classify: nothere.fq: cannot open: No such file or directory" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq nothere.fq
mkdir adir
expect "a folder as input" 1 "sbf classify: adir: cannot read: Is a directory" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq adir
: > empty.fq
expect "empty input: no reads, exit 0, an empty output" 0 "$(summary '0 reads' 0.0)" empty_out.fq \
  '[ ! -s empty_out.fq ]' \
  "$SBF" classify -x idx.sbf -o empty_out.fq empty.fq
awk 'BEGIN { srand(5); printf "@big\n"; for (i = 0; i < 10000000; i += 100) { s = ""; for (j = 0; j < 100; ++j) s = s substr("ACGT", int(rand() * 4) + 1, 1); printf "%s", s } printf "\n" }' > big.fa
expect "a 10 Mbp read is classified, as none (random sequence)" 0 "$(summary '1 reads' 10.0)" big_out.fa \
  '[ "$(wc -l < big_out.fa)" -eq 2 ] && [ "$(head -n 1 big_out.fa | cut -f 1,2)" = ">big	sb:Z:none" ] &&
   cmp -s <(sed -n 2p big_out.fa) <(sed -n 2p big.fa)' \
  "$SBF" classify -x idx.sbf -o big_out.fa big.fa
printf '@n1\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n' > alln.fq
# the record, on stdout, as none; counted on stderr as without a valid k-mer
expect "a read of only N: none, counted without a valid k-mer" 0 "$(summary '1 reads' 0.0)" - \
  'cmp -s stdout <(printf "@n1\tsb:Z:none\tss:f:0\n"; tail -n +2 alln.fq) &&
   grep -qxF "  none                1  100.00%  (1 without a valid k-mer)" stderr' \
  "$SBF" classify -x idx.sbf alln.fq

# ---- pairs ------------------------------------------------------------------------------------------
head -n 396 r2.fq > r2_short.fq
expect "mate files of different lengths" 1 "sbf classify: r2_short.fq ends after 99 reads but r1.fq goes on: the mate files hold different numbers of reads" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq r1.fq r2_short.fq
sed '401s/.*/@other\/2/' r2.fq > r2_renamed.fq
expect "mates with different names" 1 "sbf filter: mate names differ at pair 101: 'r100/1' in r1.fq and 'other/2' in r2_renamed.fq" 'out.fq out2.fq' '' \
  "$SBF" filter -x idx.sbf -1 out.fq -2 out2.fq r1.fq r2_renamed.fq
# -K 2K: batches of 10 pairs, so after the first batch both mate files are read at once (one
# thread each): the same errors, and the same output as one batch
expect "mate files of different lengths, read at once (-K 2K)" 1 "sbf classify: r2_short.fq ends after 99 reads but r1.fq goes on: the mate files hold different numbers of reads" out.fq '' \
  "$SBF" classify -x idx.sbf -K 2K -o out.fq r1.fq r2_short.fq
head -n 396 r1.fq > r1_short.fq
expect "the first mate file shorter, read at once (-K 2K)" 1 "sbf classify: r1_short.fq ends after 99 reads but r2.fq goes on: the mate files hold different numbers of reads" out.fq '' \
  "$SBF" classify -x idx.sbf -K 2K -o out.fq r1_short.fq r2.fq
expect "mates with different names, read at once (-K 2K)" 1 "sbf filter: mate names differ at pair 101: 'r100/1' in r1.fq and 'other/2' in r2_renamed.fq" 'out.fq out2.fq' '' \
  "$SBF" filter -x idx.sbf -K 2K -1 out.fq -2 out2.fq r1.fq r2_renamed.fq
# one batch: the mates side by side (r0/1, r0/2, r1/1, ...), the sequences as in the inputs
expect "pairs in one batch: mates side by side" 0 "$(summary '400 pairs (800 reads)' 0.1)" one_k.fq \
  'cmp -s <(awk "NR % 4 == 1" one_k.fq | cut -f 1) <(for i in $(seq 0 399); do echo "@r$i/1"; echo "@r$i/2"; done) &&
   cmp -s <(awk "NR % 8 == 2" one_k.fq) <(awk "NR % 4 == 2" r1.fq) && cmp -s <(awk "NR % 8 == 6" one_k.fq) <(awk "NR % 4 == 2" r2.fq)' \
  "$SBF" classify -x idx.sbf -o one_k.fq r1.fq r2.fq
expect "pairs read at once (-K 2K): the output of one batch" 0 "$(summary '400 pairs (800 reads)' 0.1)" small_k.fq \
  '[ -s one_k.fq ] && cmp -s small_k.fq one_k.fq' \
  "$SBF" classify -x idx.sbf -K 2K -o small_k.fq r1.fq r2.fq
expect "two inputs from stdin" 1 "sbf classify: only one of the two inputs can be standard input" out.fq '' \
  "$SBF" classify -x idx.sbf -o out.fq - -
expect "-1 without -2" 1 "sbf filter: -1 and -2 go together (one file per mate)" out.fq '' \
  "$SBF" filter -x idx.sbf -1 out.fq r1.fq r2.fq

# ---- damaged indexes -------------------------------------------------------------------------------
: > empty.sbf
expect "empty index" 1 "sbf classify: empty.sbf: not an sbf index (file too short)" out.fq '' \
  "$SBF" classify -x empty.sbf -o out.fq r1.fq
head -c 5000 idx.sbf > trunc.sbf
expect "truncated index" 1 "sbf classify: trunc.sbf: truncated index (5000 of $(wc -c < idx.sbf) bytes)" out.fq '' \
  "$SBF" classify -x trunc.sbf -o out.fq r1.fq
cp idx.sbf flip.sbf && printf '\xff' | dd of=flip.sbf bs=1 seek=20000 conv=notrunc 2> /dev/null
expect "index with a flipped byte" 1 "sbf classify: flip.sbf: corrupt filter of the panel of target 'lambda' and 1 more (checksum mismatch)" out.fq '' \
  "$SBF" classify -x flip.sbf -o out.fq r1.fq
"$testbin/index_version" idx.sbf v1.sbf 1
expect "index of an older format version (64-bit hashes)" 1 "sbf classify: v1.sbf: index of format version 1, written by an older sbf (this sbf reads versions 2 to 5): rebuild it with sbf build" out.fq '' \
  "$SBF" classify -x v1.sbf -o out.fq r1.fq
"$testbin/index_version" idx.sbf v6.sbf 6
expect "index of a newer format version" 1 "sbf classify: v6.sbf: index of format version 6, written by a newer sbf (this sbf reads versions 2 to 5): use that sbf, or rebuild the index" out.fq '' \
  "$SBF" classify -x v6.sbf -o out.fq r1.fq
# a version-5 file (panels) whose header claims version 2: its section table is not one of version 2
"$testbin/index_version" idx.sbf v2.sbf 2
expect "index of format 5 labelled version 2" 1 "sbf classify: v2.sbf: invalid section table in index header" out.fq '' \
  "$SBF" classify -x v2.sbf -o out.fq r1.fq
expect "a FASTA given as index" 1 "sbf classify: ref.fa: not an sbf index (bad magic)" out.fq '' \
  "$SBF" classify -x ref.fa -o out.fq r1.fq

expect "a filter past 2^32 shards is refused before anything is allocated" 1 "sbf build: target 'lambda': a filter of 5033164800 shards is larger than the 2^32 shards an index holds per target: lower --bits-per-kmer or --size" big.sbf '' \
  "$SBF" build --size 300G -o big.sbf lambda="$data/lambda.fa.gz"

expect "a target named 'none' is refused at build time" 1 "sbf build: target name 'none' is reserved: classification reports reads that match several targets as 'multi' and those that match none as 'none'" none.sbf '' \
  "$SBF" build -o none.sbf none="$data/lambda.fa.gz"

# ---- outputs ---------------------------------------------------------------------------------------
to=/dev/full expect "standard output is /dev/full" 1 "sbf classify: standard output: write failed: No space left on device" '' '' \
  "$SBF" classify -x idx.sbf r1.fq
# a device is written in place: it stays the device, with no temporary file beside it
expect "-o /dev/full" 1 "sbf classify: /dev/full: write failed: No space left on device" '' \
  '[ -c /dev/full ] && ! compgen -G "/dev/full.tmp.*" > /dev/null' \
  "$SBF" classify -x idx.sbf -o /dev/full r1.fq
expect "output folder missing" 1 "sbf classify: nodir/out.fq: cannot create a temporary file: No such file or directory" 'nodir/out.fq nodir' '' \
  "$SBF" classify -x idx.sbf -o nodir/out.fq r1.fq
# A folder sbf may not write to. Not root: chmod 555 ro. Root (chmod does not stop root, and CI
# runs as root): a read-only tmpfs mounted over ro/ in a mount namespace of the command's own
# (unshare -m; or unshare -rm, a user namespace too, where only that is allowed), so the mount
# lives exactly as long as the command and nothing stays mounted whatever happens. The method is
# used only once a probe has failed to create a file there; otherwise the case is a skip.
mkdir ro
in_ro() { unshare $ro_ns sh -c 'mount -t tmpfs -o ro,size=64k sbf-ro ro 2> /dev/null || exit 99; exec "$@"' sh "$@"; }
ro_how= ro_why=
if [ "$(id -u)" -ne 0 ]; then
  chmod 555 ro
  ro_ns= ; in_ro() { "$@"; }
  if ! touch ro/probe 2> /dev/null; then ro_how="chmod 555" ro_why="Permission denied"; fi
else
  for ro_ns in -m -rm; do
    if in_ro sh -c '! touch ro/probe 2> /dev/null && [ ! -e ro/probe ]' 2> /dev/null; then
      ro_how="a read-only tmpfs (unshare $ro_ns)" ro_why="Read-only file system"; break
    fi
  done
fi
if [ -n "$ro_how" ] && [ -z "$(ls -A ro)" ]; then
  expect "output folder not writable ($ro_how)" 1 "sbf classify: ro/out.fq: cannot create a temporary file: $ro_why" ro/out.fq '[ -z "$(ls -A ro)" ]' \
    in_ro "$SBF" classify -x idx.sbf -o ro/out.fq r1.fq
else
  skip "output folder not writable" "no way to make a folder read-only here (root, and neither unshare -m nor unshare -rm can mount a tmpfs)"
fi
chmod 755 ro
# A full disk while the index is written: a 64 kB tmpfs over full/ in a mount namespace of the
# command's own (as ro/ above); the space is reserved before any filter is copied (fallocate),
# so the error is a line, not a signal, and no temporary file stays (listed inside the mount).
mkdir full
"$SBF" build -o full_ref.sbf lambda="$data/lambda.fa.gz" ecoli="$data/ecoli_slice.fa.gz" 2> /dev/null
full_bytes=$(stat -c %s full_ref.sbf)
full_left=$(mktemp)   # outside the folder: the case checks that no entry appears there
in_full() { FULL_LEFT=$full_left unshare $full_ns sh -c 'mount -t tmpfs -o size=64k sbf-full full 2> /dev/null || exit 99; "$@"; rc=$?; ls -A full > "$FULL_LEFT"; exit $rc' sh "$@"; }
full_ns=
for ns in -m -rm; do
  if [ "$(id -u)" -eq 0 ] || [ "$ns" = -rm ]; then
    if unshare $ns sh -c 'mount -t tmpfs -o size=64k sbf-full full 2> /dev/null' 2> /dev/null; then full_ns=$ns; break; fi
  fi
done
if [ -n "$full_ns" ]; then
  expect "index written to a full disk (a 64 kB tmpfs, unshare $full_ns)" 1 "sbf build: full/x.sbf: cannot reserve $full_bytes bytes: No space left on device" '' \
    '[ ! -s "$full_left" ] && [ -z "$(ls -A full)" ]' \
    in_full "$SBF" build -o full/x.sbf lambda="$data/lambda.fa.gz" ecoli="$data/ecoli_slice.fa.gz"
else
  skip "index written to a full disk" "no way to mount a small tmpfs here (neither unshare -m nor unshare -rm)"
fi
rm -f "$full_left" full_ref.sbf
rmdir full
expect "--summary to a missing folder: no outputs kept" 1 "sbf classify: nodir/s.tsv: cannot create a temporary file: No such file or directory" 'out.fq nodir/s.tsv nodir' '' \
  "$SBF" classify -x idx.sbf -o out.fq --summary nodir/s.tsv r1.fq
cp r1.fq keep.fq
expect "output path equal to the input: refused, the input intact" 1 "sbf classify: keep.fq is an input: refusing to overwrite it" '' \
  'cmp -s keep.fq r1.fq' \
  "$SBF" classify -x idx.sbf -o keep.fq keep.fq
ln -s keep.fq link.fq
expect "output path a link to the input: refused, the link and the input intact" 1 "sbf classify: link.fq is an input: refusing to overwrite it" '' \
  '[ -L link.fq ] && [ "$(readlink link.fq)" = keep.fq ] && cmp -s keep.fq r1.fq' \
  "$SBF" classify -x idx.sbf -o link.fq keep.fq
expect "unknown -O" 1 "sbf classify: -O: unknown output format 'vcf' (sam, bam, cram, fastq, fasta; fastq.gz, fasta.gz, sam.gz for BGZF)" out.vcf '' \
  "$SBF" classify -x idx.sbf -O vcf -o out.vcf r1.fq
expect "--write-index on FASTQ output" 1 "sbf classify: out.fq: --write-index needs BAM or CRAM output" 'out.fq out.fq.fai' '' \
  "$SBF" classify -x idx.sbf --write-index -o out.fq r1.fq
(grep '^@' mapped.sam; grep -v '^@' mapped.sam | sort -k4,4nr) > unsorted.sam
expect "--write-index on unsorted BAM" 1 "sbf classify: out.bam: cannot write record 'm47501' (--write-index needs coordinate-sorted records)" 'out.bam out.bam.bai out.bam.csi' '' \
  "$SBF" classify -x idx.sbf --write-index -o out.bam unsorted.sam
# (no s_*.fq either: nothing new may appear in the folder)
expect "--split together with -o" 1 "sbf classify: --split writes its own files: -o, -1 and -2 cannot be used with it" 'out.fq' '' \
  "$SBF" classify -x idx.sbf --split 's_%.fq' -o out.fq r1.fq

# ---- signals: nothing partial is left ------------------------------------------------------------------
for i in $(seq 500); do cat r1.fq; done > many_1.fq
for i in $(seq 500); do cat r2.fq; done > many_2.fq
# NAME SIGNAL STATUS: the signal is sent once sbf's temporary BAM exists (so its removal is
# tested); sbf dies of it (STATUS) without a word on stderr or stdout, leaving neither output,
# nor a temporary file, nor anything else new
sig_case() {
  local before pid got tries=0 new
  rm -f stdout stderr
  if [ -n "$(left 'sig.bam sig.tsv')" ]; then not_ok "$1" "exists before the run: $(left 'sig.bam sig.tsv')"; return; fi
  before=$(listing)
  env --default-signal="$2" "$SBF" classify -x idx.sbf -K 1K -o sig.bam --summary sig.tsv many_1.fq many_2.fq < /dev/null > stdout 2> stderr &
  pid=$!
  # up to 30 s: a sanitized build on a loaded CI machine starts slowly
  while ! compgen -G 'sig.bam.tmp.*' > /dev/null && [ $tries -lt 1500 ]; do sleep 0.02; tries=$((tries + 1)); done
  kill -"$2" $pid 2> /dev/null
  wait $pid
  got=$?
  unswitch
  new=$(strays "$before")
  if [ "$got" -ne "$3" ]; then not_ok "$1" "exit status $got, expected $3" "stderr: $(head -n 1 stderr)"
  elif [ $tries -ge 1500 ]; then not_ok "$1" "the temporary BAM never appeared"
  elif [ -s stderr ]; then not_ok "$1" "stderr: '$(head -n 1 stderr)'" "wanted nothing"
  elif [ -s stdout ]; then not_ok "$1" "stdout is not empty"
  elif [ -n "$(left 'sig.bam sig.tsv')" ]; then not_ok "$1" "left behind: $(left 'sig.bam sig.tsv')"
  elif [ -n "$new" ]; then not_ok "$1" "entries of the folder appeared or went away: $new"
  else ok "$1"; fi
}
sig_case "SIGINT mid-run leaves no output" INT 130
sig_case "SIGTERM mid-run leaves no output" TERM 143
# SIGPIPE: stdout into head, whose 2 lines are those of one_k.fq (the same first pair); sbf's own
# status (PIPESTATUS), no word on stderr, no --json file nor anything else new
pipe_case() {   # NAME STATUS
  local before status new
  rm -f stdout stderr
  if [ -n "$(left pipe.json)" ]; then not_ok "$1" "exists before the run: $(left pipe.json)"; return; fi
  before=$(listing)
  "$SBF" classify -x idx.sbf -K 1K --json pipe.json many_1.fq many_2.fq < /dev/null 2> stderr | head -n 2 > stdout
  status=${PIPESTATUS[0]}
  unswitch
  new=$(strays "$before")
  if [ "$status" -ne "$2" ]; then not_ok "$1" "exit status $status, expected $2" "stderr: $(head -n 1 stderr)"
  elif [ -s stderr ]; then not_ok "$1" "stderr: '$(head -n 1 stderr)'" "wanted nothing"
  elif ! cmp -s stdout <(head -n 2 one_k.fq); then not_ok "$1" "stdout: $(head -c 200 stdout)" "wanted: $(head -n 2 one_k.fq)"
  elif [ -n "$(left pipe.json)" ]; then not_ok "$1" "left behind: $(left pipe.json)"
  elif [ -n "$new" ]; then not_ok "$1" "entries of the folder appeared or went away: $new"
  else ok "$1"; fi
}
pipe_case "SIGPIPE (| head) leaves no --json file" 141

# ---- load: 10x the input with small batches, memory stays flat and the output is complete ---------
for i in $(seq 10); do cat many_1.fq; done > load_1.fq
for i in $(seq 10); do cat many_2.fq; done > load_2.fq
peak() { sed -n 's/.*peak RSS \([0-9.]*\) MiB.*/\1/p' "$1"; }
expect "1x the input (200,000 pairs, -K 64K): every record written" 0 "$(summary '200000 pairs (400000 reads)' 40.0)" l1.bam \
  '[ "$(samtools view -c l1.bam)" -eq 400000 ] && cp stderr l1.err' \
  "$SBF" classify -x idx.sbf -K 64K --gpu none --stats -o l1.bam many_1.fq many_2.fq
expect "10x the input (2,000,000 pairs, -K 64K): every record written" 0 "$(summary '2000000 pairs (4000000 reads)' 400.0)" l10.bam \
  '[ "$(samtools view -c l10.bam)" -eq 4000000 ] && cp stderr l10.err' \
  "$SBF" classify -x idx.sbf -K 64K --gpu none --stats -o l10.bam load_1.fq load_2.fq
r1=$(peak l1.err 2> /dev/null) r10=$(peak l10.err 2> /dev/null)
# 8 MiB of slack; 32 under AddressSanitizer (scripts/sanitize.sh sets ASAN_OPTIONS), whose
# quarantine of freed memory grows with the allocations of a longer run
slack=8; [ -n "${ASAN_OPTIONS:-}" ] && slack=32
if [ -n "$r1" ] && [ -n "$r10" ] && awk -v a="$r1" -v b="$r10" -v s="$slack" 'BEGIN { exit !(b <= a + s) }'; then
  ok "... peak RSS flat: $r10 MiB against $r1 MiB"
else not_ok "... peak RSS flat" "1x: $r1 MiB, 10x: $r10 MiB (slack $slack MiB)"; fi
rm -f load_1.fq load_2.fq l1.bam l10.bam

# ---- no GPU, or not enough GPU memory: the CPU engine with a notice ----------------------------------
if "$SBF" --version | grep -q '^GPU 0:'; then
  # one panel of two filters (94.8 + 71.1 KiB in 8 columns: 189.6 KiB) and, for each of the device's six workers, two batches of
  # 1 M bases (the GPU default of -K) at 2 bytes per base
  line="sbf classify: notice: the index and batches need 24.2 MiB on the GPU, more than --gpu-mem-limit 1.0 KiB: using the CPU engine"
  line7="sbf classify: notice: no GPU number 7 (devices 0 to $(($("$SBF" --version | grep -c '^GPU ') - 1))): using the CPU engine"
  line_all=$(summary '400 reads' 0.0)
else
  line="sbf classify: notice: GPU 0 requested but no CUDA device is usable: using the CPU engine"
  line7="sbf classify: notice: GPU 7 requested but no CUDA device is usable: using the CPU engine"
  line_all="sbf classify: notice: --gpu all but no CUDA device is usable: using the CPU engine"
fi
expect "--gpu none: the CPU engine" 0 "$(summary '400 reads' 0.0)" cpu_out.fq 'tagged_r1 cpu_out.fq' \
  "$SBF" classify -x idx.sbf --gpu none -o cpu_out.fq r1.fq
expect "--gpu 0 --gpu-mem-limit 1K: CPU engine and a notice, the same output" 0 "$line" gpu_out.fq \
  '[ -s cpu_out.fq ] && cmp -s gpu_out.fq cpu_out.fq' \
  "$SBF" classify -x idx.sbf --gpu 0 --gpu-mem-limit 1K -o gpu_out.fq r1.fq
expect "--gpu 7: no such device, a notice, the same output" 0 "$line7" gpu7.fq \
  '[ -s cpu_out.fq ] && cmp -s gpu7.fq cpu_out.fq' \
  "$SBF" classify -x idx.sbf --gpu 7 -o gpu7.fq r1.fq
expect "--gpu 1,1: a device listed twice" 1 "sbf classify: --gpu 1,1: device 1 is listed twice" twice.fq '' \
  "$SBF" classify -x idx.sbf --gpu 1,1 -o twice.fq r1.fq
expect "--gpu 0,: an empty list item" 1 \
  "sbf classify: invalid value '0,' for --gpu: expected auto, none, all or device numbers (0,1)" comma.fq '' \
  "$SBF" classify -x idx.sbf --gpu 0, -o comma.fq r1.fq
# every device (or, without one, the CPU engine with a notice): the same output
expect "--gpu all: the CPU engine's output (without a GPU: a notice)" 0 "$line_all" all_out.fq \
  '[ -s cpu_out.fq ] && cmp -s all_out.fq cpu_out.fq' \
  "$SBF" classify -x idx.sbf --gpu all -o all_out.fq r1.fq

tap_end
