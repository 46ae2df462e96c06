/* sbf_mask.h -- k-mers of other sequences left out of a target (`sbf build --mask`).
 *
 * A host target masked against microbes must not hold the k-mers it shares with them, or their
 * reads are removed with the host. The mask's k-mers are held exactly when they are few (up to
 * SBF_MASK_EXACT_MAX: the long-read layer's adapters, a phiX or a plasmid), else in a filter of
 * their own (the index's parameters, SBF_MASK_BITS_PER_KMER bits per k-mer). The k-mers left
 * out are marked in a bitmap over the target's sequence, which a CPU build skips
 * (sbf_mask_hold, sbf_build_target_held); or the sequence is rewritten as the records of its
 * k-mers the mask does not hold (each maximal stretch of kept k-mers one record: sbf_mask_apply,
 * what a GPU build with a --mask is given).
 * Building depends only on the set of k-mers (each k-mer's s-mers go into the shard of its own
 * minimizer), so both engines build the masked target from the same bytes with no change of
 * their own, and the bits are those of the target's k-mers less the mask's.
 */
#ifndef SBF_MASK_H
#define SBF_MASK_H

#include <stdint.h>

#include "sbf_build.h"
#include "sbf_index.h"

/* Bits per mask k-mer: a target k-mer the mask does not hold is left out by chance at the mask
 * filter's false-positive rate (about 1e-8 here; doc/decisions.md "Masked targets"). */
#define SBF_MASK_BITS_PER_KMER 32.0

/* Masks of up to this many k-mers are exact sets: a k-mer is left out only when it is one of
 * theirs (a filter would also leave out its false positives, about 1e-8 of the target's k-mers),
 * and a lookup in a table of a few kB costs a fraction of a filter query's scan (the layer's
 * adapter masking of a 3 Gbp host: doc/PERFORMANCE.md). Up to 4,096 k-mers 8 slots each, then 2:
 * 2^20 k-mers, a table of 16 MiB. */
#define SBF_MASK_EXACT_MAX ((uint64_t)1 << 20)

typedef struct sbf_mask sbf_mask_t;

/* The mask of every valid k-mer of the n sequences seq[0..n) (parameters p: k, and the filter's
 * for a large mask), built on the CPU with `threads` threads. SBF_OK or an error; *out is NULL
 * on failure. */
int sbf_mask_build(const sbf_params_t *p, const sbf_seqbuf_t *const *seq, int n, int threads, sbf_mask_t **out);
void sbf_mask_free(sbf_mask_t *m);

/* An exact mask's canonical k-mers in ascending order into *keys (*n of them, memory the caller
 * frees), for a device that looks them up itself; *keys = NULL when the mask is a filter.
 * SBF_OK or SBF_E_NOMEM. */
int sbf_mask_sorted_keys(const sbf_mask_t *m, uint64_t **keys, uint64_t *n);

/* The low complexity of a k-mer (DUST's measure): over its k-2 trinucleotides, the pairs of equal
 * ones, sum c(c-1)/2. A random 21-mer scores about 3; an A-rich stretch with an error in it
 * ("AAAAAAAGAAAAAAAGAAAAA") 50 or more. */
unsigned sbf_kmer_dust(const uint8_t *codes, unsigned k);

/* k-mer start positions per chunk a thread masks; a multiple of 64 so that chunks never share a
 * word of the bitmap. The records of sbf_mask_apply end at chunk edges. */
#define SBF_MASK_CHUNK (1u << 20)

/* *out (initialised, empty) receives the records of `in` whose k-mers the mask `mask`
 * (NULL: none) does not hold and, when dust_min > 0, whose sbf_kmer_dust() is below dust_min:
 * every valid k-mer of `in` is either in *out once or counted in *left_out. k is the mask's
 * (or, without a mask, the given k). out->bases stays 0 (no base was read); out->kmers counts
 * the k-mers kept. */
int sbf_mask_apply(const sbf_mask_t *mask, int k, unsigned dust_min, const sbf_seqbuf_t *in, int threads,
                   sbf_seqbuf_t *out, uint64_t *left_out);

/* The same k-mers left out as a bitmap over `in` instead of a masked copy (a CPU build then
 * skips them: sbf_build_target_held): *held (empty when `in` holds no k-mer; free it with
 * sbf_held_free), *kept the valid k-mers not held (sbf_mask_apply's out->kmers), *left_out as
 * sbf_mask_apply's. The copy's second pass and its memory (a human genome's 3 GB) are saved. */
int sbf_mask_hold(const sbf_mask_t *mask, int k, unsigned dust_min, const sbf_seqbuf_t *in, int threads,
                  sbf_held_t *held, uint64_t *kept, uint64_t *left_out);
void sbf_held_free(sbf_held_t *held);

#endif
