/* sbf_engine.h -- inside libsbf: which engine answers an index's queries (sbf_engine.c). An index
 * holds no GPU copy (the CPU engine) or one copy per device given to sbf_index_use_gpus(); the
 * pipeline (sbf_pipeline.c) gives each of its workers one copy, so batches run on every device at
 * once. The public API (sbf_api.c) is thin wrappers over these. */
#ifndef SBF_ENGINE_H
#define SBF_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "sbf.h"
#include "../filters/sbf_classify.h"
#include "../filters/sbf_lowcomp.h"
#include "../filters/sbf_segment.h"

/* GPU copies of the index: 0 when its queries run on the CPU. */
int sbf_engine_slots(const sbf_index_t *idx);

/* sbf_index_use_gpus(): one GPU copy of idx per device (devices NULL: 0 to n-1), replacing any
 * it had; on error idx keeps the copies it had. The copies (idx->accel) are a type only the
 * engine knows, so the public API makes, drops and reads them only through these three. */
int sbf_engine_use_gpus(sbf_index_t *idx, int n, const int *devices);
/* The same made on a thread of its own: returns once the devices are checked, and until the
 * copies are all made, every query runs on the CPU engine, whose answers are the same bits: a
 * run screens its first reads while the index goes to the GPUs. The long-read layer's copies
 * are made after the index's, when a query on the layer first asks for them (its queries run
 * on the CPU engine until then): a short-read run never uploads the layer. Freeing the index
 * (or sbf_engine_drop_gpus) stops an upload in flight and waits for it. */
int sbf_engine_use_gpus_async(sbf_index_t *idx, int n, const int *devices);
/* 1 when idx's GPU copies are made and answer queries, else 0. */
int sbf_engine_ready(const sbf_index_t *idx);
/* Where idx's upload stands: SBF_OK once the copies are made (*seconds: how long it took), 1
 * while it runs, or the error that stopped it (message kept; queries stay on the CPU engine).
 * SBF_E_PARAM when idx has no GPU copies at all. *cpu_reads: the reads of GPU queries that
 * the CPU engine answered meanwhile. */
int sbf_engine_upload_state(const sbf_index_t *idx, double *seconds, uint64_t *cpu_reads);
/* The same for the copies of idx's long-read layer, and 2 while no query has asked for them
 * yet (sbf_engine_use_gpus_async); SBF_E_PARAM when idx has no GPU copies of a layer. */
int sbf_engine_layer_upload_state(const sbf_index_t *idx, double *seconds, uint64_t *cpu_reads);
/* Frees idx's GPU copies: its queries run on the CPU engine again
 * (sbf_index_use_gpu(SBF_GPU_NONE)). */
void sbf_engine_drop_gpus(sbf_index_t *idx);
/* The devices of idx's GPU copies, up to max of them into devices (may be NULL); returns how
 * many copies there are, 0 for the CPU engine (sbf_index_gpus(), sbf_index_gpu()). */
int sbf_engine_gpus(const sbf_index_t *idx, int *devices, int max);

/* Query n reads, ASCII (seqs) or BAM 4-bit (packed, seqs NULL), on GPU copy `slot` (taken
 * modulo the copies), or on the CPU engine with `threads` threads when slot < 0, and up to
 * `most` while other queries' threads are idle (a screening run's workers: its -@; else
 * threads). With slot >= 0
 * and no copy ready (none yet, or still being made: sbf_engine_use_gpus_async), the CPU engine
 * answers until the copy is there, as for reads that are going to the GPU (no plain copies of
 * panels): a caller whose index gets no GPU copies passes slot -1. Results as sbf_query().
 * Thread-safe. */
int sbf_engine_query(const sbf_index_t *idx, int slot, size_t n, const char *const *seqs,
                     const uint8_t *const *packed, const size_t *lens, uint32_t *kmers, uint32_t *hits, int threads,
                     int most);

/* Blocks of reads (64 each) that the CPU engine's helper threads (named
 * SBF_ENGINE_HELPER_NAME) answered since the process started, and of them those for queries
 * beyond the threads the queries were owed (--stats; tests). */
