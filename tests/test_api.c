/* test_api.c -- the public API: option checks with distinct messages, builder misuse, every
 * input format giving the same filter, bad inputs named in errors, concurrent queries. */
#include <glob.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "../filters/sbf_index.h"
#include "../plugin/sbf_engine.h"

static char *write_tmp(const char *name, const char *content)
{
    char *p = path_in_tmp(name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(fputs(content, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    return p;
}

static void expect_opt_error(sbf_opt_t o, const char *fragment)
{
    assert_int_equal(sbf_opt_check(&o), SBF_E_PARAM);
    if (!strstr(sbf_last_error(), fragment))
        fail_msg("'%s' does not mention '%s'", sbf_last_error(), fragment);
    sbf_builder_t *b = (sbf_builder_t *)0x1;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_E_PARAM);
    assert_null(b);
}

static void test_options(void **state)
{
    (void)state;
    sbf_opt_t d;
    sbf_opt_init(&d);
    assert_int_equal(sbf_opt_check(&d), SBF_OK);
    assert_int_equal(d.k, 31);
    assert_true(d.bits_per_kmer == 16.0);
    sbf_opt_t o;
    o = d; o.k = 0; expect_opt_error(o, "k=0");
    o = d; o.k = 33; expect_opt_error(o, "k=33");
    o = d; o.m = 32; expect_opt_error(o, "m=32");
    o = d; o.m = 0; expect_opt_error(o, "m=0");
    o = d; o.s = 40; expect_opt_error(o, "s=40");
    o = d; o.hashes = 0; expect_opt_error(o, "H=0");
    o = d; o.hashes = 8; expect_opt_error(o, "H=8");   /* 512-bit shards: at most 7 fields of 9 bits */
    o = d; o.shard_bits = 1024; expect_opt_error(o, "1024");
    o = d; o.bits_per_kmer = 0.1; expect_opt_error(o, "bits per k-mer");
    o = d; o.threads = 0; expect_opt_error(o, "thread");
    o = d; o.shard_bits = 256; o.hashes = 8; assert_int_equal(sbf_opt_check(&o), SBF_OK);
    o = d; o.bits_per_kmer = 0; o.size_bytes = 1 << 20; assert_int_equal(sbf_opt_check(&o), SBF_OK);
    assert_string_equal(sbf_version(), SBF_VERSION);
}

static void test_builder_misuse(void **state)
{
    (void)state;
    sbf_opt_t o;
    sbf_opt_init(&o);
    sbf_builder_t *b;
    sbf_index_t *idx = (sbf_index_t *)0x1;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_finish(b, &idx), SBF_E_PARAM);   /* no target; frees b */
    assert_null(idx);
    assert_non_null(strstr(sbf_last_error(), "no target"));

    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, ""), SBF_E_PARAM);
    assert_int_equal(sbf_builder_add_target(b, "human"), 0);
    assert_int_equal(sbf_builder_add_target(b, "human"), SBF_E_PARAM);
    assert_non_null(strstr(sbf_last_error(), "twice"));
    assert_int_equal(sbf_builder_add_seq(b, 1, "ACGT", 4), SBF_E_PARAM);
    assert_int_equal(sbf_builder_add_seq(b, 0, "ACGTNNNNACGT", 12), SBF_OK);
    assert_int_equal(sbf_builder_finish(b, &idx), SBF_E_PARAM);   /* no valid 31-mer */
    assert_non_null(strstr(sbf_last_error(), "human"));
    sbf_builder_destroy(NULL);
}

static void expect_file_error(const char *path, int code, const char *fragment)
{
    sbf_opt_t o;
    sbf_opt_init(&o);
    sbf_builder_t *b;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "x"), 0);
    int rc = sbf_builder_add_file(b, 0, path);
    if (rc != code)
        fail_msg("add_file(%s) = %d, expected %d: %s", path, rc, code, sbf_last_error());
    assert_non_null(strstr(sbf_last_error(), path));
    if (!strstr(sbf_last_error(), fragment))
        fail_msg("'%s' does not mention '%s'", sbf_last_error(), fragment);
    sbf_builder_destroy(b);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    size_t mlen = strlen(tmpdir) + 16;
    char *missing = malloc(mlen);
    snprintf(missing, mlen, "%s/missing.fa", tmpdir);
    expect_file_error(missing, SBF_E_IO, "No such file");
    char *empty = write_tmp("empty.fa", "");
    expect_file_error(empty, SBF_E_FORMAT, "no sequences");
    char *text = write_tmp("notes.txt", "hello, this is not a genome\n");
    expect_file_error(text, SBF_E_FORMAT, "not FASTA");
    char *badq = write_tmp("bad.fq", "@r1\nACGTACGT\n+\nIIII\n");
    expect_file_error(badq, SBF_E_FORMAT, "quality");
    /* gzip cut short */
    char *fa = write_tmp("cut.fa", ">a\nACGTACGTACGTACGTACGTACGTACGTACGTACGTTTGACCA\n");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && for i in $(seq 1 400); do cat cut.fa; echo $i$i$i; done | gzip -c > full.fa.gz && "
             "head -c $(( $(wc -c < full.fa.gz) / 2 )) full.fa.gz > cut.fa.gz",
             tmpdir);
    assert_int_equal(system(cmd), 0);
    size_t n = strlen(tmpdir) + 16;
    char *cut = malloc(n);
    snprintf(cut, n, "%s/cut.fa.gz", tmpdir);
    expect_file_error(cut, SBF_E_FORMAT, "truncated");
    free(missing);
    free(empty);
    free(text);
    free(badq);
    free(fa);
    free(cut);
}

/* FASTA (multi-line), FASTQ, gzip and SAM holding the same records build the same filter as
 * the sequences given in memory. */
