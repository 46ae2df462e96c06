/* sbf_batch.c -- fragments (single reads and pairs) in batches; see sbf_batch.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_error.h"
#include "../filters/sbf_helper.h"
#include "../filters/sbf_mem.h"
#include "sbf_batch.h"

/* Records of one mate file read past the end of the last batch: r[head .. end) wait. */
typedef struct {
    sbf_read_t *r;
    size_t head, end, cap;
} pending_t;

struct sbf_input_s {
    sbf_reader_t *rd[2];
    sbf_pairing_t pairing;
    sbf_read_t held;     /* one record read past the end of the previous batch */
    int has_held;
    long long pairs;     /* pairs completed, for error messages */
    size_t pairs_per_batch;   /* two files: after the first batch, both files are read at once,
                               * at most this many pairs a batch (grown while batches end on it) */
    pending_t pending[2];   /* two files: records one file read beyond the other's */
    /* two files: the thread that fills mate 2's share of each batch and checks half of its
     * pairs (started with the first parallel batch, kept for the run) */
    sbf_helper_t mate2;
};

void sbf_batch_free(sbf_batch_t *b)
{
    for (size_t i = 0; i < b->cap_reads; ++i)
        sbf_read_free(&b->reads[i]);
    free(b->reads);
    free(b->frags);
    sbf_pins_free(&b->pins);
    memset(b, 0, sizeof *b);
}

int sbf_input_new(sbf_reader_t *in1, sbf_reader_t *in2, sbf_pairing_t pairing, sbf_input_t **out)
{
    *out = NULL;
    sbf_input_t *in = calloc(1, sizeof *in);
    if (!in) {
        sbf_reader_close(in1);
        sbf_reader_close(in2);
        return sbf_error(SBF_E_NOMEM, "out of memory");
    }
    in->rd[0] = in1;
    in->rd[1] = in2;
    in->pairing = in2 ? SBF_PAIRS_TWO_FILES : pairing;
    *out = in;
    return SBF_OK;
}

int sbf_input_free(sbf_input_t *in)
{
    if (!in)
        return SBF_OK;
    sbf_helper_stop(&in->mate2);
    int rc = sbf_reader_close(in->rd[0]);
    int rc2 = sbf_reader_close(in->rd[1]);
    sbf_read_free(&in->held);
    for (int m = 0; m < 2; ++m) {
        for (size_t i = 0; i < in->pending[m].cap; ++i)
            sbf_read_free(&in->pending[m].r[i]);
        free(in->pending[m].r);
    }
    free(in);
    return rc ? rc : rc2;
}

long long sbf_input_in_place(const sbf_input_t *in, long long *ahead, double *fill, double *wait)
{
    *fill = *wait = 0;
    *ahead = 0;
    if (!in)
        return 0;
    *ahead = sbf_reader_parsed_ahead(in->rd[0]) + sbf_reader_parsed_ahead(in->rd[1]);
    for (int m = 0; m < 2; ++m) {
        double f, w;
        sbf_reader_times(in->rd[m], &f, &w);
        *fill = f > *fill ? f : *fill;
        *wait = w > *wait ? w : *wait;
    }
    return sbf_reader_in_place(in->rd[0]) + sbf_reader_in_place(in->rd[1]);
}

static void swap_reads(sbf_read_t *a, sbf_read_t *b)
{
    sbf_read_t t = *a;
    *a = *b;
    *b = t;
}

/* Room for `need` record slots in *r (of *cap): new slots are empty records. The slots are
 * cache-line aligned (a record is two lines): the two mate files' threads fill slots 2k and
 * 2k + 1 side by side, and slots sharing a line made the two cores fight over it. */
_Static_assert(sizeof(sbf_read_t) % 64 == 0, "a record slot is whole cache lines");

static int reserve_reads(sbf_read_t **r, size_t *cap, size_t need)
{
    if (need <= *cap)
        return SBF_OK;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *p = NULL;
    if (posix_memalign(&p, 64, c * sizeof **r) != 0)
        return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", need);
    if (*cap)
        memcpy(p, *r, *cap * sizeof **r);
    memset((sbf_read_t *)p + *cap, 0, (c - *cap) * sizeof **r);
    free(*r);
    *r = p;
    *cap = c;
    return SBF_OK;
}

