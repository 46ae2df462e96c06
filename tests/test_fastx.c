/* test_fastx.c -- sbf's FASTA/FASTQ parser (bam/sbf_fastx.c), and its in-place path for plain
 * FASTQ (sbf_fastq_span, then the parser primed with the rest), against htslib's kseq, which it
 * replaces for speed: on hand-made edge cases, on random mutations of them, and on every input
 * of the read-input fuzzer's corpus (tests/fuzz/corpus/fuzz_reads, named by FUZZ_CORPUS, which
 * `make check` sets; without it that case is skipped), both must return the same codes and the
 * same name, comment, sequence and quality strings, record for record, whatever buffer
 * boundaries the data falls on. And the tags' numbers (sbf_numfmt.c) against printf. */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>

#include "testutil.h"

#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/sam.h>

#include "fuzz/fastx_diff.h"
#include "../bam/sbf_reads.h"
#include "../bam/sbf_numfmt.h"
#include "../filters/sbf_error.h"
#include "../plugin/sbf_build_read.h"

/* Both parsers over data; fails the test at the first difference. Returns the records read. */
static int compare(const char *data, size_t len, unsigned piece)
{
    char why[256];
    int records = fastx_diff(data, len, piece, 1 << 30, why, sizeof why);
    if (records < 0)
        fail_msg("%s", why);
    /* the in-place path too, handing over with a few bytes primed or all of them */
    int in_place = fastx_diff_span(data, len, piece % 2 ? piece : len, piece, 1 << 30, why, sizeof why);
    if (in_place < 0)
        fail_msg("in place: %s", why);
    assert_int_equal(in_place, records);
    return records;
}

static const char *cases[] = {
    "@r1 comment here\nACGT\n+\nIIII\n@r2\nAC\n+r2\nII\n",
    ">a desc\nACGT\nAC\n\n>b\n>c x\nGG\n",
    "junk before\n@r1\nACGT\n+\nIIII\n",
    "@r1\r\nACGT\r\n+\r\nIIII\r\n@r2\tc\r\nA\r\n+\r\nI\r\n",
    "@r1\nACGT\n+\nIII\n",             /* quality shorter */
    "@r1\nACGT\n+\nIIIIII\n",          /* quality longer */
    "@r1\nACGT\n+\n",                  /* no quality */
    "@r1\nACGT\n+",                    /* no quality line at all */
    "@r1\nACGT",                       /* truncated after the sequence */
    "@r1",                             /* a header only */
    "@",                               /* an empty name */
    "@r1\nAC\nGT\n+\nII\nII\n@r2\nA\n+\n@\n",   /* multi-line, and a quality of '@' */
    ">x\n+\n",                         /* FASTA turned FASTQ */
    "@r1 \n\nACGT\n+\nIIII\n",
    "",
    "\n\n\n",
    "@r1\nNNNN\n+\n!!!!\n>r2\nAC\n",
};

static void test_edge_cases(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (unsigned piece = 1; piece <= 9; ++piece)
            compare(cases[c], strlen(cases[c]), piece);
    compare(cases[0], strlen(cases[0]), 1u << 20);
}

/* Random mutations of the cases: bytes replaced by structure characters, cut, duplicated. */
static void test_mutations(void **state)
{
    (void)state;
    test_seed(11);
    const char alphabet[] = "@>+\n\r\t ACGTNI!";
    char buf[512];
    for (int round = 0; round < 20000; ++round) {
        const char *src = cases[test_rand() % (sizeof cases / sizeof cases[0])];
        size_t len = strlen(src);
        if (len == 0)
            continue;
        memcpy(buf, src, len);
        for (int k = (int)(test_rand() % 4); k >= 0; --k)
            buf[test_rand() % len] = alphabet[test_rand() % (sizeof alphabet - 1)];
        if (test_rand() % 3 == 0 && 2 * len < sizeof buf) {   /* twice, cut somewhere */
            memcpy(buf + len, buf, len);
            len = len + test_rand() % len;
        }
        compare(buf, len, 1 + (unsigned)(test_rand() % 17));
    }
}

