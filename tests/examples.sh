#!/usr/bin/env bash
# examples.sh -- the API examples of doc/examples (buffers, the pipeline, dlopen), built as a user would: with
# `pkg-config --cflags --libs sbf` (the build tree's sbf-uninstalled.pc) and with dlopen(),
# then run on a small index; their answers must match `sbf classify`.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/examples.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
builddir=$(cd "$(dirname "$SBF")" && pwd)
examples=$srcdir/../doc/examples
cd "$work" || exit 1
CC=${CC:-cc}
export PKG_CONFIG_PATH=$builddir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

"$SBF" build -o idx.sbf "$data/phage_a.fa" B="$data/phage_b.fa" 2> /dev/null || { echo "Bail out! sbf build failed"; exit 1; }
flags=$(pkg-config --cflags --libs sbf 2> pc.err)
check "pkg-config --cflags --libs sbf" test -n "$flags"
# the build's CFLAGS/LDFLAGS too: under scripts/sanitize.sh libsbf needs the sanitizer runtimes
$CC ${CFLAGS:-} -Wall -Wextra -Werror "$examples/screen_buffers.c" $flags ${LDFLAGS:-} -o screen_buffers 2> cc.err
check "screen_buffers.c builds with pkg-config's flags, warning-free" test -x screen_buffers
LD_LIBRARY_PATH=$builddir/.libs ./screen_buffers idx.sbf "$data/reads.fq" > buffers.tsv 2> buffers.err
check "screen_buffers runs" test $? -eq 0
"$SBF" classify -x idx.sbf "$data/reads.fq" 2> /dev/null | awk 'NR % 4 == 1 { for (i = 2; i <= NF; ++i) if ($i ~ /^sb:Z:/) c = substr($i, 6); print substr($1, 2) "\t" c }' > cli.tsv
check "its categories equal sbf classify's" cmp -s <(grep -v '^#' buffers.tsv | cut -f1,2) cli.tsv
check "it reports the library's version" grep -q "^# libsbf $("$SBF" --version | sed -n 's/^libsbf //p')" buffers.tsv
$CC ${CFLAGS:-} -Wall -Wextra -Werror "$examples/pipeline_screen.c" $flags ${LDFLAGS:-} -o pipeline_screen 2> cc3.err
check "pipeline_screen.c builds with pkg-config's flags, warning-free" test -x pipeline_screen
for per in 7 1000; do   # several batches in flight, and one batch
  LD_LIBRARY_PATH=$builddir/.libs ./pipeline_screen idx.sbf "$data/reads.fq" $per > pipe.tsv 2> pipe.err
  check "pipeline_screen (batches of $per reads): the categories of sbf classify, in input order" cmp -s <(cut -f1,2 pipe.tsv) cli.tsv
done
check "... and it reports its batches" grep -q "^# 1 batches on" pipe.err
$CC ${CFLAGS:-} -Wall -Wextra -Werror "$examples/dlopen_screen.c" ${LDFLAGS:-} -ldl -o dlopen_screen 2> cc2.err
check "dlopen_screen.c builds without linking libsbf" test -x dlopen_screen
seq_a=$(sed -n 2p "$data/reads.fq")
LD_LIBRARY_PATH=$builddir/.libs ./dlopen_screen idx.sbf "$seq_a" NNNNACGT > dl.txt 2> dl.err
check "dlopen_screen loads libsbf.so.4 and classifies" test "$(sed -n 2,3p dl.txt | cut -f2 | tr '\n' ' ')" = "phage_a none "
./dlopen_screen /nonexistent/libsbf.so idx.sbf ACGT > /dev/null 2> dl2.err
check "dlopen_screen: a missing library is an error" test $? -eq 1 -a -s dl2.err
tap_end
