/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writer.c - the output writer of pass 2.
 *
 * Pile boundaries do not line up with output chunks, so each output dataset collects its rows in a band
 * of whole chunks and writes one band at a time: every chunk is written, and compressed, exactly once,
 * and HDF5 never reads a chunk back to merge a partial write.  Progress is reported after each write of
 * the first dataset (a few MiB), so an interrupt is seen promptly.
 *
 * With codec threads, a band of at most H5SHUF_BAND_BYTES_MAX whose chunks h5shuf encodes itself is
 * double-buffered: when it fills, its chunks are queued in the pool and the rows go on into its other
 * buffer; the chunks are stored when that buffer is needed again, or at a flush.  A synchronous write
 * waited for all of a band's chunks, and a band of a few chunks (3 of /X beside a /y, or the one chunk of
 * a /y) left threads idle at the end of each band: 30% of a gzip run for an 8 MB /y.  Stores happen in
 * the order the bands filled, and a write HDF5 makes itself (a band that is not double-buffered) first
 * stores every band queued before it, so the file's sequence of chunk writes, hence its bytes, is the
 * same as with synchronous writes.
 */
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "inputs.h"
#include "plan.h"
#include "vlen.h"
#include "writer.h"

/*-*************************************
*  Band sizes and the writer's memory
***************************************/

uint64_t h5shuf__band_rows(const struct h5shuf_dsinfo *ds, uint64_t all_row_bytes, uint64_t rows)
{
    /* The dataset's share of H5SHUF_BAND_BYTES_MAX, in proportion to its part of a row. */
    /* plan_row_bytes: vlen rows count their estimated payload, so their bands are byte-sized too */
    uint64_t unit = ds->out_chunk_rows ? ds->out_chunk_rows : 1;
    if (unit > UINT64_MAX / ds->plan_row_bytes) /* absurd chunk: one chunk; the plan refuses its bytes */
        return unit > rows && rows > 0 ? rows : unit;
    uint64_t share = (uint64_t)((double)H5SHUF_BAND_BYTES_MAX * (double)ds->plan_row_bytes / (double)all_row_bytes);
    uint64_t fit = share / (unit * ds->plan_row_bytes);
    if (ds->vlen && fit == 0 && share > 0) {
        /* A chunk of vlen rows holds only their heap ids (16 bytes each); its payload may be far larger
         * than the share.  Write it in k equal parts instead: a chunk rewritten k times costs little,
         * a band of a whole chunk of payload could cost tens of MiB. */
        uint64_t k = (uint64_t)(((h5shuf_u128)unit * ds->plan_row_bytes + share - 1) / share);
        uint64_t band = (unit + k - 1) / k;
        return band > rows && rows > 0 ? rows : band;
    }
    uint64_t band = unit * (fit ? fit : 1);
    return band > rows && rows > 0 ? rows : band;
}

/* Rows of the index bands: whole index chunks (H5SHUF_INDEX_CHUNK_ROWS), at most the output's rows. */
static uint64_t index_band_rows(uint64_t rows)
{
    return rows < H5SHUF_INDEX_CHUNK_ROWS ? rows : H5SHUF_INDEX_CHUNK_ROWS;
}

/* Most chunks of a double-buffered band: each queued chunk holds an encoding buffer of its bytes + 1/16 +
 * 4 KiB (chunkio.c), so bands of many tiny chunks (1-row chunks of 64 bytes: 2 x 12 500 of them, 150 MiB)
 * are written synchronously, as before. */
#define DOUBLED_CHUNKS_MAX 16

/* Is a band of n rows of row_bytes, in chunks of chunk_rows, double-buffered with threads codec threads? */
static int band_doubled(uint64_t n, uint64_t row_bytes, uint64_t chunk_rows, int vlen, unsigned threads)
{
    return threads > 1 && !vlen && n > 1 && n <= H5SHUF_BAND_BYTES_MAX / row_bytes && chunk_rows > 0 &&
           (n + chunk_rows - 1) / chunk_rows <= DOUBLED_CHUNKS_MAX;
}

