/* test_pipeline.c -- the engine's ordered worker pool (plugin/sbf_pipeline.c) and the public
 * sbf_pipeline_t: batches delivered once each, in submission order, whatever order the workers
 * finish them in; failures stop everything and undelivered batches are dropped, not leaked;
 * the public pipeline gives sbf_query()'s and sbf_classify()'s answers. */
#include <pthread.h>
#include <time.h>

#include "testutil.h"

#include "../filters/sbf_error.h"
#include "../plugin/sbf_pipeline.h"

/* ---- the internal pool, with fake work: sleeps of random length, so workers finish out of
 * order ---- */

typedef struct {
    int id;
    int worked, slot;
    unsigned sleep_us;
} fake_batch_t;

typedef struct {
    int delivered[4096];
    int n_delivered;
    int dropped;
    int fail_work_at;      /* batch id whose work fails, or -1 */
    int fail_deliver_at;   /* batch id whose delivery fails, or -1 */
    int slots_seen[17];
} fake_ctx_t;

static void sleep_us(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000L};
    nanosleep(&ts, NULL);
}

static int fake_work(void *ctx, void *batch, int slot)
{
    fake_ctx_t *c = ctx;
    fake_batch_t *b = batch;
    sleep_us(b->sleep_us);
    b->worked = 1;
    b->slot = slot;
    __atomic_fetch_add(&c->slots_seen[slot + 1], 1, __ATOMIC_RELAXED);
    if (b->id == c->fail_work_at)
        return sbf_error(SBF_E_FORMAT, "batch %d is damaged", b->id);
    return 0;
}

static int fake_deliver(void *ctx, void *batch)
{
    fake_ctx_t *c = ctx;
    fake_batch_t *b = batch;
    if (!b->worked)
        return sbf_error(SBF_E_PARAM, "batch %d delivered before its work", b->id);
    if (b->id == c->fail_deliver_at)
        return sbf_error(SBF_E_IO, "cannot write batch %d", b->id);
    c->delivered[c->n_delivered++] = b->id;
    free(b);   /* delivered: the owner's to free (failed deliveries are dropped instead) */
    return 0;
}

static void fake_drop(void *ctx, void *batch)
{
    fake_ctx_t *c = ctx;
    free(batch);
    ++c->dropped;
}

static void test_order_under_random_delays(void **state)
{
    (void)state;
    test_seed(3);
    for (int copies = 0; copies <= 4; copies += 2) {
        for (int in_flight = 1; in_flight <= 9; in_flight += 4) {
            fake_ctx_t c = {.fail_work_at = -1, .fail_deliver_at = -1};
            pipeline_opt_t o = {.gpu_copies = copies, .workers_per_copy = 2, .in_flight = in_flight,
                                .work = fake_work, .deliver = fake_deliver, .drop = fake_drop, .ctx = &c};
            pipeline_t *p;
            assert_int_equal(pipeline_open(&o, &p), 0);
            enum { N = 300 };
            for (int i = 0; i < N; ++i) {
                fake_batch_t *b = calloc(1, sizeof *b);
                *b = (fake_batch_t){.id = i, .sleep_us = (unsigned)(test_rand() % 400)};
                assert_int_equal(pipeline_submit(p, b), 0);
            }
            assert_int_equal(pipeline_finish(p), 0);
            pipeline_stats_t st;
            pipeline_stats(p, &st);
            pipeline_free(p);
            assert_int_equal(c.n_delivered, N);
            assert_int_equal(c.dropped, 0);
            for (int i = 0; i < N; ++i)
                assert_int_equal(c.delivered[i], i);
            /* every slot did work; the CPU engine's only slot is -1 */
            if (copies == 0)
                assert_int_equal(c.slots_seen[0], N);
            for (int s = 0; s < copies; ++s)
                assert_true(c.slots_seen[s + 1] > 0);
            assert_true(st.wall > 0 && st.busy[0] > 0 && st.busy[0] <= st.wall + 1e-3);
        }
    }
}

