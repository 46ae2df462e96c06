/* sbf_mem.h -- growing a buffer that is reused from batch to batch. */
#ifndef SBF_MEM_H
#define SBF_MEM_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "sbf_error.h"

/* Advice that the 2 MiB pages inside [p, p + bytes) be huge where the kernel gives them (its
 * transparent huge pages in "madvise" mode, Debian's and Ubuntu's default): a fresh buffer of
 * a build's sequence is then faulted in 2 MiB at a time instead of 4 kB. Advice only: a refusal
 * costs 4 kB faults, nothing else. For buffers of SBF_HUGE_MIN bytes or more. */
#define SBF_HUGE_MIN ((size_t)8 << 20)
static inline void sbf_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (p && bytes >= SBF_HUGE_MIN && e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

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
