/* sbf_cli.h -- what every `sbf` subcommand shares: error printing, number parsing, options. */
#ifndef SBF_CLI_H
#define SBF_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

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
};

/* "sbf CMD: message" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse an integer in [min, max]; on failure print "sbf CMD: invalid value 'arg' for OPTION ..." and return -1. */
int cli_int(const char *cmd, const char *option, const char *arg, long min, long max, int *out);
int cli_double(const char *cmd, const char *option, const char *arg, double min, double max, double *out);
/* Sizes: a number with an optional K, M, G or T suffix (powers of 1024), e.g. 128M. */
int cli_size(const char *cmd, const char *option, const char *arg, uint64_t *out);

/* --gpu auto|none|ID: SBF_GPU_AUTO, SBF_GPU_NONE or a device number; -1 printed error. */
int cli_gpu_option(const char *cmd, const char *arg, int *out);
/* The device to use for `want`: an absent explicit device gives a one-line notice and
 * SBF_GPU_NONE (the CPU engine); "auto" without a device is SBF_GPU_NONE silently. */
int cli_gpu_resolve(const char *cmd, int want);

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
