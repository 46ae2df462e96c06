/* sbf_index.c -- insertion into and queries of the multi-target filter (CPU engine). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sbf_build.h"
#include "sbf_error.h"
#include "sbf_index.h"
#include "sbf_format.h"
#include "sbf_kmer.h"
#include "sbf_mem.h"
#include "sbf_probe.h"
#include "sbf_scan_int.h"

sbf_index_t *sbf_idx_new(const sbf_params_t *p)
{
    sbf_index_t *idx = calloc(1, sizeof *idx);
    if (!idx) {
        sbf_error(SBF_E_NOMEM, "out of memory allocating an index");
        return NULL;
    }
    idx->params = *p;
    return idx;
}

static void target_release(sbf_target_t *t)
{
    free(t->name);
    for (int i = 0; i < t->n_sources; ++i)
        free(t->sources[i]);
    free(t->sources);
    for (int i = 0; i < t->n_masks; ++i)
        free(t->masks[i]);
    free(t->masks);
}

/* A filter's zeroed memory. Large ones are mapped: the kernel's zero pages cost nothing until
 * written, and the threads (or the GPU's copy) that fill the filter fault its pages in, in
 * parallel, instead of one memset on one thread: 2.5 s for the 6.1 GB of a human index on the
 * 2-core VM's memset (issue 27). Huge pages where the kernel gives them: a fault per 2 MiB. */
#define FILTER_MAP_BYTES (2u << 20)
void *sbf_filter_alloc(size_t bytes)
{
    if (bytes >= FILTER_MAP_BYTES)
        return sbf_map_anon(bytes);
    void *p;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
        return NULL;
    memset(p, 0, bytes);
    return p;
}

void sbf_filter_free(void *p, size_t bytes)
{
    if (p && bytes >= FILTER_MAP_BYTES)
        munmap(p, bytes);
    else
        free(p);
}

void sbf_idx_free(sbf_index_t *idx)
{
    if (!idx)
        return;
    if (idx->accel && idx->accel_free)
        idx->accel_free(idx->accel);
    sbf_idx_free(idx->layer);   /* before the unmapping: its filters lie in this one's map */
    free(idx->notice);
    free(idx->clumps);
    sbf_idx_plain_free(idx);
    for (int r = 0; r < idx->n_targets; ++r)
        target_release(&idx->targets[r]);
    free(idx->targets);
    for (int q = 0; q < idx->n_panels; ++q) {
        free(idx->panels[q].members);
        if (idx->panels[q].spill_map)
            munmap(idx->panels[q].spill_map, idx->panels[q].spill_len);
        else if (!idx->in_map)
            sbf_filter_free(idx->panels[q].bits, sbf_panel_bytes(idx, &idx->panels[q]));
    }
    sbf_format_spill_free(idx);
    free(idx->panels);
    if (idx->map)
        munmap(idx->map, idx->map_len);
    free(idx);
}

size_t sbf_target_bytes(const sbf_index_t *idx, const sbf_target_t *t)
{
    return (size_t)t->n_shards * (size_t)idx->params.shard_bits / 8u;
}

size_t sbf_panel_bytes(const sbf_index_t *idx, const sbf_panel_t *pn)
{
    return ((size_t)pn->n_shards * (size_t)idx->params.shard_bits / 8u) << pn->log2_width;
}

uint64_t sbf_shards_for(const sbf_params_t *p, uint64_t kmers, double bits_per_kmer)
{
    double shards = ceil((double)kmers * bits_per_kmer / (double)p->shard_bits);
    return shards < 1.0 ? 1u : (uint64_t)shards;
}

/* shard numbers are 32-bit (sbf_shard_of_key): 256 GiB of 512-bit shards, 1.3e11 k-mers at the
 * default 16 bits per k-mer */
int sbf_check_shards(const char *name, uint64_t n_shards)
{
    if (n_shards <= SBF_MAX_SHARDS)
        return SBF_OK;
    return sbf_error(SBF_E_PARAM, "target '%s': a filter of %llu shards is larger than the 2^32 shards an index holds per target: lower --bits-per-kmer or --size", name,
                     (unsigned long long)n_shards);
}

int sbf_idx_add_panel(sbf_index_t *idx, uint64_t n_shards, unsigned log2_width)
{
    if (n_shards == 0 || n_shards > SBF_MAX_SHARDS || log2_width > SBF_MAX_PANEL_LOG2)
        return sbf_error(SBF_E_PARAM, "invalid panel of %llu shards and 2^%u columns", (unsigned long long)n_shards,
                         log2_width);
    sbf_panel_t *grown = realloc(idx->panels, (size_t)(idx->n_panels + 1) * sizeof *grown);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory adding a panel");
    idx->panels = grown;
    sbf_panel_t *pn = &idx->panels[idx->n_panels];
    memset(pn, 0, sizeof *pn);
    pn->n_shards = n_shards;
    pn->log2_width = log2_width;
    size_t bytes = sbf_panel_bytes(idx, pn);
    if (!(pn->bits = sbf_filter_alloc(bytes)))
        return sbf_error(SBF_E_NOMEM, "out of memory allocating %zu bytes for a filter", bytes);
    return idx->n_panels++;
}

