/* sbf_gpu.cu -- CUDA kernels computing the bits of filters/sbf_kmer.h, and their host side.
 *
 * Version 1 (see doc/gpu-notes.md): correctness first. One thread scans one chunk of sequence
 * (build) or one read (query) with the same definitions as the CPU engine: canonical rolling
 * words, the minimum m-mer hash of each k-mer's window, sbf_shard_index(), H bits per s-mer.
 * Build merges the bits of consecutive k-mers sharing a shard into one 512-bit mask before its
 * atomic ORs, so the result is the same set union as the CPU's, hence byte-identical.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../filters/sbf_error.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_params.h"
#include "sbf_gpu.h"
}

/* Every CUDA call is checked: on failure, record the message and jump to the function's
 * cleanup label `fail` with rc set. */
#define CUDA_TRY(call)                                                                                \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            rc = sbf_error(SBFI_E_IO, "CUDA: %s failed: %s", #call, cudaGetErrorString(e_));          \
            goto fail;                                                                                \
        }                                                                                             \
    } while (0)

#define RING 32u /* k-m+1 and k-s+1 are at most 32 */

struct kparams {
    unsigned k, m, s, H, log2b, words, w, extra;
    uint64_t mask_m, mask_s;
    unsigned shift_m, shift_s;
};

static kparams make_params(const sbf_params_t *p)
{
    kparams kp;
    kp.k = (unsigned)p->k;
    kp.m = (unsigned)p->m;
    kp.s = (unsigned)p->s;
    kp.H = (unsigned)p->hashes;
    kp.log2b = sbf_params_shard_log2(p);
    kp.words = sbf_params_shard_words(p);
    kp.w = kp.k - kp.m + 1;
    kp.extra = kp.k - kp.s;
    kp.mask_m = sbf_mask(kp.m);
    kp.mask_s = sbf_mask(kp.s);
    kp.shift_m = 2 * (kp.m - 1);
    kp.shift_s = 2 * (kp.s - 1);
    return kp;
}

/* Per-thread scanner state: rolling words and rings of the latest hashes, indexed by the
 * position where the word ends. */
struct scanner {
    sbf_roll_t rs, rm;
    unsigned valid;
    uint64_t ring_s[RING], ring_m[RING];
};

/* Push one base (code 0..4); returns 1 when a valid k-mer ends at pos, with its minimizer
 * hash in *minimizer. */
__device__ __forceinline__ int scanner_push(scanner &sc, const kparams &p, unsigned c, uint64_t pos,
                                            uint64_t *minimizer)
{
    if (c > 3) {
        sc.valid = 0;
        return 0;
    }
    sbf_roll_push(&sc.rs, c, p.mask_s, p.shift_s);
    ++sc.valid;
    uint64_t hs = sbf_hash_smer(sbf_roll_canonical(&sc.rs));
    sc.ring_s[pos & (RING - 1)] = hs;
    if (p.m == p.s) {
        sc.ring_m[pos & (RING - 1)] = hs;
    } else {
        sbf_roll_push(&sc.rm, c, p.mask_m, p.shift_m);
        sc.ring_m[pos & (RING - 1)] = sbf_hash_mmer(sbf_roll_canonical(&sc.rm));
    }
    if (sc.valid < p.k)
        return 0;
    uint64_t mn = ~0ULL;
    for (unsigned j = 0; j < p.w; ++j) {
        uint64_t h = sc.ring_m[(pos - j) & (RING - 1)];
        mn = h < mn ? h : mn;
    }
    *minimizer = mn;
    return 1;
}

/* OR the H bits of s-mer hash h into the 8-word mask held in registers (no dynamic indexing). */
__device__ __forceinline__ void mask_add(uint64_t mask[8], uint64_t h, const kparams &p)
{
    for (unsigned b = 0; b < p.H; ++b) {
        unsigned bit = sbf_smer_bit(h, b, p.log2b);
        unsigned word = bit >> 6;
        uint64_t one = 1ULL << (bit & 63);
#pragma unroll
        for (unsigned q = 0; q < 8; ++q)
            mask[q] |= q == word ? one : 0;
    }
}

