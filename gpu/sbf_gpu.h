/* sbf_gpu.h -- the GPU engine behind a C ABI: the same bits as the CPU engine (filters/sbf_kmer.h),
 * computed by CUDA kernels. Every call returns SBF_OK or a negative status with the message in
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

/* Whether GPUs are likely here, answered without starting the CUDA driver (its start costs a
 * run 0.1-0.3 s): a CUDA build on a machine with the NVIDIA driver's control device, and
 * CUDA_VISIBLE_DEVICES not hiding every device. Only sbf_gpu_count() says for sure. */
int sbf_gpu_expected(void);

/* The device's context made now (CUDA makes it on first use, 0.2-0.3 s), so that an upload
 * later does not wait for it: called on a thread of its own while the index loads. 0, or -1
 * when the device cannot be used (the upload will say why). */
int sbf_gpu_warm(int device);

/* "NVIDIA H200, 139.8 GiB, compute 9.0, CUDA runtime 13.0, driver 13.0" into buf. */
int sbf_gpu_describe(int device, char *buf, size_t size);

/* Insert every valid k-mer of codes[0..len) (2-bit codes, 4 = not a base) into target t of idx,
 * on `device`: t->bits (host memory, t->n_shards shards, all zero: a new filter) receives the
 * filter. The device starts from zeros of its own rather than a copy of t->bits (a human index
 * is 6 GB of zeros to send). The bits are byte-identical to sbf_build_target()'s on the CPU;
 * the caller computes the statistics (sbf_target_stats). `sent` (NULL: none) is called with `arg`
 * once the device holds the sequence, before the filter comes back: the caller may free codes
 * there (a human host's masked copy, 3 GB off the build's peak), and then has no sequence for a
 * fallback if the call fails later. */
typedef void (*sbf_gpu_sent_fn)(void *arg);
/* Tests only (tests/test_gpu.c): non-zero makes sbf_gpu_build_target (and _held) fail once the
 * kernels are launched, right after `sent`: the one failure no device can be made to give on
 * demand. */
extern int sbf_gpu_fail_after_sent;
int sbf_gpu_build_target(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                         sbf_gpu_sent_fn sent, void *arg);

/* What a build leaves out, found on the device (sbf_mask_apply's rule): k-mers whose DUST score
 * reaches dust_min (0: none), and those whose canonical form is one of keys[0..n_keys) (sorted,
 * sbf_mask_sorted_keys(); NULL: none). */
typedef struct {
    unsigned dust_min;
    const uint64_t *keys;
    uint64_t n_keys;
} sbf_gpu_hold_t;

/* sbf_gpu_build_target from the target's own sequence, leaving out what `hold` says: the bits
 * the CPU builds from sbf_mask_apply()'s copy, and in *kept and *left_out what that call gives
 * as out->kmers and *left_out. */
int sbf_gpu_build_target_held(int device, const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                              const sbf_gpu_hold_t *hold, uint64_t *kept, uint64_t *left_out);

/* An index copied to one device, for queries. */
typedef struct sbf_gpu_index_s sbf_gpu_index_t;

int sbf_gpu_index_upload(int device, const sbf_index_t *idx, sbf_gpu_index_t **out);
/* The same, stopped (SBF_E_IO, "stopped", nothing made) soon after *stop becomes non-zero:
 * within a chunk of the copy, for an upload made on a thread of its own while the CPU engine
 * answers (the run may end before it does). */
int sbf_gpu_index_upload_stoppable(int device, const sbf_index_t *idx, const int *stop, sbf_gpu_index_t **out);
void sbf_gpu_index_free(sbf_gpu_index_t *g);

/* Query n ASCII sequences, as sbf_query(): kmers[i] valid k-mers of sequence i, hits[i * R + r]
 * those present in target r. Blocking; thread-safe (each call has its own buffers). */
int sbf_gpu_query(sbf_gpu_index_t *g, size_t n, const char *const *seqs, const size_t *lens, uint32_t *kmers,
                  uint32_t *hits);

