/* sbf_mask.c -- k-mers of other sequences left out of a target (see sbf_mask.h). */
#include <stdlib.h>
#include <string.h>

#include "sbf_error.h"
#include "sbf_kmer.h"
#include "sbf_mask.h"
#include "sbf_mem.h"

/* A canonical k-mer is never all ones (its reverse complement would be all zeros, and smaller). */
#define SET_EMPTY (~0ull)

struct sbf_mask {
    int k;
    sbf_index_t *bloom;   /* a mask of more than SBF_MASK_EXACT_MAX k-mers: a filter */
    uint64_t *keys;       /* else the canonical k-mers, open addressing (SET_EMPTY: a free slot) */
    uint64_t slots;       /* a power of 2: at least 8 times the k-mers up to SET_ROOMY_MAX, else 2 */
    unsigned shift;       /* 64 - log2(slots) */
    uint64_t *sieve;      /* sets of up to SET_ROOMY_MAX k-mers: 2^SIEVE_LOG2 bits, one set per k-mer */
};

/* Sets of up to this many k-mers get 8 slots a k-mer (256 KiB at most), larger ones 2 (16 MiB at
 * SBF_MASK_EXACT_MAX): every k-mer of a 3 Gbp target is looked up, nearly all absent, and at a
 * load of 1/8 the first slot looked at is free 7 times in 8, in a table the L1/L2 cache holds
 * (the layer's 221 adapter 21-mers: 2,048 slots, 16 KiB). */
#define SET_ROOMY_MAX 4096u

/* Before the table, a small set's k-mers are looked up in a bitmap of 2^SIEVE_LOG2 bits (8 KiB,
 * one bit a k-mer, from other bits of the hash than the table's slot): with the layer's 221
 * adapter 21-mers, 0.3% of a genome's k-mers pass it, so the branch on it is all but always
 * taken the same way, where the table's first slot (free 7 times in 8) mispredicted one k-mer
 * in 8. The k=21 layer's masking of 3.06 Gbp spent 1.6 of its 2.7 s on the lookups. */
#define SIEVE_LOG2 16u
static inline uint64_t sieve_bit(uint64_t key) { return (key * 0xC2B2AE3D27D4EB4Full) >> (64 - SIEVE_LOG2); }

/* The slot holding key, or the free slot where it would go (linear probing from a
 * multiplicative hash: one multiply; which slot a key takes changes nothing but the speed). */
static inline uint64_t set_find(const sbf_mask_t *m, uint64_t key)
{
    uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> m->shift;
    while (m->keys[i] != key && m->keys[i] != SET_EMPTY)
        i = (i + 1) & (m->slots - 1);
    return i;
}

/* Every valid canonical k-mer of codes[0..len) into the set (a k-mer spans no code 4). */
static void set_add_all(sbf_mask_t *m, const uint8_t *codes, uint64_t len)
{
    const unsigned k = (unsigned)m->k;
    const uint64_t kmask = sbf_mask(k);
    sbf_roll_t r = {0, 0};
    unsigned have = 0;   /* bases since the last non-base */
    for (uint64_t j = 0; j < len; ++j) {
        const unsigned c = codes[j];
        if (c > 3) {
            have = 0;
            continue;
        }
        sbf_roll_push(&r, c, kmask, 2 * (k - 1));
        if (++have < k)
            continue;
        const uint64_t key = sbf_roll_canonical(&r);
        m->keys[set_find(m, key)] = key;
        if (m->sieve) {
            const uint64_t b = sieve_bit(key);
            m->sieve[b >> 6] |= 1ull << (b & 63);
        }
    }
}

/* Whether the exact set holds key (the sieve first, where the set has one). */
static inline int set_has(const sbf_mask_t *m, uint64_t key)
{
    if (m->sieve) {
        const uint64_t b = sieve_bit(key);
        if (__builtin_expect(!((m->sieve[b >> 6] >> (b & 63)) & 1), 1))
            return 0;
    }
    return m->keys[set_find(m, key)] == key;
}

