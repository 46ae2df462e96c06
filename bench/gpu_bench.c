/* gpu_bench.c -- GPU engine timings on device-resident data (CUDA events, after a warm-up,
 * median of R runs): build and query Gkmer/s on a reference (human chr20) and on a random
 * sequence of G bases, and the false-positive rate of random k-mers.
 *   sbf-gpu-bench [-r REF.fa.gz] [-g RANDOM_BASES] [-n RANDOM_KMERS] [-q READS] [-R RUNS] [-T TARGETS[,TARGETS...]] [-P]
 *                 [-H BITS_PER_SMER] [-Q TARGETS[,...]]
 * (-Q: that many targets in wide panels (format 3, at most 64 columns each), copies of the first
 * filter put in their columns, every target's hits checked against one target's; -H: the parameter H instead of the default's; -P: no runs from pinned host memory; -T: the target counts queried besides 1, default 8; the
 * extra targets are copies of the first filter at their own addresses, so every probe does the
 * same work and reads as many distinct bytes as distinct filters would). Prints a short table. bench/gpu.sh runs it on the GPU
 * machine. (The -V option that timed older kernels through environment switches went with
 * them: the library reads no switch; their figures stay in doc/gpu-notes.md.) */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_build.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../gpu/sbf_gpu.h"
#include "gpu_bench_time.h"

static uint64_t rng = 0x853c49e6748fea9bULL;
static inline uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

static void die(const char *what)
{
    fprintf(stderr, "sbf-gpu-bench: %s: %s\n", what, sbf_error_message());
    exit(1);
}

/* Random ASCII reads of `len` bases packed with offsets; from `src` (ASCII, clean windows) if given. */
static char *make_reads(size_t n, size_t len, const char *src, size_t src_len, uint64_t **offsets_out)
{
    char *buf = malloc(n * len);
    uint64_t *off = malloc((n + 1) * sizeof *off);
    if (!buf || !off)
        exit(1);
    for (size_t i = 0; i < n; ++i) {
        char *r = buf + i * len;
        if (src) {
            for (;;) {
                size_t from = rnd() % (src_len - len), j;
                for (j = 0; j < len && sbf_encode_ascii((unsigned char)src[from + j]) < 4; ++j)
                    ;
                if (j == len) {
                    memcpy(r, src + from, len);
                    break;
                }
            }
        } else {
            for (size_t j = 0; j < len; ++j)
                r[j] = "ACGT"[rnd() >> 62];
        }
        off[i] = i * len;
    }
    off[n] = n * len;
    *offsets_out = off;
    return buf;
}

static int pinned_runs = 1;
static int hashes = 0; /* -H: bits per s-mer instead of the default */
static int panels[4], n_panels = 0; /* -Q: target counts in wide panels (format 3) */

static void bench_params(sbf_params_t *p)
{
    sbf_params_default(p);
    if (hashes)
        p->hashes = hashes;
}
/* Query only the first R targets of idx (each in a plain panel of its own, panel r holding
 * target r: sbf_idx_add_target), as if the index had no others. */
static void use_targets(sbf_index_t *idx, int R)
{
    idx->n_targets = R;
    idx->n_panels = R;
}

/* T copies of idx's target 0 in wide panels of at most 64 one-column targets (format 3), put
 * in their columns the way sbf build puts a target: the layout of a bacterial panel of T
 * genomes of one size, with every target's answer known (target 0's). */
