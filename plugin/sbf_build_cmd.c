/* sbf_build_cmd.c -- `sbf build`: one target per [NAME=]FILE argument, one index file. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../filters/sbf_params.h"
#include "sbf.h"
#include "sbf_cli.h"

void usage_build(FILE *fp)
{
    sbf_opt_t o;
    sbf_opt_init(&o);
    fprintf(fp,
            "Usage: sbf build -o IDX.sbf [options] [NAME=]REF.fa[.gz] ...\n"
            "\n"
            "Builds one filter per argument (target) and writes them to one index. A multi-record\n"
            "FASTA is one target; several arguments with the same NAME= go into one target.\n"
            "The default name is the file name without folders and extensions.\n"
            "Inputs: FASTA/FASTQ (plain, gzip, BGZF) or SAM/BAM/CRAM, '-' for standard input.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE        index to write (required)\n"
            "      --preset sr|long     sr: k=%d, for accurate reads (Illumina, PacBio HiFi);\n"
            "                           long: k=%d (m and s k-%d), for noisy long reads (older ONT,\n"
            "                           PacBio CLR): more of their k-mers are error-free [sr]\n"
            "  -k, --kmer INT           k-mer length, 1..32 [%d]\n"
            "  -m, --minimizer INT      minimizer length choosing the shard [%d, or k-%d]\n"
            "  -s, --smer INT           findere s-mer length [%d, or k-%d]\n"
            "  -H, --hashes INT         bits per s-mer in its shard [%d]\n"
            "      --shard-bits INT     shard size, 256 or 512 bits [%d]\n"
            "      --bits-per-kmer NUM  filter bits per reference k-mer [%g]\n"
            "      --size SIZE          fixed size of each target's filter instead (e.g. 128M)\n"
            "      --long-layer K|none  the long-read layer: every target again with K-mers (8 bits per\n"
            "                           k-mer, adapters left out), screening fragments with a read\n"
            "                           of 1000+ bases; none: reads of every length use k [%d]\n"
            "      --dust N             leave out of every target the k-mers of low complexity N or\n"
            "                           more (DUST: pairs of equal trinucleotides; a random 31-mer\n"
            "                           scores about 6, an A-rich stretch 100+); 0 keeps all [%u]\n"
            "      --mask [NAME=]FILE   leave out of target NAME (of every target without NAME=) each\n"
            "                           k-mer found in FILE: a host masked against microbes keeps\n"
            "                           their reads (repeat to add masks)\n"
            "  -@, --threads INT        threads: files read at once (one FASTA file, and one\n"
            "                           gzip stream, in pieces), masking, insertion [%d]\n"
            "      --gpu auto|none|ID   build on a CUDA device (same bytes as the CPU) [auto]\n"
            "      --progress           report each step on stderr (default when it is a terminal)\n"
            "  -h, --help               this help\n",
            o.k, SBF_LONG_READ_K, SBF_DEFAULT_K_MINUS_M, o.k, o.m, o.k - o.m, o.s, o.k - o.s, o.hashes, o.shard_bits, o.bits_per_kmer,
            SBF_LONG_LAYER_K, SBF_DEFAULT_DUST, o.threads);
}

/* --progress: each step on its own line, with the seconds since the build started (the time
 * of a step is the difference to the next line's) */
static struct timespec progress_t0;
static void report_step(void *data, const char *step)
{
    (void)data;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    fprintf(stderr, "sbf build: [%7.2f s] %s\n",
            (double)(now.tv_sec - progress_t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - progress_t0.tv_nsec), step);
}

/* "dir/MG1655-K12.fasta.gz" -> "MG1655-K12" */
static char *default_name(const char *path)
{
    static const char *ext[] = {".gz", ".bgz", ".bgzf", ".xz", ".fa", ".fasta", ".fna", ".ffn", ".fas", ".fq",
                                ".fastq", ".sam", ".bam", ".cram", ".seq"};
    const char *base = strrchr(path, '/');
    char *name = strdup(base ? base + 1 : path);
    if (!name)
        return NULL;
    for (int again = 1; again;) {
        again = 0;
        size_t len = strlen(name);
        for (size_t i = 0; i < sizeof ext / sizeof ext[0]; ++i) {
            size_t el = strlen(ext[i]);
            if (len > el && !strcasecmp(name + len - el, ext[i])) {
                name[len - el] = '\0';
                again = 1;
                break;
            }
        }
    }
    return name;
}