/* A failing work or delivery stops the pool: nothing after it is delivered, later submits fail
 * with the first message, and the batches never delivered go to drop(). */
static void test_failure_stops_and_drops(void **state)
{
    (void)state;
    for (int which = 0; which < 2; ++which) {
        fake_ctx_t c = {.fail_work_at = which == 0 ? 20 : -1, .fail_deliver_at = which == 1 ? 20 : -1};
        pipeline_opt_t o = {.gpu_copies = 2, .in_flight = 4, .work = fake_work, .deliver = fake_deliver,
                            .drop = fake_drop, .ctx = &c};
        pipeline_t *p;
        assert_int_equal(pipeline_open(&o, &p), 0);
        int submitted = 0, rc = 0;
        for (int i = 0; i < 200 && rc == 0; ++i) {
            fake_batch_t *b = calloc(1, sizeof *b);
            b->id = i;
            b->sleep_us = 50;
            rc = pipeline_submit(p, b);
            if (rc == 0)
                ++submitted;
            else
                free(b);
        }
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(sbf_last_error(), which == 0 ? "batch 20 is damaged" : "cannot write batch 20"));
        assert_int_not_equal(pipeline_finish(p), 0);
        assert_non_null(strstr(sbf_last_error(), "batch 20"));
        pipeline_free(p);
        /* deliveries are in order and stop at the failure: a failed delivery of batch 20 comes
         * after 0-19; a failed work may stop delivery before batches still in other workers */
        if (which == 1)
            assert_int_equal(c.n_delivered, 20);
        assert_true(c.n_delivered <= 20);
        for (int i = 0; i < c.n_delivered; ++i)
            assert_int_equal(c.delivered[i], i);
        /* every batch submitted is either delivered or dropped, exactly once */
        assert_int_equal(c.n_delivered + c.dropped, submitted);
    }
}

/* An abort (another stage failed) returns at once and drops what was queued. */
static void test_abort(void **state)
{
    (void)state;
    fake_ctx_t c = {.fail_work_at = -1, .fail_deliver_at = -1};
    pipeline_opt_t o = {.gpu_copies = 1, .in_flight = 3, .work = fake_work, .deliver = fake_deliver,
                        .drop = fake_drop, .ctx = &c};
    pipeline_t *p;
    assert_int_equal(pipeline_open(&o, &p), 0);
    for (int i = 0; i < 3; ++i) {
        fake_batch_t *b = calloc(1, sizeof *b);
        b->id = i;
        b->sleep_us = 20000;
        assert_int_equal(pipeline_submit(p, b), 0);
    }
    pipeline_abort(p);
    fake_batch_t extra = {.id = 99};
    assert_int_not_equal(pipeline_submit(p, &extra), 0);   /* refused: not the pipeline's to drop */
    pipeline_free(p);
    assert_int_equal(c.n_delivered + c.dropped, 3);
}

/* ---- the public pipeline, on the CPU engine (tests/test_gpu.c repeats it on the GPU) ---- */

typedef struct {
    size_t n;
    const char **seqs;
    size_t *lens;
    uint8_t **packed;
    int id;
} pub_batch_t;

typedef struct {
    const sbf_index_t *idx;
    int next_id;
    int pairs;
    int stop_at;
    size_t reads;
    int mismatches;
} pub_ctx_t;

static void pub_batch_free(pub_batch_t *b)
{
    for (size_t i = 0; b->packed && i < b->n; ++i)
        free(b->packed[i]);
    free(b->packed);
    free(b->seqs);
    free(b->lens);
    free(b);
}

/* Checks each batch against sbf_query()/sbf_classify() on the same reads, then frees it (the
 * caller's buffers live until its callback, as the API says). */
