/* sbf_reads.h -- whole sequencing records in, through htslib: FASTA, FASTQ (plain, gzip, BGZF),
 * SAM, BAM and CRAM, detected from the content; "-" is standard input.
 *
 * A record keeps everything needed to write it back unchanged: the bam1_t of SAM/BAM/CRAM
 * input, or name, comment, sequence and qualities of FASTA/FASTQ input. `name` is always
 * filled; `seq` holds the ASCII bases (as stored: not reverse-complemented), for SAM records
 * too unless the reader was opened with sam_no_ascii (then the engine reads the 4-bit codes of
 * the bam1_t as they are). The strings of a record read in place (`borrowed`) may not be
 * NUL-terminated (they lie in a read-only mapping of the file): use their lengths. */
#ifndef SBF_READS_H
#define SBF_READS_H

#include <stdint.h>

#include <htslib/kstring.h>
#include <htslib/sam.h>
#include <htslib/thread_pool.h>

#include "sbf_block.h"

typedef struct {
    int sam;                  /* 1: `b` holds a SAM/BAM/CRAM record; 0: FASTA/FASTQ fields */
    bam1_t *b;                /* allocated on first SAM-family read, reused */
    kstring_t name, comment;  /* comment: FASTA/FASTQ text after the name, without the separator */
    kstring_t seq, qual;      /* qual is empty for FASTA */
    int mate;                 /* set by the batcher: 0 single, 1 or 2 */
    int32_t frag;             /* set by the batcher: fragment number, -1 when not classified */
    int borrowed;             /* 1: the four strings point into the reader's block (read in place:
                               * see sbf_reader_opt_t.in_place), not into buffers of their own */
} sbf_read_t;

void sbf_read_free(sbf_read_t *r);
/* A record no longer in use (a batch slot past the batch's end): empties it and frees buffers
 * larger than a short read's, so slots left over from long reads hold no memory. */
void sbf_read_release(sbf_read_t *r);
/* A record read in place gets buffers of its own (it outlives the batch that pinned its
 * block). SBF_OK or SBF_E_NOMEM. */
int sbf_read_own(sbf_read_t *r);

/* Bases of the record. */
static inline size_t sbf_read_len(const sbf_read_t *r) { return r->sam ? (size_t)r->b->core.l_qseq : r->seq.l; }

/* SAM flags that make a record not classified (passed through in tag mode): secondary and
 * supplementary alignments repeat a primary record's read. */
#define SBF_SKIP_FLAGS (BAM_FSECONDARY | BAM_FSUPPLEMENTARY)
static inline int sbf_read_is_extra(const sbf_read_t *r)
{
    return r->sam && (r->b->core.flag & SBF_SKIP_FLAGS);
}

typedef struct sbf_reader_s sbf_reader_t;

typedef struct {
    htsThreadPool *pool;      /* decompression threads shared with other files, or NULL */
    const char *reference;    /* FASTA reference for CRAM input, or NULL (header's M5/UR) */
    int sam_no_ascii;         /* SAM/BAM/CRAM: leave `seq` empty (the caller uses the bam1_t) */
    int in_place;             /* plain FASTQ: records point into the reader's blocks (no copy), and
                               * the caller pins them (sbf_reader_pin) to keep them valid */
    size_t block_size;        /* in_place: bytes read at once (0: 8 MiB); what a reader holds is a
                               * few blocks beyond what the records in use need */
    int parallel_gzip;        /* a large plain gzip file (not BGZF) inflated on the pool's threads
                               * (bam/sbf_pgzip.h), not on one: about 2x the CPU seconds of ISA-L,
                               * for callers whose threads would idle while one inflates */
} sbf_reader_opt_t;

/* Open path. Returns 0 or a negative status (message in sbf_error_message()). */
int sbf_reader_open(const char *path, const sbf_reader_opt_t *opt, sbf_reader_t **out);
/* 1: a record was read into r; 0: end of input; < 0: error (truncated or corrupt input). */
int sbf_reader_read(sbf_reader_t *rd, sbf_read_t *r);
/* FASTA/FASTQ only, before any record is read: up to len of the file's decompressed bytes
 * (fewer only at the end); 0 at the end; < 0 with a message naming the file when it cannot be
 * read or its compressed data are corrupt or truncated. Then read no records. */
ssize_t sbf_reader_raw(sbf_reader_t *rd, void *buf, size_t len);
/* FASTA/FASTQ: a long record's bases handed to fn in pieces as they are parsed
 * (sbf_fastx_t's seq_sink); the record read then holds the rest. -1 for other formats. */
int sbf_reader_seq_sink(sbf_reader_t *rd, int (*fn)(void *arg, const char *s, size_t n), void *arg);
/* "FASTA", "FASTQ", "SAM", "BAM", "CRAM" or "empty". */
const char *sbf_reader_format(const sbf_reader_t *rd);
/* How a FASTA/FASTQ file's bytes are decompressed (sbf_source_decoder()); "htslib" for the
 * SAM family. */
const char *sbf_reader_decoder(const sbf_reader_t *rd);
/* After a read error: its message ("PATH: read error or truncated compressed data[ after N
 * records][ (what the decompressor found)]"; records < 0 leaves the count out) set, and
 * SBF_E_FORMAT returned: one wording for every path that reads the file. */
int sbf_reader_read_error(const sbf_reader_t *rd, long long records);
/* 1 when the input is SAM, BAM or CRAM (then sbf_reader_header() is its header). */
int sbf_reader_is_sam(const sbf_reader_t *rd);
/* 1 when the input was gzip or BGZF compressed (FASTA/FASTQ) */
int sbf_reader_compressed(const sbf_reader_t *rd);
sam_hdr_t *sbf_reader_header(const sbf_reader_t *rd);
const char *sbf_reader_path(const sbf_reader_t *rd);
int sbf_reader_close(sbf_reader_t *rd);
/* The blocks that records read since the last call point into are held by pins from now on
 * (until sbf_pins_release()); without it they are reused once the reader has moved on. A
 * reader that was not opened in_place holds none. SBF_OK or SBF_E_NOMEM. */
int sbf_reader_pin(sbf_reader_t *rd, sbf_pins_t *pins);
/* Records read in place so far (the rest went through the general parser). */
long long sbf_reader_in_place(const sbf_reader_t *rd);
/* In place: seconds its read-ahead thread spent reading (and decompressing), and seconds the
 * parser waited for it (--stats). */
void sbf_reader_times(const sbf_reader_t *rd, double *fill, double *wait);
/* Of the records parsed in place, those a read-ahead thread parsed (mapped files). */
long long sbf_reader_parsed_ahead(const sbf_reader_t *rd);

/* Mate names match when equal after dropping a trailing "/1" or "/2". */
int sbf_mate_names_match(const char *a, size_t la, const char *b, size_t lb);

#endif
