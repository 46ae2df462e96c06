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
 *  - a k-mer's minimizer is the smallest sbf_hash_mmer() over its k-m+1 canonical m-mers; the
 *    shard (one 512-bit block, one cache line) is sbf_shard_index() of that hash value, a
 *    second full 64-bit mix followed by a multiply-high range reduction;
 *  - inside the shard, each of the k-s+1 canonical s-mers of the k-mer sets/tests H bits taken
 *    from consecutive log2(shard_bits)-bit fields of sbf_hash_smer(); a k-mer is present only if
 *    all its s-mers are (findere).
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

/* Seeds; part of the format. m-mers and s-mers are hashed by the same function, so that with
 * m == s one hash per base serves both roles (the words differ in length otherwise). */
#define SBF_SEED_WORD  0x9e3779b97f4a7c15ULL
#define SBF_SEED_SHARD 0x8cb92ba72f3d8dd7ULL

/* splitmix64's finaliser: a full-avalanche bijection of 64-bit words. */
SBF_HD uint64_t sbf_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

SBF_HD uint64_t sbf_hash_mmer(uint64_t canonical_mmer) { return sbf_mix64(canonical_mmer ^ SBF_SEED_WORD); }
SBF_HD uint64_t sbf_hash_smer(uint64_t canonical_smer) { return sbf_mix64(canonical_smer ^ SBF_SEED_WORD); }

/* High 64 bits of a 64x64 product: maps a uniform hash onto [0, n) without a modulo. */
SBF_HD uint64_t sbf_mulhi64(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* The minimizer hash is a minimum, hence biased towards small values: mix it again (the shard
 * key, the same for every target) before reducing it to a shard number of one target, so that
 * every shard is equally likely. */
SBF_HD uint64_t sbf_shard_key(uint64_t minimizer_hash) { return sbf_mix64(minimizer_hash ^ SBF_SEED_SHARD); }

SBF_HD uint64_t sbf_shard_of_key(uint64_t key, uint64_t n_shards) { return sbf_mulhi64(key, n_shards); }

SBF_HD uint64_t sbf_shard_index(uint64_t minimizer_hash, uint64_t n_shards)
{
    return sbf_shard_of_key(sbf_shard_key(minimizer_hash), n_shards);
}

/* Bit j (0 <= j < H) of an s-mer inside a shard of 2^shard_log2 bits. */
SBF_HD unsigned sbf_smer_bit(uint64_t smer_hash, unsigned j, unsigned shard_log2)
{
    return (unsigned)(smer_hash >> (j * shard_log2)) & ((1u << shard_log2) - 1u);
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
