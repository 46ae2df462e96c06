/* sbf.h -- screen DNA sequences against reference genomes with Super Bloom filters.
 *
 * The public C API of libsbf (pkg-config sbf). Typical use:
 *
 *     sbf_opt_t opt;
 *     sbf_opt_init(&opt);                       // defaults: k=31, 16 bits per k-mer, ...
 *     sbf_builder_t *b;
 *     sbf_builder_init(&opt, &b);
 *     int t = sbf_builder_add_target(b, "human");
 *     sbf_builder_add_file(b, t, "chr20.fa.gz");
 *     sbf_index_t *idx;
 *     sbf_builder_finish(b, &idx);              // builds every filter; b is freed
 *     sbf_index_save(idx, "host.sbf");
 *     ...
 *     sbf_index_load("host.sbf", 0, &idx);      // mmap; checks every checksum
 *     sbf_query(idx, n, seqs, lens, kmers, hits, threads);
 *     sbf_index_destroy(idx);
 *
 * Conventions:
 *  - Every function that can fail returns an int status: SBF_OK (0) on success, a negative
 *    SBF_E_* code on failure. The message of the last failure of the calling thread is
 *    sbf_last_error(); it names the file and the problem.
 *  - The library never prints and never exits.
 *  - A loaded or built sbf_index_t is immutable: any number of threads may query it at once.
 *    A builder is used by one thread at a time.
 *  - Sequences are ASCII; A, C, G, T, U in either case are bases, anything else (N, IUPAC codes)
 *    breaks k-mers: a k-mer containing one is not a valid k-mer and is never counted.
 *  - Every k-mer is taken canonically: a sequence and its reverse complement give identical
 *    results.
 */
#ifndef SBF_H
#define SBF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SBF_VERSION_MAJOR 0
#define SBF_VERSION_MINOR 9
#define SBF_VERSION_PATCH 0
#define SBF_VERSION "0.9.0"

#if defined(__GNUC__)
#define SBF_EXPORT __attribute__((visibility("default")))
#define SBF_RESULT_USED __attribute__((warn_unused_result))
#else
#define SBF_EXPORT
#define SBF_RESULT_USED
#endif

/* Status codes. */
#define SBF_OK 0
#define SBF_E_NOMEM (-1)    /* an allocation failed */
#define SBF_E_PARAM (-2)    /* invalid option or argument */
#define SBF_E_IO (-3)       /* a file could not be opened, read, written, closed or renamed */
#define SBF_E_FORMAT (-4)   /* input is not what it should be: bad magic, truncated, corrupt */
#define SBF_E_VERSION (-5)  /* an index file of another format version */
#define SBF_E_THREAD (-6)   /* a thread could not be started */

/* Options of an index build. Fill with sbf_opt_init(), change fields, check with sbf_opt_check(). */
typedef struct {
    int k;                 /* k-mer length, 1..32 [31] */
    int m;                 /* minimizer length choosing the shard, 1..k */
    int s;                 /* findere s-mer length, 1..k: a k-mer is present if all its s-mers are */
    int hashes;            /* bits set per s-mer inside its shard (H) */
    int shard_bits;        /* shard size in bits: 256 or 512 [512] */
    double bits_per_kmer;  /* filter bits per reference k-mer [16]; used when size_bytes is 0 */
    uint64_t size_bytes;   /* if > 0: each target's filter has this size instead (rounded up to a shard) */
    int threads;           /* threads for reading and building [1] */
    int gpu;               /* CUDA device to build on: SBF_GPU_AUTO (the first, if any) [default],
                            * SBF_GPU_NONE (CPU only) or a device number; results are identical */
} sbf_opt_t;

#define SBF_GPU_AUTO (-2)
#define SBF_GPU_NONE (-1)

/* One target (reference) of an index, as reported by sbf_index_target(). Pointers stay valid
 * until the index is destroyed. */
typedef struct {
    const char *name;
    int n_sources;
    const char *const *sources;  /* files (or sequence names) it was built from */
    uint64_t bases;              /* bases read, N included */
    uint64_t kmers;              /* valid k-mer positions inserted, repeats counted */
    uint64_t bytes;              /* filter size */
    double fill;                 /* fraction of filter bits set */
    double predicted_fpr;        /* probability that a random k-mer is reported present */
} sbf_target_info_t;

typedef struct sbf_index_s sbf_index_t;
typedef struct sbf_builder_s sbf_builder_t;

