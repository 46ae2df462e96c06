/* sbf_index.h -- the multi-target index: R filters sharing parameters and hash functions.
 *
 * A query hashes each window of a sequence once (sbf_scan_window) and probes every target.
 * Targets may differ in size (each has its own shard count). Every target lives in a panel
 * (format 3, doc/format.md "Panels"): a plain panel holds one target's filter as it is; a wide
 * panel interleaves the filters of several targets of about the same size, one bit per column
 * at every shard position, so that one run reads every column of the panel in one pass. The
 * arrays are 64-byte aligned, either malloc'd (after a build) or inside an mmap of the .sbf
 * file (after a load).
 */
#ifndef SBF_INDEX_H
#define SBF_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "sbf_params.h"
#include "sbf_probe.h"
#include "sbf_scan.h"

#define SBF_MAX_PANEL_LOG2 6   /* at most 64 columns per panel: one 64-bit word per position */

/* Bit (shard s, position b, column c) of a panel is bit ((s * shard_bits + b) << log2_width) + c
 * of its array, as little-endian 64-bit words; with log2_width 0 that is the plain layout. */
typedef struct {
    uint64_t n_shards;    /* shards per column */
    unsigned log2_width;  /* 2^log2_width columns per shard position (0: a plain filter) */
    int n_members;
    int *members;         /* its targets (target numbers, in the order they were added) */
    uint64_t *bits;       /* n_shards * shard_bits << log2_width bits */
    uint64_t checksum;    /* XXH64 of the array as stored */
    void *spill_map;      /* non-NULL: bits lie in this read-only mapping of the output file, where
                           * a build that knows its output wrote the finished panel (sbf_format.c,
                           * sbf_format_spill_panel); spill_len bytes, unmapped with the index */
    size_t spill_len;
} sbf_panel_t;

typedef struct {
    char *name;
    char **sources;       /* file names or sequence names it was built from */
    int n_sources;
    uint64_t bases;       /* bases read, N included */
    uint64_t kmers;       /* valid k-mer positions inserted (with repeats; masked ones not) */
    char **masks;         /* files whose k-mers were left out of it (sbf build --mask) */
    int n_masks;
    uint64_t masked;      /* valid k-mer positions of its sequence left out by the masks */
    double chance;        /* measured chance that a k-mer of an unrelated read tests present: the
                           * share of the k-mers of its own sequence reversed that do (long-read
                           * layers, sbf_target_measure_chance); 0 where not measured */
    uint64_t n_shards;    /* shards of its filter: its panel's n_shards * cols */
    double fill;          /* fraction of bits set */
    double predicted_fpr; /* probability that a random k-mer tests present */
    double clump;         /* sbf_target_clump(), or < 0 where not known yet (format 2 files) */
    int panel;            /* the panel holding its filter, columns col0 .. col0 + cols - 1 */
    unsigned col0, cols;
    uint64_t *bits;       /* its filter in the plain layout (n_shards * shard_bits / 64 words):
                           * the panel's array for a plain panel, NULL in a wide one (read it
                           * with sbf_target_extract), a scratch array while it is built */
} sbf_target_t;

typedef struct sbf_index_s {
    sbf_params_t params;
    double bits_per_kmer;   /* sizing rule used at build time (0 when --size gave the size) */
    int n_targets;
    sbf_target_t *targets;
    int n_panels;
    sbf_panel_t *panels;
    void *map;              /* mmap of the file the filters live in (owned), or NULL */
    size_t map_len;
    int in_map;             /* the filters lie in a mapping (its own map, or its parent's) */
    uint64_t file_checksum; /* the index file's identity (sbf_index_checksum), once written or read; 0 before */
    unsigned format_version; /* the format of the file it was read from (its panels' checksums
                              * follow it); 0 when built here, written as SBF_FORMAT_VERSION */
    struct sbf_index_s *layer;   /* the long-read layer: the same targets with shorter seeds, for
                                  * reads of SBF_LONG_READ_BASES or more (doc/format.md), or NULL */
    void *accel;            /* a copy on an accelerator (plugin/: the GPU engine), or NULL */
    char *notice;           /* how the build went, when the caller should be told (or NULL) */
    double *clumps;         /* per target, sbf_target_clump(), computed once (sbf_idx_clumps) */
    uint64_t **plain;       /* per target of a wide panel, its filter in the plain layout for the
                             * CPU's queries (sbf_idx_plain_copies), or NULL */
    void (*accel_free)(void *accel);
    int threads;            /* threads that may write it (the builder's; 0 or 1: one) */
    struct sbf_spill_s *spill;   /* the output file a build writes its finished panels into (the
                                  * index's own, not its layer's), or NULL (sbf_format.c) */
} sbf_index_t;   /* the same type as the opaque sbf_index_t of plugin/sbf.h */

