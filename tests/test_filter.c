/* test_filter.c -- what the filter promises: no false negatives, strand symmetry, k-mers with
 * N never inserted or counted, a false-positive rate that matches its prediction, results
 * that do not depend on thread counts or window boundaries, and reads in BAM's 4-bit packing
 * answered as the same bases in ASCII. */
#include <math.h>

#include <htslib/hts.h>

#include "testutil.h"

#include "../filters/sbf_build.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_mask.h"
#include "../filters/sbf_mem.h"
#include "../filters/sbf_scan.h"

static const sbf_opt_t *param_sets(size_t *n)
{
    static sbf_opt_t sets[6];
    sets[0] = test_opt(31, 21, 24, 2, 16);   /* near the defaults */
    sets[1] = test_opt(31, 16, 28, 4, 16);   /* cuSBF's layout */
    sets[2] = test_opt(31, 27, 22, 2, 16);
    sets[3] = test_opt(21, 11, 17, 1, 8);
    sets[4] = test_opt(32, 32, 32, 3, 16);   /* no findere, one m-mer per k-mer */
    sets[5] = test_opt(15, 7, 13, 2, 12);
    sets[5].shard_bits = 256;
    *n = sizeof sets / sizeof sets[0];
    return sets;
}

static int is_base(char c) { return strchr("ACGTacgt", c) && c; }

static int kmer_valid(const char *s, size_t i, int k)
{
    for (int j = 0; j < k; ++j)
        if (!is_base(s[i + (size_t)j]))
            return 0;
    return 1;
}

/* The k-mer counts of sbf_seqbuf_append and sbf_seqbuf_kmers (blocks of 64 codes counted at
 * once where they hold no non-base) against a count base by base: records cut anywhere, N
 * alone, in runs and at block edges, every k from 1 to 32, dense and sparse N. */
static void test_seqbuf_kmer_counts(void **state)
{
    (void)state;
    uint64_t rng = 7;
    for (int trial = 0; trial < 40; ++trial) {
        const int k = 1 + trial % 32;
        const unsigned n_rate = trial % 4 == 0 ? 2 : trial % 4 == 1 ? 50 : trial % 4 == 2 ? 400 : 100000;
        sbf_seqbuf_t b;
        sbf_seqbuf_init(&b);
        uint64_t naive = 0, naive_other = 0;
        const int other = 33 - k;   /* sbf_seqbuf_kmers for another k, as the long-read layer asks */
        for (int rec = 0; rec < 5; ++rec) {
            uint64_t len = (rng = rng * 6364136223846793005ULL + 1442695040888963407ULL) >> 54;   /* 0..1023 */
            char *s = malloc(len + 1);
            assert_non_null(s);
            unsigned run = 0, run_other = 0;
            for (uint64_t i = 0; i < len; ++i) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                s[i] = (rng >> 33) % n_rate == 0 ? 'N' : "ACGTacgt"[(rng >> 40) & 7];
                run = s[i] == 'N' ? 0 : run + 1;
                run_other = s[i] == 'N' ? 0 : run_other + 1;
                naive += run >= (unsigned)k;
                naive_other += run_other >= (unsigned)other;
            }
            assert_int_equal(sbf_seqbuf_append(&b, sbf_nt4_ascii, (const uint8_t *)s, len, k), SBF_OK);
            free(s);
        }
        assert_int_equal(b.kmers, naive);
        assert_int_equal(sbf_seqbuf_kmers(&b, k, 1), naive);
        assert_int_equal(sbf_seqbuf_kmers(&b, other, 3), naive_other);
        sbf_seqbuf_free(&b);
    }
}

/* Random bases (N at 1 in n_rate) in records of up to max_len, into b and base by base counted. */
static uint64_t random_records(sbf_seqbuf_t *b, uint64_t *rng, int records, uint64_t max_len, unsigned n_rate, int k)
{
    uint64_t naive = 0;
    for (int rec = 0; rec < records; ++rec) {
        *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
        const uint64_t len = 1 + (*rng >> 20) % max_len;   /* no empty record: sbf_seqbuf_move() keeps no separator of one */
        char *s = malloc(len + 1);
        assert_non_null(s);
        unsigned run = 0;
        for (uint64_t i = 0; i < len; ++i) {
            *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
            s[i] = (*rng >> 33) % n_rate == 0 ? 'N' : "ACGT"[(*rng >> 40) & 3];
            run = s[i] == 'N' ? 0 : run + 1;
            naive += run >= (unsigned)k;
        }
        assert_int_equal(sbf_seqbuf_append(b, sbf_nt4_ascii, (const uint8_t *)s, len, k), SBF_OK);
        free(s);
    }
    return naive;
}

/* sbf_seqbuf_kmers by chunks of 1 MiB on several threads: runs of bases across the chunks'
 * edges (N rare), a run shorter than k at an edge (N dense), and the same count on 1 and 4
 * threads as base by base. */
static void test_seqbuf_kmers_threads(void **state)
{
    (void)state;
    uint64_t rng = 11;
    const unsigned rates[] = {3, 40, 1000000};
    for (int i = 0; i < 3; ++i) {
        sbf_seqbuf_t b;
        sbf_seqbuf_init(&b);
        const int k = i == 2 ? 31 : 5 + 7 * i;
        const uint64_t naive = random_records(&b, &rng, 4, 1500000, rates[i], k);
        assert_true(b.len > 2u << 20);   /* several chunks */
        assert_int_equal(b.kmers, naive);
        assert_int_equal(sbf_seqbuf_kmers(&b, k, 1), naive);
        assert_int_equal(sbf_seqbuf_kmers(&b, k, 4), naive);
        sbf_seqbuf_free(&b);
    }
}

/* sbf_seqbuf_move: appending a buffer's records gives the bytes and counts of appending them
 * one by one, and an empty destination takes the source as it is; the copy of a large source
 * (pieces of 4 MiB on 3 threads, the last one short) gives the same bytes. */
static void test_seqbuf_move(void **state)
{
    (void)state;
    uint64_t rng_a = 5, rng_b = 5;
    sbf_seqbuf_t one, part, whole;
    sbf_seqbuf_init(&one);
    sbf_seqbuf_init(&part);
    sbf_seqbuf_init(&whole);
    uint64_t naive = random_records(&one, &rng_a, 3, 5000, 50, 21);
    naive += random_records(&one, &rng_a, 4, 6000000, 50, 21);   /* the same records, in one buffer */
    random_records(&part, &rng_b, 3, 5000, 50, 21);
    assert_int_equal(sbf_seqbuf_move(&whole, &part, 3), SBF_OK);   /* into an empty buffer */
    assert_null(part.codes);
    random_records(&part, &rng_b, 4, 6000000, 50, 21);
    assert_true(part.len > (8u << 20) && part.len % (4u << 20) != 0);
    assert_int_equal(sbf_seqbuf_move(&whole, &part, 3), SBF_OK);
    assert_int_equal(whole.len, one.len);
    assert_int_equal(whole.bases, one.bases);
    assert_int_equal(whole.kmers, naive);
    assert_int_equal(one.kmers, naive);
    assert_memory_equal(whole.codes, one.codes, one.len);
    sbf_seqbuf_free(&one);
    sbf_seqbuf_free(&whole);
}

/* The memory region of /proc/self/maps that holds p: [*start, *end), or 0 when not found. */
static int region_of(const void *p, uintptr_t *start, uintptr_t *end)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "%" SCNxPTR "-%" SCNxPTR, start, end) == 2 && *start <= (uintptr_t)p && (uintptr_t)p < *end;
    fclose(f);
    return found;
}

/* sbf_buf_reserve: a small buffer is malloc'd; past SBF_HUGE_MIN it becomes a mapping of its
 * own, a whole number of 2 MiB, one region of the address space (advice on part of it split
 * it, and glibc then copied it at every growth), and each growth keeps the contents. And
 * sbf_filter_alloc's zeros, allocated or mapped by size. */
static void test_buf_reserve(void **state)
{
    (void)state;
    uint8_t *p = NULL;
    uint64_t cap = 0, filled = 0;
    int mapped = 0;
    const uint64_t needs[] = {1000, 3u << 20, 9u << 20, 40u << 20, 41u << 20, 130u << 20};
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; ++i) {
        assert_int_equal(sbf_buf_reserve(&p, &cap, &mapped, needs[i], "a test"), SBF_OK);
        assert_true(cap >= needs[i]);
        for (uint64_t j = 0; j < filled; j += 4093)
            if (p[j] != (uint8_t)(j * 7 + 1))
                fail_msg("byte %llu lost growing to %llu bytes", (unsigned long long)j, (unsigned long long)needs[i]);
        for (uint64_t j = filled; j < needs[i]; ++j)
            p[j] = (uint8_t)(j * 7 + 1);
        filled = needs[i];
        assert_int_equal(mapped, needs[i] >= SBF_HUGE_MIN);
        if (mapped) {
            assert_int_equal(cap % (2u << 20), 0);
            uintptr_t start, end;
            if (region_of(p, &start, &end)) {
                assert_true(start <= (uintptr_t)p);
                assert_true(end >= (uintptr_t)p + cap);
            }
        }
    }
    sbf_buf_free(p, cap, mapped);
    sbf_buf_free(NULL, 0, 1);   /* nothing to free */
    /* sbf_filter_alloc's zeros, small (allocated) and large (a mapping of sbf_map_anon) */
    const uint64_t sizes[] = {100, SBF_HUGE_MIN + 4096};
    for (size_t i = 0; i < 2; ++i) {
        uint8_t *z = sbf_filter_alloc(sizes[i]);
        assert_non_null(z);
        if (i == 1)
            assert_int_equal((uintptr_t)z & 4095, 0);   /* a mapping starts a page */
        for (uint64_t j = 0; j < sizes[i]; j += 511)
            assert_int_equal(z[j], 0);
        assert_int_equal(z[sizes[i] - 1], 0);
        z[sizes[i] - 1] = 1;
        sbf_filter_free(z, sizes[i]);
    }
}

