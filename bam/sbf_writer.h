/* sbf_writer.h -- records out, through htslib: SAM, BAM, CRAM, FASTQ, FASTA (FASTQ/FASTA/SAM
 * optionally BGZF-compressed), with sbf's tags added and nothing else changed.
 *
 * A file output is written under a temporary name beside the final one and renamed by
 * sbf_writer_commit() (its index too, with write_index): an interrupted or failed run leaves
 * no file that looks complete. "-" is standard output; a device or pipe is written in place.
 *
 * Records of any input format go to any output format:
 *  - SAM/BAM/CRAM input to SAM/BAM/CRAM: the record as read, plus the tags;
 *  - FASTA/FASTQ input to FASTA/FASTQ: name, comment, bases and qualities as read; the tags
 *    follow the comment, each after a tab (what `samtools import -T '*'` reads back);
 *  - FASTA/FASTQ to SAM/BAM/CRAM: an unmapped record as `samtools import` makes (flags 4, or
 *    77/141 for mates); the comment is not kept;
 *  - SAM/BAM/CRAM to FASTA/FASTQ: as `samtools fastq -n` writes (reverse-strand records
 *    reverse-complemented, no /1 /2 added), tags in the comment. */
#ifndef SBF_WRITER_H
#define SBF_WRITER_H

#include <stdint.h>

#include <htslib/sam.h>
#include <htslib/thread_pool.h>

#include "sbf_reads.h"

typedef enum { SBF_OUT_SAM, SBF_OUT_BAM, SBF_OUT_CRAM, SBF_OUT_FASTQ, SBF_OUT_FASTA } sbf_outfmt_t;

typedef struct {
    sbf_outfmt_t fmt;
    int compress;   /* SAM/FASTQ/FASTA: BGZF (BAM and CRAM are always compressed) */
    int level;      /* compression level 0-9, or -1 for htslib's default */
} sbf_outspec_t;

/* -O value: sam, bam, cram, fastq (fq), fasta (fa), each optionally followed by ".gz", then
 * optionally ",level=N". Returns 0, or -1 with a message. */
int sbf_outspec_parse(const char *s, sbf_outspec_t *o);
/* From a file name's extension (.sam .bam .cram .fq .fastq .fa .fasta .fna, optionally .gz or
 * .bgz): 1 if recognised, 0 if not (o untouched). */
int sbf_outspec_from_name(const char *path, sbf_outspec_t *o);
const char *sbf_outfmt_name(sbf_outfmt_t f);

typedef struct {
    char category[2], score[2], hits[2];   /* SAM tag names: sb, ss, sh */
    int with_hits;                         /* write the per-target hit array */
} sbf_tagnames_t;

typedef struct {
    const char *category;   /* NULL: add no tags */
    float score;
    int n_hits;
    const uint32_t *hits;
    uint64_t rename;        /* > 0: the record's name becomes this number (--rename), mates alike */
} sbf_tags_t;

typedef struct {
    sbf_outspec_t spec;
    const sam_hdr_t *hdr;      /* the input's header (SAM/BAM/CRAM input) or NULL */
    const char *pg_version;    /* with pg_cmdline: the @PG line added; NULL: none */
    const char *pg_cmdline;
    htsThreadPool *pool;       /* compression threads, or NULL */
    const char *reference;     /* FASTA reference for CRAM output, or NULL */
    int write_index;           /* BAM (.csi) or CRAM (.crai) index beside the output */
    sbf_tagnames_t tags;
} sbf_writer_opt_t;

typedef struct sbf_writer_s sbf_writer_t;

int sbf_writer_open(const char *path, const sbf_writer_opt_t *opt, sbf_writer_t **out);
/* Write r (SAM records get the tags in place). tags may be NULL. */
int sbf_writer_write(sbf_writer_t *w, sbf_read_t *r, const sbf_tags_t *tags);
/* Records formatted by other threads, then written in input order by the writer's thread:
 * FASTA/FASTQ (plain or BGZF) and BAM without an index can be (sbf_writer_can_encode).
 * sbf_writer_encode() appends r's bytes, tags added (SAM records get them in place), to out;
 * it only reads w, so any thread may call it; *scratch (NULL at first, the caller frees it
 * with bam_destroy1) converts FASTA/FASTQ records for BAM. sbf_writer_write_encoded() writes
 * the bytes of n_records records: the file is byte for byte what sbf_writer_write() makes. */
int sbf_writer_can_encode(const sbf_writer_t *w);
int sbf_writer_encode(const sbf_writer_t *w, sbf_read_t *r, const sbf_tags_t *tags, bam1_t **scratch, kstring_t *out);
int sbf_writer_write_encoded(sbf_writer_t *w, const char *buf, size_t len, size_t n_records);
/* Close, then rename the output (and index) into place. Frees w whatever the outcome. */
int sbf_writer_commit(sbf_writer_t *w);
/* Close and remove the temporary output. Frees w. NULL is allowed. */
void sbf_writer_abort(sbf_writer_t *w);
const char *sbf_writer_path(const sbf_writer_t *w);

/* `name` made safe as part of a file name (split outputs named after targets): only
 * [A-Za-z0-9._+-] are kept, others become '_', a leading '.' becomes '_' and an empty name
 * "_", so no name can reach outside the output folder or hide in it. malloc'd; NULL if out of
 * memory. */
char *sbf_safe_file_part(const char *name);

#endif
