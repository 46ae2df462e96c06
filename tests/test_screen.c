/* test_screen.c -- the scoring rule (filters/sbf_classify.c), output format names
 * (bam/sbf_writer.c) and the reader/batcher's pairing of SAM records by flags. */
#include "testutil.h"

#include "../bam/sbf_batch.h"
#include "../bam/sbf_writer.h"
#include "../filters/sbf_classify.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_lowcomp.h"
#include "../filters/sbf_segment.h"

#include <ctype.h>
#include <math.h>

/* A rule over n targets of the given false-positive rates, clump chance 0.6. */
static sbf_scorer_t scorer(const sbf_classify_opt_t *o, int n, const double *fpr)
{
    sbf_scorer_t s;
    const double clump[4] = {0.6, 0.6, 0.6, 0.6};
    assert_int_equal(sbf_classify_opt_check(o), SBF_OK);
    assert_int_equal(sbf_scorer_init(&s, o, 31, n, fpr, clump), SBF_OK);
    return s;
}

/* One read (no mate) with `kmers` k-mers and hits[0..R). */
static sbf_frag_result_t one(const sbf_scorer_t *s, uint32_t kmers, const uint32_t *hits, uint8_t *passing)
{
    uint32_t frag[8];
    sbf_frag_result_t r;
    sbf_score_fragment(s, 1, NULL, 0, &kmers, hits, NULL, frag, passing, &r);
    assert_int_equal(r.kmers, kmers);
    for (int t = 0; t < s->n_targets; ++t)
        assert_int_equal(frag[t], hits[t]);
    return r;
}

static void test_defaults(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    assert_true(o.min_score == SBF_DEFAULT_MIN_SCORE);
    assert_int_equal(o.min_hits, SBF_DEFAULT_MIN_HITS);
    assert_true(o.min_fraction == 0);
    assert_true(o.margin == SBF_DEFAULT_MARGIN);
    assert_int_equal(o.mask_lowcomp, SBF_DEFAULT_MASK_LOWCOMP);
    assert_int_equal(o.mates, SBF_MATES_SUMMED);
    assert_int_equal(sbf_classify_opt_check(&o), SBF_OK);
    o.margin = 1.5;
    assert_int_equal(sbf_classify_opt_check(&o), SBF_E_PARAM);
    assert_non_null(strstr(sbf_error_message(), "margin"));
    sbf_classify_opt_init(&o);
    o.min_hits = 0;
    assert_int_equal(sbf_classify_opt_check(&o), SBF_E_PARAM);
    assert_non_null(strstr(sbf_error_message(), "min_hits"));
    sbf_classify_opt_init(&o);
    o.mask_lowcomp = 5;   /* shorter than two periods */
    assert_int_equal(sbf_classify_opt_check(&o), SBF_E_PARAM);
    sbf_classify_opt_init(&o);
    o.mates = 7;
    assert_int_equal(sbf_classify_opt_check(&o), SBF_E_PARAM);
}

/* The calibrated score against values computed independently: the Polya-Aeppli probabilities
 * by their recursion in 200-digit decimal arithmetic (Python's decimal module), lambda = n x fpr
 * x (1 - 0.6), clump continuation 0.6; one target (with R targets the score is lower by
 * log10 R). */
static void test_score_values(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr = 6.2e-6;
    sbf_scorer_t s = scorer(&o, 1, &fpr);
    static const struct {
        uint32_t n, h;
        double want;
    } v[] = {{240, 1, 3.2254663170893885},   {240, 2, 3.4472289197726522},   {240, 10, 5.2213299461408855},
             {240, 50, 14.09184052440838},   {240, 120, 29.6152557101369},   {240, 240, 56.226887821267404}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i)
        assert_true(fabs(sbf_score_hits(&s, 0, v[i].n, v[i].h) - v[i].want) < 1e-6 * v[i].want);
    assert_true(sbf_score_hits(&s, 0, 240, 0) == 0);
    /* more hits: higher; more k-mers for the same hits: lower; a huge h stays finite */
    double prev = 0;
    for (uint32_t h = 1; h < 3000; h += 7) {
        double sc = sbf_score_hits(&s, 0, 1000000, h);
        assert_true(sc >= prev && isfinite(sc));
        prev = sc;
    }
    assert_true(sbf_score_hits(&s, 0, 1000000, 10) < sbf_score_hits(&s, 0, 1000, 10));
    assert_true(isfinite(sbf_score_hits(&s, 0, 4000000, 4000000)));
    sbf_scorer_free(&s);
    const double fpr4[4] = {fpr, fpr, fpr, fpr};
    s = scorer(&o, 4, fpr4);   /* a panel of 4: each chance counts 4 times */
    assert_true(fabs(sbf_score_hits(&s, 2, 240, 10) - (5.2213299461408855 - log10(4))) < 1e-6);
    sbf_scorer_free(&s);
}

