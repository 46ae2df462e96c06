/* sbf_gpu_stream.cu -- streams and device memory: pinned host memory, the stream workspaces
 * every query from host memory goes through (sbf_gpu_stream_t, sbf_gpu.h), and the buffer sets
 * the blocking queries keep in the index between calls. */
#include <stdlib.h>
#include <string.h>

#include "sbf_gpu_int.h"

extern "C" int sbf_gpu_host_alloc(size_t bytes, void **out)
{
    int rc = SBF_OK;
    *out = NULL;
    CUDA_TRY(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocDefault));
    return SBF_OK;
fail:
    return rc;
}

extern "C" void sbf_gpu_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

void gpu_stream_free(sbf_gpu_stream_t *s)
{
    if (!s)
        return;
    cudaSetDevice(s->g->device);
    if (s->st)
        cudaStreamSynchronize(s->st); /* no copy or kernel may still use the buffers */
    cudaFree(s->d_seq);
    cudaFree(s->d_off);
    cudaFree(s->d_kmers);
    cudaFree(s->d_hits);
    if (s->h_seq)
        cudaFreeHost(s->h_seq);
    if (s->h_off)
        cudaFreeHost(s->h_off);
    if (s->staged)
        cudaEventDestroy(s->staged);
    if (s->done)
        cudaEventDestroy(s->done);
    if (s->owns_stream && s->st)
        cudaStreamDestroy(s->st);
    free(s);
}

