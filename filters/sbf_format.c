/* sbf_format.c -- writing and loading .sbf files. The loader trusts nothing in the file: every
 * length is checked against what remains before it is used, and the arithmetic on sizes is
 * done so that it cannot overflow. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbf_build.h"
#include "sbf_checksum.h"
#include "sbf_kmer.h"
#include "sbf_error.h"
#include "sbf_format.h"
#include "sbf_tmpfile.h"

/* Header fields, by byte offset (little-endian). */
enum {
    H_MAGIC = 0, H_VERSION = 8, H_BYTE_ORDER = 12, H_HEADER_BYTES = 16, H_K = 20, H_M = 24, H_S = 28,
    H_HASHES = 32, H_SHARD_BITS = 36, H_N_TARGETS = 40, H_N_PANELS = 44, H_BITS_PER_KMER = 48, H_META_OFFSET = 56,
    H_META_BYTES = 64, H_META_CHECKSUM = 72, H_DATA_OFFSET = 80, H_FILE_BYTES = 88,
    H_LAYER_OFFSET = 96, H_LAYER_BYTES = 104, H_CHECKSUM = 120
};
#define BYTE_ORDER_MARK 0x01020304u
#define MAX_TARGETS 65535u
#define MAX_NAME 4096u

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint64_t align_up(uint64_t x) { return (x + SBF_ALIGN - 1) & ~(uint64_t)(SBF_ALIGN - 1); }

/* ---- metadata serialisation ---- */

typedef struct {
    uint8_t *buf;
    size_t len, cap;
    int failed;
} wbuf_t;

static void wb_put(wbuf_t *w, const void *data, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 4096;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *grown = realloc(w->buf, cap);
        if (!grown) {
            w->failed = 1;
            return;
        }
        w->buf = grown;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, data, n);
    w->len += n;
}

static void wb_u32(wbuf_t *w, uint32_t v) { wb_put(w, &v, 4); }
static void wb_u64(wbuf_t *w, uint64_t v) { wb_put(w, &v, 8); }
static void wb_f64(wbuf_t *w, double v) { wb_put(w, &v, 8); }
static void wb_str(wbuf_t *w, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    wb_u32(w, n);
    wb_put(w, s, n);
}

static void wb_strings(wbuf_t *w, char *const *list, int n)
{
    wb_u32(w, (uint32_t)n);
    for (int i = 0; i < n; ++i)
        wb_str(w, list[i]);
}

typedef struct {
    const uint8_t *p, *end;
    int failed;
} rbuf_t;

