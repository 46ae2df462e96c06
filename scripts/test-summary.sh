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
#   - anything else (tests/*.sh, tests/fuzz/replay_*): TAP-like lines 'ok N - text' and
#     'not ok N - text', and a plan line '1..N' (tests/tap.sh's tap_end prints it):
#       ok N - text                    passed
#       ok N - text # SKIP why         skipped
#       ok N - text # TODO ...         passed (a TODO that passes)
#       not ok N - text                failed
#       not ok N - text # TODO known bug: WHAT
#                                      a known bug: counted as skipped, not failed, and
#                                      listed by name ('known bug: ...' lines). WHAT must say
#                                      which bug (an issue, a sentence); 'known bug:' is
#                                      matched ignoring case.
#       not ok N - text # TODO [other] failed: a TODO that names no known bug is a failure
#       not ok N - text # SKIP why     failed: a case that ran and failed is not a skip
#       Bail out! ...                  failed
#     A TAP log with no plan line, or whose plan does not match the number of cases it
#     reported, counts one failure (the script stopped early, or lost cases), unless the
#     program already counts a failure.
# A program whose .trs says SKIP (exit 77) counts as skipped. A program that failed
# (FAIL, ERROR, XPASS) but whose log shows no failed case (a crash, a bad exit status)
# counts one more failure. --make-status gives the exit status of 'make check': when it
# is not 0 and no test failed (a build error), that is one more failure. --setup-failed:
# installing packages or building failed before 'make check' ran, one more failure.
# --log names the log to look at in those cases.
#
# Fuzz replays (DIR/fuzz/replay_*: every seed and regression input of a fuzz target run once)
# are reported apart: one line per replay program, 'N inputs replayed, N failed', then a
# 'fuzz replays:' line. Their inputs are not test cases: each only shows that the target does
# not crash (or, for fuzz_index, reject without a reason) on one more file, and they would make
# up two thirds of 'passed'. So inputs that replay fine are NOT counted in the final 'N passed';
# an input that fails (or a replay that crashes) IS counted in the final 'N failed'.
#
# Unit tests: the cmocka programs (DIR/test_*) are built only when configure found cmocka
# (configure.ac: PKG_CHECK_MODULES([CMOCKA]...), AM_CONDITIONAL HAVE_CMOCKA). Without it
# 'make check' silently runs none of them. When DIR holds no test_*.trs, the summary prints
# 'unit tests: not built (cmocka missing: ...)' (DIR/../config.log says HAVE_CMOCKA is false)
# or 'unit tests: no results ...', and counts it as ONE FAILURE: a suite without its unit
# tests has not passed (install libcmocka-dev and run ./configure again).
#
# Prints one line per program, 'tests/test_api: 12 passed, 0 failed', a 'test cases:' line
# and a 'fuzz replays:' line, then as its last line exactly 'N passed, N failed'
# (', N skipped' appended when N > 0), which .ci/run reads.
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
case_pass=0 case_fail=0 case_skip=0 case_programs=0
replay_pass=0 replay_fail=0 replay_skip=0 replay_programs=0 unit_programs=0
case_lines=() replay_lines=()

plural() { if [ "$1" -eq 1 ]; then echo "$1 $2"; else echo "$1 ${2}s"; fi; }

