/* sbf_build_read.h -- reading reference files into 2-bit codes for a build: one file, or several
 * at once in the order given. */
#ifndef SBF_BUILD_READ_H
#define SBF_BUILD_READ_H

#include "../filters/sbf_build.h"

/* Every record of the file at path appended to seq (k counts its valid k-mers), with `threads`
 * extra threads: BGZF decompresses on them, and a FASTA file (not standard input) is cut into
 * pieces of whole records as it is read, parsed on them (from 3 threads): the same bytes.
 * SBF_OK or an error naming the file. */
int sbf_read_file(const char *path, int k, int threads, sbf_seqbuf_t *seq);
/* The same, reading piece_bytes at a time (16 MiB above; tests cut a file everywhere). */
int sbf_read_file_pieces(const char *path, int k, int threads, size_t piece_bytes, sbf_seqbuf_t *seq);

/* Called on the calling thread for file i, in the order 0, 1, ... n-1; it owns *seq (and frees
 * it). Returns SBF_OK or an error, which stops the reading. */
typedef int (*sbf_file_take_fn)(void *arg, int i, sbf_seqbuf_t *seq);

/* Read files 0..n-1 as sbf_read_file() does, up to `threads` at a time (each ahead of the one
 * being taken by at most 2 x threads files, which bounds the memory), and hand each to take() in
 * order. SBF_OK, or the first error in the order given: a file that fails to read, or take(). */
int sbf_read_files(int n, const char *const *paths, int k, int threads, sbf_file_take_fn take, void *arg);

#endif
