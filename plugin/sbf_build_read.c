/* sbf_build_read.c -- reading reference files for a build (see sbf_build_read.h).
 *
 * A human reference comes as one file per chromosome as often as one file: read one after the
 * other, 3.1 Gbp took 23 s of the 67 s GPU build (issue 27; parsing and translating at about
 * 130 MB/s a thread). Several files are read at once, each by its own thread into its own
 * buffer, and handed over in the order given, so the target's sequence is the same bytes
 * whatever the thread count. One FASTA file is cut into pieces of whole records (at the line
 * starts of headers) as it is read and decompressed, and the pieces are parsed on threads and
 * joined in order: the same bytes as one parser gives. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bam/sbf_fastx.h"
#include "../bam/sbf_seqio.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_kmer.h"
#include "../filters/sbf_mem.h"
#include "sbf_build_read.h"

/* A record's bases as the parser hands them over (sbf_fastx_t's seq_sink): the first piece
 * begins the record in seq, the others and the rest extend it. A chromosome is translated as it
 * is parsed, never held as text: each file's text cost a fresh buffer of its largest record,
 * faulted 4 kB at a time (about a fifth of the reading on the development VM). */
typedef struct {
    sbf_seqbuf_t *seq;
    int k;
    int started;   /* the current record's first bases are in seq */
    int rc;
} record_sink_t;

static int record_sink(void *arg, const char *s, size_t n)
{
    record_sink_t *r = arg;
    const uint8_t *b = (const uint8_t *)s;
    r->rc = r->started ? sbf_seqbuf_extend(r->seq, sbf_nt4_ascii, b, n, r->k)
                       : sbf_seqbuf_append(r->seq, sbf_nt4_ascii, b, n, r->k);
    r->started = 1;
    return r->rc;
}

/* The record read ends with s[0..n): all its bases unless the sink had the others. */
static int record_end(record_sink_t *r, const char *s, size_t n)
{
    const uint8_t *b = (const uint8_t *)s;
    if (!r->started)
        return sbf_seqbuf_append(r->seq, sbf_nt4_ascii, b, n, r->k);
    r->started = 0;
    return sbf_seqbuf_extend(r->seq, sbf_nt4_ascii, b, n, r->k);
}

/* One file, record by record on this thread. */
static int read_records(const char *path, int k, int threads, sbf_seqbuf_t *seq)
{
    sbf_seqfile_t *f;
    int rc;
    if ((rc = sbf_seqfile_open(path, threads, &f)))
        return rc;
    record_sink_t sink = {seq, k, 0, SBF_OK};
    (void)sbf_seqfile_seq_sink(f, record_sink, &sink);   /* SAM, BAM, CRAM: whole records */
    sbf_seqrec_t rec = {{0, 0, NULL}, {0, 0, NULL}};
    long long records = 0;
    while ((rc = sbf_seqfile_read(f, &rec)) == 1) {
        ++records;
        if ((rc = record_end(&sink, rec.seq.s, rec.seq.l)))
            break;
    }
    if (rc < 0 && sink.rc)   /* the parser's message would blame the file */
        rc = sbf_error(sink.rc, "out of memory holding the sequence of %s", path);
    sbf_seqrec_free(&rec);
    int close_rc = sbf_seqfile_close(f);
    if (rc == SBF_OK && close_rc)
        rc = close_rc;
    if (rc == SBF_OK && records == 0)
        rc = sbf_error(SBF_E_FORMAT, "%s: no sequences in file", path);
    return rc;
}

/* ---- one FASTA file in pieces ---- */

#define PIECE_BYTES ((size_t)16 << 20)   /* read this much, then cut before its last header */
#define PIECES_MIN_THREADS 3
#define PIECES_AHEAD_BYTES ((size_t)2 << 30)   /* text read ahead of the joining, at most (and
                                                  one piece): a human genome's chromosomes, each
                                                  a piece, are not all held twice at once */

