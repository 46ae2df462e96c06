/* sbf_queue.c -- bounded blocking queue (see sbf_queue.h). */
#include <stdlib.h>

#include "sbf_queue.h"

int sbf_queue_init(sbf_queue_t *q, size_t cap)
{
    q->items = malloc(cap * sizeof *q->items);
    if (!q->items)
        return -1;
    q->cap = cap;
    q->head = q->n = 0;
    q->closed = q->aborted = 0;
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        free(q->items);
        return -1;
    }
    if (pthread_cond_init(&q->changed, NULL) != 0) {
        pthread_mutex_destroy(&q->lock);
        free(q->items);
        return -1;
    }
    return 0;
}

void sbf_queue_destroy(sbf_queue_t *q)
{
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
    free(q->items);
}

int sbf_queue_push(sbf_queue_t *q, void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->n == q->cap && !q->aborted && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    int rc = -1;
    if (!q->aborted && !q->closed) {
        q->items[(q->head + q->n++) % q->cap] = item;
        rc = 0;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

int sbf_queue_pop(sbf_queue_t *q, void **item)
{
    pthread_mutex_lock(&q->lock);
    while (q->n == 0 && !q->aborted && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    int rc = 0;
    if (!q->aborted && q->n > 0) {
        *item = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        --q->n;
        rc = 1;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

static void set_flag(sbf_queue_t *q, int *flag)
{
    pthread_mutex_lock(&q->lock);
    *flag = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

void sbf_queue_close(sbf_queue_t *q) { set_flag(q, &q->closed); }
void sbf_queue_abort(sbf_queue_t *q) { set_flag(q, &q->aborted); }