/* Library version, e.g. "0.3.0" (SBF_VERSION of the library actually loaded). */
SBF_EXPORT const char *sbf_version(void);

/* Message of the calling thread's last failure ("" if none). */
SBF_EXPORT const char *sbf_last_error(void);

SBF_EXPORT void sbf_opt_init(sbf_opt_t *opt);
/* SBF_OK, or SBF_E_PARAM with a message naming the first invalid field. */
SBF_EXPORT int sbf_opt_check(const sbf_opt_t *opt);

/* Start a build with a copy of *opt (checked). On success *out owns the builder. */
SBF_EXPORT int sbf_builder_init(const sbf_opt_t *opt, sbf_builder_t **out) SBF_RESULT_USED;
/* Add a target; returns its number (>= 0) or a negative status. Names must be unique and
 * non-empty, and not "multi" or "none" (the categories of classification). */
SBF_EXPORT int sbf_builder_add_target(sbf_builder_t *b, const char *name) SBF_RESULT_USED;
/* Add every record of a FASTA/FASTQ (plain or gzip/BGZF) or SAM/BAM/CRAM file to target t.
 * The file is read now; each record is a separate sequence (no k-mer spans two records). On an
 * error the target is as before the call. */
SBF_EXPORT int sbf_builder_add_file(sbf_builder_t *b, int target, const char *path) SBF_RESULT_USED;
/* Add files 0..n-1, file i to target targets[i], as sbf_builder_add_file() on each in turn
 * gives (the same sequences in the same order), reading up to opt.threads files at a time: a
 * reference in one file per chromosome reads in about the time of its largest. On an error the
 * targets are as before the call, and the message names the first file in the given order that
 * failed. */
SBF_EXPORT int sbf_builder_add_files(sbf_builder_t *b, int n, const int *targets, const char *const *paths)
    SBF_RESULT_USED;
/* Progress: fn(data, step) as the builder starts each step of sbf_builder_add_file(s),
 * sbf_builder_add_mask() and sbf_builder_finish(), on the calling thread: "reading chr1.fa into
 * target 'human'", "target 'human', k=31: filter on GPU 0", ... (text for people, not to parse).
 * NULL stops the reports. */
typedef void (*sbf_step_fn)(void *data, const char *step);
SBF_EXPORT void sbf_builder_on_step(sbf_builder_t *b, sbf_step_fn fn, void *data);
/* Add one in-memory sequence of len bytes to target t (the bytes are copied). */
SBF_EXPORT int sbf_builder_add_seq(sbf_builder_t *b, int target, const char *seq, size_t len) SBF_RESULT_USED;
/* Leave out of target t (or of every target, t = SBF_EVERY_TARGET) each k-mer found in the
 * FASTA/FASTQ/SAM/BAM/CRAM file at path: a host masked against microbes does not remove their
 * reads with its own. The file is read now; masks given for a target add up. A target k-mer no
 * mask holds is left out by chance at the mask filter's false-positive rate (about 1e-8,
 * doc/decisions.md "Masked targets"). The index records each target's masks and the k-mers
 * they left out (sbf_index_target_masks). */
#define SBF_EVERY_TARGET (-1)
SBF_EXPORT int sbf_builder_add_mask(sbf_builder_t *b, int target, const char *path) SBF_RESULT_USED;
/* The long-read layer: every target again with k-mers of length k (m = s = k - 6) at 8 bits per
 * k-mer, sequencing adapters left out, used to screen fragments with a read of 1,000 bases or
 * more (doc/classification.md). 0 builds none. Default: 21 when the index's k is larger, else
 * none. SBF_E_PARAM unless 0 or 7 <= k < the index's k. */
#define SBF_LONG_LAYER_K 21
SBF_EXPORT int sbf_builder_long_layer(sbf_builder_t *b, int k) SBF_RESULT_USED;
/* Leave out of every target of the index (not of its long-read layer, which has its own) each
 * k-mer whose low complexity reaches min: DUST's measure, over the k-mer's k-2 trinucleotides
 * the pairs of equal ones (a random 31-mer scores about 6, an A-rich stretch with an error in
 * it 100 or more). Each target records it as the mask "(low complexity: DUST >= min)". 0 keeps every k-mer.
 * Default: SBF_DEFAULT_DUST. With a human host, AT-rich near-repeats it shares with AT-rich
 * microbes (P. falciparum) removed 0.33% of that microbe's read pairs; 50 leaves out 1.8% of
 * chr20's 31-mers and those pairs (doc/decisions.md, "Low-complexity k-mers"). */