typedef struct {
    char *text;                /* whole records; freed once parsed */
    size_t len, at;            /* at: the parser's read position */
    uint64_t text_cap;         /* text's buffer (sbf_buf_reserve) */
    int text_mapped;
    sbf_seqbuf_t seq;          /* its records, appended from empty */
    uint64_t lead_empty;       /* empty records before its first with bases */
    long long records;
    int parsed;
    int rc;                    /* SBF_OK, an error, or 1: a line starts with '+' */
    char *message;
} piece_t;

typedef struct {
    const char *path;
    int k;
    int threads;               /* the joins' copies: the parsers and this one */
    piece_t **p;
    int n, cap;                /* pieces made, room in p */
    size_t ahead;              /* the text bytes of the pieces made and not joined */
    int next;                  /* the next piece to parse */
    int reading_done, stop;
    pthread_mutex_t lock;
    pthread_cond_t changed;
} pieces_t;

static int piece_read(void *f, void *buf, int len)
{
    piece_t *pc = f;
    size_t n = pc->len - pc->at < (size_t)len ? pc->len - pc->at : (size_t)len;
    memcpy(buf, pc->text + pc->at, n);
    pc->at += n;
    return (int)n;
}

/* The offset of the last c in buf[from..len) that starts a line (a byte after a '\n'), or 0.
 * A record of 250 Mbp comes in many reads: each looks only at the bytes it added. */
static size_t last_line_start(const char *buf, size_t from, size_t len, char c)
{
    size_t found = 0;
    for (const char *p = buf + from; (p = memchr(p, c, (size_t)(buf + len - p))) != NULL; ++p)
        if (p > buf && p[-1] == '\n')
            found = (size_t)(p - buf);
    return found;
}

/* Parse a piece as the record reader parses the whole file (sbf_fastx_read: kseq), or return 1
 * when a line starts with '+': kseq takes the lines after it for qualities, and a quality line
 * may start with '>', so the cuts may not be record boundaries: the caller reads it again. */
static int piece_parse(const pieces_t *job, piece_t *pc)
{
    if ((pc->len && pc->text[0] == '+') || last_line_start(pc->text, 0, pc->len, '+'))
        return 1;
    sbf_fastx_t *x = sbf_fastx_init(piece_read, pc);
    if (!x)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", job->path);
    record_sink_t sink = {&pc->seq, job->k, 0, SBF_OK};
    x->seq_sink = record_sink;
    x->sink_arg = &sink;
    int n, rc = SBF_OK;
    while ((n = sbf_fastx_read(x)) >= 0) {
        ++pc->records;
        if (pc->seq.len == 0 && n == 0) {
            ++pc->lead_empty;
            continue;
        }
        if ((rc = record_end(&sink, x->seq.s, x->seq.l)))
            break;
    }
    if (rc == SBF_OK && n < -1)
        rc = sink.rc ? sink.rc
                     : sbf_error(SBF_E_FORMAT, "%s: record '%s' is truncated or too long", job->path, x->name.s);
    sbf_fastx_destroy(x);
    return rc;
}

static void *piece_worker(void *arg)
{
    pieces_t *job = arg;
    pthread_mutex_lock(&job->lock);
    for (;;) {
        while (!job->stop && job->next >= job->n && !job->reading_done)
            pthread_cond_wait(&job->changed, &job->lock);
        if (job->stop || job->next >= job->n)
            break;
        piece_t *pc = job->p[job->next++];
        pthread_mutex_unlock(&job->lock);
        const int rc = piece_parse(job, pc);
        char *message = rc < 0 ? strdup(sbf_error_message()) : NULL;
        sbf_buf_free(pc->text, pc->text_cap, pc->text_mapped);
        pc->text = NULL;
        pthread_mutex_lock(&job->lock);
        pc->rc = rc;
        pc->message = message;
        pc->parsed = 1;
        pthread_cond_broadcast(&job->changed);
    }
    pthread_mutex_unlock(&job->lock);
    return NULL;
}

/* Join the parsed pieces in order into seq, waiting while more than `limit` (0: any) are not
 * joined or their text passes PIECES_AHEAD_BYTES.
 * *again is set when a piece asks for the file to be read again. */
