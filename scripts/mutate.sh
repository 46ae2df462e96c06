#!/usr/bin/env bash
# scripts/mutate.sh -- does the suite notice when the code is wrong? Deliberate bugs, each
# applied to its own copy of the tree (the working tree is left alone), each built and put
# through `make check`; prints which tests fail for each. Every mutation must make at least one
# test fail (exit 1 otherwise). Results go to doc/RELIABILITY.md by hand.
#   scripts/mutate.sh [WORKDIR] [MUTATION...]    (default: all; about 10 minutes each on 2 cores)
#   env: MUTATE_TESTS: the tests to run (make check's TESTS), by default all of them
set -uo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/sbf-mutate.XXXXXX")}
shift $(($# > 0 ? 1 : 0))
mkdir -p "$work"

want=("$@")
status=0
printf '| mutation | file | tests that fail (first cases) |\n|---|---|---|\n' > "$work/table.md"

# mutation NAME FILE FIND REPLACE: FIND (exactly once in FILE; \n for a new line) becomes REPLACE
mutation() {
  local name=$1 file=$2 find=$3 repl=$4
  if [ ${#want[@]} -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qx "$name"; then return; fi
  local dir=$work/$name
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$root" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$dir" || exit 1
  python3 - "$dir/$file" "$find" "$repl" <<'PY' || { echo "mutate: $name: the text to change is not in $file exactly once"; exit 1; }
import sys
path, find, repl = sys.argv[1], sys.argv[2].replace('\\n', '\n'), sys.argv[3].replace('\\n', '\n')
s = open(path).read()
if s.count(find) != 1:
    sys.exit(1)
open(path, 'w').write(s.replace(find, repl))
PY
  echo "mutate: $name: building and testing in $dir" >&2
  if ! (cd "$dir" && autoreconf -fi && ./configure --with-cuda=no && make -j"$(nproc)") > "$dir/build.log" 2>&1; then
    echo "| $name | \`$file\` | the build fails |" >> "$work/table.md"
    return
  fi
  (cd "$dir" && make -k -j"$(nproc)" check ${MUTATE_TESTS:+TESTS="$MUTATE_TESTS"}) > "$dir/check.log" 2>&1
  local failed detail="" t cases
  failed=$(cd "$dir" && grep -l '^:test-result: FAIL' tests/*.trs tests/fuzz/*.trs 2> /dev/null | sed 's/\.trs$//' | sort)
  for t in $failed; do
    cases=$(cd "$dir" && grep -E '^not ok|^\[  FAILED  \] [a-z_]+$' "$t.log" 2> /dev/null | head -n 2 |
            sed -E 's/^not ok [0-9]+ - //; s/^\[  FAILED  \] //' | tr '\n' ';' | sed 's/;$//; s/|/\\|/g')
    detail="$detail${detail:+<br>}\`$t\`${cases:+: $cases}"
  done
  if [ -z "$failed" ]; then
    status=1
    detail="**none: the suite misses this bug**"
  fi
  echo "| $name | \`$file\` | $detail |" >> "$work/table.md"
}

mutation threshold filters/sbf_classify.c \
  '    return *score >= o->min_score;' '    return 1;   /* MUTATION: the score threshold ignored */'
mutation mate2 plugin/sbf_screen_stages.c \
  '(s->mate_files && r->mate == 2 ? 1 : 0)' '0 /* MUTATION: mate 2 written to the output of mate 1 */'
mutation canonical filters/sbf_scan_int.h \
  'out[pos + 1 - len] = f < r ? f : r;' 'out[pos + 1 - len] = f; /* MUTATION: the forward strand only */'
mutation message bam/sbf_reads.c \
  '"%s: read error or truncated compressed data after %lld records"' '"%s: read error after %lld records" /* MUTATION */'
mutation rename filters/sbf_tmpfile.c \
  '    snprintf(tmp, n, "%s.tmp.XXXXXX", path);\n    int fd = mkstemp(tmp);' \
  '    snprintf(tmp, n, "%s", path);   /* MUTATION: written under the final name */\n    FILE *mf = fopen(tmp, "w");\n    int fd = mf ? dup(fileno(mf)) : -1;\n    if (mf)\n        fclose(mf);'
mutation name-tab bam/sbf_fastx.c \
  "return p[i] == ' ' || p[i] == '\\t' ? (long)i : -1;" "return p[i] == ' ' ? (long)i : -1;   /* MUTATION: a tab no longer ends the name */"
mutation headroom bam/sbf_reads.c \
  '        memcpy(nb->data + start, b->data + rd->pos, keep);' \
  '        memcpy(nb->data + start, b->data + rd->pos, keep - (keep > 1));   /* MUTATION: the record across blocks loses a byte */'
mutation vec-window filters/sbf_scan_vec.h \
  '        for (unsigned j = 1; j < w; ++j)\n            m = VEC(min)(m, VEC(load)(hm + i + j));' \
  '        for (unsigned j = 1; j + 1 < w; ++j)   /* MUTATION: the window one m-mer short */\n            m = VEC(min)(m, VEC(load)(hm + i + j));'
mutation vec-hash filters/sbf_scan_vec.h \
  '        x = VEC(mul32)(x, SBF_MIX32_MUL2);' \
  '        x = VEC(mul32)(x, SBF_MIX32_MUL2 + 2);   /* MUTATION: the vector paths hash with another multiplier */'
mutation vec-probe filters/sbf_probe_simd.c \
  '        for (unsigned d = 1; d <= extra; ++d)' \
  '        for (unsigned d = 1; d < extra; ++d)   /* MUTATION: the last s-mer of each k-mer not required */'
mutation panel-column filters/sbf_kmer.h \
  '    return (unsigned)(((uint64_t)(uint32_t)((uint64_t)key * n_shards) * cols) >> 32);' \
  '    return (unsigned)(((uint64_t)(uint32_t)((uint64_t)key * n_shards) * cols) >> 32) % cols ^ (cols > 2);   /* MUTATION: another column of a split target */'
mutation panel-put filters/sbf_index.c \
  '        const uint64_t s = v / t->cols, col = t->col0 + v % t->cols, row = s * sb;\n        for (unsigned q = 0; q < words; ++q)' \
  '        const uint64_t s = v / t->cols, col = t->col0 + (v + 1) % t->cols, row = s * sb;   /* MUTATION: bits put in the next column */\n        for (unsigned q = 0; q < words; ++q)'
mutation parts-k filters/sbf_classify.c \
  ' || ht - hb <= s->k ||' ' ||   /* MUTATION: a part needs no more than k k-mers beyond the best target */' 
mutation parts-absent filters/sbf_classify.c \
  '    if (!absent_beyond_errors(s->k, rest_rate, n, hb))\n        return 0;' \
  '    (void)absent_beyond_errors;   /* MUTATION: the best target need not be absent from a part */'
mutation tie-margin filters/sbf_classify.c \
  '    const double floor_hits = (double)hb - s->opt.margin * (double)hb;' \
  '    const double floor_hits = (double)hb - s->opt.margin * (double)n;   /* MUTATION: the margin in k-mers of the read */'
mutation mask-noop filters/sbf_mask.c \
  'const int valid = run >= k, held = (int)(job.held[q >> 6] >> (q & 63) & 1);' \
  'const int valid = run >= k, held = 0;   /* MUTATION: no k-mer is masked */'
mutation layer-route-cli plugin/sbf_screen_stages.c \
  'any |= j->rlen[fr->read[m]] >= SBF_LONG_READ_BASES;' \
  'any |= 0 * j->rlen[fr->read[m]];   /* MUTATION: no fragment reaches the long-read layer */'
mutation layer-route-api plugin/sbf_engine.c \
  '            layer[i] = any;' \
  '            layer[i] = 0 * any;   /* MUTATION: the API screens no fragment on the layer */'
mutation layer-rule filters/sbf_classify.c \
  '        s = s->layer;   /* queried on the long-read layer: its k and its chances */' \
  '        (void)0;   /* MUTATION: long fragments scored with the 31-mers rule */'
mutation layer-chance plugin/sbf_engine.c \
  '            fpr[t] = ly->targets[t].chance;' \
  '            (void)0;   /* MUTATION: the measured chance is ignored */'
mutation layer-dust filters/sbf_params.h \
  '#define SBF_LAYER_DUST_MIN 14u' \
  '#define SBF_LAYER_DUST_MIN 0u   /* MUTATION: low-complexity k-mers stay in the layer */'
mutation dust-off filters/sbf_mask.c \
  '        if (score >= min)\n            held[' \
  '        if (0 * score >= min)   /* MUTATION: sbf build --dust leaves nothing out */\n            held['
mutation mate-range bam/sbf_batch.c \
  '        if (!sbf_mate_names_match(a->name.s, a->name.l, z->name.s, z->name.l)) {\n            pr->bad = k;' \
  '        if (0 && !sbf_mate_names_match(a->name.s, a->name.l, z->name.s, z->name.l)) {   /* MUTATION: batches after the first are not checked */\n            pr->bad = k;'
cat "$work/table.md"
exit $status
