/* test_gpu.c -- the GPU engine computes the CPU engine's bits: filters built on the GPU are
 * byte-identical for several sequences and parameter sets; query hits are identical for a
 * million varied reads, from ASCII and from BAM's 4-bit packing, blocking and queued on two
 * streams; per-k-mer answers are identical for several targets. Exits 77 (skipped) where there
 * is no usable GPU, as in CI (tests/test_filter.c checks the CPU's 4-bit path there).
 * Real genomes can be added: SBF_GPU_GENOMES="a.fa.gz b.fa.gz" (tests/gpu/run.sh does). */
#include <time.h>
#include <unistd.h>

#include <htslib/hts.h>

#include "testutil.h"

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_build.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_adapters.h"
#include "../filters/sbf_mask.h"
#include "../gpu/sbf_gpu.h"
#include "../plugin/sbf_engine.h"

/* Bytes of the filters of targets 0 and 1 (the same size) that differ. */
static size_t bytes_differ(const sbf_index_t *idx)
{
    const size_t bytes = sbf_target_bytes(idx, &idx->targets[0]);
    size_t diff = 0;
    for (size_t i = 0; i < bytes; ++i)
        diff += ((uint8_t *)idx->targets[0].bits)[i] != ((uint8_t *)idx->targets[1].bits)[i];
    return diff;
}

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
    if (sbf_gpu_build_target(0, idx, &idx->targets[1], sb->codes, sb->len, NULL, NULL) != 0)
        fail_msg("%s", sbf_error_message());
    size_t bytes = sbf_target_bytes(idx, &idx->targets[0]);
    size_t diff = bytes_differ(idx);
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
    static sbf_opt_t sets[7];
    sets[0] = test_opt(31, 25, 25, 2, 16);   /* defaults */
    sets[1] = test_opt(31, 21, 24, 2, 16);
    sets[2] = test_opt(31, 16, 28, 4, 16);   /* cuSBF's layout */
    sets[2].shard_bits = 256;
    sets[3] = test_opt(21, 15, 15, 1, 8);
    sets[4] = test_opt(32, 27, 22, 3, 12);
    sets[5] = test_opt(31, 11, 20, 1, 16);   /* k-m+1 = 21: the kernels' largest rings */
    sets[6] = test_opt(31, 25, 25, 1, 16);   /* the other compiled set (gpu/sbf_gpu_plan.cu) */
    *n = 7;
    return sets;
}

/* A GPU build that fails after the device took the sequence (its masked copy freed then, 3 GB
 * off a human build's peak) is finished on "auto" by the CPU engine, from the masked sequence
 * made again: the same bytes as a CPU build (both layers masked: DUST, the adapters), and the
 * notice names the failure. */
static uint8_t *save_and_read(const sbf_index_t *idx, size_t *n)
{
    char path[] = "/tmp/sbf_fallback_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sbf_index_save(idx, path), 0);
    uint8_t *bytes = slurp(path, n);
    unlink(path);
    return bytes;
}

static void test_build_fallback_after_upload(void **state)
{
    (void)state;
    test_seed(404);
    const size_t len = 400000;
    char *g = random_dna(len);
    memset(g + 1000, 'A', 3000);   /* low complexity: DUST leaves it out, so the sequence is a copy */
    memcpy(g + 9000, "AGATCGGAAGAGCACACGTCTGAACTCCAGTCA", 33);   /* an adapter, for the layer */
    uint8_t *bytes[2];
    size_t n[2];
    for (int run = 0; run < 2; ++run) {
        sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
        o.gpu = run ? SBF_GPU_AUTO : SBF_GPU_NONE;
        sbf_builder_t *b;
        sbf_index_t *idx;
        assert_int_equal(sbf_builder_init(&o, &b), 0);
        assert_int_equal(sbf_builder_add_target(b, "g"), 0);
        assert_int_equal(sbf_builder_add_seq(b, 0, g, len), 0);
        sbf_gpu_fail_after_sent = run;
        const int rc = sbf_builder_finish(b, &idx);
        sbf_gpu_fail_after_sent = 0;
        if (rc != 0)
            fail_msg("%s", sbf_error_message());
        assert_true(idx->targets[0].masked > 0 && idx->layer && idx->layer->targets[0].masked > 0);
        const char *notice = sbf_index_notice(idx);
        if (run)
            assert_true(notice && strstr(notice, "injected by a test") && strstr(notice, "built on the CPU engine"));
        else
            assert_null(notice);
        bytes[run] = save_and_read(idx, &n[run]);
        sbf_idx_free(idx);
    }
    assert_true(n[0] > 0 && n[0] == n[1]);
    assert_memory_equal(bytes[0], bytes[1], n[0]);
    printf("build: a GPU failure after the upload, finished on the CPU engine: %zu bytes identical\n", n[0]);
    /* --gpu 0 asks for the device: the failure fails the build, and the message is the GPU's,
     * not a thread's. With a --mask of the target the layers are masked on the CPU, the next
     * one beside the GPU on its own thread (joined, its copy freed: ASan and memcheck say so);
     * without one the GPU leaves DUST's and the adapters' k-mers out itself. */
    for (int masked = 0; masked < 2; ++masked) {
        sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
        o.gpu = 0;
        sbf_builder_t *b;
        sbf_index_t *idx = NULL;
        assert_int_equal(sbf_builder_init(&o, &b), 0);
        assert_int_equal(sbf_builder_add_target(b, "g"), 0);
        assert_int_equal(sbf_builder_add_seq(b, 0, g, len), 0);
        char path[] = "/tmp/sbf-test-mask-XXXXXX";
        if (masked) {   /* 5,000 of the target's own bases as a FASTA mask of it */
            const int fd = mkstemp(path);
            FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
            assert_non_null(f);
            assert_true(fprintf(f, ">m\n%.5000s\n", g + 20000) > 0 && fclose(f) == 0);
            assert_int_equal(sbf_builder_add_mask(b, 0, path), 0);
            unlink(path);
        }
        sbf_gpu_fail_after_sent = 1;
        const int rc = sbf_builder_finish(b, &idx);
        sbf_gpu_fail_after_sent = 0;
        assert_true(rc != 0 && idx == NULL);
        if (!strstr(sbf_error_message(), "injected by a test"))
            fail_msg("the build's error is not the GPU's: %s", sbf_error_message());
        printf("build: --gpu 0 and a GPU failure after the upload (%s): failed with \"%s\"\n",
               masked ? "--mask, masked on the CPU" : "masked on the GPU", sbf_error_message());
    }
    free(bytes[0]);
    free(bytes[1]);
    free(g);
}

