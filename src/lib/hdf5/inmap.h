/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inmap.h - where a small input's rows are stored in its file, gathered once when inputs_open scans it
 * (inmap.c), so that pass 1 reads them with pread() from a plain descriptor instead of opening the file
 * with HDF5 a second time (issue 15: thousands of inputs of a few chunks each, where the second open
 * cost more than the read).
 *
 * An input is mapped when every shuffled dataset of it is simple: contiguous (one extent, no external
 * storage) or chunked in chunks of whole rows, every chunk allocated, at most H5SHUF_INMAP_CHUNKS_MAX of
 * them, with a filter pipeline chunkio runs itself that is the same for all mapped inputs (one pipeline
 * per dataset, kept by the inputs).  Anything else (vlen rows, chunks that split rows, more chunks,
 * another pipeline, a userblock) is read through HDF5 as before.  The map also records the file as it
 * was scanned (device, inode, size, modification time), so that a file changed since is refused.
 *
 * Memory: a map is one allocation of at most sizeof(struct h5shuf_inmap) + 8 * nds +
 * 16 * H5SHUF_INMAP_INPUT_CHUNKS_MAX bytes (1.1 KiB and 8 bytes a dataset), held from the scan to
 * inputs_close; the 64-row inputs of issue 15 (two datasets of one chunk) take 112 bytes each.
 */
#ifndef H5SHUF_INMAP_H
#define H5SHUF_INMAP_H

#include <hdf5.h>
#include <sys/stat.h>

#include "base.h"
#include "codec.h" /* struct h5shuf_pipeline */

/* Chunks of one dataset mapped at most: a dataset of more is read through HDF5. */
#define H5SHUF_INMAP_CHUNKS_MAX 16
/* Chunks (or contiguous extents) of one input mapped at most, over its datasets. */
#define H5SHUF_INMAP_INPUT_CHUNKS_MAX 64

/* One stored chunk (or a contiguous dataset's extent): size bytes at file offset addr (absolute: files
 * with a userblock are not mapped), the filters skipped in it (H5Dread_chunk's mask). */
struct h5shuf_inmap_chunk {
    uint64_t addr;
    uint32_t size;
    uint32_t mask;
};

/* One dataset of a mapped input: its chunks are chunk[first .. first + n), chunk k holding rows
 * [k * chunk_rows, (k + 1) * chunk_rows); a contiguous dataset has one extent of all its rows. */
struct h5shuf_inmap_ds {
    uint32_t first;
    uint16_t n;
    uint16_t contiguous;
};

/* The stored rows of one input (one allocation: ds and chunk point into it). */
struct h5shuf_inmap {
    uint64_t dev, ino, size; /* the file when scanned (stat before HDF5 opened it) */
    int64_t mtime_sec, mtime_nsec;
    size_t nds;
    struct h5shuf_inmap_ds *ds;       /* nds */
    struct h5shuf_inmap_chunk *chunk; /* the chunks of all datasets */
};

/* A map while its input is scanned: the datasets added in order, 0 .. nds - 1. */
struct h5shuf_inmap_build {
    int ok; /* every dataset so far can be mapped */
    size_t want, nds, nchunks; /* datasets of the input, added so far; chunks so far */
    struct stat st;
    struct h5shuf_inmap_ds *ds; /* nds, malloc'ed by begin */
    struct h5shuf_inmap_chunk chunk[H5SHUF_INMAP_INPUT_CHUNKS_MAX];
};

/* Begin the map of an input of nds datasets whose file stat() gave st (before it was opened).  ok is set
 * to 0 at once for a file that cannot be mapped (userblock bytes of its creation properties, not 0).
 * H5SHUF_OK, or H5SHUF_ENOMEM (nothing to end). */
H5SHUF_INTERNAL int h5shuf__inmap_begin(struct h5shuf_inmap_build *b, size_t nds, const struct stat *st,
                                        hsize_t userblock);
/* Add dataset d (the next one) of the input: dset (open; its creation properties dcpl) of file type
 * ftype, extent dims[0..rank) (dims[0] rows of row_bytes each; a vlen type makes the input unmappable).  ref is the pipeline of dataset d
 * of every mapped input, its rank 0 until the first chunked one sets it (*ref is the caller's, kept as
 * long as the maps).  Marks the map unmappable when the dataset is not simple (inmap.h); HDF5 errors of
 * the queries are cleared, never reported: such a dataset is read through HDF5, which reports them.
 * Returns the dataset's stored bytes (its chunks' sizes, as H5Dget_storage_size says) when mapped, else
 * 0 (nothing mapped has 0 stored bytes). */
H5SHUF_INTERNAL uint64_t h5shuf__inmap_add(struct h5shuf_inmap_build *b, hid_t dset, hid_t dcpl, hid_t ftype, int rank,
                                           const hsize_t *dims, uint64_t row_bytes, struct h5shuf_pipeline *ref);
/* End the map: *out the map (the caller's, h5shuf__inmap_free) or NULL when the input cannot be mapped.
 * b is released either way.  H5SHUF_OK, or H5SHUF_ENOMEM (*out NULL). */
H5SHUF_INTERNAL int h5shuf__inmap_end(struct h5shuf_inmap_build *b, struct h5shuf_inmap **out);
/* Release a build not ended (after an error). */
H5SHUF_INTERNAL void h5shuf__inmap_abandon(struct h5shuf_inmap_build *b);
/* Free accepts NULL. */
H5SHUF_INTERNAL void h5shuf__inmap_free(struct h5shuf_inmap *m);
/* Bytes m holds (for the bound above and tests). */
H5SHUF_INTERNAL size_t h5shuf__inmap_bytes(const struct h5shuf_inmap *m);

/* 1 when the file open as fd is the one m was made from, unchanged (device, inode, size and modification
 * time as scanned), 0 when it changed; -1 when fstat fails (errno set). */
H5SHUF_INTERNAL int h5shuf__inmap_same_file(const struct h5shuf_inmap *m, int fd);

/* Dataset d of a mapped input, as chunkio reads it: the extents of its rows in the file open as fd. */
struct h5shuf_stored {
    int fd;
    const struct h5shuf_pipeline *pl; /* chunked: the pipeline (direct, chunks of whole rows); NULL: contiguous */
    uint64_t row_bytes;
    uint64_t rows;                    /* dims[0] */
    const struct h5shuf_inmap_chunk *chunk; /* n: chunk k holds rows from k * pl->chunk_rows; contiguous: one
                                       * extent of all rows */
    size_t n;
};
/* Fill *s for dataset d of m (pl: its pipeline, the ref of h5shuf__inmap_add; row_bytes, rows: its rows). */
H5SHUF_INTERNAL void h5shuf__inmap_stored(const struct h5shuf_inmap *m, size_t d, int fd,
                                          const struct h5shuf_pipeline *pl, uint64_t row_bytes, uint64_t rows,
                                          struct h5shuf_stored *s);

#endif /* H5SHUF_INMAP_H */
