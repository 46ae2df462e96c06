/* sbf_cli.h -- what every `sbf` subcommand shares: error printing, number parsing, options. */
#ifndef SBF_CLI_H
#define SBF_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "sbf.h"

/* Long-only option ids start above every short option character (samtools' convention). */
enum {
    OPT_BITS_PER_KMER = CHAR_MAX + 1,
    OPT_SIZE,
    OPT_SHARD_BITS,
    OPT_PROGRESS,
    OPT_JSON,
    OPT_NO_VERIFY,
    OPT_BATCH,
    OPT_GPU,
    OPT_MIN_HITS,
    OPT_MARGIN,
    OPT_MIN_FRACTION,
    OPT_MASK_LOWCOMP,
    OPT_PRESET,
    OPT_MASK,
    OPT_LONG_LAYER,
    OPT_DUST,
    OPT_RENAME,
    OPT_CHECK,
    OPT_INTERLEAVED,
    OPT_SUMMARY,
    OPT_NO_PROGRESS,
    OPT_NO_PG,
    OPT_WRITE_INDEX,
    OPT_STATS,
    OPT_SPLIT,
    OPT_HITS,
    OPT_TAGS,
    OPT_REMOVE,
    OPT_KEEP,
    OPT_INVERT,
    OPT_GPU_MEM_LIMIT,
    OPT_REPORT,
    OPT_SAMPLES,
};

/* Options given twice (the standard: an option given twice accumulates or is refused, never
 * silently replaced). Call for every option getopt_long returns: 0 when c is fine, -1 after
 * printing "sbf CMD: OPTION given twice" when c takes a value, is not in `accumulate` (a list
 * ending with 0) and was seen before. Flags may repeat (giving one twice loses nothing). */
#define CLI_OPT_MAX 512
typedef struct {
    unsigned char seen[CLI_OPT_MAX];
} cli_seen_t;
int cli_once(const char *cmd, cli_seen_t *seen, int c, const char *shortopts, const struct option *lopts,
             const int *accumulate);

/* "sbf CMD: message" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse an integer in [min, max]; on failure print "sbf CMD: invalid value 'arg' for OPTION ..." and return -1. */
int cli_int(const char *cmd, const char *option, const char *arg, long min, long max, int *out);
int cli_double(const char *cmd, const char *option, const char *arg, double min, double max, double *out);
/* Sizes: a number with an optional K, M, G or T suffix (powers of 1024), e.g. 128M. */
int cli_size(const char *cmd, const char *option, const char *arg, uint64_t *out);

/* --gpu auto|none|all|ID[,ID...]: which CUDA devices a command uses. */
#define CLI_GPU_ALL (-3)
typedef struct {
    int mode;                 /* SBF_GPU_AUTO (the first device, if any), SBF_GPU_NONE, CLI_GPU_ALL, or 0: the list */
    int n, dev[SBF_MAX_GPUS]; /* the list */
} cli_gpus_t;
#define CLI_GPUS_AUTO ((cli_gpus_t){SBF_GPU_AUTO, 0, {0}})
/* Parse a --gpu value: 0, or -1 after printing the error. */
int cli_gpu_option(const char *cmd, const char *arg, cli_gpus_t *out);
/* The devices to use into dev[0..): their count, 0 for the CPU engine. Devices that are absent
 * get a notice on stderr and are left out (none left: the CPU engine). */
int cli_gpu_resolve(const char *cmd, const cli_gpus_t *want, int dev[SBF_MAX_GPUS]);

/* Human-readable byte count into buf ("128.0 MiB"). */
const char *cli_bytes(uint64_t bytes, char *buf, size_t size);

/* An output file that appears complete or not at all: written under a temporary name in the
 * same folder, renamed over `path` by cli_output_commit(). With path NULL or "-", stdout. */
typedef struct {
    FILE *fp;
    char *path, *tmp;
} cli_output_t;

int cli_output_open(const char *cmd, const char *path, cli_output_t *out);
/* Flush, close and rename; on any failure prints the error, removes the temporary file and returns -1. */
int cli_output_commit(const char *cmd, cli_output_t *out);
/* Remove the temporary file (after an error elsewhere); stdout is left as it is. */
void cli_output_abort(cli_output_t *out);

/* Write-checked end of a command's standard output: flush, report an error if any write failed. */
int cli_finish_stdout(const char *cmd);

/* The subcommands. Each returns the process exit status. */
int main_build(int argc, char **argv);
int main_info(int argc, char **argv);
int main_query(int argc, char **argv);
int main_classify(int argc, char **argv);
int main_filter(int argc, char **argv);
int main_categorize(int argc, char **argv);

void usage_build(FILE *fp);
void usage_info(FILE *fp);
void usage_query(FILE *fp);
void usage_classify(FILE *fp);
void usage_filter(FILE *fp);
void usage_categorize(FILE *fp);

#endif
