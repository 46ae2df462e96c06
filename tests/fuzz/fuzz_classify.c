/* fuzz_classify.c -- libFuzzer target: classification of arbitrary byte sequences.
 *
 * The input is cut into reads at '\n'. Each read is queried against a fixed two-target index
 * (built once from a deterministic pseudo-random genome, with parts of the input), as text and
 * as BAM 4-bit codes, forwards and reverse-complemented, and scored. Checked: both encodings
 * and both strands give the same counts, hits never exceed k-mers, k-mers equal a naive count,
 * the category is consistent with the scores. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../filters/sbf_classify.h"
#include "../../filters/sbf_lowcomp.h"
#include "sbf.h"
#include "sbf_engine.h"

static sbf_index_t *idx;
static sbf_scorer_t scorer;
static const int K = 31;

static void setup(void)
{
    sbf_opt_t opt;
    sbf_opt_init(&opt);
    opt.gpu = SBF_GPU_NONE;
    opt.size_bytes = 64 * 1024;
    sbf_builder_t *b;
    if (sbf_builder_init(&opt, &b) != SBF_OK)
        abort();
    static char genome[2][20000];
    uint64_t x = 42;
    for (int t = 0; t < 2; ++t) {
        for (size_t i = 0; i < sizeof genome[t]; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            genome[t][i] = "ACGT"[x >> 62];
        }
        int id = sbf_builder_add_target(b, t ? "two" : "one");
        if (id < 0 || sbf_builder_add_seq(b, id, genome[t], sizeof genome[t]) != SBF_OK)
            abort();
    }
    if (sbf_builder_finish(b, &idx) != SBF_OK)
        abort();
    sbf_classify_opt_t o;
    sbf_classify_opt_init(&o);
    if (sbf_engine_scorer(idx, &o, &scorer) != SBF_OK)
        abort();
}

static int code4(unsigned char c)
{
    switch (c) {
    case 'A': case 'a': return 0;
    case 'C': case 'c': return 1;
    case 'G': case 'g': return 2;
    case 'T': case 't': case 'U': case 'u': return 3;
    default: return 4;
    }
}

static void check_read(const char *s, size_t len)
{
    /* naive valid k-mer count */
    uint32_t naive = 0, run = 0;
    for (size_t i = 0; i < len; ++i) {
        run = code4((unsigned char)s[i]) < 4 ? run + 1 : 0;
        naive += run >= (uint32_t)K;
    }
    char *rc = malloc(len + 1);
    uint8_t *packed = calloc(len / 2 + 1, 1);
    if (!rc || !packed)
        abort();
    static const char comp[5] = {'T', 'G', 'C', 'A', 'N'};
    static const uint8_t nt16[5] = {1, 2, 4, 8, 15};
    for (size_t i = 0; i < len; ++i) {
        int c = code4((unsigned char)s[i]);
        rc[len - 1 - i] = comp[c];
        packed[i / 2] |= (uint8_t)(nt16[c] << (i % 2 ? 0 : 4));
    }
    const char *seqs[2] = {s, rc};
    size_t lens[2] = {len, len};
    const uint8_t *pk[1] = {packed};
    uint32_t kmers[2], hits[4], kmers16[1], hits16[2];
    if (sbf_query(idx, 2, seqs, lens, kmers, hits, 1) != SBF_OK ||
        sbf_query_nt16(idx, 1, pk, lens, kmers16, hits16, 1) != SBF_OK)
        abort();
    if (kmers[0] != naive || kmers[1] != naive || kmers16[0] != naive)
        abort();
    for (int t = 0; t < 2; ++t)
        if (hits[t] != hits[2 + t] || hits[t] != hits16[t] || hits[t] > naive)
            abort();
    uint8_t passing[2];
    uint32_t frag[2];
    sbf_frag_result_t res;
    sbf_score_fragment(&scorer, 1, NULL, 0, kmers, hits, NULL, frag, passing, &res);
    int cat = res.category;
    double score = res.score;
    if (naive == 0 ? cat != SBF_CAT_NO_KMER : cat == SBF_CAT_NO_KMER)
        abort();
    if (cat >= 0 && (!passing[cat] || passing[!cat]))
        abort();
    if (cat == SBF_CAT_MULTI && !(passing[0] && passing[1]))
        abort();
    if (!(score >= 0) || (cat >= 0 && score < scorer.opt.min_score))
        abort();
    /* the low-complexity mask: the same bases masked in the text and the 4-bit form */
    char *masked = malloc(len + 1);
    uint8_t *scratch = malloc(len + 1), *pmasked = malloc(len / 2 + 1);
    if (!masked || !scratch || !pmasked)
        abort();
    size_t m1 = sbf_lowcomp_mask_ascii(s, len, SBF_DEFAULT_MASK_LOWCOMP, masked);
    size_t m2 = sbf_lowcomp_mask_nt16(packed, len, SBF_DEFAULT_MASK_LOWCOMP, scratch, pmasked);
    if (m1 != m2 || m1 > len)
        abort();
    for (size_t i = 0; m1 && i < len; ++i)
        if ((code4((unsigned char)masked[i]) == 4) != (((pmasked[i / 2] >> (i % 2 ? 0 : 4)) & 15) == 15) ||
            (code4((unsigned char)masked[i]) < 4 && masked[i] != s[i]))
            abort();
    free(masked);
    free(scratch);
    free(pmasked);
    free(rc);
    free(packed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!idx)
        setup();
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        check_read(p, len);
        p += len + 1;
    }
    return 0;
}
