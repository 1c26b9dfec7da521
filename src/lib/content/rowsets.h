/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rowsets.h - whole-file mode without dimension scales: which length of dim 0 is the rows', or a refusal
 * naming each candidate set (rowsets.c; discover.c gathers the datasets).
 */
#ifndef H5SHUF_ROWSETS_H
#define H5SHUF_ROWSETS_H

#include "error.h"

/* A dataset of the file: its path, the length of its dim 0, and its bytes (elements times the size of an
 * element of its datatype in the file, saturated at UINT64_MAX). */
struct h5shuf_rowcand {
    const char *path;
    uint64_t rows;
    uint64_t bytes;
};

/* The length of dim 0 whose datasets hold the rows of the file named file, from its datasets v[0..n)
 * (n >= 1), in *rows.  The datasets are grouped by length; a group of 2 rows or more is a candidate set.
 * The rows are those of the one candidate set of two datasets or more (or, when there is none, of the
 * only candidate set), when it holds at least half of the bytes of v; without any candidate set, the
 * length most datasets share.  Otherwise H5SHUF_EAMBIGUOUS, with one line in *err naming every
 * candidate set (largest bytes first, six at most) as "FILE:/a,/b (N rows, B bytes)", the spelling that
 * picks it; H5SHUF_ENOMEM.  Paths are borrowed. */
H5SHUF_INTERNAL int h5shuf__rows_by_length(const struct h5shuf_rowcand *v, size_t n, const char *file, uint64_t *rows,
                                           struct h5shuf_err *err);

#endif /* H5SHUF_ROWSETS_H */