static void test_formats_build_identical_filters(void **state)
{
    (void)state;
    test_seed(37);
    char *r1 = random_dna(700), *r2 = random_dna(450);
    size_t cap = 8192;
    char *fasta = malloc(cap), *fastq = malloc(cap), *sam = malloc(cap);
    char q1[701], q2[451];
    memset(q1, 'I', 700);
    q1[700] = 0;
    memset(q2, 'I', 450);
    q2[450] = 0;
    /* multi-line FASTA with 60 columns */
    size_t at = (size_t)snprintf(fasta, cap, ">one first record\n");
    for (size_t i = 0; i < 700; i += 60)
        at += (size_t)snprintf(fasta + at, cap - at, "%.60s\n", r1 + i);
    at += (size_t)snprintf(fasta + at, cap - at, ">two\n%s\n", r2);
    snprintf(fastq, cap, "@one\n%s\n+\n%s\n@two\n%s\n+\n%s\n", r1, q1, r2, q2);
    snprintf(sam, cap, "@HD\tVN:1.6\tSO:unsorted\none\t4\t*\t0\t0\t*\t*\t0\t0\t%s\t*\ntwo\t4\t*\t0\t0\t*\t*\t0\t0\t%s\t*\n", r1,
             r2);
    char *paths[4] = {write_tmp("x.fa", fasta), write_tmp("x.fq", fastq), write_tmp("x.sam", sam), NULL};
    char cmd[512];
    snprintf(cmd, sizeof cmd, "gzip -c '%s' > '%s.gz'", paths[1], paths[1]);
    assert_int_equal(system(cmd), 0);
    size_t n = strlen(paths[1]) + 4;
    paths[3] = malloc(n);
    snprintf(paths[3], n, "%s.gz", paths[1]);

    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    char *mem[2] = {r1, r2};
    sbf_index_t *ref = build_from_seqs(&o, mem, 2);
    for (int i = 0; i < 4; ++i) {
        sbf_builder_t *b;
        sbf_index_t *idx;
        assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
        assert_int_equal(sbf_builder_add_target(b, "t0"), 0);
        if (sbf_builder_add_file(b, 0, paths[i]) != SBF_OK)
            fail_msg("%s", sbf_last_error());
        assert_int_equal(sbf_builder_finish(b, &idx), SBF_OK);
        sbf_target_info_t ti;
        assert_int_equal(sbf_index_target(idx, 0, &ti), SBF_OK);
        assert_int_equal(ti.bases, 1150);
        assert_int_equal(ti.kmers, 700 - 30 + 450 - 30);
        assert_int_equal(ti.n_sources, 1);
        assert_string_equal(ti.sources[0], paths[i]);
        assert_int_equal(idx->targets[0].n_shards, ref->targets[0].n_shards);
        assert_memory_equal(idx->targets[0].bits, ref->targets[0].bits, ti.bytes);
        sbf_index_destroy(idx);
        free(paths[i]);
    }
    sbf_index_destroy(ref);
    free(r1);
    free(r2);
    free(fasta);
    free(fastq);
    free(sam);
}

/* A k-mer in canonical form (the smaller of it and its reverse complement), for the naive mask. */
static void canonical_kmer(const char *kmer, int k, char *out)
{
    char *rc = revcomp(kmer, (size_t)k);
    memcpy(out, strncmp(kmer, rc, (size_t)k) <= 0 ? kmer : rc, (size_t)k);
    out[k] = '\0';
    free(rc);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --mask: the masked target holds exactly the target's k-mers that the mask does not (checked
 * against a naive set of the mask's canonical k-mers and a target built from the kept k-mers as
 * records of their own), the k-mers left out are counted, a mask for one target leaves the
 * others alone, and masks and counts survive a save and a load. */
