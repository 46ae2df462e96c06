/* fastx_diff.h -- sbf's FASTA/FASTQ parser (bam/sbf_fastx.c) and htslib's kseq, which it
 * replaced, run side by side over bytes in memory; shared by tests/test_fastx.c and the
 * fuzz_fastx libFuzzer target. Include once per program (it instantiates kseq). */
#ifndef SBF_FASTX_DIFF_H
#define SBF_FASTX_DIFF_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <htslib/kseq.h>

#include "../../bam/sbf_fastx.h"

/* A memory "file" read in pieces of at most `piece` bytes, so buffer refills land anywhere. */
typedef struct {
    const char *data;
    size_t len, at, piece;
} fastx_mem_t;

static int fastx_mem_read(void *f, void *buf, int len)
{
    fastx_mem_t *m = f;
    size_t n = m->len - m->at, want = (size_t)len < m->piece ? (size_t)len : m->piece;
    n = n < want ? n : want;
    memcpy(buf, m->data + m->at, n);
    m->at += n;
    return (int)n;
}

static int fastx_kseq_read(fastx_mem_t *m, void *buf, int len) { return fastx_mem_read(m, buf, len); }

KSEQ_INIT(fastx_mem_t *, fastx_kseq_read)

static int fastx_same(const kstring_t *a, const kstring_t *b)
{
    return a->l == b->l && (a->l == 0 || memcmp(a->s, b->s, a->l) == 0);
}

/* One record of kseq (code r1) against the other parser's (code r2, strings f[4]: name,
 * comment, sequence, qualities): 1 they agree, 0 both ended, -1 they differ (described in why,
 * `who` the other parser, `how` the circumstances). */
static int fastx_same_record(const kseq_t *ks, int r1, int r2, const kstring_t f[4], int record, const char *who,
                             const char *how, char *why, size_t why_size)
{
    if (r1 != r2) {
        snprintf(why, why_size, "record %d: kseq returns %d, %s %d (%s)", record, r1, who, r2, how);
        return -1;
    }
    if (r1 < 0)
        return 0;
    if (!fastx_same(&ks->name, &f[0]) || !fastx_same(&ks->comment, &f[1]) || !fastx_same(&ks->seq, &f[2]) ||
        !fastx_same(&ks->qual, &f[3])) {
        snprintf(why, why_size, "record %d ('%s'): the strings differ (%s)", record, ks->name.s ? ks->name.s : "", how);
        return -1;
    }
    return 1;
}

/* A sequence sink (sbf_fastx_t's seq_sink) that keeps what it is handed. */
static int fastx_sink_keep(void *arg, const char *s, size_t n) { return kputsn(s, n, arg) < 0 ? -1 : 0; }

/* Both parsers over data[0..len) in pieces of `piece` bytes, at most max_records records, and
 * sbf_fastx a second time handing each record's sequence to a sink every 3 to 9 bytes (a build's
 * chromosomes): the records read (>= 0) when every code and every string agree (the sink's
 * bytes and the rest together as the sequence), else -1 with the first difference described in
 * why. */
