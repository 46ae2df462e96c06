/* sbf_gpu_upload.cu -- large arrays between pageable host memory and a device at the bus's speed:
 * an index's arrays onto the device (each run), a build's sequence onto it and its filter back.
 *
 * The index's arrays lie in the file's mapping: pageable memory, which cudaMemcpy copies through
 * one staging buffer of the driver's on one thread, about 8 GB/s on the H200 machine (0.75 s of
 * a 6.1 GB human index, issue 27). Here several threads each copy chunks of the mapping into
 * pinned buffers of their own (two each: one fills while the other is on the bus) and send them
 * on a stream of their own: 11.5 GB/s on the H200 machine (0.53 s) with 16 MiB chunks, 25-30 GB/s
 * on H100 machines with 4 MiB ones alone; beside a screening run, 19-21 GB/s with 4 threads of
 * 4 MiB and 27-30 GB/s with 8 threads of 2 MiB (INDEX_UPLOAD_CHUNK). Reading the file with
 * pread instead, with 12 threads, was slower (0.74 s; doc/gpu-notes.md). Arrays below
 * UPLOAD_STAGED_MIN go in one cudaMemcpy: the pinned buffers cost more than they save there.
 *
 * A build's filter comes back the other way into freshly mapped memory, whose every page is
 * first touched by the copy: one thread in cudaMemcpy faults (and zeroes) 5.7 GB of a human
 * filter alone, in 2 MiB pages where the kernel gives them; here the threads share the faults.
 */
#include <pthread.h>
#include <string.h>

#include "sbf_gpu_int.h"

/* Bytes a copying thread stages at a time. Towards the device: 4 MiB for a build's sequence
 * (likely: a thread's two pinned buffers stay in the caches between its memcpy and the bus's
 * read of them); with 16 MiB the index's upload went no faster than its memcpy alone
 * (bench/sbf-upload-probe, two H100 machines, 4 threads: 0.29-0.43 s with 16 MiB, 0.20-0.27 s
 * with 4 MiB, 64 MiB 0.53-0.78 s; doc/gpu-notes.md). An index's upload, which runs beside a
 * screening run, in 2 MiB chunks on 8 threads: on an H100 machine, the 5.7 GB human filter
 * beside the FASTQ filter run of `bench/e2e.sh HOST=big`, 2 alternating rounds, 0.27-0.30 s
 * with 4 threads of 4 MiB -> 0.19-0.21 s, the run 1.39 and 1.27 -> 1.31 and 1.27 s (16 MiB
 * chunks on the H200 machine had been slower on 8 and 16 threads than on 4: 0.43-0.45 and
 * 0.61-0.66 against 0.35-0.40 s). The build's copies back, which fault fresh pages in, keep the
 * 16 MiB they were measured with, shared by 8 threads. */
#define INDEX_UPLOAD_CHUNK ((size_t)2 << 20)
#define INDEX_UPLOAD_THREADS 8
#define BUILD_UPLOAD_CHUNK ((size_t)4 << 20)
#define DOWNLOAD_CHUNK ((size_t)16 << 20)
#define BUILD_COPY_THREADS 8
#define MAX_COPY_THREADS 8
#define UPLOAD_STAGED_MIN ((size_t)256 << 20)

typedef struct {
    int device;
    int to_device;            /* 1: src is host memory, dst the device's; 0: the other way */
    char *dst;
    const char *src;
    size_t bytes, chunk, n_chunks;
    size_t next;              /* the next chunk to take (atomic) */
    const int *stop;          /* the caller's: non-zero stops the copy between chunks */
    int stopped;
    cudaError_t error;        /* the first failure of any thread, and its call */
    const char *failed_call;
    pthread_mutex_t lock;
} upload_job_t;

static void upload_failed(upload_job_t *job, cudaError_t e, const char *call)
{
    pthread_mutex_lock(&job->lock);
    if (job->error == cudaSuccess) {
        job->error = e;
        job->failed_call = call;
    }
    pthread_mutex_unlock(&job->lock);
    __atomic_store_n(&job->next, job->n_chunks, __ATOMIC_RELAXED);   /* the others stop too */
}

#define UPLOAD_TRY(call)                                                                             \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            upload_failed(job, e_, #call);                                                           \
            goto done;                                                                               \
        }                                                                                            \
    } while (0)

