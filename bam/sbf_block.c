/* sbf_block.c -- see sbf_block.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../filters/sbf_mem.h"
#include "sbf_block.h"

/* Blocks nobody holds that a pool keeps for reuse; more are freed (a run of long records
 * makes larger blocks, which would otherwise stay). */
#define IDLE_MAX 2

/* Under AddressSanitizer an idle block's bytes are poisoned: a record still pointing into a
 * block that nobody holds (a pin forgotten, a record kept without sbf_read_own) is reported
 * at its first use, not only once the block is reused and its bytes differ. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define IDLE(b) ASAN_POISON_MEMORY_REGION((b)->data, (b)->cap)
#define HELD(b) ASAN_UNPOISON_MEMORY_REGION((b)->data, (b)->cap)
#else
#define IDLE(b) ((void)(b))
#define HELD(b) ((void)(b))
#endif

sbf_block_t *sbf_block_get(sbf_block_pool_t *pool, size_t min_cap)
{
    /* a pool holds a handful of blocks (those of the batches in flight): a scan for the
     * smallest that fits is enough */
    sbf_block_t *best = NULL;
    for (sbf_block_t *b = pool->all; b; b = b->next)
        if (b->refs == 0 && !b->mapped && b->cap >= min_cap && (!best || b->cap < best->cap))
            best = b;
    if (best) {
        --pool->n_idle;
        HELD(best);
        best->refs = 1;
        best->len = 0;
        return best;
    }
    sbf_block_t *b = calloc(1, sizeof *b);
    if (!b || !(b->data = malloc(min_cap))) {
        free(b);
        return NULL;
    }
    b->cap = min_cap;
    b->refs = 1;
    b->pool = pool;
    b->next = pool->all;
    pool->all = b;
    return b;
}

static void block_free(sbf_block_t *b)
{
    HELD(b);
    if (b->mapped)
        munmap(b->data, b->cap);
    else
        free(b->data);
    free(b);
}

sbf_block_t *sbf_block_get_mapped(sbf_block_pool_t *pool, size_t cap)
{
    for (sbf_block_t *b = pool->all; b; b = b->next)
        if (b->refs == 0 && b->mapped && b->cap == cap) {
            --pool->n_idle;
            HELD(b);
            b->refs = 1;
            b->len = 0;
            return b;
        }
    sbf_block_t *b = calloc(1, sizeof *b);
    void *data = b ? mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    if (data == MAP_FAILED) {
        free(b);
        return NULL;
    }
    b->data = data;
    b->cap = cap;
    b->mapped = 1;
    b->refs = 1;
    b->pool = pool;
    b->next = pool->all;
    pool->all = b;
    return b;
}

void sbf_block_put(sbf_block_t *b)
{
    if (!b || --b->refs > 0)
        return;
    sbf_block_pool_t *pool = b->pool;
    if (pool && pool->n_idle < IDLE_MAX) {
        ++pool->n_idle;
        IDLE(b);
        return;
    }
    if (pool) {   /* one idle block too many: out of the pool's list */
        sbf_block_t **at = &pool->all;
        while (*at != b)
            at = &(*at)->next;
        *at = b->next;
    }
    block_free(b);
}

void sbf_block_pool_close(sbf_block_pool_t *pool)
{
    sbf_block_t *b = pool->all;
    while (b) {
        sbf_block_t *next = b->next;
        if (b->refs == 0)
            block_free(b);
        else
            b->pool = NULL;   /* a batch still holds it */
        b = next;
    }
    pool->all = NULL;
    pool->n_idle = 0;
}

int sbf_pins_add(sbf_pins_t *p, sbf_block_t *b)
{
    if (p->n && p->b[p->n - 1] == b)
        return 0;
    if (sbf_reserve(&p->b, &p->cap, p->n + 1, sizeof *p->b) != 0)
        return -1;
    ++b->refs;
    p->b[p->n++] = b;
    return 0;
}

int sbf_pins_move(sbf_pins_t *dst, sbf_pins_t *src)
{
    if (!src->n)
        return 0;
    if (sbf_reserve(&dst->b, &dst->cap, dst->n + src->n, sizeof *dst->b) != 0)
        return -1;
    memcpy(dst->b + dst->n, src->b, src->n * sizeof *src->b);
    dst->n += src->n;
    src->n = 0;
    return 0;
}

void sbf_pins_release(sbf_pins_t *p)
{
    for (size_t i = 0; i < p->n; ++i)
        sbf_block_put(p->b[i]);
    p->n = 0;
}

void sbf_pins_free(sbf_pins_t *p)
{
    sbf_pins_release(p);
    free(p->b);
    memset(p, 0, sizeof *p);
}
