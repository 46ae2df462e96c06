/* sbf_gpu.cu -- CUDA kernels computing the bits of filters/sbf_kmer.h, and their host side.
 *
 * Build v7, query v10 (history, predictions and measurements: doc/gpu-notes.md). Same definitions as the
 * CPU engine: canonical words, the minimum m-mer hash of each k-mer's window, the shard key,
 * H bits per s-mer.
 *  - build_warp_kernel (default): one warp per piece of 4096 k-mers, one position per lane
 *    (warp_scan, shared with the query); the lanes of a step whose k-mers share a shard merge
 *    their bits in shared memory before one atomicOr per word, so the result is the CPU's set
 *    union, byte for byte.
 *  - query_run_kernel (v10, default parameters): one warp per read, one position per lane, the
 *    s-mer words from 16-base shuffle scans combined on the FMA pipe, the window minimum by
 *    doubling, each lane testing its k-mer; up to 8 targets per launch as kernel parameters.
 *    Reads come as ASCII or as BAM's 4-bit codes (decoded in the kernel); one sequence cut into
 *    overlapping pieces gives the per-k-mer presence of sbf_gpu_query_kmers().
 *  - query_warp_kernel (v6): the same structure with 64-bit shuffle scans, for every other
 *    parameter set and for targets past 2^32 shards.
 * The kernels they replaced (build v6, query v3) and the switches that chose them at run time are
 * in git history and doc/gpu-notes.md: the shipped library reads no environment variable.
 * Kernels are instantiated with compile-time parameters for the defaults (cparams) and with
 * runtime ones otherwise (kparams). On the host, every query from host memory goes through
 * stream workspaces (sbf_gpu_stream_t): the blocking calls alternate two of them.
 */
#include <cuda_runtime.h>

#include <type_traits>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../filters/sbf_error.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_params.h"
#include "sbf_gpu.h"
}

/* Every CUDA call is checked: on failure, record the message and jump to the function's
 * cleanup label `fail` with rc set. */
#define CUDA_TRY(call)                                                                                \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            rc = sbf_error(SBF_E_IO, "CUDA: %s failed: %s", #call, cudaGetErrorString(e_));          \
            goto fail;                                                                                \
        }                                                                                             \
    } while (0)

/* Rings of the latest hashes: RING >= max(k-m+1, k-s+1), a power of two chosen per launch
 * (8 for the defaults), so a thread's rings stay small enough for L1. */

struct kparams {
    unsigned k_, m_, s_, H_, log2b_, words_, w_, extra_;
    uint64_t mask_m_, mask_s_;
    unsigned shift_m_, shift_s_;
    __host__ __device__ unsigned k() const { return k_; }
    __host__ __device__ unsigned m() const { return m_; }
    __host__ __device__ unsigned s() const { return s_; }
    __host__ __device__ unsigned H() const { return H_; }
    __host__ __device__ unsigned log2b() const { return log2b_; }
    __host__ __device__ unsigned words() const { return words_; }
    __host__ __device__ unsigned w() const { return w_; }
    __host__ __device__ unsigned extra() const { return extra_; }
    __host__ __device__ uint64_t mask_m() const { return mask_m_; }
    __host__ __device__ uint64_t mask_s() const { return mask_s_; }
    __host__ __device__ unsigned shift_m() const { return shift_m_; }
    __host__ __device__ unsigned shift_s() const { return shift_s_; }
};

/* The same accessors as compile-time constants: kernels instantiated for the default parameters
 * unroll every loop over w, k-s+1 and H and shift by constants (v5, doc/gpu-notes.md). */
template <unsigned K, unsigned M, unsigned S, unsigned HH, unsigned LOG2B>
struct cparams {
    __host__ __device__ static constexpr unsigned k() { return K; }
    __host__ __device__ static constexpr unsigned m() { return M; }
    __host__ __device__ static constexpr unsigned s() { return S; }
    __host__ __device__ static constexpr unsigned H() { return HH; }
    __host__ __device__ static constexpr unsigned log2b() { return LOG2B; }
    __host__ __device__ static constexpr unsigned words() { return (1u << LOG2B) / 64u; }
    __host__ __device__ static constexpr unsigned w() { return K - M + 1; }
    __host__ __device__ static constexpr unsigned extra() { return K - S; }
    __host__ __device__ static constexpr uint64_t mask_m() { return M >= 32 ? ~0ULL : (1ULL << (2 * M)) - 1ULL; }
    __host__ __device__ static constexpr uint64_t mask_s() { return S >= 32 ? ~0ULL : (1ULL << (2 * S)) - 1ULL; }
    __host__ __device__ static constexpr unsigned shift_m() { return 2 * (M - 1); }
    __host__ __device__ static constexpr unsigned shift_s() { return 2 * (S - 1); }
};
typedef cparams<31, 25, 25, 2, 9> default_params;

/* Bits of an s-mer hash that hold its H bit positions: known at compile time for cparams only
 * (kparams' accessors are not constant expressions), 64 meaning "the whole hash". */
template <class PT> struct smer_bits { static constexpr unsigned value = 64; };
template <unsigned K, unsigned M, unsigned S, unsigned HH, unsigned L>
struct smer_bits<cparams<K, M, S, HH, L>> { static constexpr unsigned value = HH * L; };

static kparams make_params(const sbf_params_t *p)
{
    kparams kp;
    kp.k_ = (unsigned)p->k;
    kp.m_ = (unsigned)p->m;
    kp.s_ = (unsigned)p->s;
    kp.H_ = (unsigned)p->hashes;
    kp.log2b_ = sbf_params_shard_log2(p);
    kp.words_ = sbf_params_shard_words(p);
    kp.w_ = kp.k_ - kp.m_ + 1;
    kp.extra_ = kp.k_ - kp.s_;
    kp.mask_m_ = sbf_mask(kp.m_);
    kp.mask_s_ = sbf_mask(kp.s_);
    kp.shift_m_ = 2 * (kp.m_ - 1);
    kp.shift_s_ = 2 * (kp.s_ - 1);
    return kp;
}

/* Per-thread scanner state: rolling words, the sliding minimum (minimap2 style: a new m-mer at
 * least as small takes over; when the minimum leaves the window, rescan it) and a ring of the
 * latest s-mer (and, when m != s, m-mer) hashes indexed by the position where the word ends.
 * The ring is only read on a rescan (about 2/(w+1) of positions) and when a k-mer's shard
 * differs from the previous one's. */
template <bool SHARED, unsigned RING>
struct scanner {
    sbf_roll_t rs, rm;
    unsigned valid;
    uint64_t min_hash;
    uint64_t min_end;
    uint64_t ring_s[RING];
    uint64_t ring_m[SHARED ? 1 : RING]; /* with m == s the s-mer ring serves both */
};

template <bool SHARED, unsigned RING>
__device__ __forceinline__ void scanner_reset(scanner<SHARED, RING> &sc)
{
    sc.valid = 0;
    sc.rs.fwd = sc.rs.rev = sc.rm.fwd = sc.rm.rev = 0;
    sc.min_hash = ~0ULL;
    sc.min_end = 0;
}

/* Push one base (code 0..4) ending at pos; returns 1 when a valid k-mer ends at pos, with its
 * minimizer hash in sc.min_hash and its newest s-mer hash in *newest. */
template <class PT, bool SHARED, unsigned RING>
__device__ __forceinline__ int scanner_push(scanner<SHARED, RING> &sc, const PT &p, unsigned c, uint64_t pos,
                                            uint64_t *newest)
{
    if (c > 3) {
        sc.valid = 0;
        sc.min_hash = ~0ULL;
        return 0;
    }
    sbf_roll_push(&sc.rs, c, p.mask_s(), p.shift_s());
    ++sc.valid;
    const uint64_t hs = sbf_hash_smer(sbf_roll_canonical(&sc.rs));
    sc.ring_s[pos & (RING - 1)] = hs;
    uint64_t hm = hs;
    if (!SHARED) {
        sbf_roll_push(&sc.rm, c, p.mask_m(), p.shift_m());
        hm = sbf_hash_mmer(sbf_roll_canonical(&sc.rm));
        sc.ring_m[SHARED ? 0 : pos & (RING - 1)] = hm;
    }
    if (sc.valid < p.m())
        return 0;
    if (hm <= sc.min_hash) {
        sc.min_hash = hm;
        sc.min_end = pos;
    } else if (sc.min_end + p.w() <= pos) {
        const uint64_t *ring = SHARED ? sc.ring_s : sc.ring_m;
        uint64_t mn = ~0ULL, at = pos;
        for (unsigned j = 0; j < p.w(); ++j) {
            uint64_t q = pos + 1 - p.w() + j, h = ring[q & (RING - 1)];
            if (h <= mn) {
                mn = h;
                at = q;
            }
        }
        sc.min_hash = mn;
        sc.min_end = at;
    }
    *newest = hs;
    return sc.valid >= p.k();
}

