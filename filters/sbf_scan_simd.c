/* sbf_scan_simd.c -- the scan's vector paths, AVX-512 with VBMI and GFNI, AVX-512 and AVX2,
 * from one template (sbf_scan_vec.h) compiled under each instruction set's target, and the
 * first path's roll of the canonical words in vectors. sbf_scan.c picks one at run time from
 * the CPU's features; the binary runs anywhere x86-64 does. */
#include <string.h>

#include "sbf_scan_int.h"

#if SBF_SCAN_HAVE_SIMD
#include <immintrin.h>

/* 64-bit lanes in GCC's generic vectors, as wide as the instruction set's registers (8 lanes
 * under AVX-512, 4 under AVX2, where the compiler builds the unsigned minimum from signed
 * operations): one source for both. The hashes are 32-bit values in 64-bit lanes, multiplied
 * by the instruction set's multiply of low halves. */
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef uint64_t v4u __attribute__((vector_size(32)));

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx512vbmi,gfni,bmi,popcnt")

/* gf2p8affineqb's matrix that reverses the four 2-bit groups of each byte (the bases of a byte
 * of packed sequence): output bit i is the parity of x AND the matrix's byte 7 - i, which holds
 * the one input bit that output bit i takes, 6 - 2 (i / 2) + i % 2. */
static inline uint64_t bases_reversed_matrix(void)
{
    uint64_t m = 0;
    for (unsigned i = 0; i < 8; ++i)
        m |= (uint64_t)(1u << (6 - 2 * (i >> 1) + (i & 1))) << (8 * (7 - i));
    return m;
}

/* sbf_roll_words() for words of up to 29 bases, without its chain from base to base (2.4
 * cycles a base on the development VM, the scan's largest part: doc/PERFORMANCE.md, try 34):
 *  - 64 bases at a time are coded by the table (two vpermi2b over its halves), checked (the
 *    segment ends at the first code above 3) and packed four to a byte, base j at bits 2j;
 *  - the word at i is then read out of the packed bases: the 64 bits from bit 2i (a byte
 *    shuffle and a shift per lane, eight words a vector) hold bases i..i+28 with base i lowest,
 *    which is the reverse complement word once complemented and cut to `len` bases; the same
 *    bytes in reverse order with each byte's bases reversed (gf2p8affineqb) hold the forward
 *    word at the top.
 * The canonical word is the lesser of the two, as the scalar roll's. */
static uint32_t vbmi_roll_words(const uint8_t code[256], const uint8_t *seq, uint32_t a, uint32_t end, unsigned len,
                                uint64_t *out)
{
    uint8_t packed[(SBF_WINDOW + SBF_MAX_K + 63) / 4 + 48] __attribute__((aligned(64)));
    const __m512i c0 = _mm512_loadu_si512(code), c1 = _mm512_loadu_si512(code + 64),
                  c2 = _mm512_loadu_si512(code + 128), c3 = _mm512_loadu_si512(code + 192);
    const __m512i three = _mm512_set1_epi8(3), by2 = _mm512_set1_epi16(0x0401), by4 = _mm512_set1_epi32(0x00100001);
    uint32_t b = end, at = 0;   /* at: the packed bytes written */
    for (uint32_t pos = a; pos < end; pos += 64) {
        const uint64_t room = end - pos >= 64 ? ~0ULL : (1ULL << (end - pos)) - 1;
        const __m512i x = _mm512_maskz_loadu_epi8(room, seq + pos);   /* no byte read past end */
        const __m512i c = _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), _mm512_permutex2var_epi8(c0, x, c1),
                                                 _mm512_permutex2var_epi8(c2, x, c3));
        /* codes 0..3: pairs c0 + 4 c1 (16 bits), then quads (32 bits), then one byte each */
        const __m512i quad = _mm512_madd_epi16(_mm512_maddubs_epi16(c, by2), by4);
        _mm_storeu_si128((__m128i *)(packed + at), _mm512_cvtepi32_epi8(quad));
        at += 16;
        const uint64_t bad = _mm512_cmpgt_epu8_mask(c, three) & room;
        if (bad) {
            b = pos + (uint32_t)_tzcnt_u64(bad);
            break;
        }
    }
    memset(packed + at, 0, 16);   /* the last words' lanes read up to 16 bytes on (bits cut off) */
    const uint32_t n = sbf_words_in(a, b, len);
    /* lane l (word i + l, i a multiple of 8) takes bytes i/4 + l/4 .. +7 (fwd) or the same
     * backwards (rev), then shifts by 2 (l % 4) bases */
    uint8_t fwd[64], rev[64];
    for (unsigned l = 0; l < 8; ++l)
        for (unsigned j = 0; j < 8; ++j) {
            fwd[8 * l + j] = (uint8_t)((l >> 2) + j);
            rev[8 * l + j] = (uint8_t)((l >> 2) + 7 - j);
        }
    const __m512i ifwd = _mm512_loadu_si512(fwd), irev = _mm512_loadu_si512(rev);
    const __m512i shift = _mm512_set_epi64(6, 4, 2, 0, 6, 4, 2, 0), mask = _mm512_set1_epi64((long long)sbf_mask(len));
    const __m512i rbases = _mm512_set1_epi64((long long)bases_reversed_matrix());
    const __m512i down = _mm512_set1_epi64(64 - 2 * (long long)len);
    uint64_t *o = out + a;
    for (uint32_t i = 0; i < n; i += 8) {
        /* bytes i/4 .. i/4 + 15 in every 128-bit lane: vpshufb picks within lanes */
        const __m512i raw = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(packed + i / 4)));
        const __m512i rc = _mm512_andnot_si512(_mm512_srlv_epi64(_mm512_shuffle_epi8(raw, ifwd), shift), mask);
        const __m512i f = _mm512_srlv_epi64(
            _mm512_sllv_epi64(_mm512_gf2p8affine_epi64_epi8(_mm512_shuffle_epi8(raw, irev), rbases, 0), shift), down);
        const __mmask8 keep = n - i >= 8 ? 0xff : (__mmask8)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_epi64(o + i, keep, _mm512_min_epu64(f, rc));
    }
    return b;
}

#define VEC(name) avx512vbmi_##name
#define VEC_ROLL vbmi_roll_words
#define VEC_ROLL_MAX 29
#include "sbf_scan_avx512.h"
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,popcnt")
#define VEC(name) avx512_##name
#include "sbf_scan_avx512.h"
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,popcnt")
#define VEC(name) avx2_##name
#define VEC_COMPRESS 0
#define VEC_MUL_EPU32 _mm256_mul_epu32
#define VLANES 4
#define vi __m256i
#define vu v4u
#include "sbf_scan_vec.h"   /* #undefs VEC, VEC_COMPRESS, VEC_MUL_EPU32, VEC_MIN_EPU64, VLANES, vi, vu */
#pragma GCC pop_options

#endif
