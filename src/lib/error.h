/*
 * error.h - the one-line error message of a failed call, and progress reports.
 *
 * The library never prints: the first failure on a path records "FILE:/dataset: cause" and every caller
 * above it only forwards the status (error.c).
 */
#ifndef H5SHUF_ERROR_H
#define H5SHUF_ERROR_H

#include "base.h"

/* A fixed-size message buffer; errors are formatted "FILE:/dataset: cause". */
#define H5SHUF_ERRMSG_MAX 1024

struct h5shuf_err {
    int status;
    char msg[H5SHUF_ERRMSG_MAX];
};

/* Record an error (printf-style) unless one is already recorded, and return status.  The first error
 * wins: it is the cause; later ones are its consequences during cleanup. */
H5SHUF_INTERNAL int h5shuf__fail(struct h5shuf_err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clear the job's recorded error (each public call starts clean). */
H5SHUF_INTERNAL void h5shuf__err_clear(h5shuf_job *job);

/* Report progress; returns H5SHUF_ECANCELED (recorded) when the callback asks to stop. */
H5SHUF_INTERNAL int h5shuf__progress(h5shuf_job *job, h5shuf_phase phase, uint64_t done, uint64_t total);

#endif /* H5SHUF_ERROR_H */
