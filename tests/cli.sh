#!/usr/bin/env bash
# cli.sh -- end-to-end tests of the sbf command: outputs compared with expected files, exit
# codes, the exact error lines, and no damaged output left behind. Prints TAP-like lines
# ("ok N - what" / "not ok N - what"); exits 1 if any case failed.
# Run by `make check` (SBF and srcdir set by Makefile.am) or by hand: tests/cli.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
expected=$srcdir/expected

# run NAME EXPECTED_STATUS CMD...: runs CMD, stdout in $work/out, stderr in $work/err
run() {
  local name=$1 want=$2
  shift 2
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then return 0; fi
  local lines   # one argument per line: not_ok comments out each argument's first line only
  mapfile -t lines < <(head -c 300 "$work/err")
  not_ok "$name" "exit status $got, expected $want" "stderr:" "${lines[@]}"
  return 1
}

# first_stderr_line MODE NAME EXPECTED_STATUS WANTED CMD...: runs CMD and compares the first
# line of its stderr with WANTED, exactly (MODE exact) or as a prefix (MODE prefix)
first_stderr_line() {
  local mode=$1 name=$2 want=$3 line=$4
  shift 4
  run "$name" "$want" "$@" || return
  local first
  first=$(head -n 1 "$work/err")
  case $mode:$first in
    "exact:$line" | "prefix:$line"*) ok "$name" ;;
    *) not_ok "$name" "stderr: '$first'" "wanted: '$line'$([ "$mode" = prefix ] && echo ...)" ;;
  esac
}
check_error() { first_stderr_line exact "$@"; }
check_error_prefix() { first_stderr_line prefix "$@"; }

# same NAME FILE EXPECTED_FILE
same() {
  if cmp -s "$2" "$3"; then ok "$1"; return; fi
  local lines
  mapfile -t lines < <(diff "$3" "$2" | head -n 10)
  not_ok "$1" "${lines[@]}"
}
# has NAME FILE PATTERN: ok when a line of FILE matches PATTERN (grep's), else not ok with the
# file's first lines. Each check reports ok or not ok: never `run ... && grep -q ... && ok`,
# which says nothing at all when the grep fails.
has() {
  if grep -q -- "$3" "$2"; then ok "$1"; return; fi
  local first   # one argument per line: not_ok comments out each argument's first line only
  mapfile -t first < <(head -n 3 "$2")
  not_ok "$1" "no line of $2 matches '$3'; its first lines:" "${first[@]}"
}

