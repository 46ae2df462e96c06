/* reference_filter.c -- an independent reference implementation of sbf's filter, for
 * tests/reference.sh.
 *
 * Written only from the specification: doc/format.md (file layout, "The bits") and the comment
 * block and constants of filters/sbf_kmer.h. It includes and links nothing of sbf: the index
 * file is parsed here, XXH64 is implemented here, and the bits are computed here, directly and
 * slowly (every k-mer, every m-mer and every s-mer of it packed and hashed on its own; no
 * rolling windows), so that an error in the library's fast paths cannot hide in both.
 *
 *   reference_filter build IDX.sbf K M S H SHARD_BITS BITS_PER_KMER NAME=FASTA...
 *       parses and checks IDX.sbf's header and metadata (expected parameters, offsets, sizes,
 *       checksums, counts, names), builds every target's filter from its FASTA files (one
 *       target per distinct NAME, in order of first appearance, as `sbf build` does) with the
 *       number of shards recorded in the file, and compares it byte for byte with the file's
 *       array. Prints one line per check: "ok ..." or "FAIL ..."; for each target
 *       "filter NAME: B bytes compared, D differ".
 *   reference_filter present IDX.sbf TARGET FASTA
 *       queries every k-mer of FASTA, and of its reverse complement, against target number
 *       TARGET (0-based) of IDX.sbf with the reference query; prints
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

/* The shard of the k-mer at km in a target of n_shards shards. */
static uint64_t kmer_shard(const params_t *p, const char *km, uint64_t n_shards)
{
    uint32_t min_hash = UINT32_MAX;
    for (int i = 0; i + p->m <= p->k; ++i) {
        uint32_t hm = hash_word(canonical_word(km + i, p->m));
        if (hm < min_hash)
            min_hash = hm;
    }
    return ((uint64_t)mix32(min_hash ^ SEED_SHARD) * n_shards) >> 32;
}

/* Bit j of the s-mer at sm, inside its shard. */
static unsigned smer_bit(const params_t *p, const char *sm, int j)
{
    uint32_t hs = hash_word(canonical_word(sm, p->s));
    uint64_t bits = (uint64_t)hs | (uint64_t)mix32(hs ^ SEED_EXT) << 32;
    return (unsigned)(bits >> (j * p->shard_log2)) & (p->shard_bits - 1);
}

/* Filters as arrays of 64-bit words; shard i is words [i * shard_bits/64, (i+1) * ...). */
static void set_bit(uint64_t *words, const params_t *p, uint64_t shard, unsigned b)
{
    words[shard * (p->shard_bits / 64) + b / 64] |= 1ULL << (b % 64);
}

/* A filter in the file: bytes, little-endian words; bit b of shard i is bit b%64 of its word
 * b/64. Read the word byte by byte, so that this is right on any host. */
static int file_bit(const unsigned char *array, const params_t *p, uint64_t shard, unsigned b)
{
    const unsigned char *w = array + shard * (p->shard_bits / 8) + (uint64_t)(b / 64) * 8;
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i)
        word = (word << 8) | w[i];
    return (int)((word >> (b % 64)) & 1);
}

static void insert_kmer(uint64_t *words, const params_t *p, uint64_t n_shards, const char *km)
{
    uint64_t shard = kmer_shard(p, km, n_shards);
    for (int i = 0; i + p->s <= p->k; ++i)
        for (int j = 0; j < p->h; ++j)
            set_bit(words, p, shard, smer_bit(p, km + i, j));
}