static void test_masked_target(void **state)
{
    (void)state;
    test_seed(91);
    const int k = 31;
    char *a = random_dna(6000), *other = random_dna(1500), *noise = random_dna(3000);
    /* the mask: unrelated sequence, a stretch of the target as it is, another reverse-complemented,
     * and a third with one base changed (k-mers across the change stay in the target) */
    char *rc_part = revcomp(a + 3000, 400);
    char part3[301];
    memcpy(part3, a + 5000, 300);
    part3[300] = '\0';
    part3[150] = part3[150] == 'A' ? 'C' : 'A';
    size_t mcap = 16384;
    char *mfa = malloc(mcap);
    assert_non_null(mfa);
    snprintf(mfa, mcap, ">noise\n%s\n>fwd\n%.500s\n>rev\n%s\n>snp\n%s\n", noise, a + 1000, rc_part, part3);
    char *mpath = write_tmp("mask.fa", mfa);

    /* the naive answer: the mask's canonical k-mers, sorted; the target's k-mers kept or counted */
    const char *mrec[4] = {noise, a + 1000, rc_part, part3};
    const size_t mlen[4] = {3000, 500, 400, 300};
    size_t n_mask = 0;
    char **mk = malloc(8000 * sizeof *mk);
    assert_non_null(mk);
    for (int r = 0; r < 4; ++r)
        for (size_t i = 0; i + (size_t)k <= mlen[r]; ++i) {
            mk[n_mask] = malloc((size_t)k + 1);
            assert_non_null(mk[n_mask]);
            canonical_kmer(mrec[r] + i, k, mk[n_mask++]);
        }
    qsort(mk, n_mask, sizeof *mk, cmp_str);
    char **kept = malloc(6000 * sizeof *kept);
    assert_non_null(kept);
    size_t n_kept = 0, n_masked = 0;
    for (size_t i = 0; i + (size_t)k <= 6000; ++i) {
        char key[32], *pk = key;
        canonical_kmer(a + i, k, key);
        if (bsearch(&pk, mk, n_mask, sizeof *mk, cmp_str)) {
            ++n_masked;
            continue;
        }
        kept[n_kept] = strndup(a + i, (size_t)k);
        assert_non_null(kept[n_kept++]);
    }
    assert_int_equal(n_masked, 470 + 370 + 120 + 119);   /* two stretches, and the snp part on each side of the change */

    sbf_opt_t o = test_opt(k, 25, 25, 2, 16);
    o.size_bytes = 16384;   /* a masked target is sized for its k-mers before masking: the same size here */
    sbf_builder_t *b;
    sbf_index_t *idx, *ref = build_from_seqs(&o, kept, n_kept);
    /* a mask of every target, one target: the bits of the kept k-mers */
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "host"), 0);
    assert_int_equal(sbf_builder_add_seq(b, 0, a, 6000), SBF_OK);
    if (sbf_builder_add_mask(b, SBF_EVERY_TARGET, mpath) != SBF_OK)
        fail_msg("%s", sbf_last_error());
    assert_int_equal(sbf_builder_finish(b, &idx), SBF_OK);
    sbf_target_info_t ti;
    int n_masks = -1;
    const char *const *masks = NULL;
    uint64_t masked = 0;
    assert_int_equal(sbf_index_target(idx, 0, &ti), SBF_OK);
    assert_int_equal(ti.kmers, n_kept);
    assert_int_equal(ti.bases, 6000);
    assert_int_equal(sbf_index_target_masks(idx, 0, &n_masks, &masks, &masked), SBF_OK);
    assert_int_equal(n_masks, 1);
    assert_string_equal(masks[0], mpath);
    assert_int_equal(masked, n_masked);
    assert_int_equal(idx->targets[0].n_shards, ref->targets[0].n_shards);
    assert_memory_equal(idx->targets[0].bits, ref->targets[0].bits, sbf_target_bytes(ref, &ref->targets[0]));

    /* a mask of one target: the other keeps the stretch it shares with the mask */
    sbf_index_t *two;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "host"), 0);
    assert_int_equal(sbf_builder_add_target(b, "other"), 1);
    assert_int_equal(sbf_builder_add_seq(b, 0, a, 6000), SBF_OK);
    assert_int_equal(sbf_builder_add_seq(b, 1, other, 1500), SBF_OK);
    assert_int_equal(sbf_builder_add_seq(b, 1, a + 1000, 500), SBF_OK);   /* shared with the mask */
    assert_int_equal(sbf_builder_add_mask(b, 2, mpath), SBF_E_PARAM);     /* no target 2 */
    if (sbf_builder_add_mask(b, 0, mpath) != SBF_OK)
        fail_msg("%s", sbf_last_error());
    assert_int_equal(sbf_builder_finish(b, &two), SBF_OK);
    assert_int_equal(sbf_index_target_masks(two, 0, &n_masks, NULL, &masked), SBF_OK);
    assert_int_equal(n_masks, 1);
    assert_int_equal(masked, n_masked);
    assert_int_equal(sbf_index_target_masks(two, 1, &n_masks, NULL, &masked), SBF_OK);
    assert_int_equal(n_masks, 0);
    assert_int_equal(masked, 0);
    const char *q[2] = {a + 1000, a};
    size_t ql[2] = {500, 1000};
    uint32_t qk[2], qh[4];
    assert_int_equal(sbf_query(two, 2, q, ql, qk, qh, 1), SBF_OK);
    assert_true(qh[0] <= 1);                 /* 470 k-mers masked: at most a chance hit */
    assert_int_equal(qh[1], 500 - 30);       /* in the other target, unmasked */
    assert_int_equal(qh[2], 1000 - 30);      /* the host outside the mask: every k-mer */
    sbf_index_destroy(two);

    /* saved and loaded: the masks and the count are in the file (format 4) */
    char *ipath = path_in_tmp("masked.sbf");
    assert_int_equal(sbf_index_save(idx, ipath), SBF_OK);
    sbf_index_t *back;
    assert_int_equal(sbf_index_load(ipath, 0, &back), SBF_OK);
    assert_int_equal(sbf_index_target_masks(back, 0, &n_masks, &masks, &masked), SBF_OK);
    assert_int_equal(n_masks, 1);
    assert_string_equal(masks[0], mpath);
    assert_int_equal(masked, n_masked);
    assert_int_equal(sbf_index_target_masks(back, 2, NULL, NULL, NULL), SBF_E_PARAM);
    sbf_index_destroy(back);

    /* a target the mask covers whole is refused, naming it; so is a mask with no k-mer */
    char *whole = write_tmp("whole.fa", ">w\n");
    FILE *f = fopen(whole, "a");
    assert_non_null(f);
    assert_true(fprintf(f, "%s\n", a) > 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "host"), 0);
    assert_int_equal(sbf_builder_add_seq(b, 0, a, 6000), SBF_OK);
    assert_int_equal(sbf_builder_add_mask(b, SBF_EVERY_TARGET, whole), SBF_OK);
    assert_int_equal(sbf_builder_finish(b, &back), SBF_E_PARAM);
    assert_null(back);
    if (!strstr(sbf_last_error(), "target 'host' has no 21-mer its masks do not hold (5980 left out)"))
        fail_msg("message: %s", sbf_last_error());
    char *short_fa = write_tmp("short.fa", ">s\nACGTACGT\n");
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "host"), 0);
    assert_int_equal(sbf_builder_add_mask(b, SBF_EVERY_TARGET, short_fa), SBF_E_PARAM);
    if (!strstr(sbf_last_error(), "has no valid 31-mer"))
        fail_msg("message: %s", sbf_last_error());
    sbf_builder_destroy(b);

    sbf_index_destroy(idx);
    sbf_index_destroy(ref);
    for (size_t i = 0; i < n_mask; ++i)
        free(mk[i]);
    for (size_t i = 0; i < n_kept; ++i)
        free(kept[i]);
    free(mk);
    free(kept);
    free(a);
    free(other);
    free(noise);
    free(rc_part);
    free(mfa);
    free(mpath);
    free(ipath);
    free(whole);
    free(short_fa);
}

/* DUST's measure of a k-mer, naively: over its k-2 trinucleotides, the pairs of equal ones. */
static unsigned naive_dust(const char *km, int k)
{
    unsigned score = 0;
    for (int i = 0; i + 3 <= k; ++i)
        for (int j = 0; j < i; ++j)
            score += !strncmp(km + i, km + j, 3);
    return score;
}

/* Low-complexity k-mers (sbf_builder_dust): the default leaves out of the index every k-mer of a
 * DUST score of 50 or more, exactly those (the bits are a build of the other k-mers), counts them
 * and names the threshold among the target's masks; 0 keeps all; another threshold is obeyed. */
