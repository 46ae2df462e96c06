/* sbf_segment.c -- long reads cut into query segments (see sbf_segment.h). */
#include <stdlib.h>
#include <string.h>

#include "sbf_error.h"
#include "sbf_segment.h"

/* Units of a read of len bases: one per SBF_SEGMENT_KMERS k-mers, at least one. */
static size_t units_of(size_t len, unsigned k)
{
    if (len < (size_t)k + SBF_SEGMENT_KMERS)
        return 1;
    size_t kmers = len - k + 1;
    return (kmers + SBF_SEGMENT_KMERS - 1) / SBF_SEGMENT_KMERS;
}

static int reserve(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return SBFI_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *p = realloc(*(void **)pp, c * elem);
    if (!p)
        return sbf_error(SBFI_E_NOMEM, "out of memory for %zu query segments", need);
    *(void **)pp = p;
    *cap = c;
    return SBFI_OK;
}

int sbf_units_make(sbf_units_t *u, size_t n, const char *const *seqs, const uint8_t *const *packed,
                   const size_t *lens, unsigned k)
{
    size_t total = 0;
    for (size_t i = 0; i < n; ++i)
        total += units_of(lens[i], k);
    const size_t m = total ? total : 1;
    if (reserve(&u->start, &u->cap_start, n + 1, sizeof *u->start) != SBFI_OK ||
        reserve(&u->lens, &u->cap_lens, m, sizeof *u->lens) != SBFI_OK ||
        (seqs ? reserve((void *)&u->seqs, &u->cap_seqs, m, sizeof *u->seqs)
              : reserve((void *)&u->packed, &u->cap_packed, m, sizeof *u->packed)) != SBFI_OK)
        return SBFI_E_NOMEM;
    size_t q = 0;
    for (size_t i = 0; i < n; ++i) {
        u->start[i] = q;
        const size_t c = units_of(lens[i], k);
        for (size_t j = 0; j < c; ++j, ++q) {
            const size_t from = j * SBF_SEGMENT_KMERS;
            const size_t len = c == 1 ? lens[i] : (j + 1 < c ? SBF_SEGMENT_KMERS + k - 1 : lens[i] - from);
            if (seqs)
                u->seqs[q] = seqs[i] + from;
            else
                u->packed[q] = packed[i] + from / 2;
            u->lens[q] = len;
        }
    }
    u->start[n] = q;
    u->n_units = q;
    u->segmented = q != n;
    return SBFI_OK;
}

void sbf_units_gather(const sbf_units_t *u, size_t n, int n_targets, const uint32_t *ukmers, const uint32_t *uhits,
                      uint32_t *kmers, uint32_t *hits)
{
    const size_t R = (size_t)n_targets;
    for (size_t i = 0; i < n; ++i) {
        uint32_t k = 0, *h = hits + i * R;
        memset(h, 0, R * sizeof *h);
        for (size_t q = u->start[i]; q < u->start[i + 1]; ++q) {
            k += ukmers[q];
            for (size_t t = 0; t < R; ++t)
                h[t] += uhits[q * R + t];
        }
        kmers[i] = k;
    }
}

void sbf_units_free(sbf_units_t *u)
{
    if (!u)
        return;
    free(u->seqs);
    free(u->packed);
    free(u->lens);
    free(u->start);
    memset(u, 0, sizeof *u);
}