static const uint8_t *rb_take(rbuf_t *r, size_t n)
{
    if (r->failed || (size_t)(r->end - r->p) < n) {
        r->failed = 1;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

static uint32_t rb_u32(rbuf_t *r) { const uint8_t *p = rb_take(r, 4); return p ? get32(p) : 0; }
static uint64_t rb_u64(rbuf_t *r) { const uint8_t *p = rb_take(r, 8); return p ? get64(p) : 0; }
static double rb_f64(rbuf_t *r)
{
    double v = 0;
    const uint8_t *p = rb_take(r, 8);
    if (p)
        memcpy(&v, p, 8);
    return v;
}

/* A length-prefixed string, copied; NULL (and r->failed) if it does not fit or is too long. */
static char *rb_str(rbuf_t *r)
{
    uint32_t n = rb_u32(r);
    if (n > MAX_NAME) {
        r->failed = 1;
        return NULL;
    }
    const uint8_t *p = rb_take(r, n);
    if (!p)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->failed = 1;
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* A counted list of strings (a target's sources, or its masks) into *list / *n: SBF_OK,
 * SBF_E_FORMAT (r->failed is then set) or SBF_E_NOMEM. *n counts the strings read so far, so
 * that the target's release frees them whatever happens. */
static int rb_strings(rbuf_t *r, char ***list, int *n)
{
    uint32_t count = rb_u32(r);
    if (count > MAX_TARGETS * 16u)
        r->failed = 1;   /* the caller's check of r->failed names the target */
    if (r->failed)
        return SBF_E_FORMAT;
    if (count && !(*list = calloc(count, sizeof **list)))
        return SBF_E_NOMEM;
    for (uint32_t j = 0; j < count && !r->failed; ++j) {
        (*list)[j] = rb_str(r);
        *n = (int)j + 1;
    }
    return r->failed ? SBF_E_FORMAT : SBF_OK;
}

/* ---- writing ---- */

static int write_all(int fd, const void *data, size_t n, const char *path)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return sbf_error_errno(SBF_E_IO, errno, "%s: write failed", path);
        }
        p += w;
        n -= (size_t)w;
    }
    return SBF_OK;
}

/* Format 3: the targets' records, then the panels' (doc/format.md). */
static int build_metadata(sbf_index_t *idx, uint64_t data_offset, wbuf_t *w, uint64_t *file_bytes)
{
    for (int r = 0; r < idx->n_targets; ++r) {
        const sbf_target_t *t = &idx->targets[r];
        wb_str(w, t->name);
        wb_strings(w, t->sources, t->n_sources);
        wb_u64(w, t->bases);
        wb_u64(w, t->kmers);
        wb_u64(w, t->n_shards);
        wb_f64(w, t->fill);
        wb_f64(w, t->predicted_fpr);
        wb_f64(w, t->clump);
        wb_u32(w, (uint32_t)t->panel);
        wb_u32(w, t->col0);
        wb_u32(w, t->cols);
        wb_strings(w, t->masks, t->n_masks);
        wb_u64(w, t->masked);
        wb_f64(w, t->chance);
    }
    uint64_t off = data_offset;
    for (int q = 0; q < idx->n_panels; ++q) {
        sbf_panel_t *pn = &idx->panels[q];
        uint64_t bytes = sbf_panel_bytes(idx, pn);   /* pn->checksum: filled while writing (panel_sums_store) */
        wb_u64(w, pn->n_shards);
        wb_u32(w, pn->log2_width);
        wb_u32(w, 0);
        wb_u64(w, off);
        wb_u64(w, bytes);
        wb_u64(w, pn->checksum);
        off = align_up(off + bytes);
    }
    *file_bytes = off;
    return w->failed ? sbf_error(SBF_E_NOMEM, "out of memory writing index metadata") : SBF_OK;
}

uint64_t sbf_format_identity(const uint8_t *header, const uint8_t *layer_header)
{
    uint8_t both[2 * SBF_HEADER_BYTES];
    memcpy(both, header, SBF_HEADER_BYTES);
    if (layer_header)
        memcpy(both + SBF_HEADER_BYTES, layer_header, SBF_HEADER_BYTES);
    return sbf_xxh64(both, layer_header ? 2 * SBF_HEADER_BYTES : SBF_HEADER_BYTES, 0);
}

/* One index image (the index, or its long-read layer): header, metadata, filter arrays. */
typedef struct {
    wbuf_t meta;
    uint8_t header[SBF_HEADER_BYTES];
    uint64_t bytes;   /* the image's size: its last array's end, rounded up to SBF_ALIGN */
} image_t;

static int image_check(const sbf_index_t *idx, const char *path)
{
    if (idx->n_targets < 1 || (unsigned)idx->n_targets > MAX_TARGETS)
        return sbf_error(SBF_E_PARAM, "%s: an index holds 1 to %u targets, not %d", path, MAX_TARGETS,
                         idx->n_targets);
    for (int q = 0; q < idx->n_panels; ++q)
        if (idx->panels[q].n_members < 1)
            return sbf_error(SBF_E_PARAM, "%s: panel %d holds no target", path, q + 1);
    for (int r = 0; r < idx->n_targets; ++r)
        if (strlen(idx->targets[r].name) > MAX_NAME)
            return sbf_error(SBF_E_PARAM, "%s: target name longer than %u bytes", path, MAX_NAME);
    return SBF_OK;
}

/* The image's metadata and header, its offsets relative to its own start; the header records no
 * layer and the image's own size as the file's (sbf_index_write() sets both for a file with a
 * layer, and the header checksum again). */
static int image_prepare(sbf_index_t *idx, image_t *im)
{
    /* The metadata's size does not depend on the offsets it records: size it once, then fill. */
    memset(im, 0, sizeof *im);
    int rc = build_metadata(idx, 0, &im->meta, &im->bytes);
    uint64_t data_offset = align_up(SBF_HEADER_BYTES + im->meta.len);
    im->meta.len = 0;
    if (rc == SBF_OK)
        rc = build_metadata(idx, data_offset, &im->meta, &im->bytes);
    if (rc != SBF_OK)
        return rc;
    uint8_t *header = im->header;
    memcpy(header + H_MAGIC, SBF_MAGIC, 8);
    put32(header + H_VERSION, SBF_FORMAT_VERSION);
    put32(header + H_BYTE_ORDER, BYTE_ORDER_MARK);
    put32(header + H_HEADER_BYTES, SBF_HEADER_BYTES);
    put32(header + H_K, (uint32_t)idx->params.k);
    put32(header + H_M, (uint32_t)idx->params.m);
    put32(header + H_S, (uint32_t)idx->params.s);
    put32(header + H_HASHES, (uint32_t)idx->params.hashes);
    put32(header + H_SHARD_BITS, (uint32_t)idx->params.shard_bits);
    put32(header + H_N_TARGETS, (uint32_t)idx->n_targets);
    put32(header + H_N_PANELS, (uint32_t)idx->n_panels);
    memcpy(header + H_BITS_PER_KMER, &idx->bits_per_kmer, 8);
    put64(header + H_META_OFFSET, SBF_HEADER_BYTES);
    put64(header + H_META_BYTES, im->meta.len);
    put64(header + H_META_CHECKSUM, sbf_xxh64(im->meta.buf, im->meta.len, 0));
    put64(header + H_DATA_OFFSET, data_offset);
    put64(header + H_FILE_BYTES, im->bytes);
    put64(header + H_CHECKSUM, sbf_xxh64(header, H_CHECKSUM, 0));
    return SBF_OK;
}

/* Every panel's checksum, of an index and of its layer: sum[] in file order (the index's panels,
 * then its layer's). Format 5 hashes each array in pieces (sbf_checksum.h), tasks the threads
 * take in turn, and combines the pieces' sums once all are done; an array of a file of format 4
 * or older has one XXH64 of its whole, one task, and those go first, largest first (a human
 * index's 5.7 GB panel was one stream of 2.0 s on one of the H200 machine's threads). The writer
 * takes the tasks beside its copies (write_mapped, sbf_format_spill_panel), the loader alone
 * (verify_filters). */
typedef struct {
    const sbf_panel_t *pn;
    uint64_t bytes, sum;
    int known;         /* sum is known already (a spilled panel's): no task */
    int whole;         /* one XXH64 of the array (a file of format 4 or older) */
    uint64_t *piece;   /* else its pieces' XXH64s (NULL where the sum is known) */
} panel_sum_t;

typedef struct {
    panel_sum_t *t;
    uint64_t piece;    /* of a panel hashed in pieces: which one */
} sum_task_t;

typedef struct {
    panel_sum_t *sum;
    int n;
    sum_task_t *task;   /* in the order the threads take them */
    size_t n_tasks;
} panel_sums_t;

static int larger_first(const void *a, const void *b)
{
    const uint64_t x = ((const sum_task_t *)a)->t->bytes, y = ((const sum_task_t *)b)->t->bytes;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Room for n panels; 0, or -1 when out of memory (the caller says so, and frees s). */
static int panel_sums_alloc(panel_sums_t *s, int n)
{
    memset(s, 0, sizeof *s);
    s->sum = calloc((size_t)(n ? n : 1), sizeof *s->sum);
    return s->sum ? 0 : -1;
}

/* Panel pn (bytes of array) to be summed, or its sum already known (`known`: a spilled panel). */
static void panel_sums_add(panel_sums_t *s, const sbf_panel_t *pn, uint64_t bytes, int whole, int known)
{
    s->sum[s->n++] = (panel_sum_t){pn, bytes, known ? pn->checksum : 0, known, whole, NULL};
}

/* The tasks of the panels added: 0, or -1 when out of memory. */
static int panel_sums_plan(panel_sums_t *s)
{
    size_t n = 0;
    for (int i = 0; i < s->n; ++i)
        if (!s->sum[i].known)
            n += s->sum[i].whole ? 1 : sbf_checksum_pieces(s->sum[i].bytes);
    if (!(s->task = calloc(n ? n : 1, sizeof *s->task)))
        return -1;
    size_t whole = 0;
    for (int i = 0; i < s->n; ++i) {
        panel_sum_t *t = &s->sum[i];
        if (t->known || !t->whole)
            continue;
        s->task[s->n_tasks++] = (sum_task_t){t, 0};
        ++whole;
    }
    qsort(s->task, whole, sizeof *s->task, larger_first);
    for (int i = 0; i < s->n; ++i) {
        panel_sum_t *t = &s->sum[i];
        if (t->known || t->whole)
            continue;
        const uint64_t pieces = sbf_checksum_pieces(t->bytes);
        if (!(t->piece = calloc((size_t)pieces, sizeof *t->piece)))
            return -1;
        for (uint64_t p = 0; p < pieces; ++p)
            s->task[s->n_tasks++] = (sum_task_t){t, p};
    }
    return 0;
}

/* Every panel of idx and of its layer, as a file of format `version` sums them (the version it
 * was read from, to verify it; SBF_FORMAT_VERSION, to write it); 0, or -1 when out of memory
 * (the caller says so, and frees s). */
static int panel_sums_init(const sbf_index_t *idx, unsigned version, panel_sums_t *s)
{
    int n = 0;
    for (const sbf_index_t *x = idx; x; x = x->layer)
        n += x->n_panels;
    if (panel_sums_alloc(s, n) != 0)
        return -1;
    for (const sbf_index_t *x = idx; x; x = x->layer)
        for (int q = 0; q < x->n_panels; ++q) {
            const sbf_panel_t *pn = &x->panels[q];
            panel_sums_add(s, pn, sbf_panel_bytes(x, pn), version < 5, pn->spill_map != NULL);
        }
    return panel_sums_plan(s);
}

/* One task: a whole array's XXH64, or one piece's. */
static void sum_task_run(const sum_task_t *task)
{
    panel_sum_t *t = task->t;
    if (t->whole) {
        t->sum = sbf_xxh64(t->pn->bits, t->bytes, 0);
        return;
    }
    const uint64_t at = task->piece * SBF_CHECKSUM_PIECE;
    const uint64_t n = t->bytes - at < SBF_CHECKSUM_PIECE ? t->bytes - at : SBF_CHECKSUM_PIECE;
    t->piece[task->piece] = sbf_xxh64((const uint8_t *)t->pn->bits + at, (size_t)n, 0);
}

/* Every task run: the pieces' sums into their panels' sums. */
static void panel_sums_combine(panel_sums_t *s)
{
    for (int i = 0; i < s->n; ++i)
        if (s->sum[i].piece)
            s->sum[i].sum = sbf_checksum_of_pieces(s->sum[i].piece, sbf_checksum_pieces(s->sum[i].bytes));
}

static void panel_sums_free(panel_sums_t *s)
{
    for (int i = 0; s->sum && i < s->n; ++i)
        free(s->sum[i].piece);
    free(s->sum);
    free(s->task);
    memset(s, 0, sizeof *s);
}

/* The index's and its layer's images (header and metadata), the layer's placed after the
 * index's; the panels' checksums as they are now (the metadata's size does not depend on them,
 * so the layout holds when they are filled in and the images made again). */
static int images_prepare(sbf_index_t *idx, image_t *im, image_t *layer)
{
    memset(layer, 0, sizeof *layer);
    int rc = image_prepare(idx, im);
    if (rc == SBF_OK && idx->layer && (rc = image_prepare(idx->layer, layer)) == SBF_OK) {
        /* the layer's image follows the index's: the file's size, and where the layer lies */
        put64(im->header + H_FILE_BYTES, im->bytes + layer->bytes);
        put64(im->header + H_LAYER_OFFSET, im->bytes);
        put64(im->header + H_LAYER_BYTES, layer->bytes);
        put64(im->header + H_CHECKSUM, sbf_xxh64(im->header, H_CHECKSUM, 0));
    }
    return rc;
}

static void images_free(image_t *im, image_t *layer)
{
    free(im->meta.buf);
    free(layer->meta.buf);
    im->meta.buf = layer->meta.buf = NULL;
}

/* The file written through a shared mapping of it, its space reserved first (fallocate): the
 * threads copy the filters into the page cache at once. write() copies on one thread, 0.5 GB/s
 * on the development VM, where the mapping took half the time on one thread and less on two
 * (issue 27: 9.2 GB to write for a human index). The reservation makes a full disk an error
 * here, not a signal when a page is first written. */
typedef struct {
    uint8_t *dst;
    const uint8_t *src;
    uint64_t n;
} copy_piece_t;

/* The panels' sums, then the copy pieces (none when only summing), taken one at a time. */
typedef struct {
    panel_sums_t *sums;
    copy_piece_t *piece;
    size_t n, next;   /* pieces; next: the next task, taken atomically */
} sum_copy_job_t;

static void *sum_copy_worker(void *arg)
{
    sum_copy_job_t *job = arg;
    const size_t n_sums = job->sums->n_tasks;
    for (;;) {
        size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i < n_sums) {
            sum_task_run(&job->sums->task[i]);
            continue;
        }
        if ((i -= n_sums) >= job->n)
            return NULL;
        memcpy(job->piece[i].dst, job->piece[i].src, job->piece[i].n);
        /* The copied pages leave this process's memory: they are the page cache's (dirty, to be
         * written back), and counted in RSS beside the filters they copy they made a 9.19 GB
         * index's build peak at 17.7 GB instead of 15.1 (issue 27). Whole pages only. */
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)job->piece[i].dst;
        const uintptr_t first = (a + page - 1) & ~(page - 1), end = (a + job->piece[i].n) & ~(page - 1);
        if (end > first)
            (void)madvise((void *)first, end - first, MADV_DONTNEED);   /* advice: a refusal costs memory only */
    }
}

