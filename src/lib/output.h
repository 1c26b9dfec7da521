/*
 * output.h - an output file's datasets: their layout, chunk shape and filters planned from the first
 * input and the options, then created (with the copied objects of whole-file mode, the index datasets
 * and the datasets' attributes) in each output file (output.c).
 */
#ifndef H5SHUF_OUTPUT_H
#define H5SHUF_OUTPUT_H

#include <hdf5.h>

#include "base.h"

/* Decide each output dataset's layout, chunk shape and filters (ds[d].out_dcpl, out_maxdims,
 * out_chunk_rows) from the first input and the options; errors name the dataset. */
H5SHUF_INTERNAL int h5shuf__output_plan(h5shuf_job *job);

/* Create the output datasets of rows rows (and, in whole-file mode, copy the other objects of the first
 * input) in the open file out (job->out_name); sets out_dsets[0..nds), out_dsets[nds] to the index
 * dataset when index_path is set, out_dsets[nds+1] to the source index when source_index_path is set.
 * Does not write the rows. */
H5SHUF_INTERNAL int h5shuf__output_create(h5shuf_job *job, hid_t out, hid_t *out_dsets, uint64_t rows);
/* The file datatype of the source index: uint16 for at most 65535 inputs, else uint32 (little-endian). */
H5SHUF_INTERNAL hid_t h5shuf__source_type(const h5shuf_job *job);

#endif /* H5SHUF_OUTPUT_H */