static void test_no_false_negatives(void **state)
{
    (void)state;
    size_t n_sets;
    const sbf_opt_t *sets = param_sets(&n_sets);
    test_seed(3);
    for (size_t p = 0; p < n_sets; ++p) {
        char *seqs[4];
        size_t lens[4] = {50000, 9000, 31, 5000};
        for (int i = 0; i < 4; ++i) {
            seqs[i] = random_dna(lens[i]);
            for (size_t j = 0; j < lens[i] / 300; ++j)   /* N and IUPAC runs, lower case */
                seqs[i][test_rand() % lens[i]] = "NNRYnacgt"[test_rand() % 9];
        }
        sbf_index_t *idx = build_from_seqs(&sets[p], seqs, 4);
        const int k = sets[p].k;
        for (int i = 0; i < 4; ++i) {
            uint8_t *present = malloc(lens[i]);
            assert_int_equal(sbf_query_kmers(idx, 0, seqs[i], lens[i], present), SBF_OK);
            for (size_t j = 0; j + (size_t)k <= lens[i]; ++j)
                if (kmer_valid(seqs[i], j, k) && !present[j])
                    fail_msg("set %zu: k-mer %zu of sequence %d not found", p, j, i);
            /* the reverse complement's k-mers too */
            char *rc = revcomp(seqs[i], lens[i]);
            assert_int_equal(sbf_query_kmers(idx, 0, rc, lens[i], present), SBF_OK);
            for (size_t j = 0; j + (size_t)k <= lens[i]; ++j)
                if (kmer_valid(rc, j, k) && !present[j])
                    fail_msg("set %zu: reverse-complement k-mer %zu of sequence %d not found", p, j, i);
            free(rc);
            free(present);
            free(seqs[i]);
        }
        sbf_index_destroy(idx);
    }
}

/* A read and its reverse complement: same counts, mirrored per-k-mer answers. */
static void test_strand_symmetry(void **state)
{
    (void)state;
    test_seed(5);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 2);   /* tiny filter: plenty of false positives to compare */
    char *ref = random_dna(200000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    for (int r = 0; r < 2000; ++r) {
        size_t len = 1 + test_rand() % 400;
        char *read = r % 2 ? random_dna(len) : strndup(ref + test_rand() % (200000 - 400), len);
        if (r % 7 == 0)
            read[test_rand() % len] = 'N';
        char *rc = revcomp(read, len);
        const char *seqs[2] = {read, rc};
        size_t lens[2] = {len, len};
        uint32_t kmers[2], hits[2];
        assert_int_equal(sbf_query(idx, 2, seqs, lens, kmers, hits, 1), SBF_OK);
        assert_int_equal(kmers[0], kmers[1]);
        assert_int_equal(hits[0], hits[1]);
        if (len >= 31) {
            size_t n = len - 30;
            uint8_t *a = malloc(n), *b = malloc(n);
            assert_int_equal(sbf_query_kmers(idx, 0, read, len, a), SBF_OK);
            assert_int_equal(sbf_query_kmers(idx, 0, rc, len, b), SBF_OK);
            for (size_t i = 0; i < n; ++i)
                assert_int_equal(a[i], b[n - 1 - i]);
            free(a);
            free(b);
        }
        free(read);
        free(rc);
    }
    sbf_index_destroy(idx);
    free(ref);
}

/* Measured false positives of 10^6 random 31-mers within 2x of the predicted rate, at budgets
 * small enough for false positives to be counted. */
static void test_fpr_matches_prediction(void **state)
{
    (void)state;
    const sbf_opt_t sets[] = {test_opt(31, 21, 24, 2, 4), test_opt(31, 16, 28, 4, 4), test_opt(31, 25, 22, 1, 3)};
    test_seed(9);
    char *ref = random_dna(300000);
    for (size_t p = 0; p < sizeof sets / sizeof sets[0]; ++p) {
        sbf_index_t *idx = build_from_seqs(&sets[p], &ref, 1);
        sbf_target_info_t ti;
        assert_int_equal(sbf_index_target(idx, 0, &ti), SBF_OK);
        enum { N = 1000000, K = 31 };
        char *block = random_dna((size_t)N * K);
        const char **seqs = malloc(N * sizeof *seqs);
        size_t *lens = malloc(N * sizeof *lens);
        uint32_t *kmers = malloc(N * sizeof *kmers), *hits = malloc(N * sizeof *hits);
        for (size_t i = 0; i < N; ++i) {
            seqs[i] = block + i * K;
            lens[i] = K;
        }
        assert_int_equal(sbf_query(idx, N, seqs, lens, kmers, hits, 2), SBF_OK);
        uint64_t fp = 0;
        for (size_t i = 0; i < N; ++i) {
            assert_int_equal(kmers[i], 1);
            fp += hits[i];
        }
        double measured = (double)fp / N;
        print_message("set %zu: fill %.3f predicted FPR %.3g measured %.3g (%llu of %d)\n", p, ti.fill,
                      ti.predicted_fpr, measured, (unsigned long long)fp, N);
        assert_true(fp >= 50);   /* enough events for the comparison to mean something */
        assert_true(measured <= 2 * ti.predicted_fpr && measured >= ti.predicted_fpr / 2);
        free(block);
        free(seqs);
        free(lens);
        free(kmers);
        free(hits);
        sbf_index_destroy(idx);
    }
    free(ref);
}

/* "left + N + right" is inserted; in "left + X + right" the k-mers spanning X were never
 * inserted, and at 64 bits per k-mer a false positive among them is very unlikely. */
static void test_kmers_spanning_n_not_inserted(void **state)
{
    (void)state;
    test_seed(13);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 64);
    char *left = random_dna(100), *right = random_dna(100);
    char ref[202], query[202];
    snprintf(ref, sizeof ref, "%sN%s", left, right);
    snprintf(query, sizeof query, "%sA%s", left, right);
    char *seqs[1] = {ref};
    sbf_index_t *idx = build_from_seqs(&o, seqs, 1);
    uint8_t present[201 - 30];
    assert_int_equal(sbf_query_kmers(idx, 0, query, 201, present), SBF_OK);
    int spanning_hits = 0;
    for (int i = 0; i < 201 - 30; ++i) {
        int spans = i <= 100 && i + 30 >= 100;
        if (spans)
            spanning_hits += present[i];
        else
            assert_int_equal(present[i], 1);
    }
    assert_int_equal(spanning_hits, 0);
    /* and counting skips them: 201 bases with one N hold 2 * (100 - 30) valid 31-mers */
    const char *q = ref;
    size_t len = 201;
    uint32_t kmers, hits;
    assert_int_equal(sbf_query(idx, 1, &q, &len, &kmers, &hits, 1), SBF_OK);
    assert_int_equal(kmers, 140);
    assert_int_equal(hits, 140);
    sbf_index_destroy(idx);
    free(left);
    free(right);
}

