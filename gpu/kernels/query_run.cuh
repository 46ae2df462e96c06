/* kernels/query_run.cuh -- the v11 query, for the compiled parameter sets (m == s, 16 < s < 32,
 * fewer than 2^32 shards per target). */
#ifndef SBF_GPU_KERNELS_QUERY_RUN_CUH
#define SBF_GPU_KERNELS_QUERY_RUN_CUH

#include <type_traits>

#include "inputs.cuh"

/* ---- v10/v11 query (compiled parameter sets; doc/gpu-notes.md v8-v11) ----
 * One warp per read, one position per lane, every lane testing its k-mer's k-s+1 s-mers, as v6.
 * ncu showed v6 bound by the ALU pipe (87%: logic, shifts, compares, selects), not by shuffles,
 * memory or latency, so v10 takes work off the ALU pipe:
 *  - the s-mer words come from two 16-base prefix scans (forward, and reverse complement with
 *    the newest base high) combined with IMAD: a shift left is a multiply, a shift right an
 *    IMAD.HI, and the parts never overlap, so add = or. A lane below d - 1 is complete at round
 *    d: it took a whole window from the previous step, which the source lanes send in place of
 *    their current value (one shuffle reaches either step); 10 shuffles per step, no ALU work
 *    but the canonical compare (v6: 24 shuffles, 64-bit shifts and ors);
 *  - the 32-bit hashes (format 2) with their right shifts on IMAD.HI and the seed folded into
 *    the first xor;
 *  - ASCII decoded through a 256-entry table in shared memory (v6: compares and selects);
 *  - hit counts by ballot and popc per step (v6: a shuffle reduction per read and target).
 * The multipliers are kernel parameters (powers of two the compiler cannot see, so it cannot
 * turn them back into shifts), IMAD operands straight from the constant bank. Targets are kernel
 * parameters too, QGROUP per launch; shard numbers are 32-bit (the host checks n_shards < 2^32).
 * v11: one target's probe ANDs whole shifted words (and2), and shuffles take lane - d unmasked
 * (shfl_back).
 * Tried and reverted (doc/gpu-notes.md): v8, the s-mer words from ballots spread in every lane;
 * v9, each s-mer tested once per run; bit tests on IMAD.HI / IMAD.WIDE. */
#define QGROUP 8

struct target_group {
    const uint32_t *bits[QGROUP];
    uint32_t n_shards[QGROUP]; /* below 2^32 (the host checks) */
    int r[QGROUP];   /* their target numbers, of R */
    int g, R;        /* g targets (may be 0: k-mer counts only) */
    uint32_t pw[32]; /* pw[i] = 2^i, opaque to the compiler */
};

/* a & b, opaque to the compiler: with plain C it narrowed every term of the probe's AND to its
 * bit 0 and chained predicates (LOP3, ISETP per bit); kept whole, the shifted words AND in one
 * LOP3 each and only the total is tested (v11, doc/gpu-notes.md). */
