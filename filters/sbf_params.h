/* sbf_params.h -- the parameters every target of an index shares. */
#ifndef SBF_PARAMS_H
#define SBF_PARAMS_H

#include <stdint.h>

typedef struct {
    int k;            /* k-mer length, 1..32 */
    int m;            /* minimizer length, 1..k */
    int s;            /* findere s-mer length, 1..k */
    int hashes;       /* H: bits set per s-mer inside its shard */
    int shard_bits;   /* 256 or 512 (512 = one 64-byte cache line) */
} sbf_params_t;

/* Defaults, chosen by the sweep in doc/parameters.md: m == s (one hash per base serves both),
 * H = 2 and 512-bit shards give 0.0006% false positives on chr20 at 16 bits per k-mer, 0.7% on
 * one-base variants of indexed k-mers, and the fewest instructions per k-mer of the sets that
 * pass the 0.005% target with a wide margin. For another k, m = s = k - SBF_DEFAULT_K_MINUS_M. */
#define SBF_DEFAULT_K 31
#define SBF_DEFAULT_M 25
#define SBF_DEFAULT_S 25
#define SBF_DEFAULT_H 2
#define SBF_DEFAULT_K_MINUS_M 6
/* sbf build --preset long: noisy long reads keep more error-free 25-mers than 31-mers
 * (bench/real.sh: PacBio CLR 94.0 -> 98.0%, R9 ONT 93.9 -> 96.3% of reads; doc/ACCURACY.md). */
#define SBF_LONG_READ_K 25
/* The long-read layer (doc/decisions.md, "The long-read layer"): every target again with
 * k = 21 (m = s = 15), 8 bits per k-mer, adapters left out; fragments with a read of at least
 * SBF_LONG_READ_BASES bases are screened with it. A noisy long read keeps about 1.6 times more
 * error-free 21-mers than 31-mers at 5% errors, 2.8 times at 12%, and has thousands of k-mers,
 * so a sparser filter serves it. */
#define SBF_LAYER_K 21
#define SBF_LAYER_BITS_PER_KMER 8.0
/* k-mers of a DUST score of 14 or more (sbf_kmer_dust) are left out of the layer: A-rich 21-mers
 * with an error in them are common in a human genome and in the poly-A tails of ONT cDNA reads,
 * where they made an unrelated read "human"; 20 left out 2.5% of chr20's 21-mers and 0.1% of
 * E. coli's (doc/decisions.md, "The long-read layer"); 14 (5.1% of chr20's) also keeps AT-rich
 * microbes' long reads off a human host (P. falciparum: 99.19 -> 99.85% kept, bench/host.sh)
 * and raised every long-read set of bench/real.sh (doc/decisions.md, "Low-complexity k-mers"). */
#ifndef SBF_LAYER_DUST_MIN   /* 0 turns it off: doc/ACCURACY.md's sweep builds with -DSBF_LAYER_DUST_MIN=0u */
#define SBF_LAYER_DUST_MIN 14u
#endif
/* 1: the sequencing adapters are left out of the layer; 1: each layer target's chance rate is
 * measured (sbf_target_measure_chance). 0 in doc/ACCURACY.md's sweep only. */
#ifndef SBF_LAYER_ADAPTERS
#define SBF_LAYER_ADAPTERS 1
#endif
#ifndef SBF_LAYER_MEASURE_CHANCE
#define SBF_LAYER_MEASURE_CHANCE 1
#endif
/* SBF_LONG_READ_BASES: plugin/sbf.h (public) */
#define SBF_DEFAULT_SHARD_BITS 512
#define SBF_DEFAULT_BITS_PER_KMER 16.0

void sbf_params_default(sbf_params_t *p);
/* SBF_OK, or SBF_E_PARAM with a message naming the offending parameter. */
int sbf_params_check(const sbf_params_t *p);

static inline unsigned sbf_params_shard_log2(const sbf_params_t *p) { return p->shard_bits == 256 ? 8u : 9u; }
static inline unsigned sbf_params_shard_words(const sbf_params_t *p) { return (unsigned)p->shard_bits / 64u; }

#endif