static void test_case_and_iupac(void **state)
{
    (void)state;
    test_seed(17);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    char *ref = random_dna(5000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    char *lower = strdup(ref), *iupac = strdup(ref), *uracil = strdup(ref);
    for (size_t i = 0; i < 5000; ++i) {
        lower[i] = (char)(lower[i] | 0x20);
        if (uracil[i] == 'T')
            uracil[i] = 'U';
    }
    iupac[2500] = 'R';
    const char *seqs[4] = {ref, lower, iupac, uracil};
    size_t lens[4] = {5000, 5000, 5000, 5000};
    uint32_t kmers[4], hits[4];
    assert_int_equal(sbf_query(idx, 4, seqs, lens, kmers, hits, 1), SBF_OK);
    assert_int_equal(kmers[0], 4970);
    assert_int_equal(hits[0], 4970);
    assert_int_equal(kmers[1], 4970);
    assert_int_equal(hits[1], 4970);
    assert_int_equal(kmers[2], 4970 - 31);   /* the 31 k-mers covering R are not k-mers */
    assert_int_equal(hits[2], 4970 - 31);
    assert_int_equal(kmers[3], 4970);
    assert_int_equal(hits[3], 4970);
    sbf_index_destroy(idx);
    free(ref);
    free(lower);
    free(iupac);
    free(uracil);
}

static void test_short_and_empty_reads(void **state)
{
    (void)state;
    test_seed(19);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    char *ref = random_dna(1000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    const char *seqs[4] = {ref, ref, "", "NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN"};
    size_t lens[4] = {30, 31, 0, 40};
    uint32_t kmers[4], hits[4];
    assert_int_equal(sbf_query(idx, 4, seqs, lens, kmers, hits, 1), SBF_OK);
    assert_int_equal(kmers[0], 0);
    assert_int_equal(hits[0], 0);
    assert_int_equal(kmers[1], 1);
    assert_int_equal(hits[1], 1);
    assert_int_equal(kmers[2], 0);
    assert_int_equal(kmers[3], 0);
    assert_int_equal(hits[3], 0);
    sbf_index_destroy(idx);
    free(ref);
}

/* Bits are only ORed: 1 thread and 2 threads build identical filters; long sequences cut into
 * windows and chunks lose no k-mer at the boundaries. */
static void test_threads_and_windows(void **state)
{
    (void)state;
    test_seed(23);
    size_t len = 3 * 262144 + 12345;   /* several build chunks and many scan windows */
    char *ref = random_dna(len);
    sbf_opt_t o1 = test_opt(31, 21, 24, 2, 16), o2 = o1;
    o2.threads = 2;
    sbf_index_t *a = build_from_seqs(&o1, &ref, 1), *b = build_from_seqs(&o2, &ref, 1);
    assert_int_equal(a->targets[0].n_shards, b->targets[0].n_shards);
    assert_memory_equal(a->targets[0].bits, b->targets[0].bits, sbf_target_bytes(a, &a->targets[0]));

    const char *q = ref;
    uint32_t kmers, hits;
    assert_int_equal(sbf_query(a, 1, &q, &len, &kmers, &hits, 1), SBF_OK);
    assert_int_equal(kmers, len - 30);
    assert_int_equal(hits, len - 30);

    /* many reads, one thread vs four */
    enum { N = 3000 };
    const char *seqs[N];
    size_t lens[N];
    uint32_t k1[N], h1[N], k4[N], h4[N];
    char *other = random_dna(N * 150);
    for (int i = 0; i < N; ++i) {
        seqs[i] = i % 2 ? ref + test_rand() % (len - 150) : other + (size_t)i * 150;
        lens[i] = 1 + test_rand() % 150;
    }
    assert_int_equal(sbf_query(a, N, seqs, lens, k1, h1, 1), SBF_OK);
    assert_int_equal(sbf_query(a, N, seqs, lens, k4, h4, 4), SBF_OK);
    assert_memory_equal(k1, k4, sizeof k1);
    assert_memory_equal(h1, h4, sizeof h1);
    sbf_index_destroy(a);
    sbf_index_destroy(b);
    free(ref);
    free(other);
}

/* Targets are probed with one hashing: each target finds its own k-mers, and the per-target
 * counts equal those of single-target indexes built apart. */
/* A plain one-target index of target t's shard count, built from seq: its bits must be those
 * the panel holds for t (format 3: a target of a wide panel is a plain filter of n * cols
 * shards, relocated). */
static sbf_index_t *plain_twin(const sbf_index_t *multi, int t, const char *seq)
{
    const sbf_target_t *x = &multi->targets[t];
    sbf_params_t p = multi->params;
    sbf_index_t *single = sbf_idx_new(&p);
    assert_non_null(single);
    assert_int_equal(sbf_idx_add_target(single, "one", x->n_shards), 0);
    sbf_seqbuf_t sb;
    sbf_seqbuf_init(&sb);
    assert_int_equal(sbf_seqbuf_append(&sb, sbf_nt4_ascii, (const uint8_t *)seq, strlen(seq), p.k), SBF_OK);
    assert_int_equal(sbf_build_target(single, &single->targets[0], sb.codes, sb.len, 2), SBF_OK);
    sbf_seqbuf_free(&sb);
    uint64_t *plain = malloc(sbf_target_bytes(multi, x));
    assert_non_null(plain);
    sbf_target_extract(multi, x, plain);
    assert_memory_equal(single->targets[0].bits, plain, sbf_target_bytes(single, &single->targets[0]));
    assert_true(x->fill == single->targets[0].fill && x->predicted_fpr == single->targets[0].predicted_fpr);
    free(plain);
    return single;
}

/* Read i of a panel test (150 bp, owned by the caller): every (T+1)-th random, the others
 * from genome i % (T+1) at (i * step) modulo its length, with 4 variants (absent k-mers in a
 * present read). */
static char *panel_read(char *const *g, const size_t *sizes, int T, int i, size_t step)
{
    const int t = i % (T + 1);
    if (t == T)
        return random_dna(150);
    char *r = malloc(151);
    assert_non_null(r);
    memcpy(r, g[t] + (size_t)i * step % (sizes[t] - 150), 150);
    r[150] = 0;
    for (int v = 0; v < 4; ++v)
        r[(i * 13 + v * 41) % 150] = "ACGT"[(i + v) & 3];
    return r;
}

/* Targets of about the same size in one wide panel, overloaded (2 bits per k-mer) so that
 * random k-mers often test present: every target's answers, read through the panel's columns,
 * equal those of its plain twin, on random reads and on reads of each target with variants. */
static void test_panel_like_plain(void **state)
{
    (void)state;
    test_seed(41);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 2);
    enum { T = 9, N = 400 };
    const size_t sizes[T] = {20000, 21000, 19000, 20500, 40000, 39000, 20000, 60000, 19500};
    char *g[T];
    for (int t = 0; t < T; ++t)
        g[t] = random_dna(sizes[t]);
    sbf_index_t *multi = build_targets(&o, g, T);
    int wide = 0, split = 0;
    for (int q = 0; q < multi->n_panels; ++q)
        wide += multi->panels[q].log2_width > 0;
    for (int t = 0; t < T; ++t)
        split += multi->targets[t].cols > 1;
    assert_true(wide >= 1 && split >= 1);   /* both kinds of column are exercised */
    char *reads[N];
    const char *seqs[N];
    size_t lens[N];
    for (int i = 0; i < N; ++i) {
        reads[i] = panel_read(g, sizes, T, i, 37);
        seqs[i] = reads[i];
        lens[i] = 150;
    }
    uint32_t *kmers = malloc(N * sizeof *kmers), *hits = malloc(N * T * sizeof *hits);
    uint32_t *k1 = malloc(N * sizeof *k1), *h1 = malloc(N * sizeof *h1);
    assert_int_equal(sbf_query(multi, N, seqs, lens, kmers, hits, 1), SBF_OK);
    assert_null(multi->plain);   /* a few reads: read through the panels, no copy made */
    uint64_t positive = 0, absent = 0;
    sbf_scan_t *sc = malloc(sizeof *sc);
    assert_non_null(sc);
    for (int t = 0; t < T; ++t) {
        sbf_index_t *single = plain_twin(multi, t, g[t]);
        assert_int_equal(sbf_query(single, N, seqs, lens, k1, h1, 1), SBF_OK);
        /* per-k-mer presence rows too (sbf query's per-k-mer output) */
        for (int i = 0; i < N; i += 7) {
            uint64_t nk_multi, nk_single, hm[T], hs[1];
            uint8_t pm[T * 150], ps[150];
            sbf_query_seq(multi, sc, sbf_nt4_ascii, (const uint8_t *)seqs[i], 150, &nk_multi, hm, pm);
            sbf_query_seq(single, sc, sbf_nt4_ascii, (const uint8_t *)seqs[i], 150, &nk_single, hs, ps);
            assert_memory_equal(pm + t * (150 - 31 + 1), ps, 150 - 31 + 1);
        }
        for (int i = 0; i < N; ++i) {
            assert_int_equal(kmers[i], k1[i]);
            if (hits[(size_t)i * T + t] != h1[i])
                fail_msg("target %d, read %d: %u hits through the panel, %u in the plain filter", t, i,
                         hits[(size_t)i * T + t], h1[i]);
            positive += h1[i];
            absent += k1[i] - h1[i];
        }
        sbf_index_destroy(single);
    }
    assert_true(positive > 0 && absent > 0);   /* both answers occur */
    free(sc);
    for (int i = 0; i < N; ++i)
        free(reads[i]);
    for (int t = 0; t < T; ++t)
        free(g[t]);
    free(kmers);
    free(hits);
    free(k1);
    free(h1);
    sbf_index_destroy(multi);
}

/* One parameter set of test_early_out_like_kmer_by_kmer, on the scan path set now. */
static void early_out_set(const sbf_opt_t *set, size_t p, const char *path)
{
    enum { G = 30000, N = 300 };
    sbf_opt_t o = *set;
    o.bits_per_kmer = 4;
    char *g = random_dna(G);
    sbf_index_t *idx = build_from_seqs(&o, &g, 1);
    const int k = o.k, extra = o.k - o.s;
    uint64_t present_kmers = 0, absent_kmers = 0, reads_without = 0;
    for (int i = 0; i < N; ++i) {
        size_t len = i < 3 * extra + 4 ? (size_t)(k + i) : (size_t)(k + test_rand() % 400);
        char *r = random_dna(len);
        /* a piece of the target exactly k long (or longer) at the start, end or middle */
        size_t piece = (size_t)k + (i % 3 == 0 ? 0 : test_rand() % 8);
        if (piece > len)
            piece = len;
        size_t at = i % 4 == 0 ? 0 : i % 4 == 1 ? len - piece : i % 4 == 2 ? test_rand() % (len - piece + 1) : len;
        if (at != len)
            memcpy(r + at, g + test_rand() % (G - piece), piece);
        uint8_t *row = malloc(len), one;
        assert_int_equal(sbf_query_kmers(idx, 0, r, len, row), SBF_OK);
        uint32_t expect = 0;
        for (size_t j = 0; j + (size_t)k <= len; ++j) {
            assert_int_equal(sbf_query_kmers(idx, 0, r + j, (size_t)k, &one), SBF_OK);
            if (row[j] != one)
                fail_msg("%s path, set %zu, read %d (%zu bp): k-mer %zu is %d in the read, %d alone", path, p, i, len, j, row[j], one);
            expect += one;
        }
        const char *seq = r;
        uint32_t kmers, hits;
        assert_int_equal(sbf_query(idx, 1, &seq, &len, &kmers, &hits, 1), SBF_OK);
        assert_int_equal(kmers, len - (size_t)k + 1);
        assert_int_equal(hits, expect);
        present_kmers += expect;
        absent_kmers += kmers - expect;
        reads_without += expect == 0;
        free(row);
        free(r);
    }
    /* both answers occur, and whole reads without a present k-mer (the early out's case) */
    if (!(present_kmers > 0 && absent_kmers > 0 && reads_without > 0))
        fail_msg("set %zu: %lu present, %lu absent k-mers, %lu reads without", p, (unsigned long)present_kmers, (unsigned long)absent_kmers, (unsigned long)reads_without);
    sbf_index_destroy(idx);
    free(g);
}

/* A run's early out (filters/sbf_index.c, run_absent: one s-mer tested in every k-s+1 decides
 * that none of the run's k-mers is present) against each k-mer asked alone: a filter filled
 * far past the defaults (4 bits per k-mer, so random s-mers often test present and runs are
 * decided either way), reads of random bases with pieces of the target at the first k-mer,
 * the last, the middle and nowhere, every length from k to k+3(k-s)+3 and longer ones, each
 * parameter set's k-s, on every scan path this CPU runs (the AVX-512 path probes with its own
 * code after the early out). The per-k-mer rows and sbf_query's counts must both agree. */
static void test_early_out_like_kmer_by_kmer(void **state)
{
    (void)state;
    size_t n_sets;
    const sbf_opt_t *sets = param_sets(&n_sets);
    const sbf_scan_path_t chosen = sbf_scan_path();
    for (int path = 0; path < SBF_SCAN_PATHS; ++path) {   /* each probe after the early out */
        if (!sbf_scan_path_supported((sbf_scan_path_t)path))
            continue;
        assert_int_equal(sbf_scan_set_path((sbf_scan_path_t)path), SBF_OK);
        test_seed(43);
        for (size_t p = 0; p < n_sets; ++p)
            early_out_set(&sets[p], p, sbf_scan_path_name((sbf_scan_path_t)path));
    }
    assert_int_equal(sbf_scan_set_path(chosen), SBF_OK);
}

/* sbf_build_target on several threads (blocks of records queued per range of shards, no atomic
 * OR) against one thread (straight into the filter): the same bytes, fill, FPR and clump for a
 * sequence of 25 chunks of k-mers, 256- and 512-bit shards, 2, 3 and 8 threads, and 8 threads
 * that may queue one block only (each ORs the queued blocks before it scans on, or waits). */
static void test_build_threads(void **state)
{
    (void)state;
    test_seed(47);
    char *g = random_dna(1600000);
    sbf_seqbuf_t sb;
    sbf_seqbuf_init(&sb);
    assert_int_equal(sbf_seqbuf_append(&sb, sbf_nt4_ascii, (const uint8_t *)g, 1600000, 31), SBF_OK);
    for (int shard_bits = 256; shard_bits <= 512; shard_bits *= 2) {
        sbf_params_t p = {31, 25, 25, 2, shard_bits};
        const uint64_t shards = sbf_shards_for(&p, sb.kmers, 16.0);
        sbf_index_t *one = sbf_idx_new(&p);
        assert_non_null(one);
        assert_int_equal(sbf_idx_add_target(one, "one", shards), 0);
        assert_int_equal(sbf_build_target(one, &one->targets[0], sb.codes, sb.len, 1), SBF_OK);
        const int counts[] = {2, 3, 8, 8};
        for (int i = 0; i < 4; ++i) {
            sbf_index_t *many = sbf_idx_new(&p);
            assert_non_null(many);
            assert_int_equal(sbf_idx_add_target(many, "many", shards), 0);
            sbf_build_queue_cap = i == 3 ? 1 : 0;
            assert_int_equal(sbf_build_target(many, &many->targets[0], sb.codes, sb.len, counts[i]), SBF_OK);
            sbf_build_queue_cap = 0;
            assert_memory_equal(many->targets[0].bits, one->targets[0].bits, sbf_target_bytes(one, &one->targets[0]));
            assert_true(many->targets[0].fill == one->targets[0].fill && many->targets[0].fill > 0.1);
            assert_true(many->targets[0].predicted_fpr == one->targets[0].predicted_fpr);
            assert_true(many->targets[0].clump == one->targets[0].clump);
            sbf_idx_free(many);
        }
        sbf_idx_free(one);
    }
    sbf_seqbuf_free(&sb);
    free(g);
}

/* Every copied target's plain copy equals sbf_target_extract() of it; the others have none. */
static void check_copies(const sbf_index_t *multi)
{
    assert_non_null(multi->plain);
    for (int t = 0; t < multi->n_targets; ++t) {
        const sbf_target_t *x = &multi->targets[t];
        if (!sbf_panel_copied(multi, &multi->panels[x->panel])) {
            assert_null(multi->plain[t]);
            continue;
        }
        uint64_t *plain = malloc(sbf_target_bytes(multi, x));
        assert_non_null(plain);
        sbf_target_extract(multi, x, plain);
        assert_memory_equal(multi->plain[t], plain, sbf_target_bytes(multi, x));
        free(plain);
    }
}

/* The CPU engine's plain copies of the targets of a wide panel of few members
 * (sbf_idx_plain_copies): each equals sbf_target_extract()'s plain layout, and queries through
 * them give the panel probe's k-mer counts, hits and per-k-mer presence, made on 1 or 3
 * threads. */
static void test_plain_copies(void **state)
{
    (void)state;
    test_seed(43);
    enum { T = 3, N = 300 };
    /* a host and a microbe 13 times smaller (chr20 and E. coli: 12 + 1 of 16 columns), and a
     * target of its own */
    const size_t sizes[T] = {260000, 20000, 3000};
    char *g[T];
    for (int t = 0; t < T; ++t)
        g[t] = random_dna(sizes[t]);
    sbf_scan_t *sc = malloc(sizeof *sc);
    assert_non_null(sc);
    for (int threads = 1; threads <= 3; threads += 2) {
        sbf_opt_t o = test_opt(31, 25, 25, 2, 2);
        sbf_index_t *multi = build_targets(&o, g, T);
        int copied = 0;
        for (int q = 0; q < multi->n_panels; ++q)
            copied += sbf_panel_copied(multi, &multi->panels[q]);
        assert_true(copied >= 1);
        assert_null(multi->plain);
        uint64_t nk_panel[N], h_panel[N][T];
        static uint8_t p_panel[N][T * (150 - 31 + 1)];
        char *reads[N];
        for (int i = 0; i < N; ++i) {
            reads[i] = panel_read(g, sizes, T, i, 53);
            sbf_query_seq(multi, sc, sbf_nt4_ascii, (const uint8_t *)reads[i], 150, &nk_panel[i], h_panel[i], p_panel[i]);
        }
        assert_int_equal(sbf_idx_plain_copies(multi, threads), SBF_OK);
        check_copies(multi);
        uint64_t positive = 0;
        for (int i = 0; i < N; ++i) {
            uint64_t nk, h[T];
            static uint8_t pr[T * (150 - 31 + 1)];
            sbf_query_seq(multi, sc, sbf_nt4_ascii, (const uint8_t *)reads[i], 150, &nk, h, pr);
            assert_int_equal(nk, nk_panel[i]);
            assert_memory_equal(h, h_panel[i], sizeof h);
            assert_memory_equal(pr, p_panel[i], sizeof pr);
            for (int t = 0; t < T; ++t)
                positive += h[t];
            free(reads[i]);
        }
        assert_true(positive > 0);
        sbf_index_destroy(multi);
    }
    free(sc);
    for (int t = 0; t < T; ++t)
        free(g[t]);
}

/* Plain targets (own panels, or the plain copies of wide ones) as the query meets them: up to 4,
 * a short read's window goes through every target in one pass over its runs; more targets, a
 * window of more than 256 runs, or presence rows, through a pass per target whose shards are kept
 * from the prefetch pass for the first 4 (filters/sbf_index.c, query_scanned). Every target's
 * k-mer hits (with and without presence rows) and its presence row equal those of its plain twin
 * queried alone, with 6, 3 and 1 targets, for short reads and long ones (over 256 runs), with H =
 * 1, 2 and 3 (the AVX-512 probe's instances where the CPU has it). */
static void test_many_plain_targets(void **state)
{
    (void)state;
    test_seed(47);
    enum { T = 6, N = 60 };
    const size_t sizes[T] = {400000, 40000, 4000, 120000, 12000, 1500};
    char *g[T];
    for (int t = 0; t < T; ++t)
        g[t] = random_dna(sizes[t]);
    sbf_scan_t *sc = malloc(sizeof *sc);
    assert_non_null(sc);
    static uint8_t pm[T * 3000], ps[3000];
    static const int counts[] = {T, 3, 1};
    for (int H = 1; H <= 3; ++H)
        for (int c = 0; c < 3; ++c) {
            const int Tn = counts[c];
            sbf_opt_t o = test_opt(31, 25, 25, H, 12);
            sbf_index_t *multi = build_targets(&o, g, Tn);
            /* every target queried as a plain filter: its own panel's, or a wide panel's copy */
            assert_int_equal(sbf_idx_plain_copies(multi, 1), SBF_OK);
            int plain = 0;
            for (int t = 0; t < Tn; ++t) {
                const sbf_panel_t *pn = &multi->panels[multi->targets[t].panel];
                plain += pn->log2_width == 0 || (multi->plain && multi->plain[t]);
            }
            assert_int_equal(plain, Tn);
            uint64_t positive = 0, long_runs = 0;
            for (int t = 0; t < Tn; ++t) {
                sbf_index_t *single = plain_twin(multi, t, g[t]);
                for (int i = 0; i < N; ++i) {
                    const int src = i % (Tn + 1);   /* every target's reads, and random ones */
                    const size_t len = i % 3 == 0 ? 1500 + (size_t)test_rand() % 1400 : 150;
                    char *r = src == Tn || sizes[src] <= len ? random_dna(len) : malloc(len + 1);
                    assert_non_null(r);
                    if (src < Tn && sizes[src] > len) {
                        memcpy(r, g[src] + (size_t)test_rand() % (sizes[src] - len), len);
                        r[len] = 0;
                        r[len / 2] = "ACGT"[i & 3];   /* a variant */
                    }
                    const size_t row = len - 31 + 1;
                    uint64_t nk_m, nk_n, nk_s, hm[T], hn[T], hs[1];
                    sbf_query_seq(multi, sc, sbf_nt4_ascii, (const uint8_t *)r, len, &nk_m, hm, pm);
                    long_runs += sc->n_runs > 256;
                    sbf_query_seq(multi, sc, sbf_nt4_ascii, (const uint8_t *)r, len, &nk_n, hn, NULL);
                    sbf_query_seq(single, sc, sbf_nt4_ascii, (const uint8_t *)r, len, &nk_s, hs, ps);
                    assert_int_equal(nk_m, nk_s);
                    assert_int_equal(nk_n, nk_s);
                    if (hm[t] != hs[0] || hn[t] != hs[0])
                        fail_msg("H=%d, target %d of %d, read %d (%zu bases): %llu and %llu hits among the targets "
                                 "(with and without presence rows), %llu alone", H, t, Tn, i, len,
                                 (unsigned long long)hm[t], (unsigned long long)hn[t], (unsigned long long)hs[0]);
                    assert_memory_equal(pm + (size_t)t * row, ps, row);
                    positive += hs[0];
                    free(r);
                }
                sbf_index_destroy(single);
            }
            assert_true(positive > 0);
            assert_true(long_runs > 0);   /* windows of more runs than the query keeps */
            sbf_index_destroy(multi);
        }
    free(sc);
    for (int t = 0; t < T; ++t)
        free(g[t]);
}

/* A target's bits as sbf_panel_put writes them (the build's transposes, on 1 or 3 threads) are
 * where the bit-by-bit layout (sbf_target_extract, the reference) reads them: every panel width
 * (2 to 64 columns), 256- and 512-bit shards, targets of 1 to 5 columns at odd offsets, two
 * targets put into one panel, a row count that is no multiple of a thread's chunk, and random
 * bits at several densities. The columns of no target stay zero. */
static void test_panel_put_widths(void **state)
{
    (void)state;
    test_seed(53);
    for (int shard_bits = 256; shard_bits <= 512; shard_bits *= 2)
        for (unsigned lw = 1; lw <= 6; ++lw)
            for (int threads = 1; threads <= 3; threads += 2) {
                const sbf_params_t p = {31, 25, 25, 2, shard_bits};
                const unsigned W = 1u << lw, cols_a = W == 2 ? 1 : 1 + (unsigned)test_rand() % (W / 2 < 5 ? W / 2 : 5),
                               cols_b = W - cols_a > 1 ? 1 + (unsigned)test_rand() % (W - cols_a - 1) : 1;
                const unsigned col0_a = W == 2 ? 0 : (unsigned)test_rand() % (W - cols_a - cols_b + 1);
                const unsigned col0_b = col0_a + cols_a;   /* B right after A; the rest is empty */
                const uint64_t rows = 4096 + 1000 + (uint64_t)(test_rand() % 100);
                sbf_index_t *idx = sbf_idx_new(&p);
                assert_non_null(idx);
                const int q = sbf_idx_add_panel(idx, rows, lw);
                assert_true(q >= 0);
                const int a = sbf_idx_add_panel_target(idx, "a", q, col0_a, cols_a);
                const int b = sbf_idx_add_panel_target(idx, "b", q, col0_b, cols_b);
                assert_true(a == 0 && b == 1);
                uint64_t *want[2] = {NULL, NULL}, *got = NULL;
                for (int r = 0; r < idx->n_targets; ++r) {
                    const sbf_target_t *t = &idx->targets[r];
                    const size_t bytes = sbf_target_bytes(idx, t), n = bytes / 8;
                    assert_non_null(want[r] = malloc(bytes));
                    const unsigned density = 1 + (unsigned)r * 2;   /* about 1/2 and 1/4 ones */
                    for (size_t i = 0; i < n; ++i) {
                        uint64_t x = ~0ULL;
                        for (unsigned d = 0; d < density; d += 2)
                            x &= ((uint64_t)test_rand() << 32) ^ test_rand() ^ ((uint64_t)test_rand() << 17);
                        want[r][i] = x;
                    }
                    sbf_panel_put(idx, t, want[r], threads);
                }
                for (int r = 0; r < idx->n_targets; ++r) {
                    const sbf_target_t *t = &idx->targets[r];
                    const size_t bytes = sbf_target_bytes(idx, t);
                    assert_non_null(got = realloc(got, bytes));
                    sbf_target_extract(idx, t, got);
                    if (memcmp(got, want[r], bytes) != 0)
                        fail_msg("%d-bit shards, %u columns, target %d (columns %u..%u), %d thread(s): put and extract differ",
                                 shard_bits, W, r, t->col0, t->col0 + t->cols - 1, threads);
                }
                /* every set bit of the panel belongs to a target's columns */
                const sbf_panel_t *pn = &idx->panels[q];
                const uint64_t positions = rows * (uint64_t)shard_bits;
                const unsigned last = col0_b + cols_b;
                for (uint64_t pos = 0; pos < positions; pos += 7)
                    for (unsigned c = 0; c < W; ++c)
                        if (c < col0_a || c >= last) {
                            const uint64_t at = (pos << lw) + c;
                            assert_int_equal(pn->bits[at >> 6] >> (at & 63) & 1, 0);
                        }
                free(want[0]);
                free(want[1]);
                free(got);
                sbf_idx_free(idx);
            }
}

/* The copies of panels of many members and several widths (the transposes that fill a copy
 * pack 64 / W positions per row: each width packs differently): equal to sbf_target_extract(). */
static void test_plain_copies_widths(void **state)
{
    (void)state;
    test_seed(47);
    enum { T = 40 };
    size_t sizes[T];
    char *g[T];
    for (int t = 0; t < T; ++t)
        g[t] = random_dna(sizes[t] = 3000 + (size_t)(t % 5) * 4000 + (size_t)(t / 20) * 1500);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 16);
    sbf_index_t *multi = build_targets(&o, g, T);
    unsigned widths = 0;   /* bit lw: a copied panel of 2^lw columns */
    for (int q = 0; q < multi->n_panels; ++q)
        if (sbf_panel_copied(multi, &multi->panels[q]))
            widths |= 1u << multi->panels[q].log2_width;
    print_message("plain copies: panels of widths (bit log2) %#x\n", widths);
    assert_true(__builtin_popcount(widths) >= 2);
    assert_int_equal(sbf_idx_plain_copies(multi, 2), SBF_OK);
    check_copies(multi);
    sbf_index_destroy(multi);
    for (int t = 0; t < T; ++t)
        free(g[t]);
}