__device__ __forceinline__ void mask_flush(uint64_t mask[8], unsigned long long *shard, unsigned words)
{
#pragma unroll
    for (unsigned q = 0; q < 8; ++q) {
        if (q < words && mask[q])
            atomicOr(shard + q, (unsigned long long)mask[q]);
        mask[q] = 0;
    }
}

#define BUILD_CHUNK 64u /* k-mers per thread */

__global__ void __launch_bounds__(256) build_kernel(const uint8_t *__restrict__ codes, uint64_t len, kparams p,
                                                    uint64_t n_shards, unsigned long long *bits, uint64_t n_chunks)
{
    for (uint64_t chunk = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; chunk < n_chunks;
         chunk += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t first = chunk * BUILD_CHUNK;
        uint64_t end = first + BUILD_CHUNK + p.k - 1;
        if (end > len)
            end = len;
        scanner sc;
        sc.valid = 0;
        sc.rs.fwd = sc.rs.rev = sc.rm.fwd = sc.rm.rev = 0;
        uint64_t mask[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        uint64_t cur_shard = ~0ULL;
        int prev_kmer = 0; /* the k-mer ending at pos-1 was valid and in cur_shard */
        for (uint64_t pos = first; pos < end; ++pos) {
            uint64_t mn;
            if (!scanner_push(sc, p, codes[pos], pos, &mn)) {
                prev_kmer = 0;
                continue;
            }
            uint64_t shard = sbf_shard_index(mn, n_shards);
            if (shard != cur_shard) {
                if (cur_shard != ~0ULL)
                    mask_flush(mask, bits + cur_shard * p.words, p.words);
                cur_shard = shard;
                prev_kmer = 0;
            }
            if (prev_kmer) { /* the previous k-mer set all but the newest s-mer here already */
                mask_add(mask, sc.ring_s[pos & (RING - 1)], p);
            } else {
                for (unsigned j = 0; j <= p.extra; ++j)
                    mask_add(mask, sc.ring_s[(pos - j) & (RING - 1)], p);
            }
            prev_kmer = 1;
        }
        if (cur_shard != ~0ULL)
            mask_flush(mask, bits + cur_shard * p.words, p.words);
    }
}

struct dev_target {
    const unsigned long long *bits;
    uint64_t n_shards;
};

__device__ __forceinline__ int kmer_present(const unsigned long long *__restrict__ w, const scanner &sc, uint64_t pos,
                                            const kparams &p)
{
    for (unsigned j = 0; j <= p.extra; ++j) {
        uint64_t h = sc.ring_s[(pos - j) & (RING - 1)];
        for (unsigned b = 0; b < p.H; ++b) {
            unsigned bit = sbf_smer_bit(h, b, p.log2b);
            if (!((__ldg(w + (bit >> 6)) >> (bit & 63)) & 1))
                return 0;
        }
    }
    return 1;
}

__global__ void __launch_bounds__(256) query_kernel(const char *__restrict__ seqs, const uint64_t *__restrict__ offsets,
                                                    uint64_t n, kparams p, const dev_target *__restrict__ targets,
                                                    int R, uint32_t *kmers, uint32_t *hits)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t start = offsets[i], end = offsets[i + 1];
        uint32_t *h = hits + i * (uint64_t)R;
        for (int r = 0; r < R; ++r)
            h[r] = 0;
        scanner sc;
        sc.valid = 0;
        sc.rs.fwd = sc.rs.rev = sc.rm.fwd = sc.rm.rev = 0;
        uint32_t nk = 0;
        for (uint64_t pos = start; pos < end; ++pos) {
            uint64_t mn;
            if (!scanner_push(sc, p, sbf_encode_ascii((unsigned char)seqs[pos]), pos - start, &mn))
                continue;
            ++nk;
            for (int r = 0; r < R; ++r) {
                const unsigned long long *w = targets[r].bits + sbf_shard_index(mn, targets[r].n_shards) * p.words;
                h[r] += kmer_present(w, sc, pos - start, p);
            }
        }
        kmers[i] = nk;
    }
}

