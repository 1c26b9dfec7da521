/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * codec.h - a chunk's filter pipeline run by h5shuf's own threads (codec.c): which pipelines it can run,
 * and one chunk decoded or encoded, by whichever thread runs it.  chunkio.c moves the chunks.
 */
#ifndef H5SHUF_CODEC_H
#define H5SHUF_CODEC_H

#include <hdf5.h>
#include <zstd.h>

#include "base.h"

/* Most filters in a pipeline h5shuf runs itself. */
#define H5SHUF_PIPELINE_MAX 8

/* A chunked dataset's layout and filter pipeline as chunkio sees it.  A chunk of whole rows (cdims[k] ==
 * dims[k] for k >= 1) is a run of rows; a chunk that splits rows (split) is a block of each of the rows
 * of its chunk row, and a chunk row (the chunks at one offset of dim 0) is chunks_per_row chunks, in
 * the row-major order of their chunk indices. */
struct h5shuf_pipeline {
    int direct;              /* 1: chunks are read/written raw and (de)coded by h5shuf's threads */
    int split;               /* 1: a chunk holds a block of its rows, not whole rows */
    int rank;
    hsize_t cdims[H5S_MAX_RANK];
    hsize_t dims[H5S_MAX_RANK]; /* the extent when probed: dims[1:] place a chunk's block in its rows */
    size_t type_bytes;       /* bytes of one element (the file type's size) */
    uint64_t row_bytes;      /* bytes of one row (type_bytes * prod(dims[1:])) */
    uint64_t chunk_rows;     /* cdims[0] */
    uint64_t chunks_per_row; /* chunks of a chunk row: prod over k >= 1 of ceil(dims[k] / cdims[k]); 1 unless split */
    size_t chunk_bytes;      /* bytes of a whole chunk before filtering: type_bytes * prod(cdims) */
    int nfilters;
    struct h5shuf_pipeline_filter {
        H5Z_filter_t id;     /* shuffle, deflate, fletcher32, 32015 (zstd), 32000 (lzf), 305 (lzo), 32008 (bitshuffle), 32004 (lz4) */
        int level;           /* deflate, zstd */
        size_t elem_size;    /* shuffle */
        unsigned flags;      /* H5Z_FLAG_OPTIONAL: a chunk lzf or lzo cannot shrink is stored with the filter skipped */
        size_t ncd;          /* the filter's parameters as stored (bitshuffle), at most 8 */
        unsigned cd[8];
    } f[H5SHUF_PIPELINE_MAX];
};

/* Describe dset's pipeline (pl->direct = 0 when h5shuf cannot run it: not chunked, a variable-length
 * type, another filter, a chunk of 2 GiB or more).  Returns < 0 on an HDF5 error. */
H5SHUF_INTERNAL int h5shuf__pipeline_probe(hid_t dset, hid_t ftype, struct h5shuf_pipeline *pl);
/* The same from what the caller already holds: the dataset's creation properties dcpl and its extent
 * (rank, dims[0..rank)), for a caller that has them (no property list copied). */
H5SHUF_INTERNAL void h5shuf__pipeline_of(hid_t dcpl, int rank, const hsize_t *dims, hid_t ftype,
                                         struct h5shuf_pipeline *pl);

/* One thread's codec state: its contexts are made by the thread itself on first use, its stage buffers
 * (intermediate results of pipelines of several steps, stage_cap[s] bytes, NULL until a pipeline needs
 * one) made and grown by it too.  Zero-initialised before first use; released by
 * h5shuf__codec_ctx_release (after which it is zero again). */
struct h5shuf_codec_ctx {
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
    struct libdeflate_compressor *dc;
    int dc_level;
    struct libdeflate_decompressor *dd;
    void *lzo_work; /* LZO1X-1's dictionary, H5SHUF_LZO_WORK_BYTES */
    unsigned char *stage[2];
    size_t stage_cap[2];
    unsigned char *group; /* a group's chunks (h5shuf__codec_encode_group, _decode_group), group_cap bytes */
    size_t group_cap;
};
H5SHUF_INTERNAL void h5shuf__codec_ctx_release(struct h5shuf_codec_ctx *c);

