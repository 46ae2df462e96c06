/* sbf_fastx.c -- see sbf_fastx.h. The control flow is kseq_read()'s and ks_getuntil2()'s
 * (htslib 1.16 kseq.h, MIT licence, Heng Li), so headers, comments, multi-line sequences and
 * qualities, '\r' line ends, junk before the first record and truncations are handled exactly
 * as htslib's kseq handles them; only the scanning and the buffer size differ. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "sbf_fastx.h"

#define FASTX_BUFSIZE (256 * 1024)
enum { SEP_SPACE, SEP_LINE };

sbf_fastx_t *sbf_fastx_init(int (*read)(void *f, void *buf, int len), void *f)
{
    sbf_fastx_t *x = calloc(1, sizeof *x);
    if (!x || !(x->buf = malloc(FASTX_BUFSIZE))) {
        free(x);
        return NULL;
    }
    x->bufsize = FASTX_BUFSIZE;
    x->read = read;
    x->f = f;
    return x;
}

void sbf_fastx_destroy(sbf_fastx_t *x)
{
    if (!x)
        return;
    free(x->name.s);
    free(x->comment.s);
    free(x->seq.s);
    free(x->qual.s);
    free(x->buf);
    free(x);
}

static int fill(sbf_fastx_t *x)
{
    x->begin = 0;
    x->end = x->read(x->f, x->buf, x->bufsize);
    if (x->end <= 0) {
        x->end = 0;
        x->is_eof = 1;
        return 0;
    }
    return 1;
}

static int get_char(sbf_fastx_t *x)
{
    if (x->begin >= x->end && (x->is_eof || !fill(x)))
        return -1;
    return x->buf[x->begin++];
}

/* The sequence so far to the sink, all but its last two bytes: the '\r' rule of get_until()
 * looks at the last byte and at the length, which stays above 1 as the whole one would. */
static int flush_seq(sbf_fastx_t *x)
{
    const size_t n = x->seq.l - 2;
    if (x->seq_sink(x->sink_arg, x->seq.s, n) != 0)
        return -3;
    memmove(x->seq.s, x->seq.s + n, 2);
    x->seq.l = 2;
    x->seq_flushed += n;
    return 0;
}

/* ks_getuntil2(): up to the delimiter (a line end, or any white space), appended to str when
 * `append`; *dret the delimiter met (0 at the end of the data). The length, -1 at the end of
 * the data, -3 out of memory. */
static int get_until(sbf_fastx_t *x, int delimiter, kstring_t *str, int *dret, int append)
{
    int gotany = 0;
    if (dret)
        *dret = 0;
    str->l = append ? str->l : 0;
    for (;;) {
        int i;
        if (x->begin >= x->end && (x->is_eof || !fill(x)))
            break;
        if (delimiter == SEP_LINE) {
            const unsigned char *nl = memchr(x->buf + x->begin, '\n', (size_t)(x->end - x->begin));
            i = nl ? (int)(nl - x->buf) : x->end;
        } else {
            for (i = x->begin; i < x->end; ++i)
                if (isspace(x->buf[i]))
                    break;
        }
        size_t n = (size_t)(i - x->begin);
        if (ks_resize(str, str->l + n + 1) < 0)
            return -3;
        gotany = 1;
        memcpy(str->s + str->l, x->buf + x->begin, n);
        str->l += n;
        x->begin = i + 1;
        if (str == &x->seq && x->seq_sink && str->l >= (x->sink_at > 2 ? x->sink_at : SBF_FASTX_SINK_AT) &&
            flush_seq(x) < 0)
            return -3;
        if (i < x->end) {
            if (dret)
                *dret = x->buf[i];
            break;
        }
    }
    if (!gotany && x->is_eof && x->begin >= x->end)
        return -1;
    if (!str->s) {
        if (ks_resize(str, 1) < 0)
            return -3;
    } else if (delimiter == SEP_LINE && str->l > 1 && str->s[str->l - 1] == '\r') {
        --str->l;
    }
    str->s[str->l] = '\0';
    return (int)str->l;
}

int sbf_fastx_read(sbf_fastx_t *x)
{
    int c;
    if (x->last_char == 0) {   /* jump to the next header line */
        while ((c = get_char(x)) != -1 && c != '>' && c != '@')
            ;
        if (c == -1)
            return -1;
        x->last_char = c;
    }
    x->comment.l = x->seq.l = x->qual.l = 0;
    x->seq_flushed = 0;
    int rc = get_until(x, SEP_SPACE, &x->name, &c, 0);
    if (rc < 0)
        return rc == -3 ? -3 : -1;   /* -1: the normal end */
    if (c != '\n' && get_until(x, SEP_LINE, &x->comment, NULL, 0) == -3)
        return -3;
    if (ks_resize(&x->seq, 256) < 0)
        return -3;
    while ((c = get_char(x)) != -1 && c != '>' && c != '+' && c != '@') {
        if (c == '\n')
            continue;   /* empty lines */
        if (ks_resize(&x->seq, x->seq.l + 2) < 0)
            return -3;
        x->seq.s[x->seq.l++] = (char)c;
        if (get_until(x, SEP_LINE, &x->seq, NULL, 1) == -3)
            return -3;
    }
    if (c == '>' || c == '@')
        x->last_char = c;   /* the next header's first character is read */
    const size_t len = x->seq_flushed + x->seq.l;   /* with the bases handed to a sink */
    if (len > (size_t)0x7ffffffe || ks_resize(&x->seq, x->seq.l + 2) < 0)
        return -3;
    x->seq.s[x->seq.l] = '\0';
    if (c != '+')
        return (int)len;   /* FASTA */
    if (ks_resize(&x->qual, len + 2) < 0)
        return -3;
    while ((c = get_char(x)) != -1 && c != '\n')
        ;   /* the rest of the '+' line */
    if (c == -1)
        return -2;   /* no quality line */
    while ((rc = get_until(x, SEP_LINE, &x->qual, NULL, 1)) >= 0 && x->qual.l < len)
        ;
    if (rc == -3)
        return -3;
    x->last_char = 0;
    if (len != x->qual.l)
        return -2;
    return (int)len;
}

