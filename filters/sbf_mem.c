/* sbf_mem.c -- large buffers in mappings of their own (see sbf_mem.h).
 *
 * Measured on the development VM (2026-12-05): a buffer grown by half again from 1 MiB to 3 GB
 * with realloc() and the old advice on its 2 MiB-aligned inside made mremap fail with EFAULT
 * (the advice had split the mapping into three regions) at 7 of 8 growths, so glibc copied the
 * buffer each time; a build of four 100 Mbp files spent most of its reading in those copies and
 * their 4 kB faults (`perf record -e page-faults`: 76% in realloc's memmove). */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "sbf_mem.h"

#define HUGE_PAGE ((uint64_t)2 << 20)

static void advise_huge(void *p, uint64_t bytes)
{
#ifdef MADV_HUGEPAGE
    (void)madvise(p, (size_t)bytes, MADV_HUGEPAGE);   /* advice: a refusal costs 4 kB faults */
#else
    (void)p;
    (void)bytes;
#endif
}

void *sbf_map_anon(uint64_t bytes)
{
    void *q = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED)
        return NULL;
    advise_huge(q, bytes);
    return q;
}

/* A mapping of `cap` bytes grown to `grown`: moved by the kernel, or copied where mremap fails. */
static uint8_t *map_grow(uint8_t *p, uint64_t cap, uint64_t grown)
{
#ifdef MREMAP_MAYMOVE
    void *r = mremap(p, (size_t)cap, (size_t)grown, MREMAP_MAYMOVE);
    if (r != MAP_FAILED) {
        advise_huge(r, grown);   /* the part added, with the rest */
        return r;
    }
#endif
    uint8_t *q = sbf_map_anon(grown);
    if (q) {
        memcpy(q, p, (size_t)cap);
        munmap(p, (size_t)cap);
    }
    return q;
}

int sbf_buf_reserve(uint8_t **p, uint64_t *cap, int *mapped, uint64_t need, const char *what)
{
    if (need <= *cap)
        return SBF_OK;
    uint64_t grown = *cap ? *cap : (uint64_t)1 << 20;
    while (grown < need)
        grown += grown / 2;
    const int map = *mapped || grown >= SBF_HUGE_MIN;
    uint8_t *q;
    if (!map) {
        q = realloc(*p, (size_t)grown);
    } else {
        grown = (grown + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        if (*mapped) {
            q = map_grow(*p, *cap, grown);
        } else if ((q = sbf_map_anon(grown)) != NULL) {   /* from malloc'd memory (below 8 MiB): one copy */
            if (*p)
                memcpy(q, *p, (size_t)*cap);
            free(*p);
        }
    }
    if (!q)
        return sbf_error(SBF_E_NOMEM, "out of memory holding %llu bytes of %s", (unsigned long long)need, what);
    *p = q;
    *cap = grown;
    *mapped = map;
    return SBF_OK;
}

void sbf_buf_free(void *p, uint64_t cap, int mapped)
{
    if (mapped && p)
        munmap(p, (size_t)cap);
    else
        free(p);
}
