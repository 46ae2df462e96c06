/* sbf_fastx.h -- the FASTA/FASTQ record parser of sbf_reads.c: klib's kseq_read() (htslib's
 * kseq.h) record for record, with the same results on every input, but scanning lines with
 * memchr() over a 256 KiB buffer. htslib 1.16's kseq tests every byte in a loop of its own,
 * which made parsing the limit of plain FASTQ runs (about 400 ns per 150 bp record). */
#ifndef SBF_FASTX_H
#define SBF_FASTX_H

#include <stddef.h>

#include <htslib/kstring.h>

typedef struct {
    kstring_t name, comment, seq, qual;
    int last_char;                 /* the header character already read, or 0 */
    /* the buffered stream */
    unsigned char *buf;
    int begin, end, is_eof, bufsize;
    int (*read)(void *f, void *buf, int len);   /* 0 at the end, like kseq's __read */
    void *f;
    /* Optional (a build's chromosomes, never held as text): whenever seq holds sink_at bytes, its bases but the last two are handed to seq_sink (non-zero:
     * stop, -3) and dropped from seq; at the record's end seq holds the rest, and the length
     * returned counts every base. seq_flushed: the bytes handed over for this record. */
    int (*seq_sink)(void *arg, const char *s, size_t n);
    void *sink_arg;
    size_t seq_flushed;
    size_t sink_at;   /* 0: SBF_FASTX_SINK_AT; tests set a few bytes (more than 2) */
} sbf_fastx_t;

#define SBF_FASTX_SINK_AT ((size_t)1 << 20)

sbf_fastx_t *sbf_fastx_init(int (*read)(void *f, void *buf, int len), void *f);
void sbf_fastx_destroy(sbf_fastx_t *x);
/* kseq_read()'s contract: >= 0 the sequence length; -1 end of file; -2 truncated or
 * mismatched quality; -3 length overflow. */
int sbf_fastx_read(sbf_fastx_t *x);
/* Bytes the parser reads before any more from its stream (data another parser took from the
 * stream and left); x must be at a record boundary, as after a FASTQ record. 0, or -1 out of
 * memory. */
int sbf_fastx_prime(sbf_fastx_t *x, const void *data, size_t len);

/* A FASTQ record of exactly four lines, as offsets from its '@'. */
typedef struct {
    size_t name_len;              /* the name starts at 1 */
    size_t name_end;              /* the byte after the name (' ', '\t' or the line's '\n') */
    size_t comment, comment_len;  /* comment_len 0: none (or empty) */
    size_t comment_end;           /* the name line's '\n' */
    size_t seq, seq_len, qual;    /* each line ends with '\n' right after its bases */
    size_t size;                  /* the record, its last '\n' included */
} sbf_fastq_span_t;

/* The record at p (n bytes available) when it has the plain form: '@' name [space or tab,
 * comment] newline, one line of bases (not empty), a line starting with '+', one line of as
 * many qualities, every line ending with '\n' alone (no '\r'). For these records
 * sbf_fastx_read() gives exactly the fields the span names. 1: *s is the record; 0: more
 * bytes are needed to tell; -1: not of that form (sbf_fastx_read() must take it). */
int sbf_fastq_span(const char *p, size_t n, sbf_fastq_span_t *s);

#endif
