/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writer.h - the output writer of pass 2: rows collected in bands of whole output chunks, each dataset
 * on its own, and written into the open output file (writer.c).
 */
#ifndef H5SHUF_WRITER_H
#define H5SHUF_WRITER_H

#include <hdf5.h>

#include "chunkio.h"
#include "ctx.h"
#include "output.h"
#include "refmap.h"
#include "sort.h"

/* One output dataset's band: rows collected until they fill whole output chunks, then written. */
struct h5shuf_band {
    hid_t dset;            /* not owned */
    hid_t ftype;           /* not owned */
    const char *path;      /* its path in the output, for messages */
    uint64_t row_bytes;
    unsigned char *buf;    /* rows rows; NULL for a band of one fixed-size row, written from the row put */
    uint64_t rows;         /* capacity: a multiple of the dataset's chunk rows (h5shuf__band_rows) */
    uint64_t n;            /* rows in buf */
    uint64_t next_row;     /* output row of buf's first row (in the whole output order) */
    uint64_t origin;       /* output row of the open file's row 0: writes go to next_row - origin */
    const struct h5shuf_dsinfo *vds; /* the dataset when its rows are variable-length, else NULL */
    int refs;              /* its rows hold references (H5SHUF_REFS_OBJECT, _REGION: refmap.h), rewritten
                            * for the open file in buf before each write; such a band always has a buf */
    size_t ref_elems;      /* then: elements of ftype in a row */
    struct h5shuf_varena *va;        /* then: the band's payload (buf holds offsets into it) */
    uint64_t settled;                /* then: buf's rows [0, settled) hold offsets into va, rows [settled, n)
                                      * the caller's records (borrowed: the writer's borrow) */
    /* Double buffering (a band of fixed-size rows of at most H5SHUF_BAND_BYTES_MAX, with codec threads):
     * a full band's chunks are queued for encoding in the pool and the rows go on into the other buffer;
     * the encoded chunks are stored later, in the order the bands filled (writer.c). */
    unsigned char *set[2];           /* the two buffers (set[1] NULL: written at once); buf is set[cur] */
    int cur;
    int async;                       /* the open file's dataset takes pool-encoded chunks (chunkio's pipeline) */
    struct h5shuf_pipeline pl;       /* its pipeline, when async */
    struct h5shuf_chunk **chunk[2];  /* per buffer: its chunks in flight, nchunk[s] of them (the targets'
                                      * chunk rows may differ: grown to the most any needs) */
    uint64_t nchunk[2];
    struct h5shuf_band_pending {     /* per buffer: a band queued, not yet stored */
        int active;
        uint64_t seq;                /* the writer's count of bands queued: stores go in this order */
        uint64_t start, n;           /* rows [start, start + n) of the open file */
    } pend[2];
};

/* Buffers rows of every output dataset and writes them in bands of whole output chunks, each dataset
 * on its own: datasets chunked very differently (a /y of 65536-row chunks beside an /X of 100-row
 * chunks) then cost the sum of their bands, not a band of their least common multiple. */
struct h5shuf_writer {
    size_t nds;
    struct h5shuf_band *band;  /* nds bands, then the index's, then the source index's */
    int has_index, has_source;
    const struct h5shuf_inputs *inputs; /* for the source index: the input of each row id */
    uint64_t pos;              /* output row of the next row put */
    uint64_t end;              /* the open file ends before this output row (the caller switches then) */
    uint64_t total;            /* rows of the whole output order, for progress reports */
    const char *name;          /* the open file, for messages */
    struct h5shuf_chunkio *cio; /* the pool double-buffered bands are encoded in (set at the first queued) */
    uint64_t seq;              /* bands queued so far */
    uint64_t progress_rows;    /* 0: progress after each band of the first dataset; else after every
                                * progress_rows rows put (the direct path, whose first dataset may be a
                                * small one written once per 65536 rows) */
    struct h5shuf_rewrite rw;  /* rows of references: rewritten from the first input to the open file */
    struct h5shuf_addrmap made; /* the object references made in the open file (emptied at a retarget) */
    int borrow;                /* rows of vlen sequences are kept as the caller's records, pointing to the
                                * caller's payload, until h5shuf__writer_settle (pass 2 settles after each
                                * pile, before its buffers are reused); 0: their payload is copied as each
                                * row is put */
};

/* Band rows of one output dataset: a multiple of its chunk rows (one chunk at least) near its share of
 * H5SHUF_BAND_BYTES_MAX (plan_row_bytes / all_row_bytes of it), at most rows (N).  It depends on the
 * datasets only, never on the budget: the output file's bytes follow from the sequence of writes, which
 * must not change with the budget. */
