/* sbf_ahead.c -- see sbf_ahead.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../filters/sbf_clock.h"
#include "../filters/sbf_error.h"
#include "sbf_ahead.h"

#define MAX_WORKERS 4
#define DEPTH_MAX (MAX_WORKERS + 1)

enum { SLOT_FREE, SLOT_ASKED, SLOT_FILLING, SLOT_FILLED };

typedef struct {
    sbf_block_t *b;
    long long off;       /* a mapped file: the window's offset */
    ssize_t n;
    sbf_spans_t spans;
    int state;
} slot_t;

struct sbf_ahead_s {
    sbf_ahead_opt_t o;
    int n_workers, depth;
    pthread_t tid[MAX_WORKERS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    slot_t slot[DEPTH_MAX];
    unsigned long long asked, taken;   /* blocks asked for and taken, in order */
    long long next_off;                /* a mapped file: the next window asked for */
    int quit;
    double busy;
};

/* The first record start of data[from..end) the reader may arrive at: a line that starts with
 * '@' and opens a record of the plain form followed by another (or by the window's end). The
 * reader checks the guess: it takes these records only on landing exactly on one. */
static size_t sync_point(const char *d, size_t from, size_t end, int at_file_start)
{
    size_t p = from;
    if (!at_file_start) {
        const char *nl = memchr(d + from, '\n', end - from);
        p = nl ? (size_t)(nl - d) + 1 : end;
    }
    while (p < end) {
        sbf_fastq_span_t a, b;
        if (d[p] == '@' && sbf_fastq_span(d + p, end - p, &a) > 0 &&
            (p + a.size == end || sbf_fastq_span(d + p + a.size, end - p - a.size, &b) >= 0))
            return p;
        const char *nl = memchr(d + p, '\n', end - p);
        p = nl ? (size_t)(nl - d) + 1 : end;
    }
    return end;
}

/* The records of data[headroom, headroom + n) from its first record start on, while they have
 * the plain form and lie whole in the window. */
static void parse_ahead(const sbf_ahead_t *a, slot_t *s)
{
    s->spans.n = 0;
    if (s->n <= 0)
        return;
    const char *d = s->b->data;
    const size_t end = a->o.headroom + (size_t)s->n;
    size_t p = sync_point(d, a->o.headroom, end, s->off == 0);
    sbf_fastq_span_t sp;
    while (p < end && sbf_fastq_span(d + p, end - p, &sp) > 0) {
        if (s->spans.n == s->spans.cap) {
            size_t cap = s->spans.cap ? 2 * s->spans.cap : 4096;
            sbf_fastq_span_t *nsp = realloc(s->spans.sp, cap * sizeof *nsp);
            if (nsp)
                s->spans.sp = nsp;
            size_t *nat = nsp ? realloc(s->spans.at, cap * sizeof *nat) : NULL;
            if (!nat)
                return;   /* the records parsed so far are kept; the reader parses the rest */
            s->spans.at = nat;
            s->spans.cap = cap;
        }
        s->spans.sp[s->spans.n] = sp;
        s->spans.at[s->spans.n++] = p;
        p += sp.size;
    }
}

static void fill(sbf_ahead_t *a, slot_t *s)
{
    sbf_block_t *b = s->b;
    size_t at = a->o.headroom;
    ssize_t n = 0;
    if (a->o.fd >= 0) {   /* the window, its pages mapped now */
        long long left = a->o.file_size - s->off;
        size_t len = left <= 0 ? 0 : left < (long long)a->o.window ? (size_t)left : a->o.window;
        b->origin = s->off - (long long)a->o.headroom;
        if (len > 0 && mmap(b->data + at, len, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, a->o.fd,
                            (off_t)s->off) == MAP_FAILED)
            n = -1;
        else
            at += len;
    } else {
        while (at < b->cap && (n = sbf_source_read(a->o.src, b->data + at, b->cap - at)) > 0)
            at += (size_t)n;
    }
    s->n = n < 0 ? -1 : (ssize_t)(at - a->o.headroom);
    if (a->o.fd >= 0)
        parse_ahead(a, s);
}

static void *worker_main(void *arg)
{
    sbf_ahead_t *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        slot_t *s = NULL;
        /* the oldest block asked for and not taken by another thread: a stream's blocks are
         * filled in order because it has one thread */
        for (unsigned long long q = a->taken; q < a->asked && !s; ++q)
            if (a->slot[q % DEPTH_MAX].state == SLOT_ASKED)
                s = &a->slot[q % DEPTH_MAX];
        if (!s) {
            if (a->quit)
                break;
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        s->state = SLOT_FILLING;
        pthread_mutex_unlock(&a->mu);
        const double t0 = sbf_now();
        fill(a, s);
        const double t = sbf_now() - t0;
        pthread_mutex_lock(&a->mu);
        a->busy += t;
        s->state = SLOT_FILLED;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int sbf_ahead_open(const sbf_ahead_opt_t *o, sbf_ahead_t **out)
{
    *out = NULL;
    sbf_ahead_t *a = calloc(1, sizeof *a);
    if (!a)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    a->o = *o;
    a->n_workers = o->fd >= 0 ? (o->workers < 1 ? 1 : o->workers > MAX_WORKERS ? MAX_WORKERS : o->workers) : 1;
    a->depth = o->fd >= 0 ? a->n_workers + 1 : 1;
    if (pthread_mutex_init(&a->mu, NULL) != 0) {
        free(a);
        return sbf_error(SBF_E_THREAD, "cannot start the reading threads");
    }
    if (pthread_cond_init(&a->cv, NULL) != 0) {
        pthread_mutex_destroy(&a->mu);
        free(a);
        return sbf_error(SBF_E_THREAD, "cannot start the reading threads");
    }
    for (int i = 0; i < a->n_workers; ++i)
        if (pthread_create(&a->tid[i], NULL, worker_main, a) != 0) {
            a->n_workers = i;
            sbf_ahead_close(a, NULL);
            return sbf_error(SBF_E_THREAD, "cannot start the reading threads");
        }
    *out = a;
    return SBF_OK;
}

int sbf_ahead_depth(const sbf_ahead_t *a) { return a->depth; }

void sbf_ahead_ask(sbf_ahead_t *a, sbf_block_t *b)
{
    pthread_mutex_lock(&a->mu);
    slot_t *s = &a->slot[a->asked++ % DEPTH_MAX];
    s->b = b;
    s->off = a->next_off;
    a->next_off += (long long)a->o.window;
    s->n = 0;
    s->spans.n = 0;
    s->state = SLOT_ASKED;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

sbf_block_t *sbf_ahead_take(sbf_ahead_t *a, ssize_t *n, sbf_spans_t *spans, double *waited)
{
    *n = 0;
    *waited = 0;
    if (spans)
        spans->n = 0;
    pthread_mutex_lock(&a->mu);
    if (a->taken == a->asked) {
        pthread_mutex_unlock(&a->mu);
        return NULL;
    }
    slot_t *s = &a->slot[a->taken % DEPTH_MAX];
    const double t0 = sbf_now();
    while (s->state != SLOT_FILLED)
        pthread_cond_wait(&a->cv, &a->mu);
    *waited = sbf_now() - t0;
    sbf_block_t *b = s->b;
    *n = s->n;
    if (spans) {   /* swapped: each side reuses the other's arrays */
        sbf_spans_t t = *spans;
        *spans = s->spans;
        s->spans = t;
        s->spans.n = 0;
    }
    s->b = NULL;
    s->state = SLOT_FREE;
    ++a->taken;
    pthread_mutex_unlock(&a->mu);
    return b;
}

void sbf_ahead_close(sbf_ahead_t *a, double *busy)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->quit = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    /* the threads finish what they fill (a block being filled is theirs), then see quit with
     * nothing asked: blocks still asked are left to go back below */
    for (int i = 0; i < a->n_workers; ++i)
        pthread_join(a->tid[i], NULL);
    for (int i = 0; i < DEPTH_MAX; ++i) {
        sbf_block_put(a->slot[i].b);
        sbf_spans_free(&a->slot[i].spans);
    }
    if (busy)
        *busy = a->busy;
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

double sbf_ahead_busy(sbf_ahead_t *a)
{
    pthread_mutex_lock(&a->mu);
    double b = a->busy;
    pthread_mutex_unlock(&a->mu);
    return b;
}

void sbf_spans_free(sbf_spans_t *s)
{
    free(s->sp);
    free(s->at);
    memset(s, 0, sizeof *s);
}
