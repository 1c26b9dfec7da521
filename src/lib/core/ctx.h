/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx.h - what every stage of a run is handed besides its own inputs: where its error goes, the codec
 * threads, and the caller's progress callback.  The job makes one for each run; a stage passes it down.
 */
#ifndef H5SHUF_CTX_H
#define H5SHUF_CTX_H

#include "error.h"

struct h5shuf_chunkio;

struct h5shuf_ctx {
    struct h5shuf_err *err;          /* the first failure is recorded here */
    struct h5shuf_chunkio *cio;      /* the codec threads (chunkio.h); NULL: HDF5 runs every filter */
    struct h5shuf_progress progress; /* rows done, after every block of work */
};

#endif /* H5SHUF_CTX_H */