static sbf_index_t *panel_copies(const sbf_index_t *idx, int T)
{
    const sbf_target_t *t0 = &idx->targets[0];
    sbf_index_t *pidx = sbf_idx_new(&idx->params);
    if (!pidx)
        die("index");
    for (int r0 = 0; r0 < T; r0 += 64) {
        const int n = T - r0 < 64 ? T - r0 : 64;
        unsigned lw = 0;
        while ((1 << lw) < n)
            ++lw;
        const int panel = sbf_idx_add_panel(pidx, t0->n_shards, lw);
        if (panel < 0)
            die("panel");
        for (int c = 0; c < n; ++c) {
            char tn[32];
            snprintf(tn, sizeof tn, "copy%d", r0 + c);
            const int r = sbf_idx_add_panel_target(pidx, tn, panel, (unsigned)c, 1);
            if (r < 0)
                die("panel");
            if (lw < 3)   /* below a byte per position: put like sbf build (few columns, fast) */
                sbf_panel_put(pidx, &pidx->targets[r], t0->bits, 8);
        }
        if (lw >= 3) {
            /* every column a copy: a position's W bits are all its used columns or none
             * (sbf_panel_put per copy: a pass over the whole panel for each of 128 copies) */
            const sbf_panel_t *pn = &pidx->panels[panel];
            const uint64_t ones = n == 64 ? ~0ULL : (1ULL << n) - 1;
            const uint64_t positions = t0->n_shards * (uint64_t)idx->params.shard_bits;
            const size_t per = (size_t)1 << (lw - 3);
            uint8_t *at = (uint8_t *)pn->bits;
            for (uint64_t x = 0; x < positions; ++x, at += per)
                if ((t0->bits[x / 64] >> (x % 64)) & 1)
                    memcpy(at, &ones, per);   /* little-endian: the low `per` bytes of ones */
        }
    }
    return pidx;
}

