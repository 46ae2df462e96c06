/* sbf_pipeline.c -- the ordered worker pool (sbf_pipeline.h) and the public sbf_pipeline_t of
 * sbf.h built on it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_classify.h"
#include "../filters/sbf_lowcomp.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_index.h"
#include "sbf.h"
#include "sbf_engine.h"
#include "../filters/sbf_clock.h"
#include "sbf_pipeline.h"

typedef struct {
    void *batch;
    int done;
} task_t;

typedef struct {
    pipeline_t *p;
    int slot;
    pthread_t tid;
    int started;
} worker_t;

struct pipeline_s {
    pipeline_opt_t o;
    task_t *ring;          /* batch `seq` is ring[seq % cap] from submit to delivery */
    size_t cap;
    unsigned long long submitted, started, delivered;
    int delivering;        /* a worker is calling deliver() */
    int closing, failed;
    int status;
    char err[1024];
    pthread_mutex_t lock;
    pthread_cond_t work_cv;   /* a batch to start, or closing/failed */
    pthread_cond_t room_cv;   /* a batch delivered (room for submit), or failed */
    worker_t *workers;
    int n_workers;
    double busy[17], wait_submit, t0;
    int active[17];        /* workers of each slot inside work() */
    double since[17];      /* when active[slot] last went from 0 to 1 */
};

/* The first failure wins; every thread waiting is woken. Called with the lock held. */
static void fail_locked(pipeline_t *p, int status, const char *msg)
{
    if (!p->failed) {
        p->failed = 1;
        p->status = status ? status : SBF_E_IO;
        snprintf(p->err, sizeof p->err, "%s", msg);
    }
    pthread_cond_broadcast(&p->work_cv);
    pthread_cond_broadcast(&p->room_cv);
}

