#!/usr/bin/env bash
# scripts/sanitize.sh -- the whole test suite under AddressSanitizer, UndefinedBehaviorSanitizer
# and LeakSanitizer, in a separate copy of the tree (the normal build is left alone).
# Any sanitizer report makes the test that triggered it fail (halt_on_error, no recovery).
# Prints the per-program lines and the closing 'N passed, N failed' of scripts/test-summary.sh.
#   scripts/sanitize.sh [WORKDIR]      (default: a new folder under ${TMPDIR:-/tmp})
set -uo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/sbf-sanitize.XXXXXX")}
log=$work/sanitize-build.log
mkdir -p "$work"
echo "sanitize: building in $work (log: $log)"
# tracked and untracked-but-not-ignored files: what a fresh clone plus local edits would hold
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$work" || exit 1
cd "$work" || exit 1
flags="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
status=0
{ autoreconf -fi && ./configure CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" &&
  make -j"$(nproc)"; } > "$log" 2>&1 || { echo "sanitize: build failed; last lines of $log:"; tail -n 30 "$log"; status=1; }
if [ $status -eq 0 ]; then
  export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export LSAN_OPTIONS=suppressions=$work/scripts/lsan.supp:print_suppressions=0   # htslib's own leak on a failed close
  make -j"$(nproc)" check >> "$log" 2>&1 || status=$?
  for f in tests/*.log; do
    if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" 2>/dev/null; then
      echo "---- sanitizer report in $f:"; grep -m 3 -A 12 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f"
    fi
  done
  exec scripts/test-summary.sh --make-status "$status" --log "$log"
fi
exec scripts/test-summary.sh --setup-failed --log "$log"
