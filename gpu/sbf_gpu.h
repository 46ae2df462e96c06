/* sbf_gpu.h -- the GPU engine behind a C ABI: the same bits as the CPU engine (filters/sbf_kmer.h),
 * computed by CUDA kernels. Every call returns SBFI_OK or a negative status with the message in
 * sbf_error_message(). Builds without CUDA link gpu/sbf_gpu_none.c: sbf_gpu_count() is 0 there
 * and every other call fails with a clear message, so callers need no #ifdef. */
#ifndef SBF_GPU_H
#define SBF_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "../filters/sbf_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Usable CUDA devices: 0 when there is no GPU, no driver, or no CUDA in this build. Never fails. */
int sbf_gpu_count(void);

/* "NVIDIA H200, 139.8 GiB, compute 9.0, CUDA runtime 13.0, driver 13.0" into buf. */
int sbf_gpu_describe(int device, char *buf, size_t size);

/* Insert every valid k-mer of codes[0..len) (2-bit codes, 4 = not a base) into target t of idx,
 * on `device`: t->bits (host memory, t->n_shards shards) receives the filter, ORed into what it
 * holds. The result is byte-identical to sbf_build_target() on the CPU. */
int sbf_gpu_build_target(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len);

/* An index copied to one device, for queries. */
typedef struct sbf_gpu_index_s sbf_gpu_index_t;

int sbf_gpu_index_upload(int device, const sbf_index_t *idx, sbf_gpu_index_t **out);
void sbf_gpu_index_free(sbf_gpu_index_t *g);

/* Query n ASCII sequences, as sbf_query(): kmers[i] valid k-mers of sequence i, hits[i * R + r]
 * those present in target r. Blocking. */
int sbf_gpu_query(sbf_gpu_index_t *g, size_t n, const char *const *seqs, const size_t *lens, uint32_t *kmers,
                  uint32_t *hits);

/* Benchmark entry points on device-resident data (sequence already on the GPU): kernel times
 * in milliseconds, measured with CUDA events after a warm-up. */
int sbf_gpu_bench_build(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                        int repeats, double *ms_median);
int sbf_gpu_bench_query(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, int repeats,
                        double *ms_median, uint64_t *kmers_total);

/* Pinned (page-locked) host memory, for buffers the device copies asynchronously. */
int sbf_gpu_host_alloc(size_t bytes, void **out);
void sbf_gpu_host_free(void *p);

/* Reads from pinned host memory in batches of `batch` reads over two streams (copies of one
 * batch overlap the kernel of the other): the whole run's time, results copied back. */
int sbf_gpu_bench_query_host(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, size_t batch,
                             int repeats, double *ms_median, uint64_t *kmers_total);

#ifdef __cplusplus
}
#endif

#endif
