/* pipeline_bench.c -- reads already in memory, through the public C API, on one GPU and on
 * several: where the GPU (not htslib) is the limit, how the engine scales with devices.
 *
 * Usage: sbf-pipeline-bench IDX.sbf READS.fq [MAX_READS [BATCH_READS]]
 * Loads up to MAX_READS [4,000,000] FASTQ reads into memory, then for 1..n GPUs (every device
 * present) times, as the median of 3 runs after a warm-up:
 *   - one blocking sbf_query() of every read (cut in one part per device);
 *   - the pipeline (sbf_pipeline_submit) in batches of BATCH_READS [200,000] reads.
 * Results are checked against the 1-GPU answers (in the warm-up run; timed runs check the order). Prints a table: reads/s, Gbp/s, scaling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbf.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    size_t n, bases;
    char **seqs;
    size_t *lens;
} reads_t;

static int load_fastq(const char *path, size_t max, reads_t *r)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "pipeline-bench: %s: cannot open\n", path);
        return -1;
    }
    r->seqs = malloc(max * sizeof *r->seqs);
    r->lens = malloc(max * sizeof *r->lens);
    char line[1 << 16];
    size_t ln = 0;
    while (r->n < max && fgets(line, sizeof line, f)) {
        if (ln++ % 4 != 1)
            continue;
        size_t len = strcspn(line, "\r\n");
        if (!(r->seqs[r->n] = malloc(len + 1))) {
            fclose(f);
            return -1;
        }
        memcpy(r->seqs[r->n], line, len);
        r->seqs[r->n][len] = '\0';
        r->lens[r->n++] = len;
        r->bases += len;
    }
    fclose(f);
    return r->n ? 0 : -1;
}

typedef struct {
    const uint32_t *ref_k, *ref_h;
    int R;
    size_t next, bad;
} check_t;

static int on_batch(void *ctx, const sbf_pipeline_result_t *res)
{
    check_t *c = ctx;
    size_t first = (size_t)(uintptr_t)res->batch;
    if (first != c->next)
        c->bad += res->n;
    if (c->ref_k && (memcmp(res->kmers, c->ref_k + first, res->n * 4) ||
                     memcmp(res->hits, c->ref_h + first * (size_t)c->R, res->n * (size_t)c->R * 4)))
        c->bad += res->n;
    c->next = first + res->n;
    return 0;
}

static int run_pipeline(const sbf_index_t *idx, const reads_t *r, size_t batch, check_t *c, double *busy)
{
    sbf_pipeline_opt_t po;
    sbf_pipeline_opt_init(&po);
    po.done = on_batch;
    po.ctx = c;
    sbf_pipeline_t *p;
    c->next = 0;
    if (sbf_pipeline_open(idx, &po, &p) != SBF_OK)
        return -1;
    for (size_t i = 0; i < r->n; i += batch) {
        size_t cnt = r->n - i < batch ? r->n - i : batch;
        if (sbf_pipeline_submit(p, cnt, (const char *const *)r->seqs + i, r->lens + i, (void *)(uintptr_t)i) != SBF_OK) {
            sbf_pipeline_close(p, NULL);
            return -1;
        }
    }
    sbf_pipeline_stats_t st;
    if (sbf_pipeline_close(p, &st) != SBF_OK)
        return -1;
    *busy = 0;
    for (int g = 0; g < st.n_gpus; ++g)
        *busy += st.busy_seconds[g] / st.wall_seconds / st.n_gpus;
    return c->next == r->n ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "Usage: sbf-pipeline-bench IDX.sbf READS.fq [MAX_READS [BATCH_READS]]\n");
        return 1;
    }
    size_t max = argc > 3 ? strtoull(argv[3], NULL, 10) : 4000000, batch = argc > 4 ? strtoull(argv[4], NULL, 10) : 200000;
    int n_dev = sbf_gpu_devices();
    if (n_dev < 1) {
        fprintf(stderr, "pipeline-bench: no GPU\n");
        return 77;
    }
    sbf_index_t *idx;
    if (sbf_index_load(argv[1], 0, &idx) != SBF_OK) {
        fprintf(stderr, "pipeline-bench: %s\n", sbf_last_error());
        return 1;
    }
    reads_t r = {0};
    if (load_fastq(argv[2], max, &r) < 0)
        return 1;
    const int R = sbf_index_n_targets(idx);
    uint32_t *k1 = malloc(r.n * 4), *h1 = malloc(r.n * (size_t)R * 4), *k = malloc(r.n * 4),
             *h = malloc(r.n * (size_t)R * 4);
    if (!k1 || !h1 || !k || !h)
        return 1;
    printf("# %zu reads (%.2f Gbases) in memory, %d targets, batches of %zu reads, median of 3 runs\n", r.n,
           r.bases / 1e9, R, batch);
    printf("| GPUs | interface | seconds | M reads/s | Gbp/s | scaling | device busy | differ |\n|---|---|---|---|---|---|---|---|\n");
    double base[2] = {0, 0};
    for (int g = 1; g <= n_dev && g <= SBF_MAX_GPUS; ++g) {
        if (sbf_index_use_gpus(idx, g, NULL) != SBF_OK) {
            fprintf(stderr, "pipeline-bench: %s\n", sbf_last_error());
            return 1;
        }
        for (int mode = 0; mode < 2; ++mode) {
            double t[3], busy = 0;
            size_t bad = 0;
            check_t c = {g > 1 || mode ? k1 : NULL, h1, R, 0, 0};
            for (int rep = -1; rep < 3; ++rep) {   /* rep -1: warm-up, with the answers checked */
                if (rep == 0)
                    c.ref_k = NULL;   /* timed runs: the order only (a full compare costs as much as the work) */
                double t0 = now();
                int rc = mode == 0 ? sbf_query(idx, r.n, (const char *const *)r.seqs, r.lens, g == 1 ? k1 : k,
                                               g == 1 ? h1 : h, 1)
                                   : run_pipeline(idx, &r, batch, &c, &busy);
                double dt = now() - t0;
                if (rc != SBF_OK) {
                    fprintf(stderr, "pipeline-bench: %s\n", sbf_last_error());
                    return 1;
                }
                if (rep >= 0)
                    t[rep] = dt;
            }
            if (mode == 0 && g > 1)
                bad = (size_t)(memcmp(k, k1, r.n * 4) != 0) + (size_t)(memcmp(h, h1, r.n * (size_t)R * 4) != 0);
            else if (mode == 1)
                bad = c.bad;
            qsort(t, 3, sizeof *t, cmp_double);
            if (g == 1)
                base[mode] = t[1];
            char busy_s[32] = "-";
            if (mode == 1)
                snprintf(busy_s, sizeof busy_s, "%.0f%%", 100 * busy);
            printf("| %d | %s | %.3f | %.1f | %.2f | %.2fx | %s | %zu |\n", g,
                   mode ? "pipeline" : "sbf_query (blocking)", t[1], r.n / t[1] / 1e6, r.bases / t[1] / 1e9,
                   base[mode] / t[1], busy_s, bad);
        }
    }
    for (size_t i = 0; i < r.n; ++i)
        free(r.seqs[i]);
    free(r.seqs);
    free(r.lens);
    free(k1);
    free(h1);
    free(k);
    free(h);
    sbf_index_destroy(idx);
    return 0;
}