/* What a build leaves out, found on the GPU (hold_kernel: DUST, the adapters' exact set),
 * against the CPU's masked copy (sbf_mask_apply) built on the CPU: the same bits, the same
 * k-mers kept and left out. The long-read layer's parameters (k=21, adapters, DUST 14), the
 * index's (k=31, DUST 50), adapters alone, and k=32 (a k-mer of 64 bits), on random sequence
 * with N runs, low-complexity stretches and adapters planted in both orientations; the adapters
 * must leave out more than DUST alone. */
static void test_build_held(void **state)
{
    (void)state;
    test_seed(77);
    const size_t len = getenv("SBF_GPU_QUICK") ? 300000 : 3000000;
    char *g = random_dna(len);
    static const char *const unit[] = {"A", "AT", "CAG", "AAAAAAAG", "GGGGC", "ACGTTGCA"};
    for (size_t at = 1000; at + 300 < len; at += 7000) {   /* low complexity, 40-199 bases */
        const char *u = unit[test_rand() % 6];
        const size_t run = 40 + test_rand() % 160, ul = strlen(u);
        for (size_t j = 0; j < run; ++j)
            g[at + j] = u[j % ul];
    }
    sbf_seqbuf_t ad;   /* whole adapters (22 to 58 bases), forward or reverse complement */
    sbf_seqbuf_init(&ad);
    assert_int_equal(sbf_adapters_append(&ad, 21), 0);
    uint64_t rec_at[64], rec_len[64];
    int n_rec = 0;
    for (uint64_t j = 0, from = 0; j <= ad.len; ++j)
        if (j == ad.len || ad.codes[j] > 3) {
            if (j > from && n_rec < 64)
                rec_at[n_rec] = from, rec_len[n_rec++] = j - from;
            from = j + 1;
        }
    assert_true(n_rec >= 10);
    for (size_t at = 4000; at + 100 < len; at += 3000) {
        const int r = (int)(test_rand() % (unsigned)n_rec), rc = test_rand() & 1;
        const uint64_t from = rec_at[r], n = rec_len[r];
        for (uint64_t j = 0; j < n; ++j)
            g[at + j] = rc ? "TGCA"[ad.codes[from + n - 1 - j]] : "ACGT"[ad.codes[from + j]];
    }
    for (size_t i = 0; i < len / 20000; ++i) {   /* N runs of 1 to 100 bases */
        size_t at = test_rand() % len, run = 1 + test_rand() % 100;
        for (size_t j = at; j < at + run && j < len; ++j)
            g[j] = 'N';
    }
    sbf_seqbuf_free(&ad);
    const struct {
        int k, m, s;
        unsigned dust;
        int adapters;
    } cases[] = {{21, 15, 15, 14, 1}, {31, 25, 25, 50, 0}, {31, 25, 25, 0, 1}, {32, 27, 22, 20, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const int k = cases[c].k;
        sbf_params_t p = {k, cases[c].m, cases[c].s, 2, 512};
        sbf_seqbuf_t sb, out, adapters;
        sbf_seqbuf_init(&sb);
        sbf_seqbuf_init(&out);
        sbf_seqbuf_init(&adapters);
        assert_int_equal(sbf_seqbuf_append(&sb, sbf_nt4_ascii, (const uint8_t *)g, len, k), 0);
        sbf_mask_t *mask = NULL;
        uint64_t *keys = NULL, n_keys = 0;
        if (cases[c].adapters) {
            const sbf_seqbuf_t *seqs[1] = {&adapters};
            assert_int_equal(sbf_adapters_append(&adapters, k), 0);
            assert_int_equal(sbf_mask_build(&p, seqs, 1, 2, &mask), 0);
            assert_int_equal(sbf_mask_sorted_keys(mask, &keys, &n_keys), 0);
            assert_true(keys && n_keys > 50);
        }
        uint64_t left = 0, dust_left = 0, kept_g = 0, left_g = 0;
        assert_int_equal(sbf_mask_apply(mask, k, cases[c].dust, &sb, 2, &out, &left), 0);
        if (cases[c].adapters) {   /* the adapters leave out k-mers DUST keeps */
            sbf_seqbuf_t dust_only;
            sbf_seqbuf_init(&dust_only);
            assert_int_equal(sbf_mask_apply(NULL, k, cases[c].dust, &sb, 2, &dust_only, &dust_left), 0);
            sbf_seqbuf_free(&dust_only);
            assert_true(left > dust_left + 20);
        }
        assert_true(left > (cases[c].dust ? 1000u : 100u));
        sbf_index_t *idx = sbf_idx_new(&p);
        assert_non_null(idx);
        const uint64_t shards = sbf_shards_for(&p, sb.kmers, 16.0);
        assert_int_equal(sbf_idx_add_target(idx, "cpu", shards), 0);
        assert_int_equal(sbf_idx_add_target(idx, "gpu", shards), 1);
        assert_int_equal(sbf_build_target(idx, &idx->targets[0], out.codes, out.len, 2), 0);
        const sbf_gpu_hold_t hold = {cases[c].dust, keys, n_keys};
        if (sbf_gpu_build_target_held(0, idx, &idx->targets[1], sb.codes, sb.len, &hold, &kept_g, &left_g) != 0)
            fail_msg("%s", sbf_error_message());
        const size_t bytes = sbf_target_bytes(idx, &idx->targets[0]), diff = bytes_differ(idx);
        printf("build held on the GPU, k=%d DUST %u%s: %llu k-mers kept (CPU %llu), %llu left out (CPU %llu; DUST "
               "alone %llu), %zu of %zu bytes differ\n",
               k, cases[c].dust, cases[c].adapters ? " + adapters" : "", (unsigned long long)kept_g,
               (unsigned long long)out.kmers, (unsigned long long)left_g, (unsigned long long)left,
               (unsigned long long)dust_left, diff, bytes);
        assert_int_equal(kept_g, out.kmers);
        assert_int_equal(left_g, left);
        assert_int_equal(diff, 0);
        sbf_idx_free(idx);
        free(keys);
        sbf_mask_free(mask);
        sbf_seqbuf_free(&adapters);
        sbf_seqbuf_free(&out);
        sbf_seqbuf_free(&sb);
    }
    free(g);
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
    if (!getenv("SBF_GPU_QUICK")) {   /* a filter of 256 MiB or more comes back staged by threads */
        sbf_opt_t big = sets[0];
        big.bits_per_kmer = 64;
        sbf_seqbuf_t sb;
        sbf_seqbuf_init(&sb);
        random_with_n(&sb, 40000000, big.k);
        check_build(&big, &sb, "random, 320 MB filter (staged)");
        sbf_seqbuf_free(&sb);
    }
    const char *genomes = getenv("SBF_GPU_GENOMES");
    if (genomes && *genomes) {
        char *list = strdup(genomes), *save = NULL;
        for (char *path = strtok_r(list, " ", &save); path; path = strtok_r(NULL, " ", &save)) {
            static const size_t on_genomes[3] = {0, 1, 6}; /* both compiled sets and one other */
            for (size_t g = 0; g < 3; ++g) {
                const size_t i = on_genomes[g];
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

/* ASCII to BAM's packing with htslib's table (what bam_get_seq holds): two 4-bit codes per byte,
 * the first in the high nibble; an odd read's unused low half gets `pad` (BAM writes 0; the
 * engines must not read it). */
static void pack_nt16(const char *s, size_t len, uint8_t *out, unsigned pad)
{
    for (size_t i = 0; i < len; i += 2) {
        unsigned hi = seq_nt16_table[(unsigned char)s[i]];
        unsigned lo = i + 1 < len ? seq_nt16_table[(unsigned char)s[i + 1]] : pad;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads and their answers: kmers[i], hits[i * R + r]. */
typedef struct {
    size_t n;
    int R;
    const char **seqs;
    const uint8_t **packed;
    size_t *lens;
    char *pool;
    uint8_t *ppool;
} read_set_t;

/* n reads of 1..300 bases and `n_long` of long_len: from the targets' sequences (half of those
 * reverse-complemented) or random, some with N, IUPAC or lower case, and each also in BAM's
 * packing (with a random unused half byte after odd reads). */
static void make_reads(read_set_t *rs, size_t n, size_t n_long, size_t long_len, char *const g[2], const size_t glen[2])
{
    const size_t total = n + n_long;
    rs->n = total;
    rs->seqs = malloc(total * sizeof *rs->seqs);
    rs->packed = malloc(total * sizeof *rs->packed);
    rs->lens = malloc(total * sizeof *rs->lens);
    rs->pool = malloc(n * 300 + n_long * long_len);
    rs->ppool = malloc(n * 150 + n_long * (long_len / 2 + 1));
    assert_true(rs->seqs && rs->packed && rs->lens && rs->pool && rs->ppool);
    size_t at = 0, pat = 0;
    for (size_t i = 0; i < total; ++i) {
        size_t len = i < n ? 1 + test_rand() % 300 : long_len;
        char *r = rs->pool + at;
        int kind = (int)(test_rand() % 4);
        if (kind < 2) {
            const char *src = g[i % 2];
            size_t slen = glen[i % 2];
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
        rs->seqs[i] = r;
        rs->lens[i] = len;
        rs->packed[i] = rs->ppool + pat;
        pack_nt16(r, len, rs->ppool + pat, (unsigned)(test_rand() % 16));
        at += len;
        pat += (len + 1) / 2;
    }
}

static void free_reads(read_set_t *rs)
{
    free(rs->seqs);
    free(rs->packed);
    free(rs->lens);
    free(rs->pool);
    free(rs->ppool);
}

/* Reads whose answers differ from the reference's (kc, hc); the first few are printed. */
/* The public pipeline on the index's GPU copies: the read set in batches of 40,000 reads, ASCII
 * or 4-bit; returns the reads whose results differ from the CPU's (kc, hc) or came out of order. */
typedef struct {
    const read_set_t *rs;
    int R;
    const uint32_t *kc, *hc;
    size_t next, bad;
} pipe_check_t;

static int pipe_check_done(void *ctx, const sbf_pipeline_result_t *r)
{
    pipe_check_t *c = ctx;
    size_t first = (size_t)(uintptr_t)r->batch;
    if (first != c->next)
        c->bad += r->n;
    for (size_t i = 0; i < r->n; ++i)
        if (r->kmers[i] != c->kc[first + i] ||
            memcmp(r->hits + i * (size_t)c->R, c->hc + (first + i) * (size_t)c->R, (size_t)c->R * 4))
            ++c->bad;
    c->next = first + r->n;
    return 0;
}

static size_t pipeline_differs(const sbf_index_t *idx, const read_set_t *rs, int R, const uint32_t *kc,
                               const uint32_t *hc, int nt16)
{
    pipe_check_t c = {rs, R, kc, hc, 0, 0};
    sbf_pipeline_opt_t po;
    sbf_pipeline_opt_init(&po);
    po.done = pipe_check_done;
    po.ctx = &c;
    sbf_pipeline_t *p;
    if (sbf_pipeline_open(idx, &po, &p) != SBF_OK)
        fail_msg("%s", sbf_last_error());
    for (size_t i = 0; i < rs->n; i += 40000) {
        size_t cnt = rs->n - i < 40000 ? rs->n - i : 40000;
        int rc = nt16 ? sbf_pipeline_submit_nt16(p, cnt, rs->packed + i, rs->lens + i, (void *)(uintptr_t)i)
                      : sbf_pipeline_submit(p, cnt, rs->seqs + i, rs->lens + i, (void *)(uintptr_t)i);
        if (rc != SBF_OK)
            fail_msg("%s", sbf_last_error());
    }
    sbf_pipeline_stats_t st;
    if (sbf_pipeline_close(p, &st) != SBF_OK)
        fail_msg("%s", sbf_last_error());
    if (c.next != rs->n)
        c.bad += rs->n - c.next;
    print_message("pipeline %s on %d GPU(s): %zu reads differ; busy %.3f s of %.3f s\n", nt16 ? "nt16" : "ASCII",
                  st.n_gpus, c.bad, st.busy_seconds[0], st.wall_seconds);
    return c.bad;
}

static size_t count_differ(const char *what, const read_set_t *rs, int R, const uint32_t *kc, const uint32_t *hc,
                           const uint32_t *kx, const uint32_t *hx)
{
    size_t bad = 0;
    for (size_t i = 0; i < rs->n; ++i) {
        int differ = kc[i] != kx[i];
        for (int r = 0; r < R; ++r)
            differ |= hc[(size_t)R * i + (size_t)r] != hx[(size_t)R * i + (size_t)r];
        if (differ && bad++ < 5)
            print_message("%s: read %zu (len %zu): cpu %u/%u, here %u/%u\n", what, i, rs->lens[i], kc[i], hc[(size_t)R * i],
                          kx[i], hx[(size_t)R * i]);
    }
    return bad;
}

/* The async path: batches of random sizes (at most max_reads reads and max_bases bases)
 * alternate between two workspaces with streams of their own, ASCII and nt16 in turn, and every
 * fifth batch goes to a third workspace queued on the first one's stream; nothing waits until
 * every batch is queued. Results into pinned buffers, compared with the blocking path's. */
static size_t check_async(sbf_gpu_index_t *gi, const read_set_t *rs, int R, const uint32_t *kg, const uint32_t *hg)
{
    const size_t max_reads = 40000, max_bases = 4000000;
    sbf_gpu_stream_t *st[3] = {NULL, NULL, NULL};
    uint32_t *ka = NULL, *ha = NULL;
    if (sbf_gpu_stream_create(gi, NULL, max_reads, max_bases, &st[0]) ||
        sbf_gpu_stream_create(gi, NULL, max_reads, max_bases, &st[1]) ||
        sbf_gpu_stream_create(gi, sbf_gpu_stream_handle(st[0]), max_reads / 2, max_bases, &st[2]))
        fail_msg("%s", sbf_error_message());
    assert_ptr_equal(sbf_gpu_stream_handle(st[2]), sbf_gpu_stream_handle(st[0]));
    assert_ptr_not_equal(sbf_gpu_stream_handle(st[1]), sbf_gpu_stream_handle(st[0]));
    assert_int_equal(sbf_gpu_host_alloc(rs->n * sizeof *ka, (void **)&ka), 0);
    assert_int_equal(sbf_gpu_host_alloc(rs->n * (size_t)R * sizeof *ha, (void **)&ha), 0);
    memset(ka, 0xff, rs->n * sizeof *ka);
    memset(ha, 0xff, rs->n * (size_t)R * sizeof *ha);
    /* too many reads, too many bases: refused, nothing queued */
    assert_int_equal(sbf_gpu_query_async(st[0], max_reads + 1, rs->seqs, rs->lens, ka, ha), SBF_E_PARAM);
    assert_int_equal(sbf_gpu_query_async(st[2], max_reads / 2 + 1, rs->seqs, rs->lens, ka, ha), SBF_E_PARAM);
    size_t at = 0, batches = 0, long_bases = 0;
    while (at < rs->n) {
        const int w = batches % 5 == 4 ? 2 : (int)(batches & 1);
        const size_t limit = w == 2 ? max_reads / 2 : max_reads;
        size_t want = 1 + test_rand() % limit, cnt = 0, bases = 0;
        while (cnt < want && at + cnt < rs->n && bases + rs->lens[at + cnt] <= max_bases)
            bases += rs->lens[at + cnt++];
        assert_true(cnt > 0);
        int rc = (batches / 2) % 2
                     ? sbf_gpu_query_nt16_async(st[w], cnt, rs->packed + at, rs->lens + at, ka + at, ha + at * (size_t)R)
                     : sbf_gpu_query_async(st[w], cnt, rs->seqs + at, rs->lens + at, ka + at, ha + at * (size_t)R);
        if (rc)
            fail_msg("batch %zu: %s", batches, sbf_error_message());
        long_bases = bases > long_bases ? bases : long_bases;
        at += cnt;
        ++batches;
    }
    for (int w = 0; w < 3; ++w)
        if (sbf_gpu_stream_sync(st[w]))
            fail_msg("%s", sbf_error_message());
    /* a batch of too many bases is refused too */
    {
        size_t big = 0, cnt = 0;
        while (cnt < rs->n && cnt < max_reads && big <= max_bases)
            big += rs->lens[cnt++];
        if (big > max_bases)
            assert_int_equal(sbf_gpu_query_async(st[1], cnt, rs->seqs, rs->lens, ka, ha), SBF_E_PARAM);
    }
    size_t bad = count_differ("async", rs, R, kg, hg, ka, ha);
    print_message("async: %zu batches over 2 streams (+1 workspace sharing a stream), largest %zu bases: %zu reads differ\n",
                  batches, long_bases, bad);
    sbf_gpu_stream_destroy(st[2]);   /* before st[0], whose stream it uses */
    sbf_gpu_stream_destroy(st[0]);
    sbf_gpu_stream_destroy(st[1]);
    sbf_gpu_stream_destroy(NULL);
    sbf_gpu_host_free(ka);
    sbf_gpu_host_free(ha);
    return bad;
}

/* 10^6 reads: lengths 1..300, from the reference (half reverse-complemented), random, with N,
 * shorter than k, plus a few of 100 kbp. Every path gives the CPU's ASCII answers, for 1 and 2
 * targets: the GPU from ASCII, the CPU and the GPU from BAM's 4-bit packing (also through the
 * public API), and the async path on two streams. */
/* The copy made on a thread of its own (sbf_engine_use_gpus_async, what sbf classify does):
 * a query on slot 0 at once is answered by the CPU engine until the copy is made and by the
 * GPU after, the same bits; the upload ends (state SBF_OK); an upload stopped by freeing the
 * copies at once returns promptly. Returns how many reads differ. */
static size_t async_upload_differs(sbf_index_t *idx, const read_set_t *rs, int R, const uint32_t *kc, const uint32_t *hc)
{
    const size_t n = rs->n;
    uint32_t *kx = malloc(n * sizeof *kx), *hx = malloc(n * (size_t)R * sizeof *hx);
    assert_true(kx && hx);
    size_t bad = 0;
    double seconds;
    uint64_t cpu_reads, before = 0;
    for (int round = 0; round < 2; ++round) {   /* ASCII, then BAM's packing */
        if (sbf_engine_use_gpus_async(idx, 1, NULL) != 0)
            fail_msg("%s", sbf_last_error());
        memset(kx, 0xff, n * sizeof *kx);
        const double t0 = now_s();
        assert_int_equal(sbf_engine_query(idx, 0, n, round ? NULL : rs->seqs, round ? rs->packed : NULL, rs->lens, kx,
                                          hx, 4, 8),
                         0);
        const double t_query = now_s() - t0;
        bad += count_differ(round ? "async upload nt16" : "async upload ASCII", rs, R, kc, hc, kx, hx);
        int state;
        while ((state = sbf_engine_upload_state(idx, &seconds, &cpu_reads)) == 1)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        if (state != 0)
            fail_msg("upload: %s", sbf_last_error());
        assert_true(cpu_reads <= n);
        before += cpu_reads;
        print_message("query during the upload (%s): %zu reads in %.3f s, %llu of them on the CPU engine; upload %.3f s; "
                      "%zu differ\n", round ? "nt16" : "ASCII", n, t_query, (unsigned long long)cpu_reads, seconds, bad);
    }
    /* stopped: freed while the copy is made */
    const double t0 = now_s();
    if (sbf_engine_use_gpus_async(idx, 1, NULL) != 0)
        fail_msg("%s", sbf_last_error());
    sbf_engine_drop_gpus(idx);
    print_message("upload started and dropped at once: %.3f s; %llu reads on the CPU engine in all\n", now_s() - t0,
                  (unsigned long long)before);
    assert_int_equal(sbf_engine_gpus(idx, NULL, 0), 0);
    if (sbf_index_use_gpu(idx, 0) != 0)   /* as the caller had it */
        fail_msg("%s", sbf_last_error());
    free(kx);
    free(hx);
    return bad;
}

static void query_identical(const sbf_opt_t *opt, int two_targets)
{
    test_seed(202);
    /* SBF_GPU_QUICK: a small run for compute-sanitizer, which is 10-100x slower */
    const int quick = getenv("SBF_GPU_QUICK") != NULL;
    const size_t N = quick ? 20000 : 1000000, LONG = quick ? 1 : 5, LONG_LEN = 100000;
    size_t glen[2] = {2000000, 1000000};
    char *g[2] = {random_dna(glen[0]), random_dna(glen[1])};
    sbf_opt_t o = *opt;
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(&o, &b), 0);
    assert_int_equal(sbf_builder_add_target(b, "g0"), 0);
    assert_int_equal(sbf_builder_add_seq(b, 0, g[0], glen[0]), 0);
    if (two_targets) {
        assert_int_equal(sbf_builder_add_target(b, "g1"), 1);
        assert_int_equal(sbf_builder_add_seq(b, 1, g[1], glen[1]), 0);
    }
    const int R = two_targets ? 2 : 1;
    assert_int_equal(sbf_builder_finish(b, &idx), 0);

    read_set_t rs;
    make_reads(&rs, N, LONG, LONG_LEN, g, glen);
    const size_t n = rs.n;
    uint32_t *kc = malloc(n * sizeof *kc), *kx = malloc(n * sizeof *kx), *kg = malloc(n * sizeof *kg);
    uint32_t *hc = calloc(n * 2, sizeof *hc), *hx = calloc(n * 2, sizeof *hx), *hg = calloc(n * 2, sizeof *hg);
    assert_true(kc && kx && kg && hc && hx && hg);
    double t0 = now_s();
    assert_int_equal(sbf_query(idx, n, rs.seqs, rs.lens, kc, hc, 8), 0);
    const double t_cpu = now_s() - t0;
    uint64_t kmers = 0, hits = 0;
    for (size_t i = 0; i < n; ++i) {
        kmers += kc[i];
        for (int r = 0; r < R; ++r)
            hits += hc[(size_t)R * i + (size_t)r];
    }
    assert_true(hits > 0 && hits < kmers * (uint64_t)R);   /* present and absent k-mers both */
    size_t bad;
    /* the CPU engine from the 4-bit packing */
    memset(kx, 0xff, n * sizeof *kx);
    assert_int_equal(sbf_query_nt16(idx, n, rs.packed, rs.lens, kx, hx, 8), 0);
    bad = count_differ("cpu nt16", &rs, R, kc, hc, kx, hx);
    assert_int_equal(bad, 0);

    sbf_gpu_index_t *gi;
    if (sbf_gpu_index_upload(0, idx, &gi) != 0)
        fail_msg("%s", sbf_error_message());
    t0 = now_s();
    if (sbf_gpu_query(gi, n, rs.seqs, rs.lens, kg, hg) != 0)
        fail_msg("%s", sbf_error_message());
    const double t_ascii = now_s() - t0;
    bad = count_differ("gpu ascii", &rs, R, kc, hc, kg, hg);
    print_message("query k=%d m=%d s=%d H=%d, %d target%s: %zu reads, %llu k-mers, %llu hits, %zu differ (GPU, ASCII)\n", o.k, o.m,
                  o.s, o.hashes, R, R > 1 ? "s" : "", n, (unsigned long long)kmers, (unsigned long long)hits, bad);
    assert_int_equal(bad, 0);

    memset(kx, 0xff, n * sizeof *kx);
    t0 = now_s();
    if (sbf_gpu_query_nt16(gi, n, rs.packed, rs.lens, kx, hx) != 0)
        fail_msg("%s", sbf_error_message());
    const double t_nt16 = now_s() - t0;
    bad = count_differ("gpu nt16", &rs, R, kc, hc, kx, hx);
    print_message("query nt16: CPU and GPU from BAM's 4-bit codes: %zu differ (blocking calls, wall: CPU ASCII 8 threads %.2f s, "
                  "GPU ASCII %.3f s, GPU nt16 %.3f s)\n", bad, t_cpu, t_ascii, t_nt16);
    assert_int_equal(bad, 0);

    assert_int_equal(check_async(gi, &rs, R, kg, hg), 0);

    /* the public API on the GPU: sbf_query_nt16 and sbf_query after sbf_index_use_gpu */
    if (sbf_index_use_gpu(idx, 0) != 0)
        fail_msg("%s", sbf_last_error());
    memset(kx, 0xff, n * sizeof *kx);
    assert_int_equal(sbf_query_nt16(idx, n, rs.packed, rs.lens, kx, hx, 1), 0);
    bad = count_differ("api nt16", &rs, R, kc, hc, kx, hx);
    assert_int_equal(bad, 0);
    assert_int_equal(pipeline_differs(idx, &rs, R, kc, hc, 0), 0);
    assert_int_equal(pipeline_differs(idx, &rs, R, kc, hc, 1), 0);
    assert_int_equal(async_upload_differs(idx, &rs, R, kc, hc), 0);

    /* two GPUs, where the machine has them: large calls split over both, the pipeline on both */
    if (sbf_gpu_devices() >= 2) {
        if (sbf_index_use_gpus(idx, 2, NULL) != 0)
            fail_msg("%s", sbf_last_error());
        int devs[SBF_MAX_GPUS];
        assert_int_equal(sbf_index_gpus(idx, devs, SBF_MAX_GPUS), 2);
        assert_int_equal(devs[1], 1);
        memset(kx, 0xff, n * sizeof *kx);
        assert_int_equal(sbf_query(idx, n, rs.seqs, rs.lens, kx, hx, 1), 0);
        bad = count_differ("api ASCII, 2 GPUs", &rs, R, kc, hc, kx, hx);
        assert_int_equal(bad, 0);
        assert_int_equal(pipeline_differs(idx, &rs, R, kc, hc, 1), 0);
        int twice[2] = {1, 1};
        assert_int_equal(sbf_index_use_gpus(idx, 2, twice), SBF_E_PARAM);
        assert_int_equal(sbf_index_gpus(idx, NULL, 0), 2);   /* unchanged by the failure */
        print_message("two GPUs: split queries and the pipeline agree with the CPU\n");
    }

    sbf_gpu_index_free(gi);
    sbf_index_destroy(idx);
    free_reads(&rs);
    free(kc);
    free(kx);
    free(kg);
    free(hc);
    free(hx);
    free(hg);
    free(g[0]);
    free(g[1]);
}

/* The long-read layer's GPU copies are made on demand (sbf_engine_use_gpus_async): once the
 * index's copies are made, the layer's wait (state 2) while only the index is queried; the first
 * query on the layer starts them, answered by the CPU engine until they are made and by the GPU
 * after: the CPU engine's bits all along. Dropped while the uploader waits for that query: it
 * returns, the layer's copies gone with the index's. sbf_engine_use_gpus makes both at once. */
static void expect_same(const char *what, size_t n, int R, const uint32_t *kc, const uint32_t *hc, const uint32_t *kx,
                        const uint32_t *hx)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += kc[i] != kx[i] || memcmp(hc + i * (size_t)R, hx + i * (size_t)R, (size_t)R * sizeof *hc) != 0;
    if (bad)
        fail_msg("%s: %zu of %zu reads differ from the CPU engine", what, bad, n);
}

static void wait_state(int (*state_of)(const sbf_index_t *, double *, uint64_t *), const sbf_index_t *idx, int want,
                       double *seconds, uint64_t *cpu_reads)
{
    int st;
    const double t0 = now_s();
    while ((st = state_of(idx, seconds, cpu_reads)) == 1 && now_s() - t0 < 60)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (st != want)
        fail_msg("upload state %d, expected %d: %s", st, want, st < 0 ? sbf_last_error() : "");
}

static void test_layer_on_demand(void **state)
{
    (void)state;
    test_seed(505);
    const size_t len = 2000000, N = 20000, L = 2000;
    char *g = random_dna(len);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    o.gpu = SBF_GPU_NONE;
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(&o, &b), 0);
    assert_int_equal(sbf_builder_add_target(b, "g"), 0);
    assert_int_equal(sbf_builder_add_seq(b, 0, g, len), 0);
    if (sbf_builder_finish(b, &idx) != 0)
        fail_msg("%s", sbf_error_message());
    const sbf_index_t *ly = idx->layer;
    assert_non_null(ly);
    /* long reads: half cut from the target, half random */
    char **seqs = malloc(N * sizeof *seqs);
    size_t *lens = malloc(N * sizeof *lens);
    assert_true(seqs && lens);
    for (size_t i = 0; i < N; ++i) {
        lens[i] = L;
        seqs[i] = i & 1 ? random_dna(L) : g + test_rand() % (len - L);
    }
    const int R = ly->n_targets;
    uint32_t *kc = malloc(N * sizeof *kc), *hc = malloc(N * (size_t)R * sizeof *hc);
    uint32_t *kx = malloc(N * sizeof *kx), *hx = malloc(N * (size_t)R * sizeof *hx);
    assert_true(kc && hc && kx && hx);
    assert_int_equal(sbf_engine_query(ly, -1, N, (const char *const *)seqs, NULL, lens, kc, hc, 2, 2), 0);
    uint64_t hits = 0, kmers = 0;
    for (size_t i = 0; i < N; ++i)
        kmers += kc[i], hits += hc[i * (size_t)R];
    assert_true(hits > 0 && hits < kmers);   /* found and not found */

    double seconds, main_seconds;
    uint64_t cpu_reads;
    if (sbf_engine_use_gpus_async(idx, 1, NULL) != 0)
        fail_msg("%s", sbf_last_error());
    wait_state(sbf_engine_upload_state, idx, 0, &main_seconds, &cpu_reads);
    /* the index's queries leave the layer alone */
    assert_int_equal(sbf_engine_query(idx, 0, N, (const char *const *)seqs, NULL, lens, kx, hx, 2, 2), 0);
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    assert_int_equal(sbf_engine_layer_upload_state(idx, &seconds, &cpu_reads), 2);
    assert_false(sbf_engine_ready(ly));
    /* the first query on the layer: the CPU engine answers until its copies are made */
    memset(kx, 0xff, N * sizeof *kx);
    assert_int_equal(sbf_engine_query(ly, 0, N, (const char *const *)seqs, NULL, lens, kx, hx, 2, 2), 0);
    expect_same("layer, first query", N, R, kc, hc, kx, hx);
    wait_state(sbf_engine_layer_upload_state, idx, 0, &seconds, &cpu_reads);
    assert_true(sbf_engine_ready(ly));
    const uint64_t on_cpu = cpu_reads;
    assert_true(on_cpu <= N);
    memset(kx, 0xff, N * sizeof *kx);
    assert_int_equal(sbf_engine_query(ly, 0, N, (const char *const *)seqs, NULL, lens, kx, hx, 2, 2), 0);
    expect_same("layer on the GPU", N, R, kc, hc, kx, hx);
    assert_int_equal(sbf_engine_layer_upload_state(idx, &seconds, &cpu_reads), 0);
    assert_int_equal(cpu_reads, on_cpu);   /* the GPU answered the second query */
    print_message("layer on demand: index uploaded in %.3f s, layer when asked in %.3f s; %llu of %zu reads of the first "
                  "layer query on the CPU engine, all identical\n", main_seconds, seconds, (unsigned long long)on_cpu, N);

    /* dropped while the uploader waits for a layer query */
    if (sbf_engine_use_gpus_async(idx, 1, NULL) != 0)
        fail_msg("%s", sbf_last_error());
    wait_state(sbf_engine_upload_state, idx, 0, &seconds, &cpu_reads);
    const double t0 = now_s();
    sbf_engine_drop_gpus(idx);
    print_message("layer on demand: dropped while waiting for a layer query: %.3f s\n", now_s() - t0);
    assert_int_equal(sbf_engine_gpus(idx, NULL, 0), 0);
    assert_int_equal(sbf_engine_gpus(ly, NULL, 0), 0);
    assert_false(sbf_engine_ready(ly));

    /* at once: both */
    if (sbf_engine_use_gpus(idx, 1, NULL) != 0)
        fail_msg("%s", sbf_last_error());
    assert_true(sbf_engine_ready(idx) && sbf_engine_ready(ly));
    assert_int_equal(sbf_engine_layer_upload_state(idx, &seconds, &cpu_reads), 0);
    memset(kx, 0xff, N * sizeof *kx);
    assert_int_equal(sbf_engine_query(ly, 0, N, (const char *const *)seqs, NULL, lens, kx, hx, 2, 2), 0);
    expect_same("layer, blocking upload", N, R, kc, hc, kx, hx);

    sbf_idx_free(idx);
    for (size_t i = 1; i < N; i += 2)
        free(seqs[i]);
    free(seqs);
    free(lens);
    free(kc);
    free(hc);
    free(kx);
    free(hx);
    free(g);
}

static void test_query_identical(void **state)
{
    (void)state;
    /* small filters (4 bits per k-mer): false positives must match too */
    const sbf_opt_t sets[3] = {test_opt(31, 25, 25, 2, 4), test_opt(31, 13, 24, 2, 4), test_opt(31, 25, 25, 1, 4)};
    for (int i = 0; i < 3; ++i) {
        query_identical(&sets[i], 0);
        query_identical(&sets[i], 1);
    }
}

/* The targets of an index of plain panels only (each target its own filter at its budget), as
 * format 2 stored every index: the v10 kernel's 8 targets per launch. */
static sbf_index_t *plain_index(const sbf_opt_t *o, char *const *g, const size_t *glen, int R)
{
    sbf_params_t p = {o->k, o->m, o->s, o->hashes, o->shard_bits};
    sbf_index_t *idx = sbf_idx_new(&p);
    assert_non_null(idx);
    for (int t = 0; t < R; ++t) {
        sbf_seqbuf_t sb;
        sbf_seqbuf_init(&sb);
        assert_int_equal(sbf_seqbuf_append(&sb, sbf_nt4_ascii, (const uint8_t *)g[t], glen[t], p.k), 0);
        assert_int_equal(sbf_idx_add_target(idx, "plain", sbf_shards_for(&p, sb.kmers, o->bits_per_kmer)), t);
        assert_int_equal(sbf_build_target(idx, &idx->targets[t], sb.codes, sb.len, 2), 0);
        sbf_seqbuf_free(&sb);
    }
    return idx;
}

/* 9 targets of different sizes, at default and other parameters, in two layouts: the panels
 * sbf build forms (wide panels, targets of one and of several columns: the panel kernel for the
 * compiled sets, v6 for the others) and plain panels only (the default kernels take 8 per
 * launch: two launches, the second with one target). Reads from two of them, reverse
 * complements, random, N, IUPAC, lower case; hits of every target identical to the CPU's, from
 * ASCII and from BAM's packing. */
static void test_query_many_targets(void **state)
{
    (void)state;
    test_seed(404);
    const int quick = getenv("SBF_GPU_QUICK") != NULL, R = 9;
    const size_t N = quick ? 20000 : 200000;
    const sbf_opt_t sets[3] = {test_opt(31, 25, 25, 2, 4), test_opt(31, 13, 24, 2, 4), test_opt(31, 25, 25, 1, 4)};
    size_t glen[9];
    char *g[9];
    for (int t = 0; t < R; ++t) {
        glen[t] = 150000 + 60000 * (size_t)t;
        g[t] = random_dna(glen[t]);
    }
    for (int run = 0; run < 6; ++run) {
        const int set = run / 2, plain = run % 2;
        sbf_opt_t o = sets[set];
        sbf_builder_t *b;
        sbf_index_t *idx;
        if (plain) {
            idx = plain_index(&o, g, glen, R);
        } else {
            assert_int_equal(sbf_builder_init(&o, &b), 0);
            for (int t = 0; t < R; ++t) {
                char name[8];
                snprintf(name, sizeof name, "g%d", t);
                assert_int_equal(sbf_builder_add_target(b, name), t);
                assert_int_equal(sbf_builder_add_seq(b, t, g[t], glen[t]), 0);
            }
            assert_int_equal(sbf_builder_finish(b, &idx), 0);
        }
        int wide = 0, split = 0;
        for (int q = 0; q < idx->n_panels; ++q)
            wide += idx->panels[q].log2_width > 0;
        for (int t = 0; t < R; ++t)
            split += idx->targets[t].cols > 1;
        assert_true(plain ? wide == 0 : wide >= 1 && split >= 1);
        char *src[2] = {g[2], g[8]};
        const size_t slen[2] = {glen[2], glen[8]};
        read_set_t rs;
        make_reads(&rs, N, 1, 20000, src, slen);
        const size_t n = rs.n;
        uint32_t *kc = malloc(n * sizeof *kc), *kg = malloc(n * sizeof *kg);
        uint32_t *hc = malloc(n * R * sizeof *hc), *hg = malloc(n * R * sizeof *hg);
        assert_true(kc && kg && hc && hg);
        assert_int_equal(sbf_query(idx, n, rs.seqs, rs.lens, kc, hc, 8), 0);
        uint64_t hits[9] = {0};
        for (size_t i = 0; i < n; ++i)
            for (int t = 0; t < R; ++t)
                hits[t] += hc[i * R + (size_t)t];
        for (int t = 0; t < R; ++t)
            assert_true(hits[t] > 0);
        sbf_gpu_index_t *gi;
        if (sbf_gpu_index_upload(0, idx, &gi) != 0)
            fail_msg("%s", sbf_error_message());
        memset(kg, 0xff, n * sizeof *kg);
        memset(hg, 0xff, n * R * sizeof *hg);
        if (sbf_gpu_query(gi, n, rs.seqs, rs.lens, kg, hg) != 0)
            fail_msg("%s", sbf_error_message());
        size_t bad = count_differ("9 targets ascii", &rs, R, kc, hc, kg, hg);
        memset(kg, 0xff, n * sizeof *kg);
        memset(hg, 0xff, n * R * sizeof *hg);
        if (sbf_gpu_query_nt16(gi, n, rs.packed, rs.lens, kg, hg) != 0)
            fail_msg("%s", sbf_error_message());
        bad += count_differ("9 targets nt16", &rs, R, kc, hc, kg, hg);
        print_message("query k=%d m=%d s=%d H=%d, 9 targets in %d panels (%d wide, %d split targets): %zu reads, hits per "
                      "target %llu .. %llu: %zu differ (GPU, ASCII and nt16)\n", o.k, o.m, o.s, o.hashes, idx->n_panels,
                      wide, split, n, (unsigned long long)hits[0], (unsigned long long)hits[R - 1], bad);
        assert_int_equal(bad, 0);
        sbf_gpu_index_free(gi);
        sbf_index_destroy(idx);
        free_reads(&rs);
        free(kc);
        free(kg);
        free(hc);
        free(hg);
    }
    for (int t = 0; t < R; ++t)
        free(g[t]);
}

/* sbf_gpu_query_kmers() and sbf_query_kmers() on a GPU index give the CPU's per-k-mer answers,
 * for each of 3 targets of different sizes, at default and other parameters: sequences of
 * k - 1 to 300 kbp (pieces of the targets, their reverse complements, random, N runs, lower
 * case), around the kernel's 2048-k-mer pieces. */
static void test_kmers_identical(void **state)
{
    (void)state;
    test_seed(303);
    const sbf_opt_t sets[3] = {test_opt(31, 25, 25, 2, 4), test_opt(25, 13, 20, 3, 4), test_opt(31, 25, 25, 1, 4)};
    const size_t glen[3] = {400000, 120000, 20000};
    char *g[3] = {random_dna(glen[0]), random_dna(glen[1]), random_dna(glen[2])};
    /* each set in the panels sbf build forms (here one wide panel of the three) and in plain
     * panels (the v10 kernel's presence for the compiled sets) */
    for (int run = 0; run < 6; ++run) {
        const int set = run / 2;
        sbf_builder_t *b;
        sbf_index_t *idx;
        if (run % 2) {
            idx = plain_index(&sets[set], g, glen, 3);
        } else {
            assert_int_equal(sbf_builder_init(&sets[set], &b), 0);
            for (int t = 0; t < 3; ++t) {
                char name[8];
                snprintf(name, sizeof name, "g%d", t);
                assert_int_equal(sbf_builder_add_target(b, name), t);
                assert_int_equal(sbf_builder_add_seq(b, t, g[t], glen[t]), 0);
            }
            assert_int_equal(sbf_builder_finish(b, &idx), 0);
            assert_true(idx->panels[idx->targets[0].panel].log2_width > 0);
        }
        const size_t k = (size_t)sets[set].k;
        const size_t lens[] = {k - 1, k, k + 1, 100, 2048 + k - 1, 2048 + k, 4096 + k + 7, 65536 + 3, 300000};
        const size_t n_seqs = getenv("SBF_GPU_QUICK") ? 7 : sizeof lens / sizeof lens[0];
        sbf_gpu_index_t *gi;
        if (sbf_gpu_index_upload(0, idx, &gi) != 0)
            fail_msg("%s", sbf_error_message());
        uint64_t ones = 0, rows_all = 0;
        for (size_t q = 0; q < n_seqs; ++q) {
            const size_t len = lens[q], rows = len >= k ? len - k + 1 : 0;
            char *s = malloc(len + 1);
            for (size_t at = 0; at < len;) {   /* pieces of 50..5000 bases */
                size_t piece = 50 + test_rand() % 4951, from;
                if (piece > len - at)
                    piece = len - at;
                int t = (int)(test_rand() % 4);
                if (t < 3 && glen[t] > piece) {
                    from = test_rand() % (glen[t] - piece);
                    int rc = test_rand() % 2;
                    for (size_t j = 0; j < piece; ++j)
                        s[at + j] = rc ? complement(g[t][from + piece - 1 - j]) : g[t][from + j];
                } else {
                    for (size_t j = 0; j < piece; ++j)
                        s[at + j] = "ACGT"[test_rand() >> 62];
                }
                at += piece;
            }
            for (size_t e = 0; e < len / 1000 + 1; ++e)
                s[test_rand() % len] = "NaRc"[test_rand() % 4];
            uint8_t *cpu = malloc(rows + 1), *gpu = malloc(rows + 1);
            for (int t = 0; t < 3; ++t) {
                memset(cpu, 7, rows + 1);
                memset(gpu, 7, rows + 1);   /* all written but the byte after the row */
                assert_int_equal(sbf_query_kmers(idx, t, s, len, cpu), 0);   /* the CPU: no GPU copy yet */
                if (sbf_gpu_query_kmers(gi, t, s, len, gpu) != 0)
                    fail_msg("%s", sbf_error_message());
                assert_memory_equal(cpu, gpu, rows + 1);   /* the byte after the row untouched too */
                for (size_t j = 0; j < rows; ++j)
                    ones += cpu[j];
                rows_all += rows;
            }
            free(s);
            free(cpu);
            free(gpu);
        }
        assert_true(ones > 0 && ones < rows_all);
        assert_int_equal(sbf_gpu_query_kmers(gi, 3, "ACGT", 4, NULL), SBF_E_PARAM);
        /* the public API on the GPU, for one long sequence and every target */
        {
            const size_t len = getenv("SBF_GPU_QUICK") ? 20000 : 200000, rows = len - k + 1;
            char *s = malloc(len);
            memcpy(s, g[0] + 1000, len / 2);
            memcpy(s + len / 2, g[1] + 5000, len / 2);
            s[len / 3] = 'N';
            uint8_t *cpu = malloc(rows), *api = malloc(rows);
            if (sbf_index_use_gpu(idx, 0) != 0)
                fail_msg("%s", sbf_last_error());
            for (int t = 0; t < 3; ++t) {
                uint64_t nk, hits[3];   /* the CPU's answer, from the engine directly */
                uint8_t *all = malloc(rows * 3);
                sbf_scan_t *sc = malloc(sizeof *sc);
                sbf_query_seq(idx, sc, sbf_nt4_ascii, (const uint8_t *)s, len, &nk, hits, all);
                memcpy(cpu, all + (size_t)t * rows, rows);
                free(all);
                free(sc);
                assert_int_equal(sbf_query_kmers(idx, t, s, len, api), 0);
                assert_memory_equal(cpu, api, rows);
            }
            free(s);
            free(cpu);
            free(api);
        }
        print_message("per-k-mer presence k=%d m=%d s=%d H=%d, 3 targets: %zu sequences of %zu to %zu bases, %llu of %llu "
                      "k-mers present: identical on CPU and GPU\n",
                      sets[set].k, sets[set].m, sets[set].s, sets[set].hashes, n_seqs, lens[0], lens[n_seqs - 1],
                      (unsigned long long)ones, (unsigned long long)rows_all);
        sbf_gpu_index_free(gi);
        sbf_index_destroy(idx);
    }
    for (int t = 0; t < 3; ++t)
        free(g[t]);
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
        cmocka_unit_test(test_build_held),
        cmocka_unit_test(test_build_fallback_after_upload),
        cmocka_unit_test(test_query_identical),
        cmocka_unit_test(test_layer_on_demand),
        cmocka_unit_test(test_query_many_targets),
        cmocka_unit_test(test_kmers_identical),
    };
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
