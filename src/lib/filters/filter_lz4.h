/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_lz4.h - the LZ4 HDF5 filter, id 32004 (registered with The HDF Group; hdf5plugin.LZ4 and Debian's
 * hdf5-filter-plugin libh5lz4.so write it), built into the library (filter_lz4.c).  The codec is Debian's
 * liblz4; this module depends on HDF5 and liblz4 only.
 */
#ifndef H5SHUF_FILTER_LZ4_H
#define H5SHUF_FILTER_LZ4_H

#include <hdf5.h>
#include <stddef.h>

/* The registered id of LZ4 (HDF Group filter registry: "LZ4", 32004). */
#define H5SHUF_FILTER_LZ4 32004
/* The block size a stream is cut into when cd_values[0] is absent or 0: 1 GiB (the reference filter's
 * DEFAULT_BLOCK_SIZE), so a chunk is one block. */
#define H5SHUF_LZ4_DEFAULT_BLOCK ((size_t)1 << 30)
/* Bytes before the first block: the decoded size (big-endian uint64) and the block size (uint32). */
#define H5SHUF_LZ4_HEADER_BYTES 12

/*
 * The filter class.  cd_values[0], when present and not 0, is the block size in bytes; no set_local (the
 * reference has none).  The stream: a 12-byte header (the decoded size, big-endian uint64; the block size,
 * big-endian uint32), then each block of block-size bytes (the last one shorter) as a big-endian uint32
 * stored size followed by that many bytes: one LZ4 block (LZ4_compress_default), or the block's bytes as
 * they are when the stored size equals the block's size (LZ4 could not shrink it).
 */
extern const H5Z_class2_t h5shuf_lz4_class;

/*
 * The filter function (H5Z_func_t).  Compression of a chunk of nbytes (below 2 GiB: LZ4's input limit)
 * into a buffer of its bound.  Decompression into a buffer of the header's decoded size, which must be
 * within the decoded-size limit the reading thread declared (filter_limit.h; h5shuf's reads always do),
 * else at most 4 GiB.  On a corrupt stream or an allocation failure it pushes a message on HDF5's error
 * stack (h5shuf_filter_refuse) and returns 0, *buf untouched, as the H5Z contract requires.
 */
size_t h5shuf_lz4_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                         size_t *buf_size, void **buf);

/* ---- the codec without HDF5 (chunkio's worker threads call these) ------------------------------ */

/* Results of h5shuf_lz4_decode. */
enum {
    H5SHUF_LZ4_OK = 0,
    H5SHUF_LZ4_ECORRUPT = -1, /* a header or block size that does not fit, a block LZ4 cannot decode */
    H5SHUF_LZ4_E2BIG = -2,    /* the header says more than dst_capacity bytes */
};

/* The block size of cd_values (cd_nelmts of them): cd_values[0], or H5SHUF_LZ4_DEFAULT_BLOCK when absent
 * or 0. */
size_t h5shuf_lz4_block(size_t cd_nelmts, const unsigned cd_values[]);

/* The most bytes a stream of src_bytes bytes in blocks of block bytes takes (header, sizes and LZ4's
 * bound of every block), or 0 when src_bytes is 2 GiB or more (LZ4_MAX_INPUT_SIZE). */
size_t h5shuf_lz4_bound(size_t src_bytes, size_t block);

/*
 * Encode src_bytes bytes of src (1 to LZ4_MAX_INPUT_SIZE) in blocks of block bytes (>= 1) into dst
 * (dst_capacity bytes; src and dst must not overlap).  Returns the stream's size, or 0 when it does not
 * fit in dst_capacity (h5shuf_lz4_bound bytes always do) or src_bytes is out of range.  Pure: no HDF5
 * call, no allocation (LZ4_compress_default keeps its state on the stack: 16 KiB); thread-safe.
 */
size_t h5shuf_lz4_encode(const void *src, size_t src_bytes, size_t block, void *dst, size_t dst_capacity);

/*
 * The decoded size a stream's header states (0 when src_bytes is shorter than a header).
 */
size_t h5shuf_lz4_decoded_size(const void *src, size_t src_bytes);

/*
 * Decode the stream src (src_bytes bytes) into dst (dst_capacity bytes): H5SHUF_LZ4_OK with the decoded
 * size in *dst_bytes, or H5SHUF_LZ4_ECORRUPT / H5SHUF_LZ4_E2BIG.  Every size is checked before it is used;
 * never reads outside src or writes outside dst (LZ4_decompress_safe).  Bytes after the last block are
 * ignored, as the reference filter ignores them.  Pure, thread-safe.
 */
int h5shuf_lz4_decode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, size_t *dst_bytes);

#endif