int main_build(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"output", required_argument, NULL, 'o'},     {"kmer", required_argument, NULL, 'k'},
        {"minimizer", required_argument, NULL, 'm'},  {"smer", required_argument, NULL, 's'},
        {"hashes", required_argument, NULL, 'H'},     {"shard-bits", required_argument, NULL, OPT_SHARD_BITS},
        {"bits-per-kmer", required_argument, NULL, OPT_BITS_PER_KMER},
        {"size", required_argument, NULL, OPT_SIZE},  {"threads", required_argument, NULL, '@'},
        {"progress", no_argument, NULL, OPT_PROGRESS}, {"gpu", required_argument, NULL, OPT_GPU},
        {"preset", required_argument, NULL, OPT_PRESET}, {"mask", required_argument, NULL, OPT_MASK},
        {"long-layer", required_argument, NULL, OPT_LONG_LAYER}, {"dust", required_argument, NULL, OPT_DUST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *cmd = "build", *out = NULL;
    sbf_opt_t opt;
    sbf_opt_init(&opt);
    cli_gpus_t gpus = CLI_GPUS_AUTO;
    int progress = isatty(STDERR_FILENO), c, bits_given = 0, m_given = 0, s_given = 0, k_given = 0;
    const char *preset = NULL;
    cli_seen_t seen = {{0}};
    int layer_k = -1;   /* --long-layer: -1 for the default */
    int dust = -1;      /* --dust: -1 for the default */
    const char **mask_args = calloc((size_t)argc, sizeof *mask_args);   /* --mask repeats add up */
    int n_mask_args = 0;
    if (!mask_args) {
        cli_error(cmd, "out of memory");
        return 1;
    }
    while ((c = getopt_long(argc, argv, "o:k:m:s:H:@:h", lopts, NULL)) >= 0) {
        int bad = 0;
        static const int accumulate[] = {OPT_MASK, 0};   /* masks add up */
        if (cli_once(cmd, &seen, c, "o:k:m:s:H:@:h", lopts, accumulate) < 0)
            goto early;
        switch (c) {
        case 'o': out = optarg; break;
        case 'k': bad = cli_int(cmd, "-k", optarg, 1, 32, &opt.k); k_given = 1; break;
        case OPT_PRESET:
            if (preset && strcmp(preset, optarg)) {
                cli_error(cmd, "--preset given twice (%s, %s): give one", preset, optarg);
                goto early;
            }
            preset = optarg;
            if (!strcmp(optarg, "sr"))
                opt.k = SBF_DEFAULT_K;
            else if (!strcmp(optarg, "long"))
                opt.k = SBF_LONG_READ_K;
            else {
                cli_error(cmd, "unknown --preset '%s': sr or long", optarg);
                goto early;
            }
            break;
        case 'm': bad = cli_int(cmd, "-m", optarg, 1, 32, &opt.m); m_given = 1; break;
        case 's': bad = cli_int(cmd, "-s", optarg, 1, 32, &opt.s); s_given = 1; break;
        case 'H': bad = cli_int(cmd, "-H", optarg, 1, 64, &opt.hashes); break;
        case OPT_SHARD_BITS: bad = cli_int(cmd, "--shard-bits", optarg, 256, 512, &opt.shard_bits); break;
        case OPT_BITS_PER_KMER:
            bad = cli_double(cmd, "--bits-per-kmer", optarg, 0.5, 1024, &opt.bits_per_kmer);
            bits_given = 1;
            break;
        case OPT_SIZE: bad = cli_size(cmd, "--size", optarg, &opt.size_bytes); break;
        case '@': bad = cli_int(cmd, "-@", optarg, 1, 1024, &opt.threads); break;
        case OPT_PROGRESS: progress = 1; break;
        case OPT_GPU: bad = cli_gpu_option(cmd, optarg, &gpus); break;
        case OPT_MASK: mask_args[n_mask_args++] = optarg; break;
        case OPT_LONG_LAYER:
            if (!strcmp(optarg, "none"))
                layer_k = 0;
            else
                bad = cli_int(cmd, "--long-layer", optarg, 1, 32, &layer_k);
            break;
        case OPT_DUST: bad = cli_int(cmd, "--dust", optarg, 0, 100000, &dust); break;
        case 'h': usage_build(stdout); free(mask_args); return 0;
        default: usage_build(stderr); goto early;
        }
        if (bad)
            goto early;
    }
    if (!out) {
        cli_error(cmd, "no output index given (-o IDX.sbf)");
        usage_build(stderr);
        goto early;
    }
    if (optind >= argc) {
        cli_error(cmd, "no reference given");
        usage_build(stderr);
        goto early;
    }
    if (preset && k_given) {
        cli_error(cmd, "--preset %s sets k: give --preset or -k, not both", preset);
        goto early;
    }
    /* -k alone: the minimizer and s-mer lengths follow it (k - 6, as 25 is to 31). */
    if (!m_given)
        opt.m = opt.k > SBF_DEFAULT_K_MINUS_M ? opt.k - SBF_DEFAULT_K_MINUS_M : opt.k;
    if (!s_given)
        opt.s = opt.k > SBF_DEFAULT_K_MINUS_M ? opt.k - SBF_DEFAULT_K_MINUS_M : opt.k;
    if (bits_given && opt.size_bytes) {
        cli_error(cmd, "--bits-per-kmer and --size are alternatives: give one");
        goto early;
    }

    if (gpus.mode == CLI_GPU_ALL || (gpus.mode == 0 && gpus.n > 1)) {
        cli_error(cmd, "a build runs on one device: --gpu auto, none or one ID (screening takes several)");
        goto early;
    }
    /* auto stays auto: if the device fails, the library builds on the CPU and says so below */
    int dev[SBF_MAX_GPUS];
    opt.gpu = cli_gpu_resolve(cmd, &gpus, dev) > 0 ? (gpus.mode == SBF_GPU_AUTO ? SBF_GPU_AUTO : dev[0]) : SBF_GPU_NONE;
    sbf_builder_t *b;
    if (sbf_builder_init(&opt, &b) != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        goto early;
    }
    if (layer_k >= 0 && sbf_builder_long_layer(b, layer_k) != SBF_OK) {
        cli_error(cmd, "--long-layer %d: %s", layer_k, sbf_last_error());
        sbf_builder_destroy(b);
        goto early;
    }
    if (dust >= 0 && sbf_builder_dust(b, (unsigned)dust) != SBF_OK) {
        cli_error(cmd, "--dust %d: %s", dust, sbf_last_error());
        sbf_builder_destroy(b);
        goto early;
    }
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &progress_t0);
    if (progress)
        sbf_builder_on_step(b, report_step, NULL);
    /* Targets in the order of first appearance; NAME= repeated adds files to the same target. */
    char **names = calloc((size_t)(argc - optind), sizeof *names);
    const char **paths = calloc((size_t)(argc - optind), sizeof *paths);
    int *file_target = calloc((size_t)(argc - optind), sizeof *file_target);
    int n_names = 0, n_files = 0, status = 1;
    if (!names || !paths || !file_target) {
        cli_error(cmd, "out of memory");
        sbf_builder_destroy(b);
        free(names);
        free(paths);
        free(file_target);
        goto early;
    }
    for (int i = optind; i < argc; ++i) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        const char *path = arg;
        char *name;
        if (eq && !memchr(arg, '/', (size_t)(eq - arg))) {
            name = strndup(arg, (size_t)(eq - arg));
            path = eq + 1;
        } else {
            name = default_name(arg);
        }
        if (!name) {
            cli_error(cmd, "out of memory");
            goto done;
        }
        if (!*name || !*path) {
            cli_error(cmd, "'%s': expected [NAME=]FILE with a non-empty name and file", arg);
            free(name);
            goto done;
        }
        int t = -1;
        for (int j = 0; j < n_names; ++j)
            if (!strcmp(names[j], name))
                t = j;
        if (t < 0) {
            t = sbf_builder_add_target(b, name);
            if (t < 0) {
                cli_error(cmd, "%s", sbf_last_error());
                free(name);
                goto done;
            }
            names[n_names++] = name;
        } else {
            free(name);
        }
        paths[n_files] = path;
        file_target[n_files++] = t;
    }
    /* read together: a reference in one file per chromosome reads on every thread */
    if (sbf_builder_add_files(b, n_files, file_target, paths) != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        goto done;
    }
    /* --mask [NAME=]FILE: NAME= as in a target argument; a name no target has is refused */
    for (int i = 0; i < n_mask_args; ++i) {
        const char *arg = mask_args[i], *eq = strchr(arg, '='), *path = arg;
        int t = SBF_EVERY_TARGET;
        if (eq && !memchr(arg, '/', (size_t)(eq - arg))) {
            path = eq + 1;
            t = -2;
            for (int j = 0; j < n_names; ++j)
                if (strlen(names[j]) == (size_t)(eq - arg) && !strncmp(names[j], arg, (size_t)(eq - arg)))
                    t = j;
            if (t == -2) {
                cli_error(cmd, "--mask %s: no target is named '%.*s'", arg, (int)(eq - arg), arg);
                goto done;
            }
        }
        if (!*path) {
            cli_error(cmd, "--mask '%s': expected [NAME=]FILE with a non-empty file", arg);
            goto done;
        }
        if (sbf_builder_add_mask(b, t, path) != SBF_OK) {
            cli_error(cmd, "%s", sbf_last_error());
            goto done;
        }
    }
    if (progress) {
        char text[128];
        if (opt.gpu >= 0 || opt.gpu == SBF_GPU_AUTO)
            snprintf(text, sizeof text, "building %d filter%s on GPU %d", n_names, n_names > 1 ? "s" : "",
                     opt.gpu >= 0 ? opt.gpu : dev[0]);
        else
            snprintf(text, sizeof text, "building %d filter%s with %d thread%s", n_names, n_names > 1 ? "s" : "",
                     opt.threads, opt.threads > 1 ? "s" : "");
        report_step(NULL, text);
    }
    /* each filter into the output once finished: a human index's k=31 filter then leaves memory
     * before its long-read layer is built */
    if (sbf_builder_output(b, out) != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        goto done;
    }
    sbf_index_t *idx;
    int rc = sbf_builder_finish(b, &idx);
    b = NULL;
    if (rc != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        goto done;
    }
    if (sbf_index_notice(idx))
        fprintf(stderr, "sbf %s: notice: %s\n", cmd, sbf_index_notice(idx));
    if (progress)
        report_step(NULL, "writing the index");
    if (sbf_index_save(idx, out) != SBF_OK) {
        cli_error(cmd, "%s", sbf_last_error());
        sbf_index_destroy(idx);
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (progress) {
        for (int t = 0; t < sbf_index_n_targets(idx); ++t) {
            sbf_target_info_t ti;
            char sz[32];
            if (sbf_index_target(idx, t, &ti) == SBF_OK)
            {
                uint64_t masked = 0;
                sbf_index_target_masks(idx, t, NULL, NULL, &masked);
                fprintf(stderr, "sbf build: %-16s %12llu k-mers  %10s  fill %.3f  predicted FPR %.3g",
                        ti.name, (unsigned long long)ti.kmers, cli_bytes(ti.bytes, sz, sizeof sz), ti.fill,
                        ti.predicted_fpr);
                if (masked)
                    fprintf(stderr, "  (%llu masked k-mers left out)", (unsigned long long)masked);
                fputc('\n', stderr);
            }
        }
        fprintf(stderr, "sbf build: done in %.2f s; %s has checksum %016llx (sbf info --check)\n",
                (double)(t1.tv_sec - progress_t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - progress_t0.tv_nsec), out,
                (unsigned long long)sbf_index_checksum(idx));
    }
    sbf_index_destroy(idx);
    status = 0;
done:
    sbf_builder_destroy(b);
    for (int j = 0; j < n_names; ++j)
        free(names[j]);
    free(names);
    free(paths);
    free(file_target);
    free(mask_args);
    return status;
early:
    free(mask_args);
    return 1;
}
