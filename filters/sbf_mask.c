/* sbf_mask.c -- k-mers of other sequences left out of a target (see sbf_mask.h). */
#include <stdlib.h>
#include <string.h>

#include "sbf_error.h"
#include "sbf_mask.h"

int sbf_mask_build(const sbf_params_t *p, const sbf_seqbuf_t *const *seq, int n, int threads, sbf_index_t **out)
{
    *out = NULL;
    uint64_t kmers = 0;
    for (int i = 0; i < n; ++i)   /* the sequences were read for another k, perhaps */
        kmers += sbf_seqbuf_kmers(seq[i], p->k);
    sbf_index_t *idx = sbf_idx_new(p);
    if (!idx)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    int rc = sbf_idx_add_target(idx, "mask", sbf_shards_for(p, kmers, SBF_MASK_BITS_PER_KMER));
    if (rc >= 0) {
        rc = SBF_OK;
        /* bits are only ever ORed: several sequences build one filter */
        for (int i = 0; i < n && rc == SBF_OK; ++i)
            rc = sbf_build_target(idx, &idx->targets[0], seq[i]->codes, seq[i]->len, threads);
    }
    if (rc != SBF_OK) {
        sbf_idx_free(idx);
        return rc;
    }
    *out = idx;
    return SBF_OK;
}

/* k-mer start positions per chunk a thread queries; a multiple of 64 so that chunks never share
 * a word of the bitmap */
#define MASK_CHUNK (1u << 20)

typedef struct {
    const sbf_index_t *mask;   /* or NULL */
    unsigned k, dust_min;
    const uint8_t *codes;
    uint64_t len, n_chunks;
    uint64_t *held;   /* bit p: the k-mer at p is in the mask (or not a valid k-mer) */
    uint64_t next;    /* next chunk, taken atomically */
    int status;
} mask_job_t;

/* Trinucleotide at codes[0..2] (0..63), or 64 when one is not a base. */
static unsigned trinucleotide(const uint8_t *c)
{
    return c[0] < 4 && c[1] < 4 && c[2] < 4 ? (unsigned)c[0] << 4 | (unsigned)c[1] << 2 | c[2] : 64u;
}

unsigned sbf_kmer_dust(const uint8_t *codes, unsigned k)
{
    uint8_t count[65] = {0};
    unsigned score = 0;
    for (unsigned j = 0; j + 3 <= k; ++j) {
        unsigned t = trinucleotide(codes + j);
        if (t < 64)
            score += count[t]++;
    }
    return score;
}

/* Mark in held the n k-mers from codes[start] whose DUST score reaches min: the score of each
 * window follows from the last by one trinucleotide out and one in. */
static void dust_mark(const uint8_t *codes, uint64_t start, uint64_t n, unsigned k, unsigned min, uint64_t *held)
{
    uint8_t count[65] = {0};
    unsigned score = 0;
    for (uint64_t j = start; j + 3 <= start + k; ++j) {
        unsigned t = trinucleotide(codes + j);
        if (t < 64)
            score += count[t]++;
    }
    for (uint64_t i = 0; i < n; ++i) {
        if (score >= min)
            held[(start + i) >> 6] |= 1ULL << ((start + i) & 63);   /* chunks share no word */
        if (i + 1 == n)
            break;
        unsigned out = trinucleotide(codes + start + i), in = trinucleotide(codes + start + i + k - 2);
        if (out < 64)
            score -= --count[out];
        if (in < 64)
            score += count[in]++;
    }
}

static void *mask_worker(void *arg)
{
    mask_job_t *job = arg;
    const uint64_t k = job->k;
    sbf_scan_t *sc = job->mask ? malloc(sizeof *sc) : NULL;
    uint8_t *presence = job->mask ? malloc(MASK_CHUNK) : NULL;
    if (job->mask && (!sc || !presence)) {
        __atomic_store_n(&job->status, SBF_E_NOMEM, __ATOMIC_RELAXED);
        free(sc);
        free(presence);
        return NULL;
    }
    for (;;) {
        const uint64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        const uint64_t start = c * MASK_CHUNK;
        uint64_t end = start + MASK_CHUNK + k - 1;
        if (end > job->len)
            end = job->len;
        const uint64_t n = end - start - k + 1;
        if (job->mask) {
            uint64_t n_kmers, hits;
            sbf_query_seq(job->mask, sc, sbf_nt4_identity, job->codes + start, end - start, &n_kmers, &hits, presence);
            for (uint64_t i = 0; i < n; ++i)
                if (presence[i])
                    job->held[(start + i) >> 6] |= 1ULL << ((start + i) & 63);
        }
        if (job->dust_min)
            dust_mark(job->codes, start, n, (unsigned)k, job->dust_min, job->held);
    }
    free(sc);
    free(presence);
    return NULL;
}

int sbf_mask_apply(const sbf_index_t *mask, int k_given, unsigned dust_min, const sbf_seqbuf_t *in, int threads,
                   sbf_seqbuf_t *out, uint64_t *left_out)
{
    const uint64_t k = (uint64_t)(mask ? mask->params.k : k_given);
    *left_out = 0;
    if (in->len < k)
        return SBF_OK;
    const uint64_t positions = in->len - k + 1;
    mask_job_t job = {mask, (unsigned)k, dust_min, in->codes, in->len, (positions + MASK_CHUNK - 1) / MASK_CHUNK,
                      NULL, 0, SBF_OK};
    if (!(job.held = calloc((positions + 63) / 64, sizeof *job.held)))
        return sbf_error(SBF_E_NOMEM, "out of memory masking %llu k-mers", (unsigned long long)positions);
    if (threads < 1)
        threads = 1;
    if ((uint64_t)threads > job.n_chunks)
        threads = (int)job.n_chunks;
    if (sbf_run_threads(threads, mask_worker, &job) != SBF_OK) {
        free(job.held);
        return sbf_error(SBF_E_NOMEM, "out of memory starting mask threads");
    }
    int rc = job.status == SBF_OK ? SBF_OK : sbf_error(job.status, "out of memory in a mask thread");

    /* each maximal stretch of kept k-mers [first, p) becomes one record of bases
     * [first, p + k - 1); a k-mer is kept when it is valid and the mask does not hold it */
    uint64_t run = 0, first = 0, kept = 0, dropped = 0;
    for (uint64_t p = 0; p < in->len && rc == SBF_OK; ++p) {
        run = in->codes[p] < 4 ? run + 1 : 0;
        if (p + 1 < k)
            continue;
        const uint64_t q = p + 1 - k;   /* the k-mer ending at p starts at q */
        const int valid = run >= k, held = (int)(job.held[q >> 6] >> (q & 63) & 1);
        if (valid && held)
            ++dropped;
        if (valid && !held) {
            if (kept == 0)
                first = q;
            ++kept;
            continue;
        }
        if (kept) {
            rc = sbf_seqbuf_append(out, sbf_nt4_identity, in->codes + first, kept + k - 1, (int)k);
            kept = 0;
        }
    }
    if (kept && rc == SBF_OK)
        rc = sbf_seqbuf_append(out, sbf_nt4_identity, in->codes + first, kept + k - 1, (int)k);
    free(job.held);
    if (rc != SBF_OK)
        return rc;
    out->bases = 0;
    *left_out = dropped;
    return SBF_OK;
}
