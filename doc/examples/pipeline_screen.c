/* pipeline_screen.c -- stream reads through libsbf's pipeline: the program parses FASTQ itself
 * and submits batches while earlier ones are screened, on every GPU (or the CPU engine), and
 * prints each read's category in input order as its batch comes back.
 *
 * Build:  cc pipeline_screen.c $(pkg-config --cflags --libs sbf) -o pipeline_screen
 * Run:    ./pipeline_screen INDEX.sbf READS.fq [BATCH_READS]
 *
 * Output: one line per read (name, category, score), then "# N batches, busy ..." on stderr.
 * The batch's memory belongs to the program: it is allocated when read and freed in the
 * callback, the one place sbf says it is done with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sbf.h>

typedef struct {
    size_t n;
    char **names, **seqs;
    size_t *lens;
} batch_t;

typedef struct {
    const sbf_index_t *idx;
    long batches;
} state_t;

static void batch_free(batch_t *b)
{
    for (size_t i = 0; i < b->n; ++i) {
        free(b->names[i]);
        free(b->seqs[i]);
    }
    free(b->names);
    free(b->seqs);
    free(b->lens);
    free(b);
}

/* Called by sbf for each batch, in the order submitted, one call at a time. */
static int on_batch(void *ctx, const sbf_pipeline_result_t *r)
{
    state_t *st = ctx;
    batch_t *b = r->batch;
    for (size_t i = 0; i < r->n_frags; ++i) {
        const char *cat = r->category[i] == SBF_CAT_MULTI ? "multi" : r->category[i] < 0 ? "none" : NULL;
        sbf_target_info_t ti;
        if (!cat && sbf_index_target(st->idx, r->category[i], &ti) == SBF_OK)
            cat = ti.name;
        if (printf("%s\t%s\t%.3f\n", b->names[i], cat, r->score[i]) < 0)
            return 1;   /* stops the pipeline: sbf_pipeline_close() reports it */
    }
    ++st->batches;
    batch_free(b);
    return 0;
}

/* Up to `max` FASTQ records (4 lines each) into a new batch; NULL at the end or on error. */
static batch_t *read_batch(FILE *fp, size_t max, int *bad)
{
    batch_t *b = calloc(1, sizeof *b);
    if (!b || !(b->names = malloc(max * sizeof *b->names)) || !(b->seqs = malloc(max * sizeof *b->seqs)) ||
        !(b->lens = malloc(max * sizeof *b->lens))) {
        *bad = 1;
        if (b)
            batch_free(b);
        return NULL;
    }
    char line[4][65536];
    while (b->n < max) {
        int got = 0;
        while (got < 4 && fgets(line[got], sizeof line[got], fp))
            ++got;
        if (got != 4 || line[0][0] != '@') {
            *bad = got != 0;
            break;
        }
        line[0][strcspn(line[0], " \t\n")] = '\0';
        line[1][strcspn(line[1], "\n")] = '\0';
        b->names[b->n] = strdup(line[0] + 1);
        b->seqs[b->n] = strdup(line[1]);
        b->lens[b->n] = strlen(line[1]);
        ++b->n;
    }
    if (b->n == 0) {
        batch_free(b);
        return NULL;
    }
    return b;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s INDEX.sbf READS.fq [BATCH_READS]\n", argv[0]);
        return 2;
    }
    size_t per_batch = argc == 4 ? strtoul(argv[3], NULL, 10) : 50000;
    sbf_index_t *idx;
    if (sbf_index_load(argv[1], 0, &idx) != SBF_OK) {
        fprintf(stderr, "pipeline_screen: %s\n", sbf_last_error());
        return 1;
    }
    int gpus = sbf_gpu_devices();   /* every GPU; none: the CPU engine */
    if (gpus > 0 && sbf_index_use_gpus(idx, gpus < SBF_MAX_GPUS ? gpus : SBF_MAX_GPUS, NULL) != SBF_OK)
        fprintf(stderr, "pipeline_screen: %s: using the CPU\n", sbf_last_error());
    FILE *fp = fopen(argv[2], "r");
    if (!fp || per_batch == 0) {
        fprintf(stderr, "pipeline_screen: %s: cannot read (or a batch of 0 reads)\n", argv[2]);
        return 1;
    }
    state_t st = {idx, 0};
    sbf_pipeline_opt_t po;
    sbf_pipeline_opt_init(&po);
    po.classify = 1;
    po.threads = 2;
    po.done = on_batch;
    po.ctx = &st;
    sbf_pipeline_t *p;
    if (sbf_pipeline_open(idx, &po, &p) != SBF_OK) {
        fprintf(stderr, "pipeline_screen: %s\n", sbf_last_error());
        return 1;
    }
    int bad = 0, status = 0;
    batch_t *b;
    while ((b = read_batch(fp, per_batch, &bad)) != NULL)
        if (sbf_pipeline_submit(p, b->n, (const char *const *)b->seqs, b->lens, b) != SBF_OK) {
            batch_free(b);   /* not taken: still ours */
            break;
        }
    sbf_pipeline_stats_t ps;
    if (sbf_pipeline_close(p, &ps) != SBF_OK) {
        fprintf(stderr, "pipeline_screen: %s\n", sbf_last_error());
        status = 1;
    }
    if (bad) {
        fprintf(stderr, "pipeline_screen: %s: not a 4-line FASTQ record\n", argv[2]);
        status = 1;
    }
    fprintf(stderr, "# %ld batches on %s, engine busy %.2f s of %.2f s\n", st.batches,
            ps.n_gpus ? "the GPU(s)" : "the CPU", ps.busy_seconds[0], ps.wall_seconds);
    fclose(fp);
    sbf_index_destroy(idx);
    return status;
}
