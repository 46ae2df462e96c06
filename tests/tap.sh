# tests/tap.sh -- sourced by the end-to-end test scripts (tests/*.sh): where things are, a
# scratch folder, and TAP-like output that scripts/test-summary.sh counts.
#   srcdir  tests/ of the source tree (make check sets it)   SBF   the sbf to test
#   data    tests/data                                        work  a scratch folder, removed
#                                                                   at exit unless KEEP is set
#   ok NAME | not_ok NAME [DETAIL...] | check NAME CMD... | skip NAME WHY | tap_end (last line)
srcdir=${srcdir:-$(cd "$(dirname "$0")" && pwd)}
SBF=${SBF:-$srcdir/../sbf}
data=$srcdir/data
work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-$(basename "$0" .sh).XXXXXX") || exit 1
# the records of indexes verified once (plugin/sbf_verified.h): a folder of the test's own,
# beside the scratch folder (tests count the scratch folder's entries); removed by its own name,
# since a script may point XDG_CACHE_HOME elsewhere (into $work) after sourcing this
tap_cache=$(mktemp -d "${TMPDIR:-/tmp}/sbf-$(basename "$0" .sh)-cache.XXXXXX") || exit 1
export XDG_CACHE_HOME=$tap_cache
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work" "$tap_cache"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# the plan line, and the exit status: 1 if any case failed
tap_end() { echo "1..$n"; [ "$failed" -eq 0 ]; }
