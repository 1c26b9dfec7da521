/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * chunklimit.h - the decoded sizes a dataset's chunks may have at each of h5shuf's filters in its
 * pipeline, from its creation properties and type: what a read declares to the filters
 * (filter_limit.h) before HDF5 decodes its chunks (hdf5/boundread.c).
 */
#ifndef H5SHUF_CHUNKLIMIT_H
#define H5SHUF_CHUNKLIMIT_H

#include <hdf5.h>

#include "base.h"
#include "filter_limit.h"

/*
 * Fill l with the limits of the chunked dataset whose creation properties are dcpl and whose file type is
 * ftype, and set l->set: for each of h5shuf's filters (zstd, lzf, lzo, bitshuffle, lz4) in the pipeline, the
 * sizes its decoder may return.  Walking the pipeline in its write order from the chunk's size (type size
 * x chunk dims; for a type with variable-length data or references, whose stored size H5Tget_size does
 * not give, 1 to 3 times that), a filter's decoded size is what the filters before it made: exact through shuffle (the
 * same size) and fletcher32 (4 bytes more; an optional one: 0 or 4), else at most the bound of each
 * encoder before it (zstd's, bitshuffle's, lzf and lzo never grow, HDF5's own filters n + n/8 + 64 KiB,
 * any other filter 4n + 64 KiB), at least 1.  Sizes saturate at H5SHUF_CHUNK_MAX.  l->refused and the
 * rest are cleared.  Returns 1 when l declares something, 0 (l->set = 0) when dcpl is not chunked, its
 * chunk has no size, or its pipeline has none of h5shuf's filters; never fails.
 */
H5SHUF_INTERNAL int h5shuf__chunk_limits(hid_t dcpl, hid_t ftype, struct h5shuf_filter_limits *l);

#endif /* H5SHUF_CHUNKLIMIT_H */
