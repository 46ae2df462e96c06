/* sbf_batch.h -- reads grouped into batches of whole fragments (single reads or pairs).
 *
 * Pairs come from two mate files (IN1 IN2, names must match), from one file of alternating
 * mates (--interleaved, names must match), or, in SAM/BAM/CRAM without --interleaved, from the
 * flags: a primary record flagged paired followed by its mate (same name, the other of READ1 /
 * READ2, secondary and supplementary records in between allowed) is one fragment; mates that
 * are not adjacent (coordinate-sorted files) are scored as single reads. Secondary and
 * supplementary records belong to no fragment (frag = -1): they are never scored, so never
 * counted twice. A batch ends after `max_bases` bases at a fragment boundary. */
#ifndef SBF_BATCH_H
#define SBF_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "sbf_reads.h"

typedef enum { SBF_PAIRS_BY_FLAGS, SBF_PAIRS_INTERLEAVED, SBF_PAIRS_TWO_FILES } sbf_pairing_t;

typedef struct {
    uint32_t read[2];   /* indices into the batch's reads */
    uint32_t n;         /* 1 or 2 */
} sbf_frag_t;

typedef struct {
    sbf_read_t *reads;  /* in input order (two files: mate 1, mate 2, mate 1, ...) */
    size_t n_reads, cap_reads;
    sbf_frag_t *frags;
    size_t n_frags, cap_frags;
    uint64_t bases;     /* of the classified reads */
    sbf_pins_t pins;    /* the input blocks records read in place point into */
} sbf_batch_t;

void sbf_batch_free(sbf_batch_t *b);

typedef struct sbf_input_s sbf_input_t;

/* in2 is the second mate file (pairing SBF_PAIRS_TWO_FILES) or NULL. Takes ownership of the
 * readers, also on failure. */
int sbf_input_new(sbf_reader_t *in1, sbf_reader_t *in2, sbf_pairing_t pairing, sbf_input_t **out);
/* Refill b (its records are reused). 1: b holds records; 0: end of input; < 0: error
 * (message in sbf_error_message(), naming the file and record). */
int sbf_input_next(sbf_input_t *in, sbf_batch_t *b, uint64_t max_bases);
/* Records parsed in place (sbf_reader_in_place) by the readers; *ahead those the read-ahead
 * threads parsed; *fill and *wait the larger of the two files' read-ahead times
 * (sbf_reader_times). */
long long sbf_input_in_place(const sbf_input_t *in, long long *ahead, double *fill, double *wait);
/* Closes the readers; 0 or the first close error. */
int sbf_input_free(sbf_input_t *in);

#endif
