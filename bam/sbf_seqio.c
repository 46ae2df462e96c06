/* sbf_seqio.c -- one reader for every sequence format: FASTA/FASTQ through kseq over BGZF
 * (which reads plain, gzip and BGZF alike), SAM/BAM/CRAM through sam_read1. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/kseq.h>
#include <htslib/sam.h>

#include "../filters/sbf_error.h"
#include "sbf_seqio.h"

/* kseq treats a failed read as garbage: report end of data and remember the failure. */
typedef struct {
    BGZF *bgzf;
    int failed;
} guarded_bgzf_t;

static int guarded_read(guarded_bgzf_t *g, void *buf, int len)
{
    ssize_t n = bgzf_read(g->bgzf, buf, (size_t)len);
    if (n < 0) {
        g->failed = 1;
        return 0;
    }
    return (int)n;
}

KSEQ_INIT(guarded_bgzf_t *, guarded_read)

struct sbf_seqfile_s {
    char *path;
    enum { SEQ_FASTX, SEQ_SAM } kind;
    const char *format;
    guarded_bgzf_t in;
    kseq_t *kseq;
    htsFile *hts;
    sam_hdr_t *hdr;
    bam1_t *b;
    long long n_records;
    int read_failed;   /* a read already reported the problem: closing must not mask it */
};

static const char *format_name(enum htsExactFormat f)
{
    switch (f) {
    case fasta_format: return "FASTA";
    case fastq_format: return "FASTQ";
    case sam: return "SAM";
    case bam: return "BAM";
    case cram: return "CRAM";
    default: return NULL;
    }
}

int sbf_seqfile_open(const char *path, int threads, sbf_seqfile_t **out)
{
    *out = NULL;
    sbf_seqfile_t *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return sbf_error(SBFI_E_NOMEM, "out of memory opening %s", path);
    }
    int rc = SBFI_OK;
    hFILE *hf = hopen(path, "r");
    if (!hf) {
        rc = sbf_error_errno(SBFI_E_IO, errno, "%s: cannot open", path);
        goto fail;
    }
    htsFormat fmt;
    if (hts_detect_format2(hf, path, &fmt) < 0) {
        rc = sbf_error_errno(SBFI_E_IO, errno, "%s: cannot read", path);
        hclose_abruptly(hf);
        goto fail;
    }
    f->format = format_name(fmt.format);
    if (fmt.format == empty_format)
        f->format = "empty";   /* an empty input holds no records: not an error here */
    if (fmt.format == fasta_format || fmt.format == fastq_format || fmt.format == empty_format) {
        f->kind = SEQ_FASTX;
        if (!(f->in.bgzf = bgzf_hopen(hf, "r"))) {
            rc = sbf_error(SBFI_E_FORMAT, "%s: cannot read the compressed stream", path);
            hclose_abruptly(hf);
            goto fail;
        }
        if (threads > 0 && f->in.bgzf->is_compressed && bgzf_mt(f->in.bgzf, threads, 64) < 0) {
            rc = sbf_error(SBFI_E_THREAD, "%s: cannot start decompression threads", path);
            goto fail;
        }
        if (!(f->kseq = kseq_init(&f->in))) {
            rc = sbf_error(SBFI_E_NOMEM, "out of memory opening %s", path);
            goto fail;
        }
    } else if (fmt.format == sam || fmt.format == bam || fmt.format == cram) {
        f->kind = SEQ_SAM;
        if (!(f->hts = hts_hopen(hf, path, "r"))) {
            rc = sbf_error(SBFI_E_FORMAT, "%s: cannot open as %s", path, f->format);
            hclose_abruptly(hf);
            goto fail;
        }
        if (threads > 0 && hts_set_threads(f->hts, threads) < 0) {
            rc = sbf_error(SBFI_E_THREAD, "%s: cannot start decompression threads", path);
            goto fail;
        }
        if (!(f->hdr = sam_hdr_read(f->hts))) {
            rc = sbf_error(SBFI_E_FORMAT, "%s: cannot read the %s header", path, f->format);
            goto fail;
        }
        if (!(f->b = bam_init1())) {
            rc = sbf_error(SBFI_E_NOMEM, "out of memory opening %s", path);
            goto fail;
        }
    } else {
        char *desc = hts_format_description(&fmt);
        rc = sbf_error(SBFI_E_FORMAT, "%s: not FASTA, FASTQ, SAM, BAM or CRAM (looks like %s)", path,
                       desc ? desc : "unknown data");
        free(desc);
        hclose_abruptly(hf);
        goto fail;
    }
    *out = f;
    return SBFI_OK;

