/*
 * output.h - an output file's datasets: their layout, chunk shape and filters planned from the first
 * input and the options, then created (with the copied objects of whole-file mode, the index datasets
 * and the datasets' attributes) in each output file (output.c).
 */
#ifndef H5SHUF_OUTPUT_H
#define H5SHUF_OUTPUT_H

#include <hdf5.h>

#include "inputs.h"

/* What every output file holds besides its rows. */
struct h5shuf_outfile {
    const struct h5shuf_datasets *dsets;  /* the shuffled datasets, their output layout planned */
    const struct h5shuf_inputs *inputs;   /* open; the first one's attributes (and in whole-file mode its
                                           * other objects) are copied, all are named in the provenance */
    const char *index_path;               /* --index: (N,) uint64 dataset, or NULL */
    const char *source_index_path;        /* --source-index: (N,) uint16/32 dataset, or NULL */
    uint64_t seed;                        /* provenance */
};

/* Decide each output dataset's layout, chunk shape and filters (ds[d].out_dcpl, out_maxdims,
 * out_chunk_rows) from the first input's, the filters f and the chunk shape the options give (NULL:
 * keep), for rows rows in all; errors name out_file and the dataset. */
H5SHUF_INTERNAL int h5shuf__output_plan(struct h5shuf_datasets *dsets, uint64_t rows, const struct h5shuf_filters *f,
                                        const char *chunk_shape, const char *out_file, struct h5shuf_err *err);

/* Create the output datasets of rows rows (and, in whole-file mode, copy the other objects of the first
 * input) in the open file out (named ofile); sets out_dsets[0..n) to the datasets, out_dsets[n] to the
 * index dataset when of->index_path is set, out_dsets[n+1] to the source index when
 * of->source_index_path is set.  Does not write the rows. */
H5SHUF_INTERNAL int h5shuf__output_create(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows,
                                          hid_t *out_dsets, struct h5shuf_err *err);

/* The file datatype of the source index: uint16 for at most 65535 inputs, else uint32 (little-endian). */
H5SHUF_INTERNAL hid_t h5shuf__source_type(size_t ninputs);

#endif /* H5SHUF_OUTPUT_H */