static void test_best_target(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[3] = {6e-6, 6e-6, 6e-6};
    sbf_scorer_t s = scorer(&o, 3, fpr);
    uint32_t hits[3] = {10, 60, 5};
    uint8_t passing[3];
    sbf_frag_result_t r = one(&s, 100, hits, passing);
    assert_int_equal(r.category, 1);
    assert_true(fabs(r.score - sbf_score_hits(&s, 1, 100, 60)) < 1e-3);
    assert_int_equal(passing[0], 0);
    assert_int_equal(passing[1], 1);
    assert_int_equal(passing[2], 0);
    sbf_scorer_free(&s);
}

/* A target whose filter is over-full (a high false-positive rate) does not win with hits that
 * chance explains, against a target with fewer but certain hits. */
static void test_fpr_decides(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[2] = {1e-2, 6e-6};
    sbf_scorer_t s = scorer(&o, 2, fpr);
    uint32_t hits[2] = {30, 12};   /* of 2000 k-mers: 30 is what 1% false positives give */
    assert_true(sbf_score_hits(&s, 0, 2000, 30) < o.min_score);
    assert_int_equal(one(&s, 2000, hits, NULL).category, 1);
    sbf_scorer_free(&s);
}

/* Two relatives that both pass by far: the one with more k-mers wins, whatever their filters'
 * false-positive rates (a MiSeq read of Shigella: 123 hits against 92 in E. coli 536, whose
 * filter is sparser and so gave 92 hits the higher score). */
static void test_most_hits_win(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[2] = {2e-7, 2e-6}, clump[2] = {0.2, 0.9};
    sbf_scorer_t s;
    assert_int_equal(sbf_scorer_init(&s, &o, 31, 2, fpr, clump), SBF_OK);
    uint32_t hits[2] = {92, 123};
    assert_true(sbf_score_hits(&s, 0, 221, 92) > sbf_score_hits(&s, 1, 221, 123));   /* the score would pick 0 */
    uint8_t passing[2];
    assert_int_equal(one(&s, 221, hits, passing).category, 1);
    assert_true(!passing[0] && passing[1]);
    sbf_scorer_free(&s);
}

static void test_thresholds(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    o.min_score = 0;
    o.min_hits = 3;
    o.min_fraction = 0.25;
    const double fpr[2] = {6e-6, 6e-6};
    sbf_scorer_t s = scorer(&o, 2, fpr);
    uint32_t hits[2] = {24, 0};
    assert_int_equal(one(&s, 100, hits, NULL).category, SBF_CAT_NONE);   /* 0.24 < 0.25 */
    hits[0] = 25;
    assert_int_equal(one(&s, 100, hits, NULL).category, 0);              /* exactly 0.25 */
    uint32_t few[2] = {2, 0};
    assert_int_equal(one(&s, 4, few, NULL).category, SBF_CAT_NONE);      /* 0.5 but 2 hits */
    sbf_scorer_free(&s);
    o.min_hits = 2;
    s = scorer(&o, 2, fpr);
    assert_int_equal(one(&s, 4, few, NULL).category, 0);
    sbf_scorer_free(&s);
    /* the score threshold: the hits a 150 bp read (120 k-mers) needs at a score of 4 */
    sbf_classify_opt_init(&o);
    s = scorer(&o, 2, fpr);
    uint32_t h = 1;
    while (sbf_score_hits(&s, 0, 120, h) < o.min_score)
        ++h;
    hits[0] = h;
    assert_int_equal(one(&s, 120, hits, NULL).category, 0);
    hits[0] = h - 1;
    assert_int_equal(one(&s, 120, hits, NULL).category, SBF_CAT_NONE);
    /* and the same hits among a million k-mers are chance */
    hits[0] = h;
    assert_int_equal(one(&s, 1000000, hits, NULL).category, SBF_CAT_NONE);
    sbf_scorer_free(&s);
}