/* Room for one more read (two in two-file mode) and one more fragment. */
static int reserve(sbf_batch_t *b)
{
    if (reserve_reads(&b->reads, &b->cap_reads, b->n_reads + 2) != SBF_OK)
        return SBF_E_NOMEM;
    if (b->n_frags + 1 > b->cap_frags) {
        size_t cap = b->cap_frags ? 2 * b->cap_frags : 1024;
        sbf_frag_t *f = realloc(b->frags, cap * sizeof *f);
        if (!f)
            return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", cap);
        b->frags = f;
        b->cap_frags = cap;
    }
    return SBF_OK;
}

/* Read the next record of file `which` (the held one first) into the batch's next slot. */
static int next_record(sbf_input_t *in, sbf_batch_t *b, int which, size_t *index)
{
    int rc = reserve(b);
    if (rc < 0)
        return rc;
    sbf_read_t *slot = &b->reads[b->n_reads];
    if (which == 0 && in->has_held) {
        swap_reads(slot, &in->held);
        in->has_held = 0;
        rc = 1;
    } else if ((rc = sbf_reader_read(in->rd[which], slot)) <= 0) {
        return rc;
    }
    slot->mate = 0;
    slot->frag = -1;
    *index = b->n_reads++;
    return 1;
}

/* The last record read waits for the next batch (with buffers of its own: the block it was
 * read into may be reused before then). */
static int unread_last(sbf_input_t *in, sbf_batch_t *b)
{
    swap_reads(&in->held, &b->reads[--b->n_reads]);
    in->has_held = 1;
    return sbf_read_own(&in->held);
}

static void add_frag(sbf_batch_t *b, size_t r1, size_t r2, int mates)
{
    sbf_frag_t *f = &b->frags[b->n_frags];
    f->read[0] = (uint32_t)r1;
    f->n = 1;
    b->reads[r1].frag = (int32_t)b->n_frags;
    b->bases += sbf_read_len(&b->reads[r1]);
    if (mates) {
        f->read[1] = (uint32_t)r2;
        f->n = 2;
        b->reads[r1].mate = 1;
        b->reads[r2].mate = 2;
        b->reads[r2].frag = (int32_t)b->n_frags;
        b->bases += sbf_read_len(&b->reads[r2]);
    }
    ++b->n_frags;
}

/* SAM mate number from the flags: 1, 2, or 0 when not a pairable primary record. */
static int flag_mate(const sbf_read_t *r)
{
    if (!r->sam)
        return 0;
    uint16_t f = r->b->core.flag;
    if (!(f & BAM_FPAIRED) || (f & SBF_SKIP_FLAGS))
        return 0;
    uint16_t which = f & (BAM_FREAD1 | BAM_FREAD2);
    return which == BAM_FREAD1 ? 1 : which == BAM_FREAD2 ? 2 : 0;
}

static int fill_by_flags(sbf_input_t *in, sbf_batch_t *b, uint64_t max_bases)
{
    long open = -1;   /* a fragment whose first read may still meet its mate */
    for (;;) {
        if (b->bases >= max_bases && open < 0)
            return 1;
        size_t i;
        int rc = next_record(in, b, 0, &i);
        if (rc <= 0)
            return rc;
        sbf_read_t *r = &b->reads[i];
        if (sbf_read_is_extra(r))
            continue;
        if (open >= 0) {
            sbf_frag_t *f = &b->frags[open];
            sbf_read_t *first = &b->reads[f->read[0]];
            int m1 = flag_mate(first), m2 = flag_mate(r);
            if (m2 && m1 + m2 == 3 && !strcmp(first->name.s, r->name.s)) {
                f->read[1] = (uint32_t)i;
                f->n = 2;
                first->mate = m1;
                r->mate = m2;
                r->frag = (int32_t)open;
                b->bases += sbf_read_len(r);
                open = -1;
                continue;
            }
            if (b->bases >= max_bases)   /* full: this record starts the next batch */
                return unread_last(in, b) == SBF_OK ? 1 : SBF_E_NOMEM;
        }
        add_frag(b, i, 0, 0);
        open = flag_mate(r) ? (long)b->n_frags - 1 : -1;
    }
}