H5SHUF_INTERNAL uint64_t h5shuf__band_rows(const struct h5shuf_dsinfo *ds, uint64_t all_row_bytes, uint64_t rows);
/* Bytes of all of a writer's bands for an output order of rows rows (counted in the pass-2 budget); a
 * band of one fixed-size row holds nothing (it is written from the caller's row).  With threads > 1 a
 * band of fixed-size rows of at most H5SHUF_BAND_BYTES_MAX counts twice: it is double-buffered. */
H5SHUF_INTERNAL uint64_t h5shuf__writer_bytes(const struct h5shuf_datasets *dsets, uint64_t rows, int has_index,
                                              int has_source, unsigned threads);
/* Bands for of's datasets, its index and source index when it has them, for an output order of total
 * rows, the next row put being output row first_row; no file yet (h5shuf__writer_retarget).  threads:
 * the codec threads (h5shuf__chunkio_threads); with more than one, bands are double-buffered as
 * h5shuf__writer_bytes counts them.  A dataset whose rows hold references has them rewritten to the
 * open file's objects as every band of it is written (of->objects' map; the first input's references,
 * checked at plan time: h5shuf__objcopy_plan): object references by a lookup per object and file, region
 * references each made anew (H5Rcreate, a heap object in the file) after every band queued before is
 * stored, so the file's sequence of writes does not depend on the threads.  Free with
 * h5shuf__writer_free, also after a failure. */
H5SHUF_INTERNAL int h5shuf__writer_init(struct h5shuf_writer *w, const struct h5shuf_outfile *of, uint64_t first_row,
                                        uint64_t total, unsigned threads, struct h5shuf_err *err);
/* Point the bands at an open file's datasets dsets[0..nds+2) (as h5shuf__output_create made them, in
 * file, whose objects references are made to), whose row 0 is output row origin and which ends before
 * output row end; name is the file's, for messages.  Every band must have been flushed
 * (h5shuf__writer_flush).  < 0 when a dataset's pipeline cannot be read (cause on HDF5's stack). */
H5SHUF_INTERNAL int h5shuf__writer_retarget(struct h5shuf_writer *w, hid_t file, const hid_t *dsets, uint64_t origin,
                                            uint64_t end, const char *name);
/* Copy the payload of the vlen rows put since the last settle (the writer's borrow) into the bands' own
 * buffers: the caller may then reuse the memory those rows point into.  H5SHUF_OK, or H5SHUF_ENOMEM. */
H5SHUF_INTERNAL int h5shuf__writer_settle(const struct h5shuf_ctx *cx, struct h5shuf_writer *w);
/* Append one row (one pointer per dataset) and its global input row id (used only when the writer
 * has_index or has_source); writes a band when it is full and reports progress after each band of the
 * first dataset.  The open file must hold row w->pos. */
H5SHUF_INTERNAL int h5shuf__writer_put(const struct h5shuf_ctx *cx, struct h5shuf_writer *w,
                                       const unsigned char *const *rows, uint64_t id);
/* Append n rows taken in the order of pairs: row r of dataset d at base[d] + pairs[r].idx * its row bytes,
 * its global input row id ids[pairs[r].idx] (ids may be NULL unless the writer has_index or has_source).
 * The same writes as n calls of h5shuf__writer_put, in the same order (the output's bytes), with rows
 * copied a run at a time between band writes; the open file must hold rows w->pos .. w->pos + n - 1. */
H5SHUF_INTERNAL int h5shuf__writer_put_sorted(const struct h5shuf_ctx *cx, struct h5shuf_writer *w,
                                              unsigned char *const *base, const struct h5shuf_keyidx *pairs,
                                              uint64_t n, const uint64_t *ids);
/* Write what is left in the bands, and store every band queued. */
H5SHUF_INTERNAL int h5shuf__writer_flush(const struct h5shuf_ctx *cx, struct h5shuf_writer *w);
/* Every band wrote up to output row end: H5SHUF_OK, else H5SHUF_EINTERNAL. */
H5SHUF_INTERNAL int h5shuf__writer_check_end(const struct h5shuf_writer *w, uint64_t end, struct h5shuf_err *err);
/* Waits for encodes still queued (after a failure); frees the bands. */
H5SHUF_INTERNAL void h5shuf__writer_free(struct h5shuf_writer *w);

#endif /* H5SHUF_WRITER_H */
