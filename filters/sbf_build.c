/* sbf_build.c -- building one target's filter from its sequence with a pool of threads. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sbf_build.h"
#include "sbf_error.h"
#include "sbf_kmer.h"
#include "sbf_mem.h"
#include "sbf_scan.h"
#include "sbf_scan_int.h"

void sbf_seqbuf_init(sbf_seqbuf_t *b) { memset(b, 0, sizeof *b); }

void sbf_seqbuf_free(sbf_seqbuf_t *b)
{
    sbf_buf_free(b->codes, b->cap, b->mapped);
    memset(b, 0, sizeof *b);
}

static int seqbuf_reserve(sbf_seqbuf_t *b, uint64_t extra)
{
    /* a human genome's 3 GB: its own mapping, grown without copies, faulted 2 MiB at a time */
    return sbf_buf_reserve(&b->codes, &b->cap, &b->mapped, b->len + extra, "reference sequence");
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
    return sbf_seqbuf_extend(b, code, seq, len, k);
}

int sbf_seqbuf_extend(sbf_seqbuf_t *b, const uint8_t code[256], const uint8_t *seq, uint64_t len, int k)
{
    int rc = seqbuf_reserve(b, len);
    if (rc)
        return rc;
    uint8_t *out = b->codes + b->len;
    for (uint64_t i = 0; i < len; ++i)   /* no dependency from byte to byte: loads and stores */
        out[i] = code[seq[i]];
    b->kmers += count_kmers(out, len, (unsigned)k, &b->run);
    b->len += len;
    b->bases += len;
    return SBF_OK;
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

/* Whether any bit of held is set in positions [lo, hi). */
static int held_any(const uint64_t *held, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return 0;
    const uint64_t first = lo >> 6, last = (hi - 1) >> 6;
    for (uint64_t w = first; w <= last; ++w) {
        uint64_t bits = held[w];
        if (w == first)
            bits &= ~0ULL << (lo & 63);
        if (w == last && (hi & 63))
            bits &= (1ULL << (hi & 63)) - 1;
        if (bits)
            return 1;
    }
    return 0;
}

static inline int held_at(const uint64_t *held, uint64_t p) { return (int)((held[p >> 6] >> (p & 63)) & 1); }

/* The 64 bits of positions p .. p + 63 (the bitmap's word of zeros after its last k-mer keeps
 * the second load inside it). */
static inline uint64_t held_word(const uint64_t *held, uint64_t p)
{
    const uint64_t w = p >> 6;
    const unsigned o = (unsigned)(p & 63);
    return o ? held[w] >> o | held[w + 1] << (64 - o) : held[w];
}

/* The runs of the window just scanned from codes[base] less the k-mers held leaves out: a run
 * with held k-mers becomes the stretches of its kept ones, each a run of the same minimizer
 * (hence the same shard), whose s-mers are those of its own k-mers only; the records of a whole
 * run and of its stretches OR the same bits when none is held. scratch: SBF_WINDOW runs (a
 * stretch holds a k-mer at least, so they never outnumber the window's k-mers). Most windows
 * of a genome have no held k-mer and are left as they are after one look at their words; in a
 * window with one, only the runs with one are taken k-mer by k-mer (all of them were: 4% of a
 * VM build's samples on chr20, whose repeats put a DUST k-mer in many windows). */
static void drop_held(sbf_scan_t *sc, const uint64_t *held, uint64_t base, sbf_run_t *scratch)
{
    const uint32_t n = sc->n_runs;
    if (n == 0 || !held_any(held, base + sc->runs[0].first, base + sc->runs[n - 1].first + sc->runs[n - 1].n))
        return;
    uint32_t m = 0;
    for (uint32_t r = 0; r < n; ++r) {
        const sbf_run_t run = sc->runs[r];
        if (run.n <= 64) {   /* nearly every run: its kept k-mers as one word, stretches by ctz */
            const uint64_t all = run.n == 64 ? ~0ULL : (1ULL << run.n) - 1;
            uint64_t keep = ~held_word(held, base + run.first) & all;
            while (keep) {
                const unsigned from = (unsigned)__builtin_ctzll(keep);
                const uint64_t ones = keep >> from;   /* the stretch: its ones from bit 0 */
                const unsigned len = ~ones ? (unsigned)__builtin_ctzll(~ones) : 64 - from;
                scratch[m++] = (sbf_run_t){run.first + from, len, run.minimizer};
                keep &= from + len >= 64 ? 0 : ~0ULL << (from + len);
            }
            continue;
        }
        for (uint32_t j = 0; j < run.n;) {
            while (j < run.n && held_at(held, base + run.first + j))
                ++j;
            const uint32_t from = j;
            while (j < run.n && !held_at(held, base + run.first + j))
                ++j;
            if (j > from)
                scratch[m++] = (sbf_run_t){run.first + from, j - from, run.minimizer};
        }
    }
    memcpy(sc->runs, scratch, (size_t)m * sizeof *scratch);
    sc->n_runs = m;
}

/* The window of k-mers from codes[p] (SBF_WINDOW of them at most, none reaching past end) scanned
 * into sc, less the k-mers held leaves out (NULL: none): sc's runs are what it adds to the filter.
 * The one-thread and the threaded insertions both walk their stretch of codes with it. */
static void scan_kept(sbf_scan_t *sc, const sbf_index_t *idx, const uint8_t *codes, uint64_t p, uint64_t end,
                      const uint64_t *held, sbf_run_t *scratch)
{
    const uint64_t k = (uint64_t)idx->params.k;
    const uint64_t wlen = end - p < SBF_WINDOW + k - 1 ? end - p : SBF_WINDOW + k - 1;
    sbf_scan_window(sc, &idx->params, sbf_nt4_identity, codes + p, (uint32_t)wlen);
    if (held)
        drop_held(sc, held, p, scratch);
}

/* Chunks of k-mer start positions, taken in turn from a counter: big enough that the k-1 bases
 * each chunk rescans are noise, small enough that the last ones balance the threads. */
#define CHUNK_KMERS (1u << 16)
/* Records a block holds: one thread's records for one range of shards, queued when full. */
#define BLOCK_RECORDS 256u

unsigned sbf_build_queue_cap = 0;

/* Several threads into one filter, with no atomic OR and no barrier. The filter's shards are
 * cut into ranges (2 per thread, at most 64). A thread scans chunks taken in turn and puts
 * each run's record (shard, bits) into its own block for the shard's range; a full block is
 * queued on its range. After each chunk, the thread applies the queued blocks of every range
 * that no other thread is applying (one flag per range: while it holds the flag, the range's
 * shards are its own), prefetching shards a few records ahead. OR commutes, so the filter's
 * bytes depend neither on who applies a block nor when.
 * Atomic ORs needed no records, but a locked OR waits for its cache line and lets no other
 * miss overlap it (3/4 of the insertion's time with a 1 GB filter, perf, issue 27). Rounds of
 * one chunk per thread with a barrier after the scans and after the ORs kept every thread
 * waiting for the slowest: 1.2-2.5 s of each 7 s layer of a 3 Gbp build on the H200's 16
 * threads (doc/PERFORMANCE.md). Few ranges: a thread fills a block per range at once, and
 * with many the blocks' tails fall out of the caches (VM, 2 threads, k=31: 4 ranges 1.9 s,
 * 128 ranges 3.3 s, whatever the blocks' size). */
typedef struct block_s {
    struct block_s *next;
    uint32_t n;         /* records */
    uint64_t rec[];     /* n records of 1 + shard words */
} block_t;

typedef struct {
    pthread_mutex_t lock;   /* guards queue's list; its head is also read without it, atomically */
    block_t *queue;         /* full blocks not applied yet */
    int applying;           /* atomic flag: a thread is ORing this range's blocks */
} range_t;

typedef struct insert_job_s insert_job_t;

typedef struct {
    sbf_run_sink_t sink;    /* first: put() finds its writer from the sink */
    insert_job_t *job;
    block_t **open;         /* per range: the block this thread fills, or NULL */
    uint64_t spare[9];      /* where a record goes when no block can be had (the job fails) */
} writer_t;

struct insert_job_s {
    const sbf_index_t *idx;
    sbf_target_t *t;
    const uint8_t *codes;
    const uint64_t *held;     /* k-mers left out (sbf_build_target_held), or NULL */
    uint64_t len, n_chunks;
    unsigned n_ranges, rec_words;
    int vector_or;            /* records of 512-bit shards ORed as one line (sbf_probe_simd.c) */
    uint64_t range_mult;      /* n_ranges * 2^32 / n_shards: a shard's range without a division */
    range_t *ranges;
    writer_t *writers;        /* one per thread */
    pthread_mutex_t pool_lock;
    block_t *pool;            /* blocks applied, free again */
    uint64_t queue_cap;       /* blocks queued beyond which a thread applies before it scans on */
    int threads;
    /* atomics */
    uint64_t next_chunk, queued;   /* the next chunk to take; blocks queued and not taken */
    int next_writer, scanning;     /* writers handed out; threads that may still queue blocks */
    int failed;
};

static block_t *block_get(insert_job_t *job)
{
    pthread_mutex_lock(&job->pool_lock);
    block_t *b = job->pool;
    if (b)
        job->pool = b->next;
    pthread_mutex_unlock(&job->pool_lock);
    if (!b)
        b = malloc(sizeof *b + (size_t)BLOCK_RECORDS * job->rec_words * sizeof(uint64_t));
    if (b)
        b->n = 0;
    return b;
}

/* Blocks first..last (linked) back to the pool. */
static void pool_put(insert_job_t *job, block_t *first, block_t *last)
{
    pthread_mutex_lock(&job->pool_lock);
    last->next = job->pool;
    job->pool = first;
    pthread_mutex_unlock(&job->pool_lock);
}

static void queue_block(insert_job_t *job, unsigned r, block_t *b)
{
    range_t *rg = &job->ranges[r];
    pthread_mutex_lock(&rg->lock);
    b->next = rg->queue;
    __atomic_store_n(&rg->queue, b, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rg->lock);
    __atomic_add_fetch(&job->queued, 1, __ATOMIC_SEQ_CST);
}

static uint64_t *writer_put(sbf_run_sink_t *sink, uint64_t shard)
{
    writer_t *w = (writer_t *)sink;
    insert_job_t *job = w->job;
    const unsigned r = (unsigned)((shard * job->range_mult) >> 32);   /* < n_ranges: shard < n_shards */
    block_t *b = w->open[r];
    if (!b || b->n == BLOCK_RECORDS) {
        if (b)
            queue_block(job, r, b);
        if (!(b = w->open[r] = block_get(job))) {
            __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
            return w->spare;
        }
    }
    return b->rec + (size_t)b->n++ * job->rec_words;
}

/* OR one block's records into the filter, prefetching the shards of records a few ahead: 16
 * (32 made the CPU build of the 3.06 Gbp host 30% slower on an H100 machine, 12.45 -> 16.32 s:
 * more lines asked for than the core can have in flight). */
static void apply_block(const insert_job_t *job, const block_t *b)
{
    const unsigned words = job->rec_words - 1, rw = job->rec_words, ahead = 16;
    uint64_t *bits = job->t->bits;
    const uint64_t *rec = b->rec;
#if SBF_SCAN_HAVE_SIMD
    if (job->vector_or) {
        avx512_apply_records(bits, rec, b->n, ahead);
        return;
    }
#endif
    for (uint32_t i = 0; i < b->n && i < ahead; ++i)
        sbf_prefetch_for_write(bits + rec[(size_t)i * rw] * words);
    for (uint32_t i = 0; i < b->n; ++i) {
        if (i + ahead < b->n)
            sbf_prefetch_for_write(bits + rec[(size_t)(i + ahead) * rw] * words);
        const uint64_t *m = rec + (size_t)i * rw;
        uint64_t *w = bits + m[0] * words;
        for (unsigned q = 0; q < words; ++q)
            w[q] |= m[1 + q];
    }
}

/* Apply the queued blocks of every range no other thread is applying, starting at range
 * `from`; the blocks go back to the pool. Returns the blocks applied. */
static uint64_t apply_queued(insert_job_t *job, unsigned from)
{
    uint64_t applied = 0;
    for (unsigned i = 0; i < job->n_ranges; ++i) {
        range_t *rg = &job->ranges[(from + i) % job->n_ranges];
        if (!__atomic_load_n(&rg->queue, __ATOMIC_RELAXED) || __atomic_exchange_n(&rg->applying, 1, __ATOMIC_ACQUIRE))
            continue;
        pthread_mutex_lock(&rg->lock);
        block_t *list = rg->queue;
        __atomic_store_n(&rg->queue, NULL, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&rg->lock);
        uint64_t n = 0;
        block_t *last = NULL;
        for (block_t *b = list; b; last = b, b = b->next, ++n)
            apply_block(job, b);
        __atomic_store_n(&rg->applying, 0, __ATOMIC_RELEASE);
        if (!n)
            continue;
        __atomic_sub_fetch(&job->queued, n, __ATOMIC_SEQ_CST);
        pool_put(job, list, last);
        applied += n;
    }
    return applied;
}

static void *insert_worker(void *arg)
{
    insert_job_t *job = arg;
    /* counted before it takes a chunk: a thread that sees every chunk taken and no thread
     * scanning knows that no block will be queued any more */
    __atomic_add_fetch(&job->scanning, 1, __ATOMIC_SEQ_CST);
    const int me = __atomic_fetch_add(&job->next_writer, 1, __ATOMIC_SEQ_CST);
    writer_t *w = &job->writers[me];
    const unsigned from = (unsigned)((uint64_t)me * job->n_ranges / (unsigned)job->threads);   /* spread out */
    sbf_scan_t *sc = malloc(sizeof *sc);
    sbf_run_t *scratch = job->held ? malloc(SBF_WINDOW * sizeof *scratch) : NULL;
    if (!sc || (job->held && !scratch)) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
        free(sc);
        sc = NULL;
    }
    const uint64_t k = (uint64_t)job->idx->params.k;
    uint64_t c;
    while (sc && (c = __atomic_fetch_add(&job->next_chunk, 1, __ATOMIC_SEQ_CST)) < job->n_chunks) {
        const uint64_t start = c * CHUNK_KMERS;
        const uint64_t end = start + CHUNK_KMERS + k - 1 < job->len ? start + CHUNK_KMERS + k - 1 : job->len;
        for (uint64_t p = start; p + k <= end; p += SBF_WINDOW) {
            scan_kept(sc, job->idx, job->codes, p, end, job->held, scratch);
            sbf_scanned_runs(job->idx, job->t, sc, &w->sink);
        }
        apply_queued(job, from);
        while (__atomic_load_n(&job->queued, __ATOMIC_SEQ_CST) > job->queue_cap)
            if (!apply_queued(job, from))
                sched_yield();   /* every queued range is being applied: wait for one */
    }
    for (unsigned r = 0; r < job->n_ranges; ++r)
        if (w->open[r]) {
            if (w->open[r]->n)
                queue_block(job, r, w->open[r]);
            else
                pool_put(job, w->open[r], w->open[r]);
            w->open[r] = NULL;
        }
    __atomic_sub_fetch(&job->scanning, 1, __ATOMIC_SEQ_CST);
    free(scratch);
    for (;;) {
        const uint64_t applied = apply_queued(job, from);
        if (__atomic_load_n(&job->next_chunk, __ATOMIC_SEQ_CST) >= job->n_chunks &&
            !__atomic_load_n(&job->scanning, __ATOMIC_SEQ_CST) && !__atomic_load_n(&job->queued, __ATOMIC_SEQ_CST))
            break;
        if (!applied)
            sched_yield();
    }
    free(sc);
    return NULL;
}