static void test_multi_and_margin(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    o.margin = 0.05;
    const double fpr[3] = {6e-6, 6e-6, 6e-6};
    sbf_scorer_t s = scorer(&o, 3, fpr);
    uint8_t passing[3];
    uint32_t hits[3] = {90, 86, 40};   /* 86 >= 90 - 0.05 x 100 */
    assert_int_equal(one(&s, 100, hits, passing).category, SBF_CAT_MULTI);
    assert_int_equal(passing[0] + passing[1] + passing[2], 2);
    assert_int_equal(passing[2], 0);
    hits[1] = 84;   /* 6 behind: the best wins alone */
    assert_int_equal(one(&s, 100, hits, passing).category, 0);
    sbf_scorer_free(&s);
    o.margin = 0.5;   /* a wide margin ties the third target too (46 >= 90 - 0.5 x 90) */
    s = scorer(&o, 3, fpr);
    hits[2] = 46;
    assert_int_equal(one(&s, 100, hits, passing).category, SBF_CAT_MULTI);
    assert_int_equal(passing[2], 1);
    hits[2] = 44;
    assert_int_equal(one(&s, 100, hits, passing).category, SBF_CAT_MULTI);
    assert_int_equal(passing[2], 0);
    sbf_scorer_free(&s);
    o.margin = 0;   /* equal hits are still a tie */
    s = scorer(&o, 3, fpr);
    uint32_t eq[3] = {50, 50, 0};
    assert_int_equal(one(&s, 100, eq, NULL).category, SBF_CAT_MULTI);
    sbf_scorer_free(&s);
    /* a lead that chance explains is no lead: in an over-full filter (1e-3 false positives per
     * k-mer), 2 hits more than another target among 100 k-mers are what false positives give;
     * 15 more are not */
    const double full[3] = {1e-3, 1e-3, 1e-3};
    s = scorer(&o, 3, full);
    uint32_t near[3] = {52, 50, 0};
    assert_int_equal(one(&s, 100, near, passing).category, SBF_CAT_MULTI);
    near[1] = 37;
    assert_int_equal(one(&s, 100, near, passing).category, 0);
    sbf_scorer_free(&s);
}

/* A noisy long read of one organism with a relative indexed: the relative shares some of what
 * the best target finds (its genes in common) but finds far fewer k-mers overall. The margin
 * counts in the best target's hits, not in the read's k-mers (of which a noisy read finds a few
 * percent): the read is the best target's. */
static void test_relative_long_read(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[3] = {8e-7, 4e-7, 6e-7};
    sbf_scorer_t s = scorer(&o, 3, fpr);
    uint8_t passing[3];
    uint32_t hits[3] = {254, 195, 117};   /* E. coli K-12, O157:H7, 536 of a real R9 read */
    assert_int_equal(one(&s, 21000, hits, passing).category, 0);
    assert_true(passing[0] && !passing[1] && !passing[2]);
    hits[1] = 250;   /* within 2% of the best: shared */
    assert_int_equal(one(&s, 21000, hits, passing).category, SBF_CAT_MULTI);
    sbf_scorer_free(&s);
}

/* Segments of a noisy long read of target 0 (16 of 512 k-mers) that are not chimeras: a
 * stretch of low quality (no target finds anything there), and a strain difference (target 0
 * finds a little less there and the relative, target 1, a few k-mers more: one error-free stretch
 * over a base the read shares with the relative). Neither makes the read multi; 2 kbp (4
 * segments) without target 0 and with the relative's own k-mers do. */
static void test_segments_not_chimeras(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[2] = {8e-7, 6e-7};
    sbf_scorer_t s = scorer(&o, 2, fpr);
    uint32_t ukmers[16], uhits[32], kmers[1], hits[2], frag[2];
    const size_t first[1] = {0}, end[1] = {16};
    for (int q = 0; q < 16; ++q) {
        ukmers[q] = 512;
        uhits[q * 2] = 20;       /* about 4% of the k-mers: a 10%-error read */
        uhits[q * 2 + 1] = 10;   /* the relative shares half of them */
    }
    uhits[4 * 2] = uhits[4 * 2 + 1] = 0;   /* segment 4: low quality */
    uhits[10 * 2] = 7;                     /* segment 10: 7 of 20, and the relative 9 */
    uhits[10 * 2 + 1] = 9;
    const sbf_segments_t seg = {first, end, ukmers, uhits, NULL};   /* no read on the long-read layer */
    sbf_segments_gather(&seg, 1, 2, kmers, hits);
    uint8_t passing[2];
    sbf_frag_result_t r;
    sbf_score_fragment(&s, 1, NULL, 0, kmers, hits, &seg, frag, passing, &r);
    assert_int_equal(r.category, 0);
    /* segment 10 where the relative finds far more but target 0 finds what its rate predicts: a
     * stretch the read shares better with the relative (a mosaic strain), not a part of it */
    uhits[10 * 2] = 20;
    uhits[10 * 2 + 1] = 90;
    sbf_segments_gather(&seg, 1, 2, kmers, hits);
    sbf_score_fragment(&s, 1, NULL, 0, kmers, hits, &seg, frag, passing, &r);
    assert_int_equal(r.category, 0);
    assert_int_equal(r.parts, 0);
    for (int q = 10; q < 14; ++q) {   /* 2 kbp of the relative's own sequence */
        uhits[q * 2] = 0;
        uhits[q * 2 + 1] = 18;
    }
    sbf_segments_gather(&seg, 1, 2, kmers, hits);
    sbf_score_fragment(&s, 1, NULL, 0, kmers, hits, &seg, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_MULTI);
    assert_int_equal(r.parts, 1);
    assert_true(passing[0] && passing[1]);
    sbf_scorer_free(&s);
}