#define SBF_DEFAULT_DUST 50u
SBF_EXPORT int sbf_builder_dust(sbf_builder_t *b, unsigned min) SBF_RESULT_USED;
/* The file sbf_index_save() will write the built index to. Each filter is then written there
 * as soon as it is finished and leaves memory (the index reads it back through a read-only
 * mapping of that file): a human host's finished k=31 filter (5.7 GB) is not held while its
 * long-read layer is built. Nothing is at path before sbf_index_save(idx, path) completes the
 * file under a temporary name; saved elsewhere or not at all, that file is removed when the
 * index is destroyed. A path that cannot be written (or a disk without room for the index)
 * fails sbf_builder_finish() before any filter is built. NULL (the default): the filters stay
 * in memory. The same bytes either way. */
SBF_EXPORT int sbf_builder_output(sbf_builder_t *b, const char *path) SBF_RESULT_USED;
/* Build every target's filter. Frees the builder whatever the outcome; on success *out owns
 * the index. Fails with SBF_E_PARAM if there is no target or a target has no valid k-mer. */
SBF_EXPORT int sbf_builder_finish(sbf_builder_t *b, sbf_index_t **out) SBF_RESULT_USED;
/* Free a builder without building (NULL is allowed). */
SBF_EXPORT void sbf_builder_destroy(sbf_builder_t *b);

/* Write the index to path: a temporary file in the same folder, renamed over path once
 * complete (not synced: doc/decisions.md). On failure path is untouched. */
/* What the caller should tell the user about how the index was built, or NULL: with
 * opt.gpu = SBF_GPU_AUTO, a GPU that failed and the CPU engine that built the filters instead
 * ("building on GPU 0 failed (...): built on the CPU engine (the same bytes)"). Valid while the
 * index lives. */
SBF_EXPORT const char *sbf_index_notice(const sbf_index_t *idx);

SBF_EXPORT int sbf_index_save(const sbf_index_t *idx, const char *path) SBF_RESULT_USED;
/* Flags of sbf_index_load(). */
#define SBF_LOAD_NO_VERIFY 1   /* skip the filter checksums (header and metadata are still checked) */
/* Map an index file. Truncated, corrupt or foreign files fail with SBF_E_FORMAT, files of
 * another format version with SBF_E_VERSION. */
SBF_EXPORT int sbf_index_load(const char *path, int flags, sbf_index_t **out) SBF_RESULT_USED;
SBF_EXPORT void sbf_index_destroy(sbf_index_t *idx);

/* Parameters of an index, in an sbf_opt_t (threads 0; size_bytes 0; bits_per_kmer as built). */
SBF_EXPORT void sbf_index_params(const sbf_index_t *idx, sbf_opt_t *opt);
SBF_EXPORT int sbf_index_n_targets(const sbf_index_t *idx);
/* Describe target t (0 <= t < n_targets); SBF_E_PARAM if t is out of range. */
SBF_EXPORT int sbf_index_target(const sbf_index_t *idx, int t, sbf_target_info_t *info);
/* Where target t's filter lies (format 3, doc/format.md "Panels"): *panel (1 .. number of
 * panels), *columns of the panel's *panel_columns it takes. A target with a filter of its own
 * has 1 column of 1; targets of about the same size share a wide panel, which one query reads
 * for all of them at once. Any pointer may be NULL. SBF_E_PARAM if t is out of range. */
SBF_EXPORT int sbf_index_target_panel(const sbf_index_t *idx, int t, int *panel, int *columns, int *panel_columns);

/* The identity of the index file idx was read from or last written to (0 before either): XXH64
 * of its header and its long-read layer's header, whose checksums cover every byte of the
 * index. `sbf info` prints it; a manifest of shared indexes lists it (doc/decisions.md). */
SBF_EXPORT uint64_t sbf_index_checksum(const sbf_index_t *idx);
/* The long-read layer of idx (format 4: its targets again with shorter k-mers, screening
 * fragments with a read of SBF_LONG_READ_BASES or more), or NULL. Describe it with the functions
 * above (sbf_index_params, sbf_index_target...); it lives and dies with idx. */
#define SBF_LONG_READ_BASES 1000
SBF_EXPORT const sbf_index_t *sbf_index_long_layer(const sbf_index_t *idx);
/* The chance rate of target t measured at build time (format 4, long-read layers: the share of
 * the k-mers of its own sequence, reversed, that test present; the scoring of long reads uses
 * it when it exceeds the filter's false positives and the uniform chance), or 0 when not
 * measured. SBF_E_PARAM if t is out of range. */
