/* sbf_build.c -- building one target's filter from its sequence with a pool of threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sbf_build.h"
#include "sbf_error.h"
#include "sbf_kmer.h"
#include "sbf_mem.h"
#include "sbf_scan.h"

void sbf_seqbuf_init(sbf_seqbuf_t *b) { memset(b, 0, sizeof *b); }

void sbf_seqbuf_free(sbf_seqbuf_t *b)
{
    free(b->codes);
    memset(b, 0, sizeof *b);
}

static int seqbuf_reserve(sbf_seqbuf_t *b, uint64_t extra)
{
    if (b->len + extra <= b->cap)
        return SBF_OK;
    uint64_t cap = b->cap ? b->cap : 1u << 20;
    while (cap < b->len + extra)
        cap += cap / 2;
    uint8_t *grown = realloc(b->codes, cap);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory holding %llu bases of reference sequence",
                         (unsigned long long)(b->len + extra));
    b->codes = grown;
    b->cap = cap;
    return SBF_OK;
}

/* The valid k-mers ending in codes[0..n), the valid bases before it being *run (kept at most
 * k): blocks of 64 codes without a non-base (nearly all of a genome) count at once; a block
 * with one goes base by base. The base-by-base loop alone, a chain of two dependent selects per
 * base, read 200 MB/s: 15 s of one thread for a human genome, and the build counts again for the
 * long-read layer's k (issue 27). */
#define COUNT_BLOCK 64u
static uint64_t count_kmers(const uint8_t *codes, uint64_t n, unsigned k, unsigned *run)
{
    uint64_t kmers = 0;
    unsigned r = *run;
    uint64_t i = 0;
    for (; i + COUNT_BLOCK <= n; i += COUNT_BLOCK) {
        uint8_t bad = 0;
        for (unsigned j = 0; j < COUNT_BLOCK; ++j)   /* vectorised: an OR of the block */
            bad |= codes[i + j] & (uint8_t)~3u;
        if (!bad) {   /* k-mers end at the positions j where r + j + 1 >= k */
            const unsigned first = r + 1 >= k ? 0 : k - 1 - r;
            kmers += first < COUNT_BLOCK ? COUNT_BLOCK - first : 0;
            r = r + COUNT_BLOCK > k ? k : r + COUNT_BLOCK;
            continue;
        }
        for (unsigned j = 0; j < COUNT_BLOCK; ++j) {
            r = codes[i + j] < 4 ? (r < k ? r + 1 : k) : 0;
            kmers += r >= k;
        }
    }
    for (; i < n; ++i) {
        r = codes[i] < 4 ? (r < k ? r + 1 : k) : 0;
        kmers += r >= k;
    }
    *run = r;
    return kmers;
}

int sbf_seqbuf_append(sbf_seqbuf_t *b, const uint8_t code[256], const uint8_t *seq, uint64_t len, int k)
{
    int rc = seqbuf_reserve(b, len + 1);
    if (rc)
        return rc;
    if (b->len) {
        b->codes[b->len++] = 4;
        b->run = 0;
    }
    uint8_t *out = b->codes + b->len;
    for (uint64_t i = 0; i < len; ++i)   /* no dependency from byte to byte: loads and stores */
        out[i] = code[seq[i]];
    b->kmers += count_kmers(out, len, (unsigned)k, &b->run);
    b->len += len;
    b->bases += len;
    return SBF_OK;
}

void sbf_seqbuf_drop_codes(sbf_seqbuf_t *b)
{
    free(b->codes);
    b->codes = NULL;
    b->len = b->cap = 0;
    b->run = 0;
}

/* A join's copy on several threads: the builder joins each file's codes into its target on one
 * thread, in order, while the files are read on the others; a human genome's 3 GB (33 files)
 * took about 2 of the 2.7 s of reading on the H200 machine, the copy and its destination's page
 * faults on one thread (VM: 0.077 s per 100 Mbp). Pieces are taken in turn by the threads. */
#define JOIN_PIECE ((uint64_t)4 << 20)
typedef struct {
    uint8_t *dst;
    const uint8_t *src;
    uint64_t n, next;   /* next: the next piece, taken atomically */
} join_copy_t;

static void *join_copy_worker(void *arg)
{
    join_copy_t *c = arg;
    for (;;) {
        const uint64_t at = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED) * JOIN_PIECE;
        if (at >= c->n)
            return NULL;
        memcpy(c->dst + at, c->src + at, c->n - at < JOIN_PIECE ? c->n - at : JOIN_PIECE);
    }
}