static int fastx_diff(const char *data, size_t len, size_t piece, int max_records, char *why, size_t why_size)
{
    fastx_mem_t a = {data, len, 0, piece}, b = a, c = a;
    kseq_t *ks = kseq_init(&a);
    sbf_fastx_t *fx = sbf_fastx_init(fastx_mem_read, &b), *fs = sbf_fastx_init(fastx_mem_read, &c);
    kstring_t flushed = {0, 0, NULL}, whole = {0, 0, NULL};
    int records = 0, differ = 0;
    if (!ks || !fx || !fs) {
        snprintf(why, why_size, "out of memory");
        differ = 1;
    } else {
        fs->seq_sink = fastx_sink_keep;
        fs->sink_arg = &flushed;
        fs->sink_at = 3 + piece % 7;
    }
    char how[32], how_sink[64];
    snprintf(how, sizeof how, "pieces of %zu", piece);
    snprintf(how_sink, sizeof how_sink, "pieces of %zu, a sink every %zu bytes", piece, 3 + piece % 7);
    while (!differ && records < max_records) {
        flushed.l = 0;
        int r1 = kseq_read(ks), r2 = sbf_fastx_read(fx), r3 = sbf_fastx_read(fs);
        const kstring_t f[4] = {fx->name, fx->comment, fx->seq, fx->qual};
        int same = fastx_same_record(ks, r1, r2, f, records, "sbf_fastx", how, why, why_size);
        if (same >= 0) {   /* the same codes and strings from the parser with a sink */
            whole.l = 0;
            if (kputsn(flushed.s ? flushed.s : "", flushed.l, &whole) < 0 ||
                kputsn(fs->seq.s ? fs->seq.s : "", fs->seq.l, &whole) < 0) {
                snprintf(why, why_size, "out of memory");
                same = -1;
            } else {
                const kstring_t g[4] = {fs->name, fs->comment, whole, fs->qual};
                if (fastx_same_record(ks, r1, r3, g, records, "sbf_fastx with a sink", how_sink, why, why_size) < 0)
                    same = -1;
            }
        }
        if (same == 0)
            break;
        differ = same < 0;
        records += same > 0;
    }
    kseq_destroy(ks);
    sbf_fastx_destroy(fx);
    sbf_fastx_destroy(fs);
    free(flushed.s);
    free(whole.s);
    return differ ? -1 : records;
}

/* The in-place path of sbf_reads.c against kseq: records taken with sbf_fastq_span() while
 * they have the plain form, then, from the first that has not (or that the data ends inside),
 * sbf_fastx_read() primed with the first `prime` bytes left and reading the rest in pieces of
 * `piece` bytes. The same contract as fastx_diff(). */
static int fastx_diff_span(const char *data, size_t len, size_t prime, size_t piece, int max_records, char *why,
                           size_t why_size)
{
    fastx_mem_t a = {data, len, 0, 1u << 30}, rest = {data, len, 0, piece};
    kseq_t *ks = kseq_init(&a);
    sbf_fastx_t *fx = NULL;
    size_t pos = 0;
    int records = 0, differ = !ks;
    if (differ)
        snprintf(why, why_size, "out of memory");
    while (!differ && records < max_records) {
        int r1 = kseq_read(ks), r2;
        kstring_t name = {0, 0, NULL}, comment = name, seq = name, qual = name;
        sbf_fastq_span_t sp;
        if (!fx && pos < len && sbf_fastq_span(data + pos, len - pos, &sp) > 0) {
            const char *p = data + pos;
            name = (kstring_t){sp.name_len, 0, (char *)p + 1};
            comment = (kstring_t){sp.comment_len, 0, (char *)p + sp.comment};
            seq = (kstring_t){sp.seq_len, 0, (char *)p + sp.seq};
            qual = (kstring_t){sp.seq_len, 0, (char *)p + sp.qual};
            r2 = (int)sp.seq_len;
            pos += sp.size;
        } else if (!fx && pos == len) {
            r2 = -1;
        } else {
            if (!fx) {   /* kseq's parser takes over at pos, as leave_in_place() hands it over */
                size_t k = len - pos < prime ? len - pos : prime;
                rest.at = pos + k;
                if (!(fx = sbf_fastx_init(fastx_mem_read, &rest)) || sbf_fastx_prime(fx, data + pos, k) < 0) {
                    snprintf(why, why_size, "out of memory");
                    differ = 1;
                    break;
                }
            }
            r2 = sbf_fastx_read(fx);
            name = fx->name, comment = fx->comment, seq = fx->seq, qual = fx->qual;
        }
        const kstring_t f[4] = {name, comment, seq, qual};
        int same = fastx_same_record(ks, r1, r2, f, records, "in place",
                                     fx ? "after the hand-over" : "parsed in place", why, why_size);
        if (same == 0)
            break;
        differ = same < 0;
        records += same > 0;
    }
    kseq_destroy(ks);
    sbf_fastx_destroy(fx);
    return differ ? -1 : records;
}

#endif
