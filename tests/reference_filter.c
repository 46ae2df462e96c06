/* reference_filter.c -- an independent reference implementation of sbf's filter, for
 * tests/reference.sh.
 *
 * Written only from the specification: doc/format.md (file layout of format version 5, panels
 * and the rule by which `sbf build` forms them, "The bits") and the comment block and constants
 * of filters/sbf_kmer.h. It includes and links nothing of sbf: the index file is parsed here,
 * XXH64 is implemented here, the panel rule is implemented here, and the bits are computed here,
 * directly and slowly (every k-mer, every m-mer and every s-mer of it packed and hashed on its
 * own; no rolling windows; every bit placed into its panel one at a time), so that an error in
 * the library's fast paths cannot hide in both.
 *
 * Format version 5 (4's layout, the filters' checksums taken in pieces): after the header, one
 * metadata record per target (counts, its number of
 * shards N, fill, predicted FPR, clump chance, its panel, first column and number of columns,
 * its masks and the k-mers they left out),
 * then one per panel (n shards per column, log2 of its width W, offset, size and the checksum
 * of its filter array: XXH64 of its 64 MiB pieces' XXH64s). A target of c columns starting at column c0 of a panel holds a plain filter
 * of N = n * c shards; bit b of its shard v is bit (v/c * shard_bits + b) * W + c0 + v%c of the
 * panel's array (little-endian 64-bit words). A plain panel (W = 1) is one target's filter.
 *
 *   reference_filter build IDX.sbf K M S H SHARD_BITS BITS_PER_KMER NAME=FASTA...
 *       parses and checks IDX.sbf's header and metadata (expected parameters, offsets, sizes,
 *       alignment, padding, checksums, counts, names, columns of every target in its panel),
 *       forms the panels again by the rule of doc/format.md "Panels" from the targets' budgets
 *       and checks that the file's panels (members, n, W, columns, numbering) are those; builds
 *       every target's plain filter from its FASTA files (one target per distinct NAME, in order
 *       of first appearance, as `sbf build` does) with the number of shards recorded in the
 *       file, compares it byte for byte with the bits read out of the target's columns, and
 *       compares each panel's whole array (every member placed into it, unused columns zero)
 *       with the file's. Prints one line per check: "ok ..." or "FAIL ..."; for each target
 *       "filter NAME: B bytes compared, D differ", for each panel "panel P: ...".
 *   reference_filter present IDX.sbf TARGET FASTA
 *       queries every k-mer of FASTA, and of its reverse complement, against target number
 *       TARGET (0-based) of IDX.sbf with the reference query through the panel layout (panel
 *       shard (key*n)>>32, column c0 + ((key*n mod 2^32) * c) >> 32); prints
 *       "present: Q k-mers queried, A absent".
 * Exit status: 0 when every check passed, 1 when one failed, 2 on a usage or input error.
 * FASTA is plain (not compressed): '>' lines start a record, other lines are sequence (their
 * line ends, "\n" or "\r\n", removed). k-mers do not span records.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the bits, from doc/format.md and filters/sbf_kmer.h's comments and constants ---------- */

static const uint32_t SEED_WORD = 0x9e3779b9u, FOLD = 0x85ebca6bu;
static const uint32_t SEED_SHARD = 0x2f3d8dd7u, SEED_EXT = 0x632be5abu;

/* A=0 C=1 G=2 T/U=3 in either case; anything else is -1 (breaks k-mers) */
static int base_code(char c)
{
    switch (c) {
    case 'A': case 'a': return 0;
    case 'C': case 'c': return 1;
    case 'G': case 'g': return 2;
    case 'T': case 't': case 'U': case 'u': return 3;
    default: return -1;
    }
}

/* lowbias32 */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static uint32_t hash_word(uint64_t x) { return mix32(((uint32_t)x + (uint32_t)(x >> 32) * FOLD) ^ SEED_WORD); }

/* The canonical packed word of the len bases at w (all valid): 2 bits per base, first base in
 * the high bits; the reverse complement packed the same way; the smaller of the two. */
static uint64_t canonical_word(const char *w, int len)
{
    uint64_t fwd = 0, rev = 0;
    for (int i = 0; i < len; ++i)
        fwd = (fwd << 2) | (uint64_t)base_code(w[i]);
    for (int i = len - 1; i >= 0; --i) /* reverse complement: last base first, complemented */
        rev = (rev << 2) | (uint64_t)(3 - base_code(w[i]));
    return fwd < rev ? fwd : rev;
}

typedef struct {
    int k, m, s, h;
    unsigned shard_bits, shard_log2;
} params_t;

/* Bit j of the s-mer at sm, inside its shard. */
static unsigned smer_bit(const params_t *p, const char *sm, int j)
{
    uint32_t hs = hash_word(canonical_word(sm, p->s));
    uint64_t bits = (uint64_t)hs | (uint64_t)mix32(hs ^ SEED_EXT) << 32;
    return (unsigned)(bits >> (j * p->shard_log2)) & (p->shard_bits - 1);
}

/* The key of the k-mer at km: the minimizer hash mixed again, a 32-bit number. Its shard in a
 * filter of n shards is (key * n) >> 32. */
static uint32_t kmer_key(const params_t *p, const char *km)
{
    uint32_t min_hash = UINT32_MAX;
    for (int i = 0; i + p->m <= p->k; ++i) {
        uint32_t hm = hash_word(canonical_word(km + i, p->m));
        if (hm < min_hash)
            min_hash = hm;
    }
    return mix32(min_hash ^ SEED_SHARD);
}

/* Plain filters as arrays of 64-bit words; shard i is words [i * shard_bits/64, (i+1) * ...). */
static void set_bit(uint64_t *words, const params_t *p, uint64_t shard, unsigned b)
{
    words[shard * (p->shard_bits / 64) + b / 64] |= 1ULL << (b % 64);
}

static int get_bit(const uint64_t *words, const params_t *p, uint64_t shard, unsigned b)
{
    return (int)((words[shard * (p->shard_bits / 64) + b / 64] >> (b % 64)) & 1);
}

/* Bit x of a filter array in the file: bit x%64 of its little-endian word x/64. Read the word
 * byte by byte, so that this is right on any host. */
static int array_bit(const unsigned char *array, uint64_t x)
{
    const unsigned char *w = array + (x / 64) * 8;
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i)
        word = (word << 8) | w[i];
    return (int)((word >> (x % 64)) & 1);
}

static void insert_kmer(uint64_t *words, const params_t *p, uint64_t n_shards, const char *km)
{
    uint64_t shard = ((uint64_t)kmer_key(p, km) * n_shards) >> 32;
    for (int i = 0; i + p->s <= p->k; ++i)
        for (int j = 0; j < p->h; ++j)
            set_bit(words, p, shard, smer_bit(p, km + i, j));
}

