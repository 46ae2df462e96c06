/* sbf_classify.h -- from k-mer hits to a category: the scoring rule of read screening.
 *
 * A fragment (a read, or both mates of a pair) has n valid k-mers and h_t of them present in
 * target t; its score for t is h_t / n. Target t "passes" when its score reaches min_score and
 * h_t reaches min_hits. The category is
 *  - the best-scoring target, if it passes and no other passing target scores within `margin`
 *    of it;
 *  - SBF_CAT_MULTI, if several passing targets score within `margin` of the best;
 *  - SBF_CAT_NONE, if no target passes;
 *  - SBF_CAT_NO_KMER, if the fragment has no valid k-mer (shorter than k, or all N): it is
 *    written like SBF_CAT_NONE but counted apart.
 * Ties in score are broken by the hit count, then by the lower target number. See
 * doc/classification.md for the reasons behind the defaults. */
#ifndef SBF_CLASSIFY_H
#define SBF_CLASSIFY_H

#include <stdint.h>

#define SBF_CAT_MULTI (-1)
#define SBF_CAT_NONE (-2)
#define SBF_CAT_NO_KMER (-3)

#define SBF_DEFAULT_MIN_SCORE 0.25
#define SBF_DEFAULT_MIN_HITS 3
#define SBF_DEFAULT_MARGIN 0.02

typedef struct {
    double min_score;   /* 0..1 */
    uint32_t min_hits;  /* >= 1 */
    double margin;      /* 0..1: targets this close to the best count as tied */
} sbf_score_opt_t;

void sbf_score_opt_init(sbf_score_opt_t *o);

/* Category of a fragment with `kmers` valid k-mers and hits[0..n_targets). *best_score gets
 * the best target's score (0 when no k-mer). If `passing` is not NULL, passing[t] is set to 1
 * for the targets within the margin of the best (those a `multi` fragment matches; only the
 * category target otherwise) and 0 for the others. */
int sbf_classify_fragment(const sbf_score_opt_t *o, int n_targets, uint32_t kmers, const uint32_t *hits,
                          double *best_score, uint8_t *passing);

#endif
