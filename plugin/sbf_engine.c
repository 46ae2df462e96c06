/* sbf_engine.c -- the query engine behind sbf_engine.h: the CPU engine (query threads), the GPU
 * copies of an index (sbf_index_use_gpus), blocking queries split over every copy, the reads of a
 * classification batch as the engine sees them, and the chances that scoring needs. */
#define _GNU_SOURCE   /* pthread_setname_np */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_classify.h"
#include "../filters/sbf_clock.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_lowcomp.h"
#include "../filters/sbf_mem.h"
#include "../gpu/sbf_gpu.h"
#include "sbf.h"
#include "sbf_engine.h"

typedef struct query_job_s {
    const sbf_index_t *idx;
    size_t n;
    const char *const *seqs;       /* ASCII sequences, or NULL when packed is given */
    const uint8_t *const *packed;  /* BAM 4-bit sequences (sbf_query_nt16), or NULL */
    const size_t *lens;
    uint32_t *kmers, *hits;
    size_t next;   /* next block of sequences, taken atomically */
    int status;
    int gpu_to_come;   /* a GPU worker's query before its index has copies: no plain copies made */
    /* on the board (below): the helpers it is owed (its threads but the caller's own), the most
     * it may have at once, and those working on it now (atomic; changed under board_mu) */
    int owed, most, attached;
    struct query_job_s *next_job;   /* the board's list, oldest first */
} query_job_t;

#define QUERY_BLOCK 64u
/* A query of this many reads or more makes the CPU's plain copies of panels (sbf_plain.c) */
#define PLAIN_COPY_READS 1000u

/* Blocks of the job's reads on this thread until none is left, or (a helper, `gen` not NULL)
 * until the board has changed while the job has more helpers than it is owed: the helper then
 * goes where it is owed. ah: two reads' query state; hits: R words. */
static void query_blocks(query_job_t *job, sbf_ahead_t *ah, uint64_t *hits, const uint64_t *gen);

static void *query_worker(void *arg)
{
    query_job_t *job = arg;
    const int R = job->idx->n_targets;
    sbf_ahead_t *ah = malloc(2 * sizeof *ah);   /* a read and the next (query_blocks) */
    uint64_t *hits = malloc((size_t)R * sizeof *hits);
    if (!ah || !hits) {
        __atomic_store_n(&job->status, SBF_E_NOMEM, __ATOMIC_RELAXED);
        free(ah);
        free(hits);
        return NULL;
    }
    query_blocks(job, ah, hits, NULL);
    free(ah);
    free(hits);
    return NULL;
}

/* The GPU copies of an index: one per device given to sbf_index_use_gpus(). Made at once
 * (sbf_engine_use_gpus) or on a thread of their own (sbf_engine_use_gpus_async): queries use
 * them once `ready` is set, the CPU engine before.
 *
 * An index's long-read layer has copies of its own, owned by the index's (`layer`, installed
 * on idx->layer without a free of their own). Made on a thread, they are made only when a
 * query first needs them: a short-read run never queries the layer, and a human index's layer
 * is 3.4 of its 9.2 GB (issue 27: the upload of both held the GPU's first queries for 0.8-1.0
 * s, the reads meanwhile on the CPU engine). */
typedef struct gpu_copies_s gpu_copies_t;
struct gpu_copies_s {
    int n;
    int device[SBF_MAX_GPUS];
    sbf_gpu_index_t *index[SBF_MAX_GPUS];
    unsigned next;   /* round robin of small blocking queries over the copies */
    int ready;       /* atomic: every copy made */
    int stop;        /* atomic: the index is freed: an upload in flight stops */
    int status;      /* why the upload failed (ready then stays 0), and its words */
    char error[256];
    double seconds;  /* the upload's, once over */
    uint64_t cpu_reads;   /* atomic: reads the CPU engine answered while the copies were made */
    gpu_copies_t *layer;  /* the long-read layer's copies, or NULL (the index has none) */
    gpu_copies_t *owner;  /* of a layer's copies made on demand: whose uploader makes them */
    int wanted;           /* atomic, of a layer's copies: a query asked for them */
    int has_uploader;
    pthread_t uploader;
    pthread_mutex_t mu;   /* the uploader's wait for its layer's `wanted` or `stop` */
    pthread_cond_t cv;
    sbf_index_t *idx;     /* whose copies these are */
};

static void gpu_copies_free(void *p)
{
    gpu_copies_t *c = p;
    if (!c)
        return;
    if (c->has_uploader) {
        pthread_mutex_lock(&c->mu);
        __atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->uploader, NULL);
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
    }
    if (c->layer) {   /* the layer's copies go with these: the layer's queries back on the CPU */
        if (c->idx && c->idx->layer && __atomic_load_n(&c->idx->layer->accel, __ATOMIC_ACQUIRE) == c->layer)
            __atomic_store_n(&c->idx->layer->accel, NULL, __ATOMIC_RELEASE);
        gpu_copies_free(c->layer);
    }
    for (int i = 0; i < c->n; ++i)
        if (c->index[i])
            sbf_gpu_index_free(c->index[i]);
    free(c);
}