static void test_dust_target(void **state)
{
    (void)state;
    test_seed(93);
    const int k = 31;
    char *left = random_dna(3000), *right = random_dna(2000), seq[6000];
    /* an A-rich stretch with errors in it, an (AT)n run with one error: a host's near-repeats */
    char arich[241], at[121];
    for (int i = 0; i < 240; ++i)
        arich[i] = i % 9 == 8 ? "CGT"[i % 3] : 'A';
    arich[240] = 0;
    for (int i = 0; i < 120; ++i)
        at[i] = i == 60 ? 'G' : "AT"[i & 1];
    at[120] = 0;
    snprintf(seq, sizeof seq, "%s%s%s%s", left, arich, at, right);
    const size_t len = strlen(seq);
    for (unsigned min = 20; min <= 50; min += 30) {
        char **kept = malloc(len * sizeof *kept);
        assert_non_null(kept);
        size_t n_kept = 0, n_dust = 0;
        for (size_t i = 0; i + (size_t)k <= len; ++i) {
            if (naive_dust(seq + i, k) >= min) {
                ++n_dust;
                continue;
            }
            kept[n_kept] = strndup(seq + i, (size_t)k);
            assert_non_null(kept[n_kept++]);
        }
        assert_true(n_dust >= 200 && n_kept >= 4900);   /* the stretches, not the random DNA */
        sbf_opt_t o = test_opt(k, 25, 25, 2, 16);
        o.size_bytes = 16384;
        sbf_index_t *ref = build_from_seqs(&o, kept, n_kept), *idx;
        sbf_builder_t *b;
        assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
        if (min != SBF_DEFAULT_DUST)   /* the default needs no call */
            assert_int_equal(sbf_builder_dust(b, min), SBF_OK);
        assert_int_equal(sbf_builder_add_target(b, "host"), 0);
        assert_int_equal(sbf_builder_add_seq(b, 0, seq, len), SBF_OK);
        assert_int_equal(sbf_builder_finish(b, &idx), SBF_OK);
        int n_masks = -1;
        const char *const *masks = NULL;
        uint64_t masked = 0;
        char label[64];
        snprintf(label, sizeof label, "(low complexity: DUST >= %u)", min);
        assert_int_equal(sbf_index_target_masks(idx, 0, &n_masks, &masks, &masked), SBF_OK);
        assert_int_equal(n_masks, 1);
        assert_string_equal(masks[0], label);
        assert_int_equal(masked, n_dust);
        assert_int_equal(idx->targets[0].kmers, n_kept);
        assert_memory_equal(idx->targets[0].bits, ref->targets[0].bits, sbf_target_bytes(ref, &ref->targets[0]));
        sbf_index_destroy(idx);
        sbf_index_destroy(ref);
        for (size_t i = 0; i < n_kept; ++i)
            free(kept[i]);
        free(kept);
    }
    /* 0: every k-mer, no mask */
    sbf_opt_t o = test_opt(k, 25, 25, 2, 16);
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "host"), 0);
    assert_int_equal(sbf_builder_add_seq(b, 0, seq, len), SBF_OK);
    assert_int_equal(sbf_builder_finish(b, &idx), SBF_OK);
    int n_masks = -1;
    uint64_t masked = 1;
    assert_int_equal(sbf_index_target_masks(idx, 0, &n_masks, NULL, &masked), SBF_OK);
    assert_int_equal(n_masks, 0);
    assert_int_equal(masked, 0);
    assert_int_equal(idx->targets[0].kmers, len - (size_t)k + 1);
    sbf_index_destroy(idx);
    free(left);
    free(right);
}

typedef struct {
    const sbf_index_t *idx;
    int n;
    const char **seqs;
    size_t *lens;
    uint32_t *kmers, *hits;
    int rc;
} query_arg_t;

static void *query_thread(void *p)
{
    query_arg_t *a = p;
    a->rc = sbf_query(a->idx, (size_t)a->n, a->seqs, a->lens, a->kmers, a->hits, 2);
    return NULL;
}

/* A screening run's worker: its query owed 1 helper, and up to 7 when others' threads idle;
 * between queries it does other work (as a worker scores and formats its batch). */
static void *shared_query_thread(void *p)
{
    query_arg_t *a = p;
    for (int round = 0; round < 3 && a->rc == SBF_OK; ++round) {
        a->rc = sbf_engine_query(a->idx, -1, (size_t)a->n, a->seqs, NULL, a->lens, a->kmers, a->hits, 2, 8);
        nanosleep(&(struct timespec){0, 1000000L * (1 + round)}, NULL);
    }
    return NULL;
}

/* fn on T threads at once, each with its args[t] (outputs cleared first): each must succeed with
 * the answers k0 and h0 (a->n reads). */
static void run_query_threads(void *(*fn)(void *), query_arg_t *args, int T, const uint32_t *k0, const uint32_t *h0)
{
    pthread_t tid[16];
    assert_true(T <= 16);
    for (int t = 0; t < T; ++t) {
        args[t].rc = SBF_OK;
        memset(args[t].kmers, 0xff, (size_t)args[t].n * 4);
        memset(args[t].hits, 0xff, (size_t)args[t].n * 4);
        assert_int_equal(pthread_create(&tid[t], NULL, fn, &args[t]), 0);
    }
    for (int t = 0; t < T; ++t) {
        assert_int_equal(pthread_join(tid[t], NULL), 0);
        assert_int_equal(args[t].rc, SBF_OK);
        assert_memory_equal(args[t].kmers, k0, (size_t)args[t].n * 4);
        assert_memory_equal(args[t].hits, h0, (size_t)args[t].n * 4);
    }
}