int sbf_mask_build(const sbf_params_t *p, const sbf_seqbuf_t *const *seq, int n, int threads, sbf_mask_t **out)
{
    *out = NULL;
    uint64_t kmers = 0;
    for (int i = 0; i < n; ++i)   /* the sequences were read for another k, perhaps */
        kmers += sbf_seqbuf_kmers(seq[i], p->k, threads);
    sbf_mask_t *m = calloc(1, sizeof *m);
    if (!m)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    m->k = p->k;
    int rc = SBF_OK;
    if (kmers <= SBF_MASK_EXACT_MAX) {
        const uint64_t per = kmers <= SET_ROOMY_MAX ? 8 : 2;
        m->shift = 64 - 10;
        for (m->slots = 1024; m->slots < per * kmers; m->slots *= 2)
            --m->shift;
        if (!(m->keys = malloc(m->slots * sizeof *m->keys))) {
            free(m);
            return sbf_error(SBF_E_NOMEM, "out of memory");
        }
        memset(m->keys, 0xff, m->slots * sizeof *m->keys);   /* SET_EMPTY */
        if (kmers <= SET_ROOMY_MAX && !(m->sieve = calloc((size_t)1 << SIEVE_LOG2 >> 6, sizeof *m->sieve))) {
            sbf_mask_free(m);
            return sbf_error(SBF_E_NOMEM, "out of memory");
        }
        for (int i = 0; i < n; ++i)
            set_add_all(m, seq[i]->codes, seq[i]->len);
        *out = m;
        return SBF_OK;
    }
    if (!(m->bloom = sbf_idx_new(p))) {
        free(m);
        return sbf_error(SBF_E_NOMEM, "out of memory");
    }
    rc = sbf_idx_add_target(m->bloom, "mask", sbf_shards_for(p, kmers, SBF_MASK_BITS_PER_KMER));
    if (rc >= 0) {
        rc = SBF_OK;
        /* bits are only ever ORed: several sequences build one filter */
        for (int i = 0; i < n && rc == SBF_OK; ++i)
            rc = sbf_build_target(m->bloom, &m->bloom->targets[0], seq[i]->codes, seq[i]->len, threads);
    }
    if (rc != SBF_OK) {
        sbf_mask_free(m);
        return rc;
    }
    *out = m;
    return SBF_OK;
}