/* The same for reads as BAM holds them (bam_get_seq): packed[i] holds lens[i] bases (lens in
 * bases), two per byte, the first in the high nibble, as seq_nt16 codes; A=1, C=2, G=4, T=8, and
 * every other code breaks k-mers like N in ASCII. The answers of sbf_gpu_query() on the same
 * bases in ASCII; the 4-bit codes go to the device as they are (half the bytes of ASCII) and the
 * kernel decodes them. The low half of an odd read's last byte is ignored. Blocking. */
int sbf_gpu_query_nt16(sbf_gpu_index_t *g, size_t n, const uint8_t *const *packed, const size_t *lens,
                       uint32_t *kmers, uint32_t *hits);

/* Per-k-mer presence of seq[0..len) (ASCII) in target `target`, as sbf_query_kmers():
 * present[i] = 1 if the k-mer starting at i is a valid k-mer present in the target, else 0, for
 * 0 <= i <= len - k (nothing is written when len < k). Blocking. */
int sbf_gpu_query_kmers(sbf_gpu_index_t *g, int target, const char *seq, size_t len, uint8_t *present);

/* ---- Queries queued on a stream ----
 * A stream workspace holds what one batch needs on the device (room for max_reads reads of
 * max_bases bases in all) and a pinned staging buffer for the batch's reads, and queues its work
 * on one CUDA stream: `cuda_stream` (a cudaStream_t of the device of g, which the caller keeps
 * alive until the workspace is destroyed) or, when NULL, a non-blocking stream of its own.
 * The index g must outlive the workspace. One workspace is used by one thread at a time; any
 * number of workspaces may share an index, and several may share a stream. */
typedef struct sbf_gpu_stream_s sbf_gpu_stream_t;

int sbf_gpu_stream_create(sbf_gpu_index_t *g, void *cuda_stream, size_t max_reads, size_t max_bases,
                          sbf_gpu_stream_t **out);

/* The workspace's stream (a cudaStream_t), to order other work after its batches. */
void *sbf_gpu_stream_handle(const sbf_gpu_stream_t *s);

/* Queue a batch of n reads (at most max_reads, at most max_bases bases in all; more fails with
 * SBF_E_PARAM): the reads are packed into the staging buffer before the call returns, so seqs
 * may be reused at once (the call first waits for the previous batch's copy-in, if it is still
 * running); copy-in, kernel and copy-out of kmers[0..n) and hits[0..n * R) are queued on the
 * stream and the call returns without waiting for them. kmers and hits (either may be NULL)
 * belong to the caller and must stay allocated and untouched until sbf_gpu_stream_sync();
 * pinned memory (sbf_gpu_host_alloc) lets the copies run asynchronously, pageable memory makes
 * the call wait for its copy-out. Any number of batches may be queued before one sync. Results
 * as sbf_gpu_query() and sbf_gpu_query_nt16(). */
int sbf_gpu_query_async(sbf_gpu_stream_t *s, size_t n, const char *const *seqs, const size_t *lens, uint32_t *kmers,
                        uint32_t *hits);
int sbf_gpu_query_nt16_async(sbf_gpu_stream_t *s, size_t n, const uint8_t *const *packed, const size_t *lens,
                             uint32_t *kmers, uint32_t *hits);

/* Wait for every batch queued on the workspace's stream (and, on a caller's stream, for the
 * caller's own work queued there before); reports any error of that work. */
int sbf_gpu_stream_sync(sbf_gpu_stream_t *s);

/* Wait for the stream, then free the workspace (and its stream, if it created it). NULL is
 * allowed. */
void sbf_gpu_stream_destroy(sbf_gpu_stream_t *s);

/* Pinned (page-locked) host memory, for buffers the device copies asynchronously. */
int sbf_gpu_host_alloc(size_t bytes, void **out);
void sbf_gpu_host_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