fail:
    sbf_seqfile_close(f);
    return rc;
}

static int kstring_set(kstring_t *ks, const char *s, size_t len)
{
    ks->l = 0;
    return kputsn(s, len, ks) < 0 ? -1 : 0;
}

static int seqfile_read(sbf_seqfile_t *f, sbf_seqrec_t *rec);

int sbf_seqfile_read(sbf_seqfile_t *f, sbf_seqrec_t *rec)
{
    int rc = seqfile_read(f, rec);
    if (rc < 0)
        f->read_failed = 1;
    return rc;
}

static int seqfile_read(sbf_seqfile_t *f, sbf_seqrec_t *rec)
{
    if (f->kind == SEQ_FASTX) {
        int n = kseq_read(f->kseq);
        if (f->in.failed)
            return sbf_error(SBFI_E_FORMAT, "%s: read error or truncated compressed data after %lld records",
                             f->path, f->n_records);
        if (n == -1)
            return 0;
        if (n == -2)
            return sbf_error(SBFI_E_FORMAT, "%s: record '%s': quality and sequence lengths differ", f->path,
                             f->kseq->name.s);
        if (n < 0)
            return sbf_error(SBFI_E_FORMAT, "%s: record '%s' is too long", f->path, f->kseq->name.s);
        if (kstring_set(&rec->name, f->kseq->name.s, f->kseq->name.l) < 0 ||
            kstring_set(&rec->seq, f->kseq->seq.s, f->kseq->seq.l) < 0)
            return sbf_error(SBFI_E_NOMEM, "out of memory reading %s", f->path);
    } else {
        int r = sam_read1(f->hts, f->hdr, f->b);
        if (r == -1)
            return 0;
        if (r < -1)
            return sbf_error(SBFI_E_FORMAT, "%s: truncated or corrupt %s after %lld records", f->path,
                             f->format, f->n_records);
        const bam1_t *b = f->b;
        const uint8_t *s = bam_get_seq(b);
        int len = b->core.l_qseq;
        rec->name.l = rec->seq.l = 0;
        if (kputs(bam_get_qname(b), &rec->name) < 0 || ks_resize(&rec->seq, (size_t)len + 1) < 0)
            return sbf_error(SBFI_E_NOMEM, "out of memory reading %s", f->path);
        for (int i = 0; i < len; ++i)
            rec->seq.s[i] = seq_nt16_str[bam_seqi(s, i)];
        rec->seq.l = (size_t)len;
        rec->seq.s[len] = '\0';
    }
    ++f->n_records;
    return 1;
}

const char *sbf_seqfile_format(const sbf_seqfile_t *f) { return f->format; }

int sbf_seqfile_close(sbf_seqfile_t *f)
{
    if (!f)
        return SBFI_OK;
    int rc = SBFI_OK;
    if (f->kseq)
        kseq_destroy(f->kseq);
    if (f->in.bgzf && bgzf_close(f->in.bgzf) < 0 && !f->read_failed)
        rc = sbf_error(SBFI_E_IO, "%s: error closing", f->path);
    if (f->b)
        bam_destroy1(f->b);
    if (f->hdr)
        sam_hdr_destroy(f->hdr);
    if (f->hts && hts_close(f->hts) < 0 && !f->read_failed)
        rc = sbf_error(SBFI_E_IO, "%s: error closing", f->path);
    free(f->path);
    free(f);
    return rc;
}

void sbf_seqrec_free(sbf_seqrec_t *rec)
{
    free(rec->name.s);
    free(rec->seq.s);
    memset(rec, 0, sizeof *rec);
}
