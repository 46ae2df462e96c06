/* sbf_panel.c -- the panel rule of sbf build. A panel holds targets of about the same size, each
 * in whole columns of n shards: a target whose budget is D shards gets ceil(D / n) columns. One
 * panel is formed at a time around the largest target left, L: for each column count c_L of L
 * (1..64, n = ceil(D_L / c_L)), the smaller targets join in order of size while each stays within
 * the slack of its budget and the columns fit in 64; then the smallest members leave until the
 * panel's whole array (unused columns of its power-of-two width included) is within the slack
 * of its members' budgets. The c_L that gathers the most targets wins, then the narrowest. A
 * target that gathers nobody is a plain panel of its own, at exactly its budget. */
#include <stdlib.h>

#include "sbf_error.h"
#include "sbf_index.h"
#include "sbf_kmer.h"
#include "sbf_panel.h"

static const uint64_t *sort_want;

/* larger budgets first, then target order */
static int by_size(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    if (sort_want[x] != sort_want[y])
        return sort_want[x] > sort_want[y] ? -1 : 1;
    return x - y;
}

static unsigned width_log2(unsigned cols)
{
    unsigned lw = 0;
    while ((1u << lw) < cols)
        ++lw;
    return lw;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Members (indices into left[]) of the panel around left[0] with n shards per column; returns
 * their count, cols[] their column counts. */
static int gather(const uint64_t *want, const int *left, int n_left, uint64_t n, double slack, int *member,
                  unsigned *cols)
{
    const unsigned max_cols = 1u << SBF_MAX_PANEL_LOG2;
    int count = 0;
    unsigned total = 0;
    for (int i = 0; i < n_left && total < max_cols; ++i) {
        const uint64_t d = want[left[i]], c = ceil_div(d, n);
        /* budgets only fall from here on: below n / (1 + slack) not even one column fits */
        if ((double)d * (1.0 + slack) < (double)n)
            break;
        if ((double)(c * n) > (double)d * (1.0 + slack) || total + c > max_cols || c * n > SBF_MAX_SHARDS)
            continue;
        member[count] = i;
        cols[count++] = (unsigned)c;
        total += (unsigned)c;
    }
    /* the whole array, unused columns included, within the slack of the members' budgets */
    while (count > 1) {
        double budget = 0;
        for (int j = 0; j < count; ++j)
            budget += (double)want[left[member[j]]];
        if ((double)n * (double)(1u << width_log2(total)) <= budget * (1.0 + slack))
            break;
        total -= cols[--count];
    }
    return count;
}

int sbf_panel_plan(const uint64_t *want, int n, double slack, sbf_panel_slot_t *slot, sbf_panel_shape_t *shape,
                   int *n_panels)
{
    const int max_cols = 1 << SBF_MAX_PANEL_LOG2;
    int *left = malloc((size_t)n * sizeof *left), *member = malloc((size_t)n * sizeof *member);
    int *best = malloc((size_t)n * sizeof *best), *first = malloc((size_t)n * sizeof *first);
    unsigned *cols = malloc((size_t)n * sizeof *cols), *best_cols = malloc((size_t)n * sizeof *best_cols);
    int rc = SBF_OK, n_left = n, panels = 0;
    if (!left || !member || !best || !first || !cols || !best_cols) {
        rc = sbf_error(SBF_E_NOMEM, "out of memory planning the panels of %d targets", n);
        goto done;
    }
    for (int t = 0; t < n; ++t)
        left[t] = t;
    sort_want = want;
    qsort(left, (size_t)n, sizeof *left, by_size);
    while (n_left > 0) {
        /* alone, as a plain panel: the default */
        int n_best = 1;
        unsigned best_lw = 0;
        uint64_t best_n = want[left[0]];
        best[0] = 0;
        best_cols[0] = 1;
        for (int c0 = 1; c0 <= max_cols && n_left > 1; ++c0) {
            const uint64_t shards = ceil_div(want[left[0]], (uint64_t)c0);
            const int got = gather(want, left, n_left, shards, slack, member, cols);
            if (got < 2 || member[0] != 0)
                continue;
            unsigned total = 0;
            for (int j = 0; j < got; ++j)
                total += cols[j];
            const unsigned lw = width_log2(total);
            if (got > n_best || (got == n_best && lw < best_lw)) {
                n_best = got;
                best_lw = lw;
                best_n = shards;
                for (int j = 0; j < got; ++j) {
                    best[j] = member[j];
                    best_cols[j] = cols[j];
                }
            }
        }
        /* the members, in target order, take consecutive columns */
        for (int j = 0; j < n_best; ++j) {
            slot[left[best[j]]].panel = panels;
            slot[left[best[j]]].cols = best_cols[j];
        }
        shape[panels].n_shards = best_n;
        shape[panels].log2_width = best_lw;
        ++panels;
        /* the rest keep their order of size */
        int kept = 0;
        for (int i = 0, j = 0; i < n_left; ++i) {
            if (j < n_best && best[j] == i) {
                ++j;
                continue;
            }
            left[kept++] = left[i];
        }
        n_left = kept;
    }
    /* panels renumbered in the order of their first target; columns in target order */
    for (int q = 0; q < panels; ++q)
        first[q] = -1;
    int next = 0;
    for (int t = 0; t < n; ++t)
        if (first[slot[t].panel] < 0)
            first[slot[t].panel] = next++;
    for (int q = 0; q < panels; ++q)
        best[first[q]] = q;   /* best: new number -> old */
    {
        sbf_panel_shape_t *old = malloc((size_t)panels * sizeof *old);
        if (!old) {
            rc = sbf_error(SBF_E_NOMEM, "out of memory planning the panels of %d targets", n);
            goto done;
        }
        for (int q = 0; q < panels; ++q)
            old[q] = shape[q];
        for (int q = 0; q < panels; ++q)
            shape[q] = old[best[q]];
        free(old);
    }
    for (int q = 0; q < panels; ++q)
        cols[q] = 0;   /* next free column of each (new) panel */
    for (int t = 0; t < n; ++t) {
        const int q = first[slot[t].panel];
        slot[t].panel = q;
        slot[t].col0 = cols[q];
        cols[q] += slot[t].cols;
    }
    *n_panels = panels;
done:
    free(left);
    free(member);
    free(best);
    free(first);
    free(cols);
    free(best_cols);
    return rc;
}
