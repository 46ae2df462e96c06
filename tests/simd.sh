#!/usr/bin/env bash
# simd.sh -- the CPU scan's paths (scalar, AVX2, AVX-512, AVX-512 with VBMI and GFNI:
# filters/sbf_scan.c, sbf_scan_simd.c)
# give the same bits end to end. For every path this CPU runs (as `sbf --version` lists them),
# chosen with the SBF_SIMD test switch: `sbf build` writes the same index bytes, `sbf query`
# the same counts, `sbf classify` the same records and summary as the scalar path; the switch
# is said on stderr, named in the summary's test switches, and --stats names the path; an
# unknown or unsupported path is refused. tests/test_kmer.c compares the paths run by run.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/simd.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1

"$SBF" --version > version.txt 2> version.err || { echo "Bail out! sbf --version failed"; exit 1; }
line=$(grep '^CPU scan: ' version.txt)
check "--version names the scan path and the paths this CPU runs" \
  grep -qE '^CPU scan: (scalar|avx2|avx512|avx512vbmi) \(this CPU runs: scalar(, avx2)?(, avx512)?(, avx512vbmi)?\)$' version.txt
default=$(sed -E 's/^CPU scan: ([a-z0-9]+) .*/\1/' <<< "$line")
read -r -a paths <<< "$(sed -E 's/.*this CPU runs: (.*)\)$/\1/; s/,//g' <<< "$line")"
check "the default path is the last (fastest) this CPU runs" test "$default" = "${paths[-1]}"

SBF_SIMD=sse9 "$SBF" --version > /dev/null 2> bad.err
check "SBF_SIMD=sse9 is refused" test $? -eq 1
check "SBF_SIMD=sse9: the message" test "$(cat bad.err)" = "sbf: SBF_SIMD=sse9: not a scan path (scalar, avx2, avx512 or avx512vbmi)"
for p in avx2 avx512 avx512vbmi; do
  case " ${paths[*]} " in
    *" $p "*) ;;
    *) SBF_SIMD=$p "$SBF" --version > /dev/null 2> bad.err
       check "SBF_SIMD=$p refused where the CPU lacks it" test "$(cat bad.err)" = "sbf: SBF_SIMD=$p: this CPU cannot run that path" ;;
  esac
done

# reads: pieces of both genome slices and random ones, some with N
for g in human ecoli; do
  zcat "$data/${g}_slice.fa.gz" | awk '!/^>/ { printf "%s", $0 } END { print "" }' > $g.seq
done
awk 'BEGIN { srand(7); getline h < "human.seq"; getline e < "ecoli.seq"
  for (i = 0; i < 3000; ++i) {
    len = 40 + int(rand() * 400); src = i % 3 == 0 ? h : i % 3 == 1 ? e : ""
    if (src != "") s = substr(src, 1 + int(rand() * (length(src) - len)), len)
    else { s = ""; for (j = 0; j < len; ++j) s = s substr("ACGT", int(rand() * 4) + 1, 1) }
    if (i % 4 == 0) { p = 1 + int(rand() * (len - 1)); s = substr(s, 1, p - 1) "N" substr(s, p + 1) }
    q = ""; for (j = 0; j < len; ++j) q = q "I"
    printf "@r%d\n%s\n+\n%s\n", i, s, q } }' > reads.fq

# a target of 7 chunks of the insertion (65,536 k-mers each): built on threads, through the
# records of sbf_build.c (the slices above fit one chunk and go straight into the filter)
awk 'BEGIN { srand(11); print ">rand"; for (i = 0; i < 450000; ++i) { printf "%s", substr("ACGT", int(rand() * 4) + 1, 1)
  if (i % 80 == 79) print "" } print "" }' > rand.fa

# run PATH: index, query counts and classification with SBF_SIMD=PATH, into PATH.*
run() {
  local p=$1 ok=1
  SBF_SIMD=$p "$SBF" build -k 25 -o $p.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" \
    lambda="$data/lambda.fa.gz" 2> $p.build.err || ok=0
  SBF_SIMD=$p "$SBF" build -@ 3 -o $p.rand.sbf rand=rand.fa ecoli="$data/ecoli_slice.fa.gz" 2> $p.rand.err || ok=0
  SBF_SIMD=$p "$SBF" query -x $p.sbf reads.fq > $p.query.tsv 2> $p.query.err || ok=0
  SBF_SIMD=$p "$SBF" classify --gpu none -@ 2 --stats -x $p.sbf --json $p.json -o $p.out.fq reads.fq \
    2> $p.classify.err || ok=0
  [ $ok = 1 ]
}
check "scalar path: build, query and classify ran" run scalar
for p in "${paths[@]}"; do
  [ "$p" = scalar ] && continue
  check "$p path: build, query and classify ran" run $p
  check "$p path: the same index bytes as scalar" cmp -s scalar.sbf $p.sbf
  check "$p path: the same index bytes as scalar, built on 3 threads" cmp -s scalar.rand.sbf $p.rand.sbf
  check "$p path: the same query counts as scalar" cmp -s scalar.query.tsv $p.query.tsv
  check "$p path: the same classified records as scalar" cmp -s scalar.out.fq $p.out.fq
done
for p in "${paths[@]}"; do
  check "$p path: the switch is said on stderr" grep -qx "sbf: notice: SBF_SIMD is set: the CPU scan runs its $p path (the same bits; a test switch)" $p.classify.err
  check "$p path: --stats names it" grep -q "CPU, 2 threads, $p scan" $p.classify.err
  check "$p path: the summary names the test switch" grep -q '"test_switches": \[[^]]*"SBF_SIMD"' $p.json
done
check "the runs found human and E. coli reads (the comparison is not empty)" \
  test "$(awk -F'\t' 'NR > 1 && $3 > 0' scalar.query.tsv | wc -l)" -ge 900 -a \
       "$(awk -F'\t' 'NR > 1 && $4 > 0' scalar.query.tsv | wc -l)" -ge 900
tap_end
