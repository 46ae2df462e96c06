/* sbf_screen.c -- the read-screening pipeline behind `sbf classify` and `sbf filter`.
 *
 *   reader thread --(batches, bounded by -K bases)--> this thread (points the engine at the
 *   batch's reads) --> engine workers (sbf_pipeline.c: two per GPU, on every GPU of --gpu, or
 *   one on -@ CPU threads) --(in input order)--> scoring --> writer thread (records in input
 *   order, to one output, the two mate outputs, or one output per category).
 *
 * A fixed set of batches (jobs) circulates between the stages, so memory is bounded by their
 * number x batch size whatever the input size. The engine delivers batches in submission order,
 * so they reach the writer in input order. htslib's thread pool (-@) decompresses the input and
 * compresses the outputs. Any failure stops every stage; no output file is renamed into place
 * unless the whole run succeeded. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../bam/sbf_batch.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_mem.h"
#include "sbf.h"
#include "sbf_cli.h"
#include "sbf_engine.h"
#include "sbf_pipeline.h"
#include "sbf_queue.h"
#include "sbf_screen.h"
#include "sbf_summary.h"

#define MAX_JOBS (4 + 2 * SBF_MAX_GPUS)   /* see screen_run() */
/* -K: small batches on GPUs keep the records of the batches in flight in the CPU caches
 * (bench/ksweep.sh on the H200 machine: BAM 2.8 s at 512K-1M against 4.1 s at 16M); the CPU
 * engine starts its query threads per batch, so it keeps large ones. */
#define DEFAULT_BATCH_BASES (16u << 20)
#define DEFAULT_GPU_BATCH_BASES (1u << 20)

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
    case OPT_STATS: o->stats = 1; break;
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
            "  -T, --reference FA   reference of CRAM input and output\n"
            "  -x, --index FILE     index built by 'sbf build' (required; repeat -x to screen against\n"
            "                       several indexes at once: their targets side by side, same k)\n"
            "Scoring (a pair is one fragment: both mates' k-mers count, both get one category). A\n"
            "target's score is -log10 of the chance that its hits come from false positives alone,\n"
            "given the read's k-mers and the target's false-positive rate (doc/ACCURACY.md):\n"
            "  -s, --min-score F    least score of a target [%g]\n"
            "      --min-hits N     least number of k-mers found in a target [%d]\n"
            "      --min-fraction F  least fraction of the fragment's k-mers found in a target [0]\n"
            "      --margin F       passing targets within F x (the fragment's k-mers) hits of the\n"
            "                       best are tied: 'multi' [%g]\n"
            "      --mask-lowcomp N  mask stretches of N or more bases that repeat with a period\n"
            "                       of 1-%d (poly-G, (AC)n...) before scoring; 0: off [%d]\n"
            "Output:\n"
            "  -O, --output-fmt F   sam, bam, cram, fastq, fasta, or fastq.gz/fasta.gz/sam.gz (BGZF),\n"
            "                       then ',level=N' [from the file name; else like the input]\n"
            "      --no-PG          do not add an @PG line to SAM/BAM/CRAM headers\n"
            "      --write-index    index BAM/CRAM output (.csi/.crai; needs sorted records)\n"
            "      --summary FILE   BioBloom-style TSV: per target hits/misses/shared, multiMatch, noMatch\n"
            "      --json FILE      JSON summary: reads and bases in and out, categories, speed, engine\n"
            "      --report FILE    an HTML page: reads per category, score distributions, parameters\n"
            "Running:\n"
            "  -@, --threads N      threads compressing the outputs (from 4 on, N/4 more\n"
            "                       decompress the inputs) and for the CPU engine [1]\n"
            "  -K, --batch SIZE     bases per batch; memory is about 4 batches, 2 more per GPU\n"
            "                       [%uM; %uM with a GPU]\n"
            "      --gpu auto|none|all|ID[,ID..]  CUDA devices: the first (auto), every one, or those\n"
            "                          listed; batches run on all of them; same results as the\n"
            "                          CPU engine [auto]\n"
            "      --gpu-mem-limit SIZE  use the GPU only if the index and batches fit in SIZE\n"
            "      --progress, --no-progress  a progress line on stderr [when stderr is a terminal]\n"
            "      --stats          where the time went (reading, GPU busy share, waiting for the\n"
            "                          engine, writing) and peak memory, on stderr\n"
            "  -h, --help           this help\n",
            SBF_DEFAULT_MIN_SCORE, SBF_DEFAULT_MIN_HITS, SBF_DEFAULT_MARGIN, SBF_LOWCOMP_MAX_PERIOD,
            SBF_DEFAULT_MASK_LOWCOMP, DEFAULT_BATCH_BASES >> 20,
            DEFAULT_GPU_BATCH_BASES >> 20);
}

char *screen_cmdline(int argc, char **argv)
{
    kstring_t s = {0, 0, NULL};
    if (kputs("sbf", &s) < 0)
        return NULL;
    for (int i = 0; i < argc; ++i)
        if (kputc(' ', &s) < 0 || kputs(argv[i], &s) < 0) {
            free(s.s);
            return NULL;
        }
    return s.s;
}

/* ------------------------------------------------------------------ the job */

typedef struct {
    sbf_batch_t batch;
    const char **seqs;        /* FASTA/FASTQ reads for sbf_query() */
    size_t *lens, *qtext;     /* qtext[q]: the batch read of query q */
    const uint8_t **packed;   /* SAM/BAM/CRAM reads for sbf_query_nt16() */
    size_t *plens, *qsam;
    uint32_t *kmers, *hits;   /* per read */
    /* the engine's units: each read, or the segments of a long one (filters/sbf_segment.h);
     * FASTA/FASTQ reads' units first, then SAM/BAM/CRAM reads' */
    sbf_units_t units_text, units_sam;
    uint32_t *ukmers, *uhits, *uhits3;   /* per unit; uhits3: one index's, with several indexes */
    size_t cap_ukmers, cap_uhits, cap_uhits3;
    size_t *seg_first, *seg_end;         /* per read: its units */
    sbf_segments_t seg;
    const sbf_segments_t *segp;          /* &seg, or NULL when nothing was queried */
    sbf_lowcomp_batch_t mask_text, mask_sam;   /* the reads with low complexity masked: */
    const char *const *qseqs;                  /* the views the engine queries */
    const uint8_t *const *qpacked;
    size_t n_text, n_sam;     /* reads queried as text and as 4-bit codes */
    size_t *rlen;             /* per read: bases (so scoring need not touch the records again) */
    /* filled by the engine worker that has the batch, merged in input order on delivery */
    screen_summary_t part;    /* this batch's counts */
    uint8_t *passing;         /* scoring scratch: the targets a fragment passes */
    int pairs_seen;
    /* records encoded by the worker for each output (when every output can take them), so the
     * writer thread only copies bytes into the files */
    int encoded;
    kstring_t *enc;           /* per output */
    size_t *enc_records;
    bam1_t *scratch;          /* FASTA/FASTQ records converted for BAM output */
    uint64_t frags_out, reads_out, bases_out;
    double t_score, t_encode; /* worker seconds */
    size_t cap_reads;
    int32_t *cat;             /* per fragment: target, SBF_CAT_MULTI or SBF_CAT_NONE/NO_KMER */
    float *score;
    uint8_t *keep;            /* filter mode: written */
    uint32_t *fhits;          /* per fragment x target */
    size_t cap_frags;
    int n_enc;
} job_t;

