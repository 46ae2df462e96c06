/* sbf_bench.c -- measures one parameter set on real genomes: build time, false-positive rates
 * (random k-mers, k-mers of a genome not indexed, one-base variants of indexed k-mers) and
 * query throughput. Prints one TSV line; bench/sweep.sh and bench/cpu.sh drive it.
 *
 *   sbf-bench -r REF.fa.gz [-o OTHER.fa.gz] [-k K -m M -s S -H H --shard-bits B --bits BPK]
 *             [-@ THREADS] [-n RANDOM_KMERS] [-v VARIANTS] [-q READS] [--header]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_scan.h"
#include "sbf.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define REPS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

/* All records of a file, concatenated with one 'N' between records. */
static char *load(const char *path, size_t *len)
{
    sbf_seqfile_t *f;
    if (sbf_seqfile_open(path, 2, &f)) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        exit(1);
    }
    sbf_seqrec_t rec = {{0, 0, NULL}, {0, 0, NULL}};
    size_t cap = 1 << 20, n = 0;
    char *s = malloc(cap);
    int rc;
    while ((rc = sbf_seqfile_read(f, &rec)) == 1) {
        if (n + rec.seq.l + 2 > cap) {
            while (n + rec.seq.l + 2 > cap)
                cap *= 2;
            s = realloc(s, cap);
        }
        if (n)
            s[n++] = 'N';
        memcpy(s + n, rec.seq.s, rec.seq.l);
        n += rec.seq.l;
    }
    if (rc < 0 || !s) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        exit(1);
    }
    sbf_seqrec_free(&rec);
    sbf_seqfile_close(f);
    s[n] = 0;
    *len = n;
    return s;
}

static int clean(const char *s, size_t len)
{
    for (size_t i = 0; i < len; ++i)
        if (sbf_encode_ascii((unsigned char)s[i]) > 3)
            return 0;
    return 1;
}

/* ---- exact membership, to tell false positives from k-mers that really are in the reference:
 * a one-base variant of a repeat copy often exists elsewhere in a genome. ---- */

typedef struct {
    uint64_t *keys;   /* canonical k-mer + 1 (0 = empty) */
    uint8_t *found;
    size_t mask;
} kset_t;

static uint64_t canonical_kmer(const char *s, int k, int *ok)
{
    uint64_t f = 0, r = 0;
    *ok = 1;
    for (int i = 0; i < k; ++i) {
        unsigned c = sbf_encode_ascii((unsigned char)s[i]);
        if (c > 3) {
            *ok = 0;
            return 0;
        }
        f = (f << 2) | c;
        r |= (uint64_t)(3 - c) << (2 * i);
    }
    return f < r ? f : r;
}

static void kset_init(kset_t *ks, size_t n)
{
    size_t cap = 1;
    while (cap < 2 * n + 2)
        cap *= 2;
    ks->keys = calloc(cap, sizeof *ks->keys);
    ks->found = calloc(cap, 1);
    ks->mask = cap - 1;
}

/* splitmix64's finaliser: the k-mer set's own hash (not the filter's) */
static uint64_t kset_hash(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static size_t kset_slot(const kset_t *ks, uint64_t key)
{
    size_t i = (size_t)kset_hash(key) & ks->mask;
    while (ks->keys[i] && ks->keys[i] != key + 1)
        i = (i + 1) & ks->mask;
    return i;
}

static void kset_add(kset_t *ks, uint64_t key) { ks->keys[kset_slot(ks, key)] = key + 1; }

/* Mark every member that occurs in g[0..len). */
static void kset_mark(kset_t *ks, const char *g, size_t len, int k)
{
    uint64_t f = 0, r = 0, mask = sbf_mask((unsigned)k);
    int valid = 0;
    for (size_t i = 0; i < len; ++i) {
        unsigned c = sbf_encode_ascii((unsigned char)g[i]);
        if (c > 3) {
            valid = 0;
            continue;
        }
        f = ((f << 2) | c) & mask;
        r = (r >> 2) | ((uint64_t)(3 - c) << (2 * (k - 1)));
        if (++valid >= k) {
            uint64_t key = f < r ? f : r;
            size_t slot = (size_t)kset_hash(key) & ks->mask;
            while (ks->keys[slot]) {
                if (ks->keys[slot] == key + 1) {
                    ks->found[slot] = 1;
                    break;
                }
                slot = (slot + 1) & ks->mask;
            }
        }
    }
}

static int kset_found(const kset_t *ks, uint64_t key) { return ks->found[kset_slot(ks, key)]; }

/* Query n sequences; returns seconds, sums k-mers and hits of target 0. */
static double run_query(const sbf_index_t *idx, size_t n, const char **seqs, size_t *lens, int threads,
                        uint64_t *kmers_out, uint64_t *hits_out)
{
    uint32_t *kmers = malloc(n * sizeof *kmers), *hits = malloc(n * sizeof *hits);
    double t0 = now();
    if (sbf_query(idx, n, seqs, lens, kmers, hits, threads)) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        exit(1);
    }
    double dt = now() - t0;
    uint64_t k = 0, h = 0;
    for (size_t i = 0; i < n; ++i) {
        k += kmers[i];
        h += hits[i];
    }
    *kmers_out = k;
    *hits_out = h;
    free(kmers);
    free(hits);
    return dt;
}

