/* sbf_inflate.c -- see sbf_inflate.h. RFC 1951's decoder with two-level lookup tables (as
 * zlib's inflate and libdeflate do), writing 16-bit symbols so that a back-reference into an
 * unknown window copies its marker. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_mem.h"
#include "sbf_inflate.h"

/* A table entry: bits 0-4 the bits the code takes (a subtable's entry: none yet), 5-7 its kind,
 * 8-15 the extra bits after it (a subtable's entry: the subtable's index bits), 16-31 its value
 * (a byte, a base length or distance, a code-length symbol, a subtable's offset). */
enum { K_LIT, K_LEN, K_EOB, K_SUB, K_BAD, K_DIST };
#define ENTRY(len, kind, extra, value) \
    ((uint32_t)(len) | (uint32_t)(kind) << 5 | (uint32_t)(extra) << 8 | (uint32_t)(value) << 16)
#define E_LEN(e) ((e) & 31u)
#define E_KIND(e) (((e) >> 5) & 7u)
#define E_EXTRA(e) (((e) >> 8) & 255u)
#define E_VALUE(e) ((e) >> 16)

/* primary bits: codes this long or shorter take one lookup, longer ones a second in a subtable
 * of 2^(longest - primary) entries per prefix */
#define LL_BITS 10
#define D_BITS 8
#define CL_BITS 7
#define LL_SIZE ((1u << LL_BITS) + (1u << 15))
#define D_SIZE ((1u << D_BITS) + (1u << 15))

enum { MODE_LITLEN, MODE_DIST, MODE_CODES, MODE_TEXT };   /* MODE_TEXT: literal/lengths, text literals only */

typedef struct {
    uint32_t ll[LL_SIZE], dt[D_SIZE], cl[1u << CL_BITS];
    uint8_t lens[286 + 30];
} tables_t;

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,    65,    97,    129,
                                       193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static inline int text_byte(unsigned v) { return (v >= 32 && v < 127) || v == '\n' || v == '\t' || v == '\r'; }

static uint32_t sym_entry(unsigned sym, unsigned len, int mode)
{
    if (mode == MODE_CODES)
        return ENTRY(len, K_LIT, 0, sym);
    if (mode == MODE_DIST)
        return sym < 30 ? ENTRY(len, K_DIST, dist_extra[sym], dist_base[sym]) : ENTRY(len, K_BAD, 0, 0);
    if (sym < 256)
        return mode == MODE_TEXT && !text_byte(sym) ? ENTRY(len, K_BAD, 0, 0) : ENTRY(len, K_LIT, 0, sym);
    if (sym == 256)
        return ENTRY(len, K_EOB, 0, 0);
    return sym < 286 ? ENTRY(len, K_LEN, len_extra[sym - 257], len_base[sym - 257]) : ENTRY(len, K_BAD, 0, 0);
}

static unsigned reverse_bits(unsigned code, unsigned len)
{
    unsigned r = 0;
    for (unsigned i = 0; i < len; ++i, code >>= 1)
        r = r << 1 | (code & 1);
    return r;
}

/* The canonical Huffman code of lens[0..n) into tab (pbits primary). As zlib: an
 * over-subscribed code is invalid, and an incomplete one too unless it is a single one-bit code
 * of literal/lengths or distances; no distance code at all is valid (a block of literals).
 * 0, or -1 when invalid. */
