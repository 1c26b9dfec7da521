/*
 * gather.h - pass 2: each pile loaded, sorted by key and written in order (gather.c; DESIGN.md
 * section 3).
 */
#ifndef H5SHUF_GATHER_H
#define H5SHUF_GATHER_H

#include "piles.h"
#include "targets.h"
#include "writer.h"

/* What pass 2 reads: a run of consecutive piles of a scratch (or pile) file, in key order.  Their rows,
 * sorted, are output rows [w->pos, w->pos + their rows) (all piles of a serial run: rows 0 .. R-1). */
struct h5shuf_pass2 {
    const struct h5shuf_scratch *sc;  /* the file and what a pile holds */
    const struct h5shuf_pile *piles;  /* piles[0 .. npiles), consecutive in key order */
    size_t npiles;
    uint64_t seed;
    int pipelined;                    /* the plan overlaps loads with work (h5shuf_plan.pipelined) ... */
    uint64_t mem_limit_bytes;         /* ... when two of the largest piles and the bands fit this */
    uint64_t band_bytes;              /* the writer's bands (h5shuf__writer_bytes) */
};

/* Pass 2: for each pile, load it, sort its rows by (key, id) and put them into the output files through
 * out and the writer w (open, its position at the piles' first output row).  The caller flushes w. */
H5SHUF_INTERNAL int h5shuf__gather(const struct h5shuf_ctx *cx, const struct h5shuf_pass2 *p, struct h5shuf_targets *out,
                                   struct h5shuf_writer *w);

#endif /* H5SHUF_GATHER_H */