/* Pairs: a mate of another target is a chimera (an accurate read misses its whole length only
 * with many errors); a mate with one error in it is not. */
static void test_mate_parts(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[2] = {6e-6, 8e-7};
    sbf_scorer_t s = scorer(&o, 2, fpr);
    uint32_t kmers[2] = {120, 120}, hits[4] = {120, 0, 0, 120}, frag[2];
    uint8_t passing[2];
    sbf_frag_result_t r;
    sbf_score_fragment(&s, 2, NULL, 0, kmers, hits, NULL, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_MULTI);
    assert_true(passing[0] && passing[1]);
    uint32_t one_error[4] = {120, 0, 89, 0};   /* mate 2: one error, 31 k-mers lost */
    sbf_score_fragment(&s, 2, NULL, 0, kmers, one_error, NULL, frag, passing, &r);
    assert_int_equal(r.category, 0);
    sbf_scorer_free(&s);
}

/* A long read queried as 5 segments of 1000 k-mers. A chimera: the first three segments are
 * target 0's, the last two target 1's (which has fewer hits overall): multi, both marked. A read
 * in a region two targets share (target 1 finds a part of what target 0 finds in every
 * segment): target 0. */
static void test_chimera_segments(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[3] = {6e-6, 6e-6, 6e-6};
    sbf_scorer_t s = scorer(&o, 3, fpr);
    uint32_t ukmers[5] = {1000, 1000, 1000, 1000, 1000}, uhits[15] = {0}, kmers[1], hits[3], frag[3];
    const size_t first[1] = {0}, end[1] = {5};
    for (int q = 0; q < 5; ++q) {
        uhits[q * 3 + (q < 3 ? 0 : 1)] = q < 3 ? 200 : 180;   /* noisy reads: a fifth of the k-mers */
        uhits[q * 3 + 2] = q == 1;                             /* a stray hit in target 2 */
    }
    const sbf_segments_t seg = {first, end, ukmers, uhits, NULL};   /* no read on the long-read layer */
    sbf_segments_gather(&seg, 1, 3, kmers, hits);
    assert_int_equal(kmers[0], 5000);
    assert_int_equal(hits[0], 600);
    assert_int_equal(hits[1], 360);
    uint8_t passing[3];
    sbf_frag_result_t r;
    sbf_score_fragment(&s, 1, NULL, 0, kmers, hits, &seg, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_MULTI);
    assert_true(passing[0] && passing[1] && !passing[2]);
    sbf_score_fragment(&s, 1, NULL, 0, kmers, hits, NULL, frag, passing, &r);   /* without segments */
    assert_int_equal(r.category, 0);
    /* shared: target 1 has 60% of target 0's hits in every segment */
    for (int q = 0; q < 5; ++q) {
        uhits[q * 3] = 200;
        uhits[q * 3 + 1] = 120;
    }
    sbf_segments_gather(&seg, 1, 3, kmers, hits);
    sbf_score_fragment(&s, 1, NULL, 0, kmers, hits, &seg, frag, passing, &r);
    assert_int_equal(r.category, 0);
    assert_true(passing[0] && !passing[1] && !passing[2]);
    sbf_scorer_free(&s);
}

/* Reads cut into units: every k-mer in exactly one unit, BAM segments on a byte boundary. */
static void test_units(void **state)
{
    (void)state;
    static char longread[5000];
    memset(longread, 'A', sizeof longread);
    const char *seqs[3] = {"ACGT", longread, longread};
    const size_t lens[3] = {4, 31 + 511, 31 + 2 * 512 + 5};   /* 512 k-mers: one unit; 1029: three */
    sbf_units_t u = {0};
    assert_int_equal(SBF_SEGMENT_KMERS, 512);
    assert_int_equal(sbf_units_make(&u, 3, seqs, NULL, lens, 31), SBF_OK);
    assert_int_equal(u.n_units, 5);
    assert_true(u.segmented);
    assert_int_equal(u.start[0], 0);
    assert_int_equal(u.start[1], 1);
    assert_int_equal(u.start[2], 2);
    assert_int_equal(u.start[3], 5);
    assert_int_equal(u.lens[1], 31 + 511);
    size_t kmers = 0;
    for (size_t q = 2; q < 5; ++q) {
        assert_ptr_equal(u.seqs[q], longread + (q - 2) * SBF_SEGMENT_KMERS);
        kmers += u.lens[q] - 30;
    }
    assert_int_equal(kmers, lens[2] - 30);
    const uint8_t *packed[1] = {(const uint8_t *)longread};
    const size_t plen[1] = {31 + 512};
    assert_int_equal(sbf_units_make(&u, 1, NULL, packed, plen, 31), SBF_OK);
    assert_int_equal(u.n_units, 2);
    assert_ptr_equal(u.packed[1], packed[0] + SBF_SEGMENT_KMERS / 2);
    assert_int_equal(u.lens[1], 31);
    sbf_units_free(&u);
}

