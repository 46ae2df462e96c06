/* kernels/query_warp.cuh -- the v6 query, for every parameter set other than the compiled ones
 * and for targets of 2^32 shards: one warp per read, one position per lane (warp_scan), every lane
 * testing its k-mer's k-s+1 s-mers in each target, GROUP targets per pass over the read. */
#ifndef SBF_GPU_KERNELS_QUERY_WARP_CUH
#define SBF_GPU_KERNELS_QUERY_WARP_CUH

#include "inputs.cuh"
#include "warp_scan.cuh"

/* the s-mer's H bits in column col of a shard whose positions hold 2^lw columns */
template <class PT>
__device__ __forceinline__ int smer_present(const unsigned long long *__restrict__ w, uint32_t h, const PT &p,
                                            unsigned lw, unsigned col)
{
    unsigned long long all = 1;
    for (unsigned b = 0; b < p.H(); ++b) {
        const unsigned at = (sbf_smer_bit(h, b, p.log2b()) << lw) + col;
        all &= __ldg(w + (at >> 6)) >> (at & 63);
    }
    return (int)(all & 1);
}

template <class PT, bool SHARED, int GROUP, unsigned RING, class IN, class LAYOUT>
__global__ void __launch_bounds__(256) query_warp_kernel(const uint8_t *__restrict__ seqs, LAYOUT layout, uint64_t n, PT p,
                                                         const dev_target *__restrict__ targets, int R,
                                                         uint32_t *kmers, uint32_t *hits)
{
    typedef warp_scan<PT, SHARED, RING> scan_t;
    const unsigned lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t i = warp; i < n; i += n_warps) {
        uint64_t start, len;
        layout.span(i, p.k(), start, len);
        for (int r0 = 0; r0 < R; r0 += GROUP) {
            const int g = R - r0 < GROUP ? R - r0 : GROUP;
            uint32_t count[GROUP];
#pragma unroll
            for (int t = 0; t < GROUP; ++t)
                count[t] = 0;
            uint32_t nk = 0;
            scan_t sc;
            sc.reset();
            for (uint64_t base = 0; base < len; base += 32) {
                const uint64_t pos = base + lane;
                const unsigned c = pos < len ? IN::code(seqs, start + pos) : SBF_BASE_INVALID;
                uint32_t mn;
                typename scan_t::smer_word_t smer[RING];
                const uint32_t valid = sc.step(p, lane, c, mn, smer);
                const int kmer = pos < len && valid >= p.k();
                nk += kmer;
                int found0 = 0; /* the k-mer is present in the group's first target */
                if (kmer) {
                    /* the shard key is the same for every target, only the range reduction differs */
                    const uint32_t key = sbf_shard_key(mn);
#pragma unroll
                    for (int t = 0; t < GROUP; ++t) {
                        if (t >= g)
                            break;
                        /* a target of a wide panel: the panel's shard, the target's column
                         * (sbf_panel_column); a plain one: lw 0, column 0 */
                        const dev_target tg = targets[r0 + t];
                        const unsigned long long *w =
                            tg.bits + ((sbf_shard_of_key(key, tg.n_shards) * p.words()) << tg.log2_width);
                        const unsigned col =
                            tg.col0 + (tg.cols > 1 ? sbf_panel_column(key, tg.n_shards, tg.cols) : 0u);
                        int present = 1;
#pragma unroll
                        for (unsigned j = 0; j < RING; ++j) {
                            if (j > p.extra())
                                break;
                            present &= smer_present(w, smer[j], p, tg.log2_width, col);
                        }
                        count[t] += present;
                        if (t == 0)
                            found0 = present;
                    }
                }
                if (LAYOUT::presence && pos < len && pos + 1 >= p.k())
                    layout.record(start + pos + 1 - p.k(), found0);
            }
            /* sums over the warp */
#pragma unroll
            for (unsigned d = 16; d; d >>= 1) {
                nk += __shfl_down_sync(FULL_MASK, nk, d);
#pragma unroll
                for (int t = 0; t < GROUP; ++t)
                    count[t] += __shfl_down_sync(FULL_MASK, count[t], d);
            }
            if (lane == 0 && !LAYOUT::presence) {
#pragma unroll
                for (int t = 0; t < GROUP; ++t)
                    if (t < g)
                        hits[i * (uint64_t)R + (uint64_t)(r0 + t)] = count[t];
                if (r0 == 0)
                    kmers[i] = nk;
            }
        }
    }
}

#endif