/* OR the H bits of s-mer hash h into the 8-word mask held in registers (no dynamic indexing). */
template <class PT>
__device__ __forceinline__ void mask_add(uint64_t mask[8], uint64_t h, const PT &p)
{
    for (unsigned b = 0; b < p.H(); ++b) {
        unsigned bit = sbf_smer_bit(h, b, p.log2b());
        unsigned word = bit >> 6;
        uint64_t one = 1ULL << (bit & 63);
#pragma unroll
        for (unsigned q = 0; q < 8; ++q)
            mask[q] |= q == word ? one : 0;
    }
}

__device__ __forceinline__ void mask_flush(uint64_t mask[8], unsigned long long *shard, unsigned words)
{
#pragma unroll
    for (unsigned q = 0; q < 8; ++q) {
        if (q < words && mask[q])
            atomicOr(shard + q, (unsigned long long)mask[q]);
        mask[q] = 0;
    }
}

/* Byte pos of a buffer read 8 bytes at a time (the buffer is 8-byte aligned and padded):
 * one load instruction per 8 bases instead of 8. */
struct byte_stream {
    const uint64_t *words;
    uint64_t cur;
    __device__ __forceinline__ unsigned at(uint64_t pos, bool first)
    {
        if (first || (pos & 7) == 0)
            cur = __ldg(words + (pos >> 3));
        return (unsigned)(cur >> ((pos & 7) * 8)) & 0xff;
    }
};


struct dev_target {
    const unsigned long long *bits;
    uint64_t n_shards;
};

/* Sequence formats of the query kernels: base q of a buffer as a 2-bit code (4: not a base). */
struct ascii_input {
    __device__ static __forceinline__ unsigned code(const uint8_t *__restrict__ s, uint64_t q)
    {
        return sbf_encode_ascii(s[q]);
    }
};

/* BAM's 4-bit codes, two per byte, the first in the high nibble: half the bytes of ASCII. */
struct nt16_input {
    __device__ static __forceinline__ unsigned code(const uint8_t *__restrict__ s, uint64_t q)
    {
        const unsigned b = s[q >> 1];
        return sbf_encode_nt16(q & 1 ? b & 15u : b >> 4);
    }
};

/* Layouts: which bases the warp (or thread) of item i scans. packed_reads: read i is
 * [offsets[i] - base, offsets[i+1] - base) of the buffer, in bases (bytes for ASCII, 4-bit codes
 * for nt16); the kernel writes kmers[i] and hits[i * R + r]. */
struct packed_reads {
    const uint64_t *__restrict__ offsets;
    uint64_t base;
    static constexpr bool presence = false;
    __device__ __forceinline__ void span(uint64_t i, unsigned k, uint64_t &start, uint64_t &len) const
    {
        (void)k;
        start = offsets[i] - base;
        len = offsets[i + 1] - offsets[i];
    }
    __device__ __forceinline__ void record(uint64_t j, int found) const { (void)j, (void)found; }
};

/* One sequence of `total` bases in pieces of `chunk` k-mers (chunk + k - 1 bases; consecutive
 * pieces overlap by k - 1), so that every k-mer is in exactly one piece; the kernel writes
 * present[j] (1: the k-mer starting at j is a valid k-mer present in the one target, else 0). */
struct sequence_chunks {
    uint64_t chunk, total;
    uint8_t *present;
    static constexpr bool presence = true;
    __device__ __forceinline__ void span(uint64_t i, unsigned k, uint64_t &start, uint64_t &len) const
    {
        start = i * chunk;
        const uint64_t end = start + chunk + k - 1;
        len = (end < total ? end : total) - start;
    }
    __device__ __forceinline__ void record(uint64_t j, int found) const { present[j] = (uint8_t)found; }
};

template <class PT, class WORD>
__device__ __forceinline__ int smer_present(const unsigned long long *__restrict__ w, WORD h, const PT &p)
{
    unsigned long long all = 1;
    for (unsigned b = 0; b < p.H(); ++b) {
        unsigned bit = sbf_smer_bit(h, b, p.log2b());
        all &= __ldg(w + (bit >> 6)) >> (bit & 63);
    }
    return (int)(all & 1);
}

/* v4 query: one warp per read, one position per lane, 32 positions per step. Every lane does
 * the same work for its k-mer (no divergent slow path): the canonical words ending at each
 * position come from shuffle prefix scans of 2-bit codes (forward packing with the newest base
 * low, complement packing with the newest base high), the window minimum and the k-mer's s-mer
 * hashes from shuffles of this step's and the previous step's hashes. */
#define FULL_MASK 0xffffffffu

/* The step shared by the warp-cooperative kernels: 32 positions of a sequence, one per lane.
 * From this step's base codes and the state kept from the previous step it gives, for the lane's
 * position, the number of consecutive valid bases ending there, the minimizer hash of the k-mer
 * ending there and that k-mer's k-s+1 s-mer hashes (smer[0] the newest; only the low 32 bits
 * when they hold all the bit positions). */
template <class PT, bool SHARED, unsigned RING>
struct warp_scan {
    /* the s-mer bits need H * log2(shard bits) low bits of the hash */
    typedef typename std::conditional<smer_bits<PT>::value <= 32, uint32_t, uint64_t>::type smer_word_t;
    uint32_t carry;
    uint64_t w_prev, le_prev, lv_prev[6];
    smer_word_t hs_prev;

    __device__ __forceinline__ void reset()
    {
        carry = 0;
        w_prev = le_prev = 0;
#pragma unroll
        for (int i = 0; i < 6; ++i)
            lv_prev[i] = ~0ULL;
        hs_prev = (smer_word_t)~0ULL;
    }

