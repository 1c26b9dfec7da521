/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_lzf.h - the LZF HDF5 filter, id 32000 (registered with The HDF Group by h5py, which builds it
 * in: h5py's compression="lzf"), shared by the library (registered in-process) and the loadable plugin
 * (src/plugin/lzf_plugin.c).  The codec is Debian's liblzf; this module depends on HDF5 and liblzf only,
 * so the plugin module can be built from it alone.
 */
#ifndef H5SHUF_FILTER_LZF_H
#define H5SHUF_FILTER_LZF_H

#include <hdf5.h>
#include <stddef.h>

/* The registered id of LZF (h5py/lzf/lzf_filter.h: H5PY_FILTER_LZF). */
#define H5SHUF_FILTER_LZF 32000
/* The filter revision h5py writes in cd_values[0] (H5PY_FILTER_LZF_VERSION) when there is none. */
#define H5SHUF_LZF_FILTER_REVISION 4

/*
 * The filter class.  cd_values, as h5py's set_local leaves them: [0] filter revision (4), [1] LZF API
 * version (LZF_VERSION, 0x0105), [2] bytes of an uncompressed chunk (type size x chunk elements), used
 * only as the first guess of the decompressed size.  Values past [2] are kept untouched.
 */
extern const H5Z_class2_t h5shuf_lzf_class;

/*
 * set_local (H5Z_set_local_func_t): fills cd_values[0] and [1] when they are 0, and always recomputes
 * [2] from type and the chunk shape of dcpl; so running it again on a copied property list (h5shuf's
 * "-c keep", h5repack) changes nothing but the chunk size.  Returns 1, or -1 with an HDF5 error pushed
 * (no chunked layout, a chunk of 4 GiB or more).
 */
herr_t h5shuf_lzf_set_local(hid_t dcpl, hid_t type, hid_t space);

/*
 * The filter function (H5Z_func_t).  Compression: one LZF stream that must fit in nbytes (the size of
 * the unfiltered chunk); when it would not, it returns 0 and leaves *buf untouched, which HDF5 turns
 * into "filter skipped for this chunk" because h5py (and h5shuf) mark LZF optional.  Decompression: into
 * a buffer of the decoded-size limit the reading thread declared (filter_limit.h; h5shuf's reads always
 * do), a stream that decodes to more or to fewer bytes being refused; with none declared, into a buffer
 * of cd_values[2] bytes (the chunk size) when set, else *buf_size, grown while liblzf says it is too
 * small, to at most 88 x nbytes (the most an LZF stream expands) or 4 GiB (HDF5's chunk limit).
 * LZF has neither an end marker nor a checksum: a stream cut between two runs decodes to fewer bytes,
 * and that size is returned, as h5py's filter does (chunkio checks a chunk's decoded size; fletcher32 is
 * HDF5's answer to the rest).  On corrupt input or allocation failure it pushes a message on HDF5's
 * error stack and returns 0, *buf untouched, as the H5Z contract requires.
 */
size_t h5shuf_lzf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                         size_t *buf_size, void **buf);

/* ---- the codec without HDF5 (chunkio's worker threads call these) ------------------------------ */

/* Results of h5shuf_lzf_decode. */
enum {
    H5SHUF_LZF_OK = 0,
    H5SHUF_LZF_ECORRUPT = -1, /* not a valid LZF stream (a back reference before the start, a cut run) */
    H5SHUF_LZF_E2BIG = -2,    /* the stream decodes to more than dst_capacity bytes */
};

/*
 * Compress src_bytes bytes of src into dst (dst_capacity bytes; src and dst must not overlap).
 * Returns the compressed size, or 0 when the stream does not fit in dst_capacity, or src_bytes is 0 or
 * 4 GiB or more (liblzf's lengths are unsigned int).  Pure: no HDF5 call, no allocation; thread-safe
 * (liblzf keeps its hash table on the stack: about 256 KiB).
 */
size_t h5shuf_lzf_encode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity);

/*
 * Decompress the LZF stream src (src_bytes bytes) into dst (dst_capacity bytes).  Returns H5SHUF_LZF_OK
 * with the decompressed size in *dst_bytes, or H5SHUF_LZF_ECORRUPT / H5SHUF_LZF_E2BIG.  Never reads
 * outside src or writes outside dst (liblzf checks both, CHECK_INPUT being on in Debian's build).  Pure,
 * thread-safe.  An empty stream is corrupt (no LZF writer makes one).
 */
int h5shuf_lzf_decode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, size_t *dst_bytes);

#endif