static void test_concurrent_queries(void **state)
{
    (void)state;
    test_seed(41);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 4);
    char *ref = random_dna(100000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    enum { N = 5000, T = 4 };
    char *pool = random_dna(N * 100);
    const char **seqs = malloc(N * sizeof *seqs);
    size_t *lens = malloc(N * sizeof *lens);
    for (int i = 0; i < N; ++i) {
        seqs[i] = i % 3 ? pool + (size_t)i * 100 : ref + test_rand() % (100000 - 100);
        lens[i] = 100;
    }
    uint32_t *k0 = malloc(N * 4), *h0 = malloc(N * 4);
    assert_int_equal(sbf_query(idx, N, seqs, lens, k0, h0, 1), SBF_OK);
    query_arg_t args[T];
    for (int t = 0; t < T; ++t)
        args[t] = (query_arg_t){idx, N, seqs, lens, malloc(N * 4), malloc(N * 4), -99};
    run_query_threads(query_thread, args, T, k0, h0);
    /* queries that share the engine's helpers (sbf_engine.c's board): the same answers, and a
     * query alone, owed no helper but allowed 7, gets the idle helpers the others left */
    run_query_threads(shared_query_thread, args, T, k0, h0);
    uint64_t helped, lent, helped2, lent2;
    sbf_engine_helper_blocks(&helped, &lent);
    /* (the helpers must wake before the caller has taken every block: on a loaded machine a
     * query may end first, so it is asked again, up to 50 times) */
    int tries = 0;
    do {
        memset(args[0].kmers, 0xff, N * 4);
        assert_int_equal(sbf_engine_query(idx, -1, N, seqs, NULL, lens, args[0].kmers, args[0].hits, 1, 8), SBF_OK);
        assert_memory_equal(args[0].kmers, k0, N * 4);
        assert_memory_equal(args[0].hits, h0, N * 4);
        sbf_engine_helper_blocks(&helped2, &lent2);
    } while (lent2 == lent && ++tries < 50);
    assert_true(lent2 > lent && helped2 - helped >= lent2 - lent);
    for (int t = 0; t < T; ++t) {
        free(args[t].kmers);
        free(args[t].hits);
    }
    free(k0);
    free(h0);
    free(seqs);
    free(lens);
    free(pool);
    free(ref);
    sbf_index_destroy(idx);
}

/* sbf_classify: reads of a target are that target, random reads none, a read without k-mers
 * no k-mer; a pair's category comes from both mates' k-mers; bad options are refused. */
/* A copy of seq with each base replaced by another with probability per_mille / 1000. */
static char *noisy_copy(const char *seq, size_t len, unsigned per_mille)
{
    char *r = malloc(len + 1);
    assert_non_null(r);
    memcpy(r, seq, len);
    r[len] = '\0';
    for (size_t i = 0; i < len; ++i)
        if (test_rand() % 1000 < per_mille)
            r[i] = "ACGT"[(strchr("ACGT", r[i]) - "ACGT" + 1 + (int)(test_rand() % 3)) % 4];
    return r;
}

/* The long-read layer through the API: built by default (k 21), none on request, refused for a k
 * it cannot have; sbf_classify() screens reads of 1,000+ bases with it (noisy reads with about 1
 * error-free 31-mer in 2,000 keep one 21-mer in 200: each assigned to its genome, with more hits
 * than the index without the layer gives them, which assigns few), and its answers do not depend
 * on threads. */
static void test_long_layer_api(void **state)
{
    (void)state;
    test_seed(59);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 16);
    char *g[2] = {random_dna(120000), random_dna(120000)};
    sbf_builder_t *b;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    assert_int_equal(sbf_builder_long_layer(b, 31), SBF_E_PARAM);
    if (!strstr(sbf_last_error(), "must be 7 to 30"))
        fail_msg("message: %s", sbf_last_error());
    assert_int_equal(sbf_builder_long_layer(b, 0), SBF_OK);
    assert_int_equal(sbf_builder_add_target(b, "a"), 0);
    assert_int_equal(sbf_builder_add_target(b, "b"), 1);
    assert_int_equal(sbf_builder_add_seq(b, 0, g[0], 120000), SBF_OK);
    assert_int_equal(sbf_builder_add_seq(b, 1, g[1], 120000), SBF_OK);
    sbf_index_t *flat, *idx = build_targets(&o, g, 2);
    assert_int_equal(sbf_builder_finish(b, &flat), SBF_OK);
    assert_null(sbf_index_long_layer(flat));
    const sbf_index_t *ly = sbf_index_long_layer(idx);
    assert_non_null(ly);
    sbf_opt_t lo;
    sbf_index_params(ly, &lo);
    assert_true(lo.k == 21 && lo.m == 15 && lo.s == 15 && lo.bits_per_kmer == 8);
    assert_int_equal(sbf_index_n_targets(ly), 2);
    double chance = -1;
    assert_int_equal(sbf_index_target_chance(ly, 0, &chance), SBF_OK);
    assert_true(chance >= 0 && chance < 1e-3);   /* random sequence: about the filter's false positives */
    assert_int_equal(sbf_index_target_chance(ly, 2, &chance), SBF_E_PARAM);

    enum { N = 12 };
    const char *seqs[N];
    size_t lens[N];
    char *noisy[N];
    for (int i = 0; i < N; ++i) {   /* 8 kbp, 22% of the bases changed */
        noisy[i] = noisy_copy(g[i % 2] + 9000 * (size_t)i, 8000, 220);
        seqs[i] = noisy[i];
        lens[i] = 8000;
    }
    sbf_classify_opt_t co;
    sbf_classify_opt_init(&co);
    int cat[N], cat3[N];
    float score[N], score3[N];
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, NULL, NULL, cat, score, 1), SBF_OK);
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, NULL, NULL, cat3, score3, 3), SBF_OK);
    int catf[N], assigned_flat = 0;
    float scoref[N];
    assert_int_equal(sbf_classify(flat, &co, N, seqs, lens, NULL, NULL, catf, scoref, 1), SBF_OK);
    uint32_t kmers[N], hits[2 * N], kflat[N], hflat[2 * N];
    assert_int_equal(sbf_query(ly, N, seqs, lens, kmers, hits, 1), SBF_OK);
    assert_int_equal(sbf_query(flat, N, seqs, lens, kflat, hflat, 1), SBF_OK);
    for (int i = 0; i < N; ++i) {
        assert_int_equal(cat[i], i % 2);
        assert_int_equal(cat3[i], cat[i]);
        assert_true(score3[i] == score[i]);
        assert_int_equal(kmers[i], 8000 - 20);
        assert_true(hits[2 * i + i % 2] > 2 * hflat[2 * i + i % 2] + 10);
        if (!(score[i] > scoref[i]))   /* classified on the layer's hits, not the 31-mers' */
            fail_msg("read %d: score %g with the layer, %g without (hits %u, %u)", i, score[i], scoref[i],
                     hits[2 * i + i % 2], hflat[2 * i + i % 2]);
        assigned_flat += catf[i] == i % 2;
    }
    if (assigned_flat > N / 2)
        fail_msg("%d of %d reads assigned without the layer: the test reads are not noisy enough", assigned_flat, N);
    /* the layer's rule counts a target's measured chance rate: where a genome's own 21-mers turn
     * up in 1% of unrelated reads' k-mers, 40-odd hits in 8,000 are no evidence */
    idx->layer->targets[0].chance = idx->layer->targets[1].chance = 0.01;
    double fpr[2], clump[2];
    assert_int_equal(sbf_engine_layer_chance(idx, fpr, clump), SBF_OK);
    assert_true(fpr[0] == 0.01 && fpr[1] == 0.01);
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, NULL, NULL, cat, score, 1), SBF_OK);
    for (int i = 0; i < N; ++i)
        if (cat[i] != SBF_CAT_NONE)
            fail_msg("read %d: category %d with a chance rate of 1%% (%u hits)", i, cat[i], hits[2 * i + i % 2]);
    for (int i = 0; i < N; ++i)
        free(noisy[i]);
    sbf_index_destroy(idx);
    sbf_index_destroy(flat);
    free(g[0]);
    free(g[1]);
}

