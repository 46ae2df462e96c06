/* sbf_categorize_cmd.c -- `sbf categorize`: biobloomcategorizer's options and file names, so a
 * pipeline that calls BioBloom Tools switches by changing the command. The differences from
 * BioBloom Tools 2.3 are listed in doc/biobloom.md. The work is sbf_screen.c's. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sbf.h"
#include "sbf_cli.h"
#include "sbf_screen.h"

#define BIOBLOOM_DEFAULT_SCORE 0.15
#define BIOBLOOM_MIN_HITS 3   /* sbf 0.3's default, kept for categorize */

void usage_categorize(FILE *fp)
{
    fprintf(fp,
            "Usage: sbf categorize [OPTION]... -f \"IDX1.sbf [IDX2.sbf]...\" FILE [FILE2]\n"
            "\n"
            "biobloomcategorizer's interface on sbf's engine: each read (pair) is assigned to the\n"
            "target it matches, or to multiMatch / noMatch; PREFIX_summary.tsv gives the counts.\n"
            "Indexes are sbf files (sbf build), not BioBloom .bf filters; every target of every\n"
            "index is a filter. Differences from BioBloom Tools 2.3: doc/biobloom.md.\n"
            "\n"
            "  -p, --prefix=PREFIX     output prefix: PREFIX_summary.tsv, PREFIX_<target>.fq ... [none]\n"
            "  -f, --filter_files=LIST index files, separated by spaces or commas (required)\n"
            "  -e, --paired_mode       FILE and FILE2 are mates (or FILE holds pairs: interleaved\n"
            "                          FASTQ, or SAM/BAM/CRAM mates); outputs get _1 and _2\n"
            "  -i, --inclusive         a pair matches a target if either mate does [both mates]\n"
            "  -s, --score=N           least fraction of a read's k-mers found in a target [%.2f];\n"
            "                          an integer N > 1: at least N-k+1 k-mers (N matching bases)\n"
            "  -b, --best_hit          a read matching several targets goes to the best one, not\n"
            "                          multiMatch (exact ties stay multiMatch)\n"
            "  -t, --threads=N         threads [1]\n"
            "      --fq, --fa          write the categorized reads as FASTQ / FASTA [summary only]\n"
            "  -g, --gz_output         compress the read outputs (BGZF, which gzip reads)\n"
            "      --gpu auto|none|all|ID[,ID..]  CUDA devices: the first (auto), every one, or those listed [auto]\n"
            "  -v, --version           sbf's version\n"
            "  -h, --help              this help\n",
            BIOBLOOM_DEFAULT_SCORE);
}

enum { OPT_FQ = 1000, OPT_FA, OPT_UNSUPPORTED };

/* "a.sbf b.sbf" or "a.sbf,b.sbf": the words, into the index list. */
static int split_filters(screen_opt_t *o, char *list)
{
    for (char *w = strtok(list, " ,\t"); w; w = strtok(NULL, " ,\t")) {
        if (o->n_indexes == SCREEN_MAX_INDEXES) {
            cli_error(o->cmd, "at most %d filter files", SCREEN_MAX_INDEXES);
            return -1;
        }
        o->index_paths[o->n_indexes++] = w;
        if (!o->index_path)
            o->index_path = w;
    }
    return 0;
}