/* sbf_build_target on `threads` (> 1) threads; SBF_OK or an error. */
static int build_threaded(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, const uint64_t *held,
                          uint64_t len, uint64_t n_chunks, int threads)
{
    insert_job_t job;
    memset(&job, 0, sizeof job);
    job.idx = idx;
    job.t = t;
    job.codes = codes;
    job.held = held;
    job.len = len;
    job.n_chunks = n_chunks;
    job.threads = threads;
    job.rec_words = 1 + sbf_params_shard_words(&idx->params);
#if SBF_SCAN_HAVE_SIMD
    job.vector_or = sbf_runs_avx512(job.rec_words - 1, (unsigned)idx->params.hashes);
#endif
    job.n_ranges = threads >= 32 ? 64u : 2u * (unsigned)threads;
    job.range_mult = ((uint64_t)job.n_ranges << 32) / t->n_shards;
    /* about four chunks per thread: what the threads queue between their turns at ORing, with
     * room for a slow turn (a chunk makes about CHUNK_KMERS / 4 records) */
    job.queue_cap = sbf_build_queue_cap ? sbf_build_queue_cap : (uint64_t)threads * CHUNK_KMERS / BLOCK_RECORDS;
    pthread_mutex_init(&job.pool_lock, NULL);
    job.ranges = calloc(job.n_ranges, sizeof *job.ranges);
    job.writers = calloc((size_t)threads, sizeof *job.writers);
    int rc = job.ranges && job.writers ? SBF_OK : SBF_E_NOMEM;
    for (unsigned r = 0; job.ranges && r < job.n_ranges; ++r)
        pthread_mutex_init(&job.ranges[r].lock, NULL);
    for (int i = 0; rc == SBF_OK && i < threads; ++i) {
        job.writers[i].sink.put = writer_put;
        job.writers[i].job = &job;
        if (!(job.writers[i].open = calloc(job.n_ranges, sizeof *job.writers[i].open)))
            rc = SBF_E_NOMEM;
    }
    if (rc == SBF_OK)
        sbf_run_threads(threads, insert_worker, &job);
    if (rc != SBF_OK)
        rc = sbf_error(SBF_E_NOMEM, "out of memory starting build threads");
    else if (job.failed)
        rc = sbf_error(SBF_E_NOMEM, "out of memory in a build thread");
    /* every block is back in the pool: the workers queued their last ones and applied them all
     * (one left in a queue would be k-mers missing from the filter: said, never kept) */
    for (unsigned r = 0; rc == SBF_OK && job.ranges && r < job.n_ranges; ++r)
        if (job.ranges[r].queue)
            rc = sbf_error(SBF_E_THREAD, "internal error: records of target '%s' left unapplied", t->name);
    for (block_t *b = job.pool, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    for (int i = 0; job.writers && i < threads; ++i)
        free(job.writers[i].open);
    for (unsigned r = 0; job.ranges && r < job.n_ranges; ++r)
        pthread_mutex_destroy(&job.ranges[r].lock);
    pthread_mutex_destroy(&job.pool_lock);
    free(job.ranges);
    free(job.writers);
    return rc;
}

int sbf_build_target(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                     int threads)
{
    return sbf_build_target_held(idx, t, codes, len, NULL, threads);
}

int sbf_build_target_held(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                          const sbf_held_t *hold, int threads)
{
    const uint64_t *held = hold && hold->bits ? hold->bits : NULL;
    const uint64_t k = (uint64_t)idx->params.k;
    const uint64_t n_chunks = len >= k ? (len - k + 1 + CHUNK_KMERS - 1) / CHUNK_KMERS : 0;
    if (threads < 1)
        threads = 1;
    if ((uint64_t)threads > n_chunks)
        threads = n_chunks ? (int)n_chunks : 1;
    if (threads > 1) {
        int rc = build_threaded(idx, t, codes, held, len, n_chunks, threads);
        if (rc != SBF_OK)
            return rc;
    } else {   /* one thread: straight into the filter */
        sbf_scan_t *sc = malloc(sizeof *sc);
        sbf_run_t *scratch = held ? malloc(SBF_WINDOW * sizeof *scratch) : NULL;
        if (!sc || (held && !scratch)) {
            free(sc);
            return sbf_error(SBF_E_NOMEM, "out of memory building target '%s'", t->name);
        }
        for (uint64_t p = 0; p + k <= len; p += SBF_WINDOW) {
            scan_kept(sc, idx, codes, p, len, held, scratch);
            sbf_insert_scanned(idx, t, sc);
        }
        free(scratch);
        free(sc);
    }
    sbf_target_stats(idx, t, threads);
    return SBF_OK;
}
