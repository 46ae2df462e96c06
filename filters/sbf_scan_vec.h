/* sbf_scan_vec.h -- the scan's passes on vectors of VLANES 64-bit lanes (type vu, with v_load,
 * v_store, v_min): a template, included by sbf_scan_simd.c once per instruction set, under
 * that set's `#pragma GCC target`, with VEC(name) naming the instance's functions and
 * VEC_COMPRESS 1 where AVX-512's compress instructions exist. Not a header to include anywhere
 * else.
 *
 * Each pass computes exactly what the scalar passes of sbf_scan.c compute, so every path gives
 * the same runs and hashes (tests/test_kmer.c compares them):
 *  1. the canonical words are rolled by the scalar path's own code (sbf_roll_words: a short
 *     chain from base to base), then hashed in place a vector at a time: splitmix64 is the
 *     same arithmetic in every lane;
 *  2. each k-mer's minimizer is the minimum of its w m-mer hashes, taken directly (w - 1
 *     vector minima per vector of k-mers) instead of by van Herk blocks: the minimum is the
 *     same value however it is taken;
 *  3. runs start where the minimizer changes; with AVX-512 the starts are compressed out eight
 *     k-mers at a time, and runs are written once each instead of once per k-mer. */

/* Pass 1: the words of the segment from seq[a] rolled (sbf_roll_words), then hashed in place a
 * vector at a time. Returns the segment's end. */
static inline uint32_t VEC(words)(const uint8_t code[256], const uint8_t *seq, uint32_t a, uint32_t end,
                                  unsigned len, uint64_t *out)
{
    const uint32_t b = sbf_roll_words(code, seq, a, end, len, out), n = sbf_words_in(a, b, len);
    uint64_t *o = out + a;
    uint32_t i = 0;
    for (; i + VLANES <= n; i += VLANES) {
        vu x = v_load(o + i) ^ SBF_SEED_WORD;   /* sbf_hash_smer(), lane by lane */
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        v_store(o + i, x);
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
        vu m = v_load(hm + i);
        for (unsigned j = 1; j < w; ++j)
            m = v_min(m, v_load(hm + i + j));
        v_store(kmin + i, m);
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

void VEC(sbf_scan_window)(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                          uint32_t len)
{
    const unsigned k = (unsigned)p->k, m = (unsigned)p->m, s = (unsigned)p->s;
    const unsigned w = k - m + 1;
    uint32_t n_runs = 0, n_kmers = 0;
    uint32_t pos = 0;
    while (pos < len) {
        if (code[seq[pos]] > 3) {
            ++pos;
            continue;
        }
        const uint32_t a = pos, b = VEC(words)(code, seq, a, len, s, sc->smer_hash);
        pos = b;
        if (b - a < k)
            continue;
        const uint64_t *hm = sc->smer_hash;
        if (m != s) {
            VEC(words)(code, seq, a, b, m, sc->mmer_hash);
            hm = sc->mmer_hash;
        }
        VEC(window_min)(hm, a, b - k, w, sc->kmer_min);
        n_runs = VEC(runs)(sc, a, b - k, n_runs);
        n_kmers += b - a - k + 1;
    }
    sc->n_runs = n_runs;
    sc->n_kmers = n_kmers;
}
