/* sbf_gpu_int.h -- the GPU engine's host side as its files share it (C++, CUDA runtime), and as
 * bench/gpu_bench_time.cu uses it to time kernels on device-resident data. Nothing here is part
 * of libsbf's API: every symbol has hidden visibility.
 *   sbf_gpu.cu         devices, builds, index upload, blocking queries, per-k-mer presence
 *   sbf_gpu_stream.cu  streams and device memory: stream workspaces, the kept buffer sets,
 *                      pinned host memory
 *   sbf_gpu_plan.cu    the kernel instances, and the choice among them (once per index upload,
 *                      once per build)
 *   sbf_gpu_upload.cu  an index's arrays from the file's mapping to a device, staged by threads;
 *                      a build's sequence there and its filter back
 *   kernels/           device code, one kernel family per file */
#ifndef SBF_GPU_INT_H
#define SBF_GPU_INT_H

#include <cuda_runtime.h>
#include <pthread.h>

extern "C" {
#include "../filters/sbf_error.h"
#include "sbf_gpu.h"
}
#include "kernels/inputs.cuh"
#include "kernels/params.cuh"

/* Every CUDA call is checked: on failure, record the message and jump to the function's
 * cleanup label `fail` with rc set. */
#define CUDA_TRY(call)                                                                                \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            rc = sbf_error(SBF_E_IO, "CUDA: %s failed: %s", #call, cudaGetErrorString(e_));          \
            goto fail;                                                                                \
        }                                                                                             \
    } while (0)

/* Blocks of 256 threads for `work` threads on `device`: at most 8 per SM (the kernels loop). */
int gpu_grid_for(uint64_t work, int device, int *blocks);

/* ---- kernel plans: which instances run, chosen once ---- */

/* Sequence formats of the host side: ASCII bytes, or BAM's 4-bit codes two per byte. */
enum seq_format { FMT_ASCII, FMT_NT16 };

/* The targets of a query: the device table (the v6 kernel reads it), its host copy (the v10
 * kernel takes up to QGROUP targets per launch as parameters), and whether every target's shard
 * numbers fit 32 bits (always, below 256 GiB per target; the v10 kernel needs it). */
struct query_targets {
    const dev_target *d, *h;
    int R;
    bool small;
    const int *plain;       /* the targets of plain panels (the v10 kernel's), n_plain of them */
    int n_plain;
    const panel_args *wide; /* the wide panels (the compiled sets' panel kernel), n_wide */
    int n_wide;
};

/* One query launch: n items (reads, or pieces of one sequence) over seqs on the device; blocks
 * from gpu_grid_for(n); kmers[i] and hits[i * R + r] on the device (kmers may be NULL). */
struct query_launch {
    int blocks;
    const uint8_t *seqs;
    uint64_t n;
    kparams kp;
    query_targets qt;
    uint32_t *kmers, *hits;
    cudaStream_t st;
};

/* The query kernels of an index: chosen by gpu_query_plan_for() when the index is uploaded. */
struct query_plan {
    const char *name; /* "v10, 8 targets per pass", for the benchmark's table */
    void (*reads)(seq_format fmt, const query_launch &q, const packed_reads &layout);
    void (*presence)(const query_launch &q, const sequence_chunks &layout); /* one target */
};

/* The plan for an index of these parameters and targets (small: every panel has fewer than 2^32
 * shards; n_plain targets in plain panels, n_wide wide panels). Never NULL. */
const query_plan *gpu_query_plan_for(const kparams &kp, bool small, int n_targets, int n_plain, int n_wide);

/* One build launch: the k-mers of codes[0..len) (2-bit codes on the device) into a filter of
 * n_shards shards at bits (device), on the default stream. */
struct build_launch {
    const uint8_t *codes;
    uint64_t len;
    const uint32_t *held; /* hold_kernel's bitmap of k-mers left out, or NULL */
    kparams kp;
    uint64_t n_shards;
    unsigned long long *bits;
};

struct build_plan {
    const char *name;
    uint64_t (*threads)(const build_launch &b); /* threads the launch wants: for gpu_grid_for() */
    void (*run)(int blocks, const build_launch &b);
};

const build_plan *gpu_build_plan_for(const kparams &kp);

/* The k-mers a build leaves out (kernels/hold.cuh): the mask's sieve made on the host
 * (gpu_hold_sieve_words() words), the threads hold_kernel wants, and its launch. */
uint64_t gpu_hold_sieve_words(void);
void gpu_hold_sieve(const uint64_t *keys, uint64_t n, uint64_t *sieve);
uint64_t gpu_hold_threads(uint64_t len, unsigned k);
void gpu_hold_run(int blocks, const uint8_t *codes, uint64_t len, unsigned k, unsigned dust_min, const uint64_t *keys,
                  uint64_t n_keys, const uint64_t *sieve, uint32_t *held, unsigned long long *counts);

/* ---- an index on a device ---- */

struct blocking_set;

/* Buffer sets kept per device index: one per thread that queries it at once (the screening
 * pipeline runs four per device). */
#define BLOCKING_CACHE 4