static int pieces_join(pieces_t *job, int limit, int *joined, long long *records, sbf_seqbuf_t *seq, int *again)
{
    int rc = SBF_OK;
    pthread_mutex_lock(&job->lock);
    while (*joined < job->n && rc == SBF_OK && !*again) {
        piece_t *pc = job->p[*joined];
        if (!pc->parsed) {
            if (job->n - *joined <= limit && (limit == 0 || job->ahead <= PIECES_AHEAD_BYTES))
                break;
            pthread_cond_wait(&job->changed, &job->lock);
            continue;
        }
        pthread_mutex_unlock(&job->lock);
        if (pc->rc > 0)
            *again = 1;
        else if (pc->rc < 0)
            rc = sbf_error(pc->rc, "%s", pc->message ? pc->message : "out of memory");
        else if ((rc = sbf_seqbuf_join(seq, &pc->seq, pc->lead_empty, job->threads)) == SBF_OK)
            *records += pc->records;
        sbf_seqbuf_free(&pc->seq);
        free(pc->message);
        pc->message = NULL;
        pthread_mutex_lock(&job->lock);
        job->ahead -= pc->len;
        ++*joined;
    }
    if (rc != SBF_OK || *again) {
        job->stop = 1;
        pthread_cond_broadcast(&job->changed);
    }
    pthread_mutex_unlock(&job->lock);
    return rc;
}

/* The piece text[0..len) joins the job, which frees the buffer (cap bytes, mapped or not) */
static int pieces_add(pieces_t *job, uint8_t *text, size_t len, uint64_t cap, int mapped)
{
    piece_t *pc = calloc(1, sizeof *pc);
    if (!pc)
        return sbf_error(SBF_E_NOMEM, "out of memory reading %s", job->path);
    pc->text = (char *)text;
    pc->len = len;
    pc->text_cap = cap;
    pc->text_mapped = mapped;
    sbf_seqbuf_init(&pc->seq);
    pthread_mutex_lock(&job->lock);
    if (job->n == job->cap) {
        const int cap = job->cap ? 2 * job->cap : 64;
        piece_t **grown = realloc(job->p, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&job->lock);
            free(pc);
            return sbf_error(SBF_E_NOMEM, "out of memory reading %s", job->path);
        }
        job->p = grown;
        job->cap = cap;
    }
    job->p[job->n++] = pc;
    job->ahead += len;
    pthread_cond_broadcast(&job->changed);
    pthread_mutex_unlock(&job->lock);
    return SBF_OK;
}

/* The FASTA file f (nothing read from it yet) into seq: this thread reads and cuts, `workers`
 * threads parse. *again: read it again as records (a '+' line). */