static void test_no_kmer_and_no_target(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    const double fpr[1] = {6e-6};
    sbf_scorer_t s = scorer(&o, 1, fpr);
    uint32_t hits[1] = {0};
    sbf_frag_result_t r = one(&s, 0, hits, NULL);
    assert_int_equal(r.category, SBF_CAT_NO_KMER);
    assert_true(r.score == 0);
    sbf_scorer_free(&s);
    s = scorer(&o, 0, fpr);
    assert_int_equal(one(&s, 10, hits, NULL).category, SBF_CAT_NONE);
    sbf_scorer_free(&s);
}

/* Mates summed: a pair is one fragment; the reads may sit anywhere in the batch. */
static void test_mates_summed(void **state)
{
    (void)state;
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    o.min_score = 4;
    const double fpr[2] = {6e-6, 6e-6};
    sbf_scorer_t s = scorer(&o, 2, fpr);
    uint32_t kmers[3] = {120, 999, 100}, hits[6] = {3, 0, 7, 7, 4, 0}, frag[2];
    const uint32_t read[2] = {0, 2};
    sbf_frag_result_t r;
    sbf_score_fragment(&s, 2, read, 0, kmers, hits, NULL, frag, NULL, &r);
    assert_int_equal(r.kmers, 220);
    assert_int_equal(frag[0], 7);
    assert_int_equal(frag[1], 0);
    assert_int_equal(r.category, 0);   /* 7 hits among 220 pass; 3 among 120 alone do not */
    assert_int_equal(one(&s, 120, hits, NULL).category, SBF_CAT_NONE);
    assert_int_equal(sbf_fragment_sum(2, 2, NULL, 1, kmers, hits, frag), 1099);   /* reads 1 and 2 */
    assert_int_equal(frag[0], 11);
    sbf_scorer_free(&s);
}

static void test_mates_rules(void **state)
{
    (void)state;
    sbf_classify_opt_t o;   /* categorize's defaults without -b */
    sbf_classify_opt_init(&o);
    o.min_score = 0;
    o.min_hits = 3;
    o.min_fraction = 0.15;
    o.margin = 1.0;
    o.mates = SBF_MATES_BOTH;
    const double fpr[2] = {6e-6, 6e-6};
    sbf_scorer_t both = scorer(&o, 2, fpr);
    o.mates = SBF_MATES_EITHER;
    sbf_scorer_t either = scorer(&o, 2, fpr);
    uint8_t passing[2];
    uint32_t frag[2];
    sbf_frag_result_t r;
    /* target 0: mate 1 passes (0.5), mate 2 not (0.1) */
    uint32_t kmers[2] = {100, 100}, h[4] = {50, 0, 10, 0};
    sbf_score_fragment(&both, 2, NULL, 0, kmers, h, NULL, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_NONE);
    sbf_score_fragment(&either, 2, NULL, 0, kmers, h, NULL, frag, passing, &r);
    assert_int_equal(r.category, 0);
    assert_true(fabs(r.score - sbf_score_hits(&either, 0, 100, 50)) < 1e-3);   /* the higher mate */
    h[2] = 20;
    sbf_score_fragment(&both, 2, NULL, 0, kmers, h, NULL, frag, passing, &r);
    assert_int_equal(r.category, 0);
    assert_true(fabs(r.score - sbf_score_hits(&both, 0, 100, 20)) < 1e-3);     /* the lower mate */
    uint32_t ab[4] = {90, 30, 80, 40};   /* both targets pass for both mates */
    sbf_score_fragment(&both, 2, NULL, 0, kmers, ab, NULL, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_MULTI);
    assert_true(passing[0] && passing[1]);
    uint32_t none[2] = {0, 0};
    sbf_score_fragment(&both, 2, NULL, 0, none, ab, NULL, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_NO_KMER);
    /* a mate without k-mers fails "both" but not "either" */
    uint32_t one_mate[2] = {100, 0};
    sbf_score_fragment(&both, 2, NULL, 0, one_mate, ab, NULL, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_NONE);
    sbf_score_fragment(&either, 2, NULL, 0, one_mate, ab, NULL, frag, passing, &r);
    assert_int_equal(r.category, SBF_CAT_MULTI);   /* mate 1 passes both targets (0.9 and 0.3) */
    sbf_scorer_free(&both);
    sbf_scorer_free(&either);
    o.mates = SBF_MATES_BOTH;
    o.margin = 0;   /* -b: the best one */
    both = scorer(&o, 2, fpr);
    sbf_score_fragment(&both, 2, NULL, 0, kmers, ab, NULL, frag, passing, &r);
    assert_int_equal(r.category, 0);
    sbf_scorer_free(&both);
}

