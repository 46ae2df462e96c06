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
