#!/usr/bin/env bash
# exports.sh -- libsbf.so exports exactly the functions that plugin/sbf.h declares SBF_EXPORT:
# nothing internal (the GPU engine's sbf_gpu_* entry points, benchmark hooks), nothing missing.
# TAP-like output (tests/tap.sh). Skipped when the shared library or nm is not there.
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
lib=$(dirname "$SBF")/.libs/libsbf.so
header=$srcdir/../plugin/sbf.h
if ! command -v nm > /dev/null || [ ! -e "$lib" ]; then
  skip "libsbf.so exports sbf.h" "no nm, or no $lib"
  tap_end
  exit 77
fi
# declared: SBF_EXPORT <type> [*]name( on one line (not the macro's own definition)
grep -E '^SBF_EXPORT ' "$header" | sed -E 's/\(.*//; s/.*[ *]([A-Za-z_0-9]+)$/\1/' | sort -u > "$work/declared"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWw]$/ && $3 !~ /^_/ { print $3 }' | sort -u > "$work/exported"
cd "$work" || exit 1
count=$(wc -l < declared)
if [ "$count" -ge 30 ]; then ok "sbf.h declares $count exported functions"; else not_ok "sbf.h declares $count exported functions" "too few: the header scan broke"; fi
extra=$(comm -13 declared exported | tr '\n' ' ')
missing=$(comm -23 declared exported | tr '\n' ' ')
if [ -z "$extra" ]; then ok "libsbf.so exports nothing that sbf.h does not declare"
else not_ok "libsbf.so exports nothing that sbf.h does not declare" "exported, not in sbf.h: $extra"; fi
if [ -z "$missing" ]; then ok "libsbf.so exports every function of sbf.h"
else not_ok "libsbf.so exports every function of sbf.h" "in sbf.h, not exported: $missing"; fi
tap_end
