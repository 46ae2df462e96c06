/* sbf_checksum.h -- XXH64 (Yann Collet's xxHash, 64-bit), the checksum of .sbf sections:
 * fast enough to verify a multi-GiB filter at load, and any flipped byte changes it. */
#ifndef SBF_CHECKSUM_H
#define SBF_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

uint64_t sbf_xxh64(const void *data, size_t len, uint64_t seed);

/* Format 5's checksum of a filter array: the XXH64 (seed 0) of its pieces' XXH64s (seed 0), as
 * little-endian 64-bit words in order, the pieces SBF_CHECKSUM_PIECE bytes each (the last one
 * shorter). One XXH64 of a whole array is one stream: a human index's 6 GB filter took 1.1 s of
 * one thread (5.5 GB/s) at the end of every build and at the first run against the file; its
 * pieces are hashed on every thread (doc/format.md). */
#define SBF_CHECKSUM_PIECE ((uint64_t)64 << 20)
/* The pieces of an array of `bytes` bytes (at least 1). */
uint64_t sbf_checksum_pieces(uint64_t bytes);
/* The array's checksum from its n pieces' XXH64s. */
uint64_t sbf_checksum_of_pieces(const uint64_t *piece_sums, uint64_t n);

#endif
