/* sbf_format.h -- the .sbf index file: save with a checked write to a temporary name, load
 * with mmap after checking every size, offset and checksum. Layout: doc/format.md. */
#ifndef SBF_FORMAT_H
#define SBF_FORMAT_H

#include "sbf_index.h"

#define SBF_FORMAT_VERSION 5u   /* 5: filter checksums in pieces; 4: masks; 3: panels; 2: 32-bit hashes (sbf_kmer.h); 1: 64-bit splitmix64 */
#define SBF_FORMAT_OLDEST 2u    /* version 2 reads as one plain panel per target */
#define SBF_MAGIC "\x89SBF\r\n\x1a\n"   /* PNG-style: catches text-mode and 7-bit transfers */
#define SBF_HEADER_BYTES 128u
#define SBF_ALIGN 64u

/* The identity of an index file: XXH64 (seed 0) of its header's 128 bytes followed by its
 * long-read layer's header, if any. Each header's checksum covers its metadata's checksum,
 * which covers every filter array's: two files with the same identity hold the same index. */
uint64_t sbf_format_identity(const uint8_t *header, const uint8_t *layer_header);

/* Write idx to path atomically (temporary file in the same folder, then renamed): through a
 * shared mapping of the file, or with write() where the file system offers no reservation
 * (posix_fallocate) or no shared mapping; the same bytes either way. */
int sbf_index_write(sbf_index_t *idx, const char *path);
/* Tests only: non-zero sends sbf_index_write down its write() path, as such a file system
 * would; each index that path wrote is counted (tests/test_format.c compares the two paths). */
extern int sbf_format_write_unmapped;
extern unsigned sbf_format_unmapped_writes;

/* A build that knows its output writes each panel there once it is finished, and lets it go
 * from memory (issue 27: a human index's k=31 filter, 5.7 GB, sat beside the long-read layer's
 * build). sbf_format_spill_open() lays out the file of idx and its layer (built apart until the
 * end: `layer`, or NULL), the metadata's sizes final (names, sources, masks), and reserves it
 * under a temporary name beside path: SBF_OK, an error (path cannot be written: before any
 * filter is built), or 1 when the file system offers no reservation or shared mapping (the
 * panels then stay in memory until sbf_index_write). sbf_format_spill_panel() writes panel q
 * of x (idx or its layer) and its checksum, and maps it back read-only in place of its memory:
 * the index stays whole. sbf_index_write(idx, path) then completes that file. SBF_OK or an
 * error. */
int sbf_format_spill_open(sbf_index_t *idx, sbf_index_t *layer, const char *path);
int sbf_format_spill_panel(sbf_index_t *idx, sbf_index_t *x, int q, int threads);
/* The spill's file removed unless sbf_index_write committed it (sbf_idx_free calls it). */
void sbf_format_spill_free(sbf_index_t *idx);

/* Map path and check it. With verify set, every filter array's checksum is checked too
 * (one pass over the file); header and metadata are always checked. */
int sbf_index_read(const char *path, int verify, sbf_index_t **out);

#endif
