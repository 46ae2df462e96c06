/* sbf_writer.c -- records out (see sbf_writer.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/kstring.h>

#include "../filters/sbf_error.h"
#include "../filters/sbf_tmpfile.h"
#include "sbf_numfmt.h"
#include "sbf_writer.h"

struct sbf_writer_s {
    char *path;        /* final name (NULL for stdout) */
    char *tmp;         /* temporary name, renamed to path on commit (NULL: written in place) */
    char *idx_tmp;     /* temporary index name */
    sbf_writer_opt_t opt;
    htsFile *hts;      /* SAM/BAM/CRAM */
    sam_hdr_t *hdr;
    BGZF *bgzf;        /* FASTQ/FASTA compressed */
    int text_fd;       /* FASTQ/FASTA plain: written by write(2) from `pending`; -1 otherwise */
    kstring_t pending; /* plain text not yet written */
    bam1_t *scratch;   /* FASTA/FASTQ input converted for SAM-family output */
    kstring_t line;
    long long records;
};

static const struct {
    const char *name;
    sbf_outfmt_t fmt;
} fmt_names[] = {{"sam", SBF_OUT_SAM},     {"bam", SBF_OUT_BAM},   {"cram", SBF_OUT_CRAM},
                 {"fastq", SBF_OUT_FASTQ}, {"fq", SBF_OUT_FASTQ},  {"fasta", SBF_OUT_FASTA},
                 {"fa", SBF_OUT_FASTA},    {"fna", SBF_OUT_FASTA}, {"fas", SBF_OUT_FASTA}};

const char *sbf_outfmt_name(sbf_outfmt_t f)
{
    static const char *names[] = {"SAM", "BAM", "CRAM", "FASTQ", "FASTA"};
    return names[f];
}

/* "fastq.gz" -> FASTQ compressed; returns 1 if known. */
static int parse_fmt_word(const char *s, size_t n, sbf_outspec_t *o)
{
    int compress = 0;
    if (n > 3 && !strncasecmp(s + n - 3, ".gz", 3)) {
        compress = 1;
        n -= 3;
    } else if (n > 4 && !strncasecmp(s + n - 4, ".bgz", 4)) {
        compress = 1;
        n -= 4;
    }
    for (size_t i = 0; i < sizeof fmt_names / sizeof fmt_names[0]; ++i)
        if (strlen(fmt_names[i].name) == n && !strncasecmp(s, fmt_names[i].name, n)) {
            if (compress && (fmt_names[i].fmt == SBF_OUT_BAM || fmt_names[i].fmt == SBF_OUT_CRAM))
                return 0;
            o->fmt = fmt_names[i].fmt;
            o->compress = compress || o->fmt == SBF_OUT_BAM || o->fmt == SBF_OUT_CRAM;
            return 1;
        }
    return 0;
}

int sbf_outspec_parse(const char *s, sbf_outspec_t *o)
{
    sbf_outspec_t r = {.level = -1};
    const char *comma = strchr(s, ',');
    size_t n = comma ? (size_t)(comma - s) : strlen(s);
    if (!parse_fmt_word(s, n, &r))
        return sbf_error(SBF_E_PARAM, "unknown output format '%.*s' (sam, bam, cram, fastq, fasta; "
                         "fastq.gz, fasta.gz, sam.gz for BGZF)", (int)n, s);
    if (comma) {
        char *end;
        if (strncmp(comma + 1, "level=", 6) != 0)
            return sbf_error(SBF_E_PARAM, "unknown output format option '%s' (level=0-9)", comma + 1);
        long level = strtol(comma + 7, &end, 10);
        if (*end || end == comma + 7 || level < 0 || level > 9)
            return sbf_error(SBF_E_PARAM, "invalid compression level '%s' (0-9)", comma + 7);
        r.level = (int)level;
    }
    *o = r;
    return SBF_OK;
}

int sbf_outspec_from_name(const char *path, sbf_outspec_t *o)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* the extension, with .gz/.bgz: the last two dot-separated words */
    const char *last = strrchr(base, '.');
    if (!last || last == base)
        return 0;
    sbf_outspec_t r = {.level = -1};
    if (!strcasecmp(last, ".gz") || !strcasecmp(last, ".bgz")) {
        const char *prev = last;
        while (prev > base && prev[-1] != '.')
            --prev;
        if (prev == base)
            return 0;
        if (!parse_fmt_word(prev, strlen(prev), &r))
            return 0;
    } else if (!parse_fmt_word(last + 1, strlen(last + 1), &r)) {
        return 0;
    }
    r.level = o->level;
    *o = r;
    return 1;
}

