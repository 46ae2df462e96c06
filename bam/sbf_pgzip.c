/* sbf_pgzip.c -- see sbf_pgzip.h.
 *
 * Two kinds of jobs go to the pool, each on a process queue of its own that returns results
 * in order: a piece's decoding (search and symbols), and its resolving (markers to bytes, and
 * its CRC). Between them, on the reading thread, the join: a piece is accepted when it starts
 * where the one before ended, else it is decoded again from there with the window known (a
 * stored or fixed-code block at a piece's start, which the search does not recognise, or a
 * wrong guess). Only the window (32 KiB) passes from piece to piece in order; the rest runs
 * in parallel. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config.h"
#include "../filters/sbf_error.h"
#include "sbf_inflate.h"
#include "sbf_pgzip.h"

#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#endif

/* compressed bytes per piece: a DNA piece is about 7 MB of symbols; shorter pieces spend more
 * of their time searching for a block start (tens of kB into the piece) */
#define PIECE_BYTES (1u << 20)

typedef struct piece_s {
    struct piece_s *next_free;
    const struct sbf_pgzip_s *z;
    uint64_t from, stop;   /* bits: search from `from` (start there: `first`), decode until a block starts at >= stop */
    int first;             /* a member's first piece: no search, no window */
    int rc;                /* SBF_INFL_* of its decoding */
    uint64_t start, end;   /* bits: where its decoding started and ended */
    sbf_syms_t syms;       /* then its bytes, resolved in place */
    size_t n;
    uint32_t crc;
    int member_end;        /* it ends a member: the trailer follows at byte `trailer` */
    size_t trailer;
    uint8_t win[SBF_WINDOW_BYTES];   /* the window its markers refer to */
    uint8_t map[1u << 16];           /* symbol -> byte (resolve_job) */
} piece_t;

struct sbf_pgzip_s {
    char *path;
    int fd;
    const uint8_t *data;
    size_t size;
    hts_tpool *pool;
    hts_tpool_process *qd, *qr;   /* decoding, resolving */
    int depth;                    /* pieces decoding and resolving at once, at most */
    uint64_t base, piece_bytes, n_pieces, next_dispatch;
    int n_decoding, n_resolving;
    piece_t *free_list;
    /* the join */
    uint64_t expect;   /* bit where the next piece must start */
    int ended;         /* the last member's trailer is reached */
    uint8_t window[SBF_WINDOW_BYTES];   /* the data's last bytes so far, win_n of them valid (at the end) */
    size_t win_n;
    size_t redone;
    /* serving */
    piece_t *cur;
    size_t off;
    uint32_t member_crc;
    uint64_t member_len;
    int failed;
    char why[128];   /* what failed, for messages that name the file their own way */
};

/* A failure: its message (naming the file) and z->why (not naming it). */
static int fail_why(sbf_pgzip_t *z, int code, const char *fmt, ...) SBF_PRINTF(3, 4);
static int fail_why(sbf_pgzip_t *z, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(z->why, sizeof z->why, fmt, ap);
    va_end(ap);
    return sbf_error(code, "%s: %s", z->path, z->why);
}

static int inflate_failed(sbf_pgzip_t *z, int rc, uint64_t at)
{
    if (rc == SBF_INFL_NOMEM)
        return fail_why(z, SBF_E_NOMEM, "out of memory inflating");
    if (rc == SBF_INFL_TRUNC)
        return fail_why(z, SBF_E_FORMAT, "truncated gzip data");
    return fail_why(z, SBF_E_FORMAT, "corrupt gzip data near byte %llu", (unsigned long long)(at / 8));
}

/* ---- CRC-32 (gzip's) of pieces, and combined over a member ---- */

#define CRC_POLY 0xedb88320u

#ifndef HAVE_ISAL
static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;   /* made once, as sbf_inflate.c's fixed code */

static void make_crc_table(void)
{
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = c & 1 ? (c >> 1) ^ CRC_POLY : c >> 1;
        crc_table[i] = c;
    }
}
#endif