    __device__ __forceinline__ uint32_t step(const PT &p, unsigned lane, unsigned c, uint64_t &mn, smer_word_t smer[RING])
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
        const uint64_t hs = sbf_hash_smer(fs < rs ? fs : rs);
        uint64_t hm = hs;
        if (!SHARED) {
            const uint64_t fm = W & p.mask_m(), rm = LE >> (64 - 2 * p.m());
            hm = sbf_hash_mmer(fm < rm ? fm : rm);
        }
        /* The window's minimum by doubling: level i holds the minimum of the 2^i m-mers ending
         * here; each level reads level i 2^i positions back, from this step's lanes or the
         * previous step's (whose levels were kept). Then the k-mer's s-mers: only the low 32
         * bits of their hashes hold the bit positions (H x log2 bits <= 32 for the defaults), so
         * one 32-bit shuffle each. */
        uint64_t lv = hm;
        unsigned level = 0;
#pragma unroll
        for (; level < 5; ++level) {
            const unsigned d = 1u << level;
            if (2 * d > p.w())
                break;
            const unsigned src = (lane - d) & 31;
            const uint64_t cur = __shfl_sync(FULL_MASK, lv, src), prv = __shfl_sync(FULL_MASK, lv_prev[level], src);
            lv_prev[level] = lv;
            const uint64_t back = lane >= d ? cur : prv;
            lv = back < lv ? back : lv;
        }
        {
            /* level `level` covers P = 2^level <= w m-mers; the rest from w - P back */
            const unsigned rest = p.w() - (1u << level);
            const unsigned src = (lane - rest) & 31;
            const uint64_t cur = __shfl_sync(FULL_MASK, lv, src), prv = __shfl_sync(FULL_MASK, lv_prev[level], src);
            lv_prev[level] = lv;
            const uint64_t back = rest == 0 ? lv : lane >= rest ? cur : prv;
            mn = back < lv ? back : lv;
        }
        const smer_word_t hs_word = (smer_word_t)hs;
#pragma unroll
        for (unsigned t = 0; t < RING; ++t) {
            if (t > p.extra())
                break;
            const unsigned src = (lane - t) & 31;
            const smer_word_t cur = __shfl_sync(FULL_MASK, hs_word, src), prv = __shfl_sync(FULL_MASK, hs_prev, src);
            smer[t] = lane >= t ? cur : prv;
        }
        hs_prev = hs_word;
        return valid;
    }
};

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
                uint64_t mn;
                typename scan_t::smer_word_t smer[RING];
                const uint32_t valid = sc.step(p, lane, c, mn, smer);
                const int kmer = pos < len && valid >= p.k();
                nk += kmer;
                int found0 = 0; /* the k-mer is present in the group's first target */
                if (kmer) {
                    /* the shard key is the same for every target, only the range reduction differs */
                    const uint64_t key = sbf_shard_key(mn);
#pragma unroll
                    for (int t = 0; t < GROUP; ++t) {
                        if (t >= g)
                            break;
                        const dev_target tg = targets[r0 + t];
                        const unsigned long long *w = tg.bits + sbf_shard_of_key(key, tg.n_shards) * p.words();
                        int present = 1;
#pragma unroll
                        for (unsigned j = 0; j < RING; ++j) {
                            if (j > p.extra())
                                break;
                            present &= smer_present(w, smer[j], p);
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

/* ---- v10 query (default parameters; doc/gpu-notes.md v8-v10) ----
 * One warp per read, one position per lane, every lane testing its k-mer's k-s+1 s-mers, as v6.
 * ncu showed v6 bound by the ALU pipe (87%: logic, shifts, compares, selects), not by shuffles,
 * memory or latency, so v10 takes work off the ALU pipe:
 *  - the s-mer words come from two 16-base prefix scans (forward, and reverse complement with
 *    the newest base high) combined with IMAD: a shift left is a multiply, a shift right an
 *    IMAD.HI, and the parts never overlap, so add = or. A lane below d - 1 is complete at round
 *    d: it took a whole window from the previous step, which the source lanes send in place of
 *    their current value (one shuffle reaches either step); 10 shuffles per step, no ALU work
 *    but the canonical compare (v6: 24 shuffles, 64-bit shifts and ors);
 *  - splitmix64 with its right shifts on IMAD.HI and the seed folded into the first xor;
 *  - ASCII decoded through a 256-entry table in shared memory (v6: compares and selects);
 *  - hit counts by ballot and popc per step (v6: a shuffle reduction per read and target).
 * The multipliers are kernel parameters (powers of two the compiler cannot see, so it cannot
 * turn them back into shifts), IMAD operands straight from the constant bank. Targets are kernel
 * parameters too, QGROUP per launch; shard numbers are 32-bit (the host checks n_shards <= 2^32).
 * Tried and reverted (doc/gpu-notes.md): v8, the s-mer words from ballots spread in every lane;
 * v9, each s-mer tested once per run; bit tests on IMAD.HI / IMAD.WIDE. */
#define QGROUP 8

struct target_group {
    const uint32_t *bits[QGROUP];
    uint64_t n_shards[QGROUP];
    int g, r0, R;    /* targets r0 .. r0 + g - 1 of R (g may be 0: k-mer counts only) */
    uint32_t pw[32]; /* pw[i] = 2^i, opaque to the compiler */
};

/* The s-mer whose hash word is h, present in the shard of 32-bit words `shard`. */
template <class PT>
__device__ __forceinline__ bool smer_in(const uint32_t *__restrict__ shard, uint32_t h, const PT &p)
{
    uint32_t all = 1;
#pragma unroll
    for (unsigned b = 0; b < p.H(); ++b) {
        const unsigned bit = (h >> (b * p.log2b())) & ((1u << p.log2b()) - 1u);
        all &= __ldg(shard + (bit >> 5)) >> (bit & 31);
    }
    return all & 1;
}

/* x ^= x >> K on the halves of a 64-bit word, the shift on IMAD.HI: x >> K for 0 < K < 32 is
 * (lo >> K | hi << (32 - K), hi >> K), the parts disjoint; klo:khi is xored in as well. */
template <unsigned K>
__device__ __forceinline__ void xorshift_fma(uint32_t &lo, uint32_t &hi, const target_group &tg, uint32_t klo = 0,
                                             uint32_t khi = 0)
{
    const uint32_t slo = __umulhi(lo, tg.pw[32 - K]) + hi * tg.pw[32 - K], shi = __umulhi(hi, tg.pw[32 - K]);
    lo = lo ^ slo ^ klo;
    hi = hi ^ shi ^ khi;
}

/* sbf_mix64(y ^ SEED), the same bits (the identity tests compare with the CPU) */
template <uint64_t SEED>
__device__ __forceinline__ uint64_t mix64_fma(uint64_t y, const target_group &tg)
{
    /* (y ^ S) ^ ((y ^ S) >> 30) = y ^ (y >> 30) ^ (S ^ S >> 30) */
    constexpr uint64_t K = SEED ^ (SEED >> 30);
    uint32_t lo = (uint32_t)y, hi = (uint32_t)(y >> 32);
    xorshift_fma<30>(lo, hi, tg, (uint32_t)K, (uint32_t)(K >> 32));
    uint64_t x = ((uint64_t)hi << 32 | lo) * 0xbf58476d1ce4e5b9ULL;
    lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
    xorshift_fma<27>(lo, hi, tg);
    x = ((uint64_t)hi << 32 | lo) * 0x94d049bb133111ebULL;
    lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
    xorshift_fma<31>(lo, hi, tg);
    return (uint64_t)hi << 32 | lo;
}

/* The step of the v10 query (m == s, 16 < s < 32, compile-time parameters): for the lane's
 * position, the consecutive valid bases ending there, the hash of the canonical s-mer ending
 * there and the minimizer hash of the k-mer ending there. */
template <class PT>
struct step_scan {
    static_assert(PT::m() == PT::s() && PT::s() > 16 && PT::s() < 32, "m == s, 16 < s < 32");
    uint32_t carry;
    uint32_t f16_prev, r16_prev; /* this lane's 16-base words of the previous step */
    uint64_t lv_prev[6];         /* this lane's window-minimum levels of the previous step */

    __device__ __forceinline__ void reset()
    {
        carry = 0;
        f16_prev = r16_prev = 0;
#pragma unroll
        for (int i = 0; i < 6; ++i)
            lv_prev[i] = ~0ULL;
    }

    __device__ __forceinline__ void step(const PT &p, const target_group &tg, unsigned lane, unsigned c,
                                         uint32_t &valid, uint64_t &hs, uint64_t &mn)
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
            const uint32_t af = __shfl_sync(FULL_MASK, old ? f16_prev : f, (lane - d) & 31);
            const uint32_t ar = __shfl_sync(FULL_MASK, old ? r16_prev : r, (lane - d) & 31);
            if (lane + 1 >= d) {
                f = af * tg.pw[2 * d] + f;
                r = __umulhi(ar, tg.pw[32 - 2 * d]) + r;
            }
        }
        /* the 16 codes before those: from lane - 16, of this step or the previous one */
        const bool old = lane >= 16;
        const uint32_t fo = __shfl_sync(FULL_MASK, old ? f16_prev : f, (lane - 16) & 31);
        const uint32_t ro = __shfl_sync(FULL_MASK, old ? r16_prev : r, (lane - 16) & 31);
        f16_prev = f;
        r16_prev = r;
        /* the s-mer: f and the low s - 16 codes of fo; the reverse complement: r above the top
         * s - 16 complements of ro */
        constexpr unsigned T = 2 * (PT::s() - 16);
        const uint64_t fs = (uint64_t)(fo & (uint32_t)((1ULL << T) - 1)) << 32 | f;
        const uint32_t rlo = r * tg.pw[T] + __umulhi(ro, tg.pw[T]), rhi = __umulhi(r, tg.pw[T]);
        const uint64_t rs = (uint64_t)rhi << 32 | rlo;
        hs = mix64_fma<SBF_SEED_WORD>(fs < rs ? fs : rs, tg);
        /* window minimum by doubling (v6), each level's previous-step value sent by the source
         * lanes that the receiving lanes reach back to */
        uint64_t lv = hs;
        unsigned level = 0;
#pragma unroll
        for (; level < 5; ++level) {
            const unsigned d = 1u << level;
            if (2 * d > p.w())
                break;
            const uint64_t send = lane >= 32 - d ? lv_prev[level] : lv;
            lv_prev[level] = lv;
            const uint64_t back = __shfl_sync(FULL_MASK, send, (lane - d) & 31);
            lv = back < lv ? back : lv;
        }
        {
            const unsigned rest = p.w() - (1u << level);
            if (rest == 0) {
                mn = lv;
            } else {
                const uint64_t send = lane >= 32 - rest ? lv_prev[level] : lv;
                lv_prev[level] = lv;
                const uint64_t back = __shfl_sync(FULL_MASK, send, (lane - rest) & 31);
                mn = back < lv ? back : lv;
            }
        }
    }
};

/* Blocks of 256 per SM the kernel is compiled for: 5 for one target (48 registers), 3 for
 * QGROUP (v8's measurements: no bound was slower) */
template <class PT, int GROUP, class IN, class LAYOUT>
__global__ void __launch_bounds__(256, GROUP == 1 ? 5 : 3)
    query_run_kernel(const uint8_t *__restrict__ seqs, LAYOUT layout, uint64_t n, PT p, const target_group tg,
                     uint32_t *kmers, uint32_t *hits)
{
    constexpr unsigned EXTRA = PT::extra();
    static_assert(PT::H() * PT::log2b() <= 32, "bit positions in the low 32 bits of a hash");
    constexpr bool LUT = std::is_same<IN, ascii_input>::value;
    __shared__ uint8_t ascii_code[LUT ? 256 : 1];
    const unsigned lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    const int g = tg.g;
    if constexpr (LUT) {
        for (unsigned q = threadIdx.x; q < 256; q += blockDim.x)
            ascii_code[q] = (uint8_t)sbf_encode_ascii((unsigned char)q);
        __syncthreads();
    }
    for (uint64_t i = warp; i < n; i += n_warps) {
        uint64_t start, len;
        layout.span(i, p.k(), start, len);
        step_scan<PT> sc;
        sc.reset();
        uint32_t nk = 0, count[GROUP];
#pragma unroll
        for (int t = 0; t < GROUP; ++t)
            count[t] = 0;
        uint32_t hw_prev = 0; /* this lane's s-mer word of the previous step */
        for (uint64_t base = 0; base < len; base += 32) {
            const uint64_t pos = base + lane;
            unsigned c = SBF_BASE_INVALID;
            if (pos < len) {
                if constexpr (LUT)
                    c = ascii_code[seqs[start + pos]];
                else
                    c = IN::code(seqs, start + pos);
            }
            uint32_t valid;
            uint64_t hs, mn;
            sc.step(p, tg, lane, c, valid, hs, mn);
            const bool kmer = pos < len && valid >= p.k();
            nk += __popc(__ballot_sync(FULL_MASK, kmer));
            const uint64_t key = mix64_fma<SBF_SEED_SHARD>(mn, tg); /* sbf_shard_key(mn) */
            const uint32_t hw = (uint32_t)hs;
            /* the k-mer's s-mers: sm[u] ends u positions back, one shuffle each */
            uint32_t sm[EXTRA + 1];
            sm[0] = hw;
#pragma unroll
            for (unsigned u = 1; u <= EXTRA; ++u)
                sm[u] = __shfl_sync(FULL_MASK, lane >= 32 - u ? hw_prev : hw, (lane - u) & 31);
            hw_prev = hw;
            bool found0 = false;
#pragma unroll
            for (int t = 0; t < GROUP; ++t) {
                if (t >= g)
                    break;
                bool present = kmer;
                if (kmer) {
                    const uint32_t *w = tg.bits[t] + (uint64_t)(uint32_t)sbf_shard_of_key(key, tg.n_shards[t]) * 16u;
#pragma unroll
                    for (unsigned u = 0; u <= EXTRA; ++u)
                        present &= smer_in(w, sm[u], p);
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
                    hits[i * (uint64_t)tg.R + (uint64_t)(tg.r0 + t)] = count[t];
            if (kmers)
                kmers[i] = nk;
        }
    }
}

#define BUILD_PIECE 4096u /* k-mers per warp of the warp-cooperative build */

/* v7 build: one warp per piece of BUILD_PIECE k-mers (BUILD_PIECE + k - 1 bases; consecutive
 * pieces overlap by k - 1), one position per lane, through the query's warp_scan. A k-mer sets
 * the bits of its k-s+1 s-mers in its shard; when the previous k-mer is in the same shard, only
 * the newest s-mer is new (the CPU's runs). The lanes whose k-mers share a shard in this step
 * (__match_any_sync over the lanes holding a k-mer, never the full mask) OR their bits into one
 * slot of shared memory, the group's first lane's; that lane then ORs the slot's non-zero words
 * into the filter, one atomicOr each. No lane runs a slow path alone. */
template <class PT, bool SHARED, unsigned RING>
__global__ void __launch_bounds__(256) build_warp_kernel(const uint8_t *__restrict__ codes, uint64_t len, PT p,
                                                         uint64_t n_shards, unsigned long long *bits, uint64_t n_pieces)
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
        uint64_t last_shard = ~0ULL; /* shard of the k-mer ending just before this step (none: ~0) */
        for (uint64_t base = 0; base < plen; base += 32) {
            const uint64_t pos = base + lane;
            const unsigned c = pos < plen ? codes[start + pos] : SBF_BASE_INVALID;
            uint64_t mn;
            typename scan_t::smer_word_t smer[RING];
            const uint32_t valid = sc.step(p, lane, c, mn, smer);
            const bool kmer = pos < plen && valid >= p.k();
            const uint64_t shard = kmer ? sbf_shard_index(mn, n_shards) : ~0ULL;
            const uint64_t up = __shfl_up_sync(FULL_MASK, shard, 1);
            const uint64_t before = lane == 0 ? last_shard : up;
            last_shard = __shfl_sync(FULL_MASK, shard, 31);
            const unsigned active = __ballot_sync(FULL_MASK, kmer);
            if (kmer) {
                const unsigned group = __match_any_sync(active, shard);
                const unsigned leader = __ffs(group) - 1;
                unsigned *slot = slots[wib][leader];
                const unsigned n_new = before == shard ? 1 : p.extra() + 1;
#pragma unroll
                for (unsigned j = 0; j < RING; ++j) {
                    if (j > p.extra() || j >= n_new)
                        break;
                    for (unsigned b = 0; b < p.H(); ++b) {
                        const unsigned bit = sbf_smer_bit(smer[j], b, p.log2b());
                        atomicOr(slot + (bit >> 5), 1u << (bit & 31));
                    }
                }
                __syncwarp(group);
                if (lane == leader) {
                    unsigned long long *dst = bits + shard * p.words();
#pragma unroll
                    for (unsigned q = 0; q < 8; ++q) {
                        if (q >= p.words())
                            break;
                        const unsigned long long v = slot[2 * q] | (unsigned long long)slot[2 * q + 1] << 32;
                        if (v)
                            atomicOr(dst + q, v);
                        slot[2 * q] = slot[2 * q + 1] = 0;
                    }
                }
            }
            __syncwarp(); /* the slots are clear before the next step's groups use them */
        }
    }
}

/* ---- host side ---- */

extern "C" int sbf_gpu_warm(int device)
{
    if (cudaSetDevice(device) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        cudaGetLastError();   /* not reported here: the upload meets it again and says why */
        return -1;
    }
    return 0;
}

extern "C" int sbf_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear: no driver or no device is not an error here */
        return 0;
    }
    return n;
}