static int copies_ready(const gpu_copies_t *c) { return c && __atomic_load_n(&c->ready, __ATOMIC_ACQUIRE); }

/* A query found c not ready: when c are a layer's copies waiting to be asked for, the owner's
 * uploader makes them now. */
static void copies_want(gpu_copies_t *c)
{
    if (!c || !c->owner || __atomic_load_n(&c->wanted, __ATOMIC_RELAXED))
        return;
    gpu_copies_t *o = c->owner;
    pthread_mutex_lock(&o->mu);   /* the uploader looks at `wanted` holding it: no wake-up lost */
    __atomic_store_n(&c->wanted, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

/* The copies' record of idx for n devices (NULL: 0 to n-1), checked against the devices
 * present; nothing uploaded yet. */
static int copies_new(sbf_index_t *idx, int n, const int *devices, gpu_copies_t **out)
{
    int have = sbf_gpu_count();
    *out = NULL;
    if (n < 1 || n > SBF_MAX_GPUS)
        return sbf_error(SBF_E_PARAM, "%d GPUs: between 1 and %d can be used", n, SBF_MAX_GPUS);
    if (have == 0)
        return sbf_error(SBF_E_PARAM, "no CUDA device is usable (no GPU, no driver, or sbf built without CUDA)");
    for (int i = 0; i < n; ++i) {
        int d = devices ? devices[i] : i;
        if (d < 0 || d >= have)
            return sbf_error(SBF_E_PARAM, "no GPU number %d (devices 0 to %d are present)", d, have - 1);
        for (int j = 0; j < i; ++j)
            if ((devices ? devices[j] : j) == d)
                return sbf_error(SBF_E_PARAM, "GPU %d is listed twice", d);
    }
    gpu_copies_t *c = calloc(1, sizeof *c);
    if (!c)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    c->n = n;
    c->idx = idx;
    for (int i = 0; i < n; ++i)
        c->device[i] = devices ? devices[i] : i;
    *out = c;
    return SBF_OK;
}

/* The copies with their layer's record too (when idx has a layer): nothing uploaded yet. */
static int copies_new_with_layer(sbf_index_t *idx, int n, const int *devices, gpu_copies_t **out)
{
    int rc = copies_new(idx, n, devices, out);
    if (rc == SBF_OK && idx->layer && (rc = copies_new(idx->layer, n, devices, &(*out)->layer)) != SBF_OK) {
        gpu_copies_free(*out);
        *out = NULL;
    }
    return rc;
}

/* idx's queries go to c from now on (once it is ready), its layer's to c's layer copies; the
 * copies it had are freed. The stores are atomic: queries read them while an upload runs. */
static void copies_install(sbf_index_t *idx, gpu_copies_t *c)
{
    void *old = idx->accel;
    idx->accel_free = gpu_copies_free;
    __atomic_store_n(&idx->accel, c, __ATOMIC_RELEASE);
    if (idx->layer && c->layer) {
        idx->layer->accel_free = NULL;   /* freed with c */
        __atomic_store_n(&idx->layer->accel, c->layer, __ATOMIC_RELEASE);
    }
    if (old)
        gpu_copies_free(old);
}

/* Every copy of c (not its layer's) uploaded, timed (c->seconds); c ready when they all are,
 * else the error in c->status and c->error. */
static int copies_upload(gpu_copies_t *c, const int *stop)
{
    const double t0 = sbf_now();
    int rc = SBF_OK;
    for (int i = 0; i < c->n && rc == SBF_OK; ++i)
        rc = sbf_gpu_index_upload_stoppable(c->device[i], c->idx, stop, &c->index[i]);
    c->seconds = sbf_now() - t0;
    if (rc == SBF_OK) {
        __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
    } else {
        snprintf(c->error, sizeof c->error, "%s", sbf_error_message());
        __atomic_store_n(&c->status, rc, __ATOMIC_RELEASE);   /* after its words */
    }
    return rc;
}

int sbf_engine_use_gpus(sbf_index_t *idx, int n, const int *devices)
{
    gpu_copies_t *c;
    int rc = copies_new_with_layer(idx, n, devices, &c);
    if (rc != SBF_OK)
        return rc;
    if ((rc = copies_upload(c, NULL)) != SBF_OK || (c->layer && (rc = copies_upload(c->layer, NULL)) != SBF_OK)) {
        gpu_copies_free(c);   /* idx keeps the copies it had */
        return rc;
    }
    copies_install(idx, c);
    return SBF_OK;
}

/* The uploader: the index's copies, then its layer's once a query asks for them. */
static void *upload_main(void *arg)
{
    gpu_copies_t *c = arg, *lc = c->layer;
    if (copies_upload(c, &c->stop) != SBF_OK) {
        if (lc) {   /* the layer's copies will not be made either: its state says why */
            memcpy(lc->error, c->error, sizeof lc->error);
            __atomic_store_n(&lc->status, c->status, __ATOMIC_RELEASE);
        }
        return NULL;
    }
    if (!lc)
        return NULL;
    pthread_mutex_lock(&c->mu);
    while (!__atomic_load_n(&lc->wanted, __ATOMIC_RELAXED) && !__atomic_load_n(&c->stop, __ATOMIC_RELAXED))
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    if (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED))
        (void)copies_upload(lc, &c->stop);
    return NULL;
}

int sbf_engine_use_gpus_async(sbf_index_t *idx, int n, const int *devices)
{
    gpu_copies_t *c;
    int rc = copies_new_with_layer(idx, n, devices, &c);
    if (rc != SBF_OK)
        return rc;
    if (c->layer)
        c->layer->owner = c;
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        gpu_copies_free(c);
        return sbf_error(SBF_E_THREAD, "cannot create a mutex");
    }
    if (pthread_cond_init(&c->cv, NULL) != 0) {
        pthread_mutex_destroy(&c->mu);
        gpu_copies_free(c);
        return sbf_error(SBF_E_THREAD, "cannot create a condition variable");
    }
    if (pthread_create(&c->uploader, NULL, upload_main, c) != 0) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        gpu_copies_free(c);
        return sbf_error(SBF_E_THREAD, "cannot start the thread that puts the index on the GPU");
    }
    c->has_uploader = 1;
    copies_install(idx, c);
    return SBF_OK;
}

