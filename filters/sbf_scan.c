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

void sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                     const uint8_t *seq, uint32_t len)
{
    const unsigned k = (unsigned)p->k, m = (unsigned)p->m, s = (unsigned)p->s;
    const unsigned w = k - m + 1;   /* m-mers per k-mer */
    const uint64_t mask_m = sbf_mask(m), mask_s = sbf_mask(s);
    const unsigned shift_m = 2 * (m - 1), shift_s = 2 * (s - 1);
    sbf_roll_t rm = {0, 0}, rs = {0, 0};
    uint64_t ring[RING];
    uint64_t min_hash = UINT64_MAX;   /* minimum over the current window of m-mers */
    uint32_t min_pos = 0;             /* its start position */
    unsigned valid = 0;               /* consecutive valid bases ending here */
    uint32_t n_runs = 0, n_kmers = 0;
    sbf_run_t *runs = sc->runs;
    uint64_t *smer_hash = sc->smer_hash;

    for (uint32_t pos = 0; pos < len; ++pos) {
        unsigned c = code[seq[pos]];
        if (c > 3) {
            valid = 0;
            min_hash = UINT64_MAX;
            continue;
        }
        sbf_roll_push(&rm, c, mask_m, shift_m);
        sbf_roll_push(&rs, c, mask_s, shift_s);
        ++valid;
        if (valid >= s)
            smer_hash[pos + 1 - s] = sbf_hash_smer(sbf_roll_canonical(&rs));
        if (valid < m)
            continue;
        /* Sliding minimum, minimap2 style: a new m-mer at least as small takes over; when the
         * minimum leaves the window, rescan the w m-mers. Both events have probability about
         * 2/(w+1), so the branches are predictable, unlike a monotone queue's pops. */
        const uint32_t q = pos + 1 - m;
        const uint64_t h = sbf_hash_mmer(sbf_roll_canonical(&rm));
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
        const uint32_t first = pos + 1 - k;
        if (n_runs && runs[n_runs - 1].minimizer == min_hash && runs[n_runs - 1].first + runs[n_runs - 1].n == first) {
            ++runs[n_runs - 1].n;
        } else {
            runs[n_runs].first = first;
            runs[n_runs].n = 1;
            runs[n_runs].minimizer = min_hash;
            ++n_runs;
        }
        ++n_kmers;
    }
    sc->n_runs = n_runs;
    sc->n_kmers = n_kmers;
}