static void *upload_worker(void *arg)
{
    upload_job_t *job = (upload_job_t *)arg;
    cudaStream_t st = NULL;
    cudaEvent_t sent[2] = {NULL, NULL};
    char *buf[2] = {NULL, NULL};
    UPLOAD_TRY(cudaSetDevice(job->device));
    UPLOAD_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int b = 0; b < 2; ++b) {
        UPLOAD_TRY(cudaEventCreateWithFlags(&sent[b], cudaEventDisableTiming));
        UPLOAD_TRY(cudaMallocHost((void **)&buf[b], job->chunk));
    }
    for (unsigned i = 0;; ++i) {
        const size_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->n_chunks)
            break;
        if (job->stop && __atomic_load_n(job->stop, __ATOMIC_RELAXED)) {
            __atomic_store_n(&job->stopped, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&job->next, job->n_chunks, __ATOMIC_RELAXED);
            break;
        }
        const size_t off = c * job->chunk, n = job->bytes - off < job->chunk ? job->bytes - off : job->chunk;
        const int b = i & 1;
        if (job->to_device) {
            UPLOAD_TRY(cudaEventSynchronize(sent[b]));   /* its last chunk has left the buffer */
            memcpy(buf[b], job->src + off, n);
            UPLOAD_TRY(cudaMemcpyAsync(job->dst + off, buf[b], n, cudaMemcpyHostToDevice, st));
            UPLOAD_TRY(cudaEventRecord(sent[b], st));
        } else {   /* the other threads' copies keep the bus busy while this one copies out */
            UPLOAD_TRY(cudaMemcpyAsync(buf[b], job->src + off, n, cudaMemcpyDeviceToHost, st));
            UPLOAD_TRY(cudaStreamSynchronize(st));
            memcpy(job->dst + off, buf[b], n);
        }
    }
    UPLOAD_TRY(cudaStreamSynchronize(st));
done:
    /* cleanup after a failure may fail again; the first error is the one reported */
    if (st)
        cudaStreamSynchronize(st);
    for (int b = 0; b < 2; ++b) {
        if (buf[b])
            cudaFreeHost(buf[b]);
        if (sent[b])
            cudaEventDestroy(sent[b]);
    }
    if (st)
        cudaStreamDestroy(st);
    return NULL;
}

/* The staged copy of an array of UPLOAD_STAGED_MIN bytes or more. */
static int copy_staged(int device, int to_device, const char *what, void *dst, const void *src, size_t bytes,
                       size_t chunk, int threads, const int *stop)
{
    upload_job_t job;
    memset(&job, 0, sizeof job);
    job.device = device;
    job.to_device = to_device;
    job.dst = (char *)dst;
    job.src = (const char *)src;
    job.bytes = bytes;
    job.stop = stop;
    job.chunk = chunk;
    job.n_chunks = (bytes + job.chunk - 1) / job.chunk;
    job.error = cudaSuccess;
    if (pthread_mutex_init(&job.lock, NULL) != 0)
        return sbf_error(SBF_E_THREAD, "cannot create a mutex");
    pthread_t th[MAX_COPY_THREADS];
    int started = 0;
    for (; started < threads - 1 && started < MAX_COPY_THREADS - 1; ++started)
        if (pthread_create(&th[started], NULL, upload_worker, &job) != 0)
            break;   /* fewer threads: slower, not wrong */
    upload_worker(&job);   /* on this thread too: it sets the device the caller had set already */
    for (int i = 0; i < started; ++i)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&job.lock);
    if (job.error != cudaSuccess)
        return sbf_error(SBF_E_IO, "CUDA: %s failed while %s: %s", job.failed_call, what,
                         cudaGetErrorString(job.error));
    if (job.stopped)
        return sbf_error(SBF_E_IO, "the upload of the index was stopped");
    return SBF_OK;
}

/* Large arrays staged by threads, small ones in one cudaMemcpy. */
static int copy_array(int device, int to_device, const char *what, void *dst, const void *src, size_t bytes,
                      size_t chunk, int threads, const int *stop)
{
    int rc = SBF_OK;
    if (bytes >= UPLOAD_STAGED_MIN)
        return copy_staged(device, to_device, what, dst, src, bytes, chunk, threads, stop);
    CUDA_TRY(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
    return SBF_OK;
fail:
    return rc;
}

int gpu_upload(int device, void *dst, const void *src, size_t bytes, const int *stop)
{
    if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
        return sbf_error(SBF_E_IO, "the upload of the index was stopped");
    return copy_array(device, 1, "uploading the index", dst, src, bytes, INDEX_UPLOAD_CHUNK, INDEX_UPLOAD_THREADS, stop);
}

int gpu_copy_to_device(int device, void *dst, const void *src, size_t bytes, const char *what)
{
    return copy_array(device, 1, what, dst, src, bytes, BUILD_UPLOAD_CHUNK, BUILD_COPY_THREADS, NULL);
}

int gpu_copy_to_host(int device, void *dst, const void *src, size_t bytes, const char *what)
{
    return copy_array(device, 0, what, dst, src, bytes, DOWNLOAD_CHUNK, BUILD_COPY_THREADS, NULL);
}
