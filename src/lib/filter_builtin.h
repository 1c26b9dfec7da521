/*
 * filter_builtin.h - the HDF5 filters h5shuf carries inside itself, so that the files users have open
 * with no HDF5_PLUGIN_PATH: zstd (32015), h5py's LZF (32000) and bitshuffle (32008, with LZ4 or zstd).
 * Each is also built as a loadable plugin (src/plugin/) for other HDF5 programs.
 */
#ifndef H5SHUF_FILTER_BUILTIN_H
#define H5SHUF_FILTER_BUILTIN_H

/*
 * Register every built-in filter with HDF5 in this process, replacing any filter of the same id
 * registered or loaded before (the streams are the same; ours are the ones chunkio's threads run, so
 * in-process and threaded paths agree).  Idempotent; call before any HDF5 I/O that may meet these
 * filters.  Returns H5SHUF_OK, or H5SHUF_EHDF5 when HDF5 refuses one (its message on HDF5's stack).
 */
int h5shuf__register_builtin_filters(void);

#endif
