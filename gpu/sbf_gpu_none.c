/* sbf_gpu_none.c -- the GPU engine of a build without CUDA: no device, clear errors. */
#include "../filters/sbf_error.h"
#include "sbf_gpu.h"

#define NO_CUDA sbf_error(SBF_E_PARAM, "this sbf was built without CUDA (./configure --with-cuda)")

int sbf_gpu_count(void) { return 0; }

int sbf_gpu_expected(void) { return 0; }

int sbf_gpu_warm(int device)
{
    (void)device;
    return -1;
}

int sbf_gpu_describe(int device, char *buf, size_t size)
{
    (void)device;
    if (size)
        buf[0] = '\0';
    return NO_CUDA;
}

int sbf_gpu_fail_after_sent = 0;

int sbf_gpu_build_target(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                         sbf_gpu_sent_fn sent, void *arg)
{
    (void)device, (void)idx, (void)t, (void)codes, (void)len, (void)sent, (void)arg;
    return NO_CUDA;
}

int sbf_gpu_build_target_held(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                              const sbf_gpu_hold_t *hold, uint64_t *kept, uint64_t *left_out)
{
    (void)device, (void)idx, (void)t, (void)codes, (void)len, (void)hold, (void)kept, (void)left_out;
    return NO_CUDA;
}

int sbf_gpu_index_upload(int device, const sbf_index_t *idx, sbf_gpu_index_t **out)
{
    (void)device, (void)idx;
    *out = NULL;
    return NO_CUDA;
}

int sbf_gpu_index_upload_stoppable(int device, const sbf_index_t *idx, const int *stop, sbf_gpu_index_t **out)
{
    (void)stop;
    return sbf_gpu_index_upload(device, idx, out);
}

void sbf_gpu_index_free(sbf_gpu_index_t *g) { (void)g; }

int sbf_gpu_query(sbf_gpu_index_t *g, size_t n, const char *const *seqs, const size_t *lens, uint32_t *kmers,
                  uint32_t *hits)
{
    (void)g, (void)n, (void)seqs, (void)lens, (void)kmers, (void)hits;
    return NO_CUDA;
}

int sbf_gpu_query_nt16(sbf_gpu_index_t *g, size_t n, const uint8_t *const *packed, const size_t *lens,
                       uint32_t *kmers, uint32_t *hits)
{
    (void)g, (void)n, (void)packed, (void)lens, (void)kmers, (void)hits;
    return NO_CUDA;
}

int sbf_gpu_query_kmers(sbf_gpu_index_t *g, int target, const char *seq, size_t len, uint8_t *present)
{
    (void)g, (void)target, (void)seq, (void)len, (void)present;
    return NO_CUDA;
}

int sbf_gpu_stream_create(sbf_gpu_index_t *g, void *cuda_stream, size_t max_reads, size_t max_bases,
                          sbf_gpu_stream_t **out)
{
    (void)g, (void)cuda_stream, (void)max_reads, (void)max_bases;
    *out = NULL;
    return NO_CUDA;
}

void *sbf_gpu_stream_handle(const sbf_gpu_stream_t *s)
{
    (void)s;
    return NULL;
}

int sbf_gpu_query_async(sbf_gpu_stream_t *s, size_t n, const char *const *seqs, const size_t *lens, uint32_t *kmers,
                        uint32_t *hits)
{
    (void)s, (void)n, (void)seqs, (void)lens, (void)kmers, (void)hits;
    return NO_CUDA;
}

int sbf_gpu_query_nt16_async(sbf_gpu_stream_t *s, size_t n, const uint8_t *const *packed, const size_t *lens,
                             uint32_t *kmers, uint32_t *hits)
{
    (void)s, (void)n, (void)packed, (void)lens, (void)kmers, (void)hits;
    return NO_CUDA;
}

int sbf_gpu_stream_sync(sbf_gpu_stream_t *s)
{
    (void)s;
    return NO_CUDA;
}

void sbf_gpu_stream_destroy(sbf_gpu_stream_t *s) { (void)s; }

int sbf_gpu_host_alloc(size_t bytes, void **out)
{
    (void)bytes;
    *out = NULL;
    return NO_CUDA;
}

void sbf_gpu_host_free(void *p) { (void)p; }
