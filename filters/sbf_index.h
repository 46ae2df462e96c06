/* sbf_index.h -- the multi-target index: R filters sharing parameters and hash functions.
 *
 * A query hashes each window of a sequence once (sbf_scan_window) and probes every target.
 * Targets may differ in size (each has its own shard count). The filter arrays are 64-byte
 * aligned, either malloc'd (after a build) or inside an mmap of the .sbf file (after a load).
 */
#ifndef SBF_INDEX_H
#define SBF_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "sbf_params.h"
#include "sbf_scan.h"

typedef struct {
    char *name;
    char **sources;       /* file names or sequence names it was built from */
    int n_sources;
    uint64_t bases;       /* bases read, N included */
    uint64_t kmers;       /* valid k-mer positions inserted (with repeats) */
    uint64_t n_shards;
    double fill;          /* fraction of bits set */
    double predicted_fpr; /* probability that a random k-mer tests present */
    uint64_t *bits;       /* n_shards * shard_bits / 64 words */
    uint64_t checksum;    /* XXH64 of the filter array as stored */
} sbf_target_t;

typedef struct sbf_index_s {
    sbf_params_t params;
    double bits_per_kmer;   /* sizing rule used at build time (0 when --size gave the size) */
    int n_targets;
    sbf_target_t *targets;
    void *map;              /* mmap of the file the filters live in, or NULL */
    size_t map_len;
    void *accel;            /* a copy on an accelerator (plugin/: the GPU engine), or NULL */
    char *notice;           /* how the build went, when the caller should be told (or NULL) */
    double *clumps;         /* per target, sbf_target_clump(), computed once (sbf_idx_clumps) */
    void (*accel_free)(void *accel);
} sbf_index_t;   /* the same type as the opaque sbf_index_t of plugin/sbf.h */

/* Empty index with parameters p (checked by the caller). */
sbf_index_t *sbf_idx_new(const sbf_params_t *p);
void sbf_idx_free(sbf_index_t *idx);
/* Append a target with n_shards zeroed shards; returns its number or a negative status. */
int sbf_idx_add_target(sbf_index_t *idx, const char *name, uint64_t n_shards);
int sbf_target_add_source(sbf_target_t *t, const char *source);
size_t sbf_target_bytes(const sbf_index_t *idx, const sbf_target_t *t);

/* Shards needed for `kmers` k-mers at `bits_per_kmer` bits each (at least 1). */
uint64_t sbf_shards_for(const sbf_params_t *p, uint64_t kmers, double bits_per_kmer);

/* Insert every valid k-mer of the window just scanned into target t. With `atomic` set the
 * bits are ORed atomically so several threads may insert into one target. */
void sbf_insert_scanned(const sbf_index_t *idx, sbf_target_t *t, const sbf_scan_t *sc, int atomic);

/* Insert all k-mers of seq[0..len) (bytes mapped through `code`). */
void sbf_insert_seq(const sbf_index_t *idx, sbf_target_t *t, sbf_scan_t *sc, const uint8_t code[256],
                    const uint8_t *seq, uint64_t len, int atomic);

/* Query seq[0..len): *n_kmers = valid k-mers, hits[r] = k-mers present in target r.
 * presence, if not NULL, has n_targets rows of len-k+1 bytes (row r at r*(len-k+1)): 1 where
 * the k-mer at that position is present in target r, else 0 (absent or not a valid k-mer). */
void sbf_query_seq(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t code[256],
                   const uint8_t *seq, uint64_t len, uint64_t *n_kmers, uint64_t *hits,
                   uint8_t *presence);

/* The same answers (n_kmers, hits) for a sequence of len bases packed as BAM holds them
 * (bam_get_seq): two 4-bit seq_nt16 codes per byte, the first in the high nibble; A=1, C=2, G=4,
 * T=8, every other code breaks k-mers. Each window is unpacked to one code per byte and scanned
 * through sbf_nt4_nt16. */
void sbf_query_seq_nt16(const sbf_index_t *idx, sbf_scan_t *sc, const uint8_t *packed, uint64_t len,
                        uint64_t *n_kmers, uint64_t *hits);

/* How often a false positive continues into the read's next k-mer (see sbf_index.c): the
 * clumping of chance hits, for the scoring rule. */
double sbf_target_clump(const sbf_index_t *idx, const sbf_target_t *t);
/* Every target's clump chance, computed on the first call (a pass over the filters) and kept in
 * the index: later calls, from any thread, return the same array. NULL when out of memory. */
const double *sbf_idx_clumps(const sbf_index_t *idx);

/* Recompute fill and predicted false-positive rate of t from its bits. */
void sbf_target_stats(const sbf_index_t *idx, sbf_target_t *t);

#endif
