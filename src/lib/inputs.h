/*
 * inputs.h - the input files: opened read-only, their shuffled datasets found (or discovered, in
 * whole-file mode) and checked against the first input's (inputs.c).
 */
#ifndef H5SHUF_INPUTS_H
#define H5SHUF_INPUTS_H

#include <hdf5.h>

#include "spec.h"

/* One shuffled dataset of one input file. */
struct h5shuf_src {
    hid_t dset;       /* open dataset, or H5I_INVALID_HID */
    uint64_t rows;    /* dims[0] */
};

/* One input file. */
struct h5shuf_input {
    struct h5shuf_spec spec;
    char *open_path;         /* where the file is opened when not NULL (a gather: the name resolved at
                              * scatter time); spec.file stays as given, for provenance and messages */
    hid_t file;
    uint64_t rows;           /* dims[0] of its datasets */
    uint64_t first_row;      /* global id of its first row */
    struct h5shuf_src *src;  /* one per shuffled dataset */
};

/* The path an input is opened by. */
static inline const char *h5shuf__input_path(const struct h5shuf_input *in)
{
    return in->open_path ? in->open_path : in->spec.file;
}

/* Append input spec to the job (parsed; nothing opened).  H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_EINVAL. */
H5SHUF_INTERNAL int h5shuf__input_append(h5shuf_job *job, const char *spec);

/* Open every input read-only, discover or check the datasets, fill job->ds, job->rows, job->row_bytes.
 * Errors name the file and dataset. */
H5SHUF_INTERNAL int h5shuf__inputs_open(h5shuf_job *job);
H5SHUF_INTERNAL void h5shuf__inputs_close(h5shuf_job *job);

/* The input (0-based) holding global row id. */
H5SHUF_INTERNAL size_t h5shuf__input_of(const h5shuf_job *job, uint64_t id);

/* "file:/path" of dataset d of input f, for messages (static buffer per call site is not allowed: the
 * caller passes buf). */
H5SHUF_INTERNAL const char *h5shuf__where(const h5shuf_job *job, size_t f, size_t d, char *buf, size_t cap);

#endif /* H5SHUF_INPUTS_H */
