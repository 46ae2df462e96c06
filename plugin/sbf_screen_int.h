/* sbf_screen_int.h -- private to the screening pipeline behind sbf_screen.h: the types and the
 * functions its files share. Only the sbf_screen*.c files include it (the commands, *_cmd.c, see
 * sbf_screen.h alone); the pipeline is split by concern:
 *   sbf_screen.c         the run (screen_run): setup, the threads, the batches, the summaries;
 *   sbf_screen_opts.c    the command line: common options, usage, argument checks, screen_main;
 *   sbf_screen_setup.c   indexes, scoring rule, categories, selection, inputs, outputs, --stats;
 *   sbf_screen_stages.c  what each batch goes through: reader, engine worker, delivery, writer;
 *   sbf_samples.c        --samples: one run per sample, the indexes kept from run to run. */
#ifndef SBF_SCREEN_INT_H
#define SBF_SCREEN_INT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "../bam/sbf_batch.h"
#include "../filters/sbf_clock.h"
#include "../filters/sbf_helper.h"
#include "sbf.h"
#include "sbf_pipeline.h"
#include "sbf_queue.h"
#include "sbf_screen.h"
#include "sbf_summary.h"

/* The indexes of a --samples command, opened by its first sample's run and used by the others
 * (their GPU copies with them); freed when every sample is done. */
typedef struct screen_kept_s {
    int n;
    sbf_index_t *idx[SCREEN_MAX_INDEXES];
} screen_kept_t;

/* Engine workers per GPU copy. A worker queries its batch on the GPU, then scores it and
 * formats its records on the CPU; with two, the GPU waited while both did their CPU share and
 * the reader waited for them (bench/e2e.sh, plain FASTQ: waiting for the engine 1.15 s of a
 * 1.61 s run, the GPU busy 50%). Four were 93-94% occupied in `classify` of FASTQ, whose
 * workers format every record with its tags: six ran it 7-10% faster (H100 machine, 5 M pairs
 * against the 3.06 Gbp index 1.113 -> 1.028 s, 2 M against chr20 0.646 -> 0.583 s, medians of
 * 3, alternating) and `filter` and BAM as fast as four (doc/gpu-notes.md, twelfth session). */
#define GPU_WORKERS_PER_COPY 6
#define MAX_JOBS (4 + GPU_WORKERS_PER_COPY * SBF_MAX_GPUS)   /* see start_reader() in sbf_screen.c */
/* -K: small batches on GPUs keep the records of the batches in flight in the CPU caches
 * (bench/ksweep.sh on the H200 machine: BAM 2.8 s at 512K-1M against 4.1 s at 16M). Each CPU
 * engine worker takes 4 Mbp: its query threads start per batch, so not less; more only held
 * more records out of the caches (H200 machine, -@ 16, 4 workers: 16 Mbp each 1.26-1.35 s and
 * 0.93-1.0 GB, 4 Mbp 1.15-1.24 s and 0.53 GB; development VM, -@ 2, one worker, `sbf filter`
 * of 1 M pairs: 16 Mbp 3.99-4.75 s and 685 MB, 4 Mbp 3.19-4.02 s and 478 MB, 5 of 5 rounds). */
#define DEFAULT_CPU_BATCH_BASES (4u << 20)
#define DEFAULT_GPU_BATCH_BASES (1u << 20)

