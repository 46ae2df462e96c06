/* gpu_bench_time.cu -- sbf-gpu-bench's timings of the GPU engine's kernels (bench/gpu_bench.c):
 * on device-resident data, and from pinned host memory through two stream workspaces. Built
 * into the benchmark only, not into libsbf: it launches the kernels of the index's plan
 * (gpu/sbf_gpu_plan.cu) through the engine's internal header. CUDA events after a warm-up
 * launch, median of `repeats` runs. */
#include <stdlib.h>
#include <string.h>

#include "../gpu/sbf_gpu_int.h"
#include "gpu_bench_median.cuh"
#include "gpu_bench_time.h"

/* Build on the device, then time `repeats` launches after that warm-up one, each on a cleared
 * filter; t->bits receives the filter. */
extern "C" int sbf_gpu_bench_build(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                   uint64_t len, int repeats, double *ms_median, const char **kernel)
{
    int rc = SBF_OK, blocks = 0;
    const size_t bytes = sbf_target_bytes(idx, t);
    build_launch b;
    memset(&b, 0, sizeof b);
    b.len = len;
    b.kp = make_params(&idx->params);
    b.n_shards = t->n_shards;
    const build_plan *plan = gpu_build_plan_for(b.kp);
    uint8_t *d_codes = NULL;
    unsigned long long *d_bits = NULL;
    *kernel = plan->name;

    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaMalloc(&d_codes, len + 8));
    CUDA_TRY(cudaMemset(d_codes, 4, len + 8));
    CUDA_TRY(cudaMalloc(&d_bits, bytes));
    CUDA_TRY(cudaMemcpy(d_codes, codes, len, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemset(d_bits, 0, bytes));
    b.codes = d_codes;
    b.bits = d_bits;
    if ((rc = gpu_grid_for(plan->threads(b), device, &blocks)))
        goto fail;
    if (!plan->threads(b)) {
        rc = sbf_error(SBF_E_PARAM, "nothing to build: fewer bases than k");
        goto fail;
    }
    plan->run(blocks, b);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(t->bits, d_bits, bytes, cudaMemcpyDeviceToHost));
    rc = time_median(
        repeats, ms_median, [&] { return cudaMemset(d_bits, 0, bytes); },
        [&] {
            plan->run(blocks, b);
            return cudaGetLastError();
        });
    if (rc == SBF_OK)
        sbf_target_stats(idx, t, 1);
fail:
    cudaFree(d_codes);
    cudaFree(d_bits);
    return rc;
}

/* Reads packed as one buffer with offsets[0..n], copied to the device once: the kernel timed
 * `repeats` times after a warm-up launch; the valid k-mers summed into *kmers_total. */
