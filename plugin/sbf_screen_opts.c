/* sbf_screen_opts.c -- the command-line side of the screening commands (sbf classify, filter,
 * categorize): the options they share and their usage text, the command line for @PG, the checks
 * of the inputs and outputs named, and screen_main(), which parses, checks and calls screen_run()
 * (sbf_screen.c) for classify and filter, each adding its own options (screen_command_t). */
#include <stdlib.h>
#include <string.h>

#include "sbf_cli.h"
#include "sbf_screen_int.h"

/* ------------------------------------------------------------------ options */

const char screen_common_short[] = "x:o:1:2:O:T:@:K:s:h";

void screen_opt_init(screen_opt_t *o, const char *cmd, screen_mode_t mode)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->mode = mode;
    memcpy(o->tags.category, "sb", 2);
    memcpy(o->tags.score, "ss", 2);
    memcpy(o->tags.hits, "sh", 2);
    sbf_classify_opt_init(&o->score);
    o->threads = 1;
    o->batch_bases = 0;   /* the engine's default */
    o->gpus = CLI_GPUS_AUTO;
    o->progress = -1;
    o->multi_name = "multi";
    o->none_name = "none";
}

int screen_parse_common(screen_opt_t *o, int c, const char *arg)
{
    const char *cmd = o->cmd;
    int bad = 0;
    switch (c) {
    case 'x':
        if (o->n_indexes == SCREEN_MAX_INDEXES) {
            cli_error(cmd, "at most %d index files", SCREEN_MAX_INDEXES);
            return -1;
        }
        o->index_paths[o->n_indexes++] = arg;
        if (!o->index_path)
            o->index_path = arg;
        break;
    case 'o': o->out = arg; break;
    case '1': o->out1 = arg; break;
    case '2': o->out2 = arg; break;
    case 'O': o->outfmt = arg; break;
    case 'T': o->reference = arg; break;
    case '@': bad = cli_int(cmd, "-@", arg, 1, 1024, &o->threads); break;
    case 'K': bad = cli_size(cmd, "-K", arg, &o->batch_bases); if (!bad && !o->batch_bases) o->batch_bases = 1; break;
    case 's': bad = cli_double(cmd, "-s", arg, 0, 1e6, &o->score.min_score); break;
    case OPT_MIN_FRACTION: bad = cli_double(cmd, "--min-fraction", arg, 0, 1, &o->score.min_fraction); break;
    case OPT_MASK_LOWCOMP: {
        int v;
        bad = cli_int(cmd, "--mask-lowcomp", arg, 0, 1 << 30, &v);
        if (!bad && v > 0 && v < 2 * SBF_LOWCOMP_MAX_PERIOD) {
            cli_error(cmd, "--mask-lowcomp %d: 0 (no mask) or at least %d bases", v, 2 * SBF_LOWCOMP_MAX_PERIOD);
            bad = 1;
        }
        o->score.mask_lowcomp = (unsigned)v;
        break;
    }
    case OPT_MIN_HITS: {
        int v;
        bad = cli_int(cmd, "--min-hits", arg, 1, 1 << 30, &v);
        o->score.min_hits = (uint32_t)v;
        break;
    }
    case OPT_MARGIN: bad = cli_double(cmd, "--margin", arg, 0, 1, &o->score.margin); break;
    case OPT_INTERLEAVED: o->interleaved = 1; break;
    case OPT_GPU: bad = cli_gpu_option(cmd, arg, &o->gpus); break;
    case OPT_GPU_MEM_LIMIT: bad = cli_size(cmd, "--gpu-mem-limit", arg, &o->gpu_mem_limit); break;
    case OPT_SUMMARY: o->summary_tsv = arg; break;
    case OPT_JSON: o->json = arg; break;
    case OPT_REPORT: o->report = arg; break;
    case OPT_PROGRESS: o->progress = 1; break;
    case OPT_NO_PROGRESS: o->progress = 0; break;
    case OPT_NO_PG: o->pg_cmdline = NULL; break;
    case OPT_WRITE_INDEX: o->write_index = 1; break;
    case OPT_RENAME: o->rename = 1; break;
    case OPT_STATS: o->stats = 1; break;
    case OPT_SAMPLES: o->samples = arg; break;
    default: return 0;
    }
    return bad ? -1 : 1;
}

