/* sbf_classify.h -- from k-mer hits to a category: the one scoring rule of read screening.
 *
 * Every caller (sbf classify, filter and categorize, the C API's sbf_classify() and pipeline,
 * on either engine) sums mates and applies the rule here. The options and the categories are
 * the public ones of plugin/sbf.h (sbf_classify_opt_t, SBF_CAT_*): one definition, a header of
 * plain C types that filters/ may include. The rule and its defaults: sbf.h, doc/ACCURACY.md.
 */
#ifndef SBF_CLASSIFY_H
#define SBF_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "../plugin/sbf.h"
#include "sbf_segment.h"

/* False positives cluster: once a k-mer of a read tests present by chance, the next one often
 * shares its shard and all but one s-mer, so it tests present too. Hits from chance alone are
 * modelled as events (a Poisson number) each adding a geometric number of consecutive hits that
 * continues with a target's clump chance (sbf_target_clump(), from its shards' fill). */
typedef struct {
    double rate, log_rate;   /* chance events per k-mer, fpr x (1 - clump), and its log */
    double clump, log_clump; /* the continuation chance, and its log */
} sbf_chance_t;

/* The rule bound to one index's targets. */
typedef struct sbf_scorer_s {
    sbf_classify_opt_t opt;
    int n_targets;
    unsigned k;              /* the targets' k-mer length: how many k-mers one base error breaks */
    double log_targets;      /* log(n_targets): a score is for the whole panel (see sbf.h) */
    sbf_chance_t *chance;    /* per target */
    struct sbf_scorer_s *layer;   /* the same rule on the long-read layer (its k, its chances), or
                                   * NULL: fragments queried on the layer are scored with it */
} sbf_scorer_t;

/* opt must pass sbf_classify_opt_check(); k is the targets' k-mer length, fpr[t] target t's
 * false-positive rate per k-mer and clump[t] its clump chance. SBF_OK or SBF_E_NOMEM. */
int sbf_scorer_init(sbf_scorer_t *s, const sbf_classify_opt_t *opt, unsigned k, int n_targets, const double *fpr,
                    const double *clump);
void sbf_scorer_free(sbf_scorer_t *s);
/* The rule for the fragments queried on the long-read layer: its k and its targets' rates (the
 * chance a k-mer of an unrelated read is in the target: the filter's false positives and the
 * target's own k-mers, sbf_engine_layer_chance). SBF_OK or SBF_E_NOMEM. */
int sbf_scorer_add_layer(sbf_scorer_t *s, unsigned k, const double *fpr, const double *clump);

/* The calibrated score of h hits among n k-mers in target t (see sbf.h): -log10 of n_targets x
 * P(X >= h), X the hits of a read of n k-mers in t from chance alone (at least 0). 0 when
 * h == 0; finite for any h. */
double sbf_score_hits(const sbf_scorer_t *s, int t, uint32_t n, uint32_t h);

/* A fragment's reads: kmers[read[m]] and hits + read[m] * n_targets for m < n_reads (1 or 2;
 * read == NULL: reads first, first+1, ...). */
typedef struct {
    int category;          /* a target, SBF_CAT_MULTI, SBF_CAT_NONE or SBF_CAT_NO_KMER */
    float score;           /* the category target's score; when none passes, the score of the
                            * target with the most hits */
    uint32_t kmers;        /* valid k-mers, mates summed */
    int parts;             /* multi because a part (a mate, or a window of a long read's segments)
                            * belongs to another target than the best: a chimera */
} sbf_frag_result_t;

/* Sum the fragment's reads into frag_hits[n_targets] (caller's array) and return the k-mers. */
uint32_t sbf_fragment_sum(int n_targets, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                          const uint32_t *hits, uint32_t *frag_hits);

/* Score one fragment: frag_hits as sbf_fragment_sum() leaves them. passing, if not NULL, gets 1
 * for the targets the fragment is assigned to (the category target, or every tied target of a
 * multi fragment) and 0 for the others. With opt.mates SBF_MATES_BOTH/EITHER and two reads,
 * each mate is scored alone (BioBloom Tools' rules) and the pair's score for a target is the
 * lower (the higher) of the mates'.
 * Two passing targets are tied (multi) when the best one's lead is within margin x its hits or
 * no more than its false positives explain: no k-mer tells them apart.
 * A fragment of several units (mates, or segments of long reads when seg is not NULL) is also
 * multi when a part of a read (a window of 1, 2, 4 or 8 consecutive units) belongs to another
 * target than the best: the best target is absent there beyond the error rate the rest of the
 * fragment shows, and the other target finds at least twice as much there, by more than its
 * false positives explain (its score for the excess reaching min_score + log10 of the windows
 * tested). That is a chimera, or a read across a prophage; out->parts says so.
 * A fragment whose reads were queried on the long-read layer (seg->layer) is scored with the
 * layer's rule (s->layer). */
void sbf_score_fragment(const sbf_scorer_t *s, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                        const uint32_t *hits, const sbf_segments_t *seg, uint32_t *frag_hits, uint8_t *passing,
                        sbf_frag_result_t *out);

/* "summed", "both" or "either". */
const char *sbf_mates_name(int mates);
/* The rule in words for summaries: "score >= 4, hits >= 2, ...". */
void sbf_classify_opt_describe(const sbf_classify_opt_t *o, char *buf, size_t size);

#endif
