/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * output.h - an output file's datasets: their layout, chunk shape and filters planned from the first
 * input and the options, then created (with the copied objects of whole-file mode, the index datasets
 * and the datasets' attributes) in each output file (output.c).
 */
#ifndef H5SHUF_OUTPUT_H
#define H5SHUF_OUTPUT_H

#include <hdf5.h>

#include "inputs.h"
#include "objcopy.h"

/* What every output file holds besides its rows. */
struct h5shuf_outfile {
    const struct h5shuf_datasets *dsets;  /* the shuffled datasets, their output layout planned */
    const struct h5shuf_inputs *inputs;   /* open; the first one's attributes (and in whole-file mode its
                                           * other objects) are copied, all are named in the provenance */
    const char *index_path;               /* --index: (N,) uint64 dataset, or NULL */
    const char *source_index_path;        /* --source-index: (N,) uint16/32 dataset, or NULL */
    uint64_t seed;                        /* provenance */
    const struct h5shuf_objcopy *objects; /* the objects besides the rows, in the input's order (objcopy.h) */
    int drop_references;                  /* references to objects not in the output are written null */
    const char *stratify;                 /* --stratify: its groups and files (provenance h5shuf_stratify), or NULL */
};

/* Decide each output dataset's layout, chunk shape and filters (ds[d].out_dcpl, out_maxdims,
 * out_chunk_rows) from the first input's, the filters f and the chunk shape the options give (NULL:
 * keep), for rows rows in all.  head_rows: the rows of a head written as one file (0: none); a chunk
 * h5shuf picks (the input's, or about 1 MiB) that holds more rows than the head, of a dataset that is not
 * extendible, is cut to them, so that the head's maximum dimension is its rows as a whole output's is
 * (HDF5 wants a fixed dimension no smaller than its chunk).  A filter kept from the input (in_file, the
 * first) that may be lossy is H5SHUF_EUNSUPPORTED naming in_file and the dataset, unless allow_lossy (then
 * ds[d].lossy names it).  Other errors name out_file and the dataset. */
H5SHUF_INTERNAL int h5shuf__output_plan(struct h5shuf_datasets *dsets, uint64_t rows, uint64_t head_rows,
                                        const struct h5shuf_filters *f, const char *chunk_shape, int allow_lossy,
                                        const char *in_file, const char *out_file, struct h5shuf_err *err);

/* Make an output file's objects in the open file out (named ofile): the shuffled datasets of rows rows
 * and the objects of of->objects, in the input's order, with their attributes (references rewritten);
 * sets out_dsets[0..n) to the datasets, out_dsets[n] to the index dataset when of->index_path is set,
 * out_dsets[n+1] to the source index when of->source_index_path is set.  Does not write the rows. */
H5SHUF_INTERNAL int h5shuf__output_create(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows,
                                          hid_t *out_dsets, struct h5shuf_err *err);

/* A distributed run's part of the single output (targets.h): in the open file out, only the shuffled
 * datasets and the index datasets, rows rows each, with the chunk shapes and filters of an output of
 * all_rows rows, so that every whole chunk is encoded as the output's; out_dsets as above. */
H5SHUF_INTERNAL int h5shuf__output_create_part(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows,
                                               uint64_t all_rows, hid_t *out_dsets, struct h5shuf_err *err);

/* The file datatype of the source index: uint16 for at most 65535 inputs (as given), else uint32
 * (little-endian); with weights (in->weighted) a packed compound of "input" (that), "copy" (uint16: which
 * copy of its input row, 0-based, the sample last) and "row" (uint64: the row of its input), in's to
 * keep.  Also the band's memory type: the bytes are the file's on a little-endian machine. */
H5SHUF_INTERNAL hid_t h5shuf__source_type(const struct h5shuf_inputs *in);
/* The source index entry of global row id: bytes (H5Tget_size of h5shuf__source_type) bytes at out. */
H5SHUF_INTERNAL void h5shuf__source_row(const struct h5shuf_inputs *in, uint64_t id, unsigned char *out, size_t bytes);
/* The rows a cut of the output must be a multiple of, so that no chunk is split between its parts: the
 * least common multiple of every output row dataset's chunk rows (an unchunked one: 1; the index and the
 * source index, when index / source are set: H5SHUF_INDEX_CHUNK_ROWS or all rows), at most rows. */
H5SHUF_INTERNAL uint64_t h5shuf__output_cut_rows(const struct h5shuf_datasets *dsets, int index, int source, uint64_t rows);

#endif /* H5SHUF_OUTPUT_H */