/* A large FASTQ: many refills of sbf_fastx's 256 KiB buffer. */
static void test_large_input(void **state)
{
    (void)state;
    test_seed(12);
    size_t cap = 4u << 20, len = 0;
    char *data = malloc(cap);
    int n = 0;
    while (len + 1000 < cap) {
        size_t l = 50 + test_rand() % 250;
        len += (size_t)snprintf(data + len, cap - len, "@read%d/%d extra\n", n, n % 2 + 1);
        char *seq = random_dna(l);
        len += (size_t)snprintf(data + len, cap - len, "%s\n+\n", seq);
        memset(seq, 'F', l);
        len += (size_t)snprintf(data + len, cap - len, "%s\n", seq);
        free(seq);
        ++n;
    }
    assert_int_equal(compare(data, len, 1u << 30), n);
    assert_int_equal(compare(data, len, 65536 + 7), n);
    free(data);
}

/* Every input of the fuzzer's corpus, whatever its format (non-FASTA/FASTQ ones too). */
static void test_fuzz_corpus(void **state)
{
    (void)state;
    /* `make check` sets FUZZ_CORPUS (AM_TESTS_ENVIRONMENT in Makefile.am). Run by hand without
     * it, the case is reported skipped (cmocka's [  SKIPPED ]), not passed: it checked nothing. */
    const char *dir = getenv("FUZZ_CORPUS");
    if (!dir || !*dir) {
        print_message("FUZZ_CORPUS not set (make check sets it to tests/fuzz/corpus/fuzz_reads): "
                      "corpus comparison skipped\n");
        skip();
    }
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        char *data = malloc((size_t)st.st_size + 1);
        size_t got = fread(data, 1, (size_t)st.st_size, f);
        fclose(f);
        compare(data, got, 4096);
        compare(data, got, 3);
        free(data);
        ++files;
    }
    closedir(d);
    print_message("%d corpus inputs parsed identically\n", files);
    assert_true(files > 100);
}

/* Random FASTQ of the plain form: short and long reads (some longer than the smallest blocks),
 * every header form; with `tail_form` 1, a record on several lines at a random place, so the
 * hand-over to kseq happens there. */
static char *random_fastq(size_t *len, int tail_form)
{
    size_t cap = 1u << 20, n = 0;
    char *d = malloc(cap);
    int records = 200 + (int)(test_rand() % 300), odd = tail_form ? (int)(test_rand() % (unsigned)records) : -1;
    for (int r = 0; r < records; ++r) {
        size_t l = test_rand() % 7 == 0 ? 5000 + test_rand() % 20000 : 1 + test_rand() % 300;
        while (n + 2 * l + 200 > cap)
            d = realloc(d, cap *= 2);
        static const char *const forms[] = {"", " 1:N:0:ACGT", "\tBC:Z:x", " ", " a b"};
        /* names short and long (the parser scans 16 bytes at a time: a name of 17 or more
         * takes that path, Illumina's do) */
        n += (size_t)sprintf(d + n, "@%sr%d%s\n", r % 2 ? "A00123:8:H5KY3DSXX:1:1101:" : "", r, forms[test_rand() % 5]);
        char *seq = random_dna(l);
        if (r == odd) {   /* bases and qualities on two lines each */
            size_t h = l / 2;
            n += (size_t)sprintf(d + n, "%.*s\n%s\n+\n", (int)h, seq, seq + h);
            memset(seq, 'F', l);
            n += (size_t)sprintf(d + n, "%.*s\n%s\n", (int)h, seq, seq + h);
        } else {
            n += (size_t)sprintf(d + n, "%s\n+%s\n", seq, r % 3 ? "" : "same");
            for (size_t i = 0; i < l; ++i)
                seq[i] = (char)('!' + test_rand() % 40);
            n += (size_t)sprintf(d + n, "%s\n", seq);
        }
        free(seq);
    }
    *len = n;
    return d;
}

static long long ahead_total;   /* records the read-ahead threads parsed, over read_all() calls */

