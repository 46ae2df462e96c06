/* sbf_scan.c -- rolling canonical hashes and the sliding-window minimizer. */
#include "sbf_scan.h"
#include <string.h>

#include "sbf_error.h"
#include "sbf_kmer.h"
#include "sbf_scan_int.h"

const uint8_t sbf_nt4_identity[256] = {
    0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

/* The scan works on maximal stretches of valid bases (segments), in passes over arrays:
 *  1. roll the canonical s-mers (and m-mers when m != s) and hash them;
 *  2. the minimizer of every k-mer: the minimum over windows of w = k-m+1 m-mer hashes, by van
 *     Herk / Gil-Werman blocks (suffix minima within blocks of w, running prefix minima), which
 *     costs three min() per position and no data-dependent branch;
 *  3. runs: a new run wherever the minimizer hash changes, by branch-free compaction.
 * A branchy sliding minimum (monotone queue, or minimap2's rescan) mispredicted about once per
 * k-mer; see doc/PERFORMANCE.md. */

static inline uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Pass 1: the words of the segment from seq[a] rolled (sbf_roll_words, shared with the vector
 * paths), then hashed in place one by one. Returns the segment's end. */
static inline uint32_t hash_words(const uint8_t code[256], const uint8_t *seq, uint32_t a, uint32_t end,
                                  unsigned len, uint64_t *out)
{
    const uint32_t b = sbf_roll_words(code, seq, a, end, len, out), n = sbf_words_in(a, b, len);
    for (uint32_t i = a; i < a + n; ++i)
        out[i] = sbf_hash_smer(out[i]);   /* == sbf_hash_mmer: one function */
    return b;
}

/* Passes 2 and 3 for the k-mers starting in [a, last] of one segment. */
static inline uint32_t segment_runs(sbf_scan_t *sc, const uint64_t *hm, uint32_t a, uint32_t last, unsigned w,
                                    uint32_t n_runs)
{
    uint64_t *suffix = sc->suffix_min, *kmin = sc->kmer_min;
    const uint32_t last_mmer = last + w - 1;
    /* suffix minima within blocks [a + c*w, a + (c+1)*w) */
    for (uint32_t block = a; block <= last; block += w) {
        uint32_t end = block + w - 1 < last_mmer ? block + w - 1 : last_mmer;
        uint64_t m = UINT64_MAX;
        for (uint32_t j = end + 1; j-- > block;) {
            m = min64(m, hm[j]);
            suffix[j] = m;
        }
    }
    /* window [i, i+w-1]: suffix of i's block from i, prefix of the next block up to i+w-1 */
    uint64_t prefix = UINT64_MAX;
    uint32_t in_block = 0;   /* offset of j in its block */
    for (uint32_t j = a; j <= last_mmer; ++j) {
        /* a new block restarts the prefix: OR with all ones, without a branch */
        prefix = min64(prefix | (0 - (uint64_t)(in_block == 0)), hm[j]);
        in_block = in_block + 1 == w ? 0 : in_block + 1;
        if (j >= a + w - 1)
            kmin[j + 1 - w] = min64(suffix[j + 1 - w], prefix);
    }
    /* runs: write each k-mer as a candidate run start, advance when the minimizer changes */
    sbf_run_t *runs = sc->runs;
    runs[n_runs].first = a;
    runs[n_runs].minimizer = kmin[a];
    uint32_t n = n_runs + 1;
    for (uint32_t i = a + 1; i <= last; ++i) {
        runs[n].first = i;
        runs[n].minimizer = kmin[i];
        n += kmin[i] != kmin[i - 1];
    }
    for (uint32_t r = n_runs; r + 1 < n; ++r)
        runs[r].n = runs[r + 1].first - runs[r].first;
    runs[n - 1].n = last + 1 - runs[n - 1].first;
    return n;
}

/* The scalar path: the reference every vector path is compared with (tests/test_kmer.c). */
static void scalar_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                               const uint8_t *seq, uint32_t len)
{
    sbf_scan_segments(sc, p, code, seq, len, hash_words, segment_runs);
}

/* ---- the path: chosen once from the CPU's features ---- */

typedef void (*scan_fn)(sbf_scan_t *, const sbf_params_t *, const uint8_t[256], const uint8_t *, uint32_t);

static const char *const path_names[SBF_SCAN_PATHS] = {"scalar", "avx2", "avx512", "avx512vbmi"};

int sbf_scan_path_supported(sbf_scan_path_t path)
{
    switch (path) {
    case SBF_SCAN_SCALAR:
        return 1;
#if SBF_SCAN_HAVE_SIMD
    /* (libgcc's constructor has run __builtin_cpu_init: calling it again here, from several
     * threads at once, would only rewrite the same data) */
    case SBF_SCAN_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    case SBF_SCAN_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("popcnt");
    case SBF_SCAN_AVX512VBMI:
        return sbf_scan_path_supported(SBF_SCAN_AVX512) && __builtin_cpu_supports("avx512vbmi") &&
               __builtin_cpu_supports("gfni");
#endif
    default:
        return 0;
    }
}

static scan_fn path_fn(sbf_scan_path_t path)
{
#if SBF_SCAN_HAVE_SIMD
    if (path == SBF_SCAN_AVX512VBMI)
        return avx512vbmi_sbf_scan_window;
    if (path == SBF_SCAN_AVX512)
        return avx512_sbf_scan_window;
    if (path == SBF_SCAN_AVX2)
        return avx2_sbf_scan_window;
#endif
    return scalar_scan_window;
}

/* Set once, read by every scan: atomics without ordering (every thread that races on the first
 * choice computes the same one). -1: not chosen yet. */
static int chosen = -1;

sbf_scan_path_t sbf_scan_path(void)
{
    int c = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (c < 0) {
        c = SBF_SCAN_SCALAR;
        for (int q = SBF_SCAN_PATHS - 1; q > SBF_SCAN_SCALAR; --q)
            if (sbf_scan_path_supported((sbf_scan_path_t)q)) {
                c = q;
                break;
            }
        __atomic_store_n(&chosen, c, __ATOMIC_RELAXED);
    }
    return (sbf_scan_path_t)c;
}

const char *sbf_scan_path_name(sbf_scan_path_t path)
{
    return (unsigned)path < SBF_SCAN_PATHS ? path_names[path] : NULL;
}

int sbf_scan_set_path(sbf_scan_path_t path)
{
    if ((unsigned)path >= SBF_SCAN_PATHS || !sbf_scan_path_supported(path))
        return sbf_error(SBF_E_PARAM, "the CPU scan path '%s' cannot run on this CPU or build",
                         (unsigned)path < SBF_SCAN_PATHS ? path_names[path] : "?");
    __atomic_store_n(&chosen, (int)path, __ATOMIC_RELAXED);
    return SBF_OK;
}

int sbf_scan_set_path_named(const char *name)
{
    for (int q = 0; q < SBF_SCAN_PATHS; ++q)
        if (!strcmp(name, path_names[q]))
            return sbf_scan_path_supported((sbf_scan_path_t)q) ? sbf_scan_set_path((sbf_scan_path_t)q)
                                                                : sbf_error(SBF_E_PARAM, "this CPU cannot run that path");
    return sbf_error(SBF_E_PARAM, "not a scan path (scalar, avx2, avx512 or avx512vbmi)");
}

void sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                     uint32_t len)
{
    path_fn(sbf_scan_path())(sc, p, code, seq, len);
}