static int pub_done(void *ctx, const sbf_pipeline_result_t *r)
{
    pub_ctx_t *c = ctx;
    pub_batch_t *b = r->batch;
    if (b->id != c->next_id++ || r->n != b->n)
        ++c->mismatches;
    const int R = sbf_index_n_targets(c->idx);
    uint32_t *k = malloc((b->n + 1) * 4), *h = malloc((b->n + 1) * (size_t)R * 4);
    if (sbf_query(c->idx, b->n, b->seqs, b->lens, k, h, 1) != SBF_OK || memcmp(k, r->kmers, b->n * 4) ||
        memcmp(h, r->hits, b->n * (size_t)R * 4))
        ++c->mismatches;
    free(k);
    free(h);
    size_t frags = c->pairs ? b->n / 2 : b->n;
    if (r->n_frags != frags)
        ++c->mismatches;
    if (frags) {
        int *cat = malloc(frags * sizeof *cat);
        float *score = malloc(frags * sizeof *score);
        const char **s1 = malloc(frags * sizeof *s1), **s2 = malloc(frags * sizeof *s2);
        size_t *l1 = malloc(frags * sizeof *l1), *l2 = malloc(frags * sizeof *l2);
        for (size_t f = 0; f < frags; ++f) {
            size_t i = c->pairs ? 2 * f : f;
            s1[f] = b->seqs[i];
            l1[f] = b->lens[i];
            if (c->pairs) {
                s2[f] = b->seqs[i + 1];
                l2[f] = b->lens[i + 1];
            }
        }
        sbf_classify_opt_t co;
        sbf_classify_opt_init(&co);
        if (sbf_classify(c->idx, &co, frags, s1, l1, c->pairs ? s2 : NULL, c->pairs ? l2 : NULL, cat, score, 1) !=
                SBF_OK ||
            memcmp(cat, r->category, frags * sizeof *cat) || memcmp(score, r->score, frags * sizeof *score))
            ++c->mismatches;
        free(cat);
        free(score);
        free(s1);
        free(s2);
        free(l1);
        free(l2);
    }
    c->reads += b->n;
    int stop = b->id == c->stop_at;
    pub_batch_free(b);
    return stop ? 7 : 0;
}

/* A batch of n reads: a third from the reference (target 0), the rest random, some short. */
static pub_batch_t *make_batch(int id, size_t n, const char *ref, size_t ref_len, char *pool, int nt16)
{
    pub_batch_t *b = calloc(1, sizeof *b);
    b->id = id;
    b->n = n;
    b->seqs = malloc((n + 1) * sizeof *b->seqs);
    b->lens = malloc((n + 1) * sizeof *b->lens);
    if (nt16)
        b->packed = calloc(n + 1, sizeof *b->packed);
    for (size_t i = 0; i < n; ++i) {
        b->lens[i] = i % 7 == 6 ? 20 : 100;
        b->seqs[i] = i % 3 ? pool + test_rand() % (200000 - 100) : ref + test_rand() % (ref_len - 100);
        if (nt16) {   /* the same bases as BAM holds them */
            b->packed[i] = calloc(b->lens[i] / 2 + 1, 1);
            for (size_t j = 0; j < b->lens[i]; ++j) {
                uint8_t code = (uint8_t)(b->seqs[i][j] == 'A' ? 1 : b->seqs[i][j] == 'C' ? 2 : b->seqs[i][j] == 'G' ? 4 : 8);
                b->packed[i][j / 2] |= (uint8_t)(j % 2 ? code : code << 4);
            }
        }
    }
    return b;
}