__device__ __forceinline__ uint32_t and2(uint32_t a, uint32_t b)
{
    uint32_t d;
    asm("and.b32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

/* x ^ (x >> K) ^ k, the shift on IMAD.HI (off the ALU pipe) */
template <unsigned K>
__device__ __forceinline__ uint32_t xorshift_fma(uint32_t x, const target_group &tg, uint32_t k = 0)
{
    return x ^ __umulhi(x, tg.pw[32 - K]) ^ k;
}

/* sbf_mix32(y ^ SEED), the same bits (the identity tests compare with the CPU): the seed folded
 * into the first xorshift, (y ^ S) ^ ((y ^ S) >> 16) = y ^ (y >> 16) ^ (S ^ (S >> 16)) */
template <uint32_t SEED>
__device__ __forceinline__ uint32_t mix32_fma(uint32_t y, const target_group &tg)
{
    uint32_t x = xorshift_fma<16>(y, tg, SEED ^ (SEED >> 16)) * SBF_MIX32_MUL1;
    x = xorshift_fma<15>(x, tg) * SBF_MIX32_MUL2;
    return xorshift_fma<16>(x, tg);
}

/* The step of the v10 query (m == s, 16 < s < 32, compile-time parameters): for the lane's
 * position, the consecutive valid bases ending there, the hash of the canonical s-mer ending
 * there and the minimizer hash of the k-mer ending there. */
template <class PT>
struct step_scan {
    static_assert(PT::m() == PT::s() && PT::s() > 16 && PT::s() < 32, "m == s, 16 < s < 32");
    uint32_t carry;
    uint32_t f16_prev, r16_prev; /* this lane's 16-base words of the previous step */
    uint32_t lv_prev[6];         /* this lane's window-minimum levels of the previous step */

    __device__ __forceinline__ void reset()
    {
        carry = 0;
        f16_prev = r16_prev = 0;
#pragma unroll
        for (int i = 0; i < 6; ++i)
            lv_prev[i] = ~0u;
    }

    __device__ __forceinline__ void step(const PT &p, const target_group &tg, unsigned lane, unsigned c,
                                         uint32_t &valid, uint32_t &hs, uint32_t &mn)
    {
        const unsigned bad = __ballot_sync(FULL_MASK, c > 3);
        const unsigned upto = bad & (lane == 31 ? FULL_MASK : (2u << lane) - 1u);
        valid = upto ? lane - (31 - __clz(upto)) : carry + lane + 1;
        carry = bad ? (uint32_t)__clz(bad) : carry + 32;
        /* f: the last 16 codes ending here, newest low; r: their complements, newest high.
         * Round d adds the d codes before the lane's d; lanes below d - 1 are complete. */
        const uint32_t cf = c & 3;
        uint32_t f = cf, r = (3u - cf) * tg.pw[30];
#pragma unroll
        for (unsigned d = 1; d <= 8; d <<= 1) {
            const bool old = lane >= 32 - d;
            const uint32_t af = shfl_back(old ? f16_prev : f, lane, d);
            const uint32_t ar = shfl_back(old ? r16_prev : r, lane, d);
            if (lane + 1 >= d) {
                f = af * tg.pw[2 * d] + f;
                r = __umulhi(ar, tg.pw[32 - 2 * d]) + r;
            }
        }
        /* the 16 codes before those: from lane - 16, of this step or the previous one */
        const bool old = lane >= 16;
        const uint32_t fo = shfl_back(old ? f16_prev : f, lane, 16);
        const uint32_t ro = shfl_back(old ? r16_prev : r, lane, 16);
        f16_prev = f;
        r16_prev = r;
        /* the s-mer: f and the low s - 16 codes of fo; the reverse complement: r above the top
         * s - 16 complements of ro */
        constexpr unsigned T = 2 * (PT::s() - 16);
        const uint32_t fhi = fo & (uint32_t)((1ULL << T) - 1);
        const uint32_t rlo = r * tg.pw[T] + __umulhi(ro, tg.pw[T]), rhi = __umulhi(r, tg.pw[T]);
        /* the canonical word (the smaller, compared as 64-bit integers), folded and mixed:
         * sbf_hash_word */
        const bool fwd = fhi < rhi || (fhi == rhi && f < rlo);
        const uint32_t lo = fwd ? f : rlo, hi = fwd ? fhi : rhi;
        hs = mix32_fma<SBF_SEED_WORD>(lo + hi * SBF_FOLD, tg);
        /* window minimum by doubling (v6), each level's previous-step value sent by the source
         * lanes that the receiving lanes reach back to */
        uint32_t lv = hs;
        unsigned level = 0;
#pragma unroll
        for (; level < 5; ++level) {
            const unsigned d = 1u << level;
            if (2 * d > p.w())
                break;
            const uint32_t send = lane >= 32 - d ? lv_prev[level] : lv;
            lv_prev[level] = lv;
            lv = min(lv, shfl_back(send, lane, d));
        }
        {
            const unsigned rest = p.w() - (1u << level);
            if (rest == 0) {
                mn = lv;
            } else {
                const uint32_t send = lane >= 32 - rest ? lv_prev[level] : lv;
                lv_prev[level] = lv;
                mn = min(lv, shfl_back(send, lane, rest));
            }
        }
    }
};

/* One step of the compiled-set queries at the lane's position, whatever the probe: the scan,
 * whether a k-mer ends here, its shard key (sbf_shard_key) and its k-s+1 s-mer hashes, sm[u]
 * ending u positions back (one shuffle each, from this step or the previous one). Shared by
 * query_run_kernel and the panel kernel (kernels/query_panel.cuh). */
template <class PT>
struct kmer_step {
    step_scan<PT> sc;
    uint32_t hw_prev; /* this lane's s-mer hash of the previous step */
    bool kmer;
    uint32_t key, sm[PT::extra() + 1];

    __device__ __forceinline__ void reset()
    {
        sc.reset();
        hw_prev = 0;
    }

    /* c: the lane's base code; in_seq: the position lies inside the sequence */
    __device__ __forceinline__ void step(const PT &p, const target_group &tg, unsigned lane, unsigned c, bool in_seq)
    {
        uint32_t valid, hw, mn;
        sc.step(p, tg, lane, c, valid, hw, mn);
        kmer = in_seq && valid >= p.k();
        key = mix32_fma<SBF_SEED_SHARD>(mn, tg);
        sm[0] = hw;
#pragma unroll
        for (unsigned u = 1; u <= PT::extra(); ++u)
            sm[u] = shfl_back(lane >= 32 - u ? hw_prev : hw, lane, u);
        hw_prev = hw;
    }
};

/* The block's ASCII -> 2-bit table in shared memory (v10: a load instead of compares). */
__device__ __forceinline__ void fill_ascii_codes(uint8_t table[256])
{
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x)
        table[q] = (uint8_t)sbf_encode_ascii((unsigned char)q);
    __syncthreads();
}

/* The lane's base code at pos of the item's bases (SBF_BASE_INVALID past its end): through the
 * block's ASCII table (IN = ascii_input) or the input format's decoder. */
template <class IN>
__device__ __forceinline__ unsigned lane_code(const uint8_t *__restrict__ seqs, uint64_t start, uint64_t pos,
                                              uint64_t len, const uint8_t *ascii_code)
{
    if (pos >= len)
        return SBF_BASE_INVALID;
    if constexpr (std::is_same<IN, ascii_input>::value)
        return ascii_code[seqs[start + pos]];
    else
        return IN::code(seqs, start + pos);
}

/* Blocks of 256 per SM the kernel is compiled for: 5 for one target (48 registers), 3 for
 * QGROUP (v8's measurements: no bound was slower) */
template <class PT, int GROUP, class IN, class LAYOUT>
__global__ void __launch_bounds__(256, GROUP == 1 ? 5 : 3)
    query_run_kernel(const uint8_t *__restrict__ seqs, LAYOUT layout, uint64_t n, PT p, const target_group tg,
                     uint32_t *kmers, uint32_t *hits)
{
    constexpr unsigned EXTRA = PT::extra();
    static_assert(PT::H() * PT::log2b() <= 32, "bit positions in the 32 bits of the hash");
    constexpr bool LUT = std::is_same<IN, ascii_input>::value;
    __shared__ uint8_t ascii_code[LUT ? 256 : 1];
    const unsigned lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    const int g = tg.g;
    if constexpr (LUT)
        fill_ascii_codes(ascii_code);
    for (uint64_t i = warp; i < n; i += n_warps) {
        uint64_t start, len;
        layout.span(i, p.k(), start, len);
        kmer_step<PT> ks;
        ks.reset();
        uint32_t nk = 0, count[GROUP];
#pragma unroll
        for (int t = 0; t < GROUP; ++t)
            count[t] = 0;
        for (uint64_t base = 0; base < len; base += 32) {
            const uint64_t pos = base + lane;
            ks.step(p, tg, lane, lane_code<IN>(seqs, start, pos, len, ascii_code), pos < len);
            const bool kmer = ks.kmer;
            nk += __popc(__ballot_sync(FULL_MASK, kmer));
            bool found0 = false;
#pragma unroll
            for (int t = 0; t < GROUP; ++t) {
                if (t >= g)
                    break;
                bool present = kmer;
                if (kmer) {
                    /* sbf_shard_of_key with 32-bit shard counts; bit b of the shard's words
                     * tested by shifting its word down (the wrap shift masks the offset) and
                     * and-ing: bit 0 of acc is the AND of every tested bit */
                    const uint32_t *w = tg.bits[t] + (size_t)__umulhi(ks.key, tg.n_shards[t]) * 16u;
                    uint32_t acc = ~0u;
#pragma unroll
                    for (unsigned u = 0; u <= EXTRA; ++u)
#pragma unroll
                        for (unsigned b = 0; b < PT::H(); ++b) {
                            const unsigned bit = (ks.sm[u] >> (b * PT::log2b())) & ((1u << PT::log2b()) - 1u);
                            const uint32_t word = __ldg(w + (bit >> 5)) >> (bit & 31);
                            /* one target: the opaque AND (v11: +11%); several: plain C, which
                             * measured faster there (v11 cost the 8-target launch 6%) */
                            acc = GROUP == 1 ? and2(acc, word) : acc & word;
                        }
                    present = kmer && (acc & 1);
                }
                count[t] += __popc(__ballot_sync(FULL_MASK, present));
                if (t == 0)
                    found0 = present;
            }
            if (LAYOUT::presence && pos < len && pos + 1 >= p.k())
                layout.record(start + pos + 1 - p.k(), found0);
        }
        if (lane == 0 && !LAYOUT::presence) {
#pragma unroll
            for (int t = 0; t < GROUP; ++t)
                if (t < g)
                    hits[i * (uint64_t)tg.R + (uint64_t)tg.r[t]] = count[t];
            if (kmers)
                kmers[i] = nk;
        }
    }
}

#endif
