/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * head.h - the first (and last) rows of the output order from the keys alone: the W smallest (key, i)
 * (and the W largest) in one stream over the row ids, kept in binary heaps (head.c).  --head and the
 * mixing report use it; no data is read, and no HDF5.
 */
#ifndef H5SHUF_HEAD_H
#define H5SHUF_HEAD_H

#include "error.h"
#include "sort.h"

struct h5shuf_strata; /* strata.h */

/* In one stream over ids 0 .. rows-1 (those with (key, id) <= *bound when bound is not NULL), keys of
 * seed (stratified by strata when not NULL: strata.h): the w smallest pairs (key, id) into small[0..w) and, when large is not NULL, the w largest into
 * large[0..w), each in heap order (the root, [0], is the w-th smallest, resp. largest).  O(rows log w).
 * Reports rows scanned of rows to progress (H5SHUF_PHASE_SELECT) every H5SHUF_SCAN_STEP_ROWS rows and at
 * the end (error.h); returns H5SHUF_OK, or H5SHUF_ECANCELED (recorded in err) when the callback asks to stop, the
 * heaps then partial. */
H5SHUF_INTERNAL int h5shuf__select_pairs(uint64_t seed, const struct h5shuf_strata *strata, uint64_t rows, struct h5shuf_keyidx *small,
                                         struct h5shuf_keyidx *large, uint64_t w, const struct h5shuf_keyidx *bound,
                                         const struct h5shuf_progress *progress, struct h5shuf_err *err);

/* A head of n of the rows rows: *bound = the n-th smallest (key, id), found with a heap of n pairs
 * (16 bytes each: more than mem_limit_bytes is H5SHUF_EBUDGET), reporting to progress as
 * h5shuf__select_pairs (H5SHUF_ECANCELED when canceled).  Nothing is set when n = 0 or on failure. */
H5SHUF_INTERNAL int h5shuf__head_bound(uint64_t seed, uint64_t rows, uint64_t n, uint64_t mem_limit_bytes,
                                       struct h5shuf_keyidx *bound, const struct h5shuf_progress *progress,
                                       struct h5shuf_err *err);

#endif /* H5SHUF_HEAD_H */