static int fill_interleaved(sbf_input_t *in, sbf_batch_t *b, uint64_t max_bases)
{
    while (b->bases < max_bases) {
        size_t idx[2];
        for (int m = 0; m < 2; ++m) {
            int rc;
            do   /* secondary and supplementary records pass through between mates */
                rc = next_record(in, b, 0, &idx[m]);
            while (rc > 0 && sbf_read_is_extra(&b->reads[idx[m]]));
            if (rc < 0)
                return rc;
            if (rc == 0) {
                if (m == 0)
                    return b->n_reads > 0;
                const sbf_read_t *r = &b->reads[idx[0]];
                return sbf_error(SBF_E_FORMAT, "%s: '%.*s' is the last record and has no mate (odd number of "
                                 "records with --interleaved)", sbf_reader_path(in->rd[0]), (int)r->name.l, r->name.s);
            }
        }
        const sbf_read_t *a = &b->reads[idx[0]], *z = &b->reads[idx[1]];
        if (!sbf_mate_names_match(a->name.s, a->name.l, z->name.s, z->name.l))
            return sbf_error(SBF_E_FORMAT, "%s: interleaved mates differ: '%.*s' and '%.*s' (pair %lld)",
                             sbf_reader_path(in->rd[0]), (int)a->name.l, a->name.s, (int)z->name.l, z->name.s,
                             in->pairs + 1);
        add_frag(b, idx[0], idx[1], 1);
        ++in->pairs;
    }
    return 1;
}

static int reserve_pairs(sbf_batch_t *b, size_t pairs)
{
    if (reserve_reads(&b->reads, &b->cap_reads, 2 * pairs) != SBF_OK)
        return -1;
    if (b->cap_frags < pairs) {
        sbf_frag_t *f = realloc(b->frags, pairs * sizeof *f);
        if (!f)
            return -1;
        b->frags = f;
        b->cap_frags = pairs;
    }
    return 0;
}

/* One mate file's share of a batch, read on its own thread into the slots 2k + which (so the
 * batch keeps mates side by side): records left over from the last batch first, then new ones,
 * until `want` records or `max_bases` bases (at least one record). */
typedef struct mate_fill_s {
    sbf_input_t *in;
    sbf_batch_t *b;
    int which;
    size_t want, got;
    uint64_t max_bases, bases;
    int rc;
    char err[512];
} mate_fill_t;

static void *fill_mate(void *arg)
{
    mate_fill_t *m = arg;
    sbf_reader_t *rd = m->in->rd[m->which];
    pending_t *p = &m->in->pending[m->which];
    m->rc = 1;
    m->bases = 0;
    for (m->got = 0; m->got < m->want && m->bases < m->max_bases; ++m->got) {
        sbf_read_t *slot = &m->b->reads[2 * m->got + (size_t)m->which];
        if (p->head < p->end) {
            swap_reads(slot, &p->r[p->head]);
            sbf_read_release(&p->r[p->head++]);   /* the slot's old record: nothing kept */
        } else if ((m->rc = sbf_reader_read(rd, slot)) <= 0) {
            break;
        }
        slot->mate = 0;
        slot->frag = -1;
        m->bases += sbf_read_len(slot);
    }
    if (m->rc < 0)
        snprintf(m->err, sizeof m->err, "%s", sbf_error_message());
    return NULL;
}

/* The records of file `which` in slots of pairs [from, to) wait for the next batch, before the
 * file's other waiting records (those were read later). */
static int hold_back(sbf_input_t *in, sbf_batch_t *b, int which, size_t from, size_t to)
{
    pending_t *p = &in->pending[which];
    size_t k = to - from;
    if (p->head == p->end) {
        p->head = p->end = 0;
        if (reserve_reads(&p->r, &p->cap, k) != SBF_OK)
            return SBF_E_NOMEM;
        p->end = k;
    } else {
        /* records were still waiting, so this batch's came from them (none was read): they go
         * back where they were */
        p->head -= k;
    }
    for (size_t j = 0; j < k; ++j) {
        swap_reads(&p->r[p->head + j], &b->reads[2 * (from + j) + (size_t)which]);
        if (sbf_read_own(&p->r[p->head + j]) != SBF_OK)   /* its block may be reused before then */
            return SBF_E_NOMEM;
    }
    return SBF_OK;
}

