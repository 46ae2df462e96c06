/* bench/randfa.c -- uniform random DNA as FASTA, fast enough to make a human-sized host for
 * bench/e2e.sh (HOST=big) where the machine has no 3 Gbp genome: about 1 GB/s per process.
 *
 *   sbf-randfa SEED RECORDS BASES NAME > out.fa
 *
 * writes RECORDS records of BASES bases each, named NAME_1 .. NAME_RECORDS, 60 bases a line, from
 * xorshift64* seeded with SEED (the same arguments give the same bytes). Random sequence has no
 * repeats, so its filter fills as a genome's of the same size would with every k-mer distinct:
 * the worst case for the caches, which is what the benchmark is after.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: sbf-randfa SEED RECORDS BASES NAME > out.fa\n");
        return 2;
    }
    uint64_t state = strtoull(argv[1], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
    const long records = strtol(argv[2], NULL, 10);
    const long long bases = strtoll(argv[3], NULL, 10);
    if (records < 1 || bases < 1) {
        fprintf(stderr, "sbf-randfa: RECORDS and BASES must be positive\n");
        return 2;
    }
    static char buf[1 << 20];   /* whole lines of 61 bytes */
    const size_t per_buf = sizeof buf / 61;
    for (long r = 1; r <= records; ++r) {
        if (printf(">%s_%ld\n", argv[4], r) < 0)
            goto fail;
        long long left = bases;
        while (left > 0) {
            size_t n = 0;
            for (size_t l = 0; l < per_buf && left > 0; ++l) {
                int w = left < 60 ? (int)left : 60;
                uint64_t v = 0;
                for (int i = 0; i < w; ++i) {
                    if (i % 32 == 0)
                        v = next(&state);
                    buf[n++] = "ACGT"[v & 3];
                    v >>= 2;
                }
                buf[n++] = '\n';
                left -= w;
            }
            if (fwrite(buf, 1, n, stdout) != n)
                goto fail;
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        goto fail;
    return 0;
fail:
    perror("sbf-randfa: write");
    return 1;
}
