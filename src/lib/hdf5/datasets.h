/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datasets.h - what a row is: the shuffled datasets, described from the first input, with the layout of
 * their output datasets.  A row of the job is one row of each of them, moved together.
 */
#ifndef H5SHUF_DATASETS_H
#define H5SHUF_DATASETS_H

#include <hdf5.h>

#include "error.h"

/* How a dataset's rows are held (vlen.c): fixed-size records, or HDF5's memory form of variable-length
 * sequences (hvl_t) or strings (char *), or of compound or array elements with such members (vlenrec.c:
 * HDF5's memory record, an hvl_t or char * at each variable-length member). */
enum { H5SHUF_FIXED = 0, H5SHUF_VLEN_SEQ = 1, H5SHUF_VLEN_STR = 2, H5SHUF_VLEN_REC = 3 };

/* A variable-length member of an H5SHUF_VLEN_REC element (vlenrec.c): where its hvl_t or char * is in
 * the element's memory record (bytes), whether it is a string, and the bytes of one of its payload
 * elements (a sequence's base type size; 1 for a string). */
struct h5shuf_vslot {
    uint64_t off, base;
    int str;
};
/* A run of fixed-size bytes of an H5SHUF_VLEN_REC element's memory record: offset and bytes. */
struct h5shuf_vrun {
    uint64_t off, len;
};

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
    uint64_t in_chunk_rows_max;    /* the rows a read of one row decodes, at most over the inputs: the
                                    * largest chunk dim 0, 1 when not chunked */
    /* Variable-length rows (vlen.c); vlen == H5SHUF_FIXED for fixed-size rows, and then row_bytes is
     * also plan_row_bytes and the other fields are unused. */
    int vlen;                      /* H5SHUF_FIXED, H5SHUF_VLEN_SEQ or H5SHUF_VLEN_STR */
    size_t vslot;                  /* its number among the vlen datasets (scratch payload dataset) */
    hid_t mtype;                   /* memory type of reads and writes: vlen of the file base type, or the
                                    * variable string type; H5I_INVALID_HID for fixed rows */
    hid_t etype;                   /* payload element type in the scratch: the base type, or uint8 */
    uint64_t elems;                /* vlen elements per row: prod(dims[1:]) (H5SHUF_VLEN_REC: that times
                                    * nslot, one per variable-length member of each element) */
    uint64_t elem_bytes;           /* bytes of one payload element: base type size, or 1 */
    /* H5SHUF_VLEN_REC only (vlenrec.c; else NULL, 0 and H5I_INVALID_HID): */
    struct h5shuf_vslot *slot;     /* nslot variable-length members of one element, in type order */
    size_t nslot;
    struct h5shuf_vrun *run;       /* nrun runs of its fixed-size members' bytes, in type order */
    size_t nrun;
    uint64_t rec_bytes;            /* bytes of one element's memory record: H5Tget_size(mtype) */
    uint64_t fixed_bytes;          /* bytes of its fixed-size members: the sum of run[].len */
    hid_t ltype;                   /* its lengths' type in a pile: uint64 array of nslot */
    uint64_t mean_bytes;           /* estimated payload bytes per row (h5shuf__vlen_estimate) */
    uint64_t plan_row_bytes;       /* bytes per row the plan counts: row_bytes, plus for vlen rows the
                                    * payload estimate and a per-element allowance */
    hid_t out_dcpl;                /* creation properties of the output dataset (h5shuf__output_plan) */
    hsize_t out_maxdims[H5S_MAX_RANK];
    uint64_t out_chunk_rows;       /* chunk dim 0 of the output, 0 when not chunked */
    int lossy;                     /* the output keeps a lossy filter of the input (allow_lossy): its id */
    char lossy_name[32];           /* and its name */
};

/* The shuffled datasets of a job, in the order of the first input's paths. */
struct h5shuf_datasets {
    struct h5shuf_dsinfo *ds; /* n entries */
    size_t n;
    size_t nvlen;             /* how many have variable-length rows (their vslot is 0 .. nvlen-1) */
    uint64_t row_bytes;       /* planned bytes of a row: the sum of ds[].plan_row_bytes */
    double vlen_var;          /* estimated variance of a row's payload bytes (all vlen datasets) */
    uint64_t vlen_read_limit; /* most payload bytes one read of vlen rows may bring in (from the run's
                               * memory budget, h5shuf__vlen_read_limit; set before the inputs are opened;
                               * 0: no limit): passed to h5shuf__vlen_read */
};

/* Close and free what the datasets hold (types, property lists, paths) and empty the set.  Safe on a
 * zeroed set.  Call before the files they came from are closed: closing a file with H5F_CLOSE_STRONG
 * also closes a committed datatype opened from it, and a second H5Tclose would fail. */
H5SHUF_INTERNAL void h5shuf__datasets_free(struct h5shuf_datasets *dsets);

/* Row buffers: buffer d < n holds rows of dataset d as they are in memory (the file datatype's bytes, or
 * a vlen dataset's records), buffer n the rows' global ids (uint64).  The file type of buffer d in a
 * pile: a vlen dataset's pile dataset holds its elements' lengths (vlen.c), an H5SHUF_VLEN_REC
 * dataset's as an array of its members' lengths per element (vlenrec.c). */
static inline hid_t h5shuf__buf_type(const struct h5shuf_datasets *dsets, size_t d)
{
    if (d >= dsets->n)
        return H5T_NATIVE_UINT64;
    const struct h5shuf_dsinfo *ds = &dsets->ds[d];
    return !ds->vlen ? ds->ftype : ds->vlen == H5SHUF_VLEN_REC ? ds->ltype : H5T_NATIVE_UINT64;
}
static inline uint64_t h5shuf__buf_row_bytes(const struct h5shuf_datasets *dsets, size_t d)
{
    return d < dsets->n ? dsets->ds[d].row_bytes : sizeof(uint64_t);
}

/* n + 1 buffers of rows rows each; NULL when out of memory (recorded in err).  Free with
 * h5shuf__bufs_free, which accepts NULL. */
H5SHUF_INTERNAL unsigned char **h5shuf__bufs_alloc(const struct h5shuf_datasets *dsets, uint64_t rows,
                                                   struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__bufs_free(const struct h5shuf_datasets *dsets, unsigned char **bufs);

#endif /* H5SHUF_DATASETS_H */
