/* gpu_bench_panel.cu -- a prototype for issue 15's many targets, in the benchmark only (no
 * index format, no CPU engine behind it): T targets stored as one panel, each shard position
 * holding one bit per target (an interleaved Bloom filter inside each shard), queried by the v11
 * scan with one T-bit word loaded per tested position instead of one 32-bit word per target.
 * It answers one question before the layout is built for real (doc/decisions.md, "Many
 * targets"): how fast a query over T targets runs when one run reads the targets' bits
 * together. The targets are copies of target 0's filter, as sbf-gpu-bench's other multi-target
 * rows: every target's count must equal the one-target count, which the caller checks.
 * Per-target counts are kept per lane in 8-bit fields, four targets per register, and summed
 * over the warp at the end of a read: exact for reads of up to 255 steps of 32 bases. */
#include <stdlib.h>
#include <string.h>

#include "../gpu/kernels/query_run.cuh"
#include "../gpu/sbf_gpu_int.h"
#include "gpu_bench_median.cuh"
#include "gpu_bench_time.h"

/* T targets: T = 8 (a byte per position), 32 (a word) or 128 (four words) */
template <int T> struct panel_word {
    static constexpr int words = T <= 32 ? 1 : T / 32;
    uint32_t w[words];
    __device__ __forceinline__ void ones()
    {
#pragma unroll
        for (int i = 0; i < words; ++i)
            w[i] = ~0u;
    }
    __device__ __forceinline__ void and_at(const uint8_t *__restrict__ shard, unsigned bit)
    {
        if constexpr (T == 8) {
            w[0] &= __ldg(shard + bit);
        } else if constexpr (T == 32) {
            w[0] &= __ldg((const uint32_t *)shard + bit);
        } else {
#pragma unroll
            for (int q = 0; q < words; q += 4) {
                const uint4 v = __ldg((const uint4 *)shard + (size_t)bit * (words / 4) + q / 4);
                w[q] &= v.x, w[q + 1] &= v.y, w[q + 2] &= v.z, w[q + 3] &= v.w;
            }
        }
    }
};

template <class PT, int T>
__global__ void __launch_bounds__(256) panel_kernel(const uint8_t *__restrict__ seqs, packed_reads layout, uint64_t n,
                                                   PT p, const target_group tg, const uint8_t *__restrict__ panel,
                                                   uint32_t n_shards, uint32_t *hits)
{
    constexpr unsigned PANEL_BYTES = 512u * T / 8u;
    constexpr int PACKS = T / 4; /* 8-bit counters, four targets per register */
    __shared__ uint8_t ascii_code[256];
    const unsigned lane = threadIdx.x & 31;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    fill_ascii_codes(ascii_code);
    for (uint64_t i = warp; i < n; i += n_warps) {
        uint64_t start, len;
        layout.span(i, p.k(), start, len);
        kmer_step<PT> ks; /* the v11 query's step: scan, shard key, s-mers */
        ks.reset();
        uint32_t packed[PACKS];
#pragma unroll
        for (int c = 0; c < PACKS; ++c)
            packed[c] = 0;
        for (uint64_t base = 0; base < len; base += 32) {
            const uint64_t pos = base + lane;
            ks.step(p, tg, lane, pos < len ? ascii_code[seqs[start + pos]] : SBF_BASE_INVALID, pos < len);
            if (ks.kmer) {
                const uint8_t *shard = panel + (size_t)__umulhi(ks.key, n_shards) * PANEL_BYTES;
                panel_word<T> acc;
                acc.ones();
#pragma unroll
                for (unsigned u = 0; u <= PT::extra(); ++u)
#pragma unroll
                    for (unsigned b = 0; b < PT::H(); ++b)
                        acc.and_at(shard, (ks.sm[u] >> (b * PT::log2b())) & ((1u << PT::log2b()) - 1u));
                /* target t's bit to its byte: four targets per register, spread by a multiply */
#pragma unroll
                for (int c = 0; c < PACKS; ++c)
                    packed[c] += (((acc.w[c / 8] >> (4 * (c % 8))) & 15u) * 0x00204081u) & 0x01010101u;
            }
        }
#pragma unroll
        for (int c = 0; c < PACKS; ++c)
            for (unsigned d = 16; d; d >>= 1)
                packed[c] += __shfl_down_sync(FULL_MASK, packed[c], d);
        if (lane == 0)
#pragma unroll
            for (int t = 0; t < T; ++t)
                hits[i * (uint64_t)T + (uint64_t)t] = (packed[t / 4] >> (8 * (t % 4))) & 255u;
    }
}

/* The panel of T copies of target t: position b of shard s holds T ones where t's bit b of
 * shard s is set, else zeros. */