/* sbf_builder_output: each finished panel written into the output and mapped back (every panel
 * of the index and of its layer, before sbf_index_save), the index answering as one built in
 * memory; saved there, elsewhere or not at all, the same bytes and no file left behind; an
 * output that cannot be written fails the build before it starts. */
static sbf_index_t *build_for_output(const sbf_opt_t *o, char **g, const size_t *len, int n, const char *output)
{
    sbf_builder_t *b;
    sbf_index_t *idx = NULL;
    assert_int_equal(sbf_builder_init(o, &b), SBF_OK);
    assert_int_equal(sbf_builder_output(b, output), SBF_OK);
    for (int t = 0; t < n; ++t) {
        char name[16];
        snprintf(name, sizeof name, "t%d", t);
        assert_int_equal(sbf_builder_add_target(b, name), t);
        assert_int_equal(sbf_builder_add_seq(b, t, g[t], len[t]), SBF_OK);
    }
    return sbf_builder_finish(b, &idx) == SBF_OK ? idx : NULL;
}

static int temp_files_of(const char *path)
{
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s.tmp.*", path);
    glob_t gl;
    int n = glob(pattern, 0, NULL, &gl) == 0 ? (int)gl.gl_pathc : 0;
    globfree(&gl);
    return n;
}

static int all_spilled(const sbf_index_t *idx)
{
    for (const sbf_index_t *x = idx; x; x = x->layer)
        for (int q = 0; q < x->n_panels; ++q)
            if (!x->panels[q].spill_map)
                return 0;
    return 1;
}

/* One index built with and without an output, n targets of len[t] bases; returns the bytes of
 * the one built in memory (*ref_len) for the caller's further builds of the same targets. */
static uint8_t *output_same_index(const sbf_opt_t *o, char **g, const size_t *len, int n, size_t *ref_len)
{
    char *ref_path = path_in_tmp("ref.sbf"), *out = path_in_tmp("out.sbf");
    struct stat st;
    sbf_index_t *ref = build_for_output(o, g, len, n, NULL);
    assert_non_null(ref);
    assert_false(all_spilled(ref));
    assert_int_equal(sbf_index_save(ref, ref_path), SBF_OK);
    size_t got_len;
    uint8_t *ref_bytes = slurp(ref_path, ref_len);

    sbf_index_t *idx = build_for_output(o, g, len, n, out);
    if (!idx)
        fail_msg("build failed: %s", sbf_last_error());
    assert_non_null(idx->layer);
    if (!all_spilled(idx))
        fail_msg("a finished panel stayed in memory");
    assert_int_equal(stat(out, &st), -1);   /* nothing at the output before it is saved */
    assert_int_equal(temp_files_of(out), 1);
    /* the mapped-back filters answer as the ones built in memory, both layers */
    enum { R = 9 };
    const char *seqs[R];
    size_t lens[R];
    for (int i = 0; i < R; ++i) {
        lens[i] = i < 6 ? 150 : 3000;
        seqs[i] = g[i % n] + 1000 * (size_t)i;
    }
    uint32_t k1[R], h1[R * 3], k2[R], h2[R * 3];
    assert_int_equal(sbf_query(ref, R, seqs, lens, k1, h1, 1), SBF_OK);
    assert_int_equal(sbf_query(idx, R, seqs, lens, k2, h2, 1), SBF_OK);
    assert_memory_equal(h1, h2, (size_t)(R * n) * sizeof *h1);
    assert_int_equal(sbf_query(sbf_index_long_layer(ref), R, seqs, lens, k1, h1, 1), SBF_OK);
    assert_int_equal(sbf_query(sbf_index_long_layer(idx), R, seqs, lens, k2, h2, 1), SBF_OK);
    assert_memory_equal(h1, h2, (size_t)(R * n) * sizeof *h1);
    for (int i = 0; i < R; ++i)   /* its own target's k-mers (nearly all: masks) read back, not zeros */
        if (!(k2[i] > 0 && 10 * (uint64_t)h2[i * n + i % n] >= 9 * (uint64_t)k2[i]))
            fail_msg("read %d: %u of %u k-mers of its own target in the layer", i, h2[i * n + i % n], k2[i]);
    assert_int_equal(sbf_index_save(idx, out), SBF_OK);
    uint8_t *got = slurp(out, &got_len);
    assert_true(got_len == *ref_len && memcmp(got, ref_bytes, *ref_len) == 0);
    free(got);
    assert_true(sbf_index_checksum(idx) == sbf_index_checksum(ref));
    sbf_index_destroy(idx);
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(temp_files_of(out), 0);
    assert_int_equal(unlink(out), 0);   /* the next call's build finds no output there */
    sbf_index_destroy(ref);
    free(ref_path);
    free(out);
    return ref_bytes;
}

