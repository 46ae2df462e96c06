/* sbf_seqio.h -- sequence input through htslib: FASTA, FASTQ (plain, gzip, BGZF), SAM, BAM, CRAM.
 * The format is detected from the content, not the file name; "-" reads standard input. */
#ifndef SBF_SEQIO_H
#define SBF_SEQIO_H

#include <sys/types.h>

#include <htslib/kstring.h>

typedef struct sbf_seqfile_s sbf_seqfile_t;

typedef struct {
    kstring_t name;
    kstring_t seq;   /* ASCII bases */
} sbf_seqrec_t;

/* Open path with `threads` extra decompression threads (0 = none). Returns 0 or a negative
 * status (message in sbf_error_message()). */
int sbf_seqfile_open(const char *path, int threads, sbf_seqfile_t **out);

/* 1: a record was read into rec; 0: end of input; < 0: error (truncated or corrupt input). */
int sbf_seqfile_read(sbf_seqfile_t *f, sbf_seqrec_t *rec);

/* FASTA/FASTQ, before any record is read: the decompressed bytes (sbf_reader_raw()). */
ssize_t sbf_seqfile_raw(sbf_seqfile_t *f, void *buf, size_t len);

/* FASTA/FASTQ: a long record's bases handed to fn in pieces as they are parsed (then rec.seq
 * holds the rest; sbf_reader_seq_sink()). -1 for other formats. */
int sbf_seqfile_seq_sink(sbf_seqfile_t *f, int (*fn)(void *arg, const char *s, size_t n), void *arg);

/* Short name of the detected format ("FASTA", "FASTQ", "SAM", "BAM", "CRAM"). */
const char *sbf_seqfile_format(const sbf_seqfile_t *f);
/* After a read error: its message set and SBF_E_FORMAT returned (sbf_reader_read_error()). */
int sbf_seqfile_read_error(const sbf_seqfile_t *f, long long records);

/* Close; returns 0 or a negative status. */
int sbf_seqfile_close(sbf_seqfile_t *f);

void sbf_seqrec_free(sbf_seqrec_t *rec);

#endif