int sbf_fastx_prime(sbf_fastx_t *x, const void *data, size_t len)
{
    if (len > (size_t)x->bufsize) {
        if (len > 0x7fffffff)
            return -1;
        unsigned char *b = realloc(x->buf, len);
        if (!b)
            return -1;
        x->buf = b;
        x->bufsize = (int)len;
    }
    memcpy(x->buf, data, len);
    x->begin = 0;
    x->end = (int)len;
    return 0;
}

/* The offsets of the first `want` newlines of p[from..n), in pos; returns how many there are.
 * Sixteen bytes at a time (SSE2, in every x86-64): a record's four lines in a few loads, where
 * a memchr() per line cost a call and its set-up each (the parse took 110 ns a record on the
 * H200 machine's cores). */
static int find_newlines(const char *p, size_t from, size_t n, size_t *pos, int want)
{
    int got = 0;
    size_t i = from;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    for (; i + 16 <= n; i += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), nl));
        while (m) {
            pos[got++] = i + (size_t)__builtin_ctz(m);
            if (got == want)
                return got;
            m &= m - 1;
        }
    }
#endif
    for (; i < n; ++i)
        if (p[i] == '\n') {
            pos[got++] = i;
            if (got == want)
                return got;
        }
    return got;
}

/* The end of the name in p[from..end): the first space or tab, or end; -1 at any other white
 * space (left to sbf_fastx_read(), like a '\r'). */
static long name_end(const char *p, size_t from, size_t end)
{
    size_t i = from;
#ifdef __SSE2__
    const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), cr = _mm_set1_epi8('\r'),
                  vt = _mm_set1_epi8('\v'), ff = _mm_set1_epi8('\f');
    for (; i + 16 <= end; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, tab)),
                                         _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, vt)),
                                                      _mm_cmpeq_epi8(v, ff)));
        const unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m) {
            i += (size_t)__builtin_ctz(m);
            return p[i] == ' ' || p[i] == '\t' ? (long)i : -1;
        }
    }
#endif
    for (; i < end; ++i) {
        if (p[i] == ' ' || p[i] == '\t')
            return (long)i;
        if (p[i] == '\r' || p[i] == '\v' || p[i] == '\f')
            return -1;
    }
    return (long)end;
}

/* The same fields as sbf_fastx_read() on the plain form, where every choice it makes is
 * certain: the name ends at the first space or tab (any other white space, or a '\r' at a
 * line's end, is left to it), the bases are one line that cannot be taken for a header or a
 * '+' line, and the qualities one line of the same length. */
int sbf_fastq_span(const char *p, size_t n, sbf_fastq_span_t *s)
{
    if (!n)
        return 0;
    if (p[0] != '@')
        return -1;
    size_t nl[4];
    const int lines = find_newlines(p, 0, n, nl, 4);
    if (lines < 1)
        return 0;
    const size_t l1 = nl[0];
    const long q = name_end(p, 1, l1);
    if (q < 0 || p[l1 - 1] == '\r')
        return -1;
    s->name_len = (size_t)q - 1;
    s->name_end = (size_t)q;
    s->comment = (size_t)q < l1 ? (size_t)q + 1 : s->name_end;
    s->comment_len = (size_t)q < l1 ? l1 - ((size_t)q + 1) : 0;
    s->comment_end = l1;
    const size_t seq = l1 + 1;
    if (lines < 2)
        return 0;
    const size_t l2 = nl[1], len = l2 - seq;
    if (!len || p[seq] == '+' || p[seq] == '@' || p[seq] == '>' || p[l2 - 1] == '\r' || len > 0x7ffffffe)
        return -1;
    if (l2 + 1 >= n)
        return 0;
    if (p[l2 + 1] != '+')
        return -1;   /* bases on several lines, or no qualities */
    if (lines < 3)
        return 0;
    const size_t qual = nl[2] + 1, avail = n - qual;
    if (lines < 4)
        return avail >= len + 1 ? -1 : 0;   /* a longer line, or not all read yet */
    const size_t l4 = nl[3];
    if (l4 != qual + len || p[l4 - 1] == '\r')
        return -1;   /* qualities on several lines, or of another length */
    s->seq = seq;
    s->seq_len = len;
    s->qual = qual;
    s->size = l4 + 1;
    return 1;
}
