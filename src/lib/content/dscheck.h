/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dscheck.h - an input dataset looked at before its rows are shuffled (dscheck.c): that its path names a
 * dataset, its type and shape (struct h5shuf_shape), that its rows can be moved (a supported type, rank
 * >= 1, rows of a non-zero size), that its filters can be loaded, and that a later input's dataset matches
 * the first input's, which describes the shuffled dataset.  Each failure is one h5shuf_err naming
 * file:path and the cause.  inputs.c calls these for every dataset of every input.
 */
#ifndef H5SHUF_DSCHECK_H
#define H5SHUF_DSCHECK_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "datasets.h"
#include "error.h"

/* The rows of a dataset and how they look: its file type (owned), shape and the bytes of a row in memory. */
struct h5shuf_shape {
    hid_t ftype;
    int rank;
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    uint64_t row_bytes;
    int is_vlen;
};

/* Path must name a dataset of open file fid (called file in messages): "no such dataset", a dangling
 * link, or another kind of object are refused by name. */
H5SHUF_INTERNAL int h5shuf__check_object(hid_t fid, const char *file, const char *path, struct h5shuf_err *err);

/* Read dset's type and shape into *sh and check its rows can be shuffled: a supported type, rank >= 1,
 * rows of a non-zero size that fits 64 bits.  sh->ftype is the caller's to close (also on failure). */
H5SHUF_INTERNAL int h5shuf__read_shape(hid_t dset, const char *file, const char *path, struct h5shuf_shape *sh,
                                       struct h5shuf_err *err);

/* The first input's dataset describes shuffled dataset ds: its type (taken from sh), shape, creation
 * properties, and for vlen rows their memory types (as vlen dataset number *nvlen, which grows). */
H5SHUF_INTERNAL int h5shuf__describe(struct h5shuf_dsinfo *ds, struct h5shuf_shape *sh, hid_t dset, const char *file,
                                     const char *path, size_t *nvlen, struct h5shuf_err *err);

/* A later input's dataset must have the first input's datatype and row shape. */
H5SHUF_INTERNAL int h5shuf__check_same(const struct h5shuf_dsinfo *ds, const struct h5shuf_shape *sh, const char *file,
                                       const char *path, const char *first, struct h5shuf_err *err);

/* Where a dataset's raw data lies, beyond its own file: the first external file of an external-storage
 * dataset (H5Pset_external) or the first source file other than its own (".") of a virtual dataset, as
 * "DESCRIPTION" in *found (malloc'ed, the caller frees; NULL when its data is all in its own file).  Such
 * a dataset makes h5shuf read a file the input names, which anyone who hands h5shuf an HDF5 file chooses
 * (a secret the runner can read would be copied into an output others can read): unless allow, refused
 * with H5SHUF_EUNSUPPORTED "FILE:PATH: its rows are stored in the external file X; refusing to read it
 * (--allow-external reads it)".  H5SHUF_ENOMEM. */
H5SHUF_INTERNAL int h5shuf__check_storage(hid_t dcpl, const char *file, const char *path, int allow, char **found,
                                          struct h5shuf_err *err);

/* Every filter must be loadable to read the chunks: say which one is missing, and where. */
H5SHUF_INTERNAL int h5shuf__check_filters(hid_t dcpl, const char *file, const char *path, struct h5shuf_err *err);

#endif
