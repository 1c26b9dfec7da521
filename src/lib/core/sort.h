/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sort.h - the in-memory sort of pass 2: key/index pairs by key, stable (sort.c).  No HDF5.
 */
#ifndef H5SHUF_SORT_H
#define H5SHUF_SORT_H

#include "base.h"

/* A row's sort record: its key and its index in the pile (indices increase with the global row id). */
struct h5shuf_keyidx {
    uint64_t key;
    uint64_t idx;
};

/* Sort a[0..n) by key, stably (equal keys keep their idx order): one MSD counting pass below the bits all
 * keys share into buckets that fit in the L2 cache, each sorted there by radix and insertion (sort.c has
 * the sources).  Linear in n for uniform keys; correct for any keys.  tmp must hold n records; its
 * contents are lost.  Cannot fail. */
H5SHUF_INTERNAL void h5shuf__sort_keyidx(struct h5shuf_keyidx *a, struct h5shuf_keyidx *tmp, size_t n);

#endif /* H5SHUF_SORT_H */
