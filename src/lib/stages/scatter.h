/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scatter.h - pass 1: rows of the inputs scattered into piles by key range, and the oversize handling
 * (recursion or restart) that leaves every pile within its bound (scatter.c; docs/design.md section 3).
 */
#ifndef H5SHUF_SCATTER_H
#define H5SHUF_SCATTER_H

#include "inputs.h"
#include "piles.h"
#include "pileset.h"
#include "sort.h"

struct h5shuf_strata; /* strata.h */

/* What pass 1 reads and how.  The rows scattered are the global rows [first_row, end_row) of the inputs
 * (all of them for a serial run; a part for one of several processes), in slabs of plan->slab_rows. */
struct h5shuf_pass1 {
    const struct h5shuf_inputs *inputs;      /* open, their datasets described by the scratch's dsets */
    uint64_t seed;
    const struct h5shuf_strata *strata;      /* --stratify: the order's keys are stratified (strata.h); else NULL */
    uint64_t first_row, end_row;             /* global row ids, first_row <= end_row <= inputs->rows */
    uint64_t total_rows;                     /* rows of the whole pass, for progress reports */
    uint64_t pile_rows;                      /* rows that reach the piles in all (N, or a head's) */
    const struct h5shuf_keyidx *head_bound;  /* a head: only rows with (key, id) <= *head_bound; else NULL */
    h5shuf_plan *plan;                       /* slabs, piles, buffers, bounds; the oversize handling updates
                                              * piles, pile_buffer_rows, restarts and splits */
    h5shuf_oversize on_oversize;
    /* Inputs larger than the page cache (issue 52): each dataset's next slab is read ahead as one span of
     * the file of at most span_bytes, directly (spanread.h), outside the plan's buffers; 0: not. */
    uint64_t span_bytes;
    /* Several processes (docs/design.md section 5) scatter their row ranges into piles of the same key ranges;
     * the oversize handling then decides from each pile's rows (and bytes) over all of them.  sums(user,
     * v, n, err) replaces v[0..n) by its sums over the processes: every process calls it at the same
     * points with the same n (an MPI_Allreduce); a failure is recorded in err and returned.  NULL: one
     * process, whose piles are all there is. */
    int (*sums)(void *user, uint64_t *v, size_t n, struct h5shuf_err *err);
    void *sums_user;
    /* A resumable run (resume.h; NULL otherwise): after each slab, checkpoint(user, rows, ps, err) with the
     * global rows [first_row, rows) scattered into the pile set ps so far; it may save ps
     * (h5shuf__pileset_save) and commit the scratch file.  A failure is recorded in err and returned. */
    int (*checkpoint)(void *user, uint64_t rows, struct h5shuf_pileset *ps, struct h5shuf_err *err);
    /* A resumed pass 1 (NULL: a fresh one): restore(user, ps, err) fills the pile set, opened over the
     * plan's piles and buffer rows, as it was at a checkpoint, and rows [start_row, end_row) remain to be
     * scattered.  A restart of pass 1 begins again at first_row. */
    int (*restore)(void *user, struct h5shuf_pileset *ps, struct h5shuf_err *err);
    uint64_t start_row;
    void *checkpoint_user;
};

/* Pass 1: read the rows in slabs and scatter them into plan->piles piles over the key range (all keys, or
 * up to the head's bound).  On return sc->piles lists them in key order. */
H5SHUF_INTERNAL int h5shuf__scatter(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc);

/* Pass 1 when the rows fit the budget (one pile, no scratch: h5shuf_run's one pass): read rows
 * [p->first_row, p->end_row) into buf, dsets->n + 1 buffers of end_row - first_row rows (each dataset's
 * rows, then the uint64 ids, increasing), in slabs of p->plan->slab_rows decoded by the pool.  Fixed-size
 * rows only; p's piles, head and oversize handling are not used.  Progress as pass 1's; errors name the
 * input, dataset and rows. */
H5SHUF_INTERNAL int h5shuf__pass1_load(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p,
                                       const struct h5shuf_datasets *dsets, unsigned char **buf);
/* The piles of sc as all processes hold them together: g[0..sc->npiles) gets sc's piles with their rows
 * and bytes summed over the processes (p->sums; a copy with one process).  The caller frees *g. */
H5SHUF_INTERNAL int h5shuf__piles_global(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p,
                                         const struct h5shuf_pile *piles, size_t n, struct h5shuf_pile **g);

/* Pass 1 with its oversize handling (p->on_oversize: recursion, splitting each pile over the bound into
 * sub-piles by key range, recursively, counted in plan->splits; or restarts with more piles, and recursion
 * once more piles no longer fit): on return every pile is within its bound, sc->piles in key order. */
H5SHUF_INTERNAL int h5shuf__pass1(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc);

#endif /* H5SHUF_SCATTER_H */