int sbf_engine_ready(const sbf_index_t *idx)
{
    return copies_ready(__atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE));
}

/* Where one record's copies stand: SBF_OK made (*seconds: how long it took), 1 not yet, or
 * the error that stopped them. An uploader writes its status after the words, before it
 * returns: a failure is seen whole. */
static int copies_state(const gpu_copies_t *c, double *seconds)
{
    *seconds = 0;
    if (copies_ready(c)) {
        *seconds = c->seconds;
        return SBF_OK;
    }
    int status = __atomic_load_n(&c->status, __ATOMIC_ACQUIRE);
    if (status == SBF_OK)
        return 1;
    *seconds = c->seconds;
    return sbf_error(status, "%s", c->error);
}

int sbf_engine_upload_state(const sbf_index_t *idx, double *seconds, uint64_t *cpu_reads)
{
    const gpu_copies_t *c = __atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE);
    *seconds = 0;
    *cpu_reads = 0;
    if (!c)
        return sbf_error(SBF_E_PARAM, "the index has no GPU copy");
    *cpu_reads = __atomic_load_n(&c->cpu_reads, __ATOMIC_RELAXED);
    return copies_state(c, seconds);
}

int sbf_engine_layer_upload_state(const sbf_index_t *idx, double *seconds, uint64_t *cpu_reads)
{
    const gpu_copies_t *c = __atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE);
    *seconds = 0;
    *cpu_reads = 0;
    if (!c || !c->layer)
        return sbf_error(SBF_E_PARAM, "the index has no GPU copy of a long-read layer");
    const gpu_copies_t *lc = c->layer;
    *cpu_reads = __atomic_load_n(&lc->cpu_reads, __ATOMIC_RELAXED);
    if (lc->owner && !copies_ready(lc) && !__atomic_load_n(&lc->wanted, __ATOMIC_RELAXED))
        return 2;
    return copies_state(lc, seconds);
}

void sbf_engine_drop_gpus(sbf_index_t *idx)
{
    if (idx->accel && idx->accel_free)
        idx->accel_free(idx->accel);
    idx->accel = NULL;
    if (idx->layer)
        sbf_engine_drop_gpus(idx->layer);
}

int sbf_engine_gpus(const sbf_index_t *idx, int *devices, int max)
{
    const gpu_copies_t *c = __atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE);
    if (!c)
        return 0;
    for (int i = 0; devices && i < c->n && i < max; ++i)
        devices[i] = c->device[i];
    return c->n;
}

int sbf_engine_slots(const sbf_index_t *idx)
{
    /* read once, atomically: a screening run's workers ask while another thread installs the
     * copies (plugin/sbf_screen.c, attach_gpus) */
    const gpu_copies_t *c = __atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE);
    return c ? c->n : 0;
}

