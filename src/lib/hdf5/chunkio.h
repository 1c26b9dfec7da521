/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * chunkio.h - rows read and written chunk by chunk, with the filters run by h5shuf's own threads
 * (chunkio.c; docs/design.md section 4).
 */
#ifndef H5SHUF_CHUNKIO_H
#define H5SHUF_CHUNKIO_H

#include <hdf5.h>

#include "base.h"
#include "codec.h" /* struct h5shuf_pipeline */

struct h5shuf_stored; /* inmap.h */

/* The job's chunk I/O: its thread pool, per-thread codec contexts and chunk buffers.  Buffers are made
 * when a transfer first needs them and kept, grown to the largest chunk seen: a raw buffer per chunk in
 * flight (a read's of about the chunk's stored size, a write's of its largest encoding), and, only for
 * pipelines of more than one codec step (shuffle + deflate) or partial chunks, a stage buffer or two per
 * thread that runs such a chunk; a whole chunk is decoded into, and encoded from, the caller's rows. */
struct h5shuf_chunkio;
/* nthreads as for h5shuf__pool_create.  Returns H5SHUF_OK or H5SHUF_ENOMEM.  Free accepts NULL. */
H5SHUF_INTERNAL int h5shuf__chunkio_create(unsigned nthreads, struct h5shuf_chunkio **out);
H5SHUF_INTERNAL void h5shuf__chunkio_free(struct h5shuf_chunkio *cio);
H5SHUF_INTERNAL unsigned h5shuf__chunkio_threads(const struct h5shuf_chunkio *cio);
/* cio's thread pool, for other computations of the job's (pass 2's keys); NULL for a NULL cio. */
H5SHUF_INTERNAL struct h5shuf_pool *h5shuf__chunkio_pool(struct h5shuf_chunkio *cio);
/* The chunk buffers cio holds now (for tests and measurements): bytes of its task slots' raw buffers,
 * and how many stage buffers its threads have made, of how many bytes.  Only while none of cio's reads or
 * writes is under way (chunks encoded ahead and prefetches hold their own raw buffers, not counted). */
H5SHUF_INTERNAL void h5shuf__chunkio_held(const struct h5shuf_chunkio *cio, size_t *raw_bytes, unsigned *stages,
                                          size_t *stage_bytes);

/* As h5shuf__read_rows / h5shuf__write_rows, through raw chunks and the pool when dset's pipeline allows
 * (a write must then start on a chunk boundary; a partial last chunk is stored whole, zero-padded, as is
 * the part of an edge chunk beyond dims[1:]: HDF5's bytes under H5D_FILL_TIME_NEVER, which every dataset
 * h5shuf writes has), else through HDF5.  Chunks that split rows are read and written by chunk rows: all
 * the chunks of each, row-major over their chunk indices, the order HDF5 stores them in.  cio may be NULL (HDF5 only).  Errors (out of memory for a chunk buffer too) are left on
 * HDF5's error stack; < 0 on error, and then buf's rows being read are undefined (a whole chunk is decoded
 * in place). */
H5SHUF_INTERNAL herr_t h5shuf__chunkio_read(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start,
                                            uint64_t count, void *buf);
H5SHUF_INTERNAL herr_t h5shuf__chunkio_write(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start,
                                             uint64_t count, const void *buf, int extend);

/* As h5shuf__chunkio_read, for a dataset of an input mapped when it was scanned (inmap.h): its stored
 * chunks are read with pread() from sto->fd and decoded by the pool (contiguous rows are read straight
 * into buf); no HDF5 call.  cio must not be NULL.  < 0 on error, the cause on HDF5's error stack: a failed
 * or short read, a chunk that does not decode, rows past the map. */
H5SHUF_INTERNAL herr_t h5shuf__chunkio_read_stored(struct h5shuf_chunkio *cio, const struct h5shuf_stored *sto,
                                                   uint64_t start, uint64_t count, void *buf);

/* One chunk encoded by the pool ahead of its write (pass 1's pile flushes, which must not wait). */
struct h5shuf_chunk;
/* NULL when out of memory.  Free waits for a pending encode; accepts NULL. */
H5SHUF_INTERNAL struct h5shuf_chunk *h5shuf__chunk_new(void);
H5SHUF_INTERNAL void h5shuf__chunk_free(struct h5shuf_chunkio *cio, struct h5shuf_chunk *c);
/* Queue the encoding of nrows rows (at most pl->chunk_rows; fewer are zero-padded) as one chunk of a
 * dataset with pipeline pl (direct, chunks of whole rows: not split); raw: the rows as they are, every
 * filter skipped (the chunk's filter mask says so: HDF5 and chunkio read it back as such).  rows must
 * stay unchanged until h5shuf__chunk_write (a whole chunk is encoded from them in place).  -1 when out of
 * memory for c's buffer (HDF5's stack untouched); a worker's stage buffer that cannot be made fails
 * h5shuf__chunk_write instead. */
H5SHUF_INTERNAL int h5shuf__chunk_encode_start(struct h5shuf_chunkio *cio, const struct h5shuf_pipeline *pl,
                                               const void *rows, uint64_t nrows, int raw, struct h5shuf_chunk *c);
/* Wait for c's encoding and store it as the chunk at row chunk_row of dset (whose extent must cover it).
 * < 0 on error, with the cause on HDF5's error stack. */
H5SHUF_INTERNAL herr_t h5shuf__chunk_write(struct h5shuf_chunkio *cio, hid_t dset, uint64_t chunk_row,
                                           struct h5shuf_chunk *c);

/* A read that overlaps the caller's work (pipelining, docs/design.md section 4): start reads the stored chunks
 * of rows [start, start + count) of dset now and queues their decoding into buf; finish waits for it.
 * Datasets chunkio cannot run are read at start, by HDF5.  Raw chunk buffers are kept for the next read.
 * Between start and finish, buf must not be touched.  Both return < 0 on error (cause on HDF5's stack);
 * after a failed start, call finish or free before reusing buf. */
struct h5shuf_prefetch;
H5SHUF_INTERNAL struct h5shuf_prefetch *h5shuf__prefetch_new(void); /* NULL: out of memory */
H5SHUF_INTERNAL void h5shuf__prefetch_free(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf); /* waits */
H5SHUF_INTERNAL herr_t h5shuf__prefetch_start(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start,
                                              uint64_t count, void *buf, struct h5shuf_prefetch *pf);
/* As h5shuf__prefetch_start, for a mapped input's dataset (h5shuf__chunkio_read_stored): the chunks are
 * read now, their decoding queued; sto is not used after the call (its descriptor may be closed). */
H5SHUF_INTERNAL herr_t h5shuf__prefetch_start_stored(struct h5shuf_chunkio *cio, const struct h5shuf_stored *sto,
                                                     uint64_t start, uint64_t count, void *buf,
                                                     struct h5shuf_prefetch *pf);
/* As h5shuf__prefetch_start, for rows [start, start + count) of dset (pipeline pl: direct, chunks of whole
 * rows) whose stored chunks span holds (spanread.h): they are copied out of it now (rows without filters
 * straight into buf), their decoding queued; span is not used after the call.  Its unallocated chunks
 * are read by HDF5 now. */
struct h5shuf_span;
H5SHUF_INTERNAL herr_t h5shuf__prefetch_start_span(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype,
                                                   const struct h5shuf_span *span, const struct h5shuf_pipeline *pl,
                                                   uint64_t start, uint64_t count, void *buf,
                                                   struct h5shuf_prefetch *pf);
H5SHUF_INTERNAL herr_t h5shuf__prefetch_finish(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf);

#endif /* H5SHUF_CHUNKIO_H */
