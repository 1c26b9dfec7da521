/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * direct.h - the direct path: rows copied straight from the inputs into output order, for rows large
 * enough that reading one alone is efficient; no scratch file (direct.c; docs/design.md section 3).
 */
#ifndef H5SHUF_DIRECT_H
#define H5SHUF_DIRECT_H

#include "inputs.h"
#include "plan.h"
#include "sort.h"
#include "targets.h"
#include "writer.h"

struct h5shuf_strata; /* strata.h */

/* Rows of at least this many bytes are read one at a time; smaller ones are held whole when they fit. */
#define H5SHUF_DIRECT_HELD_ROW_BYTES_MAX (64u << 10)
/* A row (of the datasets read one at a time) of at least this many bytes takes the direct path when the
 * plan may choose (measured: docs/benchmark.md, "Large records"). */
#define H5SHUF_DIRECT_ROW_BYTES_MIN (1u << 20)

/* How the direct path holds the datasets of a job: held[d] nonzero for a dataset read whole into memory
 * (the smallest rows, under H5SHUF_DIRECT_HELD_ROW_BYTES_MAX, while all of them take at most a quarter
 * of mem_limit_bytes); the others are read row by row. */
struct h5shuf_direct_rows {
    unsigned char *held;     /* dsets->n flags, owned (free) */
    uint64_t held_bytes;     /* rows * plan_row_bytes of the held datasets */
    uint64_t read_row_bytes; /* plan_row_bytes of the others, one row */
    uint64_t chunk_rows;     /* the most rows one read of a row decodes: 1 when every input of every dataset
                              * read row by row is contiguous, compact or chunked one row at a time */
};

/* Decide which datasets are held (above) and how many rows a row read decodes, from the inputs' layouts.
 * H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_EHDF5 (naming the input) in err. */
H5SHUF_INTERNAL int h5shuf__direct_rows(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                                        uint64_t mem_limit_bytes, struct h5shuf_direct_rows *out, struct h5shuf_err *err);

/* What the direct path reads. */
struct h5shuf_direct {
    const struct h5shuf_inputs *inputs;
    const struct h5shuf_datasets *dsets;
    const struct h5shuf_direct_rows *rows;
    const struct h5shuf_direct_plan *plan;
    uint64_t seed;
    const struct h5shuf_strata *strata;     /* --stratify: the order's keys are stratified (strata.h); else NULL */
    const struct h5shuf_keyidx *head_bound; /* a head: the largest (key, id) written; NULL: every row */
    uint64_t put_first;  /* output rows before this one are not put (a resumed run's, written before) */
    uint64_t put_end;    /* nor rows from this one on (a process of a distributed run puts its range
                          * [put_first, put_end)); 0: to the end */
};

/* Put every row of the output order (from p->put_first, to p->put_end) into the output files through out and the writer w
 * (at output row p->put_first): the held datasets read whole first, then for each window of keys the ids sorted by (key, id)
 * and their rows read in that order, the next ones decoded by the pool while this one is written.  The
 * caller flushes w.  Errors name the input file, dataset and row. */
H5SHUF_INTERNAL int h5shuf__direct(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, struct h5shuf_targets *out,
                                   struct h5shuf_writer *w);

#endif /* H5SHUF_DIRECT_H */
