/* sbf_kmer.h -- base encoding, hash functions and shard layout of a Super Bloom filter.
 *
 * This is the one definition of which bits a k-mer sets. It compiles as C99 and as CUDA
 * (every function is __host__ __device__ under nvcc), so the CPU and GPU engines compute the
 * same bits from the same code. Changing anything here changes the file format: bump
 * SBF_FORMAT_VERSION in sbf_format.h.
 *
 * Scheme (see doc/format.md and doc/parameters.md):
 *  - bases are 2-bit codes A=0 C=1 G=2 T=3; anything else (N, IUPAC) is 4 and breaks k-mers;
 *  - every k-mer, m-mer and s-mer is taken canonically: min(forward, reverse complement) as
 *    2-bit-packed integers, so a sequence and its reverse complement set/test the same bits;
 *  - words are hashed to 32 bits (sbf_hash_word: the high half folded into the low one, then a
 *    full-avalanche 32-bit mix);
 *  - a k-mer's minimizer is the smallest sbf_hash_mmer() over its k-m+1 canonical m-mers; the
 *    shard (one 512-bit block, one cache line) is sbf_shard_index() of that hash value, a
 *    second mix followed by a multiply-high range reduction;
 *  - inside the shard, each of the k-s+1 canonical s-mers of the k-mer sets/tests H bits taken
 *    from consecutive log2(shard_bits)-bit fields of sbf_hash_smer() (sbf_smer_bit); a k-mer is
 *    present only if all its s-mers are (findere).
 */
#ifndef SBF_KMER_H
#define SBF_KMER_H

#include <stdint.h>

#ifdef __CUDACC__
#define SBF_HD __host__ __device__ __forceinline__
#else
#define SBF_HD static inline
#endif

#define SBF_MAX_K 32
#define SBF_BASE_INVALID 4

/* Seeds and multipliers; part of the format. m-mers and s-mers are hashed by the same function,
 * so that with m == s one hash per base serves both roles (the words differ in length otherwise).
 * Format version 2 made every hash 32 bits wide (version 1: splitmix64 over 64 bits): a 32-bit
 * multiply is one instruction on the GPU (a 64-bit one is three) and a vector instruction on
 * every x86-64 vector unit, and 32 bits hold the minimizer order, the shard key and the bit
 * positions of H <= 3 bits in a 512-bit shard (doc/gpu-notes.md, "Format 2: 32-bit hashes"). */
#define SBF_SEED_WORD  0x9e3779b9u
#define SBF_SEED_SHARD 0x2f3d8dd7u
#define SBF_SEED_EXT   0x632be5abu
#define SBF_FOLD       0x85ebca6bu

/* Chris Wellons' lowbias32 (hash-prospector): a bijection of 32-bit words with near-ideal
 * avalanche, two multiplies and three xorshifts (16, 15, 16). Its multipliers are named because
 * the vector paths (sbf_scan_vec.h) and the GPU query (gpu/kernels/query_run.cuh) write the
 * same arithmetic in their own instructions. */
#define SBF_MIX32_MUL1 0x7feb352du
#define SBF_MIX32_MUL2 0x846ca68bu
SBF_HD uint32_t sbf_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= SBF_MIX32_MUL1;
    x ^= x >> 15;
    x *= SBF_MIX32_MUL2;
    x ^= x >> 16;
    return x;
}

/* The hash of a canonical word of up to 64 bits: its high half folded into the low one by an
 * odd multiplier (two words that differ in one half only never collide), then mixed. */
SBF_HD uint32_t sbf_hash_word(uint64_t word)
{
    const uint32_t folded = (uint32_t)word + (uint32_t)(word >> 32) * SBF_FOLD;
    return sbf_mix32(folded ^ SBF_SEED_WORD);
}

SBF_HD uint32_t sbf_hash_mmer(uint64_t canonical_mmer) { return sbf_hash_word(canonical_mmer); }
SBF_HD uint32_t sbf_hash_smer(uint64_t canonical_smer) { return sbf_hash_word(canonical_smer); }

/* The minimizer hash is a minimum, hence biased towards small values: mix it again (the shard
 * key, the same for every target) before reducing it to a shard number of one target, so that
 * every shard is equally likely. */
SBF_HD uint32_t sbf_shard_key(uint32_t minimizer_hash) { return sbf_mix32(minimizer_hash ^ SBF_SEED_SHARD); }

/* The key mapped onto [0, n_shards) by a multiply-high (no modulo); n_shards <= 2^32
 * (SBF_MAX_SHARDS, checked wherever a filter is sized or loaded). */
#define SBF_MAX_SHARDS (1ULL << 32)
SBF_HD uint64_t sbf_shard_of_key(uint32_t key, uint64_t n_shards) { return ((uint64_t)key * n_shards) >> 32; }

