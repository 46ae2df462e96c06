/* sbf_reads.c -- one reader for every sequence format: FASTA/FASTQ through kseq over BGZF
 * (which reads plain, gzip and BGZF alike), SAM/BAM/CRAM through sam_read1. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>

#include "../filters/sbf_error.h"
#include "sbf_ahead.h"
#include "sbf_fastx.h"
#include "sbf_reads.h"
#include "sbf_source.h"

/* kseq treats a failed read as end of data: remember the failure so it is not mistaken for
 * the end of the file. */
typedef struct {
    BGZF *bgzf;
    sbf_source_t *src;   /* its bytes, decompressed */
    int failed;
} guarded_bgzf_t;

static int guarded_read(void *f, void *buf, int len)
{
    guarded_bgzf_t *g = f;
    ssize_t n = sbf_source_read(g->src, buf, (size_t)len);
    if (n < 0) {
        g->failed = 1;
        return 0;
    }
    return (int)n;
}

#define BLOCK_SIZE (8u << 20)       /* plain FASTQ read in place: the default block */
#define MIN_BLOCK_SIZE (4u << 10)   /* tests read with blocks this small */

struct sbf_reader_s {
    char *path;
    int sam;
    const char *format;
    guarded_bgzf_t in;
    sbf_fastx_t *kseq;   /* FASTA/FASTQ: kseq's parser (sbf_fastx.c) */
    htsFile *hts;
    sam_hdr_t *hdr;
    long long n_records;
    int read_failed;   /* a read already reported the problem: closing must not mask it */
    int sam_no_ascii;
    /* FASTQ read in place (sbf_reader_opt_t.in_place): records of the plain form are parsed
     * where they lie in `cur`; from the first that is not, the rest of the file goes through
     * kseq's parser, which is given the bytes already read */
    int in_place;
    sbf_block_pool_t blocks;
    size_t block_size, headroom;
    sbf_block_t *cur;          /* held by the reader; records are parsed from `pos` */
    size_t pos;
    int at_eof;
    sbf_pins_t touched;        /* blocks records were handed out from since the last pin */
    long long n_in_place;
    /* read-ahead (sbf_ahead.c): blocks filled by other threads, from `headroom` on (room for
     * the record the current block ends inside); a mapped file's records parsed ahead */
    sbf_ahead_t *ahead;
    sbf_spans_t spans;          /* records of `cur` parsed ahead; the next one at spans_next */
    size_t spans_next;
    long long n_ahead;          /* records taken as parsed ahead */
    double t_fill, t_wait;     /* seconds the read-ahead read, and the parser waited for it */
    /* a plain regular file is mapped window by window instead of read: no copy of its bytes
     * at all (a read() into a block wrote every byte to memory once more, and the parser read
     * it back); the windows are read-only, so records are not NUL-terminated there */
    int fd;                    /* -1: read */
    long long file_size;
    /* BAM read in place (bam_in_place): whole records of the decompressed stream lie in `cur`
     * from `pos`; 1 until the first record says whether the file suits it, 2 from then on */
    int bam_in_place;
    int bam_failed;            /* the stream broke after the bytes in `cur` */
};

static const char *format_name(enum htsExactFormat f)
{
    switch (f) {
    case fasta_format: return "FASTA";
    case fastq_format: return "FASTQ";
    case sam: return "SAM";
    case bam: return "BAM";
    case cram: return "CRAM";
    case empty_format: return "empty";   /* an empty input holds no records: not an error */
    default: return NULL;
    }
}

