/* sbf_screen.h -- the read-screening job behind `sbf classify` and `sbf filter`: read, score,
 * write, in a three-stage pipeline (reader thread -> classifier -> ordered writer thread). */
#ifndef SBF_SCREEN_H
#define SBF_SCREEN_H

#include <stdint.h>
#include <getopt.h>
#include <stdio.h>

#include "../bam/sbf_writer.h"
#include "../filters/sbf_classify.h"
#include "../filters/sbf_lowcomp.h"
#include "sbf_cli.h"

typedef enum {
    SCREEN_TAG,     /* every record out, tagged */
    SCREEN_SPLIT,   /* one output per category */
    SCREEN_FILTER,  /* the records not assigned to removed targets */
    SCREEN_COUNT    /* no read output: summaries only (sbf categorize without --fq/--fa) */
} screen_mode_t;

#define SCREEN_MAX_INDEXES 64

struct screen_kept_s;   /* indexes kept from sample to sample (--samples: sbf_samples.c) */

typedef struct {
    const char *cmd;            /* "classify" or "filter", for messages */
    const char *index_path;     /* for messages: the index, or the first of several */
    const char *index_paths[SCREEN_MAX_INDEXES];   /* index files; their targets side by side */
    int n_indexes;
    const char *multi_name, *none_name;   /* category names ["multi", "none"] */
    int no_tags;                /* split mode: records out unchanged */
    long min_match_bases;       /* > 0: min-hits = this - k + 1, min-fraction 0 (categorize -s N) */
    const char *in[2];          /* in[1]: second mate file, or NULL */
    int interleaved;
    screen_mode_t mode;
    const char *out;            /* -o (NULL: standard output) */
    const char *out1, *out2;    /* -1 / -2: mates to separate files */
    const char *split_pattern;  /* --split: % = category, # = mate */
    const char *outfmt;         /* -O */
    const char *reference;      /* -T: CRAM in and out */
    int write_index;
    int rename;                 /* --rename: names replaced by fragment numbers */
    const char *pg_cmdline;     /* NULL with --no-PG */
    sbf_tagnames_t tags;
    sbf_classify_opt_t score;   /* the rule (mates: BioBloom's pair rules for categorize) */
    const char *select[SCREEN_MAX_INDEXES];   /* filter: --remove/--keep target lists, given */
    int n_select;                             /* n_select times (0: all targets) */
    int keep;                   /* filter: the list names targets to keep, not remove */
    int invert;                 /* filter: write the other reads */
    const char *summary_tsv, *json, *report;
    int threads;
    uint64_t batch_bases;
    cli_gpus_t gpus;            /* --gpu */
    uint64_t gpu_mem_limit;     /* 0, or device bytes the run may use (index + batches) */
    int progress;               /* 1 forced, 0 never, -1 when stderr is a terminal */
    int stats;                  /* stage timings on stderr */
    const char *samples;        /* --samples: the list of samples (then in[] comes from it) */
    const char *sample;         /* the sample this run screens, or NULL */
    struct screen_kept_s *kept; /* the indexes opened by an earlier sample, reused; or NULL */
} screen_opt_t;

void screen_opt_init(screen_opt_t *o, const char *cmd, screen_mode_t mode);
/* Options both commands take: returns 1 if `c` was one of them, 0 if not, -1 on a bad value. */
int screen_parse_common(screen_opt_t *o, int c, const char *arg);
/* The "Input", "Scoring" and "Output" parts of both usages. */
void screen_usage_common(FILE *fp);
/* getopt_long tables: the common options (terminated by a zero entry) and their short letters. */
extern const char screen_common_short[];
#define SCREEN_COMMON_LONG_OPTIONS                                                                     \
    {"index", required_argument, NULL, 'x'}, {"output", required_argument, NULL, 'o'},                 \
        {"output-fmt", required_argument, NULL, 'O'}, {"reference", required_argument, NULL, 'T'},     \
        {"threads", required_argument, NULL, '@'}, {"batch", required_argument, NULL, 'K'},            \
        {"min-score", required_argument, NULL, 's'}, {"min-hits", required_argument, NULL, OPT_MIN_HITS}, \
        {"margin", required_argument, NULL, OPT_MARGIN}, {"min-fraction", required_argument, NULL, OPT_MIN_FRACTION}, \
        {"mask-lowcomp", required_argument, NULL, OPT_MASK_LOWCOMP}, {"interleaved", no_argument, NULL, OPT_INTERLEAVED}, \
        {"gpu", required_argument, NULL, OPT_GPU}, {"summary", required_argument, NULL, OPT_SUMMARY},  \
        {"json", required_argument, NULL, OPT_JSON}, {"progress", no_argument, NULL, OPT_PROGRESS},    \
        {"report", required_argument, NULL, OPT_REPORT},                                               \
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS}, {"no-PG", no_argument, NULL, OPT_NO_PG},  \
        {"write-index", no_argument, NULL, OPT_WRITE_INDEX}, {"stats", no_argument, NULL, OPT_STATS},  \
        {"rename", no_argument, NULL, OPT_RENAME}, {"samples", required_argument, NULL, OPT_SAMPLES},  \
        {"gpu-mem-limit", required_argument, NULL, OPT_GPU_MEM_LIMIT},                                 \
        {"help", no_argument, NULL, 'h'}, {"output1", required_argument, NULL, '1'}, {"output2", required_argument, NULL, '2'}

/* A screening subcommand: its own options on top of the common ones. */
typedef struct {
    const char *cmd;
    screen_mode_t mode;
    const struct option *long_options;   /* SCREEN_COMMON_LONG_OPTIONS plus its own */
    void (*usage)(FILE *fp);
    int (*option)(screen_opt_t *o, int c, const char *arg);   /* 0 done, -1 error (printed), 1 unknown */
    int (*check)(screen_opt_t *o);                              /* after parsing, or NULL; -1 error */
} screen_command_t;

/* Parse argv (argv[0] is the subcommand), check, run: the exit status. */
int screen_main(const screen_command_t *sc, int argc, char **argv);

/* Check inputs and outputs named on the command line (argv[optind_..]); -1 after printing. */
int screen_check_io(screen_opt_t *o, int argc, char **argv, int optind_, void (*usage)(FILE *));

/* Run the job; returns the exit status (messages already printed). */
int screen_run(const screen_opt_t *o);

/* --samples (sbf_samples.c): the output options each name every sample's files with {sample};
 * -1 after printing. */
int screen_check_samples(screen_opt_t *o);
/* Every sample of the list o->samples in turn, against indexes opened once: the exit status. */
int screen_run_samples(const screen_opt_t *o);

/* "sbf ARGS..." as one string for the @PG line (malloc'd). */
char *screen_cmdline(int argc, char **argv);

#endif