static void test_multi_target(void **state)
{
    (void)state;
    test_seed(29);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    char *g[3] = {random_dna(40000), random_dna(7000), random_dna(500)};
    sbf_builder_t *b;
    sbf_index_t *multi;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    for (int t = 0; t < 3; ++t) {
        char name[8];
        snprintf(name, sizeof name, "g%d", t);
        assert_int_equal(sbf_builder_add_target(b, name), t);
        assert_int_equal(sbf_builder_add_seq(b, t, g[t], strlen(g[t])), SBF_OK);
    }
    assert_int_equal(sbf_builder_finish(b, &multi), SBF_OK);
    assert_int_equal(sbf_index_n_targets(multi), 3);
    /* targets of different sizes */
    assert_true(multi->targets[0].n_shards > multi->targets[1].n_shards);

    const char *seqs[3] = {g[0] + 100, g[1] + 100, g[2] + 100};
    size_t lens[3] = {300, 300, 300};
    uint32_t kmers[3], hits[9];
    assert_int_equal(sbf_query(multi, 3, seqs, lens, kmers, hits, 1), SBF_OK);
    for (int r = 0; r < 3; ++r)
        for (int t = 0; t < 3; ++t) {
            if (r == t)
                assert_int_equal(hits[r * 3 + t], kmers[r]);
            else
                assert_true(hits[r * 3 + t] <= 2);
        }
    /* g0 and g1 share a wide panel (g0 in several columns), g2 is too small for it (the rule of
     * sbf_panel.c); every target holds the bits of a plain filter of its own shard count */
    assert_int_equal(multi->n_panels, 2);
    assert_int_equal(multi->targets[0].panel, multi->targets[1].panel);
    assert_true(multi->panels[multi->targets[0].panel].log2_width > 0 && multi->targets[0].cols > 1);
    assert_int_equal(multi->panels[multi->targets[2].panel].log2_width, 0);
    for (int t = 0; t < 3; ++t) {
        sbf_index_destroy(plain_twin(multi, t, g[t]));
        free(g[t]);
    }
    sbf_index_destroy(multi);
}