void screen_usage_common(FILE *fp)
{
    fprintf(fp,
            "Input:\n"
            "  IN [IN2]             SAM, BAM, CRAM, FASTQ or FASTA (plain, gzip, BGZF); '-' is stdin.\n"
            "                       IN2: mates of IN (names must match, after /1 /2).\n"
            "                       Plain gzip is decompressed on one thread (htslib reads it as one\n"
            "                       stream): it limits a fast run; BGZF (bgzip) uses every -@ thread.\n"
            "      --interleaved    IN holds pairs as consecutive records. Without it, SAM/BAM/CRAM\n"
            "                       mates are paired by their flags when they are adjacent.\n"
            "      --samples LIST   many samples, the index opened once: LIST has one per line,\n"
            "                       NAME<tab>IN or NAME<tab>IN<tab>IN2 ('#' comments), and no IN is\n"
            "                       given; every output option must hold {sample}: NAME goes there\n"
            "  -T, --reference FA   reference of CRAM input and output\n"
            "  -x, --index FILE     index built by 'sbf build' (required; repeat -x to screen against\n"
            "                       several indexes at once: their targets side by side, same k)\n"
            "Scoring (a pair is one fragment: both mates' k-mers count, both get one category). A\n"
            "target's score is -log10 of the chance that its hits come from false positives alone,\n"
            "given the read's k-mers and the target's false-positive rate (doc/ACCURACY.md):\n"
            "  -s, --min-score F    least score of a target [%g]\n"
            "      --min-hits N     least number of k-mers found in a target [%d]\n"
            "      --min-fraction F  least fraction of the fragment's k-mers found in a target [0]\n"
            "      --margin F       passing targets within F x (the best target's hits) of the best,\n"
            "                       or behind it by what its false positives give, are tied:\n"
            "                       'multi' [%g]\n"
            "      --mask-lowcomp N  mask stretches of N or more bases that repeat with a period\n"
            "                       of 1-%d (poly-G, (AC)n...) before scoring; 0: off [%d]\n"
            "Output:\n"
            "  -O, --output-fmt F   sam, bam, cram, fastq, fasta, or fastq.gz/fasta.gz/sam.gz (BGZF),\n"
            "                       then ',level=N' [from the file name; else like the input]\n"
            "      --no-PG          do not add an @PG line to SAM/BAM/CRAM headers\n"
            "      --write-index    index BAM/CRAM output (.csi/.crai; needs sorted records)\n"
            "      --rename         names become fragment numbers (1, 2, ...; mates alike): no\n"
            "                       original read name is written (secondary records refused)\n"
            "      --summary FILE   BioBloom-style TSV: per target hits/misses/shared, multiMatch, noMatch\n"
            "      --json FILE      JSON summary: reads and bases in and out, categories, speed, engine,\n"
            "                       provenance (also a MultiQC table: name it *_mqc.json)\n"
            "      --report FILE    an HTML page: reads per category, calibrated scores per target, parameters\n"
            "Running:\n"
            "  -@, --threads N      threads compressing the outputs (from 4 on, N/2 more\n"
            "                       decompress the inputs) and for the CPU engine [1]\n"
            "  -K, --batch SIZE     bases per batch; memory is about 4 batches, 4 more per GPU\n"
            "                       [%uM per CPU-engine worker; %uM with a GPU]\n"
            "      --gpu auto|none|all|ID[,ID..]  CUDA devices: the first (auto), every one, or those\n"
            "                          listed; batches run on all of them; same results as the\n"
            "                          CPU engine [auto]\n"
            "      --gpu-mem-limit SIZE  use the GPU only if the index and batches fit in SIZE\n"
            "      --progress, --no-progress  a progress line on stderr [when stderr is a terminal]\n"
            "      --stats          where the time went (reading, GPU busy share, waiting for the\n"
            "                          engine, the engine workers' seconds, writing) and peak\n"
            "                          memory, on stderr\n"
            "  -h, --help           this help\n",
            SBF_DEFAULT_MIN_SCORE, SBF_DEFAULT_MIN_HITS, SBF_DEFAULT_MARGIN, SBF_LOWCOMP_MAX_PERIOD,
            SBF_DEFAULT_MASK_LOWCOMP, DEFAULT_CPU_BATCH_BASES >> 20,
            DEFAULT_GPU_BATCH_BASES >> 20);
}

