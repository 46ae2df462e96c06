/* sbf_build_read.c -- reading reference files for a build (see sbf_build_read.h).
 *
 * A human reference comes as one file per chromosome as often as one file: read one after the
 * other, 3.1 Gbp took 23 s of the 67 s GPU build (issue 27; parsing and translating at about
 * 130 MB/s a thread). Several files are read at once, each by its own thread into its own
 * buffer, and handed over in the order given, so the target's sequence is the same bytes
 * whatever the thread count. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bam/sbf_seqio.h"
#include "../filters/sbf_error.h"
#include "../filters/sbf_kmer.h"
#include "sbf_build_read.h"

int sbf_read_file(const char *path, int k, int threads, sbf_seqbuf_t *seq)
{
    sbf_seqfile_t *f;
    int rc;
    if ((rc = sbf_seqfile_open(path, threads, &f)))
        return rc;
    sbf_seqrec_t rec = {{0, 0, NULL}, {0, 0, NULL}};
    long long records = 0;
    while ((rc = sbf_seqfile_read(f, &rec)) == 1) {
        ++records;
        if ((rc = sbf_seqbuf_append(seq, sbf_nt4_ascii, (const uint8_t *)rec.seq.s, rec.seq.l, k)))
            break;
    }
    sbf_seqrec_free(&rec);
    int close_rc = sbf_seqfile_close(f);
    if (rc == SBF_OK && close_rc)
        rc = close_rc;
    if (rc == SBF_OK && records == 0)
        rc = sbf_error(SBF_E_FORMAT, "%s: no sequences in file", path);
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