/* ASCII to BAM's packing with htslib's table (what bam_get_seq holds): two 4-bit codes per byte,
 * the first in the high nibble; an odd read's unused low half gets `pad` (BAM writes 0; the
 * engine must not read it). */
static void pack_nt16(const char *s, size_t len, uint8_t *out, unsigned pad)
{
    for (size_t i = 0; i < len; i += 2) {
        unsigned hi = seq_nt16_table[(unsigned char)s[i]];
        unsigned lo = i + 1 < len ? seq_nt16_table[(unsigned char)s[i + 1]] : pad;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
}

/* A series of reads through sbf_query_ahead() and sbf_query_behind() as the CPU engine runs them
 * (each read scanned while the one before waits, its shards asked for during that one's tests)
 * gives sbf_query_seq()'s answers, in ASCII and BAM's packing: reads shorter than k, of 150
 * and 400-800 bases, of 1-3 kbp and of more than one window (answered whole), with N; indexes the one pass
 * takes (1 and 3 targets, plain copies of a panel) and those it does not (6 targets, a panel
 * probed as a panel, 256-bit shards, H = 4), so that every way through sbf_query_behind() runs. */
static void test_query_ahead_like_seq(void **state)
{
    (void)state;
    test_seed(59);
    enum { T = 6, N = 40 };
    const size_t sizes[T] = {300000, 30000, 3000, 90000, 9000, 1200};
    char *g[T];
    for (int t = 0; t < T; ++t)
        g[t] = random_dna(sizes[t]);
    sbf_ahead_t *ah = malloc(2 * sizeof *ah);
    sbf_scan_t *sc = malloc(sizeof *sc);
    assert_non_null(ah);
    assert_non_null(sc);
    static const struct { int targets, H, shard_bits, copies; } sets[] = {
        {3, 2, 512, 1}, {1, 2, 512, 1}, {3, 3, 512, 1}, {T, 2, 512, 1}, {3, 2, 512, 0}, {3, 2, 256, 1}, {2, 4, 512, 1},
    };
    char *reads[N];
    uint8_t *packed[N];
    size_t lens[N];
    for (int i = 0; i < N; ++i) {
        const int src = i % (T + 1);
        lens[i] = i % 9 == 4   ? 20
                  : i % 9 == 7 ? 4200 + (size_t)test_rand() % 3000
                  : i % 3 == 0 ? 1000 + (size_t)test_rand() % 2000
                  : i % 4 == 2 ? 400 + (size_t)test_rand() % 400   /* more runs than a 150-base read */
                               : 150;
        reads[i] = random_dna(lens[i]);
        if (src < T && sizes[src] > lens[i])
            memcpy(reads[i], g[src] + (size_t)test_rand() % (sizes[src] - lens[i]), lens[i]);
        if (i % 5 == 1)
            reads[i][lens[i] / 3] = 'N';
        packed[i] = malloc(lens[i] / 2 + 1);
        assert_non_null(packed[i]);
        pack_nt16(reads[i], lens[i], packed[i], 0);
    }
    uint64_t positive = 0;
    for (size_t x = 0; x < sizeof sets / sizeof sets[0]; ++x) {
        sbf_opt_t o = test_opt(31, 25, 25, sets[x].H, 12);
        o.shard_bits = sets[x].shard_bits;
        sbf_index_t *idx = build_targets(&o, g, sets[x].targets);
        if (sets[x].copies)
            assert_int_equal(sbf_idx_plain_copies(idx, 1), SBF_OK);
        for (int form = 0; form < 2; ++form) {
            for (int i = 0; i < N; ++i) {   /* the engine's order: read i + 1 ahead, then read i behind */
                if (i == 0) {
                    if (form)
                        sbf_query_ahead_nt16(idx, &ah[0], packed[0], lens[0], 1);
                    else
                        sbf_query_ahead(idx, &ah[0], sbf_nt4_ascii, (const uint8_t *)reads[0], lens[0], 1);
                }
                sbf_ahead_t *cur = &ah[i & 1], *next = i + 1 < N ? &ah[(i + 1) & 1] : NULL;
                if (next && form)
                    sbf_query_ahead_nt16(idx, next, packed[i + 1], lens[i + 1], 0);
                else if (next)
                    sbf_query_ahead(idx, next, sbf_nt4_ascii, (const uint8_t *)reads[i + 1], lens[i + 1], 0);
                uint64_t nk_a = 99, nk_s, ha[T], hs[T];
                for (int t = 0; t < T; ++t)
                    ha[t] = 99;
                sbf_query_behind(idx, cur, next, &nk_a, ha);
                sbf_query_seq(idx, sc, sbf_nt4_ascii, (const uint8_t *)reads[i], lens[i], &nk_s, hs, NULL);
                assert_int_equal(nk_a, nk_s);
                for (int t = 0; t < sets[x].targets; ++t) {
                    if (ha[t] != hs[t])
                        fail_msg("set %zu (%s), read %d (%zu bases), target %d: %llu hits one read ahead, %llu alone", x,
                                 form ? "packed" : "ASCII", i, lens[i], t, (unsigned long long)ha[t],
                                 (unsigned long long)hs[t]);
                    positive += hs[t];
                }
            }
        }
        sbf_index_destroy(idx);
    }
    assert_true(positive > 0);
    for (int i = 0; i < N; ++i) {
        free(reads[i]);
        free(packed[i]);
    }
    for (int t = 0; t < T; ++t)
        free(g[t]);
    free(ah);
    free(sc);
}

/* sbf_query_nt16() on the CPU engine equals sbf_query() on the same bases in ASCII: reads of
 * 0-300 bases and a few of 9-20 kbp (several scan windows), from the reference, reverse
 * complemented or random, with N, IUPAC codes and lower case; 1 and 3 threads; 2 targets;
 * small filters, so that false positives must agree too. The code tables agree first. */
/* sbf_mask_apply's records (without a mask: DUST alone) against the plain definition, position
 * by position: each chunk of SBF_MASK_CHUNK k-mer starts, each maximal stretch of valid k-mers
 * whose sbf_kmer_dust() is below min, its bases and a separator. The sequence spans three chunks
 * and holds N at a chunk's edge, at words' edges, runs of them, and low-complexity stretches;
 * the same bytes on 1 and 3 threads. */
static void naive_records(const uint8_t *codes, uint64_t len, unsigned k, unsigned min, uint8_t **out, uint64_t *bytes,
                          uint64_t *kept, uint64_t *dropped)
{
    const uint64_t positions = len - k + 1;
    *out = malloc(len * 2 + 16);
    assert_non_null(*out);
    *bytes = *kept = *dropped = 0;
    for (uint64_t c0 = 0; c0 < positions; c0 += SBF_MASK_CHUNK) {
        const uint64_t end = c0 + SBF_MASK_CHUNK < positions ? c0 + SBF_MASK_CHUNK : positions;
        uint64_t run = 0, first = 0;
        for (uint64_t q = c0; q <= end; ++q) {
            int keep = 0;
            if (q < end) {
                int valid = 1;
                for (unsigned j = 0; j < k; ++j)
                    valid &= codes[q + j] < 4;
                const int held = sbf_kmer_dust(codes + q, k) >= min;
                *dropped += valid && held;
                keep = valid && !held;
            }
            if (keep) {
                if (run++ == 0)
                    first = q;
                continue;
            }
            if (run) {
                memcpy(*out + *bytes, codes + first, run + k - 1);
                (*out)[*bytes + run + k - 1] = 4;
                *bytes += run + k;
                *kept += run;
                run = 0;
            }
        }
    }
}

static void test_mask_records(void **state)
{
    (void)state;
    const uint64_t len = 3 * (uint64_t)SBF_MASK_CHUNK - 1000;
    uint8_t *codes = malloc(len);
    assert_non_null(codes);
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < len; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        codes[i] = (uint8_t)(x & 3);
    }
    /* low complexity: poly-A, a dinucleotide repeat, an A-rich stretch with changes */
    for (uint64_t i = 5000; i < 5400; ++i)
        codes[i] = 0;
    for (uint64_t i = 700000; i < 700300; ++i)
        codes[i] = (uint8_t)(i & 1 ? 2 : 1);
    for (uint64_t i = SBF_MASK_CHUNK - 40; i < SBF_MASK_CHUNK + 60; ++i)
        codes[i] = i % 9 ? 0 : 3;
    /* N: single, at word and chunk edges, a run, near the end */
    const uint64_t n_at[] = {0, 63, 64, 127, 1000, 1001, SBF_MASK_CHUNK - 1, SBF_MASK_CHUNK, 2 * SBF_MASK_CHUNK + 5,
                             len - 3, len - 40};
    for (size_t i = 0; i < sizeof n_at / sizeof n_at[0]; ++i)
        codes[n_at[i]] = 4;
    for (uint64_t i = 1500000; i < 1500200; ++i)
        codes[i] = 4;
    const unsigned ks[] = {31, 21, 32, 5}, mins[] = {50, 14, 1, 3};
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; ++t) {
        uint8_t *want;
        uint64_t bytes, kept, dropped;
        naive_records(codes, len, ks[t], mins[t], &want, &bytes, &kept, &dropped);
        assert_true(dropped > 0 && kept > 0);
        sbf_seqbuf_t in = {0}, got[2];
        in.codes = codes;
        in.len = len;
        for (int th = 0; th < 2; ++th) {
            uint64_t left_out = 0;
            sbf_seqbuf_init(&got[th]);
            assert_int_equal(sbf_mask_apply(NULL, (int)ks[t], mins[t], &in, th ? 3 : 1, &got[th], &left_out), SBF_OK);
            assert_int_equal(left_out, dropped);
            assert_int_equal(got[th].kmers, kept);
            assert_int_equal(got[th].len, bytes - 1);   /* no separator after the last record */
            assert_memory_equal(got[th].codes, want, bytes - 1);
        }
        sbf_seqbuf_free(&got[0]);
        sbf_seqbuf_free(&got[1]);
        free(want);
    }
    free(codes);
}