/* The CPU engine's query threads: a board of the queries in flight, and helper threads, kept for
 * the process, that work on whichever query has blocks left. Each query is owed its threads but
 * the caller's own (threads - 1), and there are as many helpers as the queries on the board are
 * owed together (made when a query finds too few), so every query gets its threads as before.
 * A query may also have helpers beyond that, up to its `most` (a screening run passes its whole
 * -@): while another query's caller masks, scores and formats its batch, that query's helpers
 * join the queries still running instead of waiting (about 20% of the workers' time at -@ 16 on
 * an H100 machine's Xeon, issue 27: doc/PERFORMANCE.md). After every block a helper working
 * beyond a query's due looks whether the board changed, and goes where it is owed. */
static pthread_mutex_t board_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t board_work = PTHREAD_COND_INITIALIZER, board_left = PTHREAD_COND_INITIALIZER;
static query_job_t *board;   /* oldest first */
static int board_helpers, board_owed;
static uint64_t board_gen;   /* atomic: bumped when a query is posted */
static uint64_t board_helped, board_lent;   /* atomic: blocks done by helpers; of them beyond their query's due */

void sbf_engine_helper_blocks(uint64_t *helped, uint64_t *lent)
{
    *helped = __atomic_load_n(&board_helped, __ATOMIC_RELAXED);
    *lent = __atomic_load_n(&board_lent, __ATOMIC_RELAXED);
}

static int blocks_left(const query_job_t *j) { return __atomic_load_n(&j->next, __ATOMIC_RELAXED) < j->n; }

/* The query a helper should work on (board_mu held): the oldest one with blocks left that has
 * fewer helpers than it is owed, else the oldest that may have more; NULL when none. */
static query_job_t *board_pick(void)
{
    query_job_t *more = NULL;
    for (query_job_t *j = board; j; j = j->next_job) {
        if (!blocks_left(j))
            continue;
        const int at = __atomic_load_n(&j->attached, __ATOMIC_RELAXED);
        if (at < j->owed)
            return j;
        if (!more && at < j->most)
            more = j;
    }
    return more;
}

/* sbf_query_ahead() of the job's read i into a */
static void query_ahead(const query_job_t *job, size_t i, sbf_ahead_t *a, int now)
{
    if (job->packed)
        sbf_query_ahead_nt16(job->idx, a, job->packed[i], job->lens[i], now);
    else
        sbf_query_ahead(job->idx, a, sbf_nt4_ascii, (const uint8_t *)job->seqs[i], job->lens[i], now);
}

static void query_blocks(query_job_t *job, sbf_ahead_t *ah, uint64_t *hits, const uint64_t *gen)
{
    const int R = job->idx->n_targets;
    for (;;) {
        if (gen && __atomic_load_n(&board_gen, __ATOMIC_RELAXED) != *gen &&
            __atomic_load_n(&job->attached, __ATOMIC_RELAXED) > job->owed)
            return;
        size_t first = __atomic_fetch_add(&job->next, QUERY_BLOCK, __ATOMIC_RELAXED);
        if (first >= job->n)
            return;
        size_t last = first + QUERY_BLOCK < job->n ? first + QUERY_BLOCK : job->n;
        if (gen) {
            __atomic_add_fetch(&board_helped, 1, __ATOMIC_RELAXED);
            if (__atomic_load_n(&job->attached, __ATOMIC_RELAXED) > job->owed)
                __atomic_add_fetch(&board_lent, 1, __ATOMIC_RELAXED);
        }
        /* each read scanned one read ahead, its shards asked for while the read before is
         * tested (sbf_query_ahead): the first of the block asks at once */
        query_ahead(job, first, &ah[0], 1);
        for (size_t i = first; i < last; ++i) {
            sbf_ahead_t *cur = &ah[(i - first) & 1], *next = &ah[(i - first + 1) & 1];
            if (i + 1 < last)
                query_ahead(job, i + 1, next, 0);
            uint64_t nk;
            sbf_query_behind(job->idx, cur, i + 1 < last ? next : NULL, &nk, hits);
            job->kmers[i] = (uint32_t)nk;
            for (int r = 0; r < R; ++r)
                job->hits[i * (size_t)R + (size_t)r] = (uint32_t)hits[r];
        }
    }
}

static void *board_helper(void *arg)
{
    (void)arg;
    sbf_ahead_t *ah = malloc(2 * sizeof *ah);   /* a read and the next (query_blocks) */
    uint64_t *hits = NULL;
    int cap = 0;
    pthread_mutex_lock(&board_mu);
    if (!ah) {   /* no memory: this helper is not there; the callers do the work */
        --board_helpers;
        pthread_mutex_unlock(&board_mu);
        return NULL;
    }
    for (;;) {
        query_job_t *j = board_pick();
        if (!j) {
            pthread_cond_wait(&board_work, &board_mu);
            continue;
        }
        const int R = j->idx->n_targets;
        if (R > cap) {
            uint64_t *h = realloc(hits, (size_t)R * sizeof *h);
            if (!h) {   /* the callers do the work */
                pthread_cond_wait(&board_work, &board_mu);
                continue;
            }
            hits = h;
            cap = R;
        }
        __atomic_add_fetch(&j->attached, 1, __ATOMIC_RELAXED);
        const uint64_t gen = __atomic_load_n(&board_gen, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&board_mu);
        query_blocks(j, ah, hits, &gen);
        pthread_mutex_lock(&board_mu);
        if (__atomic_sub_fetch(&j->attached, 1, __ATOMIC_RELAXED) == 0)
            pthread_cond_broadcast(&board_left);
    }
    return NULL;
}

