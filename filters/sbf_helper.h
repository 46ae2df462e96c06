/* sbf_helper.h -- a thread that runs one task at a time for its owner, kept from task to task:
 * the owner hands it a share of the work, does its own share, then waits (a thread made per
 * batch cost 20-50 us a batch). Used by the reader (mate 2's records, half of the pairing), each
 * file's read-ahead (the next block), the writer (half of the output files) and the CPU
 * engine's query threads. One owner thread per helper. */
#ifndef SBF_HELPER_H
#define SBF_HELPER_H

#include <pthread.h>

typedef struct {
    pthread_t tid;
    int running, quit;
    void *(*fn)(void *);   /* the task asked for, NULL when done */
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} sbf_helper_t;

/* fn(arg) on the helper thread (started on first use); 1, or 0 when no thread can be had:
 * then the caller runs fn(arg) itself. */
int sbf_helper_run(sbf_helper_t *h, void *(*fn)(void *), void *arg);
/* Until the task handed over is done. */
void sbf_helper_wait(sbf_helper_t *h);
/* Ends the thread (after its task); the helper can be used again. */
void sbf_helper_stop(sbf_helper_t *h);

#endif