/* Masks (sbf_build --mask, the layer's adapters): a small one (an exact set: up to 4,096 k-mers
 * behind a bitmap sieve, then a plain table) leaves out exactly the target's k-mers it holds,
 * on either strand; a large one (a filter, more than
 * SBF_MASK_EXACT_MAX k-mers) leaves out at least those, and keeps the others but for its rare
 * false positives. The target: random sequence with stretches of the mask's, some reversed. */
static void fill_random(uint8_t *c, uint64_t n, uint64_t *x)
{
    for (uint64_t i = 0; i < n; ++i) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        c[i] = (uint8_t)(*x & 3);
    }
}

/* A random mask sequence and a random target (2-bit codes), the caller plants stretches. */
static void random_mask_and_target(uint64_t mask_len, uint64_t t_len, uint64_t *x, uint8_t **m, uint8_t **t)
{
    *m = malloc(mask_len);
    *t = malloc(t_len);
    assert_non_null(*m);
    assert_non_null(*t);
    fill_random(*m, mask_len, x);
    fill_random(*t, t_len, x);
}

static int by_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted canonical k-mers of codes[0..len) (every window valid here) */
static uint64_t *canonical_kmers(const uint8_t *codes, uint64_t len, int k, uint64_t *n)
{
    uint64_t *v = malloc((len - (uint64_t)k + 1) * sizeof *v);
    assert_non_null(v);
    const uint64_t kmask = sbf_mask((unsigned)k);
    sbf_roll_t r = {0, 0};
    for (uint64_t j = 0; j < len; ++j) {
        sbf_roll_push(&r, codes[j], kmask, 2u * ((unsigned)k - 1));
        if (j + 1 >= (uint64_t)k)
            v[j + 1 - (uint64_t)k] = sbf_roll_canonical(&r);
    }
    *n = len - (uint64_t)k + 1;
    qsort(v, *n, sizeof *v, by_u64);
    return v;
}