extern "C" int sbf_gpu_describe(int device, char *buf, size_t size)
{
    int rc = SBF_OK, rt = 0, drv = 0;
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    CUDA_TRY(cudaRuntimeGetVersion(&rt));
    CUDA_TRY(cudaDriverGetVersion(&drv));
    snprintf(buf, size, "%s, %.1f GiB, compute %d.%d, %d SMs, CUDA runtime %d.%d, driver %d.%d", prop.name,
             (double)prop.totalGlobalMem / (1024.0 * 1024 * 1024), prop.major, prop.minor, prop.multiProcessorCount,
             rt / 1000, (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10);
    return SBF_OK;
fail:
    if (size)
        buf[0] = '\0';
    return rc;
}

static int grid_for(uint64_t work, int device, int *blocks)
{
    int sms = 0, rc = SBF_OK;
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    {
        uint64_t want = (work + 255) / 256;
        uint64_t cap = (uint64_t)sms * 8;
        *blocks = (int)(want < cap ? (want ? want : 1) : cap);
    }
    return SBF_OK;
fail:
    return rc;
}

static bool is_default(const kparams &kp)
{
    return kp.k() == default_params::k() && kp.m() == default_params::m() && kp.s() == default_params::s() &&
           kp.H() == default_params::H() && kp.log2b() == default_params::log2b();
}

static unsigned ring_for(const kparams &kp)
{
    unsigned need = kp.w() > kp.extra() + 1 ? kp.w() : kp.extra() + 1;
    return need <= 8 ? 8 : need <= 16 ? 16 : 32;
}

/* The build kernel (v7: one warp per piece; the earlier kernels are in git history and
 * doc/gpu-notes.md). The default parameters have their own instance, constants folded in. */
template <bool SHARED, unsigned RING>
static void launch_build_t(int wblocks, const uint8_t *codes, uint64_t len, const kparams &kp, uint64_t n_shards,
                           unsigned long long *bits)
{
    const uint64_t kmers = len >= kp.k() ? len - kp.k() + 1 : 0;
    const uint64_t n_pieces = (kmers + BUILD_PIECE - 1) / BUILD_PIECE;
    /* the default parameters have m == s and rings of 8: only that instance exists */
    if constexpr (SHARED && RING == 8) {
        if (is_default(kp)) {
            build_warp_kernel<default_params, SHARED, RING>
                <<<wblocks, 256>>>(codes, len, default_params(), n_shards, bits, n_pieces);
            return;
        }
    }
    build_warp_kernel<kparams, SHARED, RING><<<wblocks, 256>>>(codes, len, kp, n_shards, bits, n_pieces);
}

static void launch_build(int wblocks, const uint8_t *codes, uint64_t len, const kparams &kp, uint64_t n_shards,
                         unsigned long long *bits)
{
    const unsigned ring = ring_for(kp);
    const bool shared = kp.m() == kp.s();
#define BUILD_CASE(S, RG) \
    if (shared == S && ring == RG) \
        return launch_build_t<S, RG>(wblocks, codes, len, kp, n_shards, bits);
    BUILD_CASE(true, 8) BUILD_CASE(true, 16) BUILD_CASE(true, 32)
    BUILD_CASE(false, 8) BUILD_CASE(false, 16) BUILD_CASE(false, 32)
#undef BUILD_CASE
}

/* The targets of a query: the device table (the v6 kernel), its host copy (the v10 kernel
 * takes up to QGROUP targets per launch as parameters), and whether every target's shard numbers
 * fit 32 bits (always, below 256 GiB per target; the v10 kernel needs it). */
struct query_targets {
    const dev_target *d, *h;
    int R;
    bool small;
};


/* v10 with G targets per launch (QGROUP, or 1 for one target and for per-k-mer presence) */
template <int G, class IN, class LAYOUT>
static void launch_run_kernel(int wblocks, const uint8_t *seqs, const LAYOUT &layout, uint64_t n,
                              const query_targets &qt, uint32_t *kmers, uint32_t *hits, cudaStream_t st)
{
    for (int r0 = 0; r0 == 0 || r0 < qt.R; r0 += G) {
        target_group tg;
        memset(&tg, 0, sizeof tg);
        tg.g = qt.R - r0 < G ? qt.R - r0 : G;
        tg.r0 = r0;
        tg.R = qt.R;
        for (int b = 0; b < 32; ++b)
            tg.pw[b] = 1u << b;
        for (int t = 0; t < tg.g; ++t) {
            tg.bits[t] = (const uint32_t *)qt.h[r0 + t].bits;
            tg.n_shards[t] = qt.h[r0 + t].n_shards;
        }
        query_run_kernel<default_params, G, IN, LAYOUT>
            <<<wblocks, 256, 0, st>>>(seqs, layout, n, default_params(), tg, r0 == 0 ? kmers : NULL, hits);
    }
}

template <bool SHARED, unsigned RING, class IN, class LAYOUT>
static void launch_query_t(int blocks, const uint8_t *seqs, const LAYOUT &layout, uint64_t n, const kparams &kp,
                           const query_targets &qt, uint32_t *kmers, uint32_t *hits, cudaStream_t st)
{
    const dev_target *targets = qt.d;
    const int R = qt.R;
    /* one warp per read: 8 reads per block of 256 */
    const uint64_t want = (n + 7) / 8, cap = (uint64_t)blocks * 32;
    const int wblocks = (int)(want < cap ? (want ? want : 1) : cap);
    /* the default parameters have m == s and rings of 8: only that instance exists */
    if constexpr (SHARED && RING == 8) {
        if (is_default(kp)) {
            const int v = qt.small ? 10 : 6;   /* v10 needs 32-bit shard numbers */
            if (v != 6 && R <= 1)
                launch_run_kernel<1, IN, LAYOUT>(wblocks, seqs, layout, n, qt, kmers, hits, st);
            else if (R == 1)
                query_warp_kernel<default_params, SHARED, 1, RING, IN, LAYOUT>
                    <<<wblocks, 256, 0, st>>>(seqs, layout, n, default_params(), targets, R, kmers, hits);
            else if constexpr (!LAYOUT::presence) {
                if (v != 6)
                    launch_run_kernel<QGROUP, IN, LAYOUT>(wblocks, seqs, layout, n, qt, kmers, hits, st);
                else
                    query_warp_kernel<default_params, SHARED, 8, RING, IN, LAYOUT>
                        <<<wblocks, 256, 0, st>>>(seqs, layout, n, default_params(), targets, R, kmers, hits);
            }
            return;
        }
    }
    if (R == 1)
        query_warp_kernel<kparams, SHARED, 1, RING, IN, LAYOUT><<<wblocks, 256, 0, st>>>(seqs, layout, n, kp, targets, R,
                                                                                        kmers, hits);
    else if constexpr (!LAYOUT::presence) /* per-k-mer presence is asked of one target */
        query_warp_kernel<kparams, SHARED, 8, RING, IN, LAYOUT><<<wblocks, 256, 0, st>>>(seqs, layout, n, kp, targets, R,
                                                                                        kmers, hits);
}

template <class IN, class LAYOUT>
static void launch_query(int blocks, const uint8_t *seqs, const LAYOUT &layout, uint64_t n, const kparams &kp,
                         const query_targets &qt, uint32_t *kmers, uint32_t *hits, cudaStream_t st)
{
    const unsigned ring = ring_for(kp);
    const bool shared = kp.m() == kp.s();
#define QUERY_CASE(S, RG) \
    if (shared == S && ring == RG) \
        return launch_query_t<S, RG, IN, LAYOUT>(blocks, seqs, layout, n, kp, qt, kmers, hits, st);
    QUERY_CASE(true, 8) QUERY_CASE(true, 16) QUERY_CASE(true, 32)
    QUERY_CASE(false, 8) QUERY_CASE(false, 16) QUERY_CASE(false, 32)
#undef QUERY_CASE
}

/* Sequence formats of the host side: ASCII bytes, or BAM's 4-bit codes two per byte. */
enum seq_format { FMT_ASCII, FMT_NT16 };

static void launch_query_reads(seq_format fmt, int blocks, const uint8_t *seqs, const packed_reads &layout, uint64_t n,
                               const kparams &kp, const query_targets &qt, uint32_t *kmers, uint32_t *hits,
                               cudaStream_t st)
{
    if (fmt == FMT_NT16)
        launch_query<nt16_input>(blocks, seqs, layout, n, kp, qt, kmers, hits, st);
    else
        launch_query<ascii_input>(blocks, seqs, layout, n, kp, qt, kmers, hits, st);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A step of time_median(): a cudaError_t becomes a status with its message; a status stays. */
static int step_status(cudaError_t e, const char *what)
{
    return e == cudaSuccess ? SBF_OK : sbf_error(SBF_E_IO, "CUDA: %s failed: %s", what, cudaGetErrorString(e));
}
static int step_status(int rc, const char *what)
{
    (void)what;
    return rc;
}

/* Time `repeats` runs of launch() with CUDA events, each after an untimed prepare(); the
 * median in milliseconds goes to *ms_median. The callables return a cudaError_t or a status. */
template <class P, class L>
static int time_median(int repeats, double *ms_median, P prepare, L launch)
{
    int rc = SBF_OK;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    double *ms = (double *)malloc((size_t)repeats * sizeof *ms);
    if (!ms)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    CUDA_TRY(cudaEventCreate(&ev0));
    CUDA_TRY(cudaEventCreate(&ev1));
    for (int i = 0; i < repeats; ++i) {
        float f;
        if ((rc = step_status(prepare(), "prepare()")))
            goto fail;
        CUDA_TRY(cudaEventRecord(ev0));
        if ((rc = step_status(launch(), "launch()")))
            goto fail;
        CUDA_TRY(cudaEventRecord(ev1));
        CUDA_TRY(cudaEventSynchronize(ev1));
        CUDA_TRY(cudaEventElapsedTime(&f, ev0, ev1));
        ms[i] = f;
    }
    qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
    *ms_median = ms[repeats / 2];
fail:
    if (ev0)
        cudaEventDestroy(ev0);
    if (ev1)
        cudaEventDestroy(ev1);
    free(ms);
    return rc;
}

/* Build on the device; with repeats > 0, time `repeats` launches after a warm-up one. */
static int build_on_device(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                           int repeats, double *ms_median)
{
    int rc = SBF_OK, wblocks = 0;
    const kparams kp = make_params(&idx->params);
    const size_t bytes = sbf_target_bytes(idx, t);
    uint8_t *d_codes = NULL;
    unsigned long long *d_bits = NULL;
    const uint64_t n_pieces = len >= kp.k() ? (len - kp.k() + 1 + BUILD_PIECE - 1) / BUILD_PIECE : 0;

    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaMalloc(&d_codes, len + 8)); /* + 8: the kernel reads 8 bytes at a time */
    CUDA_TRY(cudaMemset(d_codes, 4, len + 8));
    CUDA_TRY(cudaMalloc(&d_bits, bytes));
    CUDA_TRY(cudaMemcpy(d_codes, codes, len, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(d_bits, t->bits, bytes, cudaMemcpyHostToDevice));
    if ((rc = grid_for(n_pieces * 32, device, &wblocks)))
        goto fail;
    if (n_pieces) {
        launch_build(wblocks, d_codes, len, kp, t->n_shards, d_bits);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaDeviceSynchronize());
    }
    CUDA_TRY(cudaMemcpy(t->bits, d_bits, bytes, cudaMemcpyDeviceToHost));
    if (repeats > 0 && n_pieces) {
        rc = time_median(
            repeats, ms_median, [&] { return cudaMemset(d_bits, 0, bytes); },
            [&] {
                launch_build(wblocks, d_codes, len, kp, t->n_shards, d_bits);
                return cudaGetLastError();
            });
        if (rc)
            goto fail;
    }
    sbf_target_stats(idx, t);
fail:
    cudaFree(d_codes);
    cudaFree(d_bits);
    return rc;
}

extern "C" int sbf_gpu_build_target(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                    uint64_t len)
{
    return build_on_device(device, idx, t, codes, len, 0, NULL);
}

extern "C" int sbf_gpu_bench_build(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                   uint64_t len, int repeats, double *ms_median)
{
    return build_on_device(device, idx, t, codes, len, repeats, ms_median);
}

struct blocking_set;

/* Buffer sets kept per device index: one per thread that queries it at once (the screening
 * pipeline runs two per device). */
#define BLOCKING_CACHE 4

struct sbf_gpu_index_s {
    int device;
    int n_targets;
    kparams kp;
    unsigned long long **bits; /* device arrays, one per target */
    dev_target *d_targets;
    dev_target *h_targets;     /* host copy of d_targets */
    bool small;                /* every target has at most 2^32 shards */
    pthread_mutex_t cache_lock;
    bool cache_lock_ready;
    blocking_set *cache[BLOCKING_CACHE]; /* the blocking queries' buffers, kept between calls */
    int n_cache;
};

static void blocking_set_free(blocking_set *set);

/* All targets of g, or only target `one`. */
static query_targets targets_of(const sbf_gpu_index_t *g, int one = -1)
{
    query_targets qt;
    qt.d = one < 0 ? g->d_targets : g->d_targets + one;
    qt.h = one < 0 ? g->h_targets : g->h_targets + one;
    qt.R = one < 0 ? g->n_targets : 1;
    qt.small = g->small;
    return qt;
}

extern "C" void sbf_gpu_index_free(sbf_gpu_index_t *g)
{
    if (!g)
        return;
    cudaSetDevice(g->device);
    for (int r = 0; r < g->n_targets && g->bits; ++r)
        cudaFree(g->bits[r]);
    free(g->bits);
    cudaFree(g->d_targets);
    free(g->h_targets);
    for (int c = 0; c < g->n_cache; ++c)
        blocking_set_free(g->cache[c]);
    if (g->cache_lock_ready)
        pthread_mutex_destroy(&g->cache_lock);
    free(g);
}

extern "C" int sbf_gpu_index_upload(int device, const sbf_index_t *idx, sbf_gpu_index_t **out)
{
    int rc = SBF_OK;
    dev_target *host_targets = NULL;
    sbf_gpu_index_t *g = (sbf_gpu_index_t *)calloc(1, sizeof *g);
    *out = NULL;
    if (!g || !(g->bits = (unsigned long long **)calloc((size_t)idx->n_targets, sizeof *g->bits)) ||
        !(host_targets = (dev_target *)calloc((size_t)idx->n_targets, sizeof *host_targets))) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
        goto fail;
    }
    g->device = device;
    g->n_targets = idx->n_targets;
    g->kp = make_params(&idx->params);
    if (pthread_mutex_init(&g->cache_lock, NULL) != 0) {
        rc = sbf_error(SBF_E_THREAD, "cannot create a mutex");
        goto fail;
    }
    g->cache_lock_ready = true;
    CUDA_TRY(cudaSetDevice(device));
    for (int r = 0; r < idx->n_targets; ++r) {
        size_t bytes = sbf_target_bytes(idx, &idx->targets[r]);
        CUDA_TRY(cudaMalloc(&g->bits[r], bytes));
        CUDA_TRY(cudaMemcpy(g->bits[r], idx->targets[r].bits, bytes, cudaMemcpyHostToDevice));
        host_targets[r].bits = g->bits[r];
        host_targets[r].n_shards = idx->targets[r].n_shards;
    }
    CUDA_TRY(cudaMalloc(&g->d_targets, (size_t)idx->n_targets * sizeof *g->d_targets));
    CUDA_TRY(cudaMemcpy(g->d_targets, host_targets, (size_t)idx->n_targets * sizeof *host_targets,
                        cudaMemcpyHostToDevice));
    g->small = true;
    for (int r = 0; r < idx->n_targets; ++r)
        g->small = g->small && host_targets[r].n_shards <= ((uint64_t)1 << 32);
    g->h_targets = host_targets; /* the v10 kernel takes the targets as parameters */
    *out = g;
    return SBF_OK;
fail:
    free(host_targets);
    sbf_gpu_index_free(g);
    return rc;
}

