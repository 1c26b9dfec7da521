/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slabs.c - pass 1's input slabs (slabs.h): which rows a slab holds, and how they are read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "inmap.h"
#include "plan.h"
#include "sample.h"
#include "slabs.h"
#include "spanread.h"
#include "vlen.h"

int h5shuf__slab_alloc(const struct h5shuf_datasets *dsets, struct h5shuf_slab *sl, uint64_t rows, struct h5shuf_err *err)
{
    sl->rows = rows;
    sl->buf = h5shuf__bufs_alloc(dsets, rows, err);
    if (!sl->buf)
        return err->status;
    for (size_t d = 0; d < dsets->n; d++)
        if (dsets->ds[d].vlen) /* records HDF5 fills with pointers: zero, so slab_release is always safe */
            memset(sl->buf[d], 0, (rows ? rows : 1) * dsets->ds[d].row_bytes);
    if (dsets->nvlen) {
        sl->va = calloc(dsets->nvlen, sizeof *sl->va);
        sl->in_arena = calloc(dsets->n, 1);
        if (!sl->va || !sl->in_arena)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    return H5SHUF_OK;
}

void h5shuf__slab_release(const struct h5shuf_datasets *dsets, struct h5shuf_slab *sl)
{
    for (size_t d = 0; sl->buf && d < dsets->n; d++) {
        if (!dsets->ds[d].vlen)
            continue;
        if (sl->in_arena && sl->in_arena[d]) { /* the payload stays in the arena for the next slab */
            memset(sl->buf[d], 0, sl->rows * dsets->ds[d].row_bytes);
            sl->in_arena[d] = 0;
        } else {
            h5shuf__vlen_reclaim(&dsets->ds[d], sl->rows, sl->buf[d]);
        }
    }
}

void h5shuf__slab_free(const struct h5shuf_datasets *dsets, struct h5shuf_slab *sl)
{
    h5shuf__bufs_free(dsets, sl->buf);
    for (size_t v = 0; sl->va && v < dsets->nvlen; v++)
        h5shuf__varena_free(&sl->va[v]);
    free(sl->va);
    free(sl->in_arena);
    *sl = (struct h5shuf_slab){0};
}


int h5shuf__slab_next(const struct h5shuf_inputs *in, uint64_t first_row, uint64_t end_row, uint64_t slab,
                      struct h5shuf_slab_pos *pos)
{
    if (first_row >= end_row)
        return 0;
    size_t f = pos->f == SIZE_MAX ? h5shuf__input_of(in, first_row) : pos->f;
    uint64_t start = pos->f == SIZE_MAX ? first_row - in->v[f].first_row : pos->start + pos->n;
    while (f < in->n && start >= in->v[f].rows) {
        f++;
        start = 0;
    }
    if (f >= in->n || in->v[f].first_row + start >= end_row)
        return 0;
    uint64_t end = end_row - in->v[f].first_row < in->v[f].rows ? end_row - in->v[f].first_row : in->v[f].rows;
    uint64_t boundary = start - start % slab + slab;
    pos->f = f;
    pos->start = start;
    pos->n = (end < boundary ? end : boundary) - start;
    return 1;
}

static int slab_fail(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                     const struct h5shuf_slab_pos *pos, size_t d, struct h5shuf_err *err)
{
    char where[512], cause[256];
    return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot read rows %llu..%llu: %s",
                        h5shuf__where(in, dsets, pos->f, d, where, sizeof where), (unsigned long long)pos->start,
                        (unsigned long long)(pos->start + pos->n - 1), h5shuf__hdf5_cause(cause, sizeof cause));
}

/* Read rows [start, start + n) of dset into buf: pipelined (pf not NULL), queued on the pool, else read
 * before the call returns. */
static herr_t read_rows(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t n,
                        unsigned char *buf, struct h5shuf_prefetch *pf)
{
    return pf ? h5shuf__prefetch_start(cio, dset, ftype, start, n, buf, pf)
              : h5shuf__chunkio_read(cio, dset, ftype, start, n, buf);
}

/* Copy rows [start, start + n) of input f's dset, all in its chunk row of rows [first, first + rows),
 * into buf from cc, decoding that chunk row into cc first unless cc holds it. */