typedef struct {
    sbf_batch_t batch;
    const char **seqs;        /* FASTA/FASTQ reads for sbf_query() */
    size_t *lens, *qtext;     /* qtext[q]: the batch read of query q */
    const uint8_t **packed;   /* SAM/BAM/CRAM reads for sbf_query_nt16() */
    size_t *plens, *qsam;
    uint32_t *kmers, *hits;   /* per read */
    /* the engine's units: each read, or the segments of a long one (filters/sbf_segment.h);
     * FASTA/FASTQ reads' units first, then SAM/BAM/CRAM reads'; [0] on the indexes, [1] on their
     * long-read layers (the reads of long fragments; each set has the other set's reads empty) */
    sbf_units_t units_text[2], units_sam[2];
    size_t *lens_layer[2], *plens_layer[2];   /* per text (SAM) read: its length in that set */
    uint8_t *layer;                           /* per read: 1 when queried on the long-read layers */
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
    uint64_t first_frag;      /* fragments of the run before this batch's (--rename numbers) */
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
    double t_query, t_engine; /* worker seconds: query_job, and of it the engine's calls */
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
    int compressed_out;       /* an output is compressed (BAM, CRAM, BGZF): --stats' remedy */
    uint64_t batch_bases;     /* -K, or the engine's default */
    long long in_place;       /* records the readers parsed in place (--stats) */
    long long in_place_ahead; /* of those, records the read-ahead threads parsed */
    double t_fill, t_fill_wait;   /* the read-ahead's reading, and the parser's waits for it */
    sbf_helper_t write_helper;    /* writes every other output of a batch beside the writer */
    int null_engine;          /* SBF_NULL_ENGINE: queries skipped, to measure the pipeline's I/O */
    uint64_t frags_read;      /* the reader's count of fragments so far */
    screen_summary_t sum;
    sbf_scorer_t scorer;      /* the rule, bound to every index's targets */
    kstring_t switches;       /* the test switches set in the environment, comma-separated */
    int k, max_targets;       /* the indexes' k; the most targets of one index */
    int layered, layer_k;     /* every index has a long-read layer (of k layer_k): long fragments use them */
    uint8_t *passing;
    /* the first failure of any stage */
    pthread_mutex_t err_lock;
    char err[1024];
    int failed;
    /* stage timings (--stats) */
    double t_read, t_query, t_engine, t_score, t_encode, t_write, t_wait_write;
    double t_load, t_upload;  /* opening: the indexes loaded, then put on the GPUs (--stats) */
    double t_gpus;            /* opening: the devices counted (the CUDA driver started), or -1 (--gpu none) */
    uint64_t reads_cpu_early; /* atomic: reads the GPU workers answered on the CPU engine before any copy
                               * existed (while the GPUs were counted, sbf_screen.c) */
    uint64_t reads_before_gpus; /* reads_cpu_early once the GPUs were counted */
    int gpus_attached;        /* atomic: attach_gpus() is done. An index without GPU copies then gets none in
                               * this run: its queries take the CPU engine's own path (plain copies of panels
                               * included); none for idx[0]: the GPUs expected are not there */
    int engine_workers;       /* the engine's worker threads (GPU_WORKERS_PER_COPY per expected copy) */
    int on_gpus;              /* the queries go to GPUs: the CPU threads have room for inflating */
    const char *decoder;      /* how the (first) input is decompressed (sbf_reader_decoder) */
    int upload_state;         /* at the end: 0 every index on the GPUs, 1 still uploading, < 0 failed */
    uint64_t reads_on_cpu;    /* of a GPU run: reads the CPU engine answered during the upload */
    uint64_t reads_on_cpu0;   /* the count before this run (an upload begun by an earlier sample) */
    int upload_kept;          /* the GPU copies were made for an earlier sample (--samples) */
    /* the long-read layers' GPU copies, made when a long read first needs them: at the end, 0
     * made, 1 being made, 2 not needed yet, < 0 failed (their reads on the CPU engine); the
     * longest upload; the reads the CPU engine answered for them meanwhile (and before the run) */
    int layer_state;
    double t_layer_upload;
    uint64_t layer_reads_on_cpu, layer_reads_on_cpu0;
    int query_threads;        /* each engine worker's CPU engine threads (-@; a GPU run's share of it) */
    int verified_now;         /* indexes whose filters this run verified (the others had a record) */
    int n_kept;               /* indexes opened by an earlier sample's run (--samples) */
    double cpu_read, cpu_write;   /* CPU seconds of the reader's and writer's threads in those stages */
    double cpu_helpers0;          /* the CPU engine's query helpers (process-wide): CPU seconds, blocks done and */
    uint64_t helped0, lent0;      /* of them lent to other workers' queries, before this run (--stats) */
    pipeline_stats_t engine_stats;
    int show_progress;
    int pairs_seen;           /* a SAM pair was recognised by its flags: the unit is "fragments" */
    double t0;
} screen_t;

/* ------------------------------------------------------------------ sbf_screen_stages.c */

/* Record the first failure and stop every stage (see sbf_screen_stages.c). */
void screen_fail(screen_t *s, const char *msg);
/* Free a job's buffers (its batch included). */
void screen_job_free(job_t *j);
/* The reader thread: batches from the free queue, filled, onto the classifier queue. */
void *screen_reader_main(void *arg);
/* Before the engine: the job's buffers and counts, and its reads pointed at for the queries. */
int screen_prepare_job(screen_t *s, job_t *j);
/* The pipeline's `work`: an engine worker's queries, scoring and encoding of one batch. */
int screen_work_job(void *ctx, void *item, int slot);
/* The pipeline's `deliver`, in input order: the batch's counts merged, the batch to the writer. */
int screen_deliver_job(void *ctx, void *item);
/* The progress line on stderr (final: the last one, ending the line). */
void screen_progress(screen_t *s, int final);
/* The writer thread: batches written in input order, then back onto the free queue. */
void *screen_writer_main(void *arg);

/* ------------------------------------------------------------------ sbf_screen_setup.c */

/* Load every index file (they must share k); -1 after printing. */
int screen_load_indexes(screen_t *s);
/* The scoring rule bound to every target; < 0 with the message kept (not printed). */
int screen_setup_scorer(screen_t *s);
/* The category names (targets, multi, none) and their file names; -1 after printing. */
int screen_setup_categories(screen_t *s);
/* The targets --remove/--keep name (filter), or every target; -1 after printing. */
int screen_setup_selection(screen_t *s);
/* Open every output (none in count mode); `in` gives header and format. -1 after printing. */
int screen_setup_outputs(screen_t *s, sbf_reader_t *in);
/* Open the inputs as one paired input (s->input); *first: the first reader. -1 after printing. */
int screen_open_inputs(screen_t *s, sbf_reader_t **first);
/* Device memory a GPU run needs on each device (an estimate on the safe side). */
uint64_t screen_gpu_bytes_needed(const screen_t *s);
/* The engine in words ("CPU, 4 threads", "GPU 0 (...)") for the summaries. */
void screen_describe_engine(screen_t *s, char *buf, size_t size);
/* The CPU engine's workers for -@ threads (batches in work at once, each on its share). */
int screen_cpu_workers(int threads);
/* The names of the output and input pools' threads, by which --stats sums their CPU time. */
#define SCREEN_OUT_POOL "sbf-out-pool"
#define SCREEN_IN_POOL "sbf-in-pool"

/* --stats: at the start of the run, what its figures are counted from (the CPU engine's helpers
 * live for the process); at its end, the time of each stage, the CPU of each thread group, peak
 * memory and the stage that limits the run. */
void screen_stats_start(screen_t *s);
void screen_print_stats(const screen_t *s, FILE *fp);

#endif
