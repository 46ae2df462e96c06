/* sbf_segment.c -- long reads cut into query segments (see sbf_segment.h). */
#include <stdlib.h>
#include <string.h>

#include "sbf_error.h"
#include "sbf_mem.h"
#include "sbf_segment.h"

/* Units of a read of len bases: one per SBF_SEGMENT_KMERS k-mers, at least one. */
static size_t units_of(size_t len, unsigned k)
{
    if (len < (size_t)k + SBF_SEGMENT_KMERS)
        return 1;
    size_t kmers = len - k + 1;
    return (kmers + SBF_SEGMENT_KMERS - 1) / SBF_SEGMENT_KMERS;
}

int sbf_units_make(sbf_units_t *u, size_t n, const char *const *seqs, const uint8_t *const *packed,
                   const size_t *lens, unsigned k)
{
    size_t total = 0;
    for (size_t i = 0; i < n; ++i)
        total += units_of(lens[i], k);
    const size_t m = total ? total : 1;
    if (sbf_reserve(&u->start, &u->cap_start, n + 1, sizeof *u->start) != SBF_OK ||
        sbf_reserve(&u->lens, &u->cap_lens, m, sizeof *u->lens) != SBF_OK ||
        (seqs ? sbf_reserve((void *)&u->seqs, &u->cap_seqs, m, sizeof *u->seqs)
              : sbf_reserve((void *)&u->packed, &u->cap_packed, m, sizeof *u->packed)) != SBF_OK)
        return SBF_E_NOMEM;
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
    return SBF_OK;
}

void sbf_segments_gather(const sbf_segments_t *seg, size_t n, int n_targets, uint32_t *kmers, uint32_t *hits)
{
    const size_t R = (size_t)n_targets;
    for (size_t i = 0; i < n; ++i) {
        uint32_t k = 0, *h = hits + i * R;
        memset(h, 0, R * sizeof *h);
        for (size_t q = seg->first[i]; q < seg->end[i]; ++q) {
            k += seg->kmers[q];
            for (size_t t = 0; t < R; ++t)
                h[t] += seg->hits[q * R + t];
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
