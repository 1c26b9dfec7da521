/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.c - status texts, the one-line error message of a failed call, and progress reports.
 *
 * The library never prints: the first failure on a path records "FILE:/dataset: cause", and every
 * caller above it only forwards the status.  HDF5's own error stack is silenced during a run; its
 * innermost message (h5err.c) is appended to ours where it says more than we know.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"

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

/* The errno behind the failure the next h5shuf__fail records (h5shuf__err_note_errno). */
static _Thread_local int t_errno;

void h5shuf__err_note_errno(int e)
{
    t_errno = e;
}

int h5shuf__err_disk(const struct h5shuf_err *err)
{
    return err->sys_errno == ENOSPC || err->sys_errno == EDQUOT ? 1 : err->sys_errno == EIO ? 2 : 0;
}

int h5shuf__fail(struct h5shuf_err *err, int status, const char *fmt, ...)
{
    const int e = t_errno;
    t_errno = 0;
    if (err->status == H5SHUF_OK) {
        err->sys_errno = e;
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

void h5shuf__err_reset(struct h5shuf_err *err)
{
    t_errno = 0;
    err->sys_errno = 0;
    err->status = H5SHUF_OK;
    err->msg[0] = '\0';
}

void h5shuf__err_prefix(struct h5shuf_err *err, const char *prefix)
{
    char msg[H5SHUF_ERRMSG_MAX];
    memcpy(msg, err->msg, sizeof msg);
    int n = snprintf(err->msg, sizeof err->msg, "%s", prefix);
    if (n > 0 && (size_t)n < sizeof err->msg) {
        size_t len = strnlen(msg, sizeof err->msg - (size_t)n - 1);
        memcpy(err->msg + n, msg, len);
        err->msg[(size_t)n + len] = '\0';
    }
}

int h5shuf__progress(const struct h5shuf_progress *p, struct h5shuf_err *err, h5shuf_phase phase, uint64_t done,
                     uint64_t total)
{
    if (p->fn && p->fn(p->user, phase, done, total) != 0)
        return h5shuf__fail(err, H5SHUF_ECANCELED, "canceled");
    return H5SHUF_OK;
}

const char *h5shuf__not_regular(unsigned mode)
{
    return S_ISREG(mode)    ? NULL
           : S_ISDIR(mode)  ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}
