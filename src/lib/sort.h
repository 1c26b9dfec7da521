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

/* Stable LSD radix sort of a[0..n) by key, 8 bits a pass, skipping passes whose byte is constant (keys
 * of one pile share their top bits).  tmp must hold n records.  Stable, so equal keys keep idx order. */
H5SHUF_INTERNAL void h5shuf__sort_keyidx(struct h5shuf_keyidx *a, struct h5shuf_keyidx *tmp, size_t n);

#endif /* H5SHUF_SORT_H */
