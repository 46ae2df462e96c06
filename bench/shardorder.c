/* bench/shardorder.c -- a question for the CPU engine, asked without the engine: against a filter
 * far larger than the caches, is it faster to look up a batch of reads' runs sorted by shard
 * (one pass over the filter in address order, issue 27's "batch the lookups of many reads") than
 * read by read, each read's shards prefetched at once (the engine's burst, filters/sbf_index.c)?
 *
 *   sbf-shardorder FILTER_MIB READS ROUNDS
 *
 * A filter of FILTER_MIB MiB of random words (2 MiB pages asked for, as the index's mapping
 * gets), READS reads of 30 runs (a 150 bp read's, at the defaults), each run a random 64-byte
 * shard and a random 32-bit hash whose fields pick two bits of it (the two probes of H = 2).
 * "burst": per read, its 30 lines prefetched, then tested. "sorted": the runs (shard, hash, run)
 * radix-sorted by shard (three passes of 11 bits: counted in its time), tested in that order with
 * a prefetch 16 runs ahead, each hit added to its read's count. Prints ns per run for each, and
 * whether the reads' counts agree (they must). Single thread. doc/PERFORMANCE.md, CPU engine. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { RUNS_PER_READ = 30, RADIX_BITS = 11, PREFETCH_AHEAD = 16 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t next(uint64_t *s)   /* xorshift64 */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* the two probes of a run: bits of its 64-byte line picked by fields of the hash */
static inline uint32_t probe(const uint64_t *w, uint32_t h)
{
    return (uint32_t)((w[h & 7] >> ((h >> 3) & 63)) & (w[(h >> 9) & 7] >> ((h >> 12) & 63)) & 1);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: sbf-shardorder FILTER_MIB READS ROUNDS\n");
        return 2;
    }
    const size_t bytes = (size_t)(atof(argv[1]) * 1048576.0) / 64 * 64, lines = bytes / 64;
    const size_t reads = (size_t)atol(argv[2]), n = reads * RUNS_PER_READ;
    const int rounds = atoi(argv[3]);
    if (lines == 0 || lines > UINT32_MAX || reads == 0 || n > UINT32_MAX || rounds < 1) {
        fprintf(stderr, "sbf-shardorder: sizes out of range\n");
        return 2;
    }
    uint64_t *filter = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (filter == MAP_FAILED) {
        perror("sbf-shardorder: mmap");
        return 1;
    }
    (void)madvise(filter, bytes, MADV_HUGEPAGE);
    uint64_t seed = 88172645463325252ULL;
    for (size_t i = 0; i < bytes / 8; ++i)
        filter[i] = next(&seed);
    uint32_t *line = malloc(n * 4), *key = malloc(n * 4), *key2 = malloc(n * 4), *hash = malloc(n * 4);
    uint64_t *val = malloc(n * 8), *val2 = malloc(n * 8);   /* hash << 32 | run */
    uint32_t *count_burst = malloc(reads * 4), *count_sorted = malloc(reads * 4);
    if (!line || !key || !key2 || !hash || !val || !val2 || !count_burst || !count_sorted) {
        fprintf(stderr, "sbf-shardorder: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; ++i) {
        line[i] = (uint32_t)(next(&seed) % lines);
        hash[i] = (uint32_t)next(&seed);
    }
    int status = 0;
    for (int r = 0; r < rounds; ++r) {
        const double t0 = now();
        for (size_t q = 0; q < reads; ++q) {
            const uint32_t *l = line + q * RUNS_PER_READ, *h = hash + q * RUNS_PER_READ;
            uint32_t c = 0;
            for (int i = 0; i < RUNS_PER_READ; ++i)
                __builtin_prefetch(filter + (size_t)l[i] * 8, 0, 0);
            for (int i = 0; i < RUNS_PER_READ; ++i)
                c += probe(filter + (size_t)l[i] * 8, h[i]);
            count_burst[q] = c;
        }
        const double t1 = now();
        uint32_t *ka = key, *kb = key2;
        uint64_t *va = val, *vb = val2;
        memcpy(ka, line, n * 4);
        for (size_t i = 0; i < n; ++i)
            va[i] = (uint64_t)hash[i] << 32 | (uint32_t)i;
        for (int pass = 0; pass * RADIX_BITS < 32; ++pass) {
            size_t at[1u << RADIX_BITS] = {0};
            const int shift = pass * RADIX_BITS;
            for (size_t i = 0; i < n; ++i)
                ++at[(ka[i] >> shift) & ((1u << RADIX_BITS) - 1)];
            for (size_t j = 0, sum = 0; j < 1u << RADIX_BITS; ++j) {
                const size_t c = at[j];
                at[j] = sum;
                sum += c;
            }
            for (size_t i = 0; i < n; ++i) {
                const size_t d = at[(ka[i] >> shift) & ((1u << RADIX_BITS) - 1)]++;
                kb[d] = ka[i];
                vb[d] = va[i];
            }
            uint32_t *tk = ka;
            ka = kb;
            kb = tk;
            uint64_t *tv = va;
            va = vb;
            vb = tv;
        }
        memset(count_sorted, 0, reads * 4);
        for (size_t i = 0; i < n; ++i) {
            if (i + PREFETCH_AHEAD < n)
                __builtin_prefetch(filter + (size_t)ka[i + PREFETCH_AHEAD] * 8, 0, 0);
            count_sorted[(uint32_t)va[i] / RUNS_PER_READ] += probe(filter + (size_t)ka[i] * 8, (uint32_t)(va[i] >> 32));
        }
        const double t2 = now();
        const int same = memcmp(count_burst, count_sorted, reads * 4) == 0;
        status |= !same;
        printf("filter %.0f MiB, %zu reads x %d runs: burst %.1f ns/run, sorted %.1f ns/run (%s)\n",
               (double)bytes / 1048576.0, reads, RUNS_PER_READ, (t1 - t0) / (double)n * 1e9,
               (t2 - t1) / (double)n * 1e9, same ? "same counts" : "counts DIFFER");
    }
    return status;
}