/* Empty index with parameters p (checked by the caller). */
sbf_index_t *sbf_idx_new(const sbf_params_t *p);
void sbf_idx_free(sbf_index_t *idx);
/* Append a target with n_shards zeroed shards in a plain panel of its own; returns its number
 * or a negative status. */
int sbf_idx_add_target(sbf_index_t *idx, const char *name, uint64_t n_shards);
/* Append a zeroed panel of 2^log2_width columns of n_shards shards; returns its number. */
int sbf_idx_add_panel(sbf_index_t *idx, uint64_t n_shards, unsigned log2_width);
/* Append a target in columns col0 .. col0 + cols - 1 of panel `panel` (wide panels: its bits
 * arrive through sbf_panel_put); returns its number. */
int sbf_idx_add_panel_target(sbf_index_t *idx, const char *name, int panel, unsigned col0, unsigned cols);
int sbf_target_add_source(sbf_target_t *t, const char *source);
int sbf_target_add_mask(sbf_target_t *t, const char *mask);
/* Bytes of t's filter (its share of its panel), and of a panel's whole array. */
size_t sbf_target_bytes(const sbf_index_t *idx, const sbf_target_t *t);
size_t sbf_panel_bytes(const sbf_index_t *idx, const sbf_panel_t *pn);

/* Append target number r to pn's members; 0 when out of memory (the caller says so). */
int sbf_panel_add_member(sbf_panel_t *pn, int r);

/* Copy t's filter in the plain layout (sbf_target_bytes(idx, t) bytes) into the wide panel that
 * holds t (ORed into its columns, on up to `threads` threads: sbf_plain.c), or out of it. */
void sbf_panel_put(const sbf_index_t *idx, const sbf_target_t *t, const uint64_t *plain, int threads);
void sbf_target_extract(const sbf_index_t *idx, const sbf_target_t *t, uint64_t *plain);

/* SBF_OK, or an error naming the target when a filter of n_shards is more than an index holds
 * per target (2^32 shards). */
int sbf_check_shards(const char *name, uint64_t n_shards);

/* Shards needed for `kmers` k-mers at `bits_per_kmer` bits each (at least 1). */
uint64_t sbf_shards_for(const sbf_params_t *p, uint64_t kmers, double bits_per_kmer);

/* Insert every valid k-mer of the window just scanned into target t (one thread at a time per
 * target: several build through sbf_scanned_runs()). */
void sbf_insert_scanned(const sbf_index_t *idx, sbf_target_t *t, const sbf_scan_t *sc);

/* Where sbf_scanned_runs() puts each run: put(sink, shard) returns room for one record of
 * 1 + shard words (uint64_t): the shard's number, then the bits to OR into it. */
typedef struct sbf_run_sink_s sbf_run_sink_t;
struct sbf_run_sink_s {
    uint64_t *(*put)(sbf_run_sink_t *sink, uint64_t shard);
};

/* What sbf_insert_scanned() would OR into target t, as records for the sink: several threads
 * then insert without atomic operations, each into shards of its own (sbf_build.c). */
void sbf_scanned_runs(const sbf_index_t *idx, const sbf_target_t *t, const sbf_scan_t *sc, sbf_run_sink_t *sink);

/* Query seq[0..len): *n_kmers = valid k-mers, hits[r] = k-mers present in target r.
 * presence, if not NULL, has n_targets rows of len-k+1 bytes (row r at r*(len-k+1)): 1 where
 * the k-mer at that position is present in target r, else 0 (absent or not a valid k-mer). */
void sbf_query_seq(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t code[256],
                   const uint8_t *seq, uint64_t len, uint64_t *n_kmers, uint64_t *hits,
                   uint8_t *presence);

/* sbf_query_seq with one panel probed: hits[r] for the targets of that panel (the others 0),
 * no presence. */
void sbf_query_seq_panel(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t code[256], const uint8_t *seq,
                         uint64_t len, int panel, uint64_t *n_kmers, uint64_t *hits);

/* The same answers (n_kmers, hits) for a sequence of len bases packed as BAM holds them
 * (bam_get_seq): two 4-bit seq_nt16 codes per byte, the first in the high nibble; A=1, C=2, G=4,
 * T=8, every other code breaks k-mers. Each window is unpacked to one code per byte and scanned
 * through sbf_nt4_nt16. */
void sbf_query_seq_nt16(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t *packed, uint64_t len,
                        uint64_t *n_kmers, uint64_t *hits);

