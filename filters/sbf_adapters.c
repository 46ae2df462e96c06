/* sbf_adapters.c -- the adapters and primers of sbf_adapters.h, as their vendors publish them
 * (Oxford Nanopore kits as Porechop's list names them; Illumina's adapter sequences document;
 * PacBio's SMRTbell adapter). Both strands are covered: k-mers are canonical. */
#include <string.h>

#include "sbf_adapters.h"
#include "sbf_kmer.h"

const sbf_adapter_t sbf_adapters[] = {
    /* Oxford Nanopore */
    {"ont_1d_y_top", "AATGTACTTCGTTCAGTTACGTATTGCT"},
    {"ont_1d_y_bottom", "GCAATACGTAACTGAACGAAGT"},
    {"ont_map006_y_top", "GGTTGTTTCTGTTGGTGCTGATATTGCT"},   /* a stretch of phiX174 */
    {"ont_map006_y_bottom", "GCAATATCAGCACCAACAGAAA"},
    {"ont_map006_short_y_top", "CGGCGTCTGCTTGGGTGTTTAACCT"},
    {"ont_map006_short_y_bottom", "GGTTAAACACCCAAGCAGACGCCG"},
    {"ont_pcr_adapter", "ACTTGCCTGTCGCTCTATCTTC"},
    {"ont_pcr_tail_1", "TTAACCTTTCTGTTGGTGCTGATATTGC"},
    {"ont_pcr_tail_2", "TTAACCTACTTGCCTGTCGCTCTATCTTC"},
    {"ont_cdna_ssp", "TTTCTGTTGGTGCTGATATTGCTGGG"},
    {"ont_rapid", "GTTTTCGCATTTATCGTGAAACGCTTTCGCGTTTTTCGTGCGCCGCTTCA"},
    {"ont_1d2_part_1", "GAGAGGTTCCAAGTCAGAGAGGTTCCT"},
    {"ont_1d2_part_2", "CTTCGTTCAGTTACGTATTGCTGGCGTCTGCTT"},
    /* Illumina */
    {"illumina_truseq_read1", "AGATCGGAAGAGCACACGTCTGAACTCCAGTCA"},
    {"illumina_truseq_read2", "AGATCGGAAGAGCGTCGTGTAGGGAAAGAGTGT"},
    {"illumina_truseq_universal", "AATGATACGGCGACCACCGAGATCTACACTCTTTCCCTACACGACGCTCTTCCGATCT"},
    {"illumina_nextera_read1", "CTGTCTCTTATACACATCTCCGAGCCCACGAGAC"},
    {"illumina_nextera_read2", "CTGTCTCTTATACACATCTGACGCTGCCGACGA"},
    {"illumina_small_rna_3p", "TGGAATTCTCGGGTGCCAAGG"},
    /* PacBio */
    {"pacbio_smrtbell", "ATCTCTCTCAACAACAACAACGGAGGAGGAGGAAAAGAGAGAGAT"},
};
const int sbf_n_adapters = (int)(sizeof sbf_adapters / sizeof sbf_adapters[0]);

int sbf_adapters_append(sbf_seqbuf_t *b, int k)
{
    for (int i = 0; i < sbf_n_adapters; ++i) {
        int rc = sbf_seqbuf_append(b, sbf_nt4_ascii, (const uint8_t *)sbf_adapters[i].seq, strlen(sbf_adapters[i].seq), k);
        if (rc)
            return rc;
    }
    return 0;
}
