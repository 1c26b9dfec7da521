/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mixing.h - the mixing report: how evenly the inputs are spread over the first and the last window of
 * the output (mixing.c; the public h5shuf_job_mixing).
 */
#ifndef H5SHUF_MIXING_H
#define H5SHUF_MIXING_H

#include "inputs.h"
#include "sort.h"

struct h5shuf_strata; /* strata.h */

/* P(X >= chi2) for X ~ chi-square(df); 1 when df = 0. */
H5SHUF_INTERNAL double h5shuf__chi2_upper(double chi2, uint64_t df);

/* The mixing of inputs in (their rows and first rows) over the first and last window of window_rows
 * output rows (0: min(R, 10000)) of an output order of out_rows rows (with a head: those with
 * (key, id) <= *bound, else bound is NULL), keys of seed (stratified by strata when not NULL).  The counts and expected shares live in *store
 * (freed and reallocated here; the caller frees it last).  The scan of all rows' keys reports to progress
 * (H5SHUF_PHASE_SELECT, head.h).  H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_ECANCELED. */
H5SHUF_INTERNAL int h5shuf__mixing(const struct h5shuf_inputs *in, uint64_t seed, const struct h5shuf_strata *strata,
                                   uint64_t out_rows,
                                   const struct h5shuf_keyidx *bound, uint64_t window_rows, uint64_t **store,
                                   h5shuf_mixing *first, h5shuf_mixing *last, const struct h5shuf_progress *progress,
                                   struct h5shuf_err *err);

/* The mixing of every window of about window_rows rows (h5shuf_mixing_windows, h5shuf.h) of an output order
 * of out_rows rows (a head: bound, else NULL), from the keys of seed (and strata): one scan of the N keys (progress:
 * H5SHUF_PHASE_SELECT).  H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_ECANCELED. */
H5SHUF_INTERNAL int h5shuf__mixing_windows(const struct h5shuf_inputs *in, uint64_t seed,
                                           const struct h5shuf_strata *strata, uint64_t out_rows,
                                           const struct h5shuf_keyidx *bound, uint64_t window_rows,
                                           h5shuf_mixing_windows *out, const struct h5shuf_progress *progress,
                                           struct h5shuf_err *err);

#endif /* H5SHUF_MIXING_H */