/* Every record of path through the reader: in place with blocks of `block` bytes, or not. */
static int read_all(const char *path, int in_place, size_t block, kstring_t *out)
{
    sbf_reader_opt_t opt = {.in_place = in_place, .block_size = block};
    sbf_reader_t *rd;
    assert_int_equal(sbf_reader_open(path, &opt, &rd), SBF_OK);
    sbf_read_t r;
    memset(&r, 0, sizeof r);
    int rc, n = 0;
    sbf_pins_t pins = {0};
    while ((rc = sbf_reader_read(rd, &r)) > 0) {
        ksprintf(out, "%.*s|%.*s|%.*s|%.*s\n", (int)r.name.l, r.name.s, (int)r.comment.l, r.comment.s, (int)r.seq.l,
                 r.seq.s, (int)r.qual.l, r.qual.s);
        ++n;
        if (n % 7 == 0) {   /* as a batcher does: pin, then let go, so blocks are reused */
            assert_int_equal(sbf_reader_pin(rd, &pins), SBF_OK);
            sbf_pins_release(&pins);
        }
    }
    assert_int_equal(rc, 0);
    long long parsed_in_place = sbf_reader_in_place(rd);
    if (in_place && block < 100000)   /* a mapped plain file of many windows: most records parsed ahead */
        ahead_total += sbf_reader_parsed_ahead(rd);
    sbf_read_free(&r);
    sbf_pins_free(&pins);
    assert_int_equal(sbf_reader_close(rd), SBF_OK);
    return in_place ? (int)parsed_in_place : n;
}

/* The reader parses records in place across block boundaries (the record a block ends inside
 * moved into the next one's headroom, records longer than a block in blocks of their own),
 * from a mapped plain file and from BGZF read into blocks, and hands over to kseq where the
 * form changes: every record as the general parser gives it, for blocks of 4 KiB to 1 MiB. */
static void test_reader_blocks(void **state)
{
    (void)state;
    test_seed(14);
    for (int round = 0; round < 12; ++round) {
        size_t len;
        char *data = random_fastq(&len, round % 3 == 2);
        char plain[] = "/tmp/sbf-test-fastx-XXXXXX";
        int fd = mkstemp(plain);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
        char gz[64];
        snprintf(gz, sizeof gz, "%s.gz", plain);
        BGZF *w = bgzf_open(gz, "w");
        assert_non_null(w);
        assert_int_equal(bgzf_write(w, data, len), (ssize_t)len);
        assert_int_equal(bgzf_close(w), 0);
        kstring_t want = {0, 0, NULL};
        const int records = read_all(plain, 0, 0, &want);
        const size_t blocks[] = {4096, 8192, 65536, 1u << 20};
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; ++b)
            for (int f = 0; f < 2; ++f) {
                kstring_t got = {0, 0, NULL};
                int in_place = read_all(f ? gz : plain, 1, blocks[b], &got);
                if (got.l != want.l || memcmp(got.s, want.s, want.l))
                    fail_msg("round %d, %s, blocks of %zu: the records differ from the general parser's", round,
                             f ? "BGZF" : "plain", blocks[b]);
                /* the records before the one of another form were parsed in place */
                assert_true(in_place > 0 && in_place <= records);
                if (round % 3 != 2)
                    assert_int_equal(in_place, records);
                free(got.s);
            }
        free(want.s);
        free(data);
        unlink(plain);
        unlink(gz);
    }
    /* the ahead's records were taken (not only parsed again by the reader) */
    print_message("%lld records taken as parsed ahead\n", ahead_total);
    assert_true(ahead_total > 1000);
}

/* A record's content in one canonical string (name, core, CIGAR, bases, qualities, tags), the
 * same for a record htslib read (its name padded for the CIGAR) and one read in place. */