/* ---- low-complexity masking (filters/sbf_lowcomp.c) ---- */

/* The rule written plainly: base i is masked when some window [a, b) holding it, b - a >=
 * min_len, has every base valid and equal to the one p later, for some p <= 6. */
static int base_of(char c)
{
    const char *b = strchr("ACGT", toupper((unsigned char)c));
    return c && b ? (int)(b - "ACGT") : 4;
}

static void naive_mask(const char *seq, size_t len, unsigned min_len, char *out)
{
    memcpy(out, seq, len);
    for (unsigned p = 1; p <= SBF_LOWCOMP_MAX_PERIOD; ++p)
        for (size_t a = 0; a + min_len <= len; ++a) {
            size_t b = a;   /* the longest p-periodic stretch from a */
            while (b + p < len && base_of(seq[b]) < 4 && base_of(seq[b]) == base_of(seq[b + p]))
                ++b;
            if (b > a && b - a + p >= min_len)
                for (size_t i = a; i < b + p; ++i)
                    out[i] = 'N';
        }
}

static size_t mask_ascii(const char *seq, unsigned min_len, char *out)
{
    size_t len = strlen(seq);
    size_t n = sbf_lowcomp_mask_ascii(seq, len, min_len, out);
    if (n == 0)
        memcpy(out, seq, len);
    out[len] = 0;
    return n;
}

static void test_lowcomp_cases(void **state)
{
    (void)state;
    char seq[512], out[512], want[512];
    const unsigned L = SBF_DEFAULT_MASK_LOWCOMP;
    memset(seq, 'G', 150);
    seq[150] = 0;
    assert_int_equal(mask_ascii(seq, L, out), 150);
    assert_int_equal(strspn(out, "N"), 150);
    /* (AC)n, (AGG)n, a 6-base unit: masked; a 7-base unit: not */
    const char *units[] = {"AC", "AGG", "TTAGGG", "ACGTTGA"};
    for (int u = 0; u < 4; ++u) {
        size_t ul = strlen(units[u]);
        for (size_t i = 0; i < 120; ++i)
            seq[i] = units[u][i % ul];
        seq[120] = 0;
        assert_int_equal(mask_ascii(seq, L, out), u < 3 ? 120 : 0);
    }
    /* a real read with a poly-G tail: the tail alone, exactly */
    const char *head = "ACGTTGCATGCCTAGGATCCATGACTTGCAAGTCGATCGGATCTAAGCTTACGGATCATGCAA";
    size_t hl = strlen(head);
    memcpy(seq, head, hl);
    memset(seq + hl, 'G', 40);
    seq[hl + 40] = 0;
    size_t n = mask_ascii(seq, L, out);
    naive_mask(seq, hl + 40, L, want);
    assert_memory_equal(out, want, hl + 40);
    assert_true(n >= 40 && n <= 41);   /* the head's last base may be a G */
    assert_memory_equal(out, head, hl - 1);
    /* the length threshold: L-1 bases stay, L are masked; lower case counts as the same base */
    memcpy(seq, head, 30);
    memset(seq + 30, 'c', L - 1);   /* between two A's */
    memcpy(seq + 30 + L - 1, head + 30, 30);
    seq[60 + L - 1] = 0;
    assert_int_equal(mask_ascii(seq, L, out), 0);
    memcpy(seq + 30, "ccccccccccCCCCCCCCCCCCCCCCCCCCCC", L);
    memcpy(seq + 30 + L, head + 30, 30);
    seq[60 + L] = 0;
    assert_int_equal(mask_ascii(seq, L, out), L);
    /* an N breaks a stretch: two halves of 20 are each too short */
    memset(seq, 'T', 41);
    seq[20] = 'N';
    seq[41] = 0;
    assert_int_equal(mask_ascii(seq, L, out), 0);
    assert_int_equal(mask_ascii(seq, 16, out), 40);   /* but long enough for a mask of 16 */
    assert_int_equal(mask_ascii(seq, 0, out), 0);     /* 0: off */
}