/* job on the board for its helpers (owed threads - 1; at most most - 1), more helpers made
 * when the board is owed more than there are. */
static void board_post(query_job_t *job)
{
    pthread_mutex_lock(&board_mu);
    query_job_t **at = &board;
    while (*at)
        at = &(*at)->next_job;
    *at = job;
    board_owed += job->owed;
    while (board_helpers < board_owed) {
        pthread_t tid;
        pthread_attr_t attr;
        int ok = pthread_attr_init(&attr) == 0;
        ok = ok && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
             pthread_create(&tid, &attr, board_helper, NULL) == 0;
        if (ok) {
            ++board_helpers;
            /* named before it runs: --stats finds the helpers' CPU seconds by the name */
            (void)pthread_setname_np(tid, SBF_ENGINE_HELPER_NAME);
        }
        pthread_attr_destroy(&attr);
        if (!ok)   /* fewer threads: the caller and the helpers there are do the work */
            break;
    }
    __atomic_add_fetch(&board_gen, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&board_work);
    pthread_mutex_unlock(&board_mu);
}

/* job off the board, once its helpers have left it (every block taken: the caller's own loop
 * ended). */
static void board_remove(query_job_t *job)
{
    pthread_mutex_lock(&board_mu);
    query_job_t **at = &board;
    while (*at != job)
        at = &(*at)->next_job;
    *at = job->next_job;
    board_owed -= job->owed;
    while (__atomic_load_n(&job->attached, __ATOMIC_RELAXED) > 0)
        pthread_cond_wait(&board_left, &board_mu);
    pthread_mutex_unlock(&board_mu);
}

/* The CPU engine: job's sequences on the caller's thread and the board's helpers (threads - 1
 * owed, at most most - 1). */
static int run_query_job(query_job_t *job, int threads, int most)
{
    /* once per index, for a run's batches (a few reads do without); without them (no memory),
     * the panels as they are. Not while the index goes to a GPU: the CPU engine only answers
     * until it is there. */
    if (job->n >= PLAIN_COPY_READS && !job->gpu_to_come && !__atomic_load_n(&job->idx->accel, __ATOMIC_ACQUIRE))
        (void)sbf_idx_plain_copies(job->idx, threads);
    const size_t blocks = (job->n + QUERY_BLOCK - 1) / QUERY_BLOCK;
    most = most < threads ? threads : most;
    job->owed = (int)((size_t)threads < blocks ? (size_t)threads : blocks) - 1;
    job->most = (int)((size_t)most < blocks ? (size_t)most : blocks) - 1;
    job->owed = job->owed < 0 ? 0 : job->owed;
    job->most = job->most < 0 ? 0 : job->most;
    if (job->most > 0)
        board_post(job);
    query_worker(job);   /* the caller works too */
    if (job->most > 0)
        board_remove(job);
    if (job->status != SBF_OK)
        return sbf_error(job->status, "out of memory in a query thread");
    return SBF_OK;
}

/* Reads per thread of the CPU engine between two looks at an upload in flight: a worker
 * switches to the GPU within a few milliseconds of the copies being made. */
#define UPLOAD_LOOK_READS 2048u

/* One query on GPU copy `slot` of the index, or on the CPU engine (slot < 0). A GPU worker's
 * query (slot >= 0) before its copy is ready, while the copies are made or before there are any
 * (the GPUs still being counted, sbf_screen.c), runs on the CPU engine in chunks, looking for the
 * copy between them: the GPU takes the rest of the reads within a few milliseconds of it being
 * there. Those chunks make no plain copies of panels: the index is going to the GPU, and the
 * copies would cost a chr20 index 0.45 CPU-s and 125 MB for the few reads answered meanwhile. */