static void bench_one(const char *name, sbf_seqbuf_t *sb, const char *ascii, size_t ascii_len, long n_random,
                      long n_reads, int runs, const int *counts, int n_counts)
{
    sbf_params_t p;
    bench_params(&p);
    sbf_index_t *idx = sbf_idx_new(&p);
    uint64_t shards = sbf_shards_for(&p, sb->kmers, SBF_DEFAULT_BITS_PER_KMER);
    if (!idx || sbf_idx_add_target(idx, name, shards) < 0)
        die("index");
    double ms_build;
    const char *kernel;
    if (sbf_gpu_bench_build(0, idx, &idx->targets[0], sb->codes, sb->len, runs, &ms_build, &kernel))
        die("build");
    printf("%-10s build   %12llu k-mers  %8.3f ms  %7.2f Gkmer/s   (%.1f MiB filter, fill %.4f, pred. FPR %.3g; build %s)\n",
           name, (unsigned long long)sb->kmers, ms_build, (double)sb->kmers / ms_build / 1e6,
           (double)sbf_target_bytes(idx, &idx->targets[0]) / 1048576.0, idx->targets[0].fill,
           idx->targets[0].predicted_fpr, kernel);
    /* more targets: copies of the first, so every probe does the same work */
    int n_targets = 1;
    for (int c = 0; c < n_counts; ++c)
        n_targets = counts[c] > n_targets ? counts[c] : n_targets;
    for (int t = 1; t < n_targets; ++t) {
        char tn[32];
        snprintf(tn, sizeof tn, "copy%d", t);
        if (sbf_idx_add_target(idx, tn, shards) < 0)
            die("index");
        memcpy(idx->targets[t].bits, idx->targets[0].bits, sbf_target_bytes(idx, &idx->targets[0]));
    }
    const int keep = idx->n_targets;
    for (int c = -1; c < n_counts; ++c) {
        const int R = c < 0 ? 1 : counts[c];
        if (c >= 0 && R <= 1)
            continue;
        use_targets(idx, R);
        sbf_gpu_index_t *g;
        if (sbf_gpu_index_upload(0, idx, &g))
            die("upload");
        uint64_t *off;
        double ms;
        uint64_t kmers;
        if (ascii) {
            char *reads = make_reads((size_t)n_reads, 150, ascii, ascii_len, &off);
            if (sbf_gpu_bench_query(g, reads, off, (size_t)n_reads, runs, &ms, &kmers, &kernel))
                die("query");
            printf("%-10s query   %12llu k-mers  %8.3f ms  %7.2f Gkmer/s   150 bp reads from the reference, %d target%s (query %s)\n",
                   name, (unsigned long long)kmers, ms, (double)kmers / ms / 1e6, R, R > 1 ? "s" : "", kernel);
            if (R == 1 && pinned_runs) {   /* the same reads from pinned host memory, copies overlapped with kernels */
                const double device_rate = (double)kmers / ms / 1e6;
                size_t bytes = off[n_reads];
                char *pinned = NULL;
                uint64_t *poff = NULL;
                if (sbf_gpu_host_alloc(bytes + 8, (void **)&pinned) || sbf_gpu_host_alloc(((size_t)n_reads + 1) * 8, (void **)&poff))
                    die("pinned memory");
                memcpy(pinned, reads, bytes);
                memcpy(poff, off, ((size_t)n_reads + 1) * 8);
                for (size_t batch = 1u << 16; batch <= (1u << 20); batch <<= 2) {
                    double hms;
                    uint64_t hk;
                    if (sbf_gpu_bench_query_host(g, pinned, poff, (size_t)n_reads, batch, runs, &hms, &hk))
                        die("query from host");
                    printf("%-10s query   %12llu k-mers  %8.3f ms  %7.2f Gkmer/s   same reads from pinned host memory, "
                           "batches of %zu reads, 2 streams: %.0f%% of device-resident\n",
                           name, (unsigned long long)hk, hms, (double)hk / hms / 1e6, batch,
                           100.0 * ((double)hk / hms / 1e6) / device_rate);
                }
                sbf_gpu_host_free(pinned);
                sbf_gpu_host_free(poff);
            }
            free(reads);
            free(off);
        }
        char *neg = make_reads((size_t)n_reads, 150, NULL, 0, &off);
        if (sbf_gpu_bench_query(g, neg, off, (size_t)n_reads, runs, &ms, &kmers, &kernel))
            die("query");
        printf("%-10s query   %12llu k-mers  %8.3f ms  %7.2f Gkmer/s   150 bp random reads, %d target%s (query %s)\n",
               name, (unsigned long long)kmers, ms, (double)kmers / ms / 1e6, R, R > 1 ? "s" : "", kernel);
        free(neg);
        free(off);
        sbf_gpu_index_free(g);
    }
    if (keep)
        use_targets(idx, keep);
    if (ascii && n_panels > 0) {   /* format 3's wide panels: every target's hits must be one target's */
        uint64_t *off;
        char *reads = make_reads((size_t)n_reads, 150, ascii, ascii_len, &off);
        const int saved = idx->n_targets;
        use_targets(idx, 1);
        sbf_gpu_index_t *g;
        if (sbf_gpu_index_upload(0, idx, &g))
            die("upload");
        const char **seqs = malloc((size_t)n_reads * sizeof *seqs);
        size_t *lens = malloc((size_t)n_reads * sizeof *lens);
        uint32_t *kc = malloc((size_t)n_reads * sizeof *kc), *hc = malloc((size_t)n_reads * sizeof *hc);
        if (!seqs || !lens || !kc || !hc)
            die("memory");
        for (long i = 0; i < n_reads; ++i) {
            seqs[i] = reads + off[i];
            lens[i] = 150;
        }
        if (sbf_gpu_query(g, (size_t)n_reads, seqs, lens, kc, hc))
            die("query");
        sbf_gpu_index_free(g);
        use_targets(idx, saved);
        for (int q = 0; q < n_panels; ++q) {
            const int T = panels[q];
            sbf_index_t *pidx = panel_copies(idx, T);
            if (sbf_gpu_index_upload(0, pidx, &g))
                die("upload");
            double ms;
            uint64_t kmers;
            if (sbf_gpu_bench_query(g, reads, off, (size_t)n_reads, runs, &ms, &kmers, &kernel))
                die("query");
            uint32_t *kp = malloc((size_t)n_reads * sizeof *kp), *hp = malloc((size_t)n_reads * (size_t)T * sizeof *hp);
            if (!kp || !hp)
                die("memory");
            if (sbf_gpu_query(g, (size_t)n_reads, seqs, lens, kp, hp))
                die("query");
            long differ = 0;
            for (long i = 0; i < n_reads; ++i)
                for (int r = 0; r < T; ++r)
                    differ += kp[i] != kc[i] || hp[(size_t)i * (size_t)T + (size_t)r] != hc[i];
            printf("%-10s query   %12llu k-mers  %8.3f ms  %7.2f Gkmer/s   150 bp reads from the reference, %d targets in "
                   "%d wide panel%s of %d columns (query %s): %s\n",
                   name, (unsigned long long)kmers, ms, (double)kmers / ms / 1e6, T, pidx->n_panels,
                   pidx->n_panels > 1 ? "s" : "", 1 << pidx->panels[0].log2_width, kernel,
                   differ ? "HITS DIFFER from one target's" : "every target's hits = one target's");
            if (differ)
                exit(1);
            free(kp);
            free(hp);
            sbf_gpu_index_free(g);
            sbf_idx_free(pidx);
        }
        free(seqs);
        free(lens);
        free(kc);
        free(hc);
        free(reads);
        free(off);
    }
    if (n_random > 0) {   /* false positives of random k-mers, counted through sbf_gpu_query */
        sbf_gpu_index_t *g;
        int saved = idx->n_targets;
        use_targets(idx, 1);
        if (sbf_gpu_index_upload(0, idx, &g))
            die("upload");
        const size_t per = 120, len = per + 30, n = (size_t)(n_random + per - 1) / per;
        rng = 0x9e3779b97f4a7c15ULL; /* the same random k-mers whatever ran before (-T, -P) */
        uint64_t *off;
        char *rk = make_reads(n, len, NULL, 0, &off);
        const char **seqs = malloc(n * sizeof *seqs);
        size_t *lens = malloc(n * sizeof *lens);
        uint32_t *kc = malloc(n * sizeof *kc), *hc = malloc(n * sizeof *hc);
        for (size_t i = 0; i < n; ++i) {
            seqs[i] = rk + off[i];
            lens[i] = len;
        }
        if (sbf_gpu_query(g, n, seqs, lens, kc, hc))
            die("query");
        uint64_t k = 0, h = 0;
        for (size_t i = 0; i < n; ++i) {
            k += kc[i];
            h += hc[i];
        }
        printf("%-10s FPR     %12llu random 31-mers: %llu hits = %.6f%% (predicted %.6f%%)\n", name,
               (unsigned long long)k, (unsigned long long)h, 100.0 * (double)h / (double)k,
               100.0 * idx->targets[0].predicted_fpr);
        free(rk);
        free(off);
        free(seqs);
        free(lens);
        free(kc);
        free(hc);
        sbf_gpu_index_free(g);
        use_targets(idx, saved);
    }
    sbf_idx_free(idx);
}