SBF_EXPORT int sbf_index_target_chance(const sbf_index_t *idx, int t, double *chance);
/* The masks of target t (format 4): *n_masks files (*masks, valid while the index lives) whose
 * k-mers were left out of it, and *masked, the k-mer positions of its sequence they left out
 * (0 and 0 for an unmasked target or an index of format 2 or 3). Any pointer may be NULL.
 * SBF_E_PARAM if t is out of range. */
SBF_EXPORT int sbf_index_target_masks(const sbf_index_t *idx, int t, int *n_masks, const char *const **masks,
                                      uint64_t *masked);

/* Query n sequences: seqs[i] of lens[i] bytes. Writes kmers[i] = valid k-mers of sequence i
 * and hits[i * n_targets + t] = those present in target t. Uses up to `threads` threads
 * (>= 1); safe to call from several threads at once on one index. */
SBF_EXPORT int sbf_query(const sbf_index_t *idx, size_t n, const char *const *seqs, const size_t *lens,
                         uint32_t *kmers, uint32_t *hits, int threads) SBF_RESULT_USED;

/* Query n reads held as BAM holds them (bam_get_seq(b) and b->core.l_qseq of htslib): packed[i]
 * holds lens[i] bases (lens in bases, not bytes), two per byte, the first in the high nibble,
 * as seq_nt16 codes: A=1, C=2, G=4, T=8; every other code (N=15, IUPAC codes, '=' = 0) breaks
 * k-mers like N in ASCII. Writes kmers and hits as sbf_query(), with the same results as
 * sbf_query() on the same bases in ASCII. Runs on the GPU after sbf_index_use_gpu(), else on up
 * to `threads` threads (>= 1); safe to call from several threads at once on one index. */
SBF_EXPORT int sbf_query_nt16(const sbf_index_t *idx, size_t n, const uint8_t *const *packed, const size_t *lens,
                              uint32_t *kmers, uint32_t *hits, int threads) SBF_RESULT_USED;

/* CUDA devices usable by this library: 0 without a GPU, a driver, or CUDA in this build. */
SBF_EXPORT int sbf_gpu_devices(void);
/* "NVIDIA H200, 139.8 GiB, compute 9.0, ..." of device `device`, or a negative status. */
SBF_EXPORT int sbf_gpu_describe_device(int device, char *buf, size_t size);
/* Copy the index to CUDA device `device` (SBF_GPU_AUTO: the first one); from then on
 * sbf_query(), sbf_query_nt16() and sbf_query_kmers() run there, with identical results.
 * SBF_GPU_NONE frees the device copy: queries run on the CPU again. Not thread-safe: call
 * before querying. */
SBF_EXPORT int sbf_index_use_gpu(sbf_index_t *idx, int device) SBF_RESULT_USED;
/* The device sbf_query() runs on (the first, with several), or SBF_GPU_NONE for the CPU engine. */
SBF_EXPORT int sbf_index_gpu(const sbf_index_t *idx);

/* Copy the index to n CUDA devices (devices[0..n), or 0..n-1 when devices is NULL; at most
 * SBF_MAX_GPUS). Blocking queries of at least 65,536 reads per device are then cut into one part
 * per device, run at once; smaller ones go to the devices in turn; an sbf_pipeline_t keeps every
 * device busy. Results are identical on any number of devices. Not thread-safe, like
 * sbf_index_use_gpu(). On failure the index keeps what it had. */
#define SBF_MAX_GPUS 16
SBF_EXPORT int sbf_index_use_gpus(sbf_index_t *idx, int n, const int *devices) SBF_RESULT_USED;
/* The number of devices the index is copied to (0: the CPU engine); their numbers go to
 * devices[0..min(count, max)) when devices is not NULL. */
SBF_EXPORT int sbf_index_gpus(const sbf_index_t *idx, int *devices, int max);

/* Per-k-mer answer for one sequence and one target: present[i] = 1 if the k-mer starting at
 * position i (0 <= i <= len - k) is present, 0 if absent or not a valid k-mer. `present`
 * holds len - k + 1 bytes (nothing is written when len < k). */
SBF_EXPORT int sbf_query_kmers(const sbf_index_t *idx, int target, const char *seq, size_t len,
                               uint8_t *present) SBF_RESULT_USED;