/* Random reads with planted repeats of every period and length around the threshold, at every
 * place (near the ends too): the fast path (64-bit candidate blocks) gives the plain rule's
 * bytes, and the BAM 4-bit form masks the same bases. */
static void test_lowcomp_random(void **state)
{
    (void)state;
    uint64_t x = 42;
    char seq[400], out[400], want[400];
    uint8_t packed[200], pout[200], scratch[400];
    size_t total = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t len = 20 + (x >> 33) % 300;
        for (size_t i = 0; i < len; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            seq[i] = "ACGTACGTACGTACGN"[(x >> 40) & 15];
        }
        unsigned p = 1 + (unsigned)((x >> 20) % 7), rl = 14 + (unsigned)((x >> 10) % 30);
        size_t at = (x >> 45) % len;
        for (size_t i = at + p; i < at + rl && i < len; ++i)
            seq[i] = seq[i - p] == 'N' ? 'A' : seq[i - p];
        unsigned L = iter % 3 == 0 ? 16 : SBF_DEFAULT_MASK_LOWCOMP;
        naive_mask(seq, len, L, want);
        size_t n = sbf_lowcomp_mask_ascii(seq, len, L, out);
        if (n == 0)
            memcpy(out, seq, len);
        assert_memory_equal(out, want, len);
        total += n;
        /* the same read as BAM holds it */
        memset(packed, 0, sizeof packed);
        for (size_t i = 0; i < len; ++i)
            packed[i / 2] |= (uint8_t)(seq_nt16_table[(uint8_t)seq[i]] << ((~i & 1) * 4));
        size_t m = sbf_lowcomp_mask_nt16(packed, len, L, scratch, pout);
        assert_int_equal(m, n);
        for (size_t i = 0; m && i < len; ++i)
            assert_int_equal((pout[i / 2] >> ((~i & 1) * 4)) & 15, want[i] == 'N' ? 15 : seq_nt16_table[(uint8_t)seq[i]]);
    }
    assert_true(total > 10000);   /* the planted repeats were found */
}

/* The batch view: masked reads are copies, the others the caller's own pointers. */
static void test_lowcomp_batch(void **state)
{
    (void)state;
    char g[100], r[100];
    memset(g, 'G', 99);
    g[99] = 0;
    uint64_t x = 7;
    for (int i = 0; i < 99; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        r[i] = "ACGT"[x >> 62];
    }
    r[99] = 0;
    const char *seqs[3] = {r, g, r};
    size_t lens[3] = {99, 99, 99};
    sbf_lowcomp_batch_t m = {0};
    const char *const *view;
    const uint8_t *const *pview;
    assert_int_equal(sbf_lowcomp_batch(&m, 24, 3, seqs, NULL, lens, &view, &pview), SBF_OK);
    assert_int_equal(m.masked_reads, 1);
    assert_int_equal(m.masked_bases, 99);
    assert_ptr_equal(view[0], r);
    assert_ptr_equal(view[2], r);
    assert_ptr_not_equal(view[1], g);
    assert_int_equal(strspn(view[1], "N"), 99);
    assert_int_equal(g[0], 'G');   /* the caller's read is untouched */
    assert_int_equal(sbf_lowcomp_batch(&m, 24, 1, seqs, NULL, lens, &view, &pview), SBF_OK);
    assert_ptr_equal(view, seqs);   /* nothing to mask: the input itself */
    assert_int_equal(sbf_lowcomp_batch(&m, 0, 3, seqs, NULL, lens, &view, &pview), SBF_OK);
    assert_ptr_equal(view, seqs);
    sbf_lowcomp_batch_free(&m);
}

static void test_outspec(void **state)
{
    (void)state;
    sbf_outspec_t o = {.level = -1};
    assert_int_equal(sbf_outspec_from_name("dir.x/out.fq.gz", &o), 1);
    assert_int_equal(o.fmt, SBF_OUT_FASTQ);
    assert_int_equal(o.compress, 1);
    assert_int_equal(sbf_outspec_from_name("a.BAM", &o), 1);
    assert_int_equal(o.fmt, SBF_OUT_BAM);
    assert_int_equal(sbf_outspec_from_name("a.fasta", &o), 1);
    assert_int_equal(o.fmt, SBF_OUT_FASTA);
    assert_int_equal(o.compress, 0);
    assert_int_equal(sbf_outspec_from_name("noext", &o), 0);
    assert_int_equal(sbf_outspec_from_name("a.txt.gz", &o), 0);
    assert_int_equal(sbf_outspec_from_name("a.bam.gz", &o), 0);
    assert_int_equal(sbf_outspec_from_name(".gz", &o), 0);
    assert_int_equal(sbf_outspec_parse("cram,level=3", &o), 0);
    assert_int_equal(o.fmt, SBF_OUT_CRAM);
    assert_int_equal(o.level, 3);
    assert_int_equal(sbf_outspec_parse("sam.gz", &o), 0);
    assert_int_equal(o.compress, 1);
    assert_true(sbf_outspec_parse("vcf", &o) < 0);
    assert_true(sbf_outspec_parse("bam,level=10", &o) < 0);
    assert_true(sbf_outspec_parse("bam,speed=1", &o) < 0);
}