static void test_mask_small_exact_large_filter(void **state)
{
    (void)state;
    const sbf_opt_t o = test_opt(21, 15, 15, 2, 8);
    sbf_params_t p = {o.k, o.m, o.s, o.hashes, 512};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int size = 0; size < 3; ++size) {
        const int large = size == 2;
        const uint64_t mask_len = large ? SBF_MASK_EXACT_MAX + 200000 : size ? 5000 : 3000, t_len = 3000000;
        sbf_seqbuf_t mseq, tseq;
        sbf_seqbuf_init(&mseq);
        sbf_seqbuf_init(&tseq);
        uint8_t *m, *t;
        random_mask_and_target(mask_len, t_len, &x, &m, &t);
        /* stretches of the mask in the target, every other one reverse-complemented */
        for (int i = 0; i < 40; ++i) {
            const uint64_t n = 300, from = (uint64_t)i * ((mask_len - n) / 40), at = 1000 + (uint64_t)i * 70000;
            for (uint64_t j = 0; j < n; ++j)
                t[at + j] = i & 1 ? (uint8_t)(3 - m[from + n - 1 - j]) : m[from + j];
        }
        memcpy(mseq.codes = malloc(mask_len + 1), m, mask_len);
        mseq.len = mask_len;
        mseq.cap = mask_len + 1;
        mseq.kmers = mask_len - (uint64_t)o.k + 1;
        tseq.codes = t;
        tseq.len = t_len;
        uint64_t n_mask, n_t;
        uint64_t *mk = canonical_kmers(m, mask_len, o.k, &n_mask), *tk = canonical_kmers(t, t_len, o.k, &n_t);
        uint64_t in_mask = 0;   /* target k-mer positions whose k-mer the mask holds */
        for (uint64_t i = 0; i < n_t; ++i)
            in_mask += bsearch(&tk[i], mk, n_mask, sizeof *mk, by_u64) != NULL;
        assert_true(in_mask >= 40 * (300 - 20));
        sbf_mask_t *mask = NULL;
        const sbf_seqbuf_t *seqs[1] = {&mseq};
        assert_int_equal(sbf_mask_build(&p, seqs, 1, 2, &mask), SBF_OK);
        sbf_seqbuf_t kept;
        sbf_seqbuf_init(&kept);
        uint64_t left_out = 0;
        assert_int_equal(sbf_mask_apply(mask, o.k, 0, &tseq, 2, &kept, &left_out), SBF_OK);
        if (large)   /* a filter: its false positives too, about 1e-8 of 3 M k-mers */
            assert_true(left_out >= in_mask && left_out <= in_mask + 3);
        else
            assert_int_equal(left_out, in_mask);
        assert_int_equal(kept.kmers + left_out, n_t);
        /* no k-mer of the mask is kept */
        const uint64_t kmask = sbf_mask((unsigned)o.k);
        sbf_roll_t r = {0, 0};
        unsigned have = 0;
        uint64_t leaked = 0;
        for (uint64_t j = 0; j < kept.len; ++j) {
            have = kept.codes[j] > 3 ? 0 : have + 1;
            sbf_roll_push(&r, kept.codes[j] & 3, kmask, 2u * ((unsigned)o.k - 1));
            if (have >= (unsigned)o.k) {
                const uint64_t key = sbf_roll_canonical(&r);
                leaked += bsearch(&key, mk, n_mask, sizeof *mk, by_u64) != NULL;
            }
        }
        assert_int_equal(leaked, 0);
        sbf_mask_free(mask);
        sbf_seqbuf_free(&kept);
        sbf_seqbuf_free(&mseq);
        free(t);
        free(m);
        free(mk);
        free(tk);
    }
}

/* t[0..len) built skipping what `held` marks, on 1, 3 and 8 threads: want's bits and fill. */
static void expect_held_build(const sbf_params_t *p, uint64_t shards, const uint8_t *t, uint64_t len,
                              const sbf_held_t *held, const sbf_index_t *want)
{
    const int counts[3] = {1, 3, 8};
    for (int i = 0; i < 3; ++i) {
        sbf_index_t *h = sbf_idx_new(p);
        assert_non_null(h);
        assert_int_equal(sbf_idx_add_target(h, "held", shards), 0);
        assert_int_equal(sbf_build_target_held(h, &h->targets[0], t, len, held, counts[i]), SBF_OK);
        assert_memory_equal(h->targets[0].bits, want->targets[0].bits, sbf_target_bytes(want, &want->targets[0]));
        assert_true(h->targets[0].fill == want->targets[0].fill);
        sbf_idx_free(h);
    }
}

/* A CPU build that skips the k-mers a mask and DUST leave out (sbf_mask_hold, then
 * sbf_build_target_held on the target's own codes) against the build from sbf_mask_apply's
 * masked copy: the same kept and left-out counts and the same filter bytes, on 1, 3 and 8
 * threads. The target: random sequence (with N runs) holding planted stretches of the mask's
 * sequence and low-complexity repeats; the filter built without leaving anything out differs. */
