/* sbf_source.c -- see sbf_source.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <htslib/hfile.h>

#include "../config.h"
#include "../filters/sbf_error.h"
#include "sbf_pgzip.h"
#include "sbf_source.h"

#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>

#define GZ_IN (1u << 20)   /* compressed bytes read at once */

/* A gzip file of one or more members (gzip and pigz write one; concatenated files several),
 * inflated with ISA-L, each member's CRC and length checked by it. */
typedef struct {
    struct inflate_state st;
    hFILE *hf;
    unsigned char *in;
    int in_eof;
    int between;   /* at the end of a member: a next one may follow */
} gz_t;

static gz_t *gz_open(hFILE *hf)
{
    gz_t *g = calloc(1, sizeof *g);
    if (!g || !(g->in = malloc(GZ_IN))) {
        free(g);
        return NULL;
    }
    g->hf = hf;
    isal_inflate_init(&g->st);
    g->st.crc_flag = ISAL_GZIP;
    return g;
}

static void gz_close(gz_t *g)
{
    if (g) {
        free(g->in);
        free(g);
    }
}

static ssize_t gz_read(gz_t *g, unsigned char *out, size_t len)
{
    size_t got = 0;
    while (got < len) {
        if (g->st.avail_in == 0 && !g->in_eof) {
            ssize_t n = hread(g->hf, g->in, GZ_IN);
            if (n < 0)
                return -1;
            g->in_eof = n == 0;
            g->st.next_in = g->in;
            g->st.avail_in = (uint32_t)n;
        }
        if (g->between) {
            if (g->st.avail_in == 0)
                break;   /* the end of the file after a whole member */
            isal_inflate_reset(&g->st);   /* the next member */
            g->st.crc_flag = ISAL_GZIP;
            g->between = 0;
        }
        if (g->st.avail_in == 0 && g->in_eof)
            return -1;   /* the file ends inside a member */
        size_t room = len - got;
        g->st.next_out = out + got;
        g->st.avail_out = room > UINT32_MAX ? UINT32_MAX : (uint32_t)room;
        if (isal_inflate(&g->st) != ISAL_DECOMP_OK)
            return -1;
        got = (size_t)(g->st.next_out - out);
        if (g->st.block_state == ISAL_BLOCK_FINISH)
            g->between = 1;
    }
    return (ssize_t)got;
}
#endif

struct sbf_source_s {
    BGZF *fp;
    sbf_pgzip_t *pgz;
#ifdef HAVE_ISAL
    gz_t *gz;
#endif
};

/* A plain gzip file worth inflating on the pool's threads (sbf_pgzip.h). */
static int parallel_gzip(const BGZF *fp, const char *path, const htsThreadPool *pool)
{
    struct stat st;
    return fp->is_compressed && fp->is_gzip && pool && pool->pool && hts_tpool_size(pool->pool) >= 2 &&
           strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= SBF_PGZIP_MIN_BYTES;
}

int sbf_source_open(BGZF *fp, const char *path, htsThreadPool *pool, sbf_source_t **out)
{
    sbf_source_t *s = calloc(1, sizeof *s);
    if (!s)
        return sbf_error(SBF_E_NOMEM, "out of memory opening %s", path);
    s->fp = fp;
    if (parallel_gzip(fp, path, pool)) {
        int rc = sbf_pgzip_open(path, pool, &s->pgz);
        if (rc != SBF_OK) {
            free(s);
            return rc;
        }
        *out = s;
        return SBF_OK;
    }
#ifdef HAVE_ISAL
    /* plain gzip (not BGZF): htslib has not read from it yet, so its hFILE is at the start */
    if (fp->is_compressed && fp->is_gzip && !(s->gz = gz_open(fp->fp))) {
        free(s);
        return sbf_error(SBF_E_NOMEM, "out of memory opening %s", path);
    }
#endif
    *out = s;
    return SBF_OK;
}

ssize_t sbf_source_read(sbf_source_t *s, void *buf, size_t len)
{
    if (s->pgz)
        return sbf_pgzip_read(s->pgz, buf, len);
#ifdef HAVE_ISAL
    if (s->gz)
        return gz_read(s->gz, buf, len);
#endif
    /* Uncompressed data straight from the file: through BGZF it would be copied once more
     * (file -> BGZF block -> buffer). Nothing is buffered in the BGZF of an uncompressed file
     * until its first bgzf_read(), which this replaces. */
    ssize_t n = s->fp->is_compressed ? bgzf_read(s->fp, buf, len) : hread(s->fp->fp, buf, len);
    return n < 0 ? -1 : n;
}

const char *sbf_source_why(const sbf_source_t *s) { return s->pgz ? sbf_pgzip_why(s->pgz) : NULL; }

const char *sbf_source_decoder(const sbf_source_t *s)
{
    if (s->pgz)
        return "gzip (parallel)";
#ifdef HAVE_ISAL
    if (s->gz)
        return "gzip (ISA-L)";
#endif
    return !s->fp->is_compressed ? "none" : s->fp->is_gzip ? "gzip (zlib)" : "BGZF";
}

void sbf_source_close(sbf_source_t *s)
{
    if (!s)
        return;
    sbf_pgzip_close(s->pgz);
#ifdef HAVE_ISAL
    gz_close(s->gz);
#endif
    free(s);
}
