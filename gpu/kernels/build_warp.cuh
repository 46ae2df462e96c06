/* kernels/build_warp.cuh -- the build (v8), for every parameter set. */
#ifndef SBF_GPU_KERNELS_BUILD_WARP_CUH
#define SBF_GPU_KERNELS_BUILD_WARP_CUH

#include "warp_scan.cuh"

#define BUILD_PIECE 4096u /* k-mers per warp of the warp-cooperative build */

/* v7/v8 build: one warp per piece of BUILD_PIECE k-mers (BUILD_PIECE + k - 1 bases; consecutive
 * pieces overlap by k - 1), one position per lane, through the query's warp_scan. A k-mer sets
 * the bits of its k-s+1 s-mers in its shard; when the previous k-mer is in the same shard, only
 * the newest s-mer is new (the CPU's runs). The lanes whose k-mers share a shard in this step
 * (__match_any_sync over the lanes holding a k-mer, never the full mask) OR their bits into one
 * slot of shared memory, the group's first lane's; v7 had that lane OR the slot's non-zero
 * words into the filter, one 64-bit atomicOr each; v8 writes the slots out warp-wide (below).
 * No lane runs a slow path alone. A build that leaves k-mers out (held) skips them here. */
template <class PT, bool SHARED, unsigned RING>
__global__ void __launch_bounds__(256) build_warp_kernel(const uint8_t *__restrict__ codes, uint64_t len,
                                                         const uint32_t *__restrict__ held, PT p, uint64_t n_shards,
                                                         unsigned long long *bits, uint64_t n_pieces)
{
    typedef warp_scan<PT, SHARED, RING> scan_t;
    __shared__ unsigned slots[8][32][16]; /* per warp of the block and leader lane: a 512-bit shard */
    const unsigned lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
#pragma unroll
    for (unsigned q = 0; q < 16; ++q)
        slots[wib][lane][q] = 0;
    __syncwarp();
    for (uint64_t piece = warp; piece < n_pieces; piece += n_warps) {
        const uint64_t start = piece * BUILD_PIECE;
        const uint64_t plen = (start + BUILD_PIECE + p.k() - 1 < len ? start + BUILD_PIECE + p.k() - 1 : len) - start;
        scan_t sc;
        sc.reset();
        uint32_t last_shard = 0; /* shard of the k-mer ending just before this step */
        bool last_kmer = false;  /* whether a k-mer ends there */
        for (uint64_t base = 0; base < plen; base += 32) {
            const uint64_t pos = base + lane;
            const unsigned c = pos < plen ? codes[start + pos] : SBF_BASE_INVALID;
            uint32_t mn;
            typename scan_t::smer_word_t smer[RING];
            const uint32_t valid = sc.step(p, lane, c, mn, smer);
            /* held (NULL: none), hold_kernel's: the k-mers left out (DUST, a mask), whose bits
             * are not set; the next k-mer then sets all of its own (it is not `same`) */
            const uint64_t at = start + pos + 1 - p.k(); /* where the k-mer starts, when there is one */
            const bool kmer = pos < plen && valid >= p.k() && !(held && ((held[at >> 5] >> (at & 31)) & 1));
            /* shard numbers fit 32 bits (n_shards <= 2^32: sbf_idx_add_target) */
            const uint32_t shard = kmer ? (uint32_t)sbf_shard_index(mn, n_shards) : 0;
            const unsigned active = __ballot_sync(FULL_MASK, kmer);
            const uint32_t up = __shfl_up_sync(FULL_MASK, shard, 1);
            /* the previous position's k-mer is in this k-mer's shard */
            const bool same = lane == 0 ? last_kmer && last_shard == shard : ((active >> (lane - 1)) & 1) && up == shard;
            last_shard = __shfl_sync(FULL_MASK, shard, 31);
            last_kmer = active >> 31;
            unsigned leader_of = 32; /* the first lane of this lane's group */
            if (kmer) {
                const unsigned group = __match_any_sync(active, shard);
                leader_of = __ffs(group) - 1;
                unsigned *slot = slots[wib][leader_of];
                const unsigned n_new = same ? 1 : p.extra() + 1;
#pragma unroll
                for (unsigned j = 0; j < RING; ++j) {
                    if (j > p.extra() || j >= n_new)
                        break;
                    for (unsigned b = 0; b < p.H(); ++b) {
                        const unsigned bit = sbf_smer_bit(smer[j], b, p.log2b());
                        atomicOr(slot + (bit >> 5), 1u << (bit & 31));
                    }
                }
            }
            __syncwarp(); /* every lane's bits are in its group's slot */
            /* v8: the warp writes the slots out together, two groups per round: the half-warp of
             * a group reads its slot one 32-bit word per lane (no bank conflict within a slot),
             * ORs the non-zero words into the shard (one 64-byte line: two L2 sectors, against one
             * 64-bit atomic per word from the leader alone in v7) and clears the slot. */
            unsigned leaders = __ballot_sync(FULL_MASK, kmer && lane == leader_of);
            const unsigned half = lane >> 4, word = lane & 15;
            while (leaders) {
                const unsigned a = __ffs(leaders) - 1;
                leaders &= leaders - 1;
                const unsigned b = leaders ? __ffs(leaders) - 1 : a;
                leaders &= leaders ? leaders - 1 : 0;
                const unsigned who = half ? b : a;
                const uint32_t dst = __shfl_sync(FULL_MASK, shard, who);
                if (!half || b != a) {
                    unsigned *slot = slots[wib][who];
                    const unsigned v = slot[word];
                    if (v && word < 2 * p.words())
                        atomicOr((unsigned *)(bits + (uint64_t)dst * p.words()) + word, v);
                    slot[word] = 0;
                }
            }
            __syncwarp(); /* the slots are clear before the next step's groups use them */
        }
    }
}

#endif
