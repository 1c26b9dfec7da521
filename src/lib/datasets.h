/*
 * datasets.h - what a row is: the shuffled datasets, described from the first input, with the layout of
 * their output datasets.  A row of the job is one row of each of them, moved together.
 */
#ifndef H5SHUF_DATASETS_H
#define H5SHUF_DATASETS_H

#include <hdf5.h>

#include "base.h"

/* How a dataset's rows are held (vlen.c): fixed-size records, or HDF5's memory form of variable-length
 * sequences (hvl_t) or strings (char *). */
enum { H5SHUF_FIXED = 0, H5SHUF_VLEN_SEQ = 1, H5SHUF_VLEN_STR = 2 };

/* What describes a shuffled dataset, from the first input. */
struct h5shuf_dsinfo {
    char *in_path;   /* path in the inputs */
    char *out_path;  /* path in the output */
    hid_t ftype;     /* file datatype (a copy); rows move as its raw bytes */
    int rank;
    hsize_t dims[H5S_MAX_RANK];    /* dims of the first input (dims[0] replaced by N for the output) */
    hsize_t maxdims[H5S_MAX_RANK];
    uint64_t row_bytes;            /* H5Tget_size(ftype) * prod(dims[1:]) */
    hid_t dcpl;                    /* creation properties of the first input (a copy) */
    uint64_t chunk_rows;           /* chunk dim 0 of the first input, 0 when not chunked */
    /* Variable-length rows (vlen.c); vlen == H5SHUF_FIXED for fixed-size rows, and then row_bytes is
     * also plan_row_bytes and the other fields are unused. */
    int vlen;                      /* H5SHUF_FIXED, H5SHUF_VLEN_SEQ or H5SHUF_VLEN_STR */
    size_t vslot;                  /* its number among the vlen datasets (scratch payload dataset) */
    hid_t mtype;                   /* memory type of reads and writes: vlen of the file base type, or the
                                    * variable string type; H5I_INVALID_HID for fixed rows */
    hid_t etype;                   /* payload element type in the scratch: the base type, or uint8 */
    uint64_t elems;                /* vlen elements per row: prod(dims[1:]) */
    uint64_t elem_bytes;           /* bytes of one payload element: base type size, or 1 */
    uint64_t mean_bytes;           /* estimated payload bytes per row (h5shuf__vlen_estimate) */
    uint64_t plan_row_bytes;       /* bytes per row the plan counts: row_bytes, plus for vlen rows the
                                    * payload estimate and a per-element allowance */
    hid_t out_dcpl;                /* creation properties of the output dataset (h5shuf__output_plan) */
    hsize_t out_maxdims[H5S_MAX_RANK];
    uint64_t out_chunk_rows;       /* chunk dim 0 of the output, 0 when not chunked */
};

#endif /* H5SHUF_DATASETS_H */
