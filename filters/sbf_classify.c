/* sbf_classify.c -- the scoring rule (see sbf_classify.h). */
#include <stddef.h>

#include "sbf_classify.h"

void sbf_score_opt_init(sbf_score_opt_t *o)
{
    o->min_score = SBF_DEFAULT_MIN_SCORE;
    o->min_hits = SBF_DEFAULT_MIN_HITS;
    o->margin = SBF_DEFAULT_MARGIN;
}

static int passes(const sbf_score_opt_t *o, uint32_t kmers, uint32_t hits)
{
    return hits >= o->min_hits && (double)hits >= o->min_score * (double)kmers;
}

int sbf_classify_fragment(const sbf_score_opt_t *o, int n_targets, uint32_t kmers, const uint32_t *hits,
                          double *best_score, uint8_t *passing)
{
    if (passing)
        for (int t = 0; t < n_targets; ++t)
            passing[t] = 0;
    *best_score = 0;
    if (kmers == 0)
        return SBF_CAT_NO_KMER;
    if (n_targets == 0)
        return SBF_CAT_NONE;
    int best = 0;
    for (int t = 1; t < n_targets; ++t)   /* the same n for every target: compare hits */
        if (hits[t] > hits[best])
            best = t;
    *best_score = (double)hits[best] / (double)kmers;
    if (!passes(o, kmers, hits[best]))
        return SBF_CAT_NONE;
    /* Tied: passing, and within margin * n hits of the best. */
    double floor_hits = (double)hits[best] - o->margin * (double)kmers;
    int tied = 0;
    for (int t = 0; t < n_targets; ++t) {
        int in = passes(o, kmers, hits[t]) && (double)hits[t] >= floor_hits;
        tied += in;
        if (passing)
            passing[t] = (uint8_t)in;
    }
    return tied > 1 ? SBF_CAT_MULTI : best;
}
