/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h5shuf_debug.h - test knobs of libh5shuf, for the tool's --debug-* options and the test suites.
 *
 * Not part of the API: this header is not installed, and its keys and their meanings may change in any
 * release without a new SONAME (the public structs of h5shuf.h, which must stay stable, do not hold them).
 * Every knob keeps the output bytes the seed and the inputs decide (docs/design.md section 2); they make
 * small data take paths that large data takes (recursion, restarts) or let a test fill a disk.
 */
#ifndef H5SHUF_DEBUG_H
#define H5SHUF_DEBUG_H

#include "h5shuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum h5shuf_debug_key {
    /* Nonzero: the oversize bound of every pile, in rows, replacing s + 6*sqrt(s) (it may only lower it);
     * the direct path's windows are bounded by it too.  Forces recursion, restarts and window halving on
     * small data, and keeps the plan from reading all rows in one pass. */
    H5SHUF_DEBUG_PILE_BOUND_ROWS = 1,
    /* Nonzero: no free-space check before a run, so that a test can fill a disk in the middle of a pass. */
    H5SHUF_DEBUG_SKIP_SPACE_CHECK = 2
} h5shuf_debug_key;

/* Set a test knob of a job that is not planned yet (0 turns it off again).  Returns H5SHUF_OK, or
 * H5SHUF_EINVAL for an unknown key or a job already planned (h5shuf_errmsg says which). */
H5SHUF_API int h5shuf_job_set_debug(h5shuf_job *job, h5shuf_debug_key key, uint64_t value);

#ifdef __cplusplus
}
#endif

#endif /* H5SHUF_DEBUG_H */