/* ---- Classification: the scoring of `sbf classify`, for reads the caller holds ----
 *
 * A fragment (a read, or both mates of a pair) has n valid k-mers, h_t of them found in target
 * t. Its score for t is calibrated: -log10 of the chance that a fragment of n k-mers shows h_t
 * or more hits in t from false positives alone, given t's false-positive rate (the predicted
 * rate of sbf_target_info_t) and the way false positives cluster along a read (doc/ACCURACY.md
 * gives the model). So one threshold means the same for a 35 bp read and a 1 Mbp read, and for
 * a small or an over-full filter. Target t passes when its score reaches min_score, h_t
 * reaches min_hits and h_t / n reaches min_fraction. The category is
 *  - the passing target with the most hits (then the best score, then the lower number), when
 *    no other passing target is within margin x (its hits) of it, nor behind it by no more than
 *    its false positives explain;
 *  - SBF_CAT_MULTI when one is (a read that two targets share), or when a part of the
 *    fragment (a mate, or a stretch of a long read) belongs to another target: the best target
 *    is absent there beyond the read's error rate and the other finds twice as much (a chimera,
 *    a read across a prophage: see filters/sbf_classify.h);
 *  - SBF_CAT_NONE when no target passes; SBF_CAT_NO_KMER when the fragment has no valid k-mer
 *    (shorter than k, all N, or all low-complexity once masked).
 * Before the query, stretches of at least mask_lowcomp bases that repeat with a period of 1 to
 * SBF_LOWCOMP_MAX_PERIOD bases (poly-G, poly-A, (AC)n, (AGG)n...) are masked like N: one k-mer
 * repeated along a read is no evidence. A fragment with a read of SBF_LONG_READ_BASES or more
 * is queried on the index's long-read layer, when it has one, and scored with the layer's k
 * and chance rates (sbf_index_long_layer). */
typedef struct {
    double min_score;       /* >= 0: least calibrated score [SBF_DEFAULT_MIN_SCORE] */
    unsigned min_hits;      /* >= 1: least k-mers found in the target [SBF_DEFAULT_MIN_HITS] */
    double min_fraction;    /* 0..1: least fraction of the fragment's k-mers found [0] */
    double margin;          /* 0..1: passing targets within margin x (the best target's hits)
                             * of the best are tied: SBF_CAT_MULTI [SBF_DEFAULT_MARGIN] */
    unsigned mask_lowcomp;  /* mask tandem repeats of at least this many bases; 0: no mask
                             * [SBF_DEFAULT_MASK_LOWCOMP] */
    int mates;              /* SBF_MATES_SUMMED: a pair's k-mers and hits add up [default];
                             * SBF_MATES_BOTH / SBF_MATES_EITHER: BioBloom Tools' rules, each
                             * mate scored alone, a target passes for both mates (for either) */
} sbf_classify_opt_t;

#define SBF_DEFAULT_MIN_SCORE 3.0
#define SBF_DEFAULT_MIN_HITS 1
#define SBF_DEFAULT_MARGIN 0.02
#define SBF_DEFAULT_MASK_LOWCOMP 24
#define SBF_LOWCOMP_MAX_PERIOD 6

enum { SBF_MATES_SUMMED = 0, SBF_MATES_BOTH = 1, SBF_MATES_EITHER = 2 };

/* Categories beside target numbers (0 .. n_targets-1). */
#define SBF_CAT_MULTI (-1)
#define SBF_CAT_NONE (-2)
#define SBF_CAT_NO_KMER (-3)

SBF_EXPORT void sbf_classify_opt_init(sbf_classify_opt_t *opt);
/* SBF_OK, or SBF_E_PARAM with a message naming the field out of range. */
SBF_EXPORT int sbf_classify_opt_check(const sbf_classify_opt_t *opt) SBF_RESULT_USED;

/* Classify n fragments: read i is seqs[i] (lens[i] bytes, ASCII); with seqs2 not NULL, its
 * mate seqs2[i] (lens2[i] bytes) belongs to the same fragment. Writes category[i] (a target
 * number or SBF_CAT_*) and, if score is not NULL, score[i] = the best target's score. On the
 * GPU when sbf_index_use_gpu() was called; up to `threads` CPU threads otherwise. Thread-safe
 * on one index. */
SBF_EXPORT int sbf_classify(const sbf_index_t *idx, const sbf_classify_opt_t *opt, size_t n,
                            const char *const *seqs, const size_t *lens, const char *const *seqs2,
                            const size_t *lens2, int *category, float *score, int threads) SBF_RESULT_USED;

