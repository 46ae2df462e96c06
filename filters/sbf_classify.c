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

static double score_of(uint32_t kmers, uint32_t hits) { return kmers ? (double)hits / (double)kmers : 0.0; }

int sbf_classify_mates(const sbf_score_opt_t *o, int n_targets, int rule, uint32_t kmers1, const uint32_t *hits1,
                       uint32_t kmers2, const uint32_t *hits2, double *best_score, uint8_t *passing)
{
    if (passing)
        for (int t = 0; t < n_targets; ++t)
            passing[t] = 0;
    *best_score = 0;
    if (kmers1 == 0 && kmers2 == 0)
        return SBF_CAT_NO_KMER;
    int best = -1;
    double best_s = -1;
    for (int t = 0; t < n_targets; ++t) {   /* the pair's score and verdict per target */
        int p1 = kmers1 && passes(o, kmers1, hits1[t]), p2 = kmers2 && passes(o, kmers2, hits2[t]);
        double s1 = score_of(kmers1, hits1[t]), s2 = score_of(kmers2, hits2[t]);
        int pass = rule == SBF_PAIRS_EITHER ? p1 || p2 : p1 && p2;
        double sc = rule == SBF_PAIRS_EITHER ? (s1 > s2 ? s1 : s2) : (s1 < s2 ? s1 : s2);
        if (sc > *best_score)
            *best_score = sc;
        if (pass && sc > best_s) {
            best_s = sc;
            best = t;
        }
        if (passing)
            passing[t] = (uint8_t)pass;   /* pruned to the tied targets below */
    }
    if (best < 0)
        return SBF_CAT_NONE;
    *best_score = best_s;
    int tied = 0;
    for (int t = 0; t < n_targets; ++t) {
        int p1 = kmers1 && passes(o, kmers1, hits1[t]), p2 = kmers2 && passes(o, kmers2, hits2[t]);
        double s1 = score_of(kmers1, hits1[t]), s2 = score_of(kmers2, hits2[t]);
        int pass = rule == SBF_PAIRS_EITHER ? p1 || p2 : p1 && p2;
        double sc = rule == SBF_PAIRS_EITHER ? (s1 > s2 ? s1 : s2) : (s1 < s2 ? s1 : s2);
        int in = pass && sc >= best_s - o->margin;
        tied += in;
        if (passing)
            passing[t] = (uint8_t)in;
    }
    return tied > 1 ? SBF_CAT_MULTI : best;
}