static void bam_canon(const bam1_t *b, kstring_t *out)
{
    const bam1_core_t *c = &b->core;
    out->l = 0;
    ksprintf(out, "%s|%d|%lld|%d|%u|%u|%d|%lld|%lld|", bam_get_qname(b), c->tid, (long long)c->pos, c->qual, c->flag,
             c->bin, c->mtid, (long long)c->mpos, (long long)c->isize);
    const uint8_t *cig = (const uint8_t *)bam_get_cigar(b);
    for (uint32_t i = 0; i < c->n_cigar; ++i) {
        uint32_t op;
        memcpy(&op, cig + 4 * i, 4);
        ksprintf(out, "%u,", op);
    }
    const uint8_t *seq = bam_get_seq(b), *qual = bam_get_qual(b), *aux = bam_get_aux(b);
    kputc('|', out);
    for (int i = 0; i < c->l_qseq; ++i)
        kputc(seq_nt16_str[bam_seqi(seq, i)], out);
    kputc('|', out);
    for (int i = 0; i < c->l_qseq; ++i)
        kputc(qual[i] + 33, out);
    kputc('|', out);
    for (const uint8_t *a = aux; a < b->data + b->l_data; ++a)
        ksprintf(out, "%02x", *a);
}

/* BAM records taken where they lie in the decompressed stream (sbf_reads.c, "BAM in place"):
 * with blocks of 4 KiB to 1 MiB, every record equals htslib's reading of it, records with a
 * CIGAR among them are htslib's own, and records kept beyond their batch (sbf_read_own: a
 * batch's last record waiting for the next) stay right while their blocks are reused (under
 * AddressSanitizer an idle block is poisoned, so a record kept without its copy is caught at
 * once). */
