/* sbf_segment.h -- long reads queried as segments, so that the scoring can see where along a
 * read each target's hits lie.
 *
 * A read with more than SBF_SEGMENT_KMERS k-mers is queried as consecutive segments of that
 * many k-mers (each segment holds its k-mers' bases: SBF_SEGMENT_KMERS + k - 1 bases, the last
 * one fewer), so every k-mer is counted once and the read's totals are the segments' sums. A
 * read whose segments pass different targets, one where the other finds nothing, is a chimera
 * or spans a prophage: sbf_score_fragment() calls it multi. Segments start at multiples of
 * SBF_SEGMENT_KMERS bases (an even number), hence on a byte of a BAM 4-bit read.
 */
#ifndef SBF_SEGMENT_H
#define SBF_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#define SBF_SEGMENT_KMERS 512u

/* A batch cut into query units (reads, or segments of long reads), with reusable buffers. */
typedef struct {
    size_t n_units;
    const char **seqs;        /* unit views: ASCII batches */
    const uint8_t **packed;   /* unit views: BAM 4-bit batches */
    size_t *lens;
    size_t *start;            /* per read i: its units are start[i] .. start[i+1]-1 */
    size_t cap_seqs, cap_packed, cap_lens, cap_start;
    int segmented;            /* some read has several units */
} sbf_units_t;

/* Cut n reads (ASCII seqs, or packed with seqs NULL) into units for k-mers of length k.
 * SBF_OK or SBF_E_NOMEM. */
int sbf_units_make(sbf_units_t *u, size_t n, const char *const *seqs, const uint8_t *const *packed,
                   const size_t *lens, unsigned k);

/* Where along the reads the hits lie: read i was queried as units first[i] .. end[i]-1, unit q
 * with kmers[q] k-mers and hits + q * n_targets (for one sbf_units_t: first = start,
 * end = start + 1). */
typedef struct {
    const size_t *first, *end;
    const uint32_t *kmers, *hits;
    const uint8_t *layer;   /* per read: 1 when it was queried on the long-read layer (its
                             * fragment is scored with that layer's rule), or NULL: none was */
} sbf_segments_t;

/* Per read: the sum of its units' answers into kmers[n] and hits[n * n_targets]. */
void sbf_segments_gather(const sbf_segments_t *seg, size_t n, int n_targets, uint32_t *kmers, uint32_t *hits);

void sbf_units_free(sbf_units_t *u);

#endif