#define COPY_PIECE (64u << 20)

/* Pieces of at most COPY_PIECE bytes of one image's filters placed at map + base (the header
 * and metadata are copied once the checksums are known); spilled panels are left out when the
 * file is the spill's, where they lie already (in_place). SBF_OK or SBF_E_NOMEM. */
static int image_pieces(const sbf_index_t *idx, const image_t *im, uint8_t *map, uint64_t base, sum_copy_job_t *job,
                        size_t *cap, int in_place)
{
    uint64_t at = base + sizeof im->header + im->meta.len;
    for (int q = 0; q < idx->n_panels; ++q) {
        at = base + align_up(at - base);   /* the padding: zeros, as fallocate left them */
        uint64_t bytes = sbf_panel_bytes(idx, &idx->panels[q]);
        for (uint64_t o = 0; o < bytes && !(in_place && idx->panels[q].spill_map); o += COPY_PIECE) {
            if (job->n == *cap) {
                size_t c = *cap ? 2 * *cap : 1024;
                copy_piece_t *grown = realloc(job->piece, c * sizeof *grown);
                if (!grown)
                    return sbf_error(SBF_E_NOMEM, "out of memory");
                job->piece = grown;
                *cap = c;
            }
            const uint64_t n = bytes - o < COPY_PIECE ? bytes - o : COPY_PIECE;
            job->piece[job->n++] = (copy_piece_t){map + at + o, (const uint8_t *)idx->panels[q].bits + o, n};
        }
        at += bytes;
    }
    return SBF_OK;
}

/* job on up to `threads` threads, no more than it has tasks. */
static void sum_copy_run(sum_copy_job_t *job, int threads)
{
    const size_t tasks = job->n + job->sums->n_tasks;
    sbf_run_threads((size_t)threads < tasks ? threads : (int)tasks, sum_copy_worker, job);
    panel_sums_combine(job->sums);
}

