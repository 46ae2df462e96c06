/* kernels/hold.cuh -- the k-mers a build leaves out, found on the device: DUST's low-complexity
 * k-mers and those of an exact mask (the long-read layer's adapters), as filters/sbf_mask.c
 * finds them on the CPU, so that the GPU builds from the target's own sequence and no masked
 * copy is made. */
#ifndef SBF_GPU_KERNELS_HOLD_CUH
#define SBF_GPU_KERNELS_HOLD_CUH

#include "params.cuh"

/* A mask's k-mers are looked up in a bitmap of 2^HOLD_SIEVE_LOG2 bits first (128 KiB, in the
 * L2 cache): the adapters' 221 k-mers let 0.02% of a genome's k-mers through to the binary
 * search of the sorted keys. Host and device compute the same bit. */
#define HOLD_SIEVE_LOG2 20u

__host__ __device__ __forceinline__ uint64_t hold_sieve_bit(uint64_t key)
{
    return (key * 0xC2B2AE3D27D4EB4Full) >> (64 - HOLD_SIEVE_LOG2);
}

/* sbf_kmer_dust() of the k-mer packed in f (2 bits a base, its first base highest, k <= 32, every
 * base valid): the pairs of equal trinucleotides, counted lag by lag. For lag d, e marks the
 * bases equal to the base d before them (the low bit of each 2-bit slot), m the trinucleotides
 * equal to the one d before them (three equal bases in a row), counted where both lie in the
 * k-mer. The sum over all lags is the sum over trinucleotides of c(c-1)/2. */
__device__ __forceinline__ unsigned hold_dust(uint64_t f, unsigned k)
{
    const uint64_t low = 0x5555555555555555ull;
    unsigned score = 0;
    for (unsigned d = 1; d + 3 <= k; ++d) {
        const uint64_t x = f ^ (f >> (2 * d));
        const uint64_t e = ~(x | (x >> 1)) & low;
        const uint64_t m = e & (e << 2) & (e << 4);
        /* the slots of bases d .. k-3 (base s at bit 2(k-1-s)): bits 4 .. 2(k-1-d) */
        const unsigned top = 2 * (k - 1 - d);
        const uint64_t range = (top >= 63 ? ~0ull : (2ull << top) - 1) & ~15ull;
        score += (unsigned)__popcll(m & range);
    }
    return score;
}

/* Whether the sorted keys[0..n) hold key. */
__device__ __forceinline__ bool hold_has(const uint64_t *__restrict__ keys, uint64_t n, uint64_t key)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const uint64_t mid = (lo + hi) / 2;
        const uint64_t v = __ldg(keys + mid);
        if (v == key)
            return true;
        if (v < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Bit q of held[q / 32]: the k-mer at codes[q] is valid and left out (its DUST score reaches
 * dust_min > 0, or keys hold its canonical form). counts[0] += valid k-mers kept, counts[1] +=
 * those left out. One warp per word of held, one lane per k-mer, which reads its k bases (the
 * warp's reads overlap in the L1 cache). */
__global__ void __launch_bounds__(256) hold_kernel(const uint8_t *__restrict__ codes, uint64_t len, unsigned k,
                                                   unsigned dust_min, const uint64_t *__restrict__ keys, uint64_t n_keys,
                                                   const uint64_t *__restrict__ sieve, uint32_t *__restrict__ held,
                                                   unsigned long long *counts)
{
    const uint64_t n = len >= k ? len - k + 1 : 0, words = (n + 31) / 32;
    const unsigned lane = threadIdx.x & 31;
    const uint64_t first = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    const uint64_t kmask = sbf_mask(k);
    unsigned long long kept = 0, left = 0;
    for (uint64_t word = first; word < words; word += n_warps) {
        const uint64_t q = word * 32 + lane;
        bool valid = q < n, hold = false;
        sbf_roll_t r = {0, 0};
        for (unsigned j = 0; valid && j < k; ++j) {
            const unsigned c = codes[q + j];
            if (c > 3)
                valid = false;
            else
                sbf_roll_push(&r, c, kmask, 2 * (k - 1));
        }
        if (valid && dust_min)
            hold = hold_dust(r.fwd, k) >= dust_min;
        if (valid && !hold && n_keys) {
            const uint64_t key = sbf_roll_canonical(&r), b = hold_sieve_bit(key);
            if ((__ldg(sieve + (b >> 6)) >> (b & 63)) & 1)
                hold = hold_has(keys, n_keys, key);
        }
        const unsigned hb = __ballot_sync(FULL_MASK, hold), vb = __ballot_sync(FULL_MASK, valid);
        if (lane == 0) {
            held[word] = hb;
            kept += (unsigned)__popc(vb & ~hb);
            left += (unsigned)__popc(hb);
        }
    }
    if (lane == 0 && (kept || left)) {
        atomicAdd(counts, kept);
        atomicAdd(counts + 1, left);
    }
}

#endif
