/* sbf_queue.h -- a bounded, blocking queue of pointers between pipeline threads. */
#ifndef SBF_QUEUE_H
#define SBF_QUEUE_H

#include <pthread.h>
#include <stddef.h>

typedef struct {
    void **items;
    size_t cap, head, n;
    int closed;    /* no more pushes: pops drain what is left, then return 0 */
    int aborted;   /* stop now: pops return 0 and pushes fail at once */
    pthread_mutex_t lock;
    pthread_cond_t changed;
} sbf_queue_t;

int sbf_queue_init(sbf_queue_t *q, size_t cap);
void sbf_queue_destroy(sbf_queue_t *q);
/* Blocks while full. 0, or -1 if the queue was aborted (or closed). */
int sbf_queue_push(sbf_queue_t *q, void *item);
/* Blocks while empty. 1 with *item, or 0 when closed and drained, or aborted. */
int sbf_queue_pop(sbf_queue_t *q, void **item);
void sbf_queue_close(sbf_queue_t *q);
void sbf_queue_abort(sbf_queue_t *q);

#endif
