/* sbf_block.h -- input read in large blocks that records point into (plain FASTQ parsed in
 * place, sbf_reads.c), and the hold batches keep on them.
 *
 * A reader fills a block with one read() and hands out records that point into it; a batch
 * "pins" every block its records point into, and a block is reused once neither its reader
 * nor any batch holds it. So the bytes of a record are read once, into the block, and never
 * copied again until they are written out.
 *
 * Not thread-safe: a pool and its blocks are used by one thread at a time (the reader's: a
 * batch releases its pins in the thread that refills it, before the reader goes on). */
#ifndef SBF_BLOCK_H
#define SBF_BLOCK_H

#include <stddef.h>

typedef struct sbf_block_pool_s sbf_block_pool_t;

typedef struct sbf_block_s {
    struct sbf_block_s *next;   /* in its pool's list of every block it made */
    sbf_block_pool_t *pool;     /* NULL once the pool is closed: the last release frees it */
    int refs;                   /* the reader (its current block) and the batches that pin it */
    size_t cap, len;            /* bytes allocated, bytes read */
    char *data;
    int mapped;                 /* data is a memory mapping of cap bytes (sbf_block_get_mapped) */
    long long origin;           /* its reader's: the file offset of data[0] */
} sbf_block_t;

struct sbf_block_pool_s {
    sbf_block_t *all;
    int n_idle;                 /* blocks in `all` that nobody holds */
};

/* A block of at least min_cap bytes, empty, held once (refs 1); NULL when out of memory. */
sbf_block_t *sbf_block_get(sbf_block_pool_t *pool, size_t min_cap);
/* A block whose data is an address range of exactly cap bytes (page-aligned; anonymous
 * memory at first) over which the caller maps file windows with MAP_FIXED; held once. The pool
 * reuses such blocks for mapped requests only, and unmaps them when it frees them. NULL when
 * the range cannot be mapped. */
sbf_block_t *sbf_block_get_mapped(sbf_block_pool_t *pool, size_t cap);
/* One hold less; at none the block waits in its pool for reuse (or is freed: the pool is
 * closed, or keeps enough idle blocks already). */
void sbf_block_put(sbf_block_t *b);
/* Frees the blocks nobody holds; each one still held is freed by its last sbf_block_put(). */
void sbf_block_pool_close(sbf_block_pool_t *pool);

/* The blocks a batch holds. */
typedef struct {
    sbf_block_t **b;
    size_t n, cap;
} sbf_pins_t;

/* Hold b once more (unless it is already the last one held). 0, or -1 out of memory. */
int sbf_pins_add(sbf_pins_t *p, sbf_block_t *b);
/* dst takes over src's holds (src is left empty). 0, or -1 out of memory (nothing moved). */
int sbf_pins_move(sbf_pins_t *dst, sbf_pins_t *src);
/* Let go of every block held (the records pointing into them are no longer used). */
void sbf_pins_release(sbf_pins_t *p);
void sbf_pins_free(sbf_pins_t *p);

#endif
