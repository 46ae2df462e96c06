/* gpu_bench_time.h -- kernel timings for sbf-gpu-bench (bench/gpu_bench_time.cu): CUDA events
 * after a warm-up launch, the median of `repeats` runs in milliseconds. Not part of libsbf.
 * *kernel receives the name of the kernel instance that ran (static storage). */
#ifndef SBF_GPU_BENCH_TIME_H
#define SBF_GPU_BENCH_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "../gpu/sbf_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Build target t of idx from codes[0..len) (2-bit codes, copied to the device once); t->bits
 * receives the filter. */
int sbf_gpu_bench_build(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                        int repeats, double *ms_median, const char **kernel);

/* Query n reads packed in seqs with offsets[0..n] (ASCII, copied to the device once) against
 * every target of g; *kmers_total receives the valid k-mers. */
int sbf_gpu_bench_query(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, int repeats,
                        double *ms_median, uint64_t *kmers_total, const char **kernel);

/* The same reads from pinned host memory (seqs and offsets from sbf_gpu_host_alloc), in batches
 * of `batch` reads over two stream workspaces (the copies of one batch overlap the kernel of the
 * other): the whole run's time, copies both ways included. */
int sbf_gpu_bench_query_host(sbf_gpu_index_t *g, const char *seqs, const uint64_t *offsets, size_t n, size_t batch,
                             int repeats, double *ms_median, uint64_t *kmers_total);

#ifdef __cplusplus
}
#endif

#endif