static void test_reader_bam_in_place(void **state)
{
    (void)state;
    test_seed(15);
    char path[] = "/tmp/sbf-test-bam-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    samFile *out = sam_open(path, "wb");
    assert_non_null(out);
    sam_hdr_t *hdr = sam_hdr_parse(strlen("@SQ\tSN:chr\tLN:1000000\n"), "@SQ\tSN:chr\tLN:1000000\n");
    assert_non_null(hdr);
    assert_int_equal(sam_hdr_write(out, hdr), 0);
    enum { RECORDS = 3000 };
    bam1_t *b = bam_init1();
    int with_cigar = 0;
    for (int i = 0; i < RECORDS; ++i) {
        char name[64];
        int nl = 1 + (int)(test_rand() % 60);
        for (int j = 0; j < nl; ++j)
            name[j] = "abcdefghijklmnopqrstuvwxyz0123456789:_"[test_rand() % 38];
        name[nl] = '\0';
        size_t len = i == 1500 ? 50000 : (size_t)(test_rand() % 400);   /* one larger than most blocks */
        char *seq = malloc(len + 1), *qual = malloc(len + 1);
        assert_true(seq && qual);
        for (size_t j = 0; j < len; ++j) {
            seq[j] = "ACGTN"[test_rand() % 5];
            qual[j] = (char)(test_rand() % 42);
        }
        const int mapped = i > 0 && i % 97 == 0;   /* the first record unaligned: the file suits */
        uint32_t cigar = bam_cigar_gen(len, BAM_CMATCH);
        with_cigar += mapped && len > 0;
        assert_true(bam_set1(b, (size_t)nl, name, mapped ? 0 : BAM_FUNMAP | BAM_FPAIRED, mapped ? 0 : -1,
                             mapped ? 100 : -1, mapped ? 60 : 0, mapped && len ? 1 : 0, &cigar, -1, -1, 0, len, seq,
                             test_rand() % 4 ? qual : NULL, 64) >= 0);
        if (i % 3 == 0)
            assert_int_equal(bam_aux_append(b, "RG", 'Z', 3, (const uint8_t *)"g1"), 0);
        if (i % 5 == 0) {
            int32_t v = (int32_t)test_rand();
            assert_int_equal(bam_aux_append(b, "XI", 'i', 4, (const uint8_t *)&v), 0);
        }
        assert_true(sam_write1(out, hdr, b) >= 0);
        free(seq);
        free(qual);
    }
    assert_int_equal(sam_close(out), 0);
    /* htslib's reading of every record */
    char **want = calloc(RECORDS, sizeof *want);
    assert_non_null(want);
    samFile *in = sam_open(path, "r");
    sam_hdr_t *h2 = sam_hdr_read(in);
    kstring_t ks = {0, 0, NULL};
    for (int i = 0; i < RECORDS; ++i) {
        assert_true(sam_read1(in, h2, b) >= 0);
        bam_canon(b, &ks);
        want[i] = strdup(ks.s);
    }
    assert_int_equal(sam_read1(in, h2, b), -1);
    sam_hdr_destroy(h2);
    sam_close(in);
    const size_t blocks[] = {4096, 8192, 65536, 1u << 20};
    for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; ++bi) {
        sbf_reader_opt_t opt = {.in_place = 1, .sam_no_ascii = 1, .block_size = blocks[bi]};
        sbf_reader_t *rd;
        assert_int_equal(sbf_reader_open(path, &opt, &rd), SBF_OK);
        enum { SLOTS = 16 };
        sbf_read_t slot[SLOTS], kept[RECORDS / SLOTS + 1];
        int kept_at[RECORDS / SLOTS + 1], n_kept = 0;
        memset(slot, 0, sizeof slot);
        memset(kept, 0, sizeof kept);
        sbf_pins_t pins = {0};
        for (int i = 0; i < RECORDS; ++i) {
            sbf_read_t *r = &slot[i % SLOTS];
            assert_int_equal(sbf_reader_read(rd, r), 1);
            bam_canon(r->b, &ks);
            if (strcmp(ks.s, want[i]))
                fail_msg("blocks of %zu, record %d: %.80s, htslib's %.80s", blocks[bi], i, ks.s, want[i]);
            if (r->name.l != strlen(bam_get_qname(r->b)) || memcmp(r->name.s, bam_get_qname(r->b), r->name.l))
                fail_msg("blocks of %zu, record %d: the name", blocks[bi], i);
            if (i % SLOTS == SLOTS - 1) {   /* a batch full: its last record waits, the rest done */
                kept[n_kept] = *r;
                memset(r, 0, sizeof *r);
                assert_int_equal(sbf_read_own(&kept[n_kept]), SBF_OK);
                kept_at[n_kept++] = i;
                assert_int_equal(sbf_reader_pin(rd, &pins), SBF_OK);
                sbf_pins_release(&pins);
            }
        }
        sbf_read_t end;
        memset(&end, 0, sizeof end);
        assert_int_equal(sbf_reader_read(rd, &end), 0);
        /* every record but the first (htslib's: it tells) and those with a CIGAR, in place */
        assert_int_equal(sbf_reader_in_place(rd), RECORDS - 1 - with_cigar);
        for (int k = 0; k < n_kept; ++k) {   /* their blocks long reused */
            bam_canon(kept[k].b, &ks);
            if (strcmp(ks.s, want[kept_at[k]]))
                fail_msg("blocks of %zu, record %d kept beyond its batch: %.80s", blocks[bi], kept_at[k], ks.s);
            sbf_read_free(&kept[k]);
        }
        for (int j = 0; j < SLOTS; ++j)
            sbf_read_free(&slot[j]);
        sbf_read_free(&end);
        sbf_pins_free(&pins);
        assert_int_equal(sbf_reader_close(rd), SBF_OK);
    }
    for (int i = 0; i < RECORDS; ++i)
        free(want[i]);
    free(want);
    free(ks.s);
    bam_destroy1(b);
    sam_hdr_destroy(hdr);
    unlink(path);
}

/* The tags' numbers (bam/sbf_numfmt.c) are printf's, byte for byte: floats of every kind
 * (raw bit patterns, decimals, scores as the rule makes them) and the edges of its rules. */