static uint8_t *panel_of(const sbf_index_t *idx, const sbf_target_t *t, int T, size_t *bytes)
{
    const uint64_t words = sbf_params_shard_words(&idx->params);
    const size_t per = (size_t)T / 8;
    *bytes = (size_t)t->n_shards * 512u * per;
    uint8_t *panel = (uint8_t *)malloc(*bytes);
    if (!panel)
        return NULL;
    for (uint64_t s = 0; s < t->n_shards; ++s)
        for (unsigned b = 0; b < 512; ++b)
            memset(panel + (s * 512 + b) * per, (t->bits[s * words + b / 64] >> (b % 64)) & 1 ? 0xff : 0, per);
    return panel;
}

typedef void (*panel_launch)(int, const uint8_t *, packed_reads, uint64_t, default_params, target_group,
                             const uint8_t *, uint32_t, uint32_t *);

template <int T>
static void launch_panel(int blocks, const uint8_t *seqs, packed_reads layout, uint64_t n, default_params p,
                         target_group tg, const uint8_t *panel, uint32_t n_shards, uint32_t *hits)
{
    panel_kernel<default_params, T><<<blocks, 256>>>(seqs, layout, n, p, tg, panel, n_shards, hits);
}

extern "C" int sbf_gpu_bench_panel(const sbf_index_t *idx, int T, const char *seqs, const uint64_t *offsets, size_t n,
                                   int repeats, double *ms_median, uint64_t hits_per_target[], int *n_targets)
{
    int rc = SBF_OK, blocks = 0;
    const sbf_target_t *t0 = &idx->targets[0];
    const uint64_t total = offsets[n];
    size_t bytes = 0;
    uint8_t *panel = NULL, *d_panel = NULL, *d_seqs = NULL;
    uint64_t *d_offsets = NULL;
    uint32_t *d_hits = NULL, *hits = NULL;
    packed_reads layout;
    target_group tg;
    default_params p;
    panel_launch launch = T == 8 ? launch_panel<8> : T == 32 ? launch_panel<32> : launch_panel<128>;
    if (T != 8 && T != 32 && T != 128)
        return sbf_error(SBF_E_PARAM, "panel prototype: 8, 32 or 128 targets");
    if (!params_are<default_params>(make_params(&idx->params)) || t0->n_shards >= (1ULL << 32))
        return sbf_error(SBF_E_PARAM, "panel prototype: default parameters only");
    *n_targets = T;
    if (!(panel = panel_of(idx, t0, T, &bytes)) || !(hits = (uint32_t *)malloc(n * (size_t)T * sizeof *hits))) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
        goto fail;
    }
    memset(&tg, 0, sizeof tg);
    for (int i = 0; i < 32; ++i)
        tg.pw[i] = 1u << i;
    CUDA_TRY(cudaSetDevice(0));
    CUDA_TRY(cudaMalloc(&d_panel, bytes));
    CUDA_TRY(cudaMemcpy(d_panel, panel, bytes, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc(&d_seqs, total + 8));
    CUDA_TRY(cudaMemcpy(d_seqs, seqs, total, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc(&d_offsets, (n + 1) * sizeof *d_offsets));
    CUDA_TRY(cudaMemcpy(d_offsets, offsets, (n + 1) * sizeof *d_offsets, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc(&d_hits, n * (size_t)T * sizeof *d_hits));
    layout.offsets = d_offsets;
    layout.base = 0;
    if ((rc = gpu_grid_for(n, 0, &blocks)))
        goto fail;
    blocks = (int)((n + 7) / 8 < (uint64_t)blocks * 32 ? (n + 7) / 8 : (uint64_t)blocks * 32);
    launch(blocks, d_seqs, layout, n, p, tg, d_panel, (uint32_t)t0->n_shards, d_hits);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(hits, d_hits, n * (size_t)T * sizeof *hits, cudaMemcpyDeviceToHost));
    for (int r = 0; r < T; ++r)
        hits_per_target[r] = 0;
    for (size_t i = 0; i < n; ++i)
        for (int r = 0; r < T; ++r)
            hits_per_target[r] += hits[i * (size_t)T + (size_t)r];
    rc = time_median(
        repeats, ms_median, [] { return cudaSuccess; },
        [&] {
            launch(blocks, d_seqs, layout, n, p, tg, d_panel, (uint32_t)t0->n_shards, d_hits);
            return cudaGetLastError();
        });
fail:
    free(panel);
    free(hits);
    cudaFree(d_panel);
    cudaFree(d_seqs);
    cudaFree(d_offsets);
    cudaFree(d_hits);
    return rc;
}
