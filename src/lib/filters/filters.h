/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filters.h - the filters h5shuf brings: registered with this process's HDF5 before any I/O, and the
 * pipeline of a parsed filter spec put on dataset creation properties (filters.c).
 */
#ifndef H5SHUF_FILTERS_H
#define H5SHUF_FILTERS_H

#include <hdf5.h>

#include "spec.h"

/* Register h5shuf's built-in filters (zstd 32015, lzf 32000, lzo 305 unless built with -DH5SHUF_LZO=OFF,
 * bitshuffle 32008, lz4 32004) with this process's HDF5, replacing any registered or loaded before (the streams are
 * the same; ours are the ones chunkio's threads run, so in-process and threaded paths agree).  Idempotent;
 * call before any HDF5 I/O that may meet these filters.  H5SHUF_OK, or H5SHUF_EHDF5 when HDF5 refuses one
 * (its message on its stack). */
H5SHUF_INTERNAL int h5shuf__filters_register(void);

/* Add the pipeline f (not keep) to dcpl: shuffle, codec, fletcher32, in that order.  Returns < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__filters_apply(const struct h5shuf_filters *f, hid_t dcpl);

#endif /* H5SHUF_FILTERS_H */
