/* sbf_probe_simd.c -- a run against its shard with AVX-512, for 512-bit shards and H <= 3
 * (every bit a field of the 32-bit s-mer hash), where the whole shard fits one register.
 *
 * The probe of a run (sbf_index.c, probe_run): eight s-mers are tested at once (each bit's
 * word picked by a permute, then shifted down by the bit's offset). The k-mers follow from the
 * s-mers as bit masks: k-mer i is present when s-mers i..i+k-s all are, which is what the
 * scalar probe's "last absent s-mer" computes one s-mer at a time.
 *
 * The insertion's run masks (sbf_index.c, run_mask) and the ORs of the build's records
 * (sbf_build.c, apply_block): a mask made in a register, then stored, or ORed into its shard,
 * as one 64-byte access instead of eight words. The same bits; the CPU build of the 3.06 Gbp
 * host went 12.45 and 12.68 -> 10.43 s on an H100 machine (doc/PERFORMANCE.md). */
#include <stdint.h>
#include <string.h>

#include "sbf_mem.h"
#include "sbf_probe.h"
#include "sbf_scan_int.h"

#if SBF_SCAN_HAVE_SIMD
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,popcnt")

/* Runs hold at most SBF_WINDOW k-mers and k-s more s-mers. */
#define PROBE_WORDS ((SBF_WINDOW + SBF_MAX_K + 63) / 64 + 1)

/* Eight s-mers (hashes h[0..8), the lanes that exist) tested against the shard held in a
 * register: bit i of the result is s-mer i present. Each bit's word is picked by a permute, then
 * shifted down by the bit's offset. */
static inline __mmask8 smers8(__m512i shard, const uint64_t *h, __mmask8 lanes, const unsigned H)
{
    const __m512i low9 = _mm512_set1_epi64(511), low6 = _mm512_set1_epi64(63), one = _mm512_set1_epi64(1);
    const __m512i hv = _mm512_maskz_loadu_epi64(lanes, h);
    __mmask8 ok = lanes;
    for (unsigned b = 0; b < H; ++b) {
        const __m512i bit = _mm512_and_si512(_mm512_srli_epi64(hv, 9 * b), low9);
        const __m512i word = _mm512_permutexvar_epi64(_mm512_srli_epi64(bit, 6), shard);
        ok &= _mm512_test_epi64_mask(_mm512_srlv_epi64(word, _mm512_and_si512(bit, low6)), one);
    }
    return ok;
}

/* A run of at most 64 s-mers (nearly every run of a short read): the s-mers' bits kept in one
 * register and the k-mers' in another, where the general loop below goes through an array it
 * clears first. H a constant in each instance. With the early out's constant bit fields
 * (sbf_index.c) this made the CPU engine 8-24% faster on the development VM (doc/PERFORMANCE.md,
 * try 27). The hashes are read eight at a time without a mask, 16 at least: the lanes past the
 * run's last s-mer (in the scan's smer_hash, which has room for them) only decide bits past
 * the last k-mer, which are cut off (a masked load waited on the mask, try 36). */
static inline uint32_t probe_short(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra,
                                   const unsigned H, uint8_t *presence)
{
    const uint32_t n_smers = n_kmers + extra;
    const __m512i shard = _mm512_loadu_si512(w);
    /* the first 16 s-mers whatever the run's length: a run of 1 or 2 k-mers (7 or 8 s-mers at
     * the defaults) beside longer ones made the loop's exit a guess missed about a third of the
     * time (try 37) */
    uint64_t sm = (uint64_t)smers8(shard, h, 0xff, H) | (uint64_t)smers8(shard, h + 8, 0xff, H) << 8;
    for (uint32_t j = 16; j < n_smers; j += 8)
        sm |= (uint64_t)smers8(shard, h + j, 0xff, H) << j;
    /* k-mer i: s-mers i..i+extra all present, the AND of extra + 1 shifts taken by doubling
     * (all covers `have` s-mers: 3 steps at the defaults' 7 instead of 6) */
    uint64_t all = sm;
    unsigned have = 1;
    for (; 2 * have <= extra + 1; have *= 2)
        all &= all >> have;
    if (have < extra + 1)
        all &= all >> (extra + 1 - have);
    all &= n_kmers >= 64 ? ~0ULL : (1ULL << n_kmers) - 1;
    if (presence)
        _mm512_mask_storeu_epi8(presence, n_kmers >= 64 ? ~0ULL : (1ULL << n_kmers) - 1,
                                _mm512_maskz_mov_epi8(all, _mm512_set1_epi8(1)));
    return (uint32_t)__builtin_popcountll(all);
}

