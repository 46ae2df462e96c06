/* sbf_fastx.h -- the FASTA/FASTQ record parser of sbf_reads.c: klib's kseq_read() (htslib's
 * kseq.h) record for record, with the same results on every input, but scanning lines with
 * memchr() over a 256 KiB buffer. htslib 1.16's kseq tests every byte in a loop of its own,
 * which made parsing the limit of plain FASTQ runs (about 400 ns per 150 bp record). */
#ifndef SBF_FASTX_H
#define SBF_FASTX_H

#include <htslib/kstring.h>

typedef struct {
    kstring_t name, comment, seq, qual;
    int last_char;                 /* the header character already read, or 0 */
    /* the buffered stream */
    unsigned char *buf;
    int begin, end, is_eof, bufsize;
    int (*read)(void *f, void *buf, int len);   /* 0 at the end, like kseq's __read */
    void *f;
} sbf_fastx_t;

sbf_fastx_t *sbf_fastx_init(int (*read)(void *f, void *buf, int len), void *f);
void sbf_fastx_destroy(sbf_fastx_t *x);
/* kseq_read()'s contract: >= 0 the sequence length; -1 end of file; -2 truncated or
 * mismatched quality; -3 length overflow. */
int sbf_fastx_read(sbf_fastx_t *x);

#endif
