/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pileset.c - a set of piles being filled in pass 1 (pileset.h): rows appended to each pile's buffer (staged
 * first when they are of fixed size), full buffers written, or encoded on the pool while scattering goes on.
 *
 * A pile being filled buffers exactly one scratch chunk of rows and writes it when full, so every write is a
 * whole, aligned chunk and the datasets need no chunk cache.  A pile's objects are open only during that
 * write (thousands of open piles would cost HDF5 tens of KiB each, outside any budget), and a pile that
 * never receives a row has no group at all (piles.c makes and opens them).
 */
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "pileset.h"
#include "rows.h"
#include "vlen.h"

void h5shuf__pileset_free(struct h5shuf_chunkio *cio, struct h5shuf_pileset *ps)
{
    h5shuf__writepace_free(&ps->pace);
    const struct h5shuf_datasets *dsets = ps->sc ? ps->sc->dsets : NULL;
    for (size_t i = 0; ps->fl && i < ps->nfl; i++) {
        struct h5shuf_pile_flush *f = &ps->fl[i];
        for (size_t d = 0; f->chunk && d <= dsets->n; d++)
            h5shuf__chunk_free(cio, f->chunk[d]); /* waits for a pending encode of f->buf */
        free(f->chunk);
        h5shuf__bufs_free(dsets, f->buf);
    }
    free(ps->fl);
    free(ps->pl);
    ps->fl = NULL;
    ps->pl = NULL;
    ps->nfl = 0;
    if (!ps->w)
        return;
    for (uint64_t k = 0; k < ps->m; k++) {
        h5shuf__bufs_free(dsets, ps->w[k].buf);
        for (size_t v = 0; ps->w[k].va && v < dsets->nvlen; v++)
            h5shuf__varena_free(&ps->w[k].va[v]);
        free(ps->w[k].va);
    }
    free(ps->w);
    ps->w = NULL;
    free(ps->vchunk);
    ps->vchunk = NULL;
    h5shuf__rowstage_free(&ps->stage);
}

int h5shuf__pileset_open(const struct h5shuf_ctx *cx, struct h5shuf_scratch *sc, struct h5shuf_range range, uint64_t m,
                         uint64_t cap, size_t spares, struct h5shuf_pileset *ps)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    struct h5shuf_err *err = cx->err;
    memset(ps, 0, sizeof *ps);
    ps->range = range;
    ps->m = m;
    ps->cap = cap;
    ps->sc = sc;
    ps->first_number = sc->next_number;
    sc->next_number += m;
    ps->w = calloc(m, sizeof *ps->w);
    if (!ps->w)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu piles", (unsigned long long)m);
    for (uint64_t k = 0; k < m; k++)
        if (!(ps->w[k].buf = h5shuf__bufs_alloc(dsets, cap, err)))
            return err->status;
    if (!dsets->nvlen) { /* rows of fixed size: staged, written to their pile's buffer in whole lines */
        size_t *part_bytes = malloc((dsets->n + 1) * sizeof *part_bytes);
        for (size_t d = 0; part_bytes && d <= dsets->n; d++)
            part_bytes[d] = h5shuf__buf_row_bytes(dsets, d);
        int failed = !part_bytes || h5shuf__rowstage_init(&ps->stage, m, dsets->n + 1, part_bytes) < 0;
        free(part_bytes);
        if (failed)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu piles", (unsigned long long)m);
    }
    if (dsets->nvlen) {
        /* payload buffers: allocated at a pile's first row, each one scratch chunk */
        ps->vchunk = calloc(dsets->nvlen, sizeof *ps->vchunk);
        if (!ps->vchunk)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu piles", (unsigned long long)m);
        for (size_t d = 0; d < dsets->n; d++)
            if (dsets->ds[d].vlen)
                ps->vchunk[dsets->ds[d].vslot] = h5shuf__vlen_chunk_elems(&dsets->ds[d], cap);
        for (uint64_t k = 0; k < m; k++)
            if (!(ps->w[k].va = calloc(dsets->nvlen, sizeof *ps->w[k].va)))
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu piles", (unsigned long long)m);
    }
    /* Asynchronous flushes: spare buffer sets and their chunks, when the pool has workers. */
    if (spares == 0 || h5shuf__chunkio_threads(cx->cio) < 2 || dsets->nvlen) /* vlen payloads: synchronous */
        return H5SHUF_OK;
    ps->fl = calloc(spares, sizeof *ps->fl);
    ps->pl = calloc(dsets->n + 1, sizeof *ps->pl);
    if (!ps->fl || !ps->pl)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    ps->nfl = spares;
    for (size_t i = 0; i < spares; i++) {
        struct h5shuf_pile_flush *f = &ps->fl[i];
        if (!(f->buf = h5shuf__bufs_alloc(dsets, cap, err)))
            return err->status;
        if (!(f->chunk = calloc(dsets->n + 1, sizeof *f->chunk)))
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        for (size_t d = 0; d <= dsets->n; d++)
            if (!(f->chunk[d] = h5shuf__chunk_new()))
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    return H5SHUF_OK;
}