uint32_t avx512_probe_run(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra, unsigned H,
                          uint8_t *presence)
{
    const uint32_t n_smers = n_kmers + extra;
    if (n_smers <= 64) {
        switch (H) {   /* H <= 3 here (sbf_runs_avx512) */
        case 1: return probe_short(w, h, n_kmers, extra, 1, presence);
        case 2: return probe_short(w, h, n_kmers, extra, 2, presence);
        default: return probe_short(w, h, n_kmers, extra, 3, presence);
        }
    }
    uint64_t smer[PROBE_WORDS];   /* bit j: s-mer j present */
    const __m512i shard = _mm512_loadu_si512(w);
    memset(smer, 0, ((n_smers + 63) / 64 + 1) * sizeof *smer);
    for (uint32_t j = 0; j < n_smers; j += 8) {
        const __mmask8 lanes = n_smers - j >= 8 ? 0xff : (__mmask8)((1u << (n_smers - j)) - 1u);
        /* j is a multiple of 8: never crosses a word */
        smer[j / 64] |= (uint64_t)smers8(shard, h + j, lanes, H) << (j % 64);
    }
    /* k-mer i: s-mers i..i+extra all present; shifts across word boundaries */
    const uint32_t n_words = (n_kmers + 63) / 64;
    uint32_t count = 0;
    for (uint32_t q = 0; q < n_words; ++q) {
        uint64_t all = smer[q];
        for (unsigned d = 1; d <= extra; ++d)
            all &= (smer[q] >> d) | (smer[q + 1] << (64 - d));
        const uint32_t left = n_kmers - 64 * q;
        if (left < 64)
            all &= (1ULL << left) - 1;
        count += (uint32_t)__builtin_popcountll(all);
        if (presence) {
            const __mmask64 keep = left >= 64 ? ~0ULL : (1ULL << left) - 1;
            _mm512_mask_storeu_epi8(presence + 64 * q, keep, _mm512_maskz_mov_epi8(all, _mm512_set1_epi8(1)));
        }
    }
    return count;
}

/* The one pass over a window's runs for all its plain targets, the probe of a short run inlined
 * (sbf_runs_all.h; a call per run cost its prologue and the dispatch on H) */
#define ALL(name) avx512_##name
#define ALL_LINKAGE
#define ALL_PROBE(w, h, n, extra, H)                                                                                  \
    ((n) + (extra) <= 64 ? probe_short(w, h, n, extra, H, NULL) : avx512_probe_run(w, h, n, extra, H, NULL))
#include "sbf_runs_all.h"

/* The bits of a run's n_smers s-mers (hashes h) in a 512-bit shard: each bit set in its word by
 * a variable shift, lane q shifting 1 by bit - 64q, which vpsllvq makes 0 outside 0..63 (a
 * negative count is a large unsigned one). H = 2, the default, in two chains that overlap. */
static inline __m512i run_mask512(const uint64_t *h, uint32_t n_smers, unsigned H)
{
    const __m512i offs = _mm512_set_epi64(448, 384, 320, 256, 192, 128, 64, 0), one = _mm512_set1_epi64(1);
    __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
    if (H == 2) {
        for (uint32_t j = 0; j < n_smers; ++j) {
            const uint32_t x = (uint32_t)h[j];
            a = _mm512_or_si512(a, _mm512_sllv_epi64(one, _mm512_sub_epi64(_mm512_set1_epi64(x & 511u), offs)));
            b = _mm512_or_si512(b, _mm512_sllv_epi64(one, _mm512_sub_epi64(_mm512_set1_epi64((x >> 9) & 511u), offs)));
        }
    } else {
        for (uint32_t j = 0; j < n_smers; ++j) {
            uint32_t x = (uint32_t)h[j];
            for (unsigned f = 0; f < H; ++f, x >>= 9)
                a = _mm512_or_si512(a, _mm512_sllv_epi64(one, _mm512_sub_epi64(_mm512_set1_epi64(x & 511u), offs)));
        }
    }
    return _mm512_or_si512(a, b);
}

void avx512_run_mask(const uint64_t *h, uint32_t n_smers, unsigned H, uint64_t *out)
{
    _mm512_storeu_si512(out, run_mask512(h, n_smers, H));
}

void avx512_run_or(uint64_t *w, const uint64_t *h, uint32_t n_smers, unsigned H)
{
    _mm512_storeu_si512(w, _mm512_or_si512(_mm512_loadu_si512(w), run_mask512(h, n_smers, H)));
}

void avx512_apply_records(uint64_t *bits, const uint64_t *rec, uint32_t n, unsigned ahead)
{
    for (uint32_t i = 0; i < n && i < ahead; ++i)
        sbf_prefetch_for_write(bits + rec[(size_t)i * 9] * 8);
    for (uint32_t i = 0; i < n; ++i) {
        if (i + ahead < n)
            sbf_prefetch_for_write(bits + rec[(size_t)(i + ahead) * 9] * 8);
        const uint64_t *m = rec + (size_t)i * 9;
        uint64_t *w = bits + m[0] * 8;
        _mm512_storeu_si512(w, _mm512_or_si512(_mm512_loadu_si512(w), _mm512_loadu_si512(m + 1)));
    }
}

#pragma GCC pop_options
#endif
