/* sbf_plain.c -- plain copies of the targets of wide panels, for the CPU's queries.
 *
 * A wide panel interleaves its targets bit by bit (bit b of a shard, column c at (b << lw) + c),
 * which lets a GPU warp read every target's bit in one load; on the CPU each tested bit of one
 * target then lies in another cache line: a run of a 16-column panel touches 16 lines where a
 * plain filter touches one. Human chr20 beside E. coli forms such a panel (12 + 1 of 16
 * columns), and the CPU engine classified at half the rate of the same genomes as plain filters
 * (issue 27 d6). The CPU engine therefore queries plain copies of those targets, made once per
 * index: the same bits in the build's layout, so the same answers. Every wide panel of up to
 * SBF_PLAIN_COPY_ANY bytes is copied: with the copies on 64-byte lines (they were not, once,
 * and then lost to the panels), the 21 bacteria of bench/panel.sh in 64 + 32 columns classified
 * 50,000 random and 50,000 S. aureus reads in 2.9-3.2 s through copies against 4.0-5.3 s
 * through the panels (`classify -@1`, the VM), copies made included. A larger panel is copied
 * only when a run touches more of its lines (its width / 8 of them, 512-bit shards) than it has
 * members: its copy costs its size in memory and a pass over it on every run.
 *
 * The build goes the other way (sbf_panel_put): a target of a wide panel is built plain, then
 * put into its columns by the same transposes on the build's threads. Bit by bit on one thread,
 * that put took about 3 s of each layer of a 263 Mbp host beside E. coli (12 + 1 of 16 columns)
 * on the 2-core VM: the build took twice the time of the host alone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sbf_build.h"
#include "sbf_error.h"
#include "sbf_index.h"

/* Panel shard rows per chunk a thread takes */
#define PLAIN_CHUNK_ROWS 4096u

typedef struct {
    const sbf_index_t *idx;
    const sbf_panel_t *pn;
    uint64_t **copy;             /* per target of the index */
    int owner[64];               /* per column: the target, or -1 */
    uint64_t next;               /* the next chunk of rows (next_rows), taken atomically */
} plain_job_t;

/* a[i] bit j <-> a[j] bit i: blocks of 32, 16, ... 1 bits swapped across the diagonal. Inlined
 * into both workers, as it was into the one before the put had its own (then gcc made it a call). */
static inline __attribute__((always_inline)) void transpose64(uint64_t a[64])
{
    uint64_t m = 0x00000000FFFFFFFFULL;   /* the columns c with (c & j) == 0 */
    for (unsigned j = 32; j; j >>= 1, m ^= m << j)
        for (unsigned k = 0; k < 64; k = (k + j + 1) & ~j) {
            const uint64_t t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k] ^= t << j;
            a[k + j] ^= t;
        }
}

/* A wide panel's layout as the transposes see it: W = 2^lw columns, a shard row of
 * row_words words, G words of each column per 64 x 64 block (64 / W positions per panel word). */
typedef struct {
    unsigned lw, W, words, shard_bits, G;
    uint64_t row_words, field;   /* field: W ones, one position's columns */
} panel_geom_t;

static panel_geom_t panel_geom(const sbf_index_t *idx, const sbf_panel_t *pn)
{
    panel_geom_t g;
    g.lw = pn->log2_width;
    g.W = 1u << g.lw;
    g.words = sbf_params_shard_words(&idx->params);
    g.shard_bits = (unsigned)idx->params.shard_bits;
    g.G = 64 / g.W < g.words ? 64 / g.W : g.words;
    g.row_words = (uint64_t)g.words << g.lw;
    g.field = g.W == 64 ? ~0ULL : (1ULL << g.W) - 1;
    return g;
}

/* The next PLAIN_CHUNK_ROWS shard rows of a panel of n_shards rows, from the counter *next
 * shared by the threads: rows [*first, *end), or 0 when every chunk is taken. */
static int next_rows(uint64_t *next, uint64_t n_shards, uint64_t *first, uint64_t *end)
{
    const uint64_t c = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
    if (c * PLAIN_CHUNK_ROWS >= n_shards)
        return 0;
    *first = c * PLAIN_CHUNK_ROWS;
    *end = *first + PLAIN_CHUNK_ROWS < n_shards ? *first + PLAIN_CHUNK_ROWS : n_shards;
    return 1;
}

