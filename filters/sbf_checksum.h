/* sbf_checksum.h -- XXH64 (Yann Collet's xxHash, 64-bit), the checksum of .sbf sections:
 * fast enough to verify a multi-GiB filter at load, and any flipped byte changes it. */
#ifndef SBF_CHECKSUM_H
#define SBF_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

uint64_t sbf_xxh64(const void *data, size_t len, uint64_t seed);

#endif
