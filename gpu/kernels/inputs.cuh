/* kernels/inputs.cuh -- what the query kernels read: a target's filter on the device, the
 * sequence formats (ASCII bytes, BAM's 4-bit codes) and the layouts (which bases the warp of
 * item i scans, and where its answer goes). */
#ifndef SBF_GPU_KERNELS_INPUTS_CUH
#define SBF_GPU_KERNELS_INPUTS_CUH

#include "params.cuh"

/* A target's filter on the device: its panel's array and shard count, and its columns there
 * (a plain panel: log2_width 0, col0 0, cols 1). */
struct dev_target {
    const unsigned long long *bits;
    uint64_t n_shards;
    unsigned log2_width, col0, cols;
};

/* One wide panel (2^log2_width columns, format 3) as the panel kernel takes it: a kernel
 * parameter, filled once at upload. */
#define PANEL_MAX_SPLIT 64
struct panel_args {
    const uint32_t *bits;  /* n_shards * 512 << log2_width bits */
    uint32_t n_shards;     /* below 2^32 (the host checks) */
    unsigned log2_width;
    int R;                 /* targets of the index: hits[i * R + r] */
    uint32_t whole[2];     /* the columns of one-column targets (0-31, 32-63) */
    int16_t target[64];    /* the target whose one column this is, else -1 */
    int n_split;           /* targets of several columns */
    struct {
        uint8_t col0, cols;
        int target;
    } split[PANEL_MAX_SPLIT];
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

#endif
