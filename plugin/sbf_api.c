/* sbf_api.c -- the public API of libsbf over the engine in filters/ and the reader in bam/. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_build.h"
#include "../filters/sbf_classify.h"
#include "../filters/sbf_lowcomp.h"
#include "../filters/sbf_mem.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_format.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../gpu/sbf_gpu.h"
#include "sbf.h"
#include "sbf_engine.h"

typedef struct {
    char *name;
    sbf_seqbuf_t seq;
    char **sources;
    int n_sources;
} pending_target_t;

struct sbf_builder_s {
    sbf_opt_t opt;
    sbf_params_t params;
    pending_target_t *targets;
    int n_targets;
};

SBF_EXPORT const char *sbf_version(void) { return SBF_VERSION; }

SBF_EXPORT const char *sbf_last_error(void) { return sbf_error_message(); }

SBF_EXPORT void sbf_opt_init(sbf_opt_t *opt)
{
    sbf_params_t p;
    sbf_params_default(&p);
    memset(opt, 0, sizeof *opt);
    opt->k = p.k;
    opt->m = p.m;
    opt->s = p.s;
    opt->hashes = p.hashes;
    opt->shard_bits = p.shard_bits;
    opt->bits_per_kmer = SBF_DEFAULT_BITS_PER_KMER;
    opt->size_bytes = 0;
    opt->threads = 1;
    opt->gpu = SBF_GPU_AUTO;
}

static sbf_params_t params_of(const sbf_opt_t *opt)
{
    sbf_params_t p = {opt->k, opt->m, opt->s, opt->hashes, opt->shard_bits};
    return p;
}

SBF_EXPORT int sbf_opt_check(const sbf_opt_t *opt)
{
    sbf_params_t p = params_of(opt);
    int rc = sbf_params_check(&p);
    if (rc)
        return rc;
    if (opt->size_bytes == 0 && !(opt->bits_per_kmer >= 0.5 && opt->bits_per_kmer <= 1024.0))
        return sbf_error(SBF_E_PARAM, "bits per k-mer %g must be between 0.5 and 1024", opt->bits_per_kmer);
    if (opt->threads < 1 || opt->threads > 1024)
        return sbf_error(SBF_E_PARAM, "thread count %d must be between 1 and 1024", opt->threads);
    if (opt->gpu < SBF_GPU_AUTO)
        return sbf_error(SBF_E_PARAM, "GPU %d: expected a device number, SBF_GPU_AUTO or SBF_GPU_NONE", opt->gpu);
    return SBF_OK;
}

SBF_EXPORT int sbf_builder_init(const sbf_opt_t *opt, sbf_builder_t **out)
{
    *out = NULL;
    int rc = sbf_opt_check(opt);
    if (rc)
        return rc;
    sbf_builder_t *b = calloc(1, sizeof *b);
    if (!b)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    b->opt = *opt;
    b->params = params_of(opt);
    *out = b;
    return SBF_OK;
}

SBF_EXPORT void sbf_builder_destroy(sbf_builder_t *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->n_targets; ++i) {
        pending_target_t *t = &b->targets[i];
        free(t->name);
        sbf_seqbuf_free(&t->seq);
        for (int j = 0; j < t->n_sources; ++j)
            free(t->sources[j]);
        free(t->sources);
    }
    free(b->targets);
    free(b);
}

SBF_EXPORT int sbf_builder_add_target(sbf_builder_t *b, const char *name)
{
    if (!name || !*name)
        return sbf_error(SBF_E_PARAM, "a target name must not be empty");
    if (!strcmp(name, "multi") || !strcmp(name, "none"))   /* the categories of sbf classify */
        return sbf_error(SBF_E_PARAM, "target name '%s' is reserved: classification reports reads that match "
                         "several targets as 'multi' and those that match none as 'none'", name);
    for (int i = 0; i < b->n_targets; ++i)
        if (!strcmp(b->targets[i].name, name))
            return sbf_error(SBF_E_PARAM, "target name '%s' given twice", name);
    pending_target_t *grown = realloc(b->targets, (size_t)(b->n_targets + 1) * sizeof *grown);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    b->targets = grown;
    pending_target_t *t = &b->targets[b->n_targets];
    memset(t, 0, sizeof *t);
    sbf_seqbuf_init(&t->seq);
    if (!(t->name = strdup(name)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    return b->n_targets++;
}

static int check_target(const sbf_builder_t *b, int target)
{
    if (target < 0 || target >= b->n_targets)
        return sbf_error(SBF_E_PARAM, "no target number %d in this build", target);
    return SBF_OK;
}

static int add_source(pending_target_t *t, const char *source)
{
    char **grown = realloc(t->sources, (size_t)(t->n_sources + 1) * sizeof *grown);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    t->sources = grown;
    if (!(t->sources[t->n_sources] = strdup(source)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    t->n_sources++;
    return SBF_OK;
}

SBF_EXPORT int sbf_builder_add_file(sbf_builder_t *b, int target, const char *path)
{
    int rc = check_target(b, target);
    if (rc)
        return rc;
    pending_target_t *t = &b->targets[target];
    sbf_seqfile_t *f;
    if ((rc = sbf_seqfile_open(path, b->opt.threads > 1 ? b->opt.threads : 0, &f)))
        return rc;
    sbf_seqrec_t rec = {{0, 0, NULL}, {0, 0, NULL}};
    long long records = 0;
    while ((rc = sbf_seqfile_read(f, &rec)) == 1) {
        ++records;
        if ((rc = sbf_seqbuf_append(&t->seq, sbf_nt4_ascii, (const uint8_t *)rec.seq.s, rec.seq.l, b->params.k)))
            break;
    }
    sbf_seqrec_free(&rec);
    int close_rc = sbf_seqfile_close(f);
    if (rc == SBF_OK && close_rc)
        rc = close_rc;
    if (rc == SBF_OK && records == 0)
        rc = sbf_error(SBF_E_FORMAT, "%s: no sequences in file", path);
    if (rc == SBF_OK)
        rc = add_source(t, path);
    return rc;
}

SBF_EXPORT int sbf_builder_add_seq(sbf_builder_t *b, int target, const char *seq, size_t len)
{
    int rc = check_target(b, target);
    if (rc)
        return rc;
    return sbf_seqbuf_append(&b->targets[target].seq, sbf_nt4_ascii, (const uint8_t *)seq, len, b->params.k);
}

SBF_EXPORT int sbf_builder_finish(sbf_builder_t *b, sbf_index_t **out)
{
    *out = NULL;
    int rc = SBF_OK;
    sbf_index_t *idx = NULL;
    if (b->n_targets == 0) {
        rc = sbf_error(SBF_E_PARAM, "no target to build");
        goto done;
    }
    if (!(idx = sbf_idx_new(&b->params))) {
        rc = SBF_E_NOMEM;
        goto done;
    }
    idx->bits_per_kmer = b->opt.size_bytes ? 0.0 : b->opt.bits_per_kmer;
    for (int i = 0; i < b->n_targets && rc == SBF_OK; ++i) {
        pending_target_t *pt = &b->targets[i];
        if (pt->seq.kmers == 0) {
            rc = sbf_error(SBF_E_PARAM, "target '%s' has no valid %d-mer (sequences shorter than k, or only N)",
                           pt->name, b->params.k);
            break;
        }
        uint64_t shard_bytes = (uint64_t)b->params.shard_bits / 8u;
        uint64_t n_shards = b->opt.size_bytes ? (b->opt.size_bytes + shard_bytes - 1) / shard_bytes
                                              : sbf_shards_for(&b->params, pt->seq.kmers, b->opt.bits_per_kmer);
        int r = sbf_idx_add_target(idx, pt->name, n_shards);
        if (r < 0) {
            rc = r;
            break;
        }
        sbf_target_t *t = &idx->targets[r];
        t->bases = pt->seq.bases;
        t->kmers = pt->seq.kmers;
        for (int j = 0; j < pt->n_sources && rc == SBF_OK; ++j)
            rc = sbf_target_add_source(t, pt->sources[j]);
        if (rc == SBF_OK) {
            int dev = b->opt.gpu == SBF_GPU_AUTO ? (sbf_gpu_count() > 0 ? 0 : SBF_GPU_NONE) : b->opt.gpu;
            if (dev >= 0)
                rc = sbf_gpu_build_target(dev, idx, t, pt->seq.codes, pt->seq.len);
            if (dev >= 0 && rc != SBF_OK && b->opt.gpu == SBF_GPU_AUTO) {
                /* "auto" promises a result, not a device: the CPU computes the same bits, and
                 * sbf_index_notice() says so */
                char why[1024];
                snprintf(why, sizeof why, "building on GPU %d failed (%.900s): built on the CPU engine (the same bytes)",
                         dev, sbf_error_message());
                free(idx->notice);
                idx->notice = strdup(why);   /* NULL when out of memory: the notice is lost, not the index */
                memset(t->bits, 0, sbf_target_bytes(idx, t));
                dev = SBF_GPU_NONE;
                rc = SBF_OK;
            }
            if (dev < 0)
                rc = sbf_build_target(idx, t, pt->seq.codes, pt->seq.len, b->opt.threads);
        }
        sbf_seqbuf_free(&pt->seq);   /* the sequence is no longer needed: release it early */
    }
done:
    sbf_builder_destroy(b);
    if (rc != SBF_OK) {
        sbf_idx_free(idx);
        return rc;
    }
    *out = idx;
    return SBF_OK;
}

SBF_EXPORT const char *sbf_index_notice(const sbf_index_t *idx) { return idx ? idx->notice : NULL; }

SBF_EXPORT int sbf_index_save(const sbf_index_t *idx, const char *path)
{
    /* Writing records each filter's checksum in the index: a cache, not a change of content. */
    return sbf_index_write((sbf_index_t *)idx, path);
}

SBF_EXPORT int sbf_index_load(const char *path, int flags, sbf_index_t **out)
{
    return sbf_index_read(path, !(flags & SBF_LOAD_NO_VERIFY), out);
}

SBF_EXPORT void sbf_index_destroy(sbf_index_t *idx) { sbf_idx_free(idx); }

SBF_EXPORT void sbf_index_params(const sbf_index_t *idx, sbf_opt_t *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->k = idx->params.k;
    opt->m = idx->params.m;
    opt->s = idx->params.s;
    opt->hashes = idx->params.hashes;
    opt->shard_bits = idx->params.shard_bits;
    opt->bits_per_kmer = idx->bits_per_kmer;
}

SBF_EXPORT int sbf_index_n_targets(const sbf_index_t *idx) { return idx->n_targets; }

SBF_EXPORT int sbf_index_target(const sbf_index_t *idx, int t, sbf_target_info_t *info)
{
    if (t < 0 || t >= idx->n_targets)
        return sbf_error(SBF_E_PARAM, "no target number %d (the index has %d)", t, idx->n_targets);
    const sbf_target_t *x = &idx->targets[t];
    info->name = x->name;
    info->n_sources = x->n_sources;
    info->sources = (const char *const *)x->sources;
    info->bases = x->bases;
    info->kmers = x->kmers;
    info->bytes = sbf_target_bytes(idx, x);
    info->fill = x->fill;
    info->predicted_fpr = x->predicted_fpr;
    return SBF_OK;
}

/* ---- queries ---- */

typedef struct {
    const sbf_index_t *idx;
    size_t n;
    const char *const *seqs;       /* ASCII sequences, or NULL when packed is given */
    const uint8_t *const *packed;  /* BAM 4-bit sequences (sbf_query_nt16), or NULL */
    const size_t *lens;
    uint32_t *kmers, *hits;
    size_t next;   /* next block of sequences, taken atomically */
    int status;
} query_job_t;

#define QUERY_BLOCK 64u

static void *query_worker(void *arg)
{
    query_job_t *job = arg;
    const int R = job->idx->n_targets;
    sbf_scan_t *sc = malloc(sizeof *sc);
    uint64_t *hits = malloc((size_t)R * sizeof *hits);
    if (!sc || !hits) {
        __atomic_store_n(&job->status, SBF_E_NOMEM, __ATOMIC_RELAXED);
        free(sc);
        free(hits);
        return NULL;
    }
    for (;;) {
        size_t first = __atomic_fetch_add(&job->next, QUERY_BLOCK, __ATOMIC_RELAXED);
        if (first >= job->n)
            break;
        size_t last = first + QUERY_BLOCK < job->n ? first + QUERY_BLOCK : job->n;
        for (size_t i = first; i < last; ++i) {
            uint64_t nk;
            if (job->packed)
                sbf_query_seq_nt16(job->idx, sc, job->packed[i], job->lens[i], &nk, hits);
            else
                sbf_query_seq(job->idx, sc, sbf_nt4_ascii, (const uint8_t *)job->seqs[i], job->lens[i], &nk, hits, NULL);
            job->kmers[i] = (uint32_t)nk;
            for (int r = 0; r < R; ++r)
                job->hits[i * (size_t)R + (size_t)r] = (uint32_t)hits[r];
        }
    }
    free(sc);
    free(hits);
    return NULL;
}

SBF_EXPORT int sbf_gpu_devices(void) { return sbf_gpu_count(); }

SBF_EXPORT int sbf_gpu_describe_device(int device, char *buf, size_t size)
{
    return sbf_gpu_describe(device, buf, size);
}

/* The GPU copies of an index: one per device given to sbf_index_use_gpus(). */
typedef struct {
    int n;
    int device[SBF_MAX_GPUS];
    sbf_gpu_index_t *index[SBF_MAX_GPUS];
    unsigned next;   /* round robin of small blocking queries over the copies */
} gpu_copies_t;

static void gpu_copies_free(void *p)
{
    gpu_copies_t *c = p;
    for (int i = 0; i < c->n; ++i)
        sbf_gpu_index_free(c->index[i]);
    free(c);
}

SBF_EXPORT int sbf_index_use_gpus(sbf_index_t *idx, int n, const int *devices)
{
    int have = sbf_gpu_count();
    if (n < 1 || n > SBF_MAX_GPUS)
        return sbf_error(SBF_E_PARAM, "%d GPUs: between 1 and %d can be used", n, SBF_MAX_GPUS);
    if (have == 0)
        return sbf_error(SBF_E_PARAM, "no CUDA device is usable (no GPU, no driver, or sbf built without CUDA)");
    gpu_copies_t *c = calloc(1, sizeof *c);
    if (!c)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    for (int i = 0; i < n; ++i) {
        int d = devices ? devices[i] : i;
        int rc = SBF_OK;
        if (d < 0 || d >= have)
            rc = sbf_error(SBF_E_PARAM, "no GPU number %d (devices 0 to %d are present)", d, have - 1);
        for (int j = 0; j < i && rc == SBF_OK; ++j)
            if (c->device[j] == d)
                rc = sbf_error(SBF_E_PARAM, "GPU %d is listed twice", d);
        if (rc == SBF_OK)
            rc = sbf_gpu_index_upload(d, idx, &c->index[i]);
        if (rc != SBF_OK) {
            gpu_copies_free(c);
            return rc;
        }
        c->device[i] = d;
        c->n = i + 1;
    }
    if (idx->accel && idx->accel_free)
        idx->accel_free(idx->accel);
    idx->accel = c;
    idx->accel_free = gpu_copies_free;
    return SBF_OK;
}

SBF_EXPORT int sbf_index_use_gpu(sbf_index_t *idx, int device)
{
    if (device == SBF_GPU_NONE) {   /* back to the CPU engine */
        if (idx->accel && idx->accel_free)
            idx->accel_free(idx->accel);
        idx->accel = NULL;
        return SBF_OK;
    }
    if (device == SBF_GPU_AUTO)
        device = 0;
    return sbf_index_use_gpus(idx, 1, &device);
}

SBF_EXPORT int sbf_index_gpu(const sbf_index_t *idx)
{
    return idx->accel ? ((const gpu_copies_t *)idx->accel)->device[0] : SBF_GPU_NONE;
}

SBF_EXPORT int sbf_index_gpus(const sbf_index_t *idx, int *devices, int max)
{
    const gpu_copies_t *c = idx->accel;
    if (!c)
        return 0;
    for (int i = 0; devices && i < c->n && i < max; ++i)
        devices[i] = c->device[i];
    return c->n;
}

int sbf_engine_slots(const sbf_index_t *idx)
{
    return idx->accel ? ((const gpu_copies_t *)idx->accel)->n : 0;
}

/* The CPU engine: job's sequences over up to `threads` threads, the caller's included. */
static int run_query_job(query_job_t *job, int threads)
{
    size_t blocks = (job->n + QUERY_BLOCK - 1) / QUERY_BLOCK;
    if ((size_t)threads > blocks)
        threads = blocks ? (int)blocks : 1;
    pthread_t tid[threads > 1 ? threads - 1 : 1];
    int started = 0;
    while (started < threads - 1 && pthread_create(&tid[started], NULL, query_worker, job) == 0)
        ++started;
    query_worker(job);   /* the caller works too; if a thread failed to start, others do more */
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
    if (job->status != SBF_OK)
        return sbf_error(job->status, "out of memory in a query thread");
    return SBF_OK;
}

/* One query on GPU copy `slot` of the index, or on the CPU engine (slot < 0 or no copy). */
int sbf_engine_query(const sbf_index_t *idx, int slot, size_t n, const char *const *seqs,
                     const uint8_t *const *packed, const size_t *lens, uint32_t *kmers, uint32_t *hits, int threads)
{
    const gpu_copies_t *c = idx->accel;
    if (c && slot >= 0) {
        sbf_gpu_index_t *g = c->index[slot % c->n];
        return packed ? sbf_gpu_query_nt16(g, n, packed, lens, kmers, hits) : sbf_gpu_query(g, n, seqs, lens, kmers, hits);
    }
    query_job_t job = {idx, n, seqs, packed, lens, kmers, hits, 0, SBF_OK};
    return run_query_job(&job, threads);
}

/* A blocking query over every GPU copy: large calls are cut in one part per device, run at
 * once (one thread each); small ones go to the copies in turn. */
typedef struct {
    const sbf_index_t *idx;
    int slot;
    size_t first, n;
    const char *const *seqs;
    const uint8_t *const *packed;
    const size_t *lens;
    uint32_t *kmers, *hits;
    int status;
    char error[256];
} gpu_part_t;

static void *gpu_part_run(void *arg)
{
    gpu_part_t *p = arg;
    const size_t R = (size_t)p->idx->n_targets;
    p->status = sbf_engine_query(p->idx, p->slot, p->n, p->seqs ? p->seqs + p->first : NULL,
                                 p->packed ? p->packed + p->first : NULL, p->lens + p->first, p->kmers + p->first,
                                 p->hits + p->first * R, 1);
    if (p->status != SBF_OK)
        snprintf(p->error, sizeof p->error, "%s", sbf_error_message());
    return NULL;
}

#define GPU_SPLIT_MIN 65536u   /* reads per device below which one device answers a call */

static int query_any(const sbf_index_t *idx, size_t n, const char *const *seqs, const uint8_t *const *packed,
                     const size_t *lens, uint32_t *kmers, uint32_t *hits, int threads)
{
    if (threads < 1)
        return sbf_error(SBF_E_PARAM, "thread count %d must be at least 1", threads);
    gpu_copies_t *c = idx->accel;
    if (!c)
        return sbf_engine_query(idx, -1, n, seqs, packed, lens, kmers, hits, threads);
    int parts = (int)(n / GPU_SPLIT_MIN);
    parts = parts > c->n ? c->n : parts;
    if (parts <= 1)
        return sbf_engine_query(idx, (int)(__atomic_fetch_add(&c->next, 1u, __ATOMIC_RELAXED) % (unsigned)c->n), n,
                                seqs, packed, lens, kmers, hits, 1);
    gpu_part_t part[SBF_MAX_GPUS];
    pthread_t tid[SBF_MAX_GPUS];
    int started[SBF_MAX_GPUS] = {0};
    for (int i = 0; i < parts; ++i) {
        size_t a = n * (size_t)i / (size_t)parts, b = n * (size_t)(i + 1) / (size_t)parts;
        part[i] = (gpu_part_t){idx, i, a, b - a, seqs, packed, lens, kmers, hits, SBF_OK, ""};
        if (i > 0)
            started[i] = pthread_create(&tid[i], NULL, gpu_part_run, &part[i]) == 0;
    }
    gpu_part_run(&part[0]);
    for (int i = 1; i < parts; ++i) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            gpu_part_run(&part[i]);   /* no thread: the caller runs the part itself */
    }
    for (int i = 0; i < parts; ++i)
        if (part[i].status != SBF_OK)
            return sbf_error(part[i].status, "%s", part[i].error);
    return SBF_OK;
}

int sbf_engine_query_reads(const sbf_index_t *idx, int slot, size_t n, const char *const *seqs,
                           const uint8_t *const *packed, const size_t *lens, unsigned mask_lowcomp,
                           sbf_engine_batch_t *eb, uint32_t *kmers, uint32_t *hits, int threads,
                           const sbf_segments_t **seg)
{
    const size_t R = (size_t)idx->n_targets;
    const char *const *vs;
    const uint8_t *const *vp;
    *seg = NULL;
    int rc = sbf_lowcomp_batch(&eb->mask, mask_lowcomp, n, seqs, packed, lens, &vs, &vp);
    if (rc == SBF_OK)
        rc = sbf_units_make(&eb->units, n, vs, vp, lens, (unsigned)idx->params.k);
    if (rc != SBF_OK)
        return rc;
    const sbf_units_t *u = &eb->units;
    const int whole = !u->segmented;
    const size_t m = whole ? n : u->n_units;
    const size_t *ql = whole ? lens : u->lens;
    const char *const *qs = vs ? (whole ? vs : u->seqs) : NULL;
    const uint8_t *const *qp = vp ? (whole ? vp : u->packed) : NULL;
    uint32_t *qk = kmers, *qh = hits;
    if (!whole) {
        if ((rc = sbf_reserve(&eb->ukmers, &eb->cap_ukmers, m, sizeof *eb->ukmers)) != SBF_OK ||
            (rc = sbf_reserve(&eb->uhits, &eb->cap_uhits, m * (R ? R : 1), sizeof *eb->uhits)) != SBF_OK)
            return rc;
        qk = eb->ukmers;
        qh = eb->uhits;
    }
    rc = slot == SBF_ENGINE_ANY ? query_any(idx, m, qs, qp, ql, qk, qh, threads)
                                : sbf_engine_query(idx, slot, m, qs, qp, ql, qk, qh, threads);
    if (rc != SBF_OK || whole)
        return rc;
    eb->seg = (sbf_segments_t){u->start, u->start + 1, eb->ukmers, eb->uhits};
    sbf_segments_gather(&eb->seg, n, (int)R, kmers, hits);
    *seg = &eb->seg;
    return SBF_OK;
}

void sbf_engine_batch_free(sbf_engine_batch_t *eb)
{
    if (!eb)
        return;
    sbf_lowcomp_batch_free(&eb->mask);
    sbf_units_free(&eb->units);
    free(eb->ukmers);
    free(eb->uhits);
    memset(eb, 0, sizeof *eb);
}

SBF_EXPORT int sbf_query(const sbf_index_t *idx, size_t n, const char *const *seqs, const size_t *lens,
                         uint32_t *kmers, uint32_t *hits, int threads)
{
    return query_any(idx, n, seqs, NULL, lens, kmers, hits, threads);
}

SBF_EXPORT int sbf_query_nt16(const sbf_index_t *idx, size_t n, const uint8_t *const *packed, const size_t *lens,
                              uint32_t *kmers, uint32_t *hits, int threads)
{
    return query_any(idx, n, NULL, packed, lens, kmers, hits, threads);
}

SBF_EXPORT int sbf_query_kmers(const sbf_index_t *idx, int target, const char *seq, size_t len, uint8_t *present)
{
    if (target < 0 || target >= idx->n_targets)
        return sbf_error(SBF_E_PARAM, "no target number %d (the index has %d)", target, idx->n_targets);
    const size_t k = (size_t)idx->params.k;
    if (len < k)
        return SBF_OK;
    if (idx->accel)
        return sbf_gpu_query_kmers(((const gpu_copies_t *)idx->accel)->index[0], target, seq, len, present);
    const int R = idx->n_targets;
    sbf_scan_t *sc = malloc(sizeof *sc);
    uint64_t *hits = malloc((size_t)R * sizeof *hits);
    uint8_t *all = malloc((len - k + 1) * (size_t)R);
    int rc = SBF_OK;
    if (!sc || !hits || !all) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
    } else {
        uint64_t nk;
        sbf_query_seq(idx, sc, sbf_nt4_ascii, (const uint8_t *)seq, len, &nk, hits, all);
        memcpy(present, all + (size_t)target * (len - k + 1), len - k + 1);
    }
    free(sc);
    free(hits);
    free(all);
    return rc;
}

/* ---- classification ---- */

int sbf_engine_chance(const sbf_index_t *idx, double *fpr, double *clump)
{
    const double *c = sbf_idx_clumps(idx);   /* computed once per index, not per call */
    if (!c)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    for (int t = 0; t < idx->n_targets; ++t) {
        fpr[t] = idx->targets[t].predicted_fpr;
        clump[t] = c[t];
    }
    return SBF_OK;
}

int sbf_engine_scorer(const sbf_index_t *idx, const sbf_classify_opt_t *opt, sbf_scorer_t *scorer)
{
    int rc = sbf_classify_opt_check(opt);
    if (rc != SBF_OK)
        return rc;
    const int R = idx->n_targets;
    double *fpr = malloc(2 * (size_t)(R > 0 ? R : 1) * sizeof *fpr);
    if (!fpr)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    if ((rc = sbf_engine_chance(idx, fpr, fpr + R)) == SBF_OK)
        rc = sbf_scorer_init(scorer, opt, R, fpr, fpr + R);
    free(fpr);
    return rc;
}

SBF_EXPORT int sbf_classify(const sbf_index_t *idx, const sbf_classify_opt_t *opt, size_t n,
                            const char *const *seqs, const size_t *lens, const char *const *seqs2,
                            const size_t *lens2, int *category, float *score, int threads)
{
    if (seqs2 && !lens2)
        return sbf_error(SBF_E_PARAM, "mates given without their lengths");
    sbf_scorer_t scorer;
    int rc = sbf_engine_scorer(idx, opt, &scorer);
    if (rc != SBF_OK)
        return rc;
    const int R = idx->n_targets;
    const size_t reads = seqs2 ? 2 * n : n;
    const char **all = malloc((reads ? reads : 1) * sizeof *all);
    size_t *all_lens = malloc((reads ? reads : 1) * sizeof *all_lens);
    uint32_t *kmers = malloc((reads ? reads : 1) * sizeof *kmers);
    uint32_t *hits = malloc((reads ? reads : 1) * (size_t)R * sizeof *hits);
    uint32_t *frag_hits = malloc((size_t)(R ? R : 1) * sizeof *frag_hits);
    sbf_engine_batch_t eb = {0};
    if (!all || !all_lens || !kmers || !hits || !frag_hits) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory classifying %zu fragments", n);
        goto done;
    }
    for (size_t i = 0; i < n; ++i) {   /* mates side by side: read 2i and 2i+1 */
        size_t at = seqs2 ? 2 * i : i;
        all[at] = seqs[i];
        all_lens[at] = lens[i];
        if (seqs2) {
            all[at + 1] = seqs2[i];
            all_lens[at + 1] = lens2[i];
        }
    }
    const sbf_segments_t *seg;
    if (threads < 1) {
        rc = sbf_error(SBF_E_PARAM, "thread count %d must be at least 1", threads);
        goto done;
    }
    if ((rc = sbf_engine_query_reads(idx, SBF_ENGINE_ANY, reads, all, NULL, all_lens, opt->mask_lowcomp, &eb, kmers,
                                     hits, threads, &seg)) != SBF_OK)
        goto done;
    for (size_t i = 0; i < n; ++i) {
        sbf_frag_result_t res;
        sbf_score_fragment(&scorer, seqs2 ? 2 : 1, NULL, seqs2 ? 2 * i : i, kmers, hits, seg, frag_hits, NULL, &res);
        category[i] = res.category;
        if (score)
            score[i] = res.score;
    }
done:
    sbf_engine_batch_free(&eb);
    sbf_scorer_free(&scorer);
    free(all);
    free(all_lens);
    free(kmers);
    free(hits);
    free(frag_hits);
    return rc;
}
