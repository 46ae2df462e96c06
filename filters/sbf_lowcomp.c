/* sbf_lowcomp.c -- masking of short tandem repeats (see sbf_lowcomp.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin/sbf.h"
#include "sbf_error.h"
#include "sbf_kmer.h"
#include "sbf_lowcomp.h"

#define P SBF_LOWCOMP_MAX_PERIOD
#define MASKED 0x80u   /* marks a code in place */

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Could seq hold a stretch of min_len bases with a period p <= P? Such a stretch has at least
 * min_len - p >= 15 consecutive positions i (all with i + p < len) where seq[i] == seq[i+p],
 * hence 8 of them from a multiple of 8: one 64-bit comparison per block and period finds every
 * stretch, and few others (8 equal bytes happen by chance once in 65,536 blocks). `fold` is ORed
 * into both words (0x20 per byte: ASCII case). With min_len < P + 15 every read is scanned. */
static int candidate(const uint8_t *seq, size_t len, unsigned min_len, uint64_t fold)
{
    if (min_len < P + 15)
        return 1;
    for (size_t b = 0; b + 9 <= len; b += 8) {
        const uint64_t w = load64(seq + b) | fold;
        for (unsigned p = 1; p <= P && b + 8 + p <= len; ++p)
            if (w == (load64(seq + b + p) | fold))
                return 1;
    }
    return 0;
}

/* The exact rule over 2-bit codes (4: not a base): sets MASKED on every base of a stretch of at
 * least min_len bases with a period p <= P (code[i] == code[i+p] along it, all bases). Returns
 * the bases newly marked. */
static size_t mark(uint8_t *code, size_t len, unsigned min_len)
{
    size_t marked = 0;
    for (unsigned p = 1; p <= P && p < len; ++p) {
        size_t run = 0;   /* positions i-run .. i-1 repeat at distance p */
        for (size_t i = 0; i + p <= len; ++i) {
            const unsigned a = code[i] & 7u;
            if (i + p < len && a < 4 && a == (code[i + p] & 7u)) {
                ++run;
                continue;
            }
            if (run > 0 && run + p >= min_len)   /* the stretch [i-run, i+p) */
                for (size_t j = i - run; j < i + p; ++j) {
                    marked += !(code[j] & MASKED);
                    code[j] |= MASKED;
                }
            run = 0;
        }
    }
    return marked;
}

size_t sbf_lowcomp_mask_ascii(const char *seq, size_t len, unsigned min_len, char *out)
{
    const uint8_t *s = (const uint8_t *)seq;
    if (min_len == 0 || len < min_len || !candidate(s, len, min_len, 0x2020202020202020ULL))
        return 0;
    uint8_t *code = (uint8_t *)out;   /* out holds the codes first */
    for (size_t i = 0; i < len; ++i)
        code[i] = sbf_nt4_ascii[s[i]];
    const size_t marked = mark(code, len, min_len);
    for (size_t i = 0; marked && i < len; ++i)
        out[i] = (code[i] & MASKED) ? 'N' : seq[i];
    return marked;
}

size_t sbf_lowcomp_mask_nt16(const uint8_t *packed, size_t len, unsigned min_len, uint8_t *scratch, uint8_t *out)
{
    if (min_len == 0 || len < min_len)
        return 0;
    for (size_t i = 0; i < len; ++i)   /* one 4-bit code per byte: equal bases are equal bytes */
        scratch[i] = (uint8_t)((packed[i / 2] >> ((~i & 1) * 4)) & 15);
    if (!candidate(scratch, len, min_len, 0))
        return 0;
    for (size_t i = 0; i < len; ++i)
        scratch[i] = sbf_nt4_nt16[scratch[i]];
    const size_t marked = mark(scratch, len, min_len);
    if (!marked)
        return 0;
    memcpy(out, packed, (len + 1) / 2);
    for (size_t i = 0; i < len; ++i)
        if (scratch[i] & MASKED)
            out[i / 2] = (uint8_t)(i & 1 ? (out[i / 2] & 0xF0) | 15 : (out[i / 2] & 0x0F) | 0xF0);
    return marked;
}

static int grow(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return SBFI_OK;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *p = realloc(*(void **)pp, c * elem);
    if (!p)
        return sbf_error(SBFI_E_NOMEM, "out of memory masking low-complexity reads");
    *(void **)pp = p;
    *cap = c;
    return SBFI_OK;
}

/* The per-read arrays (offsets and both views) share one capacity. */
static int grow_reads(sbf_lowcomp_batch_t *m, size_t n)
{
    if (n <= m->cap_n)
        return SBFI_OK;
    size_t *off = realloc(m->off, n * sizeof *off);
    if (off)
        m->off = off;
    const char **seqs = off ? realloc(m->seqs, n * sizeof *seqs) : NULL;
    if (seqs)
        m->seqs = seqs;
    const uint8_t **packed = seqs ? realloc(m->packed, n * sizeof *packed) : NULL;
    if (!packed)
        return sbf_error(SBFI_E_NOMEM, "out of memory masking low-complexity reads");
    m->packed = packed;
    m->cap_n = n;
    return SBFI_OK;
}

int sbf_lowcomp_batch(sbf_lowcomp_batch_t *m, unsigned min_len, size_t n, const char *const *seqs,
                      const uint8_t *const *packed, const size_t *lens, const char *const **seqs_out,
                      const uint8_t *const **packed_out)
{
    *seqs_out = seqs;
    *packed_out = packed;
    m->masked_reads = m->masked_bases = 0;
    if (min_len == 0)
        return SBFI_OK;
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t len = lens[i], bytes = seqs ? len : (len + 1) / 2;
        if (len < min_len)
            continue;
        /* the masked copy goes straight to the arena's end; kept only if something was masked */
        if (grow(&m->arena, &m->cap_arena, used + bytes, 1) != SBFI_OK ||
            (!seqs && grow(&m->scratch, &m->cap_scratch, len, 1) != SBFI_OK))
            return SBFI_E_NOMEM;
        size_t masked = seqs ? sbf_lowcomp_mask_ascii(seqs[i], len, min_len, (char *)m->arena + used)
                             : sbf_lowcomp_mask_nt16(packed[i], len, min_len, m->scratch, m->arena + used);
        if (!masked)
            continue;
        if (m->masked_reads == 0) {   /* the first masked read: every offset starts unset */
            if (grow_reads(m, n) != SBFI_OK)
                return SBFI_E_NOMEM;
            for (size_t r = 0; r < n; ++r)
                m->off[r] = SIZE_MAX;
        }
        m->off[i] = used;
        used += bytes;
        ++m->masked_reads;
        m->masked_bases += masked;
    }
    if (m->masked_reads == 0)
        return SBFI_OK;
    /* the view, now that the arena no longer moves */
    for (size_t i = 0; i < n; ++i) {
        if (seqs)
            m->seqs[i] = m->off[i] == SIZE_MAX ? seqs[i] : (const char *)m->arena + m->off[i];
        else
            m->packed[i] = m->off[i] == SIZE_MAX ? packed[i] : m->arena + m->off[i];
    }
    *seqs_out = seqs ? m->seqs : NULL;
    *packed_out = seqs ? NULL : m->packed;
    return SBFI_OK;
}

void sbf_lowcomp_batch_free(sbf_lowcomp_batch_t *m)
{
    if (!m)
        return;
    free(m->seqs);
    free(m->packed);
    free(m->off);
    free(m->arena);
    free(m->scratch);
    memset(m, 0, sizeof *m);
}