extern "C" int sbf_gpu_bench_query(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n,
                                   int repeats, double *ms_median, uint64_t *kmers_total, const char **kernel)
{
    int rc = SBF_OK, blocks = 0;
    const uint64_t total = offsets[n];
    const int R = g->n_targets;
    uint8_t *d_seqs = NULL;
    uint64_t *d_offsets = NULL;
    uint32_t *d_kmers = NULL, *d_hits = NULL, *kmers = NULL;
    packed_reads layout;
    *kernel = g->plan->name;

    if (!(kmers = (uint32_t *)malloc((n ? n : 1) * sizeof *kmers)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    CUDA_TRY(cudaSetDevice(g->device));
    CUDA_TRY(cudaMalloc(&d_seqs, total + 8));
    CUDA_TRY(cudaMemset(d_seqs, 'N', total + 8));
    CUDA_TRY(cudaMalloc(&d_offsets, (n + 1) * sizeof *d_offsets));
    CUDA_TRY(cudaMalloc(&d_kmers, (n ? n : 1) * sizeof *d_kmers));
    CUDA_TRY(cudaMalloc(&d_hits, (n ? n : 1) * (size_t)R * sizeof *d_hits));
    CUDA_TRY(cudaMemcpy(d_seqs, seqs, total, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(d_offsets, offsets, (n + 1) * sizeof *d_offsets, cudaMemcpyHostToDevice));
    layout.offsets = d_offsets;
    layout.base = 0;
    if ((rc = gpu_grid_for(n, g->device, &blocks)))
        goto fail;
    {
        const query_launch q = {blocks, d_seqs, n, g->kp, gpu_targets_of(g), d_kmers, d_hits, 0};
        g->plan->reads(FMT_ASCII, q, layout);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaMemcpy(kmers, d_kmers, n * sizeof *kmers, cudaMemcpyDeviceToHost));
        rc = time_median(
            repeats, ms_median, [] { return cudaSuccess; },
            [&] {
                g->plan->reads(FMT_ASCII, q, layout);
                return cudaGetLastError();
            });
    }
    *kmers_total = 0;
    for (size_t i = 0; rc == SBF_OK && i < n; ++i)
        *kmers_total += kmers[i];
fail:
    free(kmers);
    cudaFree(d_seqs);
    cudaFree(d_offsets);
    cudaFree(d_kmers);
    cudaFree(d_hits);
    return rc;
}

/* Reads already packed in pinned host memory (seqs + offsets), in batches of `batch` reads over
 * two workspaces without staging: the copies of one batch overlap the kernel of the other.
 * kmers[i] and hits[i * R + r] (pinned) receive the results. With repeats > 0 the whole run,
 * copies both ways included, is timed `repeats` times after a warm-up; the median goes to
 * *ms_median. */
static int query_streamed(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, size_t batch,
                          uint32_t *kmers, uint32_t *hits, int repeats, double *ms_median)
{
    int rc = SBF_OK;
    const size_t R = (size_t)g->n_targets;
    sbf_gpu_stream_t *ws[2] = {NULL, NULL};
    size_t max_bytes = 0;
    if (n == 0)
        return SBF_OK;
    if (batch == 0 || batch > n)
        batch = n;
    for (size_t b0 = 0; b0 < n; b0 += batch) {
        size_t b1 = b0 + batch < n ? b0 + batch : n;
        if (offsets[b1] - offsets[b0] > max_bytes)
            max_bytes = offsets[b1] - offsets[b0];
    }
    for (int w = 0; w < 2; ++w)
        if ((rc = gpu_stream_new(g, NULL, batch, max_bytes, false, &ws[w])))
            goto fail;
    {
        auto run_all = [&]() -> int {
            int r = SBF_OK;
            for (size_t b0 = 0, k = 0; b0 < n && r == SBF_OK; b0 += batch, ++k) {
                const size_t cnt = n - b0 < batch ? n - b0 : batch;
                r = gpu_stream_enqueue(ws[k & 1], FMT_ASCII, (const uint8_t *)seqs, offsets + b0, cnt, kmers + b0,
                                   hits + b0 * R);
            }
            for (int w = 0; w < 2; ++w) {
                int r2 = sbf_gpu_stream_sync(ws[w]);
                r = r ? r : r2;
            }
            return r;
        };
        if ((rc = run_all()) == SBF_OK && repeats > 0)
            rc = time_median(repeats, ms_median, [] { return cudaDeviceSynchronize(); }, run_all);
    }
fail:
    gpu_stream_free(ws[0]);
    gpu_stream_free(ws[1]);
    return rc;
}

extern "C" int sbf_gpu_bench_query_host(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n,
                                        size_t batch, int repeats, double *ms_median, uint64_t *kmers_total)

{
    int rc = SBF_OK;
    uint32_t *kmers = NULL, *hits = NULL;
    CUDA_TRY(cudaHostAlloc(&kmers, (n ? n : 1) * sizeof *kmers, cudaHostAllocDefault));
    CUDA_TRY(cudaHostAlloc(&hits, (n ? n : 1) * (size_t)g->n_targets * sizeof *hits, cudaHostAllocDefault));
    if ((rc = query_streamed(g, seqs, offsets, n, batch, kmers, hits, repeats, ms_median)) == SBF_OK) {
        uint64_t total = 0;
        for (size_t i = 0; i < n; ++i)
            total += kmers[i];
        *kmers_total = total;
    }
fail:
    cudaFreeHost(kmers);
    cudaFreeHost(hits);
    return rc;
}
