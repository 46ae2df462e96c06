/* fuzz_reads.c -- libFuzzer target: the sequence input path on arbitrary bytes.
 *
 * The bytes are a file (FASTA, FASTQ, SAM, BAM, CRAM, gzip... whatever htslib detects), read
 * through the full-record reader, batched as single reads, as interleaved pairs and as two mate
 * files (the same bytes twice), and written back as FASTQ and as BAM (to /dev/null) with tags,
 * and encoded as the engine's workers encode them for the writer. Any record that is read must
 * be writable; errors must carry a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <htslib/hts_log.h>

#include "../../bam/sbf_batch.h"
#include "../../bam/sbf_writer.h"
#include "../../filters/sbf_error.h"

static void drain(const char *path, int pairing, int two_files)
{
    sbf_reader_t *a = NULL, *b = NULL;
    sbf_reader_opt_t ro = {.pool = NULL, .reference = NULL, .sam_no_ascii = pairing == SBF_PAIRS_BY_FLAGS};
    if (sbf_reader_open(path, &ro, &a) != SBF_OK)
        return;
    if (two_files && sbf_reader_open(path, &ro, &b) != SBF_OK) {
        sbf_reader_close(a);
        return;
    }
    sbf_input_t *in;
    if (sbf_input_new(a, b, (sbf_pairing_t)pairing, &in) != SBF_OK)
        return;
    sbf_writer_t *w[2] = {NULL, NULL};
    for (int i = 0; i < 2; ++i) {
        sbf_writer_opt_t wo = {.spec = {i ? SBF_OUT_BAM : SBF_OUT_FASTQ, i, -1},
                               .pg_version = "fuzz",
                               .pg_cmdline = "fuzz",
                               .tags = {{'s', 'b'}, {'s', 's'}, {'s', 'h'}, 1}};
        if (sbf_writer_open("/dev/null", &wo, &w[i]) != SBF_OK)
            abort();   /* /dev/null is always writable */
    }
    sbf_batch_t batch = {0};
    int rc;
    uint32_t hits[2] = {3, 1};
    kstring_t enc = {0, 0, NULL};
    bam1_t *scratch = NULL;
    while ((rc = sbf_input_next(in, &batch, 1000)) > 0)
        for (size_t i = 0; i < batch.n_reads; ++i) {
            sbf_tags_t tags = {"target", 0.5f, 2, hits, 0};   /* no --rename */
            for (int k = 0; k < 2; ++k) {
                if (sbf_writer_write(w[k], &batch.reads[i], i % 2 ? &tags : NULL) != SBF_OK && k == 0)
                    abort();   /* FASTQ text can hold any record */
                /* the workers' encoder (the GPU path): FASTQ never fails; a BAM failure says why */
                enc.l = 0;
                int erc = sbf_writer_encode(w[k], &batch.reads[i], i % 2 ? &tags : NULL, &scratch, &enc);
                if (erc != SBF_OK && (k == 0 || !*sbf_error_message()))
                    abort();
                if (erc == SBF_OK && k == 1) {   /* whole records: the block lengths add up */
                    size_t at = 0;
                    while (at + 4 <= enc.l) {
                        uint32_t len;
                        memcpy(&len, enc.s + at, 4);
                        at += 4 + (size_t)len;
                    }
                    if (at != enc.l)
                        abort();
                }
            }
        }
    free(enc.s);
    if (scratch)
        bam_destroy1(scratch);
    if (rc < 0 && !*sbf_error_message())
        abort();
    for (int i = 0; i < 2; ++i)
        sbf_writer_abort(w[i]);
    sbf_batch_free(&batch);
    sbf_input_free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hts_set_log_level(HTS_LOG_OFF);   /* as the command: htslib's complaints about the input are expected */
    int fd = memfd_create("reads", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        perror("fuzz_reads");
        abort();
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    drain(path, SBF_PAIRS_BY_FLAGS, 0);
    drain(path, SBF_PAIRS_INTERLEAVED, 0);
    drain(path, SBF_PAIRS_TWO_FILES, 1);
    close(fd);
    return 0;
}