uint64_t h5shuf__writer_bytes(const struct h5shuf_datasets *dsets, uint64_t rows, int has_index, int has_source,
                              unsigned threads)
{
    /* saturating: a band that overflows 64 bits makes the plan refuse the budget, not wrap */
    uint64_t bytes = 0;
    for (size_t d = 0; d < dsets->n; d++) {
        uint64_t n = h5shuf__band_rows(&dsets->ds[d], dsets->row_bytes, rows);
        const int refs = dsets->ds[d].vlen ? 0 : h5shuf__type_ref_kinds(dsets->ds[d].ftype);
        if (n == 1 && !dsets->ds[d].vlen && !refs) /* written from the caller's row */
            continue;
        h5shuf_u128 b = (h5shuf_u128)n * dsets->ds[d].plan_row_bytes;
        if (band_doubled(n, dsets->ds[d].row_bytes, dsets->ds[d].out_chunk_rows,
                         dsets->ds[d].vlen || (refs & H5SHUF_REFS_REGION), threads))
            b *= 2;
        bytes = b > UINT64_MAX - bytes ? UINT64_MAX : bytes + (uint64_t)b;
    }
    uint64_t ir = index_band_rows(rows);
    if (has_index) /* the index's band */
        bytes += ir * sizeof(uint64_t) * (band_doubled(ir, sizeof(uint64_t), H5SHUF_INDEX_CHUNK_ROWS, 0, threads) ? 2 : 1);
    if (has_source)
        bytes += ir * sizeof(uint32_t) * (band_doubled(ir, sizeof(uint32_t), H5SHUF_INDEX_CHUNK_ROWS, 0, threads) ? 2 : 1);
    return bytes;
}

/*-*************************************
*  Setting up the writer
***************************************/

int h5shuf__writer_init(struct h5shuf_writer *w, const struct h5shuf_outfile *of, uint64_t first_row, uint64_t total,
                        unsigned threads, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = of->dsets;
    memset(w, 0, sizeof *w);
    w->nds = dsets->n;
    w->has_index = of->index_path != NULL;
    w->has_source = of->source_index_path != NULL;
    w->inputs = of->inputs;
    w->pos = w->end = first_row;
    w->total = total;
    w->band = calloc(dsets->n + 2, sizeof *w->band);
    if (!w->band)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < dsets->n + 2; d++) {
        struct h5shuf_band *b = &w->band[d];
        b->dset = H5I_INVALID_HID;
        b->next_row = first_row;
        if (d < dsets->n) {
            b->ftype = dsets->ds[d].ftype;
            b->path = dsets->ds[d].out_path;
            b->row_bytes = dsets->ds[d].row_bytes;
            b->rows = h5shuf__band_rows(&dsets->ds[d], dsets->row_bytes, total);
            b->refs = dsets->ds[d].vlen ? 0 : h5shuf__type_ref_kinds(b->ftype);
            if (b->refs && !of->objects)
                return h5shuf__fail(err, H5SHUF_EINTERNAL, "%s: references to rewrite, and no reference map", b->path);
            if (b->refs)
                b->ref_elems = (size_t)(b->row_bytes / H5Tget_size(b->ftype));
            if (dsets->ds[d].vlen) {
                b->vds = &dsets->ds[d];
                if (!(b->va = calloc(1, sizeof *b->va)))
                    return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            }
        } else if (d == dsets->n) { /* the index: whole chunks of H5SHUF_INDEX_CHUNK_ROWS */
            if (!w->has_index)
                continue;
            b->ftype = H5T_NATIVE_UINT64;
            b->path = of->index_path;
            b->row_bytes = sizeof(uint64_t);
            b->rows = index_band_rows(total);
        } else { /* the source index, chunked like the index */
            if (!w->has_source)
                continue;
            b->ftype = h5shuf__source_type(of->inputs);
            b->path = of->source_index_path;
            b->row_bytes = H5Tget_size(b->ftype);
            b->rows = index_band_rows(total);
        }
        if (b->rows == 1 && !b->vds && !b->refs) /* a band of one row is written from the row itself */
            continue;
        uint64_t chunk_rows = d < dsets->n ? dsets->ds[d].out_chunk_rows : H5SHUF_INDEX_CHUNK_ROWS;
        /* (region references make heap objects in the file as the band is written: HDF5 writes it) */
        int doubled = band_doubled(b->rows, b->row_bytes, chunk_rows, b->vds || (b->refs & H5SHUF_REFS_REGION), threads);
        for (int s = 0; s < 1 + doubled; s++)
            if (!(b->set[s] = H5SHUF_FAULT() ? NULL : malloc((b->rows ? b->rows : 1) * b->row_bytes)))
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for an output band of %llu rows",
                                    (unsigned long long)b->rows);
        b->buf = b->set[0];
    }
    if (of->objects) /* the first input's references (the only input's: jobplan.c) */
        w->rw = (struct h5shuf_rewrite){.map = &of->objects->map, .src = of->inputs->v[0].file,
                                        .out = H5I_INVALID_HID, .drop = of->drop_references, .made = &w->made};
    return H5SHUF_OK;
}