static void join_copy(uint8_t *dst, const uint8_t *src, uint64_t n, int threads)
{
    const uint64_t pieces = (n + JOIN_PIECE - 1) / JOIN_PIECE;
    if ((uint64_t)threads > pieces)
        threads = (int)pieces;
    join_copy_t c = {dst, src, n, 0};
    if (threads <= 1)
        memcpy(dst, src, n);
    else
        sbf_run_threads(threads, join_copy_worker, &c);
}

int sbf_seqbuf_join(sbf_seqbuf_t *dst, sbf_seqbuf_t *src, uint64_t lead_empty, int threads)
{
    if (dst->len == 0) {   /* empty records before any base add nothing; src's counts are dst's */
        sbf_seqbuf_free(dst);
        *dst = *src;
        sbf_seqbuf_init(src);
        return SBF_OK;
    }
    const uint64_t add = lead_empty + (src->len > 0 ? 1 + src->len : 0);
    if (add > 0) {
        int rc = seqbuf_reserve(dst, add);
        if (rc)
            return rc;
        /* the record separators sbf_seqbuf_append() writes: one per empty record, one before
         * src's first record with bases */
        memset(dst->codes + dst->len, 4, lead_empty + (src->len > 0));
        dst->len += lead_empty + (src->len > 0);
        if (src->len > 0)   /* (an empty src may have no buffer) */
            join_copy(dst->codes + dst->len, src->codes, src->len, threads);
        dst->len += src->len;
        dst->run = src->len > 0 ? src->run : 0;
    }
    dst->kmers += src->kmers;
    dst->bases += src->bases;
    sbf_seqbuf_free(src);
    return SBF_OK;
}

int sbf_seqbuf_move(sbf_seqbuf_t *dst, sbf_seqbuf_t *src, int threads) { return sbf_seqbuf_join(dst, src, 0, threads); }

void sbf_seqbuf_restore(sbf_seqbuf_t *b, const sbf_seqbuf_t *before)
{
    if (before->len == 0) {   /* a moved buffer is not ours to keep */
        sbf_seqbuf_free(b);
        return;
    }
    b->len = before->len;   /* the same memory, perhaps grown */
    b->bases = before->bases;
    b->kmers = before->kmers;
    b->run = before->run;
}

/* Counting a human genome's k-mers for another k is 3 GB to read: by chunks on every thread. */
#define COUNT_CHUNK (1u << 20)

typedef struct {
    const uint8_t *codes;
    uint64_t len, n_chunks, next, kmers;   /* next and kmers: atomically */
    unsigned k;
} count_job_t;

static void *count_worker(void *arg)
{
    count_job_t *job = arg;
    uint64_t kmers = 0;
    for (;;) {
        const uint64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        const uint64_t start = c * COUNT_CHUNK, n = job->len - start < COUNT_CHUNK ? job->len - start : COUNT_CHUNK;
        unsigned run = 0;   /* the valid bases just before the chunk, at most k */
        while (run < job->k && run < start && job->codes[start - 1 - run] < 4)
            ++run;
        kmers += count_kmers(job->codes + start, n, job->k, &run);
    }
    __atomic_fetch_add(&job->kmers, kmers, __ATOMIC_RELAXED);
    return NULL;
}

uint64_t sbf_seqbuf_kmers(const sbf_seqbuf_t *b, int k, int threads)
{
    count_job_t job = {b->codes, b->len, (b->len + COUNT_CHUNK - 1) / COUNT_CHUNK, 0, 0, (unsigned)k};
    if (threads < 1 || (uint64_t)threads > job.n_chunks)
        threads = 1;
    sbf_run_threads(threads, count_worker, &job);
    return job.kmers;
}

void sbf_run_threads(int threads, void *(*work)(void *), void *arg)
{
    pthread_t *tid = threads > 1 ? calloc((size_t)threads, sizeof *tid) : NULL;
    int started = 0;
    while (tid && started < threads - 1 && pthread_create(&tid[started], NULL, work, arg) == 0)
        ++started;
    work(arg);
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
    free(tid);
}

/* Chunks of k-mer start positions, one per thread and round; big enough that the k-1 bases each
 * chunk rescans are noise, small enough to balance two threads on a bacterial genome. */
