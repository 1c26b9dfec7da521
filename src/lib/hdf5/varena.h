/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * varena.h - the byte arena that variable-length rows' payload lives in, and where a buffer of such rows
 * keeps their lengths (varena.c); shared by vlen.c (sequences, strings) and vlenrec.c (compound and array
 * rows with vlen members), below both.
 */
#ifndef H5SHUF_VARENA_H
#define H5SHUF_VARENA_H

#include "datasets.h"

/* A growable byte buffer; data == NULL when empty. */
struct h5shuf_varena {
    unsigned char *data;
    uint64_t n, cap;
    uint64_t written; /* a pile buffer's: payload elements already in its scratch dataset */
};

/* Grow a to hold at least need bytes; < 0: no memory. */
H5SHUF_INTERNAL int h5shuf__varena_reserve(struct h5shuf_varena *a, uint64_t need);
H5SHUF_INTERNAL void h5shuf__varena_free(struct h5shuf_varena *a);
/* Where the lengths of n rows of vlen dataset ds lie in buf (n * ds->elems uint64 at the end of its n
 * rows): see vlen.h, h5shuf__vlen_load_lengths. */
H5SHUF_INTERNAL unsigned char *h5shuf__vlen_lengths(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n);

#endif /* H5SHUF_VARENA_H */