int sbf_idx_add_panel_target(sbf_index_t *idx, const char *name, int panel, unsigned col0, unsigned cols)
{
    if (panel < 0 || panel >= idx->n_panels)
        return sbf_error(SBF_E_PARAM, "target '%s': no panel number %d", name, panel);
    sbf_panel_t *pn = &idx->panels[panel];
    int overlap = cols < 1 || col0 + cols > (1u << pn->log2_width);
    for (int m = 0; m < pn->n_members && !overlap; ++m) {
        const sbf_target_t *o = &idx->targets[pn->members[m]];
        overlap = col0 < o->col0 + o->cols && o->col0 < col0 + cols;
    }
    if (overlap)
        return sbf_error(SBF_E_PARAM, "target '%s': columns %u..%u are not free in a panel of %u", name, col0,
                         col0 + cols - 1, 1u << pn->log2_width);
    if (pn->n_shards * cols > SBF_MAX_SHARDS)
        return sbf_check_shards(name, pn->n_shards * cols);
    sbf_target_t *grown = realloc(idx->targets, (size_t)(idx->n_targets + 1) * sizeof *grown);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory adding target '%s'", name);
    idx->targets = grown;
    sbf_target_t *t = &idx->targets[idx->n_targets];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name)))
        return sbf_error(SBF_E_NOMEM, "out of memory adding target '%s'", name);
    if (!sbf_panel_add_member(pn, idx->n_targets)) {
        free(t->name);
        return sbf_error(SBF_E_NOMEM, "out of memory adding target '%s'", name);
    }
    t->n_shards = pn->n_shards * cols;
    t->clump = -1;
    t->panel = panel;
    t->col0 = col0;
    t->cols = cols;
    t->bits = pn->log2_width == 0 ? pn->bits : NULL;
    return idx->n_targets++;
}

int sbf_panel_add_member(sbf_panel_t *pn, int r)
{
    int *grown = realloc(pn->members, (size_t)(pn->n_members + 1) * sizeof *grown);
    if (!grown)
        return 0;
    pn->members = grown;
    pn->members[pn->n_members++] = r;
    return 1;
}

int sbf_idx_add_target(sbf_index_t *idx, const char *name, uint64_t n_shards)
{
    if (n_shards == 0)
        return sbf_error(SBF_E_PARAM, "target '%s': invalid filter size of 0 shards", name);
    if (n_shards > SBF_MAX_SHARDS)
        return sbf_check_shards(name, n_shards);
    int panel = sbf_idx_add_panel(idx, n_shards, 0);
    if (panel < 0) {
        if (panel == SBF_E_NOMEM)
            return sbf_error(SBF_E_NOMEM, "out of memory allocating %zu bytes for target '%s'",
                             (size_t)n_shards * (size_t)idx->params.shard_bits / 8u, name);
        return panel;
    }
    return sbf_idx_add_panel_target(idx, name, panel, 0, 1);
}

/* Virtual shard v of a panel target: shard v / cols of the panel, column col0 + v % cols
 * (sbf_panel_column), bit by bit: the reference layout (the build's copy in is sbf_plain.c's). */
void sbf_target_extract(const sbf_index_t *idx, const sbf_target_t *t, uint64_t *plain)
{
    const sbf_panel_t *pn = &idx->panels[t->panel];
    const unsigned words = sbf_params_shard_words(&idx->params), lw = pn->log2_width;
    const uint64_t sb = (uint64_t)idx->params.shard_bits;
    memset(plain, 0, sbf_target_bytes(idx, t));
    for (uint64_t v = 0; v < t->n_shards; ++v) {
        const uint64_t s = v / t->cols, col = t->col0 + v % t->cols, row = s * sb;
        for (uint64_t b = 0; b < sb; ++b) {
            const uint64_t at = ((row + b) << lw) + col;
            plain[v * words + b / 64] |= ((pn->bits[at >> 6] >> (at & 63)) & 1) << (b & 63);
        }
    }
}