int main_categorize(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"prefix", required_argument, NULL, 'p'},   {"filter_files", required_argument, NULL, 'f'},
        {"paired_mode", no_argument, NULL, 'e'},    {"inclusive", no_argument, NULL, 'i'},
        {"score", required_argument, NULL, 's'},    {"threads", required_argument, NULL, 't'},
        {"gz_output", no_argument, NULL, 'g'},      {"best_hit", no_argument, NULL, 'b'},
        {"fq", no_argument, NULL, OPT_FQ},          {"fa", no_argument, NULL, OPT_FA},
        {"gpu", required_argument, NULL, OPT_GPU},  {"version", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        /* biobloomcategorizer options sbf does not take: named in a clear error */
        {"length_cutoff", required_argument, NULL, 'l'}, {"with_score", no_argument, NULL, 'w'},
        {"chastity", no_argument, NULL, OPT_UNSUPPORTED}, {"no-chastity", no_argument, NULL, OPT_UNSUPPORTED},
        {"min_FPR", required_argument, NULL, 'c'},       {"multi", required_argument, NULL, 'm'},
        {"stdout_filter", required_argument, NULL, 'd'}, {NULL, 0, NULL, 0}};
    const char *cmd = "categorize", *prefix = "";
    screen_opt_t o;
    screen_opt_init(&o, cmd, SCREEN_COUNT);
    o.multi_name = "multiMatch";
    o.none_name = "noMatch";
    o.no_tags = 1;
    o.pg_cmdline = NULL;
    /* BioBloom's rule: a fraction of the read's k-mers (its -s), no calibrated score */
    o.score.min_score = 0;
    o.score.min_hits = BIOBLOOM_MIN_HITS;
    o.score.min_fraction = BIOBLOOM_DEFAULT_SCORE;
    o.score.margin = 1.0;   /* without -b, every passing target is a match: two make multiMatch */
    int c, paired = 0, inclusive = 0, gz = 0, status = 1;
    long min_bases = 0;
    char *filters = NULL, *pattern = NULL, *summary = NULL;
    const char *reads_fmt = NULL;
    int li;
    cli_seen_t seen = {{0}};
    static const int accumulate[] = {'f', 0};   /* -f "A.sbf B.sbf" -f C.sbf: all three */
    while ((c = getopt_long(argc, argv, "p:f:eis:t:gbvhl:wc:m:d:", lopts, &li)) >= 0) {
        int bad = 0;
        if (cli_once(cmd, &seen, c, "p:f:eis:t:gbvhl:wc:m:d:", lopts, accumulate) < 0)
            goto done;
        switch (c) {
        case 'p': prefix = optarg; break;
        case 'f': {
            size_t had = filters ? strlen(filters) : 0;
            char *grown = realloc(filters, had + strlen(optarg) + 2);
            if (!grown) {
                cli_error(cmd, "out of memory");
                goto done;
            }
            snprintf(grown + had, strlen(optarg) + 2, "%s%s", had ? " " : "", optarg);
            filters = grown;
            break;
        }
        case 'e': paired = 1; break;
        case 'i': inclusive = 1; break;
        case 's': {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || end == optarg || v < 0 || (v > 1 && v != (double)(long)v)) {
                cli_error(cmd, "invalid value '%s' for -s: a score from 0 to 1, or a whole number of bases", optarg);
                goto done;
            }
            if (v > 1)
                min_bases = (long)v;
            else
                o.score.min_fraction = v;
            break;
        }
        case 't': bad = cli_int(cmd, "-t", optarg, 1, 1024, &o.threads); break;
        case 'g': gz = 1; break;
        case 'b': o.score.margin = 0; break;
        case OPT_FQ:
        case OPT_FA:
            if (reads_fmt && strcmp(reads_fmt, c == OPT_FQ ? "fq" : "fa")) {
                cli_error(cmd, "--fq and --fa: give one (the format of the read files written)");
                goto done;
            }
            reads_fmt = c == OPT_FQ ? "fq" : "fa";
            break;
        case OPT_GPU: bad = cli_gpu_option(cmd, optarg, &o.gpus); break;
        case 'v': printf("sbf categorize (sbf %s)\n", SBF_VERSION); status = 0; goto done;
        case 'h': usage_categorize(stdout); status = 0; goto done;
        case 'l': case 'w': case 'c': case 'm': case 'd': case OPT_UNSUPPORTED:
            if (c == OPT_UNSUPPORTED)
                cli_error(cmd, "BioBloom's --%s is not supported by sbf categorize (see doc/biobloom.md)", lopts[li].name);
            else
                cli_error(cmd, "BioBloom's -%c is not supported by sbf categorize (see doc/biobloom.md)", c);
            goto done;
        default: usage_categorize(stderr); goto done;
        }
        if (bad)
            goto done;
    }
    if (!filters || split_filters(&o, filters) < 0 || o.n_indexes == 0) {
        if (!filters || o.n_indexes == 0)
            cli_error(cmd, "no filter files given (-f \"IDX.sbf ...\")");
        goto done;
    }
    if (gz && !reads_fmt) {   /* options that would do nothing here are refused */
        cli_error(cmd, "-g compresses the read files of --fq or --fa: give one of them too");
        goto done;
    }
    if (inclusive && !paired) {
        cli_error(cmd, "-i (a pair matches when either mate does) needs -e (paired reads)");
        goto done;
    }
    int n = argc - optind;
    if (n < 1 || n > 2 || (n == 2 && !paired)) {
        cli_error(cmd, n < 1 ? "no input given"
                       : n == 2 ? "two inputs are mates: add -e (sbf categorize reads one file, or one pair of files)"
                                : "at most two inputs (mate files, with -e)");
        goto done;
    }
    o.in[0] = argv[optind];
    o.in[1] = n == 2 ? argv[optind + 1] : NULL;
    if (paired && n == 1) {
        const char *dot = strrchr(o.in[0], '.');
        /* FASTA/FASTQ cannot say which records are mates: then consecutive records are */
        o.interleaved = !(dot && (!strcmp(dot, ".bam") || !strcmp(dot, ".sam") || !strcmp(dot, ".cram")));
    }
    o.score.mates = paired ? (inclusive ? SBF_MATES_EITHER : SBF_MATES_BOTH) : SBF_MATES_SUMMED;
    const char *sep = *prefix ? "_" : "";
    size_t len = strlen(prefix) + 32;
    if (!(summary = malloc(len)) || !(pattern = malloc(len))) {
        cli_error(cmd, "out of memory");
        goto done;
    }
    snprintf(summary, len, "%s%ssummary.tsv", prefix, sep);
    o.summary_tsv = summary;
    if (reads_fmt) {
        o.mode = SCREEN_SPLIT;
        snprintf(pattern, len, "%s%s%%%s.%s%s", prefix, sep, paired ? "_#" : "", reads_fmt, gz ? ".gz" : "");
        o.split_pattern = pattern;
        o.outfmt = !strcmp(reads_fmt, "fq") ? (gz ? "fastq.gz" : "fastq") : (gz ? "fasta.gz" : "fasta");
    }
    o.min_match_bases = min_bases;
    status = screen_run(&o);
done:
    free(filters);
    free(pattern);
    free(summary);
    return status;
}