static void test_builder_output(void **state)
{
    (void)state;
    test_seed(61);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 16);
    enum { N = 3 };
    size_t len[N] = {150000, 40000, 45000};
    char *g[N];
    for (int t = 0; t < N; ++t)
        g[t] = random_dna(len[t]);
    char *other = path_in_tmp("other.sbf"), *unsaved = path_in_tmp("unsaved.sbf");
    char *bad = path_in_tmp("no/such/folder/x.sbf");
    struct stat st;
    size_t ref_len, got_len;
    free(output_same_index(&o, g, len, 1, &ref_len));   /* one target: a plain panel */
    uint8_t *ref_bytes = output_same_index(&o, g, len, N, &ref_len);   /* a wide one */

    /* saved elsewhere: the same bytes there, nothing at the output named */
    sbf_index_t *idx = build_for_output(&o, g, len, N, unsaved);
    assert_non_null(idx);
    int wide = 0;
    for (int q = 0; q < idx->n_panels; ++q)
        wide += idx->panels[q].n_members > 1;
    assert_true(wide > 0);
    assert_int_equal(sbf_index_save(idx, other), SBF_OK);
    uint8_t *got = slurp(other, &got_len);
    assert_true(got_len == ref_len && memcmp(got, ref_bytes, ref_len) == 0);
    free(got);
    sbf_index_destroy(idx);
    assert_int_equal(stat(unsaved, &st), -1);
    assert_int_equal(temp_files_of(unsaved), 0);

    /* not saved: nothing left */
    idx = build_for_output(&o, g, len, N, unsaved);
    assert_non_null(idx);
    assert_int_equal(temp_files_of(unsaved), 1);
    sbf_index_destroy(idx);
    assert_int_equal(stat(unsaved, &st), -1);
    assert_int_equal(temp_files_of(unsaved), 0);

    /* an output that cannot be written: the build fails first, naming it */
    assert_null(build_for_output(&o, g, len, N, bad));
    if (!strstr(sbf_last_error(), "no/such/folder/x.sbf"))
        fail_msg("message: %s", sbf_last_error());

    free(ref_bytes);
    for (int t = 0; t < N; ++t)
        free(g[t]);
    free(other);
    free(unsaved);
    free(bad);
}

static void test_classify_api(void **state)
{
    (void)state;
    test_seed(43);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 16);
    char *ref = random_dna(50000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    enum { N = 300 };
    char *pool = random_dna(N * 100);
    const char *seqs[N], *mates[N];
    char *rc[N];
    size_t lens[N], mlens[N];
    for (int i = 0; i < N; ++i) {
        int from_ref = i % 3 != 0;
        seqs[i] = from_ref ? ref + test_rand() % (50000 - 100) : pool + (size_t)i * 100;
        lens[i] = i == N - 1 ? 20 : 100;   /* the last one is shorter than k */
        rc[i] = revcomp(ref + test_rand() % (50000 - 100), 100);   /* every mate 2 from the reference */
        mates[i] = rc[i];
        mlens[i] = 100;
    }
    sbf_classify_opt_t co;
    sbf_classify_opt_init(&co);
    assert_true(co.min_score == SBF_DEFAULT_MIN_SCORE && co.min_hits == SBF_DEFAULT_MIN_HITS &&
                co.margin == SBF_DEFAULT_MARGIN && co.min_fraction == 0 && co.mask_lowcomp == SBF_DEFAULT_MASK_LOWCOMP);
    int cat[N];
    float score[N], full = 0;
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, NULL, NULL, cat, score, 2), SBF_OK);
    for (int i = 0; i < N - 1; ++i) {
        assert_int_equal(cat[i], i % 3 != 0 ? 0 : SBF_CAT_NONE);
        if (i % 3 != 0) {   /* every reference read: 70 of 70 k-mers, the same score */
            assert_true(score[i] > 10 && (full == 0 || score[i] == full));
            full = score[i];
        } else {
            assert_true(score[i] < co.min_score);
        }
    }
    assert_int_equal(cat[N - 1], SBF_CAT_NO_KMER);
    /* pairs: a random mate 1 with a reference mate 2 has half its k-mers in the target: still
     * the target, with a lower score than a whole reference pair */
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, mates, mlens, cat, score, 1), SBF_OK);
    for (int i = 0; i < N - 1; ++i) {   /* 140 of 140 k-mers: 70 hits more than a read alone */
        assert_int_equal(cat[i], 0);
        assert_true(i % 3 != 0 ? score[i] > full + 10 : score[i] > 10 && score[i] < full + 1);
    }
    /* a poly-G read is masked: no k-mer, whatever the filter holds */
    char polyg[100];
    memset(polyg, 'G', sizeof polyg);
    const char *pg[1] = {polyg};
    size_t pglen[1] = {sizeof polyg};
    assert_int_equal(sbf_classify(idx, &co, 1, pg, pglen, NULL, NULL, cat, NULL, 1), SBF_OK);
    assert_int_equal(cat[0], SBF_CAT_NO_KMER);
    co.min_fraction = 0.6;   /* now a half-random pair is none */
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, mates, mlens, cat, NULL, 1), SBF_OK);
    assert_int_equal(cat[0], SBF_CAT_NONE);
    assert_int_equal(cat[1], 0);
    co.min_hits = 0;
    assert_int_equal(sbf_classify(idx, &co, N, seqs, lens, NULL, NULL, cat, NULL, 1), SBF_E_PARAM);
    assert_non_null(strstr(sbf_last_error(), "min_hits"));
    for (int i = 0; i < N; ++i)
        free(rc[i]);
    free(pool);
    free(ref);
    sbf_index_destroy(idx);
}

static void *fail_in_thread(void *p)
{
    (void)p;
    sbf_opt_t o;
    sbf_opt_init(&o);
    o.k = 99;
    return (void *)(intptr_t)sbf_opt_check(&o);
}