static int list_add(char ***list, int *n, const char *s)
{
    char **grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    *list = grown;
    if (!(grown[*n] = strdup(s)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    ++*n;
    return SBF_OK;
}

int sbf_target_add_source(sbf_target_t *t, const char *source) { return list_add(&t->sources, &t->n_sources, source); }

int sbf_target_add_mask(sbf_target_t *t, const char *mask) { return list_add(&t->masks, &t->n_masks, mask); }

/* Shard words of each run, computed first so that every shard can be prefetched before the
 * first one is touched: the runs of a window are independent cache misses. */
static inline uint64_t *shard_ptr(const sbf_target_t *t, uint64_t minimizer, unsigned words)
{
    return t->bits + sbf_shard_index((uint32_t)minimizer, t->n_shards) * words;
}

/* The bits of run r's s-mers in its shard: every s-mer once, merged into one mask. */
static inline void run_mask(const sbf_scan_t *sc, uint32_t r, unsigned extra, unsigned H, unsigned log2b,
                            uint64_t mask[8])
{
    for (unsigned q = 0; q < 8; ++q)
        mask[q] = 0;
    const uint64_t *h = sc->smer_hash + sc->runs[r].first;
    const unsigned n_smers = sc->runs[r].n + extra;
    if (H * log2b <= 32) {   /* every field in the hash's 32 bits (sbf_smer_bit without its
                                second word, which the compiler computed for every bit) */
        const uint32_t field = (1u << log2b) - 1u;
        for (unsigned j = 0; j < n_smers; ++j) {
            uint32_t x = (uint32_t)h[j];
            for (unsigned b = 0; b < H; ++b, x >>= log2b) {
                const unsigned bit = x & field;
                mask[bit >> 6] |= 1ULL << (bit & 63);
            }
        }
        return;
    }
    for (unsigned j = 0; j < n_smers; ++j)
        for (unsigned b = 0; b < H; ++b) {
            unsigned bit = sbf_smer_bit((uint32_t)h[j], b, log2b);
            mask[bit >> 6] |= 1ULL << (bit & 63);
        }
}

void sbf_insert_scanned(const sbf_index_t *idx, sbf_target_t *t, const sbf_scan_t *sc)
{
    const sbf_params_t *p = &idx->params;
    const unsigned words = sbf_params_shard_words(p), log2b = sbf_params_shard_log2(p);
    const unsigned H = (unsigned)p->hashes, extra = (unsigned)(p->k - p->s);
    uint64_t **shard = (uint64_t **)sc->shard;

    for (uint32_t r = 0; r < sc->n_runs; ++r) {
        shard[r] = shard_ptr(t, sc->runs[r].minimizer, words);
        sbf_prefetch_for_write(shard[r]);
    }
#if SBF_SCAN_HAVE_SIMD
    if (sbf_runs_avx512(words, H)) {   /* each mask made in a register, ORed as one line */
        for (uint32_t r = 0; r < sc->n_runs; ++r)
            avx512_run_or(shard[r], sc->smer_hash + sc->runs[r].first, sc->runs[r].n + extra, H);
        return;
    }
#endif
    for (uint32_t r = 0; r < sc->n_runs; ++r) {
        uint64_t mask[8];
        run_mask(sc, r, extra, H, log2b, mask);   /* then one OR per word */
        uint64_t *w = shard[r];
        for (unsigned q = 0; q < words; ++q)
            w[q] |= mask[q];
    }
}

void sbf_scanned_runs(const sbf_index_t *idx, const sbf_target_t *t, const sbf_scan_t *sc, sbf_run_sink_t *sink)
{
    const sbf_params_t *p = &idx->params;
    const unsigned words = sbf_params_shard_words(p), log2b = sbf_params_shard_log2(p);
    const unsigned H = (unsigned)p->hashes, extra = (unsigned)(p->k - p->s);
#if SBF_SCAN_HAVE_SIMD
    if (sbf_runs_avx512(words, H)) {   /* one 64-byte store a record: nothing to forward */
        for (uint32_t r = 0; r < sc->n_runs; ++r) {
            const uint64_t shard = sbf_shard_index((uint32_t)sc->runs[r].minimizer, t->n_shards);
            uint64_t *rec = sink->put(sink, shard);
            rec[0] = shard;
            avx512_run_mask(sc->smer_hash + sc->runs[r].first, sc->runs[r].n + extra, H, rec + 1);
        }
        return;
    }
#endif
    /* Each run's record is written one run later, once the next run's mask is made: written at
     * once, the mask's words were read back by 16-byte loads from the 8-byte ORs just stored,
     * which the CPU cannot forward (a stall per run: about a third of this function's time,
     * perf); a run later the stores have reached the cache. */
    uint64_t mask[2][8];
    for (uint32_t r = 0; r <= sc->n_runs; ++r) {
        if (r < sc->n_runs)
            run_mask(sc, r, extra, H, log2b, mask[r & 1]);
        if (r == 0)
            continue;
        const uint64_t shard = sbf_shard_index((uint32_t)sc->runs[r - 1].minimizer, t->n_shards);
        uint64_t *rec = sink->put(sink, shard);
        rec[0] = shard;
        if (words == 8)   /* sizes known here: a copy inline, not a call to memcpy per run */
            memcpy(rec + 1, mask[(r - 1) & 1], 8 * sizeof(uint64_t));
        else
            memcpy(rec + 1, mask[(r - 1) & 1], 4 * sizeof(uint64_t));
    }
}

/* Test the run's s-mers against one shard and count the k-mers whose every s-mer is present.
 * A k-mer at run offset i spans s-mers i..i+k-s: it is present iff the last absent s-mer
 * seen when its final s-mer is tested lies before i. H is a compile-time constant in each
 * instance (probe_run_h), so the bit tests unroll. */
static inline uint32_t probe_run_h(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra,
                                   const unsigned H, unsigned log2b, uint8_t *presence)
{
    int64_t last_absent = -1;
    uint32_t count = 0;
    /* the first k-s s-mers only open the window; from then on each s-mer completes a k-mer
     * (two loops instead of a test per s-mer, which mispredicted at every run) */
    for (unsigned j = 0; j < extra; ++j)
        last_absent = sbf_smer_present(w, h, j, H, log2b) ? last_absent : (int64_t)j;
    for (unsigned i = 0; i < n_kmers; ++i) {
        const unsigned j = i + extra;
        last_absent = sbf_smer_present(w, h, j, H, log2b) ? last_absent : (int64_t)j;
        uint32_t hit = last_absent < (int64_t)i;
        count += hit;
        if (presence)
            presence[i] = (uint8_t)hit;
    }
    return count;
}

static uint32_t probe_run(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra, unsigned H,
                          unsigned log2b, uint8_t *presence)
{
    switch (H) {
    case 1: return probe_run_h(w, h, n_kmers, extra, 1, log2b, presence);
    case 2: return probe_run_h(w, h, n_kmers, extra, 2, log2b, presence);
    case 3: return probe_run_h(w, h, n_kmers, extra, 3, log2b, presence);
    case 4: return probe_run_h(w, h, n_kmers, extra, 4, log2b, presence);
    default: return probe_run_h(w, h, n_kmers, extra, H, log2b, presence);
    }
}

/* One wide panel: every column at once. Each s-mer of a run gives a word of the panel's columns
 * (the AND of its H positions), each k-mer the AND of its k-s+1 s-mers' words, masked to the
 * columns the run's key picks (a one-column target's column, and for a target of several the
 * one sbf_panel_column gives). The masked words are counted per column in bit-sliced counters
 * (one plane per bit of the count: an add costs the carries, about two steps), read out per
 * target once per window: the loads and ANDs of one target for the whole panel, and no work
 * per k-mer and target (a loop over the targets per k-mer cost 1.1 x 10^9 more instructions per
 * 50,000 reads on the 21-genome panel of bench/panel.sh, callgrind). */
static void probe_panel(const sbf_index_t *idx, const sbf_panel_t *pn, sbf_scan_t *sc, uint64_t start,
                        uint64_t *hits, uint8_t *presence, uint64_t row)
{
    const sbf_params_t *p = &idx->params;
    const unsigned log2b = sbf_params_shard_log2(p), lw = pn->log2_width;
    const unsigned H = (unsigned)p->hashes, extra = (unsigned)(p->k - p->s);
    const uint64_t shard_words = (uint64_t)sbf_params_shard_words(p) << lw;
    const int n_members = pn->n_members;
    const uint64_t **shard = sc->shard;
    enum { PLANES = 14 };   /* counts up to 2^14 - 1 > SBF_WINDOW k-mers per column */
    uint64_t plane[PLANES] = {0}, whole = 0, mine[64];
    int n_split = 0, split[64];
    for (int m = 0; m < n_members; ++m) {
        const sbf_target_t *t = &idx->targets[pn->members[m]];
        mine[m] = (t->cols == 64 ? ~0ULL : (1ULL << t->cols) - 1) << t->col0;   /* its columns */
        if (t->cols == 1)
            whole |= 1ULL << t->col0;
        else
            split[n_split++] = pn->members[m];
    }
    /* each run's shard first (its first line prefetched); prefetching every tested position's
     * line as well was slower on the 21-genome panel (doc/PERFORMANCE.md) */
    for (uint32_t i = 0; i < sc->n_runs; ++i) {
        shard[i] = pn->bits + sbf_shard_of_key(sc->key[i], pn->n_shards) * shard_words;
        __builtin_prefetch(shard[i], 0, 0);
    }
    for (uint32_t i = 0; i < sc->n_runs; ++i) {
        const sbf_run_t *run = &sc->runs[i];
        const uint32_t key = sc->key[i];
        const uint64_t *w = shard[i];
        const uint64_t *h = sc->smer_hash + run->first;
        uint64_t sel = whole;
        for (int j = 0; j < n_split; ++j) {
            const sbf_target_t *t = &idx->targets[split[j]];
            sel |= 1ULL << (t->col0 + sbf_panel_column(key, pn->n_shards, t->cols));
        }
        uint64_t ring[SBF_MAX_K];   /* the words of the last k-s+1 s-mers */
        for (unsigned j = 0; j < run->n + extra; ++j) {
            uint64_t word = ~0ULL;
            for (unsigned b = 0; b < H; ++b) {
                const uint64_t at = (uint64_t)sbf_smer_bit((uint32_t)h[j], b, log2b) << lw;
                word &= w[at >> 6] >> (at & 63);
            }
            ring[j % (extra + 1)] = word;
            if (j < extra)
                continue;
            uint64_t kmer = sel;
            for (unsigned u = 0; u <= extra; ++u)
                kmer &= ring[u];
            if (presence)
                for (int m = 0; m < n_members; ++m)
                    presence[(uint64_t)pn->members[m] * row + start + run->first + j - extra] = (kmer & mine[m]) != 0;
            for (unsigned q = 0; kmer && q < PLANES; ++q) {   /* plane += kmer, bit-sliced */
                const uint64_t carry = plane[q] & kmer;
                plane[q] ^= kmer;
                kmer = carry;
            }
        }
    }
    /* each target: the counts of its columns (the panel's 2^lw columns only) */
    uint64_t count[64];
    for (unsigned c = 0; c < 1u << lw; ++c) {
        count[c] = 0;
        for (unsigned q = 0; q < PLANES; ++q)
            count[c] |= ((plane[q] >> c) & 1) << q;
    }
    for (int m = 0; m < n_members; ++m) {
        const int r = pn->members[m];
        const sbf_target_t *t = &idx->targets[r];
        for (unsigned c = t->col0; c < t->col0 + t->cols; ++c)
            hits[r] += count[c];
    }
}

/* The bits that member m of a panel is queried in one target at a time: a plain panel's
 * target's own, or a wide panel's member's plain copy once the copies are made (sbf_plain.c);
 * NULL where the wide panel is probed as a panel (probe_panel). */
static inline const uint64_t *plain_bits(const sbf_index_t *idx, const sbf_panel_t *pn, uint64_t *const *plain, int m)
{
    if (pn->log2_width == 0)
        return idx->targets[pn->members[m]].bits;
    return plain && plain[pn->members[0]] ? plain[pn->members[m]] : NULL;
}

/* One run against one plain target's shard w: its k-mers' hits, the early out first (most runs
 * of a target that does not hold the read end there, on either path), then the full probe
 * (AVX-512 where `fast`); pr (NULL: none) the run's presence bytes. H a constant in each
 * instance. */
static inline __attribute__((always_inline)) uint32_t run_hits(const uint64_t *w, const uint64_t *h, uint32_t n,
                                                               unsigned extra, const unsigned H, unsigned log2b,
                                                               int fast, uint8_t *pr)
{
    if (sbf_run_absent(w, h, n, extra, H, log2b)) {
        if (pr)
            memset(pr, 0, n);
        return 0;
    }
#if SBF_SCAN_HAVE_SIMD
    if (fast)
        return avx512_probe_run(w, h, n, extra, H, pr);
#else
    (void)fast;
#endif
    return probe_run(w, h, n, extra, H, log2b, pr);
}

/* One plain target's hits over the window's runs, their shards in shard[]; presence (NULL:
 * none) is the target's row at the window's start. H is a constant in each instance
 * (query_scanned). */
static inline __attribute__((always_inline)) uint64_t target_runs(const sbf_scan_t *sc, const uint64_t *const *shard,
                                                                  unsigned extra, const unsigned H, unsigned log2b,
                                                                  int fast, uint8_t *presence)
{
    uint64_t count = 0;
    for (uint32_t i = 0; i < sc->n_runs; ++i) {
        const sbf_run_t *run = &sc->runs[i];
        count += run_hits(shard[i], sc->smer_hash + run->first, run->n, extra, H, log2b, fast,
                          presence ? presence + run->first : NULL);
    }
    return count;
}

/* The one pass over a window's runs for all its plain targets with the scalar probe (the
 * AVX-512 path has its own instance, sbf_probe_simd.c) */
#define ALL(name) scalar_##name
#define ALL_LINKAGE static
#define ALL_PROBE(w, h, n, extra, H) probe_run_h(w, h, n, extra, H, 9, NULL)
#include "sbf_runs_all.h"

/* The shards the one pass over the targets takes: 512-bit, every bit of an s-mer a 9-bit field of
 * its 32-bit hash (no second word, sbf_smer_bit; H <= 3), constant in its instances. */
static inline int one_pass_shards(const sbf_params_t *p)
{
    return sbf_params_shard_words(p) == 8 && p->hashes <= 3;
}

/* Each run's shard key once for every target (a target's shard is its range reduction:
 * sbf_shard_index = sbf_shard_of_key of sbf_shard_key), then each run's shard in every plain
 * target of panels q0..q1-1 (a plain panel's, or each of a wide panel's through its plain copy),
 * asked of the L2 (prefetcht2) when `ask`, for all the targets at once: the L2 keeps more misses
 * in flight than the L1's fill buffers, which each target's burst of prefetchnta in
 * query_scanned() had filled alone; that burst then brings the lines to the L1 just before the
 * target's tests. VM, 200,000 pairs at -@1: the CPU engine 0.665 -> 0.47 s with chr20 alone,
 * 1.345 -> 1.12 s with the e2e index (doc/PERFORMANCE.md, try 23). The shards of the first
 * SBF_KEPT_TARGETS plain targets are kept (short reads: a few dozen runs) in kept[t][run], ids[t]
 * the target, *n_kept of them, so that their passes do not compute them again. Returns 1 when
 * every target was kept. */
static int keep_shards(const sbf_index_t *idx, sbf_scan_t *sc, int q0, int q1, uint64_t *const *plain,
                       const uint64_t *kept[][SBF_KEPT_RUNS], int *ids, int *n_kept, int ask)
{
    const unsigned words = sbf_params_shard_words(&idx->params);
    for (uint32_t i = 0; i < sc->n_runs; ++i)
        sc->key[i] = sbf_shard_key((uint32_t)sc->runs[i].minimizer);
    const int keep = sc->n_runs <= SBF_KEPT_RUNS;
    int all_kept = keep;
    for (int q = q0; q < q1; ++q) {
        const sbf_panel_t *pn = &idx->panels[q];
        if (!plain_bits(idx, pn, plain, 0)) {   /* probed as a panel (probe_panel prefetches its own) */
            all_kept = 0;
            continue;
        }
        for (int m = 0; m < pn->n_members; ++m) {
            const uint64_t *bits = plain_bits(idx, pn, plain, m);
            const uint64_t n_shards = idx->targets[pn->members[m]].n_shards;
            all_kept &= *n_kept < SBF_KEPT_TARGETS;
            if (keep && *n_kept < SBF_KEPT_TARGETS) {
                ids[*n_kept] = pn->members[m];
                const uint64_t **sh = kept[(*n_kept)++];
                for (uint32_t i = 0; i < sc->n_runs; ++i) {
                    sh[i] = bits + sbf_shard_of_key(sc->key[i], n_shards) * words;
                    if (ask)
                        __builtin_prefetch(sh[i], 0, 1);
                }
                continue;
            }
            for (uint32_t i = 0; ask && i < sc->n_runs; ++i)
                __builtin_prefetch(bits + sbf_shard_of_key(sc->key[i], n_shards) * words, 0, 1);
        }
    }
    return all_kept;
}

/* The one pass over the window's runs for its n_kept plain targets (query_scanned's condition:
 * 512-bit shards, H <= 3, no presence rows), next's shards asked for meanwhile (NULL: none). */
static void one_pass(const sbf_index_t *idx, const sbf_scan_t *sc, const uint64_t *const (*kept)[SBF_KEPT_RUNS],
                     int n_kept, const int *ids, const sbf_next_shards_t *next, uint64_t *hits)
{
    const unsigned H = (unsigned)idx->params.hashes, extra = (unsigned)(idx->params.k - idx->params.s);
#if SBF_SCAN_HAVE_SIMD
    if (sbf_runs_avx512(8, H)) {
        avx512_runs_all_targets(sc, kept, n_kept, ids, extra, H, next, hits);
        return;
    }
#endif
    scalar_runs_all_targets(sc, kept, n_kept, ids, extra, H, next, hits);
}

/* Probe every target with the window just scanned (it starts at `start` of the sequence):
 * adds to *n_kmers and hits[r]; presence rows (row bytes each) as sbf_query_seq(). */
/* only: the one panel to probe, or -1 for every panel */
static void query_scanned(const sbf_index_t *idx, sbf_scan_t *sc, uint64_t start, uint64_t *n_kmers, uint64_t *hits,
                          uint8_t *presence, uint64_t row, int only)
{
    const sbf_params_t *p = &idx->params;
    const unsigned words = sbf_params_shard_words(p), log2b = sbf_params_shard_log2(p);
    const unsigned H = (unsigned)p->hashes, extra = (unsigned)(p->k - p->s);

    *n_kmers += sc->n_kmers;
#if SBF_SCAN_HAVE_SIMD
    /* 512-bit shards on the AVX-512 path: eight s-mers tested at once (sbf_probe_simd.c), for
     * H <= 3, whose bits are all fields of the 32-bit hash itself (sbf_smer_bit) */
    const int fast = sbf_runs_avx512(words, H);
#else
    const int fast = 0;
#endif
    const int b512 = one_pass_shards(p);   /* the bit fields constant in the instances below too */
    uint64_t *const *plain = __atomic_load_n(&idx->plain, __ATOMIC_ACQUIRE);
    const int q0 = only < 0 ? 0 : only, q1 = only < 0 ? idx->n_panels : only + 1;
    const uint64_t *kept[SBF_KEPT_TARGETS][SBF_KEPT_RUNS];
    int n_kept = 0, ids[SBF_KEPT_TARGETS];
    const int all_kept = keep_shards(idx, sc, q0, q1, plain, kept, ids, &n_kept, 1);
    int at_kept = 0;
    /* every target plain with its shards kept (a short read's window against a few targets):
     * one pass over the runs for all of them */
    if (all_kept && n_kept > 0 && b512 && !presence) {
        for (int t = 0; t < n_kept; ++t)   /* each target's lines to the L1 (the burst of the passes below) */
            for (uint32_t i = 0; i < sc->n_runs; ++i)
                __builtin_prefetch(kept[t][i], 0, 0);
        one_pass(idx, sc, (const uint64_t *const (*)[SBF_KEPT_RUNS])kept, n_kept, ids, NULL, hits);
        return;
    }
    for (int q = q0; q < q1; ++q) {
        const sbf_panel_t *pn = &idx->panels[q];
        if (!plain_bits(idx, pn, plain, 0)) {
            probe_panel(idx, pn, sc, start, hits, presence, row);
            continue;
        }
        for (int m = 0; m < pn->n_members; ++m) {
            const int r = pn->members[m];
            const sbf_target_t *t = &idx->targets[r];
            const uint64_t *bits = plain_bits(idx, pn, plain, m);
            const uint64_t **shard = sc->shard;
            if (at_kept < n_kept) {
                shard = kept[at_kept++];
                for (uint32_t i = 0; i < sc->n_runs; ++i)
                    __builtin_prefetch(shard[i], 0, 0);
            } else {
                for (uint32_t i = 0; i < sc->n_runs; ++i) {
                    shard[i] = bits + sbf_shard_of_key(sc->key[i], t->n_shards) * words;
                    __builtin_prefetch(shard[i], 0, 0);
                }
            }
            uint8_t *pr = presence ? presence + (uint64_t)r * row + start : NULL;
            if (b512) {
                switch (H) {
                case 1: hits[r] += target_runs(sc, shard, extra, 1, 9, fast, pr); break;
                case 2: hits[r] += target_runs(sc, shard, extra, 2, 9, fast, pr); break;
                default: hits[r] += target_runs(sc, shard, extra, 3, 9, fast, pr); break;
                }
                continue;
            }
            switch (H) {   /* the early out's bit tests unrolled for the usual H */
            case 1: hits[r] += target_runs(sc, shard, extra, 1, log2b, fast, pr); break;
            case 2: hits[r] += target_runs(sc, shard, extra, 2, log2b, fast, pr); break;
            case 3: hits[r] += target_runs(sc, shard, extra, 3, log2b, fast, pr); break;
            default: hits[r] += target_runs(sc, shard, extra, H, log2b, fast, pr); break;
            }
        }
    }
}

static void query_seq(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t code[256], const uint8_t *seq,
                      uint64_t len, uint64_t *n_kmers, uint64_t *hits, uint8_t *presence, int only)
{
    const sbf_params_t *p = &idx->params;
    const uint64_t k = (uint64_t)p->k;
    const int R = idx->n_targets;
    const uint64_t row = len >= k ? len - k + 1 : 0;

    *n_kmers = 0;
    for (int r = 0; r < R; ++r)
        hits[r] = 0;
    if (presence)
        memset(presence, 0, row * (uint64_t)R);
    for (uint64_t start = 0; start + k <= len; start += SBF_WINDOW) {
        uint64_t wlen = len - start < SBF_WINDOW + k - 1 ? len - start : SBF_WINDOW + k - 1;
        sbf_scan_window(sc, p, code, seq + start, (uint32_t)wlen);
        query_scanned(idx, sc, start, n_kmers, hits, presence, row, only);
    }
}

void sbf_query_seq(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t code[256],
                   const uint8_t *seq, uint64_t len, uint64_t *n_kmers, uint64_t *hits,
                   uint8_t *presence)
{
    query_seq(idx, sc, code, seq, len, n_kmers, hits, presence, -1);
}

void sbf_query_seq_panel(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t code[256], const uint8_t *seq,
                         uint64_t len, int panel, uint64_t *n_kmers, uint64_t *hits)
{
    query_seq(idx, sc, code, seq, len, n_kmers, hits, NULL, panel);
}

/* wlen bases packed two to a byte (the first in the high nibble) as one code per byte */
static void unpack_nt16(const uint8_t *in, uint32_t wlen, uint8_t *window)
{
    for (uint32_t j = 0; j + 1 < wlen; j += 2) {
        window[j] = (uint8_t)(in[j / 2] >> 4);
        window[j + 1] = (uint8_t)(in[j / 2] & 15);
    }
    if (wlen & 1)
        window[wlen - 1] = (uint8_t)(in[wlen / 2] >> 4);
}

void sbf_query_seq_nt16(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t *packed, uint64_t len,
                        uint64_t *n_kmers, uint64_t *hits)
{
    const sbf_params_t *p = &idx->params;
    const uint64_t k = (uint64_t)p->k;
    uint8_t window[SBF_WINDOW + SBF_MAX_K];

    *n_kmers = 0;
    for (int r = 0; r < idx->n_targets; ++r)
        hits[r] = 0;
    /* the windows of sbf_query_seq(), each unpacked to one code per byte first; windows start at
     * multiples of SBF_WINDOW (even), hence on a byte of the packed sequence */
    for (uint64_t start = 0; start + k <= len; start += SBF_WINDOW) {
        const uint32_t wlen = (uint32_t)(len - start < SBF_WINDOW + k - 1 ? len - start : SBF_WINDOW + k - 1);
        unpack_nt16(packed + start / 2, wlen, window);
        sbf_scan_window(sc, p, sbf_nt4_nt16, window, wlen);
        query_scanned(idx, sc, start, n_kmers, hits, NULL, 0, -1);
    }
}

/* What sbf_query_behind() does with a read */
enum { AHEAD_WHOLE, AHEAD_SCANNED, AHEAD_ONE_PASS };

/* sbf_query_ahead() of a read in ASCII (code, seq) or packed (packed; code and seq NULL): its one
 * window scanned into a->sc, then its shards kept (and asked for if `now`) when the one pass can
 * take it (query_scanned's condition: 512-bit shards, H <= 3, every target plain and kept). */
static void ahead(const sbf_index_t *idx, sbf_ahead_t *a, const uint8_t *code, const uint8_t *seq,
                  const uint8_t *packed, uint64_t len, int now)
{
    const sbf_params_t *p = &idx->params;
    a->code = code;
    a->seq = seq;
    a->packed = packed;
    a->len = len;
    a->n_kept = 0;
    a->state = AHEAD_WHOLE;
    if (len < (uint64_t)p->k || len > SBF_WINDOW + (uint64_t)p->k - 1)   /* no k-mer, or more than one window */
        return;
    uint8_t window[SBF_WINDOW + SBF_MAX_K];
    if (packed) {
        unpack_nt16(packed, (uint32_t)len, window);
        code = sbf_nt4_nt16;
        seq = window;
    }
    sbf_scan_window(&a->sc, p, code, seq, (uint32_t)len);
    a->state = AHEAD_SCANNED;
    /* the one pass keeps every target or none: more than SBF_KEPT_TARGETS never take it, and
     * their keys and shards would be computed here for query_scanned() to compute again */
    if (!one_pass_shards(p) || idx->n_targets > SBF_KEPT_TARGETS)
        return;
    uint64_t *const *plain = __atomic_load_n(&idx->plain, __ATOMIC_ACQUIRE);
    if (keep_shards(idx, &a->sc, 0, idx->n_panels, plain, a->kept, a->ids, &a->n_kept, now) && a->n_kept > 0)
        a->state = AHEAD_ONE_PASS;
}

void sbf_query_ahead(const sbf_index_t *idx, sbf_ahead_t *a, const uint8_t code[256], const uint8_t *seq,
                     uint64_t len, int now)
{
    ahead(idx, a, code, seq, NULL, len, now);
}

void sbf_query_ahead_nt16(const sbf_index_t *idx, sbf_ahead_t *a, const uint8_t *packed, uint64_t len, int now)
{
    ahead(idx, a, NULL, NULL, packed, len, now);
}

void sbf_query_behind(const sbf_index_t *idx, sbf_ahead_t *a, const sbf_ahead_t *next, uint64_t *n_kmers,
                      uint64_t *hits)
{
    if (next && next->state == AHEAD_ONE_PASS && a->state != AHEAD_ONE_PASS)   /* no pass to spread them over */
        for (int t = 0; t < next->n_kept; ++t)
            for (uint32_t i = 0; i < next->sc.n_runs; ++i)
                __builtin_prefetch(next->kept[t][i], 0, 1);
    if (a->state == AHEAD_WHOLE) {
        if (a->packed)
            sbf_query_seq_nt16(idx, &a->sc, a->packed, a->len, n_kmers, hits);
        else
            sbf_query_seq(idx, &a->sc, a->code, a->seq, a->len, n_kmers, hits, NULL);
        return;
    }
    *n_kmers = 0;
    for (int r = 0; r < idx->n_targets; ++r)
        hits[r] = 0;
    if (a->state == AHEAD_SCANNED) {
        query_scanned(idx, &a->sc, 0, n_kmers, hits, NULL, 0, -1);
        return;
    }
    *n_kmers = a->sc.n_kmers;
    const sbf_next_shards_t nx = {next ? (const uint64_t *const (*)[SBF_KEPT_RUNS])next->kept : NULL,
                                  next ? next->n_kept : 0, next ? next->sc.n_runs : 0};
    one_pass(idx, &a->sc, (const uint64_t *const (*)[SBF_KEPT_RUNS])a->kept, a->n_kept, a->ids,
             next && next->state == AHEAD_ONE_PASS ? &nx : NULL, hits);
}

/* Bits set in x, without a call: built for any x86-64, __builtin_popcountll is a libgcc call. */
static inline unsigned popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/* The chance that, after a k-mer tests present by chance, the next k-mer of the read does too.
 * The next k-mer lies in the same super-k-mer run (the same shard, all s-mers but one shared)
 * about 1 - 2/(w+1) of the time, w = k-m+1 the minimizer window; then its one new s-mer must
 * find its H bits set: fill^H in a shard weighted by how likely that shard is to produce a false
 * positive at all (fill^(H(k-s+1))). Clumps from full shards are long, so the mean clump
 * length is averaged, then turned back into one continuation chance. Every shard counts: the few
 * overloaded ones weigh most. Measured clump sizes on random reads: 2.03 k-mers for chr20
 * (predicted 2.31), 1.13-1.23 for bacteria and viruses (predicted 1.17-1.20; doc/ACCURACY.md).
 * From the shards' counts of ones (hist[ones], see shard_histogram). */
static double clump_of(const sbf_params_t *p, const uint64_t *hist)
{
    const double H = (double)p->hashes, fp_exp = H * (double)(p->k - p->s + 1);
    const double w = (double)(p->k - p->m + 1), same_run = 1 - 2 / (w + 1);
    /* a shard's weight and mean clump depend on its count of ones only */
    double num = 0, den = 0;
    for (int ones = 0; ones <= p->shard_bits; ++ones) {
        if (!hist[ones])
            continue;
        const double fill = (double)ones / (double)p->shard_bits, weight = pow(fill, fp_exp);
        num += (double)hist[ones] * (weight / (1 - same_run * pow(fill, H)));
        den += (double)hist[ones] * weight;
    }
    return den > 0 ? 1 - den / num : 0;   /* the geometric clump of the same mean */
}

/* Shards per count of ones: a pass over the filter, by chunks on `threads` threads (a human
 * index is 6 GB to read; counts of shards add up the same in any order). */
#define HIST_CHUNK_SHARDS (1u << 16)
typedef struct {
    const uint64_t *bits;
    uint64_t n_shards, n_chunks, next;   /* next: taken atomically */
    unsigned words, shard_bits;
    uint64_t hist[513];                  /* added to atomically */
} hist_job_t;

static void *hist_worker(void *arg)
{
    hist_job_t *job = arg;
    uint64_t hist[513] = {0};
    for (;;) {
        const uint64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        const uint64_t first = c * HIST_CHUNK_SHARDS;
        const uint64_t end = first + HIST_CHUNK_SHARDS < job->n_shards ? first + HIST_CHUNK_SHARDS : job->n_shards;
        for (uint64_t i = first; i < end; ++i) {
            unsigned ones = 0;
            for (unsigned q = 0; q < job->words; ++q)
                ones += popcount64(job->bits[i * job->words + q]);
            ++hist[ones];
        }
    }
    for (unsigned b = 0; b <= job->shard_bits; ++b)
        if (hist[b])
            __atomic_fetch_add(&job->hist[b], hist[b], __ATOMIC_RELAXED);
    return NULL;
}

static void shard_histogram(const sbf_params_t *p, const uint64_t *bits, uint64_t n_shards, int threads,
                            uint64_t hist[513])
{
    hist_job_t job;
    memset(&job, 0, sizeof job);
    job.bits = bits;
    job.n_shards = n_shards;
    job.n_chunks = (n_shards + HIST_CHUNK_SHARDS - 1) / HIST_CHUNK_SHARDS;
    job.words = sbf_params_shard_words(p);
    job.shard_bits = (unsigned)p->shard_bits;
    sbf_run_threads((uint64_t)threads > job.n_chunks ? 1 : threads, hist_worker, &job);
    memcpy(hist, job.hist, sizeof job.hist);
}

void sbf_target_stats(const sbf_index_t *idx, sbf_target_t *t, int threads)
{
    const sbf_params_t *p = &idx->params;
    uint64_t hist[513];
    shard_histogram(p, t->bits, t->n_shards, threads, hist);
    /* A random k-mer picks a uniform shard; its k-s+1 s-mers are independent random values, each
     * present with probability fill_shard^H. Summing over the real shards, not a mean fill,
     * accounts for the shards that repeats overload. */
    const double exponent = (double)p->hashes * (double)(p->k - p->s + 1);
    uint64_t set = 0;
    double fpr_sum = 0.0;
    for (int ones = 0; ones <= p->shard_bits; ++ones) {
        set += (uint64_t)ones * hist[ones];
        if (hist[ones])
            fpr_sum += (double)hist[ones] * pow((double)ones / (double)p->shard_bits, exponent);
    }
    t->fill = (double)set / ((double)t->n_shards * (double)p->shard_bits);
    t->predicted_fpr = fpr_sum / (double)t->n_shards;
    t->clump = clump_of(p, hist);
}

double sbf_target_clump(const sbf_index_t *idx, const sbf_target_t *t)
{
    /* a target of a wide panel is read from a plain copy (indexes of format 3 store the clump
     * chance computed at build time: this is for callers that put bits in by hand) */
    const uint64_t *bits = t->bits;
    uint64_t *copy = NULL;
    if (!bits) {
        if (!(copy = malloc(sbf_target_bytes(idx, t))))
            return -1;
        sbf_target_extract(idx, t, copy);
        bits = copy;
    }
    uint64_t hist[513];
    shard_histogram(&idx->params, bits, t->n_shards, 1, hist);
    free(copy);
    return clump_of(&idx->params, hist);
}

const double *sbf_idx_clumps(const sbf_index_t *idx)
{
    double *c = __atomic_load_n(&idx->clumps, __ATOMIC_ACQUIRE);
    if (c)
        return c;
    /* threads that race compute the same values; the first to publish wins, the others free */
    if (!(c = malloc((size_t)(idx->n_targets > 0 ? idx->n_targets : 1) * sizeof *c)))
        return NULL;
    for (int t = 0; t < idx->n_targets; ++t) {
        const sbf_target_t *x = &idx->targets[t];
        c[t] = x->clump >= 0 ? x->clump : sbf_target_clump(idx, x);
        if (c[t] < 0) {
            free(c);
            return NULL;
        }
    }
    double *none = NULL;
    if (!__atomic_compare_exchange_n(&((sbf_index_t *)idx)->clumps, &none, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(c);
        return none;
    }
    return c;
}

int sbf_chance_sample(const uint8_t *codes, uint64_t len, sbf_chance_sample_t *s)
{
    memset(s, 0, sizeof *s);
    const uint64_t W = SBF_CHANCE_WINDOW;
    uint64_t step = len / SBF_CHANCE_WINDOWS, total = 0;
    if (step < W)
        step = W;
    for (uint64_t at = 0; at < len; at += step)   /* at most SBF_CHANCE_WINDOWS + 1 windows */
        total += len - at < W ? len - at : W;
    if (!(s->codes = malloc(total ? total : 1)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    uint8_t *out = s->codes;
    for (uint64_t at = 0; at < len; at += step) {
        const uint64_t n = len - at < W ? len - at : W;
        for (uint64_t i = 0; i < n; ++i)
            out[i] = codes[at + n - 1 - i];
        s->len[s->n++] = (uint32_t)n;
        out += n;
    }
    return SBF_OK;
}

void sbf_chance_sample_free(sbf_chance_sample_t *s)
{
    free(s->codes);
    memset(s, 0, sizeof *s);
}

int sbf_target_measure_chance(const sbf_index_t *idx, int r, const sbf_chance_sample_t *s)
{
    sbf_target_t *t = &idx->targets[r];
    t->chance = 0;
    sbf_scan_t *sc = malloc(sizeof *sc);
    uint64_t *hits = malloc((size_t)idx->n_targets * sizeof *hits);
    if (!sc || !hits) {
        free(sc);
        free(hits);
        return sbf_error(SBF_E_NOMEM, "out of memory");
    }
    uint64_t kmers = 0, present = 0;
    const uint8_t *window = s->codes;
    for (uint32_t w = 0; w < s->n; window += s->len[w++]) {
        uint64_t nk;
        /* its own panel only: the others' answers are not read, and probing them faulted the
         * filters already written into the output (sbf_format_spill_panel) back into memory */
        sbf_query_seq_panel(idx, sc, sbf_nt4_identity, window, s->len[w], t->panel, &nk, hits);
        kmers += nk;
        present += hits[r];
    }
    t->chance = kmers ? (double)present / (double)kmers : 0;
    free(sc);
    free(hits);
    return SBF_OK;
}