/* ---- host side ---- */

extern "C" int sbf_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear: no driver or no device is not an error here */
        return 0;
    }
    return n;
}

extern "C" int sbf_gpu_describe(int device, char *buf, size_t size)
{
    int rc = SBFI_OK, rt = 0, drv = 0;
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    CUDA_TRY(cudaRuntimeGetVersion(&rt));
    CUDA_TRY(cudaDriverGetVersion(&drv));
    snprintf(buf, size, "%s, %.1f GiB, compute %d.%d, %d SMs, CUDA runtime %d.%d, driver %d.%d", prop.name,
             (double)prop.totalGlobalMem / (1024.0 * 1024 * 1024), prop.major, prop.minor, prop.multiProcessorCount,
             rt / 1000, (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10);
    return SBFI_OK;
fail:
    if (size)
        buf[0] = '\0';
    return rc;
}

static int grid_for(uint64_t work, int device, int *blocks)
{
    int sms = 0, rc = SBFI_OK;
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    {
        uint64_t want = (work + 255) / 256;
        uint64_t cap = (uint64_t)sms * 8;
        *blocks = (int)(want < cap ? (want ? want : 1) : cap);
    }
    return SBFI_OK;
fail:
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Build on the device; with repeats > 0, time `repeats` launches after a warm-up one. */
static int build_on_device(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                           int repeats, double *ms_median)
{
    int rc = SBFI_OK, blocks = 0;
    const kparams kp = make_params(&idx->params);
    const size_t bytes = sbf_target_bytes(idx, t);
    uint8_t *d_codes = NULL;
    unsigned long long *d_bits = NULL;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    double *ms = NULL;
    const uint64_t n_chunks = len >= kp.k ? (len - kp.k + 1 + BUILD_CHUNK - 1) / BUILD_CHUNK : 0;

    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaMalloc(&d_codes, len ? len : 1));
    CUDA_TRY(cudaMalloc(&d_bits, bytes));
    CUDA_TRY(cudaMemcpy(d_codes, codes, len, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(d_bits, t->bits, bytes, cudaMemcpyHostToDevice));
    if ((rc = grid_for(n_chunks, device, &blocks)))
        goto fail;
    if (n_chunks) {
        build_kernel<<<blocks, 256>>>(d_codes, len, kp, t->n_shards, d_bits, n_chunks);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaDeviceSynchronize());
    }
    CUDA_TRY(cudaMemcpy(t->bits, d_bits, bytes, cudaMemcpyDeviceToHost));
    if (repeats > 0 && n_chunks) {
        if (!(ms = (double *)malloc((size_t)repeats * sizeof *ms))) {
            rc = sbf_error(SBFI_E_NOMEM, "out of memory");
            goto fail;
        }
        CUDA_TRY(cudaEventCreate(&ev0));
        CUDA_TRY(cudaEventCreate(&ev1));
        for (int i = 0; i < repeats; ++i) {
            float f;
            CUDA_TRY(cudaMemset(d_bits, 0, bytes));
            CUDA_TRY(cudaEventRecord(ev0));
            build_kernel<<<blocks, 256>>>(d_codes, len, kp, t->n_shards, d_bits, n_chunks);
            CUDA_TRY(cudaGetLastError());
            CUDA_TRY(cudaEventRecord(ev1));
            CUDA_TRY(cudaEventSynchronize(ev1));
            CUDA_TRY(cudaEventElapsedTime(&f, ev0, ev1));
            ms[i] = f;
        }
        qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
        *ms_median = ms[repeats / 2];
    }
    sbf_target_stats(idx, t);
fail:
    if (ev0)
        cudaEventDestroy(ev0);
    if (ev1)
        cudaEventDestroy(ev1);
    cudaFree(d_codes);
    cudaFree(d_bits);
    free(ms);
    return rc;
}

extern "C" int sbf_gpu_build_target(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                    uint64_t len)
{
    return build_on_device(device, idx, t, codes, len, 0, NULL);
}

extern "C" int sbf_gpu_bench_build(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes,
                                   uint64_t len, int repeats, double *ms_median)
{
    return build_on_device(device, idx, t, codes, len, repeats, ms_median);
}

struct sbf_gpu_index_s {
    int device;
    int n_targets;
    kparams kp;
    unsigned long long **bits; /* device arrays, one per target */
    dev_target *d_targets;
};

extern "C" void sbf_gpu_index_free(sbf_gpu_index_t *g)
{
    if (!g)
        return;
    cudaSetDevice(g->device);
    for (int r = 0; r < g->n_targets && g->bits; ++r)
        cudaFree(g->bits[r]);
    free(g->bits);
    cudaFree(g->d_targets);
    free(g);
}

extern "C" int sbf_gpu_index_upload(int device, const sbf_index_t *idx, sbf_gpu_index_t **out)
{
    int rc = SBFI_OK;
    dev_target *host_targets = NULL;
    sbf_gpu_index_t *g = (sbf_gpu_index_t *)calloc(1, sizeof *g);
    *out = NULL;
    if (!g || !(g->bits = (unsigned long long **)calloc((size_t)idx->n_targets, sizeof *g->bits)) ||
        !(host_targets = (dev_target *)calloc((size_t)idx->n_targets, sizeof *host_targets))) {
        rc = sbf_error(SBFI_E_NOMEM, "out of memory");
        goto fail;
    }
    g->device = device;
    g->n_targets = idx->n_targets;
    g->kp = make_params(&idx->params);
    CUDA_TRY(cudaSetDevice(device));
    for (int r = 0; r < idx->n_targets; ++r) {
        size_t bytes = sbf_target_bytes(idx, &idx->targets[r]);
        CUDA_TRY(cudaMalloc(&g->bits[r], bytes));
        CUDA_TRY(cudaMemcpy(g->bits[r], idx->targets[r].bits, bytes, cudaMemcpyHostToDevice));
        host_targets[r].bits = g->bits[r];
        host_targets[r].n_shards = idx->targets[r].n_shards;
    }
    CUDA_TRY(cudaMalloc(&g->d_targets, (size_t)idx->n_targets * sizeof *g->d_targets));
    CUDA_TRY(cudaMemcpy(g->d_targets, host_targets, (size_t)idx->n_targets * sizeof *host_targets,
                        cudaMemcpyHostToDevice));
    free(host_targets);
    *out = g;
    return SBFI_OK;
fail:
    free(host_targets);
    sbf_gpu_index_free(g);
    return rc;
}

/* Query reads already packed as one buffer with offsets[0..n]; with repeats > 0, time the
 * kernel `repeats` times after the first (warm-up) launch. */
static int query_packed(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, uint32_t *kmers,
                        uint32_t *hits, int repeats, double *ms_median)
{
    int rc = SBFI_OK, blocks = 0;
    const uint64_t total = offsets[n];
    const int R = g->n_targets;
    char *d_seqs = NULL;
    uint64_t *d_offsets = NULL;
    uint32_t *d_kmers = NULL, *d_hits = NULL;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    double *ms = NULL;

    CUDA_TRY(cudaSetDevice(g->device));
    CUDA_TRY(cudaMalloc(&d_seqs, total ? total : 1));
    CUDA_TRY(cudaMalloc(&d_offsets, (n + 1) * sizeof *d_offsets));
    CUDA_TRY(cudaMalloc(&d_kmers, (n ? n : 1) * sizeof *d_kmers));
    CUDA_TRY(cudaMalloc(&d_hits, (n ? n : 1) * (size_t)R * sizeof *d_hits));
    CUDA_TRY(cudaMemcpy(d_seqs, seqs, total, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(d_offsets, offsets, (n + 1) * sizeof *d_offsets, cudaMemcpyHostToDevice));
    if ((rc = grid_for(n, g->device, &blocks)))
        goto fail;
    if (n) {
        query_kernel<<<blocks, 256>>>(d_seqs, d_offsets, n, g->kp, g->d_targets, R, d_kmers, d_hits);
        CUDA_TRY(cudaGetLastError());
        CUDA_TRY(cudaDeviceSynchronize());
    }
    if (kmers)
        CUDA_TRY(cudaMemcpy(kmers, d_kmers, n * sizeof *kmers, cudaMemcpyDeviceToHost));
    if (hits)
        CUDA_TRY(cudaMemcpy(hits, d_hits, n * (size_t)R * sizeof *hits, cudaMemcpyDeviceToHost));
    if (repeats > 0 && n) {
        if (!(ms = (double *)malloc((size_t)repeats * sizeof *ms))) {
            rc = sbf_error(SBFI_E_NOMEM, "out of memory");
            goto fail;
        }
        CUDA_TRY(cudaEventCreate(&ev0));
        CUDA_TRY(cudaEventCreate(&ev1));
        for (int i = 0; i < repeats; ++i) {
            float f;
            CUDA_TRY(cudaEventRecord(ev0));
            query_kernel<<<blocks, 256>>>(d_seqs, d_offsets, n, g->kp, g->d_targets, R, d_kmers, d_hits);
            CUDA_TRY(cudaGetLastError());
            CUDA_TRY(cudaEventRecord(ev1));
            CUDA_TRY(cudaEventSynchronize(ev1));
            CUDA_TRY(cudaEventElapsedTime(&f, ev0, ev1));
            ms[i] = f;
        }
        qsort(ms, (size_t)repeats, sizeof *ms, cmp_double);
        *ms_median = ms[repeats / 2];
    }
fail:
    if (ev0)
        cudaEventDestroy(ev0);
    if (ev1)
        cudaEventDestroy(ev1);
    cudaFree(d_seqs);
    cudaFree(d_offsets);
    cudaFree(d_kmers);
    cudaFree(d_hits);
    free(ms);
    return rc;
}

extern "C" int sbf_gpu_query(sbf_gpu_index_t *g, size_t n, const char *const *seqs, const size_t *lens,
                             uint32_t *kmers, uint32_t *hits)
{
    uint64_t *offsets = (uint64_t *)malloc((n + 1) * sizeof *offsets);
    if (!offsets)
        return sbf_error(SBFI_E_NOMEM, "out of memory");
    offsets[0] = 0;
    for (size_t i = 0; i < n; ++i)
        offsets[i + 1] = offsets[i] + lens[i];
    char *packed = (char *)malloc(offsets[n] ? offsets[n] : 1);
    if (!packed) {
        free(offsets);
        return sbf_error(SBFI_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; ++i)
        memcpy(packed + offsets[i], seqs[i], lens[i]);
    int rc = query_packed(g, packed, offsets, n, kmers, hits, 0, NULL);
    free(packed);
    free(offsets);
    return rc;
}

extern "C" int sbf_gpu_bench_query(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n,
                                   int repeats, double *ms_median, uint64_t *kmers_total)
{
    uint32_t *kmers = (uint32_t *)malloc((n ? n : 1) * sizeof *kmers);
    if (!kmers)
        return sbf_error(SBFI_E_NOMEM, "out of memory");
    int rc = query_packed(g, seqs, offsets, n, kmers, NULL, repeats, ms_median);
    uint64_t total = 0;
    for (size_t i = 0; rc == SBFI_OK && i < n; ++i)
        total += kmers[i];
    *kmers_total = total;
    free(kmers);
    return rc;
}
