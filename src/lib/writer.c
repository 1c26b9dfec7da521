/*
 * writer.c - the output writer of pass 2.
 *
 * Pile boundaries do not line up with output chunks, so each output dataset collects its rows in a band
 * of whole chunks and writes one band at a time: every chunk is written, and compressed, exactly once,
 * and HDF5 never reads a chunk back to merge a partial write.  Progress is reported after each write of
 * the first dataset (a few MiB), so an interrupt is seen promptly.
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

uint64_t h5shuf__writer_bytes(const struct h5shuf_datasets *dsets, uint64_t rows, int has_index, int has_source)
{
    /* saturating: a band that overflows 64 bits makes the plan refuse the budget, not wrap */
    uint64_t bytes = 0;
    for (size_t d = 0; d < dsets->n; d++) {
        uint64_t n = h5shuf__band_rows(&dsets->ds[d], dsets->row_bytes, rows);
        if (n == 1 && !dsets->ds[d].vlen) /* written from the caller's row */
            continue;
        h5shuf_u128 b = (h5shuf_u128)n * dsets->ds[d].plan_row_bytes;
        bytes = b > UINT64_MAX - bytes ? UINT64_MAX : bytes + (uint64_t)b;
    }
    if (has_index) /* the index's band */
        bytes += index_band_rows(rows) * sizeof(uint64_t);
    if (has_source)
        bytes += index_band_rows(rows) * sizeof(uint32_t);
    return bytes;
}

int h5shuf__writer_init(struct h5shuf_writer *w, const struct h5shuf_outfile *of, uint64_t first_row, uint64_t total,
                        struct h5shuf_err *err)
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
            int wide = of->inputs->n > UINT16_MAX;
            b->ftype = wide ? H5T_NATIVE_UINT32 : H5T_NATIVE_UINT16;
            b->path = of->source_index_path;
            b->row_bytes = wide ? sizeof(uint32_t) : sizeof(uint16_t);
            b->rows = index_band_rows(total);
        }
        if (b->rows == 1 && !b->vds) /* a band of one row is written from the row itself */
            continue;
        b->buf = malloc((b->rows ? b->rows : 1) * b->row_bytes);
        if (!b->buf)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for an output band of %llu rows",
                                (unsigned long long)b->rows);
    }
    return H5SHUF_OK;
}

void h5shuf__writer_retarget(struct h5shuf_writer *w, const hid_t *dsets, uint64_t origin, uint64_t end, const char *name)
{
    for (size_t d = 0; d < w->nds + 2; d++) {
        w->band[d].dset = dsets[d];
        w->band[d].origin = origin;
    }
    w->end = end;
    w->name = name;
}

/* Write the band's rows, held in rows (its buffer, or the one row put). */
static int band_write(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, size_t d, struct h5shuf_band *b,
                      unsigned char *rows)
{
    char cause[256];
    uint64_t start = b->next_row - b->origin;
    if ((b->vds ? h5shuf__vlen_band_write(b->vds, b->dset, start, b->n, rows, b->va)
                : h5shuf__chunkio_write(cx->cio, b->dset, b->ftype, start, b->n, rows, 0)) < 0)
        return h5shuf__fail(cx->err, H5SHUF_EIO, "%s:%s: cannot write rows %llu..%llu: %s", w->name, b->path,
                            (unsigned long long)start, (unsigned long long)(start + b->n - 1),
                            h5shuf__hdf5_cause(cause, sizeof cause));
    b->next_row += b->n;
    b->n = 0;
    if (b->va)
        b->va->n = 0;
    if (d == 0 && !w->progress_rows)
        return h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_GATHER, b->next_row, w->total);
    return H5SHUF_OK;
}

int h5shuf__writer_flush(const struct h5shuf_ctx *cx, struct h5shuf_writer *w)
{
    for (size_t d = 0; d < w->nds + 2; d++) {
        int st = w->band[d].n ? band_write(cx, w, d, &w->band[d], w->band[d].buf) : H5SHUF_OK;
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

static int band_put(const struct h5shuf_ctx *cx, struct h5shuf_writer *w, size_t d, const void *row)
{
    struct h5shuf_band *b = &w->band[d];
    if (!b->buf) { /* a band of one row: written as it is (chunkio only reads it) */
        b->n = 1;
        return band_write(cx, w, d, b, (unsigned char *)row);
    }
    if (!b->vds)
        memcpy(b->buf + b->n * b->row_bytes, row, b->row_bytes);
    else if (h5shuf__vlen_band_put(b->vds, row, b->buf + b->n * b->row_bytes, b->va) < 0)
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for an output band of variable-length rows");
    return ++b->n == b->rows ? band_write(cx, w, d, b, b->buf) : H5SHUF_OK;
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
        size_t f = h5shuf__input_of(w->inputs, id);
        uint16_t f16 = (uint16_t)f;
        uint32_t f32 = (uint32_t)f;
        st = band_put(cx, w, w->nds + 1, w->band[w->nds + 1].row_bytes == 2 ? (const void *)&f16 : &f32);
    }
    w->pos++;
    if (st == H5SHUF_OK && w->progress_rows && (w->pos % w->progress_rows == 0 || w->pos == w->total))
        st = h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_GATHER, w->pos, w->total);
    return st;
}

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
            free(w->band[d].buf);
            if (w->band[d].va)
                h5shuf__varena_free(w->band[d].va);
            free(w->band[d].va);
        }
    free(w->band);
    memset(w, 0, sizeof *w);
}
