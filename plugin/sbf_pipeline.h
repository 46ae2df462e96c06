/* sbf_pipeline.h -- inside libsbf: the ordered worker pool behind sbf_pipeline_t (sbf.h) and the
 * classifier stage of `sbf classify` / `sbf filter` (sbf_screen.c).
 *
 * Batches are submitted in order by one thread; worker threads run `work` on them, up to
 * `in_flight` submitted and not yet delivered; `deliver` is called for each batch in submission
 * order, by one worker at a time (whichever finishes the batch next in line). Each worker has a
 * slot: with GPU copies of the index, two workers per copy (one packs and copies a batch while
 * the other's kernel runs); on the CPU engine `cpu_workers` workers (one by default), slot -1,
 * each using its share of the caller's threads inside the query. */
#ifndef SBF_PIPELINE_H
#define SBF_PIPELINE_H

#include <stddef.h>

typedef struct pipeline_s pipeline_t;

typedef struct {
    int gpu_copies;        /* GPU copies of the index (sbf_engine_slots), 0 for the CPU engine */
    int workers_per_copy;  /* [2] */
    int cpu_workers;       /* without GPU copies: the workers [1] */
    int in_flight;         /* 0: 2 per worker + 2 */
    /* Runs on a worker: query the batch on `slot` (a GPU copy, or -1). 0 or a status whose
     * message is the worker's sbf_error_message(). */
    int (*work)(void *ctx, void *batch, int slot);
    /* In order: 0, or a status (message as above) that stops the pipeline. */
    int (*deliver)(void *ctx, void *batch);
    /* Or NULL: called by pipeline_free() for each batch submitted and never delivered (after a
     * failure or an abort), so its owner can free it. */
    void (*drop)(void *ctx, void *batch);
    void *ctx;
    /* 1: `work` marks its device time itself with pipeline_busy() (the rest of its work is
     * host work that the busy share must not count); 0: the whole of `work` counts */
    int marks_busy;
} pipeline_opt_t;

typedef struct {
    int slots;                      /* GPU copies (0: CPU) */
    int workers;                    /* the worker threads, of every slot */
    double busy[17];                /* seconds in which at least one worker of the copy was in
                                     * `work`; busy[0] for the CPU engine */
    double wait_submit;             /* seconds submit() waited for room */
    double wall;                    /* since open */
} pipeline_stats_t;

int pipeline_open(const pipeline_opt_t *opt, pipeline_t **out);
/* Blocks while in_flight batches are out. 0, or the first failure of the pipeline (its
 * message set again on the calling thread). */
int pipeline_submit(pipeline_t *p, void *batch);
/* Runs and delivers everything submitted, stops the workers: 0 or the first failure. */
int pipeline_finish(pipeline_t *p);
/* Stop at once (after a failure elsewhere): undelivered batches are dropped. */
void pipeline_abort(pipeline_t *p);
void pipeline_stats(const pipeline_t *p, pipeline_stats_t *st);
/* Inside `work`, with marks_busy: slot's device time begins (on = 1) or ends (on = 0). */
void pipeline_busy(pipeline_t *p, int slot, int on);
/* After finish or abort; NULL allowed. */
void pipeline_free(pipeline_t *p);

#endif