int main(int argc, char **argv)
{
    const char *ref = NULL;
    long gbases = 0, n_random = 100000000, n_reads = 4000000;
    int runs = 10, counts[16] = {8}, n_counts = 1, c;
    while ((c = getopt(argc, argv, "r:g:n:q:R:T:PH:Q:")) >= 0) {
        switch (c) {
        case 'r': ref = optarg; break;
        case 'g': gbases = atol(optarg); break;
        case 'n': n_random = atol(optarg); break;
        case 'q': n_reads = atol(optarg); break;
        case 'R': runs = atoi(optarg); break;
        case 'T': {
            char *at = optarg, *end;
            for (n_counts = 0; n_counts < 16; ++n_counts) {
                long v = strtol(at, &end, 10);
                if (end == at || v < 1 || v > 4096) {
                    fprintf(stderr, "sbf-gpu-bench: -T %s: target counts from 1 to 4096, separated by commas\n", optarg);
                    return 2;
                }
                counts[n_counts] = (int)v;
                if (*end != ',')
                    break;
                at = end + 1;
            }
            if (*end) {
                fprintf(stderr, "sbf-gpu-bench: -T %s: at most 16 counts\n", optarg);
                return 2;
            }
            ++n_counts;
            break;
        }
        case 'P': pinned_runs = 0; break;
        case 'H': hashes = atoi(optarg); break;
        case 'Q': {
            char *at = optarg, *end;
            for (n_panels = 0; *at;) {
                if (n_panels == 4) {
                    fprintf(stderr, "sbf-gpu-bench: -Q %s: at most 4 counts\n", optarg);
                    return 2;
                }
                long v = strtol(at, &end, 10);
                if (end == at || v < 2 || v > 1024) {
                    fprintf(stderr, "sbf-gpu-bench: -Q %s: panel target counts from 2 to 1024, separated by commas\n", optarg);
                    return 2;
                }
                panels[n_panels++] = (int)v;
                at = *end == ',' ? end + 1 : end;
            }
            break;
        }
        default:
            fprintf(stderr, "usage: sbf-gpu-bench [-r REF.fa.gz] [-g RANDOM_BASES] [-n RANDOM_KMERS] [-q READS] [-R RUNS] "
                            "[-T TARGETS[,TARGETS...]] [-P] [-H BITS_PER_SMER] [-Q TARGETS[,...]]\n");
            return 1;
        }
    }
    if (sbf_gpu_count() == 0) {
        fprintf(stderr, "sbf-gpu-bench: no usable GPU\n");
        return 77;
    }
    char desc[256];
    sbf_gpu_describe(0, desc, sizeof desc);
    printf("device 0: %s\n", desc);
    sbf_params_t p;
    bench_params(&p);
    printf("parameters: k=%d m=%d s=%d H=%d %d-bit shards, %g bits per k-mer; median of %d runs after a warm-up\n",
           p.k, p.m, p.s, p.hashes, p.shard_bits, SBF_DEFAULT_BITS_PER_KMER, runs);
    if (ref) {
        sbf_seqbuf_t sb;
        sbf_seqbuf_init(&sb);
        sbf_seqfile_t *f;
        if (sbf_seqfile_open(ref, 4, &f))
            die(ref);
        sbf_seqrec_t rec = {{0, 0, NULL}, {0, 0, NULL}};
        size_t cap = 1 << 26, alen = 0;
        char *ascii = malloc(cap);
        while (sbf_seqfile_read(f, &rec) == 1) {
            if (sbf_seqbuf_append(&sb, sbf_nt4_ascii, (const uint8_t *)rec.seq.s, rec.seq.l, p.k))
                die("append");
            while (alen + rec.seq.l + 1 > cap)
                ascii = realloc(ascii, cap *= 2);
            memcpy(ascii + alen, rec.seq.s, rec.seq.l);
            alen += rec.seq.l;
            ascii[alen++] = 'N';
        }
        sbf_seqfile_close(f);
        const char *base = strrchr(ref, '/');
        char name[16];
        snprintf(name, sizeof name, "%.10s", base ? base + 1 : ref);
        bench_one(name, &sb, ascii, alen, n_random, n_reads, runs, counts, n_counts);
        sbf_seqbuf_free(&sb);
        free(ascii);
    }
    if (gbases > 0) {
        sbf_seqbuf_t sb;
        sbf_seqbuf_init(&sb);
        size_t chunk = 1 << 24;
        uint8_t *buf = malloc(chunk);
        for (long done = 0; done < gbases; done += (long)chunk) {
            size_t n = (size_t)(gbases - done) < chunk ? (size_t)(gbases - done) : chunk;
            for (size_t i = 0; i < n; i += 32) {
                uint64_t r = rnd();
                for (size_t j = 0; j < 32 && i + j < n; ++j, r >>= 2)
                    buf[i + j] = (uint8_t)(r & 3);
            }
            /* 16 MiB records: the k-1 k-mers lost at each boundary are noise */
            if (sbf_seqbuf_append(&sb, sbf_nt4_identity, buf, n, p.k))
                die("append");
        }
        free(buf);
        bench_one("random", &sb, NULL, 0, 0, n_reads, runs, counts, 0);
        sbf_seqbuf_free(&sb);
    }
    return 0;
}