/* The @PG line's CL: the command as typed. argv[0] is already "sbf classify" (sbf_main.c names
 * the subcommand there for getopt's messages), so nothing is put before it. */
char *screen_cmdline(int argc, char **argv)
{
    kstring_t s = {0, 0, NULL};
    for (int i = 0; i < argc; ++i)
        if ((i > 0 && kputc(' ', &s) < 0) || kputs(argv[i], &s) < 0) {
            free(s.s);
            return NULL;
        }
    return s.s;
}

/* ------------------------------------------------------------------ argument checks */

int screen_check_io(screen_opt_t *o, int argc, char **argv, int optind_, void (*usage)(FILE *))
{
    if (!o->index_path) {
        cli_error(o->cmd, "no index given (-x IDX.sbf)");
        usage(stderr);
        return -1;
    }
    int n = argc - optind_;
    if (o->samples) {
        if (n > 0) {
            cli_error(o->cmd, "--samples names the inputs: give no input on the command line ('%s')", argv[optind_]);
            return -1;
        }
        if (!o->out1 != !o->out2) {
            cli_error(o->cmd, "-1 and -2 go together (one file per mate)");
            return -1;
        }
        return screen_check_samples(o);
    }
    if (n < 1 || n > 2) {
        cli_error(o->cmd, n < 1 ? "no input given" : "at most two inputs (mate files) are accepted");
        usage(stderr);
        return -1;
    }
    o->in[0] = argv[optind_];
    o->in[1] = n == 2 ? argv[optind_ + 1] : NULL;
    if (o->in[1] && !strcmp(o->in[0], "-") && !strcmp(o->in[1], "-")) {
        cli_error(o->cmd, "only one of the two inputs can be standard input");
        return -1;
    }
    if (o->in[1] && o->interleaved) {
        cli_error(o->cmd, "--interleaved reads pairs from one file: give one input");
        return -1;
    }
    if (!o->out1 != !o->out2) {
        cli_error(o->cmd, "-1 and -2 go together (one file per mate)");
        return -1;
    }
    if (o->out1 && o->out) {
        cli_error(o->cmd, "-o cannot be used with -1 and -2");
        return -1;
    }
    if (o->out1 && !o->in[1] && !o->interleaved)
        fprintf(stderr, "sbf %s: notice: -1/-2 with one input: mates are recognised by SAM flags only; "
                        "single reads go to -1\n", o->cmd);
    return 0;
}

int screen_main(const screen_command_t *sc, int argc, char **argv)
{
    screen_opt_t o;
    screen_opt_init(&o, sc->cmd, sc->mode);
    char *cmdline = screen_cmdline(argc, argv);
    if (!cmdline) {
        cli_error(sc->cmd, "out of memory");
        return 1;
    }
    o.pg_cmdline = cmdline;
    int c, status = 1;
    cli_seen_t seen = {{0}};
    static const int accumulate[] = {'x', OPT_REMOVE, OPT_KEEP, 0};   /* -x: several indexes */
    while ((c = getopt_long(argc, argv, screen_common_short, sc->long_options, NULL)) >= 0) {
        if (cli_once(sc->cmd, &seen, c, screen_common_short, sc->long_options, accumulate) < 0)
            goto done;
        if (c == 'h') {
            sc->usage(stdout);
            free(cmdline);
            return 0;
        }
        int r = screen_parse_common(&o, c, optarg);   /* 1 taken, 0 not ours, -1 bad value */
        if (r == 0) {
            int own = sc->option(&o, c, optarg);       /* 0 taken, 1 unknown (or getopt's '?') */
            if (own == 1)
                sc->usage(stderr);
            r = own == 0 ? 1 : -1;
        }
        if (r < 0)
            goto done;
    }
    if ((!sc->check || sc->check(&o) == 0) && screen_check_io(&o, argc, argv, optind, sc->usage) == 0)
        status = o.samples ? screen_run_samples(&o) : screen_run(&o);
done:
    free(cmdline);
    return status;
}