/* Whether k-mer km tests present in a plain filter of n_shards (all its s-mers' bits set). */
static int kmer_present(const uint64_t *words, const params_t *p, uint64_t n_shards, const char *km)
{
    uint64_t shard = ((uint64_t)kmer_key(p, km) * n_shards) >> 32;
    for (int i = 0; i + p->s <= p->k; ++i)
        for (int j = 0; j < p->h; ++j)
            if (!get_bit(words, p, shard, smer_bit(p, km + i, j)))
                return 0;
    return 1;
}

/* A panel's layout, as the query sees it: n shards per column, width W. */
typedef struct {
    const unsigned char *array;
    uint64_t n, width;
} panel_view_t;

/* The query of a target of cols columns from col0 in a panel: the panel shard is (key*n)>>32
 * and the column col0 + ((key*n mod 2^32) * cols) >> 32, computed from the panel's n directly
 * (not through the target's N = n * cols, as the build does). */
static int query_kmer(const panel_view_t *pv, const params_t *p, uint64_t col0, uint64_t cols, const char *km)
{
    uint64_t kn = (uint64_t)kmer_key(p, km) * pv->n;
    uint64_t shard = kn >> 32, col = col0 + (((kn & 0xffffffffULL) * cols) >> 32);
    for (int i = 0; i + p->s <= p->k; ++i)
        for (int j = 0; j < p->h; ++j) {
            uint64_t b = smer_bit(p, km + i, j);
            if (!array_bit(pv->array, (shard * p->shard_bits + b) * pv->width + col))
                return 0;
        }
    return 1;
}

static int all_valid(const char *w, int len)
{
    for (int i = 0; i < len; ++i)
        if (base_code(w[i]) < 0)
            return 0;
    return 1;
}

/* ---- XXH64 (seed 0), from xxHash's specification --------------------------------------------- */

