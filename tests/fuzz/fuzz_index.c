/* fuzz_index.c -- libFuzzer target: the .sbf loader on arbitrary bytes.
 *
 * Built by scripts/fuzz.sh with -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which makes the
 * loader accept wrong checksums (filters/sbf_format.c) so that mutations reach the parsing of
 * the header, the metadata and the filter layout behind them. A file that loads must then be
 * usable: every target is described and queried. `make check` replays the seeds twice
 * (tests/fuzz/replay_main.c): built so (replay_index_nochecksum, as fuzzed) and with the
 * checksums on (replay_index, as shipped). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sbf.h"

/* What became of the last input, for the replay's output: "loaded", or the loader's error. */
const char *fuzz_outcome;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("index", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        perror("fuzz_index");
        abort();
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sbf_index_t *idx;
    if (sbf_index_load(path, 0, &idx) == SBF_OK) {
        fuzz_outcome = "loaded";
        static const char *seqs[2] = {"ACGTACGTTAGCTAGCTAGGATCGATCGATTTAGCGCGATATAGC", "NNNNACGT"};
        size_t lens[2] = {strlen(seqs[0]), strlen(seqs[1])};
        int n = sbf_index_n_targets(idx);
        uint32_t kmers[2], *hits = calloc(2 * (size_t)n, sizeof *hits);
        if (!hits)
            abort();
        for (int t = 0; t < n; ++t) {
            sbf_target_info_t ti;
            if (sbf_index_target(idx, t, &ti) != SBF_OK || !ti.name)
                abort();
        }
        if (sbf_query(idx, 2, seqs, lens, kmers, hits, 1) != SBF_OK)
            abort();
        for (int i = 0; i < 2; ++i)
            for (int t = 0; t < n; ++t)
                if (hits[i * n + t] > kmers[i])
                    abort();
        /* the long-read layer, when the file has one: the same targets, queried the same way */
        const sbf_index_t *ly = sbf_index_long_layer(idx);
        if (ly) {
            if (sbf_index_n_targets(ly) != n)
                abort();
            for (int t = 0; t < n; ++t) {
                sbf_target_info_t ti;
                double chance;
                if (sbf_index_target(ly, t, &ti) != SBF_OK || !ti.name || sbf_index_target_chance(ly, t, &chance) != SBF_OK ||
                    !(chance >= 0 && chance <= 1))
                    abort();
            }
            if (sbf_query(ly, 2, seqs, lens, kmers, hits, 1) != SBF_OK)
                abort();
            for (int i = 0; i < 2; ++i)
                for (int t = 0; t < n; ++t)
                    if (hits[i * n + t] > kmers[i])
                        abort();
        }
        free(hits);
        sbf_index_destroy(idx);
    } else if (!*sbf_last_error()) {
        abort();   /* a failure must say why */
    } else {
        fuzz_outcome = sbf_last_error();
    }
    close(fd);
    return 0;
}