/* The sums taken (for a file of this sbf's format), into the panels of idx and of its layer (the
 * same file order): their checksums are the format's from now on. */
static void panel_sums_store(sbf_index_t *idx, const panel_sums_t *s)
{
    int i = 0;
    for (sbf_index_t *x = idx; x; x = x->layer) {
        for (int q = 0; q < x->n_panels; ++q)
            x->panels[q].checksum = s->sum[i++].sum;
        x->format_version = SBF_FORMAT_VERSION;
    }
}

/* The job run (the panels' sums, and its copy pieces if any), the sums stored into the panels,
 * and the images made again with them: the same layout, checked. */
static int sums_and_images(sbf_index_t *idx, sum_copy_job_t *job, int threads, image_t *im, image_t *layer,
                           const char *path)
{
    sum_copy_run(job, threads);
    panel_sums_store(idx, job->sums);
    const uint64_t bytes = im->bytes;
    images_free(im, layer);
    int rc = images_prepare(idx, im, layer);
    if (rc == SBF_OK && im->bytes != bytes)
        rc = sbf_error(SBF_E_PARAM, "%s: internal error: the index's layout changed while written", path);
    return rc;
}

/* The images through a mapping: SBF_OK, an error, or 1 when the file system offers no
 * reservation or no shared mapping (the caller then writes). */
int sbf_format_write_unmapped = 0;
unsigned sbf_format_unmapped_writes = 0;

static int write_mapped(int fd, sbf_index_t *idx, image_t *im, image_t *layer, uint64_t total, int threads,
                        const char *path, int in_place)
{
    if (sbf_format_write_unmapped)
        return 1;
    int e = posix_fallocate(fd, 0, (off_t)total);
    if (e == EOPNOTSUPP || e == EINVAL || e == ENODEV)
        return 1;
    if (e)
        return sbf_error_errno(SBF_E_IO, e, "%s: cannot reserve %llu bytes", path, (unsigned long long)total);
    uint8_t *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return 1;
#ifdef MADV_HUGEPAGE
    /* The page cache then holds the file in 2 MiB folios, which every later run's mapping of
     * it maps whole: the CPU engine's random probes miss the TLB far less. Without it, the
     * threads' faults left about half the file in small folios (FilePmdMapped 1.2-1.8 of 3.1 GB
     * on the VM), and the CPU engine ran 1.5x slower against the fresh index than after the
     * file was read again from disk. Advice: a kernel without it writes the same bytes. */
    (void)madvise(map, total, MADV_HUGEPAGE);
#endif
    panel_sums_t sums;
    sum_copy_job_t job = {&sums, NULL, 0, 0};
    size_t cap = 0;
    int rc = panel_sums_init(idx, SBF_FORMAT_VERSION, &sums) == 0 ? SBF_OK : sbf_error(SBF_E_NOMEM, "out of memory");
    if (rc == SBF_OK)
        rc = image_pieces(idx, im, map, 0, &job, &cap, in_place);
    if (rc == SBF_OK && idx->layer)
        rc = image_pieces(idx->layer, layer, map, im->bytes, &job, &cap, in_place);
    if (rc == SBF_OK) {
        /* the checksums known: the images again, their headers last */
        rc = sums_and_images(idx, &job, threads, im, layer, path);
        for (int i = 0; rc == SBF_OK && i < (idx->layer ? 2 : 1); ++i) {
            const image_t *x = i ? layer : im;
            uint8_t *at = map + (i ? im->bytes : 0);
            memcpy(at, x->header, sizeof x->header);
            memcpy(at + sizeof x->header, x->meta.buf, x->meta.len);
        }
    }
    panel_sums_free(&sums);
    free(job.piece);
    if (munmap(map, total) != 0 && rc == SBF_OK)
        rc = sbf_error_errno(SBF_E_IO, errno, "%s: write failed", path);
    return rc;
}

/* Write the image: im->bytes bytes, padding included. */
static int image_write(int fd, const sbf_index_t *idx, const image_t *im, const char *path)
{
    static const uint8_t zeros[SBF_ALIGN];
    int rc = write_all(fd, im->header, sizeof im->header, path);
    if (rc == SBF_OK)
        rc = write_all(fd, im->meta.buf, im->meta.len, path);
    uint64_t at = SBF_HEADER_BYTES + im->meta.len;
    for (int q = 0; rc == SBF_OK && q < idx->n_panels; ++q) {
        uint64_t pad = align_up(at) - at;
        rc = write_all(fd, zeros, pad, path);
        at += pad;
        uint64_t bytes = sbf_panel_bytes(idx, &idx->panels[q]);
        if (rc == SBF_OK)
            rc = write_all(fd, idx->panels[q].bits, bytes, path);
        at += bytes;
    }
    if (rc == SBF_OK && align_up(at) != at)
        rc = write_all(fd, zeros, align_up(at) - at, path);
    return rc;
}

/* ---- a build writing its finished panels at once ---- */

struct sbf_spill_s {
    int fd;                    /* the temporary file, reserved at its final size; -1 once handed on */
    char *tmp, *path;          /* its name, and the name sbf_index_write gives it */
    uint64_t data_offset[2];   /* the first filter array of the index's image and of its layer's */
    uint64_t layer_base;       /* where the layer's image starts */
};

int sbf_format_spill_open(sbf_index_t *idx, sbf_index_t *layer, const char *path)
{
    struct stat st;
    if (sbf_format_write_unmapped || (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) || image_check(idx, path) ||
        (layer && image_check(layer, path)))
        return 1;   /* no spill: sbf_index_write says what is wrong, as without one */
    sbf_index_t *had = idx->layer;
    idx->layer = layer;   /* the layout of the file the two make */
    image_t im, lim;
    int rc = images_prepare(idx, &im, &lim);
    idx->layer = had;
    struct sbf_spill_s *sp = rc == SBF_OK ? calloc(1, sizeof *sp) : NULL;
    if (sp)
        sp->fd = -1;   /* (calloc's 0 is standard input's) */
    if (rc == SBF_OK && (!sp || !(sp->path = strdup(path))))
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
    if (rc == SBF_OK) {
        sp->data_offset[0] = get64(im.header + H_DATA_OFFSET);
        sp->data_offset[1] = layer ? get64(lim.header + H_DATA_OFFSET) : 0;
        sp->layer_base = im.bytes;
        if ((sp->fd = sbf_tmpfile_create(path, &sp->tmp)) < 0) {
            rc = sp->fd;
        } else {
            const int e = posix_fallocate(sp->fd, 0, (off_t)(im.bytes + lim.bytes));
            if (e == EOPNOTSUPP || e == EINVAL || e == ENODEV)
                rc = 1;
            else if (e)
                rc = sbf_error_errno(SBF_E_IO, e, "%s: cannot reserve %llu bytes", path,
                                     (unsigned long long)(im.bytes + lim.bytes));
        }
    }
    images_free(&im, &lim);
    if (rc != SBF_OK) {
        if (sp && sp->fd >= 0) {
            close(sp->fd);
            sbf_tmpfile_discard(sp->tmp);
        }
        if (sp) {
            free(sp->tmp);
            free(sp->path);
        }
        free(sp);
        return rc;
    }
    idx->spill = sp;
    return SBF_OK;
}