/* Deliver every finished batch at the head of the order. Called with the lock held. */
static void deliver_ready(pipeline_t *p)
{
    if (p->delivering)
        return;   /* that worker delivers this batch too: it looks again before it stops */
    p->delivering = 1;
    while (!p->failed && p->delivered < p->started && p->ring[p->delivered % p->cap].done) {
        void *batch = p->ring[p->delivered % p->cap].batch;
        pthread_mutex_unlock(&p->lock);
        int rc = p->o.deliver(p->o.ctx, batch);
        pthread_mutex_lock(&p->lock);
        if (rc != SBF_OK) {
            fail_locked(p, rc, sbf_error_message());
            break;
        }
        ++p->delivered;
        pthread_cond_broadcast(&p->room_cv);
    }
    p->delivering = 0;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pipeline_t *p = w->p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->failed && !p->closing && p->started == p->submitted)
            pthread_cond_wait(&p->work_cv, &p->lock);
        if (p->failed || p->started == p->submitted)
            break;   /* failed, or closing with nothing left to start */
        task_t *t = &p->ring[p->started++ % p->cap];
        pthread_mutex_unlock(&p->lock);
        if (!p->o.marks_busy)
            pipeline_busy(p, w->slot, 1);
        int rc = p->o.work(p->o.ctx, t->batch, w->slot);
        if (!p->o.marks_busy)
            pipeline_busy(p, w->slot, 0);
        pthread_mutex_lock(&p->lock);
        if (rc != SBF_OK) {
            fail_locked(p, rc, sbf_error_message());
            break;
        }
        t->done = 1;
        deliver_ready(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* A slot is busy while any of its workers is in device work: the union of their intervals. */
void pipeline_busy(pipeline_t *p, int slot, int on)
{
    const int s = slot < 0 ? 0 : slot;
    pthread_mutex_lock(&p->lock);
    if (on && p->active[s]++ == 0)
        p->since[s] = sbf_now();
    else if (!on && --p->active[s] == 0)
        p->busy[s] += sbf_now() - p->since[s];
    pthread_mutex_unlock(&p->lock);
}

int pipeline_open(const pipeline_opt_t *opt, pipeline_t **out)
{
    *out = NULL;
    if (opt->gpu_copies < 0 || opt->gpu_copies > 16)
        return sbf_error(SBF_E_PARAM, "%d GPU copies: at most 16", opt->gpu_copies);
    pipeline_t *p = calloc(1, sizeof *p);
    if (!p)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    p->o = *opt;
    int per = opt->workers_per_copy > 0 ? opt->workers_per_copy : 2;
    p->n_workers = opt->gpu_copies > 0 ? opt->gpu_copies * per : opt->cpu_workers > 1 ? opt->cpu_workers : 1;
    p->cap = opt->in_flight > 0 ? (size_t)opt->in_flight : 2 * (size_t)p->n_workers + 2;
    p->ring = calloc(p->cap, sizeof *p->ring);
    p->workers = calloc((size_t)p->n_workers, sizeof *p->workers);
    p->t0 = sbf_now();
    if (!p->ring || !p->workers) {
        free(p->ring);
        free(p->workers);
        free(p);
        return sbf_error(SBF_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->room_cv, NULL);
    for (int i = 0; i < p->n_workers; ++i) {
        worker_t *w = &p->workers[i];
        w->p = p;
        w->slot = opt->gpu_copies > 0 ? i % opt->gpu_copies : -1;   /* devices interleaved */
        if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
            pipeline_abort(p);
            pipeline_free(p);
            return sbf_error(SBF_E_THREAD, "cannot start the pipeline's worker threads");
        }
        w->started = 1;
    }
    *out = p;
    return SBF_OK;
}

int pipeline_submit(pipeline_t *p, void *batch)
{
    pthread_mutex_lock(&p->lock);
    double t0 = sbf_now();
    while (!p->failed && p->submitted - p->delivered == p->cap)
        pthread_cond_wait(&p->room_cv, &p->lock);
    p->wait_submit += sbf_now() - t0;
    if (p->failed || p->closing) {
        int rc = p->closing && !p->failed ? SBF_E_PARAM : p->status;
        const char *msg = p->failed ? p->err : "the pipeline is closed: no more batches";
        pthread_mutex_unlock(&p->lock);
        return sbf_error(rc, "%s", msg);
    }
    p->ring[p->submitted % p->cap] = (task_t){batch, 0};
    ++p->submitted;
    pthread_cond_signal(&p->work_cv);
    pthread_mutex_unlock(&p->lock);
    return SBF_OK;
}

static void join_workers(pipeline_t *p)
{
    for (int i = 0; i < p->n_workers; ++i)
        if (p->workers[i].started) {
            pthread_join(p->workers[i].tid, NULL);
            p->workers[i].started = 0;
        }
}

int pipeline_finish(pipeline_t *p)
{
    pthread_mutex_lock(&p->lock);
    p->closing = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->lock);
    join_workers(p);
    if (p->failed)
        return sbf_error(p->status, "%s", p->err);
    return SBF_OK;
}

void pipeline_abort(pipeline_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->closing = 1;
    fail_locked(p, SBF_E_IO, "stopped");
    pthread_mutex_unlock(&p->lock);
    join_workers(p);
}

void pipeline_stats(const pipeline_t *p, pipeline_stats_t *st)
{
    memset(st, 0, sizeof *st);
    st->slots = p->o.gpu_copies;
    st->workers = p->n_workers;
    memcpy(st->busy, p->busy, sizeof st->busy);
    st->wait_submit = p->wait_submit;
    st->wall = sbf_now() - p->t0;
}

void pipeline_free(pipeline_t *p)
{
    if (!p)
        return;
    join_workers(p);
    for (unsigned long long q = p->delivered; p->o.drop && q < p->submitted; ++q)
        p->o.drop(p->o.ctx, p->ring[q % p->cap].batch);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->room_cv);
    free(p->ring);
    free(p->workers);
    free(p);
}

/* ------------------------------------------------------------------ the public sbf_pipeline_t */

typedef struct pub_batch_s {
    void *user;
    size_t n;
    const char *const *seqs;
    const uint8_t *const *packed;
    const size_t *lens;
    uint32_t *kmers, *hits;   /* result arrays, room for `cap` reads */
    int *category;
    float *score;
    size_t cap;
    sbf_engine_batch_t eb;    /* with classify: the masked, segmented reads the engine queries */
    uint8_t *layer;           /* with classify: the reads queried on the long-read layer */
    const sbf_segments_t *seg;
    uint32_t *frag_hits;      /* scoring scratch: one fragment's hits per target */
    struct pub_batch_s *next; /* in the spare list */
} pub_batch_t;

