/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slabs.h - pass 1's input slabs (slabs.c): the inputs' rows read a slab at a time, cut at every input's end
 * and every multiple of the plan's slab rows, each dataset's chunks decoded by the pool (docs/design.md
 * section 3); a small input mapped when scanned is read with pread() (inmap.h), and a dataset whose chunks do not
 * tile the slabs keeps its last decoded chunk row (plan.h h5shuf__plan_slab_cached).  Used by pass 1's
 * scatter and by the one pass's load (scatter.c).
 */
#ifndef H5SHUF_SLABS_H
#define H5SHUF_SLABS_H

#include "chunkio.h"
#include "ctx.h"
#include "datasets.h"
#include "inputs.h"

/* Slab buffers, one per dataset plus ids (h5shuf__bufs_alloc).  A vlen dataset's records point into HDF5's
 * allocations, or (sequences the bound could read, vlen.h h5shuf__vlen_read_arena) into the slab's arena
 * of its vlen slot, kept from slab to slab so that its memory is touched once. */
struct h5shuf_slab {
    unsigned char **buf;
    uint64_t rows;
    struct h5shuf_varena *va; /* nvlen arenas (NULL: none, HDF5 reads every vlen row) */
    unsigned char *in_arena;  /* per dataset: 1 when its records point into va */
};

/* A slab of pass 1: rows [start, start + n) of input f. */
struct h5shuf_slab_pos {
    size_t f;
    uint64_t start, n;
};

/* One chunk row of a dataset, decoded, kept between slabs when the dataset's chunks do not tile them
 * (plan.h h5shuf__plan_slab_cached): a chunk row that k slabs meet is then decoded once, not k times. */
struct h5shuf_chunk_cache {
    unsigned char *buf; /* cap_rows rows (NULL: the dataset has none) */
    uint64_t cap_rows;
    size_t f;           /* it holds rows [first, first + rows) of input f; none while rows is 0 */
    uint64_t first, rows;
};

/* Read rows [start, start + n) of input f (its rows in the permutation) of dataset ds, open as dset, into
 * buf (n rows; vlen rows into HDF5's allocations, as h5shuf__vlen_read): the file's rows, or a sampled
 * copy's (inputs.h), read in pieces of SAMPLED_PIECE_BYTES (4 MiB) of the file's rows and kept when
 * the sample has them.  Returns 0, or < 0 with the cause on HDF5's error stack. */
H5SHUF_INTERNAL herr_t h5shuf__input_rows_read(struct h5shuf_chunkio *cio, const struct h5shuf_inputs *in, size_t f,
                                               const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t vlen_limit,
                                               uint64_t start, uint64_t n, unsigned char *buf);

/* Make sl's buffers for rows rows of each dataset and the ids (vlen datasets' zeroed), and its empty vlen
 * arenas.  H5SHUF_OK, or the status recorded in err (out of memory); h5shuf__slab_free either way. */
H5SHUF_INTERNAL int h5shuf__slab_alloc(const struct h5shuf_datasets *dsets, struct h5shuf_slab *sl, uint64_t rows,
                                       struct h5shuf_err *err);
/* Free the vlen data HDF5 allocated for the slab's rows and zero its vlen records (the arenas are kept for
 * the next slab); safe on a zeroed slab: h5shuf__slab_alloc zeroes. */
H5SHUF_INTERNAL void h5shuf__slab_release(const struct h5shuf_datasets *dsets, struct h5shuf_slab *sl);
/* Free all of sl (a zeroed sl too), after h5shuf__slab_release when its records may be HDF5's (a slab whose
 * records the caller pointed elsewhere, as the oversize split does, is freed without it). */
H5SHUF_INTERNAL void h5shuf__slab_free(const struct h5shuf_datasets *dsets, struct h5shuf_slab *sl);

/* The slab after pos (the first one when pos->f == SIZE_MAX) of the global rows [first_row, end_row) of
 * in, in slabs of slab rows; 0 when there is none.  Slabs are the rows cut at every input's end and every
 * multiple of slab from an input's first row. */
H5SHUF_INTERNAL int h5shuf__slab_next(const struct h5shuf_inputs *in, uint64_t first_row, uint64_t end_row,
                                      uint64_t slab, struct h5shuf_slab_pos *pos);

/* Start reading slab pos of in into sl: pipelined, decoded by the pool (pf: one prefetch per dataset) while
 * the caller scatters another; else read whole before the call returns (without a copy of its stored
 * chunks, which only the pipelined plan counts).  cache: one per dataset (buf NULL: none), or NULL.
 * spans (pipelined only; NULL: none): the slab's stored chunks are taken from the spans read ahead when
 * they were (spanread.h), and ahead, the slab after this one (NULL: none), is asked for.  H5SHUF_OK, or
 * an error naming the input, dataset and rows. */
struct h5shuf_spanread;
H5SHUF_INTERNAL int h5shuf__slab_start(const struct h5shuf_ctx *cx, const struct h5shuf_inputs *in,
                                       const struct h5shuf_datasets *dsets, const struct h5shuf_slab_pos *pos,
                                       struct h5shuf_slab *sl, struct h5shuf_prefetch **pf, int pipelined,
                                       struct h5shuf_chunk_cache *cache, struct h5shuf_spanread *spans,
                                       const struct h5shuf_slab_pos *ahead);
/* Wait for a pipelined slab_start's decoding.  H5SHUF_OK, or an error naming the input, dataset and rows. */
H5SHUF_INTERNAL int h5shuf__slab_finish(const struct h5shuf_ctx *cx, const struct h5shuf_inputs *in,
                                        const struct h5shuf_datasets *dsets, const struct h5shuf_slab_pos *pos,
                                        struct h5shuf_prefetch **pf);

#endif /* H5SHUF_SLABS_H */