static void test_numfmt(void **state)
{
    (void)state;
    test_seed(13);
    char a[SBF_FMT_G_MAX], b[64];
    long differ = 0;
    for (long i = 0; i < 3000000; ++i) {
        uint64_t r = test_rand();
        float f;
        switch (i % 4) {
        case 0: { uint32_t u = (uint32_t)r; memcpy(&f, &u, sizeof f); break; }
        case 1: f = (float)((double)(r % 100000000) / 1000.0); break;
        case 2: f = (float)((double)(r % 1000000) / pow(10, (double)((r >> 40) % 12))); break;
        default: f = (float)(-log10((double)(r % 1000000 + 1) / 1e6) * (double)((r >> 33) % 50)); break;
        }
        int la = sbf_fmt_g(a, f), lb = snprintf(b, sizeof b, "%g", (double)f);
        if (la != lb || strcmp(a, b)) {
            if (differ++ < 5)
                print_message("%.17g: %s, printf %s\n", (double)f, a, b);
        }
    }
    const double edge[] = {0, -0.0, 0.5, 1.5, 2.5, 0.00015, 0.000125, 999999.5, 999999.4, 99999.95, 1e-4, 9.999995,
                           0.1, 100000, 123456.5, 1234565, 0.0001, 999999, 1e5, 12345.65, -3.25, 1e-5, 1e300, INFINITY,
                           -INFINITY, NAN, 0.30000001192092896, 3.0, 300};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; ++i) {
        sbf_fmt_g(a, edge[i]);
        snprintf(b, sizeof b, "%g", edge[i]);
        if (strcmp(a, b) && differ++ < 10)
            print_message("%.17g: %s, printf %s\n", edge[i], a, b);
    }
    assert_int_equal(differ, 0);
    const uint32_t u[] = {0, 1, 9, 10, 99, 100, 4294967295u, 1000000000, 123456789};
    for (size_t i = 0; i < sizeof u / sizeof *u; ++i) {
        int la = sbf_fmt_u32(a, u[i]), lb = snprintf(b, sizeof b, "%u", u[i]);
        assert_int_equal(la, lb);
        assert_string_equal(a, b);
    }
}

/* A reference FASTA read in pieces on threads (plugin/sbf_build_read.c: cut before headers that
 * start a line, parsed apart, joined) gives the bytes and counts of the records read one by one:
 * random files of records with empty ones (first, last, in runs), lowercase, IUPAC, CRLF line
 * ends, blank lines, '@' headers, no final newline; plain and BGZF; pieces from 1 byte to more
 * than the file; and a file with a '+' line (read again as records). */
static void write_file(const char *path, const char *data, size_t len, int bgzf)
{
    if (bgzf) {
        BGZF *z = bgzf_open(path, "w");
        assert_non_null(z);
        assert_true(bgzf_write(z, data, len) == (ssize_t)len);
        assert_int_equal(bgzf_close(z), 0);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
    }
}

static size_t random_fasta(char *out, int plus_line)
{
    size_t n = 0;
    const int records = 1 + (int)(test_rand() % 40);
    const int crlf = test_rand() % 4 == 0;
    for (int r = 0; r < records; ++r) {
        n += (size_t)sprintf(out + n, "%c%s%d desc %d%s\n", r && test_rand() % 10 == 0 ? '@' : '>', "rec", r, r,
                             crlf ? "\r" : "");
        /* the first record plain bases: htslib tells FASTA by its first lines */
        const size_t len = r == 0 ? 100 + test_rand() % 500 : test_rand() % 3 == 0 ? 0 : test_rand() % 3000;
        const size_t width = r == 0 ? 60 : 1 + test_rand() % 100;
        for (size_t i = 0; i < len; ++i) {
            const uint64_t x = r == 0 ? test_rand() % 80 : test_rand() % 100;
            out[n++] = x < 80 ? "ACGT"[x % 4] : x < 90 ? "acgt"[x % 4] : "NRYKMSW"[x % 7];
            if ((i + 1) % width == 0 || i + 1 == len) {
                if (crlf)
                    out[n++] = '\r';
                out[n++] = '\n';
                if (test_rand() % 20 == 0)
                    out[n++] = '\n';   /* a blank line */
            }
        }
        if (plus_line && r == records / 2)
            n += (size_t)sprintf(out + n, "+\n");
    }
    if (n && test_rand() % 3 == 0 && out[n - 1] == '\n')
        --n;   /* no final newline */
    out[n] = '\0';
    return n;
}

