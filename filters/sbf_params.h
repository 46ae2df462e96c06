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

/* Defaults, chosen by the sweep in doc/parameters.md. */
#define SBF_DEFAULT_K 31
#define SBF_DEFAULT_M 21
#define SBF_DEFAULT_S 24
#define SBF_DEFAULT_H 2
#define SBF_DEFAULT_SHARD_BITS 512
#define SBF_DEFAULT_BITS_PER_KMER 16.0

void sbf_params_default(sbf_params_t *p);
/* SBFI_OK, or SBFI_E_PARAM with a message naming the offending parameter. */
int sbf_params_check(const sbf_params_t *p);

static inline unsigned sbf_params_shard_log2(const sbf_params_t *p) { return p->shard_bits == 256 ? 8u : 9u; }
static inline unsigned sbf_params_shard_words(const sbf_params_t *p) { return (unsigned)p->shard_bits / 64u; }

#endif