/* Query reads already packed as one buffer with offsets[0..n]; with repeats > 0, time the
 * kernel `repeats` times after the first (warm-up) launch. */
static int query_packed(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, uint32_t *kmers,
                        uint32_t *hits, int repeats, double *ms_median)
{
    int rc = SBF_OK, blocks = 0;
    const uint64_t total = offsets[n];
    const int R = g->n_targets;
    uint8_t *d_seqs = NULL;
    uint64_t *d_offsets = NULL;
    uint32_t *d_kmers = NULL, *d_hits = NULL;
    packed_reads layout;

    CUDA_TRY(cudaSetDevice(g->device));
    CUDA_TRY(cudaMalloc(&d_seqs, total + 8)); /* + 8: the v3 kernel reads 8 bytes at a time */
    CUDA_TRY(cudaMemset(d_seqs, 'N', total + 8));
    CUDA_TRY(cudaMalloc(&d_offsets, (n + 1) * sizeof *d_offsets));
    CUDA_TRY(cudaMalloc(&d_kmers, (n ? n : 1) * sizeof *d_kmers));
    CUDA_TRY(cudaMalloc(&d_hits, (n ? n : 1) * (size_t)R * sizeof *d_hits));
    CUDA_TRY(cudaMemcpy(d_seqs, seqs, total, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(d_offsets, offsets, (n + 1) * sizeof *d_offsets, cudaMemcpyHostToDevice));
    layout.offsets = d_offsets;
    layout.base = 0;
    if ((rc = grid_for(n, g->device, &blocks)))
        goto fail;
    if (n) {
        launch_query_reads(FMT_ASCII, blocks, d_seqs, layout, n, g->kp, targets_of(g), d_kmers, d_hits, 0);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaDeviceSynchronize());
    }
    if (kmers)
        CUDA_TRY(cudaMemcpy(kmers, d_kmers, n * sizeof *kmers, cudaMemcpyDeviceToHost));
    if (hits)
        CUDA_TRY(cudaMemcpy(hits, d_hits, n * (size_t)R * sizeof *hits, cudaMemcpyDeviceToHost));
    if (repeats > 0 && n) {
        rc = time_median(
            repeats, ms_median, [] { return cudaSuccess; },
            [&] {
                launch_query_reads(FMT_ASCII, blocks, d_seqs, layout, n, g->kp, targets_of(g), d_kmers, d_hits, 0);
                return cudaGetLastError();
            });
        if (rc)
            goto fail;
    }
fail:
    cudaFree(d_seqs);
    cudaFree(d_offsets);
    cudaFree(d_kmers);
    cudaFree(d_hits);
    return rc;
}