int h5shuf__writer_retarget(struct h5shuf_writer *w, hid_t file, const hid_t *dsets, uint64_t origin, uint64_t end,
                            const char *name)
{
    int r = 0;
    w->rw.out = file;
    h5shuf__addrmap_clear(&w->made); /* (another file: its objects at other addresses) */
    for (size_t d = 0; d < w->nds + 2; d++) {
        struct h5shuf_band *b = &w->band[d];
        b->dset = dsets[d];
        b->origin = origin;
        b->async = 0;
        if (b->set[1] && b->dset >= 0) {
            if (h5shuf__pipeline_probe(b->dset, b->ftype, &b->pl) < 0)
                r = -1;
            /* chunks that split rows: a chunk row is many chunks, queued and stored by chunkio_write */
            b->async = r == 0 && b->pl.direct && !b->pl.split && b->rows % b->pl.chunk_rows == 0 &&
                       b->rows / b->pl.chunk_rows <= DOUBLED_CHUNKS_MAX;
        }
    }
    w->end = end;
    w->name = name;
    return r;
}

/*-*************************************
*  Storing bands: encoding queued, written in order
***************************************/

/* Store the band queued in buffer s of band b: its chunks, in order, each when its encoding is done. */
static int band_store(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, struct h5shuf_band *b, int s)
{
    H5SHUF_KILL_POINT();
    char cause[256];
    struct h5shuf_band_pending *q = &b->pend[s];
    q->active = 0;
    const uint64_t cr = b->pl.chunk_rows;
    for (uint64_t k = 0; k * cr < q->n; k++)
        if (h5shuf__chunk_write(w->cio, b->dset, q->start + k * cr, b->chunk[s][k]) < 0)
            return h5shuf__fail(cx->err, H5SHUF_EIO, "%s:%s: cannot write rows %llu..%llu: %s", w->name, b->path,
                                (unsigned long long)q->start, (unsigned long long)(q->start + q->n - 1),
                                h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

/* Store every band queued up to number seq (all of them: UINT64_MAX), oldest first. */
static int store_through(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, uint64_t seq)
{
    for (;;) {
        struct h5shuf_band *first = NULL;
        int fs = 0;
        for (size_t d = 0; d < w->nds + 2; d++)
            for (int s = 0; s < 2; s++) {
                const struct h5shuf_band_pending *q = &w->band[d].pend[s];
                if (q->active && q->seq <= seq && (!first || q->seq < first->pend[fs].seq)) {
                    first = &w->band[d];
                    fs = s;
                }
            }
        if (!first)
            return H5SHUF_OK;
        int st = band_store(cx, w, first, fs);
        if (st != H5SHUF_OK)
            return st;
    }
}

/* Queue the encoding of b's full buffer (its rows from row start of the open file) and go on in the
 * other buffer, storing first what that one holds. */
static int band_queue(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, struct h5shuf_band *b, uint64_t start)
{
    const int s = b->cur;
    const uint64_t cr = b->pl.chunk_rows, nchunks = (b->rows + cr - 1) / cr;
    w->cio = cx->cio;
    if (b->nchunk[s] < nchunks) {
        struct h5shuf_chunk **v = H5SHUF_FAULT() ? NULL : realloc(b->chunk[s], nchunks * sizeof *v);
        if (!v)
            return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
        b->chunk[s] = v;
        for (; b->nchunk[s] < nchunks; b->nchunk[s]++)
            if (!(v[b->nchunk[s]] = H5SHUF_FAULT() ? NULL : h5shuf__chunk_new()))
                return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    }
    for (uint64_t k = 0; k * cr < b->n; k++) {
        uint64_t n = b->n - k * cr < cr ? b->n - k * cr : cr;
        if (H5SHUF_FAULT() ||
            h5shuf__chunk_encode_start(cx->cio, &b->pl, b->buf + k * cr * b->row_bytes, n, 0, b->chunk[s][k]) < 0)
            return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "%s:%s: out of memory for output chunks", w->name, b->path);
    }
    b->pend[s] = (struct h5shuf_band_pending){1, w->seq++, start, b->n};
    b->cur = s ^ 1;
    b->buf = b->set[b->cur];
    return b->pend[b->cur].active ? store_through(cx, w, b->pend[b->cur].seq) : H5SHUF_OK;
}

/* Rewrite the references of b's rows (in its buffer) for the open file.  A region reference is a heap
 * object made in the file: every band queued before is stored first, as a run without threads (no band
 * queued) would have written it. */
static int band_refs(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, struct h5shuf_band *b)
{
    char where[600];
    int st = b->refs & H5SHUF_REFS_REGION ? store_through(cx, w, UINT64_MAX) : H5SHUF_OK;
    snprintf(where, sizeof where, "%s:%s", w->name, b->path);
    struct h5shuf_rewrite rw = w->rw;
    rw.where = where;
    return st == H5SHUF_OK ? h5shuf__refs_rewrite(&rw, b->ftype, b->buf, (size_t)b->n * b->ref_elems, cx->err) : st;
}

/* Write the band's rows, held in rows (its buffer, or the one row put). */
static int band_write(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, size_t d, struct h5shuf_band *b,
                      unsigned char *rows)
{
    H5SHUF_KILL_POINT();
    char cause[256];
    uint64_t start = b->next_row - b->origin;
    int st = b->refs ? band_refs(cx, w, b) : H5SHUF_OK; /* (a band of references always has its buffer) */
    if (st != H5SHUF_OK)
        return st;
    if (b->async && rows == b->buf && start % b->pl.chunk_rows == 0)
        st = band_queue(cx, w, b, start);
    else if ((st = store_through(cx, w, UINT64_MAX)) != H5SHUF_OK) /* HDF5's writes come after the queued ones */
        return st;
    else if ((b->vds ? h5shuf__vlen_band_write(b->vds, b->dset, start, b->n, b->settled, rows, b->va)
                     : h5shuf__chunkio_write(cx->cio, b->dset, b->ftype, start, b->n, rows, 0)) < 0)
        return h5shuf__fail(cx->err, H5SHUF_EIO, "%s:%s: cannot write rows %llu..%llu: %s", w->name, b->path,
                            (unsigned long long)start, (unsigned long long)(start + b->n - 1),
                            h5shuf__hdf5_cause(cause, sizeof cause));
    if (st != H5SHUF_OK)
        return st;
    b->next_row += b->n;
    b->n = 0;
    b->settled = 0;
    if (b->va)
        b->va->n = 0;
    if (d == 0 && !w->progress_rows)
        return h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_GATHER, b->next_row, w->total);
    return H5SHUF_OK;
}