const char *sbf_writer_path(const sbf_writer_t *w) { return w->path ? w->path : "standard output"; }

static int open_hts(sbf_writer_t *w, const char *name, hFILE *hf)
{
    const sbf_writer_opt_t *o = &w->opt;
    char mode[8] = "w";
    size_t n = 1;
    if (o->spec.fmt == SBF_OUT_BAM)
        mode[n++] = 'b';
    else if (o->spec.fmt == SBF_OUT_CRAM)
        mode[n++] = 'c';
    else if (o->spec.compress)
        mode[n++] = 'z';
    if (o->spec.level >= 0)
        mode[n++] = (char)('0' + o->spec.level);
    mode[n] = '\0';
    w->hts = hf ? hts_hopen(hf, name, mode) : hts_open(name, mode);
    if (!w->hts) {
        if (hf)
            hclose_abruptly(hf);
        return sbf_error_errno(SBF_E_IO, errno, "%s: cannot open for writing", sbf_writer_path(w));
    }
    if (o->spec.fmt == SBF_OUT_CRAM && o->reference && hts_set_opt(w->hts, CRAM_OPT_REFERENCE, o->reference) < 0)
        return sbf_error(SBF_E_IO, "%s: cannot use the reference %s", sbf_writer_path(w), o->reference);
    if (o->pool && o->pool->pool && hts_set_thread_pool(w->hts, o->pool) < 0)
        return sbf_error(SBF_E_THREAD, "%s: cannot start compression threads", sbf_writer_path(w));
    w->hdr = o->hdr ? sam_hdr_dup(o->hdr) : sam_hdr_init();
    if (!w->hdr)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    if (!o->hdr && sam_hdr_add_line(w->hdr, "HD", "VN", SAM_FORMAT_VERSION, "SO", "unsorted", NULL) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    if (o->pg_cmdline &&
        sam_hdr_add_pg(w->hdr, "sbf", "VN", o->pg_version ? o->pg_version : "", "CL", o->pg_cmdline, NULL) < 0)
        return sbf_error(SBF_E_NOMEM, "%s: cannot add the @PG header line", sbf_writer_path(w));
    if (sam_hdr_write(w->hts, w->hdr) < 0)
        return sbf_error_errno(SBF_E_IO, errno, "%s: cannot write the header", sbf_writer_path(w));
    if (o->write_index) {
        if (o->spec.fmt != SBF_OUT_BAM && o->spec.fmt != SBF_OUT_CRAM)
            return sbf_error(SBF_E_PARAM, "%s: --write-index needs BAM or CRAM output", sbf_writer_path(w));
        if (!w->path)
            return sbf_error(SBF_E_PARAM, "--write-index needs an output file, not standard output");
        size_t len = strlen(w->tmp) + 8;
        if (!(w->idx_tmp = malloc(len)))
            return sbf_error(SBF_E_NOMEM, "out of memory");
        snprintf(w->idx_tmp, len, "%s.%s", w->tmp, o->spec.fmt == SBF_OUT_BAM ? "csi" : "crai");
        sbf_tmpfile_track(w->idx_tmp);
        if (sam_idx_init(w->hts, w->hdr, o->spec.fmt == SBF_OUT_BAM ? 14 : 0, w->idx_tmp) < 0)
            return sbf_error(SBF_E_IO, "%s: cannot start the index", sbf_writer_path(w));
    }
    return SBF_OK;
}

/* Plain FASTQ/FASTA goes out through write(2), not htslib: closing an hFILE with buffered
 * bytes calls fdatasync, which waited for the disk at the end of every run (0.5-0.8 s of a
 * 1 M-pair filter on the VM) where `cat` and the field's tools return as soon as the kernel
 * holds the bytes. Compressed outputs stay with htslib (bgzip and samtools sync alike). */
#define TEXT_CHUNK (1u << 20)

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int text_flush(sbf_writer_t *w)
{
    int rc = write_all(w->text_fd, w->pending.s, w->pending.l);
    w->pending.l = 0;
    return rc;
}

/* n bytes out: gathered into writes of about TEXT_CHUNK; 0 or -1 (errno set) */
static int text_put(sbf_writer_t *w, const char *p, size_t n)
{
    if (w->pending.l + n > TEXT_CHUNK && w->pending.l && text_flush(w) < 0)
        return -1;
    if (n >= TEXT_CHUNK)
        return write_all(w->text_fd, p, n);
    if (ks_resize(&w->pending, TEXT_CHUNK) < 0)
        return -1;
    memcpy(w->pending.s + w->pending.l, p, n);
    w->pending.l += n;
    return 0;
}

static int open_text(sbf_writer_t *w, const char *name, hFILE *hf)
{
    const sbf_writer_opt_t *o = &w->opt;
    char mode[4] = "w";
    if (o->spec.level >= 0)
        mode[1] = (char)('0' + o->spec.level);
    w->bgzf = hf ? bgzf_hopen(hf, mode) : bgzf_open(name, mode);
    if (!w->bgzf) {
        if (hf)
            hclose_abruptly(hf);
        return sbf_error_errno(SBF_E_IO, errno, "%s: cannot open for writing", sbf_writer_path(w));
    }
    if (o->pool && o->pool->pool && bgzf_thread_pool(w->bgzf, o->pool->pool, o->pool->qsize) < 0)
        return sbf_error(SBF_E_THREAD, "%s: cannot start compression threads", sbf_writer_path(w));
    if (o->write_index)
        return sbf_error(SBF_E_PARAM, "%s: --write-index needs BAM or CRAM output", sbf_writer_path(w));
    return SBF_OK;
}

int sbf_writer_open(const char *path, const sbf_writer_opt_t *opt, sbf_writer_t **out)
{
    *out = NULL;
    sbf_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    w->opt = *opt;
    w->text_fd = -1;
    const int text = opt->spec.fmt == SBF_OUT_FASTQ || opt->spec.fmt == SBF_OUT_FASTA;
    int rc = SBF_OK, fd = -1;
    struct stat st;
    if (!path || !strcmp(path, "-")) {
        /* a duplicate of standard output: htslib closes what it writes to, and the caller's
         * stdout must stay open for its own final checks */
        if ((fd = dup(STDOUT_FILENO)) < 0) {
            rc = sbf_error_errno(SBF_E_IO, errno, "cannot write to standard output");
            goto fail;
        }
    } else {
        if (!(w->path = strdup(path))) {
            rc = sbf_error(SBF_E_NOMEM, "out of memory");
            goto fail;
        }
        if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {   /* devices and pipes: in place */
            if ((fd = sbf_tmpfile_create(path, &w->tmp)) < 0) {
                rc = fd;
                goto fail;
            }
        } else if (text && !opt->spec.compress &&   /* as htslib opens them by name */
                   (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot open for writing", path);
            goto fail;
        }
    }
    if (text && !opt->spec.compress) {
        w->text_fd = fd;
        rc = opt->write_index ? sbf_error(SBF_E_PARAM, "%s: --write-index needs BAM or CRAM output", sbf_writer_path(w))
                              : SBF_OK;
    } else {
        hFILE *hf = NULL;
        if (fd >= 0 && !(hf = hdopen(fd, "w"))) {
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot open for writing", sbf_writer_path(w));
            close(fd);
            goto fail;
        }
        const char *name = w->tmp ? w->tmp : w->path ? w->path : "-";
        rc = text ? open_text(w, name, hf) : open_hts(w, name, hf);
    }
    if (rc < 0)
        goto fail;
    *out = w;
    return SBF_OK;
fail:
    sbf_writer_abort(w);
    return rc;
}

/* ---- FASTA/FASTQ text ---- */

/* Complement of a 4-bit base code (A=1 C=2 G=4 T=8): the bits reversed. */
static const uint8_t nt16_comp[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};

/* "\tsb:Z:<category>\tss:f:<score>[\tsh:B:I,<hits>...]", as "%s" "%g" "%u" print them
 * (sbf_numfmt.c: printf's own bytes, without printf's cost on every record). */
static int put_tags_text(kstring_t *s, const sbf_tagnames_t *tn, const sbf_tags_t *tags)
{
    if (!tags || !tags->category)
        return 0;
    size_t cat = strlen(tags->category);
    if (ks_resize(s, s->l + cat + SBF_FMT_G_MAX + 16) < 0)
        return -1;
    char *p = s->s + s->l;
    *p++ = '\t';
    memcpy(p, tn->category, 2);
    memcpy(p + 2, ":Z:", 3);
    memcpy(p + 5, tags->category, cat);
    p += 5 + cat;
    *p++ = '\t';
    memcpy(p, tn->score, 2);
    memcpy(p + 2, ":f:", 3);
    p += 5;
    p += sbf_fmt_g(p, tags->score);
    s->l = (size_t)(p - s->s);
    if (tn->with_hits) {
        if (ks_resize(s, s->l + 8 + 11 * (size_t)tags->n_hits) < 0)
            return -1;
        p = s->s + s->l;
        *p++ = '\t';
        memcpy(p, tn->hits, 2);
        memcpy(p + 2, ":B:I", 4);
        p += 6;
        for (int t = 0; t < tags->n_hits; ++t) {
            *p++ = ',';
            p += sbf_fmt_u32(p, tags->hits[t]);
        }
        s->l = (size_t)(p - s->s);
    }
    s->s[s->l] = '\0';
    return 0;
}

/* Append the FASTA/FASTQ text of r to s (w is only read: any thread may format for it). */
static int format_fastx(const sbf_writer_t *w, const sbf_read_t *r, const sbf_tags_t *tags, kstring_t *s)
{
    int fastq = w->opt.spec.fmt == SBF_OUT_FASTQ, rc = 0;
    rc |= kputc(fastq ? '@' : '>', s) < 0;
    if (tags && tags->rename)   /* --rename: the original name never reaches the output */
        rc |= kputll((long long)tags->rename, s) < 0;
    else
        rc |= kputsn(r->name.s, r->name.l, s) < 0;
    if (r->comment.l) {
        rc |= kputc(' ', s) < 0;
        rc |= kputsn(r->comment.s, r->comment.l, s) < 0;
    }
    rc |= put_tags_text(s, &w->opt.tags, tags);
    rc |= kputc('\n', s) < 0;
    if (!r->sam) {
        rc |= kputsn(r->seq.s, r->seq.l, s) < 0;
        if (fastq) {
            rc |= kputsn("\n+\n", 3, s) < 0;
            if (r->qual.l == r->seq.l)
                rc |= kputsn(r->qual.s, r->qual.l, s) < 0;
            else   /* FASTA input: no qualities; samtools' default of quality 1 */
                for (size_t i = 0; i < r->seq.l && !rc; ++i)
                    rc |= kputc('"', s) < 0;
        }
        rc |= kputc('\n', s) < 0;
        return rc ? -1 : 0;
    }
    /* a SAM record: the read as sequenced, so reverse-strand records are turned back */
    const bam1_t *b = r->b;
    int len = b->core.l_qseq, rev = (b->core.flag & BAM_FREVERSE) != 0;
    const uint8_t *seq = bam_get_seq(b), *qual = bam_get_qual(b);
    if (ks_resize(s, s->l + 2 * (size_t)len + 8) < 0)
        return -1;
    for (int i = 0; i < len; ++i) {
        int c = bam_seqi(seq, rev ? len - 1 - i : i);
        s->s[s->l++] = seq_nt16_str[rev ? nt16_comp[c] : c];
    }
    if (fastq) {
        memcpy(s->s + s->l, "\n+\n", 3);
        s->l += 3;
        for (int i = 0; i < len; ++i) {
            uint8_t q = qual[0] == 0xff ? 1 : qual[rev ? len - 1 - i : i];
            s->s[s->l++] = (char)(q + 33);
        }
    }
    s->s[s->l++] = '\n';
    s->s[s->l] = '\0';
    return rc ? -1 : 0;
}

/* ---- SAM/BAM/CRAM ---- */

/* Does b's aux data hold none of the tags sbf writes (and is it well formed)? Then the tags
 * are appended as bam_aux_update_*() would append them, without their search of the aux data
 * per tag (add_tags_bam). */
static int tags_absent(const bam1_t *b, const sbf_tagnames_t *tn)
{
    const uint8_t *p = bam_get_aux(b), *end = b->data + b->l_data;
    while (p < end) {
        if (end - p < 3)
            return 0;
        if ((p[0] == tn->category[0] && p[1] == tn->category[1]) || (p[0] == tn->score[0] && p[1] == tn->score[1]) ||
            (tn->with_hits && p[0] == tn->hits[0] && p[1] == tn->hits[1]))
            return 0;
        const uint8_t type = p[2];
        p += 3;
        size_t size;
        switch (type) {
        case 'A': case 'c': case 'C': size = 1; break;
        case 's': case 'S': size = 2; break;
        case 'i': case 'I': case 'f': size = 4; break;
        case 'd': size = 8; break;
        case 'Z': case 'H': {
            const uint8_t *z = memchr(p, 0, (size_t)(end - p));
            if (!z)
                return 0;
            p = z + 1;
            continue;
        }
        case 'B': {
            if (end - p < 5)
                return 0;
            uint32_t n;
            memcpy(&n, p + 1, 4);
            size_t elem = p[0] == 'c' || p[0] == 'C' ? 1 : p[0] == 's' || p[0] == 'S' ? 2
                        : p[0] == 'i' || p[0] == 'I' || p[0] == 'f' ? 4 : 0;
            if (!elem)
                return 0;
            size = 5 + (size_t)n * elem;
            break;
        }
        default:
            return 0;
        }
        if ((size_t)(end - p) < size)
            return 0;
        p += size;
    }
    return 1;
}

/* The tags set on b: appended when b has none of them (bam_aux_append(), what the update
 * functions do then, without their search of the aux data per tag), else updated in place. */
static int add_tags_bam(bam1_t *b, const sbf_tagnames_t *tn, const sbf_tags_t *tags)
{
    if (!tags || !tags->category)
        return 0;
    if (tags_absent(b, tn)) {
        if (bam_aux_append(b, tn->category, 'Z', (int)strlen(tags->category) + 1, (const uint8_t *)tags->category) < 0 ||
            bam_aux_append(b, tn->score, 'f', 4, (const uint8_t *)&tags->score) < 0)
            return -1;
        if (!tn->with_hits)
            return 0;
        uint8_t stack[5 + 4 * 64], *arr = tags->n_hits <= 64 ? stack : malloc(5 + 4 * (size_t)tags->n_hits);
        if (!arr)
            return -1;
        const uint32_t n = (uint32_t)tags->n_hits;
        arr[0] = 'I';
        memcpy(arr + 1, &n, 4);
        memcpy(arr + 5, tags->hits, 4 * (size_t)n);
        int rc = bam_aux_append(b, tn->hits, 'B', (int)(5 + 4 * n), arr);
        if (arr != stack)
            free(arr);
        return rc < 0 ? -1 : 0;
    }
    if (bam_aux_update_str(b, tn->category, -1, tags->category) < 0 || bam_aux_update_float(b, tn->score, tags->score) < 0)
        return -1;
    if (tn->with_hits &&
        bam_aux_update_array(b, tn->hits, 'I', (uint32_t)tags->n_hits, (void *)(uintptr_t)tags->hits) < 0)
        return -1;
    return 0;
}

/* FASTA/FASTQ record as an unmapped SAM record, as samtools import makes it. */
/* --rename: b's name replaced by the number (SAM records in place: each is written once). */
static int rename_bam(bam1_t *b, const sbf_tags_t *tags)
{
    if (!tags || !tags->rename)
        return 0;
    char name[24];
    snprintf(name, sizeof name, "%llu", (unsigned long long)tags->rename);
    return bam_set_qname(b, name) < 0 ? -1 : 0;
}

static int fastx_to_bam(bam1_t **scratch, const sbf_read_t *r)
{
    if (!*scratch && !(*scratch = bam_init1()))
        return -1;
    uint16_t flag = BAM_FUNMAP;
    if (r->mate)
        flag |= BAM_FPAIRED | BAM_FMUNMAP | (r->mate == 1 ? BAM_FREAD1 : BAM_FREAD2);
    size_t l_name = r->name.l;
    if (r->mate && l_name > 2 && r->name.s[l_name - 2] == '/' &&
        (r->name.s[l_name - 1] == '1' || r->name.s[l_name - 1] == '2'))   /* mates share one name in SAM */
        l_name -= 2;
    char *qual = NULL;
    if (r->qual.l == r->seq.l && r->seq.l) {
        if (!(qual = malloc(r->qual.l)))
            return -1;
        for (size_t i = 0; i < r->qual.l; ++i)
            qual[i] = (char)(r->qual.s[i] - 33);
    }
    int rc = bam_set1(*scratch, l_name, r->name.s, flag, -1, -1, 0, 0, NULL, -1, -1, 0, r->seq.l, r->seq.s, qual, 64);
    free(qual);
    return rc < 0 ? -1 : 0;
}

static int encode_tagged(const sbf_writer_t *w, const sbf_read_t *r, const sbf_tags_t *tags, kstring_t *out);

int sbf_writer_write(sbf_writer_t *w, sbf_read_t *r, const sbf_tags_t *tags)
{
    int rc;
    if (w->bgzf || w->text_fd >= 0) {
        w->line.l = 0;
        if (format_fastx(w, r, tags, &w->line) < 0)
            return sbf_error(SBF_E_NOMEM, "out of memory writing %s", sbf_writer_path(w));
        rc = w->bgzf ? (bgzf_write(w->bgzf, w->line.s, w->line.l) == (ssize_t)w->line.l ? 0 : -1)
                     : text_put(w, w->line.s, w->line.l);
    } else {
        bam1_t *b = r->b;
        /* BAM out: a record whose tags are appended goes out as encoded bytes (left as it is:
         * one read in place lies in the reader's block), cut into BGZF blocks as bam_write1() does */
        if (sbf_writer_can_encode(w)) {
            w->line.l = 0;
            const int done = encode_tagged(w, r, tags, &w->line);
            if (done)
                return done < 0 ? done : sbf_writer_write_encoded(w, w->line.s, w->line.l, 1);
        }
        if (!r->sam) {
            if (fastx_to_bam(&w->scratch, r) < 0)
                return sbf_error(SBF_E_NOMEM, "%s: cannot convert record '%.*s'", sbf_writer_path(w), (int)r->name.l,
                                 r->name.s);
            b = w->scratch;
        }
        if (add_tags_bam(b, &w->opt.tags, tags) < 0)
            return sbf_error(SBF_E_FORMAT, "record '%.*s': cannot add the tags (corrupt or conflicting aux data)",
                             (int)r->name.l, r->name.s);
        if (rename_bam(b, tags) < 0)
            return sbf_error(SBF_E_NOMEM, "out of memory writing %s", sbf_writer_path(w));
        rc = sam_write1(w->hts, w->hdr, b) < 0 ? -1 : 0;
        if (rc < 0 && w->opt.write_index)
            return sbf_error(SBF_E_IO, "%s: cannot write record '%.*s' (--write-index needs coordinate-sorted "
                             "records)", sbf_writer_path(w), (int)r->name.l, r->name.s);
    }
    if (rc < 0)
        return sbf_error_errno(SBF_E_IO, errno, "%s: write failed", sbf_writer_path(w));
    ++w->records;
    return SBF_OK;
}

/* ---- records encoded by other threads ---- */

int sbf_writer_can_encode(const sbf_writer_t *w)
{
    return w->bgzf != NULL || w->text_fd >= 0 || (w->opt.spec.fmt == SBF_OUT_BAM && !w->opt.write_index);
}

/* A BAM record as bam_write1() lays it out (little-endian hosts): block length, the 32-byte
 * core, the name without its alignment padding, then CIGAR, bases, qualities and tags. 1 when
 * the record needs htslib's own writer (a CIGAR of more than 65535 operations, positions out
 * of BAM's range, a name too long). */
static int encode_bam(const bam1_t *b, kstring_t *out)
{
    const bam1_core_t *c = &b->core;
    if (c->n_cigar > 0xffff || c->l_qname - c->l_extranul > 255 || c->pos > INT32_MAX || c->mpos > INT32_MAX ||
        c->isize < INT32_MIN || c->isize > INT32_MAX || b->l_data < c->l_qname)
        return 1;
    uint32_t name = (uint32_t)(c->l_qname - c->l_extranul), block_len = (uint32_t)(b->l_data - c->l_extranul) + 32;
    uint32_t x[9] = {block_len,
                     (uint32_t)c->tid,
                     (uint32_t)c->pos,
                     (uint32_t)c->bin << 16 | (uint32_t)c->qual << 8 | name,
                     (uint32_t)c->flag << 16 | (c->n_cigar & 0xffff),
                     (uint32_t)c->l_qseq,
                     (uint32_t)c->mtid,
                     (uint32_t)c->mpos,
                     (uint32_t)c->isize};
    if (ks_resize(out, out->l + 4 + block_len + 1) < 0)
        return -1;
    memcpy(out->s + out->l, x, sizeof x);
    out->l += sizeof x;
    memcpy(out->s + out->l, b->data, name);
    out->l += name;
    memcpy(out->s + out->l, b->data + c->l_qname, (size_t)(b->l_data - c->l_qname));
    out->l += (size_t)(b->l_data - c->l_qname);
    return 0;
}

/* The tags of add_tags_bam() appended to a record just encoded at out->s + at, as
 * bam_aux_append() would have appended them to the record (its length word updated): the
 * record itself is left as it is, which a BAM record read in place must be (its bytes lie in
 * the reader's block; a tag appended to it is a copy of the whole record). */
static int append_tags(const sbf_tagnames_t *tn, const sbf_tags_t *tags, kstring_t *out, size_t at)
{
    const size_t zl = strlen(tags->category) + 1, before = out->l;
    const uint32_t n = (uint32_t)tags->n_hits;
    if (ks_resize(out, out->l + 3 + zl + 7 + (tn->with_hits ? 8 + 4 * (size_t)n : 0) + 1) < 0)
        return -1;
    char *o = out->s + out->l;
    memcpy(o, tn->category, 2);
    o[2] = 'Z';
    memcpy(o + 3, tags->category, zl);
    o += 3 + zl;
    memcpy(o, tn->score, 2);
    o[2] = 'f';
    memcpy(o + 3, &tags->score, 4);
    o += 7;
    if (tn->with_hits) {
        memcpy(o, tn->hits, 2);
        o[2] = 'B';
        o[3] = 'I';
        memcpy(o + 4, &n, 4);
        memcpy(o + 8, tags->hits, 4 * (size_t)n);
        o += 8 + 4 * (size_t)n;
    }
    out->l = (size_t)(o - out->s);
    uint32_t block_len;
    memcpy(&block_len, out->s + at, 4);
    block_len += (uint32_t)(out->l - before);
    memcpy(out->s + at, &block_len, 4);
    return 0;
}

/* A SAM-family record to BAM with the tags appended to its bytes (append_tags), when that is
 * what add_tags_bam() would do and encode_bam() can lay it out: 1 done, 0 not so (the caller
 * goes through add_tags_bam), or an error. */
static int encode_tagged(const sbf_writer_t *w, const sbf_read_t *r, const sbf_tags_t *tags, kstring_t *out)
{
    if (!r->sam || !tags || !tags->category || tags->rename || !tags_absent(r->b, &w->opt.tags))
        return 0;
    const size_t at = out->l;
    int rc = encode_bam(r->b, out);
    if (rc == 0 && append_tags(&w->opt.tags, tags, out, at) < 0)
        rc = -1;
    if (rc < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory writing %s", sbf_writer_path(w));
    return rc == 0;   /* rc 1 (nothing written): htslib's writer is needed */
}

int sbf_writer_encode(const sbf_writer_t *w, sbf_read_t *r, const sbf_tags_t *tags, bam1_t **scratch, kstring_t *out)
{
    if (w->bgzf || w->text_fd >= 0)
        return format_fastx(w, r, tags, out) < 0 ? sbf_error(SBF_E_NOMEM, "out of memory writing %s",
                                                             sbf_writer_path(w))
                                                  : SBF_OK;
    bam1_t *b = r->b;
    int done = encode_tagged(w, r, tags, out);
    if (done)
        return done < 0 ? done : SBF_OK;
    if (!r->sam) {
        if (fastx_to_bam(scratch, r) < 0)
            return sbf_error(SBF_E_NOMEM, "%s: cannot convert record '%.*s'", sbf_writer_path(w), (int)r->name.l,
                                 r->name.s);
        b = *scratch;
    }
    if (add_tags_bam(b, &w->opt.tags, tags) < 0)
        return sbf_error(SBF_E_FORMAT, "record '%.*s': cannot add the tags (corrupt or conflicting aux data)",
                             (int)r->name.l, r->name.s);
    if (rename_bam(b, tags) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory writing %s", sbf_writer_path(w));
    int rc = encode_bam(b, out);
    if (rc < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory writing %s", sbf_writer_path(w));
    if (rc > 0)
        return sbf_error(SBF_E_FORMAT, "%s: record '%s' cannot be written as BAM (a position out of range, a "
                         "name over 254 characters, or a CIGAR over 65535 operations)", sbf_writer_path(w),
                         bam_get_qname(b));
    return SBF_OK;
}

int sbf_writer_write_encoded(sbf_writer_t *w, const char *buf, size_t len, size_t n_records)
{
    if (w->bgzf || w->text_fd >= 0) {
        if (len && (w->bgzf ? bgzf_write(w->bgzf, buf, len) != (ssize_t)len : text_put(w, buf, len) < 0))
            return sbf_error_errno(SBF_E_IO, errno, "%s: write failed", sbf_writer_path(w));
        w->records += (long long)n_records;
        return SBF_OK;
    }
    /* BAM: whole records per BGZF block, as bam_write1() cuts them (a record starts a new block
     * when it does not fit in the current one), so the file is the same byte for byte. */
    BGZF *fp = w->hts->fp.bgzf;
    size_t at = 0;
    while (at < len) {
        size_t run = 0;
        uint32_t rec;
        memcpy(&rec, buf + at, 4);
        if (bgzf_flush_try(fp, 4 + (ssize_t)rec) < 0)
            return sbf_error_errno(SBF_E_IO, errno, "%s: write failed", sbf_writer_path(w));
        /* the records that fit in what is left of this block go in one bgzf_write */
        size_t room = (size_t)(BGZF_BLOCK_SIZE - fp->block_offset);
        while (at + run < len) {
            memcpy(&rec, buf + at + run, 4);
            if (run + 4 + rec > room && run > 0)
                break;
            run += 4 + (size_t)rec;
        }
        if (bgzf_write(fp, buf + at, run) != (ssize_t)run)
            return sbf_error_errno(SBF_E_IO, errno, "%s: write failed", sbf_writer_path(w));
        at += run;
    }
    w->records += (long long)n_records;
    return SBF_OK;
}

/* Close everything; 0 or a negative status (recorded as the error message only if `report`:
 * an abort must not replace the message of the failure that caused it). */
static int writer_close(sbf_writer_t *w, int report)
{
    int rc = SBF_OK;
    if (w->hts) {
        if (report && w->idx_tmp && sam_idx_save(w->hts) < 0)
            rc = sbf_error(SBF_E_IO, "%s: cannot write the index (records not coordinate-sorted?)", sbf_writer_path(w));
        if (hts_close(w->hts) < 0 && rc == SBF_OK && report)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: write failed on close", sbf_writer_path(w));
        w->hts = NULL;
    }
    if (w->bgzf) {
        if (bgzf_close(w->bgzf) < 0 && rc == SBF_OK && report)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: write failed on close", sbf_writer_path(w));
        w->bgzf = NULL;
    }
    if (w->text_fd >= 0) {   /* no fdatasync: see TEXT_CHUNK */
        if (report && text_flush(w) < 0 && rc == SBF_OK)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: write failed", sbf_writer_path(w));
        if (close(w->text_fd) < 0 && rc == SBF_OK && report)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: write failed on close", sbf_writer_path(w));
        w->text_fd = -1;
    }
    return rc;
}

static void writer_free(sbf_writer_t *w)
{
    if (w->hdr)
        sam_hdr_destroy(w->hdr);
    if (w->scratch)
        bam_destroy1(w->scratch);
    free(w->line.s);
    free(w->pending.s);
    free(w->path);
    free(w->tmp);
    free(w->idx_tmp);
    free(w);
}

int sbf_writer_commit(sbf_writer_t *w)
{
    int rc = writer_close(w, 1);
    if (rc == SBF_OK && w->tmp) {
        if (w->idx_tmp) {
            size_t n = strlen(w->path) + 8;
            char *idx = malloc(n);
            if (!idx) {
                rc = sbf_error(SBF_E_NOMEM, "out of memory");
            } else {
                snprintf(idx, n, "%s.%s", w->path, w->opt.spec.fmt == SBF_OUT_BAM ? "csi" : "crai");
                if (sbf_tmpfile_commit(w->idx_tmp, idx) != 0)
                    rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot rename the index into place", idx);
                free(idx);
            }
        }
        if (rc == SBF_OK && sbf_tmpfile_commit(w->tmp, w->path) != 0)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot rename the temporary file into place", w->path);
    }
    if (rc != SBF_OK) {
        if (w->tmp)
            sbf_tmpfile_discard(w->tmp);
        if (w->idx_tmp)
            sbf_tmpfile_discard(w->idx_tmp);
    }
    writer_free(w);
    return rc;
}

void sbf_writer_abort(sbf_writer_t *w)
{
    if (!w)
        return;
    int saved = errno;
    writer_close(w, 0);
    if (w->tmp)
        sbf_tmpfile_discard(w->tmp);
    if (w->idx_tmp)
        sbf_tmpfile_discard(w->idx_tmp);
    writer_free(w);
    errno = saved;
}

char *sbf_safe_file_part(const char *name)
{
    size_t n = strlen(name);
    char *f = malloc(n + 2);
    if (!f)
        return NULL;
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)name[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                 c == '_' || c == '+' || c == '-';
        f[i] = ok ? (char)c : '_';
    }
    if (n == 0)
        f[n++] = '_';
    if (f[0] == '.')
        f[0] = '_';
    f[n] = '\0';
    return f;
}