static int query_kmer(const unsigned char *array, const params_t *p, uint64_t n_shards, const char *km)
{
    uint64_t shard = kmer_shard(p, km, n_shards);
    for (int i = 0; i + p->s <= p->k; ++i)
        for (int j = 0; j < p->h; ++j)
            if (!file_bit(array, p, shard, smer_bit(p, km + i, j)))
                return 0;
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
    size_t len = 0;
    for (char *line = text; line < text + size;) {
        char *nl = memchr(line, '\n', (size_t)(text + size - line));
        char *end = nl ? nl : text + size;
        size_t l = (size_t)(end - line);
        if (l > 0 && line[l - 1] == '\r')
            --l;
        if (line[0] == '>') {
            recs = realloc(recs, (size_t)(n + 2) * sizeof *recs);
            seq = recs[n++] = calloc(1, 1);
            recs[n] = NULL;
            len = 0;
        } else if (seq) {
            seq = recs[n - 1] = realloc(seq, len + l + 1);
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

/* ---- the index file, per doc/format.md -------------------------------------------------------- */

typedef struct {
    char name[4097];
    uint32_t n_sources;
    uint64_t bases, kmers, shards, offset, size, checksum;
    double fill, fpr;
} target_t;

typedef struct {
    unsigned char *buf;
    uint64_t file_size;
    params_t p;
    double bits_per_kmer;
    uint32_t n_targets;
    target_t *t;
} index_t;

static void index_free(index_t *ix)
{
    free(ix->buf);
    free(ix->t);
    ix->buf = NULL;
    ix->t = NULL;
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

/* Loads and checks the layout of an index; exp (may be NULL) holds the expected parameters. */
static void load_index(index_t *ix, const char *path, const params_t *exp, double exp_bpk)
{
    ix->buf = read_file(path, &ix->file_size);
    const unsigned char *b = ix->buf;
    if (ix->file_size < 128) {
        check(0, "header: %s is %" PRIu64 " bytes, shorter than a header", path, ix->file_size);
        exit(1);
    }
    check(memcmp(b, "\x89SBF\r\n\x1a\n", 8) == 0, "header: magic");
    check(le(b + 8, 4) == 2, "header: format version %" PRIu64 " (2)", le(b + 8, 4));
    check(le(b + 12, 4) == 0x01020304, "header: byte-order mark 0x%08" PRIx64, le(b + 12, 4));
    check(le(b + 16, 4) == 128, "header: header size %" PRIu64 " (128)", le(b + 16, 4));
    ix->p.k = (int)le(b + 20, 4);
    ix->p.m = (int)le(b + 24, 4);
    ix->p.s = (int)le(b + 28, 4);
    ix->p.h = (int)le(b + 32, 4);
    ix->p.shard_bits = (unsigned)le(b + 36, 4);
    ix->n_targets = (uint32_t)le(b + 40, 4);
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
    int zero = le(b + 44, 4) == 0;
    for (int i = 96; i < 120; ++i)
        zero = zero && b[i] == 0;
    check(zero, "header: reserved fields are zero");
    check(le(b + 120, 8) == xxh64(b, 120), "header: checksum %016" PRIx64, le(b + 120, 8));
    check(total == ix->file_size, "header: file size %" PRIu64 " (file: %" PRIu64 ")", total, ix->file_size);
    check(meta_off == 128, "header: metadata offset %" PRIu64 " (128)", meta_off);
    if (!params_ok || meta_off != 128 || meta_size > ix->file_size - 128 || ix->n_targets < 1) {
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

    cursor_t c = { b + 128, b + 128 + meta_size };
    ix->t = calloc(ix->n_targets, sizeof *ix->t);
    uint64_t next = data_off;
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
        t->offset = take(&c, 8);
        t->size = take(&c, 8);
        t->checksum = take(&c, 8);
        int placed = t->offset == next && t->offset % 64 == 0 && t->shards >= 1 &&
                     t->size == t->shards * (ix->p.shard_bits / 8) && t->size <= ix->file_size - t->offset;
        check(placed, "metadata: target %s: %" PRIu64 " shards, %" PRIu64 " bytes at offset %" PRIu64
              " (expected at %" PRIu64 ")", t->name, t->shards, t->size, t->offset, next);
        if (!placed)
            exit(1);
        check(xxh64(b + t->offset, t->size) == t->checksum, "metadata: target %s: filter checksum %016" PRIx64,
              t->name, t->checksum);
        zero = 1;
        for (uint64_t j = t->offset + t->size; j < align64(t->offset + t->size) && j < ix->file_size; ++j)
            zero = zero && b[j] == 0;
        check(zero, "metadata: target %s: padding after the filter is zero", t->name);
        next = align64(t->offset + t->size);
    }
    check(c.p == c.end, "metadata: %td bytes left after the last target", c.end - c.p);
    check(next == ix->file_size, "file ends right after the last filter, rounded up to 64 (%" PRIu64 ")", next);
}

/* ---- commands --------------------------------------------------------------------------------- */

static int cmd_build(int argc, char **argv)
{
    if (argc < 10)
        return 2;
    params_t exp = { atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), (unsigned)atoi(argv[7]), 0 };
    double exp_bpk = atof(argv[8]);
    index_t ix;
    load_index(&ix, argv[2], &exp, exp_bpk);
    const params_t *p = &ix.p;

    /* targets: distinct NAMEs, in order of first appearance */
    int n_args = argc - 9;
    char **arg_name = calloc((size_t)n_args, sizeof *arg_name), **arg_file = calloc((size_t)n_args, sizeof *arg_file);
    int *arg_target = calloc((size_t)n_args, sizeof *arg_target), n_targets = 0;
    for (int a = 0; a < n_args; ++a) {
        char *eq = strchr(argv[9 + a], '=');
        if (!eq)
            return 2;
        *eq = 0;
        arg_name[a] = argv[9 + a];
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

    uint64_t total_bytes = 0, total_diff = 0;
    for (int t = 0; t < n_targets; ++t) {
        target_t *tt = &ix.t[t];
        const char *name = NULL;
        uint64_t n_shards = tt->shards, n_words = n_shards * (p->shard_bits / 64);
        uint64_t *words = calloc(n_words, 8);
        uint64_t bases = 0, kmers = 0;
        for (int a = 0; a < n_args; ++a) {
            if (arg_target[a] != t)
                continue;
            name = arg_name[a];
            char **recs = read_fasta(arg_file[a]);
            for (char **r = recs; *r; ++r) {
                uint64_t len = strlen(*r);
                bases += len;
                for (uint64_t i = 0; i + (uint64_t)p->k <= len; ++i)
                    if (all_valid(*r + i, p->k)) {
                        insert_kmer(words, p, n_shards, *r + i);
                        ++kmers;
                    }
                free(*r);
            }
            free(recs);
        }
        check(strcmp(name, tt->name) == 0, "target %d: name '%s' (given '%s')", t, tt->name, name);
        check(tt->bases == bases, "target %s: %" PRIu64 " bases read (reference: %" PRIu64 ")", name, tt->bases, bases);
        check(tt->kmers == kmers, "target %s: %" PRIu64 " k-mer positions inserted (reference: %" PRIu64 ")", name,
              tt->kmers, kmers);
        if (ix.bits_per_kmer > 0) {
            uint64_t want = (uint64_t)ceil((double)kmers * ix.bits_per_kmer / p->shard_bits);
            check(tt->shards == want, "target %s: %" PRIu64 " shards = ceil(%" PRIu64 " k-mers x %g bits / %u) = %" PRIu64,
                  name, tt->shards, kmers, ix.bits_per_kmer, p->shard_bits, want);
        }

        /* the reference's bytes: each word little-endian */
        unsigned char *mine = malloc(n_words * 8);
        uint64_t set = 0;
        for (uint64_t w = 0; w < n_words; ++w) {
            for (int i = 0; i < 8; ++i)
                mine[w * 8 + (uint64_t)i] = (unsigned char)(words[w] >> (8 * i));
            set += (uint64_t)__builtin_popcountll(words[w]);
        }
        const unsigned char *theirs = ix.buf + tt->offset;
        uint64_t diff = 0, first = UINT64_MAX;
        for (uint64_t i = 0; i < tt->size; ++i)
            if (mine[i] != theirs[i]) {
                if (first == UINT64_MAX)
                    first = i;
                ++diff;
            }
        if (diff)
            printf("# target %s: first difference at byte %" PRIu64 " of the array (shard %" PRIu64
                   "): reference %02x, file %02x\n", name, first, first / (p->shard_bits / 8), mine[first], theirs[first]);
        check(diff == 0, "filter %s: %" PRIu64 " bytes compared, %" PRIu64 " differ", name, tt->size, diff);
        total_bytes += tt->size;
        total_diff += diff;

        /* fill and predicted false-positive rate, from the reference's bits */
        double fill = (double)set / ((double)n_shards * p->shard_bits), fpr = 0;
        for (uint64_t s = 0; s < n_shards; ++s) {
            uint64_t in_shard = 0;
            for (unsigned w = 0; w < p->shard_bits / 64; ++w)
                in_shard += (uint64_t)__builtin_popcountll(words[s * (p->shard_bits / 64) + w]);
            fpr += pow((double)in_shard / p->shard_bits, p->h * (p->k - p->s + 1));
        }
        fpr /= (double)n_shards;
        check(fabs(tt->fill - fill) <= 1e-12, "target %s: fill %.9f (reference %.9f)", name, tt->fill, fill);
        check(fabs(tt->fpr - fpr) <= 1e-9 * fpr + 1e-300, "target %s: predicted FPR %.6e (reference %.6e)", name,
              tt->fpr, fpr);
        free(mine);
        free(words);
    }
    printf("# total: %" PRIu64 " bytes compared, %" PRIu64 " differ\n", total_bytes, total_diff);
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

static int cmd_present(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    index_t ix;
    load_index(&ix, argv[2], NULL, 0);
    /* Only the query decides here: a damaged filter must show as absent k-mers (the layout and
     * checksums are the build command's business, and were printed above). */
    failures = 0;
    uint32_t t = (uint32_t)atoi(argv[3]);
    if (t >= ix.n_targets) {
        index_free(&ix);
        return 2;
    }
    const params_t *p = &ix.p;
    const unsigned char *array = ix.buf + ix.t[t].offset;
    uint64_t queried = 0, absent = 0;
    char **recs = read_fasta(argv[4]);
    for (char **r = recs; *r; ++r) {
        uint64_t len = strlen(*r);
        char *strands[2] = { *r, revcomp(*r, len) };
        for (int st = 0; st < 2; ++st)
            for (uint64_t i = 0; i + (uint64_t)p->k <= len; ++i)
                if (all_valid(strands[st] + i, p->k)) {
                    ++queried;
                    if (!query_kmer(array, p, ix.t[t].shards, strands[st] + i)) {
                        if (absent < 5)
                            printf("# absent: %.*s\n", p->k, strands[st] + i);
                        ++absent;
                    }
                }
        free(strands[1]);
        free(*r);
    }
    free(recs);
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
    if (argc >= 2 && strcmp(argv[1], "build") == 0)
        rc = cmd_build(argc, argv);
    else if (argc >= 2 && strcmp(argv[1], "present") == 0)
        rc = cmd_present(argc, argv);
    if (rc == 2)
        fputs("usage: reference_filter build IDX.sbf K M S H SHARD_BITS BITS_PER_KMER NAME=FASTA...\n"
              "       reference_filter present IDX.sbf TARGET FASTA\n", stderr);
    return rc;
}
