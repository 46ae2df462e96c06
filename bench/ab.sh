#!/usr/bin/env bash
# bench/ab.sh -- one sbf command timed with an earlier revision's binary and this tree's,
# alternately, in the same call on the same machine (equal work: the same inputs and outputs),
# and the outputs compared between the two.
#
#   bash bench/ab.sh build REV
#       build `sbf` at git revision REV in a scratch worktree (with CUDA when nvcc works), strip
#       it into bench/sbf-ab (not tracked) and write bench/sbf-ab.rev. Run it where htslib's
#       headers are (the GPU machine has only the libraries): carry bench/sbf-ab there.
#   bash bench/ab.sh run RUNS OUT[,OUT...] -- ARGS...
#       RUNS rounds of `bench/sbf-ab ARGS` then this tree's `sbf ARGS`, in the current folder
#       (the outputs OUT removed and the disks synced before each run): every run's wall and
#       CPU seconds and peak RSS, then the medians and the ratio; exit 1 when an output of the
#       last round differs between the two (BAM/CRAM compared as records and header, without
#       the @PG lines, which name each binary's version). ARGS are sbf's, e.g.
#       bash bench/ab.sh run 3 t.bam -- classify --gpu none -@ 16 -x idx.sbf -o t.bam reads.bam
#       AB_GREP=REGEX prints each run's stderr lines that match it (with --stats among ARGS, e.g.
#       AB_GREP='opening' for the GPUs' count and the upload), so a difference can be explained.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
case ${1:-} in
build)
  cd "$root" || exit 2
  rev=${2:?"ab.sh build REV"}
  sha=$(git rev-parse --short "$rev") || { echo "ab.sh: no revision $rev" >&2; exit 2; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-ab.XXXXXX")
  trap 'git worktree remove --force "$work/src" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
  git worktree add --detach "$work/src" "$sha" > /dev/null 2>&1 || { echo "ab.sh: cannot check out $sha" >&2; exit 1; }
  (cd "$work/src" && autoreconf -fi && ./configure && make -j"$(nproc)" sbf) > "$work/build.log" 2>&1 ||
    { tail -n 20 "$work/build.log" >&2; echo "ab.sh: building $sha failed" >&2; exit 1; }
  strip -o bench/sbf-ab.tmp "$work/src/sbf" && mv bench/sbf-ab.tmp bench/sbf-ab || exit 1
  echo "$sha $(git log -n 1 --format=%s "$sha" | cut -c1-60)" > bench/sbf-ab.rev
  echo "bench/sbf-ab: built from $(cat bench/sbf-ab.rev)"
  ;;
run)
  runs=${2:?"ab.sh run RUNS OUT[,OUT...] -- ARGS..."} outs=${3:?"ab.sh run RUNS OUT[,OUT...] -- ARGS..."}
  [ "${4:-}" = -- ] || { echo "ab.sh: run RUNS OUT[,OUT...] -- ARGS..." >&2; exit 2; }
  shift 4
  [ -x "$root/bench/sbf-ab" ] && [ -x "$root/sbf" ] || { echo "ab.sh: needs bench/sbf-ab (ab.sh build REV) and sbf" >&2; exit 2; }
  IFS=, read -r -a out <<< "$outs"
  TIME=${TIME:-/usr/bin/time}
  [ -x "$TIME" ] || { echo "ab.sh: needs GNU time ($TIME; set TIME)" >&2; exit 2; }
  results=$(mktemp) && trap 'rm -f "$results" ab-*.txt' EXIT
  for round in $(seq "$runs"); do
    for who in old new; do
      bin=$root/sbf; [ $who = old ] && bin=$root/bench/sbf-ab
      rm -f "${out[@]}"; sync
      "$TIME" -f "%e %U %S %M" -o ab-time.txt "$bin" "$@" > /dev/null 2> ab-err.txt ||
        { echo "ab.sh: $who run $round failed: $(grep -v notice ab-err.txt | head -n 2)" >&2; exit 1; }
      read -r wall user sys rss < <(tail -n 1 ab-time.txt)
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
      echo "$who $wall $cpu $rss" >> "$results"
      printf 'round %d %s: %s s, %s CPU-s, peak RSS %d MiB\n' "$round" "$who" "$wall" "$cpu" $((rss / 1024))
      [ -n "${AB_GREP:-}" ] && { grep -E -- "$AB_GREP" ab-err.txt | sed 's/^/    /'; }
      for f in "${out[@]}"; do   # the last round's outputs of each, to compare
        case $f in
        *.bam|*.cram) samtools view -h --no-PG "$f" 2> /dev/null | grep -v '^@PG' | md5sum > "ab-$who-$(basename "$f").txt" ;;
        *) md5sum < "$f" > "ab-$who-$(basename "$f").txt" ;;
        esac
      done
    done
  done
  median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  mo=$(awk '$1 == "old" { print $2 }' "$results" | median) mn=$(awk '$1 == "new" { print $2 }' "$results" | median)
  co=$(awk '$1 == "old" { print $3 }' "$results" | median) cn=$(awk '$1 == "new" { print $3 }' "$results" | median)
  differ=0
  for f in "${out[@]}"; do
    cmp -s "ab-old-$(basename "$f").txt" "ab-new-$(basename "$f").txt" || { echo "ab.sh: $f differs between the two" >&2; differ=1; }
  done
  echo "| binary | median s | median CPU-s |"
  echo "|---|---|---|"
  echo "| $(cut -d' ' -f1 "$root/bench/sbf-ab.rev" 2> /dev/null) (bench/sbf-ab) | $mo | $co |"
  echo "| this tree (sbf) | $mn | $cn |"
  awk -v o="$mo" -v n="$mn" 'BEGIN { printf "new/old wall %.3f; outputs ", n / o }'
  [ $differ -eq 0 ] && echo "identical" || echo "DIFFER"
  exit $differ
  ;;
*)
  sed -n '2,17p' "$0" >&2
  exit 2
  ;;
esac
