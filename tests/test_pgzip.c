/* test_pgzip.c -- plain gzip inflated on several threads (bam/sbf_pgzip.c, bam/sbf_inflate.c)
 * against the bytes zlib compressed: every compression level and strategy zlib has, flushes
 * (empty stored blocks, byte alignment), stored blocks and binary data (which the search for a
 * block start does not find: those pieces are decoded again in order), several members with
 * every header field, and an empty one; small pieces so that a file of a few hundred kB is cut
 * into dozens. Damaged files: a flipped byte, a wrong CRC-32 or length, truncation anywhere,
 * trailing garbage: each an error naming the file; files with flipped bits fail exactly where
 * zlib fails and read as zlib reads them elsewhere. And through the reader: a large FASTQ.gz
 * read with `parallel_gzip` gives the records htslib's reading gives. */
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

#include <htslib/hts.h>
#include <htslib/thread_pool.h>

#include "../bam/sbf_pgzip.h"
#include "../bam/sbf_reads.h"
#include "../filters/sbf_error.h"

/* FASTQ-like text: records with names, bases and qualities, some repeats */
static unsigned char *make_text(size_t len)
{
    unsigned char *t = malloc(len);
    assert_non_null(t);
    size_t i = 0;
    for (unsigned rec = 0; i < len; ++rec) {
        char head[64];
        int n = snprintf(head, sizeof head, "@read%u/1 x\n", rec);
        for (int j = 0; j < n && i < len; ++j)
            t[i++] = (unsigned char)head[j];
        for (int j = 0; j < 150 && i < len; ++j)
            t[i++] = (unsigned char)"ACGT"[test_rand() >> 62];
        for (const char *p = "\n+\n"; *p && i < len; ++p)
            t[i++] = (unsigned char)*p;
        for (int j = 0; j < 150 && i < len; ++j)
            t[i++] = (unsigned char)(j % 40 < 30 ? 'F' : '!' + (test_rand() >> 59));
        if (i < len)
            t[i++] = '\n';
    }
    return t;
}

typedef struct {
    unsigned char *b;
    size_t n, cap;
} buf_t;

static void put(buf_t *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->b = realloc(o->b, o->cap);
        assert_non_null(o->b);
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_le32(buf_t *o, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    put(o, b, 4);
}

/* One gzip member of data: zlib's raw deflate at `level` with `strategy`, a flush of kind
 * `flush` every `every` bytes (0: none); header flags `flags` (FEXTRA 4, FNAME 8, FCOMMENT 16,
 * FHCRC 2) with made-up fields. */
static void member(buf_t *o, const unsigned char *data, size_t n, int level, int strategy, int flush, size_t every,
                   unsigned flags)
{
    unsigned char head[10] = {0x1f, 0x8b, 8, (unsigned char)flags, 0, 0, 0, 0, 0, 3};
    put(o, head, 10);
    if (flags & 4) {
        unsigned char x[] = {6, 0, 'S', 'B', 2, 0, 1, 2};
        put(o, x, sizeof x);
    }
    if (flags & 8)
        put(o, "name.fq", 8);
    if (flags & 16)
        put(o, "a comment", 10);
    if (flags & 2)
        put(o, "\0\0", 2);
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy), Z_OK);
    unsigned char out[1 << 16];
    size_t at = 0;
    for (;;) {
        size_t step = every ? every : n;
        if (step > n - at)
            step = n - at;
        z.next_in = (unsigned char *)data + at;
        z.avail_in = (uInt)step;
        at += step;
        const int mode = at == n ? Z_FINISH : every ? flush : Z_NO_FLUSH;
        int rc;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            rc = deflate(&z, mode);
            assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
            put(o, out, sizeof out - z.avail_out);
        } while (z.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
        if (mode == Z_FINISH)
            break;
    }
    deflateEnd(&z);
    put_le32(o, (uint32_t)crc32(0, data, (uInt)n));
    put_le32(o, (uint32_t)n);
}

