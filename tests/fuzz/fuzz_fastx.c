/* fuzz_fastx.c -- libFuzzer target: sbf's FASTA/FASTQ parser (bam/sbf_fastx.c) against
 * htslib's kseq, which it replaced for speed, on arbitrary bytes. The first byte sets the size
 * of the reads both parsers get (1-64 bytes at a time, or the whole input), so buffer refills
 * land everywhere; the codes and every string of every record must be identical. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/kseq.h>

#include "../../bam/sbf_fastx.h"

typedef struct {
    const uint8_t *data;
    size_t len, at, piece;
} mem_t;

static int mem_read(void *f, void *buf, int len)
{
    mem_t *m = f;
    size_t n = m->len - m->at, want = (size_t)len < m->piece ? (size_t)len : m->piece;
    n = n < want ? n : want;
    memcpy(buf, m->data + m->at, n);
    m->at += n;
    return (int)n;
}

static int kseq_mem_read(mem_t *m, void *buf, int len) { return mem_read(m, buf, len); }

KSEQ_INIT(mem_t *, kseq_mem_read)

static int same(const kstring_t *a, const kstring_t *b)
{
    return a->l == b->l && (a->l == 0 || memcmp(a->s, b->s, a->l) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t piece = data[0] % 65 ? data[0] % 65 : (size_t)1 << 30;
    mem_t a = {data + 1, size - 1, 0, piece}, b = a;
    kseq_t *ks = kseq_init(&a);
    sbf_fastx_t *fx = sbf_fastx_init(mem_read, &b);
    if (!ks || !fx)
        abort();
    for (int records = 0; records < 100000; ++records) {
        int r1 = kseq_read(ks), r2 = sbf_fastx_read(fx);
        if (r1 != r2)
            abort();
        if (r1 < 0)
            break;
        if (!same(&ks->name, &fx->name) || !same(&ks->comment, &fx->comment) || !same(&ks->seq, &fx->seq) ||
            !same(&ks->qual, &fx->qual))
            abort();
    }
    kseq_destroy(ks);
    sbf_fastx_destroy(fx);
    return 0;
}
