/* sbf_scan.h -- one pass over a window of sequence: s-mer hashes and super-k-mer runs.
 *
 * Insertion and query both start here. A window holds at most SBF_WINDOW k-mers
 * (SBF_WINDOW + k - 1 bases); longer sequences are cut into windows overlapping by k-1 bases,
 * so every k-mer belongs to exactly one window. A run is a stretch of consecutive valid k-mers
 * with the same minimizer hash, hence the same shard: its s-mers are hashed once and the shard
 * is visited once.
 */
#ifndef SBF_SCAN_H
#define SBF_SCAN_H

#include <stdint.h>

#include "sbf_kmer.h"
#include "sbf_params.h"

#define SBF_WINDOW 4096u

typedef struct {
    uint32_t first;       /* position of the run's first k-mer in the window */
    uint32_t n;           /* k-mers in the run */
    uint64_t minimizer;   /* the minimizer's hash (sbf_hash_mmer), input of sbf_shard_index */
} sbf_run_t;

typedef struct {
    /* by s-mer start; valid only inside runs (and 16 more: the AVX-512 probe of a short run reads
     * the first 16 hashes from a run's start, and whole vectors of 8, sbf_probe_simd.c) */
    uint64_t smer_hash[SBF_WINDOW + SBF_MAX_K + 16];
    uint64_t mmer_hash[SBF_WINDOW + SBF_MAX_K];   /* scratch: by m-mer start (when m != s) */
    uint64_t suffix_min[SBF_WINDOW + SBF_MAX_K];  /* scratch: sliding-minimum blocks */
    uint64_t kmer_min[SBF_WINDOW + SBF_MAX_K];    /* scratch: minimizer hash of each k-mer */
    uint32_t run_first[SBF_WINDOW + 8];            /* scratch of the vector paths: run starts */
    sbf_run_t runs[SBF_WINDOW];
    const uint64_t *shard[SBF_WINDOW];            /* scratch: each run's shard in the target at hand */
    uint32_t key[SBF_WINDOW];                     /* scratch: each run's sbf_shard_key, for every target */
    uint32_t n_runs;
    uint32_t n_kmers;                             /* valid k-mers in the window */
} sbf_scan_t;

/* Scan seq[0..len) (len <= SBF_WINDOW + k - 1). `code` maps each byte to a 2-bit base or 4
 * (sbf_nt4_ascii for text, sbf_nt4_identity for bytes already encoded). */
void sbf_scan_window(sbf_scan_t *sc, const sbf_params_t *p, const uint8_t code[256],
                     const uint8_t *seq, uint32_t len);

/* The scan has a scalar path and vector paths (AVX2, AVX-512, and AVX-512 with VBMI and GFNI,
 * which rolls the canonical words in vectors too), all computing the same runs and hashes; the
 * fastest the CPU supports is chosen on first use. */
typedef enum { SBF_SCAN_SCALAR, SBF_SCAN_AVX2, SBF_SCAN_AVX512, SBF_SCAN_AVX512VBMI, SBF_SCAN_PATHS } sbf_scan_path_t;

/* The path sbf_scan_window() runs (chosen now if not yet). */
sbf_scan_path_t sbf_scan_path(void);
/* "scalar", "avx2", "avx512", "avx512vbmi"; NULL past the last. */
const char *sbf_scan_path_name(sbf_scan_path_t path);
/* 1 when this CPU (and this build) can run `path`. */
int sbf_scan_path_supported(sbf_scan_path_t path);
/* Run `path` from now on (tests, and the SBF_SIMD test switch of the command line). SBF_OK, or
 * SBF_E_PARAM when this CPU or build cannot run it. Not to be called while scans run. */
int sbf_scan_set_path(sbf_scan_path_t path);

/* sbf_scan_set_path() of the path named "scalar", "avx2", "avx512" or "avx512vbmi" (SBF_SIMD's
 * values). SBF_OK, or SBF_E_PARAM with the message "not a scan path (scalar, avx2, avx512 or
 * avx512vbmi)" or "this CPU cannot run that path". */
int sbf_scan_set_path_named(const char *name);

/* Bytes 0..3 map to themselves, everything else to 4: for sequences stored as 2-bit codes. */
extern const uint8_t sbf_nt4_identity[256];

#endif