/*-*************************************
*  Putting rows
***************************************/

int h5shuf__writer_flush(const struct h5shuf_ctx *cx, struct h5shuf_writer *w)
{
    for (size_t d = 0; d < w->nds + 2; d++) {
        int st = w->band[d].n ? band_write(cx, w, d, &w->band[d], w->band[d].buf) : H5SHUF_OK;
        if (st != H5SHUF_OK)
            return st;
    }
    return store_through(cx, w, UINT64_MAX);
}

static int band_put(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, size_t d, const void *row)
{
    struct h5shuf_band *b = &w->band[d];
    if (!b->buf) { /* a band of one row: written as it is (chunkio only reads it) */
        b->n = 1;
        return band_write(cx, w, d, b, (unsigned char *)row);
    }
    if (!b->vds)
        h5shuf__row_copy(b->buf + b->n * b->row_bytes, row, b->row_bytes);
    else if (w->borrow && b->vds->vlen == H5SHUF_VLEN_SEQ) /* the row's record as it is: settled later */
        memcpy(b->buf + b->n * b->row_bytes, row, b->row_bytes);
    else if (h5shuf__vlen_band_put(b->vds, row, b->buf + b->n * b->row_bytes, b->va) < 0)
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for an output band of variable-length rows");
    else
        b->settled = b->n + 1;
    return ++b->n == b->rows ? band_write(cx, w, d, b, b->buf) : H5SHUF_OK;
}