void sbf_format_spill_free(sbf_index_t *idx)
{
    struct sbf_spill_s *sp = idx->spill;
    if (!sp)
        return;
    if (sp->fd >= 0) {   /* never committed */
        close(sp->fd);
        sbf_tmpfile_discard(sp->tmp);
    }
    free(sp->tmp);
    free(sp->path);
    free(sp);
    idx->spill = NULL;
}

int sbf_format_spill_panel(sbf_index_t *idx, sbf_index_t *x, int q, int threads)
{
    struct sbf_spill_s *sp = idx->spill;
    sbf_panel_t *pn = &x->panels[q];
    if (!sp || sp->fd < 0 || pn->spill_map || !pn->bits)
        return SBF_OK;
    const int in_layer = x != idx;
    uint64_t off = (in_layer ? sp->layer_base : 0) + sp->data_offset[in_layer];
    for (int p = 0; p < q; ++p)
        off += align_up(sbf_panel_bytes(x, &x->panels[p]));
    const uint64_t bytes = sbf_panel_bytes(x, pn), page = (uint64_t)sysconf(_SC_PAGESIZE);
    const uint64_t start = off & ~(page - 1), len = off + bytes - start;
    uint8_t *rw = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, sp->fd, (off_t)start);
    if (rw == MAP_FAILED)
        return SBF_OK;   /* it stays in memory, written with the rest */
#ifdef MADV_HUGEPAGE
    (void)madvise(rw, (size_t)len, MADV_HUGEPAGE);   /* as write_mapped, for the runs' TLB */
#endif
    /* its checksum (format 5: in pieces) and the copy on the threads, as the writer takes them */
    panel_sums_t sums;
    sum_copy_job_t job = {&sums, NULL, 0, 0};
    size_t cap = 0;
    int rc = SBF_OK;
    if (panel_sums_alloc(&sums, 1) == 0) {
        panel_sums_add(&sums, pn, bytes, 0, 0);
        if (panel_sums_plan(&sums) != 0)
            rc = sbf_error(SBF_E_NOMEM, "out of memory");
    } else {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
    }
    for (uint64_t o = 0; o < bytes && rc == SBF_OK; o += COPY_PIECE) {
        if (job.n == cap) {
            size_t c = cap ? 2 * cap : 64;
            copy_piece_t *grown = realloc(job.piece, c * sizeof *grown);
            if (!grown)
                rc = sbf_error(SBF_E_NOMEM, "out of memory");
            else
                job.piece = grown, cap = c;
        }
        if (rc == SBF_OK)
            job.piece[job.n++] = (copy_piece_t){rw + (off - start) + o, (const uint8_t *)pn->bits + o,
                                                bytes - o < COPY_PIECE ? bytes - o : COPY_PIECE};
    }
    if (rc == SBF_OK)
        sum_copy_run(&job, threads);
    const uint64_t sum = sums.n ? sums.sum[0].sum : 0;
    panel_sums_free(&sums);
    free(job.piece);
    if (munmap(rw, (size_t)len) != 0 && rc == SBF_OK)
        rc = sbf_error_errno(SBF_E_IO, errno, "%s: write failed", sp->path);
    if (rc != SBF_OK)
        return rc;
    uint8_t *ro = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, sp->fd, (off_t)start);
    if (ro == MAP_FAILED)
        return SBF_OK;   /* in memory still; written again with the rest */
    pn->checksum = sum;
    sbf_filter_free(pn->bits, (size_t)bytes);
    pn->bits = (uint64_t *)(ro + (off - start));
    pn->spill_map = ro;
    pn->spill_len = (size_t)len;
    if (pn->log2_width == 0)   /* a plain panel's target reads the panel's array */
        x->targets[pn->members[0]].bits = pn->bits;
    return SBF_OK;
}

int sbf_index_write(sbf_index_t *idx, const char *path)
{
    /* The file is written beside path and renamed over it: never do that to a device or a pipe. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return sbf_error(SBF_E_IO, "%s: exists and is not a regular file", path);
    int rc = image_check(idx, path);
    if (rc == SBF_OK && idx->layer && (rc = image_check(idx->layer, path)) == SBF_OK &&
        (idx->layer->layer || idx->layer->n_targets != idx->n_targets))
        rc = sbf_error(SBF_E_PARAM, "%s: a long-read layer must hold the index's targets and no layer", path);
    if (rc != SBF_OK)
        return rc;
    image_t im, layer;
    const int threads = idx->threads > 1 ? idx->threads : 1;
    rc = images_prepare(idx, &im, &layer);   /* the layout; the checksums come while writing */
    char *tmp = NULL;
    int fd = -1;
    struct sbf_spill_s *sp = idx->spill;
    const int in_place = rc == SBF_OK && sp && sp->fd >= 0 && !strcmp(sp->path, path);
    if (in_place) {
        fd = sp->fd;   /* the build's file, its spilled panels in place: completed here */
        tmp = sp->tmp;
        sp->fd = -1;
        sp->tmp = NULL;
    } else if (rc == SBF_OK && (fd = sbf_tmpfile_create(path, &tmp)) < 0) {
        rc = fd;
    }
    if (rc == SBF_OK)
        rc = write_mapped(fd, idx, &im, &layer, im.bytes + layer.bytes, threads, path, in_place);
    if (rc == 1) {   /* no mapping here: the checksums first, then write() */
        panel_sums_t sums;
        sum_copy_job_t job = {&sums, NULL, 0, 0};   /* the checksums alone */
        rc = panel_sums_init(idx, SBF_FORMAT_VERSION, &sums) == 0 ? SBF_OK : sbf_error(SBF_E_NOMEM, "out of memory");
        if (rc == SBF_OK)
            rc = sums_and_images(idx, &job, threads, &im, &layer, path);
        panel_sums_free(&sums);
        if (rc == SBF_OK)
            rc = image_write(fd, idx, &im, path);
        if (rc == SBF_OK && idx->layer)
            rc = image_write(fd, idx->layer, &layer, path);
        if (rc == SBF_OK)
            __atomic_fetch_add(&sbf_format_unmapped_writes, 1u, __ATOMIC_RELAXED);
    }
    if (fd >= 0) {
        /* No fsync: the kernel writes the pages back after the rename. A file the machine lost
         * in between (a crash within seconds) is zeros where pages were missing, which the
         * first run against it finds (it verifies every checksum before trusting a file), as
         * `sbf info --check` does. A full disk failed above (the mapping's reservation, or
         * write() itself). The fsync was 4.5 s of a 9.19 GB human index's 25 s build on the
         * H200 machine. */
        if (close(fd) != 0 && rc == SBF_OK)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: close failed", path);
        if (rc == SBF_OK && sbf_tmpfile_commit(tmp, path) != 0)
            rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot rename the temporary file into place", path);
        if (rc != SBF_OK)
            sbf_tmpfile_discard(tmp);
    }
    if (rc == SBF_OK)
        idx->file_checksum = sbf_format_identity(im.header, idx->layer ? layer.header : NULL);
    free(tmp);
    images_free(&im, &layer);
    return rc;
}

