/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blocks.h - a dataset's data as it is stored, block by block: each chunk's stored (filtered) bytes, or
 * for an unchunked dataset runs of rows, read from one file and written into another at a row offset
 * (blocks.c).  A distributed run assembles the single output from its parts this way: each chunk is
 * encoded once, by the process that made it, and copied as it is.
 */
#ifndef H5SHUF_BLOCKS_H
#define H5SHUF_BLOCKS_H

#include <hdf5.h>
#include <stdint.h>

#include "base.h"

/* One block: a chunk at offset (elements, every dimension), bytes as stored with its filter mask; or,
 * unchunked, rows [offset[0], offset[0] + rows) as raw bytes of the file type. */
struct h5shuf_block {
    uint64_t offset[H5S_MAX_RANK];
    uint64_t rows;         /* unchunked: rows of the run; a chunk: 0 */
    uint64_t bytes;
    uint32_t filter_mask;
    uint32_t dataset;      /* which dataset of the caller's (for a receiver) */
};

/* Walks a dataset's blocks in storage order of rows (chunks row band by row band). */
struct h5shuf_blocks {
    hid_t dset, ftype;     /* not owned */
    int rank, chunked;
    hsize_t dims[H5S_MAX_RANK], cdims[H5S_MAX_RANK];
    uint64_t row_bytes, run_rows;
    hsize_t next[H5S_MAX_RANK]; /* the next block's offset */
    int done;
};

/* Start walking dset (file type ftype).  < 0 on an HDF5 error (on HDF5's stack). */
H5SHUF_INTERNAL herr_t h5shuf__blocks_open(struct h5shuf_blocks *it, hid_t dset, hid_t ftype);
/* The next block into *b (its bytes to read): 1, 0 after the last, < 0 on an HDF5 error.  A chunk that
 * was never written is an error: every chunk of an output is. */
H5SHUF_INTERNAL int h5shuf__blocks_next(struct h5shuf_blocks *it, struct h5shuf_block *b);
/* Read the stored chunk of dset at offset (its first element's coordinates, rank entries) as it lies in
 * the file, without its filters, into buf of cap bytes, and its filter mask into *mask.  HDF5 2.0 and
 * later check the chunk's size against cap (H5Dread_chunk2); before, the caller must know it fits (from
 * H5Dget_chunk_storage_size or the block walk).  0, or < 0 on an HDF5 error or a chunk larger than cap
 * (on HDF5's stack). */
H5SHUF_INTERNAL herr_t h5shuf__read_chunk(hid_t dset, const hsize_t *offset, uint32_t *mask, void *buf, size_t cap);
/* Read block b (from h5shuf__blocks_next) into buf (b->bytes), setting a chunk's filter mask. */
H5SHUF_INTERNAL herr_t h5shuf__blocks_read(const struct h5shuf_blocks *it, struct h5shuf_block *b, void *buf);
/* Write block b (read from another dataset of the same type, chunk shape and filters) into dset (file type
 * ftype) with its rows moved by row_offset: H5Dwrite_chunk, or for a run of rows H5Dwrite. */
H5SHUF_INTERNAL herr_t h5shuf__block_write(hid_t dset, hid_t ftype, const struct h5shuf_block *b, uint64_t row_offset,
                                           const void *buf);

#endif /* H5SHUF_BLOCKS_H */
