/* sbf_seqio.c -- name and bases of each record, on top of the full-record reader (sbf_reads.c). */
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_error.h"
#include "sbf_reads.h"
#include "sbf_seqio.h"

struct sbf_seqfile_s {
    sbf_reader_t *rd;
    sbf_read_t rec;
    htsThreadPool pool;
};

int sbf_seqfile_open(const char *path, int threads, sbf_seqfile_t **out)
{
    *out = NULL;
    sbf_seqfile_t *f = calloc(1, sizeof *f);
    if (!f)
        return sbf_error(SBF_E_NOMEM, "out of memory opening %s", path);
    if (threads > 0) {
        if (!(f->pool.pool = hts_tpool_init(threads))) {
            free(f);
            return sbf_error(SBF_E_THREAD, "%s: cannot start decompression threads", path);
        }
        f->pool.qsize = 2 * threads;
    }
    sbf_reader_opt_t opt = {.pool = &f->pool, .reference = NULL, .parallel_gzip = 1};
    int rc = sbf_reader_open(path, &opt, &f->rd);
    if (rc != SBF_OK) {
        sbf_seqfile_close(f);
        return rc;
    }
    *out = f;
    return SBF_OK;
}

int sbf_seqfile_read(sbf_seqfile_t *f, sbf_seqrec_t *rec)
{
    int rc = sbf_reader_read(f->rd, &f->rec);
    if (rc <= 0)
        return rc;
    /* Swap rather than copy: the record's strings become rec's, rec's old buffers are reused. */
    kstring_t t = rec->name;
    rec->name = f->rec.name;
    f->rec.name = t;
    t = rec->seq;
    rec->seq = f->rec.seq;
    f->rec.seq = t;
    return 1;
}

int sbf_seqfile_seq_sink(sbf_seqfile_t *f, int (*fn)(void *arg, const char *s, size_t n), void *arg)
{
    return sbf_reader_seq_sink(f->rd, fn, arg);
}

const char *sbf_seqfile_format(const sbf_seqfile_t *f) { return sbf_reader_format(f->rd); }
int sbf_seqfile_read_error(const sbf_seqfile_t *f, long long records) { return sbf_reader_read_error(f->rd, records); }

ssize_t sbf_seqfile_raw(sbf_seqfile_t *f, void *buf, size_t len) { return sbf_reader_raw(f->rd, buf, len); }

int sbf_seqfile_close(sbf_seqfile_t *f)
{
    if (!f)
        return SBF_OK;
    int rc = sbf_reader_close(f->rd);
    sbf_read_free(&f->rec);
    if (f->pool.pool)
        hts_tpool_destroy(f->pool.pool);
    free(f);
    return rc;
}

void sbf_seqrec_free(sbf_seqrec_t *rec)
{
    free(rec->name.s);
    free(rec->seq.s);
    memset(rec, 0, sizeof *rec);
}