#define SBF_ENGINE_HELPER_NAME "sbf-query"
void sbf_engine_helper_blocks(uint64_t *helped, uint64_t *lent);

/* The reads of a classification batch as the engine sees them: low-complexity stretches
 * masked, long reads cut into segments. Buffers are reused from batch to batch. */
typedef struct {
    sbf_lowcomp_batch_t mask;
    sbf_units_t units, units_long;   /* on the index; on its long-read layer */
    uint32_t *ukmers, *uhits;   /* per unit, when reads were cut (or some queried on the layer) */
    size_t cap_ukmers, cap_uhits;
    size_t *lens_main, *lens_long, *first, *end;   /* per read, when some are on the layer */
    size_t cap_lens_main, cap_lens_long, cap_first, cap_end;
    sbf_segments_t seg;
} sbf_engine_batch_t;

#define SBF_ENGINE_ANY (-2)   /* slot: every GPU copy (large calls split), as sbf_query() */

/* What sbf_query() and sbf_query_nt16() run (they take no slot): a large call on every GPU copy
 * at once (one part per device, from 65,536 reads per device), a small one on the copies in
 * turn, or the CPU engine with `threads` threads when the index has no copy. The slot
 * SBF_ENGINE_ANY of sbf_engine_query_reads(). threads < 1 is SBF_E_PARAM. */
int sbf_engine_query_any(const sbf_index_t *idx, size_t n, const char *const *seqs, const uint8_t *const *packed,
                         const size_t *lens, uint32_t *kmers, uint32_t *hits, int threads);

/* sbf_query_kmers(): which k-mers of one sequence target's filter holds, on the first GPU copy
 * or the CPU engine; kept here because it reads the GPU copies. */
int sbf_engine_query_kmers(const sbf_index_t *idx, int target, const char *seq, size_t len, uint8_t *present);

/* Query n reads (ASCII seqs, or packed) for classification with mask_lowcomp: per-read
 * kmers[n] and hits[n x targets] as sbf_query(), of the masked reads; *seg gets the segments
 * of the reads that were cut, or NULL when none was. Reads with layer[i] set (layer may be
 * NULL) are queried on idx's long-read layer when it has one, and *seg says which. slot as
 * sbf_engine_query(), or SBF_ENGINE_ANY. */
int sbf_engine_query_reads(const sbf_index_t *idx, int slot, size_t n, const char *const *seqs,
                           const uint8_t *const *packed, const size_t *lens, unsigned mask_lowcomp,
                           const uint8_t *layer, sbf_engine_batch_t *eb, uint32_t *kmers, uint32_t *hits,
                           int threads, const sbf_segments_t **seg);
void sbf_engine_batch_free(sbf_engine_batch_t *eb);

/* Per target of idx: its predicted false-positive rate and clump chance (sbf_classify.h; the
 * clump pass runs once per index). SBF_OK or SBF_E_NOMEM. */
int sbf_engine_chance(const sbf_index_t *idx, double *fpr, double *clump);

/* The same for the long-read layer of idx (which must have one), its rates counting the chance
 * that a k-mer is in the target's own sequence (2 x its k-mers / 4^k). */
int sbf_engine_layer_chance(const sbf_index_t *idx, double *fpr, double *clump);

/* Which reads go to the long-read layer: n reads, `per` (1 or 2) consecutive ones a fragment;
 * layer[i] = 1 for every read of a fragment one of whose reads has SBF_LONG_READ_BASES or more
 * (a fragment is scored with one rule). */
void sbf_engine_route(size_t n, int per, const size_t *lens, uint8_t *layer);

/* The scoring rule for idx's targets (their predicted false-positive rates); opt is checked.
 * SBF_OK, or SBF_E_PARAM / SBF_E_NOMEM. Free with sbf_scorer_free(). */
int sbf_engine_scorer(const sbf_index_t *idx, const sbf_classify_opt_t *opt, sbf_scorer_t *scorer);

#endif