static void test_last_error_is_per_thread(void **state)
{
    (void)state;
    sbf_opt_t o;
    sbf_opt_init(&o);
    o.m = 0;
    assert_int_equal(sbf_opt_check(&o), SBF_E_PARAM);
    pthread_t t;
    void *ret;
    assert_int_equal(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_int_equal((intptr_t)ret, SBF_E_PARAM);
    assert_non_null(strstr(sbf_last_error(), "m=0"));   /* not the other thread's "k=99" */
}

static void test_size_option(void **state)
{
    (void)state;
    test_seed(43);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    o.size_bytes = 100000;   /* rounded up to whole 64-byte shards */
    char *ref = random_dna(3000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    sbf_target_info_t ti;
    assert_int_equal(sbf_index_target(idx, 0, &ti), SBF_OK);
    assert_int_equal(ti.bytes, 100032);
    assert_int_equal(sbf_index_target(idx, 1, &ti), SBF_E_PARAM);
    sbf_opt_t back;
    sbf_index_params(idx, &back);
    assert_int_equal(back.k, 31);
    assert_int_equal(back.m, 21);
    assert_true(back.bits_per_kmer == 0);   /* sized by --size, not by a rate */
    sbf_index_destroy(idx);
    free(ref);
}

/* Where each target's filter lies (sbf_index_target_panel): with --size every target gets
 * exactly that size, so equal targets share panels only in powers of two (3 targets: a wide
 * panel of 2 and a filter of its own), and each keeps the size asked for. */
static void test_target_panel(void **state)
{
    (void)state;
    test_seed(44);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 16);
    o.size_bytes = 64 * 100;
    char *refs[3] = {random_dna(3000), random_dna(2000), random_dna(4000)};
    sbf_index_t *idx = build_targets(&o, refs, 3);
    int panel[3], cols[3], width[3];
    for (int t = 0; t < 3; ++t) {
        sbf_target_info_t ti;
        assert_int_equal(sbf_index_target(idx, t, &ti), SBF_OK);
        assert_int_equal(ti.bytes, 6400);   /* --size exactly, in a panel or not */
        assert_int_equal(sbf_index_target_panel(idx, t, &panel[t], &cols[t], &width[t]), SBF_OK);
        assert_int_equal(cols[t], 1);
    }
    assert_true(panel[0] == 1 && panel[1] == 1 && width[0] == 2 && width[1] == 2);
    assert_true(panel[2] == 2 && width[2] == 1);
    assert_int_equal(sbf_index_target_panel(idx, 0, NULL, NULL, NULL), SBF_OK);
    assert_int_equal(sbf_index_target_panel(idx, 3, &panel[0], NULL, NULL), SBF_E_PARAM);
    assert_non_null(strstr(sbf_last_error(), "no target number 3"));
    sbf_index_destroy(idx);
    for (int t = 0; t < 3; ++t)
        free(refs[t]);
}

/* Without a usable GPU (CI): asking for one fails with a clear message and changes nothing;
 * with one, queries on it give the CPU's answers. */
static void test_gpu_selection(void **state)
{
    (void)state;
    test_seed(47);
    sbf_opt_t o = test_opt(31, 25, 25, 2, 4);
    o.gpu = SBF_GPU_NONE;
    char *ref = random_dna(20000);
    sbf_index_t *idx = build_from_seqs(&o, &ref, 1);
    assert_int_equal(sbf_index_gpu(idx), SBF_GPU_NONE);
    const char *q = ref + 100;
    size_t len = 500;
    uint32_t k_cpu, h_cpu, k_gpu, h_gpu;
    assert_int_equal(sbf_query(idx, 1, &q, &len, &k_cpu, &h_cpu, 1), SBF_OK);
    if (sbf_gpu_devices() == 0) {
        assert_int_equal(sbf_index_use_gpu(idx, SBF_GPU_AUTO), SBF_E_PARAM);
        assert_non_null(strstr(sbf_last_error(), "no CUDA device"));
        assert_int_equal(sbf_index_gpu(idx), SBF_GPU_NONE);
        assert_int_equal(sbf_index_use_gpus(idx, 2, NULL), SBF_E_PARAM);
        assert_non_null(strstr(sbf_last_error(), "no CUDA device"));
        assert_int_equal(sbf_index_gpus(idx, NULL, 0), 0);
    } else {
        assert_int_equal(sbf_index_use_gpu(idx, 0), SBF_OK);
        assert_int_equal(sbf_index_gpu(idx), 0);
        assert_int_equal(sbf_index_use_gpu(idx, sbf_gpu_devices()), SBF_E_PARAM);
    }
    assert_int_equal(sbf_query(idx, 1, &q, &len, &k_gpu, &h_gpu, 1), SBF_OK);
    assert_int_equal(k_gpu, k_cpu);
    assert_int_equal(h_gpu, h_cpu);
    assert_int_equal(k_cpu, 470);
    assert_int_equal(h_cpu, 470);
    assert_int_equal(sbf_index_use_gpus(idx, 0, NULL), SBF_E_PARAM);
    assert_non_null(strstr(sbf_last_error(), "between 1 and"));
    assert_int_equal(sbf_index_use_gpus(idx, SBF_MAX_GPUS + 1, NULL), SBF_E_PARAM);
    o.gpu = -7;
    assert_int_equal(sbf_opt_check(&o), SBF_E_PARAM);
    sbf_index_destroy(idx);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_builder_misuse),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_formats_build_identical_filters),
        cmocka_unit_test(test_masked_target),
        cmocka_unit_test(test_dust_target),
        cmocka_unit_test(test_concurrent_queries),
        cmocka_unit_test(test_last_error_is_per_thread),
        cmocka_unit_test(test_size_option),
        cmocka_unit_test(test_target_panel),
        cmocka_unit_test(test_gpu_selection),
        cmocka_unit_test(test_classify_api),
        cmocka_unit_test(test_long_layer_api),
        cmocka_unit_test(test_builder_output),
    };
    return cmocka_run_group_tests_name("api", tests, tmpdir_setup, tmpdir_teardown);
}
