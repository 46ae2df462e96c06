/* sbf_classify.c -- the scoring rule (see sbf_classify.h and plugin/sbf.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbf_classify.h"
#include "sbf_error.h"

/* A target whose filter is nearly empty predicts a false-positive rate near 0, which would make
 * one stray hit look certain: no rate below this one is assumed. */
#define SBF_FPR_FLOOR 1e-7
/* Clump chances are kept inside this range (an empty filter has none; a full one, 1). */
#define SBF_CLUMP_MIN 0.01
#define SBF_CLUMP_MAX 0.95

int sbf_scorer_init(sbf_scorer_t *s, const sbf_classify_opt_t *opt, int n_targets, const double *fpr,
                    const double *clump)
{
    memset(s, 0, sizeof *s);
    s->opt = *opt;
    s->n_targets = n_targets;
    s->log_targets = n_targets > 1 ? log((double)n_targets) : 0;
    if (!(s->chance = malloc((size_t)(n_targets > 0 ? n_targets : 1) * sizeof *s->chance)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    for (int t = 0; t < n_targets; ++t) {
        double f = fpr[t] > SBF_FPR_FLOOR ? fpr[t] : SBF_FPR_FLOOR;
        double q = clump[t] < SBF_CLUMP_MIN ? SBF_CLUMP_MIN : clump[t] > SBF_CLUMP_MAX ? SBF_CLUMP_MAX : clump[t];
        sbf_chance_t *c = &s->chance[t];
        c->rate = (f < 1 ? f : 1) * (1 - q);
        c->log_rate = log(c->rate);
        c->clump = q;
        c->log_clump = log(q);
    }
    return SBF_OK;
}

void sbf_scorer_free(sbf_scorer_t *s)
{
    if (s) {
        free(s->chance);
        s->chance = NULL;
    }
}

/* log P(X >= h) (natural) for X ~ Polya-Aeppli(lambda, q): a Poisson(lambda) number N of events, each
 * adding a geometric number (>= 1, continuing with probability q) of hits. k events give h or
 * more hits when, among the h-1 steps after the first hit, at most k-1 stop a clump:
 *   P(X >= h) = sum_k>=1 Pois(k; lambda) B(k-1),  B(m) = P(Binomial(h-1, 1-q) <= m).
 * The terms are built by their ratios, scaled by exp(log_scale) = Pois(1) q^(h-1), and summed
 * until they stop counting: a few terms for a short read (lambda h is small), a few thousand for
 * a megabase read. No 1 - cdf, so a tail of 1e-300 is as exact as one of 0.5. */
static double log_tail(double lambda, double log_lambda, double q, double log_q, uint32_t h)
{
    const double up = (1 - q) / q;
    double log_scale = log_lambda - lambda + ((double)h - 1) * log_q;
    double b = 1, B = 1;        /* b_j = P(Binomial = j), B = B(k-1), both over b_0 */
    double term = 1, sum = 1;   /* k = 1: Pois(1) B(0) */
    for (uint32_t k = 1; k < 1000000000u; ++k) {
        /* B(k) from B(k-1): one more binomial term (zero once k > h-1) */
        b = k < h ? b * ((double)(h - k) / (double)k) * up : 0;
        const double B_next = B + b;
        const double ratio = lambda / ((double)k + 1) * (B_next / B);
        B = B_next;
        term *= ratio;
        sum += term;
        if (ratio < 0.5 && term <= sum * 1e-17)
            break;
        if (sum > 1e250 || B > 1e250) {   /* rescale: keep the doubles in range */
            const double fs = 1 / sum, fb = 1 / B;
            term *= fs;
            log_scale -= log(fs);
            sum = 1;
            b *= fb;
            B = 1;
        }
    }
    return log(sum) + log_scale;
}

double sbf_score_hits(const sbf_scorer_t *s, int t, uint32_t n, uint32_t h)
{
    if (n == 0 || h == 0)
        return 0;
    const sbf_chance_t *c = &s->chance[t];
    const double lt = log_tail(c->rate * (double)n, c->log_rate + log((double)n), c->clump, c->log_clump, h);
    const double score = -(lt + s->log_targets) * 0.43429448190325182;   /* 1 / log(10) */
    return score > 0 ? score : 0;
}

uint32_t sbf_fragment_sum(int n_targets, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                          const uint32_t *hits, uint32_t *frag_hits)
{
    uint32_t k = 0;
    memset(frag_hits, 0, (size_t)(n_targets > 0 ? n_targets : 0) * sizeof *frag_hits);
    for (int m = 0; m < n_reads; ++m) {
        size_t i = read ? read[m] : first + (size_t)m;
        k += kmers[i];
        const uint32_t *h = hits + i * (size_t)n_targets;
        for (int t = 0; t < n_targets; ++t)
            frag_hits[t] += h[t];
    }
    return k;
}

/* Target t's verdict for one read or summed fragment: passes, and its score. */
static int passes(const sbf_scorer_t *s, int t, uint32_t n, uint32_t h, double *score)
{
    const sbf_classify_opt_t *o = &s->opt;
    *score = 0;
    if (n == 0 || h < o->min_hits || (double)h < o->min_fraction * (double)n)
        return 0;   /* the score is only needed for a target that can pass */
    *score = sbf_score_hits(s, t, n, h);
    return *score >= o->min_score;
}

/* A target's verdict for the fragment: with BioBloom's mate rules each mate alone, else the sum.
 * *hits is what ranks it (the pair's hits under the BioBloom rules: the mates' sum). */
static int verdict(const sbf_scorer_t *s, int t, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                   const uint32_t *hits, uint32_t frag_kmers, const uint32_t *frag_hits, double *score)
{
    const int mates = s->opt.mates;
    if (n_reads != 2 || mates == SBF_MATES_SUMMED)
        return passes(s, t, frag_kmers, frag_hits[t], score);
    double sc[2];
    int p[2];
    for (int m = 0; m < 2; ++m) {
        size_t i = read ? read[m] : first + (size_t)m;
        p[m] = passes(s, t, kmers[i], hits[i * (size_t)s->n_targets + (size_t)t], &sc[m]);
    }
    if (mates == SBF_MATES_EITHER) {
        *score = sc[0] > sc[1] ? sc[0] : sc[1];
        return p[0] || p[1];
    }
    *score = sc[0] < sc[1] ? sc[0] : sc[1];
    return p[0] && p[1];
}

/* The units of the fragment's reads (segments, or each read whole): calls visit(unit k-mers,
 * unit hits) for each until it returns non-zero; returns that value. */
typedef int (*unit_fn)(const sbf_scorer_t *s, uint32_t n, const uint32_t *h, void *ctx);

static int each_unit(const sbf_scorer_t *s, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                     const uint32_t *hits, const sbf_segments_t *seg, unit_fn visit, void *ctx)
{
    const size_t R = (size_t)s->n_targets;
    for (int m = 0; m < n_reads; ++m) {
        size_t i = read ? read[m] : first + (size_t)m;
        int rc;
        if (!seg) {
            if ((rc = visit(s, kmers[i], hits + i * R, ctx)) != 0)
                return rc;
            continue;
        }
        for (size_t q = seg->first[i]; q < seg->end[i]; ++q)
            if ((rc = visit(s, seg->kmers[q], seg->hits + q * R, ctx)) != 0)
                return rc;
    }
    return 0;
}

static int count_unit(const sbf_scorer_t *s, uint32_t n, const uint32_t *h, void *ctx)
{
    (void)s, (void)h;
    *(size_t *)ctx += n > 0;
    return 0;
}

typedef struct {
    int best;
    double threshold;   /* min_score + log10(units with k-mers) */
    uint8_t *passing;   /* marks the targets of the units that belong elsewhere */
    int found;
} chimera_t;

/* A unit that belongs to another target than the best: marks every such target. */
static int chimera_unit(const sbf_scorer_t *s, uint32_t n, const uint32_t *h, void *ctx)
{
    chimera_t *c = ctx;
    const sbf_classify_opt_t *o = &s->opt;
    for (int t = 0; t < s->n_targets; ++t) {
        if (t == c->best || h[t] < o->min_hits || (double)h[t] < o->min_fraction * (double)n ||
            (double)h[c->best] >= (double)h[t] - o->margin * (double)n)
            continue;
        if (sbf_score_hits(s, t, n, h[t]) >= c->threshold) {
            c->found = 1;
            if (!c->passing)
                return 1;   /* no marks wanted: the first one settles it */
            c->passing[t] = 1;
        }
    }
    return 0;
}

void sbf_score_fragment(const sbf_scorer_t *s, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                        const uint32_t *hits, const sbf_segments_t *seg, uint32_t *frag_hits, uint8_t *passing,
                        sbf_frag_result_t *out)
{
    const int R = s->n_targets;
    const uint32_t n = sbf_fragment_sum(R, n_reads, read, first, kmers, hits, frag_hits);
    if (passing)
        memset(passing, 0, (size_t)(R > 0 ? R : 0));
    out->kmers = n;
    out->score = 0;
    if (n == 0) {
        out->category = SBF_CAT_NO_KMER;
        return;
    }
    /* the best passing target: highest score, then most hits, then the lower number */
    int best = -1, most = 0;
    double best_score = -1;
    for (int t = 0; t < R; ++t) {
        if (frag_hits[t] > frag_hits[most])
            most = t;
        if (frag_hits[t] == 0 && s->opt.mates == SBF_MATES_SUMMED)
            continue;
        double sc;
        int ok = verdict(s, t, n_reads, read, first, kmers, hits, n, frag_hits, &sc);
        if (ok && (best < 0 || sc > best_score || (sc == best_score && frag_hits[t] > frag_hits[best]))) {
            best = t;
            best_score = sc;
        }
    }
    if (best < 0) {   /* the `ss` tag then reports the score of the target with the most hits */
        out->category = SBF_CAT_NONE;
        out->score = R > 0 ? (float)sbf_score_hits(s, most, n, frag_hits[most]) : 0;
        return;
    }
    /* tied: passing, with at most margin x n hits fewer than the best target */
    const double floor_hits = (double)frag_hits[best] - s->opt.margin * (double)n;
    int tied = 0;
    for (int t = 0; t < R; ++t) {
        double sc;
        int in = t == best || ((double)frag_hits[t] >= floor_hits && frag_hits[t] > 0 &&
                               verdict(s, t, n_reads, read, first, kmers, hits, n, frag_hits, &sc));
        tied += in;
        if (passing)
            passing[t] = (uint8_t)in;
    }
    out->category = tied > 1 ? SBF_CAT_MULTI : best;
    out->score = (float)best_score;
    /* one best target: do the read's parts agree? (BioBloom's mate rules keep their meaning) */
    if (tied > 1 || s->opt.mates != SBF_MATES_SUMMED || (n_reads < 2 && !seg))
        return;
    int other = 0;   /* a part can only belong to a target with hits in the whole fragment */
    for (int t = 0; t < R && !other; ++t)
        other = t != best && frag_hits[t] >= s->opt.min_hits;
    if (!other)
        return;
    size_t units = 0;
    each_unit(s, n_reads, read, first, kmers, hits, seg, count_unit, &units);
    if (units < 2)
        return;
    chimera_t c = {best, s->opt.min_score + log10((double)units), passing, 0};
    each_unit(s, n_reads, read, first, kmers, hits, seg, chimera_unit, &c);
    if (c.found)
        out->category = SBF_CAT_MULTI;
}

SBF_EXPORT void sbf_classify_opt_init(sbf_classify_opt_t *o)
{
    memset(o, 0, sizeof *o);
    o->min_score = SBF_DEFAULT_MIN_SCORE;
    o->min_hits = SBF_DEFAULT_MIN_HITS;
    o->min_fraction = 0;
    o->margin = SBF_DEFAULT_MARGIN;
    o->mask_lowcomp = SBF_DEFAULT_MASK_LOWCOMP;
    o->mates = SBF_MATES_SUMMED;
}

SBF_EXPORT int sbf_classify_opt_check(const sbf_classify_opt_t *o)
{
    if (!o)
        return sbf_error(SBF_E_PARAM, "no classification options");
    if (!(o->min_score >= 0 && o->min_score <= 1e6))
        return sbf_error(SBF_E_PARAM, "min_score %g out of range (0 to 1e6)", o->min_score);
    if (o->min_hits < 1)
        return sbf_error(SBF_E_PARAM, "min_hits must be at least 1");
    if (!(o->min_fraction >= 0 && o->min_fraction <= 1))
        return sbf_error(SBF_E_PARAM, "min_fraction %g out of range (0 to 1)", o->min_fraction);
    if (!(o->margin >= 0 && o->margin <= 1))
        return sbf_error(SBF_E_PARAM, "margin %g out of range (0 to 1)", o->margin);
    if (o->mask_lowcomp > 0 && o->mask_lowcomp < 2 * SBF_LOWCOMP_MAX_PERIOD)
        return sbf_error(SBF_E_PARAM, "mask_lowcomp %u: 0 (no mask) or at least %d bases", o->mask_lowcomp,
                         2 * SBF_LOWCOMP_MAX_PERIOD);
    if (o->mates != SBF_MATES_SUMMED && o->mates != SBF_MATES_BOTH && o->mates != SBF_MATES_EITHER)
        return sbf_error(SBF_E_PARAM, "mates rule %d unknown", o->mates);
    return SBF_OK;
}

const char *sbf_mates_name(int mates)
{
    return mates == SBF_MATES_BOTH ? "both" : mates == SBF_MATES_EITHER ? "either" : "summed";
}

void sbf_classify_opt_describe(const sbf_classify_opt_t *o, char *buf, size_t size)
{
    int n = snprintf(buf, size, "score >= %g, hits >= %u", o->min_score, o->min_hits);
    if (o->min_fraction > 0 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ", fraction >= %g", o->min_fraction);
    if (n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ", margin %g, ", o->margin);
    if (n >= 0 && (size_t)n < size)
        n += o->mask_lowcomp ? snprintf(buf + n, size - (size_t)n, "repeats of %u+ bases masked", o->mask_lowcomp)
                             : snprintf(buf + n, size - (size_t)n, "no low-complexity mask");
    if (o->mates != SBF_MATES_SUMMED && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", mates: %s (BioBloom)", sbf_mates_name(o->mates));
}
