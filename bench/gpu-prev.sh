#!/usr/bin/env bash
# bench/gpu-prev.sh [REV] -- build the GPU benchmark of an earlier revision (default: the last
# commit that changed gpu/ before HEAD's own gpu/ change, i.e. the previous kernels), so that
# bench/gpu.sh prints its figures next to this tree's in the same call on the same machine.
# Builds in a scratch worktree with this machine's nvcc; writes bench/sbf-gpu-bench-prev (not
# tracked) and bench/sbf-gpu-bench-prev.rev (the revision it was built from). Carry both to
# the GPU machine with bench/sbf-gpu-bench.
#   bash bench/gpu-prev.sh            # the kernels before the newest gpu/ commit
#   bash bench/gpu-prev.sh 45951c4    # any revision whose sbf-gpu-bench takes the same options
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-}
if [ -z "$rev" ]; then
  # uncommitted gpu/ changes: the previous kernels are HEAD's; else the commit before the newest gpu/ change
  if ! git diff --quiet HEAD -- gpu; then
    rev=HEAD
  else
    rev=$(git log -n 1 --format=%H -- gpu)^
  fi
fi
sha=$(git rev-parse --short "$rev") || { echo "gpu-prev.sh: no revision $rev" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sbf-prev.XXXXXX")
trap 'git worktree remove --force "$work/src" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/src" "$sha" > /dev/null 2>&1 || { echo "gpu-prev.sh: cannot check out $sha" >&2; exit 1; }
(cd "$work/src" && autoreconf -fi && ./configure --with-cuda && make -j"$(nproc)" bench/sbf-gpu-bench) > "$work/build.log" 2>&1 ||
  { tail -n 20 "$work/build.log" >&2; echo "gpu-prev.sh: building $sha failed" >&2; exit 1; }
strip -o bench/sbf-gpu-bench-prev.tmp "$work/src/bench/sbf-gpu-bench"
mv bench/sbf-gpu-bench-prev.tmp bench/sbf-gpu-bench-prev
echo "$sha $(git log -n 1 --format=%s "$sha" | cut -c1-60)" > bench/sbf-gpu-bench-prev.rev
echo "bench/sbf-gpu-bench-prev: built from $(cat bench/sbf-gpu-bench-prev.rev)"
