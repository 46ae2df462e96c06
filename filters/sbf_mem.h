/* sbf_mem.h -- growing buffers: one reused from batch to batch, and the large ones of a build. */
#ifndef SBF_MEM_H
#define SBF_MEM_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "sbf_error.h"

/* A shard about to be ORed into, fetched for writing: `prefetchw` asks for the line in the
 * exclusive state at once, where a read prefetch (GCC's __builtin_prefetch(p, 1, ...) gives
 * `prefetchnta` without -mprfchw) fetched it shared and the OR then asked for ownership again.
 * The threads' blocks of records (sbf_build.c), 16 threads, 1 Gbp host, 3 alternating rounds on
 * the H100 machine: build 6.41 -> 5.54 s (medians), insertion -15%; 32 records ahead was no
 * better than `prefetchnta` (doc/PERFORMANCE.md). One thread's runs (sbf_insert_scanned) ask for
 * their shards the same way (not timed apart). CPUs without the instruction (Intel before
 * Broadwell) run it as a NOP. */
static inline void sbf_prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Buffers of SBF_HUGE_MIN bytes and more (a target's sequence, a chromosome's text) live in an
 * anonymous mapping of their own, advised huge as a whole (transparent huge pages in "madvise"
 * mode, Debian's and Ubuntu's default: faulted 2 MiB at a time instead of 4 kB) and grown with
 * mremap (the kernel moves the pages: nothing is copied or faulted again). realloc() does not
 * promise that: glibc grows a large chunk with mremap only while the chunk's mapping is one
 * region, and advice on part of it (its 2 MiB-aligned inside) split it, so that every growth of
 * a 3 GB target was a copy into fresh 4 kB pages (sbf_mem.c). */
#define SBF_HUGE_MIN ((size_t)8 << 20)

/* Room for `need` bytes in *p, which holds *cap (grown by half again from 1 MiB until it
 * fits; the contents are kept). *mapped: whether *p is such a mapping (0 for malloc'd memory,
 * and for a buffer not allocated yet); buffers of SBF_HUGE_MIN and more become one. SBF_OK, or
 * SBF_E_NOMEM with a message naming `what` (*p, *cap and *mapped unchanged). */
int sbf_buf_reserve(uint8_t **p, uint64_t *cap, int *mapped, uint64_t need, const char *what);
/* Frees what sbf_buf_reserve() gave (NULL: nothing). */
void sbf_buf_free(void *p, uint64_t cap, int mapped);
/* A fresh anonymous mapping of `bytes` (zeros until written), advised huge as a whole; NULL when
 * refused. munmap() frees it. The large buffers above and the filters (sbf_filter_alloc) use it. */
void *sbf_map_anon(uint64_t bytes);

/* Room for at least `need` items of `elem` bytes in *pp (a pointer to the array's pointer),
 * which holds *cap of them: doubled from 256 until it fits; the contents are kept. SBF_OK, or
 * SBF_E_NOMEM with a message (*pp and *cap unchanged). */
static inline int sbf_reserve(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return SBF_OK;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *p = realloc(*(void **)pp, c * elem);
    if (!p)
        return sbf_error(SBF_E_NOMEM, "out of memory for %zu items of %zu bytes", need, elem);
    *(void **)pp = p;
    *cap = c;
    return SBF_OK;
}

#endif
