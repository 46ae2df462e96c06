/* sbf_scan_simd.c -- the scan's vector paths, AVX-512 and AVX2, from one template
 * (sbf_scan_vec.h) compiled under each instruction set's target. sbf_scan.c picks one at run
 * time from the CPU's features; the binary runs anywhere x86-64 does. */
#include <string.h>

#include "sbf_scan_int.h"

#if SBF_SCAN_HAVE_SIMD
#include <immintrin.h>

/* 64-bit lanes in GCC's generic vectors, as wide as the instruction set's registers (8 lanes
 * under AVX-512, 4 under AVX2, where the compiler builds the unsigned minimum from signed
 * operations): one source for both. The hashes are 32-bit values in 64-bit lanes, multiplied
 * by the instruction set's multiply of low halves. */
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef uint64_t v4u __attribute__((vector_size(32)));

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,popcnt")
#define VEC(name) avx512_##name
#define VEC_COMPRESS 1
#define VEC_MUL_EPU32 _mm512_mul_epu32
#define VEC_MIN_EPU64 _mm512_min_epu64
#define VLANES 8
#define vi __m512i
#define vu v8u
#include "sbf_scan_vec.h"   /* #undefs VEC, VEC_COMPRESS, VEC_MUL_EPU32, VEC_MIN_EPU64, VLANES, vi, vu */
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,popcnt")
#define VEC(name) avx2_##name
#define VEC_COMPRESS 0
#define VEC_MUL_EPU32 _mm256_mul_epu32
#define VLANES 4
#define vi __m256i
#define vu v4u
#include "sbf_scan_vec.h"   /* #undefs VEC, VEC_COMPRESS, VEC_MUL_EPU32, VEC_MIN_EPU64, VLANES, vi, vu */
#pragma GCC pop_options

#endif
