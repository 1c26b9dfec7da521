/*
 * h5err.c - HDF5's error stack: its innermost message for our one-line errors, and its automatic
 * printing switched off during a public call (the library never prints).
 */
#include <stdio.h>

#include "fault.h"
#include "h5err.h"

void h5shuf__quiet_begin(struct h5shuf_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void h5shuf__quiet_end(const struct h5shuf_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
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

#ifdef H5SHUF_FAULT_INJECTION
int h5shuf__fault_hdf5(void)
{
    if (!h5shuf__fault())
        return 0;
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_IO, H5E_WRITEERROR, "injected fault");
    return 1;
}
#endif