int sbf_engine_query(const sbf_index_t *idx, int slot, size_t n, const char *const *seqs,
                     const uint8_t *const *packed, const size_t *lens, uint32_t *kmers, uint32_t *hits, int threads,
                     int most)
{
    const size_t R = (size_t)idx->n_targets, chunk = UPLOAD_LOOK_READS * (size_t)(threads > 1 ? threads : 1);
    gpu_copies_t *c = NULL;
    size_t done = 0;
    while (slot >= 0 && done < n) {
        c = __atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE);
        if (copies_ready(c))
            break;
        copies_want(c);
        const size_t m = n - done < chunk ? n - done : chunk;
        query_job_t job = {.idx = idx, .n = m, .seqs = seqs ? seqs + done : NULL,
                           .packed = packed ? packed + done : NULL, .lens = lens + done, .kmers = kmers + done,
                           .hits = hits + done * R, .status = SBF_OK, .gpu_to_come = 1};
        int rc = run_query_job(&job, threads, most);
        if (rc != SBF_OK)
            return rc;
        if (c)
            __atomic_fetch_add(&c->cpu_reads, (uint64_t)m, __ATOMIC_RELAXED);
        done += m;
    }
    if (slot >= 0) {
        if (done == n)
            return SBF_OK;
        sbf_gpu_index_t *g = c->index[slot % c->n];
        return packed ? sbf_gpu_query_nt16(g, n - done, packed + done, lens + done, kmers + done, hits + done * R)
                      : sbf_gpu_query(g, n - done, seqs + done, lens + done, kmers + done, hits + done * R);
    }
    query_job_t job = {.idx = idx, .n = n, .seqs = seqs, .packed = packed, .lens = lens, .kmers = kmers,
                       .hits = hits, .status = SBF_OK};
    return run_query_job(&job, threads, most);
}

/* A blocking query over every GPU copy: large calls are cut in one part per device, run at
 * once (one thread each); small ones go to the copies in turn. */
typedef struct {
    const sbf_index_t *idx;
    int slot;
    size_t first, n;
    const char *const *seqs;
    const uint8_t *const *packed;
    const size_t *lens;
    uint32_t *kmers, *hits;
    int status;
    char error[256];
} gpu_part_t;

static void *gpu_part_run(void *arg)
{
    gpu_part_t *p = arg;
    const size_t R = (size_t)p->idx->n_targets;
    p->status = sbf_engine_query(p->idx, p->slot, p->n, p->seqs ? p->seqs + p->first : NULL,
                                 p->packed ? p->packed + p->first : NULL, p->lens + p->first, p->kmers + p->first,
                                 p->hits + p->first * R, 1, 1);
    if (p->status != SBF_OK)
        snprintf(p->error, sizeof p->error, "%s", sbf_error_message());
    return NULL;
}

#define GPU_SPLIT_MIN 65536u   /* reads per device below which one device answers a call */

int sbf_engine_query_any(const sbf_index_t *idx, size_t n, const char *const *seqs, const uint8_t *const *packed,
                         const size_t *lens, uint32_t *kmers, uint32_t *hits, int threads)
{
    if (threads < 1)
        return sbf_error(SBF_E_PARAM, "thread count %d must be at least 1", threads);
    gpu_copies_t *c = __atomic_load_n(&idx->accel, __ATOMIC_ACQUIRE);
    if (!copies_ready(c)) {
        copies_want(c);
        return sbf_engine_query(idx, -1, n, seqs, packed, lens, kmers, hits, threads, threads);
    }
    int parts = (int)(n / GPU_SPLIT_MIN);
    parts = parts > c->n ? c->n : parts;
    if (parts <= 1)
        return sbf_engine_query(idx, (int)(__atomic_fetch_add(&c->next, 1u, __ATOMIC_RELAXED) % (unsigned)c->n), n,
                                seqs, packed, lens, kmers, hits, 1, 1);
    gpu_part_t part[SBF_MAX_GPUS];
    pthread_t tid[SBF_MAX_GPUS];
    int started[SBF_MAX_GPUS] = {0};
    for (int i = 0; i < parts; ++i) {
        size_t a = n * (size_t)i / (size_t)parts, b = n * (size_t)(i + 1) / (size_t)parts;
        part[i] = (gpu_part_t){idx, i, a, b - a, seqs, packed, lens, kmers, hits, SBF_OK, ""};
        if (i > 0)
            started[i] = pthread_create(&tid[i], NULL, gpu_part_run, &part[i]) == 0;
    }
    gpu_part_run(&part[0]);
    for (int i = 1; i < parts; ++i) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            gpu_part_run(&part[i]);   /* no thread: the caller runs the part itself */
    }
    for (int i = 0; i < parts; ++i)
        if (part[i].status != SBF_OK)
            return sbf_error(part[i].status, "%s", part[i].error);
    return SBF_OK;
}

/* Query the units of u (made from n reads for k-mers of idx's k) into kmers and hits (R per unit). */
static int query_units(const sbf_index_t *idx, int slot, const sbf_units_t *u, const char *const *vs,
                       const uint8_t *const *vp, uint32_t *kmers, uint32_t *hits, int threads)
{
    const size_t m = u->n_units;
    if (m == 0)
        return SBF_OK;
    const char *const *qs = vs ? u->seqs : NULL;
    const uint8_t *const *qp = vp ? u->packed : NULL;
    return slot == SBF_ENGINE_ANY ? sbf_engine_query_any(idx, m, qs, qp, u->lens, kmers, hits, threads)
                                  : sbf_engine_query(idx, slot, m, qs, qp, u->lens, kmers, hits, threads, threads);
}