typedef struct {
    const screen_opt_t *o;
    sbf_index_t *idx[SCREEN_MAX_INDEXES];
    int n_idx, first_target[SCREEN_MAX_INDEXES];   /* targets of index x are first_target[x]... */
    int R;                                          /* targets of all indexes */
    char **names;             /* R + 2 categories */
    char **file_names;        /* sanitised, for --split */
    uint8_t *selected;        /* filter: targets named by --remove/--keep */
    sbf_input_t *input;
    htsThreadPool pool;
    htsThreadPool in_pool;    /* decompression of the inputs, apart from the outputs' pool */
    int n_slots, mate_files;  /* outputs: n_slots x (mate_files ? 2 : 1) */
    sbf_writer_t **outs;
    job_t jobs[MAX_JOBS];
    int n_jobs;
    sbf_queue_t free_q, class_q, write_q;
    pipeline_t *engine;
    int encode;               /* every output takes encoded records (sbf_writer_can_encode) */
    uint64_t batch_bases;     /* -K, or the engine's default */
    long long in_place;       /* records the readers parsed in place (--stats) */
    double t_fill, t_fill_wait;   /* the read-ahead's reading, and the parser's waits for it */
    int null_engine;          /* SBF_NULL_ENGINE: queries skipped, to measure the pipeline's I/O */
    screen_summary_t sum;
    sbf_scorer_t scorer;      /* the rule, bound to every index's targets */
    kstring_t switches;       /* the test switches set in the environment, comma-separated */
    int k, max_targets;       /* the indexes' k; the most targets of one index */
    uint8_t *passing;
    /* the first failure of any stage */
    pthread_mutex_t err_lock;
    char err[1024];
    int failed;
    /* stage timings (--stats) */
    double t_read, t_score, t_encode, t_write, t_wait_write;
    pipeline_stats_t engine_stats;
    int show_progress;
    int pairs_seen;           /* a SAM pair was recognised by its flags: the unit is "fragments" */
    double t0;
} screen_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Record the first failure (the calling thread's sbf error message) and stop every stage. */
static void fail(screen_t *s, const char *msg)
{
    pthread_mutex_lock(&s->err_lock);
    if (!s->failed) {
        s->failed = 1;
        snprintf(s->err, sizeof s->err, "%s", msg);
    }
    pthread_mutex_unlock(&s->err_lock);
    sbf_queue_abort(&s->free_q);
    sbf_queue_abort(&s->class_q);
    sbf_queue_abort(&s->write_q);
}

/* realloc that leaves *p valid on failure */
static int grow(void **p, size_t bytes)
{
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

static int job_reserve(job_t *j, int R)
{
    const sbf_batch_t *b = &j->batch;
    if (b->n_reads > j->cap_reads) {
        size_t cap = b->cap_reads, hits = cap * (size_t)R * sizeof *j->hits;
        if (grow((void **)&j->seqs, cap * sizeof *j->seqs) || grow((void **)&j->lens, cap * sizeof *j->lens) ||
            grow((void **)&j->qtext, cap * sizeof *j->qtext) || grow((void **)&j->packed, cap * sizeof *j->packed) ||
            grow((void **)&j->plens, cap * sizeof *j->plens) || grow((void **)&j->qsam, cap * sizeof *j->qsam) ||
            grow((void **)&j->kmers, cap * sizeof *j->kmers) || grow((void **)&j->hits, hits) ||
            grow((void **)&j->seg_first, cap * sizeof *j->seg_first) ||
            grow((void **)&j->seg_end, cap * sizeof *j->seg_end) || grow((void **)&j->rlen, cap * sizeof *j->rlen))
            return -1;
        j->cap_reads = cap;
    }
    if (b->n_frags > j->cap_frags) {
        size_t cap = b->cap_frags;
        if (grow((void **)&j->cat, cap * sizeof *j->cat) || grow((void **)&j->score, cap * sizeof *j->score) ||
            grow((void **)&j->keep, cap * sizeof *j->keep) || grow((void **)&j->fhits, cap * (size_t)R * sizeof *j->fhits))
            return -1;
        j->cap_frags = cap;
    }
    return 0;
}

static void job_free(job_t *j)
{
    sbf_batch_free(&j->batch);
    free(j->seqs);
    free(j->lens);
    free(j->qtext);
    free(j->packed);
    free(j->plens);
    free(j->qsam);
    free(j->kmers);
    free(j->hits);
    sbf_units_free(&j->units_text);
    sbf_units_free(&j->units_sam);
    free(j->ukmers);
    free(j->uhits);
    free(j->uhits3);
    free(j->seg_first);
    free(j->seg_end);
    free(j->rlen);
    sbf_lowcomp_batch_free(&j->mask_text);
    sbf_lowcomp_batch_free(&j->mask_sam);
    summary_free(&j->part);
    free(j->passing);
    for (int o = 0; j->enc && o < j->n_enc; ++o)
        free(j->enc[o].s);
    free(j->enc);
    free(j->enc_records);
    if (j->scratch)
        bam_destroy1(j->scratch);
    free(j->cat);
    free(j->score);
    free(j->keep);
    free(j->fhits);
}

/* ------------------------------------------------------------------ stages */

static void *reader_main(void *arg)
{
    screen_t *s = arg;
    void *item;
    while (sbf_queue_pop(&s->free_q, &item)) {
        job_t *j = item;
        double t = now();
        int rc = sbf_input_next(s->input, &j->batch, s->batch_bases);
        s->t_read += now() - t;
        if (rc < 0) {
            fail(s, sbf_error_message());
            break;
        }
        if (rc == 0 || sbf_queue_push(&s->class_q, j) < 0)
            break;
    }
    sbf_queue_close(&s->class_q);
    return NULL;
}

/* Does the fragment match the targets of --remove/--keep? A `multi` fragment matches if one
 * of its tied targets is selected. */
static int matches_selection(const screen_t *s, int cat, const uint8_t *passing)
{
    if (cat >= 0)
        return s->selected[cat];
    if (cat == SBF_CAT_MULTI)
        for (int t = 0; t < s->R; ++t)
            if (passing[t] && s->selected[t])
                return 1;
    return 0;
}

static int category_slot(const screen_t *s, int cat)
{
    return cat >= 0 ? cat : cat == SBF_CAT_MULTI ? s->R : s->R + 1;
}

/* Query one index for the batch on engine slot `slot`: j->kmers and hits (stride R) in read
 * order. */
/* Query every unit of the batch on one index (text units, then SAM units): j->ukmers, and Rx
 * hits per unit into uhits. */
static int query_units(const screen_t *s, const sbf_index_t *idx, int slot, job_t *j, uint32_t *uhits, int Rx)
{
    const sbf_units_t *ut = &j->units_text, *us = &j->units_sam;
    const size_t T = ut->n_units, S = us->n_units;
    const int threads = s->o->threads;
    int rc = SBF_OK;
    if (T)
        rc = sbf_engine_query(idx, slot, T, ut->seqs, NULL, ut->lens, j->ukmers, uhits, threads);
    if (rc == SBF_OK && S)
        rc = sbf_engine_query(idx, slot, S, NULL, us->packed, us->lens, j->ukmers + T, uhits + T * (size_t)Rx, threads);
    return rc;
}

/* Batches in the engine at once: its two workers per GPU copy and one more to hide the
 * hand-over, or the CPU engine's one worker. */
static int engine_in_flight(int gpu_copies) { return gpu_copies > 0 ? 2 * gpu_copies + 1 : 1; }

/* The batch's own counts, zeroed (allocated on first use). */
static int job_counts_reset(const screen_t *s, job_t *j)
{
    const size_t R = (size_t)s->R;
    if (!j->part.cat && summary_alloc(&j->part, s->R) < 0)
        return -1;
    if (!j->passing && !(j->passing = calloc(R + 1, 1)))
        return -1;
    j->part.frags = j->part.reads_in = j->part.bases_in = j->part.extras = j->part.no_kmer = 0;
    j->part.masked_reads = j->part.masked_bases = 0;
    memset(j->part.cat, 0, (R + 2) * sizeof *j->part.cat);
    memset(j->part.hits, 0, (R + 1) * sizeof *j->part.hits);
    memset(j->part.shared, 0, (R + 1) * sizeof *j->part.shared);
    memset(j->part.score_hist, 0, (R + 1) * SUMMARY_BINS * sizeof *j->part.score_hist);
    j->pairs_seen = 0;
    j->frags_out = j->reads_out = j->bases_out = 0;
    return 0;
}

/* On delivery, in input order: the batch's counts into the run's. */
static void merge_counts(screen_t *s, const job_t *j)
{
    screen_summary_t *sum = &s->sum;
    const screen_summary_t *p = &j->part;
    const size_t R = (size_t)s->R;
    sum->frags += p->frags;
    sum->reads_in += p->reads_in;
    sum->bases_in += p->bases_in;
    sum->extras += p->extras;
    sum->no_kmer += p->no_kmer;
    sum->masked_reads += p->masked_reads;
    sum->masked_bases += p->masked_bases;
    for (size_t c = 0; c < R + 2; ++c)
        sum->cat[c] += p->cat[c];
    for (size_t t = 0; t < R; ++t) {
        sum->hits[t] += p->hits[t];
        sum->shared[t] += p->shared[t];
    }
    for (size_t i = 0; i < R * SUMMARY_BINS; ++i)
        sum->score_hist[i] += p->score_hist[i];
    s->pairs_seen |= j->pairs_seen;
}

/* This thread, before the engine: point the engine at the batch's reads. SAM/BAM/CRAM records
 * go to the engine as their 4-bit codes (half a byte per base, as bam1_t holds them),
 * FASTA/FASTQ as text: two queries when a batch holds both (mate files of different formats),
 * results scattered back by read. */
static int prepare_job(screen_t *s, job_t *j)
{
    sbf_batch_t *b = &j->batch;
    if (job_reserve(j, s->R) < 0 || job_counts_reset(s, j) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", b->n_reads);
    size_t n_text = 0, n_sam = 0;
    for (size_t i = 0; i < b->n_reads; ++i) {
        const sbf_read_t *r = &b->reads[i];
        j->rlen[i] = sbf_read_len(r);
        if (r->frag < 0)
            ++j->part.extras;
        if (r->sam) {
            j->qsam[n_sam] = i;
            j->packed[n_sam] = bam_get_seq(r->b);
            j->plens[n_sam++] = r->frag >= 0 ? sbf_read_len(r) : 0;   /* unclassified records cost nothing */
        } else {
            j->qtext[n_text] = i;
            j->seqs[n_text] = r->seq.s ? r->seq.s : "";
            j->lens[n_text++] = r->frag >= 0 ? r->seq.l : 0;
        }
    }
    j->n_text = n_text;
    j->n_sam = n_sam;
    return SBF_OK;
}

static int query_job(screen_t *s, job_t *j, int slot);
static int score_job(screen_t *s, job_t *j);
static int encode_job(screen_t *s, job_t *j);

/* An engine worker: the queries, then the scoring rule and the batch's counts, then (when the
 * outputs take them) the records encoded for the writer: all of it in parallel over batches. */
static int work_job(void *ctx, void *item, int slot)
{
    screen_t *s = ctx;
    job_t *j = item;
    pipeline_busy(s->engine, slot, 1);
    int rc = query_job(s, j, slot);
    pipeline_busy(s->engine, slot, 0);
    double t0 = now();
    if (rc == SBF_OK)
        rc = score_job(s, j);
    double t1 = now();
    if (rc == SBF_OK && s->encode)
        rc = encode_job(s, j);
    j->t_score = t1 - t0;
    j->t_encode = now() - t1;
    return rc;
}

/* Query every index for the batch on the worker's slot (GPU copy). */
static int query_job(screen_t *s, job_t *j, int slot)
{
    const int R = s->R;
    j->segp = NULL;
    if (s->null_engine) {   /* SBF_NULL_ENGINE (bench/io.sh): no k-mer found, the I/O alone */
        memset(j->kmers, 0, j->batch.n_reads * sizeof *j->kmers);
        memset(j->hits, 0, j->batch.n_reads * (size_t)R * sizeof *j->hits);
        return SBF_OK;
    }
    /* low-complexity stretches masked once for every index */
    const char *const *no_text;
    const uint8_t *const *no_sam;
    const unsigned mask = s->o->score.mask_lowcomp;
    int rc = sbf_lowcomp_batch(&j->mask_text, mask, j->n_text, j->seqs, NULL, j->lens, &j->qseqs, &no_sam);
    if (rc == SBF_OK)
        rc = sbf_lowcomp_batch(&j->mask_sam, mask, j->n_sam, NULL, j->packed, j->plens, &no_text, &j->qpacked);
    if (rc != SBF_OK)
        return rc;
    j->part.masked_reads = j->mask_text.masked_reads + j->mask_sam.masked_reads;
    j->part.masked_bases = j->mask_text.masked_bases + j->mask_sam.masked_bases;
    /* long reads as segments, so the scoring sees where each target's hits lie */
    const unsigned k = (unsigned)s->k;
    if ((rc = sbf_units_make(&j->units_text, j->n_text, j->qseqs, NULL, j->lens, k)) != SBF_OK ||
        (rc = sbf_units_make(&j->units_sam, j->n_sam, NULL, j->qpacked, j->plens, k)) != SBF_OK)
        return rc;
    const size_t T = j->units_text.n_units, U = T + j->units_sam.n_units;
    const size_t Um = U ? U : 1;
    if ((rc = sbf_reserve(&j->ukmers, &j->cap_ukmers, Um, sizeof *j->ukmers)) != SBF_OK ||
        (rc = sbf_reserve(&j->uhits, &j->cap_uhits, Um * (size_t)(R ? R : 1), sizeof *j->uhits)) != SBF_OK ||
        (s->n_idx > 1 &&
         (rc = sbf_reserve(&j->uhits3, &j->cap_uhits3, Um * (size_t)s->max_targets, sizeof *j->uhits3)) != SBF_OK))
        return rc;
    if (s->n_idx == 1) {
        if ((rc = query_units(s, s->idx[0], slot, j, j->uhits, R)) != SBF_OK)
            return rc;
    } else {   /* several index files: each one's hits side by side, in the order given */
        for (int x = 0; x < s->n_idx; ++x) {
            int Rx = sbf_index_n_targets(s->idx[x]);
            if ((rc = query_units(s, s->idx[x], slot, j, j->uhits3, Rx)) != SBF_OK)
                return rc;
            for (size_t q = 0; q < U; ++q)
                memcpy(j->uhits + q * (size_t)R + (size_t)s->first_target[x], j->uhits3 + q * (size_t)Rx,
                       (size_t)Rx * sizeof *j->uhits);
        }
    }
    /* each read's units, and its totals */
    for (size_t q = 0; q < j->n_text; ++q) {
        j->seg_first[j->qtext[q]] = j->units_text.start[q];
        j->seg_end[j->qtext[q]] = j->units_text.start[q + 1];
    }
    for (size_t q = 0; q < j->n_sam; ++q) {
        j->seg_first[j->qsam[q]] = T + j->units_sam.start[q];
        j->seg_end[j->qsam[q]] = T + j->units_sam.start[q + 1];
    }
    j->seg = (sbf_segments_t){j->seg_first, j->seg_end, j->ukmers, j->uhits};
    j->segp = &j->seg;
    sbf_segments_gather(&j->seg, j->batch.n_reads, R, j->kmers, j->hits);
    return SBF_OK;
}

/* The scoring rule for every fragment of the batch, and its counts (in j->part). */
static int score_job(screen_t *s, job_t *j)
{
    sbf_batch_t *b = &j->batch;
    const int R = s->R;
    screen_summary_t *sum = &j->part;
    uint8_t *passing = j->passing;
    for (size_t f = 0; f < b->n_frags; ++f) {
        const sbf_frag_t *fr = &b->frags[f];
        uint32_t *h = j->fhits + f * (size_t)R;
        sbf_frag_result_t res;
        sbf_score_fragment(&s->scorer, (int)fr->n, fr->read, 0, j->kmers, j->hits, j->segp, h, passing, &res);
        for (uint32_t m = 0; m < fr->n; ++m)
            sum->bases_in += j->rlen[fr->read[m]];
        const int cat = res.category;
        const uint32_t kmers = res.kmers;
        const double score = res.score;
        j->cat[f] = cat;
        j->score[f] = (float)score;
        if (kmers)
            for (int t = 0; t < R; ++t) {
                int bin = (int)((double)h[t] / kmers * SUMMARY_BINS);
                ++sum->score_hist[(size_t)t * SUMMARY_BINS + (size_t)(bin < SUMMARY_BINS ? bin : SUMMARY_BINS - 1)];
            }
        ++sum->frags;
        sum->reads_in += fr->n;
        j->pairs_seen |= fr->n == 2;
        ++sum->cat[category_slot(s, cat)];
        if (cat == SBF_CAT_NO_KMER)
            ++sum->no_kmer;
        if (cat >= 0 || cat == SBF_CAT_MULTI)
            for (int t = 0; t < R; ++t)
                if (passing[t]) {
                    ++sum->hits[t];
                    sum->shared[t] += cat == SBF_CAT_MULTI;
                }
        if (s->o->mode == SCREEN_FILTER)
            j->keep[f] = (uint8_t)((matches_selection(s, cat, passing) == s->o->keep) != s->o->invert);
    }
    return SBF_OK;
}

static int deliver_job(void *ctx, void *item)
{
    screen_t *s = ctx;
    job_t *j = item;
    merge_counts(s, j);
    s->t_score += j->t_score;
    s->t_encode += j->t_encode;
    if (sbf_queue_push(&s->write_q, item) < 0)
        return sbf_error(SBF_E_IO, "stopped");   /* another stage failed: its message is kept */
    return SBF_OK;
}

static void progress(screen_t *s, int final)
{
    double t = now() - s->t0;
    fprintf(stderr, "\rsbf %s: %llu reads, %.0f reads/s%s", s->o->cmd, (unsigned long long)s->sum.reads_out,
            t > 0 ? (double)s->sum.reads_out / t : 0.0, final ? "\n" : "   ");
}

/* Where record i of the batch goes: an output number, or -1 (not written). *tp is its tags, or
 * NULL; *first is 1 for the first record of a written fragment (counted once). */
static int record_output(const screen_t *s, const job_t *j, size_t i, sbf_tags_t *tags, sbf_tags_t **tp, int *first)
{
    const sbf_read_t *r = &j->batch.reads[i];
    const screen_opt_t *o = s->o;
    int slot = 0;
    *tp = NULL;
    *first = 0;
    if (r->frag < 0) {
        if (o->mode != SCREEN_TAG)   /* split/filter: secondary and supplementary are dropped */
            return -1;
    } else {
        int32_t f = r->frag, cat = j->cat[f];
        if (o->mode == SCREEN_FILTER && !j->keep[f])
            return -1;
        if (o->mode == SCREEN_SPLIT)
            slot = category_slot(s, cat);
        if (o->mode == SCREEN_TAG || (o->mode == SCREEN_SPLIT && !o->no_tags)) {
            *tags = (sbf_tags_t){s->names[category_slot(s, cat)], j->score[f], s->R, j->fhits + (size_t)f * (size_t)s->R};
            *tp = tags;
        }
        *first = j->batch.frags[f].read[0] == i;
    }
    return slot * (s->mate_files ? 2 : 1) + (s->mate_files && r->mate == 2 ? 1 : 0);
}

/* Every record of the batch that is written, to its output: encoded into j->enc (a worker,
 * for the writer to copy) or written (the writer thread). The counts go to j->*_out either way. */
static int emit_records(screen_t *s, job_t *j, int encode)
{
    sbf_batch_t *b = &j->batch;
    for (size_t i = 0; i < b->n_reads; ++i) {
        sbf_tags_t tags, *tp;
        int first, out = record_output(s, j, i, &tags, &tp, &first);
        if (out < 0)
            continue;
        sbf_read_t *r = &b->reads[i];
        if (encode) {
            if (sbf_writer_encode(s->outs[out], r, tp, &j->scratch, &j->enc[out]) != SBF_OK)
                return SBF_E_IO;
            ++j->enc_records[out];
        } else if (sbf_writer_write(s->outs[out], r, tp) != SBF_OK) {
            return SBF_E_IO;
        }
        j->frags_out += (uint64_t)first;
        ++j->reads_out;
        j->bases_out += j->rlen[i];
    }
    return SBF_OK;
}

/* A worker: the batch's records as bytes for their outputs (sbf_writer_encode). */
static int encode_job(screen_t *s, job_t *j)
{
    const int n_outs = s->n_slots * (s->mate_files ? 2 : 1);
    if (j->n_enc < n_outs) {
        kstring_t *e = realloc(j->enc, (size_t)n_outs * sizeof *e);
        size_t *c = e ? realloc(j->enc_records, (size_t)n_outs * sizeof *c) : NULL;
        if (e)
            j->enc = e;
        if (!e || !c)
            return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", j->batch.n_reads);
        j->enc_records = c;
        memset(j->enc + j->n_enc, 0, (size_t)(n_outs - j->n_enc) * sizeof *e);
        j->n_enc = n_outs;
    }
    for (int o = 0; o < n_outs; ++o) {
        j->enc[o].l = 0;
        j->enc_records[o] = 0;
    }
    int rc = emit_records(s, j, 1);
    j->encoded = rc == SBF_OK;
    return rc;
}

/* The writer thread: the bytes the worker encoded, copied into each output, or the records
 * written one by one; then the batch's output counts. */
static int write_job(screen_t *s, job_t *j)
{
    if (s->o->mode == SCREEN_COUNT)
        return SBF_OK;
    if (j->encoded) {
        for (int o = 0; o < j->n_enc; ++o)
            if (j->enc_records[o] &&
                sbf_writer_write_encoded(s->outs[o], j->enc[o].s, j->enc[o].l, j->enc_records[o]) != SBF_OK)
                return SBF_E_IO;
        j->encoded = 0;
    } else if (emit_records(s, j, 0) != SBF_OK) {
        return SBF_E_IO;
    }
    s->sum.frags_out += j->frags_out;
    s->sum.reads_out += j->reads_out;
    s->sum.bases_out += j->bases_out;
    return SBF_OK;
}

static void *writer_main(void *arg)
{
    screen_t *s = arg;
    void *item;
    double last = now();
    for (;;) {
        double t = now();
        if (!sbf_queue_pop(&s->write_q, &item))
            break;
        s->t_wait_write += now() - t;
        t = now();
        int rc = write_job(s, item);
        s->t_write += now() - t;
        if (rc != SBF_OK) {
            fail(s, sbf_error_message());
            break;
        }
        if (s->show_progress && now() - last >= 1.0) {
            progress(s, 0);
            last = now();
        }
        if (sbf_queue_push(&s->free_q, item) < 0)
            break;
    }
    return NULL;
}

/* ------------------------------------------------------------------ setup */

/* Target t of all the index files. */
static int target_info(const screen_t *s, int t, sbf_target_info_t *ti)
{
    int x = s->n_idx - 1;
    while (x > 0 && s->first_target[x] > t)
        --x;
    return sbf_index_target(s->idx[x], t - s->first_target[x], ti);
}

/* Load every index file; several must share k (so a read's valid k-mers are the same for all). */
static int load_indexes(screen_t *s)
{
    const screen_opt_t *o = s->o;
    sbf_opt_t first, p;
    for (int x = 0; x < o->n_indexes; ++x) {
        if (sbf_index_load(o->index_paths[x], 0, &s->idx[x]) != SBF_OK) {
            cli_error(o->cmd, "%s", sbf_last_error());
            return -1;
        }
        s->n_idx = x + 1;
        sbf_index_params(s->idx[x], x ? &p : &first);
        if (x && p.k != first.k) {
            cli_error(o->cmd, "%s has k=%d but %s has k=%d: filters used together must share k", o->index_paths[x],
                      p.k, o->index_paths[0], first.k);
            return -1;
        }
        s->first_target[x] = s->R;
        s->R += sbf_index_n_targets(s->idx[x]);
        if (sbf_index_n_targets(s->idx[x]) > s->max_targets)
            s->max_targets = sbf_index_n_targets(s->idx[x]);
        s->k = first.k;
    }
    return 0;
}

/* The rule bound to every target of every index: their false-positive rates and clumps
 * (the options were checked before). 0, or < 0 with the message kept. */
static int setup_scorer(screen_t *s)
{
    double *fpr = malloc(2 * (size_t)(s->R ? s->R : 1) * sizeof *fpr), *clump = fpr + s->R;
    int rc = fpr ? SBF_OK : SBF_E_NOMEM;
    for (int x = 0; rc == SBF_OK && x < s->n_idx; ++x)
        rc = sbf_engine_chance(s->idx[x], fpr + s->first_target[x], clump + s->first_target[x]);
    if (rc == SBF_OK)
        rc = sbf_scorer_init(&s->scorer, &s->o->score, s->R, fpr, clump);
    free(fpr);
    return rc == SBF_OK ? 0 : sbf_error(rc, "out of memory setting up the scoring");
}

static int setup_categories(screen_t *s)
{
    const char *cmd = s->o->cmd;
    int n = s->R + 2;
    s->names = calloc((size_t)n, sizeof *s->names);
    s->file_names = calloc((size_t)n, sizeof *s->file_names);
    s->selected = calloc((size_t)s->R + 1, 1);
    s->passing = calloc((size_t)s->R + 1, 1);
    if (!s->names || !s->file_names || !s->selected || !s->passing) {
        cli_error(cmd, "out of memory");
        return -1;
    }
    for (int c = 0; c < n; ++c) {
        sbf_target_info_t ti;
        const char *name = c == s->R ? s->o->multi_name : c == s->R + 1 ? s->o->none_name : NULL;
        if (!name) {
            if (target_info(s, c, &ti) != SBF_OK) {
                cli_error(cmd, "%s", sbf_last_error());
                return -1;
            }
            name = ti.name;
        }
        if (!(s->names[c] = strdup(name)) || !(s->file_names[c] = sbf_safe_file_part(name))) {
            cli_error(cmd, "out of memory");
            return -1;
        }
    }
    for (int c = 0; c < n; ++c)
        for (int d = 0; d < c; ++d) {
            if (!strcmp(s->names[c], s->names[d])) {
                if (c < s->R)
                    cli_error(cmd, "%s: two targets are named '%s' (a damaged index?)", s->o->index_path, s->names[c]);
                else
                    cli_error(cmd, "%s: target '%s' has the name of a category sbf reports; rebuild the index "
                              "with another name", s->o->index_path, s->names[c]);
                return -1;
            }
            if (s->o->split_pattern && !strcmp(s->file_names[c], s->file_names[d])) {
                cli_error(cmd, "--split: categories '%s' and '%s' would write the same file names", s->names[d],
                          s->names[c]);
                return -1;
            }
        }
    return 0;
}

static int setup_selection(screen_t *s)
{
    if (s->o->n_select == 0) {   /* every target */
        memset(s->selected, 1, (size_t)s->R);
        return 0;
    }
    for (int l = 0; l < s->o->n_select; ++l)   /* every --remove (--keep) list adds its targets */
        for (const char *p = s->o->select[l]; *p;) {
            size_t n = strcspn(p, ",");
            int found = 0;
            for (int t = 0; t < s->R; ++t)
                if (strlen(s->names[t]) == n && !strncmp(s->names[t], p, n)) {
                    s->selected[t] = 1;
                    found = 1;
                }
            if (!found) {
                kstring_t all = {0, 0, NULL};
                for (int t = 0; t < s->R; ++t)
                    ksprintf(&all, "%s%s", t ? ", " : "", s->names[t]);
                cli_error(s->o->cmd, "no target '%.*s' in %s (targets: %s)", (int)n, p, s->o->index_path,
                          all.s ? all.s : "");
                free(all.s);
                return -1;
            }
            p += n + (p[n] == ',');
        }
    return 0;
}

/* Output format of `path`: -O, else the file name, else like the input. */
static int output_spec(screen_t *s, const char *path, sbf_reader_t *in, sbf_outspec_t *spec)
{
    const char *cmd = s->o->cmd;
    if (s->o->outfmt) {
        if (sbf_outspec_parse(s->o->outfmt, spec) != SBF_OK) {
            cli_error(cmd, "-O: %s", sbf_error_message());
            return -1;
        }
        return 0;
    }
    int to_file = path && strcmp(path, "-") != 0;
    spec->level = -1;
    if (to_file && sbf_outspec_from_name(path, spec))
        return 0;
    const char *f = sbf_reader_format(in);
    spec->fmt = !strcmp(f, "SAM") ? SBF_OUT_SAM : !strcmp(f, "BAM") ? SBF_OUT_BAM : !strcmp(f, "CRAM") ? SBF_OUT_CRAM
              : !strcmp(f, "FASTA") ? SBF_OUT_FASTA : SBF_OUT_FASTQ;
    spec->compress = spec->fmt == SBF_OUT_BAM || spec->fmt == SBF_OUT_CRAM || (to_file && sbf_reader_compressed(in));
    return 0;
}

/* An output path must not be one of the inputs (it would be truncated before being read). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
        return 0;
    if (!strcmp(a, b))
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
           S_ISREG(sa.st_mode);
}

static char *expand_pattern(const char *pattern, const char *category, int mate)
{
    kstring_t k = {0, 0, NULL};
    for (const char *p = pattern; *p; ++p) {
        int rc = *p == '%' ? kputs(category, &k) : *p == '#' ? kputw(mate, &k) : kputc(*p, &k);
        if (rc < 0) {
            free(k.s);
            return NULL;
        }
    }
    return k.s;
}

static int open_output(screen_t *s, const char *path, sbf_reader_t *in, int slot)
{
    const screen_opt_t *o = s->o;
    for (int i = 0; i < 2; ++i)
        if (same_file(path, o->in[i])) {
            cli_error(o->cmd, "%s is an input: refusing to overwrite it", path);
            return -1;
        }
    sbf_writer_opt_t wo = {.hdr = sbf_reader_header(in),
                           .pg_version = SBF_VERSION,
                           .pg_cmdline = o->pg_cmdline,
                           .pool = &s->pool,
                           .reference = o->reference,
                           .write_index = o->write_index,
                           .tags = o->tags};
    if (output_spec(s, path, in, &wo.spec) < 0)
        return -1;
    if (sbf_writer_open(path, &wo, &s->outs[slot]) != SBF_OK) {
        cli_error(o->cmd, "%s", sbf_error_message());
        return -1;
    }
    return 0;
}

static int setup_outputs(screen_t *s, sbf_reader_t *in)
{
    const screen_opt_t *o = s->o;
    if (o->mode == SCREEN_COUNT)
        return 0;
    s->n_slots = o->mode == SCREEN_SPLIT ? s->R + 2 : 1;
    s->mate_files = o->mode == SCREEN_SPLIT ? strchr(o->split_pattern, '#') != NULL : o->out1 != NULL;
    int per = s->mate_files ? 2 : 1;
    if (!(s->outs = calloc((size_t)(s->n_slots * per), sizeof *s->outs))) {
        cli_error(o->cmd, "out of memory");
        return -1;
    }
    if (o->mode != SCREEN_SPLIT) {
        if (!s->mate_files)
            return open_output(s, o->out, in, 0);
        return open_output(s, o->out1, in, 0) < 0 || open_output(s, o->out2, in, 1) < 0 ? -1 : 0;
    }
    for (int c = 0; c < s->n_slots; ++c)
        for (int m = 0; m < per; ++m) {
            char *path = expand_pattern(o->split_pattern, s->file_names[c], m + 1);
            if (!path) {
                cli_error(o->cmd, "out of memory");
                return -1;
            }
            int rc = open_output(s, path, in, c * per + m);
            free(path);
            if (rc < 0)
                return -1;
        }
    return 0;
}

static int open_inputs(screen_t *s, sbf_reader_t **first)
{
    const screen_opt_t *o = s->o;
    sbf_reader_t *rd[2] = {NULL, NULL};
    /* records read in place: the batches pin their blocks (sbf_batch.c); a block holds about
     * a batch of FASTQ (2 bytes a base and the names), so the blocks the batches in flight pin
     * stay within a few batches, as -K promises */
    uint64_t block = 2 * s->batch_bases;
    block = block < (1u << 20) ? (1u << 20) : block > (8u << 20) ? (8u << 20) : block;
    sbf_reader_opt_t ro = {.pool = s->in_pool.pool ? &s->in_pool : &s->pool, .reference = o->reference, .sam_no_ascii = 1,
                           .in_place = !getenv("SBF_NO_INPLACE"), .block_size = (size_t)block};
    for (int i = 0; i < 2 && o->in[i]; ++i)
        if (sbf_reader_open(o->in[i], &ro, &rd[i]) != SBF_OK) {
            cli_error(o->cmd, "%s", sbf_error_message());
            sbf_reader_close(rd[0]);
            return -1;
        }
    *first = rd[0];
    if (sbf_input_new(rd[0], rd[1], o->interleaved ? SBF_PAIRS_INTERLEAVED : SBF_PAIRS_BY_FLAGS, &s->input) !=
        SBF_OK) {
        cli_error(o->cmd, "%s", sbf_error_message());
        return -1;
    }
    return 0;
}

/* Device memory a GPU run needs on each device: every filter, plus the two workers' batches
 * (each has two in flight: bases, offsets and results), an estimate on the safe side. */
static uint64_t gpu_bytes_needed(const screen_t *s)
{
    uint64_t bytes = 0;
    for (int t = 0; t < s->R; ++t) {
        sbf_target_info_t ti;
        if (target_info(s, t, &ti) == SBF_OK)
            bytes += ti.bytes;
    }
    return bytes + 2 * 2 * s->batch_bases * 2;   /* two workers, each two batches */
}

static void describe_engine(screen_t *s, char *buf, size_t size)
{
    int dev[SBF_MAX_GPUS], n = sbf_index_gpus(s->idx[0], dev, SBF_MAX_GPUS);
    if (n == 0) {
        snprintf(buf, size, "CPU, %d thread%s", s->o->threads, s->o->threads == 1 ? "" : "s");
        return;
    }
    char desc[256], list[64] = "";
    if (sbf_gpu_describe_device(dev[0], desc, sizeof desc) != SBF_OK)
        snprintf(desc, sizeof desc, "CUDA device");
    for (int i = 0, at = 0; i < n && at < (int)sizeof list; ++i)
        at += snprintf(list + at, sizeof list - (size_t)at, "%s%d", i ? "," : "", dev[i]);
    snprintf(buf, size, "GPU%s %s (%s%s)", n > 1 ? "s" : "", list, desc, n > 1 ? ", each" : "");
}

/* --stats: where the time went, so a user sees which stage limits a run. The engine's share is
 * the part of the wall time in which each device (or the CPU engine) had a batch in work;
 * "waiting for the engine" is time the reader's batches waited for room in the engine. */
static void print_stats(const screen_t *s, FILE *fp)
{
    struct rusage ru;
    long peak_kib = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
    const pipeline_stats_t *e = &s->engine_stats;
    const double wall = s->sum.seconds > 0 ? s->sum.seconds : 1e-9;
    int dev[SBF_MAX_GPUS], n = sbf_index_gpus(s->idx[0], dev, SBF_MAX_GPUS);
    fprintf(fp, "sbf %s: stages (seconds): reading %.2f, ", s->o->cmd, s->t_read);
    if (n == 0)
        fprintf(fp, "CPU engine %.2f (busy %.0f%%)", e->busy[0], 100 * e->busy[0] / wall);
    for (int i = 0; i < n; ++i)
        fprintf(fp, "%sGPU %d %.2f (busy %.0f%%)", i ? ", " : "", dev[i], e->busy[i], 100 * e->busy[i] / wall);
    fprintf(fp, ", waiting for the engine %.2f, scoring %.2f and encoding %.2f (worker seconds), writing %.2f "
            "(writer idle %.2f); wall %.2f; peak RSS %.1f MiB\n", e->wait_submit, s->t_score, s->t_encode, s->t_write,
            s->t_wait_write, s->sum.seconds, peak_kib / 1024.0);
    fprintf(fp, "sbf %s: input: %lld of %llu records parsed in place (FASTQ); read-ahead busy %.2f s, "
            "parser waited %.2f s\n", s->o->cmd, s->in_place, (unsigned long long)(s->sum.reads_in + s->sum.extras),
            s->t_fill, s->t_fill_wait);
    /* The verdict in words: the stage busy for the largest share of the run, and what helps. */
    double engine = 0;
    for (int i = 0; i < (n ? n : 1); ++i)
        engine = e->busy[i] > engine ? e->busy[i] : engine;
    const double share[3] = {s->t_read / wall, engine / wall, s->o->mode == SCREEN_COUNT ? 0 : s->t_write / wall};
    int top = share[1] > share[0] ? 1 : 0;
    top = share[2] > share[top] ? 2 : top;
    static const char *const what[3] = {"reading", "the engine", "writing"};
    const char *help = top == 0 ? "input decompression and parsing: BAM, CRAM and BGZF use the -@ threads, plain gzip "
                                  "is one stream (bgzip it)"
                     : top == 1 ? (n ? "the GPU: --gpu all spreads batches over every GPU"
                                     : "the CPU engine: more -@ threads, or a GPU")
                                : "output compression: more -@ threads, or a lower level (-O bam,level=1)";
    fprintf(fp, "sbf %s: limit: %s (busy %.0f%% of the run); %s\n", s->o->cmd, what[top], 100 * share[top], help);
}

/* ------------------------------------------------------------------ the run */

int screen_run(const screen_opt_t *o)
{
    screen_t s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.t0 = now();
    pthread_mutex_init(&s.err_lock, NULL);
    int status = 1, queues = 0, started_reader = 0, started_writer = 0;
    pthread_t reader, writer;
    sbf_reader_t *first = NULL;
    char engine[320];
    cli_output_t tsv = {0}, json = {0}, html = {0};

    if (load_indexes(&s) < 0)
        goto done;
    screen_opt_t adjusted;
    if (o->min_match_bases > 0) {   /* N matching bases hold N-k+1 k-mers */
        sbf_opt_t p;
        sbf_index_params(s.idx[0], &p);
        adjusted = *o;
        adjusted.score.min_fraction = 0;
        adjusted.score.min_hits = o->min_match_bases > p.k ? (uint32_t)(o->min_match_bases - p.k + 1) : 1;
        s.o = o = &adjusted;
    }
    if (sbf_classify_opt_check(&o->score) != SBF_OK) {
        cli_error(o->cmd, "%s", sbf_last_error());
        goto done;
    }
    if (setup_categories(&s) < 0 || setup_selection(&s) < 0 || summary_alloc(&s.sum, s.R) < 0)
        goto done;
    int dev[SBF_MAX_GPUS], n_gpus = cli_gpu_resolve(o->cmd, &o->gpus, dev);
    s.batch_bases = o->batch_bases ? o->batch_bases : n_gpus > 0 ? DEFAULT_GPU_BATCH_BASES : DEFAULT_BATCH_BASES;
    if (n_gpus > 0 && o->gpu_mem_limit && gpu_bytes_needed(&s) > o->gpu_mem_limit) {
        char need[32], limit[32];
        fprintf(stderr, "sbf %s: notice: the index and batches need %s on the GPU, more than --gpu-mem-limit %s: "
                "using the CPU engine\n", o->cmd, cli_bytes(gpu_bytes_needed(&s), need, sizeof need),
                cli_bytes(o->gpu_mem_limit, limit, sizeof limit));
        n_gpus = 0;
    }
    /* -@ N: the outputs are compressed by N threads, and with N >= 4 the inputs are
     * decompressed by N/4 more, in a pool of their own: in one shared pool the reader's blocks
     * wait behind the writer's (compression is the larger job), and the reader limits BAM runs
     * (bench/e2e.sh: reading 1.8 -> 1.45 s for 8 M records on the H200 machine). Inflating costs
     * a fifth of deflating, so the input threads are idle most of the time: taking them out of
     * the N left the writer, the limit of compressed runs, with 3/4 of the cores. */
    int in_threads = o->threads >= 4 ? o->threads / 4 : 0, out_threads = o->threads;
    if (out_threads > 1 || in_threads > 0) {
        if ((out_threads > 1 && !(s.pool.pool = hts_tpool_init(out_threads))) ||
            (in_threads > 0 && !(s.in_pool.pool = hts_tpool_init(in_threads)))) {
            cli_error(o->cmd, "cannot start %d threads", o->threads);
            goto done;
        }
        s.pool.qsize = 2 * out_threads;
        s.in_pool.qsize = 2 * in_threads;
    }
    if (open_inputs(&s, &first) < 0 || setup_outputs(&s, first) < 0 ||
        (o->summary_tsv && cli_output_open(o->cmd, o->summary_tsv, &tsv) < 0) ||
        (o->json && cli_output_open(o->cmd, o->json, &json) < 0) ||
        (o->report && cli_output_open(o->cmd, o->report, &html) < 0))
        goto done;
    s.encode = o->mode != SCREEN_COUNT && !getenv("SBF_NO_ENCODE");
    for (int i = 0; i < s.n_slots * (s.mate_files ? 2 : 1); ++i)
        s.encode &= sbf_writer_can_encode(s.outs[i]);

    /* The engine: two workers per GPU copy (one batch is packed and copied while the other's
     * kernel runs), with one batch more in flight to hide the hand-over; or one worker on the CPU
     * threads. Jobs: those, plus one being read, one being written and one between. */
    s.n_jobs = engine_in_flight(n_gpus) + 3;
    if (sbf_queue_init(&s.free_q, (size_t)s.n_jobs) < 0 || sbf_queue_init(&s.class_q, (size_t)s.n_jobs) < 0 ||
        sbf_queue_init(&s.write_q, (size_t)s.n_jobs) < 0) {
        cli_error(o->cmd, "out of memory");
        goto done;
    }
    queues = 1;
    for (int i = 0; i < s.n_jobs; ++i)
        sbf_queue_push(&s.free_q, &s.jobs[i]);
    s.show_progress = o->progress > 0 || (o->progress < 0 && isatty(STDERR_FILENO));
    /* the reader starts at once: the first batches are read while the GPUs start and receive
     * the filters (a CUDA context and the copy cost tenths of a second per device) */
    if (pthread_create(&reader, NULL, reader_main, &s) != 0) {
        cli_error(o->cmd, "cannot start the reader thread");
        goto done;
    }
    started_reader = 1;
    /* the scoring rule's chance model reads every shard of the indexes (25 ms for chr20): while
     * the reader fills the first batches */
    if (setup_scorer(&s) < 0) {
        fail(&s, sbf_error_message());
        goto join;
    }
    for (int x = 0; n_gpus > 0 && x < s.n_idx; ++x)
        if (sbf_index_use_gpus(s.idx[x], n_gpus, dev) != SBF_OK) {
            fprintf(stderr, "sbf %s: notice: %s: using the CPU engine\n", o->cmd, sbf_last_error());
            for (int y = 0; y < x; ++y) {   /* all on one engine; freeing a device copy cannot fail */
                int freed = sbf_index_use_gpu(s.idx[y], SBF_GPU_NONE);
                (void)freed;
            }
            break;
        }
    describe_engine(&s, engine, sizeof engine);
    const int slots = sbf_engine_slots(s.idx[0]);
    /* Encoding in the workers pays on GPUs (the writer thread is then the limit); the CPU
     * engine's one worker is already the limit, and the writer thread formats beside it. */
    s.null_engine = getenv("SBF_NULL_ENGINE") != NULL;
    s.encode &= slots > 0 || getenv("SBF_ENCODE") != NULL;   /* SBF_ENCODE: tests, on the CPU */
    /* Test and benchmark switches of the shipped binary: each one set is said on stderr and in
     * every summary. SBF_NULL_ENGINE changes the results (no k-mer is looked up); the encoder
     * switches only choose which thread formats the records, SBF_NO_INPLACE which parser reads
     * FASTQ (the same bytes either way). */
    static const struct {
        const char *name, *what;
    } switches[] = {
        {"SBF_NULL_ENGINE", "no k-mer is looked up: every read is 'none' (the pipeline's I/O ceiling, bench/e2e.sh)"},
        {"SBF_ENCODE", "the engine workers format the records on the CPU engine too (the same bytes; a test switch)"},
        {"SBF_NO_ENCODE", "the writer thread formats every record (the same bytes; a test switch)"},
        {"SBF_NO_INPLACE", "FASTQ records are copied out by the general parser, not parsed in place (the same "
                           "bytes; a test switch)"},
    };
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; ++i)
        if (getenv(switches[i].name)) {
            fprintf(stderr, "sbf %s: notice: %s is set: %s\n", o->cmd, switches[i].name, switches[i].what);
            ksprintf(&s.switches, "%s%s", s.switches.l ? "," : "", switches[i].name);
        }
    pipeline_opt_t po = {.gpu_copies = slots, .workers_per_copy = 2, .in_flight = engine_in_flight(slots),
                         .work = work_job, .deliver = deliver_job, .ctx = &s, .marks_busy = 1};
    if (pipeline_open(&po, &s.engine) != SBF_OK) {
        fail(&s, sbf_error_message());
        goto join;
    }
    if (pthread_create(&writer, NULL, writer_main, &s) != 0) {
        fail(&s, "cannot start the writer thread");
        pipeline_abort(s.engine);
        goto join;
    }
    started_writer = 1;
    void *item;
    while (sbf_queue_pop(&s.class_q, &item)) {
        if (prepare_job(&s, item) != SBF_OK || pipeline_submit(s.engine, item) != SBF_OK) {
            fail(&s, sbf_error_message());
            break;
        }
    }
    if (s.failed)
        pipeline_abort(s.engine);
    else if (pipeline_finish(s.engine) != SBF_OK)
        fail(&s, sbf_error_message());
    pipeline_stats(s.engine, &s.engine_stats);
    sbf_queue_close(&s.write_q);
join:
    if (started_reader)
        pthread_join(reader, NULL);
    if (started_writer)
        pthread_join(writer, NULL);
    started_reader = started_writer = 0;
    if (s.failed) {
        cli_error(o->cmd, "%s", s.err);
        goto done;
    }
    if (s.show_progress)
        progress(&s, 1);
    s.sum.seconds = now() - s.t0;
    s.sum.cmd = o->cmd;
    s.sum.mode = o->mode == SCREEN_TAG ? "tag" : o->mode == SCREEN_SPLIT ? "split" : o->mode == SCREEN_FILTER ? "filter" : "count";
    s.sum.unit = o->in[1] || o->interleaved ? "pairs" : s.pairs_seen ? "fragments" : "reads";
    s.sum.engine = engine;
    s.sum.index_path = o->index_path;
    s.sum.index_paths = o->index_paths;
    s.sum.n_indexes = o->n_indexes;
    s.sum.inputs[0] = o->in[0];
    s.sum.inputs[1] = o->in[1];
    s.sum.names = (const char *const *)s.names;
    s.sum.rule = &o->score;
    s.sum.switches = s.switches.l ? s.switches.s : NULL;
    /* The summaries first (a full disk shows here), then every output renamed into place. */
    if (tsv.fp) {
        summary_write_tsv(&s.sum, tsv.fp);
        if (fflush(tsv.fp) != 0 || ferror(tsv.fp)) {
            cli_error(o->cmd, "%s: write failed: %s", o->summary_tsv, strerror(errno));
            goto done;
        }
    }
    if (json.fp) {
        summary_write_json(&s.sum, json.fp);
        if (fflush(json.fp) != 0 || ferror(json.fp)) {
            cli_error(o->cmd, "%s: write failed: %s", o->json, strerror(errno));
            goto done;
        }
    }
    if (html.fp) {
        summary_write_html(&s.sum, html.fp);
        if (fflush(html.fp) != 0 || ferror(html.fp)) {
            cli_error(o->cmd, "%s: write failed: %s", o->report, strerror(errno));
            goto done;
        }
    }
    int per = s.mate_files ? 2 : 1;
    for (int i = 0; i < s.n_slots * per; ++i) {
        sbf_writer_t *w = s.outs[i];
        s.outs[i] = NULL;
        if (sbf_writer_commit(w) != SBF_OK) {
            cli_error(o->cmd, "%s", sbf_error_message());
            goto done;
        }
    }
    s.in_place = sbf_input_in_place(s.input, &s.t_fill, &s.t_fill_wait);
    if (sbf_input_free(s.input) != SBF_OK) {
        s.input = NULL;
        cli_error(o->cmd, "%s", sbf_error_message());
        goto done;
    }
    s.input = NULL;
    if ((tsv.fp && cli_output_commit(o->cmd, &tsv) < 0) || (json.fp && cli_output_commit(o->cmd, &json) < 0) ||
        (html.fp && cli_output_commit(o->cmd, &html) < 0))
        goto done;
    summary_print(&s.sum, stderr);
    if (o->stats)
        print_stats(&s, stderr);
    status = 0;
done:
    if (queues) {
        sbf_queue_destroy(&s.free_q);
        sbf_queue_destroy(&s.class_q);
        sbf_queue_destroy(&s.write_q);
    }
    for (int i = 0; s.outs && i < s.n_slots * (s.mate_files ? 2 : 1); ++i)
        sbf_writer_abort(s.outs[i]);
    cli_output_abort(&tsv);
    cli_output_abort(&json);
    cli_output_abort(&html);
    free(s.outs);
    sbf_input_free(s.input);
    pipeline_free(s.engine);
    for (int i = 0; i < s.n_jobs; ++i)
        job_free(&s.jobs[i]);
    if (s.pool.pool)
        hts_tpool_destroy(s.pool.pool);
    if (s.in_pool.pool)
        hts_tpool_destroy(s.in_pool.pool);
    for (int c = 0; s.names && c < s.R + 2; ++c) {
        free(s.names[c]);
        free(s.file_names[c]);
    }
    free(s.names);
    free(s.file_names);
    free(s.selected);
    free(s.passing);
    free(s.switches.s);
    sbf_scorer_free(&s.scorer);
    summary_free(&s.sum);
    for (int x = 0; x < s.n_idx; ++x)
        sbf_index_destroy(s.idx[x]);
    pthread_mutex_destroy(&s.err_lock);
    return status;
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
        status = screen_run(&o);
done:
    free(cmdline);
    return status;
}
