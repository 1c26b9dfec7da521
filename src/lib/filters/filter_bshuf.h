/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_bshuf.h - the bitshuffle HDF5 filter, id 32008 (Kiyoshi Masui's bitshuffle; what hdf5plugin's
 * Bitshuffle() and detector software such as Dectris' write), with its LZ4 and zstd modes and without
 * compression.  Shared by the library (registered in-process) and the loadable plugin
 * (src/plugin/bshuf_plugin.c); depends on HDF5, liblz4 and libzstd only.
 */
#ifndef H5SHUF_FILTER_BSHUF_H
#define H5SHUF_FILTER_BSHUF_H

#include <hdf5.h>
#include <stddef.h>

/* The registered id of bitshuffle (bitshuffle/src/bshuf_h5filter.h: BSHUF_H5FILTER). */
#define H5SHUF_FILTER_BSHUF 32008
/* The format version set_local writes in cd_values[0..1] (bitshuffle 0.4: the LZ4 and zstd modes). */
#define H5SHUF_BSHUF_VERSION_MAJOR 0
#define H5SHUF_BSHUF_VERSION_MINOR 4
/* cd_values[4]: how the bit-transposed blocks are stored. */
#define H5SHUF_BSHUF_NONE 0
#define H5SHUF_BSHUF_LZ4 2
#define H5SHUF_BSHUF_ZSTD 3

/*
 * The filter class.  cd_values after set_local: [0] major, [1] minor version of the writer, [2] element
 * size in bytes, then the user's: [3] block size in elements (0: the default, a multiple of 8), [4]
 * compression (0 none, 2 LZ4, 3 zstd), [5] zstd level.  A user sets only [3..5] (hdf5plugin passes
 * (block_size, 2) for LZ4, (block_size, 3, level) for zstd).
 */
extern const H5Z_class2_t h5shuf_bshuf_class;

/*
 * set_local (H5Z_set_local_func_t): moves the user's values up by three and writes version and element
 * size in front, as bitshuffle's own set_local does.  Unlike it, values already in that form (a property
 * list copied from an existing dataset: h5shuf's "-c keep", h5repack) are recognised and kept, so the
 * values are not shifted twice: [0] = 0, [1] in 1..15, [2] = the type's size, [3] a multiple of 8, [4]
 * a known compression, at most 6 values.  The one user spelling read the same way is (0, 3, level)
 * with level = the element size and 1 <= level <= 15, i.e. zstd at that level: it is taken as "no
 * compression" written by bitshuffle 0.3 (see docs/filters.md).  Returns 1, or -1 with an HDF5 error
 * (block size not a multiple of 8, unknown compression, a block of 2 GiB or more).
 */
herr_t h5shuf_bshuf_set_local(hid_t dcpl, hid_t type, hid_t space);

/*
 * The filter function (H5Z_func_t).  Without compression the chunk keeps its size; with LZ4 or zstd the
 * stream is the 12-byte header (uint64 big-endian uncompressed bytes, uint32 big-endian block bytes),
 * then per block a uint32 big-endian compressed size and the compressed block, then the trailing bytes
 * (see filter_bshuf.c).  Decoding reads the block size from the header, and the decoded size from it
 * (without compression: the stored size), which must lie within the decoded-size limit the reading
 * thread declared (filter_limit.h; with none, under 4 GiB) before anything is allocated.  On malformed
 * input, a size outside the limit or allocation failure it pushes a message on HDF5's error stack and
 * returns 0, *buf untouched.
 */
size_t h5shuf_bshuf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                           size_t *buf_size, void **buf);

/* ---- the codec without HDF5 (chunkio's worker threads call these) ------------------------------ */

/* A stream's parameters, from cd_values. */
struct h5shuf_bshuf_params {
    size_t elem_size;  /* bytes of an element, >= 1 */
    size_t block_size; /* elements of a block when encoding: a multiple of 8, never 0 (default resolved) */
    int compression;   /* H5SHUF_BSHUF_NONE, _LZ4 or _ZSTD */
    int zstd_level;    /* ZSTD_compress's level when compression is zstd */
};

/* Results of the functions below; h5shuf_bshuf_strerror names them. */
enum {
    H5SHUF_BSHUF_OK = 0,
    H5SHUF_BSHUF_EPARAM = -1,   /* cd_values not understood: too few, block size, compression */
    H5SHUF_BSHUF_ECORRUPT = -2, /* the stream is malformed (sizes that do not add up, a bad LZ4 block...) */
    H5SHUF_BSHUF_E2BIG = -3,    /* the output does not fit in dst_capacity */
    H5SHUF_BSHUF_ENOMEM = -4,   /* a block buffer could not be allocated */
};
const char *h5shuf_bshuf_strerror(int status);

/* bitshuffle's default block size for elements of elem_size bytes: 8192 bytes' worth, rounded down to a
 * multiple of 8 elements, at least 128 elements (bshuf_default_block_size, which must never change). */
size_t h5shuf_bshuf_default_block_size(size_t elem_size);

/* Read cd_values (cd_nelmts of them, as set_local left them) into *p.  Returns H5SHUF_BSHUF_OK or
 * H5SHUF_BSHUF_EPARAM (fewer than 3 values, element size 0, block size not a multiple of 8 or of 2 GiB
 * or more, compression not 0, 2 or 3). */
int h5shuf_bshuf_params_from_cd(size_t cd_nelmts, const unsigned cd_values[], struct h5shuf_bshuf_params *p);

/* Largest encoding of src_bytes bytes under p (header and per-block sizes included); 0 when it would
 * overflow a size_t. */
size_t h5shuf_bshuf_bound(const struct h5shuf_bshuf_params *p, size_t src_bytes);

/*
 * Encode src (src_bytes bytes, a multiple of p->elem_size) into dst (dst_capacity bytes; no overlap).
 * Returns H5SHUF_BSHUF_OK with the encoded size in *dst_bytes, or an error (EPARAM: src_bytes not a
 * multiple of the element size; E2BIG; ENOMEM).  Allocates one block buffer with malloc (compressed
 * modes); no HDF5 call; thread-safe.
 */
int h5shuf_bshuf_encode(const struct h5shuf_bshuf_params *p, const void *src, size_t src_bytes, void *dst,
                        size_t dst_capacity, size_t *dst_bytes);

/*
 * The decoded size of src under p, from its header (compressed modes, checked against the block sizes
 * of the whole stream without decoding it) or src_bytes (no compression).  Returns H5SHUF_BSHUF_OK or
 * H5SHUF_BSHUF_ECORRUPT; nothing is allocated, so a caller can size its buffer before decoding.
 */
int h5shuf_bshuf_decoded_size(const struct h5shuf_bshuf_params *p, const void *src, size_t src_bytes,
                              size_t *size);

/*
 * Decode src (src_bytes bytes) into dst (dst_capacity bytes; no overlap).  Returns H5SHUF_BSHUF_OK with
 * the decoded size in *dst_bytes, or ECORRUPT, E2BIG or ENOMEM.  Every size in the stream is checked
 * before it is used: never reads outside src nor writes outside dst.  Thread-safe, no HDF5 call.
 */
int h5shuf_bshuf_decode(const struct h5shuf_bshuf_params *p, const void *src, size_t src_bytes, void *dst,
                        size_t dst_capacity, size_t *dst_bytes);

#endif
