/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanread.h - pass 1's reads of an input larger than the page cache (spanread.c; issue 52): the stored
 * chunks of a slab's rows of one dataset, which a file written in order keeps side by side, read as one
 * span of the file by a thread of their own, with O_DIRECT, while the slab before is scattered.
 *
 * Measured on 20 GiB of 1032-byte rows at -m 4G: the job's thread spent 30 s of pass 1's 90 in the
 * kernel's copies of the input from the page cache (H5Dread_chunk's pread, 0.7 s a GB on these VMs), and
 * the pages it read pushed the scratch out of the cache before pass 2 read it back (1.6 GB read twice).
 * A direct read copies nothing in the kernel and leaves the page cache to the scratch; one read of a
 * slab's span (32 MiB) keeps the disk streaming.  Chunks are then copied out of the span in memory.
 */
#ifndef H5SHUF_SPANREAD_H
#define H5SHUF_SPANREAD_H

#include <hdf5.h>

#include "base.h"
#include "codec.h"
#include "inmap.h" /* struct h5shuf_inmap_chunk */

/* One dataset's stored chunks of whole chunk rows [start, start + count), as read: the file's bytes
 * [off, off + len) are mem[0 .. len).  Chunk i (i < n) holds rows from start + i * chunk_rows and lies at
 * chunk[i].addr, chunk[i].size bytes (size 0: not allocated, HDF5 reads those rows). */
struct h5shuf_span {
    const unsigned char *mem;
    uint64_t off;
    size_t len;
    uint64_t start, count, chunk_rows;
    size_t n;
    const struct h5shuf_inmap_chunk *chunk;
};

/* A reader: its thread, started at the first read, and a span of at most cap bytes for each of nds
 * datasets (the next slab's, read while the caller works; the caller copies a span's chunks out when it
 * takes it, before it asks for the next).  NULL when out of memory. */
struct h5shuf_spanread;
H5SHUF_INTERNAL struct h5shuf_spanread *h5shuf__spanread_new(size_t nds, size_t cap);
/* Wait for a read under way, stop the thread, close the descriptor, free.  Accepts NULL. */
H5SHUF_INTERNAL void h5shuf__spanread_free(struct h5shuf_spanread *r);
/* Bytes a reader of nds datasets and spans of cap bytes holds at most (for the plan). */
H5SHUF_INTERNAL uint64_t h5shuf__spanread_bytes(size_t nds, size_t cap);

/* Queue the read of the stored chunks of rows [start, start + count) (whole chunk rows, start on one; the
 * last one may end the dataset) of dataset d, dset, chunked in whole rows with pipeline pl, of input file
 * (a number of the caller's: a new one closes the last one's descriptor) named path, whose HDF5 descriptor
 * is hdf5_fd (the same file must open at path: device and inode compared).  The chunks' places are asked
 * of HDF5 now.  Nothing is queued (and 0 returned) when the chunks do not lie side by side (their span is
 * more than twice their bytes), their span is larger than cap, the file cannot be opened, or HDF5 cannot
 * say; those rows are read the usual way.  1 when queued. */
H5SHUF_INTERNAL int h5shuf__spanread_ask(struct h5shuf_spanread *r, size_t d, hid_t dset, const struct h5shuf_pipeline *pl,
                                         size_t file, const char *path, int hdf5_fd, uint64_t start, uint64_t count);
/* The span of rows [start, start + count) of dataset d of input file, when it was asked for and read
 * whole: it is waited for.  Valid until the next ask for d (copy its chunks out first).  NULL otherwise (never asked, another range,
 * a failed or short read): the caller reads the rows the usual way, and HDF5 says what fails. */
H5SHUF_INTERNAL const struct h5shuf_span *h5shuf__spanread_take(struct h5shuf_spanread *r, size_t d, size_t file,
                                                                uint64_t start, uint64_t count);

#endif /* H5SHUF_SPANREAD_H */
