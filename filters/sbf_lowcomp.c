/* sbf_lowcomp.c -- masking of short tandem repeats (see sbf_lowcomp.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../plugin/sbf.h"
#include "sbf_error.h"
#include "sbf_kmer.h"
#include "sbf_lowcomp.h"
#include "sbf_mem.h"

#define P SBF_LOWCOMP_MAX_PERIOD
#define MASKED 0x80u   /* marks a code in place */

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Every stretch of at least min_len bases with a period p <= P, in seq[0..len) whose bytes map
 * to 2-bit codes through `code` (4: not a base): positions i with code[seq[i]] < 4 and
 * seq[i] == seq[i+p] in a row (a run), the stretch being the run and the p bases after it.
 * A stretch of min_len >= P + 15 bases holds a run of at least 15 positions, hence 8 of them
 * from a multiple of 8: one 64-bit comparison per block and period finds every run (8 equal
 * bytes happen by chance once in 65,536 blocks), and the run is then extended both ways. `fold`
 * is ORed into both words (0x20 per byte: ASCII case). Each stretch goes to visit(ctx, from,
 * to); returns the sum of what visit returns. */
typedef size_t (*visit_fn)(void *ctx, size_t from, size_t to);

/* Can seq hold such a stretch at all? A stretch of period p also repeats at every multiple of
 * p, so each period 1..6 repeats at distance 4, 5 or 6, with a run at least min_len - 6 >= 15
 * long there: three comparisons per 8-byte block find every read that holds one. */
static int candidate(const uint8_t *seq, size_t len, uint64_t fold)
{
    for (size_t b = 0; b + 8 + P <= len; b += 8) {
        const uint64_t w = load64(seq + b) | fold;
        if (w == (load64(seq + b + 4) | fold) || w == (load64(seq + b + 5) | fold) ||
            w == (load64(seq + b + 6) | fold))
            return 1;
    }
    /* the last block before the end, for distances 4 and 5 */
    if (len >= 8 + 4) {
        const size_t b = ((len - 8 - 4) / 8) * 8;
        const uint64_t w = load64(seq + b) | fold;
        if (w == (load64(seq + b + 4) | fold) || (b + 8 + 5 <= len && w == (load64(seq + b + 5) | fold)))
            return 1;
    }
    return 0;
}

static size_t stretches(const uint8_t *seq, size_t len, unsigned min_len, uint64_t fold, const uint8_t code[256],
                        visit_fn visit, void *ctx)
{
    size_t marked = 0;
    if (!candidate(seq, len, fold))
        return 0;
    for (unsigned p = 1; p <= P; ++p)
        for (size_t b = 0; b + 8 + p <= len; b += 8) {
            if ((load64(seq + b) | fold) != (load64(seq + b + p) | fold))
                continue;
#define EQ(i) (code[seq[i]] < 4 && code[seq[i]] == code[seq[(i) + p]])
            if (!EQ(b))
                continue;   /* an N here: a long enough run has a clean block of its own */
            size_t from = b, to = b + 1;   /* the run [from, to) */
            while (from > 0 && EQ(from - 1))
                --from;
            while (to + p < len && EQ(to))
                ++to;
#undef EQ
            if (to - from + p >= min_len)
                marked += visit(ctx, from, to + p);
            b = (to / 8) * 8;   /* the next block that can start another run of this period */
        }
    return marked;
}

/* The exact rule over 2-bit codes for any min_len (no candidate blocks): sets MASKED on every
 * base of a stretch. Returns the bases newly marked. */
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

/* The masked copy of a read, made when its first stretch is found: ASCII ('N' over a stretch)
 * or BAM 4-bit (code 15). */
typedef struct {
    const uint8_t *in;
    uint8_t *out;
    size_t len;
    int packed, copied;
} masked_t;

static size_t mask_range(void *ctx, size_t from, size_t to)
{
    masked_t *c = ctx;
    if (!c->copied) {
        memcpy(c->out, c->in, c->packed ? (c->len + 1) / 2 : c->len);
        c->copied = 1;
    }
    size_t n = 0;
    for (size_t j = from; j < to; ++j) {
        if (c->packed) {
            const unsigned shift = (~j & 1) * 4;
            n += ((c->out[j / 2] >> shift) & 15) != 15;
            c->out[j / 2] = (uint8_t)(c->out[j / 2] | (15u << shift));
        } else {
            n += c->out[j] != 'N';
            c->out[j] = 'N';
        }
    }
    return n;
}

/* Any min_len, BAM 4-bit reads: the read's 2-bit codes in `code` (scratch), every stretch found
 * by mark(), then masked in the copy run by run. */
static size_t mask_slow(uint8_t *code, size_t len, unsigned min_len, masked_t *c)
{
    if (!mark(code, len, min_len))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && (code[j] & MASKED))
            ++j;
        if (j > i)
            n += mask_range(c, i, j);
        i = j + (j == i);
    }
    return n;
}

