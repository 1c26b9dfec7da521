/*
 * error.c - status texts and the job's one-line error message.
 *
 * The library never prints: the first failure on a path records "FILE:/dataset: cause" in the job, and
 * every caller above it only forwards the status.  HDF5's own error stack is silenced during a run;
 * its innermost message is appended to ours where it says more than we know.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "job.h"

const char *h5shuf_strerror(int status)
{
    switch (status) {
#define H5SHUF_CASE_(name, value, text) \
    case value:                         \
        return text;
        H5SHUF_STATUS_LIST(H5SHUF_CASE_)
#undef H5SHUF_CASE_
    default:
        return "unknown status";
    }
}

int h5shuf__fail(struct h5shuf_err *err, int status, const char *fmt, ...)
{
    if (err->status == H5SHUF_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* One line: a message is printed as "h5shuf: <msg>" by the tool. */
        for (char *p = err->msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        err->status = status;
    }
    return status;
}

void h5shuf__err_clear(h5shuf_job *job)
{
    job->err.status = H5SHUF_OK;
    job->err.msg[0] = '\0';
}

int h5shuf__progress(h5shuf_job *job, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    if (job->opts.progress && job->opts.progress(job->opts.progress_user, phase, done, total) != 0)
        return h5shuf__fail(&job->err, H5SHUF_ECANCELED, "canceled");
    return H5SHUF_OK;
}
