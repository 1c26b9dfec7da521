/*
 * inputs.h - the input files: opened read-only, their shuffled datasets found (or discovered, in
 * whole-file mode) and checked against the first input's, which describes the datasets (inputs.c).
 * Rows are numbered globally 0 .. N-1 over the inputs in the order they were added.
 */
#ifndef H5SHUF_INPUTS_H
#define H5SHUF_INPUTS_H

#include <hdf5.h>

#include "datasets.h"
#include "spec.h"

/* One input file. */
struct h5shuf_input {
    struct h5shuf_spec spec; /* as given; in whole-file mode the first input's paths are the discovered ones */
    char *open_path;         /* where the file is opened when not NULL (a gather: the name resolved at
                              * scatter time); spec.file stays as given, for provenance and messages */
    hid_t file;
    uint64_t rows;           /* dims[0] of its datasets */
    uint64_t first_row;      /* global id of its first row */
    hid_t *dset;             /* one open dataset per shuffled dataset (H5I_INVALID_HID until opened) */
};

/* The inputs of a job, in order. */
struct h5shuf_inputs {
    struct h5shuf_input *v;
    size_t n;
    uint64_t rows;  /* N: the rows of all inputs */
    int whole_file; /* the first input named no dataset: its datasets were discovered, its other objects
                     * go to the output */
    char **extra;   /* dataset mode: objects of the first input copied into the output (the dimension
                     * scales of the shuffled datasets' other dimensions), nextra of them */
    size_t nextra;
};

/* The path an input is opened by. */
static inline const char *h5shuf__input_path(const struct h5shuf_input *in)
{
    return in->open_path ? in->open_path : in->spec.file;
}

/* Append input spec (parsed; nothing opened).  H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_EINVAL (in err). */
H5SHUF_INTERNAL int h5shuf__inputs_append(struct h5shuf_inputs *in, const char *spec, struct h5shuf_err *err);

/* Open every input read-only, discover (whole-file mode) or find the datasets, check them against the
 * first input's, and describe them in dsets (output paths from out_spec's, or the input paths); for vlen
 * rows, estimate their payload from a sample.  Fills in->rows, first_row, dsets->row_bytes.  Errors name
 * the file and dataset. */
H5SHUF_INTERNAL int h5shuf__inputs_open(struct h5shuf_inputs *in, const struct h5shuf_spec *out_spec,
                                        struct h5shuf_datasets *dsets, struct h5shuf_err *err);
/* Close what inputs_open opened: the datasets' descriptions first, then the files.  Safe after a
 * failed open. */
H5SHUF_INTERNAL void h5shuf__inputs_close(struct h5shuf_inputs *in, struct h5shuf_datasets *dsets);
/* Free the specs (after inputs_close). */
H5SHUF_INTERNAL void h5shuf__inputs_free(struct h5shuf_inputs *in);

/* The input (0-based) holding global row id. */
H5SHUF_INTERNAL size_t h5shuf__input_of(const struct h5shuf_inputs *in, uint64_t id);

/* "file:/path" of dataset d of input f (just "file" when d is past the datasets), written into buf of
 * cap bytes, for messages. */
H5SHUF_INTERNAL const char *h5shuf__where(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f,
                                          size_t d, char *buf, size_t cap);

#endif /* H5SHUF_INPUTS_H */