static int build(uint32_t *tab, unsigned pbits, const uint8_t *lens, unsigned n, int mode)
{
    unsigned count[16] = {0}, next[16], max = 0;
    for (unsigned i = 0; i < n; ++i)
        count[lens[i]]++;
    count[0] = 0;
    int left = 1;
    for (unsigned len = 1; len <= 15; ++len) {
        left = (left << 1) - (int)count[len];
        if (left < 0)
            return -1;
        if (count[len])
            max = len;
    }
    if ((max == 0 && mode != MODE_DIST) || (left > 0 && max > 0 && (mode == MODE_CODES || max != 1)))
        return -1;
    const unsigned psize = 1u << pbits;
    for (unsigned j = 0; j < psize; ++j)
        tab[j] = ENTRY(0, K_BAD, 0, 0);
    if (max == 0)
        return 0;   /* no distance code: a block of literals */
    unsigned code = 0;
    for (unsigned len = 1; len <= 15; ++len) {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    const unsigned sbits = max > pbits ? max - pbits : 0;
    unsigned next_sub = psize;
    for (unsigned sym = 0; sym < n; ++sym) {
        const unsigned len = lens[sym];
        if (!len)
            continue;
        const unsigned rev = reverse_bits(next[len]++, len);
        const uint32_t e = sym_entry(sym, len, mode);
        if (len <= pbits) {
            for (unsigned j = rev; j < psize; j += 1u << len)
                tab[j] = e;
            continue;
        }
        const unsigned p = rev & (psize - 1);
        if (E_KIND(tab[p]) != K_SUB) {
            tab[p] = ENTRY(0, K_SUB, sbits, next_sub);
            for (unsigned j = 0; j < 1u << sbits; ++j)
                tab[next_sub + j] = ENTRY(0, K_BAD, 0, 0);
            next_sub += 1u << sbits;
        }
        const unsigned base = E_VALUE(tab[p]);
        for (unsigned j = rev >> pbits; j < 1u << sbits; j += 1u << (len - pbits))
            tab[base + j] = e;
    }
    return 0;
}

/* The bits of data from a bit position: buf holds cnt of them, lowest first; past the end of
 * the data come zeros (at counts them, so a decoder that ran off the end can tell). */
typedef struct {
    const uint8_t *data;
    size_t size, at;
    uint64_t buf;
    unsigned cnt;
} bits_t;

static inline void refill(bits_t *b)
{
    if (b->cnt >= 56)
        return;
    if (b->at + 8 <= b->size) {
        uint64_t w;
        memcpy(&w, b->data + b->at, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        /* the bits above cnt are the next bytes' already: ORed with the same bits */
        b->buf |= w << b->cnt;
        b->at += (63 - b->cnt) >> 3;
        b->cnt |= 56;
        return;
    }
    while (b->cnt <= 56) {
        b->buf |= (uint64_t)(b->at < b->size ? b->data[b->at] : 0) << b->cnt;
        b->at++;
        b->cnt += 8;
    }
}

static inline void consume(bits_t *b, unsigned n)
{
    b->buf >>= n;
    b->cnt -= n;
}

static inline uint64_t bit_pos(const bits_t *b) { return (uint64_t)b->at * 8 - b->cnt; }

static void bits_at(bits_t *b, const uint8_t *data, size_t size, uint64_t pos)
{
    b->data = data;
    b->size = size;
    b->at = (size_t)(pos >> 3);
    b->buf = 0;
    b->cnt = 0;
    refill(b);
    consume(b, (unsigned)(pos & 7));
}

/* n <= 32 bits, refilled first */
static inline unsigned get_bits(bits_t *b, unsigned n)
{
    refill(b);
    const unsigned v = (unsigned)(b->buf & ((1ull << n) - 1));
    consume(b, n);
    return v;
}


/* room for `need` symbols, history included (the contents kept) */
static int grow(sbf_syms_t *out, size_t need) { return sbf_reserve(&out->buf, &out->cap, need, sizeof *out->buf); }

/* A dynamic block's header: the code-length code, then the literal/length and distance codes
 * into t. 0, or -1 when invalid. */
static int read_dynamic(bits_t *b, tables_t *t, int text)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    const unsigned hlit = get_bits(b, 5) + 257, hdist = get_bits(b, 5) + 1, hclen = get_bits(b, 4) + 4;
    if (hlit > 286 || hdist > 30)
        return -1;
    uint8_t cl_lens[19] = {0};
    for (unsigned i = 0; i < hclen; ++i)
        cl_lens[order[i]] = (uint8_t)get_bits(b, 3);
    if (build(t->cl, CL_BITS, cl_lens, 19, MODE_CODES) < 0)
        return -1;
    const unsigned n = hlit + hdist;
    for (unsigned i = 0; i < n;) {
        refill(b);
        const uint32_t e = t->cl[b->buf & ((1u << CL_BITS) - 1)];
        if (E_KIND(e) == K_BAD)
            return -1;
        consume(b, E_LEN(e));
        const unsigned sym = E_VALUE(e);
        if (sym < 16) {
            t->lens[i++] = (uint8_t)sym;
            continue;
        }
        unsigned rep, val = 0;
        if (sym == 16) {
            if (i == 0)
                return -1;
            val = t->lens[i - 1];
            rep = 3 + get_bits(b, 2);
        } else if (sym == 17) {
            rep = 3 + get_bits(b, 3);
        } else {
            rep = 11 + get_bits(b, 7);
        }
        if (i + rep > n)
            return -1;
        memset(t->lens + i, (int)val, rep);
        i += rep;
    }
    if (t->lens[256] == 0)
        return -1;
    if (build(t->ll, LL_BITS, t->lens, hlit, text ? MODE_TEXT : MODE_LITLEN) < 0 ||
        build(t->dt, D_BITS, t->lens + hlit, hdist, MODE_DIST) < 0)
        return -1;
    return 0;
}

static tables_t fixed[2];   /* [text]: the fixed code, and the same with text literals only */
static pthread_once_t fixed_once = PTHREAD_ONCE_INIT;

static void make_fixed(void)
{
    uint8_t lens[288 + 32];
    memset(lens, 8, 144);
    memset(lens + 144, 9, 112);
    memset(lens + 256, 7, 24);
    memset(lens + 280, 8, 8);
    memset(lens + 288, 5, 32);
    for (int text = 0; text < 2; ++text) {
        (void)build(fixed[text].ll, LL_BITS, lens, 288, text ? MODE_TEXT : MODE_LITLEN);
        (void)build(fixed[text].dt, D_BITS, lens + 288, 32, MODE_DIST);
    }
}

/* One Huffman block's symbols into out with the codes ll and dt (in text mode, their
 * literals that are not text are invalid entries). The bit buffer lives in locals here: this
 * loop is most of the decoding. */
static int huffman_block(bits_t *b, const uint32_t *ll, const uint32_t *dt, sbf_syms_t *out)
{
    const size_t hist = out->hist, lim = b->size + 16;
    size_t o = out->n;
    uint16_t *w = out->buf + hist;
    size_t room = out->cap - hist;
    bits_t r = *b;
    int rc = SBF_INFL_BAD;
#define LL_ENTRY(e)                                                                          \
    do {                                                                                     \
        e = ll[r.buf & ((1u << LL_BITS) - 1)];                                               \
        if (E_KIND(e) == K_SUB)                                                              \
            e = ll[E_VALUE(e) + ((r.buf >> LL_BITS) & ((1u << E_EXTRA(e)) - 1))];            \
    } while (0)
    for (;;) {
        if (o + 258 + 8 > room) {
            out->n = o;
            if (grow(out, hist + o + 258 + 8) < 0)
                return SBF_INFL_NOMEM;
            w = out->buf + hist;
            room = out->cap - hist;
        }
        refill(&r);
        if (r.at > lim) {
            rc = SBF_INFL_TRUNC;
            break;
        }
        uint32_t e;
        LL_ENTRY(e);
        if (E_KIND(e) == K_LIT) {   /* up to three literals a refill: 56 bits hold three codes */
            consume(&r, E_LEN(e));
            w[o++] = (uint16_t)E_VALUE(e);
            LL_ENTRY(e);
            if (E_KIND(e) != K_LIT)
                continue;
            consume(&r, E_LEN(e));
            w[o++] = (uint16_t)E_VALUE(e);
            LL_ENTRY(e);
            if (E_KIND(e) != K_LIT)
                continue;
            consume(&r, E_LEN(e));
            w[o++] = (uint16_t)E_VALUE(e);
            continue;
        }
        consume(&r, E_LEN(e));
        if (E_KIND(e) == K_EOB) {
            rc = SBF_INFL_STOP;
            break;
        }
        if (E_KIND(e) != K_LEN)
            break;
        const unsigned len = E_VALUE(e) + (unsigned)(r.buf & ((1u << E_EXTRA(e)) - 1));
        consume(&r, E_EXTRA(e));
        e = dt[r.buf & ((1u << D_BITS) - 1)];
        if (E_KIND(e) == K_SUB)
            e = dt[E_VALUE(e) + ((r.buf >> D_BITS) & ((1u << E_EXTRA(e)) - 1))];
        consume(&r, E_LEN(e));
        if (E_KIND(e) != K_DIST)
            break;
        const size_t dist = E_VALUE(e) + (size_t)(r.buf & ((1u << E_EXTRA(e)) - 1));
        consume(&r, E_EXTRA(e));
        if (dist > o + hist)
            break;
        uint16_t *dst = w + o;
        const uint16_t *src = dst - dist;
        if (dist >= 8) {   /* 8 symbols at a time, past len into the slack (o + 258 + 8 <= room) */
            for (unsigned i = 0; i < len; i += 8) {
                uint16_t t[8];
                memcpy(t, src + i, sizeof t);
                memcpy(dst + i, t, sizeof t);
            }
        } else {
            for (unsigned i = 0; i < len; ++i)
                dst[i] = src[i];
        }
        o += len;
    }
#undef LL_ENTRY
    *b = r;
    out->n = o;
    return rc;
}

/* A stored block: its bytes copied as symbols (the reader re-placed after them). */
static int stored_block(bits_t *b, sbf_syms_t *out, int text)
{
    const uint64_t at = (bit_pos(b) + 7) & ~(uint64_t)7;   /* the next byte boundary */
    const size_t byte = (size_t)(at >> 3);
    if (byte + 4 > b->size)
        return SBF_INFL_TRUNC;
    const unsigned len = b->data[byte] | (unsigned)b->data[byte + 1] << 8;
    const unsigned nlen = b->data[byte + 2] | (unsigned)b->data[byte + 3] << 8;
    if (len != (~nlen & 0xffffu))
        return SBF_INFL_BAD;
    if (byte + 4 + len > b->size)
        return SBF_INFL_TRUNC;
    if (out->hist + out->n + len > out->cap && grow(out, out->hist + out->n + len) < 0)
        return SBF_INFL_NOMEM;
    uint16_t *w = out->buf + out->hist + out->n;
    const uint8_t *src = b->data + byte + 4;
    for (unsigned i = 0; i < len; ++i) {
        if (text && !text_byte(src[i]))
            return SBF_INFL_BAD;
        w[i] = src[i];
    }
    out->n += len;
    bits_at(b, b->data, b->size, (uint64_t)(byte + 4 + len) * 8);
    return SBF_INFL_STOP;
}

/* Blocks from *pos as sbf_inflate_blocks(); *blocks counts those decoded whole. */
static int decode(tables_t *t, const uint8_t *data, size_t size, uint64_t *pos, uint64_t stop, sbf_syms_t *out,
                  int text, unsigned *blocks)
{
    bits_t b;
    bits_at(&b, data, size, *pos);
    const uint64_t end = (uint64_t)size * 8;
    for (;;) {
        const uint64_t at = bit_pos(&b);
        if (at > end)
            return SBF_INFL_TRUNC;
        *pos = at;
        if (at >= stop)
            return SBF_INFL_STOP;
        const unsigned head = get_bits(&b, 3), final = head & 1, type = head >> 1;
        int rc;
        if (type == 0) {
            rc = stored_block(&b, out, text);
        } else if (type == 1) {
            pthread_once(&fixed_once, make_fixed);
            rc = huffman_block(&b, fixed[text].ll, fixed[text].dt, out);
        } else if (type == 2) {
            rc = read_dynamic(&b, t, text) < 0 ? SBF_INFL_BAD : huffman_block(&b, t->ll, t->dt, out);
        } else {
            rc = SBF_INFL_BAD;
        }
        if (rc == SBF_INFL_STOP && bit_pos(&b) > end)
            rc = SBF_INFL_TRUNC;
        if (rc != SBF_INFL_STOP)
            return rc;
        ++*blocks;
        if (final) {
            *pos = bit_pos(&b);
            return SBF_INFL_FINAL;
        }
    }
}

int sbf_inflate_blocks(const uint8_t *data, size_t size, uint64_t *pos, uint64_t stop, sbf_syms_t *out, int text)
{
    tables_t *t = malloc(sizeof *t);
    if (!t)
        return SBF_INFL_NOMEM;
    unsigned blocks = 0;
    const int rc = decode(t, data, size, pos, stop, out, text, &blocks);
    free(t);
    return rc;
}

/* The 64 bits of data from bit pos (zeros past the end). */
static uint64_t peek64(const uint8_t *data, size_t size, uint64_t pos)
{
    bits_t b;
    bits_at(&b, data, size, pos);
    refill(&b);
    return b.buf;   /* at least 56 valid bits */
}

/* A cheap test of a dynamic block's header whose first bits are w's (17 at least) and whose
 * code-length code's are v's (57): not the last block, type 2, counts in range, and a complete
 * code-length code. */
static inline int plausible_bits(uint64_t w, uint64_t v)
{
    if ((w & 7) != 4)
        return 0;
    if (((w >> 3) & 31) > 29 || ((w >> 8) & 31) > 29)
        return 0;
    const unsigned hclen = (unsigned)((w >> 13) & 15) + 4;
    unsigned kraft = 0;   /* in units of 2^-7 */
    for (unsigned i = 0; i < hclen; ++i) {
        const unsigned len = (unsigned)((v >> (3 * i)) & 7);
        if (len)
            kraft += 128u >> len;
    }
    return kraft == 128;
}

static int plausible(const uint8_t *data, size_t size, uint64_t pos)
{
    return plausible_bits(peek64(data, size, pos), peek64(data, size, pos + 17));
}

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

int sbf_inflate_find(const uint8_t *data, size_t size, uint64_t from, uint64_t to, uint64_t stop, uint64_t *found,
                     uint64_t *end, sbf_syms_t *out)
{
    tables_t *t = malloc(sizeof *t);
    if (!t)
        return SBF_INFL_NOMEM;
    const uint64_t last = (uint64_t)size * 8;
    int rc = SBF_INFL_BAD;
    if (sbf_syms_reset(out, SBF_WINDOW_BYTES, NULL) != 0) {
        free(t);
        return SBF_INFL_NOMEM;
    }
    for (uint64_t p = from; p < to && p < last; ++p) {
        const size_t byte = (size_t)(p >> 3);
        if (byte + 17 <= size) {   /* two loads a byte: its 8 bit offsets shifted out of them */
            const unsigned k = (unsigned)(p & 7);
            const uint64_t w = load_le64(data + byte) >> k;
            if ((w & 7) != 4)
                continue;
            /* bits 17.. of the header: byte + 2 holds bit 16 on; k + 1 more to drop (<= 8) */
            const uint64_t v = load_le64(data + byte + 2) >> (k + 1) | (uint64_t)data[byte + 10] << (63 - k);
            if (!plausible_bits(w, v))
                continue;
        } else if (!plausible(data, size, p)) {
            continue;
        }
        out->n = 0;   /* a failed guess's symbols dropped; the history's markers stay */
        uint64_t at = p;
        unsigned blocks = 0;
        rc = decode(t, data, size, &at, stop > p ? stop : p + 1, out, 1, &blocks);
        if (rc == SBF_INFL_NOMEM)
            break;
        if (blocks == 0) {   /* not a block start after all */
            rc = SBF_INFL_BAD;
            continue;
        }
        *found = p;
        *end = at;
        break;   /* a later block's failure is the piece's: the caller decodes it another way */
    }
    free(t);
    return rc;
}

int sbf_syms_reset(sbf_syms_t *out, size_t hist, const uint8_t *window)
{
    out->n = 0;
    out->hist = 0;
    if (hist + 65536 > out->cap && grow(out, hist + 65536) < 0)
        return SBF_INFL_NOMEM;
    for (size_t i = 0; i < hist; ++i)
        out->buf[i] = window ? window[i] : (uint16_t)(SBF_SYM_MARK | (SBF_WINDOW_BYTES - hist + i));
    out->hist = hist;
    return 0;
}

void sbf_syms_free(sbf_syms_t *out)
{
    free(out->buf);
    out->buf = NULL;
    out->hist = out->n = out->cap = 0;
}
