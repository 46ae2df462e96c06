/* sbf_scan.c -- rolling canonical hashes and the sliding-window minimizer. */
#include "sbf_scan.h"
#include <string.h>

#include "sbf_kmer.h"

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

/* Ring of the latest m-mer hashes, indexed by m-mer start position: holds the k-m+1 <= 32
 * m-mers of a k-mer's window. */
#define RING 32u
#define RING_MASK (RING - 1u)

/* `shared` (m == s) is a constant in each instance: then one rolling word and one hash per base
 * serve as both the s-mer and the m-mer. */
static inline void scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                               const uint8_t *seq, uint32_t len, const int shared)
{
    const unsigned k = (unsigned)p->k, m = (unsigned)p->m, s = (unsigned)p->s;
    const unsigned w = k - m + 1;   /* m-mers per k-mer */
    const uint64_t mask_m = sbf_mask(m), mask_s = sbf_mask(s);
    /* complement of each base at the top of an m-mer / s-mer: no variable shift per base */
    uint64_t top_m[4], top_s[4];
    for (unsigned c = 0; c < 4; ++c) {
        top_m[c] = (uint64_t)(3u - c) << (2 * (m - 1));
        top_s[c] = (uint64_t)(3u - c) << (2 * (s - 1));
    }
    uint64_t fm = 0, rm = 0, fs = 0, rs = 0;
    uint64_t ring[RING];
    uint64_t min_hash = UINT64_MAX;   /* minimum over the current window of m-mers */
    uint32_t min_pos = 0;             /* its start position */
    unsigned valid = 0;               /* consecutive valid bases ending here */
    uint32_t n_runs = 0, n_kmers = 0;
    uint32_t run_first = 0, run_n = 0;
    uint64_t run_min = 0;
    sbf_run_t *runs = sc->runs;
    uint64_t *smer_hash = sc->smer_hash;

    for (uint32_t pos = 0; pos < len; ++pos) {
        unsigned c = code[seq[pos]];
        if (c > 3) {
            valid = 0;
            min_hash = UINT64_MAX;
            continue;
        }
        fs = ((fs << 2) | c) & mask_s;
        rs = (rs >> 2) | top_s[c];
        if (!shared) {
            fm = ((fm << 2) | c) & mask_m;
            rm = (rm >> 2) | top_m[c];
        }
        ++valid;
        uint64_t hs = 0;
        if (valid >= s)
            smer_hash[pos + 1 - s] = hs = sbf_hash_smer(fs < rs ? fs : rs);
        if (valid < m)
            continue;
        /* Sliding minimum, minimap2 style: a new m-mer at least as small takes over; when the
         * minimum leaves the window, rescan the w m-mers. Both events have probability about
         * 2/(w+1), so the branches are predictable, unlike a monotone queue's pops. */
        const uint32_t q = pos + 1 - m;
        const uint64_t h = shared ? hs : sbf_hash_mmer(fm < rm ? fm : rm);
        ring[q & RING_MASK] = h;
        if (h <= min_hash) {
            min_hash = h;
            min_pos = q;
        } else if (min_pos + w <= q) {
            min_hash = UINT64_MAX;
            for (uint32_t j = q + 1 - w; j <= q; ++j) {
                uint64_t x = ring[j & RING_MASK];
                if (x <= min_hash) {
                    min_hash = x;
                    min_pos = j;
                }
            }
        }
        if (valid < k)
            continue;
        /* Extend the current run or start one, without a branch: the current run is stored
         * at every k-mer, overwriting itself until a new one starts. */
        const uint32_t first = pos + 1 - k;
        const int fresh = n_runs == 0 || run_min != min_hash || run_first + run_n != first;
        n_runs += (uint32_t)fresh;
        run_first = fresh ? first : run_first;
        run_n = fresh ? 1 : run_n + 1;
        run_min = min_hash;
        runs[n_runs - 1].first = run_first;
        runs[n_runs - 1].n = run_n;
        runs[n_runs - 1].minimizer = run_min;
        ++n_kmers;
    }
    sc->n_runs = n_runs;
    sc->n_kmers = n_kmers;
}

void sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                     const uint8_t *seq, uint32_t len)
{
    if (p->m == p->s)
        scan_window(sc, p, code, seq, len, 1);
    else
        scan_window(sc, p, code, seq, len, 0);
}