int gpu_stream_new(sbf_gpu_index_t *g, cudaStream_t user, size_t max_reads, size_t max_bases, bool staging,
                   sbf_gpu_stream_t **out)
{
    int rc = SBF_OK;
    const size_t R = g->n_targets > 0 ? (size_t)g->n_targets : 1, reads = max_reads ? max_reads : 1;
    sbf_gpu_stream_t *s = NULL;
    *out = NULL;
    if (max_reads > ((size_t)1 << 40) / R || max_bases > ((size_t)1 << 48))
        return sbf_error(SBF_E_PARAM, "stream workspace of %zu reads and %zu bases: too large", max_reads, max_bases);
    if (!(s = (sbf_gpu_stream_t *)calloc(1, sizeof *s)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    s->g = g;
    s->max_reads = max_reads;
    s->max_bases = max_bases;
    CUDA_TRY(cudaSetDevice(g->device));
    if (user) {
        s->st = user;
    } else {
        CUDA_TRY(cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
        s->owns_stream = true;
    }
    CUDA_TRY(cudaEventCreateWithFlags(&s->staged, cudaEventDisableTiming | cudaEventBlockingSync));
    CUDA_TRY(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming | cudaEventBlockingSync));
    CUDA_TRY(cudaMalloc(&s->d_seq, max_bases + 8));
    CUDA_TRY(cudaMemsetAsync(s->d_seq, 0, max_bases + 8, s->st)); /* the 8 bytes of padding defined too */
    CUDA_TRY(cudaMalloc(&s->d_off, (reads + 1) * sizeof *s->d_off));
    CUDA_TRY(cudaMalloc(&s->d_kmers, reads * sizeof *s->d_kmers));
    CUDA_TRY(cudaMalloc(&s->d_hits, reads * R * sizeof *s->d_hits));
    if (staging) {
        CUDA_TRY(cudaHostAlloc(&s->h_seq, max_bases + 8, cudaHostAllocDefault));
        CUDA_TRY(cudaHostAlloc(&s->h_off, (reads + 1) * sizeof *s->h_off, cudaHostAllocDefault));
    }
    *out = s;
    return SBF_OK;
fail:
    gpu_stream_free(s);
    return rc;
}

int gpu_stream_enqueue(sbf_gpu_stream_t *s, seq_format fmt, const uint8_t *hseq, const uint64_t *hoff, size_t n,
                       uint32_t *kmers, uint32_t *hits)
{
    int rc = SBF_OK, blocks = 0;
    const int R = s->g->n_targets;
    const uint64_t per_byte = fmt == FMT_NT16 ? 2 : 1;
    const uint64_t first = hoff[0] / per_byte, bytes = (hoff[n] + per_byte - 1) / per_byte - first;
    packed_reads layout;
    if (n == 0)
        return SBF_OK;
    if (n > s->max_reads || bytes > s->max_bases)
        return sbf_error(SBF_E_PARAM, "batch of %zu reads in %llu bytes: the stream workspace holds %zu reads, %zu bytes",
                         n, (unsigned long long)bytes, s->max_reads, s->max_bases);
    CUDA_TRY(cudaSetDevice(s->g->device));
    if ((rc = gpu_grid_for(n, s->g->device, &blocks)))
        return rc;
    CUDA_TRY(cudaMemcpyAsync(s->d_seq, hseq + first, bytes, cudaMemcpyHostToDevice, s->st));
    CUDA_TRY(cudaMemcpyAsync(s->d_off, hoff, (n + 1) * sizeof *hoff, cudaMemcpyHostToDevice, s->st));
    CUDA_TRY(cudaEventRecord(s->staged, s->st));
    /* offsets stay absolute: the kernel subtracts the batch's first one */
    layout.offsets = s->d_off;
    layout.base = first * per_byte;
    {
        const query_launch q = {blocks, s->d_seq, n, s->g->kp, gpu_targets_of(s->g), s->d_kmers, s->d_hits, s->st};
        s->g->plan->reads(fmt, q, layout);
    }
    CUDA_TRY(cudaGetLastError());
    if (kmers)
        CUDA_TRY(cudaMemcpyAsync(kmers, s->d_kmers, n * sizeof *kmers, cudaMemcpyDeviceToHost, s->st));
    if (hits)
        CUDA_TRY(cudaMemcpyAsync(hits, s->d_hits, n * (size_t)R * sizeof *hits, cudaMemcpyDeviceToHost, s->st));
    return SBF_OK;
fail:
    return rc;
}

/* Pack n reads into s's pinned staging (waiting first for the previous batch's copy-in), then
 * queue them. nt16 reads take (len + 1) / 2 bytes each; the unused low half of an odd read's
 * last byte becomes 0, which is not a base, so the read's k-mers are unchanged. */
int gpu_query_async(sbf_gpu_stream_t *s, seq_format fmt, size_t n, const uint8_t *const *seqs, const size_t *lens,
                    uint32_t *kmers, uint32_t *hits)
{
    int rc = SBF_OK;
    uint64_t bases = 0, at = 0;
    if (!s->h_seq)
        return sbf_error(SBF_E_PARAM, "this stream workspace has no staging buffers");
    if (n > s->max_reads)
        return sbf_error(SBF_E_PARAM, "batch of %zu reads: the stream workspace holds at most %zu", n, s->max_reads);
    for (size_t i = 0; i < n; ++i)
        bases += lens[i];
    if (bases > s->max_bases)
        return sbf_error(SBF_E_PARAM, "batch of %llu bases: the stream workspace holds at most %zu",
                         (unsigned long long)bases, s->max_bases);
    if (n == 0)
        return SBF_OK;
    if (s->staged_pending) {
        CUDA_TRY(cudaSetDevice(s->g->device));
        CUDA_TRY(cudaEventSynchronize(s->staged));
        s->staged_pending = false;
    }
    s->h_off[0] = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t len = lens[i], bytes = fmt == FMT_NT16 ? (len + 1) / 2 : len;
        if (bytes)
            memcpy(s->h_seq + at, seqs[i], bytes);
        if (fmt == FMT_NT16 && (len & 1))
            s->h_seq[at + bytes - 1] &= 0xf0;
        at += bytes;
        s->h_off[i + 1] = fmt == FMT_NT16 ? 2 * at : at;
    }
    s->staged_pending = true; /* even after a failure part-way: a copy may have been queued */
    return gpu_stream_enqueue(s, fmt, s->h_seq, s->h_off, n, kmers, hits);
fail:
    return rc;
}

extern "C" int sbf_gpu_stream_create(sbf_gpu_index_t *g, void *cuda_stream, size_t max_reads, size_t max_bases,
                                     sbf_gpu_stream_t **out)
{
    return gpu_stream_new(g, (cudaStream_t)cuda_stream, max_reads, max_bases, true, out);
}

extern "C" void *sbf_gpu_stream_handle(const sbf_gpu_stream_t *s) { return (void *)s->st; }

extern "C" int sbf_gpu_query_async(sbf_gpu_stream_t *s, size_t n, const char *const *seqs, const size_t *lens,
                                   uint32_t *kmers, uint32_t *hits)
{
    return gpu_query_async(s, FMT_ASCII, n, (const uint8_t *const *)seqs, lens, kmers, hits);
}

extern "C" int sbf_gpu_query_nt16_async(sbf_gpu_stream_t *s, size_t n, const uint8_t *const *packed, const size_t *lens,
                                        uint32_t *kmers, uint32_t *hits)
{
    return gpu_query_async(s, FMT_NT16, n, packed, lens, kmers, hits);
}

extern "C" int sbf_gpu_stream_sync(sbf_gpu_stream_t *s)
{
    int rc = SBF_OK;
    CUDA_TRY(cudaSetDevice(s->g->device));
    CUDA_TRY(cudaEventRecord(s->done, s->st));
    CUDA_TRY(cudaEventSynchronize(s->done));
    s->staged_pending = false;
    return SBF_OK;
fail:
    return rc;
}

extern "C" void sbf_gpu_stream_destroy(sbf_gpu_stream_t *s) { gpu_stream_free(s); }

/* The blocking queries' two workspaces and pinned result buffers. They are kept in the index
 * between calls: pinned allocations cost milliseconds, and the screening pipeline makes one
 * call per batch (bench/e2e.sh: allocating them on every call made the GPU classifier stage 3 s
 * of a 4 s run). Each caller takes a kept set (up to BLOCKING_CACHE callers at once, the
 * pipeline's workers); a caller finding none makes one, kept afterwards if there is room. */
void gpu_blocking_set_free(blocking_set *set)
{
    if (!set)
        return;
    for (int w = 0; w < 2; ++w) {
        gpu_stream_free(set->ws[w]); /* waits for its work first */
        if (set->out_k[w])
            cudaFreeHost(set->out_k[w]);
        if (set->out_h[w])
            cudaFreeHost(set->out_h[w]);
    }
    free(set);
}

/* A set holding batches of `batch` reads and `max_bases` bases: the index's kept one if it is
 * large enough, else a new one (with room to spare, so that slightly larger batches reuse it). */
int gpu_blocking_set_take(sbf_gpu_index_t *g, size_t batch, size_t max_bases, blocking_set **out)
{
    int rc = SBF_OK;
    const size_t R = g->n_targets > 0 ? (size_t)g->n_targets : 1;
    blocking_set *set = NULL;
    pthread_mutex_lock(&g->cache_lock);
    if (g->n_cache > 0)
        set = g->cache[--g->n_cache];
    pthread_mutex_unlock(&g->cache_lock);
    if (set && set->batch >= batch && set->max_bases >= max_bases) {
        *out = set;
        return SBF_OK;
    }
    gpu_blocking_set_free(set);
    if (!(set = (blocking_set *)calloc(1, sizeof *set)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    set->batch = batch;
    set->max_bases = max_bases + max_bases / 4;
    for (int w = 0; w < 2; ++w) {
        if ((rc = gpu_stream_new(g, NULL, set->batch, set->max_bases, true, &set->ws[w])))
            goto fail;
        CUDA_TRY(cudaHostAlloc(&set->out_k[w], set->batch * sizeof(uint32_t), cudaHostAllocDefault));
        CUDA_TRY(cudaHostAlloc(&set->out_h[w], set->batch * R * sizeof(uint32_t), cudaHostAllocDefault));
    }
    *out = set;
    return SBF_OK;
fail:
    gpu_blocking_set_free(set);
    return rc;
}

/* Keep the set in the index for the next call (unless BLOCKING_CACHE sets are kept already). */
void gpu_blocking_set_give_back(sbf_gpu_index_t *g, blocking_set *set)
{
    pthread_mutex_lock(&g->cache_lock);
    if (g->n_cache < BLOCKING_CACHE) {
        g->cache[g->n_cache++] = set;
        set = NULL;
    }
    pthread_mutex_unlock(&g->cache_lock);
    gpu_blocking_set_free(set);
}

