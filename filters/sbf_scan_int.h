/* sbf_scan_int.h -- the vector paths of the scan (sbf_scan_simd.c) and of the probe
 * (sbf_probe_simd.c), chosen by sbf_scan.c's path. */
#ifndef SBF_SCAN_INT_H
#define SBF_SCAN_INT_H

#include "sbf_scan.h"

/* The vector paths exist where GCC-compatible compilers target x86-64. */
#if defined(__x86_64__) && defined(__GNUC__)
#define SBF_SCAN_HAVE_SIMD 1
void avx512_sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                            uint32_t len);
void avx2_sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256], const uint8_t *seq,
                          uint32_t len);
/* probe_run() of sbf_index.c for 512-bit shards (shard_log2 9): the same count and presence
 * bytes. */
uint32_t avx512_probe_run(const uint64_t *w, const uint64_t *h, uint32_t n_kmers, unsigned extra, unsigned H,
                          uint8_t *presence);
#else
#define SBF_SCAN_HAVE_SIMD 0
#endif

#endif