int sbf_engine_query_reads(const sbf_index_t *idx, int slot, size_t n, const char *const *seqs,
                           const uint8_t *const *packed, const size_t *lens, unsigned mask_lowcomp,
                           const uint8_t *layer, sbf_engine_batch_t *eb, uint32_t *kmers, uint32_t *hits,
                           int threads, const sbf_segments_t **seg)
{
    const size_t R = (size_t)idx->n_targets;
    const char *const *vs;
    const uint8_t *const *vp;
    *seg = NULL;
    int rc = sbf_lowcomp_batch(&eb->mask, mask_lowcomp, n, seqs, packed, lens, &vs, &vp);
    if (rc != SBF_OK)
        return rc;
    size_t n_long = 0;
    for (size_t i = 0; layer && idx->layer && i < n; ++i)
        n_long += layer[i] != 0;
    if (n_long == 0) {   /* every read on the index */
        if ((rc = sbf_units_make(&eb->units, n, vs, vp, lens, (unsigned)idx->params.k)) != SBF_OK)
            return rc;
        const sbf_units_t *u = &eb->units;
        if (!u->segmented)   /* one unit per read: the answers are the reads' */
            return n ? query_units(idx, slot, u, vs, vp, kmers, hits, threads) : SBF_OK;
        const size_t m = u->n_units;
        if ((rc = sbf_reserve(&eb->ukmers, &eb->cap_ukmers, m, sizeof *eb->ukmers)) != SBF_OK ||
            (rc = sbf_reserve(&eb->uhits, &eb->cap_uhits, m * (R ? R : 1), sizeof *eb->uhits)) != SBF_OK ||
            (rc = query_units(idx, slot, u, vs, vp, eb->ukmers, eb->uhits, threads)) != SBF_OK)
            return rc;
        eb->seg = (sbf_segments_t){u->start, u->start + 1, eb->ukmers, eb->uhits, NULL};
        sbf_segments_gather(&eb->seg, n, (int)R, kmers, hits);
        *seg = &eb->seg;
        return SBF_OK;
    }
    /* the reads of long fragments on the long-read layer, the others on the index: each set of
     * units made with the other set's reads empty, then every read pointed at its own units */
    const size_t nn = n ? n : 1;
    if ((rc = sbf_reserve(&eb->lens_main, &eb->cap_lens_main, nn, sizeof *eb->lens_main)) != SBF_OK ||
        (rc = sbf_reserve(&eb->lens_long, &eb->cap_lens_long, nn, sizeof *eb->lens_long)) != SBF_OK ||
        (rc = sbf_reserve(&eb->first, &eb->cap_first, nn, sizeof *eb->first)) != SBF_OK ||
        (rc = sbf_reserve(&eb->end, &eb->cap_end, nn, sizeof *eb->end)) != SBF_OK)
        return rc;
    for (size_t i = 0; i < n; ++i) {
        eb->lens_main[i] = layer[i] ? 0 : lens[i];
        eb->lens_long[i] = layer[i] ? lens[i] : 0;
    }
    const sbf_units_t *um = &eb->units, *ul = &eb->units_long;
    if ((rc = sbf_units_make(&eb->units, n, vs, vp, eb->lens_main, (unsigned)idx->params.k)) != SBF_OK ||
        (rc = sbf_units_make(&eb->units_long, n, vs, vp, eb->lens_long, (unsigned)idx->layer->params.k)) != SBF_OK)
        return rc;
    const size_t mm = um->n_units, m = mm + ul->n_units;
    if ((rc = sbf_reserve(&eb->ukmers, &eb->cap_ukmers, m, sizeof *eb->ukmers)) != SBF_OK ||
        (rc = sbf_reserve(&eb->uhits, &eb->cap_uhits, m * (R ? R : 1), sizeof *eb->uhits)) != SBF_OK ||
        (rc = query_units(idx, slot, um, vs, vp, eb->ukmers, eb->uhits, threads)) != SBF_OK ||
        (rc = query_units(idx->layer, slot, ul, vs, vp, eb->ukmers + mm, eb->uhits + mm * R, threads)) != SBF_OK)
        return rc;
    for (size_t i = 0; i < n; ++i) {
        eb->first[i] = layer[i] ? mm + ul->start[i] : um->start[i];
        eb->end[i] = layer[i] ? mm + ul->start[i + 1] : um->start[i + 1];
    }
    eb->seg = (sbf_segments_t){eb->first, eb->end, eb->ukmers, eb->uhits, layer};
    sbf_segments_gather(&eb->seg, n, (int)R, kmers, hits);
    *seg = &eb->seg;
    return SBF_OK;
}

