/* sbf_pgzip.h -- one plain gzip file (not BGZF) inflated on a thread pool.
 *
 * GRCh38 and T2T come as one gzip stream, and so do many FASTQ files: one inflating thread
 * (ISA-L: about 1 GB/s of output on a server core) held a 3.1 Gbp host's build and a GPU run's
 * reading to that. The file is mapped and cut into pieces of a few MiB; each piece finds the
 * first deflate block that starts in it and decodes from there to the next piece's start
 * with an unknown window (sbf_inflate.h); the pieces are then joined in order, each checked to
 * start where the one before ended (decoded again in order when not), their window references
 * resolved, and each member's CRC-32 and length checked against its trailer. */
#ifndef SBF_PGZIP_H
#define SBF_PGZIP_H

#include <stddef.h>
#include <sys/types.h>

#include <htslib/hts.h>   /* htsThreadPool */
#include <htslib/thread_pool.h>

typedef struct sbf_pgzip_s sbf_pgzip_t;

/* Worth it: a regular file of plain gzip at least this large, and a pool of 2 threads or more. */
#define SBF_PGZIP_MIN_BYTES (8u << 20)

/* path (a regular file, plain gzip) inflated on pool's threads. SBF_OK; SBF_E_IO when it
 * cannot be opened or mapped; SBF_E_FORMAT when its gzip header is invalid; SBF_E_NOMEM. */
int sbf_pgzip_open(const char *path, htsThreadPool *pool, sbf_pgzip_t **out);
/* The same with pieces of piece_bytes compressed bytes (tests: many pieces of a small file). */
int sbf_pgzip_open_pieces(const char *path, htsThreadPool *pool, size_t piece_bytes, sbf_pgzip_t **out);
/* Up to len bytes of the inflated data, in order (fewer only at its end); 0 at the end; -1
 * with sbf_error() set when the data are corrupt or truncated. */
ssize_t sbf_pgzip_read(sbf_pgzip_t *z, void *buf, size_t len);
/* Pieces decoded again in order because their search found another start (a block the search
 * does not recognise), for tests and --stats. */
size_t sbf_pgzip_redone(const sbf_pgzip_t *z);
/* After a failed read: what failed, without the file's name (NULL before one). */
const char *sbf_pgzip_why(const sbf_pgzip_t *z);
void sbf_pgzip_close(sbf_pgzip_t *z);

#endif