/* ---- The pipeline: batches of reads from the caller, several in flight, on every GPU ----
 *
 * What `sbf classify` does to files, for records a program holds itself (its own parser, a
 * stream, an aligner's input): the caller submits batches and goes on reading; worker threads
 * query them (two per GPU copy of the index, so one batch is copied while another's kernel
 * runs, on every device of sbf_index_use_gpus(); one worker with `threads` CPU threads on the
 * CPU engine), and each batch's results reach the `done` callback in submission order.
 *
 *     sbf_pipeline_opt_t po;
 *     sbf_pipeline_opt_init(&po);
 *     po.classify = 1; po.done = on_batch; po.ctx = &my_state;
 *     sbf_pipeline_t *p;
 *     sbf_pipeline_open(idx, &po, &p);
 *     while (read_batch(&b))                  // b's buffers stay untouched until on_batch(b)
 *         sbf_pipeline_submit(p, b->n, b->seqs, b->lens, b);
 *     sbf_pipeline_close(p, NULL);            // waits for every batch; the first error
 *
 * The sequences of a batch are not copied: they must stay valid and unchanged until its done
 * callback returns (that is where the caller frees or reuses them). Submitting blocks while
 * `in_flight` batches are out. The callback runs on a worker thread, one call at a time, in
 * submission order; its result arrays are valid during the call only. A non-zero return stops
 * the pipeline: later submits and the close fail. One thread submits and closes. */
typedef struct sbf_pipeline_s sbf_pipeline_t;

typedef struct {
    void *batch;              /* the `user` pointer given at submission */
    size_t n;                 /* reads in the batch */
    const uint32_t *kmers;    /* kmers[i]: valid k-mers of read i, as sbf_query() */
    const uint32_t *hits;     /* hits[i * n_targets + t], as sbf_query() */
    size_t n_frags;           /* with classify: fragments (n, or n / 2 with pairs); else 0 */
    const int *category;      /* with classify: per fragment, a target or SBF_CAT_*, as sbf_classify() */
    const float *score;       /* with classify: the best target's score */
} sbf_pipeline_result_t;

typedef struct {
    int threads;              /* CPU engine threads [1] (unused on the GPU) */
    int in_flight;            /* batches submitted and not yet delivered; 0: 2 per worker + 2 [0] */
    int classify;             /* 1: categories and scores too, with `scoring` [0] */
    int pairs;                /* 1: reads 2i and 2i+1 of a batch are mates, one fragment [0] */
    sbf_classify_opt_t scoring;   /* [sbf_classify_opt_init] */
    int (*done)(void *ctx, const sbf_pipeline_result_t *result);   /* 0 to go on */
    void *ctx;
} sbf_pipeline_opt_t;

typedef struct {
    int n_gpus;                         /* devices used (0: the CPU engine) */
    int gpu[SBF_MAX_GPUS];              /* their numbers */
    double busy_seconds[SBF_MAX_GPUS];  /* per device (index 0 for the CPU engine): time in
                                         * which a query ran there, copies included */
    double wait_seconds;                /* time submit waited for a batch to be delivered */
    double wall_seconds;                /* from open to close */
} sbf_pipeline_stats_t;

SBF_EXPORT void sbf_pipeline_opt_init(sbf_pipeline_opt_t *opt);
/* The index must outlive the pipeline and keep its GPU copies while it runs. */
SBF_EXPORT int sbf_pipeline_open(const sbf_index_t *idx, const sbf_pipeline_opt_t *opt,
                                 sbf_pipeline_t **out) SBF_RESULT_USED;
/* Queue n reads, ASCII (seqs[i], lens[i] bytes); `user` comes back in the result. */
SBF_EXPORT int sbf_pipeline_submit(sbf_pipeline_t *p, size_t n, const char *const *seqs, const size_t *lens,
                                   void *user) SBF_RESULT_USED;
/* The same for reads as BAM holds them (see sbf_query_nt16()). */
SBF_EXPORT int sbf_pipeline_submit_nt16(sbf_pipeline_t *p, size_t n, const uint8_t *const *packed,
                                        const size_t *lens, void *user) SBF_RESULT_USED;
/* Wait for every batch to be delivered, stop the workers, free p (NULL allowed); stats (or NULL)
 * receives the timings. SBF_OK, or the pipeline's first failure. Batches never delivered
 * (after a failure) are not passed to the callback. */
SBF_EXPORT int sbf_pipeline_close(sbf_pipeline_t *p, sbf_pipeline_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif /* SBF_H */