/* Pairs [from, to) of a batch, reads 2k and 2k + 1: names checked, fragments made; `bad`
 * the first pair whose names differ (`to` when none). Disjoint ranges run in parallel. */
typedef struct {
    sbf_batch_t *b;
    size_t from, to, bad;
    uint64_t bases;
} pair_range_t;

static void *pair_range(void *arg)
{
    pair_range_t *pr = arg;
    sbf_batch_t *b = pr->b;
    pr->bases = 0;
    for (size_t k = pr->from; k < pr->to; ++k) {
        sbf_read_t *a = &b->reads[2 * k], *z = &b->reads[2 * k + 1];
        if (!sbf_mate_names_match(a->name.s, a->name.l, z->name.s, z->name.l)) {
            pr->bad = k;
            return NULL;
        }
        b->frags[k] = (sbf_frag_t){{(uint32_t)(2 * k), (uint32_t)(2 * k + 1)}, 2};
        a->frag = z->frag = (int32_t)k;
        a->mate = 1;
        z->mate = 2;
        pr->bases += sbf_read_len(a) + sbf_read_len(z);
    }
    pr->bad = pr->to;
    return NULL;
}

/* The batch's pairs (reads 2k and 2k + 1) checked and made fragments: two halves on two
 * threads when there are many (the pairing was a tenth of the reading, on one thread). */
static int pair_up(sbf_input_t *in, sbf_batch_t *b, size_t pairs)
{
    pair_range_t pr[2] = {{b, 0, pairs / 2, 0, 0}, {b, pairs / 2, pairs, 0, 0}};
    if (pairs < 1024 || !sbf_helper_run(&in->mate2, pair_range, &pr[1])) {
        pair_range(&pr[0]);
        if (pr[0].bad == pr[0].to)
            pair_range(&pr[1]);
    } else {
        pair_range(&pr[0]);
        sbf_helper_wait(&in->mate2);
    }
    size_t bad = pr[0].bad < pr[0].to ? pr[0].bad : pr[1].bad;
    if (bad < pairs) {
        const sbf_read_t *a = &b->reads[2 * bad], *z = &b->reads[2 * bad + 1];
        return sbf_error(SBF_E_FORMAT, "mate names differ at pair %lld: '%.*s' in %s and '%.*s' in %s",
                         in->pairs + (long long)bad + 1, (int)a->name.l, a->name.s, sbf_reader_path(in->rd[0]),
                         (int)z->name.l, z->name.s, sbf_reader_path(in->rd[1]));
    }
    b->n_frags = pairs;
    b->bases += pr[0].bases + pr[1].bases;
    in->pairs += (long long)pairs;
    return SBF_OK;
}

/* After the first batch: both files read at once, one thread each (parsing is the reader's
 * cost; the mate files are independent streams). Each file stops at half the batch's bases, so
 * a batch stays within -K when the reads grow longer (a count of pairs taken from the first
 * batch did not: 500 short pairs then long ones made batches of 500 long pairs); the records
 * one file read beyond the other's wait for the next batch. */
