/* sbf_api.c -- the public API of libsbf (sbf.h): building an index (the builder), loading,
 * saving and describing it, and thin wrappers over the query engine (sbf_engine.c: CPU threads,
 * GPU copies, the multi-GPU split), the filters in filters/ and the reader in bam/. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_adapters.h"
#include "../filters/sbf_build.h"
#include "../filters/sbf_classify.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_format.h"
#include "../filters/sbf_index.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_mask.h"
#include "../filters/sbf_panel.h"
#include "../gpu/sbf_gpu.h"
#include "sbf.h"
#include "sbf_build_read.h"
#include "sbf_engine.h"

typedef struct {
    char *name;
    sbf_seqbuf_t seq;
    char **sources;
    int n_sources;
} pending_target_t;

typedef struct {
    int target;        /* SBF_EVERY_TARGET or a target number */
    char *path;
    sbf_seqbuf_t seq;
} pending_mask_t;

struct sbf_builder_s {
    sbf_opt_t opt;
    sbf_params_t params;
    pending_target_t *targets;
    int n_targets;
    pending_mask_t *masks;
    int n_masks;
    int layer_k;       /* k of the long-read layer, 0 for none */
    unsigned dust_min; /* the index's k-mers of this DUST score or more are left out (0: none) */
    char *output;      /* sbf_builder_output(), or NULL */
    sbf_step_fn on_step; /* sbf_builder_on_step() */
    void *step_data;
};

/* Report the step the builder starts, if asked to (sbf_builder_on_step). */
static void step(const sbf_builder_t *b, const char *fmt, ...) SBF_PRINTF(2, 3);
static void step(const sbf_builder_t *b, const char *fmt, ...)
{
    if (!b->on_step)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    b->on_step(b->step_data, text);
}

SBF_EXPORT void sbf_builder_on_step(sbf_builder_t *b, sbf_step_fn fn, void *data)
{
    b->on_step = fn;
    b->step_data = data;
}

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
    b->layer_k = b->params.k > SBF_LAYER_K ? SBF_LAYER_K : 0;   /* the default: sbf_builder_long_layer() */
    b->dust_min = SBF_DEFAULT_DUST;   /* sbf_builder_dust(): AT-rich near-repeats (doc/decisions.md) */
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
    for (int i = 0; i < b->n_masks; ++i) {
        free(b->masks[i].path);
        sbf_seqbuf_free(&b->masks[i].seq);
    }
    free(b->masks);
    free(b->output);
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

typedef struct {
    sbf_builder_t *b;
    const int *targets;
    const char *const *paths;
} add_files_t;

static int take_file(void *arg, int i, sbf_seqbuf_t *seq)
{
    add_files_t *a = arg;
    pending_target_t *t = &a->b->targets[a->targets[i]];
    /* the copy on every thread: this one joins the files in order while the others read, and
     * was the reading's limit on one */
    int rc = sbf_seqbuf_move(&t->seq, seq, a->b->opt.threads);
    if (rc == SBF_OK)
        rc = add_source(t, a->paths[i]);
    if (rc == SBF_OK)
        step(a->b, "read %s into target '%s'", a->paths[i], t->name);
    return rc;
}