/* Delivered batches' result arrays are kept for the next submits (at most in_flight + 1 sets):
 * fresh arrays of n x targets counts cost page faults on every batch (measured: with 59 targets
 * the pipeline ran at half the blocking call's speed before). */
struct sbf_pipeline_s {
    const sbf_index_t *idx;
    sbf_pipeline_opt_t opt;
    pipeline_t *core;
    pthread_mutex_t spare_lock;
    pub_batch_t *spare;
    sbf_scorer_t scorer;      /* with classify */
};

static int pub_work(void *ctx, void *batch, int slot)
{
    sbf_pipeline_t *sp = ctx;
    pub_batch_t *b = batch;
    if (sp->opt.classify) {
        sbf_engine_route(b->n, sp->opt.pairs ? 2 : 1, b->lens, b->layer);
        return sbf_engine_query_reads(sp->idx, slot, b->n, b->seqs, b->packed, b->lens, sp->opt.scoring.mask_lowcomp,
                                      b->layer, &b->eb, b->kmers, b->hits, sp->opt.threads, &b->seg);
    }
    return sbf_engine_query(sp->idx, slot, b->n, b->seqs, b->packed, b->lens, b->kmers, b->hits, sp->opt.threads,
                            sp->opt.threads);
}

static void pub_batch_free(pub_batch_t *b)
{
    if (!b)
        return;
    free(b->kmers);
    free(b->hits);
    free(b->category);
    free(b->score);
    free(b->frag_hits);
    free(b->layer);
    sbf_engine_batch_free(&b->eb);
    free(b);
}

/* Back to the spare list (from a worker: locked). */
static void pub_recycle(sbf_pipeline_t *sp, pub_batch_t *b)
{
    pthread_mutex_lock(&sp->spare_lock);
    b->next = sp->spare;
    sp->spare = b;
    pthread_mutex_unlock(&sp->spare_lock);
}

static void pub_drop(void *ctx, void *batch)
{
    pub_recycle(ctx, batch);
}

static int pub_deliver(void *ctx, void *batch)
{
    sbf_pipeline_t *sp = ctx;
    pub_batch_t *b = batch;
    size_t frags = sp->opt.pairs ? b->n / 2 : b->n;
    if (sp->opt.classify) {
        const int per = sp->opt.pairs ? 2 : 1;
        for (size_t f = 0; f < frags; ++f) {
            sbf_frag_result_t r;
            sbf_score_fragment(&sp->scorer, per, NULL, f * (size_t)per, b->kmers, b->hits, b->seg, b->frag_hits, NULL,
                               &r);
            b->category[f] = r.category;
            b->score[f] = r.score;
        }
    }
    sbf_pipeline_result_t res = {b->user, b->n, b->kmers, b->hits, sp->opt.classify ? frags : 0, b->category, b->score};
    int rc = sp->opt.done ? sp->opt.done(sp->opt.ctx, &res) : 0;
    if (rc != 0)   /* the batch is dropped by the pool */
        return sbf_error(SBF_E_PARAM, "the pipeline's done callback returned %d: stopped", rc);
    pub_recycle(sp, b);
    return SBF_OK;
}

SBF_EXPORT void sbf_pipeline_opt_init(sbf_pipeline_opt_t *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->threads = 1;
    sbf_classify_opt_init(&opt->scoring);
}

SBF_EXPORT int sbf_pipeline_open(const sbf_index_t *idx, const sbf_pipeline_opt_t *opt, sbf_pipeline_t **out)
{
    *out = NULL;
    if (!opt || opt->threads < 1 || opt->in_flight < 0)
        return sbf_error(SBF_E_PARAM, "pipeline options: threads must be at least 1 and in_flight not negative");
    sbf_pipeline_t *sp = calloc(1, sizeof *sp);
    if (!sp)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    if (opt->classify) {
        int rc = sbf_engine_scorer(idx, &opt->scoring, &sp->scorer);
        if (rc != SBF_OK) {
            free(sp);
            return rc;
        }
    }
    sp->idx = idx;
    sp->opt = *opt;
    pthread_mutex_init(&sp->spare_lock, NULL);
    pipeline_opt_t po = {.gpu_copies = sbf_engine_slots(idx), .in_flight = opt->in_flight, .work = pub_work,
                         .deliver = pub_deliver, .drop = pub_drop, .ctx = sp};
    int rc = pipeline_open(&po, &sp->core);
    if (rc != SBF_OK) {
        pthread_mutex_destroy(&sp->spare_lock);
        sbf_scorer_free(&sp->scorer);
        free(sp);
        return rc;
    }
    *out = sp;
    return SBF_OK;
}