/* The threads for a pass over n_shards rows: `threads`, or one when there are fewer chunks of
 * rows than threads. */
static int row_threads(int threads, uint64_t n_shards)
{
    const uint64_t chunks = (n_shards + PLAIN_CHUNK_ROWS - 1) / PLAIN_CHUNK_ROWS;
    return threads < 1 || (uint64_t)threads > chunks ? 1 : threads;
}

/* Each panel shard, G x 64 of its bit positions at a time: row i of a 64 x 64 bit matrix holds
 * the W column bits of positions i, 64 + i, ..., (G - 1) x 64 + i side by side (G = 64 / W
 * groups, at most the shard's 64-bit words), so that after the transpose word g x W + c is 64
 * bits of column c's plain shard: one transpose per G words of each column, not per word (a
 * 16-column panel, chr20 beside E. coli, took a fifth of a 2-thread run's CPU time copying). */
static void *plain_worker(void *arg)
{
    plain_job_t *job = arg;
    const sbf_index_t *idx = job->idx;
    const sbf_panel_t *pn = job->pn;
    const panel_geom_t pg = panel_geom(idx, pn);
    const unsigned lw = pg.lw, W = pg.W, words = pg.words, G = pg.G;
    uint64_t first, end;
    while (next_rows(&job->next, pn->n_shards, &first, &end)) {
        for (uint64_t s = first; s < end; ++s) {
            uint64_t *dst[64];   /* each column's plain shard */
            for (unsigned col = 0; col < W; ++col) {
                const int r = job->owner[col];
                dst[col] = NULL;
                if (r >= 0) {
                    const sbf_target_t *t = &idx->targets[r];
                    dst[col] = job->copy[r] + (s * t->cols + (col - t->col0)) * words;
                }
            }
            const uint64_t *src = pn->bits + s * pg.row_words;
            for (unsigned b0 = 0; b0 < pg.shard_bits; b0 += 64 * G) {
                uint64_t a[64];
                for (unsigned i = 0; i < 64; ++i) {
                    a[i] = 0;
                    for (unsigned g = 0; g < G; ++g) {   /* bit position b0 + 64 g + i: its W columns */
                        const uint64_t at = (uint64_t)(b0 + 64 * g + i) << lw;
                        a[i] |= (src[at >> 6] >> (at & 63) & pg.field) << (g * W);
                    }
                }
                transpose64(a);
                for (unsigned g = 0; g < G; ++g)
                    for (unsigned col = 0; col < W; ++col)
                        if (dst[col])
                            dst[col][(b0 >> 6) + g] = a[g * W + col];
            }
        }
    }
    return NULL;
}

/* sbf_panel_put's job: one target's plain filter into its columns of its panel. */
typedef struct {
    const sbf_index_t *idx;
    const sbf_target_t *t;
    const uint64_t *plain;
    uint64_t next;               /* the next chunk of rows (next_rows), taken atomically */
} put_job_t;

/* plain_worker's transpose the other way: word g x W + c of the matrix is 64 bits of column c's
 * plain shard (zero outside the target's columns), so that after the transpose row i holds the
 * W column bits of positions i, 64 + i, ..., (G - 1) x 64 + i: ORed into the panel's words. The
 * threads take disjoint rows of shards; the other targets' columns are ORed with zeros. */
static void *put_worker(void *arg)
{
    put_job_t *job = arg;
    const sbf_target_t *t = job->t;
    const sbf_panel_t *pn = &job->idx->panels[t->panel];
    const panel_geom_t pg = panel_geom(job->idx, pn);
    const unsigned lw = pg.lw, W = pg.W, words = pg.words, G = pg.G;
    uint64_t first, end;
    while (next_rows(&job->next, pn->n_shards, &first, &end)) {
        for (uint64_t s = first; s < end; ++s) {
            const uint64_t *src = job->plain + s * t->cols * words;   /* virtual shards s x cols + j */
            uint64_t *dst = pn->bits + s * pg.row_words;
            for (unsigned b0 = 0; b0 < pg.shard_bits; b0 += 64 * G) {
                uint64_t a[64] = {0};
                for (unsigned g = 0; g < G; ++g)
                    for (unsigned j = 0; j < t->cols; ++j)
                        a[g * W + t->col0 + j] = src[j * words + (b0 >> 6) + g];
                transpose64(a);
                for (unsigned i = 0; i < 64; ++i)
                    for (unsigned g = 0; g < G; ++g) {   /* bit position b0 + 64 g + i: its W columns */
                        const uint64_t at = (uint64_t)(b0 + 64 * g + i) << lw;
                        dst[at >> 6] |= (a[i] >> (g * W) & pg.field) << (at & 63);
                    }
            }
        }
    }
    return NULL;
}