int sbf_reader_open(const char *path, const sbf_reader_opt_t *opt, sbf_reader_t **out)
{
    *out = NULL;
    sbf_reader_t *rd = calloc(1, sizeof *rd);
    if (!rd || !(rd->path = strdup(path))) {
        free(rd);
        return sbf_error(SBF_E_NOMEM, "out of memory opening %s", path);
    }
    int rc = SBF_OK;
    htsThreadPool *pool = opt && opt->pool && opt->pool->pool ? opt->pool : NULL;
    rd->sam_no_ascii = opt && opt->sam_no_ascii;
    rd->fd = -1;
    rd->block_size = opt && opt->block_size ? opt->block_size : BLOCK_SIZE;   /* read in place */
    rd->block_size = rd->block_size < MIN_BLOCK_SIZE ? MIN_BLOCK_SIZE : rd->block_size;
    hFILE *hf = hopen(path, "r");
    if (!hf) {
        rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot open", path);
        goto fail;
    }
    htsFormat fmt;
    if (hts_detect_format2(hf, path, &fmt) < 0) {
        rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot read", path);
        hclose_abruptly(hf);
        goto fail;
    }
    if (fmt.compression == bzip2_compression || fmt.compression == xz_compression ||
        fmt.compression == zstd_compression) {
        /* htslib reads these only inside CRAM: left to the FASTA/FASTQ parser, an xz file's
         * bytes made a 'quality and sequence lengths differ' error about a garbage name */
        const char *z = fmt.compression == bzip2_compression ? "bzip2" : fmt.compression == xz_compression ? "xz" : "zstd";
        rc = sbf_error(SBF_E_FORMAT, "%s: %s-compressed; sbf reads plain, gzip or BGZF files: decompress it first "
                       "(e.g. %s -dc FILE | sbf ... -)", path, z, z);
        hclose_abruptly(hf);
        goto fail;
    }
    rd->format = format_name(fmt.format);
    if (fmt.format == fasta_format || fmt.format == fastq_format || fmt.format == empty_format) {
        if (!(rd->in.bgzf = bgzf_hopen(hf, "r"))) {
            rc = sbf_error(SBF_E_FORMAT, "%s: cannot read the compressed stream", path);
            hclose_abruptly(hf);
            goto fail;
        }
        /* only BGZF decompresses in parallel: htslib's pool breaks plain gzip streams */
        if (pool && rd->in.bgzf->is_compressed && !rd->in.bgzf->is_gzip && bgzf_thread_pool(rd->in.bgzf, pool->pool, pool->qsize) < 0) {
            rc = sbf_error(SBF_E_THREAD, "%s: cannot start decompression threads", path);
            goto fail;
        }
        if ((rc = sbf_source_open(rd->in.bgzf, path, opt && opt->parallel_gzip ? pool : NULL, &rd->in.src)) != SBF_OK)
            goto fail;
        if (!(rd->kseq = sbf_fastx_init(guarded_read, &rd->in))) {
            rc = sbf_error(SBF_E_NOMEM, "out of memory opening %s", path);
            goto fail;
        }
        rd->in_place = opt && opt->in_place && fmt.format == fastq_format;
        rd->headroom = rd->block_size / 8;
        rd->fd = -1;
        if (rd->in_place && !rd->in.bgzf->is_compressed && strcmp(path, "-") != 0) {
            const size_t page = (size_t)sysconf(_SC_PAGESIZE);
            struct stat st;
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
                rd->fd = fd;
                rd->file_size = (long long)st.st_size;
                rd->block_size = (rd->block_size + page - 1) / page * page;   /* windows start on pages */
                rd->headroom = (rd->headroom + page - 1) / page * page;
            } else if (fd >= 0) {
                close(fd);
            }
        }
    } else if (fmt.format == sam || fmt.format == bam || fmt.format == cram) {
        rd->sam = 1;
        if (!(rd->hts = hts_hopen(hf, path, "r"))) {
            rc = sbf_error(SBF_E_FORMAT, "%s: cannot open as %s", path, rd->format);
            hclose_abruptly(hf);
            goto fail;
        }
        if (fmt.format == cram && opt && opt->reference &&
            hts_set_opt(rd->hts, CRAM_OPT_REFERENCE, opt->reference) < 0) {
            rc = sbf_error(SBF_E_IO, "%s: cannot use the reference %s", path, opt->reference);
            goto fail;
        }
        if (pool && hts_set_thread_pool(rd->hts, pool) < 0) {
            rc = sbf_error(SBF_E_THREAD, "%s: cannot start decompression threads", path);
            goto fail;
        }
        if (!(rd->hdr = sam_hdr_read(rd->hts))) {
            rc = sbf_error(SBF_E_FORMAT, "%s: cannot read the %s header", path, rd->format);
            goto fail;
        }
        /* BAM's records are taken where they lie in the decompressed stream when the engine
         * reads their 4-bit codes (no ASCII copy wanted); little-endian hosts only (the
         * fields are read as they are stored; BGZF's is_be is the host's byte order) */
        rd->bam_in_place = opt && opt->in_place && rd->sam_no_ascii && fmt.format == bam && !rd->hts->fp.bgzf->is_be;
    } else {
        char *desc = hts_format_description(&fmt);
        rc = sbf_error(SBF_E_FORMAT, "%s: not FASTA, FASTQ, SAM, BAM or CRAM (looks like %s)", path,
                       desc ? desc : "unknown data");
        free(desc);
        hclose_abruptly(hf);
        goto fail;
    }
    *out = rd;
    return SBF_OK;

fail:
    sbf_reader_close(rd);
    return rc;
}

static int kstring_set(kstring_t *ks, const char *s, size_t len)
{
    ks->l = 0;
    if (len == 0) {   /* kseq leaves absent comments and qualities as NULL */
        if (ks_resize(ks, 1) < 0)
            return -1;
        ks->s[0] = '\0';
        return 0;
    }
    return kputsn(s, len, ks) < 0 ? -1 : 0;
}

