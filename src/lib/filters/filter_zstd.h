/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_zstd.h - the Zstandard HDF5 filter, id 32015 (registered with The HDF Group), shared by the
 * library (registered in-process) and the loadable plugin (src/plugin/).  Depends on HDF5 and libzstd
 * only, so the plugin module can be built from it alone.
 */
#ifndef H5SHUF_FILTER_ZSTD_H
#define H5SHUF_FILTER_ZSTD_H

#include <hdf5.h>

/* The registered id of Zstandard (HDF Group filter registry; the id hdf5plugin and the HDF Group's
 * reference plugin write). */
#define H5SHUF_FILTER_ZSTD 32015

/* The filter class: cd_values[0], when present, is the compression level as a signed int (stored in an
 * unsigned cd_value), clamped to [ZSTD_minCLevel(), ZSTD_maxCLevel()]; 0 or absent: zstd's default. */
extern const H5Z_class2_t h5shuf_zstd_class;

/*
 * The filter function (H5Z_func_t).  Compression writes one zstd frame with its content size, as the
 * reference plugin does.  Decompression holds the chunk to the decoded-size limit the reading thread
 * declared (filter_limit.h; h5shuf's reads always do): a frame's stated size is checked before anything
 * is allocated, and frames without one (streaming writers) or several frames are decoded in one call
 * into a buffer of the limit, libzstd stopping there.  With no limit declared (another program through
 * the plugin) the stated size must be under 4 GiB, and frames without one are streamed into a buffer
 * grown to at most 4 GiB.  On any zstd or allocation failure, or a size outside the limit, it pushes a
 * message on HDF5's error stack (h5shuf_filter_refuse) and returns 0, as the H5Z contract requires;
 * *buf is left untouched then.
 */
size_t h5shuf_zstd_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                          size_t *buf_size, void **buf);

#endif