/* ---- loading ---- */

/* Bytes no checksum covers (alignment padding) must be zero, so that no flipped byte passes. */
static int all_zero(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i)
        if (p[i])
            return 0;
    return 1;
}

/* A panel's array: in order after the one before, aligned, inside the file, sized by its shards
 * and width. Its bits hold the offset until the file is mapped. */
static int place_panel(sbf_index_t *idx, sbf_panel_t *pn, uint64_t offset, uint64_t bytes, uint64_t *expect,
                       uint64_t file_bytes)
{
    const uint64_t shard_bytes = (uint64_t)idx->params.shard_bits / 8u;
    if (pn->n_shards == 0 || pn->n_shards > SBF_MAX_SHARDS || pn->log2_width > SBF_MAX_PANEL_LOG2 ||
        bytes != (pn->n_shards * shard_bytes) << pn->log2_width || offset != *expect || offset > file_bytes ||
        bytes > file_bytes - offset)
        return 0;
    pn->bits = (uint64_t *)(uintptr_t)offset;
    *expect = align_up(offset + bytes);
    return 1;
}

/* Version 2 records each target's array in its record (a plain panel each); version 3 records
 * the target's panel and columns, then the panels. */
static int parse_meta(sbf_index_t *idx, const uint8_t *meta, uint64_t meta_bytes, uint32_t version, uint32_t n_targets,
                      uint32_t n_panels, uint64_t data_offset, uint64_t file_bytes, const char *path)
{
    rbuf_t r = {meta, meta + meta_bytes, 0};
    uint64_t expect = data_offset;
    if (version == 2)
        n_panels = n_targets;
    idx->targets = calloc(n_targets, sizeof *idx->targets);
    idx->panels = calloc(n_panels, sizeof *idx->panels);
    if (!idx->targets || !idx->panels)
        return sbf_error(SBF_E_NOMEM, "out of memory loading %s", path);
    idx->n_panels = (int)n_panels;
    for (uint32_t i = 0; i < n_targets; ++i) {
        sbf_target_t *t = &idx->targets[i];
        idx->n_targets = (int)i + 1;   /* so that sbf_idx_free releases what this one holds */
        t->name = rb_str(&r);
        if (rb_strings(&r, &t->sources, &t->n_sources) == SBF_E_NOMEM)
            return sbf_error(SBF_E_NOMEM, "out of memory loading %s", path);
        t->bases = rb_u64(&r);
        t->kmers = rb_u64(&r);
        t->n_shards = rb_u64(&r);
        t->fill = rb_f64(&r);
        t->predicted_fpr = rb_f64(&r);
        if (version == 2) {
            sbf_panel_t *pn = &idx->panels[i];
            uint64_t offset = rb_u64(&r), bytes = rb_u64(&r);
            pn->checksum = rb_u64(&r);
            if (r.failed)
                return sbf_error(SBF_E_FORMAT, "%s: corrupt metadata of target %u", path, i + 1);
            t->clump = -1;   /* computed when a query first needs it */
            t->panel = (int)i;
            t->cols = 1;
            pn->n_shards = t->n_shards;
            if (!place_panel(idx, pn, offset, bytes, &expect, file_bytes))
                return sbf_error(SBF_E_FORMAT, "%s: filter of target '%s' lies outside the file", path, t->name);
        } else {
            t->clump = rb_f64(&r);
            uint32_t panel = rb_u32(&r);
            t->col0 = rb_u32(&r);
            t->cols = rb_u32(&r);
            /* !(x >= 0 && x <= 1) also refuses NaN */
            if (r.failed || !(t->clump >= 0 && t->clump <= 1) || panel >= n_panels)
                return sbf_error(SBF_E_FORMAT, "%s: corrupt metadata of target %u", path, i + 1);
            t->panel = (int)panel;
        }
        if (version >= 4) {   /* the masks left out of it */
            if (rb_strings(&r, &t->masks, &t->n_masks) == SBF_E_NOMEM)
                return sbf_error(SBF_E_NOMEM, "out of memory loading %s", path);
            t->masked = rb_u64(&r);
            t->chance = rb_f64(&r);
            if (r.failed || !(t->chance >= 0 && t->chance <= 1))
                return sbf_error(SBF_E_FORMAT, "%s: corrupt metadata of target %u", path, i + 1);
        }
        if (!sbf_panel_add_member(&idx->panels[t->panel], (int)i))
            return sbf_error(SBF_E_NOMEM, "out of memory loading %s", path);
    }
    if (version >= 3)
        for (uint32_t q = 0; q < n_panels; ++q) {
            sbf_panel_t *pn = &idx->panels[q];
            pn->n_shards = rb_u64(&r);
            pn->log2_width = rb_u32(&r);
            uint32_t reserved = rb_u32(&r);
            uint64_t offset = rb_u64(&r), bytes = rb_u64(&r);
            pn->checksum = rb_u64(&r);
            if (r.failed || reserved != 0 || !place_panel(idx, pn, offset, bytes, &expect, file_bytes))
                return sbf_error(SBF_E_FORMAT, "%s: filter of panel %u lies outside the file", path, q + 1);
        }
    /* Every panel holds a target; a plain one exactly one; columns inside the panel, apart,
     * and a target's shards those of its columns. */
    for (uint32_t q = 0; q < n_panels; ++q) {
        const sbf_panel_t *pn = &idx->panels[q];
        uint64_t used = 0;
        int bad = pn->n_members < 1 || (pn->log2_width == 0 && pn->n_members != 1);
        for (int m = 0; m < pn->n_members && !bad; ++m) {
            const sbf_target_t *t = &idx->targets[pn->members[m]];
            const uint64_t width = 1ULL << pn->log2_width;
            bad = t->cols < 1 || t->col0 >= width || t->cols > width - t->col0 ||
                  t->n_shards != pn->n_shards * t->cols || t->n_shards > SBF_MAX_SHARDS;
            if (!bad) {
                const uint64_t mine = (t->cols == 64 ? ~0ULL : ((1ULL << t->cols) - 1)) << t->col0;
                bad = (used & mine) != 0;
                used |= mine;
            }
        }
        if (bad)
            return sbf_error(SBF_E_FORMAT, "%s: corrupt metadata: invalid columns in panel %u", path, q + 1);
    }
    if (r.p != r.end || expect != file_bytes)
        return sbf_error(SBF_E_FORMAT, "%s: metadata does not describe the whole file", path);
    return SBF_OK;
}