void sbf_engine_batch_free(sbf_engine_batch_t *eb)
{
    if (!eb)
        return;
    sbf_lowcomp_batch_free(&eb->mask);
    sbf_units_free(&eb->units);
    sbf_units_free(&eb->units_long);
    free(eb->ukmers);
    free(eb->uhits);
    free(eb->lens_main);
    free(eb->lens_long);
    free(eb->first);
    free(eb->end);
    memset(eb, 0, sizeof *eb);
}

void sbf_engine_route(size_t n, int per, const size_t *lens, uint8_t *layer)
{
    for (size_t f = 0; f < n; f += (size_t)per) {
        uint8_t any = 0;
        for (size_t i = f; i < f + (size_t)per && i < n; ++i)
            any |= lens[i] >= SBF_LONG_READ_BASES;
        for (size_t i = f; i < f + (size_t)per && i < n; ++i)
            layer[i] = any;
    }
}

int sbf_engine_query_kmers(const sbf_index_t *idx, int target, const char *seq, size_t len, uint8_t *present)
{
    if (target < 0 || target >= idx->n_targets)
        return sbf_error(SBF_E_PARAM, "no target number %d (the index has %d)", target, idx->n_targets);
    const size_t k = (size_t)idx->params.k;
    if (len < k)
        return SBF_OK;
    if (sbf_engine_ready(idx))
        return sbf_gpu_query_kmers(((const gpu_copies_t *)idx->accel)->index[0], target, seq, len, present);
    const int R = idx->n_targets;
    sbf_scan_t *sc = malloc(sizeof *sc);
    uint64_t *hits = malloc((size_t)R * sizeof *hits);
    uint8_t *all = malloc((len - k + 1) * (size_t)R);
    int rc = SBF_OK;
    if (!sc || !hits || !all) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
    } else {
        uint64_t nk;
        sbf_query_seq(idx, sc, sbf_nt4_ascii, (const uint8_t *)seq, len, &nk, hits, all);
        memcpy(present, all + (size_t)target * (len - k + 1), len - k + 1);
    }
    free(sc);
    free(hits);
    free(all);
    return rc;
}

/* ---- classification ---- */

int sbf_engine_chance(const sbf_index_t *idx, double *fpr, double *clump)
{
    const double *c = sbf_idx_clumps(idx);   /* computed once per index, not per call */
    if (!c)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    for (int t = 0; t < idx->n_targets; ++t) {
        fpr[t] = idx->targets[t].predicted_fpr;
        clump[t] = c[t];
    }
    return SBF_OK;
}

int sbf_engine_layer_chance(const sbf_index_t *idx, double *fpr, double *clump)
{
    const sbf_index_t *ly = idx->layer;
    int rc = sbf_engine_chance(ly, fpr, clump);
    /* a k-mer of an unrelated read is in the target's sequence itself with probability about
     * 2 x its k-mers / 4^k (both strands): a 21-mer is in a 3.1 Gbp host by chance 1 time in
     * 700, beside which a 31-mer's chance (1.4e-9) and the filter's false positives at k = 31
     * are nothing; at k = 21 it must count */
    const double space = ldexp(1.0, 2 * ly->params.k);
    for (int t = 0; rc == SBF_OK && t < ly->n_targets; ++t) {
        const double own = 2.0 * (double)(ly->targets[t].kmers + ly->targets[t].masked) / space;
        fpr[t] = fpr[t] + own < 1 ? fpr[t] + own : 1;
        /* a genome is no random sequence: its short repeats and skewed composition make its
         * k-mers far more likely in reads like it than the uniform rate says; the rate measured
         * on its reversed sequence at build time counts them */
        if (ly->targets[t].chance > fpr[t])
            fpr[t] = ly->targets[t].chance;
    }
    return rc;
}

int sbf_engine_scorer(const sbf_index_t *idx, const sbf_classify_opt_t *opt, sbf_scorer_t *scorer)
{
    int rc = sbf_classify_opt_check(opt);
    if (rc != SBF_OK)
        return rc;
    const int R = idx->n_targets;
    double *fpr = malloc(2 * (size_t)(R > 0 ? R : 1) * sizeof *fpr);
    if (!fpr)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    if ((rc = sbf_engine_chance(idx, fpr, fpr + R)) == SBF_OK)
        rc = sbf_scorer_init(scorer, opt, (unsigned)idx->params.k, R, fpr, fpr + R);
    if (rc == SBF_OK && idx->layer && (rc = sbf_engine_layer_chance(idx, fpr, fpr + R)) == SBF_OK)
        rc = sbf_scorer_add_layer(scorer, (unsigned)idx->layer->params.k, fpr, fpr + R);
    if (rc != SBF_OK)
        sbf_scorer_free(scorer);
    free(fpr);
    return rc;
}