SBF_HD uint64_t sbf_shard_index(uint32_t minimizer_hash, uint64_t n_shards)
{
    return sbf_shard_of_key(sbf_shard_key(minimizer_hash), n_shards);
}

/* Panels (format 3, doc/format.md "Panels"): a target of `cols` columns in a panel of n shards
 * per column holds the bits of a filter of n * cols shards (n * cols <= 2^32). Its shard v =
 * sbf_shard_of_key(key, n * cols) lies in shard v / cols of the panel, column v % cols of the
 * target; both come from key * n: the shard is its high word (sbf_shard_of_key(key, n), the
 * same for every target of the panel) and the column the high word of its low word times cols
 * (v = floor(key * n * cols / 2^32) = shard * cols + floor(lo(key * n) * cols / 2^32)). */
SBF_HD unsigned sbf_panel_column(uint32_t key, uint64_t n_shards, unsigned cols)
{
    return (unsigned)(((uint64_t)(uint32_t)((uint64_t)key * n_shards) * cols) >> 32);
}

/* Bit j (0 <= j < H) of an s-mer inside a shard of 2^shard_log2 bits: the j-th field of
 * shard_log2 bits of the s-mer hash, and past its 32 bits of a second word mixed from it (only
 * for H * shard_log2 > 32: H >= 4 in 512-bit shards, H >= 5 in 256-bit ones). */
SBF_HD unsigned sbf_smer_bit(uint32_t smer_hash, unsigned j, unsigned shard_log2)
{
    const unsigned at = j * shard_log2;
    uint64_t bits = smer_hash;
    if (at + shard_log2 > 32)
        bits |= (uint64_t)sbf_mix32(smer_hash ^ SBF_SEED_EXT) << 32;
    return (unsigned)(bits >> at) & ((1u << shard_log2) - 1u);
}

/* 2-bit reverse complement step: the complement of code c is 3 - c. */
SBF_HD uint64_t sbf_mask(unsigned len) { return len >= 32 ? ~0ULL : ((1ULL << (2 * len)) - 1ULL); }

/* ASCII -> 2-bit code (4 = not A/C/G/T/U, lower case accepted). The table is the CPU's fast
 * path; sbf_encode_ascii() is the same map for device code (a test checks they agree). */
static const uint8_t sbf_nt4_ascii[256] = {
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,0,4,1, 4,4,4,2, 4,4,4,4, 4,4,4,4,  4,4,4,4, 3,3,4,4, 4,4,4,4, 4,4,4,4,
    4,0,4,1, 4,4,4,2, 4,4,4,4, 4,4,4,4,  4,4,4,4, 3,3,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4
};

SBF_HD unsigned sbf_encode_ascii(unsigned char c)
{
    switch (c | 0x20) {
    case 'a': return 0;
    case 'c': return 1;
    case 'g': return 2;
    case 't': case 'u': return 3;
    default: return SBF_BASE_INVALID;
    }
}

/* BAM 4-bit code ("=ACMGRSVTWYHKDBN") -> 2-bit code: only A(1) C(2) G(4) T(8) are bases.
 * (In ASCII, U is read as T so that RNA references work.) */
static const uint8_t sbf_nt4_bam[16] = { 4,0,1,4, 2,4,4,4, 3,4,4,4, 4,4,4,4 };

/* The same map in the shape of sbf_nt4_ascii, for 4-bit codes unpacked one per byte (values
 * 0..15; larger bytes never occur and map to 4): the CPU's table for BAM input. */
static const uint8_t sbf_nt4_nt16[256] = {
    4,0,1,4, 2,4,4,4, 3,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,
    4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4,  4,4,4,4, 4,4,4,4, 4,4,4,4, 4,4,4,4
};

/* The same map for device code, without memory: nibble v of the constant is the 2-bit code of
 * the 4-bit code v (a test checks it against the tables). */
SBF_HD unsigned sbf_encode_nt16(unsigned v) { return (unsigned)(0x4444444344424104ULL >> (4u * (v & 15u))) & 15u; }

/* Rolling state of one canonical word (m-mer, s-mer or k-mer) of length len. */
typedef struct {
    uint64_t fwd, rev;
} sbf_roll_t;

/* Push code c (0..3) into a word of length len; mask = sbf_mask(len), shift = 2*(len-1). */
SBF_HD void sbf_roll_push(sbf_roll_t *r, unsigned c, uint64_t mask, unsigned shift)
{
    r->fwd = ((r->fwd << 2) | c) & mask;
    r->rev = (r->rev >> 2) | ((uint64_t)(3u - c) << shift);
}

SBF_HD uint64_t sbf_roll_canonical(const sbf_roll_t *r) { return r->fwd < r->rev ? r->fwd : r->rev; }

#endif /* SBF_KMER_H */