/* Fuzzing builds (scripts/fuzz.sh) accept wrong checksums, so that mutated files reach the
 * checks behind them; every other check stays. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CHECKSUM_DIFFERS(stored, computed) ((void)(stored), (void)(computed), 0)
#else
#define CHECKSUM_DIFFERS(stored, computed) ((stored) != (computed))
#endif

/* Check and parse one image of `size` bytes at f (a whole file, or the long-read layer inside
 * one: `what` names it in messages); its filters point into f. A layer's image records no layer
 * of its own and its own size. Everything is checked but the filters' checksums
 * (verify_filters, all panels at once). */
static int parse_image(const uint8_t *f, uint64_t size, const char *path, const char *what,
                       uint32_t parent_version, sbf_index_t **out)
{
    *out = NULL;
    int rc = SBF_OK;
    sbf_index_t *idx = NULL;
    const int nested = *what != '\0';

#define FAIL(code, ...) do { rc = sbf_error(code, __VA_ARGS__); goto fail; } while (0)
    if (memcmp(f, SBF_MAGIC, 8) != 0)
        FAIL(SBF_E_FORMAT, "%s%s: not an sbf index (bad magic)", path, what);
    if (size < SBF_HEADER_BYTES)
        FAIL(SBF_E_FORMAT, "%s%s: truncated index (%llu bytes, header needs %u)", path, what,
             (unsigned long long)size, SBF_HEADER_BYTES);
    if (get32(f + H_BYTE_ORDER) != BYTE_ORDER_MARK)
        FAIL(SBF_E_FORMAT, "%s%s: index written with another byte order or corrupt header", path, what);
    if (CHECKSUM_DIFFERS(get64(f + H_CHECKSUM), sbf_xxh64(f, H_CHECKSUM, 0)))
        FAIL(SBF_E_FORMAT, "%s%s: corrupt index header (checksum mismatch)", path, what);
    /* Version 1 hashed with 64-bit splitmix64, version 2 with 32-bit hashes (sbf_kmer.h): an
     * index of version 1 sets other bits, so it is refused, never read. Version 3 added panels;
     * a version-2 file is read as one plain panel per target (the same bits). Version 4 added
     * masks and the long-read layer; version 5 checksums the filters in pieces (a long-read
     * layer is of its index's version). */
    const uint32_t version = get32(f + H_VERSION);
    if (nested && version != parent_version)
        FAIL(SBF_E_FORMAT, "%s%s: invalid format version %u", path, what, version);
    if (version < SBF_FORMAT_OLDEST)
        FAIL(SBF_E_VERSION, "%s: index of format version %u, written by an older sbf (this sbf reads versions %u to %u): rebuild it with sbf build",
             path, version, SBF_FORMAT_OLDEST, SBF_FORMAT_VERSION);
    if (version > SBF_FORMAT_VERSION)
        FAIL(SBF_E_VERSION, "%s: index of format version %u, written by a newer sbf (this sbf reads versions %u to %u): use that sbf, or rebuild the index",
             path, version, SBF_FORMAT_OLDEST, SBF_FORMAT_VERSION);
    uint64_t file_bytes = get64(f + H_FILE_BYTES);
    if (size < file_bytes)
        FAIL(SBF_E_FORMAT, "%s%s: truncated index (%llu of %llu bytes)", path, what, (unsigned long long)size,
             (unsigned long long)file_bytes);
    if (size > file_bytes)
        FAIL(SBF_E_FORMAT, "%s%s: %llu unexpected bytes after the end of the index", path, what,
             (unsigned long long)(size - file_bytes));
    /* the long-read layer (version 4): an image of its own at the end of the file */
    uint64_t layer_offset = version >= 4 ? get64(f + H_LAYER_OFFSET) : 0;
    uint64_t layer_bytes = version >= 4 ? get64(f + H_LAYER_BYTES) : 0;
    if (!all_zero(f + H_LAYER_BYTES + 8, H_CHECKSUM - H_LAYER_BYTES - 8) ||
        (version < 4 && !all_zero(f + H_LAYER_OFFSET, 16)) || (nested && (layer_offset || layer_bytes)) ||
        (layer_offset == 0) != (layer_bytes == 0) ||
        (layer_offset && (layer_offset % SBF_ALIGN || layer_offset > file_bytes || layer_bytes != file_bytes - layer_offset)))
        FAIL(SBF_E_FORMAT, "%s%s: invalid section table in index header", path, what);
    const uint64_t arrays_end = layer_offset ? layer_offset : file_bytes;

    sbf_params_t p = {(int)get32(f + H_K), (int)get32(f + H_M), (int)get32(f + H_S),
                      (int)get32(f + H_HASHES), (int)get32(f + H_SHARD_BITS)};
    if (get32(f + H_HEADER_BYTES) != SBF_HEADER_BYTES || sbf_params_check(&p) != SBF_OK)
        FAIL(SBF_E_FORMAT, "%s%s: invalid parameters in index header", path, what);
    uint32_t n_targets = get32(f + H_N_TARGETS), n_panels = get32(f + H_N_PANELS);
    uint64_t meta_offset = get64(f + H_META_OFFSET), meta_bytes = get64(f + H_META_BYTES);
    uint64_t data_offset = get64(f + H_DATA_OFFSET);
    if (n_targets < 1 || n_targets > MAX_TARGETS || (version == 2 ? n_panels != 0 : n_panels < 1 || n_panels > n_targets) ||
        meta_offset != SBF_HEADER_BYTES ||
        meta_bytes > arrays_end - meta_offset || data_offset != align_up(meta_offset + meta_bytes))
        FAIL(SBF_E_FORMAT, "%s%s: invalid section table in index header", path, what);
    if (CHECKSUM_DIFFERS(get64(f + H_META_CHECKSUM), sbf_xxh64(f + meta_offset, (size_t)meta_bytes, 0)))
        FAIL(SBF_E_FORMAT, "%s%s: corrupt index metadata (checksum mismatch)", path, what);
    if (!all_zero(f + meta_offset + meta_bytes, data_offset - meta_offset - meta_bytes))
        FAIL(SBF_E_FORMAT, "%s%s: corrupt index (non-zero padding after the metadata)", path, what);

    if (!(idx = sbf_idx_new(&p)))
        FAIL(SBF_E_NOMEM, "out of memory loading %s", path);
    memcpy(&idx->bits_per_kmer, f + H_BITS_PER_KMER, 8);
    idx->in_map = 1;
    idx->format_version = version;
    {
        /* the metadata's messages name the file, and the layer when it is the layer's */
        size_t n = strlen(path) + strlen(what) + 1;
        char *label = malloc(n);
        if (!label)
            FAIL(SBF_E_NOMEM, "out of memory loading %s", path);
        snprintf(label, n, "%s%s", path, what);
        rc = parse_meta(idx, f + meta_offset, meta_bytes, version, n_targets, n_panels, data_offset, arrays_end, label);
        free(label);
        if (rc)
            goto fail;
    }
    for (int q = 0; q < idx->n_panels; ++q) {   /* offsets become pointers into the map */
        sbf_panel_t *pn = &idx->panels[q];
        pn->bits = (uint64_t *)(void *)(f + (uintptr_t)pn->bits);
        if (pn->log2_width == 0)
            idx->targets[pn->members[0]].bits = pn->bits;
    }
    for (int q = 0; q < idx->n_panels; ++q) {
        const sbf_panel_t *pn = &idx->panels[q];
        const sbf_target_t *first = &idx->targets[pn->members[0]];
        uint64_t bytes = sbf_panel_bytes(idx, pn);
        const uint8_t *end = (const uint8_t *)pn->bits + bytes;
        const uint8_t *next = q + 1 < idx->n_panels ? (const uint8_t *)idx->panels[q + 1].bits : f + arrays_end;
        if (!all_zero(end, (uint64_t)(next - end)))
            FAIL(SBF_E_FORMAT, "%s%s: corrupt index (non-zero padding after the filter of target '%s')", path, what,
                 first->name);
    }
    if (layer_offset) {
        if ((rc = parse_image(f + layer_offset, layer_bytes, path, " (long-read layer)", version, &idx->layer)))
            goto fail;
        const sbf_index_t *ly = idx->layer;
        int same = ly->n_targets == idx->n_targets && ly->params.k < idx->params.k;
        for (int r = 0; same && r < idx->n_targets; ++r)
            same = !strcmp(ly->targets[r].name, idx->targets[r].name);
        if (!same)
            FAIL(SBF_E_FORMAT, "%s (long-read layer): corrupt metadata: its targets or k differ from the index's", path);
    }
#undef FAIL
    *out = idx;
    return SBF_OK;

fail:
    sbf_idx_free(idx);
    return rc;
}

