/* sbf_scan.c -- rolling canonical hashes and the sliding-window minimizer. */
#include "sbf_scan.h"
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

/* The monotone queue of candidate minimizers holds at most k-m+2 <= 33 entries (the window
 * of the previous k-mer plus the new m-mer) before the front is trimmed: 64 slots suffice. */
#define DQ_SIZE 64u
#define DQ_MASK (DQ_SIZE - 1u)

void sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                     const uint8_t *seq, uint32_t len)
{
    const unsigned k = (unsigned)p->k, m = (unsigned)p->m, s = (unsigned)p->s;
    const uint64_t mask_m = sbf_mask(m), mask_s = sbf_mask(s);
    const unsigned shift_m = 2 * (m - 1), shift_s = 2 * (s - 1);
    sbf_roll_t rm = {0, 0}, rs = {0, 0};
    uint32_t dq_pos[DQ_SIZE];
    uint64_t dq_hash[DQ_SIZE];
    unsigned dq_head = 0, dq_tail = 0;   /* entries head..tail-1, hashes increasing */
    unsigned valid = 0;                  /* consecutive valid bases ending here */
    uint32_t n_runs = 0, n_kmers = 0;
    sbf_run_t *runs = sc->runs;

    for (uint32_t pos = 0; pos < len; ++pos) {
        unsigned c = code[seq[pos]];
        if (c > 3) {
            valid = 0;
            dq_head = dq_tail = 0;
            continue;
        }
        sbf_roll_push(&rm, c, mask_m, shift_m);
        sbf_roll_push(&rs, c, mask_s, shift_s);
        ++valid;
        if (valid >= s)
            sc->smer_hash[pos + 1 - s] = sbf_hash_smer(sbf_roll_canonical(&rs));
        if (valid >= m) {
            uint64_t h = sbf_hash_mmer(sbf_roll_canonical(&rm));
            while (dq_tail != dq_head && dq_hash[(dq_tail - 1) & DQ_MASK] > h)
                --dq_tail;
            dq_pos[dq_tail & DQ_MASK] = pos + 1 - m;
            dq_hash[dq_tail & DQ_MASK] = h;
            ++dq_tail;
        }
        if (valid >= k) {
            uint32_t first = pos + 1 - k;
            while (dq_pos[dq_head & DQ_MASK] < first)
                ++dq_head;
            uint64_t mh = dq_hash[dq_head & DQ_MASK];
            if (n_runs && runs[n_runs - 1].first + runs[n_runs - 1].n == first &&
                runs[n_runs - 1].minimizer == mh) {
                ++runs[n_runs - 1].n;
            } else {
                runs[n_runs].first = first;
                runs[n_runs].n = 1;
                runs[n_runs].minimizer = mh;
                ++n_runs;
            }
            ++n_kmers;
        }
    }
    sc->n_runs = n_runs;
    sc->n_kmers = n_kmers;
}
