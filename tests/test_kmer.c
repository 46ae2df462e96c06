/* test_kmer.c -- hash functions, base encoding, rolling canonical words and the window scanner
 * against naive recomputation. These fix the bits of the format: the GPU engine must agree. */
#include "testutil.h"

#include "../filters/sbf_checksum.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_scan.h"

static void test_xxh64_vectors(void **state)
{
    (void)state;
    /* Reference values of xxhsum -H64 (Debian package xxhash). */
    char a1000[1000];
    memset(a1000, 'a', sizeof a1000);
    assert_true(sbf_xxh64("", 0, 0) == 0xef46db3751d8e999ULL);
    assert_true(sbf_xxh64("abc", 3, 0) == 0x44bc2cf5ad770999ULL);
    assert_true(sbf_xxh64(a1000, sizeof a1000, 0) == 0x56e43b712eda4223ULL);
}

static void test_hashes_are_format_2(void **state)
{
    (void)state;
    /* sbf_mix32 is lowbias32 (hash-prospector); sbf_hash_word folds the high half in by the
     * multiplier 0x85ebca6b and mixes with the seed 0x9e3779b9. Values from an independent
     * Python implementation of the same definitions (format version 2, doc/format.md). */
    assert_true(sbf_mix32(0) == 0);
    assert_true(sbf_mix32(1) == 0x688990c0u);
    assert_true(sbf_mix32(2) == 0xd1132181u);
    assert_true(sbf_mix32(0xdeadbeefu) == 0xe628c683u);
    assert_true(sbf_mix32(0xffffffffu) == 0x6768824au);
    assert_true(sbf_hash_word(0) == 0x01fce552u);
    assert_true(sbf_hash_word(0x3ffffffffffffULL) == 0x8bd29e56u);
    assert_true(sbf_hash_word(0x123456789abcdULL) == 0xa14b88a6u);
    assert_true(sbf_hash_mmer(0x123456789abcdULL) == sbf_hash_smer(0x123456789abcdULL));
    /* words that differ in one half only never collide */
    for (uint64_t d = 1; d < 4096; ++d) {
        assert_true(sbf_hash_word(0x123456789abcdULL) != sbf_hash_word(0x123456789abcdULL ^ d));
        assert_true(sbf_hash_word(0x123456789abcdULL) != sbf_hash_word(0x123456789abcdULL ^ (d << 32)));
    }
    /* bit fields: the hash's own bits while they last, then the extension word's */
    const uint32_t h = 0x9abcdef1u;
    assert_int_equal(sbf_smer_bit(h, 0, 9), h & 511);
    assert_int_equal(sbf_smer_bit(h, 2, 9), (h >> 18) & 511);
    const uint64_t ext = (uint64_t)h | (uint64_t)sbf_mix32(h ^ SBF_SEED_EXT) << 32;
    assert_int_equal(sbf_smer_bit(h, 3, 9), (unsigned)(ext >> 27) & 511);
    assert_int_equal(sbf_smer_bit(h, 6, 9), (unsigned)(ext >> 54) & 511);
    assert_int_equal(sbf_smer_bit(h, 3, 8), (h >> 24) & 255);
    assert_int_equal(sbf_smer_bit(h, 4, 8), sbf_mix32(h ^ SBF_SEED_EXT) & 255);
    /* shard numbers: 32-bit keys over at most 2^32 shards */
    assert_true(sbf_shard_of_key(0xffffffffu, SBF_MAX_SHARDS) == 0xffffffffu);
    assert_true(sbf_shard_of_key(0xffffffffu, 7) == 6);
    assert_true(sbf_shard_of_key(0, 7) == 0);
}

static void test_encoding_tables(void **state)
{
    (void)state;
    for (int c = 0; c < 256; ++c)
        assert_int_equal(sbf_nt4_ascii[c], sbf_encode_ascii((unsigned char)c));
    assert_int_equal(sbf_encode_ascii('A'), 0);
    assert_int_equal(sbf_encode_ascii('c'), 1);
    assert_int_equal(sbf_encode_ascii('G'), 2);
    assert_int_equal(sbf_encode_ascii('t'), 3);
    assert_int_equal(sbf_encode_ascii('U'), 3);
    assert_int_equal(sbf_encode_ascii('N'), 4);
    assert_int_equal(sbf_encode_ascii('R'), 4);
    /* BAM nibbles: A=1 C=2 G=4 T=8, every other code (IUPAC, N, '=') breaks a k-mer */
    for (int c = 0; c < 16; ++c) {
        int want = c == 1 ? 0 : c == 2 ? 1 : c == 4 ? 2 : c == 8 ? 3 : 4;
        assert_int_equal(sbf_nt4_bam[c], want);
    }
}

