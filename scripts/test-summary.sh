#!/usr/bin/env bash
# scripts/test-summary.sh -- count the individual test cases run by 'make check'.
#
# Usage: scripts/test-summary.sh [--make-status RC] [--setup-failed] [--log FILE] [DIR]
#
# Reads the automake parallel-tests results in DIR (default: tests/ of the repository):
# one DIR/NAME.trs (':test-result: PASS|FAIL|SKIP|XFAIL|XPASS|ERROR') and DIR/NAME.log
# per test program. Test cases are counted from the log:
#   - cmocka programs: '[  PASSED  ] N test(s).', '[  FAILED  ] N test(s), listed below:'
#     and '[  SKIPPED ] N test(s), listed below:' (summed over all groups);
#   - anything else (tests/cli.sh): TAP-like lines 'ok N - text' and 'not ok N - text'
#     ('# SKIP' makes a case skipped, 'not ok ... # TODO' is not a failure, 'Bail out!'
#     is a failure).
# A program whose .trs says SKIP (exit 77) counts as skipped. A program that failed
# (FAIL, ERROR, XPASS) but whose log shows no failed case (a crash, a bad exit status)
# counts one more failure. --make-status gives the exit status of 'make check': when it
# is not 0 and no test failed (a build error), that is one more failure. --setup-failed:
# installing packages or building failed before 'make check' ran, one more failure.
# --log names the log to look at in those cases.
#
# Prints one line per program, 'tests/test_api: 12 passed, 0 failed', then as its last
# line exactly 'N passed, N failed' (', N skipped' appended when N > 0).
# Exit status: 0 when nothing failed, 1 otherwise, 2 on a usage error.
set -euo pipefail

usage() {
    sed -n '4p' "$0" | sed 's/^# //' >&2
    exit 2
}

make_status=0
setup_failed=0
make_log=
dir=
while [ $# -gt 0 ]; do
    case $1 in
    --make-status) [ $# -ge 2 ] || usage; make_status=$2; shift 2 ;;
    --log) [ $# -ge 2 ] || usage; make_log=$2; shift 2 ;;
    --setup-failed) setup_failed=1; shift ;;
    -h | --help) usage ;;
    -*) echo "test-summary: unknown option '$1'" >&2; usage ;;
    *) [ -z "$dir" ] || usage; dir=$1; shift ;;
    esac
done
case $make_status in '' | *[!0-9]*) echo "test-summary: --make-status needs a number" >&2; usage ;; esac
if [ -z "$dir" ]; then
    dir=$(cd "$(dirname "$0")/.." && pwd)/tests
    display=tests # print 'tests/test_api', not an absolute path
else
    display=${dir%/}
fi
[ -d "$dir" ] || { echo "test-summary: no such folder: $dir" >&2; exit 2; }

total_pass=0 total_fail=0 total_skip=0 programs=0

# One program: prints its line, adds to the totals.
summarise() {
    local trs=$1 name log result counts pass fail skip found note=
    name=$display/${trs#"$dir"/}
    name=${name%.trs}
    # automake drops a registered extension: tests/cli.sh logs to tests/cli.log
    [ ! -f "${trs%.trs}.sh" ] || name+=.sh
    log=${trs%.trs}.log
    result=$(awk '/^:test-result:/ { print $2; exit }' "$trs")
    [ -n "$result" ] || result=ERROR
    if [ -f "$log" ]; then
        # -> "passed failed skipped found", found=1 when the log had any test-case line.
        counts=$(awk '
            /^\[  PASSED  \] [0-9]+ test\(s\)/  { s = $0; sub(/^[^]]*\] /, "", s); cp += s; cm = 1 }
            /^\[  FAILED  \] [0-9]+ test\(s\)/  { s = $0; sub(/^[^]]*\] /, "", s); cf += s; cm = 1 }
            /^\[  SKIPPED \] [0-9]+ test\(s\)/  { s = $0; sub(/^[^]]*\] /, "", s); cs += s; cm = 1 }
            /^(not )?ok([ \t]|$)/ {
                tap = 1; up = toupper($0)
                if (up ~ /#[ \t]*SKIP/) ts++
                else if ($0 ~ /^ok/ || up ~ /#[ \t]*TODO/) tp++
                else tf++
            }
            /^Bail out!/ { tap = 1; tf++ }
            END {
                if (cm) printf "%d %d %d 1\n", cp, cf, cs
                else if (tap) printf "%d %d %d 1\n", tp, tf, ts
                else print "0 0 0 0"
            }' "$log")
    else
        counts="0 0 0 0"
        note="no log $log"
    fi
    read -r pass fail skip found <<<"$counts"

    case $result in
    PASS | XFAIL)
        [ "$found" = 1 ] || pass=1 ;;
    SKIP)
        [ "$skip" -gt 0 ] || skip=1
        note=${note:-exit status 77} ;;
    *) # FAIL, ERROR, XPASS, or something unknown
        if [ "$fail" -eq 0 ]; then
            fail=1
            if [ "$found" = 1 ]; then
                note=${note:-$result although no case failed: crash or bad exit status? see $log}
            else
                note=${note:-$result with no test counts: see $log}
            fi
        fi ;;
    esac

    local line="$name: $pass passed, $fail failed"
    [ "$skip" -eq 0 ] || line+=", $skip skipped"
    [ -z "$note" ] || line+=" ($note)"
    echo "$line"
    total_pass=$((total_pass + pass))
    total_fail=$((total_fail + fail))
    total_skip=$((total_skip + skip))
    programs=$((programs + 1))
}

shopt -s nullglob
# the test programs in DIR and its subfolders (tests/fuzz/replay_*)
while IFS= read -r trs; do
    summarise "$trs"
done < <(find "$dir" -name '*.trs' | sort)

if [ "$setup_failed" -eq 1 ]; then
    echo "setup: installing packages or building failed before the tests could run${make_log:+ (see $make_log)}"
    total_fail=$((total_fail + 1))
elif [ "$make_status" -ne 0 ] && [ "$total_fail" -eq 0 ]; then
    echo "make check: exit status $make_status but no test failed (a build error?${make_log:+ see $make_log})"
    total_fail=$((total_fail + 1))
elif [ "$programs" -eq 0 ]; then
    echo "$display: no test results (*.trs) found: did 'make check' run?"
    total_fail=$((total_fail + 1))
fi

final="$total_pass passed, $total_fail failed"
[ "$total_skip" -eq 0 ] || final+=", $total_skip skipped"
echo "$final"
[ "$total_fail" -eq 0 ]