static void swap_kstring(kstring_t *a, kstring_t *b)
{
    kstring_t t = *a;
    *a = *b;
    *b = t;
}

/* The stream could not be read on, or its compressed data ended or broke (one message for
 * both parsers). */
static int read_failed(const sbf_reader_t *rd) { return sbf_reader_read_error(rd, rd->n_records); }

/* A record slot about to take buffers of its own: what pointed into a block is let go (the
 * block is not the record's to free). */
static void unborrow(sbf_read_t *r)
{
    if (r->borrowed) {
        r->name = r->comment = r->seq = r->qual = (kstring_t){0, 0, NULL};
        r->borrowed = 0;
    }
    if (r->b && (bam_get_mempolicy(r->b) & BAM_USER_OWNS_DATA)) {   /* a BAM record in place */
        r->b->data = NULL;
        r->b->l_data = 0;
        r->b->m_data = 0;
        bam_set_mempolicy(r->b, bam_get_mempolicy(r->b) & ~BAM_USER_OWNS_DATA);
    }
}

static int read_fastx(sbf_reader_t *rd, sbf_read_t *r)
{
    sbf_fastx_t *ks = rd->kseq;
    unborrow(r);
    int n = sbf_fastx_read(ks);
    if (rd->in.failed)
        return read_failed(rd);
    if (n == -1)
        return 0;
    if (n == -2)
        return sbf_error(SBF_E_FORMAT, "%s: record '%s': quality and sequence lengths differ", rd->path,
                         ks->name.s);
    if (n < 0)
        return sbf_error(SBF_E_FORMAT, "%s: record '%s' is truncated or too long", rd->path, ks->name.s);
    r->sam = 0;
    /* Swap rather than copy: the record takes kseq's strings, kseq reuses the record's old
     * buffers for the next record. Empty strings get a buffer so no caller sees NULL. */
    swap_kstring(&r->name, &ks->name);
    swap_kstring(&r->comment, &ks->comment);
    swap_kstring(&r->seq, &ks->seq);
    swap_kstring(&r->qual, &ks->qual);
    if ((!r->comment.s && kstring_set(&r->comment, "", 0) < 0) || (!r->qual.s && kstring_set(&r->qual, "", 0) < 0) ||
        (!r->seq.s && kstring_set(&r->seq, "", 0) < 0))
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    return 1;
}

/* What sam_read1's status says, for every way a SAM-family record is read (0, or an error). */
static int sam_status(const sbf_reader_t *rd, int rc)
{
    if (rc == -1)
        return 0;
    if (!strcmp(rd->format, "CRAM"))
        return sbf_error(SBF_E_FORMAT, "%s: cannot decode CRAM after %lld records (truncated, corrupt, or its "
                         "reference is not available: give it with -T)", rd->path, rd->n_records);
    return sbf_error(SBF_E_FORMAT, "%s: truncated or corrupt %s after %lld records", rd->path, rd->format,
                     rd->n_records);
}

