/* sbf_adapters.h -- sequencing adapters and primers, left out of every target's long-read layer.
 *
 * Untrimmed reads carry them, and a genome may share them: the ONT 1D adapter of kit SQK-MAP006
 * and the cDNA strand-switching primer are stretches of phiX174, so at k = 21-25 an untrimmed
 * ONT cDNA read "matched" phiX through its adapter (doc/ACCURACY.md). An adapter's k-mers are
 * no evidence of any target: the long-read layer of every target leaves them out
 * (sbf_mask.h). The 31-mer layer keeps them: most adapters are shorter than 31 bases, and
 * short-read figures stay as they were.
 */
#ifndef SBF_ADAPTERS_H
#define SBF_ADAPTERS_H

#include "sbf_build.h"

typedef struct {
    const char *name, *seq;
} sbf_adapter_t;

extern const sbf_adapter_t sbf_adapters[];
extern const int sbf_n_adapters;

/* Every adapter appended to b as a record of its own (k counts the k-mers). */
int sbf_adapters_append(sbf_seqbuf_t *b, int k);

#endif
