/* sbf_screen_stages.c -- what each batch (job) of the screening pipeline (sbf_screen.c) goes
 * through, stage by stage: the reader thread fills it; the run's thread points the engine at its
 * reads; an engine worker queries every index, applies the scoring rule and (when the outputs take
 * them) encodes its records; delivery merges its counts in input order; the writer thread writes
 * it and hands it back to the reader. Also the job's buffers, kept from batch to batch so a run
 * allocates only while batches grow. The first failure of any stage stops them all (screen_fail). */
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_error.h"
#include "../filters/sbf_mem.h"
#include "sbf_engine.h"
#include "sbf_screen_int.h"

/* ------------------------------------------------------------------ the job */

/* Record the first failure (the calling thread's sbf error message) and stop every stage. */
void screen_fail(screen_t *s, const char *msg)
{
    pthread_mutex_lock(&s->err_lock);
    if (!s->failed) {
        s->failed = 1;
        snprintf(s->err, sizeof s->err, "%s", msg);
    }
    pthread_mutex_unlock(&s->err_lock);
    sbf_queue_abort(&s->free_q);
    sbf_queue_abort(&s->class_q);
    sbf_queue_abort(&s->write_q);
}

/* realloc that leaves *p valid on failure */
static int grow(void **p, size_t bytes)
{
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

static int job_reserve(job_t *j, int R)
{
    const sbf_batch_t *b = &j->batch;
    if (b->n_reads > j->cap_reads) {
        size_t cap = b->cap_reads, hits = cap * (size_t)R * sizeof *j->hits;
        if (grow((void **)&j->seqs, cap * sizeof *j->seqs) || grow((void **)&j->lens, cap * sizeof *j->lens) ||
            grow((void **)&j->qtext, cap * sizeof *j->qtext) || grow((void **)&j->packed, cap * sizeof *j->packed) ||
            grow((void **)&j->plens, cap * sizeof *j->plens) || grow((void **)&j->qsam, cap * sizeof *j->qsam) ||
            grow((void **)&j->kmers, cap * sizeof *j->kmers) || grow((void **)&j->hits, hits) ||
            grow((void **)&j->seg_first, cap * sizeof *j->seg_first) ||
            grow((void **)&j->seg_end, cap * sizeof *j->seg_end) || grow((void **)&j->rlen, cap * sizeof *j->rlen) ||
            grow((void **)&j->layer, cap) || grow((void **)&j->lens_layer[0], cap * sizeof **j->lens_layer) ||
            grow((void **)&j->lens_layer[1], cap * sizeof **j->lens_layer) ||
            grow((void **)&j->plens_layer[0], cap * sizeof **j->plens_layer) ||
            grow((void **)&j->plens_layer[1], cap * sizeof **j->plens_layer))
            return -1;
        j->cap_reads = cap;
    }
    if (b->n_frags > j->cap_frags) {
        size_t cap = b->cap_frags;
        if (grow((void **)&j->cat, cap * sizeof *j->cat) || grow((void **)&j->score, cap * sizeof *j->score) ||
            grow((void **)&j->keep, cap * sizeof *j->keep) || grow((void **)&j->fhits, cap * (size_t)R * sizeof *j->fhits))
            return -1;
        j->cap_frags = cap;
    }
    return 0;
}

void screen_job_free(job_t *j)
{
    sbf_batch_free(&j->batch);
    free(j->seqs);
    free(j->lens);
    free(j->qtext);
    free(j->packed);
    free(j->plens);
    free(j->qsam);
    free(j->kmers);
    free(j->hits);
    for (int l = 0; l < 2; ++l) {
        sbf_units_free(&j->units_text[l]);
        sbf_units_free(&j->units_sam[l]);
        free(j->lens_layer[l]);
        free(j->plens_layer[l]);
    }
    free(j->layer);
    free(j->ukmers);
    free(j->uhits);
    free(j->uhits3);
    free(j->seg_first);
    free(j->seg_end);
    free(j->rlen);
    sbf_lowcomp_batch_free(&j->mask_text);
    sbf_lowcomp_batch_free(&j->mask_sam);
    summary_free(&j->part);
    free(j->passing);
    for (int o = 0; j->enc && o < j->n_enc; ++o)
        free(j->enc[o].s);
    free(j->enc);
    free(j->enc_records);
    if (j->scratch)
        bam_destroy1(j->scratch);
    free(j->cat);
    free(j->score);
    free(j->keep);
    free(j->fhits);
}

/* ------------------------------------------------------------------ stages */

void *screen_reader_main(void *arg)
{
    screen_t *s = arg;
    void *item;
    while (sbf_queue_pop(&s->free_q, &item)) {
        job_t *j = item;
        double t = sbf_now(), c = sbf_thread_cpu();
        int rc = sbf_input_next(s->input, &j->batch, s->batch_bases);
        j->first_frag = s->frags_read;   /* batches leave the reader in input order */
        if (rc > 0)
            s->frags_read += j->batch.n_frags;
        s->t_read += sbf_now() - t;
        s->cpu_read += sbf_thread_cpu() - c;
        if (rc < 0) {
            screen_fail(s, sbf_error_message());
            break;
        }
        if (rc == 0 || sbf_queue_push(&s->class_q, j) < 0)
            break;
    }
    sbf_queue_close(&s->class_q);
    return NULL;
}

/* Does the fragment match the targets of --remove/--keep? A `multi` fragment matches if one
 * of its tied targets is selected. */
static int matches_selection(const screen_t *s, int cat, const uint8_t *passing)
{
    if (cat >= 0)
        return s->selected[cat];
    if (cat == SBF_CAT_MULTI)
        for (int t = 0; t < s->R; ++t)
            if (passing[t] && s->selected[t])
                return 1;
    return 0;
}

static int category_slot(const screen_t *s, int cat)
{
    return cat >= 0 ? cat : cat == SBF_CAT_MULTI ? s->R : s->R + 1;
}

/* Has idx GPU copies, or may it still get them (the GPUs being counted and the uploads started
 * by attach_gpus() in sbf_screen.c)? A GPU worker's query of an index that gets none takes the
 * CPU engine's own path (slot -1): the engine answers a slot without copies as reads to come to
 * the GPU, without the plain copies of panels. */
static int gpu_to_come(const screen_t *s, const sbf_index_t *idx)
{
    return sbf_engine_slots(idx) > 0 || !__atomic_load_n(&s->gpus_attached, __ATOMIC_ACQUIRE);
}

/* Query the units of set l (text units, then SAM units) on one index (or its layer): kmers and
 * Rx hits per unit. */
static int query_units(const screen_t *s, const sbf_index_t *idx, int slot, job_t *j, int l, uint32_t *kmers,
                       uint32_t *uhits, int Rx)
{
    const sbf_units_t *ut = &j->units_text[l], *us = &j->units_sam[l];
    const size_t T = ut->n_units, S = us->n_units;
    const int threads = s->query_threads, most = s->o->threads;   /* the run's -@: other workers' idle threads */
    int rc = SBF_OK;
    const double t0 = sbf_now();
    if (slot >= 0 && !gpu_to_come(s, idx))   /* an index whose upload could not start */
        slot = -1;
    if (T)
        rc = sbf_engine_query(idx, slot, T, ut->seqs, NULL, ut->lens, kmers, uhits, threads, most);
    if (rc == SBF_OK && S)
        rc = sbf_engine_query(idx, slot, S, NULL, us->packed, us->lens, kmers + T, uhits + T * (size_t)Rx, threads,
                             most);
    j->t_engine += sbf_now() - t0;
    return rc;
}

/* The batch's own counts, zeroed (allocated on first use). */
static int job_counts_reset(const screen_t *s, job_t *j)
{
    const size_t R = (size_t)s->R;
    if (!j->part.cat && summary_alloc(&j->part, s->R) < 0)
        return -1;
    if (!j->passing && !(j->passing = calloc(R + 1, 1)))
        return -1;
    j->part.frags = j->part.reads_in = j->part.bases_in = j->part.extras = j->part.no_kmer = j->part.chimeric = 0;
    j->part.long_frags = 0;
    j->part.masked_reads = j->part.masked_bases = 0;
    memset(j->part.cat, 0, (R + 2) * sizeof *j->part.cat);
    memset(j->part.hits, 0, (R + 1) * sizeof *j->part.hits);
    memset(j->part.shared, 0, (R + 1) * sizeof *j->part.shared);
    memset(j->part.score_hist, 0, (R + 1) * SUMMARY_BINS * sizeof *j->part.score_hist);
    j->pairs_seen = 0;
    j->frags_out = j->reads_out = j->bases_out = 0;
    return 0;
}

/* On delivery, in input order: the batch's counts into the run's. */
static void merge_counts(screen_t *s, const job_t *j)
{
    screen_summary_t *sum = &s->sum;
    const screen_summary_t *p = &j->part;
    const size_t R = (size_t)s->R;
    sum->frags += p->frags;
    sum->reads_in += p->reads_in;
    sum->bases_in += p->bases_in;
    sum->extras += p->extras;
    sum->no_kmer += p->no_kmer;
    sum->chimeric += p->chimeric;
    sum->long_frags += p->long_frags;
    sum->masked_reads += p->masked_reads;
    sum->masked_bases += p->masked_bases;
    for (size_t c = 0; c < R + 2; ++c)
        sum->cat[c] += p->cat[c];
    for (size_t t = 0; t < R; ++t) {
        sum->hits[t] += p->hits[t];
        sum->shared[t] += p->shared[t];
    }
    for (size_t i = 0; i < R * SUMMARY_BINS; ++i)
        sum->score_hist[i] += p->score_hist[i];
    s->pairs_seen |= j->pairs_seen;
}

/* This thread, before the engine: point the engine at the batch's reads. SAM/BAM/CRAM records
 * go to the engine as their 4-bit codes (half a byte per base, as bam1_t holds them),
 * FASTA/FASTQ as text: two queries when a batch holds both (mate files of different formats),
 * results scattered back by read. */
int screen_prepare_job(screen_t *s, job_t *j)
{
    sbf_batch_t *b = &j->batch;
    if (job_reserve(j, s->R) < 0 || job_counts_reset(s, j) < 0)
        return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", b->n_reads);
    size_t n_text = 0, n_sam = 0;
    for (size_t i = 0; i < b->n_reads; ++i) {
        const sbf_read_t *r = &b->reads[i];
        j->rlen[i] = sbf_read_len(r);
        if (r->frag < 0)
            ++j->part.extras;
        if (r->sam) {
            j->qsam[n_sam] = i;
            j->packed[n_sam] = bam_get_seq(r->b);
            j->plens[n_sam++] = r->frag >= 0 ? sbf_read_len(r) : 0;   /* unclassified records cost nothing */
        } else {
            j->qtext[n_text] = i;
            j->seqs[n_text] = r->seq.s ? r->seq.s : "";
            j->lens[n_text++] = r->frag >= 0 ? r->seq.l : 0;
        }
    }
    j->n_text = n_text;
    j->n_sam = n_sam;
    return SBF_OK;
}

static int query_job(screen_t *s, job_t *j, int slot);
static int score_job(screen_t *s, job_t *j);
static int encode_job(screen_t *s, job_t *j);

/* An engine worker: the queries, then the scoring rule and the batch's counts, then (when the
 * outputs take them) the records encoded for the writer: all of it in parallel over batches. */
int screen_work_job(void *ctx, void *item, int slot)
{
    screen_t *s = ctx;
    job_t *j = item;
    double tq = sbf_now();
    j->t_engine = 0;
    if (slot >= 0 && !gpu_to_come(s, s->idx[0]))   /* expected, not there: the CPU engine's own path */
        slot = -1;
    if (slot >= 0 && !s->null_engine && sbf_engine_slots(s->idx[0]) == 0)   /* the GPUs not yet counted: the CPU engine answers */
        __atomic_fetch_add(&s->reads_cpu_early, (uint64_t)j->batch.n_reads, __ATOMIC_RELAXED);
    pipeline_busy(s->engine, slot, 1);
    int rc = query_job(s, j, slot);
    pipeline_busy(s->engine, slot, 0);
    double t0 = sbf_now();
    j->t_query = t0 - tq;
    if (rc == SBF_OK)
        rc = score_job(s, j);
    double t1 = sbf_now();
    if (rc == SBF_OK && s->encode)
        rc = encode_job(s, j);
    j->t_score = t1 - t0;
    j->t_encode = sbf_now() - t1;
    return rc;
}

/* Query every index for the batch on the worker's slot (GPU copy). */
static int query_job(screen_t *s, job_t *j, int slot)
{
    const int R = s->R;
    j->segp = NULL;
    if (s->null_engine) {   /* SBF_NULL_ENGINE (bench/io.sh): no k-mer found, the I/O alone */
        memset(j->kmers, 0, j->batch.n_reads * sizeof *j->kmers);
        memset(j->hits, 0, j->batch.n_reads * (size_t)R * sizeof *j->hits);
        return SBF_OK;
    }
    /* low-complexity stretches masked once for every index */
    const char *const *no_text;
    const uint8_t *const *no_sam;
    const unsigned mask = s->o->score.mask_lowcomp;
    int rc = sbf_lowcomp_batch(&j->mask_text, mask, j->n_text, j->seqs, NULL, j->lens, &j->qseqs, &no_sam);
    if (rc == SBF_OK)
        rc = sbf_lowcomp_batch(&j->mask_sam, mask, j->n_sam, NULL, j->packed, j->plens, &no_text, &j->qpacked);
    if (rc != SBF_OK)
        return rc;
    j->part.masked_reads = j->mask_text.masked_reads + j->mask_sam.masked_reads;
    j->part.masked_bases = j->mask_text.masked_bases + j->mask_sam.masked_bases;
    /* the reads of fragments with a read of SBF_LONG_READ_BASES or more go to the long-read
     * layers (one rule per fragment) */
    const sbf_batch_t *b = &j->batch;
    size_t n_long = 0;
    if (s->layered) {
        memset(j->layer, 0, b->n_reads);
        for (size_t f = 0; f < b->n_frags; ++f) {
            const sbf_frag_t *fr = &b->frags[f];
            int any = 0;
            for (uint32_t m = 0; m < fr->n; ++m)
                any |= j->rlen[fr->read[m]] >= SBF_LONG_READ_BASES;
            for (uint32_t m = 0; any && m < fr->n; ++m)
                j->layer[fr->read[m]] = 1;
            n_long += any;
        }
    }
    j->part.long_frags = n_long;
    const int L = n_long ? 2 : 1;
    /* long reads as segments, so the scoring sees where each target's hits lie */
    size_t off[2] = {0, 0}, T[2] = {0, 0}, total = 0, most = 0;
    for (int l = 0; l < L; ++l) {
        const size_t *lt = j->lens, *ls = j->plens;
        if (L == 2) {   /* this set's reads keep their lengths, the other set's are empty */
            for (size_t q = 0; q < j->n_text; ++q)
                j->lens_layer[l][q] = j->layer[j->qtext[q]] == l ? j->lens[q] : 0;
            for (size_t q = 0; q < j->n_sam; ++q)
                j->plens_layer[l][q] = j->layer[j->qsam[q]] == l ? j->plens[q] : 0;
            lt = j->lens_layer[l];
            ls = j->plens_layer[l];
        }
        const unsigned k = (unsigned)(l ? s->layer_k : s->k);
        if ((rc = sbf_units_make(&j->units_text[l], j->n_text, j->qseqs, NULL, lt, k)) != SBF_OK ||
            (rc = sbf_units_make(&j->units_sam[l], j->n_sam, NULL, j->qpacked, ls, k)) != SBF_OK)
            return rc;
        T[l] = j->units_text[l].n_units;
        const size_t U = T[l] + j->units_sam[l].n_units;
        off[l] = total;
        total += U;
        most = U > most ? U : most;
    }
    const size_t Um = total ? total : 1;
    if ((rc = sbf_reserve(&j->ukmers, &j->cap_ukmers, Um, sizeof *j->ukmers)) != SBF_OK ||
        (rc = sbf_reserve(&j->uhits, &j->cap_uhits, Um * (size_t)(R ? R : 1), sizeof *j->uhits)) != SBF_OK ||
        (s->n_idx > 1 &&
         (rc = sbf_reserve(&j->uhits3, &j->cap_uhits3, (most ? most : 1) * (size_t)s->max_targets, sizeof *j->uhits3)) !=
             SBF_OK))
        return rc;
    for (int l = 0; l < L; ++l) {
        uint32_t *uk = j->ukmers + off[l], *uh = j->uhits + off[l] * (size_t)R;
        const size_t U = (l + 1 < L ? off[l + 1] : total) - off[l];
        if (s->n_idx == 1) {
            const sbf_index_t *ix = l ? sbf_index_long_layer(s->idx[0]) : s->idx[0];
            if ((rc = query_units(s, ix, slot, j, l, uk, uh, R)) != SBF_OK)
                return rc;
            continue;
        }
        /* several index files: each one's hits side by side, in the order given */
        for (int x = 0; x < s->n_idx; ++x) {
            const sbf_index_t *ix = l ? sbf_index_long_layer(s->idx[x]) : s->idx[x];
            const int Rx = sbf_index_n_targets(ix);
            if ((rc = query_units(s, ix, slot, j, l, uk, j->uhits3, Rx)) != SBF_OK)
                return rc;
            for (size_t q = 0; q < U; ++q)
                memcpy(uh + q * (size_t)R + (size_t)s->first_target[x], j->uhits3 + q * (size_t)Rx,
                       (size_t)Rx * sizeof *j->uhits);
        }
    }
    /* each read's units (in its set), and its totals */
    for (size_t q = 0; q < j->n_text; ++q) {
        const int l = L == 2 ? j->layer[j->qtext[q]] : 0;
        j->seg_first[j->qtext[q]] = off[l] + j->units_text[l].start[q];
        j->seg_end[j->qtext[q]] = off[l] + j->units_text[l].start[q + 1];
    }
    for (size_t q = 0; q < j->n_sam; ++q) {
        const int l = L == 2 ? j->layer[j->qsam[q]] : 0;
        j->seg_first[j->qsam[q]] = off[l] + T[l] + j->units_sam[l].start[q];
        j->seg_end[j->qsam[q]] = off[l] + T[l] + j->units_sam[l].start[q + 1];
    }
    j->seg = (sbf_segments_t){j->seg_first, j->seg_end, j->ukmers, j->uhits, n_long ? j->layer : NULL};
    j->segp = &j->seg;
    sbf_segments_gather(&j->seg, j->batch.n_reads, R, j->kmers, j->hits);
    return SBF_OK;
}

/* The scoring rule for every fragment of the batch, and its counts (in j->part). */
static int score_job(screen_t *s, job_t *j)
{
    sbf_batch_t *b = &j->batch;
    const int R = s->R;
    screen_summary_t *sum = &j->part;
    uint8_t *passing = j->passing;
    for (size_t f = 0; f < b->n_frags; ++f) {
        const sbf_frag_t *fr = &b->frags[f];
        uint32_t *h = j->fhits + f * (size_t)R;
        sbf_frag_result_t res;
        sbf_score_fragment(&s->scorer, (int)fr->n, fr->read, 0, j->kmers, j->hits, j->segp, h, passing, &res);
        for (uint32_t m = 0; m < fr->n; ++m)
            sum->bases_in += j->rlen[fr->read[m]];
        const int cat = res.category;
        const uint32_t kmers = res.kmers;
        const double score = res.score;
        j->cat[f] = cat;
        j->score[f] = (float)score;
        /* the report's histogram: each target's calibrated score, from the scorer the rule
         * uses, on the fragment's summed k-mers and hits (also under BioBloom's mate rules,
         * which score each mate alone); a target without a hit scores 0 and costs nothing */
        if (kmers && s->o->report)
            for (int t = 0; t < R; ++t) {
                const double st = h[t] ? sbf_score_hits(&s->scorer, t, kmers, h[t]) : 0;
                ++sum->score_hist[(size_t)t * SUMMARY_BINS + (size_t)summary_score_bin(st)];
            }
        ++sum->frags;
        sum->reads_in += fr->n;
        j->pairs_seen |= fr->n == 2;
        ++sum->cat[category_slot(s, cat)];
        if (cat == SBF_CAT_NO_KMER)
            ++sum->no_kmer;
        sum->chimeric += res.parts != 0;
        if (cat >= 0 || cat == SBF_CAT_MULTI)
            for (int t = 0; t < R; ++t)
                if (passing[t]) {
                    ++sum->hits[t];
                    sum->shared[t] += cat == SBF_CAT_MULTI;
                }
        if (s->o->mode == SCREEN_FILTER)
            j->keep[f] = (uint8_t)((matches_selection(s, cat, passing) == s->o->keep) != s->o->invert);
    }
    return SBF_OK;
}

int screen_deliver_job(void *ctx, void *item)
{
    screen_t *s = ctx;
    job_t *j = item;
    merge_counts(s, j);
    s->t_query += j->t_query;
    s->t_engine += j->t_engine;
    s->t_score += j->t_score;
    s->t_encode += j->t_encode;
    if (sbf_queue_push(&s->write_q, item) < 0)
        return sbf_error(SBF_E_IO, "stopped");   /* another stage failed: its message is kept */
    return SBF_OK;
}

void screen_progress(screen_t *s, int final)
{
    double t = sbf_now() - s->t0;
    fprintf(stderr, "\rsbf %s: %llu reads, %.0f reads/s%s", s->o->cmd, (unsigned long long)s->sum.reads_out,
            t > 0 ? (double)s->sum.reads_out / t : 0.0, final ? "\n" : "   ");
}

/* Where record i of the batch goes: an output number, or -1 (not written). *tp is its tags, or
 * NULL; *first is 1 for the first record of a written fragment (counted once). */
static int record_output(const screen_t *s, const job_t *j, size_t i, sbf_tags_t *tags, sbf_tags_t **tp, int *first)
{
    const sbf_read_t *r = &j->batch.reads[i];
    const screen_opt_t *o = s->o;
    int slot = 0;
    *tp = NULL;
    *first = 0;
    if (r->frag < 0) {
        if (o->mode != SCREEN_TAG)   /* split/filter: secondary and supplementary are dropped */
            return -1;
        if (o->rename)   /* no fragment number: its name would be written as it is */
            return -2;
    } else {
        int32_t f = r->frag, cat = j->cat[f];
        if (o->mode == SCREEN_FILTER && !j->keep[f])
            return -1;
        if (o->mode == SCREEN_SPLIT)
            slot = category_slot(s, cat);
        *tags = (sbf_tags_t){NULL, 0, 0, NULL, o->rename ? j->first_frag + (uint64_t)f + 1 : 0};
        if (o->mode == SCREEN_TAG || (o->mode == SCREEN_SPLIT && !o->no_tags))
            *tags = (sbf_tags_t){s->names[category_slot(s, cat)], j->score[f], s->R, j->fhits + (size_t)f * (size_t)s->R,
                                 tags->rename};
        if (tags->category || tags->rename)
            *tp = tags;
        *first = j->batch.frags[f].read[0] == i;
    }
    return slot * (s->mate_files ? 2 : 1) + (s->mate_files && r->mate == 2 ? 1 : 0);
}

/* Every record of the batch that is written, to its output: encoded into j->enc (a worker,
 * for the writer to copy) or written (the writer thread). The counts go to j->*_out either way. */
static int emit_records(screen_t *s, job_t *j, int encode)
{
    sbf_batch_t *b = &j->batch;
    for (size_t i = 0; i < b->n_reads; ++i) {
        sbf_tags_t tags, *tp;
        int first, out = record_output(s, j, i, &tags, &tp, &first);
        if (out == -2)
            return sbf_error(SBF_E_FORMAT, "--rename: %s holds secondary or supplementary records, whose names "
                             "would be written unchanged: leave them out first (samtools view -F 0x900)",
                             s->o->in[0] ? s->o->in[0] : "-");
        if (out < 0)
            continue;
        sbf_read_t *r = &b->reads[i];
        if (encode) {
            if (sbf_writer_encode(s->outs[out], r, tp, &j->scratch, &j->enc[out]) != SBF_OK)
                return SBF_E_IO;
            ++j->enc_records[out];
        } else if (sbf_writer_write(s->outs[out], r, tp) != SBF_OK) {
            return SBF_E_IO;
        }
        j->frags_out += (uint64_t)first;
        ++j->reads_out;
        j->bases_out += j->rlen[i];
    }
    return SBF_OK;
}

/* A worker: the batch's records as bytes for their outputs (sbf_writer_encode). */
static int encode_job(screen_t *s, job_t *j)
{
    const int n_outs = s->n_slots * (s->mate_files ? 2 : 1);
    if (j->n_enc < n_outs) {
        kstring_t *e = realloc(j->enc, (size_t)n_outs * sizeof *e);
        size_t *c = e ? realloc(j->enc_records, (size_t)n_outs * sizeof *c) : NULL;
        if (e)
            j->enc = e;
        if (!e || !c)
            return sbf_error(SBF_E_NOMEM, "out of memory for a batch of %zu reads", j->batch.n_reads);
        j->enc_records = c;
        memset(j->enc + j->n_enc, 0, (size_t)(n_outs - j->n_enc) * sizeof *e);
        j->n_enc = n_outs;
    }
    for (int o = 0; o < n_outs; ++o) {
        j->enc[o].l = 0;
        j->enc_records[o] = 0;
    }
    int rc = emit_records(s, j, 1);
    j->encoded = rc == SBF_OK;
    return rc;
}

/* The writer thread: the bytes the worker encoded, copied into each output, or the records
 * written one by one; then the batch's output counts. */
/* The encoded bytes of outputs first, first + 2, ... of a job: the writer thread and its
 * helper take every other output, so the two mate files of a run are written at once (one
 * thread writing both was the limit of plain FASTQ runs: bench/e2e.sh, writing 1.03 s of a
 * 1.36 s run). */
typedef struct {
    screen_t *s;
    job_t *j;
    int first, rc;
    char err[512];
} write_share_t;

static void *write_share(void *arg)
{
    write_share_t *w = arg;
    const job_t *j = w->j;
    for (int o = w->first; o < j->n_enc; o += 2)
        if (j->enc_records[o] &&
            sbf_writer_write_encoded(w->s->outs[o], j->enc[o].s, j->enc[o].l, j->enc_records[o]) != SBF_OK) {
            w->rc = SBF_E_IO;
            snprintf(w->err, sizeof w->err, "%s", sbf_error_message());
            break;
        }
    return NULL;
}

static int write_job(screen_t *s, job_t *j)
{
    if (s->o->mode == SCREEN_COUNT)
        return SBF_OK;
    if (j->encoded) {
        /* two outputs or more (mate files, split categories): every other one on the helper */
        write_share_t w[2] = {{s, j, 0, SBF_OK, ""}, {s, j, 1, SBF_OK, ""}};
        int both = j->n_enc > 1 && sbf_helper_run(&s->write_helper, write_share, &w[1]);
        write_share(&w[0]);
        if (both)
            sbf_helper_wait(&s->write_helper);
        else if (j->n_enc > 1)
            write_share(&w[1]);
        j->encoded = 0;
        for (int i = 0; i < 2; ++i)
            if (w[i].rc != SBF_OK)
                return sbf_error(w[i].rc, "%s", w[i].err);
    } else if (emit_records(s, j, 0) != SBF_OK) {
        return SBF_E_IO;
    }
    s->sum.frags_out += j->frags_out;
    s->sum.reads_out += j->reads_out;
    s->sum.bases_out += j->bases_out;
    return SBF_OK;
}

void *screen_writer_main(void *arg)
{
    screen_t *s = arg;
    void *item;
    double last = sbf_now();
    for (;;) {
        double t = sbf_now();
        if (!sbf_queue_pop(&s->write_q, &item))
            break;
        s->t_wait_write += sbf_now() - t;
        t = sbf_now();
        double c = sbf_thread_cpu();
        int rc = write_job(s, item);
        s->t_write += sbf_now() - t;
        s->cpu_write += sbf_thread_cpu() - c;
        if (rc != SBF_OK) {
            screen_fail(s, sbf_error_message());
            break;
        }
        if (s->show_progress && sbf_now() - last >= 1.0) {
            screen_progress(s, 0);
            last = sbf_now();
        }
        if (sbf_queue_push(&s->free_q, item) < 0)
            break;
    }
    sbf_helper_stop(&s->write_helper);
    return NULL;
}
