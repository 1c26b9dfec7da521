/*
 * writer.h - the output writer of pass 2: rows collected in bands of whole output chunks (writer.c).
 */
#ifndef H5SHUF_WRITER_H
#define H5SHUF_WRITER_H

#include <hdf5.h>

#include "datasets.h"

/* One output dataset's band: rows collected until they fill whole output chunks, then written. */
struct h5shuf_band {
    hid_t dset;            /* not owned */
    hid_t ftype;           /* not owned */
    uint64_t row_bytes;
    unsigned char *buf;    /* rows rows */
    uint64_t rows;         /* capacity: a multiple of the dataset's chunk rows (h5shuf__band_rows) */
    uint64_t n;            /* rows in buf */
    uint64_t next_row;     /* output row of buf's first row (in the whole output order) */
    uint64_t origin;       /* output row of the open target's row 0: writes go to next_row - origin */
    const struct h5shuf_dsinfo *vds; /* the dataset when its rows are variable-length, else NULL */
    struct h5shuf_varena *va;        /* then: the band's payload (buf holds offsets into it) */
};

/* Buffers rows of every output dataset and writes them in bands of whole output chunks, each dataset
 * on its own: datasets chunked very differently (a /y of 65536-row chunks beside an /X of 100-row
 * chunks) then cost the sum of their bands, not a band of their least common multiple. */
struct h5shuf_writer {
    size_t nds;
    struct h5shuf_band *band; /* nds bands, then the index's, then the source index's */
    int has_index, has_source;
    uint64_t pos;             /* rows put so far */
    uint64_t end;             /* the open target ends before this output row (outputs.c switches then) */
};

/* Band rows of one output dataset: a multiple of its chunk rows (one chunk at least) near its share of
 * H5SHUF_BAND_BYTES_MAX (row_bytes / all_row_bytes of it), at most rows (N).  It depends on the datasets
 * only, never on the budget:
 * the output file's bytes follow from the sequence of writes, which must not change with the budget. */
H5SHUF_INTERNAL uint64_t h5shuf__band_rows(const struct h5shuf_dsinfo *ds, uint64_t all_row_bytes, uint64_t rows);
/* Bytes of all the writer's bands (counted in the pass-2 budget). */
H5SHUF_INTERNAL uint64_t h5shuf__writer_bytes(const h5shuf_job *job);
/* Bands for the datasets, and the index and source index when the job asks for them; no target yet
 * (the first put opens one through h5shuf__outputs_next). */
H5SHUF_INTERNAL int h5shuf__writer_init(h5shuf_job *job, struct h5shuf_writer *w);
/* Point the bands at the open target's datasets dsets[0..nds+2) whose row 0 is output row origin. */
H5SHUF_INTERNAL void h5shuf__writer_retarget(struct h5shuf_writer *w, const hid_t *dsets, uint64_t origin, uint64_t end);
/* Append one row (one pointer per dataset) and its global input row id; writes a band when it is full. */
H5SHUF_INTERNAL int h5shuf__writer_put(h5shuf_job *job, struct h5shuf_writer *w, const unsigned char *const *rows,
                                       uint64_t id);
/* Write what is left. */
H5SHUF_INTERNAL int h5shuf__writer_flush(h5shuf_job *job, struct h5shuf_writer *w);
H5SHUF_INTERNAL void h5shuf__writer_free(struct h5shuf_writer *w);

#endif /* H5SHUF_WRITER_H */
