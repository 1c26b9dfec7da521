/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_lzo.h - PyTables' LZO HDF5 filter, id 305 (registered with The HDF Group by PyTables, which
 * builds it in: tables.Filters(complib="lzo")), shared by the library (registered in-process) and the
 * loadable plugin (src/plugin/lzo_plugin.c).  The codec is Debian's liblzo2 (LZO1X-1, the compressor
 * PyTables calls); this module depends on HDF5 and liblzo2 only, so the plugin can be built from it alone.
 */
#ifndef H5SHUF_FILTER_LZO_H
#define H5SHUF_FILTER_LZO_H

#include <hdf5.h>
#include <stddef.h>

/* The registered id of LZO (PyTables src/H5Zlzo.h: FILTER_LZO). */
#define H5SHUF_FILTER_LZO 305

/* Bytes of the work memory h5shuf_lzo_encode needs: liblzo2's LZO1X_1_MEM_COMPRESS (16384 dictionary
 * entries of one pointer: 128 KiB on a 64-bit machine; filter_lzo.c checks the two agree). */
#define H5SHUF_LZO_WORK_BYTES ((size_t)16384 * sizeof(unsigned char *))

/*
 * The filter class.  No set_local and no can_apply, as PyTables has none: cd_values are whatever the
 * writer stored, kept untouched by HDF5 when a property list is copied (h5shuf's "-c keep", h5repack).
 * PyTables stores three: [0] compression level (1..9; ignored: LZO1X-1 whatever the level), [1] the
 * node's VERSION attribute times 10 (e.g. 27 for a Table of format 2.7), [2] the node's kind (PyTables
 * src/tables.h TablesType: 0 Table, 1 Array, 2 EArray, 3 VLArray, 4 CArray).  The filter reads none of
 * them; they once chose whether a chunk carried a checksum (PyTables 0.5 to 0.7, see filter_lzo.c).
 */
extern const H5Z_class2_t h5shuf_lzo_class;

/*
 * The filter function (H5Z_func_t).  Compression: one LZO1X-1 stream, kept only when it is shorter than
 * nbytes (the size of the unfiltered chunk); otherwise it returns 0 and leaves *buf untouched, which HDF5
 * turns into "filter skipped for this chunk" because PyTables (and h5shuf, keeping the flags it finds)
 * mark LZO optional.  Decompression: into a buffer of the decoded-size limit the reading thread declared
 * (filter_limit.h; h5shuf's reads always do), a stream that decodes to more or to fewer bytes being
 * refused; with none declared, into a buffer first as large as the last chunk this thread decoded
 * (or *buf_size, or nbytes, whichever is largest), doubled while liblzo2 reports it too small, up to 256
 * x nbytes + 4 KiB (beyond what any LZO1X stream of nbytes expands to) or 4 GiB (HDF5's chunk limit).
 * The stream must end exactly at its end marker at byte nbytes: trailing bytes are refused (see
 * h5shuf_lzo_decode).  On corrupt input or allocation failure it pushes a message on HDF5's error stack
 * and returns 0, *buf untouched, as the H5Z contract requires.  On success it returns the decoded size
 * and *buf_size is the new buffer's size (from H5allocate_memory, as HDF5 frees it).
 */
size_t h5shuf_lzo_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                         size_t *buf_size, void **buf);

/* ---- the codec without HDF5 (chunkio's worker threads call these) ------------------------------ */

/* Results of h5shuf_lzo_encode and h5shuf_lzo_decode. */
enum {
    H5SHUF_LZO_OK = 0,
    H5SHUF_LZO_ECORRUPT = -1,  /* decode: not a valid LZO1X stream (cut short, a match before the start, no
                                * end marker) */
    H5SHUF_LZO_E2BIG = -2,     /* decode: the stream decodes to more than dst_capacity bytes */
    H5SHUF_LZO_ETRAILING = -3, /* decode: bytes after the stream's end marker */
    H5SHUF_LZO_NOGAIN = -4,    /* encode: the stream is not shorter than the input (stored raw instead) */
    H5SHUF_LZO_EINVAL = -5,    /* encode: src_bytes is 0, or dst_capacity below h5shuf_lzo_bound(src_bytes) */
    H5SHUF_LZO_EINIT = -6,     /* liblzo2's lzo_init() failed (a library built for another ABI) */
};

/* A short static description of one of the results above ("corrupt LZO1X stream", ...). */
const char *h5shuf_lzo_strerror(int result);

/* The most bytes LZO1X-1 can make of src_bytes bytes: src_bytes + src_bytes / 16 + 64 + 3 (liblzo2's
 * LZO.FAQ and lzo1x.h: the worst case of incompressible input).  Saturates instead of overflowing. */
size_t h5shuf_lzo_bound(size_t src_bytes);

/*
 * Compress src_bytes bytes of src into dst (dst_capacity bytes, at least h5shuf_lzo_bound(src_bytes),
 * because liblzo2's compressor does not check its output's end; src and dst must not overlap) with
 * LZO1X-1, as PyTables does: the same input gives the same bytes as PyTables' filter with the same
 * liblzo2.  work is H5SHUF_LZO_WORK_BYTES bytes of scratch owned by the caller (one per thread at a time;
 * its contents need not survive between calls).  Returns H5SHUF_LZO_OK with the compressed size in
 * *dst_bytes, H5SHUF_LZO_NOGAIN when that size would be src_bytes or more (PyTables' rule: such a chunk
 * is stored uncompressed), H5SHUF_LZO_EINVAL or H5SHUF_LZO_EINIT.  No HDF5 call, no allocation;
 * thread-safe.
 */
int h5shuf_lzo_encode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, void *work,
                      size_t *dst_bytes);

/*
 * Decompress the LZO1X stream src (src_bytes bytes) into dst (dst_capacity bytes) with liblzo2's safe
 * decoder, which never reads outside src nor writes outside dst.  Returns H5SHUF_LZO_OK with the
 * decompressed size in *dst_bytes, or H5SHUF_LZO_ECORRUPT, H5SHUF_LZO_E2BIG, H5SHUF_LZO_ETRAILING
 * (PyTables refuses those too), H5SHUF_LZO_EINIT.  An empty stream is corrupt.  No allocation; thread-safe.
 */
int h5shuf_lzo_decode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, size_t *dst_bytes);

#endif
