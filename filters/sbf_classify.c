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

int sbf_scorer_init(sbf_scorer_t *s, const sbf_classify_opt_t *opt, unsigned k, int n_targets, const double *fpr,
                    const double *clump)
{
    memset(s, 0, sizeof *s);
    s->opt = *opt;
    s->k = k ? k : 1;
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
        if (s->layer) {
            sbf_scorer_free(s->layer);
            free(s->layer);
            s->layer = NULL;
        }
    }
}

int sbf_scorer_add_layer(sbf_scorer_t *s, unsigned k, const double *fpr, const double *clump)
{
    sbf_scorer_t *ly = malloc(sizeof *ly);
    if (!ly)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    int rc = sbf_scorer_init(ly, &s->opt, k, s->n_targets, fpr, clump);
    if (rc != SBF_OK) {
        free(ly);
        return rc;
    }
    if (s->layer) {
        sbf_scorer_free(s->layer);
        free(s->layer);
    }
    s->layer = ly;
    return SBF_OK;
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

/* Where a read's hits lie: units ukmers[q], uhits + q x R for q in [a, b) (the segments of a
 * long read, or the read whole). */
typedef struct {
    const uint32_t *ukmers, *uhits;
    size_t a, b;
} read_units_t;

static read_units_t units_of_read(int m, const uint32_t *read, size_t first, const uint32_t *kmers,
                                  const uint32_t *hits, const sbf_segments_t *seg)
{
    const size_t i = read ? read[m] : first + (size_t)m;
    if (!seg)
        return (read_units_t){kmers, hits, i, i + 1};
    return (read_units_t){seg->kmers, seg->hits, seg->first[i], seg->end[i]};
}

/* A part of a read is a window of w consecutive units (w = 1, 2, 4, ... SBF_PART_UNITS),
 * starting every max(1, w / 2) units, so that a stretch of another organism of 1.5 w units or
 * more fills one window whatever its offset: a 2 kb part of an ONT read (about 4 segments) fills
 * a window of 2. */
#define SBF_PART_UNITS 8u

static size_t window_step(size_t w) { return w > 1 ? w / 2 : 1; }

/* How many windows a read of `units` units has: the tests the parts threshold counts. */
static size_t windows_of(size_t units)
{
    size_t n = 0;
    for (size_t w = 1; w <= SBF_PART_UNITS && w <= units; w *= 2)
        n += (units - w) / window_step(w) + 1;
    return n;
}

/* Can chance alone explain that target t finds d more of n k-mers than another target? Where
 * two targets hold the same sequence, every k-mer of a read is in both or in neither, and only
 * false positives make one find more: d is evidence for t only when its false positives (its
 * fpr and clumps) would rarely give d hits. */
static int excess_is_evidence(const sbf_scorer_t *s, int t, uint32_t n, uint32_t d, double threshold)
{
    return d >= s->opt.min_hits && sbf_score_hits(s, t, n, d) >= threshold;
}

/* A part is said to lack the best target only when that is this unlikely under the read's own
 * error rate (one-sided, per part; the other target's excess must be evidence as well, and
 * large: SBF_PART_SHARE and more than k k-mers). bench/real.sh's sweep: 0.2 flags 90.6% of the
 * joined E. coli + S. aureus ONT reads and none of the R9 and CLR E. coli reads with relatives
 * indexed; 0.5 flags the same (the test's precondition, under half the expected hits, decides
 * there), 0.05 and 0.1 87.7% and 88.7% (doc/ACCURACY.md). */
#ifndef SBF_ABSENT_P
#define SBF_ABSENT_P 0.2
#endif
/* A part belongs to another target only when that target finds, beyond the best target's hits
 * there, at least this share of what the rest of the read's rate predicts the best target would
 * find: a relative that shares an IS element or a conserved stretch with an island of the read
 * finds 5-15 k-mers where 40 were due, a chimera's other part about the read's rate. */
#ifndef SBF_PART_SHARE
#define SBF_PART_SHARE 0.25
#endif

/* P(Poisson(m) <= x), summed up from 0 (x is at most a window's k-mers over a run). */
static double poisson_cdf(double m, double x)
{
    double term = exp(-m), cdf = term;
    for (double i = 1; i <= x; ++i) {
        term *= m / i;
        cdf += term;
    }
    return cdf < 1 ? cdf : 1;
}

/* P(Poisson(m) >= x) for x > m, summed from x up in logs (so 1e-300 is exact). x is at most a
 * window's k-mers over k (133 for 8 segments), so log(x!) is summed here: lgamma() would write
 * the global signgam from every worker thread at once. */
static double poisson_upper(double m, double x)
{
    if (x <= m)
        return 1;
    double log_fact = 0;
    for (double i = 2; i <= x; ++i)
        log_fact += log(i);
    double lterm = -m + x * log(m) - log_fact, sum = 0;
    for (double i = x; i < x + 10000; ++i) {
        const double t = exp(lterm);
        sum += t;
        if (t <= sum * 1e-12)
            break;
        lterm += log(m / (i + 1));
    }
    return sum;
}

/* The hits per k-mer of rest_h among rest_n (half a hit added, so that a fragment without a
 * miss still shows a rate below 1). */
static double hit_rate(uint32_t rest_n, uint32_t rest_h)
{
    return ((double)rest_h + 0.5) / ((double)rest_n + 1);
}

/* Is the best target absent from a part of n k-mers where it finds h, beyond the error rate the
 * rest of the fragment shows (rate: hit_rate() of the rest)? With errors spread evenly at e per
 * base, a fraction rate = (1 - e)^k of the k-mers is found. Two views of the same errors, the
 * stricter one decides:
 *  - hits: an error-free stretch gives a run of about 1/e found k-mers; runs are Poisson events,
 *    so a noisy read must miss many runs (its hits are few, its misses many);
 *  - misses: an error breaks at most k k-mers, so n - h misses need (n - h) / k errors at least;
 *    an accurate read needs a few unlikely errors. */
static int absent_beyond_errors(unsigned k, double rate, uint32_t n, uint32_t h)
{
    const double expect = rate * (double)n;
    if ((double)h >= 0.5 * expect)
        return 0;
    const double e = 1 - pow(rate, 1 / (double)k);
    double run = 1 / e;
    run = run > (double)n ? (double)n : run < 1 ? 1 : run;
    if (poisson_cdf(expect / run, floor((double)h / run)) <= SBF_ABSENT_P)
        return 1;
    const double errors = ceil((double)(n - h) / (double)k);
    return poisson_upper(e * (double)(n + k - 1), errors) <= SBF_ABSENT_P;
}

/* Does the window [a, a + w) of a read belong to another target than the best? The best target
 * is absent from it beyond the error rate of the rest of the fragment, and a target t finds
 * there at least twice what the best finds, more than the best by more than k k-mers (one base
 * where the read agrees with t and not with the best target, a strain difference or an error
 * that happens to restore a relative's base, changes at most k k-mers), by SBF_PART_SHARE of
 * what the read's rate predicts, and by more than t's false positives explain. Marks every such
 * target in passing (if not NULL); returns whether one was found. */
static int part_of_another(const sbf_scorer_t *s, int best, const read_units_t *u, size_t a, size_t w,
                           uint32_t frag_kmers, uint32_t frag_best, double threshold, uint8_t *passing)
{
    const size_t R = (size_t)s->n_targets;
    uint32_t n = 0, hb = 0;
    for (size_t q = a; q < a + w; ++q) {
        n += u->ukmers[q];
        hb += u->uhits[q * R + (size_t)best];
    }
    if (n == 0 || n >= frag_kmers)
        return 0;
    const double rest_rate = hit_rate(frag_kmers - n, frag_best - hb);
    if (!absent_beyond_errors(s->k, rest_rate, n, hb))
        return 0;
    int found = 0;
    for (int t = 0; t < s->n_targets; ++t) {
        if (t == best)
            continue;
        uint32_t ht = 0;
        for (size_t q = a; q < a + w; ++q)
            ht += u->uhits[q * R + (size_t)t];
        if (ht < 2 * hb || ht < s->opt.min_hits || (double)ht < s->opt.min_fraction * (double)n ||
            (double)(ht - hb) < SBF_PART_SHARE * rest_rate * (double)n || ht - hb <= s->k ||
            !excess_is_evidence(s, t, n, ht - hb, threshold))
            continue;
        found = 1;
        if (!passing)
            return 1;   /* no marks wanted: the first one settles it */
        passing[t] = 1;
    }
    return found;
}

void sbf_score_fragment(const sbf_scorer_t *s, int n_reads, const uint32_t *read, size_t first, const uint32_t *kmers,
                        const uint32_t *hits, const sbf_segments_t *seg, uint32_t *frag_hits, uint8_t *passing,
                        sbf_frag_result_t *out)
{
    if (seg && seg->layer && s->layer && n_reads > 0 && seg->layer[read ? read[0] : first])
        s = s->layer;   /* queried on the long-read layer: its k and its chances */
    const int R = s->n_targets;
    const uint32_t n = sbf_fragment_sum(R, n_reads, read, first, kmers, hits, frag_hits);
    if (passing)
        memset(passing, 0, (size_t)(R > 0 ? R : 0));
    out->kmers = n;
    out->score = 0;
    out->parts = 0;
    if (n == 0) {
        out->category = SBF_CAT_NO_KMER;
        return;
    }
    /* the best passing target: most hits, then highest score, then the lower number. Among
     * relatives that all pass by hundreds of orders of magnitude, the score ranks their false-
     * positive rates, not their evidence: a read of Shigella (123 hits) lost to E. coli 536 (92
     * hits, a sparser filter). A target whose hits chance explains does not pass at all. */
    int best = -1, most = 0;
    double best_score = -1;
    for (int t = 0; t < R; ++t) {
        if (frag_hits[t] > frag_hits[most])
            most = t;
        if (frag_hits[t] == 0 && s->opt.mates == SBF_MATES_SUMMED)
            continue;
        double sc;
        int ok = verdict(s, t, n_reads, read, first, kmers, hits, n, frag_hits, &sc);
        if (ok && (best < 0 || frag_hits[t] > frag_hits[best] || (frag_hits[t] == frag_hits[best] && sc > best_score))) {
            best = t;
            best_score = sc;
        }
    }
    if (best < 0) {   /* the `ss` tag then reports the score of the target with the most hits */
        out->category = SBF_CAT_NONE;
        out->score = R > 0 ? (float)sbf_score_hits(s, most, n, frag_hits[most]) : 0;
        return;
    }
    /* tied: passing, and the best target's lead over it is within margin x its hits or is what
     * the best target's false positives would give (no k-mer tells the two apart) */
    const uint32_t hb = frag_hits[best];
    const double floor_hits = (double)hb - s->opt.margin * (double)hb;
    int tied = 0;
    for (int t = 0; t < R; ++t) {
        double sc;
        const uint32_t ht = frag_hits[t];
        /* a target without a hit is never tied: no score for it (most targets of a read) */
        int in = t == best ||
                 (ht > 0 &&
                  (ht >= hb || (double)ht >= floor_hits || !excess_is_evidence(s, best, n, hb - ht, s->opt.min_score)) &&
                  verdict(s, t, n_reads, read, first, kmers, hits, n, frag_hits, &sc));
        tied += in;
        if (passing)
            passing[t] = (uint8_t)in;
    }
    out->category = tied > 1 ? SBF_CAT_MULTI : best;
    out->score = (float)best_score;
    /* do the read's parts agree? A tied fragment is multi already; it is checked too, so that
     * out->parts tells a chimera of two targets with about equal halves from a shared read
     * (BioBloom's mate rules keep their meaning) */
    if (s->opt.mates != SBF_MATES_SUMMED || (n_reads < 2 && !seg))
        return;
    int other = 0;   /* a part can only belong to a target with hits in the whole fragment */
    for (int t = 0; t < R && !other; ++t)
        other = t != best && frag_hits[t] >= s->opt.min_hits;
    if (!other)
        return;
    size_t windows = 0;   /* one test per window: the threshold rises with their number */
    for (int m = 0; m < n_reads; ++m) {
        const read_units_t u = units_of_read(m, read, first, kmers, hits, seg);
        windows += windows_of(u.b - u.a);
    }
    if (windows < 2)
        return;
    const double threshold = s->opt.min_score + log10((double)windows);
    int found = 0;
    for (int m = 0; m < n_reads && !(found && !passing); ++m) {
        const read_units_t u = units_of_read(m, read, first, kmers, hits, seg);
        const size_t units = u.b - u.a;
        for (size_t w = 1; w <= SBF_PART_UNITS && w <= units; w *= 2)
            for (size_t a = u.a; a + w <= u.b; a += window_step(w))
                found |= part_of_another(s, best, &u, a, w, n, frag_hits[best], threshold, passing);
    }
    if (found) {
        out->category = SBF_CAT_MULTI;
        out->parts = 1;
    }
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
