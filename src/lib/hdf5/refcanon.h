/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * refcanon.h - rows of references made comparable across files, for verify.c: each reference replaced by
 * a value of what it points at, the same in an input and in the output (refcanon.c).
 */
#ifndef H5SHUF_REFCANON_H
#define H5SHUF_REFCANON_H

#include <hdf5.h>

#include "datasets.h"
#include "refmap.h"

/* The objects of an output file by the value they are hashed as, and the side being hashed now. */
struct h5shuf_refcanon {
    char **path;                 /* the output's objects, each by the first path a walk by name finds */
    haddr_t *addr;               /* their addresses in the output */
    size_t n, cap;
    struct h5shuf_addrmap out;   /* output address -> value */
    struct h5shuf_addrmap in;    /* the input being hashed: its address -> value */
    const struct h5shuf_datasets *dsets; /* the shuffled datasets (not owned) */
    uint64_t *shuffled;          /* their values (dsets->n) */
    hid_t file;                  /* the file being hashed (not owned) */
    int output;                  /* it is the output */
};

/* Walk the output file out (open) for its objects and values; the shuffled datasets are dsets'.  Then
 * h5shuf__refcanon_input or _output says which side h5shuf__refcanon_rows hashes.  H5SHUF_OK,
 * H5SHUF_ENOMEM, or H5SHUF_EHDF5 naming name (the output's name).  Free with h5shuf__refcanon_free, also
 * after a failure. */
H5SHUF_INTERNAL int h5shuf__refcanon_open(struct h5shuf_refcanon *rc, hid_t out, const struct h5shuf_datasets *dsets,
                                          const char *name, struct h5shuf_err *err);
/* Hash an input next: file (open), its shuffled datasets dsets[0..n) (open, in the order of the
 * datasets given to h5shuf__refcanon_open), each of which takes
 * its output dataset's value; every other object the output holds takes its value through the same path
 * in file (hard links only, as h5shuf maps them: objcopy.c).  H5SHUF_OK or H5SHUF_ENOMEM. */
H5SHUF_INTERNAL int h5shuf__refcanon_input(struct h5shuf_refcanon *rc, hid_t file, const hid_t *dsets,
                                           struct h5shuf_err *err);
/* Hash the output (the file given to h5shuf__refcanon_open) next. */
H5SHUF_INTERNAL void h5shuf__refcanon_output(struct h5shuf_refcanon *rc, hid_t out);
/* Replace each reference held by the n elements of type t in buf (raw rows of a dataset of references)
 * by its value: an object reference by its target's (8 bytes), a region reference by its dataset's and
 * 4 bytes of a hash of its selection.  A null reference, and in an input one whose target the output
 * does not hold (or a region of a shuffled dataset: both refused, or made null by --drop-references),
 * becomes zeros; in the output one to an object no link reaches becomes all ones.  H5SHUF_OK or an error
 * naming where. */
H5SHUF_INTERNAL int h5shuf__refcanon_rows(struct h5shuf_refcanon *rc, hid_t t, void *buf, size_t n, const char *where,
                                          struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__refcanon_free(struct h5shuf_refcanon *rc);

#endif /* H5SHUF_REFCANON_H */
