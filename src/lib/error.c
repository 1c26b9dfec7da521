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

#include "internal.h"

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

struct cause_walk {
    char *buf;
    size_t cap;
};

/* H5Ewalk2 visits the stack from the innermost frame (H5E_WALK_UPWARD); keep the first description. */
static herr_t cause_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    struct cause_walk *w = data;
    if (n == 0) {
        const char *d = e->desc && *e->desc ? e->desc : NULL;
        char minor[128] = "";
        H5Eget_msg(e->min_num, NULL, minor, sizeof minor);
        if (d && *minor)
            snprintf(w->buf, w->cap, "%s (%s)", d, minor);
        else
            snprintf(w->buf, w->cap, "%s", d ? d : (*minor ? minor : "unknown HDF5 error"));
    }
    return 0;
}

const char *h5shuf__hdf5_cause(char *buf, size_t cap)
{
    struct cause_walk w = {buf, cap};
    snprintf(buf, cap, "unknown HDF5 error");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, cause_cb, &w);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}