SBF_EXPORT int sbf_builder_add_files(sbf_builder_t *b, int n, const int *targets, const char *const *paths)
{
    int rc = n < 0 ? sbf_error(SBF_E_PARAM, "%d files", n) : SBF_OK;
    for (int i = 0; i < n && rc == SBF_OK; ++i)
        rc = check_target(b, targets[i]);
    if (rc)
        return rc;
    /* what the targets hold now: an error puts them back */
    sbf_seqbuf_t *before = malloc((size_t)(b->n_targets ? b->n_targets : 1) * sizeof *before);
    int *sources = malloc((size_t)(b->n_targets ? b->n_targets : 1) * sizeof *sources);
    if (!before || !sources) {
        free(before);
        free(sources);
        return sbf_error(SBF_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < b->n_targets; ++i) {
        before[i] = b->targets[i].seq;
        sources[i] = b->targets[i].n_sources;
    }
    step(b, "reading %d file%s, %d at a time", n, n == 1 ? "" : "s", b->opt.threads < n ? b->opt.threads : n);
    add_files_t a = {b, targets, paths};
    rc = sbf_read_files(n, paths, b->params.k, b->opt.threads, take_file, &a);
    for (int i = 0; i < b->n_targets && rc != SBF_OK; ++i) {
        pending_target_t *t = &b->targets[i];
        sbf_seqbuf_restore(&t->seq, &before[i]);
        while (t->n_sources > sources[i])
            free(t->sources[--t->n_sources]);
    }
    free(before);
    free(sources);
    return rc;
}

SBF_EXPORT int sbf_builder_add_file(sbf_builder_t *b, int target, const char *path)
{
    return sbf_builder_add_files(b, 1, &target, &path);
}

SBF_EXPORT int sbf_builder_add_mask(sbf_builder_t *b, int target, const char *path)
{
    int rc = target == SBF_EVERY_TARGET ? SBF_OK : check_target(b, target);
    if (rc)
        return rc;
    pending_mask_t *grown = realloc(b->masks, (size_t)(b->n_masks + 1) * sizeof *grown);
    if (!grown)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    b->masks = grown;
    pending_mask_t *m = &b->masks[b->n_masks];
    m->target = target;
    sbf_seqbuf_init(&m->seq);
    if (!(m->path = strdup(path)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    step(b, "reading mask %s (for %s%s%s)", path, target == SBF_EVERY_TARGET ? "every target" : "target '",
         target == SBF_EVERY_TARGET ? "" : b->targets[target].name, target == SBF_EVERY_TARGET ? "" : "'");
    if ((rc = sbf_read_file(path, b->params.k, b->opt.threads > 1 ? b->opt.threads : 0, &m->seq)) == SBF_OK &&
        m->seq.kmers == 0)
        rc = sbf_error(SBF_E_PARAM, "mask %s has no valid %d-mer (sequences shorter than k, or only N)", path,
                       b->params.k);
    if (rc != SBF_OK) {
        free(m->path);
        sbf_seqbuf_free(&m->seq);
        return rc;
    }
    b->n_masks++;
    return SBF_OK;
}

SBF_EXPORT int sbf_builder_add_seq(sbf_builder_t *b, int target, const char *seq, size_t len)
{
    int rc = check_target(b, target);
    if (rc)
        return rc;
    return sbf_seqbuf_append(&b->targets[target].seq, sbf_nt4_ascii, (const uint8_t *)seq, len, b->params.k);
}

/* One layer of the build: the index (k = 31, say) or its long-read layer (k = 21), each with its
 * parameters, sizing and masks. */
typedef struct {
    sbf_params_t params;
    double bits_per_kmer;   /* 0: opt.size_bytes gives each filter's size */
    int adapters;           /* leave the sequencing adapters out of every target */
    unsigned dust_min;      /* leave out k-mers of this DUST score or more (0: none) */
    int measure_chance;     /* measure each target's chance rate (sbf_target_measure_chance) */
    sbf_seqbuf_t adapter_seq;
    sbf_index_t *idx;
    sbf_mask_t *every;      /* the mask of the masks of every target (built on first use) */
    uint64_t *masked;       /* per target: k-mer positions its masks left out */
    int *built;             /* per panel: its members built (a finished panel goes to the output) */
} layer_build_t;

/* Target r's sources and masks, named in the index: known before it is built, so that a build
 * writing into its output (sbf_builder_output) lays the file out with the metadata's sizes
 * final. */
static int target_labels(const sbf_builder_t *b, layer_build_t *L, int r)
{
    sbf_target_t *t = &L->idx->targets[r];
    const pending_target_t *pt = &b->targets[r];
    int rc = SBF_OK;
    if (L->params.k == b->params.k)   /* the long-read layer does not repeat the sources */
        for (int j = 0; j < pt->n_sources && rc == SBF_OK; ++j)
            rc = sbf_target_add_source(t, pt->sources[j]);
    for (int j = 0; j < b->n_masks && rc == SBF_OK; ++j)
        if (b->masks[j].target == SBF_EVERY_TARGET || b->masks[j].target == r)
            rc = sbf_target_add_mask(t, b->masks[j].path);
    if (rc == SBF_OK && L->adapters)
        rc = sbf_target_add_mask(t, "(sequencing adapters)");
    if (rc == SBF_OK && L->dust_min) {   /* the threshold named: the index says what it left out */
        char label[64];
        snprintf(label, sizeof label, "(low complexity: DUST >= %u)", L->dust_min);
        rc = sbf_target_add_mask(t, label);
    }
    return rc;
}

/* The index of a layer, its panels planned from each target's k-mers (before masking: a mask
 * leaves out a small share, and the plan needs every target's size before any is masked). */
static int layer_plan(const sbf_builder_t *b, layer_build_t *L)
{
    const int n = b->n_targets;
    int rc = SBF_OK, n_panels = 0;
    uint64_t *want = malloc((size_t)n * sizeof *want);
    sbf_panel_slot_t *slot = malloc((size_t)n * sizeof *slot);
    sbf_panel_shape_t *shape = malloc((size_t)n * sizeof *shape);
    if (!want || !slot || !shape || !(L->masked = calloc((size_t)n, sizeof *L->masked)) ||
        !(L->built = calloc((size_t)n, sizeof *L->built)) ||
        !(L->idx = sbf_idx_new(&L->params))) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory");
        goto done;
    }
    L->idx->bits_per_kmer = L->bits_per_kmer;
    const int k = L->params.k;
    for (int i = 0; i < n && rc == SBF_OK; ++i) {
        const pending_target_t *pt = &b->targets[i];
        const uint64_t kmers = k == b->params.k ? pt->seq.kmers : sbf_seqbuf_kmers(&pt->seq, k, b->opt.threads);
        if (kmers == 0) {
            rc = sbf_error(SBF_E_PARAM, "target '%s' has no valid %d-mer (sequences shorter than k, or only N)",
                           pt->name, k);
            break;
        }
        const uint64_t shard_bytes = (uint64_t)L->params.shard_bits / 8u;
        want[i] = L->bits_per_kmer > 0 ? sbf_shards_for(&L->params, kmers, L->bits_per_kmer)
                                       : (b->opt.size_bytes + shard_bytes - 1) / shard_bytes;
        rc = sbf_check_shards(pt->name, want[i]);
    }
    /* --size asks for an exact size: panels then form only where that costs nothing */
    if (rc == SBF_OK)
        rc = sbf_panel_plan(want, n, L->bits_per_kmer > 0 ? SBF_PANEL_SLACK : 0.0, slot, shape, &n_panels);
    for (int q = 0; q < n_panels && rc == SBF_OK; ++q) {
        int got = sbf_idx_add_panel(L->idx, shape[q].n_shards, shape[q].log2_width);
        rc = got < 0 ? got : SBF_OK;
    }
    for (int i = 0; i < n && rc == SBF_OK; ++i) {
        int r = sbf_idx_add_panel_target(L->idx, b->targets[i].name, slot[i].panel, slot[i].col0, slot[i].cols);
        rc = r < 0 ? r : target_labels(b, L, r);
    }
done:
    free(want);
    free(slot);
    free(shape);
    return rc;
}

/* Whether layer L leaves k-mers of target i out (a mask of it, adapters, or DUST), and what it
 * says it does; NULL when it builds from the target's own sequence. */
static const char *layer_masking(const sbf_builder_t *b, const layer_build_t *L, int i)
{
    int masks = L->adapters != 0;
    for (int j = 0; j < b->n_masks; ++j)
        masks += b->masks[j].target == SBF_EVERY_TARGET || b->masks[j].target == i;
    return masks && L->dust_min ? "masked and low-complexity k-mers"
           : masks              ? "masked k-mers"
           : L->dust_min        ? "low-complexity k-mers"
                                : NULL;
}

/* Whether a GPU build finds what layer L leaves out of target i on the device (DUST and the
 * adapters: hold_kernel), building from the target's own sequence with no masked copy. A --mask
 * of the target (or of every target) keeps the CPU's masking: a large mask is a filter, no
 * exact set, and the rule stays one rule for every mask. */
static int layer_held_on_device(const sbf_builder_t *b, const layer_build_t *L, int i)
{
    if (!layer_masking(b, L, i))
        return 0;
    for (int j = 0; j < b->n_masks; ++j)
        if (b->masks[j].target == SBF_EVERY_TARGET || b->masks[j].target == i)
            return 0;
    return 1;
}

/* The mask of what layer L leaves out of target i besides DUST: the adapters' (in a layer that
 * masks them) and the --mask files' of the target or of every target, or NULL when there is
 * none. A mask no file of the target's own is in is L->every, built once for every target;
 * one with such a file is built into *mine, which the caller frees. */
static int layer_mask(const sbf_builder_t *b, layer_build_t *L, int i, sbf_mask_t **mine, const sbf_mask_t **mask)
{
    *mine = NULL;
    *mask = NULL;
    const sbf_seqbuf_t **seqs = malloc((size_t)(b->n_masks + 1) * sizeof *seqs);
    if (!seqs)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    int n = 0, own = 0, rc = SBF_OK;
    if (L->adapters)
        seqs[n++] = &L->adapter_seq;
    for (int j = 0; j < b->n_masks; ++j)
        if (b->masks[j].target == SBF_EVERY_TARGET || b->masks[j].target == i) {
            seqs[n++] = &b->masks[j].seq;
            own += b->masks[j].target == i;
        }
    if (n > 0 && own == 0 && !L->every)
        rc = sbf_mask_build(&L->params, seqs, n, b->opt.threads, &L->every);
    else if (own > 0)
        rc = sbf_mask_build(&L->params, seqs, n, b->opt.threads, mine);
    if (rc == SBF_OK)
        *mask = own ? *mine : n ? L->every : NULL;
    free(seqs);
    return rc;
}

/* Target i's sequence as layer L builds it: *use is the target's own sequence, or *kept, the
 * records of its k-mers no mask of it (nor an adapter, in a layer that masks them) holds.
 * say: the step is said here (0: the caller said it, this runs on another thread). */
static int layer_sequence(const sbf_builder_t *b, layer_build_t *L, int i, sbf_seqbuf_t *kept, const sbf_seqbuf_t **use,
                          int say)
{
    const pending_target_t *pt = &b->targets[i];
    *use = &pt->seq;
    const char *what = layer_masking(b, L, i);   /* what its masks and DUST leave out */
    if (!what)
        return SBF_OK;
    if (say)
        step(b, "target '%s', k=%d: leaving out %s", pt->name, L->params.k, what);
    sbf_mask_t *mine;
    const sbf_mask_t *mask;
    int rc = layer_mask(b, L, i, &mine, &mask);
    if (rc == SBF_OK)
        rc = sbf_mask_apply(mask, L->params.k, L->dust_min, &pt->seq, b->opt.threads, kept, &L->masked[i]);
    if (rc == SBF_OK)
        *use = kept;
    sbf_mask_free(mine);
    return rc;
}

/* Target i's k-mers layer L leaves out, for a CPU build: a bitmap over the target's own
 * sequence (*hold, sbf_mask_hold), which the insertion skips, and *kept, the k-mers it keeps.
 * Its masked copy (layer_sequence) cost a second pass over the sequence and a copy of it (a
 * human genome's 3 GB). say: as layer_sequence's. */
static int layer_hold(const sbf_builder_t *b, layer_build_t *L, int i, sbf_held_t *hold, uint64_t *kept, int say)
{
    const pending_target_t *pt = &b->targets[i];
    if (say)
        step(b, "target '%s', k=%d: leaving out %s", pt->name, L->params.k, layer_masking(b, L, i));
    sbf_mask_t *mine;
    const sbf_mask_t *mask;
    int rc = layer_mask(b, L, i, &mine, &mask);
    if (rc == SBF_OK)
        rc = sbf_mask_hold(mask, L->params.k, L->dust_min, &pt->seq, b->opt.threads, hold, kept, &L->masked[i]);
    sbf_mask_free(mine);
    return rc;
}

/* The GPU build's sequence is on the device: the masked copy may go (sbf_gpu_build_target). */
typedef struct {
    sbf_seqbuf_t *copy;
    int freed;
} sent_copy_t;

static void free_sent_copy(void *arg)
{
    sent_copy_t *c = arg;
    sbf_seqbuf_free(c->copy);
    c->freed = 1;
}

/* The device a filter is built on: a GPU's number, or SBF_GPU_NONE for the CPU. */
static int build_device(const sbf_builder_t *b)
{
    return b->opt.gpu == SBF_GPU_AUTO ? (sbf_gpu_count() > 0 ? 0 : SBF_GPU_NONE) : b->opt.gpu;
}

/* Target r of layer L built on GPU dev from its own sequence, the k-mers the layer leaves out
 * found there (layer_held_on_device): its kept and left-out counts as the CPU's masked copy
 * gives them. */
static int build_held_on_device(const sbf_builder_t *b, layer_build_t *L, int r, int dev)
{
    sbf_target_t *t = &L->idx->targets[r];
    const pending_target_t *pt = &b->targets[r];
    sbf_gpu_hold_t hold = {L->dust_min, NULL, 0};
    uint64_t *keys = NULL, kept = 0, left = 0;
    sbf_mask_t *mine;   /* none: a held layer has no --mask of the target */
    const sbf_mask_t *mask;
    int rc = layer_mask(b, L, r, &mine, &mask);   /* the adapters' exact set, or none */
    if (rc == SBF_OK && mask && (rc = sbf_mask_sorted_keys(mask, &keys, &hold.n_keys)) == SBF_OK && !keys)
        rc = sbf_error(SBF_E_PARAM, "internal error: the adapters' mask is no exact set");
    hold.keys = keys;
    if (rc == SBF_OK) {
        step(b, "target '%s', k=%d: filter on GPU %d, leaving out %s there", pt->name, L->params.k, dev,
             layer_masking(b, L, r));
        rc = sbf_gpu_build_target_held(dev, L->idx, t, pt->seq.codes, pt->seq.len, &hold, &kept, &left);
    }
    free(keys);
    sbf_mask_free(mine);
    if (rc == SBF_OK) {
        t->kmers = kept;
        t->masked = L->masked[r] = left;
    }
    return rc;
}

/* Build target r of layer L from seq: on the GPU the options name (the CPU when "auto" finds it
 * failing, said in the index's notice), its filter's clump chance, its bits into a wide panel.
 * copy: seq when it is the target's masked copy (layer_sequence's `kept`), else NULL; a GPU
 * build frees it once the device holds it, and makes it again should the CPU take over.
 * held: seq is the target's own sequence and the GPU leaves out what the layer masks
 * (layer_held_on_device); should the CPU take over, it makes the masked copy then.
 * hold: on the CPU, the k-mers of seq (the target's own sequence) the layer leaves out
 * (layer_hold), kept of them kept; NULL when seq is built whole. */
static int layer_build_target(const sbf_builder_t *b, layer_build_t *L, int r, const sbf_seqbuf_t *seq,
                              sbf_seqbuf_t *copy, int held, const sbf_held_t *hold,
                              uint64_t kept)
{
    sbf_index_t *idx = L->idx;
    sbf_target_t *t = &idx->targets[r];
    const pending_target_t *pt = &b->targets[r];
    int rc = SBF_OK;
    t->bases = pt->seq.bases;
    if (!held) {   /* a sequence counts its k-mers for the k it was read (or masked) for */
        t->kmers = hold ? kept
                   : seq == &pt->seq && L->params.k != b->params.k ? sbf_seqbuf_kmers(seq, L->params.k, b->opt.threads)
                                                                   : seq->kmers;
        t->masked = L->masked[r];
        if (t->kmers == 0)
            return sbf_error(SBF_E_PARAM, "target '%s' has no %d-mer its masks do not hold (%llu left out)",
                             pt->name, L->params.k, (unsigned long long)t->masked);
    }
    /* a target of a wide panel is built in the plain layout, then copied into its columns */
    const int wide = idx->panels[t->panel].log2_width > 0;
    uint64_t *scratch = NULL;
    if (wide) {   /* zero pages, faulted in by the threads that fill them */
        if (!(scratch = sbf_filter_alloc(sbf_target_bytes(idx, t))))
            return sbf_error(SBF_E_NOMEM, "out of memory allocating %zu bytes for target '%s'",
                             sbf_target_bytes(idx, t), pt->name);
        t->bits = scratch;
    }
    int dev = build_device(b);
    sent_copy_t sent = {copy, 0};
    sbf_seqbuf_t made;   /* the masked copy the CPU makes when a held build falls back to it */
    sbf_seqbuf_init(&made);
    if (dev >= 0 && held)
        rc = build_held_on_device(b, L, r, dev);
    else if (dev >= 0) {
        step(b, "target '%s', k=%d: filter on GPU %d", pt->name, L->params.k, dev);
        rc = sbf_gpu_build_target(dev, idx, t, seq->codes, seq->len, copy ? free_sent_copy : NULL, &sent);
    }
    if (dev >= 0 && rc != SBF_OK && b->opt.gpu == SBF_GPU_AUTO) {
        /* "auto" promises a result, not a device: the CPU computes the same bits, and
         * sbf_index_notice() says so */
        char why[1024], notice[1100];
        snprintf(why, sizeof why, "building on GPU %d failed (%.900s)", dev, sbf_error_message());
        const sbf_seqbuf_t *again;   /* a masked copy freed once on the device: made again */
        if (sent.freed && layer_sequence(b, L, r, copy, &again, 1) != SBF_OK)
            return sbf_error(SBF_E_NOMEM, "%s, and the masked sequence could not be made again for the CPU engine",
                             why);
        if (held) {   /* the CPU masks: the copy it would have built from */
            if (layer_sequence(b, L, r, &made, &seq, 1) != SBF_OK) {
                sbf_seqbuf_free(&made);
                return sbf_error(SBF_E_NOMEM, "%s, and the masked sequence could not be made for the CPU engine", why);
            }
            t->kmers = seq->kmers;
            t->masked = L->masked[r];
        }
        snprintf(notice, sizeof notice, "%s: built on the CPU engine (the same bytes)", why);
        free(idx->notice);
        idx->notice = strdup(notice);   /* NULL when out of memory: the notice is lost, not the index */
        memset(t->bits, 0, sbf_target_bytes(idx, t));
        dev = SBF_GPU_NONE;
        rc = SBF_OK;
    }
    if (rc == SBF_OK && held && t->kmers == 0)
        rc = sbf_error(SBF_E_PARAM, "target '%s' has no %d-mer its masks do not hold (%llu left out)", pt->name,
                       L->params.k, (unsigned long long)t->masked);
    if (rc == SBF_OK && dev < 0) {
        step(b, "target '%s', k=%d: filter with %d thread%s", pt->name, L->params.k, b->opt.threads,
             b->opt.threads > 1 ? "s" : "");
        rc = sbf_build_target_held(idx, t, seq->codes, seq->len, hold, b->opt.threads);
    }
    sbf_seqbuf_free(&made);
    if (rc == SBF_OK && dev >= 0) {   /* fill, FPR and clump chance (stored: no query passes over the filter) */
        step(b, "target '%s', k=%d: fill of the filter", pt->name, L->params.k);
        sbf_target_stats(idx, t, b->opt.threads);
    }
    if (rc == SBF_OK && wide)
        sbf_panel_put(idx, t, scratch, b->opt.threads);
    if (wide)
        t->bits = NULL;
    sbf_filter_free(scratch, sbf_target_bytes(idx, t));
    /* the long-read layer: the chance rate of reads like the target's own sequence, reversed */
    if (rc == SBF_OK && L->measure_chance) {
        step(b, "target '%s', k=%d: chance rate", pt->name, L->params.k);
        sbf_chance_sample_t own = {0};
        if ((rc = sbf_chance_sample(pt->seq.codes, pt->seq.len, &own)) == SBF_OK)
            rc = sbf_target_measure_chance(idx, r, &own);
        sbf_chance_sample_free(&own);
    }
    return rc;
}

/* The next layer's masking on a thread of its own while a GPU builds the layer before: the
 * masking is the CPU's work, the GPU step (copies, kernel, statistics) and the filter's write
 * are mostly the device's and the disk's (a 3.06 Gbp host: k=31's DUST, 1.05 s, beside k=21's
 * filter and its write, 1.6 s, issue 27). Its memory is the masked copy the layer would make
 * next anyway; the copy before it is freed once on the device, in the first tenths of a second,
 * while the masking's first pass (marks and sizes, no copy yet) runs. A CPU build masks beside
 * the write only (its insertion keeps every thread busy), into the bitmap its insertion skips
 * (layer_hold), not a copy. A GPU build masks on the CPU only for a --mask
 * (layer_held_on_device): DUST and the adapters it finds itself. */
typedef struct {
    const sbf_builder_t *b;
    layer_build_t *L;
    int i, rc;
    sbf_seqbuf_t *kept;        /* the masked copy; or, when hold is set, */
    sbf_held_t *hold;          /* the bitmap of what is left out */
    uint64_t *hold_kept;       /* and the k-mers kept */
    const sbf_seqbuf_t *use;
    char *message;   /* the thread's error message (messages are per thread) */
    pthread_t tid;
} next_masking_t;

static void *next_masking_worker(void *arg)
{
    next_masking_t *n = arg;
    if (n->hold) {
        n->use = &n->b->targets[n->i].seq;
        n->rc = layer_hold(n->b, n->L, n->i, n->hold, n->hold_kept, 0);
    } else {
        n->rc = layer_sequence(n->b, n->L, n->i, n->kept, &n->use, 0);
    }
    if (n->rc != SBF_OK)
        n->message = strdup(sbf_error_message());
    return NULL;
}

/* Start masking target i for layer L into *kept (hold NULL) or *hold and *hold_kept beside
 * `beside` (said as a step here, on the calling thread). 1 when started, 0 when the layer
 * builds from the target's own sequence or no thread could start (the caller masks it then, as
 * ever). */
static int next_masking_start(next_masking_t *n, const sbf_builder_t *b, layer_build_t *L, int i, sbf_seqbuf_t *kept,
                              sbf_held_t *hold, uint64_t *hold_kept, const char *beside)
{
    const char *what = layer_masking(b, L, i);
    if (!what)
        return 0;
    *n = (next_masking_t){b, L, i, SBF_OK, kept, hold, hold_kept, NULL, NULL, 0};
    if (pthread_create(&n->tid, NULL, next_masking_worker, n) != 0)
        return 0;
    step(b, "target '%s', k=%d: leaving out %s (beside %s)", b->targets[i].name, L->params.k, what, beside);
    return 1;
}

/* Wait for it: its result, its error raised on this thread. */
static int next_masking_join(next_masking_t *n, const sbf_seqbuf_t **use)
{
    pthread_join(n->tid, NULL);
    *use = n->use;
    int rc = n->rc;
    if (rc != SBF_OK)
        rc = sbf_error(rc, "%s", n->message ? n->message : "out of memory");
    free(n->message);
    n->message = NULL;
    return rc;
}

/* Wait for it and forget it (an error before it was needed: the first error stays the one
 * said); the caller frees its copy. */
static void next_masking_drop(next_masking_t *n)
{
    pthread_join(n->tid, NULL);
    free(n->message);
    n->message = NULL;
}

static void layer_free(layer_build_t *L)
{
    sbf_idx_free(L->idx);
    sbf_mask_free(L->every);
    sbf_seqbuf_free(&L->adapter_seq);
    free(L->masked);
    free(L->built);
}

SBF_EXPORT int sbf_builder_finish(sbf_builder_t *b, sbf_index_t **out)
{
    *out = NULL;
    int rc = SBF_OK;
    layer_build_t main = {b->params, b->opt.size_bytes ? 0.0 : b->opt.bits_per_kmer, 0, b->dust_min, 0, {0}, NULL, NULL, NULL, NULL};
    layer_build_t lay = {{b->layer_k, b->layer_k - SBF_DEFAULT_K_MINUS_M, b->layer_k - SBF_DEFAULT_K_MINUS_M,
                          b->params.hashes, b->params.shard_bits},
                         SBF_LAYER_BITS_PER_KMER, SBF_LAYER_ADAPTERS, SBF_LAYER_DUST_MIN, SBF_LAYER_MEASURE_CHANCE, {0},
                         NULL, NULL, NULL, NULL};
    const int layered = b->layer_k > 0;
    if (b->n_targets == 0)
        rc = sbf_error(SBF_E_PARAM, "no target to build");
    if (rc == SBF_OK)
        rc = layer_plan(b, &main);
    if (rc == SBF_OK && layered && (rc = sbf_adapters_append(&lay.adapter_seq, lay.params.k)) == SBF_OK)
        rc = layer_plan(b, &lay);
    if (rc == SBF_OK && b->output) {   /* 1: no reservation there, the filters stay in memory */
        const int sp = sbf_format_spill_open(main.idx, layered ? lay.idx : NULL, b->output);
        rc = sp < 0 ? sp : SBF_OK;
    }
    /* target by target: each layer from the target's sequence (masked for it), the sequence
     * released before the last one's filter on the CPU, after it on a GPU */
    const int on_gpu = build_device(b) >= 0;
    for (int i = 0; i < b->n_targets && rc == SBF_OK; ++i) {
        /* the long-read layer first: its filter is the smaller (8 bits a k-mer against 16), so
         * that the larger is built last, once the layer's filter is in the output (and, on a GPU
         * build with a --mask, beside its masked copy alone once the target's own sequence has
         * gone: below) */
        layer_build_t *order[3] = {layered ? &lay : &main, layered ? &main : NULL, NULL};
        sbf_seqbuf_t kept_next;   /* the second layer's masked copy, made beside the first's build */
        sbf_seqbuf_init(&kept_next);
        sbf_held_t hold_next = {NULL, 0};   /* or, on the CPU, what it leaves out */
        uint64_t hold_next_kept = 0;
        next_masking_t next;
        int masking_next = 0;
        for (int l = 0; l < 2 && order[l] && rc == SBF_OK; ++l) {
            sbf_seqbuf_t kept;
            const sbf_seqbuf_t *use;
            sbf_seqbuf_init(&kept);
            /* a GPU build finds DUST's and the adapters' k-mers itself: no masked copy; a CPU
             * build skips the k-mers a bitmap marks (layer_hold): no masked copy either */
            const int held = on_gpu && layer_held_on_device(b, order[l], i);
            const int cpu_hold = !on_gpu && layer_masking(b, order[l], i);
            sbf_held_t hold = {NULL, 0};
            uint64_t hold_kept = 0;
            if (masking_next) {   /* made beside the layer before: its copy (or bitmap) is this layer's */
                masking_next = 0;
                rc = next_masking_join(&next, &use);
                kept = kept_next;
                sbf_seqbuf_init(&kept_next);
                if (use == &kept_next)
                    use = &kept;
                hold = hold_next;
                hold_kept = hold_next_kept;
                hold_next = (sbf_held_t){NULL, 0};
            } else if (held) {
                use = &b->targets[i].seq;
            } else if (cpu_hold) {
                use = &b->targets[i].seq;
                rc = layer_hold(b, order[l], i, &hold, &hold_kept, 1);
            } else {
                rc = layer_sequence(b, order[l], i, &kept, &use, 1);
            }
            /* the next layer's masking beside this layer's work: on a GPU build beside all of
             * it (the GPU step and the write), unless the GPU masks it; on the CPU, whose threads
             * all insert, beside the write (below) */
            if (rc == SBF_OK && order[l + 1] && on_gpu && !layer_held_on_device(b, order[l + 1], i))
                masking_next = next_masking_start(&next, b, order[l + 1], i, &kept_next, NULL, NULL, "the build");
            /* Both engines keep the target's own sequence to the end: a CPU build reads it in
             * every layer (what a layer leaves out is a bitmap beside it, not a copy; the copy let
             * the last layer free the codes, 3 GB for a human host, which the bitmap's 390 MB now
             * replace), and a GPU build keeps it should the device fail once it holds a masked
             * copy (then freed): the copy is made again from it for the CPU. */
            if (rc == SBF_OK)
                rc = layer_build_target(b, order[l], i, use, use == &kept ? &kept : NULL, held,
                                        hold.bits ? &hold : NULL, hold_kept);
            sbf_seqbuf_free(&kept);
            sbf_held_free(&hold);
            if (rc == SBF_OK && order[l + 1] && !on_gpu)
                masking_next = next_masking_start(&next, b, order[l + 1], i, &kept_next, &hold_next, &hold_next_kept,
                                                  "the write");
            /* its panel finished (every member built): into the output, out of memory */
            const int q = order[l]->idx->targets[i].panel;
            if (rc == SBF_OK && ++order[l]->built[q] == order[l]->idx->panels[q].n_members) {
                const int members = order[l]->idx->panels[q].n_members;
                if (main.idx->spill && members == 1)
                    step(b, "target '%s', k=%d: writing its filter", b->targets[i].name, order[l]->params.k);
                else if (main.idx->spill)   /* a wide panel: finished with its last member */
                    step(b, "k=%d: writing the filters of %d targets (one panel, '%s' its last)", order[l]->params.k,
                         members, b->targets[i].name);
                rc = sbf_format_spill_panel(main.idx, order[l]->idx, q, b->opt.threads);
            }
        }
        if (masking_next)   /* an error before the next layer: its masking is not used */
            next_masking_drop(&next);
        sbf_seqbuf_free(&kept_next);
        sbf_held_free(&hold_next);
        sbf_seqbuf_free(&b->targets[i].seq);
    }
    if (rc == SBF_OK && layered) {
        if (lay.idx->notice && !main.idx->notice)
            main.idx->notice = strdup(lay.idx->notice);
        main.idx->layer = lay.idx;
        lay.idx = NULL;
    }
    if (rc == SBF_OK) {
        main.idx->threads = b->opt.threads;   /* sbf_index_save() writes on as many */
        *out = main.idx;
        main.idx = NULL;
    }
    layer_free(&main);
    layer_free(&lay);
    sbf_builder_destroy(b);
    return rc;
}

SBF_EXPORT int sbf_builder_long_layer(sbf_builder_t *b, int k)
{
    if (k != 0 && b->params.k <= SBF_DEFAULT_K_MINUS_M + 1)
        return sbf_error(SBF_E_PARAM, "an index of k=%d has no room for a long-read layer (its k must be %d or more "
                         "and below the index's): none", b->params.k, SBF_DEFAULT_K_MINUS_M + 1);
    if (k != 0 && (k < 1 || k >= b->params.k || k <= SBF_DEFAULT_K_MINUS_M))
        return sbf_error(SBF_E_PARAM, "the long-read layer's k must be %d to %d (below the index's k=%d), or none",
                         SBF_DEFAULT_K_MINUS_M + 1, b->params.k - 1, b->params.k);
    b->layer_k = k;
    return SBF_OK;
}

SBF_EXPORT int sbf_builder_output(sbf_builder_t *b, const char *path)
{
    char *copy = NULL;
    if (path && !(copy = strdup(path)))
        return sbf_error(SBF_E_NOMEM, "out of memory");
    free(b->output);
    b->output = copy;
    return SBF_OK;
}

SBF_EXPORT int sbf_builder_dust(sbf_builder_t *b, unsigned min)
{
    b->dust_min = min;
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

static int no_such_target(const sbf_index_t *idx, int t)
{
    return sbf_error(SBF_E_PARAM, "no target number %d (the index has %d)", t, idx->n_targets);
}

SBF_EXPORT int sbf_index_target(const sbf_index_t *idx, int t, sbf_target_info_t *info)
{
    if (t < 0 || t >= idx->n_targets)
        return no_such_target(idx, t);
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

SBF_EXPORT int sbf_index_target_chance(const sbf_index_t *idx, int t, double *chance)
{
    if (t < 0 || t >= idx->n_targets)
        return no_such_target(idx, t);
    *chance = idx->targets[t].chance;
    return SBF_OK;
}

SBF_EXPORT uint64_t sbf_index_checksum(const sbf_index_t *idx) { return idx->file_checksum; }

SBF_EXPORT const sbf_index_t *sbf_index_long_layer(const sbf_index_t *idx) { return idx->layer; }

SBF_EXPORT int sbf_index_target_masks(const sbf_index_t *idx, int t, int *n_masks, const char *const **masks,
                                      uint64_t *masked)
{
    if (t < 0 || t >= idx->n_targets)
        return no_such_target(idx, t);
    const sbf_target_t *x = &idx->targets[t];
    if (n_masks)
        *n_masks = x->n_masks;
    if (masks)
        *masks = (const char *const *)x->masks;
    if (masked)
        *masked = x->masked;
    return SBF_OK;
}

SBF_EXPORT int sbf_index_target_panel(const sbf_index_t *idx, int t, int *panel, int *columns, int *panel_columns)
{
    if (t < 0 || t >= idx->n_targets)
        return no_such_target(idx, t);
    const sbf_target_t *x = &idx->targets[t];
    if (panel)
        *panel = x->panel + 1;
    if (columns)
        *columns = (int)x->cols;
    if (panel_columns)
        *panel_columns = 1 << idx->panels[x->panel].log2_width;
    return SBF_OK;
}

/* ---- GPUs: the copies and queries themselves are the engine's (sbf_engine.c) ---- */

SBF_EXPORT int sbf_gpu_devices(void) { return sbf_gpu_count(); }

SBF_EXPORT int sbf_gpu_describe_device(int device, char *buf, size_t size)
{
    return sbf_gpu_describe(device, buf, size);
}

SBF_EXPORT int sbf_index_use_gpus(sbf_index_t *idx, int n, const int *devices)
{
    return sbf_engine_use_gpus(idx, n, devices);
}

SBF_EXPORT int sbf_index_use_gpu(sbf_index_t *idx, int device)
{
    if (device == SBF_GPU_NONE) {   /* back to the CPU engine */
        sbf_engine_drop_gpus(idx);
        return SBF_OK;
    }
    if (device == SBF_GPU_AUTO)
        device = 0;
    return sbf_index_use_gpus(idx, 1, &device);
}

SBF_EXPORT int sbf_index_gpu(const sbf_index_t *idx)
{
    int device = SBF_GPU_NONE;
    return sbf_engine_gpus(idx, &device, 1) > 0 ? device : SBF_GPU_NONE;
}

SBF_EXPORT int sbf_index_gpus(const sbf_index_t *idx, int *devices, int max)
{
    return sbf_engine_gpus(idx, devices, max);
}

/* ---- queries ---- */

SBF_EXPORT int sbf_query(const sbf_index_t *idx, size_t n, const char *const *seqs, const size_t *lens,
                         uint32_t *kmers, uint32_t *hits, int threads)
{
    return sbf_engine_query_any(idx, n, seqs, NULL, lens, kmers, hits, threads);
}

SBF_EXPORT int sbf_query_nt16(const sbf_index_t *idx, size_t n, const uint8_t *const *packed, const size_t *lens,
                              uint32_t *kmers, uint32_t *hits, int threads)
{
    return sbf_engine_query_any(idx, n, NULL, packed, lens, kmers, hits, threads);
}

SBF_EXPORT int sbf_query_kmers(const sbf_index_t *idx, int target, const char *seq, size_t len, uint8_t *present)
{
    return sbf_engine_query_kmers(idx, target, seq, len, present);
}

/* ---- classification ---- */

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
    uint8_t *layer = malloc(reads ? reads : 1);
    sbf_engine_batch_t eb = {0};
    if (!all || !all_lens || !kmers || !hits || !frag_hits || !layer) {
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
    sbf_engine_route(reads, seqs2 ? 2 : 1, all_lens, layer);
    if ((rc = sbf_engine_query_reads(idx, SBF_ENGINE_ANY, reads, all, NULL, all_lens, opt->mask_lowcomp, layer, &eb,
                                     kmers, hits, threads, &seg)) != SBF_OK)
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
    free(layer);
    return rc;
}
