/* upload_probe.cu -- where an index's upload spends its time (issue 27): the bus alone, the host's
 * copies out of the file's mapping alone, and the staged upload of gpu/sbf_gpu_upload.cu with
 * other thread counts and chunk sizes, each from a fresh mapping of the file (as every run maps
 * it), so that mapping the page cache's pages is counted as a run pays it.
 *
 *   bench/sbf-upload-probe FILE [GB]          the rows below, GB of the file (default all of it)
 *   bench/sbf-upload-probe --register FILE MB cudaHostRegister(ReadOnly) of MB of a fresh
 *                                             mapping, then a copy from it (run under `timeout`:
 *                                             a first registered upload in sbf never finished
 *                                             on an H100 machine; doc/gpu-notes.md)
 * The file should be in the page cache (`cat FILE > /dev/null` first). Each row: the fastest
 * and slowest of 2 runs. No part of sbf: it links only the CUDA runtime. Build: make
 * bench/sbf-upload-probe (with CUDA). */
#include <cuda_runtime.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "upload_probe: %s: %s\n", #call, cudaGetErrorString(e_));                \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fd = -1;
static size_t bytes;
static char *dev;

static const char *map_fresh(int populate)
{
    void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        perror("upload_probe: mmap");
        exit(1);
    }
    (void)madvise(m, bytes, MADV_HUGEPAGE);   /* as sbf's loader advises */
    if (populate && madvise(m, bytes, MADV_POPULATE_READ) != 0)
        perror("upload_probe: MADV_POPULATE_READ");
    return (const char *)m;
}

typedef struct {
    const char *src;
    size_t chunk, n_chunks, next;
    int dma;   /* 0: memcpy into the pinned buffers only */
} job_t;

static void *worker(void *arg)
{
    job_t *j = (job_t *)arg;
    cudaStream_t st;
    cudaEvent_t sent[2];
    char *buf[2];
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int b = 0; b < 2; ++b) {
        CHECK(cudaEventCreateWithFlags(&sent[b], cudaEventDisableTiming));
        CHECK(cudaMallocHost((void **)&buf[b], j->chunk));
        memset(buf[b], 0, j->chunk);
    }
    for (unsigned i = 0;; ++i) {
        const size_t c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (c >= j->n_chunks)
            break;
        const size_t off = c * j->chunk, n = bytes - off < j->chunk ? bytes - off : j->chunk;
        const int b = i & 1;
        CHECK(cudaEventSynchronize(sent[b]));
        memcpy(buf[b], j->src + off, n);
        if (j->dma)
            CHECK(cudaMemcpyAsync(dev + off, buf[b], n, cudaMemcpyHostToDevice, st));
        CHECK(cudaEventRecord(sent[b], st));
    }
    CHECK(cudaStreamSynchronize(st));
    for (int b = 0; b < 2; ++b) {
        CHECK(cudaFreeHost(buf[b]));
        CHECK(cudaEventDestroy(sent[b]));
    }
    CHECK(cudaStreamDestroy(st));
    return NULL;
}

/* One staged copy (or memcpy only) from a fresh mapping; seconds, mapping included. */
static double staged(int threads, size_t chunk, int dma, int populate, double *t_map)
{
    double t0 = now();
    const char *src = map_fresh(populate);
    *t_map = now() - t0;
    job_t j = {src, chunk, (bytes + chunk - 1) / chunk, 0, dma};
    pthread_t th[64];
    for (int i = 1; i < threads; ++i)
        if (pthread_create(&th[i], NULL, worker, &j) != 0) {
            fprintf(stderr, "upload_probe: cannot start a thread\n");
            exit(1);
        }
    worker(&j);
    for (int i = 1; i < threads; ++i)
        pthread_join(th[i], NULL);
    double t = now() - t0;
    munmap((void *)src, bytes);
    return t;
}

static void row(const char *what, int threads, size_t chunk, double a, double b)
{
    const double lo = a < b ? a : b, hi = a < b ? b : a;
    printf("| %-44s | %2d | %3zu MiB | %6.3f - %6.3f s | %5.1f GB/s |\n", what, threads, chunk >> 20, lo, hi,
           (double)bytes / lo / 1e9);
    fflush(stdout);
}