static void test_fasta_pieces(void **state)
{
    (void)state;
    test_seed(77);
    char path[] = "/tmp/sbf_pieces_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char *data = malloc(40 * 3200 * 2 + 4096);
    assert_non_null(data);
    const int k = 21;
    int cut_files = 0;
    for (int t = 0; t < 300; ++t) {
        const int plus = t % 25 == 24, bgzf = t % 3 == 1;
        size_t len = random_fasta(data, plus);
        write_file(path, data, len, bgzf);
        sbf_seqbuf_t want, got;
        sbf_seqbuf_init(&want);
        sbf_seqbuf_init(&got);
        const size_t piece = t % 7 == 0 ? 1 : 1 + test_rand() % (len + 64);
        const int threads = 3 + (int)(test_rand() % 4);
        const int want_rc = sbf_read_file_pieces(path, k, 1, 0, &want);
        char *want_msg = strdup(want_rc ? sbf_error_message() : "");
        const int got_rc = sbf_read_file_pieces(path, k, threads, piece, &got);
        if (got_rc != want_rc || (got_rc && strcmp(sbf_error_message(), want_msg) != 0))
            fail_msg("file %d, pieces of %zu bytes on %d threads: '%s' (%d), records: '%s' (%d)", t, piece, threads,
                     got_rc ? sbf_error_message() : "", got_rc, want_msg, want_rc);
        assert_true(want_rc == 0 || plus);   /* a '+' line makes a FASTQ record of it: its error */
        free(want_msg);
        if (got.len != want.len || got.bases != want.bases || got.kmers != want.kmers || got.run != want.run ||
            (want.len && memcmp(got.codes, want.codes, want.len) != 0))
            fail_msg("file %d (%zu bytes, %s%s), pieces of %zu bytes on %d threads: len %llu/%llu, bases %llu/%llu, "
                     "k-mers %llu/%llu, run %u/%u", t, len, bgzf ? "BGZF" : "plain", plus ? ", a '+' line" : "", piece,
                     threads, (unsigned long long)got.len, (unsigned long long)want.len,
                     (unsigned long long)got.bases, (unsigned long long)want.bases, (unsigned long long)got.kmers,
                     (unsigned long long)want.kmers, got.run, want.run);
        cut_files += piece < len / 2;
        sbf_seqbuf_free(&want);
        sbf_seqbuf_free(&got);
    }
    assert_true(cut_files > 100);
    /* appended after earlier records, as the builder's second file of a target is */
    sbf_seqbuf_t a, b;
    sbf_seqbuf_init(&a);
    sbf_seqbuf_init(&b);
    const char *two = ">a\nACGTACGTACGTACGTACGTACGT\n>e1\n>e2\n>b\nGGGGCCCCAAAATTTTGGGGCCCC\n>e3\n";
    write_file(path, two, strlen(two), 0);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(sbf_read_file_pieces(path, k, 1, 0, &a), 0);
        assert_int_equal(sbf_read_file_pieces(path, k, 4, 8, &b), 0);
    }
    assert_true(a.len == b.len && a.kmers == b.kmers && a.bases == b.bases && memcmp(a.codes, b.codes, a.len) == 0);
    sbf_seqbuf_free(&a);
    sbf_seqbuf_free(&b);
    /* a truncated BGZF file: an error naming the file on both paths (which of the reader's two
     * messages depends on where the reads meet the cut, on either path) */
    size_t len = random_fasta(data, 0);
    write_file(path, data, len, 1);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    assert_int_equal(ftruncate(fileno(f), ftell(f) / 2), 0);
    fclose(f);
    for (int threads = 1; threads <= 4; threads += 3) {
        sbf_seqbuf_init(&a);
        assert_true(sbf_read_file_pieces(path, k, threads, 64, &a) != 0);
        const char *msg = sbf_error_message();
        if (strncmp(msg, path, strlen(path)) != 0 || msg[strlen(path)] != ':' ||
            (!strstr(msg, ": read error or truncated compressed data after ") && !strstr(msg, ": error closing")))
            fail_msg("%d threads: '%s'", threads, msg);
        sbf_seqbuf_free(&a);
    }
    unlink(path);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_large_input),
        cmocka_unit_test(test_fuzz_corpus),
        cmocka_unit_test(test_numfmt),
        cmocka_unit_test(test_reader_blocks),
        cmocka_unit_test(test_reader_bam_in_place),
        cmocka_unit_test(test_fasta_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