static int read_pieces(sbf_seqfile_t *f, const char *path, int k, int workers, size_t piece_bytes, sbf_seqbuf_t *seq,
                       int *again)
{
    pieces_t job;
    memset(&job, 0, sizeof job);
    job.path = path;
    job.k = k;
    job.threads = workers + 1;
    pthread_mutex_init(&job.lock, NULL);
    pthread_cond_init(&job.changed, NULL);
    pthread_t *tid = calloc((size_t)workers, sizeof *tid);
    int started = 0, rc = tid ? SBF_OK : sbf_error(SBF_E_NOMEM, "out of memory reading %s", path);
    while (tid && started < workers && pthread_create(&tid[started], NULL, piece_worker, &job) == 0)
        ++started;
    if (rc == SBF_OK && started == 0)
        rc = sbf_error(SBF_E_THREAD, "%s: cannot start a thread to parse it", path);
    int joined = 0;
    long long records = 0;
    /* the text read and not yet cut: a chromosome of 250 Mbp grows it 16 times, in a mapping
     * of its own (sbf_mem.h: no copies) */
    uint8_t *cur = NULL;
    uint64_t cap = 0;
    int mapped = 0;
    size_t len = 0, searched = 0;
    int read_failed = 0;
    while (rc == SBF_OK && !*again) {
        if (cap - len < piece_bytes && (rc = sbf_buf_reserve(&cur, &cap, &mapped, len + 2 * piece_bytes, path)) != SBF_OK)
            break;
        const ssize_t got = sbf_seqfile_raw(f, cur + len, piece_bytes);
        if (got < 0) {   /* said once the pieces read before are joined: their records count */
            read_failed = 1;
            break;
        }
        len += (size_t)got;
        size_t cut = got == 0 ? len : 0;
        if (!cut && len >= piece_bytes) {   /* bytes before `searched` hold no header's line start */
            cut = last_line_start((const char *)cur, searched, len, '>');
            searched = len;
        }
        if (cut > 0) {
            const size_t rest = len - cut;
            uint8_t *next = NULL;
            uint64_t next_cap = 0;
            int next_mapped = 0;
            if ((rc = sbf_buf_reserve(&next, &next_cap, &next_mapped, rest + 2 * piece_bytes, path)) != SBF_OK)
                break;
            memcpy(next, cur + cut, rest);
            if ((rc = pieces_add(&job, cur, cut, cap, mapped)) != SBF_OK) {
                sbf_buf_free(next, next_cap, next_mapped);
                break;
            }
            cur = next;
            len = searched = rest;
            cap = next_cap;
            mapped = next_mapped;
            /* at most two pieces a thread read ahead of the joining: memory stays bounded */
            rc = pieces_join(&job, 2 * started, &joined, &records, seq, again);
        }
        if (got == 0)
            break;
    }
    sbf_buf_free(cur, cap, mapped);
    pthread_mutex_lock(&job.lock);
    job.reading_done = 1;
    pthread_cond_broadcast(&job.changed);
    pthread_mutex_unlock(&job.lock);
    if (rc == SBF_OK)
        rc = pieces_join(&job, 0, &joined, &records, seq, again);
    if (rc != SBF_OK) {
        pthread_mutex_lock(&job.lock);
        job.stop = 1;
        pthread_cond_broadcast(&job.changed);
        pthread_mutex_unlock(&job.lock);
    }
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < job.n; ++i) {
        sbf_buf_free(job.p[i]->text, job.p[i]->text_cap, job.p[i]->text_mapped);
        sbf_seqbuf_free(&job.p[i]->seq);
        free(job.p[i]->message);
        free(job.p[i]);
    }
    free(job.p);
    free(tid);
    pthread_mutex_destroy(&job.lock);
    pthread_cond_destroy(&job.changed);
    if (rc == SBF_OK && !*again && read_failed)   /* the records path's message */
        rc = sbf_seqfile_read_error(f, records);
    if (rc == SBF_OK && !*again && records == 0)
        rc = sbf_error(SBF_E_FORMAT, "%s: no sequences in file", path);
    return rc;
}

int sbf_read_file(const char *path, int k, int threads, sbf_seqbuf_t *seq)
{
    return sbf_read_file_pieces(path, k, threads, PIECE_BYTES, seq);
}

int sbf_read_file_pieces(const char *path, int k, int threads, size_t piece_bytes, sbf_seqbuf_t *seq)
{
    /* standard input cannot be read twice (a '+' line sends the file back to the records);
     * with fewer than PIECES_MIN_THREADS, the copies cost more than the parsers save */
    if (threads < PIECES_MIN_THREADS || strcmp(path, "-") == 0)
        return read_records(path, k, threads, seq);
    sbf_seqfile_t *f;
    int rc, again = 0;
    if ((rc = sbf_seqfile_open(path, threads, &f)))
        return rc;
    if (strcmp(sbf_seqfile_format(f), "FASTA") != 0) {
        sbf_seqfile_close(f);
        return read_records(path, k, threads, seq);
    }
    sbf_seqbuf_t before = *seq;   /* a read again starts from here */
    rc = read_pieces(f, path, k, threads - 1, piece_bytes ? piece_bytes : 1, seq, &again);
    const int close_rc = sbf_seqfile_close(f);
    if (rc == SBF_OK && close_rc && !again)
        rc = close_rc;
    if (again) {
        sbf_seqbuf_restore(seq, &before);
        return read_records(path, k, threads, seq);
    }
    return rc;
}