/* r's fields once r->b holds a record read by htslib (a bam1_t of its own). */
static int sam_fields(sbf_reader_t *rd, sbf_read_t *r)
{
    const bam1_t *b = r->b;
    const uint8_t *s = bam_get_seq(b);
    int len = b->core.l_qseq;
    r->sam = 1;
    r->name.l = r->seq.l = r->comment.l = r->qual.l = 0;
    /* without ASCII bases the engine reads the bam1_t: seq stays an empty string */
    if (kputs(bam_get_qname(b), &r->name) < 0 || ks_resize(&r->seq, rd->sam_no_ascii ? 1 : (size_t)len + 1) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    if (rd->sam_no_ascii) {
        r->seq.s[0] = '\0';
        return 1;
    }
    for (int i = 0; i < len; ++i)
        r->seq.s[i] = seq_nt16_str[bam_seqi(s, i)];
    r->seq.l = (size_t)len;
    r->seq.s[len] = '\0';
    return 1;
}

static int read_sam(sbf_reader_t *rd, sbf_read_t *r)
{
    if (!r->b && !(r->b = bam_init1()))
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    unborrow(r);   /* before htslib writes the record: a BAM record in place lies in a block */
    int rc = sam_read1(rd->hts, rd->hdr, r->b);
    return rc < 0 ? sam_status(rd, rc) : sam_fields(rd, r);
}

/* A record's buffers are reused by the next record read into it, and the FASTA/FASTQ parser
 * swaps its buffers with the record's: a buffer grown for one long read was handed on from
 * record to record and kept for good, so with short and long reads mixed every slot of every
 * batch came to hold a long read's buffer and memory grew with the number of long reads in the
 * input (100 reads of 400 kbp among short ones, -K 100K: 15 -> 84 MB), not with -K. A buffer
 * more than twice what its record needs (plus SBF_READ_SLACK) is cut back to fit: what records
 * hold stays within about twice their bases. Uniform reads never meet the rule (kstrings grow
 * by half), so it costs nothing there. */
#define SBF_READ_SLACK 1024

static void fit_kstring(kstring_t *ks)
{
    if (ks->s && ks->m > 2 * (ks->l + 1) + SBF_READ_SLACK) {
        char *s = realloc(ks->s, ks->l + 1);
        if (s) {   /* a failed shrink leaves the buffer as it was */
            ks->s = s;
            ks->m = ks->l + 1;
        }
    }
}

static void fit_read(sbf_read_t *r)
{
    if (r->borrowed)
        return;
    fit_kstring(&r->name);
    fit_kstring(&r->comment);
    fit_kstring(&r->seq);
    fit_kstring(&r->qual);
    bam1_t *b = r->b;
    if (b && !(b->mempolicy & BAM_USER_OWNS_DATA) && b->l_data > 0 &&
        b->m_data > 2 * (uint32_t)b->l_data + SBF_READ_SLACK) {
        uint8_t *d = realloc(b->data, (size_t)b->l_data);
        if (d) {
            b->data = d;
            b->m_data = (uint32_t)b->l_data;
        }
    }
}

void sbf_read_release(sbf_read_t *r)
{
    unborrow(r);
    kstring_t *ks[4] = {&r->name, &r->comment, &r->seq, &r->qual};
    for (int i = 0; i < 4; ++i) {
        ks[i]->l = 0;
        fit_kstring(ks[i]);
        if (ks[i]->s)
            ks[i]->s[0] = '\0';
    }
    if (r->b && r->b->m_data > SBF_READ_SLACK) {
        bam_destroy1(r->b);   /* made again on its next use */
        r->b = NULL;
        r->sam = 0;
    }
}

/* ---- FASTQ in place ---- */

/* Threads that map and parse a file's windows ahead of its reader (more did not help: the
 * mate files are two readers, and the engine and writer need cores too). */
#define AHEAD_WORKERS 3

/* A new block to be filled ahead. */
static int ahead_ask(sbf_reader_t *rd)
{
    sbf_block_t *b = rd->fd >= 0 ? sbf_block_get_mapped(&rd->blocks, rd->headroom + rd->block_size)
                                 : sbf_block_get(&rd->blocks, rd->block_size);
    if (!b)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    sbf_ahead_ask(rd->ahead, b);
    return SBF_OK;
}

/* The read-ahead started: one thread for a stream, more for a mapped file (parsing ahead),
 * as many blocks asked for as it fills at once. */
static int ahead_start(sbf_reader_t *rd)
{
    sbf_ahead_opt_t o = {rd->headroom, rd->fd, rd->file_size, rd->block_size, rd->in.src, AHEAD_WORKERS};
    int rc = sbf_ahead_open(&o, &rd->ahead);
    if (rc != SBF_OK)
        return sbf_error(rc, "%s: %s", rd->path, sbf_error_message());
    for (int i = 0; i < sbf_ahead_depth(rd->ahead); ++i)
        if ((rc = ahead_ask(rd)) != SBF_OK)
            return rc;
    return SBF_OK;
}

static void ahead_stop(sbf_reader_t *rd)
{
    double busy = 0;
    sbf_ahead_close(rd->ahead, &busy);
    rd->ahead = NULL;
    rd->t_fill += busy;
}

/* More bytes after `pos`: the next block, read ahead, with the record begun at `pos` moved
 * in front of its bytes (into its headroom, or, for a record longer than that, into a block
 * that holds both); then one more block is asked for. 1 more bytes, 0 the end of the data,
 * < 0 an error. */
static int in_place_more(sbf_reader_t *rd)
{
    if (rd->at_eof)
        return 0;
    int rc;
    if (!rd->ahead && (rc = ahead_start(rd)) != SBF_OK)
        return rc;
    ssize_t n;
    double waited;
    sbf_block_t *nb = sbf_ahead_take(rd->ahead, &n, &rd->spans, &waited), *b = rd->cur;
    rd->t_wait += waited;
    rd->spans_next = 0;
    if (!nb || n < 0) {
        sbf_block_put(nb);
        rd->in.failed = 1;
        return read_failed(rd);
    }
    if (n == 0) {
        sbf_block_put(nb);
        rd->at_eof = 1;
        return 0;
    }
    size_t keep = b ? b->len - rd->pos : 0, start = rd->headroom - keep;
    if (keep > rd->headroom) {
        /* sizes rounded up to whole blocks, so the pool can reuse them for the next long record */
        size_t need = keep + (size_t)n + rd->headroom;
        sbf_block_t *big = sbf_block_get(&rd->blocks, (need + rd->block_size - 1) / rd->block_size * rd->block_size);
        if (!big) {
            sbf_block_put(nb);
            return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
        }
        memcpy(big->data + rd->headroom + keep, nb->data + rd->headroom, (size_t)n);
        big->origin = nb->origin - (long long)keep;
        sbf_block_put(nb);
        nb = big;
        start = rd->headroom;
        rd->spans.n = 0;   /* its records moved: parsed again here */
    }
    if (keep)
        memcpy(nb->data + start, b->data + rd->pos, keep);
    nb->len = start + keep + (size_t)n;
    sbf_block_put(b);
    rd->cur = nb;
    rd->pos = start;
    return ahead_ask(rd);
}

/* The record slot points into the block from now on: buffers it owned are freed. */
static void borrow(sbf_read_t *r)
{
    if (!r->borrowed) {
        free(r->name.s);
        free(r->comment.s);
        free(r->seq.s);
        free(r->qual.s);
        r->borrowed = 1;
    }
}

/* From here on kseq's parser reads the file, starting with the bytes read but not parsed in
 * place: a mapped file's stream is moved to the record; a stream's parser is given the rest
 * of the current block and the block read ahead (a stream has one). */
static int leave_in_place(sbf_reader_t *rd)
{
    rd->in_place = 0;
    ssize_t n = 0;
    double waited;
    sbf_block_t *b = rd->cur, *nb = rd->ahead ? sbf_ahead_take(rd->ahead, &n, NULL, &waited) : NULL;
    ahead_stop(rd);
    int rc = SBF_OK;
    if (rd->fd >= 0) {
        /* mapped: nothing was read from the stream, which goes on where the record begins */
        long long at = b ? b->origin + (long long)rd->pos : 0;
        if (hseek(rd->in.bgzf->fp, (off_t)at, SEEK_SET) < 0)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot seek", rd->path);
        n = 0;
    } else {
        size_t keep = b ? b->len - rd->pos : 0, more = nb && n > 0 ? (size_t)n : 0;
        char *all = malloc(keep + more + 1);
        if (!all) {
            rc = sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
        } else {
            if (keep)
                memcpy(all, b->data + rd->pos, keep);
            if (more)
                memcpy(all + keep, nb->data + rd->headroom, more);
            if (sbf_fastx_prime(rd->kseq, all, keep + more) < 0)
                rc = sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
            free(all);
        }
    }
    if (n < 0)
        rd->in.failed = 1;   /* the parser's next read reports it */
    sbf_block_put(nb);
    sbf_block_put(b);
    rd->cur = NULL;
    return rc;
}

/* The record at `pos`: as parsed ahead when a record parsed ahead starts exactly there (the
 * same function on the same bytes), else parsed now. */
static int span_at(sbf_reader_t *rd, sbf_fastq_span_t *sp)
{
    sbf_spans_t *s = &rd->spans;
    while (rd->spans_next < s->n && s->at[rd->spans_next] < rd->pos)
        ++rd->spans_next;   /* the ahead's first record start was not one (or is behind) */
    if (rd->spans_next < s->n && s->at[rd->spans_next] == rd->pos) {
        *sp = s->sp[rd->spans_next++];
        ++rd->n_ahead;
        return 1;
    }
    return sbf_fastq_span(rd->cur->data + rd->pos, rd->cur->len - rd->pos, sp);
}

static int read_in_place(sbf_reader_t *rd, sbf_read_t *r)
{
    for (;;) {
        sbf_block_t *b = rd->cur;
        if (b && rd->pos < b->len) {
            sbf_fastq_span_t sp;
            char *p = b->data + rd->pos;
            int rc = span_at(rd, &sp);
            if (rc > 0) {
                if (sbf_pins_add(&rd->touched, b) < 0)
                    return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
                /* the line ends become the strings' terminators, where the block can be written */
                if (rd->fd < 0)
                    p[sp.name_end] = p[sp.comment_end] = p[sp.seq + sp.seq_len] = p[sp.qual + sp.seq_len] = '\0';
                borrow(r);
                r->sam = 0;
                r->name = (kstring_t){sp.name_len, 0, p + 1};
                r->comment = (kstring_t){sp.comment_len, 0, p + sp.comment};
                r->seq = (kstring_t){sp.seq_len, 0, p + sp.seq};
                r->qual = (kstring_t){sp.seq_len, 0, p + sp.qual};
                rd->pos += sp.size;
                ++rd->n_in_place;
                return 1;
            }
            if (rc < 0 || rd->at_eof) {   /* not the plain form, or the file ends inside it */
                int e = leave_in_place(rd);
                return e < 0 ? e : read_fastx(rd, r);
            }
        } else if (rd->at_eof) {
            return 0;
        }
        int rc = in_place_more(rd);
        if (rc < 0)
            return rc;
    }
}

/* ---- BAM in place ---- */

/* A new current block: the `keep` bytes of the record begun at `pos` first (need: what that
 * record needs in all, at least its 4-byte length), then the decompressed stream up to the
 * block's end or the stream's. The stream is taken BGZF block by BGZF block (what is left of
 * the one open, or 1 byte, which opens the next), so that when it breaks every byte before the
 * break is in the block: the records before it are handed out, as sam_read1 hands them out.
 * SBF_OK or an error. */
static int bam_more(sbf_reader_t *rd, size_t need)
{
    BGZF *fp = rd->hts->fp.bgzf;
    sbf_block_t *b = rd->cur;
    const size_t keep = b ? b->len - rd->pos : 0;
    /* a block; for a record of more than half a block, whole blocks holding it and a block's
     * worth after it (the pool reuses such blocks for the next long record) */
    size_t cap = rd->block_size;
    if (need > cap / 2)
        cap = (need + 2 * rd->block_size - 1) / rd->block_size * rd->block_size;
    sbf_block_t *nb = sbf_block_get(&rd->blocks, cap);
    if (!nb)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    if (keep)
        memcpy(nb->data, b->data + rd->pos, keep);
    size_t len = keep;
    cap = nb->cap;
    while (len < cap) {
        const int open = fp->block_length - fp->block_offset;
        const size_t want = open > 0 ? ((size_t)open < cap - len ? (size_t)open : cap - len) : 1;
        const ssize_t n = bgzf_read(fp, nb->data + len, want);
        if (n <= 0) {
            if (n < 0)
                rd->bam_failed = 1;
            else
                rd->at_eof = 1;
            break;
        }
        len += (size_t)n;
    }
    nb->len = len;
    sbf_block_put(b);
    rd->cur = nb;
    rd->pos = 0;
    return SBF_OK;
}

/* sam_read1's check of a BAM record's reference numbers against the header: 1 when out of range. */
static int refs_out_of_range(const sbf_reader_t *rd, int32_t tid, int32_t mtid)
{
    return tid >= rd->hdr->n_targets || tid < -1 || mtid >= rd->hdr->n_targets || mtid < -1;
}

/* The record at p (its 4-byte length, the 32-byte core, then the data) read by htslib's own
 * bam_read1, from a copy of its bytes: what sam_read1 makes of a record that cannot be taken
 * as it lies (a CIGAR, which htslib aligns, a name without its NUL, a CG tag, damage), and its
 * status for the same damage. */
static int bam_read_copy(sbf_reader_t *rd, sbf_read_t *r, const char *p, size_t size)
{
    unborrow(r);
    char *copy = malloc(size);
    if (!copy)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    memcpy(copy, p, size);
    hFILE *hf = hopen("mem:", "r:", copy, size);   /* owns copy from here on */
    BGZF *fp = hf ? bgzf_hopen(hf, "r") : NULL;
    if (!fp) {
        if (hf)
            hclose_abruptly(hf);
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    }
    int rc = bam_read1(fp, r->b);
    const bam1_core_t *c = &r->b->core;
    if (rc >= 0 && refs_out_of_range(rd, c->tid, c->mtid))
        rc = -3;   /* as sam_read1 */
    bgzf_close(fp);
    return rc < 0 ? sam_status(rd, rc) : sam_fields(rd, r);
}

/* Take the whole record at p (4 + block_len bytes) into r: where it lies when bam_read1 would
 * leave its bytes as they are (no CIGAR, the name's NUL in place, sound lengths and reference
 * numbers), a copy read by htslib otherwise. A record in place keeps no alignment padding
 * after its name (l_extranul 0): without a CIGAR nothing reads the words that follow it. */
static int bam_take(sbf_reader_t *rd, sbf_read_t *r, char *p, uint32_t block_len)
{
    uint32_t x[8];
    memcpy(x, p + 4, sizeof x);
    bam1_core_t c;
    memset(&c, 0, sizeof c);
    c.tid = (int32_t)x[0];
    c.pos = (int32_t)x[1];
    c.bin = (uint16_t)(x[2] >> 16);
    c.qual = (uint8_t)(x[2] >> 8);
    c.l_qname = (uint16_t)(x[2] & 0xff);
    c.flag = (uint16_t)(x[3] >> 16);
    c.n_cigar = x[3] & 0xffff;
    c.l_qseq = (int32_t)x[4];
    c.mtid = (int32_t)x[5];
    c.mpos = (int32_t)x[6];
    c.isize = (int32_t)x[7];
    uint8_t *data = (uint8_t *)p + 36;
    const uint64_t l_data = block_len - 32;   /* < INT_MAX: block_len is a positive int32 */
    if (!r->b && !(r->b = bam_init1()))
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    if (c.n_cigar || c.l_qname < 1 || c.l_qseq < 0 ||
        c.l_qname + (((uint64_t)c.l_qseq + 1) >> 1) + (uint64_t)c.l_qseq > l_data || data[c.l_qname - 1] != '\0' ||
        refs_out_of_range(rd, c.tid, c.mtid))
        return bam_read_copy(rd, r, p, 4 + (size_t)block_len);
    if (sbf_pins_add(&rd->touched, rd->cur) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
    bam1_t *b = r->b;
    borrow(r);
    if (!(bam_get_mempolicy(b) & BAM_USER_OWNS_DATA)) {   /* its own buffer: not needed now */
        free(b->data);
        bam_set_mempolicy(b, bam_get_mempolicy(b) | BAM_USER_OWNS_DATA);
    }
    b->core = c;
    b->data = data;
    b->l_data = (int)l_data;
    b->m_data = (uint32_t)l_data;
    r->sam = 1;
    r->name = (kstring_t){strlen((const char *)data), 0, (char *)data};
    r->comment = r->seq = r->qual = (kstring_t){0, 0, (char *)""};
    ++rd->n_in_place;
    return 1;
}

static int read_bam_in_place(sbf_reader_t *rd, sbf_read_t *r)
{
    for (;;) {
        sbf_block_t *b = rd->cur;
        const size_t have = b ? b->len - rd->pos : 0;
        size_t need = 4;
        if (have >= 4) {
            int32_t block_len;
            memcpy(&block_len, b->data + rd->pos, 4);
            if (block_len < 32)   /* bam_read1's -4 */
                return sam_status(rd, -4);
            need = 4 + (size_t)block_len;
            if (have >= need) {
                char *p = b->data + rd->pos;
                rd->pos += need;
                return bam_take(rd, r, p, (uint32_t)block_len);
            }
        }
        if (rd->at_eof || rd->bam_failed)   /* the stream ended or broke inside the record */
            return sam_status(rd, have == 0 && !rd->bam_failed ? -1 : -2);
        int rc = bam_more(rd, need);
        if (rc < 0)
            return rc;
    }
}

int sbf_reader_pin(sbf_reader_t *rd, sbf_pins_t *pins)
{
    if (!rd || sbf_pins_move(pins, &rd->touched) == 0)
        return SBF_OK;
    return sbf_error(SBF_E_NOMEM, "out of memory reading %s", rd->path);
}

long long sbf_reader_in_place(const sbf_reader_t *rd) { return rd ? rd->n_in_place : 0; }

void sbf_reader_times(const sbf_reader_t *rd, double *fill, double *wait)
{
    *fill = rd ? rd->t_fill + (rd->ahead ? sbf_ahead_busy(rd->ahead) : 0) : 0;
    *wait = rd ? rd->t_wait : 0;
}

long long sbf_reader_parsed_ahead(const sbf_reader_t *rd) { return rd ? rd->n_ahead : 0; }

int sbf_read_own(sbf_read_t *r)
{
    if (!r->borrowed)
        return SBF_OK;
    bam1_t *b = r->b;
    if (b && (bam_get_mempolicy(b) & BAM_USER_OWNS_DATA)) {   /* a BAM record in place: a copy of its bytes */
        const size_t n = b->l_data > 0 ? (size_t)b->l_data : 1;
        uint8_t *d = malloc(n);
        if (!d)
            return sbf_error(SBF_E_NOMEM, "out of memory for a read of %d bases", b->core.l_qseq);
        memcpy(d, b->data, (size_t)b->l_data);
        b->data = d;
        b->m_data = (uint32_t)n;
        bam_set_mempolicy(b, bam_get_mempolicy(b) & ~BAM_USER_OWNS_DATA);
        r->name.s = (char *)d;   /* the name opens the data: the copy's, copied below with the rest */
    }
    kstring_t *ks[4] = {&r->name, &r->comment, &r->seq, &r->qual};
    kstring_t own[4] = {{0, 0, NULL}, {0, 0, NULL}, {0, 0, NULL}, {0, 0, NULL}};
    for (int i = 0; i < 4; ++i)
        if (ks_resize(&own[i], ks[i]->l + 1) < 0) {
            for (int k = 0; k < i; ++k)
                free(own[k].s);
            return sbf_error(SBF_E_NOMEM, "out of memory for a read of %zu bases", r->seq.l);
        } else {
            memcpy(own[i].s, ks[i]->s, ks[i]->l);
            own[i].s[ks[i]->l] = '\0';
            own[i].l = ks[i]->l;
        }
    for (int i = 0; i < 4; ++i)
        *ks[i] = own[i];
    r->borrowed = 0;
    return SBF_OK;
}

int sbf_reader_read(sbf_reader_t *rd, sbf_read_t *r)
{
    int rc = rd->bam_in_place == 2 ? read_bam_in_place(rd, r)
           : rd->sam ? read_sam(rd, r)
           : rd->in_place ? read_in_place(rd, r)
           : rd->kseq ? read_fastx(rd, r) : 0;
    /* BAM: the first record, read by htslib, says whether the rest suits in place: a file
     * whose records have CIGARs (aligned) would take them all through copies */
    if (rd->bam_in_place == 1 && rc > 0)
        rd->bam_in_place = r->b->core.n_cigar ? 0 : 2;
    if (rc < 0)
        rd->read_failed = 1;
    else if (rc > 0) {
        ++rd->n_records;
        fit_read(r);
    }
    r->mate = 0;
    r->frag = -1;
    return rc;
}

ssize_t sbf_reader_raw(sbf_reader_t *rd, void *buf, size_t len)
{
    if (!rd->kseq || rd->in_place || rd->n_records)
        return sbf_error(SBF_E_PARAM, "%s: its bytes are read as records", rd->path);
    ssize_t n = sbf_source_read(rd->in.src, buf, len);
    if (n < 0) {
        rd->in.failed = 1;
        return sbf_reader_read_error(rd, -1);
    }
    return n;
}

int sbf_reader_seq_sink(sbf_reader_t *rd, int (*fn)(void *arg, const char *s, size_t n), void *arg)
{
    if (!rd->kseq)
        return -1;
    rd->kseq->seq_sink = fn;
    rd->kseq->sink_arg = arg;
    return 0;
}

const char *sbf_reader_format(const sbf_reader_t *rd) { return rd->format; }
const char *sbf_reader_decoder(const sbf_reader_t *rd) { return rd->in.src ? sbf_source_decoder(rd->in.src) : "htslib"; }

int sbf_reader_read_error(const sbf_reader_t *rd, long long records)
{
    const char *why = rd->in.src ? sbf_source_why(rd->in.src) : NULL;   /* what the decompressor found */
    char after[64] = "";
    if (records >= 0)
        snprintf(after, sizeof after, " after %lld records", records);
    return sbf_error(SBF_E_FORMAT, "%s: read error or truncated compressed data%s%s%s%s", rd->path, after,
                     why ? " (" : "", why ? why : "", why ? ")" : "");
}
int sbf_reader_is_sam(const sbf_reader_t *rd) { return rd->sam; }
int sbf_reader_compressed(const sbf_reader_t *rd) { return rd->in.bgzf && rd->in.bgzf->is_compressed; }
sam_hdr_t *sbf_reader_header(const sbf_reader_t *rd) { return rd->hdr; }
const char *sbf_reader_path(const sbf_reader_t *rd) { return rd->path; }

int sbf_reader_close(sbf_reader_t *rd)
{
    if (!rd)
        return SBF_OK;
    int rc = SBF_OK;
    if (rd->kseq)
        sbf_fastx_destroy(rd->kseq);
    if (rd->ahead)
        ahead_stop(rd);
    sbf_spans_free(&rd->spans);
    sbf_pins_free(&rd->touched);
    sbf_block_put(rd->cur);
    sbf_block_pool_close(&rd->blocks);
    sbf_source_close(rd->in.src);
    if (rd->fd >= 0)
        close(rd->fd);
    if (rd->in.bgzf && bgzf_close(rd->in.bgzf) < 0 && !rd->read_failed)
        rc = sbf_error(SBF_E_IO, "%s: error closing", rd->path);
    if (rd->hdr)
        sam_hdr_destroy(rd->hdr);
    if (rd->hts && hts_close(rd->hts) < 0 && !rd->read_failed)
        rc = sbf_error(SBF_E_IO, "%s: error closing", rd->path);
    free(rd->path);
    free(rd);
    return rc;
}

void sbf_read_free(sbf_read_t *r)
{
    unborrow(r);   /* first: a BAM record in place leaves r->b pointing into a block */
    if (r->b)
        bam_destroy1(r->b);
    free(r->name.s);
    free(r->comment.s);
    free(r->seq.s);
    free(r->qual.s);
    memset(r, 0, sizeof *r);
}

static size_t mate_base_len(const char *s, size_t l)
{
    if (l > 2 && s[l - 2] == '/' && (s[l - 1] == '1' || s[l - 1] == '2'))
        l -= 2;
    return l;
}

int sbf_mate_names_match(const char *a, size_t la, const char *b, size_t lb)
{
    la = mate_base_len(a, la);
    lb = mate_base_len(b, lb);
    return la == lb && !memcmp(a, b, la);
}
