/* kernels/warp_scan.cuh -- the per-step scan of the v6 query and the build (v7, v8), for any
 * parameter set (v4-v6 in doc/gpu-notes.md). Every lane does the same work for its k-mer (no
 * divergent slow path): the canonical words ending at each position come from shuffle prefix
 * scans of 2-bit codes (forward packing with the newest base low, complement packing with the
 * newest base high), the window minimum and the k-mer's s-mer hashes from shuffles of this
 * step's and the previous step's hashes. */
#ifndef SBF_GPU_KERNELS_WARP_SCAN_CUH
#define SBF_GPU_KERNELS_WARP_SCAN_CUH

#include <type_traits>

#include "params.cuh"

/* The step shared by the warp-cooperative kernels: 32 positions of a sequence, one per lane.
 * From this step's base codes and the state kept from the previous step it gives, for the lane's
 * position, the number of consecutive valid bases ending there, the minimizer hash of the k-mer
 * ending there and that k-mer's k-s+1 s-mer hashes (smer[0] the newest). Every hash is 32 bits
 * (format version 2). */
template <class PT, bool SHARED, unsigned RING>
struct warp_scan {
    typedef uint32_t smer_word_t;
    uint32_t carry;
    uint64_t w_prev, le_prev;
    uint32_t lv_prev[6];
    smer_word_t hs_prev;

    __device__ __forceinline__ void reset()
    {
        carry = 0;
        w_prev = le_prev = 0;
#pragma unroll
        for (int i = 0; i < 6; ++i)
            lv_prev[i] = ~0u;
        hs_prev = ~0u;
    }

    __device__ __forceinline__ uint32_t step(const PT &p, unsigned lane, unsigned c, uint32_t &mn, smer_word_t smer[RING])
    {
        /* consecutive valid bases ending here */
        const unsigned bad = __ballot_sync(FULL_MASK, c > 3);
        const unsigned upto = bad & (lane == 31 ? FULL_MASK : (2u << lane) - 1u);
        const uint32_t valid = upto ? lane - (31 - __clz(upto)) : carry + lane + 1;
        carry = __shfl_sync(FULL_MASK, valid, 31);
        /* prefix scans over this step's bases: fw packs them with the newest low (shift and
         * OR); le puts the complement of the base at lane i at bits 2i (an OR scan) */
        uint64_t fw = c & 3, le = (uint64_t)(3 - (c & 3)) << (2 * lane);
#pragma unroll
        for (unsigned d = 1; d < 32; d <<= 1) {
            uint64_t a = __shfl_up_sync(FULL_MASK, fw, d), b = __shfl_up_sync(FULL_MASK, le, d);
            if (lane >= d) {
                fw = (a << (2 * d)) | fw;
                le |= b;
            }
        }
        /* W: the last 32 bases, newest at bits 0-1; LE: their complements, newest at bits 62-63 */
        const uint64_t W = lane == 31 ? fw : (w_prev << (2 * (lane + 1))) | fw;
        const uint64_t LE = (lane == 31 ? 0 : le_prev >> (2 * (lane + 1))) | (le << (2 * (31 - lane)));
        w_prev = __shfl_sync(FULL_MASK, W, 31);
        le_prev = __shfl_sync(FULL_MASK, LE, 31);
        const uint64_t fs = W & p.mask_s(), rs = LE >> (64 - 2 * p.s());
        const uint32_t hs = sbf_hash_smer(fs < rs ? fs : rs);
        uint32_t hm = hs;
        if (!SHARED) {
            const uint64_t fm = W & p.mask_m(), rm = LE >> (64 - 2 * p.m());
            hm = sbf_hash_mmer(fm < rm ? fm : rm);
        }
        /* The window's minimum by doubling: level i holds the minimum of the 2^i m-mers ending
         * here; each level reads level i 2^i positions back, from this step's lanes or the
         * previous step's (whose levels were kept). Then the k-mer's s-mers, one shuffle each. */
        uint32_t lv = hm;
        unsigned level = 0;
#pragma unroll
        for (; level < 5; ++level) {
            const unsigned d = 1u << level;
            if (2 * d > p.w())
                break;
            const unsigned src = lane - d; /* shfl reads its low 5 bits */
            const uint32_t cur = __shfl_sync(FULL_MASK, lv, src), prv = __shfl_sync(FULL_MASK, lv_prev[level], src);
            lv_prev[level] = lv;
            lv = min(lv, lane >= d ? cur : prv);
        }
        {
            /* level `level` covers P = 2^level <= w m-mers; the rest from w - P back */
            const unsigned rest = p.w() - (1u << level);
            const unsigned src = lane - rest;
            const uint32_t cur = __shfl_sync(FULL_MASK, lv, src), prv = __shfl_sync(FULL_MASK, lv_prev[level], src);
            lv_prev[level] = lv;
            mn = min(lv, rest == 0 ? lv : lane >= rest ? cur : prv);
        }
        const smer_word_t hs_word = hs;
#pragma unroll
        for (unsigned t = 0; t < RING; ++t) {
            if (t > p.extra())
                break;
            const unsigned src = lane - t;
            const smer_word_t cur = __shfl_sync(FULL_MASK, hs_word, src), prv = __shfl_sync(FULL_MASK, hs_prev, src);
            smer[t] = lane >= t ? cur : prv;
        }
        hs_prev = hs_word;
        return valid;
    }
};

#endif
