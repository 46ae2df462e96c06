/* kernels/query_panel.cuh -- the panel query (format 3's wide panels, doc/format.md "Panels"), for
 * the compiled parameter sets: the v11 step (kmer_step) with one load per tested position for
 * every column of the panel. A run reads W = 2^LW column bits at each of its k-s+1 times H
 * positions (one word of the panel's shard), ANDs them once, and keeps each target's column:
 * the bit of a one-column target, or for a target of several columns the one its key picks
 * (sbf_panel_column). Per-column counts come from a 32 x 32 bit transpose across the warp (lane
 * c then holds column c of every lane's hits: one popc), so counting costs the same for 8
 * columns as for 32. The prototype this replaces (bench/gpu_bench_panel.cu, 0.5.0) measured 57%
 * of the one-target rate at 8 targets; doc/gpu-notes.md "Panels" has this kernel's figures. */
#ifndef SBF_GPU_KERNELS_QUERY_PANEL_CUH
#define SBF_GPU_KERNELS_QUERY_PANEL_CUH

#include "query_run.cuh"

/* Lane c gets bit c of every lane's x, lane l's at bit l: the recursive block transpose of a
 * 32 x 32 bit matrix held one row per lane (5 shuffles). */
__device__ __forceinline__ uint32_t transpose_warp(uint32_t x, unsigned lane)
{
    const uint32_t masks[5] = {0x0000ffffu, 0x00ff00ffu, 0x0f0f0f0fu, 0x33333333u, 0x55555555u};
#pragma unroll
    for (int i = 0; i < 5; ++i) {
        const unsigned s = 16u >> i;
        const uint32_t m = masks[i], y = __shfl_xor_sync(FULL_MASK, x, (int)s);
        x = lane & s ? (x & ~m) | ((y >> s) & m) : (x & m) | ((y & m) << s);
    }
    return x;
}

template <class PT, unsigned LW, class IN>
__global__ void __launch_bounds__(256, 4)
    query_panel_kernel(const uint8_t *__restrict__ seqs, packed_reads layout, uint64_t n, PT p, const target_group tg,
                       const panel_args pa, uint32_t *kmers, uint32_t *hits)
{
    static_assert(LW >= 1 && LW <= 6, "2 to 64 columns");
    static_assert(PT::H() * PT::log2b() <= 32, "bit positions in the 32 bits of the hash");
    constexpr unsigned HALVES = LW == 6 ? 2 : 1;               /* 32-bit words per position */
    constexpr unsigned SHARD_WORDS = (512u << LW) / 32u;       /* one panel shard */
    constexpr uint32_t LOW = LW >= 5 ? ~0u : (1u << (1u << LW)) - 1u;
    constexpr bool LUT = std::is_same<IN, ascii_input>::value;
    __shared__ uint8_t ascii_code[LUT ? 256 : 1];
    const unsigned lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    if constexpr (LUT)
        fill_ascii_codes(ascii_code);
    for (uint64_t i = warp; i < n; i += n_warps) {
        uint64_t start, len;
        layout.span(i, p.k(), start, len);
        kmer_step<PT> ks;
        ks.reset();
        uint32_t nk = 0, count[HALVES]; /* lane c: column c (and c + 32) */
#pragma unroll
        for (unsigned h = 0; h < HALVES; ++h)
            count[h] = 0;
        for (uint64_t base = 0; base < len; base += 32) {
            const uint64_t pos = base + lane;
            ks.step(p, tg, lane, lane_code<IN>(seqs, start, pos, len, ascii_code), pos < len);
            nk += __popc(__ballot_sync(FULL_MASK, ks.kmer));
            uint32_t hit[HALVES];
#pragma unroll
            for (unsigned h = 0; h < HALVES; ++h)
                hit[h] = 0;
            if (ks.kmer) {
                const uint32_t *w = pa.bits + (size_t)__umulhi(ks.key, pa.n_shards) * SHARD_WORDS;
                uint32_t acc[HALVES];
#pragma unroll
                for (unsigned h = 0; h < HALVES; ++h)
                    acc[h] = ~0u;
#pragma unroll
                for (unsigned u = 0; u <= PT::extra(); ++u)
#pragma unroll
                    for (unsigned b = 0; b < PT::H(); ++b) {
                        const unsigned bit = (ks.sm[u] >> (b * PT::log2b())) & ((1u << PT::log2b()) - 1u);
                        if constexpr (LW == 6) {
                            const uint2 v = __ldg((const uint2 *)w + bit);
                            acc[0] &= v.x;
                            acc[HALVES - 1] &= v.y;
                        } else if constexpr (LW == 5) {
                            acc[0] &= __ldg(w + bit);
                        } else {
                            const unsigned at = bit << LW; /* the W bits never straddle two words */
                            acc[0] &= __ldg(w + (at >> 5)) >> (at & 31);
                        }
                    }
                /* each target's column: the fixed ones, and those the key picks */
                uint32_t sel[HALVES];
#pragma unroll
                for (unsigned h = 0; h < HALVES; ++h)
                    sel[h] = pa.whole[h];
                const uint32_t lo = ks.key * pa.n_shards; /* lo(key * n): sbf_panel_column */
                for (int j = 0; j < pa.n_split; ++j) {
                    const unsigned col = pa.split[j].col0 + __umulhi(lo, pa.split[j].cols);
                    if (col < 32)
                        sel[0] |= 1u << col;
                    else
                        sel[HALVES - 1] |= 1u << (col & 31);
                }
#pragma unroll
                for (unsigned h = 0; h < HALVES; ++h)
                    hit[h] = acc[h] & sel[h] & LOW;
            }
#pragma unroll
            for (unsigned h = 0; h < HALVES; ++h)
                count[h] += __popc(transpose_warp(hit[h], lane));
        }
        /* one-column targets: the lane of the column writes; several columns: a warp sum */
#pragma unroll
        for (unsigned h = 0; h < HALVES; ++h) {
            const int r = pa.target[lane + 32 * h];
            if (r >= 0)
                hits[i * (uint64_t)pa.R + (uint64_t)r] = count[h];
        }
        for (int j = 0; j < pa.n_split; ++j) {
            uint32_t mine = 0;
#pragma unroll
            for (unsigned h = 0; h < HALVES; ++h) {
                const unsigned col = lane + 32 * h;
                mine += col >= pa.split[j].col0 && col < pa.split[j].col0 + pa.split[j].cols ? count[h] : 0;
            }
            const uint32_t total = __reduce_add_sync(FULL_MASK, mine);
            if (lane == 0)
                hits[i * (uint64_t)pa.R + (uint64_t)pa.split[j].target] = total;
        }
        if (lane == 0 && kmers)
            kmers[i] = nk;
    }
}

#endif