# One program: adds its line(s) to case_lines or replay_lines, adds to the totals.
summarise() {
    local trs=$1 name log result counts pass fail skip found plan note= replay=0 extra=()
    name=$display/${trs#"$dir"/}
    name=${name%.trs}
    # automake drops a registered extension: tests/cli.sh logs to tests/cli.log
    [ ! -f "${trs%.trs}.sh" ] || name+=.sh
    case ${trs#"$dir"/} in
    fuzz/replay_*) replay=1 ;;
    test_*) unit_programs=$((unit_programs + 1)) ;;
    esac
    log=${trs%.trs}.log
    result=$(awk '/^:test-result:/ { print $2; exit }' "$trs")
    [ -n "$result" ] || result=ERROR
    if [ -f "$log" ]; then
        # First line: "passed failed skipped found plan", found=1 when the log had any
        # test-case line; plan: 0 fine (or not TAP), 1 no plan line, 2 plan and cases differ
        # (then a third field: the plan's N). Then one line per known bug.
        mapfile -t counts < <(awk '
            /^\[  PASSED  \] [0-9]+ test\(s\)/  { s = $0; sub(/^[^]]*\] /, "", s); cp += s; cm = 1 }
            /^\[  FAILED  \] [0-9]+ test\(s\)/  { s = $0; sub(/^[^]]*\] /, "", s); cf += s; cm = 1 }
            /^\[  SKIPPED \] [0-9]+ test\(s\)/  { s = $0; sub(/^[^]]*\] /, "", s); cs += s; cm = 1 }
            /^(not )?ok([ \t]|$)/ {
                tap = 1; cases++; up = toupper($0); notok = $0 ~ /^not ok/
                if (!notok && up ~ /#[ \t]*SKIP/) ts++
                else if (!notok) tp++
                else if (up ~ /#[ \t]*TODO[ \t]+KNOWN BUG:[ \t]*[^ \t]/) { ts++; known[++nk] = $0 }
                else tf++
            }
            /^1\.\.[0-9]+[ \t]*$/ { planned = substr($0, 4) + 0; has_plan = 1 }
            /^Bail out!/ { tap = 1; bail = 1; tf++ }
            END {
                if (cm) printf "%d %d %d 1 0\n", cp, cf, cs
                else if (tap) printf "%d %d %d 1 %s\n", tp, tf, ts,
                    bail ? "0" : !has_plan ? "1" : planned != cases ? "2 " planned : "0"
                else print "0 0 0 0 0"
                for (i = 1; i <= nk; ++i) print known[i]
            }' "$log")
    else
        counts=("0 0 0 0 0")
        note="no log $log"
    fi
    read -r pass fail skip found plan planned <<<"${counts[0]}"

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
    if [ "$fail" -eq 0 ] && [ "$plan" != 0 ] && [ "$result" != SKIP ]; then
        fail=1
        if [ "$plan" = 1 ]; then
            note=${note:-no plan line 1..N at the end of $log: did the script stop early?}
        else
            note=${note:-plan 1..$planned but $((pass + skip)) cases reported: see $log}
        fi
    fi
    local k
    for k in "${counts[@]:1}"; do extra+=("  known bug: $name: $k"); done

    local line
    if [ "$replay" -eq 1 ]; then
        line="$name: $(plural "$pass" input) replayed, $fail failed"
    else
        line="$name: $pass passed, $fail failed"
    fi
    [ "$skip" -eq 0 ] || line+=", $skip skipped"
    [ "${#extra[@]}" -eq 0 ] || line+=" (${#extra[@]} known bug$([ "${#extra[@]}" -eq 1 ] || echo s))"
    [ -z "$note" ] || line+=" ($note)"
    if [ "$replay" -eq 1 ]; then
        replay_lines+=("$line" "${extra[@]}")
        replay_pass=$((replay_pass + pass)) replay_fail=$((replay_fail + fail)) replay_skip=$((replay_skip + skip))
        replay_programs=$((replay_programs + 1))
    else
        case_lines+=("$line" "${extra[@]}")
        case_pass=$((case_pass + pass)) case_fail=$((case_fail + fail)) case_skip=$((case_skip + skip))
        case_programs=$((case_programs + 1))
    fi
    programs=$((programs + 1))
}

shopt -s nullglob
# the test programs in DIR and its subfolders (tests/fuzz/replay_*)
while IFS= read -r trs; do
    summarise "$trs"
done < <(find "$dir" -name '*.trs' | sort)

[ "${#case_lines[@]}" -eq 0 ] || printf '%s\n' "${case_lines[@]}"
line="test cases: $case_pass passed, $case_fail failed"
[ "$case_skip" -eq 0 ] || line+=", $case_skip skipped"
echo "$line ($(plural "$case_programs" program))"
if [ "$replay_programs" -gt 0 ]; then
    printf '%s\n' "${replay_lines[@]}"
    line="fuzz replays: $(plural "$replay_pass" input) replayed, $replay_fail failed"
    [ "$replay_skip" -eq 0 ] || line+=", $replay_skip skipped"
    echo "$line ($(plural "$replay_programs" program); failures count below, replayed inputs do not count as passed)"
fi
total_pass=$case_pass
total_fail=$((case_fail + replay_fail))
total_skip=$((case_skip + replay_skip))

# unit tests that never ran: cmocka missing at configure time, or results missing
if [ "$programs" -gt 0 ] && [ "$unit_programs" -eq 0 ]; then
    if grep -qsx "HAVE_CMOCKA_TRUE='#'" "$dir/../config.log"; then   # configure's output variables
        echo "unit tests: not built (cmocka missing: install libcmocka-dev, then run ./configure again); counted as 1 failure"
    else
        echo "unit tests: no results ($display/test_*.trs): not run; counted as 1 failure"
    fi
    total_fail=$((total_fail + 1))
fi

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
