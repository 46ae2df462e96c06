/* sbf_source.h -- the bytes of a FASTA/FASTQ file, decompressed: plain files straight from
 * the file, BGZF through htslib (blocks inflated in parallel on the reader's thread pool, by
 * libdeflate where htslib has it), a large plain gzip file on the pool's threads where the
 * caller asks (sbf_pgzip.h: pieces of the stream found and decoded at once), else plain gzip
 * with ISA-L's igzip where sbf was built with it (libisal-dev: 2-3x zlib's speed on one core),
 * else through htslib (zlib). */
#ifndef SBF_SOURCE_H
#define SBF_SOURCE_H

#include <stddef.h>
#include <sys/types.h>

#include <htslib/bgzf.h>
#include <htslib/hts.h>   /* htsThreadPool */

typedef struct sbf_source_s sbf_source_t;

/* The bytes of fp (opened by bgzf_hopen, nothing read from it yet); path names it in
 * messages. A plain gzip file of SBF_PGZIP_MIN_BYTES or more is inflated on pool's threads
 * (pool may be NULL), mapped from path. SBF_OK, SBF_E_NOMEM, or (the parallel path) an error
 * opening it. The source does not own fp. */
int sbf_source_open(BGZF *fp, const char *path, htsThreadPool *pool, sbf_source_t **out);
/* Up to len bytes (fewer only at the end of the data); 0 at the end; -1 when the file cannot
 * be read or its compressed data are corrupt or truncated. */
ssize_t sbf_source_read(sbf_source_t *s, void *buf, size_t len);
/* How the bytes are decompressed: "none", "BGZF", "gzip (parallel)", "gzip (ISA-L)" or
 * "gzip (zlib)". */
const char *sbf_source_decoder(const sbf_source_t *s);
/* After sbf_source_read() returned -1: what failed, when the decoder says (NULL otherwise). */
const char *sbf_source_why(const sbf_source_t *s);
void sbf_source_close(sbf_source_t *s);

#endif