/* A short read's query in two halves, so that one thread has the next read's cache misses in
 * flight while it tests this one's (issue 27: with a host far larger than the caches, a read's
 * 30-odd random lines in the host were the largest share of its cycles on the GPU machines'
 * Xeon). sbf_query_ahead() scans the read and computes its shard in every plain target;
 * sbf_query_behind() then answers it as sbf_query_seq() would (*n_kmers, hits), asking for
 * `next`'s shards (NULL: none) between its own runs (all at once first when this read does not
 * take the one pass). `now`: ask for this read's shards at once
 * (the first of a series). Reads of more than one window, and indexes the one pass over the
 * targets does not take (more than SBF_KEPT_TARGETS targets, panels probed as panels, other
 * shard sizes), are answered whole by sbf_query_behind(). */
typedef struct {
    sbf_scan_t sc;
    const uint64_t *kept[SBF_KEPT_TARGETS][SBF_KEPT_RUNS];   /* each target's shard of each run */
    int ids[SBF_KEPT_TARGETS], n_kept;
    int state;   /* (sbf_index.c) what sbf_query_behind() does */
    const uint8_t *code, *seq, *packed;
    uint64_t len;
} sbf_ahead_t;
void sbf_query_ahead(const sbf_index_t *idx, sbf_ahead_t *a, const uint8_t code[256], const uint8_t *seq,
                     uint64_t len, int now);
/* sbf_query_ahead() of a read packed as sbf_query_seq_nt16() takes it */
void sbf_query_ahead_nt16(const sbf_index_t *idx, sbf_ahead_t *a, const uint8_t *packed, uint64_t len, int now);
void sbf_query_behind(const sbf_index_t *idx, sbf_ahead_t *a, const sbf_ahead_t *next, uint64_t *n_kmers,
                      uint64_t *hits);

/* Zeroed memory for a filter of `bytes` bytes, its shards on 64-byte lines (large ones mapped,
 * huge pages advised), or NULL; freed with sbf_filter_free(p, the same bytes). */
void *sbf_filter_alloc(size_t bytes);
void sbf_filter_free(void *p, size_t bytes);

/* Plain copies of the targets of wide panels (sbf_panel_copied; sbf_plain.c): the CPU's queries
 * then touch one cache line per run and target, as with plain filters, and give the same answers. Made once,
 * on `threads` threads, by the first caller (others wait); later queries of idx from any thread
 * use them. SBF_OK (also when there is no wide panel), or SBF_E_NOMEM: the queries then read the
 * panels as they are (slower, the same answers). */
int sbf_idx_plain_copies(const sbf_index_t *idx, int threads);
/* Whether sbf_idx_plain_copies() copies the targets of this panel of idx (wide: up to 1 GiB
 * always, larger with few members). */
int sbf_panel_copied(const sbf_index_t *idx, const sbf_panel_t *pn);
void sbf_idx_plain_free(sbf_index_t *idx);

/* How often a false positive continues into the read's next k-mer (see sbf_index.c): the
 * clumping of chance hits, for the scoring rule. -1 when out of memory (a target of a wide
 * panel is read through a plain copy). */
double sbf_target_clump(const sbf_index_t *idx, const sbf_target_t *t);
/* Every target's clump chance, computed on the first call (a pass over the filters) and kept in
 * the index: later calls, from any thread, return the same array. NULL when out of memory. */
const double *sbf_idx_clumps(const sbf_index_t *idx);

/* t->chance from its sequence (2-bit codes, as sampled by sbf_chance_sample): the share of the valid k-mers of up to
 * SBF_CHANCE_WINDOWS windows of SBF_CHANCE_WINDOW bases, evenly spaced and each reversed (not
 * complemented), that test present in t. A reversed genome keeps its composition and its short
 * repeats but is not the genome: this is the chance rate of reads like it, far above the
 * uniform 2 x kmers / 4^k for a human genome at k = 21 (18 times on chr20), about it for
 * E. coli. SBF_OK or SBF_E_NOMEM. */
#define SBF_CHANCE_WINDOW 10000u
#define SBF_CHANCE_WINDOWS 200u
/* Those windows, taken from the sequence and reversed, each with its length: about 2 MB, so
 * that a build may let a human genome's 3 GB of codes go before the filter the windows are
 * tested in is made (issue 27: peak memory). */
typedef struct {
    uint8_t *codes;                          /* the windows one after another, each reversed */
    uint32_t len[SBF_CHANCE_WINDOWS + 1];    /* (len / step rounds down: one more window) */
    uint32_t n;
} sbf_chance_sample_t;
int sbf_chance_sample(const uint8_t *codes, uint64_t len, sbf_chance_sample_t *s);   /* SBF_OK or SBF_E_NOMEM */
void sbf_chance_sample_free(sbf_chance_sample_t *s);
int sbf_target_measure_chance(const sbf_index_t *idx, int r, const sbf_chance_sample_t *s);

/* Recompute fill, predicted false-positive rate and clump chance of t from its bits (t->bits:
 * the plain layout, as while it is built), in one pass on `threads` threads. */
void sbf_target_stats(const sbf_index_t *idx, sbf_target_t *t, int threads);

#endif
