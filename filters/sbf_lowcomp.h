/* sbf_lowcomp.h -- low-complexity masking of reads before a query.
 *
 * A stretch of at least min_len bases that repeats with a period of 1 to
 * SBF_LOWCOMP_MAX_PERIOD bases (poly-G from a two-colour sequencer's dark cycles, poly-A
 * tails, (AC)n, (AGG)n, other short tandem repeats) holds one k-mer, or a handful, repeated
 * along it: in a filter that k-mer is one test, not many, and a single false positive would
 * count once per position. Such stretches are masked like N before the query, so they count
 * neither as k-mers nor as hits. Exact repeats only: a base that breaks the period ends the
 * stretch. The rule is a property of the sequence alone, so both engines see the same masked
 * sequence (the mask is applied on the host, before either engine runs).
 */
#ifndef SBF_LOWCOMP_H
#define SBF_LOWCOMP_H

#include <stddef.h>
#include <stdint.h>

/* ASCII read seq[0..len): when it holds a stretch to mask, writes the masked read ('N' over the
 * stretches) to out[0..len) and returns the number of bases masked; returns 0 and leaves out
 * untouched otherwise. min_len 0 masks nothing. */
size_t sbf_lowcomp_mask_ascii(const char *seq, size_t len, unsigned min_len, char *out);

/* The same for a read packed as BAM holds it (two 4-bit codes per byte, the first in the high
 * nibble): out gets (len + 1) / 2 bytes with code 15 (N) over the stretches. `scratch` holds
 * len bytes (the unpacked codes). */
size_t sbf_lowcomp_mask_nt16(const uint8_t *packed, size_t len, unsigned min_len, uint8_t *scratch, uint8_t *out);


/* A batch's view with its low-complexity stretches masked: reads that need it are copied
 * (masked) into buffers reused from batch to batch; the others keep their pointers. */
typedef struct {
    const char **seqs;        /* the view (ASCII batches) */
    const uint8_t **packed;   /* the view (BAM 4-bit batches) */
    size_t *off;              /* per read: offset of its masked copy in arena, or SIZE_MAX */
    size_t cap_n;
    uint8_t *arena, *scratch;
    size_t cap_arena, cap_scratch;
    uint64_t masked_reads, masked_bases;   /* of the last batch */
} sbf_lowcomp_batch_t;

/* Mask n reads (ASCII seqs, or packed with seqs NULL) of lengths lens; *seqs_out / *packed_out
 * get the view: the inputs themselves when nothing was masked (or min_len is 0). The view is
 * valid until the next call or sbf_lowcomp_batch_free(). SBF_OK or SBF_E_NOMEM. */
int sbf_lowcomp_batch(sbf_lowcomp_batch_t *m, unsigned min_len, size_t n, const char *const *seqs,
                      const uint8_t *const *packed, const size_t *lens, const char *const **seqs_out,
                      const uint8_t *const **packed_out);
void sbf_lowcomp_batch_free(sbf_lowcomp_batch_t *m);

#endif
