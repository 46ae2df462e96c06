/* sbf_build.c -- building one target's filter from its sequence with a pool of threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sbf_build.h"
#include "sbf_error.h"

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

uint64_t sbf_seqbuf_kmers(const sbf_seqbuf_t *b, int k)
{
    unsigned run = 0;
    return count_kmers(b->codes, b->len, (unsigned)k, &run);
}

/* Chunks of k-mer start positions handed out to threads; big enough that the k-1 bases each
 * chunk rescans are noise, small enough to balance two threads on a bacterial genome. */
#define CHUNK_KMERS (1u << 18)

typedef struct {
    const sbf_index_t *idx;
    sbf_target_t *t;
    const uint8_t *codes;
    uint64_t len;
    uint64_t n_chunks;
    uint64_t next;   /* next chunk, taken atomically */
    int atomic;
    int status;
} build_job_t;

static void *build_worker(void *arg)
{
    build_job_t *job = arg;
    sbf_scan_t *sc = malloc(sizeof *sc);
    if (!sc) {
        __atomic_store_n(&job->status, SBF_E_NOMEM, __ATOMIC_RELAXED);
        return NULL;
    }
    const uint64_t k = (uint64_t)job->idx->params.k;
    for (;;) {
        uint64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        uint64_t start = c * CHUNK_KMERS;
        uint64_t end = start + CHUNK_KMERS + k - 1;
        if (end > job->len)
            end = job->len;
        sbf_insert_seq(job->idx, job->t, sc, sbf_nt4_identity, job->codes + start, end - start, job->atomic);
    }
    free(sc);
    return NULL;
}

int sbf_run_threads(int threads, void *(*work)(void *), void *arg)
{
    pthread_t *tid = calloc((size_t)(threads > 1 ? threads : 1), sizeof *tid);
    if (!tid)
        return SBF_E_NOMEM;
    int started = 0;
    while (started < threads - 1 && pthread_create(&tid[started], NULL, work, arg) == 0)
        ++started;
    work(arg);
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
    free(tid);
    return SBF_OK;
}

int sbf_build_target(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                     int threads)
{
    const uint64_t k = (uint64_t)idx->params.k;
    build_job_t job = {idx, t, codes, len, 0, 0, threads > 1, SBF_OK};
    if (len >= k)
        job.n_chunks = (len - k + 1 + CHUNK_KMERS - 1) / CHUNK_KMERS;
    if (threads < 1)
        threads = 1;
    if ((uint64_t)threads > job.n_chunks)
        threads = job.n_chunks ? (int)job.n_chunks : 1;
    job.atomic = threads > 1;

    if (sbf_run_threads(threads, build_worker, &job) != SBF_OK)
        return sbf_error(SBF_E_NOMEM, "out of memory starting build threads");
    if (job.status != SBF_OK)
        return sbf_error(job.status, "out of memory in a build thread");
    sbf_target_stats(idx, t);
    return SBF_OK;
}