typedef struct {
    sbf_seqbuf_t seq;
    int done, rc;
    char *message;   /* the reading thread's error message (messages are per thread) */
} file_slot_t;

typedef struct {
    const char *const *paths;
    int n, k, decompress_threads, window;
    file_slot_t *slot;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int next;     /* next file to read */
    int taken;    /* files handed to take() */
    int stop;     /* an error: read no more */
} read_job_t;

static void *read_worker(void *arg)
{
    read_job_t *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        while (!job->stop && job->next < job->n && job->next >= job->taken + job->window)
            pthread_cond_wait(&job->changed, &job->lock);
        if (job->stop || job->next >= job->n) {
            pthread_mutex_unlock(&job->lock);
            return NULL;
        }
        const int i = job->next++;
        pthread_mutex_unlock(&job->lock);

        file_slot_t *s = &job->slot[i];
        sbf_seqbuf_t seq;
        sbf_seqbuf_init(&seq);
        int rc = sbf_read_file(job->paths[i], job->k, job->decompress_threads, &seq);
        char *message = rc ? strdup(sbf_error_message()) : NULL;

        pthread_mutex_lock(&job->lock);
        s->seq = seq;
        s->rc = rc;
        s->message = message;
        s->done = 1;
        if (rc)
            job->stop = 1;
        pthread_cond_broadcast(&job->changed);
        pthread_mutex_unlock(&job->lock);
    }
}

int sbf_read_files(int n, const char *const *paths, int k, int threads, sbf_file_take_fn take, void *arg)
{
    if (n <= 0)
        return SBF_OK;
    if (threads < 1)
        threads = 1;
    const int readers = threads < n ? threads : n;
    /* threads beyond one per file decompress (a BGZF file reads on several) */
    const int decompress = threads / readers > 1 ? threads / readers : 0;
    int rc = SBF_OK;
    if (readers == 1) {   /* one file, or one thread: no thread of our own */
        for (int i = 0; i < n && rc == SBF_OK; ++i) {
            sbf_seqbuf_t seq;
            sbf_seqbuf_init(&seq);
            if ((rc = sbf_read_file(paths[i], k, decompress, &seq)) == SBF_OK)
                rc = take(arg, i, &seq);
            sbf_seqbuf_free(&seq);
        }
        return rc;
    }
    read_job_t job = {paths, n, k, decompress, 2 * readers, NULL, PTHREAD_MUTEX_INITIALIZER,
                      PTHREAD_COND_INITIALIZER, 0, 0, 0};
    pthread_t *tid = malloc((size_t)readers * sizeof *tid);
    if (!tid || !(job.slot = calloc((size_t)n, sizeof *job.slot))) {
        free(tid);
        return sbf_error(SBF_E_NOMEM, "out of memory");
    }
    int started = 0;
    while (started < readers && pthread_create(&tid[started], NULL, read_worker, &job) == 0)
        ++started;
    if (started == 0)
        rc = sbf_error(SBF_E_NOMEM, "cannot start a thread to read the references");
    for (int i = 0; i < n && rc == SBF_OK; ++i) {
        file_slot_t *s = &job.slot[i];
        pthread_mutex_lock(&job.lock);
        while (!s->done)
            pthread_cond_wait(&job.changed, &job.lock);
        pthread_mutex_unlock(&job.lock);
        if (s->rc)
            rc = sbf_error(s->rc, "%s", s->message ? s->message : "out of memory");
        else
            rc = take(arg, i, &s->seq);
        sbf_seqbuf_free(&s->seq);
        pthread_mutex_lock(&job.lock);
        job.taken = i + 1;
        if (rc)
            job.stop = 1;
        pthread_cond_broadcast(&job.changed);
        pthread_mutex_unlock(&job.lock);
    }
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < n; ++i) {   /* files read past an error */
        sbf_seqbuf_free(&job.slot[i].seq);
        free(job.slot[i].message);
    }
    pthread_mutex_destroy(&job.lock);
    pthread_cond_destroy(&job.changed);
    free(job.slot);
    free(tid);
    return rc;
}