static herr_t cache_copy(struct h5shuf_chunkio *cio, struct h5shuf_chunk_cache *cc, size_t f, hid_t dset,
                         const struct h5shuf_dsinfo *ds, uint64_t first, uint64_t rows, uint64_t start, uint64_t n,
                         unsigned char *buf)
{
    if (cc->rows == 0 || cc->f != f || cc->first != first || cc->rows != rows) {
        cc->rows = 0;
        if (h5shuf__chunkio_read(cio, dset, ds->ftype, first, rows, cc->buf) < 0)
            return -1;
        cc->f = f;
        cc->first = first;
        cc->rows = rows;
    }
    memcpy(buf, cc->buf + (start - first) * ds->row_bytes, n * ds->row_bytes);
    return 0;
}

/* The rows [*a, *b) of a slab's rows [start, start + n) of a dataset of in_rows rows in chunk rows of c
 * that are read straight into the slab (read_cached's middle part), the rest coming from its chunk row
 * cache; with no cache (cached 0), all of them. */
static void middle_rows(int cached, uint64_t c, uint64_t in_rows, uint64_t start, uint64_t n, uint64_t *a,
                        uint64_t *b)
{
    const uint64_t end = start + n;
    *a = start;
    *b = end;
    if (!cached)
        return;
    if (*a % c != 0)
        *a = *a - *a % c + c < end ? *a - *a % c + c : end;
    *b = end == in_rows ? end : end - end % c;
    if (*b < *a)
        *b = *a;
}

/* Rows [start, start + n) of dset into buf: from span when it holds them (spanread.h), else read_rows. */
static herr_t read_span(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, const struct h5shuf_span *span,
                        const struct h5shuf_pipeline *pl, uint64_t start, uint64_t n, unsigned char *buf,
                        struct h5shuf_prefetch *pf)
{
    return span && pf ? h5shuf__prefetch_start_span(cio, dset, ftype, span, pl, start, n, buf, pf)
                      : read_rows(cio, dset, ftype, start, n, buf, pf);
}

/* Read rows [start, start + n) of input f's dataset dset (in_rows rows) into buf through cc: the part in
 * the chunk row the slab starts inside, and the part in the one it ends inside, from cc (decoded whole,
 * once: the slab next to it needs it too); the whole chunk rows between, and a last partial one of the
 * input, straight into buf (pipelined: queued on pf; from span when it is not NULL: it holds them). */
static herr_t read_cached(struct h5shuf_chunkio *cio, struct h5shuf_chunk_cache *cc, size_t f, hid_t dset,
                          const struct h5shuf_dsinfo *ds, uint64_t in_rows, uint64_t start, uint64_t n,
                          unsigned char *buf, struct h5shuf_prefetch *pf, const struct h5shuf_span *span)
{
    struct h5shuf_pipeline pl;
    if (h5shuf__pipeline_probe(dset, ds->ftype, &pl) < 0 || !pl.direct || pl.chunk_rows > cc->cap_rows)
        return read_rows(cio, dset, ds->ftype, start, n, buf, pf); /* HDF5's chunk cache, sized one band */
    const uint64_t c = pl.chunk_rows, end = start + n, rb = ds->row_bytes;
    uint64_t a = start, b;
    if (a % c != 0) { /* the head, in the chunk row the slab before ended in */
        uint64_t k = a - a % c, hi = k + c < end ? k + c : end;
        if (cache_copy(cio, cc, f, dset, ds, k, k + c < in_rows ? c : in_rows - k, a, hi - a, buf) < 0)
            return -1;
        a = hi;
    }
    middle_rows(1, c, in_rows, start, n, &a, &b);
    if (b > a && read_span(cio, dset, ds->ftype, span, &pl, a, b - a, buf + (a - start) * rb, pf) < 0)
        return -1;
    if (b < a)
        b = a;
    if (end > b) /* the tail: its chunk row goes on into the next slab */
        return cache_copy(cio, cc, f, dset, ds, b, b + c < in_rows ? c : in_rows - b, b, end - b,
                          buf + (b - start) * rb);
    return 0;
}

/* Bytes of an input's file rows read at a time for a sampled copy's rows (h5shuf__input_rows_read). */
#define SAMPLED_PIECE_BYTES ((uint64_t)4 << 20)