static char *write_tmp(const buf_t *o)
{
    char *path = strdup("/tmp/sbf_test_pgzip_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, o->b, o->n), (ssize_t)o->n);
    assert_int_equal(close(fd), 0);
    return path;
}

/* path inflated on `threads` threads in pieces of piece bytes: its bytes into *got (malloc'd;
 * NULL when reading failed, the message then in `why`), the pieces decoded again into *redone. */
static size_t inflate_file(const char *path, int threads, size_t piece, unsigned char **got, size_t *redone,
                           char *why, size_t why_len)
{
    htsThreadPool pool = {hts_tpool_init(threads), 0};
    assert_non_null(pool.pool);
    sbf_pgzip_t *z;
    *got = NULL;
    if (sbf_pgzip_open_pieces(path, &pool, piece, &z) != SBF_OK) {
        snprintf(why, why_len, "%s", sbf_error_message());
        hts_tpool_destroy(pool.pool);
        return 0;
    }
    size_t n = 0, cap = 1 << 16;
    unsigned char *b = malloc(cap);
    assert_non_null(b);
    ssize_t k;
    /* reads of odd sizes, so pieces end inside them */
    while ((k = sbf_pgzip_read(z, b + n, cap - n < 7919 ? cap - n : 7919)) > 0) {
        n += (size_t)k;
        if (cap - n < 7919) {
            cap *= 2;
            b = realloc(b, cap);
            assert_non_null(b);
        }
    }
    *redone = sbf_pgzip_redone(z);
    if (k < 0) {
        snprintf(why, why_len, "%s", sbf_error_message());
        free(b);
        b = NULL;
    }
    sbf_pgzip_close(z);
    hts_tpool_destroy(pool.pool);
    *got = b;
    return n;
}

/* o's file read back equals want[0..n); returns the pieces decoded again */
static size_t check_equal(const buf_t *o, const unsigned char *want, size_t n, size_t piece)
{
    char *path = write_tmp(o);
    unsigned char *got;
    size_t redone;
    char why[512] = "";
    size_t m = inflate_file(path, 4, piece, &got, &redone, why, sizeof why);
    unlink(path);
    free(path);
    if (!got)
        fail_msg("inflating failed: %s", why);
    assert_int_equal(m, n);
    assert_memory_equal(got, want, n);
    free(got);
    return redone;
}

static void test_levels_and_strategies(void **state)
{
    (void)state;
    test_seed(11);
    const size_t n = 1500000;
    unsigned char *t = make_text(n);
    const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
    for (int level = 1; level <= 9; level += 4)
        for (size_t s = 0; s < sizeof strategies / sizeof *strategies; ++s) {
            buf_t o = {0};
            member(&o, t, n, level, strategies[s], Z_NO_FLUSH, 0, 0);
            const size_t redone = check_equal(&o, t, n, 32768);
            /* dynamic blocks are found where they start: few pieces decoded again (fixed-code
             * blocks are not searched for: Z_FIXED's pieces all are) */
            print_message("level %d strategy %d: %zu pieces, %zu decoded again\n", level, strategies[s], o.n / 32768 + 1, redone);
            if (strategies[s] != Z_FIXED && o.n / 32768 > 4)
                assert_true(redone * 4 < o.n / 32768);
            free(o.b);
        }
    free(t);
}

static void test_flushes_and_stored(void **state)
{
    (void)state;
    test_seed(12);
    const size_t n = 300000;
    unsigned char *t = make_text(n);
    const int flushes[] = {Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_BLOCK, Z_PARTIAL_FLUSH};
    for (size_t f = 0; f < sizeof flushes / sizeof *flushes; ++f) {
        buf_t o = {0};
        member(&o, t, n, 6, Z_DEFAULT_STRATEGY, flushes[f], 1000 + 37 * f, 0);
        check_equal(&o, t, n, 4096);
        free(o.b);
    }
    buf_t o = {0};   /* level 0: stored blocks only; no piece finds a start, each is decoded in order */
    member(&o, t, n, 0, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 0);
    assert_true(check_equal(&o, t, n, 4096) > 0);
    free(o.b);
    free(t);
}

static void test_binary(void **state)
{
    (void)state;
    test_seed(13);
    const size_t n = 400000;
    unsigned char *t = make_text(n);
    for (size_t i = 0; i < n; i += 1 + (test_rand() >> 52))   /* bytes that are not text */
        t[i] = (unsigned char)(test_rand() >> 56);
    buf_t o = {0};
    member(&o, t, n, 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 0);
    check_equal(&o, t, n, 8192);
    free(o.b);
    free(t);
}

static void test_members(void **state)
{
    (void)state;
    test_seed(14);
    const size_t n = 500000;
    unsigned char *t = make_text(n);
    /* members of many sizes (one empty, some inside a piece, some across many), every header field */
    const size_t cuts[] = {0, 1000, 1000, 1100, 90000, 91000, 300000, 300007, n};
    buf_t o = {0};
    for (size_t i = 0; i + 1 < sizeof cuts / sizeof *cuts; ++i)
        member(&o, t + cuts[i], cuts[i + 1] - cuts[i], 1 + (int)i % 9, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0,
               (unsigned)(i * 6) & 30);
    check_equal(&o, t, n, 4096);
    check_equal(&o, t, n, 1 << 20);   /* one piece */
    free(o.b);
    free(t);
}

/* A damaged copy of a good file fails with a message naming it. */
static void expect_failure(const buf_t *o, const char *what)
{
    char *path = write_tmp(o);
    unsigned char *got;
    size_t redone;
    char why[512] = "";
    (void)inflate_file(path, 3, 4096, &got, &redone, why, sizeof why);
    if (got)
        fail_msg("%s: read without an error", what);
    if (!strstr(why, path))
        fail_msg("%s: the message does not name the file: %s", what, why);
    unlink(path);
    free(path);
}

static void test_damaged(void **state)
{
    (void)state;
    test_seed(15);
    const size_t n = 200000;
    unsigned char *t = make_text(n);
    buf_t good = {0};
    member(&good, t, n, 6, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 8);
    buf_t o = {0};
    put(&o, good.b, good.n);
    o.b[o.n - 8] ^= 1;   /* CRC-32 */
    expect_failure(&o, "a wrong CRC-32");
    o.b[o.n - 8] ^= 1;
    o.b[o.n - 3] ^= 1;   /* length */
    expect_failure(&o, "a wrong length");
    o.b[o.n - 3] ^= 1;
    for (int i = 0; i < 20; ++i) {   /* a flipped byte anywhere in the deflate data */
        const size_t at = 20 + (size_t)(test_rand() % (o.n - 28));
        const unsigned char bit = (unsigned char)(1u << (test_rand() >> 61));
        o.b[at] ^= bit;
        expect_failure(&o, "a flipped byte");
        o.b[at] ^= bit;
    }
    const size_t lens[] = {5, 12, 40, o.n / 3, o.n / 2, o.n - 9, o.n - 4, o.n - 1};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {   /* truncated */
        buf_t cut = {o.b, lens[i], lens[i]};
        expect_failure(&cut, "a truncated file");
    }
    put(&o, "garbage!", 8);   /* after the member */
    expect_failure(&o, "trailing garbage");
    free(o.b);
    free(good.b);
    free(t);
}

/* Files with a few flipped bits (or cut short): the parallel decoder fails exactly when zlib
 * does, and where zlib reads them through, gives zlib's bytes. */
static void test_mutations_against_zlib(void **state)
{
    (void)state;
    test_seed(17);
    const size_t n = 120000;
    unsigned char *t = make_text(n), *ref = malloc(2 * n);
    assert_non_null(ref);
    int agreed_failures = 0, agreed_reads = 0;
    for (int it = 0; it < 120; ++it) {
        buf_t o = {0};
        member(&o, t, n, (int)(test_rand() % 10), (int)(test_rand() % 5), Z_NO_FLUSH, 0, 0);
        if (it % 10 != 0)   /* every tenth unchanged: both read it */
            for (int k = 1 + (int)(test_rand() % 3); k > 0; --k)
                o.b[test_rand() % o.n] ^= (unsigned char)(1u << (test_rand() >> 61));
        if (it % 7 == 3)
            o.n = (size_t)(test_rand() % o.n);
        z_stream z = {0};
        assert_int_equal(inflateInit2(&z, 31), Z_OK);
        z.next_in = o.b;
        z.avail_in = (uInt)o.n;
        z.next_out = ref;
        z.avail_out = (uInt)(2 * n);
        const int zrc = inflate(&z, Z_FINISH);
        const int zlib_ok = zrc == Z_STREAM_END && z.avail_in == 0;
        const size_t ref_n = z.total_out;
        inflateEnd(&z);
        char *path = write_tmp(&o);
        unsigned char *got;
        size_t redone;
        char why[512] = "";
        const size_t m = inflate_file(path, 3, 2048 + (size_t)(test_rand() % 4096), &got, &redone, why, sizeof why);
        unlink(path);
        free(path);
        if (zlib_ok != (got != NULL))
            fail_msg("file %d: zlib %s, the parallel decoder %s (%s)", it, zlib_ok ? "reads it" : "fails", got ? "reads it" : "fails", why);
        if (got) {
            assert_int_equal(m, ref_n);
            assert_memory_equal(got, ref, m);
            agreed_reads++;
        } else {
            agreed_failures++;
        }
        free(got);
        free(o.b);
    }
    assert_true(agreed_reads >= 8 && agreed_failures >= 50);   /* both outcomes seen */
    free(ref);
    free(t);
}

/* Through the reader: a FASTQ.gz larger than SBF_PGZIP_MIN_BYTES read with parallel_gzip on a
 * pool, record for record the same as without. */
static void test_reader(void **state)
{
    (void)state;
    test_seed(16);
    const size_t n = 6 * (size_t)SBF_PGZIP_MIN_BYTES;
    unsigned char *t = make_text(n);
    size_t end = n;
    while (end > 0 && t[end - 1] != '\n')
        --end;
    while (end > 0 && !(t[end] == '@' && t[end - 1] == '\n'))   /* whole records */
        --end;
    buf_t o = {0};
    member(&o, t, end, 1, Z_DEFAULT_STRATEGY, Z_NO_FLUSH, 0, 0);
    assert_true(o.n >= SBF_PGZIP_MIN_BYTES);
    char *path = write_tmp(&o);
    htsThreadPool pool = {hts_tpool_init(4), 16};
    sbf_reader_opt_t par = {.pool = &pool, .parallel_gzip = 1}, one = {.pool = NULL};
    sbf_reader_t *a, *b;
    assert_int_equal(sbf_reader_open(path, &par, &a), SBF_OK);
    assert_int_equal(sbf_reader_open(path, &one, &b), SBF_OK);
    assert_string_equal(sbf_reader_decoder(a), "gzip (parallel)");
    assert_string_not_equal(sbf_reader_decoder(b), "gzip (parallel)");
    sbf_read_t ra = {0}, rb = {0};
    size_t records = 0;
    for (;;) {
        const int ka = sbf_reader_read(a, &ra), kb = sbf_reader_read(b, &rb);
        assert_int_equal(ka, kb);
        if (ka <= 0)
            break;
        assert_string_equal(ra.name.s, rb.name.s);
        assert_string_equal(ra.seq.s, rb.seq.s);
        assert_string_equal(ra.qual.s, rb.qual.s);
        ++records;
    }
    assert_true(records > 50000);
    sbf_read_free(&ra);
    sbf_read_free(&rb);
    sbf_reader_close(a);
    sbf_reader_close(b);
    hts_tpool_destroy(pool.pool);
    unlink(path);
    free(path);
    free(o.b);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_and_strategies),
        cmocka_unit_test(test_flushes_and_stored),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_mutations_against_zlib),
        cmocka_unit_test(test_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
