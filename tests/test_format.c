/* test_format.c -- the .sbf file: byte-identical round trips, and every damaged file rejected
 * with a message naming it: each truncation, each flipped byte, wrong magic, other version. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "../filters/sbf_checksum.h"
#include "../filters/sbf_format.h"
#include "../filters/sbf_index.h"

static void spit(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* A small two-target index (a few KiB), written to `name`. */
static sbf_index_t *small_index(const char *path)
{
    test_seed(31);
    sbf_opt_t o = test_opt(31, 21, 24, 2, 16);
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(&o, &b), SBF_OK);
    char *g[2] = {random_dna(1500), random_dna(700)};
    assert_int_equal(sbf_builder_add_target(b, "alpha"), 0);
    assert_int_equal(sbf_builder_add_target(b, "beta"), 1);
    assert_int_equal(sbf_builder_add_seq(b, 0, g[0], 1500), SBF_OK);
    assert_int_equal(sbf_builder_add_seq(b, 1, g[1], 700), SBF_OK);
    assert_int_equal(sbf_builder_finish(b, &idx), SBF_OK);
    assert_int_equal(sbf_index_save(idx, path), SBF_OK);
    free(g[0]);
    free(g[1]);
    return idx;
}

static void test_round_trip(void **state)
{
    (void)state;
    char *p1 = path_in_tmp("a.sbf"), *p2 = path_in_tmp("b.sbf");
    sbf_index_t *built = small_index(p1), *loaded;
    assert_int_equal(sbf_index_load(p1, 0, &loaded), SBF_OK);
    assert_int_equal(sbf_index_n_targets(loaded), 2);
    assert_memory_equal(&built->params, &loaded->params, sizeof built->params);
    for (int t = 0; t < 2; ++t) {
        sbf_target_info_t a, b;
        assert_int_equal(sbf_index_target(built, t, &a), SBF_OK);
        assert_int_equal(sbf_index_target(loaded, t, &b), SBF_OK);
        assert_string_equal(a.name, b.name);
        assert_true(a.bases == b.bases && a.kmers == b.kmers && a.bytes == b.bytes);
        assert_true(a.fill == b.fill && a.predicted_fpr == b.predicted_fpr);
        const sbf_target_t *x = &built->targets[t], *y = &loaded->targets[t];
        assert_true(x->panel == y->panel && x->col0 == y->col0 && x->cols == y->cols && x->clump == y->clump);
        assert_true(x->clump >= 0 && x->clump == sbf_target_clump(loaded, y));
    }
    /* two targets of about the same size: one wide panel (the rule of sbf_panel.c) */
    assert_int_equal(loaded->n_panels, 1);
    assert_int_equal(built->n_panels, 1);
    assert_true(loaded->panels[0].log2_width > 0);
    for (int q = 0; q < loaded->n_panels; ++q) {
        assert_memory_equal(built->panels[q].bits, loaded->panels[q].bits, sbf_panel_bytes(built, &built->panels[q]));
        assert_int_equal((uintptr_t)loaded->panels[q].bits % SBF_ALIGN, 0);   /* mmap + 64-byte offsets */
    }
    /* loaded then saved again: the same bytes */
    assert_int_equal(sbf_index_save(loaded, p2), SBF_OK);
    size_t l1, l2;
    uint8_t *f1 = slurp(p1, &l1), *f2 = slurp(p2, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(f1, f2, l1);
    assert_memory_equal(f1, SBF_MAGIC, 8);
    assert_int_equal(l1 % SBF_ALIGN, 0);
    /* the query answers are the same */
    const char *q = "ACGTTGCAACGTAGCTAGCTAGCATCGATCGATCGACTAGCTAGCATCGACTAG";
    size_t ql = strlen(q);
    uint32_t k1, k2, h1[2], h2[2];
    assert_int_equal(sbf_query(built, 1, &q, &ql, &k1, h1, 1), SBF_OK);
    assert_int_equal(sbf_query(loaded, 1, &q, &ql, &k2, h2, 1), SBF_OK);
    assert_int_equal(k1, k2);
    assert_memory_equal(h1, h2, sizeof h1);
    free(f1);
    free(f2);
    sbf_index_destroy(built);
    sbf_index_destroy(loaded);
    free(p1);
    free(p2);
}

/* The write() path (a file system without posix_fallocate or shared mappings, forced here)
 * writes the bytes of the mapped path, long-read layer included, and the file loads with every
 * checksum verified. */
static void test_write_path_same_bytes(void **state)
{
    (void)state;
    char *p1 = path_in_tmp("mapped.sbf"), *p2 = path_in_tmp("written.sbf");
    sbf_index_t *built = small_index(p1), *loaded;
    assert_non_null(built->layer);
    const unsigned before = sbf_format_unmapped_writes;
    sbf_format_write_unmapped = 1;
    const int rc = sbf_index_save(built, p2);
    sbf_format_write_unmapped = 0;
    assert_int_equal(rc, SBF_OK);
    assert_int_equal(sbf_format_unmapped_writes, before + 1);   /* the write() path wrote it */
    size_t l1, l2;
    uint8_t *f1 = slurp(p1, &l1), *f2 = slurp(p2, &l2);
    assert_true(l1 > 0 && l1 == l2);
    assert_memory_equal(f1, f2, l1);
    assert_int_equal(sbf_index_load(p2, 0, &loaded), SBF_OK);   /* 0: every checksum verified */
    assert_non_null(loaded->layer);
    sbf_index_destroy(loaded);
    /* and the mapped path did not take it */
    assert_int_equal(sbf_index_save(built, p1), SBF_OK);
    assert_int_equal(sbf_format_unmapped_writes, before + 1);
    free(f1);
    free(f2);
    sbf_index_destroy(built);
    free(p1);
    free(p2);
}

static void expect_load_error(const char *path, int code, const char *fragment)
{
    sbf_index_t *idx = (sbf_index_t *)0x1;
    int rc = sbf_index_load(path, 0, &idx);
    if (rc != code)
        fail_msg("load returned %d, expected %d (%s)", rc, code, sbf_last_error());
    assert_null(idx);
    const char *msg = sbf_last_error();
    assert_non_null(strstr(msg, path));   /* the message names the file */
    if (fragment && !strstr(msg, fragment))
        fail_msg("message '%s' lacks '%s'", msg, fragment);
}

static void test_every_truncation_rejected(void **state)
{
    (void)state;
    char *p = path_in_tmp("t.sbf"), *q = path_in_tmp("cut.sbf");
    sbf_index_destroy(small_index(p));
    size_t len;
    uint8_t *buf = slurp(p, &len);
    for (size_t cut = 0; cut < len; ++cut) {
        spit(q, buf, cut);
        expect_load_error(q, SBF_E_FORMAT, cut < 8 ? "not an sbf index" : "truncated");
    }
    /* and a byte too many */
    uint8_t *longer = calloc(1, len + 1);
    memcpy(longer, buf, len);
    spit(q, longer, len + 1);
    expect_load_error(q, SBF_E_FORMAT, "unexpected bytes");
    free(longer);
    free(buf);
    free(p);
    free(q);
}

static void test_every_flipped_byte_rejected(void **state)
{
    (void)state;
    char *p = path_in_tmp("f.sbf"), *q = path_in_tmp("flip.sbf");
    sbf_index_destroy(small_index(p));
    size_t len;
    uint8_t *buf = slurp(p, &len);
    for (size_t i = 0; i < len; ++i) {
        for (int bit = 0; bit < 8; bit += 7) {   /* lowest and highest bit of every byte */
            buf[i] ^= (uint8_t)(1u << bit);
            spit(q, buf, len);
            sbf_index_t *idx = NULL;
            int rc = sbf_index_load(q, 0, &idx);
            if (rc == SBF_OK)
                fail_msg("flipping bit %d of byte %zu of %zu went unnoticed", bit, i, len);
            assert_true(rc == SBF_E_FORMAT || rc == SBF_E_VERSION);
            assert_non_null(strstr(sbf_last_error(), q));
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
    free(buf);
    free(p);
    free(q);
}

/* Format 5: a filter array's checksum is the XXH64 of its 64 MiB pieces' XXH64s (doc/format.md),
 * so the pieces are hashed on every thread. A 130 MiB filter (three pieces, the last short): the
 * checksum in the file is that rule's, not one XXH64 of the whole, and a byte flipped in the
 * first or the last piece fails the load. */
static void test_filter_checksum_in_pieces(void **state)
{
    (void)state;
    char *p = path_in_tmp("pieces.sbf");
    sbf_params_t prm;
    sbf_params_default(&prm);
    sbf_index_t *idx = sbf_idx_new(&prm);
    assert_non_null(idx);
    const uint64_t bytes = (uint64_t)130 << 20, shards = bytes / (prm.shard_bits / 8);
    assert_int_equal(sbf_idx_add_target(idx, "big", shards), 0);
    assert_int_equal(sbf_target_bytes(idx, &idx->targets[0]), bytes);
    test_seed(5);
    for (uint64_t i = 0; i < bytes / 8; i += 97)   /* bits all over the pieces */
        idx->targets[0].bits[i] = test_rand();
    sbf_target_stats(idx, &idx->targets[0], 2);   /* fill, FPR and clump chance, as a build leaves them */
    assert_int_equal(sbf_index_save(idx, p), SBF_OK);
    sbf_index_destroy(idx);

    sbf_index_t *loaded;
    if (sbf_index_load(p, 0, &loaded) != SBF_OK)   /* verifies every checksum */
        fail_msg("%s", sbf_last_error());
    const sbf_panel_t *pn = &loaded->panels[0];
    assert_int_equal(sbf_panel_bytes(loaded, pn), bytes);
    uint64_t sums[3];
    for (int i = 0; i < 3; ++i) {
        const uint64_t at = (uint64_t)i << 26;
        sums[i] = sbf_xxh64((const uint8_t *)pn->bits + at, (size_t)(bytes - at < ((uint64_t)1 << 26) ? bytes - at : (uint64_t)1 << 26), 0);
    }
    assert_true(pn->checksum == sbf_xxh64(sums, sizeof sums, 0));
    assert_true(pn->checksum != sbf_xxh64(pn->bits, (size_t)bytes, 0));
    const uint64_t offset = (uint64_t)((const uint8_t *)pn->bits - (const uint8_t *)loaded->map);
    sbf_index_destroy(loaded);

    const uint64_t where[2] = {offset + 12345, offset + bytes - 1};   /* the first piece, the last */
    for (int i = 0; i < 2; ++i) {
        int fd = open(p, O_RDWR);
        assert_true(fd >= 0);
        uint8_t byte;
        assert_int_equal(pread(fd, &byte, 1, (off_t)where[i]), 1);
        byte ^= 0x10;
        assert_int_equal(pwrite(fd, &byte, 1, (off_t)where[i]), 1);
        expect_load_error(p, SBF_E_FORMAT, "corrupt filter of target 'big' (checksum mismatch)");
        byte ^= 0x10;   /* mended: it loads again */
        assert_int_equal(pwrite(fd, &byte, 1, (off_t)where[i]), 1);
        assert_int_equal(close(fd), 0);
        assert_int_equal(sbf_index_load(p, 0, &loaded), SBF_OK);
        sbf_index_destroy(loaded);
    }
    unlink(p);
    free(p);
}

static void test_magic_and_version(void **state)
{
    (void)state;
    char *p = path_in_tmp("v.sbf"), *q = path_in_tmp("v2.sbf");
    sbf_index_destroy(small_index(p));
    size_t len;
    uint8_t *buf = slurp(p, &len);

    /* another format version, with a header checksum that is right for it: a newer one, and
     * version 1 (64-bit hashes), whose bits this sbf does not compute */
    uint8_t *v = malloc(len);
    const uint32_t versions[2] = {SBF_FORMAT_VERSION + 1, 1};
    char newer[64];
    snprintf(newer, sizeof newer, "format version %u, written by a newer sbf", SBF_FORMAT_VERSION + 1);
    const char *const says[2] = {newer, "format version 1, written by an older sbf"};
    for (int i = 0; i < 2; ++i) {
        memcpy(v, buf, len);
        memcpy(v + 8, &versions[i], 4);
        uint64_t sum = sbf_xxh64(v, 120, 0);
        memcpy(v + 120, &sum, 8);
        spit(q, v, len);
        expect_load_error(q, SBF_E_VERSION, says[i]);
    }

    /* a FASTA file is not an index */
    const char *fasta = ">chr1\nACGTACGTACGTACGT\n";
    spit(q, (const uint8_t *)fasta, strlen(fasta));
    expect_load_error(q, SBF_E_FORMAT, "not an sbf index");

    /* empty file, missing file, a folder */
    spit(q, buf, 0);
    expect_load_error(q, SBF_E_FORMAT, "not an sbf index");
    char *missing = path_in_tmp("missing.sbf");
    expect_load_error(missing, SBF_E_IO, "No such file");
    expect_load_error(tmpdir, SBF_E_FORMAT, "not a regular file");
    free(missing);
    free(v);
    free(buf);
    free(p);
    free(q);
}

static void test_save_failures_leave_nothing(void **state)
{
    (void)state;
    char *dir = path_in_tmp("save"), *p = path_in_tmp("save/s.sbf");
    assert_int_equal(mkdir(dir, 0755), 0);
    sbf_index_t *idx = small_index(p);
    /* into a folder that does not exist */
    char *bad = path_in_tmp("no/such/folder/x.sbf");
    assert_int_equal(sbf_index_save(idx, bad), SBF_E_IO);
    assert_non_null(strstr(sbf_last_error(), bad));
    /* over a device: refused before anything is written */
    assert_int_equal(sbf_index_save(idx, "/dev/null"), SBF_E_IO);
    assert_non_null(strstr(sbf_last_error(), "not a regular file"));
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* the folder holds only the one good index: no temporary file left behind */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    /* the saved file has the mode a created file would have (not mkstemp's 0600) */
    assert_int_equal(stat(p, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    sbf_index_destroy(idx);
    free(bad);
    free(p);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_write_path_same_bytes),
        cmocka_unit_test(test_every_truncation_rejected),
        cmocka_unit_test(test_every_flipped_byte_rejected),
        cmocka_unit_test(test_filter_checksum_in_pieces),
        cmocka_unit_test(test_magic_and_version),
        cmocka_unit_test(test_save_failures_leave_nothing),
    };
    return cmocka_run_group_tests_name("format", tests, tmpdir_setup, tmpdir_teardown);
}