void sbf_panel_put(const sbf_index_t *idx, const sbf_target_t *t, const uint64_t *plain, int threads)
{
    const sbf_panel_t *pn = &idx->panels[t->panel];
    put_job_t job = {idx, t, plain, 0};
    sbf_run_threads(row_threads(threads, pn->n_shards), put_worker, &job);
}

static void copies_free(const sbf_index_t *idx, uint64_t **copy)
{
    for (int r = 0; copy && r < idx->n_targets; ++r)
        sbf_filter_free(copy[r], sbf_target_bytes(idx, &idx->targets[r]));
    free(copy);
}

#define SBF_PLAIN_COPY_ANY ((size_t)1 << 30)

int sbf_panel_copied(const sbf_index_t *idx, const sbf_panel_t *pn)
{
    return pn->log2_width > 0 &&
           (sbf_panel_bytes(idx, pn) <= SBF_PLAIN_COPY_ANY || (unsigned)pn->n_members * 8u <= 1u << pn->log2_width);
}

static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;

int sbf_idx_plain_copies(const sbf_index_t *idx, int threads)
{
    if (__atomic_load_n(&idx->plain, __ATOMIC_ACQUIRE))
        return SBF_OK;
    int wide = 0;
    for (int q = 0; q < idx->n_panels; ++q)
        wide |= sbf_panel_copied(idx, &idx->panels[q]);
    if (!wide)
        return SBF_OK;
    pthread_mutex_lock(&making);   /* one thread makes them; the others wait, then find them */
    int rc = SBF_OK;
    if (__atomic_load_n(&idx->plain, __ATOMIC_ACQUIRE))
        goto done;
    uint64_t **copy = calloc((size_t)idx->n_targets, sizeof *copy);
    if (!copy) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
        goto done;
    }
    for (int r = 0; r < idx->n_targets && rc == SBF_OK; ++r) {
        const sbf_target_t *t = &idx->targets[r];
        if (!sbf_panel_copied(idx, &idx->panels[t->panel]))
            continue;
        /* the filters' allocation: each shard on a cache line of its own (malloc's 16-byte
         * alignment put every 512-bit shard across two lines, the second not prefetched: the
         * CPU engine ran chr20 + E. coli at half the speed of the same genomes as two
         * indexes), huge pages where the kernel gives them */
        if (!(copy[r] = sbf_filter_alloc(sbf_target_bytes(idx, t))))
            rc = sbf_error(SBF_E_NOMEM, "out of memory copying target '%s' for the CPU engine", t->name);
    }
    for (int q = 0; q < idx->n_panels && rc == SBF_OK; ++q) {
        const sbf_panel_t *pn = &idx->panels[q];
        if (!sbf_panel_copied(idx, pn))
            continue;
        plain_job_t job;
        memset(&job, 0, sizeof job);
        job.idx = idx;
        job.pn = pn;
        job.copy = copy;
        for (unsigned col = 0; col < 64; ++col)
            job.owner[col] = -1;
        for (int m = 0; m < pn->n_members; ++m) {
            const sbf_target_t *t = &idx->targets[pn->members[m]];
            for (unsigned col = t->col0; col < t->col0 + t->cols && col < 64; ++col)
                job.owner[col] = pn->members[m];
        }
        sbf_run_threads(row_threads(threads, pn->n_shards), plain_worker, &job);
    }
    if (rc == SBF_OK)
        __atomic_store_n(&((sbf_index_t *)idx)->plain, copy, __ATOMIC_RELEASE);
    else
        copies_free(idx, copy);
done:
    pthread_mutex_unlock(&making);
    return rc;
}

void sbf_idx_plain_free(sbf_index_t *idx)
{
    copies_free(idx, idx->plain);
    idx->plain = NULL;
}
