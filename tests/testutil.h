/* testutil.h -- deterministic random sequences and small helpers shared by the unit tests. */
#ifndef SBF_TESTUTIL_H
#define SBF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbf.h"

static uint64_t test_rng_state = 0x853c49e6748fea9bULL;

static inline void test_seed(uint64_t seed) { test_rng_state = seed * 0x9E3779B97F4A7C15ULL + 1; }

/* xorshift64*: fast and good enough to draw bases and positions. */
static inline uint64_t test_rand(void)
{
    test_rng_state ^= test_rng_state >> 12;
    test_rng_state ^= test_rng_state << 25;
    test_rng_state ^= test_rng_state >> 27;
    return test_rng_state * 0x2545F4914F6CDD1DULL;
}

static inline char *random_dna(size_t len)
{
    char *s = malloc(len + 1);
    assert_non_null(s);
    for (size_t i = 0; i < len; ++i)
        s[i] = "ACGT"[test_rand() >> 62];
    s[len] = '\0';
    return s;
}

static inline char complement(char c)
{
    switch (c) {
    case 'A': return 'T';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'T': return 'A';
    case 'a': return 't';
    case 'c': return 'g';
    case 'g': return 'c';
    case 't': return 'a';
    default: return c;
    }
}

static inline char *revcomp(const char *s, size_t len)
{
    char *r = malloc(len + 1);
    assert_non_null(r);
    for (size_t i = 0; i < len; ++i)
        r[i] = complement(s[len - 1 - i]);
    r[len] = '\0';
    return r;
}

/* The whole file at path (fails the test when it cannot be read). */
static inline uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Options with the given k, m, s, H and bits per k-mer (shard size 512, one thread). */
static inline sbf_opt_t test_opt(int k, int m, int s, int h, double bits)
{
    sbf_opt_t o;
    sbf_opt_init(&o);
    o.k = k;
    o.m = m;
    o.s = s;
    o.hashes = h;
    o.bits_per_kmer = bits;
    return o;
}

/* Build a one-target index ("t0") from n in-memory sequences, every k-mer kept (no DUST). */
static inline sbf_index_t *build_from_seqs(const sbf_opt_t *o, char **seqs, size_t n)
{
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);   /* every k-mer: the tests compare with direct builds */
    int t = sbf_builder_add_target(b, "t0");
    assert_int_equal(t, 0);
    for (size_t i = 0; i < n; ++i)
        assert_int_equal(sbf_builder_add_seq(b, t, seqs[i], strlen(seqs[i])), SBF_OK);
    int rc = sbf_builder_finish(b, &idx);
    if (rc != SBF_OK)
        fail_msg("build failed: %s", sbf_last_error());
    return idx;
}

/* An index of n targets "t0", "t1", ..., target t built from seqs[t] (sbf build's panel rule
 * places them), every k-mer kept (no DUST). */
static inline sbf_index_t *build_targets(const sbf_opt_t *o, char **seqs, int n)
{
    sbf_builder_t *b;
    sbf_index_t *idx;
    assert_int_equal(sbf_builder_init(o, &b), SBF_OK);
    assert_int_equal(sbf_builder_dust(b, 0), SBF_OK);
    for (int t = 0; t < n; ++t) {
        char name[16];
        snprintf(name, sizeof name, "t%d", t);
        assert_int_equal(sbf_builder_add_target(b, name), t);
        assert_int_equal(sbf_builder_add_seq(b, t, seqs[t], strlen(seqs[t])), SBF_OK);
    }
    if (sbf_builder_finish(b, &idx) != SBF_OK)
        fail_msg("build failed: %s", sbf_last_error());
    return idx;
}

/* One scratch folder per test program: group setup makes it, group teardown removes it. */
static char *tmpdir;

static inline int tmpdir_setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sbf-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    if (!d || !(tmpdir = strdup(d)))
        return -1;
    return 0;
}

static inline int tmpdir_teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    int rc = system(cmd);
    free(tmpdir);
    return rc;
}

/* tmpdir/name, malloc'd */
static inline char *path_in_tmp(const char *name)
{
    size_t n = strlen(tmpdir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", tmpdir, name);
    return p;
}

#endif
