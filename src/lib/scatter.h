/*
 * scatter.h - pass 1: the inputs scattered into piles, and the oversize recursion (scatter.c).
 */
#ifndef H5SHUF_SCATTER_H
#define H5SHUF_SCATTER_H

#include "piles.h"

/* Pass 1: read every input in slabs and scatter its rows into plan.piles piles.  On return sc->piles
 * lists them in key order. */
H5SHUF_INTERNAL int h5shuf__scatter(h5shuf_job *job, struct h5shuf_scratch *sc);

/* Oversize handling: split every pile over the bound into sub-piles by key range (recursively).
 * Rewrites sc->piles in key order. */
H5SHUF_INTERNAL int h5shuf__split_oversize(h5shuf_job *job, struct h5shuf_scratch *sc);

#endif /* H5SHUF_SCATTER_H */
