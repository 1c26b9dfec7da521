/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h5err.h - HDF5's error stack as the library uses it: the innermost cause for our messages, and
 * HDF5's automatic printing switched off for the span of a public call (h5err.c).
 */
#ifndef H5SHUF_H5ERR_H
#define H5SHUF_H5ERR_H

#include <hdf5.h>

#include "base.h"

/* The innermost message on HDF5's default error stack (e.g. "can't open file"), or "unknown HDF5
 * error"; written into buf of size cap.  Clears the stack. */
H5SHUF_INTERNAL const char *h5shuf__hdf5_cause(char *buf, size_t cap);

/* 1 when the HDF5 library in use serialises its calls (H5is_library_threadsafe), else 0: asked once. */
H5SHUF_INTERNAL int h5shuf__hdf5_threadsafe(void);

/* HDF5's automatic error printing, switched off for the span of one public call and restored.  With an
 * HDF5 that is not thread-safe, the span also holds a process-wide lock (recursive), so that the public
 * calls of jobs in separate threads take turns instead of calling HDF5 at once. */
struct h5shuf_quiet {
    H5E_auto2_t func;
    void *data;
};
H5SHUF_INTERNAL void h5shuf__quiet_begin(struct h5shuf_quiet *q);
H5SHUF_INTERNAL void h5shuf__quiet_end(const struct h5shuf_quiet *q);

#ifdef H5SHUF_FAULT_INJECTION
/* Test builds: a file closes only when its last object does (H5F_CLOSE_WEAK), so an object left open
 * keeps its file open, and h5shuf_job_free names both (job.c). */
#define H5Pset_fclose_degree(fapl, degree) H5Pset_fclose_degree(fapl, H5F_CLOSE_WEAK)
#endif

#endif /* H5SHUF_H5ERR_H */