static herr_t read_file_rows(struct h5shuf_chunkio *cio, const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t vlen_limit,
                             uint64_t start, uint64_t n, unsigned char *buf)
{
    return ds->vlen ? h5shuf__vlen_read(ds, dset, start, n, vlen_limit, buf)
                    : h5shuf__chunkio_read(cio, dset, ds->ftype, start, n, buf);
}

herr_t h5shuf__input_rows_read(struct h5shuf_chunkio *cio, const struct h5shuf_inputs *in, size_t f,
                               const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t vlen_limit, uint64_t start,
                               uint64_t n, unsigned char *buf)
{
    const struct h5shuf_sample *s = in->v[f].sample;
    if (!s)
        return read_file_rows(cio, ds, dset, vlen_limit, start, n, buf);
    if (n == 0)
        return 0;
    const uint64_t rb = ds->row_bytes, a = h5shuf__sample_select(s, start),
                   z = h5shuf__sample_select(s, start + n - 1) + 1;
    uint64_t piece = SAMPLED_PIECE_BYTES / rb ? SAMPLED_PIECE_BYTES / rb : 1;
    if (piece > z - a)
        piece = z - a;
    unsigned char *tmp = H5SHUF_FAULT() ? NULL : calloc(piece, rb); /* vlen: zeroed records, safe to reclaim */
    if (!tmp) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
                 "out of memory for %llu rows", (unsigned long long)piece);
        return -1;
    }
    herr_t r = 0;
    uint64_t out = 0;
    for (uint64_t p = a; p < z && r == 0; p += piece) {
        const uint64_t k = z - p < piece ? z - p : piece;
        if ((r = read_file_rows(cio, ds, dset, vlen_limit, p, k, tmp)) < 0)
            break;
        for (uint64_t j = 0; j < k; j++) {
            if (h5shuf__sample_has(s, p + j))
                memcpy(buf + out++ * rb, tmp + j * rb, rb);
            else if (ds->vlen) /* a row the sample leaves out: what HDF5 allocated for it */
                h5shuf__vlen_reclaim(ds, 1, tmp + j * rb);
        }
        memset(tmp, 0, k * rb); /* (vlen: the records kept are buf's now) */
    }
    if (r < 0 && ds->vlen)
        h5shuf__vlen_reclaim(ds, piece, tmp);
    free(tmp);
    return r;
}

/* Dataset d's rows [*a, *b) of slab pos that a span holds (read straight into the slab: middle_rows), and
 * its pipeline in *pl; 0 when a span cannot hold them (not chunked in whole rows h5shuf decodes, or the
 * rows do not start a chunk). */
static int span_rows(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t d, hid_t dset,
                     const struct h5shuf_slab_pos *pos, const struct h5shuf_chunk_cache *cache,
                     struct h5shuf_pipeline *pl, uint64_t *a, uint64_t *b)
{
    const struct h5shuf_dsinfo *ds = &dsets->ds[d];
    if (ds->vlen || h5shuf__pipeline_probe(dset, ds->ftype, pl) < 0 || !pl->direct || pl->split || !pl->chunk_rows) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    const int cached = cache && cache[d].buf && pl->chunk_rows <= cache[d].cap_rows;
    middle_rows(cached, pl->chunk_rows, in->v[pos->f].file_rows, pos->start, pos->n, a, b);
    return *b > *a && *a % pl->chunk_rows == 0;
}

/* Ask spans for dataset d's rows of slab ahead (of input f, whose datasets src are open) that a span would
 * hold. */
static void span_ask(struct h5shuf_spanread *spans, const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                     size_t d, hid_t dset, const struct h5shuf_slab_pos *ahead, const struct h5shuf_chunk_cache *cache)
{
    struct h5shuf_pipeline pl;
    uint64_t a, b;
    if (!span_rows(in, dsets, d, dset, ahead, cache, &pl, &a, &b))
        return;
    hid_t file = H5Iget_file_id(dset);
    const int fd = file >= 0 ? h5shuf__file_fd(file) : -1;
    (void)h5shuf__spanread_ask(spans, d, dset, &pl, ahead->f, h5shuf__input_path(&in->v[ahead->f]), fd, a, b - a);
    if (file >= 0)
        H5Fclose(file);
    H5Eclear2(H5E_DEFAULT);
}

