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

/* BioBloom Tools' pair rules (sbf categorize): each mate is scored alone; a target passes for the
 * pair when it passes for both mates (SBF_PAIRS_BOTH, biobloomcategorizer's default) or for
 * either (SBF_PAIRS_EITHER, its -i), and the pair's score for it is the lower (the higher) of
 * the mates' scores. Category, margin and `passing` then as sbf_classify_fragment(). */
enum { SBF_PAIRS_BOTH = 1, SBF_PAIRS_EITHER = 2 };
int sbf_classify_mates(const sbf_score_opt_t *o, int n_targets, int rule, uint32_t kmers1, const uint32_t *hits1,
                       uint32_t kmers2, const uint32_t *hits2, double *best_score, uint8_t *passing);

#endif
