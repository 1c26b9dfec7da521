/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gather.h - pass 2: each pile loaded, sorted by key and written in order (gather.c;
 * docs/design.md section 3).
 */
#ifndef H5SHUF_GATHER_H
#define H5SHUF_GATHER_H

#include "piles.h"
#include "targets.h"
#include "writer.h"

struct h5shuf_strata; /* strata.h */

/* What pass 2 reads: a run of consecutive piles of a scratch (or pile) file, in key order.  Their rows,
 * sorted, are output rows [first_row, first_row + their rows) (all piles of a serial run: rows 0 .. R-1),
 * of which rows [put_first, put_end) are put into the outputs. */
struct h5shuf_varena; /* vlen.h */

struct h5shuf_pass2 {
    const struct h5shuf_scratch *sc;  /* the file and what a pile holds */
    const struct h5shuf_pile *piles;  /* piles[0 .. npiles), consecutive in key order */
    size_t npiles;
    uint64_t seed;
    const struct h5shuf_strata *strata; /* --stratify: the order's keys are stratified (strata.h); else NULL */
    int pipelined;                    /* the plan overlaps loads with work (h5shuf_plan.pipelined) ... */
    uint64_t mem_limit_bytes;         /* ... when two of the largest piles and the bands fit this */
    uint64_t band_bytes;              /* the writer's bands (h5shuf__writer_bytes) */
    uint64_t first_row;               /* the output row of the first pile's first row */
    uint64_t put_first, put_end;      /* the output rows put (a serial run: 0, UINT64_MAX) */
    int release;                      /* the run's own scratch, each pile read once: a pile's blocks are
                                       * given back once it is loaded (h5shuf__pile_release) */
    int advise;                       /* the piles do not stay in the page cache: each pile's reads are
                                       * asked of the disk two piles ahead (ioahead.h) */
    /* Several processes (docs/design.md section 5): each pile's rows are spread over them.  NULL: load piles
     * from sc.  Else load(user, j, buf, err) fills buf (dsets->n + 1 buffers of piles[j].rows rows: each
     * dataset's, then the ids, in increasing id) with pile j's rows from all processes (vlen rows as
     * records pointing into payload the callee keeps until its next call), never pipelined.  A failure is recorded in err and returned. */
    int (*load)(void *user, size_t j, unsigned char **buf, struct h5shuf_err *err);
    void *load_user;
};

/* Load pile p of sc whole into buf (sc->dsets->n + 1 buffers of at least p->rows rows): a process's part
 * of a pile, for a distributed pass 2 to send.  A vlen dataset's rows are loaded as their lengths, at the
 * end of its buffer's p->rows rows (h5shuf__vlen_lengths), with their payload appended to arena[vslot]
 * (sc->dsets->nvlen arenas; NULL without vlen datasets): h5shuf__vlen_point makes the records. */
H5SHUF_INTERNAL int h5shuf__gather_load(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc,
                                        const struct h5shuf_pile *p, unsigned char **buf, struct h5shuf_varena *arena);

/* Pass 2: for each pile, load it, sort its rows by (key, id) and put those of output rows [put_first,
 * put_end) into the output files through out and the writer w (open, its position at the first of them).
 * The caller flushes w. */
H5SHUF_INTERNAL int h5shuf__gather(const struct h5shuf_ctx *cx, const struct h5shuf_pass2 *p, struct h5shuf_targets *out,
                                   struct h5shuf_writer *w);

#endif /* H5SHUF_GATHER_H */