/* One chunk to decode or encode, with the part of it the caller's rows hold. */
struct h5shuf_codec_chunk {
    const struct h5shuf_pipeline *pl; /* direct */
    unsigned char *raw;  /* stored bytes: read (decode; raw_cap >= raw_n, the stored size) or made (encode;
                          * raw_cap >= h5shuf__codec_bound(pl->chunk_bytes)); owned by the caller */
    size_t raw_cap, raw_n;
    uint32_t mask;       /* filters skipped in the stored chunk (H5Dread_chunk's mask; set by an encode) */
    hsize_t off[H5S_MAX_RANK]; /* the chunk's offset in the dataset (off[0]: its first row) */
    uint64_t from, rows; /* rows [from, from + rows) of the chunk are in the caller's buffer at ... */
    unsigned char *user; /* ... this address (row_bytes each: a split chunk's block of each is at its
                          * offset in the row, the rest of the row is other chunks') */
    unsigned char *made; /* NULL, except inside a group's encode (decode): the chunk gathered from (to be
                          * moved to) the rows, in the group's buffer */
    char err[160];       /* why a decode or encode failed */
};

/* Decode k->raw (k->raw_n bytes, k->mask) into k's rows at k->user, or encode k's rows (zero-padded to
 * a whole chunk: rows past the last, and a split chunk's part beyond dims[1:], are zero, as HDF5 stores
 * them with H5D_FILL_TIME_NEVER) into k->raw (setting k->raw_n and k->mask), with c the running thread's
 * state.  An encode only reads the rows; a decode of a split chunk writes its block of the rows only, so
 * the chunks of a chunk row may be decoded by several threads at once.  0, or -1 with k->err (a corrupt chunk, out of memory for a stage buffer
 * or a codec context). */
H5SHUF_INTERNAL int h5shuf__codec_decode(struct h5shuf_codec_chunk *k, struct h5shuf_codec_ctx *c);
H5SHUF_INTERNAL int h5shuf__codec_encode(struct h5shuf_codec_chunk *k, struct h5shuf_codec_ctx *c);

/* Encode (decode) n split chunks t[0 .. n) of one chunk row (the same rows: from, rows and user alike)
 * as h5shuf__codec_encode (decode) does each, their blocks moved between the rows and c's group buffer
 * (n * h5shuf__codec_group_stride(chunk_bytes) bytes, grown by this thread) a row at a time for all n
 * (one table of their runs, a tile of rows at a time when the runs are long or of several lengths): a
 * row's cache lines and pages then serve every chunk of the group, and the group's runs make whole ranges
 * of the row, which h5shuf__copy_runs moves 16 bytes at a time.  h5py's chunks of uint8 images ((2500, 4,
 * 8, 1) of (N, 64, 64, 3)) move 32 bytes of each of 2500 rows 12 KiB apart, and chunk by chunk the copy
 * missed cache and TLB on every row.  The bytes are those of the chunks one by one.  0, or -1
 * with the failing chunk's err (an encode stops there; a decode writes no rows then). */
H5SHUF_INTERNAL int h5shuf__codec_encode_group(struct h5shuf_codec_chunk *t, size_t n, struct h5shuf_codec_ctx *c);
H5SHUF_INTERNAL int h5shuf__codec_decode_group(struct h5shuf_codec_chunk *t, size_t n, struct h5shuf_codec_ctx *c);
/* Bytes of one chunk of a group's buffer: chunk_bytes and room for a checksum, whole cache lines. */
H5SHUF_INTERNAL size_t h5shuf__codec_group_stride(size_t chunk_bytes);

/* Bytes a buffer needs to hold any encoding of a chunk of chunk_bytes bytes, 4 bytes of fletcher32
 * included. */
H5SHUF_INTERNAL size_t h5shuf__codec_bound(size_t chunk_bytes);

/* Make *buf (*cap bytes) hold at least need bytes, growing it to want (>= need) bytes when it is smaller;
 * a buffer only grows.  Its contents need not survive.  0, or -1 when out of memory (*buf unchanged). */
H5SHUF_INTERNAL int h5shuf__codec_grow(unsigned char **buf, size_t *cap, size_t need, size_t want);

#endif /* H5SHUF_CODEC_H */