/* 2-bit value of s[0..len) read forwards, and of its reverse complement. */
static uint64_t naive_word(const char *s, int len, int rc)
{
    uint64_t v = 0;
    for (int i = 0; i < len; ++i) {
        unsigned c = sbf_encode_ascii((unsigned char)(rc ? s[len - 1 - i] : s[i]));
        if (rc)
            c = 3 - c;
        v = (v << 2) | c;
    }
    return v;
}

static uint64_t naive_canonical(const char *s, int len)
{
    uint64_t f = naive_word(s, len, 0), r = naive_word(s, len, 1);
    return f < r ? f : r;
}

static void test_roll_matches_naive(void **state)
{
    (void)state;
    test_seed(7);
    const int lens[] = {1, 2, 5, 16, 21, 31, 32};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li) {
        int len = lens[li];
        char *s = random_dna(200);
        sbf_roll_t r = {0, 0};
        uint64_t mask = sbf_mask((unsigned)len);
        for (int i = 0; i < 200; ++i) {
            sbf_roll_push(&r, sbf_encode_ascii((unsigned char)s[i]), mask, 2u * (unsigned)(len - 1));
            if (i + 1 >= len) {
                const char *w = s + i + 1 - len;
                assert_true(r.fwd == naive_word(w, len, 0));
                assert_true(r.rev == naive_word(w, len, 1));
                assert_true(sbf_roll_canonical(&r) == naive_canonical(w, len));
            }
        }
        free(s);
    }
}

static int valid_at(const char *s, int pos, int len)
{
    for (int i = 0; i < len; ++i)
        if (sbf_encode_ascii((unsigned char)s[pos + i]) > 3)
            return 0;
    return 1;
}

static uint64_t naive_minimizer(const char *kmer, int k, int m)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i + m <= k; ++i) {
        uint64_t h = sbf_hash_mmer(naive_canonical(kmer + i, m));
        if (h < best)
            best = h;
    }
    return best;
}

/* Every valid k-mer lies in exactly one run whose minimizer is the naive one; s-mer hashes of
 * run members are the naive ones; invalid k-mers lie in no run. */
static void check_scan_path(const sbf_params_t *p, const char *s, uint32_t len)
{
    static sbf_scan_t sc;
    sbf_scan_window(&sc, p, sbf_nt4_ascii, (const uint8_t *)s, len);
    const int k = p->k;
    int n_pos = (int)len - k + 1;
    int *covered = calloc(n_pos > 0 ? (size_t)n_pos : 1, sizeof *covered);
    assert_non_null(covered);
    uint32_t total = 0;
    for (uint32_t r = 0; r < sc.n_runs; ++r) {
        const sbf_run_t *run = &sc.runs[r];
        assert_true(run->n >= 1);
        if (r) { /* runs are maximal: neighbours differ in minimizer or are not adjacent */
            const sbf_run_t *prev = &sc.runs[r - 1];
            assert_true(prev->first + prev->n < run->first || prev->minimizer != run->minimizer);
        }
        for (uint32_t i = run->first; i < run->first + run->n; ++i) {
            assert_true((int)i < n_pos);
            assert_true(valid_at(s, (int)i, k));
            covered[i]++;
            assert_true(run->minimizer == naive_minimizer(s + i, k, p->m));
        }
        for (uint32_t j = run->first; j < run->first + run->n + (uint32_t)(k - p->s); ++j)
            assert_true(sc.smer_hash[j] == sbf_hash_smer(naive_canonical(s + j, p->s)));
        total += run->n;
    }
    for (int i = 0; i < n_pos; ++i)
        assert_int_equal(covered[i], valid_at(s, i, k));
    assert_int_equal(total, sc.n_kmers);
    free(covered);
}

/* Every path this CPU runs: the naive checks above, and the same runs and run hashes as the
 * scalar path, bit for bit. */
static int paths_run[SBF_SCAN_PATHS];

static void check_scan(const sbf_params_t *p, const char *s, uint32_t len)
{
    static sbf_scan_t ref, sc;
    const sbf_scan_path_t chosen = sbf_scan_path();
    assert_int_equal(sbf_scan_set_path(SBF_SCAN_SCALAR), SBF_OK);
    sbf_scan_window(&ref, p, sbf_nt4_ascii, (const uint8_t *)s, len);
    for (int q = 0; q < SBF_SCAN_PATHS; ++q) {
        if (!sbf_scan_path_supported((sbf_scan_path_t)q)) {
            assert_int_equal(sbf_scan_set_path((sbf_scan_path_t)q), SBF_E_PARAM);
            continue;
        }
        assert_int_equal(sbf_scan_set_path((sbf_scan_path_t)q), SBF_OK);
        assert_int_equal(sbf_scan_path(), q);
        check_scan_path(p, s, len);
        sbf_scan_window(&sc, p, sbf_nt4_ascii, (const uint8_t *)s, len);
        assert_int_equal(sc.n_runs, ref.n_runs);
        assert_int_equal(sc.n_kmers, ref.n_kmers);
        for (uint32_t r = 0; r < ref.n_runs; ++r) {
            assert_int_equal(sc.runs[r].first, ref.runs[r].first);
            assert_int_equal(sc.runs[r].n, ref.runs[r].n);
            assert_true(sc.runs[r].minimizer == ref.runs[r].minimizer);
            for (uint32_t j = ref.runs[r].first; j < ref.runs[r].first + ref.runs[r].n + (uint32_t)(p->k - p->s); ++j)
                assert_true(sc.smer_hash[j] == ref.smer_hash[j]);
        }
        paths_run[q] = 1;
    }
    assert_int_equal(sbf_scan_set_path(chosen), SBF_OK);
}

