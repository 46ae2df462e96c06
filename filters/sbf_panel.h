/* sbf_panel.h -- which targets of an index share a panel, and in which columns (doc/format.md,
 * "Panels"; the rule is written down in doc/decisions.md, "Many targets"). */
#ifndef SBF_PANEL_H
#define SBF_PANEL_H

#include <stdint.h>

/* How much larger than its budget a target may grow to share a panel, and a panel than its
 * targets' budgets together (unused columns included): 1/4 when the size comes from
 * --bits-per-kmer; 0 with --size, which asks for an exact size. */
#define SBF_PANEL_SLACK 0.25

typedef struct {
    int panel;            /* 0 .. n_panels - 1 */
    unsigned col0, cols;  /* its columns */
} sbf_panel_slot_t;

typedef struct {
    uint64_t n_shards;    /* shards per column */
    unsigned log2_width;  /* 0: a plain panel of one target */
} sbf_panel_shape_t;

/* The panels of n targets whose budgets are want[t] shards (>= 1, <= 2^32 each): slot[t] for
 * every target, shape[0 .. *n_panels) (shape has room for n). Every target gets at least its
 * budget; panels are numbered in the order of their first target, columns in target order.
 * SBF_OK or SBF_E_NOMEM. */
int sbf_panel_plan(const uint64_t *want, int n, double slack, sbf_panel_slot_t *slot, sbf_panel_shape_t *shape,
                   int *n_panels);

#endif