static const uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                      P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                      P5 = 0x27D4EB2F165667C5ULL;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t le(const unsigned char *p, int n) /* n-byte little-endian integer */
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t xxh_round(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
static uint64_t xxh_merge(uint64_t acc, uint64_t v) { return (acc ^ xxh_round(0, v)) * P1 + P4; }

static uint64_t xxh64(const unsigned char *p, uint64_t len)
{
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
        for (; end - p >= 32; p += 32) {
            v1 = xxh_round(v1, le(p, 8));
            v2 = xxh_round(v2, le(p + 8, 8));
            v3 = xxh_round(v3, le(p + 16, 8));
            v4 = xxh_round(v4, le(p + 24, 8));
        }
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = xxh_merge(h, v1);
        h = xxh_merge(h, v2);
        h = xxh_merge(h, v3);
        h = xxh_merge(h, v4);
    } else {
        h = P5;
    }
    h += len;
    for (; end - p >= 8; p += 8)
        h = rotl(h ^ xxh_round(0, le(p, 8)), 27) * P1 + P4;
    if (end - p >= 4) {
        h = rotl(h ^ (le(p, 4) * P1), 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; ++p)
        h = rotl(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- input ------------------------------------------------------------------------------------ */

static unsigned char *read_file(const char *path, uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    unsigned char *buf = NULL;
    uint64_t n = 0, cap = 0;
    size_t got;
    do {
        if (n + 65536 > cap) {
            cap = 2 * cap + 65536;
            buf = realloc(buf, cap + 1);
            if (!buf) {
                fputs("out of memory\n", stderr);
                exit(2);
            }
        }
        got = fread(buf + n, 1, 65536, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) {
        perror(path);
        exit(2);
    }
    fclose(f);
    buf[n] = 0;
    *size = n;
    return buf;
}

/* A FASTA file: its records' sequences (line ends removed), NULL-terminated list. */
static char **read_fasta(const char *path)
{
    uint64_t size;
    char *text = (char *)read_file(path, &size);
    char **recs = calloc(1, sizeof *recs);
    int n = 0;
    char *seq = NULL;
    size_t len = 0, cap = 0;   /* the record grows by doubling: a realloc per line was quadratic
                                * under AddressSanitizer, whose realloc always copies (MG1655:
                                * over 20 minutes in scripts/sanitize.sh) */
    for (char *line = text; line < text + size;) {
        char *nl = memchr(line, '\n', (size_t)(text + size - line));
        char *end = nl ? nl : text + size;
        size_t l = (size_t)(end - line);
        if (l > 0 && line[l - 1] == '\r')
            --l;
        if (line[0] == '>') {
            recs = realloc(recs, (size_t)(n + 2) * sizeof *recs);
            if (!recs || !(seq = recs[n++] = calloc(1, 1))) {
                fputs("out of memory\n", stderr);
                exit(2);
            }
            recs[n] = NULL;
            len = 0;
            cap = 0;
        } else if (seq) {
            if (len + l + 1 > cap) {
                cap = 2 * (len + l + 1);
                if (!(seq = recs[n - 1] = realloc(seq, cap))) {
                    fputs("out of memory\n", stderr);
                    exit(2);
                }
            }
            memcpy(seq + len, line, l);
            len += l;
            seq[len] = 0;
        } else if (l > 0) {
            fprintf(stderr, "%s: sequence before the first '>' line\n", path);
            exit(2);
        }
        line = end + 1;
    }
    free(text);
    return recs;
}

/* ---- checks ----------------------------------------------------------------------------------- */

static int failures;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(ok ? "ok " : "FAIL ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    if (!ok)
        ++failures;
}

static uint64_t align64(uint64_t x) { return (x + 63) / 64 * 64; }


/* ---- the index file, per doc/format.md (version 5) -------------------------------------------- */

/* Version 5's checksum of a filter array: XXH64 of the XXH64s of its 64 MiB pieces (the last one
 * shorter), each as 8 little-endian bytes, in order. */
static uint64_t filter_checksum(const unsigned char *p, uint64_t len)
{
    const uint64_t piece = (uint64_t)64 << 20, n = len ? (len + piece - 1) / piece : 1;
    unsigned char *sums = malloc(n * 8);
    if (!sums) {
        fprintf(stderr, "reference_filter: out of memory\n");
        exit(1);
    }
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t at = i * piece, h = xxh64(p + at, len - at < piece ? len - at : piece);
        for (int j = 0; j < 8; ++j)
            sums[i * 8 + j] = (unsigned char)(h >> (8 * j));
    }
    const uint64_t h = xxh64(sums, n * 8);
    free(sums);
    return h;
}

typedef struct {
    char name[4097];
    uint32_t n_sources;
    uint64_t bases, kmers, shards;
    double fill, fpr, clump;
    uint32_t panel, col0, cols;
    uint32_t n_masks;
    uint64_t masked;
    double chance;
} target_t;

typedef struct {
    uint64_t n;     /* shards per column */
    uint32_t log2w; /* log2 of the width */
    uint64_t width;
    uint64_t offset, size, checksum;
} panel_t;

typedef struct {
    unsigned char *buf;
    uint64_t file_size;
    params_t p;
    double bits_per_kmer;
    uint32_t n_targets, n_panels;
    target_t *t;
    panel_t *pn;
} index_t;

static void index_free(index_t *ix)
{
    free(ix->buf);
    free(ix->t);
    free(ix->pn);
    ix->buf = NULL;
    ix->t = NULL;
    ix->pn = NULL;
}

/* A bounds-checked reader of the metadata. */
typedef struct {
    const unsigned char *p, *end;
} cursor_t;

static uint64_t take(cursor_t *c, int n)
{
    if (c->end - c->p < n) {
        fputs("metadata: runs past its end\n", stderr);
        exit(1);
    }
    uint64_t v = le(c->p, n);
    c->p += n;
    return v;
}

static double take_f64(cursor_t *c)
{
    uint64_t bits = take(c, 8);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* Loads and checks the layout of an index; exp (may be NULL) holds the expected parameters.
 * Exits (status 1) after the checks when the layout cannot be read on safely. */
static void load_index(index_t *ix, const char *path, const params_t *exp, double exp_bpk, int layer)
{
    ix->buf = read_file(path, &ix->file_size);
    if (ix->file_size < 128) {
        check(0, "header: %s is %" PRIu64 " bytes, shorter than a header", path, ix->file_size);
        exit(1);
    }
    /* the long-read layer: an image of the same layout at header offset 96, of the size at 104,
     * ending the file; read on as if it were the file */
    uint64_t layer_off = le(ix->buf + 96, 8), layer_size = le(ix->buf + 104, 8);
    if (layer) {
        int there = layer_off % 64 == 0 && layer_off >= 128 && layer_size >= 128 && layer_off + layer_size == ix->file_size;
        check(there, "header: a long-read layer of %" PRIu64 " bytes at %" PRIu64 ", ending the file", layer_size,
              layer_off);
        if (!there)
            exit(1);
        memmove(ix->buf, ix->buf + layer_off, layer_size);
        ix->file_size = layer_size;
        layer_off = le(ix->buf + 96, 8);
        layer_size = le(ix->buf + 104, 8);
        check(layer_off == 0 && layer_size == 0, "header: the layer records no layer of its own");
    }
    const unsigned char *b = ix->buf;
    check(memcmp(b, "\x89SBF\r\n\x1a\n", 8) == 0, "header: magic");
    check(le(b + 8, 4) == 5, "header: format version %" PRIu64 " (5)", le(b + 8, 4));
    check(le(b + 12, 4) == 0x01020304, "header: byte-order mark 0x%08" PRIx64, le(b + 12, 4));
    check(le(b + 16, 4) == 128, "header: header size %" PRIu64 " (128)", le(b + 16, 4));
    ix->p.k = (int)le(b + 20, 4);
    ix->p.m = (int)le(b + 24, 4);
    ix->p.s = (int)le(b + 28, 4);
    ix->p.h = (int)le(b + 32, 4);
    ix->p.shard_bits = (unsigned)le(b + 36, 4);
    ix->n_targets = (uint32_t)le(b + 40, 4);
    ix->n_panels = (uint32_t)le(b + 44, 4);
    uint64_t bits = le(b + 48, 8);
    memcpy(&ix->bits_per_kmer, &bits, 8);
    uint64_t meta_off = le(b + 56, 8), meta_size = le(b + 64, 8), meta_sum = le(b + 72, 8);
    uint64_t data_off = le(b + 80, 8), total = le(b + 88, 8);
    if (exp) {
        check(ix->p.k == exp->k && ix->p.m == exp->m && ix->p.s == exp->s && ix->p.h == exp->h &&
                  ix->p.shard_bits == exp->shard_bits,
              "header: k=%d m=%d s=%d H=%d shard bits=%u (expected %d %d %d %d %u)", ix->p.k, ix->p.m,
              ix->p.s, ix->p.h, ix->p.shard_bits, exp->k, exp->m, exp->s, exp->h, exp->shard_bits);
        check(ix->bits_per_kmer == exp_bpk, "header: bits per k-mer %g (expected %g)", ix->bits_per_kmer, exp_bpk);
    }
    int params_ok = ix->p.k >= 1 && ix->p.k <= 32 && ix->p.m >= 1 && ix->p.m <= ix->p.k && ix->p.s >= 1 &&
                    ix->p.s <= ix->p.k && ix->p.h >= 1 && (ix->p.shard_bits == 256 || ix->p.shard_bits == 512);
    ix->p.shard_log2 = ix->p.shard_bits == 256 ? 8 : 9;
    params_ok = params_ok && (unsigned)ix->p.h * ix->p.shard_log2 <= 64;
    check(params_ok, "header: parameters valid");
    check(ix->n_targets >= 1 && ix->n_targets <= 65535, "header: %u targets", ix->n_targets);
    check(ix->n_panels >= 1 && ix->n_panels <= ix->n_targets, "header: %u panels (1 .. %u targets)", ix->n_panels,
          ix->n_targets);
    int zero = 1;
    for (int i = 112; i < 120; ++i)
        zero = zero && b[i] == 0;
    check(zero, "header: reserved bytes 112..119 are zero");
    check((layer_off == 0) == (layer_size == 0) &&
              (layer_off == 0 || (layer_off % 64 == 0 && layer_off + layer_size == ix->file_size)),
          "header: layer at %" PRIu64 ", %" PRIu64 " bytes: none, or 64-aligned and ending the file", layer_off,
          layer_size);
    const uint64_t arrays_end = layer_off ? layer_off : ix->file_size;
    check(le(b + 120, 8) == xxh64(b, 120), "header: checksum %016" PRIx64, le(b + 120, 8));
    check(total == ix->file_size, "header: file size %" PRIu64 " (file: %" PRIu64 ")", total, ix->file_size);
    ix->file_size = arrays_end;   /* the filters end where the layer starts */
    check(meta_off == 128, "header: metadata offset %" PRIu64 " (128)", meta_off);
    if (!params_ok || meta_off != 128 || meta_size > ix->file_size - 128 || ix->n_targets < 1 || ix->n_panels < 1 ||
        ix->n_panels > ix->n_targets) {
        check(0, "header: cannot read on");
        exit(1);
    }
    check(data_off == align64(128 + meta_size), "header: first filter at %" PRIu64 " (metadata end %" PRIu64
          " rounded up to 64)", data_off, 128 + meta_size);
    check(meta_sum == xxh64(b + 128, meta_size), "metadata: checksum %016" PRIx64, meta_sum);
    zero = data_off <= ix->file_size;
    for (uint64_t i = 128 + meta_size; zero && i < data_off; ++i)
        zero = b[i] == 0;
    check(zero, "metadata: padding after it is zero");

    /* the target records, then the panel records */
    cursor_t c = { b + 128, b + 128 + meta_size };
    ix->t = calloc(ix->n_targets, sizeof *ix->t);
    ix->pn = calloc(ix->n_panels, sizeof *ix->pn);
    for (uint32_t i = 0; i < ix->n_targets; ++i) {
        target_t *t = &ix->t[i];
        uint64_t len = take(&c, 4);
        if (len > 4096 || (uint64_t)(c.end - c.p) < len) {
            check(0, "metadata: target %u name length %" PRIu64, i, len);
            exit(1);
        }
        memcpy(t->name, c.p, len);
        c.p += len;
        t->n_sources = (uint32_t)take(&c, 4);
        for (uint32_t j = 0; j < t->n_sources; ++j) {
            uint64_t l = take(&c, 4);
            if ((uint64_t)(c.end - c.p) < l) {
                check(0, "metadata: target %s source %u runs past the end", t->name, j);
                exit(1);
            }
            printf("# target %s source %u: %.*s\n", t->name, j, (int)l, (const char *)c.p);
            c.p += l;
        }
        t->bases = take(&c, 8);
        t->kmers = take(&c, 8);
        t->shards = take(&c, 8);
        t->fill = take_f64(&c);
        t->fpr = take_f64(&c);
        t->clump = take_f64(&c);
        t->panel = (uint32_t)take(&c, 4);
        t->col0 = (uint32_t)take(&c, 4);
        t->cols = (uint32_t)take(&c, 4);
        /* format 4: the masks left out of it (sbf build --mask), and the k-mers they left out */
        uint32_t n_masks = (uint32_t)take(&c, 4);
        for (uint32_t j = 0; j < n_masks; ++j) {
            uint64_t l = take(&c, 4);
            if ((uint64_t)(c.end - c.p) < l) {
                check(0, "metadata: target %s mask %u runs past the end", t->name, j);
                exit(1);
            }
            printf("# target %s mask %u: %.*s\n", t->name, j, (int)l, (const char *)c.p);
            c.p += l;
        }
        uint64_t masked = take(&c, 8);
        check(n_masks > 0 || masked == 0, "metadata: target %s: %" PRIu64 " k-mers masked by no mask", t->name, masked);
        t->n_masks = n_masks;
        t->masked = masked;
        t->chance = take_f64(&c);
    }
    int fatal = 0;
    uint64_t next = data_off;
    for (uint32_t q = 0; q < ix->n_panels; ++q) {
        panel_t *pn = &ix->pn[q];
        pn->n = take(&c, 8);
        pn->log2w = (uint32_t)take(&c, 4);
        uint64_t reserved = take(&c, 4);
        pn->offset = take(&c, 8);
        pn->size = take(&c, 8);
        pn->checksum = take(&c, 8);
        int shape = pn->n >= 1 && pn->n <= (1ULL << 32) && pn->log2w <= 6;
        check(shape, "metadata: panel %u: %" PRIu64 " shards per column (1 .. 2^32), log2 width %u (0 .. 6)", q,
              pn->n, pn->log2w);
        check(reserved == 0, "metadata: panel %u: reserved field %" PRIu64 " (0)", q, reserved);
        if (!shape) {
            fatal = 1;
            break;
        }
        pn->width = 1ULL << pn->log2w;
        uint64_t want = pn->n * (ix->p.shard_bits / 8) * pn->width;
        int placed = pn->offset == next && pn->offset % 64 == 0 && pn->size == want &&
                     pn->offset <= ix->file_size && pn->size <= ix->file_size - pn->offset;
        check(placed, "metadata: panel %u: %" PRIu64 " bytes at offset %" PRIu64 " (expected %" PRIu64
              " = %" PRIu64 " x %u/8 x %" PRIu64 " at %" PRIu64 ")", q, pn->size, pn->offset, want, pn->n,
              ix->p.shard_bits, pn->width, next);
        if (!placed) {
            fatal = 1;
            break;
        }
        check(filter_checksum(b + pn->offset, pn->size) == pn->checksum, "metadata: panel %u: filter checksum %016" PRIx64,
              q, pn->checksum);
        zero = 1;
        for (uint64_t j = pn->offset + pn->size; j < align64(pn->offset + pn->size) && j < ix->file_size; ++j)
            zero = zero && b[j] == 0;
        check(zero, "metadata: panel %u: padding after the filter is zero", q);
        next = align64(pn->offset + pn->size);
    }
    if (fatal)
        exit(1);
    check(c.p == c.end, "metadata: %td bytes left after the last panel", c.end - c.p);
    check(next == ix->file_size, "file ends right after the last filter, rounded up to 64 (%" PRIu64 ")", next);

    /* every target in its panel: inside the width, no overlap, N = n x columns, clump in [0,1] */
    int32_t (*owner)[64] = malloc(ix->n_panels * sizeof *owner);
    uint32_t *members = calloc(ix->n_panels, sizeof *members);
    for (uint32_t q = 0; q < ix->n_panels; ++q)
        for (int j = 0; j < 64; ++j)
            owner[q][j] = -1;
    for (uint32_t i = 0; i < ix->n_targets; ++i) {
        target_t *t = &ix->t[i];
        int in = t->panel < ix->n_panels;
        const panel_t *pn = in ? &ix->pn[t->panel] : NULL;
        in = in && t->cols >= 1 && (uint64_t)t->col0 + t->cols <= pn->width;
        check(in, "metadata: target %s: panel %u (of %u), columns %u + %u inside the width %" PRIu64, t->name,
              t->panel, ix->n_panels, t->col0, t->cols, pn ? pn->width : 0);
        if (!in) {
            fatal = 1;
            continue;
        }
        ++members[t->panel];
        int free_cols = 1;
        for (uint32_t j = t->col0; j < t->col0 + t->cols; ++j) {
            if (owner[t->panel][j] >= 0) {
                printf("# column %u of panel %u: targets %s and %s\n", j, t->panel, ix->t[owner[t->panel][j]].name,
                       t->name);
                free_cols = 0;
            }
            owner[t->panel][j] = (int32_t)i;
        }
        check(free_cols, "metadata: target %s: its columns overlap no other target's", t->name);
        int n_ok = t->shards == pn->n * t->cols;
        check(n_ok, "metadata: target %s: %" PRIu64 " shards = %" PRIu64 " per column x %u columns", t->name,
              t->shards, pn->n, t->cols);
        check(t->clump >= 0 && t->clump <= 1, "metadata: target %s: clump chance %g in [0, 1]", t->name, t->clump);
        if (!free_cols || !n_ok)
            fatal = 1;
    }
    for (uint32_t q = 0; q < ix->n_panels; ++q) {
        check(members[q] >= 1, "metadata: panel %u holds %u targets (at least 1)", q, members[q]);
        if (ix->pn[q].width == 1)
            check(members[q] == 1, "metadata: panel %u is plain (width 1) and holds %u targets (1)", q, members[q]);
    }
    free(owner);
    free(members);
    if (fatal)
        exit(1);
}

/* ---- the panel rule of doc/format.md "Panels" --------------------------------------------------- */

typedef struct {
    uint32_t panel, col0, cols;
} place_t;

typedef struct {
    uint64_t n, width;
} shape_t;

static const uint64_t *sort_budget;

/* budget, largest first; ties in target order */
static int by_budget(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_budget[x] != sort_budget[y])
        return sort_budget[x] > sort_budget[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static uint64_t pow2_at_least(uint64_t x)
{
    uint64_t w = 1;
    while (w < x)
        w *= 2;
    return w;
}

/* Forms the panels of nt targets of budgets D (in shards); fills place[nt] and shape[], returns
 * the number of panels. Panels are numbered in the order of their first target, members take
 * consecutive columns in target order from column 0. */
static uint32_t form_panels(uint32_t nt, const uint64_t *D, double slack, place_t *place, shape_t *shape)
{
    uint32_t *list = malloc(nt * sizeof *list), left = nt;
    for (uint32_t i = 0; i < nt; ++i)
        list[i] = i;
    sort_budget = D;
    qsort(list, nt, sizeof *list, by_budget);

    uint32_t *mem = malloc(nt * sizeof *mem), *best = malloc(nt * sizeof *best);
    uint64_t *memc = malloc(nt * sizeof *memc), *bestc = malloc(nt * sizeof *bestc);
    uint32_t *formed_of = malloc(nt * sizeof *formed_of); /* formed panel of each target */
    uint64_t *cols_of = malloc(nt * sizeof *cols_of);
    shape_t *formed = malloc(nt * sizeof *formed);
    uint32_t *first = malloc(nt * sizeof *first); /* first target (lowest number) of each formed panel */
    unsigned char *gone = calloc(nt, 1);
    uint32_t n_formed = 0;
    while (left > 0) {
        uint32_t L = list[0], best_k = 0;
        uint64_t best_n = 0, best_w = 0;
        for (uint64_t cL = 1; cL <= 64; ++cL) {
            uint64_t n = (D[L] + cL - 1) / cL, taken = 0, sum = 0;
            uint32_t k = 0;
            for (uint32_t i = 0; i < left; ++i) {
                uint32_t t = list[i];
                uint64_t c = (D[t] + n - 1) / n;
                if ((double)(c * n) <= (double)D[t] * (1 + slack) && c * n <= (1ULL << 32) && taken + c <= 64) {
                    mem[k] = t;
                    memc[k++] = c;
                    taken += c;
                    sum += D[t];
                }
            }
            if (k == 0 || mem[0] != L)
                continue; /* L does not join: this cL counts for nothing */
            uint64_t w = pow2_at_least(taken);
            while (k > 1 && (double)n * (double)w > (1 + slack) * (double)sum) {
                --k;
                taken -= memc[k];
                sum -= D[mem[k]];
                w = pow2_at_least(taken);
            }
            if (k > best_k || (k == best_k && w < best_w)) { /* among equals the smallest W, then cL */
                best_k = k;
                best_n = n;
                best_w = w;
                memcpy(best, mem, k * sizeof *mem);
                memcpy(bestc, memc, k * sizeof *memc);
            }
        }
        if (best_k < 2) { /* a plain panel of n = D_L shards */
            best_k = 1;
            best[0] = L;
            bestc[0] = 1;
            best_n = D[L];
            best_w = 1;
        }
        formed[n_formed] = (shape_t){ best_n, best_w };
        first[n_formed] = UINT32_MAX;
        for (uint32_t j = 0; j < best_k; ++j) {
            formed_of[best[j]] = n_formed;
            cols_of[best[j]] = bestc[j];
            gone[best[j]] = 1;
            if (best[j] < first[n_formed])
                first[n_formed] = best[j];
        }
        ++n_formed;
        uint32_t kept = 0;
        for (uint32_t i = 0; i < left; ++i)
            if (!gone[list[i]])
                list[kept++] = list[i];
        left = kept;
    }
    /* numbering: in the order of the panels' first targets; columns in target order */
    uint32_t *number = malloc(n_formed * sizeof *number), n_panels = 0;
    uint64_t *next_col = calloc(n_formed, sizeof *next_col);
    for (uint32_t t = 0; t < nt; ++t) {
        uint32_t f = formed_of[t];
        if (first[f] == t) {
            number[f] = n_panels;
            shape[n_panels++] = formed[f];
        }
        place[t] = (place_t){ number[f], (uint32_t)next_col[f], (uint32_t)cols_of[t] };
        next_col[f] += cols_of[t];
    }
    free(list);
    free(mem);
    free(best);
    free(memc);
    free(bestc);
    free(formed_of);
    free(cols_of);
    free(formed);
    free(first);
    free(gone);
    free(number);
    free(next_col);
    return n_panels;
}

/* ---- commands --------------------------------------------------------------------------------- */

/* The bit of a panel array of width w that holds bit b of shard v of a target of cols columns
 * from col0: panel shard v / cols, column col0 + v % cols. */
static uint64_t panel_bit(unsigned shard_bits, uint64_t w, uint64_t col0, uint64_t cols, uint64_t v, unsigned b)
{
    return ((v / cols) * shard_bits + b) * w + col0 + v % cols;
}

static char *revcomp(const char *s, uint64_t len);
static int by_string(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The canonical k-mers of a FASTA, sorted: the k-mers a layer leaves out (its adapters). */
static char **exclusion_set(const char *path, int k, uint64_t *n_out)
{
    char **recs = read_fasta(path), **set = NULL;
    uint64_t n = 0, cap = 0;
    for (char **r = recs; *r; ++r) {
        uint64_t len = strlen(*r);
        for (uint64_t i = 0; i + (uint64_t)k <= len; ++i) {
            if (!all_valid(*r + i, k))
                continue;
            char *rc = revcomp(*r + i, (uint64_t)k), *km = malloc((size_t)k + 1);
            memcpy(km, strncmp(*r + i, rc, (size_t)k) <= 0 ? *r + i : rc, (size_t)k);
            km[k] = 0;
            free(rc);
            if (n == cap)
                set = realloc(set, (cap = cap ? 2 * cap : 256) * sizeof *set);
            set[n++] = km;
        }
        free(*r);
    }
    free(recs);
    qsort(set, n, sizeof *set, by_string);
    *n_out = n;
    return set;
}

/* DUST's low-complexity score of a k-mer: over its k-2 trinucleotides, the pairs of equal ones. */
static unsigned dust(const char *km, int k)
{
    unsigned score = 0;
    for (int i = 0; i + 3 <= k; ++i)
        for (int j = 0; j < i; ++j)
            score += base_code(km[i]) == base_code(km[j]) && base_code(km[i + 1]) == base_code(km[j + 1]) &&
                     base_code(km[i + 2]) == base_code(km[j + 2]);
    return score;
}

static int excluded(char **set, uint64_t n, const char *km, int k)
{
    char key[33], *rc = revcomp(km, (uint64_t)k), *pk = key;
    memcpy(key, strncmp(km, rc, (size_t)k) <= 0 ? km : rc, (size_t)k);
    key[k] = 0;
    free(rc);
    return n && bsearch(&pk, set, n, sizeof *set, by_string) != NULL;
}

static int cmd_build(int argc, char **argv)
{
    /* "build IDX.sbf K M S H SHARD_BITS BITS_PER_KMER DUST NAME=FASTA...": the index, its k-mers
     * of a DUST score of DUST or more left out (0: none); "layer IDX.sbf EXCLUDE.fa H SHARD_BITS
     * NAME=FASTA...": the long-read layer, k = 21, m = s = 15, 8 bits per k-mer, the k-mers of
     * EXCLUDE.fa and those of a DUST score of 14 or more left out */
    const int layer = strcmp(argv[1], "layer") == 0;
    if (argc < (layer ? 7 : 11))
        return 2;
    params_t exp = { atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), (unsigned)atoi(argv[7]), 0 };
    double exp_bpk = atof(argv[8]);
    unsigned dust_min = layer ? 14 : (unsigned)atoi(argv[9]);
    char **excl = NULL;
    uint64_t n_excl = 0;
    if (layer) {
        exp = (params_t){ 21, 15, 15, atoi(argv[4]), (unsigned)atoi(argv[5]), 0 };
        exp_bpk = 8;
        excl = exclusion_set(argv[3], 21, &n_excl);
    }
    const int first_name = layer ? 6 : 10;   /* the NAME=FASTA arguments */
    index_t ix;
    load_index(&ix, argv[2], &exp, exp_bpk, layer);
    const params_t *p = &ix.p;
    const unsigned sb = p->shard_bits;

    /* targets: distinct NAMEs, in order of first appearance */
    int n_args = argc - first_name;
    char **arg_name = calloc((size_t)n_args, sizeof *arg_name), **arg_file = calloc((size_t)n_args, sizeof *arg_file);
    int *arg_target = calloc((size_t)n_args, sizeof *arg_target), n_targets = 0;
    for (int a = 0; a < n_args; ++a) {
        char *eq = strchr(argv[first_name + a], '=');
        if (!eq)
            return 2;
        *eq = 0;
        arg_name[a] = argv[first_name + a];
        arg_file[a] = eq + 1;
        arg_target[a] = n_targets;
        for (int b = 0; b < a; ++b)
            if (strcmp(arg_name[b], arg_name[a]) == 0) {
                arg_target[a] = arg_target[b];
                break;
            }
        if (arg_target[a] == n_targets)
            ++n_targets;
    }
    check((uint32_t)n_targets == ix.n_targets, "%d targets given, %u in the file", n_targets, ix.n_targets);
    if ((uint32_t)n_targets != ix.n_targets) {
        free(arg_name);
        free(arg_file);
        free(arg_target);
        index_free(&ix);
        return 1;
    }

    /* every target's plain filter, of the N = n x columns shards the file records; valid: its
     * k-mer positions (the budget), kmers: those inserted (not excluded) */
    uint64_t **words = calloc((size_t)n_targets, sizeof *words), *kmers = calloc((size_t)n_targets, sizeof *kmers);
    uint64_t *valid = calloc((size_t)n_targets, sizeof *valid);
    char **joined = calloc((size_t)n_targets, sizeof *joined);   /* layer: the target's records, '\n' between */
    uint64_t *joined_len = calloc((size_t)n_targets, sizeof *joined_len);
    for (int t = 0; t < n_targets; ++t) {
        target_t *tt = &ix.t[t];
        const char *name = NULL;
        uint64_t n_shards = tt->shards, bases = 0;
        words[t] = calloc(n_shards * (sb / 64), 8);
        for (int a = 0; a < n_args; ++a) {
            if (arg_target[a] != t)
                continue;
            name = arg_name[a];
            char **recs = read_fasta(arg_file[a]);
            for (char **r = recs; *r; ++r) {
                uint64_t len = strlen(*r);
                bases += len;
                if (layer) {   /* as sbf holds it: one non-base between records once it holds any */
                    joined[t] = realloc(joined[t], joined_len[t] + len + 2);
                    if (joined_len[t])
                        joined[t][joined_len[t]++] = '\n';
                    memcpy(joined[t] + joined_len[t], *r, len);
                    joined_len[t] += len;
                }
                for (uint64_t i = 0; i + (uint64_t)p->k <= len; ++i)
                    if (all_valid(*r + i, p->k)) {
                        ++valid[t];
                        /* the layer's adapters; k-mers of low complexity */
                        if (excluded(excl, n_excl, *r + i, p->k) || (dust_min && dust(*r + i, p->k) >= dust_min))
                            continue;
                        insert_kmer(words[t], p, n_shards, *r + i);
                        ++kmers[t];
                    }
                free(*r);
            }
            free(recs);
        }
        check(strcmp(name, tt->name) == 0, "target %d: name '%s' (given '%s')", t, tt->name, name);
        check(tt->bases == bases, "target %s: %" PRIu64 " bases read (reference: %" PRIu64 ")", name, tt->bases, bases);
        check(tt->kmers == kmers[t], "target %s: %" PRIu64 " k-mer positions inserted (reference: %" PRIu64 ")", name,
              tt->kmers, kmers[t]);
        check(tt->masked == valid[t] - kmers[t] && (tt->n_masks > 0) == (excl != NULL || dust_min > 0),
              "target %s: %" PRIu64 " k-mer positions left out by %u masks (reference: %" PRIu64 ")", name, tt->masked,
              tt->n_masks, valid[t] - kmers[t]);
        /* the layer's measured chance: windows of 10,000 bases every max(10,000, len / 200), each
         * reversed (not complemented), the share of their valid k-mers the filter holds */
        double chance = 0;
        if (layer && joined_len[t] >= (uint64_t)p->k) {
            uint64_t L = joined_len[t], step = L / 200 < 10000 ? 10000 : L / 200, nk = 0, in = 0;
            char *w = malloc(10001);
            for (uint64_t at = 0; at < L; at += step) {
                uint64_t n = L - at < 10000 ? L - at : 10000;
                for (uint64_t i = 0; i < n; ++i)
                    w[i] = joined[t][at + n - 1 - i];
                for (uint64_t i = 0; i + (uint64_t)p->k <= n; ++i)
                    if (all_valid(w + i, p->k)) {
                        ++nk;
                        in += (uint64_t)kmer_present(words[t], p, n_shards, w + i);
                    }
            }
            chance = nk ? (double)in / (double)nk : 0;
            free(w);
        }
        check(tt->chance == chance, "target %s: measured chance %.9g (reference %.9g)", name, tt->chance, chance);
        free(joined[t]);
    }

    /* the panels: budgets, then the rule, then the file's panels against the rule's */
    uint64_t *budget = calloc((size_t)n_targets, sizeof *budget);
    double slack = ix.bits_per_kmer > 0 ? 0.25 : 0; /* --bits-per-kmer sizing, or --size (exact sizes) */
    for (int t = 0; t < n_targets; ++t) {
        if (ix.bits_per_kmer > 0) {
            double d = ceil((double)valid[t] * ix.bits_per_kmer / sb);
            budget[t] = d < 1 ? 1 : (uint64_t)d;
            check(ix.t[t].shards >= budget[t] && (double)ix.t[t].shards <= 1.25 * (double)budget[t],
                  "target %s: %" PRIu64 " shards, 1 to 1.25 times its budget ceil(%" PRIu64 " k-mers x %g bits / %u) = %"
                  PRIu64, ix.t[t].name, ix.t[t].shards, valid[t], ix.bits_per_kmer, sb, budget[t]);
        } else {
            budget[t] = ix.t[t].shards; /* --size: every target its size in shards, exactly */
        }
    }
    place_t *place = calloc((size_t)n_targets, sizeof *place);
    shape_t *shape = calloc((size_t)n_targets, sizeof *shape);
    uint32_t n_panels = form_panels((uint32_t)n_targets, budget, slack, place, shape);
    check(n_panels == ix.n_panels, "panels: %u in the file, %u by the rule of doc/format.md", ix.n_panels, n_panels);
    for (int t = 0; t < n_targets; ++t) {
        const target_t *tt = &ix.t[t];
        const place_t *r = &place[t];
        const panel_t *pn = &ix.pn[tt->panel];
        int same = tt->panel == r->panel && tt->col0 == r->col0 && tt->cols == r->cols && r->panel < ix.n_panels &&
                   pn->n == shape[r->panel].n && pn->width == shape[r->panel].width;
        check(same, "panels: target %s (budget %" PRIu64 "): panel %u, columns %u+%u of %" PRIu64 ", n %" PRIu64
              " (rule: panel %u, columns %u+%u of %" PRIu64 ", n %" PRIu64 ")", tt->name, budget[t], tt->panel,
              tt->col0, tt->cols, pn->width, pn->n, r->panel, r->col0, r->cols, shape[r->panel].width,
              shape[r->panel].n);
    }
    for (uint32_t q = 0; q < n_panels && q < ix.n_panels; ++q)
        check(ix.pn[q].n == shape[q].n && ix.pn[q].width == shape[q].width,
              "panels: panel %u: n %" PRIu64 ", width %" PRIu64 " (rule: n %" PRIu64 ", width %" PRIu64 ")", q,
              ix.pn[q].n, ix.pn[q].width, shape[q].n, shape[q].width);

    /* each target: its filter read out of its columns against the reference's */
    uint64_t total_bytes = 0, total_diff = 0;
    for (int t = 0; t < n_targets; ++t) {
        const target_t *tt = &ix.t[t];
        const char *name = tt->name;
        const panel_t *pn = &ix.pn[tt->panel];
        uint64_t n_shards = tt->shards, n_words = n_shards * (sb / 64), size = n_words * 8;
        const unsigned char *array = ix.buf + pn->offset;
        unsigned char *mine = malloc(size), *theirs = calloc(size, 1);
        uint64_t set = 0;
        for (uint64_t w = 0; w < n_words; ++w) {
            for (int i = 0; i < 8; ++i)
                mine[w * 8 + (uint64_t)i] = (unsigned char)(words[t][w] >> (8 * i));
            set += (uint64_t)__builtin_popcountll(words[t][w]);
        }
        for (uint64_t v = 0; v < n_shards; ++v)
            for (unsigned bit = 0; bit < sb; ++bit)
                if (array_bit(array, panel_bit(sb, pn->width, tt->col0, tt->cols, v, bit)))
                    theirs[v * (sb / 8) + bit / 8] |= (unsigned char)(1u << (bit % 8));
        uint64_t diff = 0, first = UINT64_MAX;
        for (uint64_t i = 0; i < size; ++i)
            if (mine[i] != theirs[i]) {
                if (first == UINT64_MAX)
                    first = i;
                ++diff;
            }
        if (diff)
            printf("# target %s: first difference at byte %" PRIu64 " of the filter (shard %" PRIu64
                   "): reference %02x, file %02x\n", name, first, first / (sb / 8), mine[first], theirs[first]);
        check(diff == 0, "filter %s: %" PRIu64 " bytes compared, %" PRIu64 " differ (%" PRIu64 " shards in columns %u+%u"
              " of panel %u)", name, size, diff, n_shards, tt->col0, tt->cols, tt->panel);
        total_bytes += size;
        total_diff += diff;

        /* fill and predicted false-positive rate, from the reference's plain filter */
        double fill = (double)set / ((double)n_shards * sb), fpr = 0;
        for (uint64_t s = 0; s < n_shards; ++s) {
            uint64_t in_shard = 0;
            for (unsigned w = 0; w < sb / 64; ++w)
                in_shard += (uint64_t)__builtin_popcountll(words[t][s * (sb / 64) + w]);
            fpr += pow((double)in_shard / sb, p->h * (p->k - p->s + 1));
        }
        fpr /= (double)n_shards;
        check(fabs(tt->fill - fill) <= 1e-12, "target %s: fill %.9f (reference %.9f)", name, tt->fill, fill);
        check(fabs(tt->fpr - fpr) <= 1e-9 * fpr + 1e-300, "target %s: predicted FPR %.6e (reference %.6e)", name,
              tt->fpr, fpr);
        free(mine);
        free(theirs);
    }
    printf("# total: %" PRIu64 " bytes of filters compared, %" PRIu64 " differ\n", total_bytes, total_diff);

    /* each panel: every member placed into a fresh array, unused columns zero, against the file */
    for (uint32_t q = 0; q < ix.n_panels; ++q) {
        const panel_t *pn = &ix.pn[q];
        uint64_t n_words = pn->size / 8;
        uint64_t *pw = calloc(n_words, 8);
        uint32_t in = 0, used = 0;
        for (int t = 0; t < n_targets; ++t) {
            const target_t *tt = &ix.t[t];
            if (tt->panel != q)
                continue;
            ++in;
            used += tt->cols;
            for (uint64_t v = 0; v < tt->shards; ++v)
                for (unsigned bit = 0; bit < sb; ++bit)
                    if (get_bit(words[t], p, v, bit)) {
                        uint64_t x = panel_bit(sb, pn->width, tt->col0, tt->cols, v, bit);
                        pw[x / 64] |= 1ULL << (x % 64);
                    }
        }
        const unsigned char *theirs = ix.buf + pn->offset;
        uint64_t diff = 0, first = UINT64_MAX;
        for (uint64_t i = 0; i < pn->size; ++i)
            if ((unsigned char)(pw[i / 8] >> (8 * (i % 8))) != theirs[i]) {
                if (first == UINT64_MAX)
                    first = i;
                ++diff;
            }
        if (diff)
            printf("# panel %u: first difference at byte %" PRIu64 " of the array: reference %02x, file %02x\n", q,
                   first, (unsigned)(unsigned char)(pw[first / 8] >> (8 * (first % 8))), theirs[first]);
        check(diff == 0, "panel %u: %" PRIu64 " bytes compared, %" PRIu64 " differ (%u targets in %u of %" PRIu64
              " columns, %" PRIu64 " shards per column)", q, pn->size, diff, in, used, pn->width, pn->n);
        free(pw);
    }

    for (int t = 0; t < n_targets; ++t)
        free(words[t]);
    free(words);
    free(kmers);
    free(valid);
    free(joined);
    free(joined_len);
    for (uint64_t i = 0; i < n_excl; ++i)
        free(excl[i]);
    free(excl);
    free(budget);
    free(place);
    free(shape);
    free(arg_name);
    free(arg_file);
    free(arg_target);
    index_free(&ix);
    return failures ? 1 : 0;
}

/* The reverse complement of a sequence; anything but a base becomes N. */
static char *revcomp(const char *s, uint64_t len)
{
    char *r = malloc(len + 1);
    for (uint64_t i = 0; i < len; ++i) {
        int c = base_code(s[len - 1 - i]);
        r[i] = c < 0 ? 'N' : "TGCA"[c];
    }
    r[len] = 0;
    return r;
}

/* "present IDX.sbf TARGET FASTA [DUST]": every valid k-mer of FASTA, both strands, tests present
 * in TARGET; those of a DUST score of DUST or more (the build left them out) are not queried. */
static int cmd_present(int argc, char **argv)
{
    if (argc != 5 && argc != 6)
        return 2;
    const unsigned dust_min = argc == 6 ? (unsigned)atoi(argv[5]) : 0;
    index_t ix;
    load_index(&ix, argv[2], NULL, 0, 0);
    /* Only the query decides here: a damaged filter must show as absent k-mers (the layout and
     * checksums are the build command's business, and were printed above). */
    failures = 0;
    uint32_t t = (uint32_t)atoi(argv[3]);
    if (t >= ix.n_targets) {
        index_free(&ix);
        return 2;
    }
    const params_t *p = &ix.p;
    const target_t *tt = &ix.t[t];
    const panel_t *pn = &ix.pn[tt->panel];
    panel_view_t pv = { ix.buf + pn->offset, pn->n, pn->width };
    uint64_t queried = 0, absent = 0, dusty = 0;
    char **recs = read_fasta(argv[4]);
    for (char **r = recs; *r; ++r) {
        uint64_t len = strlen(*r);
        char *strands[2] = { *r, revcomp(*r, len) };
        for (int st = 0; st < 2; ++st)
            for (uint64_t i = 0; i + (uint64_t)p->k <= len; ++i)
                if (all_valid(strands[st] + i, p->k)) {
                    if (dust_min && dust(strands[st] + i, p->k) >= dust_min) {
                        ++dusty;
                        continue;
                    }
                    ++queried;
                    if (!query_kmer(&pv, p, tt->col0, tt->cols, strands[st] + i)) {
                        if (absent < 5)
                            printf("# absent: %.*s\n", p->k, strands[st] + i);
                        ++absent;
                    }
                }
        free(strands[1]);
        free(*r);
    }
    free(recs);
    printf("# target %s: columns %u+%u of panel %u (width %" PRIu64 ", %" PRIu64 " shards per column)\n", tt->name,
           tt->col0, tt->cols, tt->panel, pn->width, pn->n);
    if (dust_min)
        printf("# %" PRIu64 " k-mers of a DUST score of %u or more not queried\n", dusty, dust_min);
    check(absent == 0 && queried > 0, "present: %" PRIu64 " k-mers queried (both strands), %" PRIu64 " absent",
          queried, absent);
    index_free(&ix);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* self-check of the hash of the checksums: XXH64 of nothing */
    if (xxh64((const unsigned char *)"", 0) != 0xEF46DB3751D8E999ULL) {
        fputs("XXH64 self-test failed\n", stderr);
        return 2;
    }
    int rc = 2;
    if (argc >= 2 && (strcmp(argv[1], "build") == 0 || strcmp(argv[1], "layer") == 0))
        rc = cmd_build(argc, argv);
    else if (argc >= 2 && strcmp(argv[1], "present") == 0)
        rc = cmd_present(argc, argv);
    if (rc == 2)
        fputs("usage: reference_filter build IDX.sbf K M S H SHARD_BITS BITS_PER_KMER NAME=FASTA...\n"
              "       reference_filter layer IDX.sbf EXCLUDE.fa H SHARD_BITS NAME=FASTA...\n"
              "       reference_filter present IDX.sbf TARGET FASTA\n", stderr);
    return rc;
}
