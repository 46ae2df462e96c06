/* sbf_mem.h -- growing a buffer that is reused from batch to batch. */
#ifndef SBF_MEM_H
#define SBF_MEM_H

#include <stdlib.h>

#include "sbf_error.h"

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
