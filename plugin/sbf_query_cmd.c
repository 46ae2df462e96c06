/* sbf_query_cmd.c -- `sbf query`: per read (or pair), valid k-mers and hits in every target, as TSV.
 * Reads are taken in batches sized by bases; each batch is queried by all threads, then printed
 * in input order. */
#include <stdlib.h>
#include <string.h>

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_classify.h"
#include "sbf.h"
#include "sbf_cli.h"
#include "sbf_verified.h"

#define DEFAULT_BATCH_BASES (8u << 20)

void usage_query(FILE *fp)
{
    fprintf(fp,
            "Usage: sbf query -x IDX.sbf [options] IN [IN2]\n"
            "\n"
            "Prints a TSV to stdout: a header '#name kmers <target>...', then per read its name,\n"
            "its valid k-mers (k-mers with N are skipped) and how many of them each target holds.\n"
            "With IN2, reads of IN and IN2 are mates: one line per pair, k-mers of both mates summed.\n"
            "Inputs: FASTA/FASTQ (plain, gzip, BGZF) or SAM/BAM/CRAM, '-' for standard input.\n"
            "\n"
            "Options:\n"
            "  -x, --index FILE   index built by 'sbf build' (required)\n"
            "  -o, --output FILE  write the TSV to FILE (complete or absent) [stdout]\n"
            "  -@, --threads INT  threads [1]\n"
            "  -K, --batch SIZE   bases per batch [%uM]\n"
            "      --gpu auto|none|all|ID[,ID..]  CUDA devices: the first (auto), every one, or those\n"
            "                          listed; same results as the CPU [auto]\n"
            "  -h, --help         this help\n",
            DEFAULT_BATCH_BASES >> 20);
}

typedef struct {
    sbf_seqrec_t *recs;   /* with pairs, 2 per fragment: mate 1 then mate 2 */
    size_t cap;
    const char **seqs;
    size_t *lens;
    uint32_t *kmers, *hits;
} batch_t;

static int batch_reserve(batch_t *b, size_t n, int n_targets)
{
    if (n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < n)
        cap *= 2;
    sbf_seqrec_t *recs = realloc(b->recs, cap * sizeof *recs);
    if (!recs)
        return -1;
    memset(recs + b->cap, 0, (cap - b->cap) * sizeof *recs);
    b->recs = recs;
    const char **seqs = realloc(b->seqs, cap * sizeof *seqs);
    if (seqs)
        b->seqs = seqs;
    size_t *lens = realloc(b->lens, cap * sizeof *lens);
    if (lens)
        b->lens = lens;
    uint32_t *kmers = realloc(b->kmers, cap * sizeof *kmers);
    if (kmers)
        b->kmers = kmers;
    uint32_t *hits = realloc(b->hits, cap * (size_t)n_targets * sizeof *hits);
    if (hits)
        b->hits = hits;
    if (!seqs || !lens || !kmers || !hits)
        return -1;
    b->cap = cap;
    return 0;
}

static void batch_free(batch_t *b)
{
    for (size_t i = 0; i < b->cap; ++i)
        sbf_seqrec_free(&b->recs[i]);
    free(b->recs);
    free(b->seqs);
    free(b->lens);
    free(b->kmers);
    free(b->hits);
}

/* Mate names match after dropping a trailing /1 or /2 (comments are already cut off). */
static size_t base_name_len(const kstring_t *name)
{
    size_t l = name->l;
    if (l > 2 && name->s[l - 2] == '/' && (name->s[l - 1] == '1' || name->s[l - 1] == '2'))
        l -= 2;
    return l;
}

