/* kernels/params.cuh -- the parameters a kernel is instantiated with: at run time (kparams, any
 * parameter set) or at compile time (cparams: the default parameters, every loop over w, k-s+1
 * and H unrolled and every shift by a constant; v5 in doc/gpu-notes.md). Same accessors for both,
 * so one kernel template serves either. */
#ifndef SBF_GPU_KERNELS_PARAMS_CUH
#define SBF_GPU_KERNELS_PARAMS_CUH

#include <stdint.h>

extern "C" {
#include "../../filters/sbf_kmer.h"
#include "../../filters/sbf_params.h"
}

#define FULL_MASK 0xffffffffu

/* v from lane (lane - d) mod 32 of the warp: shfl.sync.idx reads only the low 5 bits of the
 * source lane (PTX ISA, shfl.sync), so the wrap needs no mask instruction (v11,
 * doc/gpu-notes.md). */
template <class T>
__device__ __forceinline__ T shfl_back(T v, unsigned lane, unsigned d)
{
    return __shfl_sync(FULL_MASK, v, (int)(lane - d));
}

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

/* The kernels' view of an index's parameters. */
static inline kparams make_params(const sbf_params_t *p)
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

/* The other parameter set with compiled instances: the defaults with one bit per s-mer. */
typedef cparams<31, 25, 25, 1, 9> h1_params;

/* kp is the compiled set PT (whose instances then run instead of kparams'). */
template <class PT> static inline bool params_are(const kparams &kp)
{
    return kp.k() == PT::k() && kp.m() == PT::m() && kp.s() == PT::s() && kp.H() == PT::H() &&
           kp.log2b() == PT::log2b();
}

/* Rings of the latest hashes: RING >= max(w, k-s+1), a power of two (8 for the defaults), so a
 * thread's rings stay small enough for registers and L1. */
static inline unsigned ring_for(const kparams &kp)
{
    unsigned need = kp.w() > kp.extra() + 1 ? kp.w() : kp.extra() + 1;
    return need <= 8 ? 8 : need <= 16 ? 16 : 32;
}

#endif
