/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * varena.c - the payload arena of variable-length rows and where a buffer keeps their lengths (varena.h).
 */
#include <stdlib.h>
#include <string.h>

#include "varena.h"

int h5shuf__varena_reserve(struct h5shuf_varena *a, uint64_t need)
{
    if (need <= a->cap)
        return 0;
    if (a->n == 0) { /* nothing to keep: no copy, no moment with both buffers */
        free(a->data);
        a->data = malloc(need);
        a->cap = a->data ? need : 0;
        return a->data ? 0 : -1;
    }
    unsigned char *p = realloc(a->data, need);
    if (!p)
        return -1;
    a->data = p;
    a->cap = need;
    return 0;
}

void h5shuf__varena_free(struct h5shuf_varena *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

unsigned char *h5shuf__vlen_lengths(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n)
{
    /* The lengths go to the end of buf; each record is then built in front of the lengths not yet used
     * (a record is at least as large as a length), so no second buffer is needed. */
    return buf + n * ds->row_bytes - n * ds->elems * sizeof(uint64_t);
}