static void test_scan_matches_naive(void **state)
{
    (void)state;
    const sbf_params_t sets[] = {
        {31, 21, 24, 2, 512}, {31, 16, 28, 4, 256}, {32, 1, 32, 1, 512}, {32, 32, 1, 7, 512},
        {21, 11, 19, 2, 512}, {5, 3, 4, 1, 512},    {1, 1, 1, 1, 512},  {31, 24, 24, 2, 512},
        /* the vector roll's longest words (29 bases) and the first it leaves to the scalar roll */
        {30, 29, 30, 2, 512}, {30, 30, 29, 2, 512},
    };
    test_seed(11);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; ++i) {
        const sbf_params_t *p = &sets[i];
        assert_int_equal(sbf_params_check(p), 0);
        for (int rep = 0; rep < 6; ++rep) {
            uint32_t len = rep == 0 ? SBF_WINDOW + (uint32_t)p->k - 1 : (uint32_t)(test_rand() % 600);
            char *s = random_dna(len);
            /* sprinkle N, IUPAC and lower case */
            for (uint32_t j = 0; j < len / 50; ++j)
                s[test_rand() % len] = "NnRYacgt"[test_rand() % 8];
            check_scan(p, s, len);
            free(s);
        }
        /* repeats (one minimizer value over long stretches), and segments around k long */
        char special[1200];
        memset(special, 'A', 600);
        for (int j = 600; j < 900; ++j)
            special[j] = "AC"[j % 2];
        special[900] = '\0';
        check_scan(p, special, 900);
        int at = 0;
        for (int seg = p->k - 2; seg <= p->k + 2 && at + seg + 1 < (int)sizeof special; ++seg) {
            for (int j = 0; j < seg; ++j)
                special[at++] = "ACGT"[test_rand() >> 62];
            special[at++] = 'N';
        }
        special[at] = '\0';
        check_scan(p, special, (uint32_t)at);
    }
    for (int q = 0; q < SBF_SCAN_PATHS; ++q) {
        assert_int_equal(paths_run[q], sbf_scan_path_supported((sbf_scan_path_t)q));
        if (paths_run[q])
            fprintf(stderr, "# scan path compared with the naive scan and the scalar path: %s\n",
                    sbf_scan_path_name((sbf_scan_path_t)q));
    }
}

static void test_shard_index_uniform(void **state)
{
    (void)state;
    /* 64 shards, 640k minimizer hashes of consecutive m-mers: chi-square with 63 degrees of
     * freedom has mean 63 and stays under 120 with probability > 0.9999. */
    enum { N = 64, DRAWS = 640000 };
    unsigned count[N] = {0};
    uint64_t expect_max = SBF_MAX_SHARDS - 3;
    for (uint64_t i = 0; i < DRAWS; ++i) {
        uint64_t sh = sbf_shard_index(sbf_hash_mmer(i), N);
        assert_true(sh < N);
        count[sh]++;
    }
    double chi = 0, e = (double)DRAWS / N;
    for (int i = 0; i < N; ++i)
        chi += (count[i] - e) * (count[i] - e) / e;
    assert_true(chi < 120.0);
    assert_true(sbf_shard_index(UINT32_MAX, expect_max) < expect_max);
}

/* The filter of a fixed sequence at fixed parameters, frozen: changing hashing or layout
 * breaks every index ever written, so it must come with a new SBF_FORMAT_VERSION and a new
 * value here. The GPU engine reproduces this checksum. */
static void test_golden_filter(void **state)
{
    (void)state;
    test_seed(2024);
    char *s = random_dna(20000);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16.0);
    sbf_index_t *idx = build_from_seqs(&o, &s, 1);
    const sbf_target_t *t = &idx->targets[0];
    uint64_t sum = sbf_xxh64(t->bits, sbf_target_bytes(idx, t), 0);
    print_message("golden filter: %llu shards, xxh64 %016llx\n", (unsigned long long)t->n_shards,
                  (unsigned long long)sum);
    assert_int_equal(t->n_shards, (19970u * 16u + 511u) / 512u);
    assert_true(sum == 0xf00db233e1afe7f6ULL);
    sbf_index_destroy(idx);
    free(s);
}