extern "C" int sbf_gpu_bench_query(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n,
                                   int repeats, double *ms_median, uint64_t *kmers_total)
{
    uint32_t *kmers = (uint32_t *)malloc((n ? n : 1) * sizeof *kmers);
    if (!kmers)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    int rc = query_packed(g, seqs, offsets, n, kmers, NULL, repeats, ms_median);
    uint64_t total = 0;
    for (size_t i = 0; rc == SBF_OK && i < n; ++i)
        total += kmers[i];
    *kmers_total = total;
    free(kmers);
    return rc;
}

extern "C" int sbf_gpu_host_alloc(size_t bytes, void **out)
{
    int rc = SBF_OK;
    *out = NULL;
    CUDA_TRY(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocDefault));
    return SBF_OK;
fail:
    return rc;
}

extern "C" void sbf_gpu_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

/* ---- stream workspaces: every query from host memory goes through them ----
 * A workspace queues batches on one stream: copy-in of the packed reads and their offsets,
 * the kernel, copy-out of the counts. The blocking queries alternate batches between two
 * workspaces (the copies and host packing of one batch overlap the kernel of the other); the
 * _async entry points hand one to the caller. */
struct sbf_gpu_stream_s {
    sbf_gpu_index_t *g;
    cudaStream_t st;
    bool owns_stream;
    size_t max_reads, max_bases;
    uint8_t *d_seq;      /* max_bases + 8 bytes */
    uint64_t *d_off;     /* max_reads + 1 offsets */
    uint32_t *d_kmers;   /* max_reads */
    uint32_t *d_hits;    /* max_reads * n_targets */
    uint8_t *h_seq;      /* pinned staging of a batch (NULL where the reads come packed and pinned) */
    uint64_t *h_off;
    /* Both events block the waiting thread instead of spinning on it. With one CUDA context
     * and more cores, the runtime's default (cudaDeviceScheduleAuto) spin-waits in
     * cudaStreamSynchronize: the screening pipeline's GPU workers each burned a core while their
     * batches ran, cores its compression threads needed (bench/e2e.sh, BAM row: sbf 50.5 CPU-s
     * against samtools' 39.7). Blocking events keep that choice local to these waits, without
     * setting flags on a context the embedding program may share. */
    cudaEvent_t staged;  /* recorded after a batch's copy-in: the staging may be refilled */
    cudaEvent_t done;    /* recorded by sbf_gpu_stream_sync: everything queued so far is done */
    bool staged_pending;
};

static void stream_free(sbf_gpu_stream_t *s)
{
    if (!s)
        return;
    cudaSetDevice(s->g->device);
    if (s->st)
        cudaStreamSynchronize(s->st); /* no copy or kernel may still use the buffers */
    cudaFree(s->d_seq);
    cudaFree(s->d_off);
    cudaFree(s->d_kmers);
    cudaFree(s->d_hits);
    if (s->h_seq)
        cudaFreeHost(s->h_seq);
    if (s->h_off)
        cudaFreeHost(s->h_off);
    if (s->staged)
        cudaEventDestroy(s->staged);
    if (s->done)
        cudaEventDestroy(s->done);
    if (s->owns_stream && s->st)
        cudaStreamDestroy(s->st);
    free(s);
}