struct sbf_gpu_index_s {
    int device;
    int n_targets;
    kparams kp;
    const query_plan *plan;    /* chosen at upload */
    int n_panels;
    unsigned long long **bits; /* device arrays, one per panel */
    dev_target *d_targets;
    dev_target *h_targets;     /* host copy of d_targets */
    int *plain, n_plain;       /* the targets of plain panels */
    panel_args *wide;          /* the wide panels */
    int n_wide;
    bool small;                /* every panel has fewer than 2^32 shards */
    pthread_mutex_t cache_lock;
    bool cache_lock_ready;
    blocking_set *cache[BLOCKING_CACHE]; /* the blocking queries' buffers, kept between calls */
    int n_cache;
};

/* All targets of g, or only target `one`. */
query_targets gpu_targets_of(const sbf_gpu_index_t *g, int one = -1);

/* ---- streams and device memory (sbf_gpu_stream.cu) ----
 * A workspace queues batches on one stream: copy-in of the packed reads and their offsets, the
 * kernel, copy-out of the counts. The blocking queries alternate batches between two workspaces
 * (the copies and host packing of one batch overlap the kernel of the other); the _async entry
 * points hand one to the caller. */
struct sbf_gpu_stream_s {
    sbf_gpu_index_t *g;
    cudaStream_t st;
    bool owns_stream;
    size_t max_reads, max_bases;
    uint8_t *d_seq;    /* max_bases + 8 bytes */
    uint64_t *d_off;   /* max_reads + 1 offsets */
    uint32_t *d_kmers; /* max_reads */
    uint32_t *d_hits;  /* max_reads * n_targets */
    uint8_t *h_seq;    /* pinned staging of a batch (NULL where the reads come packed and pinned) */
    uint64_t *h_off;
    /* Both events block the waiting thread instead of spinning on it. With one CUDA context
     * and more cores, the runtime's default (cudaDeviceScheduleAuto) spin-waits in
     * cudaStreamSynchronize: the screening pipeline's GPU workers each burned a core while their
     * batches ran, cores its compression threads needed (bench/e2e.sh, BAM row: sbf 50.5 CPU-s
     * against samtools' 39.7). Blocking events keep that choice local to these waits, without
     * setting flags on a context the embedding program may share. */
    cudaEvent_t staged; /* recorded after a batch's copy-in: the staging may be refilled */
    cudaEvent_t done;   /* recorded by sbf_gpu_stream_sync: everything queued so far is done */
    bool staged_pending;
};

/* A workspace on stream `user` (NULL: one of its own), with pinned staging buffers or not. */
int gpu_stream_new(sbf_gpu_index_t *g, cudaStream_t user, size_t max_reads, size_t max_bases, bool staging,
                   sbf_gpu_stream_t **out);
void gpu_stream_free(sbf_gpu_stream_t *s);

/* Queue one batch on s: the bytes of reads hoff[0]..hoff[n] of hseq (offsets absolute, in bases
 * of the format, even for nt16: every read starts on a byte) copied in, the kernel, kmers and
 * hits (either may be NULL) copied out. Returns once queued. */
int gpu_stream_enqueue(sbf_gpu_stream_t *s, seq_format fmt, const uint8_t *hseq, const uint64_t *hoff, size_t n,
                       uint32_t *kmers, uint32_t *hits);

/* Pack n reads into s's pinned staging, then queue them (sbf_gpu_query_async). */
int gpu_query_async(sbf_gpu_stream_t *s, seq_format fmt, size_t n, const uint8_t *const *seqs, const size_t *lens,
                    uint32_t *kmers, uint32_t *hits);

/* The blocking queries' two workspaces and pinned result buffers, kept in the index between
 * calls (sbf_gpu_stream.cu says why). */
struct blocking_set {
    sbf_gpu_stream_t *ws[2];
    uint32_t *out_k[2], *out_h[2];
    size_t batch, max_bases; /* capacity */
};

/* A set for batches of `batch` reads and `max_bases` bases: a kept one if large enough, else new. */
int gpu_blocking_set_take(sbf_gpu_index_t *g, size_t batch, size_t max_bases, blocking_set **out);
/* Keep the set in the index for the next call (or free it when BLOCKING_CACHE are kept). */
void gpu_blocking_set_give_back(sbf_gpu_index_t *g, blocking_set *set);
void gpu_blocking_set_free(blocking_set *set);

/* bytes at src (host memory, pageable: the index file's mapping) to dst on the device, through
 * pinned buffers filled by several threads when large (sbf_gpu_upload.cu). SBF_OK or an error;
 * SBF_E_IO ("stopped") when *stop (stop may be NULL) became non-zero before the end. */
int gpu_upload(int device, void *dst, const void *src, size_t bytes, const int *stop);
/* The same staged copy for a build: a sequence onto the device, a filter back into pageable
 * memory (faulted in by the copying threads). `what` names the copy in an error ("copying the
 * filter from the device"). */
int gpu_copy_to_device(int device, void *dst, const void *src, size_t bytes, const char *what);
int gpu_copy_to_host(int device, void *dst, const void *src, size_t bytes, const char *what);

#endif
