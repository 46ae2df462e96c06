#!/usr/bin/env bash
# verified.sh -- an index's filters are verified once (plugin/sbf_verified.h): the first run
# against a file reads every checksum and leaves a record; later runs against the same file,
# unchanged, check the header and metadata only; a file changed in any way (rewritten in place,
# replaced by another under its name, copied) is verified again, so a damaged filter still
# stops the run; `sbf info --check` verifies every time, record or not. --stats says which
# happened; the outputs are the same either way.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/verified.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
records=$XDG_CACHE_HOME/sbf/verified

"$SBF" build --gpu none -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
zcat "$data/ecoli_slice.fa.gz" | awk '!/^>/ { printf "%s", $0 } END { print "" }' |
  awk '{ for (i = 0; i < 50; ++i) printf "@e%d\n%s\n+\n%s\n", i, substr($0, 1 + i * 300, 150), sprintf("%150s", "") }' |
  sed '4~4s/ /I/g' > reads.fq
opening() { sed -n 's/.*opening (seconds): 1 index [0-9.]* (filters verified: \([0-9]\) now, \([0-9]\) by an earlier run).*/\1 now, \2 before/p' "$1"; }
# run NAME WANT_OPENING [SBF ARGS...]: classify reads.fq with --stats; exit 0, the opening line
# WANT_OPENING ("1 now, 0 before" or "0 now, 1 before"), the same records as the first run
run() {
  local name=$1 want=$2 idx=$3
  "$SBF" classify --gpu none --stats -x "$idx" -o out.fq reads.fq 2> run.err
  local rc=$?
  if [ $rc -eq 0 ] && [ "$(opening run.err)" = "$want" ] && [ -s out.fq ] && cmp -s out.fq "${first_out:-out.fq}"; then
    ok "$name"
  else
    not_ok "$name" "exit $rc, opening '$(opening run.err)' (want '$want')" "$(grep -v '^  ' run.err | head -n 3)"
  fi
}

run "first run: every checksum read, a record left" "1 now, 0 before" idx.sbf
cp out.fq first.fq; first_out=first.fq
check "... one record, 0700 folder, naming the file's device and inode" \
  test "$(ls "$records" | wc -l)" = 1 -a -e "$records/$(printf '%x-%x' "$(stat -c %d idx.sbf)" "$(stat -c %i idx.sbf)")" \
  -a "$(stat -c %a "$records")" = 700
run "second run: the record stands, the filters are not read" "0 now, 1 before" idx.sbf
run "third run: the same" "0 now, 1 before" idx.sbf

# a byte of a filter flipped in place (dd changes the file's times): verified again, refused
cp idx.sbf flip.sbf
run "a copy is another file: verified" "1 now, 0 before" flip.sbf
run "... and then trusted" "0 now, 1 before" flip.sbf
printf '\xff' | dd of=flip.sbf bs=1 seek=20000 conv=notrunc 2> /dev/null
"$SBF" classify --gpu none -x flip.sbf -o out2.fq reads.fq 2> err; rc=$?
check "a filter damaged after its record: verified again, exit 1 and the checksum error, no output" \
  test $rc -eq 1 -a "$(cat err)" = "sbf classify: flip.sbf: corrupt filter of the panel of target 'human' and 1 more (checksum mismatch)" -a ! -e out2.fq
# another file renamed over a recorded one: another inode, verified
cp idx.sbf idx2.sbf && "$SBF" info idx2.sbf > /dev/null 2>&1 && test "$(ls "$records" | wc -l)" = 3 ||
  not_ok "sbf info leaves a record too" "$(ls "$records")"
cp flip.sbf other.sbf && mv other.sbf idx2.sbf
"$SBF" classify --gpu none -x idx2.sbf -o out2.fq reads.fq 2> err; rc=$?
check "a damaged file renamed over another: verified, exit 1" test $rc -eq 1 -a ! -e out2.fq
grep -q "checksum mismatch" err || not_ok "... the message names the checksum" "$(cat err)"

# A record forged for the damaged file as it is now (its size, times and identity): runs trust
# it (the design: a record is trusted as long as nothing changed the file), and info --check
# still reads every checksum.
ident=$("$SBF" info --check idx.sbf | cut -d ' ' -f 1)
printf 'sbf-verified 1 %s %s %s %s\n' "$(stat -c %s flip.sbf)" "$(stat -c %.9Y flip.sbf)" "$(stat -c %.9Z flip.sbf)" "$ident" \
  > "$records/$(printf '%x-%x' "$(stat -c %d flip.sbf)" "$(stat -c %i flip.sbf)")"
"$SBF" classify --gpu none --stats -x flip.sbf -o out2.fq reads.fq 2> err; rc=$?
check "a forged record is trusted by a run (header and metadata checked only)" \
  test $rc -eq 0 -a "$(opening err)" = "0 now, 1 before"
"$SBF" info --check flip.sbf > out.txt 2> err; rc=$?
check "info --check reads every checksum all the same: exit 1, the error" \
  test $rc -eq 1 -a ! -s out.txt -a "$(cat err)" = "sbf info: flip.sbf: corrupt filter of the panel of target 'human' and 1 more (checksum mismatch)"
# a record of the same file with another identity (a header rewritten to match another index):
# the record does not apply
printf 'sbf-verified 1 %s %s %s %s\n' "$(stat -c %s flip.sbf)" "$(stat -c %.9Y flip.sbf)" "$(stat -c %.9Z flip.sbf)" 0123456789abcdef \
  > "$records/$(printf '%x-%x' "$(stat -c %d flip.sbf)" "$(stat -c %i flip.sbf)")"
rm -f out2.fq
"$SBF" classify --gpu none -x flip.sbf -o out2.fq reads.fq 2> err; rc=$?
check "a record of another identity is not trusted: verified, exit 1" test $rc -eq 1 -a ! -e out2.fq

# no cache folder at all (no HOME, no XDG_CACHE_HOME): every run verifies, nothing is written
rm -rf "$XDG_CACHE_HOME"/sbf
env -u HOME -u XDG_CACHE_HOME "$SBF" classify --gpu none --stats -x idx.sbf -o out.fq reads.fq 2> run.err; rc=$?
check "no HOME: the run verifies and succeeds, no record written" test $rc -eq 0 -a "$(opening run.err)" = "1 now, 0 before" -a ! -e "$XDG_CACHE_HOME/sbf"
# a cache folder that cannot be written: the same, silently
mkdir -p ro && chmod 500 ro
XDG_CACHE_HOME=$work/ro "$SBF" classify --gpu none --stats -x idx.sbf -o out.fq reads.fq 2> run.err; rc=$?
if [ "$(id -u)" = 0 ]; then
  skip "a read-only cache folder: the run verifies, nothing written, no message" "root writes anywhere"
else
  check "a read-only cache folder: the run verifies, nothing written, no message" \
    test $rc -eq 0 -a "$(opening run.err)" = "1 now, 0 before" -a -z "$(ls -A ro)" -a "$(grep -c notice run.err)" = 0
fi
chmod 700 ro
tap_end
