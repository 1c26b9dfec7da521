/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * outset.h - what an output file says it is part of, read back for verify (outset.c): the whole output,
 * or one file of a set that cuts the output order into consecutive ranges (K shards, named splits, a
 * head of R rows, or a head cut into shards or splits), and the other files of that set.
 *
 * Every file of a set carries root attributes written by targets.c: h5shuf_row_range [first, end) of the
 * set's R rows (h5shuf_output_rows), h5shuf_shard and h5shuf_shards, or h5shuf_split and h5shuf_splits,
 * and the provenance of provenance.c (h5shuf_seed, h5shuf_inputs, h5shuf_stratify).  Two files belong to
 * one set when their seed, R, shard count or --split text, inputs and strata are the same.  Each
 * attribute is read only after its dataspace and type are checked (attrs.h h5shuf__attr_get_*).
 */
#ifndef H5SHUF_OUTSET_H
#define H5SHUF_OUTSET_H

#include "error.h"
#include "inputs.h"
#include "strata.h"

enum h5shuf_outkind {
    H5SHUF_OUT_WHOLE,  /* one file of all the inputs' rows, no range attributes */
    H5SHUF_OUT_ONE,    /* one file with a range: a head (all R rows of the set) */
    H5SHUF_OUT_SHARDS, /* K shards */
    H5SHUF_OUT_SPLITS  /* named splits */
};

/* One file of a set: rows [first, first + rows) of the set's order. */
struct h5shuf_outpart {
    char *path;
    uint64_t first, rows;
};

/* An output set: its files in the order of their rows (a whole output: one file). */
struct h5shuf_outset {
    enum h5shuf_outkind kind;
    size_t n;
    struct h5shuf_outpart *v;
    uint64_t rows;    /* R: the rows of all its files (a whole output: 0, the inputs' rows) */
    int has_seed;
    uint64_t seed;    /* h5shuf_seed, when has_seed */
    char *inputs;     /* h5shuf_inputs: "SPEC[@W]" of each input as the run took it, one a line; or NULL */
    char *stratify;   /* h5shuf_stratify: the groups of a stratified order (strata.h), or NULL */
    size_t found;     /* files found beside the given ones by their names */
};

/* Open the output file at path (named name in messages) read-only into *file, refusing what is not an
 * HDF5 file (a FIFO, a directory: before HDF5 would block on it).  H5SHUF_OK, H5SHUF_ENOTHDF5, H5SHUF_EIO
 * (out of file descriptors, said so) or H5SHUF_EHDF5. */
H5SHUF_INTERNAL int h5shuf__outset_open(const char *path, const char *name, hid_t *file, struct h5shuf_err *err);

/* The set of the output file at path: read its root attributes; for a file of a set, take from the end
 * of in (plain specs, not the first input) the files that belong to the same set, and find the files
 * still missing beside path, named as targets.c names them (its shard number or split name replaced).
 * The files' ranges must cut [0, R) into consecutive pieces.  H5SHUF_OK; H5SHUF_EMISMATCH naming a file
 * that is missing, given twice or of another set; H5SHUF_ENOTHDF5 or H5SHUF_EHDF5 for a path that is
 * no HDF5 file; H5SHUF_ENOMEM.  Free with h5shuf__outset_free (also after a failure). */
H5SHUF_INTERNAL int h5shuf__outset_find(struct h5shuf_outset *set, const char *path, struct h5shuf_inputs *in,
                                        struct h5shuf_err *err);

/* The weights the run gave its inputs (h5shuf_inputs: "@W", written for weighted inputs and --mix's),
 * applied to in (not yet opened) when none of its inputs has a weight of its own and it has as many
 * inputs as the run had.  H5SHUF_OK, or an error of h5shuf__inputs_append. */
H5SHUF_INTERNAL int h5shuf__outset_weights(const struct h5shuf_outset *set, struct h5shuf_inputs *in,
                                           struct h5shuf_err *err);

/* The strata of a stratified set (set->stratify not NULL) over the open, drawn inputs in into *st
 * (strata.h; free with h5shuf__strata_free).  H5SHUF_OK; H5SHUF_EMISMATCH when h5shuf_stratify names
 * groups the inputs do not have; H5SHUF_ENOMEM. */
H5SHUF_INTERNAL int h5shuf__outset_strata(const struct h5shuf_outset *set, const struct h5shuf_inputs *in,
                                          struct h5shuf_strata *st, struct h5shuf_err *err);

H5SHUF_INTERNAL void h5shuf__outset_free(struct h5shuf_outset *set);

#endif /* H5SHUF_OUTSET_H */
