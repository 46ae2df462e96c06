/* screen_buffers.c -- screen reads a program already holds in memory with libsbf.
 *
 * Build:  cc screen_buffers.c $(pkg-config --cflags --libs sbf) -o screen_buffers
 * Run:    ./screen_buffers INDEX.sbf READS.fq
 *
 * The program parses the FASTQ itself (as a pipeline that has its own reader would), keeps the
 * reads in its own buffers, and asks libsbf for each read's category in batches. It prints one
 * line per read: name, category, score; and the count per category on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sbf.h>

#define BATCH 4096

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s INDEX.sbf READS.fq\n", argv[0]);
        return 2;
    }
    printf("# libsbf %s (built against %s)\n", sbf_version(), SBF_VERSION);
    sbf_index_t *idx;
    if (sbf_index_load(argv[1], 0, &idx) != SBF_OK) {
        fprintf(stderr, "screen_buffers: %s\n", sbf_last_error());
        return 1;
    }
    if (sbf_gpu_devices() > 0 && sbf_index_use_gpu(idx, SBF_GPU_AUTO) != SBF_OK)
        fprintf(stderr, "screen_buffers: %s: using the CPU\n", sbf_last_error());
    FILE *fp = fopen(argv[2], "r");
    if (!fp) {
        perror(argv[2]);
        return 1;
    }
    int n_targets = sbf_index_n_targets(idx);
    long *count = calloc((size_t)n_targets + 3, sizeof *count);   /* targets, multi, none, no k-mer */
    static char *names[BATCH], *seqs[BATCH];
    static size_t lens[BATCH];
    static int category[BATCH];
    static float score[BATCH];
    char line[4][65536];
    size_t n = 0;
    int done = 0, status = 0;
    while (!done) {
        /* one FASTQ record: four lines */
        int got = 0;
        while (got < 4 && fgets(line[got], sizeof line[got], fp))
            ++got;
        if (got == 4 && line[0][0] == '@') {
            line[0][strcspn(line[0], " \t\n")] = '\0';
            line[1][strcspn(line[1], "\n")] = '\0';
            names[n] = strdup(line[0] + 1);
            seqs[n] = strdup(line[1]);
            lens[n] = strlen(line[1]);
            ++n;
        } else {
            done = 1;
            if (got != 0) {
                fprintf(stderr, "screen_buffers: %s: not a 4-line FASTQ record\n", argv[2]);
                status = 1;
            }
        }
        if (n == BATCH || (done && n > 0)) {
            sbf_classify_opt_t opt;
            sbf_classify_opt_init(&opt);
            if (sbf_classify(idx, &opt, n, (const char *const *)seqs, lens, NULL, NULL, category, score, 2) != SBF_OK) {
                fprintf(stderr, "screen_buffers: %s\n", sbf_last_error());
                return 1;
            }
            for (size_t i = 0; i < n; ++i) {
                const char *cat = category[i] == SBF_CAT_MULTI ? "multi" : category[i] < 0 ? "none" : NULL;
                sbf_target_info_t ti;
                if (!cat && sbf_index_target(idx, category[i], &ti) == SBF_OK)
                    cat = ti.name;
                printf("%s\t%s\t%.3f\n", names[i], cat, score[i]);
                ++count[category[i] >= 0 ? category[i] : n_targets - 1 - category[i]];
                free(names[i]);
                free(seqs[i]);
            }
            n = 0;
        }
    }
    for (int t = 0; t < n_targets; ++t) {
        sbf_target_info_t ti;
        if (sbf_index_target(idx, t, &ti) == SBF_OK)
            fprintf(stderr, "%s\t%ld\n", ti.name, count[t]);
    }
    fprintf(stderr, "multi\t%ld\nnone\t%ld\nno k-mer\t%ld\n", count[n_targets], count[n_targets + 1],
            count[n_targets + 2]);
    free(count);
    fclose(fp);
    sbf_index_destroy(idx);
    return status;
}
