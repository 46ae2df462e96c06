/* sbf_probe.h -- the scalar tests of a run's s-mers against one shard: an s-mer's bits, and the
 * early out that ends most runs of a target that does not hold the read. Shared by the query
 * (sbf_index.c) and the AVX-512 probe (sbf_probe_simd.c), which inlines them into its loop. */
#ifndef SBF_PROBE_H
#define SBF_PROBE_H

#include <stdint.h>

#include "sbf_kmer.h"

/* The one pass over a short read's runs for all its plain targets (sbf_index.c): at most this
 * many targets, whose shards for at most this many runs the L2 pre-pass keeps. Chosen, not
 * measured: 8 KB of stack a query. */
enum { SBF_KEPT_TARGETS = 4, SBF_KEPT_RUNS = 256 };

/* Another read's shards for the one pass to ask for while it tests this read's: kept[t][run]
 * for n_targets targets and n_runs runs (sbf_query_behind). */
typedef struct {
    const uint64_t *const (*kept)[SBF_KEPT_RUNS];
    int n_targets;
    uint32_t n_runs;
} sbf_next_shards_t;

/* 1 when s-mer j of a run tests present in shard w: its H bits all set. */
static inline uint64_t sbf_smer_present(const uint64_t *w, const uint64_t *h, unsigned j, const unsigned H,
                                        unsigned log2b)
{
    uint64_t present = 1;
    for (unsigned b = 0; b < H; ++b) {
        const unsigned bit = sbf_smer_bit((uint32_t)h[j], b, log2b);
        present &= w[bit >> 6] >> (bit & 63);
    }
    return present & 1;
}

/* 1 when every k-mer of the run is absent, found by testing one s-mer in every k-s+1: s-mers
 * extra, 2 extra + 1, ... (k-mer i spans s-mers i..i+extra, so each tested s-mer lies in
 * extra+1 consecutive k-mers and together they lie in all). Against a target that does not
 * hold the read, an s-mer tests present with the chance fill^H (about 6% at the defaults), so
 * most runs end after one or two tests instead of the run's n+extra; a run that does not end
 * here is probed in full. */
static inline int sbf_run_absent(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra,
                                 const unsigned H, unsigned log2b)
{
    if (n_kmers == 0)
        return 1;
    for (uint32_t j = extra;; j += extra + 1) {
        if (sbf_smer_present(w, h, j, H, log2b))
            return 0;
        if (j + 1 >= n_kmers)   /* k-mers 0..j are covered: that is all of them */
            return 1;
    }
}

#endif