int main(int argc, char **argv)
{
    static const struct option lopts[] = {{"shard-bits", required_argument, NULL, 'B'},
                                          {"bits", required_argument, NULL, 'b'},
                                          {"header", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    sbf_opt_t o;
    sbf_opt_init(&o);
    const char *ref = NULL, *other = NULL;
    long n_random = 1000000, n_variants = 1000000, n_reads = 400000;
    int c, header = 0;
    while ((c = getopt_long(argc, argv, "r:o:k:m:s:H:@:n:v:q:", lopts, NULL)) >= 0) {
        switch (c) {
        case 'r': ref = optarg; break;
        case 'o': other = optarg; break;
        case 'k': o.k = atoi(optarg); break;
        case 'm': o.m = atoi(optarg); break;
        case 's': o.s = atoi(optarg); break;
        case 'H': o.hashes = atoi(optarg); break;
        case 'B': o.shard_bits = atoi(optarg); break;
        case 'b': o.bits_per_kmer = atof(optarg); break;
        case '@': o.threads = atoi(optarg); break;
        case 'n': n_random = atol(optarg); break;
        case 'v': n_variants = atol(optarg); break;
        case 'q': n_reads = atol(optarg); break;
        case 'h': header = 1; break;
        default: return 1;
        }
    }
    /* SBF_SIMD: the scan path to measure (default: the fastest this CPU runs); said on stderr */
    const char *path = getenv("SBF_SIMD");
    if (path && sbf_scan_set_path_named(path) != 0) {
        fprintf(stderr, "sbf-bench: SBF_SIMD=%s: %s\n", path, sbf_last_error());
        return 1;
    }
    fprintf(stderr, "sbf-bench: CPU scan path %s\n", sbf_scan_path_name(sbf_scan_path()));
    if (header)
        printf("k\tm\ts\tH\tshard\tbits_per_kmer\tthreads\tbytes\tread_s\tbuild_s\tbuild_Mkmer_s\tfill\t"
               "pred_fpr\tfpr_random\tfpr_other\tfpr_variant\tquery_pos_Mkmer_s\tquery_neg_Mkmer_s\n");
    if (!ref)
        return header ? 0 : 1;
    const int k = o.k;

    /* build: reading the file and inserting are timed apart */
    sbf_builder_t *b;
    sbf_index_t *idx;
    if (sbf_builder_init(&o, &b)) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        return 1;
    }
    double t0 = now();
    if (sbf_builder_add_target(b, "ref") != 0 || sbf_builder_add_file(b, 0, ref)) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        return 1;
    }
    double t1 = now();
    if (sbf_builder_finish(b, &idx)) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        return 1;
    }
    double t2 = now();
    sbf_target_info_t ti;
    sbf_index_target(idx, 0, &ti);

    size_t rlen;
    char *g = load(ref, &rlen);

    /* random k-mers, one per query sequence */
    char *rk = malloc((size_t)n_random * (size_t)k);
    const char **seqs = malloc((size_t)(n_random > n_variants ? n_random : n_variants) * sizeof *seqs);
    size_t *lens = malloc((size_t)(n_random > n_variants ? n_random : n_variants) * sizeof *lens);
    for (long i = 0; i < n_random * k; ++i)
        rk[i] = "ACGT"[rnd() >> 62];
    for (long i = 0; i < n_random; ++i) {
        seqs[i] = rk + i * k;
        lens[i] = (size_t)k;
    }
    uint64_t kq, hq;
    run_query(idx, (size_t)n_random, seqs, lens, o.threads, &kq, &hq);
    double fpr_random = (double)hq / (double)kq;

    /* one-base variants of indexed k-mers */
    char *vk = malloc((size_t)n_variants * (size_t)k);
    for (long i = 0; i < n_variants; ++i) {
        size_t pos;
        do
            pos = rnd() % (rlen - (size_t)k);
        while (!clean(g + pos, (size_t)k));
        char *v = vk + i * k;
        memcpy(v, g + pos, (size_t)k);
        int at = (int)(rnd() % (uint64_t)k);
        char was = (char)(v[at] & ~0x20);
        do
            v[at] = "ACGT"[rnd() >> 62];
        while (v[at] == was);
        seqs[i] = v;
        lens[i] = (size_t)k;
    }
    /* hits among variants that do not occur in the reference are false positives */
    kset_t vset;
    kset_init(&vset, (size_t)n_variants);
    for (long i = 0; i < n_variants; ++i) {
        int ok;
        kset_add(&vset, canonical_kmer(vk + i * k, k, &ok));
    }
    kset_mark(&vset, g, rlen, k);
    uint32_t *vk_kmers = malloc((size_t)n_variants * sizeof *vk_kmers), *vk_hits = malloc((size_t)n_variants * sizeof *vk_hits);
    if (sbf_query(idx, (size_t)n_variants, seqs, lens, vk_kmers, vk_hits, o.threads)) {
        fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
        return 1;
    }
    uint64_t v_neg = 0, v_fp = 0;
    for (long i = 0; i < n_variants; ++i) {
        int ok;
        if (kset_found(&vset, canonical_kmer(vk + i * k, k, &ok)))
            continue;   /* the variant is a real k-mer of the reference */
        v_neg++;
        v_fp += vk_hits[i];
    }
    double fpr_variant = (double)v_fp / (double)v_neg;
    fprintf(stderr, "sbf-bench: %.2f%% of one-base variants occur in the reference and are not counted\n",
            100.0 * (double)(n_variants - (long)v_neg) / (double)n_variants);
    free(vk_kmers);
    free(vk_hits);

    /* k-mers of another genome */
    double fpr_other = -1;
    if (other) {
        size_t olen;
        char *og = load(other, &olen);
        /* per k-mer answers, minus the k-mers the two genomes really share */
        uint8_t *present = malloc(olen);
        if (sbf_query_kmers(idx, 0, og, olen, present)) {
            fprintf(stderr, "sbf-bench: %s\n", sbf_last_error());
            return 1;
        }
        kset_t oset;
        kset_init(&oset, olen);
        for (size_t i = 0; i + (size_t)k <= olen; ++i) {
            int ok;
            uint64_t key = canonical_kmer(og + i, k, &ok);
            if (ok)
                kset_add(&oset, key);
        }
        kset_mark(&oset, g, rlen, k);
        uint64_t o_neg = 0, o_fp = 0;
        for (size_t i = 0; i + (size_t)k <= olen; ++i) {
            int ok;
            uint64_t key = canonical_kmer(og + i, k, &ok);
            if (!ok || kset_found(&oset, key))
                continue;
            o_neg++;
            o_fp += present[i];
        }
        fpr_other = (double)o_fp / (double)o_neg;
        free(present);
        free(oset.keys);
        free(oset.found);
        free(og);
    }

    /* throughput: 150 bp reads from the reference (positives) and random (negatives) */
    const size_t RL = 150;
    const char **rs = malloc((size_t)n_reads * sizeof *rs);
    size_t *rls = malloc((size_t)n_reads * sizeof *rls);
    for (long i = 0; i < n_reads; ++i) {
        size_t pos;
        do
            pos = rnd() % (rlen - RL);
        while (!clean(g + pos, RL));
        rs[i] = g + pos;
        rls[i] = RL;
    }
    double tpos[REPS], tneg[REPS];
    uint64_t kp = 0, kn = 0, hp, hn;
    char *neg = malloc((size_t)n_reads * RL);
    for (size_t i = 0; i < (size_t)n_reads * RL; ++i)
        neg[i] = "ACGT"[rnd() >> 62];
    const char **ns = malloc((size_t)n_reads * sizeof *ns);
    for (long i = 0; i < n_reads; ++i)
        ns[i] = neg + (size_t)i * RL;
    run_query(idx, (size_t)n_reads, rs, rls, o.threads, &kp, &hp);   /* warm-up: page in the filter */
    for (int rep = 0; rep < REPS; ++rep) {   /* medians of REPS runs */
        tpos[rep] = run_query(idx, (size_t)n_reads, rs, rls, o.threads, &kp, &hp);
        tneg[rep] = run_query(idx, (size_t)n_reads, ns, rls, o.threads, &kn, &hn);
    }
    double best_pos = median(tpos, REPS), best_neg = median(tneg, REPS);
    printf("%d\t%d\t%d\t%d\t%d\t%g\t%d\t%llu\t%.3f\t%.3f\t%.1f\t%.4f\t%.3g\t%.3g\t%.3g\t%.3g\t%.1f\t%.1f\n", o.k, o.m,
           o.s, o.hashes, o.shard_bits, o.bits_per_kmer, o.threads, (unsigned long long)ti.bytes, t1 - t0, t2 - t1,
           (double)ti.kmers / (t2 - t1) / 1e6, ti.fill, ti.predicted_fpr, fpr_random, fpr_other, fpr_variant,
           (double)kp / best_pos / 1e6, (double)kn / best_neg / 1e6);
    fflush(stdout);
    sbf_index_destroy(idx);
    return 0;
}
