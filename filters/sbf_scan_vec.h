/* sbf_scan_vec.h -- the scan's passes on vectors of VLANES 64-bit lanes (type vu): a template,
 * included by sbf_scan_simd.c once per instruction set, under that set's `#pragma GCC target`,
 * with VEC(name) naming the instance's functions, VEC_COMPRESS 1 where AVX-512's compress
 * instructions exist and VEC_MUL_EPU32 / vi that set's 32 x 32 -> 64-bit multiply of the low
 * halves of each lane and its register type, and VEC_MIN_EPU64 the set's unsigned 64-bit minimum
 * where it has one (AVX-512; AVX2 builds it from a compare), and optionally VEC_ROLL, a roll
 * with sbf_roll_words()' contract for words of up to VEC_ROLL_MAX bases; it #undefs those nine
 * at its end. Not a header to include anywhere else.
 *
 * Each pass computes exactly what the scalar passes of sbf_scan.c compute, so every path gives
 * the same runs and hashes (tests/test_kmer.c compares them):
 *  1. the canonical words are rolled by the scalar path's own code (sbf_roll_words: a short
 *     chain from base to base) or the instance's VEC_ROLL, then hashed in place a vector at a
 *     time: sbf_hash_word is the same 32-bit arithmetic in every lane (each 32-bit multiply one
 *     VEC_MUL_EPU32);
 *  2. each k-mer's minimizer is the minimum of its w m-mer hashes, taken directly (w - 1
 *     vector minima per vector of k-mers) instead of by van Herk blocks: the minimum is the
 *     same value however it is taken;
 *  3. runs start where the minimizer changes; with AVX-512 the starts are compressed out eight
 *     k-mers at a time, and runs are written once each instead of once per k-mer. */

static inline vu VEC(load)(const uint64_t *p)
{
    vu v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void VEC(store)(uint64_t *p, vu v) { memcpy(p, &v, sizeof v); }

static inline vu VEC(min)(vu a, vu b)
{
#ifdef VEC_MIN_EPU64
    return (vu)VEC_MIN_EPU64((vi)a, (vi)b);
#else
    const vu lt = (vu)(a < b);
    return (a & lt) | (b & ~lt);
#endif
}

/* (a * c) mod 2^32 in each lane, for lanes a < 2^32: one multiply of the low halves. */
static inline vu VEC(mul32)(vu a, uint32_t c)
{
    vu cv = {0};
    cv += c;
    return (vu)VEC_MUL_EPU32((vi)a, (vi)cv) & 0xffffffffu;
}

/* Pass 1: the words of the segment from seq[a] rolled (sbf_roll_words, or the instance's
 * VEC_ROLL for the words it takes), then hashed in place a vector at a time. Returns the
 * segment's end. */
static inline uint32_t VEC(words)(const uint8_t code[256], const uint8_t *seq, uint32_t a, uint32_t end,
                                  unsigned len, uint64_t *out)
{
#ifdef VEC_ROLL
    const uint32_t b = len <= VEC_ROLL_MAX ? VEC_ROLL(code, seq, a, end, len, out) : sbf_roll_words(code, seq, a, end, len, out);
#else
    const uint32_t b = sbf_roll_words(code, seq, a, end, len, out);
#endif
    const uint32_t n = sbf_words_in(a, b, len);
    uint64_t *o = out + a;
    uint32_t i = 0;
    for (; i + VLANES <= n; i += VLANES) {
        const vu word = VEC(load)(o + i);   /* sbf_hash_word(), lane by lane */
        vu x = ((((word & 0xffffffffu) + VEC(mul32)(word >> 32, SBF_FOLD)) & 0xffffffffu) ^ SBF_SEED_WORD);
        x ^= x >> 16;
        x = VEC(mul32)(x, SBF_MIX32_MUL1);
        x ^= x >> 15;
        x = VEC(mul32)(x, SBF_MIX32_MUL2);
        x ^= x >> 16;
        VEC(store)(o + i, x);
    }
    for (; i < n; ++i)
        o[i] = sbf_hash_smer(o[i]);
    return b;
}

/* Pass 2: kmin[i] = the least of hm[i .. i+w-1], for the k-mers i in [a, last]. */
static inline void VEC(window_min)(const uint64_t *hm, uint32_t a, uint32_t last, unsigned w, uint64_t *kmin)
{
    uint32_t i = a;
    for (; i + VLANES <= last + 1; i += VLANES) {
        vu m = VEC(load)(hm + i);
        for (unsigned j = 1; j < w; ++j)
            m = VEC(min)(m, VEC(load)(hm + i + j));
        VEC(store)(kmin + i, m);
    }
    for (; i <= last; ++i) {
        uint64_t m = hm[i];
        for (unsigned j = 1; j < w; ++j)
            m = hm[i + j] < m ? hm[i + j] : m;
        kmin[i] = m;
    }
}

/* Pass 3: the runs of the k-mers in [a, last], appended after the first n_runs. */
static inline uint32_t VEC(runs)(sbf_scan_t *sc, uint32_t a, uint32_t last, uint32_t n_runs)
{
    const uint64_t *kmin = sc->kmer_min;
    uint32_t *first = sc->run_first;
    uint64_t *mins = sc->suffix_min;   /* free in the vector passes */
    first[0] = a;
    mins[0] = kmin[a];
    uint32_t nr = 1, i = a + 1;
#if VEC_COMPRESS
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (; i + 8 <= last + 1; i += 8) {
        const __m512i cur = _mm512_loadu_si512(kmin + i), prev = _mm512_loadu_si512(kmin + i - 1);
        const __mmask8 change = _mm512_cmpneq_epu64_mask(cur, prev);
        const __m256i at = _mm256_add_epi32(_mm256_set1_epi32((int)i), lane);
        _mm512_storeu_si512(mins + nr, _mm512_maskz_compress_epi64(change, cur));
        _mm256_storeu_si256((__m256i *)(first + nr), _mm256_maskz_compress_epi32(change, at));
        nr += (uint32_t)__builtin_popcount(change);
    }
#endif
    for (; i <= last; ++i) {   /* branch-free: every k-mer a candidate start */
        first[nr] = i;
        mins[nr] = kmin[i];
        nr += kmin[i] != kmin[i - 1];
    }
    sbf_run_t *runs = sc->runs + n_runs;
    for (uint32_t r = 0; r < nr; ++r) {
        runs[r].first = first[r];
        runs[r].n = (r + 1 < nr ? first[r + 1] : last + 1) - first[r];
        runs[r].minimizer = mins[r];
    }
    return n_runs + nr;
}

/* Passes 2 and 3. */
static inline uint32_t VEC(segment)(sbf_scan_t *sc, const uint64_t *hm, uint32_t a, uint32_t last, unsigned w,
                                    uint32_t n_runs)
{
    VEC(window_min)(hm, a, last, w, sc->kmer_min);
    return VEC(runs)(sc, a, last, n_runs);
}

void VEC(sbf_scan_window)(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                          uint32_t len)
{
    sbf_scan_segments(sc, p, code, seq, len, VEC(words), VEC(segment));
}

#undef VEC
#undef VEC_ROLL
#undef VEC_ROLL_MAX
#undef VEC_COMPRESS
#undef VEC_MUL_EPU32
#undef VEC_MIN_EPU64
#undef VLANES
#undef vi
#undef vu