static int register_probe(const char *path, size_t mb)
{
    bytes = mb << 20;
    CHECK(cudaMalloc((void **)&dev, bytes));
    const char *src = map_fresh(0);
    double t0 = now();
    cudaError_t e = cudaHostRegister((void *)src, bytes, cudaHostRegisterReadOnly);
    double t1 = now();
    printf("register %zu MiB of %s: %s in %.3f s\n", mb, path, cudaGetErrorString(e), t1 - t0);
    fflush(stdout);
    if (e != cudaSuccess)
        return 1;
    for (int r = 0; r < 2; ++r) {
        double t2 = now();
        CHECK(cudaMemcpy(dev, src, bytes, cudaMemcpyHostToDevice));
        double t3 = now();
        printf("copy from the registered pages: %.3f s, %.1f GB/s\n", t3 - t2, (double)bytes / (t3 - t2) / 1e9);
    }
    double t4 = now();
    CHECK(cudaHostUnregister((void *)src));
    printf("unregister: %.3f s\n", now() - t4);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--register")) {
        if ((fd = open(argv[2], O_RDONLY)) < 0) {
            perror(argv[2]);
            return 1;
        }
        return register_probe(argv[2], strtoull(argv[3], NULL, 10));
    }
    if (argc < 2) {
        fprintf(stderr, "usage: sbf-upload-probe FILE [GB] | --register FILE MB\n");
        return 2;
    }
    struct stat sb;
    if ((fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 1;
    }
    bytes = (size_t)sb.st_size;
    if (argc >= 3 && atof(argv[2]) > 0 && atof(argv[2]) * 1e9 < (double)bytes)
        bytes = (size_t)(atof(argv[2]) * 1e9) & ~(size_t)4095;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc((void **)&dev, bytes));
    printf("%s: %.2f GB\n\n| row | threads | chunk | 2 runs | best rate |\n|---|---|---|---|---|\n", argv[1],
           (double)bytes / 1e9);
    /* the bus alone: one pinned buffer sent over and over */
    {
        const size_t chunk = (size_t)256 << 20;
        char *pin;
        CHECK(cudaMallocHost((void **)&pin, chunk));
        memset(pin, 1, chunk);
        double t[2];
        for (int r = 0; r < 2; ++r) {
            double t0 = now();
            for (size_t off = 0; off < bytes; off += chunk)
                CHECK(cudaMemcpyAsync(dev + off, pin, bytes - off < chunk ? bytes - off : chunk, cudaMemcpyHostToDevice, 0));
            CHECK(cudaDeviceSynchronize());
            t[r] = now() - t0;
        }
        row("bus alone: pinned buffer -> device, 1 stream", 1, chunk, t[0], t[1]);
        CHECK(cudaFreeHost(pin));
    }
    double tm[2], t[2];
    const int counts[] = {1, 2, 4, 8, 16};
    for (int c = 0; c < 5; ++c) {
        for (int r = 0; r < 2; ++r)
            t[r] = staged(counts[c], (size_t)16 << 20, 0, 0, &tm[r]);
        row("host alone: fresh mapping -> pinned (memcpy)", counts[c], (size_t)16 << 20, t[0], t[1]);
    }
    for (int c = 1; c < 5; ++c) {
        for (int r = 0; r < 2; ++r)
            t[r] = staged(counts[c], (size_t)16 << 20, 1, 0, &tm[r]);
        row("staged upload, 16 MiB chunks", counts[c], (size_t)16 << 20, t[0], t[1]);
    }
    /* chunk sizes: the pinned buffers (2 per thread) small enough to stay in the last-level
     * cache until the bus reads them */
    const struct { int threads; unsigned mib; } other[] = {{4, 1}, {4, 2}, {4, 4}, {4, 8}, {4, 64},
                                                          {2, 4}, {8, 2}, {8, 4}, {16, 2}};
    for (size_t c = 0; c < sizeof other / sizeof other[0]; ++c) {
        for (int r = 0; r < 2; ++r)
            t[r] = staged(other[c].threads, (size_t)other[c].mib << 20, 1, 0, &tm[r]);
        row("staged upload, other chunks (sbf: 4 x 4 MiB)", other[c].threads, (size_t)other[c].mib << 20, t[0], t[1]);
    }
    for (int r = 0; r < 2; ++r)
        t[r] = staged(4, (size_t)16 << 20, 0, 1, &tm[r]);
    printf("| MADV_POPULATE_READ of a fresh mapping alone | 1 | - | %6.3f - %6.3f s | |\n", tm[0] < tm[1] ? tm[0] : tm[1],
           tm[0] < tm[1] ? tm[1] : tm[0]);
    row("populated, then host alone (memcpy; populate incl.)", 4, (size_t)16 << 20, t[0], t[1]);
    for (int r = 0; r < 2; ++r)
        t[r] = staged(4, (size_t)16 << 20, 1, 1, &tm[r]);
    row("populated, then staged upload (populate incl.)", 4, (size_t)16 << 20, t[0], t[1]);
    for (int r = 0; r < 2; ++r) {
        double t0 = now();
        const char *src = map_fresh(0);
        CHECK(cudaMemcpy(dev, src, bytes, cudaMemcpyHostToDevice));
        t[r] = now() - t0;
        munmap((void *)src, bytes);
    }
    row("pageable: one cudaMemcpy from the mapping", 1, 0, t[0], t[1]);
    CHECK(cudaFree(dev));
    return 0;
}
