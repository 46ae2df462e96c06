/* sbf_main.c -- the `sbf` command: dispatch to one file per subcommand (samtools style). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/hts_log.h>

#include "../filters/sbf_scan.h"
#include "../filters/sbf_tmpfile.h"
#include "sbf.h"
#include "sbf_cli.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *fp);
    const char *summary;
} command_t;

static const command_t commands[] = {
    {"build", main_build, usage_build, "build an index of one or more reference genomes"},
    {"info", main_info, usage_info, "describe an index: parameters, targets, sizes, fill, predicted FPR"},
    {"classify", main_classify, usage_classify, "tag reads with their best-matching target, or split them by it"},
    {"filter", main_filter, usage_filter, "remove the reads of some targets (host removal), keep the rest"},
    {"categorize", main_categorize, usage_categorize, "biobloomcategorizer's options and outputs, on sbf's engine"},
    {"query", main_query, usage_query, "count the k-mers of each read found in each target (TSV)"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *fp)
{
    fprintf(fp,
            "\n"
            "Program: sbf (screen reads against reference genomes with Super Bloom filters)\n"
            "Version: %s (htslib %s)\n\n"
            "Usage:   sbf <command> [options]\n\n"
            "Commands:\n",
            sbf_version(), hts_version());
    for (size_t i = 0; i < N_COMMANDS; ++i)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "  %-10s %s\n", "help CMD", "show the options of CMD");
    fprintf(fp, "\nOptions: --version, --help.   Documentation: README.md, doc/.\n"
                "Speed: BAM, CRAM and BGZF (bgzip) files are decompressed on every -@ thread; plain gzip\n"
                "is one stream that htslib decompresses on one thread, which limits a fast run.\n\n");
}

static void version(void)
{
    printf("sbf %s\n", SBF_VERSION);
    printf("libsbf %s\n", sbf_version());
    printf("htslib %s\n", hts_version());
    char paths[64] = "";
    for (int q = 0, at = 0; q < SBF_SCAN_PATHS; ++q)
        if (sbf_scan_path_supported((sbf_scan_path_t)q))
            at += snprintf(paths + at, sizeof paths - (size_t)at, "%s%s", at ? ", " : "",
                           sbf_scan_path_name((sbf_scan_path_t)q));
    printf("CPU scan: %s (this CPU runs: %s)\n", sbf_scan_path_name(sbf_scan_path()), paths);
#ifdef HAVE_CUDA
    int n = sbf_gpu_devices();
    printf("CUDA: built with nvcc %s; %d usable device%s%s\n", SBF_CUDA_VERSION, n, n == 1 ? "" : "s",
           n ? "" : " (CPU engine)");
    for (int d = 0; d < n; ++d) {
        char desc[256];
        if (sbf_gpu_describe_device(d, desc, sizeof desc) == SBF_OK)
            printf("GPU %d: %s\n", d, desc);
    }
#else
    printf("CUDA: not built (CPU engine only)\n");
#endif
}

static const command_t *find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; ++i)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* Interrupted (Ctrl-C, kill, a closed pipe: `sbf classify ... | head`): remove the temporary
 * outputs, then die of the same signal so the caller sees why. */
static void on_fatal_signal(int sig)
{
    sbf_tmpfile_remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        struct sigaction old;
        /* a signal the caller ignores (nohup, a shell's background job) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* htslib reports problems on stderr in its own words ("[E::bgzf_read_block] ..."); sbf says
 * them once, naming the file and the consequence. SBF_HTSLIB_LOG=warning (or error, info, debug)
 * lets htslib's messages through again, for debugging. */
static void quiet_htslib(void)
{
    const char *v = getenv("SBF_HTSLIB_LOG");
    enum htsLogLevel level = HTS_LOG_OFF;
    if (v)
        level = !strcmp(v, "error") ? HTS_LOG_ERROR : !strcmp(v, "info") ? HTS_LOG_INFO
              : !strcmp(v, "debug") ? HTS_LOG_DEBUG : HTS_LOG_WARNING;
    hts_set_log_level(level);
}

/* SBF_SIMD=scalar|avx2|avx512|avx512vbmi, a test switch: the CPU scan runs that path instead of the
 * fastest this CPU has (every path computes the same bits; tests compare them end to end).
 * Said on stderr; -1 after printing when the path is unknown or cannot run here. */
static int scan_path_switch(void)
{
    const char *v = getenv("SBF_SIMD");
    if (!v)
        return 0;
    if (sbf_scan_set_path_named(v) != SBF_OK) {
        fprintf(stderr, "sbf: SBF_SIMD=%s: %s\n", v, sbf_last_error());
        return -1;
    }
    fprintf(stderr, "sbf: notice: SBF_SIMD is set: the CPU scan runs its %s path (the same bits; a test switch)\n", v);
    return 0;
}

int main(int argc, char **argv)
{
    install_signal_handlers();
    quiet_htslib();
    if (scan_path_switch() < 0)
        return 1;
    int status;
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        version();
        status = 0;
    } else if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        status = 0;
    } else if (!strcmp(cmd, "help")) {
        const command_t *c = argc > 2 ? find(argv[2]) : NULL;
        if (argc > 2 && !c) {
            fprintf(stderr, "sbf help: unknown command '%s'\n", argv[2]);
            return 1;
        }
        if (c)
            c->usage(stdout);
        else
            usage(stdout);
        status = 0;
    } else {
        const command_t *c = find(cmd);
        if (!c) {
            fprintf(stderr, "sbf: unknown command '%s' (see 'sbf --help')\n", cmd);
            return 1;
        }
        /* getopt names argv[0] in its messages: "sbf classify: unrecognized option '--x'" */
        char program[64];
        snprintf(program, sizeof program, "sbf %s", c->name);
        argv[1] = program;
        status = c->run(argc - 1, argv + 1);
    }
    /* A full disk or a closed pipe must not pass for success. */
    if (fclose(stdout) != 0 && status == 0) {
        fprintf(stderr, "sbf: error closing standard output\n");
        status = 1;
    }
    return status;
}
