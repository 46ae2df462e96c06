/* sbf_fastx.c -- see sbf_fastx.h. The control flow is kseq_read()'s and ks_getuntil2()'s
 * (htslib 1.16 kseq.h, MIT licence, Heng Li), so headers, comments, multi-line sequences and
 * qualities, '\r' line ends, junk before the first record and truncations are handled exactly
 * as htslib's kseq handles them; only the scanning and the buffer size differ. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
    if (x->seq.l > (size_t)0x7ffffffe || ks_resize(&x->seq, x->seq.l + 2) < 0)
        return -3;
    x->seq.s[x->seq.l] = '\0';
    if (c != '+')
        return (int)x->seq.l;   /* FASTA */
    if (ks_resize(&x->qual, x->seq.l + 2) < 0)
        return -3;
    while ((c = get_char(x)) != -1 && c != '\n')
        ;   /* the rest of the '+' line */
    if (c == -1)
        return -2;   /* no quality line */
    while ((rc = get_until(x, SEP_LINE, &x->qual, NULL, 1)) >= 0 && x->qual.l < x->seq.l)
        ;
    if (rc == -3)
        return -3;
    x->last_char = 0;
    if (x->seq.l != x->qual.l)
        return -2;
    return (int)x->seq.l;
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
    const char *end = p + n;
    const char *l1 = memchr(p, '\n', n);
    if (!l1)
        return 0;
    const char *q = p + 1;
    while (q < l1 && *q != ' ' && *q != '\t') {
        if (*q == '\r' || *q == '\v' || *q == '\f')
            return -1;
        ++q;
    }
    if (l1[-1] == '\r')
        return -1;
    s->name_len = (size_t)(q - (p + 1));
    s->name_end = (size_t)(q - p);
    s->comment = q < l1 ? (size_t)(q + 1 - p) : s->name_end;
    s->comment_len = q < l1 ? (size_t)(l1 - (q + 1)) : 0;
    s->comment_end = (size_t)(l1 - p);
    const char *seq = l1 + 1;
    if (seq >= end)
        return 0;
    const char *l2 = memchr(seq, '\n', (size_t)(end - seq));
    if (!l2)
        return 0;
    size_t len = (size_t)(l2 - seq);
    if (!len || *seq == '+' || *seq == '@' || *seq == '>' || l2[-1] == '\r' || len > 0x7ffffffe)
        return -1;
    if (l2 + 1 >= end)
        return 0;
    if (l2[1] != '+')
        return -1;   /* bases on several lines, or no qualities */
    const char *l3 = memchr(l2 + 1, '\n', (size_t)(end - (l2 + 1)));
    if (!l3)
        return 0;
    const char *qual = l3 + 1;
    size_t avail = (size_t)(end - qual), look = avail < len + 1 ? avail : len + 1;
    const char *l4 = memchr(qual, '\n', look);
    if (!l4)
        return look == len + 1 ? -1 : 0;   /* a longer line, or not all read yet */
    if (l4 != qual + len || l4[-1] == '\r')
        return -1;   /* qualities on several lines, or of another length */
    s->seq = (size_t)(seq - p);
    s->seq_len = len;
    s->qual = (size_t)(qual - p);
    s->size = (size_t)(l4 + 1 - p);
    return 1;
}
