/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuts.h - where the processes' output ranges cut the piles (cuts.c): the row of a pile at which one
 * process's rows end and the next one's begin, found by all processes together, so that each sends a
 * process gathering part of a pile only that process's rows of it.
 *
 * A pile's rows, sorted by (key, id), are output rows [start_j, start_j+1); a boundary c of the
 * processes' output ranges with start_j < c < start_j+1 cuts it: the rows before c go to one process,
 * the others to the next.  The cut is the (key, id) of the row at output row c: every process can tell
 * from its own rows' keys alone which side each is on.  Each process holds a part of every pile, so the
 * cut is the (c - start_j)-th smallest (key, id) of P sorted lists; it is found by bisection of the
 * (key, id) range, all cuts at once, each step one sum over the processes of each process's count below
 * 31 points of each cut's interval (keys are uniform: about log32(rows of the pile) + 1 steps).
 */
#ifndef H5SHUF_MPI_CUTS_H
#define H5SHUF_MPI_CUTS_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "comm.h"
#include "ctx.h"
#include "piles.h"

struct h5shuf_strata; /* strata.h */

/* The cuts of a run's piles: n of them, in increasing output row. */
struct h5shuf_cuts {
    size_t n;
    uint64_t *row;      /* the output row of each cut (strictly inside its pile) */
    h5shuf_u128 *at;    /* the cut: (key << 64 | id) of the row at that output row; rows below go before */
    uint64_t *below;    /* this process's rows of the cut's pile below the cut */
};

/* Find every cut of the piles g[0 .. sc->npiles) (their first output rows start[0 .. npiles]) by the
 * output ranges [a[q], b[q]) of the c->size processes (collective: every process calls it with the same
 * g, start, a, b).  sc: this process's parts of the piles; seed and strata make the keys (as the gather's
 * sort).  mem_bytes bounds the sorted keys held at once (40 bytes a row of this process's parts of the
 * piles cut, as many piles at once as fit, at least one).  *sent grows by the bytes this process gave
 * MPI.  H5SHUF_OK, or an error in cx->err (a pile that cannot be read, keys outside their pile's range:
 * EINTERNAL; ECANCELED when another process failed).  Free with h5shuf_cuts_free (also after an error). */
int h5shuf_cuts_find(const struct h5shuf_ctx *cx, struct h5shuf_comm *c, const struct h5shuf_scratch *sc,
                     const struct h5shuf_pile *g, const uint64_t *start, const uint64_t *a, const uint64_t *b, uint64_t seed,
                     const struct h5shuf_strata *strata, uint64_t mem_bytes, struct h5shuf_cuts *cuts, uint64_t *sent);
void h5shuf_cuts_free(struct h5shuf_cuts *cuts);

/* The cut at output row `row` (the index into cuts), or -1 when no cut is there (a pile's edge, or the
 * end of the output). */
ptrdiff_t h5shuf_cuts_at(const struct h5shuf_cuts *cuts, uint64_t row);

#endif /* H5SHUF_MPI_CUTS_H */