#define CHUNK_KMERS (1u << 18)

/* Several threads into one filter: rounds. In each, every thread scans a chunk of its own and
 * puts each run's record (shard, bits) into the bucket of the thread that owns the shard
 * (threads own equal ranges of shards); after a barrier, every thread ORs the records addressed
 * to it into its own shards, with no atomic operation, prefetching shards a few records ahead.
 * Atomic ORs did the same with no buckets, but a locked OR waits for its cache line and lets no
 * other miss overlap it: 3/4 of the insertion's time with a 1 GB filter (perf, issue 27). */
typedef struct {
    sbf_run_sink_t sink;   /* first: put() finds its buckets from the sink */
    uint64_t **rec;        /* per owner: records of 1 + shard words */
    size_t *used, *cap;    /* per owner, in words */
    uint64_t spare[9];     /* where a record goes when its bucket cannot grow (failed is set) */
    unsigned threads, rec_words;
    uint64_t n_shards;
    uint64_t owner_mult;   /* threads * 2^32 / n_shards: the owner of a shard without a division */
    int failed;
} buckets_t;

static uint64_t *bucket_put(sbf_run_sink_t *sink, uint64_t shard)
{
    buckets_t *b = (buckets_t *)sink;
    const unsigned owner = (unsigned)((shard * b->owner_mult) >> 32);   /* < threads: shard < n_shards */
    if (b->used[owner] + b->rec_words > b->cap[owner] &&
        sbf_reserve(&b->rec[owner], &b->cap[owner], b->used[owner] + b->rec_words, sizeof(uint64_t)) != SBF_OK) {
        b->failed = 1;
        return b->spare;
    }
    uint64_t *r = b->rec[owner] + b->used[owner];
    b->used[owner] += b->rec_words;
    return r;
}

typedef struct {
    const sbf_index_t *idx;
    sbf_target_t *t;
    const uint8_t *codes;
    uint64_t len, n_chunks;
    int threads;           /* those running, once the gate opens */
    buckets_t *buckets;    /* per thread */
    pthread_barrier_t barrier;
    pthread_mutex_t lock;
    pthread_cond_t gate;
    int open, next_id, failed;
} bucket_job_t;

static void apply_bucket(const sbf_index_t *idx, sbf_target_t *t, const uint64_t *rec, size_t words_used)
{
    const unsigned words = sbf_params_shard_words(&idx->params), rw = 1 + words;
    const size_t n = words_used / rw, ahead = 16;
    for (size_t i = 0; i < n && i < ahead; ++i)
        __builtin_prefetch(t->bits + rec[i * rw] * words, 1, 0);
    for (size_t i = 0; i < n; ++i) {
        if (i + ahead < n)
            __builtin_prefetch(t->bits + rec[(i + ahead) * rw] * words, 1, 0);
        uint64_t *w = t->bits + rec[i * rw] * words;
        const uint64_t *m = rec + i * rw + 1;
        for (unsigned q = 0; q < words; ++q)
            w[q] |= m[q];
    }
}

static void *bucket_worker(void *arg)
{
    bucket_job_t *job = arg;
    pthread_mutex_lock(&job->lock);
    while (!job->open)
        pthread_cond_wait(&job->gate, &job->lock);
    const int me = job->next_id++, T = job->threads;
    pthread_mutex_unlock(&job->lock);
    buckets_t *mine = &job->buckets[me];
    sbf_scan_t *sc = malloc(sizeof *sc);
    if (!sc)
        mine->failed = 1;
    const uint64_t k = (uint64_t)job->idx->params.k;
    for (uint64_t round = 0; round * (uint64_t)T < job->n_chunks; ++round) {
        const uint64_t c = round * (uint64_t)T + (uint64_t)me;
        for (int o = 0; o < T; ++o)
            mine->used[o] = 0;
        if (c < job->n_chunks && sc) {
            const uint64_t start = c * CHUNK_KMERS;
            const uint64_t end = start + CHUNK_KMERS + k - 1 < job->len ? start + CHUNK_KMERS + k - 1 : job->len;
            for (uint64_t w = start; w + k <= end; w += SBF_WINDOW) {
                const uint64_t wlen = end - w < SBF_WINDOW + k - 1 ? end - w : SBF_WINDOW + k - 1;
                sbf_scan_window(sc, &job->idx->params, sbf_nt4_identity, job->codes + w, (uint32_t)wlen);
                sbf_scanned_runs(job->idx, job->t, sc, &mine->sink);
            }
        }
        pthread_barrier_wait(&job->barrier);
        for (int v = 0; v < T; ++v)
            apply_bucket(job->idx, job->t, job->buckets[v].rec[me], job->buckets[v].used[me]);
        pthread_barrier_wait(&job->barrier);
    }
    free(sc);
    return NULL;
}