static void test_safe_file_part(void **state)
{
    (void)state;
    static const char *cases[][2] = {
        {"human", "human"},   {"../etc/passwd", "_._etc_passwd"}, {"/abs", "_abs"}, {"..", "_."},
        {".hidden", "_hidden"}, {"a b\tc\n", "a_b_c_"},         {"", "_"},        {"E.coli_K-12+x", "E.coli_K-12+x"},
        {"\xc3\xa9", "__"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *f = sbf_safe_file_part(cases[i][0]);
        assert_non_null(f);
        assert_string_equal(f, cases[i][1]);
        assert_null(strchr(f, '/'));
        free(f);
    }
}

static void test_mate_names(void **state)
{
    (void)state;
    assert_true(sbf_mate_names_match("r1/1", 4, "r1/2", 4));
    assert_true(sbf_mate_names_match("r1", 2, "r1", 2));
    assert_false(sbf_mate_names_match("r1/1", 4, "r2/2", 4));
    assert_false(sbf_mate_names_match("r1/3", 4, "r1/4", 4));
}

/* SAM pairs by flags: adjacent mates form one fragment, a secondary record between them is not
 * classified, a pair is never cut by the batch limit, and mates far apart stay single. */
static void test_pairing_by_flags(void **state)
{
    (void)state;
    char *path = path_in_tmp("p.sam");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "@HD\tVN:1.6\n"
                "a\t77\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n"
                "a\t333\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n"   /* secondary copy of a/1 */
                "a\t141\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n"
                "b\t77\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n"
                "c\t141\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n"   /* not b's mate */
                "d\t4\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n");
    assert_int_equal(fclose(fp), 0);
    sbf_reader_t *rd;
    assert_int_equal(sbf_reader_open(path, NULL, &rd), 0);
    sbf_input_t *in;
    assert_int_equal(sbf_input_new(rd, NULL, SBF_PAIRS_BY_FLAGS, &in), 0);
    sbf_batch_t b = {0};
    /* a limit of 1 base: each batch ends at the first fragment boundary */
    assert_int_equal(sbf_input_next(in, &b, 1), 1);
    assert_int_equal(b.n_reads, 3);
    assert_int_equal(b.n_frags, 1);
    assert_int_equal(b.frags[0].n, 2);
    assert_int_equal(b.reads[1].frag, -1);
    assert_int_equal(b.reads[0].mate, 1);
    assert_int_equal(b.reads[2].mate, 2);
    assert_int_equal(sbf_input_next(in, &b, 1), 1);   /* b alone: c is held for the next batch */
    assert_int_equal(b.n_reads, 1);
    assert_string_equal(b.reads[0].name.s, "b");
    assert_int_equal(sbf_input_next(in, &b, 1000), 1);
    assert_int_equal(b.n_frags, 2);
    assert_string_equal(b.reads[0].name.s, "c");
    assert_string_equal(b.reads[1].name.s, "d");
    assert_int_equal(sbf_input_next(in, &b, 1000), 0);
    sbf_batch_free(&b);
    assert_int_equal(sbf_input_free(in), 0);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),         cmocka_unit_test(test_best_target),
        cmocka_unit_test(test_thresholds),       cmocka_unit_test(test_multi_and_margin),
        cmocka_unit_test(test_no_kmer_and_no_target), cmocka_unit_test(test_outspec),
        cmocka_unit_test(test_mates_rules),      cmocka_unit_test(test_score_values),
        cmocka_unit_test(test_fpr_decides),      cmocka_unit_test(test_mates_summed),
        cmocka_unit_test(test_most_hits_win),
        cmocka_unit_test(test_lowcomp_cases),    cmocka_unit_test(test_lowcomp_random),
        cmocka_unit_test(test_lowcomp_batch),    cmocka_unit_test(test_chimera_segments),
        cmocka_unit_test(test_relative_long_read), cmocka_unit_test(test_segments_not_chimeras),
        cmocka_unit_test(test_mate_parts),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_mate_names),       cmocka_unit_test(test_safe_file_part),       cmocka_unit_test(test_pairing_by_flags),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