static void test_public_pipeline_cpu(void **state)
{
    (void)state;
    test_seed(5);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 8);
    o.gpu = SBF_GPU_NONE;
    const size_t ref_len = 60000;
    char *ref = random_dna(ref_len), *pool = random_dna(200000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    for (int mode = 0; mode < 4; ++mode) {   /* ASCII, nt16, pairs, in_flight 1 */
        pub_ctx_t c = {idx, 0, mode == 2, -1, 0, 0};
        sbf_pipeline_opt_t po;
        sbf_pipeline_opt_init(&po);
        po.classify = 1;
        po.pairs = mode == 2;
        po.threads = 2;
        po.in_flight = mode == 3 ? 1 : 0;
        po.done = pub_done;
        po.ctx = &c;
        sbf_pipeline_t *p;
        assert_int_equal(sbf_pipeline_open(idx, &po, &p), SBF_OK);
        size_t total = 0;
        for (int i = 0; i < 12; ++i) {
            size_t n = i == 4 ? 0 : 2 * (1 + test_rand() % 600);   /* one empty batch */
            pub_batch_t *b = make_batch(i, n, ref, ref_len, pool, mode == 1);
            total += n;
            int rc = mode == 1 ? sbf_pipeline_submit_nt16(p, n, (const uint8_t *const *)b->packed, b->lens, b)
                               : sbf_pipeline_submit(p, n, b->seqs, b->lens, b);
            assert_int_equal(rc, SBF_OK);
        }
        sbf_pipeline_stats_t st;
        assert_int_equal(sbf_pipeline_close(p, &st), SBF_OK);
        assert_int_equal(c.mismatches, 0);
        assert_int_equal(c.next_id, 12);
        assert_int_equal(c.reads, total);
        assert_int_equal(st.n_gpus, 0);
        assert_true(st.wall_seconds > 0 && st.busy_seconds[0] > 0);
    }
    sbf_index_destroy(idx);
    free(ref);
    free(pool);
}

/* The callback's non-zero return stops the pipeline; bad options and odd pair batches are
 * refused with a message. */
static void test_public_pipeline_errors(void **state)
{
    (void)state;
    test_seed(6);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 8);
    o.gpu = SBF_GPU_NONE;
    char *ref = random_dna(20000), *pool = random_dna(200000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    pub_ctx_t c = {idx, 0, 0, 3, 0, 0};
    sbf_pipeline_opt_t po;
    sbf_pipeline_opt_init(&po);
    po.done = pub_done;
    po.ctx = &c;
    po.classify = 1;
    po.in_flight = 1;
    sbf_pipeline_t *p;
    assert_int_equal(sbf_pipeline_open(idx, &po, &p), SBF_OK);
    int rc = SBF_OK, i;
    for (i = 0; i < 50 && rc == SBF_OK; ++i) {
        pub_batch_t *b = make_batch(i, 50, ref, 20000, pool, 0);
        if ((rc = sbf_pipeline_submit(p, 50, b->seqs, b->lens, b)) != SBF_OK)
            pub_batch_free(b);
    }
    assert_int_not_equal(rc, SBF_OK);
    assert_non_null(strstr(sbf_last_error(), "callback returned 7"));
    assert_int_not_equal(sbf_pipeline_close(p, NULL), SBF_OK);
    assert_int_equal(c.next_id, 4);   /* batches 0-3 delivered, the rest never */
    assert_int_equal(c.mismatches, 0);

    po.pairs = 1;
    assert_int_equal(sbf_pipeline_open(idx, &po, &p), SBF_OK);
    const char *one = ref;
    size_t len = 100;
    assert_int_equal(sbf_pipeline_submit(p, 1, &one, &len, NULL), SBF_E_PARAM);
    assert_non_null(strstr(sbf_last_error(), "even number"));
    assert_int_equal(sbf_pipeline_close(p, NULL), SBF_OK);
    po.threads = 0;
    assert_int_equal(sbf_pipeline_open(idx, &po, &p), SBF_E_PARAM);
    assert_null(p);
    sbf_pipeline_opt_init(&po);
    po.classify = 1;
    po.scoring.margin = 2;
    assert_int_equal(sbf_pipeline_open(idx, &po, &p), SBF_E_PARAM);
    assert_int_equal(sbf_pipeline_close(NULL, NULL), SBF_OK);
    sbf_index_destroy(idx);
    free(ref);
    free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_under_random_delays),
        cmocka_unit_test(test_failure_stops_and_drops),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_public_pipeline_cpu),
        cmocka_unit_test(test_public_pipeline_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
