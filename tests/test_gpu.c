/* test_gpu.c -- the GPU engine computes the CPU engine's bits: filters built on the GPU are
 * byte-identical for several sequences and parameter sets, and query hits are identical for a
 * million varied reads. Exits 77 (skipped) where there is no usable GPU, as in CI.
 * Real genomes can be added: SBF_GPU_GENOMES="a.fa.gz b.fa.gz" (tests/gpu/run.sh does). */
#include "testutil.h"

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_build.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../gpu/sbf_gpu.h"

/* Build target 0 of a one-target index from codes on the CPU and on the GPU; compare bytes. */
static void check_build(const sbf_opt_t *o, const sbf_seqbuf_t *sb, const char *what)
{
    sbf_params_t p = {o->k, o->m, o->s, o->hashes, o->shard_bits};
    sbf_index_t *idx = sbf_idx_new(&p);
    assert_non_null(idx);
    uint64_t shards = sbf_shards_for(&p, sb->kmers, o->bits_per_kmer);
    assert_int_equal(sbf_idx_add_target(idx, "cpu", shards), 0);
    assert_int_equal(sbf_idx_add_target(idx, "gpu", shards), 1);
    assert_int_equal(sbf_build_target(idx, &idx->targets[0], sb->codes, sb->len, 2), 0);
    if (sbf_gpu_build_target(0, idx, &idx->targets[1], sb->codes, sb->len) != 0)
        fail_msg("%s", sbf_error_message());
    size_t bytes = sbf_target_bytes(idx, &idx->targets[0]);
    size_t diff = 0;
    for (size_t i = 0; i < bytes; ++i)
        diff += ((uint8_t *)idx->targets[0].bits)[i] != ((uint8_t *)idx->targets[1].bits)[i];
    print_message("build %-28s k=%d m=%d s=%d H=%d %d-bit: %llu k-mers, %zu bytes, %zu differ\n", what, o->k, o->m, o->s,
                  o->hashes, o->shard_bits, (unsigned long long)sb->kmers, bytes, diff);
    assert_int_equal(diff, 0);
    sbf_idx_free(idx);
}

static void random_with_n(sbf_seqbuf_t *sb, size_t len, int k)
{
    char *s = random_dna(len);
    for (size_t i = 0; i < len / 5000; ++i) {   /* N runs of 1 to 200 bases */
        size_t at = test_rand() % len, run = 1 + test_rand() % 200;
        for (size_t j = at; j < at + run && j < len; ++j)
            s[j] = 'N';
    }
    assert_int_equal(sbf_seqbuf_append(sb, sbf_nt4_ascii, (const uint8_t *)s, len, k), 0);
    free(s);
}

static void load_file(sbf_seqbuf_t *sb, const char *path, int k)
{
    sbf_seqfile_t *f;
    if (sbf_seqfile_open(path, 2, &f))
        fail_msg("%s", sbf_error_message());
    sbf_seqrec_t rec = {{0, 0, NULL}, {0, 0, NULL}};
    int rc;
    while ((rc = sbf_seqfile_read(f, &rec)) == 1)
        assert_int_equal(sbf_seqbuf_append(sb, sbf_nt4_ascii, (const uint8_t *)rec.seq.s, rec.seq.l, k), 0);
    assert_int_equal(rc, 0);
    sbf_seqrec_free(&rec);
    sbf_seqfile_close(f);
}

static const sbf_opt_t *param_sets(size_t *n)
{
    static sbf_opt_t sets[6];
    sets[0] = test_opt(31, 25, 25, 2, 16);   /* defaults */
    sets[1] = test_opt(31, 21, 24, 2, 16);
    sets[2] = test_opt(31, 16, 28, 4, 16);   /* cuSBF's layout */
    sets[2].shard_bits = 256;
    sets[3] = test_opt(21, 15, 15, 1, 8);
    sets[4] = test_opt(32, 27, 22, 3, 12);
    sets[5] = test_opt(31, 11, 20, 1, 16);   /* k-m+1 = 21: the kernels' largest rings */
    *n = 6;
    return sets;
}

static void test_build_identical(void **state)
{
    (void)state;
    size_t n;
    const sbf_opt_t *sets = param_sets(&n);
    test_seed(101);
    const size_t len = getenv("SBF_GPU_QUICK") ? 100000 : 3000000;
    for (size_t i = 0; i < n; ++i) {
        sbf_seqbuf_t sb;
        sbf_seqbuf_init(&sb);
        random_with_n(&sb, len, sets[i].k);
        check_build(&sets[i], &sb, "random with N runs");
        sbf_seqbuf_free(&sb);
    }
    const char *genomes = getenv("SBF_GPU_GENOMES");
    if (genomes && *genomes) {
        char *list = strdup(genomes), *save = NULL;
        for (char *path = strtok_r(list, " ", &save); path; path = strtok_r(NULL, " ", &save)) {
            for (size_t i = 0; i < 2; ++i) {
                sbf_seqbuf_t sb;
                sbf_seqbuf_init(&sb);
                load_file(&sb, path, sets[i].k);
                const char *base = strrchr(path, '/');
                check_build(&sets[i], &sb, base ? base + 1 : path);
                sbf_seqbuf_free(&sb);
            }
        }
        free(list);
    }
}