static void test_build_held_like_masked_copy(void **state)
{
    (void)state;
    const sbf_params_t p = {21, 15, 15, 2, 512};
    uint64_t x = 0x2545F4914F6CDD1Dull;
    const uint64_t mask_len = 4000, t_len = 2500000;
    uint8_t *m, *t;
    random_mask_and_target(mask_len, t_len, &x, &m, &t);
    for (int i = 0; i < 30; ++i) {
        const uint64_t at = 5000 + (uint64_t)i * 80000;
        memcpy(t + at, m + (uint64_t)i * 100, 250);                  /* the mask's k-mers */
        for (uint64_t j = 0; j < 120; ++j)                            /* a dinucleotide repeat */
            t[at + 1000 + j] = (uint8_t)(j & 1 ? 2 : 0);
        memset(t + at + 3000, 4, (size_t)(i % 5));                   /* short N runs */
    }
    sbf_seqbuf_t mseq, tseq;
    sbf_seqbuf_init(&mseq);
    sbf_seqbuf_init(&tseq);
    mseq.codes = m;
    mseq.len = mask_len;
    mseq.kmers = mask_len - (uint64_t)p.k + 1;
    tseq.codes = t;
    tseq.len = t_len;
    sbf_mask_t *mask = NULL;
    const sbf_seqbuf_t *seqs[1] = {&mseq};
    assert_int_equal(sbf_mask_build(&p, seqs, 1, 2, &mask), SBF_OK);
    sbf_seqbuf_t kept;
    sbf_seqbuf_init(&kept);
    uint64_t left_copy = 0, kept_held = 0, left_held = 0;
    assert_int_equal(sbf_mask_apply(mask, p.k, 50, &tseq, 3, &kept, &left_copy), SBF_OK);
    assert_true(left_copy >= 30 * (250 - 20) + 30 * 60);   /* the mask's and the repeats' */
    sbf_held_t held;
    assert_int_equal(sbf_mask_hold(mask, p.k, 50, &tseq, 3, &held, &kept_held, &left_held), SBF_OK);
    assert_non_null(held.bits);
    assert_int_equal(kept_held, kept.kmers);
    assert_int_equal(left_held, left_copy);
    const uint64_t shards = sbf_shards_for(&p, kept.kmers, 8.0);
    sbf_index_t *ref = sbf_idx_new(&p), *all = sbf_idx_new(&p);
    assert_non_null(ref);
    assert_non_null(all);
    assert_int_equal(sbf_idx_add_target(ref, "copy", shards), 0);
    assert_int_equal(sbf_idx_add_target(all, "all", shards), 0);
    assert_int_equal(sbf_build_target(ref, &ref->targets[0], kept.codes, kept.len, 2), SBF_OK);
    assert_int_equal(sbf_build_target(all, &all->targets[0], t, t_len, 2), SBF_OK);
    const size_t bytes = sbf_target_bytes(ref, &ref->targets[0]);
    assert_true(memcmp(all->targets[0].bits, ref->targets[0].bits, bytes) != 0);
    expect_held_build(&p, shards, t, t_len, &held, ref);
    sbf_held_free(&held);
    assert_null(held.bits);

    /* Any bitmap: every 9th position and random ones over a target with period-7 repeats
     * (long runs of one minimizer, cut where held) against the records of its kept stretches
     * made here, one record per maximal stretch of kept valid k-mers. */
    for (int i = 0; i < 20; ++i)
        for (uint64_t j = 0; j < 600; ++j)
            t[100000 + (uint64_t)i * 120000 + j] = t[100000 + (uint64_t)i * 120000 + j % 7];
    const uint64_t positions = t_len - (uint64_t)p.k + 1;
    sbf_held_t any = {calloc((positions + 63) / 64 + 1, sizeof(uint64_t)), ((positions + 63) / 64 + 1) * 8};
    assert_non_null(any.bits);
    for (uint64_t q = 0; q < positions; ++q) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (q % 9 == 0 || x % 23 == 0)
            any.bits[q >> 6] |= 1ULL << (q & 63);
    }
    sbf_seqbuf_t stretches;
    sbf_seqbuf_init(&stretches);
    for (uint64_t q = 0; q < positions;) {
        int valid = 1;
        for (int j = 0; j < p.k && valid; ++j)
            valid = t[q + (uint64_t)j] < 4;
        if (!valid || (any.bits[q >> 6] >> (q & 63) & 1)) {
            ++q;
            continue;
        }
        uint64_t e = q + 1;   /* the stretch's k-mers q .. e - 1 */
        while (e < positions && t[e + (uint64_t)p.k - 1] < 4 && !(any.bits[e >> 6] >> (e & 63) & 1))
            ++e;
        assert_int_equal(sbf_seqbuf_append(&stretches, sbf_nt4_identity, t + q, e - q + (uint64_t)p.k - 1, p.k), SBF_OK);
        q = e;
    }
    sbf_index_t *from_records = sbf_idx_new(&p);
    assert_non_null(from_records);
    assert_int_equal(sbf_idx_add_target(from_records, "records", shards), 0);
    assert_int_equal(sbf_build_target(from_records, &from_records->targets[0], stretches.codes, stretches.len, 2), SBF_OK);
    expect_held_build(&p, shards, t, t_len, &any, from_records);
    free(any.bits);
    sbf_seqbuf_free(&stretches);
    sbf_idx_free(from_records);
    sbf_idx_free(ref);
    sbf_idx_free(all);
    sbf_mask_free(mask);
    sbf_seqbuf_free(&kept);
    free(m);
    free(t);
}

static void test_nt16_like_ascii(void **state)
{
    (void)state;
    for (unsigned v = 0; v < 16; ++v) {
        assert_int_equal(sbf_nt4_nt16[v], sbf_nt4_bam[v]);
        assert_int_equal(sbf_encode_nt16(v), sbf_nt4_bam[v]);
    }
    for (unsigned v = 16; v < 256; ++v)
        assert_int_equal(sbf_nt4_nt16[v], SBF_BASE_INVALID);
    /* a byte and its 4-bit code are the same base or none; but htslib reads U as no base (here
     * it is T) and the digits 0-3 as A, C, G, T (here no bases) */
    for (unsigned c = 0; c < 256; ++c)
        if (!strchr("0123Uu", (int)c) || !c)
            assert_int_equal(sbf_nt4_nt16[seq_nt16_table[c]], sbf_nt4_ascii[c]);

    test_seed(31);
    const sbf_opt_t sets[2] = {test_opt(31, 25, 25, 2, 4), test_opt(21, 11, 17, 1, 4)};
    enum { N = 20000, LONG = 6 };
    const size_t glen = 200000;
    char *g[2] = {random_dna(glen), random_dna(glen / 4)};
    for (int set = 0; set < 2; ++set) {
        sbf_builder_t *b;
        sbf_index_t *idx;
        assert_int_equal(sbf_builder_init(&sets[set], &b), SBF_OK);
        assert_int_equal(sbf_builder_add_target(b, "g0"), 0);
        assert_int_equal(sbf_builder_add_seq(b, 0, g[0], glen), SBF_OK);
        assert_int_equal(sbf_builder_add_target(b, "g1"), 1);
        assert_int_equal(sbf_builder_add_seq(b, 1, g[1], glen / 4), SBF_OK);
        assert_int_equal(sbf_builder_finish(b, &idx), SBF_OK);

        const char **seqs = malloc((N + LONG) * sizeof *seqs);
        const uint8_t **packed = malloc((N + LONG) * sizeof *packed);
        size_t *lens = malloc((N + LONG) * sizeof *lens);
        char *pool = malloc((size_t)N * 300 + (size_t)LONG * 20000);
        uint8_t *ppool = malloc((size_t)N * 150 + (size_t)LONG * 10000 + 1);
        size_t at = 0, pat = 0;
        for (size_t i = 0; i < N + LONG; ++i) {
            size_t len = i < N ? test_rand() % 301 : 9000 + test_rand() % 11001;
            char *r = pool + at;
            int kind = (int)(test_rand() % 4);
            const char *src = g[i % 2];
            size_t slen = i % 2 ? glen / 4 : glen, from = test_rand() % (slen - len);
            for (size_t j = 0; j < len; ++j)
                r[j] = kind == 0 ? src[from + j] : kind == 1 ? complement(src[from + len - 1 - j]) : "ACGT"[test_rand() >> 62];
            for (size_t e = len ? test_rand() % 4 : 0; e > 0; --e)
                r[test_rand() % len] = "NnRYnrKMacgtX-"[test_rand() % 14];
            seqs[i] = r;
            lens[i] = len;
            packed[i] = ppool + pat;
            pack_nt16(r, len, ppool + pat, (unsigned)(test_rand() % 16));
            at += len;
            pat += (len + 1) / 2;
        }
        uint32_t *ka = malloc((N + LONG) * sizeof *ka), *kb = malloc((N + LONG) * sizeof *kb);
        uint32_t *ha = malloc((N + LONG) * 2 * sizeof *ha), *hb = malloc((N + LONG) * 2 * sizeof *hb);
        assert_int_equal(sbf_query(idx, N + LONG, seqs, lens, ka, ha, 2), SBF_OK);
        uint64_t kmers = 0, hits = 0;
        for (size_t i = 0; i < N + LONG; ++i)
            kmers += ka[i], hits += ha[2 * i] + ha[2 * i + 1];
        assert_true(hits > 0 && hits < 2 * kmers);   /* present and absent k-mers both */
        for (int threads = 1; threads <= 3; threads += 2) {
            memset(kb, 0xff, (N + LONG) * sizeof *kb);
            memset(hb, 0xff, (N + LONG) * 2 * sizeof *hb);
            assert_int_equal(sbf_query_nt16(idx, N + LONG, packed, lens, kb, hb, threads), SBF_OK);
            for (size_t i = 0; i < N + LONG; ++i)
                if (ka[i] != kb[i] || ha[2 * i] != hb[2 * i] || ha[2 * i + 1] != hb[2 * i + 1])
                    fail_msg("set %d, %d threads, read %zu (%zu bases): ASCII %u k-mers %u/%u hits, nt16 %u %u/%u", set,
                             threads, i, lens[i], ka[i], ha[2 * i], ha[2 * i + 1], kb[i], hb[2 * i], hb[2 * i + 1]);
        }
        assert_int_equal(sbf_query_nt16(idx, 1, packed, lens, kb, hb, 0), SBF_E_PARAM);
        sbf_index_destroy(idx);
        free(seqs);
        free(packed);
        free(lens);
        free(pool);
        free(ppool);
        free(ka);
        free(kb);
        free(ha);
        free(hb);
    }
    free(g[0]);
    free(g[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seqbuf_kmer_counts),
        cmocka_unit_test(test_seqbuf_kmers_threads),
        cmocka_unit_test(test_seqbuf_move),
        cmocka_unit_test(test_buf_reserve),
        cmocka_unit_test(test_plain_copies),
        cmocka_unit_test(test_many_plain_targets),
        cmocka_unit_test(test_plain_copies_widths),
        cmocka_unit_test(test_panel_put_widths),
        cmocka_unit_test(test_build_threads),
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_strand_symmetry),
        cmocka_unit_test(test_fpr_matches_prediction),
        cmocka_unit_test(test_kmers_spanning_n_not_inserted),
        cmocka_unit_test(test_case_and_iupac),
        cmocka_unit_test(test_short_and_empty_reads),
        cmocka_unit_test(test_threads_and_windows),
        cmocka_unit_test(test_multi_target),
        cmocka_unit_test(test_panel_like_plain),
        cmocka_unit_test(test_early_out_like_kmer_by_kmer),
        cmocka_unit_test(test_nt16_like_ascii),
        cmocka_unit_test(test_query_ahead_like_seq),
        cmocka_unit_test(test_mask_records),
        cmocka_unit_test(test_mask_small_exact_large_filter),
        cmocka_unit_test(test_build_held_like_masked_copy),
    };
    return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