static int fill_two_files_parallel(sbf_input_t *in, sbf_batch_t *b, uint64_t max_bases)
{
    const size_t want = in->pairs_per_batch;
    if (reserve_pairs(b, want) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu pairs", want);
    const uint64_t half = max_bases / 2 ? max_bases / 2 : 1;
    mate_fill_t m[2] = {{in, b, 0, want, 0, half, 0, 0, ""}, {in, b, 1, want, 0, half, 0, 0, ""}};
    int threaded = sbf_helper_run(&in->mate2, fill_mate, &m[1]);
    fill_mate(&m[0]);
    if (threaded)
        sbf_helper_wait(&in->mate2);
    else
        fill_mate(&m[1]);   /* no thread: one after the other */
    for (int i = 0; i < 2; ++i)
        if (m[i].rc < 0)
            return sbf_error(m[i].rc, "%s", m[i].err);
    size_t n = m[0].got < m[1].got ? m[0].got : m[1].got;
    if (m[0].got != m[1].got) {
        int longer = m[0].got > m[1].got ? 0 : 1;
        if (m[!longer].rc == 0)   /* the other file has ended */
            return sbf_error(SBF_E_FORMAT, "%s ends after %lld reads but %s goes on: the mate files hold different "
                             "numbers of reads", sbf_reader_path(in->rd[!longer]), in->pairs + (long long)n,
                             sbf_reader_path(in->rd[longer]));
        int rc = hold_back(in, b, longer, n, m[longer].got);
        if (rc < 0)
            return rc;
    }
    b->n_reads = 2 * n;
    int rc = pair_up(in, b, n);
    if (rc < 0)
        return rc;
    /* the batch ended on the count of pairs, short of its bases: allow more next time (pairs
     * of fewer bases than the first batch's); the cap keeps reads of no bases from growing it
     * without end */
    if (n == want && m[0].bases < half && m[1].bases < half && want < (size_t)(max_bases / 16) + 1024)
        in->pairs_per_batch = 2 * want;
    return b->n_reads > 0;
}

static int fill_two_files(sbf_input_t *in, sbf_batch_t *b, uint64_t max_bases)
{
    if (in->pairs_per_batch)
        return fill_two_files_parallel(in, b, max_bases);
    const char *p1 = sbf_reader_path(in->rd[0]), *p2 = sbf_reader_path(in->rd[1]);
    while (b->bases < max_bases) {
        size_t i1 = 0, i2 = 0;
        int rc1 = next_record(in, b, 0, &i1);
        if (rc1 < 0)
            return rc1;
        int rc2 = next_record(in, b, 1, &i2);
        if (rc2 < 0)
            return rc2;
        if (rc1 != rc2)
            return sbf_error(SBF_E_FORMAT, "%s ends after %lld reads but %s goes on: the mate files hold "
                             "different numbers of reads", rc1 ? p2 : p1, in->pairs, rc1 ? p1 : p2);
        if (rc1 == 0)
            return b->n_reads > 0;
        const sbf_read_t *a = &b->reads[i1], *z = &b->reads[i2];
        if (!sbf_mate_names_match(a->name.s, a->name.l, z->name.s, z->name.l))
            return sbf_error(SBF_E_FORMAT, "mate names differ at pair %lld: '%.*s' in %s and '%.*s' in %s",
                             in->pairs + 1, (int)a->name.l, a->name.s, p1, (int)z->name.l, z->name.s, p2);
        add_frag(b, i1, i2, 1);
        ++in->pairs;
    }
    in->pairs_per_batch = b->n_frags;   /* a full batch: the size of the next ones */
    return 1;
}

int sbf_input_next(sbf_input_t *in, sbf_batch_t *b, uint64_t max_bases)
{
    const size_t had = b->n_reads;   /* slots the last use of b filled */
    sbf_pins_release(&b->pins);       /* its records are done with */
    b->n_reads = b->n_frags = 0;
    b->bases = 0;
    int rc;
    switch (in->pairing) {
    case SBF_PAIRS_TWO_FILES: rc = fill_two_files(in, b, max_bases); break;
    case SBF_PAIRS_INTERLEAVED: rc = fill_interleaved(in, b, max_bases); break;
    default: rc = fill_by_flags(in, b, max_bases); break;
    }
    if (rc < 0)
        return rc;
    for (int m = 0; m < 2; ++m)
        if (in->rd[m] && (rc = sbf_reader_pin(in->rd[m], &b->pins)) != SBF_OK)
            return rc;
    /* slots filled last time and not now keep no long read's buffers (a later batch of fewer
     * reads would otherwise leave them there for good) */
    for (size_t i = b->n_reads; i < had && i < b->cap_reads; ++i)
        sbf_read_release(&b->reads[i]);
    return b->n_reads > 0;
}