/* 10^6 reads: lengths 1..300, from the reference (half reverse-complemented), random, with N,
 * shorter than k, plus a few of 100 kbp. CPU and GPU hits must be identical, for 2 targets. */
static void query_identical(const sbf_opt_t *opt, int two_targets)
{
    test_seed(202);
    /* SBF_GPU_QUICK: a small run for compute-sanitizer, which is 10-100x slower */
    const int quick = getenv("SBF_GPU_QUICK") != NULL;
    const size_t N = quick ? 20000 : 1000000, LONG = quick ? 1 : 5, LONG_LEN = 100000;
    size_t glen = 2000000;
    char *g[2] = {random_dna(glen), random_dna(glen / 2)};
    sbf_opt_t o = *opt;
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(&o, &b), 0);
    assert_int_equal(sbf_builder_add_target(b, "g0"), 0);
    assert_int_equal(sbf_builder_add_seq(b, 0, g[0], glen), 0);
    if (two_targets) {
        assert_int_equal(sbf_builder_add_target(b, "g1"), 1);
        assert_int_equal(sbf_builder_add_seq(b, 1, g[1], glen / 2), 0);
    }
    const int R = two_targets ? 2 : 1;
    assert_int_equal(sbf_builder_finish(b, &idx), 0);

    const char **seqs = malloc((N + LONG) * sizeof *seqs);
    size_t *lens = malloc((N + LONG) * sizeof *lens);
    char *pool = malloc((size_t)N * 300 + (size_t)LONG * LONG_LEN);
    size_t at = 0;
    for (size_t i = 0; i < N + LONG; ++i) {
        size_t len = i < N ? 1 + test_rand() % 300 : LONG_LEN;
        char *r = pool + at;
        int kind = (int)(test_rand() % 4);
        if (kind < 2) {
            const char *src = g[i % 2];
            size_t slen = i % 2 ? glen / 2 : glen;
            size_t from = test_rand() % (slen - len);
            for (size_t j = 0; j < len; ++j)
                r[j] = kind == 0 ? src[from + j] : complement(src[from + len - 1 - j]);
        } else {
            for (size_t j = 0; j < len; ++j)
                r[j] = "ACGT"[test_rand() >> 62];
        }
        if (test_rand() % 5 == 0)
            r[test_rand() % len] = "NnRY"[test_rand() % 4];
        if (test_rand() % 7 == 0)
            r[test_rand() % len] = (char)("acgt"[test_rand() % 4]);
        seqs[i] = r;
        lens[i] = len;
        at += len;
    }
    uint32_t *kc = malloc((N + LONG) * sizeof *kc), *kg = malloc((N + LONG) * sizeof *kg);
    uint32_t *hc = calloc((N + LONG) * 2, sizeof *hc), *hg = calloc((N + LONG) * 2, sizeof *hg);
    assert_int_equal(sbf_query(idx, N + LONG, seqs, lens, kc, hc, 2), 0);
    sbf_gpu_index_t *gi;
    if (sbf_gpu_index_upload(0, idx, &gi) != 0)
        fail_msg("%s", sbf_error_message());
    if (sbf_gpu_query(gi, N + LONG, seqs, lens, kg, hg) != 0)
        fail_msg("%s", sbf_error_message());
    size_t bad = 0;
    uint64_t kmers = 0, hits = 0;
    for (size_t i = 0; i < N + LONG; ++i) {
        kmers += kc[i];
        int differ = kc[i] != kg[i];
        for (int r = 0; r < R; ++r) {
            hits += hc[R * i + r];
            differ |= hc[R * i + r] != hg[R * i + r];
        }
        if (differ) {
            if (bad < 5)
                print_message("read %zu (len %zu): cpu %u/%u gpu %u/%u\n", i, lens[i], kc[i], hc[R * i], kg[i], hg[R * i]);
            ++bad;
        }
    }
    print_message("query k=%d m=%d s=%d H=%d, %d target%s: %zu reads, %llu k-mers, %llu hits, %zu differ\n", o.k, o.m, o.s, o.hashes, R,
                  R > 1 ? "s" : "", N + LONG, (unsigned long long)kmers, (unsigned long long)hits, bad);
    assert_int_equal(bad, 0);
    sbf_gpu_index_free(gi);
    sbf_index_destroy(idx);
    free(seqs);
    free(lens);
    free(pool);
    free(kc);
    free(kg);
    free(hc);
    free(hg);
    free(g[0]);
    free(g[1]);
}

static void test_query_identical(void **state)
{
    (void)state;
    /* small filters (4 bits per k-mer): false positives must match too */
    const sbf_opt_t sets[2] = {test_opt(31, 25, 25, 2, 4), test_opt(31, 13, 24, 2, 4)};
    for (int i = 0; i < 2; ++i) {
        query_identical(&sets[i], 0);
        query_identical(&sets[i], 1);
    }
}

int main(void)
{
    int n = sbf_gpu_count();
    if (n == 0) {
        fprintf(stderr, "test_gpu: no usable GPU: skipped\n");
        return 77;
    }
    char desc[256];
    if (sbf_gpu_describe(0, desc, sizeof desc) == 0)
        fprintf(stderr, "test_gpu: device 0: %s\n", desc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_identical),
        cmocka_unit_test(test_query_identical),
    };
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