int h5shuf__writer_settle(const struct h5shuf_ctx *cx, struct h5shuf_writer *w)
{
    for (size_t d = 0; d < w->nds; d++) {
        struct h5shuf_band *b = &w->band[d];
        if (!b->vds || b->settled == b->n)
            continue;
        if (h5shuf__vlen_band_settle(b->vds, b->buf, b->settled, b->n, b->va) < 0)
            return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for an output band of variable-length rows");
        b->settled = b->n;
    }
    return H5SHUF_OK;
}

int h5shuf__writer_put(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, const unsigned char *const *rows,
                       uint64_t id)
{
    int st = H5SHUF_OK;
    for (size_t d = 0; d < w->nds && st == H5SHUF_OK; d++)
        st = band_put(cx, w, d, rows[d]);
    if (st == H5SHUF_OK && w->has_index)
        st = band_put(cx, w, w->nds, &id);
    if (st == H5SHUF_OK && w->has_source) {
        unsigned char src[16];
        h5shuf__source_row(w->inputs, id, src, w->band[w->nds + 1].row_bytes);
        st = band_put(cx, w, w->nds + 1, src);
    }
    w->pos++;
    if (st == H5SHUF_OK && w->progress_rows && (w->pos % w->progress_rows == 0 || w->pos == w->total))
        st = h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_GATHER, w->pos, w->total);
    return st;
}

/* Rows ahead of the one copied whose first cache line is prefetched: rows are taken in key order, at
 * random in a pile larger than the caches (a cache miss each, without it). */
#define PREFETCH_AHEAD 16

/* Copy the rows src + p[j].idx * rb for j < m to dst, one after another; p holds avail >= m records, so
 * rows past m are prefetched too. */
static void gather_rows(unsigned char *dst, const unsigned char *src, uint64_t rb, const struct h5shuf_keyidx *p,
                        uint64_t m, uint64_t avail)
{
    const uint64_t ahead = avail - m < PREFETCH_AHEAD ? avail - m : PREFETCH_AHEAD;
    for (uint64_t j = 0; j < m; j++) {
        if (j + PREFETCH_AHEAD < m + ahead)
            __builtin_prefetch(src + p[j + PREFETCH_AHEAD].idx * rb);
        h5shuf__row_copy(dst + j * rb, src + p[j].idx * rb, rb);
    }
}

/* May rows go into every band m at a time: each has a buffer of fixed-size rows? */
static int bands_take_runs(const struct h5shuf_writer *w)
{
    for (size_t d = 0; d < w->nds + 2; d++) {
        const struct h5shuf_band *b = &w->band[d];
        const int used = d < w->nds || (d == w->nds ? w->has_index : w->has_source);
        if (used && (!b->buf || b->vds))
            return 0;
    }
    return 1;
}

