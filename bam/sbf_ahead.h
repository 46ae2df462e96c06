/* sbf_ahead.h -- the read-ahead of a reader that parses FASTQ in place (sbf_reads.c): blocks
 * filled by other threads while the records of the current block are parsed.
 *
 * A stream (a plain file through a pipe, gzip, BGZF) is read by one thread, in order, one block
 * ahead. A mapped plain file is read by several threads, each mapping a window of its own
 * (windows are independent), and each parses the records of its window ahead from the first
 * record start it finds: the reader takes those records as they are when it arrives exactly
 * where they start (after the record that spans the two windows), and parses the window itself
 * otherwise. Parsing was the limit of plain FASTQ on one thread per file (115 ns a record on
 * the H200 machine's cores).
 *
 * Blocks come from the reader's pool and go back to it through the reader's thread only: the
 * threads here only fill them. */
#ifndef SBF_AHEAD_H
#define SBF_AHEAD_H

#include <stddef.h>
#include <sys/types.h>

#include "sbf_block.h"
#include "sbf_fastx.h"
#include "sbf_source.h"

typedef struct {
    size_t headroom;          /* bytes left free at the start of each block */
    int fd;                   /* a mapped file: >= 0, read in windows of `window` bytes */
    long long file_size;
    size_t window;
    sbf_source_t *src;        /* else the stream, read into the blocks */
    int workers;              /* threads for a mapped file (a stream has one) */
} sbf_ahead_opt_t;

/* Records parsed ahead in a block: record i starts at data offset at[i]. */
typedef struct {
    sbf_fastq_span_t *sp;
    size_t *at;
    size_t n, cap;
} sbf_spans_t;

typedef struct sbf_ahead_s sbf_ahead_t;

/* SBF_OK, or a status with a message (no memory, no thread). */
int sbf_ahead_open(const sbf_ahead_opt_t *o, sbf_ahead_t **out);
/* Blocks the reader should have asked for at any time: 1 for a stream, more for a file. */
int sbf_ahead_depth(const sbf_ahead_t *a);
/* b (held once, from the reader's pool) is filled next after those asked before. */
void sbf_ahead_ask(sbf_ahead_t *a, sbf_block_t *b);
/* The oldest block asked for, once filled; *n its bytes from the headroom on (0: the end of
 * the data, -1: a read error); *spans its records parsed ahead (arrays swapped with the
 * caller's, so both are reused). NULL when none was asked for. *waited: seconds waited. */
sbf_block_t *sbf_ahead_take(sbf_ahead_t *a, ssize_t *n, sbf_spans_t *spans, double *waited);
/* The threads stopped; blocks asked for and not taken are put back. *busy: the seconds the
 * threads spent filling and parsing (summed over threads). */
void sbf_ahead_close(sbf_ahead_t *a, double *busy);
/* The threads' busy seconds so far (summed over threads). */
double sbf_ahead_busy(sbf_ahead_t *a);
void sbf_spans_free(sbf_spans_t *s);

#endif