int h5shuf__slab_start(const struct h5shuf_ctx *cx, const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                       const struct h5shuf_slab_pos *pos, struct h5shuf_slab *sl, struct h5shuf_prefetch **pf,
                       int pipelined, struct h5shuf_chunk_cache *cache, struct h5shuf_spanread *spans,
                       const struct h5shuf_slab_pos *ahead)
{
    if (!pipelined)
        spans = NULL;
    if (in->v[pos->f].sample) { /* a weighted input's sampled copy: its rows read now, in pieces */
        const hid_t *src = h5shuf__input_dsets(in, dsets, pos->f, cx->err);
        if (!src)
            return cx->err->status;
        for (size_t d = 0; d < dsets->n; d++)
            if (h5shuf__input_rows_read(cx->cio, in, pos->f, &dsets->ds[d], src[d], dsets->vlen_read_limit, pos->start,
                                        pos->n, sl->buf[d]) < 0)
                return slab_fail(in, dsets, pos, d, cx->err);
        return H5SHUF_OK;
    }
    const struct h5shuf_inmap *map = cx->cio ? h5shuf__input_map(in, pos->f) : NULL;
    if (map) { /* mapped when scanned: its stored bytes read with pread(), no HDF5 open */
        int fd = h5shuf__input_fd(in, dsets, pos->f, cx->err);
        if (fd < 0)
            return cx->err->status;
        for (size_t d = 0; d < dsets->n; d++) {
            struct h5shuf_stored sto;
            h5shuf__inmap_stored(map, d, fd, &in->map_pl[d], dsets->ds[d].row_bytes, in->v[pos->f].file_rows,
                                 &sto);
            if ((pipelined ? h5shuf__prefetch_start_stored(cx->cio, &sto, pos->start, pos->n, sl->buf[d], pf[d])
                           : h5shuf__chunkio_read_stored(cx->cio, &sto, pos->start, pos->n, sl->buf[d])) < 0)
                return slab_fail(in, dsets, pos, d, cx->err);
        }
        return H5SHUF_OK;
    }
    const hid_t *src = h5shuf__input_dsets(in, dsets, pos->f, cx->err); /* in order: one open */
    if (!src)
        return cx->err->status;
    for (size_t d = 0; d < dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        struct h5shuf_prefetch *to = pipelined ? pf[d] : NULL;
        /* the stored chunks read ahead, when they were (spanread.h) */
        struct h5shuf_pipeline pl;
        uint64_t a = 0, b = 0;
        const struct h5shuf_span *span =
            spans && span_rows(in, dsets, d, src[d], pos, cache, &pl, &a, &b)
                ? h5shuf__spanread_take(spans, d, pos->f, a, b - a) : NULL;
        /* vlen rows: read now, into the slab's arena or HDF5's allocations (h5shuf__slab_release frees them) */
        int in_arena = 0;
        if ((ds->vlen ? h5shuf__vlen_read_arena(ds, src[d], pos->start, pos->n, dsets->vlen_read_limit, sl->buf[d],
                                                sl->va ? &sl->va[ds->vslot] : NULL, &in_arena)
             : cache && cache[d].buf
                 ? read_cached(cx->cio, &cache[d], pos->f, src[d], ds, in->v[pos->f].file_rows, pos->start, pos->n,
                               sl->buf[d], to, span)
                 : read_span(cx->cio, src[d], ds->ftype, span, &pl, pos->start, pos->n, sl->buf[d], to)) < 0)
            return slab_fail(in, dsets, pos, d, cx->err);
        /* the span is copied out: the slab after this one is read into it while this one is scattered */
        if (spans && ahead && ahead->f == pos->f)
            span_ask(spans, in, dsets, d, src[d], ahead, cache);
        if (sl->in_arena)
            sl->in_arena[d] = (unsigned char)in_arena;
    }
    return H5SHUF_OK;
}

int h5shuf__slab_finish(const struct h5shuf_ctx *cx, const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                        const struct h5shuf_slab_pos *pos, struct h5shuf_prefetch **pf)
{
    int st = H5SHUF_OK;
    for (size_t d = 0; d < dsets->n; d++)
        if (h5shuf__prefetch_finish(cx->cio, pf[d]) < 0 && st == H5SHUF_OK)
            st = slab_fail(in, dsets, pos, d, cx->err);
    return st;
}
