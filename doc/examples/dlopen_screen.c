/* dlopen_screen.c -- use libsbf without linking it: load it with dlopen() at run time and
 * resolve the entry points needed, as a plugin host does (no sbf.h needed to build, only to
 * know the signatures, which are repeated here).
 *
 * Build:  cc dlopen_screen.c -ldl -o dlopen_screen
 * Run:    ./dlopen_screen [LIBRARY] INDEX.sbf SEQUENCE...
 *         LIBRARY defaults to libsbf.so.4 (the soname: found through the loader's path).
 * Prints the library's version, then per sequence its category and score. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbf_index_s sbf_index_t;
typedef struct {   /* as sbf.h declares it (libsbf.so.4) */
    double min_score;
    unsigned min_hits;
    double min_fraction;
    double margin;
    unsigned mask_lowcomp;
    int mates;
} sbf_classify_opt_t;
typedef struct {
    const char *name;
    int n_sources;
    const char *const *sources;
    unsigned long long bases, kmers, bytes;
    double fill, predicted_fpr;
} sbf_target_info_t;

int main(int argc, char **argv)
{
    int a = 1;
    const char *lib = "libsbf.so.4";
    if (argc > 3 && strstr(argv[1], ".so"))
        lib = argv[a++];
    if (argc - a < 2) {
        fprintf(stderr, "usage: %s [LIBRARY] INDEX.sbf SEQUENCE...\n", argv[0]);
        return 2;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen_screen: %s\n", dlerror());
        return 1;
    }
    const char *(*version)(void) = (const char *(*)(void))dlsym(h, "sbf_version");
    const char *(*last_error)(void) = (const char *(*)(void))dlsym(h, "sbf_last_error");
    int (*load)(const char *, int, sbf_index_t **) = (int (*)(const char *, int, sbf_index_t **))dlsym(h, "sbf_index_load");
    void (*destroy)(sbf_index_t *) = (void (*)(sbf_index_t *))dlsym(h, "sbf_index_destroy");
    int (*target)(const sbf_index_t *, int, sbf_target_info_t *) =
        (int (*)(const sbf_index_t *, int, sbf_target_info_t *))dlsym(h, "sbf_index_target");
    void (*opt_init)(sbf_classify_opt_t *) = (void (*)(sbf_classify_opt_t *))dlsym(h, "sbf_classify_opt_init");
    int (*classify)(const sbf_index_t *, const sbf_classify_opt_t *, size_t, const char *const *, const size_t *,
                    const char *const *, const size_t *, int *, float *, int) =
        (int (*)(const sbf_index_t *, const sbf_classify_opt_t *, size_t, const char *const *, const size_t *,
                 const char *const *, const size_t *, int *, float *, int))dlsym(h, "sbf_classify");
    if (!version || !last_error || !load || !destroy || !target || !opt_init || !classify) {
        fprintf(stderr, "dlopen_screen: %s lacks an sbf entry point (an older libsbf?)\n", lib);
        return 1;
    }
    printf("libsbf %s\n", version());
    sbf_index_t *idx;
    if (load(argv[a], 0, &idx) != 0) {
        fprintf(stderr, "dlopen_screen: %s\n", last_error());
        return 1;
    }
    size_t n = (size_t)(argc - a - 1);
    const char **seqs = (const char **)(argv + a + 1);
    size_t *lens = malloc(n * sizeof *lens);
    int *cat = malloc(n * sizeof *cat);
    float *score = malloc(n * sizeof *score);
    for (size_t i = 0; i < n; ++i)
        lens[i] = strlen(seqs[i]);
    sbf_classify_opt_t opt;
    opt_init(&opt);
    if (classify(idx, &opt, n, seqs, lens, NULL, NULL, cat, score, 1) != 0) {
        fprintf(stderr, "dlopen_screen: %s\n", last_error());
        return 1;
    }
    for (size_t i = 0; i < n; ++i) {
        sbf_target_info_t ti;
        const char *name = cat[i] == -1 ? "multi" : cat[i] < 0 ? "none" : target(idx, cat[i], &ti) == 0 ? ti.name : "?";
        printf("sequence %zu\t%s\t%.3f\n", i + 1, name, score[i]);
    }
    free(lens);
    free(cat);
    free(score);
    destroy(idx);
    dlclose(h);
    return 0;
}
