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

#include "internal.h"

uint64_t h5shuf__band_rows(const struct h5shuf_dsinfo *ds, uint64_t all_row_bytes, uint64_t rows)
{
    /* The dataset's share of H5SHUF_BAND_BYTES_MAX, in proportion to its part of a row. */
    uint64_t unit = ds->out_chunk_rows ? ds->out_chunk_rows : 1;
    if (unit > UINT64_MAX / ds->row_bytes) /* absurd chunk: one chunk; the plan refuses its bytes */
        return unit > rows && rows > 0 ? rows : unit;
    uint64_t share = (uint64_t)((double)H5SHUF_BAND_BYTES_MAX * (double)ds->row_bytes / (double)all_row_bytes);
    uint64_t fit = share / (unit * ds->row_bytes);
    uint64_t band = unit * (fit ? fit : 1);
    return band > rows && rows > 0 ? rows : band;
}

uint64_t h5shuf__writer_bytes(const h5shuf_job *job)
{
    /* saturating: a band that overflows 64 bits makes the plan refuse the budget, not wrap */
    uint64_t bytes = 0;
    for (size_t d = 0; d < job->nds; d++) {
        h5shuf_u128 b = (h5shuf_u128)h5shuf__band_rows(&job->ds[d], job->row_bytes, job->rows) * job->ds[d].row_bytes;
        bytes = b > UINT64_MAX - bytes ? UINT64_MAX : bytes + (uint64_t)b;
    }
    if (job->index_path) /* the index's band */
        bytes += (job->rows < H5SHUF_INDEX_CHUNK_ROWS ? job->rows : H5SHUF_INDEX_CHUNK_ROWS) * sizeof(uint64_t);
    return bytes;
}

int h5shuf__writer_init(h5shuf_job *job, struct h5shuf_writer *w, hid_t *dsets)
{
    w->nds = job->nds;
    w->has_index = dsets[job->nds] >= 0;
    w->band = calloc(job->nds + 1, sizeof *w->band);
    if (!w->band)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < job->nds + (size_t)w->has_index; d++) {
        struct h5shuf_band *b = &w->band[d];
        b->dset = dsets[d];
        if (d < job->nds) {
            b->ftype = job->ds[d].ftype;
            b->row_bytes = job->ds[d].row_bytes;
            b->rows = h5shuf__band_rows(&job->ds[d], job->row_bytes, job->rows);
        } else { /* the index: whole chunks of H5SHUF_INDEX_CHUNK_ROWS */
            b->ftype = H5T_NATIVE_UINT64;
            b->row_bytes = sizeof(uint64_t);
            b->rows = job->rows < H5SHUF_INDEX_CHUNK_ROWS ? job->rows : H5SHUF_INDEX_CHUNK_ROWS;
        }
        b->buf = malloc((b->rows ? b->rows : 1) * b->row_bytes);
        if (!b->buf)
            return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for an output band of %llu rows",
                                (unsigned long long)b->rows);
    }
    return H5SHUF_OK;
}

static int band_write(h5shuf_job *job, size_t d, struct h5shuf_band *b)
{
    char cause[256];
    if (h5shuf__chunkio_write(job->cio, b->dset, b->ftype, b->next_row, b->n, b->buf, 0) < 0)
        return h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot write rows %llu..%llu: %s", job->out_spec.file,
                            d < job->nds ? job->ds[d].out_path : job->index_path, (unsigned long long)b->next_row,
                            (unsigned long long)(b->next_row + b->n - 1), h5shuf__hdf5_cause(cause, sizeof cause));
    b->next_row += b->n;
    b->n = 0;
    if (d == 0)
        return h5shuf__progress(job, H5SHUF_PHASE_GATHER, b->next_row, job->rows);
    return H5SHUF_OK;
}

int h5shuf__writer_flush(h5shuf_job *job, struct h5shuf_writer *w)
{
    for (size_t d = 0; d < w->nds + (size_t)w->has_index; d++) {
        int st = w->band[d].n ? band_write(job, d, &w->band[d]) : H5SHUF_OK;
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

static int band_put(h5shuf_job *job, size_t d, struct h5shuf_band *b, const void *row)
{
    memcpy(b->buf + b->n * b->row_bytes, row, b->row_bytes);
    return ++b->n == b->rows ? band_write(job, d, b) : H5SHUF_OK;
}

int h5shuf__writer_put(h5shuf_job *job, struct h5shuf_writer *w, const unsigned char *const *rows, uint64_t id)
{
    int st = H5SHUF_OK;
    for (size_t d = 0; d < w->nds && st == H5SHUF_OK; d++)
        st = band_put(job, d, &w->band[d], rows[d]);
    if (st == H5SHUF_OK && w->has_index)
        st = band_put(job, w->nds, &w->band[w->nds], &id);
    return st;
}

void h5shuf__writer_free(struct h5shuf_writer *w)
{
    if (w->band)
        for (size_t d = 0; d <= w->nds; d++)
            free(w->band[d].buf);
    free(w->band);
    memset(w, 0, sizeof *w);
}