/* Queries give the same k-mer counts, hits and per-k-mer presence on every scan path (the
 * AVX-512 path also probes 512-bit shards eight s-mers at a time): reads drawn from the
 * indexed sequences, mutated, with N, of every length up to a few windows, at several
 * parameter sets (long repeats make long runs, across the probe's 64-bit words). */
static void test_query_paths_identical(void **state)
{
    (void)state;
    static const struct {
        int k, m, s, H, shard;
    } sets[] = {{31, 25, 25, 2, 512}, {31, 21, 24, 2, 512}, {25, 19, 25, 4, 512}, {31, 24, 24, 7, 512},
                {31, 25, 25, 2, 256}, {21, 11, 19, 3, 256}, {31, 25, 25, 1, 512}, {31, 25, 25, 3, 512}};
    test_seed(17);
    static sbf_scan_t sc;
    const sbf_scan_path_t chosen = sbf_scan_path();
    int wide_compared = 0;
    for (size_t x = 0; x < sizeof sets / sizeof sets[0]; ++x) {
        char *g[2] = {random_dna(30000), random_dna(30000)};
        for (int j = 0; j < 3000; ++j)   /* a repeat: one minimizer over a long stretch */
            g[1][10000 + j] = "AC"[j % 2];
        sbf_opt_t o = test_opt(sets[x].k, sets[x].m, sets[x].s, sets[x].H, 12.0);
        o.shard_bits = sets[x].shard;
        sbf_index_t *idx = build_from_seqs(&o, g, 2);
        for (int rep = 0; rep < 60; ++rep) {
            const uint64_t len = rep == 0 ? 3 * SBF_WINDOW : 1 + test_rand() % 700;
            const char *src = g[rep % 2];
            char *read = malloc(len + 1);
            assert_non_null(read);
            const uint64_t at = test_rand() % (30000 - len);
            for (uint64_t i = 0; i < len; ++i) {
                read[i] = src[at + i];
                if (test_rand() % 97 == 0)
                    read[i] = "ACGTN"[test_rand() % 5];
            }
            read[len] = '\0';
            const uint64_t row = len >= (uint64_t)sets[x].k ? len - (uint64_t)sets[x].k + 1 : 0;
            uint64_t nk[SBF_SCAN_PATHS], hits[SBF_SCAN_PATHS][1];   /* one target: both sequences */
            uint8_t *pres[SBF_SCAN_PATHS] = {NULL};
            for (int q = 0; q < SBF_SCAN_PATHS; ++q) {
                if (!sbf_scan_path_supported((sbf_scan_path_t)q))
                    continue;
                assert_int_equal(sbf_scan_set_path((sbf_scan_path_t)q), SBF_OK);
                pres[q] = malloc(row + 1);
                assert_non_null(pres[q]);
                memset(pres[q], 0xee, row + 1);   /* every byte must be written */
                sbf_query_seq(idx, &sc, sbf_nt4_ascii, (const uint8_t *)read, len, &nk[q], hits[q], pres[q]);
                assert_int_equal(pres[q][row], 0xee);   /* and none past the row */
                for (uint64_t i = 0; i < row; ++i)
                    assert_true(pres[q][i] <= 1);
                if (q) {
                    assert_int_equal(nk[q], nk[0]);
                    assert_int_equal(hits[q][0], hits[0][0]);
                    if (row)
                        assert_memory_equal(pres[q], pres[0], row);
                    wide_compared += q >= SBF_SCAN_AVX512 && sets[x].shard == 512 && hits[0][0] > 0;
                }
            }
            for (int q = 0; q < SBF_SCAN_PATHS; ++q)
                free(pres[q]);
            free(read);
        }
        sbf_index_destroy(idx);
        free(g[0]);
        free(g[1]);
    }
    assert_int_equal(sbf_scan_set_path(chosen), SBF_OK);
    if (sbf_scan_path_supported(SBF_SCAN_AVX512))
        assert_true(wide_compared > 100);   /* the AVX-512 probe ran, on reads with hits */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xxh64_vectors),
        cmocka_unit_test(test_hashes_are_format_2),
        cmocka_unit_test(test_encoding_tables),
        cmocka_unit_test(test_roll_matches_naive),
        cmocka_unit_test(test_scan_matches_naive),
        cmocka_unit_test(test_shard_index_uniform),
        cmocka_unit_test(test_golden_filter),
        cmocka_unit_test(test_query_paths_identical),
    };
    return cmocka_run_group_tests_name("kmer", tests, NULL, NULL);
}
