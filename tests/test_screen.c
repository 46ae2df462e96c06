/* test_screen.c -- the scoring rule (filters/sbf_classify.c), output format names
 * (bam/sbf_writer.c) and the reader/batcher's pairing of SAM records by flags. */
#include "testutil.h"

#include "../bam/sbf_batch.h"
#include "../bam/sbf_writer.h"
#include "../filters/sbf_classify.h"

static sbf_score_opt_t opts(double min_score, uint32_t min_hits, double margin)
{
    sbf_score_opt_t o = {.min_score = min_score, .min_hits = min_hits, .margin = margin};
    return o;
}

static void test_defaults(void **state)
{
    (void)state;
    sbf_score_opt_t o;
    sbf_score_opt_init(&o);
    assert_true(o.min_score == SBF_DEFAULT_MIN_SCORE);
    assert_int_equal(o.min_hits, SBF_DEFAULT_MIN_HITS);
    assert_true(o.margin == SBF_DEFAULT_MARGIN);
}

static void test_best_target(void **state)
{
    (void)state;
    sbf_score_opt_t o = opts(0.25, 3, 0.05);
    uint32_t hits[3] = {10, 60, 5};
    uint8_t passing[3];
    double score;
    assert_int_equal(sbf_classify_fragment(&o, 3, 100, hits, &score, passing), 1);
    assert_true(score == 0.6);
    assert_int_equal(passing[0], 0);
    assert_int_equal(passing[1], 1);
    assert_int_equal(passing[2], 0);
}

static void test_thresholds(void **state)
{
    (void)state;
    double score;
    uint32_t hits[2] = {24, 0};
    sbf_score_opt_t o = opts(0.25, 3, 0.05);
    assert_int_equal(sbf_classify_fragment(&o, 2, 100, hits, &score, NULL), SBF_CAT_NONE);   /* 0.24 < 0.25 */
    hits[0] = 25;
    assert_int_equal(sbf_classify_fragment(&o, 2, 100, hits, &score, NULL), 0);              /* exactly 0.25 */
    uint32_t few[2] = {2, 0};
    assert_int_equal(sbf_classify_fragment(&o, 2, 4, few, &score, NULL), SBF_CAT_NONE);      /* 0.5 but 2 hits */
    o.min_hits = 2;
    assert_int_equal(sbf_classify_fragment(&o, 2, 4, few, &score, NULL), 0);
}

static void test_multi_and_margin(void **state)
{
    (void)state;
    double score;
    uint8_t passing[3];
    sbf_score_opt_t o = opts(0.25, 3, 0.05);
    uint32_t hits[3] = {90, 86, 40};   /* 0.90 and 0.86: within 0.05 */
    assert_int_equal(sbf_classify_fragment(&o, 3, 100, hits, &score, passing), SBF_CAT_MULTI);
    assert_int_equal(passing[0] + passing[1] + passing[2], 2);
    assert_int_equal(passing[2], 0);
    hits[1] = 84;   /* 0.06 behind: the best wins alone */
    assert_int_equal(sbf_classify_fragment(&o, 3, 100, hits, &score, passing), 0);
    o.margin = 0.5;   /* a wide margin ties the third target too */
    assert_int_equal(sbf_classify_fragment(&o, 3, 100, hits, &score, passing), SBF_CAT_MULTI);
    assert_int_equal(passing[2], 1);
    o.margin = 0;   /* equal scores are still a tie */
    uint32_t eq[2] = {50, 50};
    assert_int_equal(sbf_classify_fragment(&o, 2, 100, eq, &score, NULL), SBF_CAT_MULTI);
}

static void test_no_kmer_and_no_target(void **state)
{
    (void)state;
    double score = 1;
    uint32_t hits[1] = {0};
    sbf_score_opt_t o = opts(0.25, 3, 0.05);
    assert_int_equal(sbf_classify_fragment(&o, 1, 0, hits, &score, NULL), SBF_CAT_NO_KMER);
    assert_true(score == 0);
    assert_int_equal(sbf_classify_fragment(&o, 0, 10, hits, &score, NULL), SBF_CAT_NONE);
}

static void test_mates_rules(void **state)
{
    (void)state;
    double score;
    uint8_t passing[2];
    sbf_score_opt_t o = opts(0.15, 3, 1.0);   /* categorize's defaults without -b */
    uint32_t m1[2] = {50, 0}, m2[2] = {10, 0};  /* target 0: mate 1 passes (0.5), mate 2 not (0.1) */
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_BOTH, 100, m1, 100, m2, &score, passing), SBF_CAT_NONE);
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_EITHER, 100, m1, 100, m2, &score, passing), 0);
    assert_true(score == 0.5);   /* either: the higher mate score */
    m2[0] = 20;
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_BOTH, 100, m1, 100, m2, &score, passing), 0);
    assert_true(score == 0.2);   /* both: the lower mate score */
    uint32_t a[2] = {90, 30}, b[2] = {80, 40};  /* both targets pass for both mates */
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_BOTH, 100, a, 100, b, &score, passing), SBF_CAT_MULTI);
    assert_true(passing[0] && passing[1]);
    o.margin = 0;   /* -b: the best one */
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_BOTH, 100, a, 100, b, &score, passing), 0);
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_BOTH, 0, a, 0, b, &score, passing), SBF_CAT_NO_KMER);
    /* a mate without k-mers fails "both" but not "either" */
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_BOTH, 100, a, 0, b, &score, passing), SBF_CAT_NONE);
    assert_int_equal(sbf_classify_mates(&o, 2, SBF_PAIRS_EITHER, 100, a, 0, b, &score, passing), 0);
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
        cmocka_unit_test(test_mates_rules),
        cmocka_unit_test(test_mate_names),       cmocka_unit_test(test_safe_file_part),       cmocka_unit_test(test_pairing_by_flags),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