static int pub_submit(sbf_pipeline_t *sp, size_t n, const char *const *seqs, const uint8_t *const *packed,
                      const size_t *lens, void *user)
{
    const size_t R = (size_t)sbf_index_n_targets(sp->idx);
    if (sp->opt.pairs && n % 2)
        return sbf_error(SBF_E_PARAM, "pairs: a batch holds an even number of reads (mates side by side), not %zu", n);
    pthread_mutex_lock(&sp->spare_lock);
    pub_batch_t *b = sp->spare;
    if (b)
        sp->spare = b->next;
    pthread_mutex_unlock(&sp->spare_lock);
    if (!b && !(b = calloc(1, sizeof *b)))
        return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", n);
    if (b->cap < n || b->cap == 0) {   /* grown for this batch (realloc keeps b valid on failure);
                                        * never NULL, even for an empty batch */
        size_t m = n ? n : 1;
        uint32_t *k = realloc(b->kmers, m * sizeof *k);
        if (k)
            b->kmers = k;
        uint32_t *h = k ? realloc(b->hits, m * (R ? R : 1) * sizeof *h) : NULL;
        if (h)
            b->hits = h;
        int *c = h && sp->opt.classify ? realloc(b->category, m * sizeof *c) : NULL;
        if (c)
            b->category = c;
        float *f = c ? realloc(b->score, m * sizeof *f) : NULL;
        if (f)
            b->score = f;
        uint32_t *fh = f ? realloc(b->frag_hits, (R ? R : 1) * sizeof *fh) : NULL;
        if (fh)
            b->frag_hits = fh;
        uint8_t *ly = fh ? realloc(b->layer, m) : NULL;
        if (ly)
            b->layer = ly;
        if (!h || (sp->opt.classify && !ly)) {
            pub_recycle(sp, b);
            return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", n);
        }
        b->cap = m;
    }
    b->user = user;
    b->n = n;
    b->seqs = seqs;
    b->packed = packed;
    b->lens = lens;
    int rc = pipeline_submit(sp->core, b);
    if (rc != SBF_OK)
        pub_recycle(sp, b);
    return rc;
}

SBF_EXPORT int sbf_pipeline_submit(sbf_pipeline_t *sp, size_t n, const char *const *seqs, const size_t *lens,
                                   void *user)
{
    return pub_submit(sp, n, seqs, NULL, lens, user);
}

SBF_EXPORT int sbf_pipeline_submit_nt16(sbf_pipeline_t *sp, size_t n, const uint8_t *const *packed,
                                        const size_t *lens, void *user)
{
    return pub_submit(sp, n, NULL, packed, lens, user);
}

SBF_EXPORT int sbf_pipeline_close(sbf_pipeline_t *sp, sbf_pipeline_stats_t *stats)
{
    if (!sp)
        return SBF_OK;
    int rc = pipeline_finish(sp->core);
    if (stats) {
        pipeline_stats_t st;
        pipeline_stats(sp->core, &st);
        memset(stats, 0, sizeof *stats);
        stats->n_gpus = sbf_index_gpus(sp->idx, stats->gpu, SBF_MAX_GPUS);
        for (int i = 0; i < SBF_MAX_GPUS; ++i)
            stats->busy_seconds[i] = st.busy[i];
        stats->wait_seconds = st.wait_submit;
        stats->wall_seconds = st.wall;
    }
    pipeline_free(sp->core);   /* drops undelivered batches into the spare list */
    while (sp->spare) {
        pub_batch_t *b = sp->spare;
        sp->spare = b->next;
        pub_batch_free(b);
    }
    pthread_mutex_destroy(&sp->spare_lock);
    sbf_scorer_free(&sp->scorer);
    free(sp);
    return rc;
}