static int key_order(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int sbf_mask_sorted_keys(const sbf_mask_t *m, uint64_t **keys, uint64_t *n)
{
    *keys = NULL;
    *n = 0;
    if (!m->keys)
        return SBF_OK;
    uint64_t count = 0;
    for (uint64_t i = 0; i < m->slots; ++i)
        count += m->keys[i] != SET_EMPTY;
    uint64_t *k = malloc((count ? count : 1) * sizeof *k);
    if (!k)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    for (uint64_t i = 0; i < m->slots; ++i)
        if (m->keys[i] != SET_EMPTY)
            k[(*n)++] = m->keys[i];
    qsort(k, (size_t)*n, sizeof *k, key_order);
    *keys = k;
    return SBF_OK;
}

void sbf_mask_free(sbf_mask_t *m)
{
    if (!m)
        return;
    sbf_idx_free(m->bloom);
    free(m->keys);
    free(m->sieve);
    free(m);
}

/* Bit q of held from the n positions start .. start + n - 1 (start a multiple of 64: chunks
 * share no word), one at a time, each word ORed in once: when full, or at the last position. */
typedef struct {
    uint64_t *held, word, last;
} held_writer_t;

static inline void held_put(held_writer_t *w, uint64_t q, int bit)
{
    w->word |= (uint64_t)bit << (q & 63);
    if ((q & 63) == 63 || q == w->last) {
        w->held[q >> 6] |= w->word;
        w->word = 0;
    }
}

/* Mark in held the n k-mers from codes[start] (a multiple of 64) that the exact set holds. */
static void set_mark(const sbf_mask_t *m, const uint8_t *codes, uint64_t start, uint64_t n, uint64_t *held)
{
    const unsigned k = (unsigned)m->k;
    const uint64_t kmask = sbf_mask(k);
    sbf_roll_t r = {0, 0};
    unsigned have = 0;
    held_writer_t w = {held, 0, start + n - 1};
    for (uint64_t j = start; j < start + n + k - 1; ++j) {
        const unsigned c = codes[j];
        have = c > 3 ? 0 : have + 1;
        sbf_roll_push(&r, c & 3, kmask, 2 * (k - 1));
        if (j + 1 < start + k)
            continue;
        const uint64_t key = sbf_roll_canonical(&r);   /* the k-mer ending at j */
        held_put(&w, j + 1 - k, have >= k && set_has(m, key));
    }
}

typedef struct {
    const sbf_mask_t *mask;   /* or NULL */
    unsigned k, dust_min;
    const uint8_t *codes;
    uint64_t len, n_chunks;
    uint64_t *held;   /* bit p: the k-mer at p is in the mask or of low complexity */
    uint64_t *size;   /* per chunk: bytes of its records, a separator after each (then offsets) */
    uint64_t *kept, *dropped;   /* per chunk: valid k-mers kept and left out */
    uint8_t *out;     /* the second pass writes each chunk's records at its offset */
    uint64_t next;    /* next chunk, taken atomically */
    int status;
} mask_job_t;

/* The k-mer start positions [*start, *start + *n) of chunk c */
static void chunk_range(const mask_job_t *job, uint64_t c, uint64_t *start, uint64_t *n)
{
    *start = c * SBF_MASK_CHUNK;
    uint64_t end = *start + SBF_MASK_CHUNK + job->k - 1;
    if (end > job->len)
        end = job->len;
    *n = end - *start - job->k + 1;
}

/* One record: the bases of kept k-mers first .. first + run - 1 and a separator, written at
 * out + bytes when out is not NULL; its bytes. */
static uint64_t put_record(uint8_t *out, uint64_t bytes, const uint8_t *codes, uint64_t first, uint64_t run, uint64_t k)
{
    if (out) {
        memcpy(out + bytes, codes + first, run + k - 1);
        out[bytes + run + k - 1] = 4;
    }
    return run + k;
}

/* Bit i: codes[from + i] is not a base (or lies at or past len), for i < 64. Most words of a
 * genome hold no N: eight bytes at a time tell so (a base's code is 0..3). */
static uint64_t nonbase_word(const uint8_t *codes, uint64_t from, uint64_t len)
{
    if (from + 64 <= len) {
        uint64_t any = 0;
        for (int j = 0; j < 64; j += 8) {
            uint64_t x;
            memcpy(&x, codes + from + j, 8);
            any |= x;
        }
        if (!(any & 0xFCFCFCFCFCFCFCFCull))
            return 0;
    }
    uint64_t w = 0;
    for (uint64_t j = 0; j < 64; ++j)
        if (from + j >= len || codes[from + j] > 3)
            w |= 1ull << j;
    return w;
}

/* The records of chunk c: each maximal stretch of kept k-mers (valid, not held) within the
 * chunk, its bases and a separator (code 4) after it; written at out when out is not NULL.
 * Stretches end at the chunk's edges: the records differ with the chunking (fixed, not the
 * thread count) but their k-mers, all that building reads, do not. Returns the bytes.
 * 64 positions a step (chunks start on a word of the bitmap): a k-mer at q is valid when no bit
 * of the non-base words covers q .. q + k - 1, so a word's 64 k-mers need that word and the
 * next; a word of only kept k-mers lengthens the stretch at once. */
static uint64_t chunk_records(mask_job_t *job, uint64_t c, uint8_t *out)
{
    const uint64_t k = job->k;
    const uint8_t *codes = job->codes;
    uint64_t start, n;
    chunk_range(job, c, &start, &n);
    uint64_t bytes = 0, first = 0, run = 0, kept = 0, dropped = 0;
    uint64_t nb_next = nonbase_word(codes, start, job->len);
    const unsigned __int128 kmask = ((unsigned __int128)1 << k) - 1;   /* k <= SBF_MAX_K = 32 */
    for (uint64_t w0 = start; w0 < start + n; w0 += 64) {
        const uint64_t nb = nb_next;
        nb_next = nonbase_word(codes, w0 + 64, job->len);
        const unsigned m = start + n - w0 < 64 ? (unsigned)(start + n - w0) : 64;
        const uint64_t live = m == 64 ? ~0ull : (1ull << m) - 1;
        uint64_t valid = live;
        if (nb | nb_next) {
            const unsigned __int128 both = (unsigned __int128)nb_next << 64 | nb;
            valid = 0;
            for (unsigned i = 0; i < m; ++i)
                valid |= (uint64_t)!((both >> i) & kmask) << i;
        }
        const uint64_t held = job->held[w0 >> 6];
        const uint64_t keep = valid & ~held & live;
        dropped += (uint64_t)__builtin_popcountll(valid & held & live);
        kept += (uint64_t)__builtin_popcountll(keep);
        if (keep == live) {   /* the usual word: the stretch goes on */
            if (run++ == 0)
                first = w0;
            run += m - 1;
            continue;
        }
        for (unsigned i = 0; i < m;) {
            const uint64_t rest = keep >> i;   /* i < 64 */
            if (rest & 1) {   /* kept k-mers from i on */
                const unsigned ones = ~rest ? (unsigned)__builtin_ctzll(~rest) : 64 - i;
                const unsigned take = ones < m - i ? ones : m - i;
                if (run == 0)
                    first = w0 + i;
                run += take;
                i += take;
            } else {   /* not kept from i on: the stretch before ends */
                if (run) {
                    bytes += put_record(out, bytes, codes, first, run, k);
                    run = 0;
                }
                i = rest ? i + (unsigned)__builtin_ctzll(rest) : m;
            }
        }
    }
    if (run)
        bytes += put_record(out, bytes, codes, first, run, k);
    job->kept[c] = kept;
    job->dropped[c] = dropped;
    return bytes;
}

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

/* One base into the rolling trinucleotide: the trinucleotide that ends with it (0..63), or 64
 * while one of its three bases is not a base (*nonbase: how many more steps that lasts). */
static inline unsigned tri_roll(unsigned *tri, unsigned *nonbase, unsigned c)
{
    *tri = (*tri << 2 | (c & 3)) & 63;
    *nonbase = c > 3 ? 3 : *nonbase ? *nonbase - 1 : 0;
    return *nonbase ? 64 : *tri;
}

/* Mark in held the n k-mers from codes[start] (a multiple of 64) whose DUST score reaches
 * min: the score of each window follows from the last by one trinucleotide out and one in. The
 * trinucleotides entering are rolled from the bases (one shift a base) and kept in a ring for
 * the step they leave. */
static void dust_mark(const uint8_t *codes, uint64_t start, uint64_t n, unsigned k, unsigned min, uint64_t *held)
{
    if (k < 3)   /* no trinucleotide: every score is 0, below any min (>= 1) */
        return;
    uint8_t count[65] = {0}, ring[64];   /* ring[j & 63]: the trinucleotide at start + j; k - 2 < 64 */
    unsigned score = 0, tri = 0, nonbase = 3;
    /* the first window: the trinucleotides start .. start + k - 3, each known once its third
     * base is read */
    for (uint64_t j = start; j < start + k; ++j) {
        const unsigned t = tri_roll(&tri, &nonbase, codes[j]);
        if (j >= start + 2) {
            ring[(j - 2 - start) & 63] = (uint8_t)t;
            if (t < 64)
                score += count[t]++;
        }
    }
    held_writer_t w = {held, 0, start + n - 1};
    for (uint64_t q = start;; ++q) {
        held_put(&w, q, score >= min);
        if (q == w.last)
            break;
        /* the window moves to q + 1: the trinucleotide at q leaves, the one at q + k - 2 comes */
        const unsigned out = ring[(q - start) & 63];
        const unsigned in = tri_roll(&tri, &nonbase, codes[q + k]);
        ring[(q + k - 2 - start) & 63] = (uint8_t)in;
        if (out < 64)
            score -= --count[out];
        if (in < 64)
            score += count[in]++;
    }
}

/* First pass, chunk by chunk: the held k-mers, then the size of the chunk's records. */
static void *mask_worker(void *arg)
{
    mask_job_t *job = arg;
    const sbf_index_t *bloom = job->mask ? job->mask->bloom : NULL;
    sbf_scan_t *sc = bloom ? malloc(sizeof *sc) : NULL;
    uint8_t *presence = bloom ? malloc(SBF_MASK_CHUNK) : NULL;
    if (bloom && (!sc || !presence)) {
        __atomic_store_n(&job->status, SBF_E_NOMEM, __ATOMIC_RELAXED);
        free(sc);
        free(presence);
        return NULL;
    }
    for (;;) {
        const uint64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        uint64_t start, n;
        chunk_range(job, c, &start, &n);
        if (job->mask && !bloom)
            set_mark(job->mask, job->codes, start, n, job->held);
        if (bloom) {
            uint64_t n_kmers, hits;
            sbf_query_seq(bloom, sc, sbf_nt4_identity, job->codes + start, n + job->k - 1, &n_kmers, &hits,
                          presence);
            for (uint64_t i = 0; i < n; ++i)
                if (presence[i])
                    job->held[(start + i) >> 6] |= 1ULL << ((start + i) & 63);
        }
        if (job->dust_min)
            dust_mark(job->codes, start, n, job->k, job->dust_min, job->held);
        job->size[c] = chunk_records(job, c, NULL);
    }
    free(sc);
    free(presence);
    return NULL;
}

/* Second pass: each chunk's records at its offset (job->size now holds the offsets). */
static void *copy_worker(void *arg)
{
    mask_job_t *job = arg;
    for (;;) {
        const uint64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        chunk_records(job, c, job->out + job->size[c]);
    }
    return NULL;
}

/* The first pass of sbf_mask_apply and sbf_mask_hold: *job set up (every field) and run, its
 * held bitmap (*held_bytes of it) and per-chunk sizes and counts filled, *kept and *dropped the
 * counts' sums, *threads cut to what a pass over the chunks can use; SBF_OK or an error (the
 * caller frees the job with mask_job_free either way). `in` holds at least k bases. */
static int mask_job_run(mask_job_t *job, const sbf_mask_t *mask, uint64_t k, unsigned dust_min, const sbf_seqbuf_t *in,
                        int *threads, uint64_t *held_bytes, uint64_t *kept, uint64_t *dropped)
{
    const uint64_t positions = in->len - k + 1;
    *job = (mask_job_t){mask, (unsigned)k, dust_min, in->codes, in->len, (positions + SBF_MASK_CHUNK - 1) / SBF_MASK_CHUNK,
                        NULL, NULL, NULL, NULL, NULL, 0, SBF_OK};
    const size_t per_chunk = (size_t)job->n_chunks * sizeof(uint64_t);
    /* a word of zeros after the last: sbf_build_target_held reads 64 positions from any one */
    *held_bytes = ((positions + 63) / 64 + 1) * sizeof *job->held;
    /* zeros, mapped when large (a human genome's: 390 MB, faulted 2 MiB at a time) */
    if (!(job->held = sbf_filter_alloc(*held_bytes)) || !(job->size = malloc(per_chunk)) ||
        !(job->kept = malloc(per_chunk)) || !(job->dropped = malloc(per_chunk)))
        return sbf_error(SBF_E_NOMEM, "out of memory masking %llu k-mers", (unsigned long long)positions);
    if (*threads < 1)
        *threads = 1;
    if ((uint64_t)*threads > job->n_chunks)
        *threads = (int)job->n_chunks;
    sbf_run_threads(*threads, mask_worker, job);
    if (job->status != SBF_OK)
        return sbf_error(job->status, "out of memory in a mask thread");
    *kept = *dropped = 0;
    for (uint64_t c = 0; c < job->n_chunks; ++c) {
        *kept += job->kept[c];
        *dropped += job->dropped[c];
    }
    return SBF_OK;
}

static void mask_job_free(mask_job_t *job, uint64_t held_bytes)
{
    sbf_filter_free(job->held, held_bytes);
    free(job->size);
    free(job->kept);
    free(job->dropped);
}

int sbf_mask_apply(const sbf_mask_t *mask, int k_given, unsigned dust_min, const sbf_seqbuf_t *in, int threads,
                   sbf_seqbuf_t *out, uint64_t *left_out)
{
    const uint64_t k = (uint64_t)(mask ? mask->k : k_given);
    *left_out = 0;
    if (in->len < k)
        return SBF_OK;
    mask_job_t job;
    uint64_t held_bytes = 0, out_cap = 0, kept = 0, dropped = 0;
    int out_mapped = 0;
    int rc = mask_job_run(&job, mask, k, dust_min, in, &threads, &held_bytes, &kept, &dropped);
    if (rc != SBF_OK)
        goto done;
    /* sizes to offsets; the records' bytes, less the separator after the last */
    uint64_t bytes = 0;
    for (uint64_t c = 0; c < job.n_chunks; ++c) {
        const uint64_t size = job.size[c];
        job.size[c] = bytes;
        bytes += size;
    }
    if (bytes > 0) {
        if ((rc = sbf_buf_reserve(&job.out, &out_cap, &out_mapped, bytes, "masked sequence")) != SBF_OK)
            goto done;
        job.next = 0;
        sbf_run_threads(threads, copy_worker, &job);
        sbf_seqbuf_free(out);
        out->codes = job.out;
        out->cap = out_cap;
        out->mapped = out_mapped;
        out->len = bytes - 1;
        out->kmers = kept;
        out->run = 0;   /* a record appended next starts after a separator of its own */
        job.out = NULL;
    }
    out->bases = 0;
    *left_out = dropped;
done:
    sbf_buf_free(job.out, out_cap, out_mapped);
    mask_job_free(&job, held_bytes);
    return rc;
}

int sbf_mask_hold(const sbf_mask_t *mask, int k_given, unsigned dust_min, const sbf_seqbuf_t *in, int threads,
                  sbf_held_t *held, uint64_t *kept, uint64_t *left_out)
{
    const uint64_t k = (uint64_t)(mask ? mask->k : k_given);
    *held = (sbf_held_t){NULL, 0};
    *kept = *left_out = 0;
    if (in->len < k)
        return SBF_OK;
    mask_job_t job;
    uint64_t held_bytes = 0;
    int rc = mask_job_run(&job, mask, k, dust_min, in, &threads, &held_bytes, kept, left_out);
    if (rc == SBF_OK) {
        *held = (sbf_held_t){job.held, held_bytes};
        job.held = NULL;   /* the caller's now */
    }
    mask_job_free(&job, held_bytes);
    return rc;
}

void sbf_held_free(sbf_held_t *held)
{
    sbf_filter_free(held->bits, held->bytes);
    *held = (sbf_held_t){NULL, 0};
}
