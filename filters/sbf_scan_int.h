/* sbf_scan_int.h -- inside the scan: its vector paths (sbf_scan_simd.c), chosen by
 * sbf_scan.c. */
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
#else
#define SBF_SCAN_HAVE_SIMD 0
#endif

#endif