int h5shuf__writer_put_sorted(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, unsigned char *const *base,
                              const struct h5shuf_keyidx *pairs, uint64_t n, const uint64_t *ids)
{
    int st = H5SHUF_OK;
    if (!bands_take_runs(w)) { /* a band of one row, or of vlen rows: row by row */
        const unsigned char *rows[64];
        const unsigned char **rp = w->nds <= 64 ? rows : malloc(w->nds * sizeof *rp);
        if (!rp)
            return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
        for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
            for (size_t d = 0; d < w->nds; d++)
                rp[d] = base[d] + pairs[r].idx * w->band[d].row_bytes;
            st = h5shuf__writer_put(cx, w, rp, ids ? ids[pairs[r].idx] : 0);
        }
        if (rp != rows)
            free(rp);
        return st;
    }
    struct h5shuf_band *ib = &w->band[w->nds], *sb = &w->band[w->nds + 1];
    for (uint64_t i = 0; i < n && st == H5SHUF_OK;) {
        /* a run that fills no band before its last row: the bands are written after it in the order a row
         * at a time writes them (the output's bytes follow the order of writes) */
        uint64_t m = n - i;
        for (size_t d = 0; d < w->nds + 2; d++)
            if (d < w->nds || (d == w->nds ? w->has_index : w->has_source))
                m = w->band[d].rows - w->band[d].n < m ? w->band[d].rows - w->band[d].n : m;
        for (size_t d = 0; d < w->nds; d++) {
            struct h5shuf_band *b = &w->band[d];
            gather_rows(b->buf + b->n * b->row_bytes, base[d], b->row_bytes, pairs + i, m, n - i);
            b->n += m;
        }
        for (uint64_t j = 0; w->has_index && j < m; j++)
            memcpy(ib->buf + (ib->n + j) * sizeof(uint64_t), &ids[pairs[i + j].idx], sizeof(uint64_t));
        for (uint64_t j = 0; w->has_source && j < m; j++)
            h5shuf__source_row(w->inputs, ids[pairs[i + j].idx], sb->buf + (sb->n + j) * sb->row_bytes, sb->row_bytes);
        ib->n += w->has_index ? m : 0;
        sb->n += w->has_source ? m : 0;
        for (size_t d = 0; d < w->nds + 2 && st == H5SHUF_OK; d++)
            if (w->band[d].rows && w->band[d].n == w->band[d].rows)
                st = band_write(cx, w, d, &w->band[d], w->band[d].buf);
        const uint64_t before = w->pos;
        w->pos += m;
        i += m;
        if (st == H5SHUF_OK && w->progress_rows &&
            (w->pos / w->progress_rows != before / w->progress_rows || w->pos == w->total))
            st = h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_GATHER, w->pos, w->total);
    }
    return st;
}

/*-*************************************
*  The end of the output
***************************************/

int h5shuf__writer_check_end(const struct h5shuf_writer *w, uint64_t end, struct h5shuf_err *err)
{
    for (size_t d = 0; d < w->nds + 2; d++)
        if (w->band[d].rows && w->band[d].next_row != end)
            return h5shuf__fail(err, H5SHUF_EINTERNAL, "wrote %llu rows of %llu", (unsigned long long)w->band[d].next_row,
                                (unsigned long long)end);
    return H5SHUF_OK;
}

void h5shuf__writer_free(struct h5shuf_writer *w)
{
    if (w->band)
        for (size_t d = 0; d < w->nds + 2; d++) {
            struct h5shuf_band *b = &w->band[d];
            for (int s = 0; s < 2; s++) {
                for (uint64_t k = 0; k < b->nchunk[s]; k++)
                    h5shuf__chunk_free(w->cio, b->chunk[s][k]); /* waits for an encode still queued */
                free(b->chunk[s]);
                free(b->set[s]);
            }
            if (w->band[d].va)
                h5shuf__varena_free(w->band[d].va);
            free(w->band[d].va);
        }
    free(w->band);
    h5shuf__addrmap_free(&w->made);
    memset(w, 0, sizeof *w);
}
