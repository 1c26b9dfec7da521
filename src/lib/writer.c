/*
 * writer.c - the output writer of pass 2.
 *
 * Pile boundaries do not line up with output chunks, so rows are collected in a band of whole output
 * chunks per dataset and written one band at a time: every chunk is written, and compressed, exactly
 * once, and HDF5 never reads a chunk back to merge a partial write.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t h5shuf__writer_band_rows(const struct h5shuf_dsinfo *ds, size_t nds, uint64_t rows)
{
    /* The least common multiple of the chunk rows (capped), then as many of those as fit the bytes. */
    uint64_t unit = 1, row_bytes = 0;
    for (size_t d = 0; d < nds; d++) {
        row_bytes += ds[d].row_bytes;
        if (ds[d].out_chunk_rows) {
            uint64_t c = ds[d].out_chunk_rows;
            uint64_t l = unit / gcd(unit, c) * c;
            unit = l <= (UINT64_C(1) << 24) ? l : (unit > c ? unit : c);
        }
    }
    uint64_t fit = row_bytes ? H5SHUF_BAND_BYTES_MAX / (unit * row_bytes) : 1;
    uint64_t band = unit * (fit ? fit : 1);
    return band > rows && rows > 0 ? rows : band;
}

int h5shuf__writer_init(h5shuf_job *job, struct h5shuf_writer *w, hid_t *dsets)
{
    memset(w, 0, sizeof *w);
    w->nds = job->nds;
    w->dsets = dsets;
    w->band_rows = job->band_rows;
    w->band = calloc(job->nds, sizeof *w->band);
    w->ftypes = calloc(job->nds, sizeof *w->ftypes);
    w->row_bytes = calloc(job->nds, sizeof *w->row_bytes);
    if (!w->band || !w->ftypes || !w->row_bytes)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < job->nds; d++) {
        w->ftypes[d] = job->ds[d].ftype;
        w->row_bytes[d] = job->ds[d].row_bytes;
        w->band[d] = malloc(w->band_rows * w->row_bytes[d]);
        if (!w->band[d])
            return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for an output band of %llu rows",
                                (unsigned long long)w->band_rows);
    }
    return H5SHUF_OK;
}

int h5shuf__writer_flush(h5shuf_job *job, struct h5shuf_writer *w)
{
    char cause[256];
    for (size_t d = 0; d < w->nds; d++)
        if (h5shuf__write_rows(w->dsets[d], w->ftypes[d], w->next_row, w->nband, w->band[d], 0) < 0)
            return h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot write rows %llu..%llu: %s", job->out_spec.file,
                                job->ds[d].out_path, (unsigned long long)w->next_row,
                                (unsigned long long)(w->next_row + w->nband - 1),
                                h5shuf__hdf5_cause(cause, sizeof cause));
    w->next_row += w->nband;
    w->nband = 0;
    /* Reported per band (a few MiB), not per pile: a pile can take seconds to compress, and the CLI
     * stops on SIGINT at the next report. */
    return h5shuf__progress(job, H5SHUF_PHASE_GATHER, w->next_row, job->rows);
}

int h5shuf__writer_put(h5shuf_job *job, struct h5shuf_writer *w, const unsigned char *const *rows)
{
    for (size_t d = 0; d < w->nds; d++)
        memcpy(w->band[d] + w->nband * w->row_bytes[d], rows[d], w->row_bytes[d]);
    if (++w->nband == w->band_rows)
        return h5shuf__writer_flush(job, w);
    return H5SHUF_OK;
}

void h5shuf__writer_free(struct h5shuf_writer *w)
{
    if (w->band)
        for (size_t d = 0; d < w->nds; d++)
            free(w->band[d]);
    free(w->band);
    free(w->ftypes);
    free(w->row_bytes);
    memset(w, 0, sizeof *w);
}
