/* sbf_scan_int.h -- the vector paths of the scan (sbf_scan_simd.c) and of the probe
 * (sbf_probe_simd.c), chosen by sbf_scan.c's path. */
#ifndef SBF_SCAN_INT_H
#define SBF_SCAN_INT_H

#include "sbf_probe.h"
#include "sbf_scan.h"

/* Pass 1's roll, the same for every path: from a valid base at seq[a], the canonical words of
 * length `len` (min of forward and reverse complement, 2-bit packed) up to the first invalid
 * base or `end`, the word starting at i written unhashed to out[i]. Returns the end of the
 * segment of valid bases; out[a .. end - len] are the segment's words. */
static inline uint32_t sbf_roll_words(const uint8_t code[256], const uint8_t *seq, uint32_t a, uint32_t end,
                                      unsigned len, uint64_t *out)
{
    const uint64_t mask = sbf_mask(len);
    uint64_t top[4];
    for (unsigned c = 0; c < 4; ++c)
        top[c] = (uint64_t)(3u - c) << (2 * (len - 1));
    uint64_t f = 0, r = 0;
    uint32_t pos = a;
    for (; pos < end && pos < a + len - 1; ++pos) {   /* warm-up: the first len-1 bases */
        unsigned c = code[seq[pos]];
        if (c > 3)
            return pos;
        f = ((f << 2) | c) & mask;
        r = (r >> 2) | top[c];
    }
    /* two bases a step: one test of both (codes are 0..3, or 4 with bit 2 set) */
    for (; pos + 1 < end; pos += 2) {
        const unsigned c0 = code[seq[pos]], c1 = code[seq[pos + 1]];
        if ((c0 | c1) > 3)
            break;
        f = ((f << 2) | c0) & mask;
        r = (r >> 2) | top[c0];
        out[pos + 1 - len] = f < r ? f : r;
        f = ((f << 2) | c1) & mask;
        r = (r >> 2) | top[c1];
        out[pos + 2 - len] = f < r ? f : r;
    }
    for (; pos < end; ++pos) {
        unsigned c = code[seq[pos]];
        if (c > 3)
            break;
        f = ((f << 2) | c) & mask;
        r = (r >> 2) | top[c];
        out[pos + 1 - len] = f < r ? f : r;
    }
    return pos;
}

/* The number of words of length `len` in the segment [a, b). */
static inline uint32_t sbf_words_in(uint32_t a, uint32_t b, unsigned len) { return b - a >= len ? b - a - len + 1 : 0; }

#ifdef __GNUC__
#define SBF_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define SBF_ALWAYS_INLINE inline
#endif

/* A path's passes: `words` rolls and hashes the words of length len of the segment from seq[a]
 * into out[a..] and returns the segment's end (pass 1); `segment` finds the minimizers and runs
 * of the k-mers starting in [a, last] from the m-mer hashes hm, appends the runs after the
 * first n_runs and returns their new count (passes 2 and 3). */
typedef uint32_t (*sbf_words_pass_t)(const uint8_t code[256], const uint8_t *seq, uint32_t a, uint32_t end,
                                     unsigned len, uint64_t *out);
typedef uint32_t (*sbf_segment_pass_t)(sbf_scan_t *sc, const uint64_t *hm, uint32_t a, uint32_t last, unsigned w,
                                       uint32_t n_runs);

/* The scan of a window, the same for every path: each maximal segment of valid bases through
 * the path's passes. Inlined into each path, where the passes are constants and inline too. */
static SBF_ALWAYS_INLINE void sbf_scan_segments(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                                                const uint8_t *seq, uint32_t len, sbf_words_pass_t words,
                                                sbf_segment_pass_t segment)
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
        /* the segment of valid bases [a, b) */
        const uint32_t a = pos, b = words(code, seq, a, len, s, sc->smer_hash);
        pos = b;
        if (b - a < k)
            continue;
        const uint64_t *hm = sc->smer_hash;
        if (m != s) {
            words(code, seq, a, b, m, sc->mmer_hash);
            hm = sc->mmer_hash;
        }
        n_runs = segment(sc, hm, a, b - k, w, n_runs);
        n_kmers += b - a - k + 1;
    }
    sc->n_runs = n_runs;
    sc->n_kmers = n_kmers;
}

/* The vector paths exist where GCC-compatible compilers target x86-64. */
#if defined(__x86_64__) && defined(__GNUC__)
#define SBF_SCAN_HAVE_SIMD 1
void avx512vbmi_sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                                uint32_t len);
void avx512_sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                            uint32_t len);
void avx2_sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                          uint32_t len);
/* probe_run() of sbf_index.c for 512-bit shards (shard_log2 9): the same count and presence
 * bytes. h is a run's in a scan's smer_hash: up to 16 hashes past the run are read (not used). */
uint32_t avx512_probe_run(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra, unsigned H,
                          uint8_t *presence);
/* The AVX-512 code below applies to a run: 512-bit shards (one register each), every bit a field
 * of the 32-bit s-mer hash (H <= 3), on the AVX-512 scan paths (so SBF_SIMD chooses it too). */
static inline int sbf_runs_avx512(unsigned shard_words, unsigned H)
{
    return shard_words == 8 && H <= 3 && sbf_scan_path() >= SBF_SCAN_AVX512;
}
/* The one pass over a window's runs for all its plain targets (sbf_runs_all.h) with the AVX-512
 * probe: 512-bit shards, H <= 3, T <= SBF_KEPT_TARGETS targets whose shards kept[t][run] are. */
void avx512_runs_all_targets(const sbf_scan_t *sc, const uint64_t *const (*kept)[SBF_KEPT_RUNS], int T,
                             const int *ids, unsigned extra, unsigned H, const sbf_next_shards_t *next,
                             uint64_t *hits);
/* run_mask() of sbf_index.c for 512-bit shards: the bits of a run's n_smers s-mers, stored to
 * out[0..8); avx512_run_or ORs them into the shard w instead. */
void avx512_run_mask(const uint64_t *h, uint32_t n_smers, unsigned H, uint64_t *out);
void avx512_run_or(uint64_t *w, const uint64_t *h, uint32_t n_smers, unsigned H);
/* The build's records of 512-bit shards (sbf_build.c: shard, then its 8 words) ORed into the
 * filter `bits`, the shards of the records `ahead` on fetched for writing. */
void avx512_apply_records(uint64_t *bits, const uint64_t *rec, uint32_t n, unsigned ahead);
#else
#define SBF_SCAN_HAVE_SIMD 0
#endif

#endif
