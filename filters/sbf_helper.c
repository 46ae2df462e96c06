/* sbf_helper.c -- see sbf_helper.h. */
#include "sbf_helper.h"

static void *helper_main(void *arg)
{
    sbf_helper_t *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->fn && !h->quit)
            pthread_cond_wait(&h->cv, &h->mu);
        if (!h->fn)
            break;
        void *(*fn)(void *) = h->fn, *task = h->arg;
        pthread_mutex_unlock(&h->mu);
        fn(task);
        pthread_mutex_lock(&h->mu);
        h->fn = NULL;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int sbf_helper_run(sbf_helper_t *h, void *(*fn)(void *), void *arg)
{
    if (!h->running) {
        h->fn = NULL;
        h->quit = 0;
        if (pthread_mutex_init(&h->mu, NULL) != 0)
            return 0;
        if (pthread_cond_init(&h->cv, NULL) != 0) {
            pthread_mutex_destroy(&h->mu);
            return 0;
        }
        if (pthread_create(&h->tid, NULL, helper_main, h) != 0) {
            pthread_cond_destroy(&h->cv);
            pthread_mutex_destroy(&h->mu);
            return 0;
        }
        h->running = 1;
    }
    pthread_mutex_lock(&h->mu);
    h->fn = fn;
    h->arg = arg;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return 1;
}

void sbf_helper_wait(sbf_helper_t *h)
{
    if (!h->running)
        return;
    pthread_mutex_lock(&h->mu);
    while (h->fn)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
}

void sbf_helper_stop(sbf_helper_t *h)
{
    if (!h->running)
        return;
    pthread_mutex_lock(&h->mu);
    h->quit = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->tid, NULL);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    h->running = 0;
}