/* The filters' checksums of an index and of its layer, all taken at once (panel_sums_t, up to
 * the cores online), then compared in file order, so the error is the one a panel-by-panel
 * check gives. One stream after another, a first run against a 9.19 GB human index spent 3.9 s
 * here on the VM, most of it in the panels beside the largest. */
static int verify_filters(const sbf_index_t *idx, const char *path)
{
    panel_sums_t sums;
    if (panel_sums_init(idx, idx->format_version, &sums) != 0) {
        panel_sums_free(&sums);
        return sbf_error(SBF_E_NOMEM, "out of memory loading %s", path);
    }
    int rc = SBF_OK;
    sum_copy_job_t job = {&sums, NULL, 0, 0};
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    sum_copy_run(&job, cores < 1 ? 1 : cores > INT_MAX ? INT_MAX : (int)cores);
    const sbf_index_t *x = idx;
    for (int i = 0, q = 0; i < sums.n; ++i, ++q) {
        if (q == x->n_panels) {   /* the index's panels done: the layer's */
            x = x->layer;
            q = 0;
        }
        const sbf_panel_t *pn = sums.sum[i].pn;
        if (!CHECKSUM_DIFFERS(pn->checksum, sums.sum[i].sum))
            continue;
        const char *what = x == idx ? "" : " (long-read layer)";
        const sbf_target_t *first = &x->targets[pn->members[0]];
        if (pn->n_members == 1)
            rc = sbf_error(SBF_E_FORMAT, "%s%s: corrupt filter of target '%s' (checksum mismatch)", path, what,
                           first->name);
        else
            rc = sbf_error(SBF_E_FORMAT, "%s%s: corrupt filter of the panel of target '%s' and %d more (checksum "
                           "mismatch)", path, what, first->name, pn->n_members - 1);
        break;
    }
    panel_sums_free(&sums);
    return rc;
}

int sbf_index_read(const char *path, int verify, sbf_index_t **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sbf_error_errno(SBF_E_IO, errno, "%s: cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = sbf_error_errno(SBF_E_IO, errno, "%s: cannot stat", path);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return sbf_error(SBF_E_FORMAT, "%s: not a regular file (an index must be seekable)", path);
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size < 8 || size > SIZE_MAX) {
        close(fd);
        return sbf_error(SBF_E_FORMAT, size < 8 ? "%s: not an sbf index (file too short)"
                                                 : "%s: file too large for this machine", path);
    }
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int saved = errno;
    close(fd);
    if (map == MAP_FAILED)
        return sbf_error_errno(SBF_E_IO, saved, "%s: cannot map", path);
#ifdef MADV_HUGEPAGE
    /* Pages read from disk through this mapping come in 2 MiB folios, mapped whole: the
     * queries' random probes miss the TLB far less (see write_mapped). Advice only. */
    (void)madvise(map, (size_t)size, MADV_HUGEPAGE);
#endif
    sbf_index_t *idx;
    int rc = parse_image(map, size, path, "", 0, &idx);   /* the filters' checksums below, at once */
    if (rc != SBF_OK) {
        munmap(map, (size_t)size);
        return rc;
    }
    idx->map = map;   /* the index owns the mapping now; its layer's filters lie in it too */
    idx->map_len = (size_t)size;
    if (verify && (rc = verify_filters(idx, path)) != SBF_OK) {
        sbf_idx_free(idx);
        return rc;
    }
    const uint8_t *f = map;
    const uint64_t layer_offset = get32(f + H_VERSION) >= 4 ? get64(f + H_LAYER_OFFSET) : 0;
    idx->file_checksum = sbf_format_identity(f, layer_offset ? f + layer_offset : NULL);
    *out = idx;
    return SBF_OK;
}
