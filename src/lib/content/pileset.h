/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pileset.h - a set of piles being filled in pass 1 (pileset.c): rows appended pile by pile, full buffers
 * written to the scratch file (piles.h), or encoded on the pool while scattering goes on.
 */
#ifndef H5SHUF_PILESET_H
#define H5SHUF_PILESET_H

#include <stddef.h>
#include <stdint.h>

#include "chunkio.h"
#include "ctx.h"
#include "piles.h"
#include "rowstage.h"
#include "writepace.h"

/* A pile being filled: its buffer.  Its group and datasets are opened only while a full buffer is
 * written (created at the first write), so HDF5 holds no state per pile between flushes: memory stays
 * flat however many piles there are. */
struct h5shuf_varena;
struct h5shuf_pile_writer {
    unsigned char **buf; /* nds + 1 buffers of cap rows (index: 8 bytes a row) */
    uint64_t nbuf;       /* rows in the buffers */
    uint64_t written;    /* rows on disk or being encoded */
    int created;         /* the pile's group exists */
    struct h5shuf_varena *va; /* nvlen payload buffers (vlen.c), NULL without vlen datasets */
};

/* A full pile buffer handed to the pool: its chunks are being encoded and are stored later, in order. */
struct h5shuf_pile_flush {
    uint64_t k;                  /* the pile */
    uint64_t offset, rows;       /* rows [offset, offset + rows) of the pile */
    unsigned char **buf;         /* the buffers (a spare set while the pile fills a fresh one) */
    struct h5shuf_chunk **chunk; /* nds + 1 */
    int busy;
};

/* A set of m piles being filled over range, each buffering cap rows (= its chunk rows).  With a pool of
 * several threads a full buffer is swapped for a spare one and encoded while scattering goes on
 * (H5SHUF_SPARE_PILE_BUFFERS per thread); the oldest pending flush is stored when no spare is left. */
struct h5shuf_pileset {
    struct h5shuf_range range;
    uint64_t m;
    uint64_t cap;
    struct h5shuf_pile_writer *w;
    struct h5shuf_scratch *sc;
    uint64_t first_number; /* pile k is number first_number + k */
    struct h5shuf_pile_flush *fl; /* nfl pending-flush slots (a ring), 0 when flushes are synchronous */
    size_t nfl, fl_head, fl_count;
    struct h5shuf_pipeline *pl;   /* nds + 1: the pile datasets' pipelines, from the first pile made */
    int pl_ready;
    uint64_t *vchunk;      /* per vlen dataset: payload elements per scratch chunk (= its buffer) */
    struct h5shuf_rowstage stage; /* rows of fixed size staged per pile (rowstage.h); rows staged are not
                                   * yet counted in their pile's nbuf */
    struct h5shuf_writepace pace; /* the scratch's writes (sc->raw_unless_costly) */
    uint64_t raw_chunks, packed_chunks; /* chunks of rows stored each way (sc->raw_unless_costly) */
};

/* Prepare m piles of sc over range, buffering cap rows each, with spares spare buffer sets for flushes
 * that overlap scattering (used only when cx's pool has workers; h5shuf__plan_spare_buffers): numbers
 * reserved, buffers allocated, groups made at their first flush.  Free with h5shuf__pileset_free. */
H5SHUF_INTERNAL int h5shuf__pileset_open(const struct h5shuf_ctx *cx, struct h5shuf_scratch *sc, struct h5shuf_range range,
                                         uint64_t m, uint64_t cap, size_t spares, struct h5shuf_pileset *ps);
/* ks[j] for a row that goes to no pile (beyond a head's bound). */
#define H5SHUF_PILE_NONE UINT64_MAX
/* Append rows r0 + j, j < n, to piles ks[j] (H5SHUF_PILE_NONE: skipped): row r of dataset d at
 * base[d] + r * its row bytes (a vlen dataset's: its hvl_t or char * record), global id ids[j] (ids NULL:
 * first + j).  Rows reach each pile in the order given; full buffers are flushed. */
H5SHUF_INTERNAL int h5shuf__pileset_append_rows(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, const uint64_t *ks,
                                                const unsigned char *const *base, uint64_t r0, uint64_t n,
                                                const uint64_t *ids, uint64_t first);
/* Flush every buffer, close the datasets, and record the piles (in key order) in out[0..m). */
H5SHUF_INTERNAL int h5shuf__pileset_finish(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps,
                                           struct h5shuf_pile *out);
/* Free a pileset's buffers (after finish, or on error), waiting for encodes still queued in cio. */
H5SHUF_INTERNAL void h5shuf__pileset_free(struct h5shuf_chunkio *cio, struct h5shuf_pileset *ps);

/* For pilesave.c.  Store the oldest pending flush: its encoded chunks, in the pile, after the rows already
 * there. */
H5SHUF_INTERNAL int h5shuf__pileset_flush_reap(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps);
/* Move every pile's staged rows into its buffer, and order those stores before the buffers are read. */
H5SHUF_INTERNAL void h5shuf__pileset_stage_drain_all(struct h5shuf_pileset *ps);

#endif /* H5SHUF_PILESET_H */