static void buckets_free(buckets_t *b, int threads)
{
    for (int o = 0; b->rec && o < threads; ++o)
        free(b->rec[o]);
    free(b->rec);
    free(b->used);
    free(b->cap);
}

/* sbf_build_target on `threads` (> 1) threads with buckets; SBF_OK or an error. */
static int build_bucketed(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                          uint64_t n_chunks, int threads)
{
    bucket_job_t job;
    memset(&job, 0, sizeof job);
    job.idx = idx;
    job.t = t;
    job.codes = codes;
    job.len = len;
    job.n_chunks = n_chunks;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    job.buckets = calloc((size_t)threads, sizeof *job.buckets);
    int rc = tid && job.buckets ? SBF_OK : SBF_E_NOMEM;
    for (int i = 0; i < threads && rc == SBF_OK; ++i) {
        buckets_t *b = &job.buckets[i];
        b->sink.put = bucket_put;
        b->rec_words = 1 + sbf_params_shard_words(&idx->params);
        b->n_shards = t->n_shards;
        if (!(b->rec = calloc((size_t)threads, sizeof *b->rec)) || !(b->used = calloc((size_t)threads, sizeof *b->used)) ||
            !(b->cap = calloc((size_t)threads, sizeof *b->cap)))
            rc = SBF_E_NOMEM;
    }
    if (rc != SBF_OK) {
        for (int i = 0; job.buckets && i < threads; ++i)
            buckets_free(&job.buckets[i], threads);
        free(job.buckets);
        free(tid);
        return sbf_error(SBF_E_NOMEM, "out of memory starting build threads");
    }
    /* the threads wait at a gate until their number is known: the barrier counts them all */
    pthread_mutex_init(&job.lock, NULL);
    pthread_cond_init(&job.gate, NULL);
    int started = 0;
    while (started < threads - 1 && pthread_create(&tid[started], NULL, bucket_worker, &job) == 0)
        ++started;
    pthread_mutex_lock(&job.lock);
    job.threads = started + 1;
    for (int i = 0; i < job.threads; ++i)
    {
        job.buckets[i].threads = (unsigned)job.threads;
        job.buckets[i].owner_mult = ((uint64_t)job.threads << 32) / t->n_shards;
    }
    pthread_barrier_init(&job.barrier, NULL, (unsigned)job.threads);
    job.open = 1;
    pthread_cond_broadcast(&job.gate);
    pthread_mutex_unlock(&job.lock);
    bucket_worker(&job);
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < job.threads; ++i)
        if (job.buckets[i].failed)
            rc = sbf_error(SBF_E_NOMEM, "out of memory in a build thread");
    for (int i = 0; i < threads; ++i)
        buckets_free(&job.buckets[i], threads);
    pthread_barrier_destroy(&job.barrier);
    pthread_mutex_destroy(&job.lock);
    pthread_cond_destroy(&job.gate);
    free(job.buckets);
    free(tid);
    return rc;
}

int sbf_build_target(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                     int threads)
{
    const uint64_t k = (uint64_t)idx->params.k;
    const uint64_t n_chunks = len >= k ? (len - k + 1 + CHUNK_KMERS - 1) / CHUNK_KMERS : 0;
    if (threads < 1)
        threads = 1;
    if ((uint64_t)threads > n_chunks)
        threads = n_chunks ? (int)n_chunks : 1;
    if (threads > 1) {
        int rc = build_bucketed(idx, t, codes, len, n_chunks, threads);
        if (rc != SBF_OK)
            return rc;
    } else {   /* one thread: straight into the filter */
        sbf_scan_t *sc = malloc(sizeof *sc);
        if (!sc)
            return sbf_error(SBF_E_NOMEM, "out of memory building target '%s'", t->name);
        sbf_insert_seq(idx, t, sc, sbf_nt4_identity, codes, len);
        free(sc);
    }
    sbf_target_stats(idx, t, threads);
    return SBF_OK;
}
