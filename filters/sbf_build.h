/* sbf_build.h -- multi-threaded insertion of a target's sequence into its filter. */
#ifndef SBF_BUILD_H
#define SBF_BUILD_H

#include <stdint.h>

#include "sbf_index.h"

/* Growable buffer of 2-bit codes (0..3, 4 = not a base). Records are separated by one code 4
 * so that no k-mer spans two records. */
typedef struct {
    uint8_t *codes;
    uint64_t len, cap;
    uint64_t bases;   /* bases appended, N included, separators excluded */
    uint64_t kmers;   /* valid k-mer positions */
    unsigned run;     /* valid bases at the end of the buffer, for counting k-mers */
    int mapped;       /* codes is a mapping of its own (sbf_buf_reserve), not malloc'd */
} sbf_seqbuf_t;

void sbf_seqbuf_init(sbf_seqbuf_t *b);
void sbf_seqbuf_free(sbf_seqbuf_t *b);
/* Append one record (bytes mapped through `code`); k counts the valid k-mers. */
int sbf_seqbuf_append(sbf_seqbuf_t *b, const uint8_t code[256], const uint8_t *seq, uint64_t len, int k);
/* More bases of the last record appended (a record read in pieces: the same bytes and counts as
 * appending it whole). */
int sbf_seqbuf_extend(sbf_seqbuf_t *b, const uint8_t code[256], const uint8_t *seq, uint64_t len, int k);

/* Append the records of src (read with the same k) to dst and free src: the buffer appending
 * them one by one gives. An empty dst takes src's memory without a copy; else the copy runs on
 * up to `threads` threads (pieces of 4 MiB). */
int sbf_seqbuf_move(sbf_seqbuf_t *dst, sbf_seqbuf_t *src, int threads);
/* The same for records of one file parsed apart (src appended from empty): the first
 * lead_empty records were empty ones, before src's first record with bases (all of them when src
 * has none), which write a separator each after earlier bases, as they would have. */
int sbf_seqbuf_join(sbf_seqbuf_t *dst, sbf_seqbuf_t *src, uint64_t lead_empty, int threads);
/* Cut b back to what it held when `before` was copied from it (its records appended since then
 * cut off; a buffer it took whole from another, when it held nothing, freed). */
void sbf_seqbuf_restore(sbf_seqbuf_t *b, const sbf_seqbuf_t *before);

/* Valid k-mer positions of b for k-mers of length k (b->kmers counts them for the k of the
 * appends), counted on up to `threads` threads. */
uint64_t sbf_seqbuf_kmers(const sbf_seqbuf_t *b, int k, int threads);

/* work(arg) on up to `threads` threads, the calling one included, then waits for them all. The
 * work shares itself out (chunks taken from a counter atomically), so a thread that cannot be
 * started is no error: fewer threads, down to the caller alone (no memory to start any), do all
 * of it. */
void sbf_run_threads(int threads, void *(*work)(void *), void *arg);

/* Insert every valid k-mer of codes[0..len) into target t with `threads` threads (>= 1).
 * The result does not depend on the thread count: bits are only ever ORed. Then computes the
 * target's fill, predicted false-positive rate and clump chance (sbf_target_stats). */
int sbf_build_target(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                     int threads);

/* K-mers left out of a build (sbf_mask_hold): bit p % 64 of bits[p / 64] is set when the k-mer
 * starting at codes[p] is left out, with a word of zeros after the last k-mer's; bytes: the
 * bitmap's allocation (sbf_filter_alloc). */
typedef struct {
    uint64_t *bits;
    uint64_t bytes;
} sbf_held_t;

/* sbf_build_target, leaving out the k-mers `held` marks (NULL or empty: none). A k-mer's bits
 * are its own s-mers in its own minimizer's shard, so the filter is the one built from the
 * records of the k-mers kept (sbf_mask_apply's masked copy), without making that copy. */
int sbf_build_target_held(const sbf_index_t *idx, sbf_target_t *t, const uint8_t *codes, uint64_t len,
                          const sbf_held_t *held, int threads);
/* For tests: the blocks of records queued (and not yet ORed into the filter) beyond which a
 * building thread ORs before it scans on; 0 (the default): 16 per range of shards. */
extern unsigned sbf_build_queue_cap;

#endif