/* h5shuf__pile_nsets dataset ids, all H5I_INVALID_HID; NULL when out of memory (recorded). */
static hid_t *sets_new(const struct h5shuf_datasets *dsets, struct h5shuf_err *err)
{
    hid_t *sets = malloc(h5shuf__pile_nsets(dsets) * sizeof *sets);
    if (!sets)
        h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; sets && d < h5shuf__pile_nsets(dsets); d++)
        sets[d] = H5I_INVALID_HID;
    return sets;
}

int h5shuf__pileset_flush_reap(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps)
{
    H5SHUF_KILL_POINT();
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    struct h5shuf_err *err = cx->err;
    struct h5shuf_pile_flush *f = &ps->fl[ps->fl_head];
    const struct h5shuf_pile p = {.number = ps->first_number + f->k};
    char name[H5SHUF_PILE_NAME_MAX], cause[256];
    hid_t group = H5I_INVALID_HID;
    hid_t *sets = sets_new(dsets, err);
    int st = sets ? h5shuf__pile_open(ps->sc, &p, &group, sets, err) : err->status;
    if (ps->sc->raw_unless_costly)
        h5shuf__writepace_begin(&ps->pace);
    for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK; d++) {
        if (h5shuf__extend_rows(sets[d], f->offset + f->rows) < 0 || h5shuf__chunk_write(cx->cio, sets[d], f->offset, f->chunk[d]) < 0) {
            h5shuf__pile_name(p.number, name, sizeof name);
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot write: %s", ps->sc->path, name,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        }
    }
    if (ps->sc->raw_unless_costly)
        h5shuf__writepace_end(&ps->pace);
    if (sets)
        h5shuf__pile_close(group, sets, dsets->n + 1);
    free(sets);
    f->busy = 0;
    ps->fl_head = (ps->fl_head + 1) % ps->nfl;
    ps->fl_count--;
    return st;
}

/* Hand pile k's full buffer to the pool and give the pile a spare one; the pile's group is made now if
 * it is new (the encoders need its datasets' pipelines). */
static int flush_async(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, uint64_t k)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    struct h5shuf_err *err = cx->err;
    struct h5shuf_pile_writer *w = &ps->w[k];
    int st = H5SHUF_OK;
    if (ps->fl_count == ps->nfl && (st = h5shuf__pileset_flush_reap(cx, ps)) != H5SHUF_OK)
        return st;
    if (!w->created || !ps->pl_ready) { /* (a pile made before a resumed pass 1 has its pipelines probed) */
        hid_t group = H5I_INVALID_HID;
        hid_t *sets = sets_new(dsets, err);
        if (!sets)
            return err->status;
        const struct h5shuf_pile made = {.number = ps->first_number + k};
        st = w->created ? h5shuf__pile_open(ps->sc, &made, &group, sets, err)
                        : h5shuf__pile_create(ps->sc, ps->first_number + k, ps->cap, ps->vchunk, &group, sets, err);
        for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK && !ps->pl_ready; d++)
            if (h5shuf__pipeline_probe(sets[d], h5shuf__buf_type(dsets, d), &ps->pl[d]) < 0)
                st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot inspect a pile", ps->sc->path);
        h5shuf__pile_close(group, sets, dsets->n + 1);
        free(sets);
        if (st != H5SHUF_OK)
            return st;
        w->created = 1;
        ps->pl_ready = 1;
        for (size_t d = 0; d <= dsets->n; d++)
            if (!ps->pl[d].direct || ps->pl[d].split)
                return -1; /* HDF5 or chunkio's transfers must run this pipeline: the caller writes synchronously
                            * (never so: a pile's chunks are whole rows, and its filters chunkio's) */
    }
    struct h5shuf_pile_flush *f = &ps->fl[(ps->fl_head + ps->fl_count) % ps->nfl];
    unsigned char **full = w->buf;
    w->buf = f->buf;
    f->buf = full;
    f->k = k;
    f->offset = w->written;
    f->rows = w->nbuf;
    f->busy = 1;
    ps->fl_count++;
    /* rows stored as they are unless the writes hold the scattering thread back (writepace.h); the ids
     * always packed */
    const int raw = ps->sc->raw_unless_costly && !h5shuf__writepace_compress(&ps->pace);
    for (size_t d = 0; d <= dsets->n; d++)
        if (h5shuf__chunk_encode_start(cx->cio, &ps->pl[d], f->buf[d], f->rows, raw && d < dsets->n, f->chunk[d]) < 0)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for scratch chunks");
    *(raw ? &ps->raw_chunks : &ps->packed_chunks) += 1;
    w->written += w->nbuf;
    w->nbuf = 0;
    return H5SHUF_OK;
}