int main_query(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"index", required_argument, NULL, 'x'}, {"output", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, '@'},
        {"batch", required_argument, NULL, 'K'}, {"gpu", required_argument, NULL, OPT_GPU},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *cmd = "query", *index_path = NULL, *out_path = NULL;
    int threads = 1, c;
    cli_gpus_t gpus = CLI_GPUS_AUTO;
    uint64_t batch_bases = DEFAULT_BATCH_BASES;
    cli_seen_t seen = {{0}};
    while ((c = getopt_long(argc, argv, "x:o:@:K:h", lopts, NULL)) >= 0) {
        int bad = 0;
        if (c == 'x' && index_path) {
            cli_error(cmd, "one index per query (-x given twice); 'sbf classify' screens against several");
            return 1;
        }
        if (cli_once(cmd, &seen, c, "x:o:@:K:h", lopts, NULL) < 0)
            return 1;
        switch (c) {
        case 'x': index_path = optarg; break;
        case 'o': out_path = optarg; break;
        case '@': bad = cli_int(cmd, "-@", optarg, 1, 1024, &threads); break;
        case 'K': bad = cli_size(cmd, "-K", optarg, &batch_bases); break;
        case OPT_GPU: bad = cli_gpu_option(cmd, optarg, &gpus); break;
        case 'h': usage_query(stdout); return 0;
        default: usage_query(stderr); return 1;
        }
        if (bad)
            return 1;
    }
    if (!index_path) {
        cli_error(cmd, "no index given (-x IDX.sbf)");
        usage_query(stderr);
        return 1;
    }
    int n_inputs = argc - optind;
    if (n_inputs < 1 || n_inputs > 2) {
        cli_error(cmd, n_inputs < 1 ? "no input given" : "at most two inputs (mate files) are accepted");
        usage_query(stderr);
        return 1;
    }
    const char *in1 = argv[optind], *in2 = n_inputs == 2 ? argv[optind + 1] : NULL;
    if (in2 && !strcmp(in1, "-") && !strcmp(in2, "-")) {
        cli_error(cmd, "only one of the two inputs can be standard input");
        return 1;
    }

    sbf_index_t *idx = NULL;
    sbf_seqfile_t *f1 = NULL, *f2 = NULL;
    batch_t b = {0};
    cli_output_t out = {0};
    uint32_t *frag_hits = NULL;
    int status = 1, rc;
    if (cli_index_open(cmd, index_path, 0, &idx, NULL) < 0)
        return 1;
    int dev[SBF_MAX_GPUS], n_gpus = cli_gpu_resolve(cmd, &gpus, dev);
    if (n_gpus > 0 && sbf_index_use_gpus(idx, n_gpus, dev) != SBF_OK)
        fprintf(stderr, "sbf %s: notice: %s: using the CPU engine\n", cmd, sbf_last_error());
    const int R = sbf_index_n_targets(idx);
    if (!(frag_hits = malloc((size_t)(R ? R : 1) * sizeof *frag_hits))) {
        cli_error(cmd, "out of memory");
        goto done;
    }
    int io_threads = threads > 1 ? threads : 0;
    if (sbf_seqfile_open(in1, io_threads, &f1) != SBF_OK || (in2 && sbf_seqfile_open(in2, io_threads, &f2) != SBF_OK)) {
        cli_error(cmd, "%s", sbf_last_error());
        goto done;
    }

    if (cli_output_open(cmd, out_path, &out) < 0)
        goto done;
    FILE *fp = out.fp;
    fprintf(fp, "#name\tkmers");
    for (int t = 0; t < R; ++t) {
        sbf_target_info_t ti;
        if (sbf_index_target(idx, t, &ti) == SBF_OK)
            fprintf(fp, "\t%s", ti.name);
    }
    fputc('\n', fp);

    const int per = in2 ? 2 : 1;
    for (int eof = 0; !eof;) {
        size_t n = 0;
        uint64_t bases = 0;
        while (bases < batch_bases) {
            if (batch_reserve(&b, n + 2, R) < 0) {
                cli_error(cmd, "out of memory");
                goto done;
            }
            rc = sbf_seqfile_read(f1, &b.recs[n]);
            if (rc < 0) {
                cli_error(cmd, "%s", sbf_last_error());
                goto done;
            }
            if (in2) {
                int rc2 = sbf_seqfile_read(f2, &b.recs[n + 1]);
                if (rc2 < 0) {
                    cli_error(cmd, "%s", sbf_last_error());
                    goto done;
                }
                if (rc != rc2) {
                    cli_error(cmd, "%s ends before %s: the mate files hold different numbers of reads",
                              rc ? in2 : in1, rc ? in1 : in2);
                    goto done;
                }
                if (rc) {
                    const kstring_t *a = &b.recs[n].name, *z = &b.recs[n + 1].name;
                    size_t la = base_name_len(a), lz = base_name_len(z);
                    if (la != lz || memcmp(a->s, z->s, la)) {
                        cli_error(cmd, "mate names differ: '%s' in %s and '%s' in %s", a->s, in1, z->s, in2);
                        goto done;
                    }
                }
            }
            if (rc == 0) {
                eof = 1;
                break;
            }
            for (int j = 0; j < per; ++j) {
                b.seqs[n + (size_t)j] = b.recs[n + (size_t)j].seq.s;
                b.lens[n + (size_t)j] = b.recs[n + (size_t)j].seq.l;
                bases += b.recs[n + (size_t)j].seq.l;
            }
            n += (size_t)per;
        }
        if (n == 0)
            break;
        if (sbf_query(idx, n, b.seqs, b.lens, b.kmers, b.hits, threads) != SBF_OK) {
            cli_error(cmd, "%s", sbf_last_error());
            goto done;
        }
        for (size_t i = 0; i < n; i += (size_t)per) {
            const kstring_t *name = &b.recs[i].name;
            uint32_t kmers = sbf_fragment_sum(R, per, NULL, i, b.kmers, b.hits, frag_hits);
            fprintf(fp, "%.*s\t%u", (int)(per == 2 ? base_name_len(name) : name->l), name->s, kmers);
            for (int t = 0; t < R; ++t)
                fprintf(fp, "\t%u", frag_hits[t]);
            fputc('\n', fp);
        }
        if (ferror(fp))
            break;
    }
    status = cli_output_commit(cmd, &out) ? 1 : 0;
done:
    cli_output_abort(&out);
    if (sbf_seqfile_close(f1) != SBF_OK || sbf_seqfile_close(f2) != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        status = 1;
    }
    batch_free(&b);
    free(frag_hits);
    sbf_index_destroy(idx);
    return status;
}
