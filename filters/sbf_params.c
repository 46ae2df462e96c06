/* sbf_params.c -- defaults and validation of the shared filter parameters. */
#include "sbf_params.h"
#include "sbf_error.h"
#include "sbf_kmer.h"

void sbf_params_default(sbf_params_t *p)
{
    p->k = SBF_DEFAULT_K;
    p->m = SBF_DEFAULT_M;
    p->s = SBF_DEFAULT_S;
    p->hashes = SBF_DEFAULT_H;
    p->shard_bits = SBF_DEFAULT_SHARD_BITS;
}

int sbf_params_check(const sbf_params_t *p)
{
    if (p->k < 1 || p->k > SBF_MAX_K)
        return sbf_error(SBF_E_PARAM, "k-mer length k=%d must be between 1 and %d", p->k, SBF_MAX_K);
    if (p->m < 1 || p->m > p->k)
        return sbf_error(SBF_E_PARAM, "minimizer length m=%d must be between 1 and k=%d", p->m, p->k);
    if (p->s < 1 || p->s > p->k)
        return sbf_error(SBF_E_PARAM, "s-mer length s=%d must be between 1 and k=%d", p->s, p->k);
    if (p->shard_bits != 256 && p->shard_bits != 512)
        return sbf_error(SBF_E_PARAM, "shard size %d bits must be 256 or 512", p->shard_bits);
    /* The H bit positions are disjoint fields of 64 bits: the 32-bit s-mer hash and the word
     * mixed from it (sbf_smer_bit). */
    int max_h = 64 / (int)sbf_params_shard_log2(p);
    if (p->hashes < 1 || p->hashes > max_h)
        return sbf_error(SBF_E_PARAM, "hashes per s-mer H=%d must be between 1 and %d", p->hashes, max_h);
    return SBF_OK;
}