size_t sbf_lowcomp_mask_ascii(const char *seq, size_t len, unsigned min_len, char *out)
{
    const uint8_t *s = (const uint8_t *)seq;
    if (min_len == 0 || len < min_len)
        return 0;
    masked_t c = {s, (uint8_t *)out, len, 0, 0};
    if (min_len >= P + 15)
        return stretches(s, len, min_len, 0x2020202020202020ULL, sbf_nt4_ascii, mask_range, &c);
    uint8_t *code = (uint8_t *)out;   /* out holds the codes first, then the masked read */
    for (size_t i = 0; i < len; ++i)
        code[i] = sbf_nt4_ascii[s[i]];
    const size_t marked = mark(code, len, min_len);
    for (size_t i = 0; marked && i < len; ++i)
        out[i] = (code[i] & MASKED) ? 'N' : seq[i];
    return marked;
}

/* The 4-bit codes of a BAM read, one per byte (the high nibble first): 32 bases per 16-byte
 * load with SSE2, where a loop of shifts per base ran on every BAM read of a run (perf on the
 * development VM: the masking 4.6% -> 2.8% of a BAM run's CPU time; what is left is the first
 * touch of each record's bases, which the scan would otherwise pay). */
static void unpack_nt16(const uint8_t *packed, size_t len, uint8_t *codes)
{
    size_t i = 0;   /* bytes of `packed` done */
#ifdef __SSE2__
    const __m128i low = _mm_set1_epi8(15);
    for (; 2 * (i + 16) <= len; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(packed + i));
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), low), lo = _mm_and_si128(v, low);
        _mm_storeu_si128((__m128i *)(codes + 2 * i), _mm_unpacklo_epi8(hi, lo));
        _mm_storeu_si128((__m128i *)(codes + 2 * i + 16), _mm_unpackhi_epi8(hi, lo));
    }
#endif
    for (size_t b = 2 * i; b < len; ++b)
        codes[b] = (uint8_t)((packed[b / 2] >> ((~b & 1) * 4)) & 15);
}

size_t sbf_lowcomp_mask_nt16(const uint8_t *packed, size_t len, unsigned min_len, uint8_t *scratch, uint8_t *out)
{
    if (min_len == 0 || len < min_len)
        return 0;
    unpack_nt16(packed, len, scratch);   /* one 4-bit code per byte: equal bases are equal bytes */
    masked_t c = {packed, out, len, 1, 0};
    if (min_len >= P + 15)
        return stretches(scratch, len, min_len, 0, sbf_nt4_nt16, mask_range, &c);
    for (size_t i = 0; i < len; ++i)
        scratch[i] = sbf_nt4_nt16[scratch[i]];
    return mask_slow(scratch, len, min_len, &c);
}

static int grow_reads(sbf_lowcomp_batch_t *m, size_t n)
{
    if (n <= m->cap_n)
        return SBF_OK;
    size_t *off = realloc(m->off, n * sizeof *off);
    if (off)
        m->off = off;
    const char **seqs = off ? realloc(m->seqs, n * sizeof *seqs) : NULL;
    if (seqs)
        m->seqs = seqs;
    const uint8_t **packed = seqs ? realloc(m->packed, n * sizeof *packed) : NULL;
    if (!packed)
        return sbf_error(SBF_E_NOMEM, "out of memory masking low-complexity reads");
    m->packed = packed;
    m->cap_n = n;
    return SBF_OK;
}

int sbf_lowcomp_batch(sbf_lowcomp_batch_t *m, unsigned min_len, size_t n, const char *const *seqs,
                      const uint8_t *const *packed, const size_t *lens, const char *const **seqs_out,
                      const uint8_t *const **packed_out)
{
    *seqs_out = seqs;
    *packed_out = packed;
    m->masked_reads = m->masked_bases = 0;
    if (min_len == 0)
        return SBF_OK;
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t len = lens[i], bytes = seqs ? len : (len + 1) / 2;
        if (len < min_len)
            continue;
        /* the masked copy goes straight to the arena's end; kept only if something was masked */
        if (sbf_reserve(&m->arena, &m->cap_arena, used + bytes, 1) != SBF_OK ||
            (!seqs && sbf_reserve(&m->scratch, &m->cap_scratch, len, 1) != SBF_OK))
            return SBF_E_NOMEM;
        size_t masked = seqs ? sbf_lowcomp_mask_ascii(seqs[i], len, min_len, (char *)m->arena + used)
                             : sbf_lowcomp_mask_nt16(packed[i], len, min_len, m->scratch, m->arena + used);
        if (!masked)
            continue;
        if (m->masked_reads == 0) {   /* the first masked read: every offset starts unset */
            if (grow_reads(m, n) != SBF_OK)
                return SBF_E_NOMEM;
            for (size_t r = 0; r < n; ++r)
                m->off[r] = SIZE_MAX;
        }
        m->off[i] = used;
        used += bytes;
        ++m->masked_reads;
        m->masked_bases += masked;
    }
    if (m->masked_reads == 0)
        return SBF_OK;
    /* the view, now that the arena no longer moves */
    for (size_t i = 0; i < n; ++i) {
        if (seqs)
            m->seqs[i] = m->off[i] == SIZE_MAX ? seqs[i] : (const char *)m->arena + m->off[i];
        else
            m->packed[i] = m->off[i] == SIZE_MAX ? packed[i] : m->arena + m->off[i];
    }
    *seqs_out = seqs ? m->seqs : NULL;
    *packed_out = seqs ? NULL : m->packed;
    return SBF_OK;
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
