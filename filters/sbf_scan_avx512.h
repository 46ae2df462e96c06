/* sbf_scan_avx512.h -- the scan's template (sbf_scan_vec.h) with the AVX-512 settings, for the
 * two AVX-512 instances of sbf_scan_simd.c, which define VEC (and VEC_ROLL, VEC_ROLL_MAX for the
 * VBMI one) first, under their target. No include guard: included once per instance. */
#define VEC_COMPRESS 1
#define VEC_MUL_EPU32 _mm512_mul_epu32
#define VEC_MIN_EPU64 _mm512_min_epu64
#define VLANES 8
#define vi __m512i
#define vu v8u
#include "sbf_scan_vec.h"   /* #undefs VEC, VEC_ROLL, VEC_ROLL_MAX, VEC_COMPRESS, VEC_MUL_EPU32, VEC_MIN_EPU64, VLANES, vi, vu */