/* Does pile k have vlen payload to write: a whole chunk, or anything when all? */
static int payload_due(const struct h5shuf_pileset *ps, uint64_t k, int all)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    for (size_t d = 0; ps->w[k].va && d < dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        const struct h5shuf_varena *a = ds->vlen ? &ps->w[k].va[ds->vslot] : NULL;
        if (a && (all ? a->n > 0 : a->n >= ps->vchunk[ds->vslot] * ds->elem_bytes))
            return 1;
    }
    return 0;
}

void h5shuf__pileset_stage_drain_all(struct h5shuf_pileset *ps)
{
    for (uint64_t k = 0; ps->stage.mem && k < ps->m; k++) {
        const uint32_t n = ps->stage.n[k];
        if (n) {
            h5shuf__rowstage_drain(&ps->stage, k, ps->w[k].buf, ps->w[k].nbuf);
            ps->w[k].nbuf += n;
        }
    }
    h5shuf__rowstage_fence();
}

/* Write pile k's buffer (and whole chunks of its vlen payload, or all of it when all): create the pile
 * at its first write, else open it; close it again.  Its staged rows must have been drained. */
static int pile_flush(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, uint64_t k, int all)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    struct h5shuf_err *err = cx->err;
    struct h5shuf_pile_writer *w = &ps->w[k];
    const struct h5shuf_pile p = {.number = ps->first_number + k};
    char cause[256];
    if (w->nbuf == 0 && !payload_due(ps, k, all))
        return H5SHUF_OK;
    H5SHUF_KILL_POINT();
    h5shuf__rowstage_fence(); /* the buffer's staged rows are stored before the pool or HDF5 reads them */
    if (ps->nfl > 0) {
        int direct = 1;
        for (size_t d = 0; ps->pl_ready && d <= dsets->n; d++)
            direct = direct && ps->pl[d].direct;
        int st = direct ? flush_async(cx, ps, k) : -1;
        if (st != -1)
            return st;
    }
    hid_t group = H5I_INVALID_HID;
    const size_t nsets = h5shuf__pile_nsets(dsets);
    hid_t *sets = sets_new(dsets, err);
    if (!sets)
        return err->status;
    int st = !w->created ? h5shuf__pile_create(ps->sc, p.number, ps->cap, ps->vchunk, &group, sets, err)
                         : h5shuf__pile_open_whole(ps->sc, &p, &group, sets, err);
    w->created = 1;
    for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK; d++) {
        if (h5shuf__chunkio_write(cx->cio, sets[d], h5shuf__buf_type(dsets, d), w->written, w->nbuf, w->buf[d], 1) < 0) {
            char name[H5SHUF_PILE_NAME_MAX];
            h5shuf__pile_name(p.number, name, sizeof name);
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot write: %s", ps->sc->path, name,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        }
    }
    for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (!ds->vlen)
            continue;
        struct h5shuf_varena *a = &w->va[ds->vslot];
        if (h5shuf__vlen_pile_flush(ds, sets[dsets->n + 1 + ds->vslot], ps->vchunk[ds->vslot], all, &a->written, a) < 0) {
            char name[H5SHUF_PILE_NAME_MAX];
            h5shuf__pile_name(p.number, name, sizeof name);
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot write: %s", ps->sc->path, name,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        }
    }
    h5shuf__pile_close(group, sets, nsets);
    free(sets);
    if (st == H5SHUF_OK) {
        w->written += w->nbuf;
        w->nbuf = 0;
    }
    return st;
}