static int stream_new(sbf_gpu_index_t *g, cudaStream_t user, size_t max_reads, size_t max_bases, bool staging,
                      sbf_gpu_stream_t **out)
{
    int rc = SBF_OK;
    const size_t R = g->n_targets > 0 ? (size_t)g->n_targets : 1, reads = max_reads ? max_reads : 1;
    sbf_gpu_stream_t *s = NULL;
    *out = NULL;
    if (max_reads > ((size_t)1 << 40) / R || max_bases > ((size_t)1 << 48))
        return sbf_error(SBF_E_PARAM, "stream workspace of %zu reads and %zu bases: too large", max_reads, max_bases);
    if (!(s = (sbf_gpu_stream_t *)calloc(1, sizeof *s)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    s->g = g;
    s->max_reads = max_reads;
    s->max_bases = max_bases;
    CUDA_TRY(cudaSetDevice(g->device));
    if (user) {
        s->st = user;
    } else {
        CUDA_TRY(cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
        s->owns_stream = true;
    }
    CUDA_TRY(cudaEventCreateWithFlags(&s->staged, cudaEventDisableTiming | cudaEventBlockingSync));
    CUDA_TRY(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming | cudaEventBlockingSync));
    CUDA_TRY(cudaMalloc(&s->d_seq, max_bases + 8));
    CUDA_TRY(cudaMemsetAsync(s->d_seq, 0, max_bases + 8, s->st)); /* the v3 kernel reads 8 bytes at a time */
    CUDA_TRY(cudaMalloc(&s->d_off, (reads + 1) * sizeof *s->d_off));
    CUDA_TRY(cudaMalloc(&s->d_kmers, reads * sizeof *s->d_kmers));
    CUDA_TRY(cudaMalloc(&s->d_hits, reads * R * sizeof *s->d_hits));
    if (staging) {
        CUDA_TRY(cudaHostAlloc(&s->h_seq, max_bases + 8, cudaHostAllocDefault));
        CUDA_TRY(cudaHostAlloc(&s->h_off, (reads + 1) * sizeof *s->h_off, cudaHostAllocDefault));
    }
    *out = s;
    return SBF_OK;
fail:
    stream_free(s);
    return rc;
}

/* Queue one batch on s: the bytes of reads hoff[0]..hoff[n] of hseq (offsets absolute, in bases
 * of the format, even for nt16: every read starts on a byte) copied in, the kernel, kmers and
 * hits (either may be NULL) copied out. Returns once queued. */
static int stream_enqueue(sbf_gpu_stream_t *s, seq_format fmt, const uint8_t *hseq, const uint64_t *hoff, size_t n,
                          uint32_t *kmers, uint32_t *hits)
{
    int rc = SBF_OK, blocks = 0;
    const int R = s->g->n_targets;
    const uint64_t per_byte = fmt == FMT_NT16 ? 2 : 1;
    const uint64_t first = hoff[0] / per_byte, bytes = (hoff[n] + per_byte - 1) / per_byte - first;
    packed_reads layout;
    if (n == 0)
        return SBF_OK;
    if (n > s->max_reads || bytes > s->max_bases)
        return sbf_error(SBF_E_PARAM, "batch of %zu reads in %llu bytes: the stream workspace holds %zu reads, %zu bytes",
                         n, (unsigned long long)bytes, s->max_reads, s->max_bases);
    CUDA_TRY(cudaSetDevice(s->g->device));
    if ((rc = grid_for(n, s->g->device, &blocks)))
        return rc;
    CUDA_TRY(cudaMemcpyAsync(s->d_seq, hseq + first, bytes, cudaMemcpyHostToDevice, s->st));
    CUDA_TRY(cudaMemcpyAsync(s->d_off, hoff, (n + 1) * sizeof *hoff, cudaMemcpyHostToDevice, s->st));
    CUDA_TRY(cudaEventRecord(s->staged, s->st));
    /* offsets stay absolute: the kernel subtracts the batch's first one */
    layout.offsets = s->d_off;
    layout.base = first * per_byte;
    launch_query_reads(fmt, blocks, s->d_seq, layout, n, s->g->kp, targets_of(s->g), s->d_kmers, s->d_hits, s->st);
    CUDA_TRY(cudaGetLastError());
    if (kmers)
        CUDA_TRY(cudaMemcpyAsync(kmers, s->d_kmers, n * sizeof *kmers, cudaMemcpyDeviceToHost, s->st));
    if (hits)
        CUDA_TRY(cudaMemcpyAsync(hits, s->d_hits, n * (size_t)R * sizeof *hits, cudaMemcpyDeviceToHost, s->st));
    return SBF_OK;
fail:
    return rc;
}

/* Pack n reads into s's pinned staging (waiting first for the previous batch's copy-in), then
 * queue them. nt16 reads take (len + 1) / 2 bytes each; the unused low half of an odd read's
 * last byte becomes 0, which is not a base, so the read's k-mers are unchanged. */
static int query_async(sbf_gpu_stream_t *s, seq_format fmt, size_t n, const uint8_t *const *seqs, const size_t *lens,
                       uint32_t *kmers, uint32_t *hits)
{
    int rc = SBF_OK;
    uint64_t bases = 0, at = 0;
    if (!s->h_seq)
        return sbf_error(SBF_E_PARAM, "this stream workspace has no staging buffers");
    if (n > s->max_reads)
        return sbf_error(SBF_E_PARAM, "batch of %zu reads: the stream workspace holds at most %zu", n, s->max_reads);
    for (size_t i = 0; i < n; ++i)
        bases += lens[i];
    if (bases > s->max_bases)
        return sbf_error(SBF_E_PARAM, "batch of %llu bases: the stream workspace holds at most %zu",
                         (unsigned long long)bases, s->max_bases);
    if (n == 0)
        return SBF_OK;
    if (s->staged_pending) {
        CUDA_TRY(cudaSetDevice(s->g->device));
        CUDA_TRY(cudaEventSynchronize(s->staged));
        s->staged_pending = false;
    }
    s->h_off[0] = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t len = lens[i], bytes = fmt == FMT_NT16 ? (len + 1) / 2 : len;
        if (bytes)
            memcpy(s->h_seq + at, seqs[i], bytes);
        if (fmt == FMT_NT16 && (len & 1))
            s->h_seq[at + bytes - 1] &= 0xf0;
        at += bytes;
        s->h_off[i + 1] = fmt == FMT_NT16 ? 2 * at : at;
    }
    s->staged_pending = true; /* even after a failure part-way: a copy may have been queued */
    return stream_enqueue(s, fmt, s->h_seq, s->h_off, n, kmers, hits);
fail:
    return rc;
}

extern "C" int sbf_gpu_stream_create(sbf_gpu_index_t *g, void *cuda_stream, size_t max_reads, size_t max_bases,
                                     sbf_gpu_stream_t **out)
{
    return stream_new(g, (cudaStream_t)cuda_stream, max_reads, max_bases, true, out);
}

extern "C" void *sbf_gpu_stream_handle(const sbf_gpu_stream_t *s) { return (void *)s->st; }

extern "C" int sbf_gpu_query_async(sbf_gpu_stream_t *s, size_t n, const char *const *seqs, const size_t *lens,
                                   uint32_t *kmers, uint32_t *hits)
{
    return query_async(s, FMT_ASCII, n, (const uint8_t *const *)seqs, lens, kmers, hits);
}

extern "C" int sbf_gpu_query_nt16_async(sbf_gpu_stream_t *s, size_t n, const uint8_t *const *packed, const size_t *lens,
                                        uint32_t *kmers, uint32_t *hits)
{
    return query_async(s, FMT_NT16, n, packed, lens, kmers, hits);
}

extern "C" int sbf_gpu_stream_sync(sbf_gpu_stream_t *s)
{
    int rc = SBF_OK;
    CUDA_TRY(cudaSetDevice(s->g->device));
    CUDA_TRY(cudaEventRecord(s->done, s->st));
    CUDA_TRY(cudaEventSynchronize(s->done));
    s->staged_pending = false;
    return SBF_OK;
fail:
    return rc;
}

extern "C" void sbf_gpu_stream_destroy(sbf_gpu_stream_t *s) { stream_free(s); }


/* The blocking queries' two workspaces and pinned result buffers. They are kept in the index
 * between calls: pinned allocations cost milliseconds, and the screening pipeline makes one
 * call per batch (bench/e2e.sh: allocating them on every call made the GPU classifier stage 3 s
 * of a 4 s run). Each caller takes a kept set (up to BLOCKING_CACHE callers at once, the
 * pipeline's workers); a caller finding none makes one, kept afterwards if there is room. */
struct blocking_set {
    sbf_gpu_stream_t *ws[2];
    uint32_t *out_k[2], *out_h[2];
    size_t batch, max_bases; /* capacity */
};

static void blocking_set_free(blocking_set *set)
{
    if (!set)
        return;
    for (int w = 0; w < 2; ++w) {
        stream_free(set->ws[w]); /* waits for its work first */
        if (set->out_k[w])
            cudaFreeHost(set->out_k[w]);
        if (set->out_h[w])
            cudaFreeHost(set->out_h[w]);
    }
    free(set);
}

/* A set holding batches of `batch` reads and `max_bases` bases: the index's kept one if it is
 * large enough, else a new one (with room to spare, so that slightly larger batches reuse it). */
static int blocking_set_take(sbf_gpu_index_t *g, size_t batch, size_t max_bases, blocking_set **out)
{
    int rc = SBF_OK;
    const size_t R = g->n_targets > 0 ? (size_t)g->n_targets : 1;
    blocking_set *set = NULL;
    pthread_mutex_lock(&g->cache_lock);
    if (g->n_cache > 0)
        set = g->cache[--g->n_cache];
    pthread_mutex_unlock(&g->cache_lock);
    if (set && set->batch >= batch && set->max_bases >= max_bases) {
        *out = set;
        return SBF_OK;
    }
    blocking_set_free(set);
    if (!(set = (blocking_set *)calloc(1, sizeof *set)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    set->batch = batch;
    set->max_bases = max_bases + max_bases / 4;
    for (int w = 0; w < 2; ++w) {
        if ((rc = stream_new(g, NULL, set->batch, set->max_bases, true, &set->ws[w])))
            goto fail;
        CUDA_TRY(cudaHostAlloc(&set->out_k[w], set->batch * sizeof(uint32_t), cudaHostAllocDefault));
        CUDA_TRY(cudaHostAlloc(&set->out_h[w], set->batch * R * sizeof(uint32_t), cudaHostAllocDefault));
    }
    *out = set;
    return SBF_OK;
fail:
    blocking_set_free(set);
    return rc;
}

/* Keep the set in the index for the next call (unless BLOCKING_CACHE sets are kept already). */
static void blocking_set_give_back(sbf_gpu_index_t *g, blocking_set *set)
{
    pthread_mutex_lock(&g->cache_lock);
    if (g->n_cache < BLOCKING_CACHE) {
        g->cache[g->n_cache++] = set;
        set = NULL;
    }
    pthread_mutex_unlock(&g->cache_lock);
    blocking_set_free(set);
}

#define STREAM_BATCH 262144u /* reads per batch of the streamed query: measured best on the H200 */

/* The blocking queries: batches of STREAM_BATCH reads alternate between the two workspaces of a
 * set; each batch's counts land in pinned buffers of its workspace and are copied to kmers /
 * hits once the workspace's next batch is due (or at the end). */
static int query_blocking(sbf_gpu_index_t *g, seq_format fmt, size_t n, const uint8_t *const *seqs, const size_t *lens,
                          uint32_t *kmers, uint32_t *hits)
{
    int rc = SBF_OK;
    const size_t R = (size_t)g->n_targets, batch = n < STREAM_BATCH ? n : STREAM_BATCH;
    const int n_ws = n > batch ? 2 : 1;
    blocking_set *set = NULL;
    size_t pend_first[2] = {0, 0}, pend_n[2] = {0, 0};
    size_t max_bases = 0;
    if (n == 0)
        return SBF_OK;
    for (size_t b0 = 0; b0 < n; b0 += batch) {
        size_t bases = 0;
        for (size_t i = b0; i < n && i < b0 + batch; ++i)
            bases += lens[i];
        max_bases = bases > max_bases ? bases : max_bases;
    }
    if ((rc = blocking_set_take(g, batch, max_bases, &set)))
        return rc;
    /* wait for workspace w's batch and copy its counts to the caller's arrays */
    auto collect = [&](int w) -> int {
        if (pend_n[w] == 0)
            return SBF_OK;
        int r = sbf_gpu_stream_sync(set->ws[w]);
        if (r == SBF_OK) {
            memcpy(kmers + pend_first[w], set->out_k[w], pend_n[w] * sizeof *kmers);
            memcpy(hits + pend_first[w] * R, set->out_h[w], pend_n[w] * R * sizeof *hits);
        }
        pend_n[w] = 0;
        return r;
    };
    for (size_t b0 = 0, k = 0; b0 < n; b0 += batch, ++k) {
        const int w = (int)(k % (size_t)n_ws);
        const size_t cnt = n - b0 < batch ? n - b0 : batch;
        if ((rc = collect(w)) || (rc = query_async(set->ws[w], fmt, cnt, seqs + b0, lens + b0, set->out_k[w], set->out_h[w])))
            goto fail;
        pend_first[w] = b0;
        pend_n[w] = cnt;
    }
    for (int w = 0; w < n_ws; ++w)
        if ((rc = collect(w)))
            goto fail;
    blocking_set_give_back(g, set);
    return SBF_OK;
fail:
    blocking_set_free(set); /* after a failure its state is not trusted again */
    return rc;
}

extern "C" int sbf_gpu_query(sbf_gpu_index_t *g, size_t n, const char *const *seqs, const size_t *lens,
                             uint32_t *kmers, uint32_t *hits)
{
    return query_blocking(g, FMT_ASCII, n, (const uint8_t *const *)seqs, lens, kmers, hits);
}

extern "C" int sbf_gpu_query_nt16(sbf_gpu_index_t *g, size_t n, const uint8_t *const *packed, const size_t *lens,
                                  uint32_t *kmers, uint32_t *hits)
{
    return query_blocking(g, FMT_NT16, n, packed, lens, kmers, hits);
}

/* Reads already packed in pinned host memory (seqs + offsets), in batches of `batch` reads over
 * two workspaces without staging: the copies of one batch overlap the kernel of the other.
 * kmers[i] and hits[i * R + r] (pinned) receive the results. With repeats > 0 the whole run,
 * copies both ways included, is timed `repeats` times after a warm-up; the median goes to
 * *ms_median. */
static int query_streamed(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, size_t batch,
                          uint32_t *kmers, uint32_t *hits, int repeats, double *ms_median)
{
    int rc = SBF_OK;
    const size_t R = (size_t)g->n_targets;
    sbf_gpu_stream_t *ws[2] = {NULL, NULL};
    size_t max_bytes = 0;
    if (n == 0)
        return SBF_OK;
    if (batch == 0 || batch > n)
        batch = n;
    for (size_t b0 = 0; b0 < n; b0 += batch) {
        size_t b1 = b0 + batch < n ? b0 + batch : n;
        if (offsets[b1] - offsets[b0] > max_bytes)
            max_bytes = offsets[b1] - offsets[b0];
    }
    for (int w = 0; w < 2; ++w)
        if ((rc = stream_new(g, NULL, batch, max_bytes, false, &ws[w])))
            goto fail;
    {
        auto run_all = [&]() -> int {
            int r = SBF_OK;
            for (size_t b0 = 0, k = 0; b0 < n && r == SBF_OK; b0 += batch, ++k) {
                const size_t cnt = n - b0 < batch ? n - b0 : batch;
                r = stream_enqueue(ws[k & 1], FMT_ASCII, (const uint8_t *)seqs, offsets + b0, cnt, kmers + b0,
                                   hits + b0 * R);
            }
            for (int w = 0; w < 2; ++w) {
                int r2 = sbf_gpu_stream_sync(ws[w]);
                r = r ? r : r2;
            }
            return r;
        };
        if ((rc = run_all()) == SBF_OK && repeats > 0)
            rc = time_median(repeats, ms_median, [] { return cudaDeviceSynchronize(); }, run_all);
    }
fail:
    stream_free(ws[0]);
    stream_free(ws[1]);
    return rc;
}

extern "C" int sbf_gpu_bench_query_host(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n,
                                        size_t batch, int repeats, double *ms_median, uint64_t *kmers_total)
{
    int rc = SBF_OK;
    uint32_t *kmers = NULL, *hits = NULL;
    CUDA_TRY(cudaHostAlloc(&kmers, (n ? n : 1) * sizeof *kmers, cudaHostAllocDefault));
    CUDA_TRY(cudaHostAlloc(&hits, (n ? n : 1) * (size_t)g->n_targets * sizeof *hits, cudaHostAllocDefault));
    if ((rc = query_streamed(g, seqs, offsets, n, batch, kmers, hits, repeats, ms_median)) == SBF_OK) {
        uint64_t total = 0;
        for (size_t i = 0; i < n; ++i)
            total += kmers[i];
        *kmers_total = total;
    }
fail:
    cudaFreeHost(kmers);
    cudaFreeHost(hits);
    return rc;
}

#define PRESENCE_CHUNK 2048u /* k-mers per warp of the per-k-mer query */

extern "C" int sbf_gpu_query_kmers(sbf_gpu_index_t *g, int target, const char *seq, size_t len, uint8_t *present)
{
    int rc = SBF_OK, blocks = 0;
    const uint64_t k = g->kp.k();
    uint8_t *d_seq = NULL, *d_present = NULL;
    sequence_chunks layout;
    uint64_t rows, pieces;
    if (target < 0 || target >= g->n_targets)
        return sbf_error(SBF_E_PARAM, "no target number %d (the index has %d)", target, g->n_targets);
    if (len < k)
        return SBF_OK;
    rows = len - k + 1;
    pieces = (rows + PRESENCE_CHUNK - 1) / PRESENCE_CHUNK;
    CUDA_TRY(cudaSetDevice(g->device));
    CUDA_TRY(cudaMalloc(&d_seq, len));
    CUDA_TRY(cudaMalloc(&d_present, rows));
    CUDA_TRY(cudaMemcpy(d_seq, seq, len, cudaMemcpyHostToDevice));
    if ((rc = grid_for(pieces, g->device, &blocks)))
        goto fail;
    layout.chunk = PRESENCE_CHUNK;
    layout.total = len;
    layout.present = d_present;
    launch_query<ascii_input>(blocks, d_seq, layout, pieces, g->kp, targets_of(g, target), NULL, NULL, 0);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(present, d_present, rows, cudaMemcpyDeviceToHost));
fail:
    cudaFree(d_seq);
    cudaFree(d_present);
    return rc;
}
