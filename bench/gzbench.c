/* gzbench.c -- plain gzip inflated on threads (bam/sbf_pgzip.c) against one ISA-L stream (the
 * path sbf takes without it) on the same file in memory's page cache: MB/s of output, the
 * pieces decoded again, and both outputs' CRC-32 (equal, or the run fails). The median of RUNS
 * runs each. Usage: bench/sbf-gzbench FILE.gz [THREADS...] (default 1 2; RUNS from the
 * environment, default 3). doc/PERFORMANCE.md, "Plain gzip on several threads". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include <htslib/hts.h>
#include <htslib/thread_pool.h>

#include "../config.h"
#include "../bam/sbf_pgzip.h"
#include "../filters/sbf_error.h"
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define OUT_BUF (1u << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one ISA-L stream over the whole file (every member); -1 when it fails or ISA-L is absent */
static double isal_once(const char *path, unsigned long long *bytes, uLong *crc)
{
#ifdef HAVE_ISAL
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    rewind(f);
    unsigned char *in = malloc((size_t)n), *out = malloc(OUT_BUF);
    if (!in || !out || fread(in, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(in);
        free(out);
        return -1;
    }
    fclose(f);
    const double t0 = now();
    struct inflate_state st;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
    st.next_in = in;
    st.avail_in = (uint32_t)n;
    *bytes = 0;
    *crc = crc32(0, NULL, 0);
    double t_crc = 0;
    for (;;) {
        st.next_out = out;
        st.avail_out = OUT_BUF;
        if (isal_inflate(&st) != ISAL_DECOMP_OK)
            return -1;
        const size_t got = OUT_BUF - st.avail_out;
        const double c0 = now();
        *crc = crc32(*crc, out, (uInt)got);   /* not timed: the parallel path's check is its own */
        t_crc += now() - c0;
        *bytes += got;
        if (st.block_state == ISAL_BLOCK_FINISH) {
            if (st.avail_in == 0)
                break;
            isal_inflate_reset(&st);   /* the next member */
            st.crc_flag = ISAL_GZIP;
        }
    }
    const double t = now() - t0 - t_crc;
    free(in);
    free(out);
    return t;
#else
    (void)path, (void)bytes, (void)crc;
    return -1;
#endif
}

static double pgzip_once(const char *path, int threads, unsigned long long *bytes, uLong *crc, size_t *redone)
{
    htsThreadPool pool = {hts_tpool_init(threads), 0};
    sbf_pgzip_t *z;
    unsigned char *out = malloc(OUT_BUF);
    if (!pool.pool || !out)
        return -1;
    const double t0 = now();
    if (sbf_pgzip_open(path, &pool, &z) != SBF_OK) {
        fprintf(stderr, "gzbench: %s\n", sbf_error_message());
        return -1;
    }
    *bytes = 0;
    *crc = crc32(0, NULL, 0);
    double t_crc = 0;
    ssize_t n;
    while ((n = sbf_pgzip_read(z, out, OUT_BUF)) > 0) {
        const double c0 = now();
        *crc = crc32(*crc, out, (uInt)n);
        t_crc += now() - c0;
        *bytes += (unsigned long long)n;
    }
    const double t = now() - t0 - t_crc;
    *redone = sbf_pgzip_redone(z);
    sbf_pgzip_close(z);
    hts_tpool_destroy(pool.pool);
    free(out);
    if (n < 0) {
        fprintf(stderr, "gzbench: %s\n", sbf_error_message());
        return -1;
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sbf-gzbench FILE.gz [THREADS...]   (env RUNS, default 3)\n");
        return 2;
    }
    const int runs = getenv("RUNS") ? atoi(getenv("RUNS")) : 3;
    double t[64];
    unsigned long long bytes = 0, b2 = 0;
    uLong crc = 0, c2 = 0;
    int status = 0;
    int n = 0;
    for (int r = 0; r < runs && r < 64; ++r) {
        const double s = isal_once(argv[1], &bytes, &crc);
        if (s < 0)
            break;
        t[n++] = s;
    }
    if (n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        printf("%-28s %8.3f s %8.0f MB/s  crc %08lx\n", "ISA-L, one stream", t[n / 2], bytes / t[n / 2] / 1e6, crc);
    } else {
        printf("%-28s (ISA-L absent or the file fails)\n", "ISA-L, one stream");
    }
    const int default_threads[] = {1, 2};
    const int n_threads = argc > 2 ? argc - 2 : 2;
    for (int i = 0; i < n_threads; ++i) {
        const int threads = argc > 2 ? atoi(argv[2 + i]) : default_threads[i];
        size_t redone = 0;
        n = 0;
        for (int r = 0; r < runs && r < 64; ++r) {
            const double s = pgzip_once(argv[1], threads, &b2, &c2, &redone);
            if (s < 0)
                return 1;
            t[n++] = s;
        }
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        char label[64];
        snprintf(label, sizeof label, "sbf_pgzip, %d thread%s", threads, threads == 1 ? "" : "s");
        printf("%-28s %8.3f s %8.0f MB/s  crc %08lx  %zu pieces decoded again\n", label, t[n / 2], b2 / t[n / 2] / 1e6,
               c2, redone);
        if (bytes && (b2 != bytes || c2 != crc)) {
            printf("DIFFERENT from ISA-L's output\n");
            status = 1;
        }
    }
    return status;
}
