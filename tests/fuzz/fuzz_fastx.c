/* fuzz_fastx.c -- libFuzzer target: sbf's FASTA/FASTQ parser (bam/sbf_fastx.c) against
 * htslib's kseq, which it replaced for speed, on arbitrary bytes. The first byte sets the size
 * of the reads both parsers get (1-64 bytes at a time, or the whole input), so buffer refills
 * land everywhere; the codes and every string of every record must be identical. The in-place
 * path of plain FASTQ (sbf_fastq_span, then the parser primed with the rest) likewise. */
#include <stdlib.h>

#include "fastx_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t piece = data[0] % 65 ? data[0] % 65 : (size_t)1 << 30;
    char why[256];
    if (fastx_diff((const char *)data + 1, size - 1, piece, 100000, why, sizeof why) < 0) {
        fprintf(stderr, "fuzz_fastx: %s\n", why);
        abort();
    }
    /* the in-place path (sbf_reads.c): plain records where they lie, then the parser primed */
    if (fastx_diff_span((const char *)data + 1, size - 1, piece, piece, 100000, why, sizeof why) < 0) {
        fprintf(stderr, "fuzz_fastx (in place): %s\n", why);
        abort();
    }
    return 0;
}