cd "$work"
cp "$data"/* .

# ---- general ----
run "--version exits 0" 0 "$SBF" --version &&
  if head -n 1 out | grep -Eq '^sbf [0-9]+\.[0-9]+\.[0-9]+$'; then ok "--version first line is 'sbf X.Y.Z'"; else not_ok "--version first line" "$(head -n 1 out)"; fi
run "--help exits 0" 0 "$SBF" --help && has "--help prints usage to stdout" out '^Usage:   sbf <command>'
run "no arguments exits 1" 1 "$SBF" && has "no arguments: usage on stderr, exit 1" err 'Usage:'
for cmd in build info query; do
  run "help $cmd" 0 "$SBF" help "$cmd" && has "sbf help $cmd prints its usage" out "^Usage: sbf $cmd"
  run "$cmd -h" 0 "$SBF" "$cmd" -h && has "sbf $cmd -h prints its usage" out "^Usage: sbf $cmd"
done
check_error "unknown command" 1 "sbf: unknown command 'frobnicate' (see 'sbf --help')" "$SBF" frobnicate
check_error "help for an unknown command" 1 "sbf help: unknown command 'frobnicate'" "$SBF" help frobnicate
check_error "build usage error: unknown option" 1 "Usage: sbf build -o IDX.sbf [options] [NAME=]REF.fa[.gz] ..." \
  bash -c "'$SBF' build --no-such-option 2>&1 >/dev/null | grep -v unrecognized >&2; exit \${PIPESTATUS[0]}"

# ---- build ----
P=(-k 31 -m 21 -s 24 -H 2)   # pinned: expected files must not move with the defaults
check_error "build without -o" 1 "sbf build: no output index given (-o IDX.sbf)" "$SBF" build phage_a.fa
check_error "build without reference" 1 "sbf build: no reference given" "$SBF" build -o x.sbf
check_error "build -k 40" 1 "sbf build: invalid value '40' for -k: expected an integer from 1 to 32" "$SBF" build -k 40 -o x.sbf phage_a.fa
check_error "build -m > k" 1 "sbf build: minimizer length m=25 must be between 1 and k=21" "$SBF" build -k 21 -m 25 -o x.sbf phage_a.fa
check_error "build --shard-bits 300" 1 "sbf build: shard size 300 bits must be 256 or 512" "$SBF" build --shard-bits 300 -o x.sbf phage_a.fa
check_error "build --size and --bits-per-kmer" 1 "sbf build: --bits-per-kmer and --size are alternatives: give one" \
  "$SBF" build --size 1M --bits-per-kmer 8 -o x.sbf phage_a.fa
check_error "build --size nonsense" 1 "sbf build: invalid size '12Q' for --size: expected a positive number of bytes, K/M/G/T suffixes allowed" \
  "$SBF" build --size 12Q -o x.sbf phage_a.fa
check_error "build missing reference" 1 "sbf build: nosuch.fa: cannot open: No such file or directory" "$SBF" build -o x.sbf nosuch.fa
[ ! -e x.sbf ] && [ -z "$(ls x.sbf.tmp.* 2>/dev/null)" ] && ok "failed build leaves no file" || not_ok "failed build leaves no file" "$(ls)"
check_error "build from a text file" 1 "sbf build: pairs_1.fq.txt: not FASTA, FASTQ, SAM, BAM or CRAM (looks like unknown text)" \
  bash -c "echo 'hello world' > pairs_1.fq.txt; '$SBF' build -o x.sbf pairs_1.fq.txt"
check_error "build: target without k-mers" 1 "sbf build: target 'tiny' has no valid 31-mer (sequences shorter than k, or only N)" \
  bash -c "printf '>t\nACGTNACGT\n' > tiny.fa; '$SBF' build -o x.sbf tiny.fa"
check_error "build: empty name" 1 "sbf build: '=phage_a.fa': expected [NAME=]FILE with a non-empty name and file" "$SBF" build -o x.sbf =phage_a.fa

run "build two targets" 0 "$SBF" build "${P[@]}" -o idx.sbf phage_a.fa B=phage_b.fa && ok "build two targets"
run "build with 2 threads" 0 "$SBF" build "${P[@]}" -@ 2 -o idx2.sbf phage_a.fa B=phage_b.fa &&
  same "-@ 2 builds the same bytes as -@ 1" idx2.sbf idx.sbf
# one FASTA file of several records on 4 threads is read in pieces, parsed on threads
# (plugin/sbf_build_read.c; test_fastx cuts files everywhere): the bytes of -@ 1
run "one multi-record file on 4 threads" 0 bash -c "cat phage_a.fa phage_b.fa > ab.fa && gzip -c ab.fa > ab.fa.gz && '$SBF' build ${P[*]} -@ 4 -o ab4.sbf ab.fa.gz" &&
  run "the same on 1 thread" 0 "$SBF" build "${P[@]}" -@ 1 -o ab1.sbf ab.fa.gz &&
  same "one multi-record file: -@ 4 builds the same bytes as -@ 1" ab4.sbf ab1.sbf
run "build from gzip" 0 bash -c "gzip -c phage_a.fa > phage_a.fa.gz && '$SBF' build ${P[*]} -o idx3.sbf phage_a.fa.gz B=phage_b.fa" &&
  run "info of gzip build" 0 "$SBF" info --json idx3.sbf &&
  if grep -q '"name": "phage_a", "sources": \["phage_a.fa.gz"\], "bases": 4500, "kmers": 4360' out; then
    ok "gzip input: same target name, bases and k-mers"; else not_ok "gzip input" "$(cat out)"; fi
# a plain gzip file of 8 MiB or more is inflated on the build's threads (bam/sbf_pgzip.c;
# tests/test_pgzip checks the bytes): the index of -@ 4 is -@ 1's (one ISA-L stream), and a
# damaged copy fails on both, the parallel decoder saying what it found
head -c 32000000 /dev/urandom | tr '\000-\377' "$(printf 'ACGT%.0s' $(seq 64))" | fold -w 70 |
  { echo '>rand'; cat; } | gzip -1 > rand.fa.gz
run "build from a large gzip file on 4 threads" 0 "$SBF" build "${P[@]}" -@ 4 -o rand4.sbf rand.fa.gz &&
  run "the same on 1 thread" 0 "$SBF" build "${P[@]}" -@ 1 -o rand1.sbf rand.fa.gz &&
  same "a large gzip file: -@ 4 builds the same bytes as -@ 1" rand4.sbf rand1.sbf
cp rand.fa.gz bad.fa.gz && printf '\377' | dd of=bad.fa.gz bs=1 seek=5000000 conv=notrunc 2> /dev/null
check_error_prefix "a damaged large gzip file on 4 threads: what the decoder found" 1 \
  "sbf build: bad.fa.gz: read error or truncated compressed data after 0 records (" "$SBF" build -@ 4 -o bad.sbf bad.fa.gz
check_error "the same on 1 thread" 1 "sbf build: bad.fa.gz: read error or truncated compressed data after 0 records" \
  "$SBF" build -@ 1 -o bad.sbf bad.fa.gz
if [ ! -e bad.sbf ]; then ok "a damaged gzip file leaves no index"; else not_ok "a damaged gzip file left bad.sbf"; fi
rm -f rand.fa.gz bad.fa.gz rand4.sbf rand1.sbf
run "NAME= repeated joins files" 0 "$SBF" build "${P[@]}" -o joined.sbf both=phage_a.fa both=phage_b.fa &&
  run "info joined" 0 "$SBF" info --json joined.sbf &&
  if grep -q '"name": "both", "sources": \["phage_a.fa", "phage_b.fa"\], "bases": 7000, "kmers": 6830' out; then
    ok "NAME= given twice makes one target of two files"; else not_ok "NAME= repeated" "$(cat out)"; fi
run "build -k 21 alone" 0 "$SBF" build -k 21 -o k21.sbf phage_a.fa && run "info k21" 0 "$SBF" info --json k21.sbf &&
  if grep -q '"k": 21,' out && grep -q '"m": 15,' out && grep -q '"s": 15,' out; then
    ok "-k alone scales m and s to k-6"; else not_ok "-k alone" "$(head -n 6 out)"; fi
run "build --size" 0 "$SBF" build "${P[@]}" --size 64K -o sized.sbf phage_a.fa && run "info sized" 0 "$SBF" info --json sized.sbf &&
  if grep -q '"bytes": 65536' out; then ok "--size 64K gives a 64 KiB filter"; else not_ok "--size" "$(cat out)"; fi

# ---- engines: CPU and GPU give the same bytes (where no GPU is present, --gpu 0 falls back) ----
run "build --gpu none" 0 "$SBF" build "${P[@]}" --gpu none -o cpu.sbf phage_a.fa B=phage_b.fa &&
  same "--gpu none builds the same bytes" cpu.sbf idx.sbf
# with a GPU, --progress must say the build ran there (a silent fallback would compare the CPU
# with itself); without one these are skips, not passes
if "$SBF" --version | grep -q '^GPU 0:'; then
  for g in auto 0; do
    run "build --gpu $g" 0 "$SBF" build "${P[@]}" --gpu $g --progress -o gpu$g.sbf phage_a.fa B=phage_b.fa &&
      if grep -qE "^sbf build: \[ *[0-9.]* s\] target 'phage_a', k=31: filter on GPU 0(, leaving out .* there)?$" "$work/err" &&
        grep -qE "^sbf build: \[ *[0-9.]* s\] target 'B', k=21: filter on GPU 0(, leaving out .* there)?$" "$work/err" &&
        ! grep -q notice "$work/err"; then
        same "--gpu $g builds on the GPU the same bytes as the CPU" gpu$g.sbf idx.sbf
      else not_ok "--gpu $g builds on the GPU the same bytes as the CPU" "not built on GPU 0: $(head -c 300 "$work/err")"; fi
  done
  run "query --gpu 0" 0 "$SBF" query -x idx.sbf --gpu 0 reads.fq &&
    if [ -s "$work/err" ]; then not_ok "query --gpu 0: same as the CPU" "stderr: $(head -c 300 "$work/err")"
    else same "query --gpu 0: same as the CPU" out "$expected/query.tsv"; fi
else
  for name in "--gpu auto builds on the GPU the same bytes as the CPU" "--gpu 0 builds on the GPU the same bytes as the CPU" \
              "query --gpu 0: same as the CPU"; do skip "$name" "no GPU"; done
  run "build --gpu auto without a GPU" 0 "$SBF" build "${P[@]}" --gpu auto -o auto.sbf phage_a.fa B=phage_b.fa &&
    same "--gpu auto without a GPU: the CPU's bytes" auto.sbf idx.sbf
fi
check_error "build --gpu 99" 0 "sbf build: notice: $(if "$SBF" --version | grep -q 'usable devices (CPU engine)\|CUDA: not built'; then
    echo 'GPU 99 requested but no CUDA device is usable: using the CPU engine'; else
    echo "no GPU number 99 (devices 0 to $(( $("$SBF" --version | grep -c '^GPU ') - 1 ))): using the CPU engine"; fi)" \
  "$SBF" build "${P[@]}" --gpu 99 -o gpu99.sbf phage_a.fa
check_error "build --gpu nonsense" 1 "sbf build: invalid value 'x' for --gpu: expected an integer from 0 to 1023" \
  "$SBF" build --gpu x -o x.sbf phage_a.fa

# ---- info ----
# the engine line depends on the machine (GPU or not): compared apart
# (grep -v exits 1 when it keeps no line: `;`, not `&&`, so that an empty output fails the comparison)
run "info" 0 "$SBF" info idx.sbf && { grep -v '^engine ' out > out.noengine; same "info text" out.noengine "$expected/info.txt"; }
grep -Eq '^engine +(CPU \(no usable CUDA device\)|GPU 0: .+)$' out && ok "info names the engine" || not_ok "info names the engine" "$(grep engine out)"
run "info --json" 0 "$SBF" info --json idx.sbf && { grep -v '"gpu": ' out > out.nogpu; same "info --json" out.nogpu "$expected/info.json"; }
check_error "info without index" 1 "sbf info: no index given" "$SBF" info
check_error "info of a FASTA file" 1 "sbf info: phage_a.fa: not an sbf index (bad magic)" "$SBF" info phage_a.fa
check_error "info of a truncated index" 1 "sbf info: cut.sbf: truncated index (4000 of $(wc -c < idx.sbf) bytes)" \
  bash -c "head -c 4000 idx.sbf > cut.sbf; '$SBF' info cut.sbf"
check_error "info of a corrupted index" 1 "sbf info: flip.sbf: corrupt filter of the panel of target 'phage_a' and 1 more (checksum mismatch)" \
  bash -c "cp idx.sbf flip.sbf; printf '\\377' | dd of=flip.sbf bs=1 seek=14000 conv=notrunc status=none; '$SBF' info flip.sbf"
run "info --check" 0 "$SBF" info --check idx.sbf &&
  if [ "$(cat out)" = "$("$SBF" info --json idx.sbf | sed -n 's/^  "checksum": "\([0-9a-f]*\)",$/\1/p')  idx.sbf" ]; then
    ok "info --check: one line, the checksum info --json gives, then the file"; else not_ok "info --check: one line, the checksum" "$(cat out)"; fi
"$SBF" build "${P[@]}" --progress -o prog.sbf phage_a.fa B=phage_b.fa 2> prog.err
check "build --progress: the last line gives the index's checksum, as info --check does" \
  sh -c "tail -n 1 prog.err | grep -q \"; prog.sbf has checksum \$('$SBF' info --check prog.sbf | cut -d' ' -f1) (sbf info --check)\$\""
check "... the same checksum in the text form, and for a copy of the file" \
  sh -c "cp idx.sbf copy.sbf && [ \"\$('$SBF' info --check copy.sbf | cut -d' ' -f1)\" = \"\$(cut -d' ' -f1 out)\" ] &&
         '$SBF' info idx.sbf | grep -qx \"checksum    \$(cut -d' ' -f1 out)\""
check_error "info --check of a corrupted index" 1 "sbf info: flip.sbf: corrupt filter of the panel of target 'phage_a' and 1 more (checksum mismatch)" \
  "$SBF" info --check flip.sbf
check_error "info --json --check: refused" 1 "sbf info: --json and --check: give one" "$SBF" info --json --check idx.sbf
check_error "info of an index whose long-read layer is corrupted" 1 "sbf info: flip2.sbf (long-read layer): corrupt filter of the panel of target 'phage_a' and 1 more (checksum mismatch)" \
  bash -c "cp idx.sbf flip2.sbf; printf '\\377' | dd of=flip2.sbf bs=1 seek=\$((\$(wc -c < idx.sbf) - 200)) conv=notrunc status=none; '$SBF' info flip2.sbf"
check_error "info to a full disk" 1 "sbf info: error writing to standard output: No space left on device" \
  bash -c "'$SBF' info idx.sbf > /dev/full"

# ---- query ----
run "query" 0 "$SBF" query -x idx.sbf reads.fq && same "query: hits per read and target" out "$expected/query.tsv"
run "query -@ 3 -K 100" 0 "$SBF" query -x idx.sbf -@ 3 -K 100 reads.fq && same "query: threads and tiny batches change nothing" out "$expected/query.tsv"
run "query stdin" 0 bash -c "cat reads.fq | '$SBF' query -x idx.sbf -" && same "query from stdin" out "$expected/query.tsv"
run "query gzip" 0 bash -c "gzip -c reads.fq > reads.fq.gz && '$SBF' query -x idx.sbf reads.fq.gz" && same "query from gzip" out "$expected/query.tsv"
run "query SAM" 0 bash -c "awk 'NR%4==1{n=substr(\$1,2)} NR%4==2{print n\"\\t4\\t*\\t0\\t0\\t*\\t*\\t0\\t0\\t\"\$0\"\\t*\"}' reads.fq > reads.sam && '$SBF' query -x idx.sbf reads.sam" &&
  same "query from SAM" out "$expected/query.tsv"
run "query --gpu none" 0 "$SBF" query -x idx.sbf --gpu none reads.fq && same "query --gpu none" out "$expected/query.tsv"
run "query --gpu auto" 0 "$SBF" query -x idx.sbf --gpu auto reads.fq && same "query --gpu auto: same as the CPU" out "$expected/query.tsv"
run "query -o" 0 "$SBF" query -x idx.sbf -o q.tsv reads.fq && same "query -o FILE" q.tsv "$expected/query.tsv"
run "query pairs" 0 "$SBF" query -x idx.sbf pairs_1.fq pairs_2.fq && same "query of pairs: one line per pair" out "$expected/query_pairs.tsv"
check_error "query: mismatched mate names" 1 "sbf query: mate names differ: 'p2/1' in pairs_1.fq and 'p9/2' in pairs_2_misnamed.fq" \
  "$SBF" query -x idx.sbf -o pq.tsv pairs_1.fq pairs_2_misnamed.fq
[ ! -e pq.tsv ] && [ -z "$(ls pq.tsv.tmp.* 2>/dev/null)" ] && ok "failed query -o leaves no file" || not_ok "failed query -o leaves no file" "$(ls)"
check_error "query: mate file shorter" 1 "sbf query: short_2.fq ends before pairs_1.fq: the mate files hold different numbers of reads" \
  bash -c "head -n 4 pairs_2.fq > short_2.fq; '$SBF' query -x idx.sbf pairs_1.fq short_2.fq"
check_error "query without index" 1 "sbf query: no index given (-x IDX.sbf)" "$SBF" query reads.fq
check_error "query without input" 1 "sbf query: no input given" "$SBF" query -x idx.sbf
check_error "query of a missing file" 1 "sbf query: nosuch.fq: cannot open: No such file or directory" "$SBF" query -x idx.sbf nosuch.fq
check_error "query with a corrupted index" 1 "sbf query: flip.sbf: corrupt filter of the panel of target 'phage_a' and 1 more (checksum mismatch)" "$SBF" query -x flip.sbf reads.fq
# an index of format 2 (sbf 0.5, one filter per target) is read as it is: sbf 0.5's answers
run "query with a format-2 index" 0 "$SBF" query -x "$srcdir/data/format2.sbf" reads.fq &&
  same "a format-2 index gives sbf 0.5's answers" out "$expected/format2_query.tsv"
# an index of format 3 (sbf 0.6, no masks; built by 0.6.0 with this file's idx.sbf command) is
# read as targets without masks: the same answers as idx.sbf
run "query with a format-3 index" 0 "$SBF" query -x "$srcdir/data/format3.sbf" reads.fq &&
  same "a format-3 index gives the answers of the same index in format 5" out "$expected/query.tsv"
# an index of format 4 (sbf 0.9.0 before the filters' checksums in pieces; this file's idx.sbf
# command): the same answers, and its filters still verified by one XXH64 each
run "query with a format-4 index" 0 "$SBF" query -x "$srcdir/data/format4.sbf" reads.fq &&
  same "a format-4 index gives the answers of the same index in format 5" out "$expected/query.tsv"
check_error "a format-4 index with a flipped filter byte is refused" 1 "sbf info: flip4.sbf: corrupt filter of the panel of target 'phage_a' and 1 more (checksum mismatch)" \
  bash -c "cp '$srcdir/data/format4.sbf' flip4.sbf; chmod u+w flip4.sbf; printf '\\377' | dd of=flip4.sbf bs=1 seek=14000 conv=notrunc status=none; '$SBF' info --check flip4.sbf"
run "info of a format-3 index" 0 "$SBF" info --json "$srcdir/data/format3.sbf" &&
  if [ "$(grep -c '"masks": \[\], "masked_kmers": 0}' out)" -eq 2 ]; then ok "info: a format-3 index's targets have no masks"
  else not_ok "info: a format-3 index's targets have no masks" "$(cat out)"; fi
check_error "query of a FASTQ with short quality" 1 "sbf query: badq.fq: record 'r1': quality and sequence lengths differ" \
  bash -c "printf '@r1\nACGTACGT\n+\nIII\n' > badq.fq; '$SBF' query -x idx.sbf badq.fq"
check_error_prefix "query of a truncated gzip" 1 "sbf query: cut.fq.gz: read error or truncated compressed data after " \
  bash -c "for i in \$(seq 300); do cat reads.fq; done | gzip -c > big.fq.gz; head -c 2000 big.fq.gz > cut.fq.gz; '$SBF' query -x idx.sbf cut.fq.gz 2>&1 >/dev/null | grep -v '^\[E::' >&2; exit \${PIPESTATUS[0]}"
run "existing output kept on failure" 1 bash -c "cp '$expected/query.tsv' keep.tsv; '$SBF' query -x flip.sbf -o keep.tsv reads.fq" &&
  same "a failed query leaves an existing -o file untouched" keep.tsv "$expected/query.tsv"
run "existing index kept on failed build" 1 bash -c "cp idx.sbf keep.sbf; '$SBF' build -o keep.sbf phage_a.fa nosuch.fa" &&
  same "a failed build leaves an existing index untouched" keep.sbf idx.sbf

echo "# $((n - failed)) passed, $failed failed"
tap_end   # the plan line 1..N: scripts/test-summary.sh checks that N cases were reported