/* Pile k's stage holds c rows: move them to its buffer when the stage or the buffer is full, and flush a
 * full buffer. */
static int stage_check(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, uint64_t k, uint32_t c)
{
    struct h5shuf_pile_writer *w = &ps->w[k];
    if (c < ps->stage.per && c < ps->cap - w->nbuf)
        return H5SHUF_OK;
    h5shuf__rowstage_drain(&ps->stage, k, w->buf, w->nbuf);
    w->nbuf += c;
    return w->nbuf == ps->cap ? pile_flush(cx, ps, k, 0) : H5SHUF_OK;
}

/* Append one row (one pointer per dataset) with global id to pile k, rows not staged. */
static int append_one(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, uint64_t k, const unsigned char *const *rows,
                      uint64_t id)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    struct h5shuf_pile_writer *w = &ps->w[k];
    for (size_t d = 0; d < dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (ds->vlen) { /* lengths in the buffer (uint64 per element), payload in the pile's arena */
            struct h5shuf_varena *a = &w->va[ds->vslot];
            uint64_t *lens = (uint64_t *)(void *)(w->buf[d] + w->nbuf * ds->elems * sizeof(uint64_t));
            if ((a->cap == 0 && h5shuf__varena_reserve(a, h5shuf__vlen_arena_bytes(ds, ps->vchunk[ds->vslot])) < 0) ||
                h5shuf__vlen_pile_put(ds, rows[d], lens, a) < 0)
                return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for variable-length rows");
            continue;
        }
        uint64_t rb = ds->row_bytes;
        h5shuf__row_copy(w->buf[d] + w->nbuf * rb, rows[d], rb);
    }
    memcpy(w->buf[dsets->n] + w->nbuf * sizeof id, &id, sizeof id);
    if (++w->nbuf == ps->cap || payload_due(ps, k, 0))
        return pile_flush(cx, ps, k, 0);
    return H5SHUF_OK;
}

int h5shuf__pileset_append_rows(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, const uint64_t *ks,
                                const unsigned char *const *base, uint64_t r0, uint64_t n, const uint64_t *ids,
                                uint64_t first)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    int st = H5SHUF_OK;
    if (ps->stage.mem) { /* staged; moved to the buffer when the stage or the buffer is full */
        for (uint64_t j = 0; j < n && st == H5SHUF_OK; j++)
            if (ks[j] != H5SHUF_PILE_NONE)
                st = stage_check(cx, ps, ks[j],
                                 h5shuf__rowstage_put(&ps->stage, ks[j], base, r0 + j, ids ? ids[j] : first + j));
        return st;
    }
    const unsigned char *rows[64];
    const unsigned char **rp = dsets->n <= 64 ? rows : malloc(dsets->n * sizeof *rp);
    if (!rp)
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    for (uint64_t j = 0; j < n && st == H5SHUF_OK; j++) {
        if (ks[j] == H5SHUF_PILE_NONE)
            continue;
        for (size_t d = 0; d < dsets->n; d++)
            rp[d] = base[d] + (r0 + j) * h5shuf__buf_row_bytes(dsets, d);
        st = append_one(cx, ps, ks[j], rp, ids ? ids[j] : first + j);
    }
    if (rp != rows)
        free(rp);
    return st;
}

int h5shuf__pileset_finish(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, struct h5shuf_pile *out)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    h5shuf__pileset_stage_drain_all(ps);
    for (uint64_t k = 0; k < ps->m; k++) {
        int st = pile_flush(cx, ps, k, 1);
        if (st != H5SHUF_OK)
            return st;
    }
    while (ps->fl_count > 0) {
        int st = h5shuf__pileset_flush_reap(cx, ps);
        if (st != H5SHUF_OK)
            return st;
    }
    for (uint64_t k = 0; k < ps->m; k++) {
        out[k].range.lo = h5shuf__range_cut(ps->range, ps->m, k);
        out[k].range.hi = h5shuf__range_cut(ps->range, ps->m, k + 1);
        out[k].number = ps->first_number + k;
        out[k].rows = ps->w[k].written;
        out[k].bytes = 0;
        for (size_t d = 0; ps->w[k].va && d < dsets->n; d++)
            if (dsets->ds[d].vlen)
                out[k].bytes += ps->w[k].va[dsets->ds[d].vslot].written * dsets->ds[d].elem_bytes;
    }
    h5shuf__pileset_free(cx->cio, ps);
    return H5SHUF_OK;
}