static uint32_t crc_bytes(const uint8_t *b, size_t n)
{
#ifdef HAVE_ISAL
    return crc32_gzip_refl(0, b, n);
#else
    pthread_once(&crc_once, make_crc_table);
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; ++i)
        c = crc_table[(c ^ b[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
#endif
}

/* a * b modulo the CRC polynomial (bit-reflected: bit 31 is x^0) */
static uint32_t mult_mod(uint32_t a, uint32_t b)
{
    uint32_t p = 0;
    for (uint32_t m = 1u << 31; m; m >>= 1) {
        if (a & m)
            p ^= b;
        b = b & 1 ? (b >> 1) ^ CRC_POLY : b >> 1;
    }
    return p;
}

/* The CRC of A followed by B from crc(A), crc(B) and B's length: crc(A) times x^(8 len)
 * modulo the polynomial, plus crc(B). */
static uint32_t crc_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
    uint32_t x = 1u << 30;   /* x^1 */
    uint32_t p = 1u << 31;   /* x^0 */
    for (uint64_t n = len_b * 8; n; n >>= 1) {   /* x^(8 len) by squaring */
        if (n & 1)
            p = mult_mod(p, x);
        x = mult_mod(x, x);
    }
    return mult_mod(p, crc_a) ^ crc_b;
}

/* ---- the jobs ---- */

static void *decode_job(void *arg)
{
    piece_t *p = arg;
    const struct sbf_pgzip_s *z = p->z;
    if (p->first) {
        p->start = p->end = p->from;
        p->rc = sbf_syms_reset(&p->syms, 0, NULL) != 0
                    ? SBF_INFL_NOMEM
                    : sbf_inflate_blocks(z->data, z->size, &p->end, p->stop, &p->syms, 0);
    } else {
        p->rc = sbf_inflate_find(z->data, z->size, p->from, p->stop, p->stop, &p->start, &p->end, &p->syms);
    }
    return p;
}

static void *resolve_job(void *arg)
{
    piece_t *p = arg;
    const uint16_t *s = p->syms.buf + p->syms.hist;
    uint8_t *b = (uint8_t *)p->syms.buf;   /* in place: byte i lies before symbol i */
    /* every symbol's byte: a byte itself, a marker the window's byte (a lookup, no branch) */
    for (unsigned v = 0; v < 256; ++v)
        p->map[v] = (uint8_t)v;
    memcpy(p->map + SBF_SYM_MARK, p->win, SBF_WINDOW_BYTES);
    const size_t n = p->syms.n;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {   /* 32 at a time through a copy: the loops vectorise */
        uint16_t v[32], any = 0;
        memcpy(v, s + i, sizeof v);
        for (int j = 0; j < 32; ++j)
            any |= v[j];
        if (any < 256) {   /* no marker (most blocks past a piece's first 32 KiB) */
            for (int j = 0; j < 32; ++j)
                b[i + j] = (uint8_t)v[j];
            continue;
        }
        for (int j = 0; j < 32; ++j)
            b[i + j] = p->map[v[j]];
    }
    for (; i < n; ++i)
        b[i] = p->map[s[i]];
    p->n = n;
    p->crc = crc_bytes(b, n);
    return p;
}

/* ---- pieces ---- */

static piece_t *piece_get(sbf_pgzip_t *z)
{
    piece_t *p = z->free_list;
    if (p) {
        z->free_list = p->next_free;
    } else if (!(p = calloc(1, sizeof *p))) {
        return NULL;
    }
    p->z = z;
    p->first = p->member_end = 0;
    p->n = 0;
    return p;
}

static void piece_put(sbf_pgzip_t *z, piece_t *p)
{
    p->next_free = z->free_list;
    z->free_list = p;
}

/* The gzip member header at byte `at`: *deflate the bit its deflate data start at. */
static int member_header(sbf_pgzip_t *z, size_t at, uint64_t *deflate)
{
    const uint8_t *d = z->data;
    const size_t size = z->size;
    if (at + 10 > size || d[at] != 0x1f || d[at + 1] != 0x8b || d[at + 2] != 8 || (d[at + 3] & 0xe0))
        return fail_why(z, SBF_E_FORMAT, "not a gzip member at byte %zu", at);
    const unsigned flags = d[at + 3];
    size_t i = at + 10;
    if (flags & 4) {   /* FEXTRA */
        if (i + 2 > size)
            goto truncated;
        i += 2 + (d[i] | (size_t)d[i + 1] << 8);
    }
    for (unsigned f = 8; f <= 16; f <<= 1)   /* FNAME, FCOMMENT: zero-terminated */
        if (flags & f) {
            while (i < size && d[i])
                ++i;
            ++i;
        }
    if (flags & 2)   /* FHCRC */
        i += 2;
    if (i >= size)
        goto truncated;
    *deflate = (uint64_t)i * 8;
    return SBF_OK;
truncated:
    return fail_why(z, SBF_E_FORMAT, "truncated gzip header at byte %zu", at);
}

static int dispatch(sbf_pgzip_t *z, hts_tpool_process *q, void *(*fn)(void *), piece_t *p)
{
    if (hts_tpool_dispatch2(z->pool, q, fn, p, -1) != 0)   /* -1: never blocks; depth bounds the queues */
        return fail_why(z, SBF_E_THREAD, "cannot queue a decompression job");
    return SBF_OK;
}

/* p joined after what came before: decoded again from `expect` when it started elsewhere,
 * the window passed on, its resolving queued; a member's end handled (a next member's start
 * decoded here, up to p's stop). */
static int accept(sbf_pgzip_t *z, piece_t *p)
{
    for (;;) {
        if ((p->rc != SBF_INFL_STOP && p->rc != SBF_INFL_FINAL) || p->start != z->expect) {
            p->start = p->end = z->expect;
            p->rc = sbf_syms_reset(&p->syms, z->win_n, z->window + SBF_WINDOW_BYTES - z->win_n) != 0
                        ? SBF_INFL_NOMEM
                        : sbf_inflate_blocks(z->data, z->size, &p->end, p->stop, &p->syms, 0);
            z->redone++;
            if (p->rc != SBF_INFL_STOP && p->rc != SBF_INFL_FINAL) {
                const int rc = p->rc;
                const uint64_t at = p->end;
                piece_put(z, p);
                return inflate_failed(z, rc, at);
            }
        }
        /* the window its markers refer to, then the window after it */
        memcpy(p->win, z->window, SBF_WINDOW_BYTES);
        const size_t n = p->syms.n, tail = n < SBF_WINDOW_BYTES ? n : SBF_WINDOW_BYTES;
        const uint16_t *s = p->syms.buf + p->syms.hist + (n - tail);
        memmove(z->window, z->window + tail, SBF_WINDOW_BYTES - tail);
        uint8_t *w = z->window + SBF_WINDOW_BYTES - tail;
        for (size_t i = 0; i < tail; ++i)
            w[i] = s[i] < 256 ? (uint8_t)s[i] : p->win[s[i] & (SBF_WINDOW_BYTES - 1)];
        z->win_n = z->win_n + tail < SBF_WINDOW_BYTES ? z->win_n + tail : SBF_WINDOW_BYTES;
        z->expect = p->end;
        /* what the rest needs, read before p goes to the pool */
        const uint64_t stop = p->stop, end = p->end;
        const int final = p->rc == SBF_INFL_FINAL;
        const size_t next = (size_t)((end + 7) / 8) + 8;   /* after the trailer */
        if (final) {
            p->member_end = 1;
            p->trailer = next - 8;
            if (next > z->size) {
                piece_put(z, p);
                return inflate_failed(z, SBF_INFL_TRUNC, end);
            }
        }
        if (dispatch(z, z->qr, resolve_job, p) != SBF_OK) {
            piece_put(z, p);
            return -1;
        }
        z->n_resolving++;
        if (!final)
            return SBF_OK;
        /* a member ended: the file's end, or the next member's start (decoded here up to stop) */
        if (next == z->size) {
            z->ended = 1;
            return SBF_OK;
        }
        uint64_t at;
        if (member_header(z, next, &at) != SBF_OK)
            return -1;
        z->win_n = 0;
        z->expect = at;
        if (at >= stop)
            return SBF_OK;   /* the next piece's search starts before it */
        if (!(p = piece_get(z)))
            return inflate_failed(z, SBF_INFL_NOMEM, 0);
        p->first = 1;
        p->from = at;
        p->stop = stop;
        decode_job(p);
    }
}

/* The next piece resolved, in order; NULL at the end of the data (z->failed: after a failure). */
static piece_t *next_piece(sbf_pgzip_t *z)
{
    for (;;) {
        while (!z->ended && z->next_dispatch < z->n_pieces && z->n_decoding + z->n_resolving < z->depth) {
            piece_t *p = piece_get(z);
            if (!p) {
                inflate_failed(z, SBF_INFL_NOMEM, 0);
                goto fail;
            }
            const uint64_t i = z->next_dispatch++;
            p->first = i == 0;
            p->from = i == 0 ? z->expect : (z->base + i * z->piece_bytes) * 8;
            p->stop = i + 1 < z->n_pieces ? (z->base + (i + 1) * z->piece_bytes) * 8 : (uint64_t)z->size * 8;
            if (dispatch(z, z->qd, decode_job, p) != SBF_OK) {
                piece_put(z, p);
                goto fail;
            }
            z->n_decoding++;
        }
        if (z->n_decoding > 0) {
            /* while resolved pieces are on their way, join only the decodings that are done */
            hts_tpool_result *r = z->n_resolving > 0 ? hts_tpool_next_result(z->qd) : hts_tpool_next_result_wait(z->qd);
            if (r) {
                piece_t *p = hts_tpool_result_data(r);
                hts_tpool_delete_result(r, 0);
                z->n_decoding--;
                if (z->ended)
                    piece_put(z, p);   /* past the data's end */
                else if (accept(z, p) != SBF_OK)
                    goto fail;
                continue;
            }
        }
        if (z->n_resolving > 0) {
            hts_tpool_result *r = hts_tpool_next_result_wait(z->qr);
            if (!r) {
                fail_why(z, SBF_E_THREAD, "the decompression threads stopped");
                goto fail;
            }
            piece_t *p = hts_tpool_result_data(r);
            hts_tpool_delete_result(r, 0);
            z->n_resolving--;
            return p;
        }
        if (!z->ended) {
            inflate_failed(z, SBF_INFL_TRUNC, z->expect);
            goto fail;
        }
        return NULL;
    }
fail:
    z->failed = 1;
    return NULL;
}

/* A piece served whole: into its member's CRC and length, checked against the trailer at the
 * member's end. */
static int finish_piece(sbf_pgzip_t *z, piece_t *p)
{
    z->member_crc = crc_combine(z->member_crc, p->crc, p->n);
    z->member_len += p->n;
    int rc = SBF_OK;
    if (p->member_end) {
        const uint8_t *t = z->data + p->trailer;
        const uint32_t crc = t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
        const uint32_t isize = t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;
        if (crc != z->member_crc || isize != (uint32_t)z->member_len)
            rc = fail_why(z, SBF_E_FORMAT, "the gzip member ending at byte %zu fails its %s check", p->trailer + 8,
                          crc != z->member_crc ? "CRC-32" : "length");
        z->member_crc = 0;
        z->member_len = 0;
    }
    piece_put(z, p);
    return rc;
}

ssize_t sbf_pgzip_read(sbf_pgzip_t *z, void *buf, size_t len)
{
    uint8_t *out = buf;
    size_t got = 0;
    while (got < len && !z->failed) {
        if (z->cur && z->off < z->cur->n) {
            const size_t k = z->cur->n - z->off < len - got ? z->cur->n - z->off : len - got;
            memcpy(out + got, (const uint8_t *)z->cur->syms.buf + z->off, k);
            z->off += k;
            got += k;
            continue;
        }
        if (z->cur) {
            piece_t *p = z->cur;
            z->cur = NULL;
            if (finish_piece(z, p) != SBF_OK) {
                z->failed = 1;
                break;
            }
        }
        if (!(z->cur = next_piece(z)))
            break;
        z->off = 0;
    }
    return z->failed ? -1 : (ssize_t)got;
}

size_t sbf_pgzip_redone(const sbf_pgzip_t *z) { return z->redone; }
const char *sbf_pgzip_why(const sbf_pgzip_t *z) { return z->why[0] ? z->why : NULL; }

int sbf_pgzip_open(const char *path, htsThreadPool *pool, sbf_pgzip_t **out)
{
    return sbf_pgzip_open_pieces(path, pool, PIECE_BYTES, out);
}

int sbf_pgzip_open_pieces(const char *path, htsThreadPool *pool, size_t piece_bytes, sbf_pgzip_t **out)
{
    *out = NULL;
    sbf_pgzip_t *z = calloc(1, sizeof *z);
    if (!z || !(z->path = strdup(path))) {
        free(z);
        return sbf_error(SBF_E_NOMEM, "out of memory opening %s", path);
    }
    z->fd = -1;
    int rc;
    struct stat st;
    if ((z->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(z->fd, &st) != 0) {
        rc = sbf_error_errno(SBF_E_IO, errno, "%s", path);
        goto fail;
    }
    z->size = (size_t)st.st_size;
    void *map = z->size ? mmap(NULL, z->size, PROT_READ, MAP_PRIVATE, z->fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED) {
        rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot map it", path);
        goto fail;
    }
    z->data = map;
    if ((rc = member_header(z, 0, &z->expect)) != SBF_OK)
        goto fail;
    z->pool = pool->pool;
    const int threads = hts_tpool_size(z->pool);
    z->depth = threads + 4;
    z->base = z->expect / 8;
    z->piece_bytes = piece_bytes ? piece_bytes : PIECE_BYTES;
    z->n_pieces = (z->size - z->base + z->piece_bytes - 1) / z->piece_bytes;
    if (!(z->qd = hts_tpool_process_init(z->pool, 2 * z->depth, 0)) ||
        !(z->qr = hts_tpool_process_init(z->pool, 2 * z->depth, 0))) {
        rc = sbf_error(SBF_E_THREAD, "%s: cannot start decompression threads", path);
        goto fail;
    }
    *out = z;
    return SBF_OK;
fail:
    sbf_pgzip_close(z);
    return rc;
}

void sbf_pgzip_close(sbf_pgzip_t *z)
{
    if (!z)
        return;
    /* the jobs in flight finish first: they use the pieces and the mapping */
    for (; z->n_decoding > 0; z->n_decoding--) {
        hts_tpool_result *r = hts_tpool_next_result_wait(z->qd);
        if (r) {
            piece_put(z, hts_tpool_result_data(r));
            hts_tpool_delete_result(r, 0);
        }
    }
    for (; z->n_resolving > 0; z->n_resolving--) {
        hts_tpool_result *r = hts_tpool_next_result_wait(z->qr);
        if (r) {
            piece_put(z, hts_tpool_result_data(r));
            hts_tpool_delete_result(r, 0);
        }
    }
    if (z->cur)
        piece_put(z, z->cur);
    for (piece_t *p = z->free_list, *next; p; p = next) {
        next = p->next_free;
        sbf_syms_free(&p->syms);
        free(p);
    }
    if (z->qd)
        hts_tpool_process_destroy(z->qd);
    if (z->qr)
        hts_tpool_process_destroy(z->qr);
    if (z->data)
        munmap((void *)z->data, z->size);
    if (z->fd >= 0)
        close(z->fd);
    free(z->path);
    free(z);
}
