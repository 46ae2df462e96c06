/* sbf_runs_all.h -- every plain target of a short read's window in one pass over its runs: a
 * template, included by sbf_index.c (the scalar probe) and sbf_probe_simd.c (the AVX-512 probe,
 * under its target, so that the probe inlines into the loop instead of a call per run), with
 * ALL(name) naming the instance's functions, ALL_LINKAGE its entry's linkage and
 * ALL_PROBE(w, h, n, extra, H) the full probe of a run that the early out did not end; it
 * #undefs those three at its end. Not a header to include anywhere else.
 *
 * Each run is tested against every target before the next run, its fields and s-mers loaded
 * once, where a pass per target loaded them T times (the two small targets of the e2e index
 * took a third of a read's cycles, mostly that: doc/PERFORMANCE.md, try 33), and the next read's
 * shards are asked for meanwhile (sbf_query_behind). 512-bit shards (constant bit fields), no
 * presence rows; T and H constants in each instance. */

static inline __attribute__((always_inline)) void ALL(runs)(const sbf_scan_t *sc,
                                                            const uint64_t *const (*kept)[SBF_KEPT_RUNS], const int T,
                                                            const int *ids, unsigned extra, const unsigned H,
                                                            const sbf_next_shards_t *next, uint64_t *hits)
{
    uint64_t count[SBF_KEPT_TARGETS] = {0};
    /* the next read's shards asked of the L2 a few at a time, `per` of its runs before each of
     * these runs, so that their misses overlap this read's tests (all at once before the tests,
     * try 24's order, saved 2% of the CPU engine's CPU seconds on the Xeon; spread, 11%: try 38) */
    const uint32_t nn = next ? next->n_runs : 0, per = sc->n_runs ? (nn + sc->n_runs - 1) / sc->n_runs : 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < sc->n_runs; ++i) {
        for (const uint32_t end = j + per < nn ? j + per : nn; j < end; ++j)
            for (int t = 0; t < next->n_targets; ++t)
                __builtin_prefetch(next->kept[t][j], 0, 1);
        const sbf_run_t *run = &sc->runs[i];
        const uint64_t *h = sc->smer_hash + run->first;
        const uint32_t n = run->n;
        for (int t = 0; t < T; ++t) {
            const uint64_t *w = kept[t][i];
            if (!sbf_run_absent(w, h, n, extra, H, 9))
                count[t] += ALL_PROBE(w, h, n, extra, H);
        }
    }
    for (int t = 0; t < T; ++t)
        hits[ids[t]] += count[t];
}

/* The pass for T (1..SBF_KEPT_TARGETS) targets of the window, kept[t][run] their shards (ids[t]
 * the target), H (1..3) bits an s-mer: hits[ids[t]] += each target's k-mers found; next (NULL:
 * none) the shards to ask for meanwhile. */
ALL_LINKAGE void ALL(runs_all_targets)(const sbf_scan_t *sc, const uint64_t *const (*kept)[SBF_KEPT_RUNS], int T,
                                       const int *ids, unsigned extra, unsigned H, const sbf_next_shards_t *next,
                                       uint64_t *hits)
{
#define SBF_ALL_TARGETS_H(T_)                                                                                         \
    switch (H) {                                                                                                      \
    case 1: ALL(runs)(sc, kept, T_, ids, extra, 1, next, hits); return;                                               \
    case 2: ALL(runs)(sc, kept, T_, ids, extra, 2, next, hits); return;                                               \
    default: ALL(runs)(sc, kept, T_, ids, extra, 3, next, hits); return;                                              \
    }
    switch (T) {
    case 1: SBF_ALL_TARGETS_H(1)
    case 2: SBF_ALL_TARGETS_H(2)
    case 3: SBF_ALL_TARGETS_H(3)
    default: SBF_ALL_TARGETS_H(4)
    }
#undef SBF_ALL_TARGETS_H
}

#undef ALL
#undef ALL_LINKAGE
#undef ALL_PROBE
