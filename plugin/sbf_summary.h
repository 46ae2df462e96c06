/* sbf_summary.h -- what a screening run counted, and its three reports: the BioBloom-compatible
 * TSV (--summary), the JSON summary (--json) and the few lines on stderr at the end. */
#ifndef SBF_SUMMARY_H
#define SBF_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "sbf.h"

typedef struct {
    const char *cmd;              /* "classify" or "filter" */
    const char *mode;             /* "tag", "split" or "filter" */
    const char *unit;             /* "reads", "pairs" or "fragments" */
    const char *engine;           /* "CPU, 4 threads" or "GPU 0 (NVIDIA H200 ...)" */
    const char *index_path;       /* the first index */
    const char *const *index_paths;
    const sbf_index_t *const *indexes;   /* loaded: their checksums, targets, sources and masks */
    int n_indexes;
    const char *inputs[2];
    const char *sample;           /* --samples: the sample's name, else NULL */
    int n_targets;
    const char *const *names;     /* n_targets + 2 category names: targets, multi, none */
    const sbf_classify_opt_t *rule;   /* the scoring rule and its thresholds */
    const char *switches;         /* test switches set in the environment (SBF_NULL_ENGINE,...), or NULL */
    /* counted by the classifier */
    uint64_t frags, reads_in, bases_in;
    uint64_t extras;              /* secondary/supplementary records: not classified */
    uint64_t no_kmer;             /* fragments without a valid k-mer (counted in none too) */
    uint64_t chimeric;            /* multi fragments whose parts belong to different targets
                                   * (chimeras, reads across an insertion; counted in multi too) */
    uint64_t masked_reads, masked_bases;   /* reads with low-complexity stretches masked, and their bases */
    int layer_k;                  /* k of the indexes' long-read layers, 0 when they have none */
    int renamed;                  /* --rename: names replaced by fragment numbers */
    uint64_t long_frags;          /* fragments screened with the long-read layers */
    uint64_t *cat;                /* n_targets + 2: fragments per category */
    uint64_t *hits, *shared;      /* per target: fragments passing it; of those, also passing another */
    uint64_t *score_hist;         /* per target, SUMMARY_BINS bins of the calibrated score S_t
                                   * (sbf_score_hits(): what the rule compares with min_score) of
                                   * each fragment with a valid k-mer; filled for --report only */
    /* counted by the writer */
    uint64_t frags_out, reads_out, bases_out;
    double seconds;
} screen_summary_t;

/* The calibrated-score histogram: bins [0, 1), [1, 2), ..., [29, 30) and an open last bin,
 * 30 or more (a 150 bp read of the target with every k-mer found scores about 100). A target
 * without a hit scores 0: the first bin. */
#define SUMMARY_BINS 31
#define SUMMARY_BIN_WIDTH 1.0
static inline int summary_score_bin(double score)
{
    return score < (SUMMARY_BINS - 1) * SUMMARY_BIN_WIDTH ? (score > 0 ? (int)(score / SUMMARY_BIN_WIDTH) : 0)
                                                          : SUMMARY_BINS - 1;
}

int summary_alloc(screen_summary_t *s, int n_targets);
void summary_free(screen_summary_t *s);

/* Write the TSV or the JSON to fp (the caller checks the stream and commits the file). */
void summary_write_tsv(const screen_summary_t *s, FILE *fp);
/* The JSON summary. It is also a MultiQC custom-content table (keys id, section_name,
 * plot_type, pconfig, data; doc/multiqc.md): named *_mqc.json, or found through
 * workflows/multiqc/multiqc_config.yaml, it shows one row of provenance per sample, the sample
 * named after PATH (its file name less .json, _mqc and .summary). */
void summary_write_json(const screen_summary_t *s, const char *path, FILE *fp);
void summary_print(const screen_summary_t *s, FILE *fp);
/* A self-contained HTML page (inline SVG, no scripts, no network): reads per category, the
 * calibrated-score distribution per target with the run's threshold, the run's parameters. */
void summary_write_html(const screen_summary_t *s, FILE *fp);

#endif
