/*
 * piles.c - the scratch HDF5 file and the piles in it.
 *
 * Each pile is a group /piles/NNNNNN holding one extendible chunked dataset per shuffled dataset
 * ("d0", "d1", ...) and "index" (uint64 global row ids, increasing); a dataset of variable-length rows
 * has its elements' lengths in "dN" and their payload in "dN_data" (vlen.c).  A pile being filled buffers exactly
 * one scratch chunk of rows and writes it when full, so every write is a whole, aligned chunk and the
 * datasets need no chunk cache.  A pile's objects are open only during that write (thousands of open
 * piles would cost HDF5 tens of KiB each, outside any budget), and a pile that never receives a row has
 * no group at all.  The list of piles is kept in key order: pass 2 walks it in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "filters.h"
#include "h5err.h"
#include "piles.h"
#include "plan.h"
#include "rows.h"
#include "vlen.h"
#include <xxhash.h>

#define PILE_NAME_MAX 64
/* Most bytes HDF5's metadata cache may hold for the scratch file (part of the fixed overhead). */
#define SCRATCH_MDC_BYTES (4u << 20)

static void pile_name(uint64_t number, char *buf, size_t cap)
{
    snprintf(buf, cap, "/piles/%06" PRIu64, number);
}

/* The dataset of vlen slot v. */
static size_t vlen_dataset(const struct h5shuf_datasets *dsets, size_t v)
{
    size_t d = 0;
    while (d < dsets->n && !(dsets->ds[d].vlen && dsets->ds[d].vslot == v))
        d++;
    return d;
}

/* Name of pile dataset d (0 .. h5shuf__pile_nsets). */
static void pile_dset_name(const struct h5shuf_datasets *dsets, size_t d, char *buf, size_t cap)
{
    if (d == dsets->n)
        snprintf(buf, cap, "index");
    else if (d < dsets->n)
        snprintf(buf, cap, "d%zu", d);
    else
        snprintf(buf, cap, "d%zu_data", vlen_dataset(dsets, d - dsets->n - 1));
}

hid_t h5shuf__scratch_group(hid_t loc, const char *name)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    hid_t g = gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0 ? H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT)
                                                                 : H5I_INVALID_HID;
    if (gcpl >= 0)
        H5Pclose(gcpl);
    return g;
}

/* An empty scratch for piles of dsets with those filters (no file yet). */
static void scratch_init(struct h5shuf_scratch *sc, const struct h5shuf_datasets *dsets, const struct h5shuf_filters *filters,
                         const struct h5shuf_filters *id_filters)
{
    memset(sc, 0, sizeof *sc);
    sc->file = H5I_INVALID_HID;
    sc->dsets = dsets;
    sc->filters = *filters;
    sc->id_filters = *id_filters;
}

int h5shuf__scratch_reserve_as(struct h5shuf_scratch *sc, const char *dir, const char *name,
                               const struct h5shuf_datasets *dsets, const struct h5shuf_filters *filters,
                               const struct h5shuf_filters *id_filters, struct h5shuf_err *err)
{
    scratch_init(sc, dsets, filters, id_filters);
    int st = h5shuf__tempfile_create_as(&sc->tf, dir, name, "cannot create the scratch file", err);
    sc->path = sc->tf.path;
    return st;
}

int h5shuf__scratch_reserve(struct h5shuf_scratch *sc, const char *dir, const char *lead, const char *for_path,
                            const char *mid, const struct h5shuf_datasets *dsets, const struct h5shuf_filters *filters,
                            const struct h5shuf_filters *id_filters, struct h5shuf_err *err)
{
    scratch_init(sc, dsets, filters, id_filters);
    int st = h5shuf__tempfile_create(&sc->tf, dir, lead, for_path, mid, "cannot create the scratch file", err);
    sc->path = sc->tf.path;
    return st;
}

/* The scratch's file-access properties: base (copied; H5P_DEFAULT: HDF5's) with its own settings. */
static hid_t scratch_fapl(hid_t base)
{
    hid_t fapl = base == H5P_DEFAULT ? H5Pcreate(H5P_FILE_ACCESS) : H5Pcopy(base);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    /* HDF5 1.10's format: extensible-array chunk indexes append cheaply; the same on every HDF5 from 1.10 on
     * (a pile file, which readers of other HDF5 versions open, never in a format theirs cannot read). */
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
    /* A small metadata cache: with tens of thousands of piles HDF5's adaptive cache grew past 300 MiB in
     * our measurements (200k rows, 50k piles: 392 MB peak RSS, 69 MB with this cap, same time). */
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    if (H5Pget_mdc_config(fapl, &mdc) >= 0) {
        mdc.set_initial_size = 1;
        mdc.initial_size = SCRATCH_MDC_BYTES / 4;
        mdc.min_size = SCRATCH_MDC_BYTES / 4;
        mdc.max_size = SCRATCH_MDC_BYTES;
        H5Pset_mdc_config(fapl, &mdc);
    }
    return fapl;
}

int h5shuf__scratch_reopen(struct h5shuf_scratch *sc, hid_t base, struct h5shuf_err *err)
{
    char cause[256];
    hid_t fapl = scratch_fapl(base);
    sc->file = H5SHUF_FAULT() || fapl < 0 ? H5I_INVALID_HID : H5Fopen(h5shuf__tempfile_hdf5_name(&sc->tf), H5F_ACC_RDWR, fapl);
    if (sc->file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (sc->file < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot reopen the interrupted run's scratch file: %s", sc->path, cause);
    return H5SHUF_OK;
}

int h5shuf__scratch_open(struct h5shuf_scratch *sc, hid_t base, struct h5shuf_err *err)
{
    char cause[256];
    hid_t fapl = scratch_fapl(base);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0); /* the root group too: no clock in the file (h5shuf__scratch_group) */
    sc->file = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Fcreate(h5shuf__tempfile_hdf5_name(&sc->tf), H5F_ACC_TRUNC, fcpl, fapl);
    if (sc->file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause); /* before H5Pclose clears the stack */
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (sc->file < 0) {
        if (h5shuf__tempfile_lost(&sc->tf))
            return h5shuf__tempfile_fail_replaced(&sc->tf, sc->path, err);
        h5shuf__fd_shortage(h5shuf__tempfile_hdf5_name(&sc->tf), cause, sizeof cause); /* (HDF5: "unable to open file") */
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot create the scratch file: %s", sc->path, cause);
    }
    hid_t g = h5shuf__scratch_group(sc->file, "/piles");
    if (g < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", sc->path, h5shuf__hdf5_cause(cause, sizeof cause));
    H5Gclose(g);
    return H5SHUF_OK;
}

void h5shuf__scratch_destroy(struct h5shuf_scratch *sc)
{
    /* The scratch is discarded: empty it before HDF5's flush at close, which then needs no room on a full
     * disk (a failed H5Fclose leaves HDF5 1.10 unable to close the file, even at exit) and writes little. */
    if (sc->file >= 0)
        h5shuf__tempfile_empty(&sc->tf);
    if (sc->file >= 0)
        H5Fclose(sc->file);
    sc->file = H5I_INVALID_HID;
    h5shuf__tempfile_remove(&sc->tf);
    sc->path = NULL;
    free(sc->piles);
    sc->piles = NULL;
    sc->npiles = sc->cap = 0;
}

int h5shuf__scratch_reset(struct h5shuf_scratch *sc, struct h5shuf_err *err)
{
    char cause[256];
    if (H5Ldelete(sc->file, "/piles", H5P_DEFAULT) < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", sc->path, h5shuf__hdf5_cause(cause, sizeof cause));
    hid_t g = h5shuf__scratch_group(sc->file, "/piles");
    if (g < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", sc->path, h5shuf__hdf5_cause(cause, sizeof cause));
    H5Gclose(g);
    sc->npiles = 0;
    return H5SHUF_OK;
}

/* Create pile group number with its datasets, chunked cap rows at a time (vlen payloads vchunk[v]
 * elements); they are left open in *group and sets[0..h5shuf__pile_nsets). */
static int pile_create(const struct h5shuf_scratch *sc, uint64_t number, uint64_t cap, const uint64_t *vchunk,
                       hid_t *group, hid_t *sets, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    char name[PILE_NAME_MAX], cause[256];
    int st = H5SHUF_OK;
    hid_t dcpl = H5I_INVALID_HID, dapl = H5I_INVALID_HID, space = H5I_INVALID_HID;
    pile_name(number, name, sizeof name);
    *group = H5SHUF_FAULT() ? H5I_INVALID_HID : h5shuf__scratch_group(sc->file, name);
    if (*group < 0)
        goto hdf5_error;
    dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 521, 0, 1.0); /* whole chunks only: no cache */
    const struct h5shuf_filters index_filters[2] = {sc->filters, sc->id_filters}; /* the data's, the ids' */
    for (size_t d = 0; d < h5shuf__pile_nsets(dsets); d++) {
        hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK], cdims[H5S_MAX_RANK];
        int rank = 1;
        hid_t type = h5shuf__buf_type(dsets, d); /* a vlen dataset's lengths: uint64 */
        int lengths = d == dsets->n || (d < dsets->n && dsets->ds[d].vlen); /* ids or lengths: index filters */
        uint64_t rows = cap;
        if (d < dsets->n) {
            rank = dsets->ds[d].rank;
            memcpy(dims, dsets->ds[d].dims, sizeof dims);
        } else if (d > dsets->n) { /* a vlen payload: 1-D, its chunk a pile buffer's */
            type = dsets->ds[vlen_dataset(dsets, d - dsets->n - 1)].etype;
            rows = vchunk[d - dsets->n - 1];
        }
        memcpy(maxdims, dims, sizeof dims);
        memcpy(cdims, dims, sizeof dims);
        dims[0] = 0;
        maxdims[0] = H5S_UNLIMITED;
        cdims[0] = rows;
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        space = H5Screate_simple(rank, dims, maxdims);
        if (dcpl < 0 || space < 0 || H5Pset_chunk(dcpl, rank, cdims) < 0 ||
            H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
            h5shuf__filters_apply(&index_filters[lengths], dcpl) < 0)
            goto hdf5_error;
        char dname[32];
        pile_dset_name(dsets, d, dname, sizeof dname);
        sets[d] = H5Dcreate2(*group, dname, type, space, H5P_DEFAULT, dcpl, dapl);
        if (sets[d] < 0)
            goto hdf5_error;
        H5Sclose(space);
        H5Pclose(dcpl);
        space = dcpl = H5I_INVALID_HID;
    }
    goto out;
hdf5_error:
    st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot create pile: %s", sc->path, name,
                      h5shuf__hdf5_cause(cause, sizeof cause));
out:
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (dapl >= 0)
        H5Pclose(dapl);
    return st;
}

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

/* Store the oldest pending flush: its encoded chunks, in the pile, after the rows already there. */
static int flush_reap(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps)
{
    H5SHUF_KILL_POINT();
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    struct h5shuf_err *err = cx->err;
    struct h5shuf_pile_flush *f = &ps->fl[ps->fl_head];
    const struct h5shuf_pile p = {.number = ps->first_number + f->k};
    char name[PILE_NAME_MAX], cause[256];
    hid_t group = H5I_INVALID_HID;
    hid_t *sets = sets_new(dsets, err);
    int st = sets ? h5shuf__pile_open(ps->sc, &p, &group, sets, err) : err->status;
    if (ps->sc->raw_unless_waiting)
        h5shuf__writepace_begin(&ps->pace);
    for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK; d++) {
        if (h5shuf__extend_rows(sets[d], f->offset + f->rows) < 0 || h5shuf__chunk_write(cx->cio, sets[d], f->offset, f->chunk[d]) < 0) {
            pile_name(p.number, name, sizeof name);
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot write: %s", ps->sc->path, name,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        }
    }
    if (ps->sc->raw_unless_waiting)
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
    if (ps->fl_count == ps->nfl && (st = flush_reap(cx, ps)) != H5SHUF_OK)
        return st;
    if (!w->created || !ps->pl_ready) { /* (a pile made before a resumed pass 1 has its pipelines probed) */
        hid_t group = H5I_INVALID_HID;
        hid_t *sets = sets_new(dsets, err);
        if (!sets)
            return err->status;
        const struct h5shuf_pile made = {.number = ps->first_number + k};
        st = w->created ? h5shuf__pile_open(ps->sc, &made, &group, sets, err)
                        : pile_create(ps->sc, ps->first_number + k, ps->cap, ps->vchunk, &group, sets, err);
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
    /* rows stored as they are unless the disk is the limit (writepace.h); the ids always packed */
    const int raw = ps->sc->raw_unless_waiting && !h5shuf__writepace_waiting(&ps->pace);
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

/* Move every pile's staged rows into its buffer, and order those stores before the buffers are read. */
static void stage_drain_all(struct h5shuf_pileset *ps)
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
    int st = !w->created ? pile_create(ps->sc, p.number, ps->cap, ps->vchunk, &group, sets, err)
                         : h5shuf__pile_open_whole(ps->sc, &p, &group, sets, err);
    w->created = 1;
    for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK; d++) {
        if (h5shuf__chunkio_write(cx->cio, sets[d], h5shuf__buf_type(dsets, d), w->written, w->nbuf, w->buf[d], 1) < 0) {
            char name[PILE_NAME_MAX];
            pile_name(p.number, name, sizeof name);
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
            char name[PILE_NAME_MAX];
            pile_name(p.number, name, sizeof name);
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
    stage_drain_all(ps);
    for (uint64_t k = 0; k < ps->m; k++) {
        int st = pile_flush(cx, ps, k, 1);
        if (st != H5SHUF_OK)
            return st;
    }
    while (ps->fl_count > 0) {
        int st = flush_reap(cx, ps);
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

/* ---- checkpoints of pass 1 -------------------------------------------------------------------------- */

#define SAVE_MAGIC UINT64_C(0x5355464853354831) /* "1H5SHFUS" */

/* Bytes of one buffered row of buffer d: a vlen dataset's holds its elements' lengths. */
static uint64_t saved_row_bytes(const struct h5shuf_datasets *dsets, size_t d)
{
    return d < dsets->n && dsets->ds[d].vlen ? dsets->ds[d].elems * sizeof(uint64_t) : h5shuf__buf_row_bytes(dsets, d);
}

/* Writes through a small buffer, hashing as it goes. */
struct saver {
    int fd;
    uint64_t off;
    XXH3_state_t *h;
    unsigned char buf[1 << 16];
    size_t n;
    int failed;
};

static void save_flush(struct saver *s)
{
    size_t at = 0;
    while (!s->failed && at < s->n) {
        ssize_t w = H5SHUF_FAULT() ? (errno = EIO, -1) : pwrite(s->fd, s->buf + at, s->n - at, (off_t)s->off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            s->failed = w == 0 ? ENOSPC : errno ? errno : EIO;
        else {
            at += (size_t)w;
            s->off += (uint64_t)w;
        }
    }
    s->n = 0;
}

static void save_bytes(struct saver *s, const void *p, uint64_t n)
{
    const unsigned char *c = p;
    XXH3_64bits_update(s->h, p, (size_t)n);
    while (n > 0 && !s->failed) {
        size_t take = sizeof s->buf - s->n < n ? sizeof s->buf - s->n : (size_t)n;
        memcpy(s->buf + s->n, c, take);
        s->n += take;
        c += take;
        n -= take;
        if (s->n == sizeof s->buf)
            save_flush(s);
    }
}

static void save_u64(struct saver *s, uint64_t v)
{
    save_bytes(s, &v, sizeof v);
}

int h5shuf__pileset_save(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, int fd, uint64_t *bytes, uint64_t *sum)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    while (ps->fl_count > 0) {
        int st = flush_reap(cx, ps);
        if (st != H5SHUF_OK)
            return st;
    }
    stage_drain_all(ps); /* a staged row is saved as a buffered one */
    struct saver *s = malloc(sizeof *s);
    XXH3_state_t *h = XXH3_createState();
    if (!s || !h) {
        free(s);
        XXH3_freeState(h);
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    }
    s->fd = fd;
    s->off = 0;
    s->h = h;
    s->n = 0;
    s->failed = 0;
    XXH3_64bits_reset(h);
    save_u64(s, SAVE_MAGIC);
    save_u64(s, ps->m);
    save_u64(s, ps->cap);
    save_u64(s, dsets->n);
    save_u64(s, dsets->nvlen);
    for (uint64_t k = 0; k < ps->m; k++) {
        const struct h5shuf_pile_writer *w = &ps->w[k];
        save_u64(s, w->written);
        save_u64(s, (uint64_t)w->created);
        save_u64(s, w->nbuf);
        for (size_t d = 0; d <= dsets->n; d++)
            save_bytes(s, w->buf[d], w->nbuf * saved_row_bytes(dsets, d));
        for (size_t v = 0; v < dsets->nvlen; v++) {
            const struct h5shuf_varena *a = w->va ? &w->va[v] : NULL;
            save_u64(s, a ? a->written : 0);
            save_u64(s, a ? a->n : 0);
            if (a && a->n)
                save_bytes(s, a->data, a->n);
        }
    }
    save_flush(s);
    if (s->failed)
        h5shuf__err_note_errno(s->failed);
    int st = s->failed ? h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot save pass 1's pile buffers: %s", ps->sc->path,
                                      strerror(s->failed))
                       : H5SHUF_OK;
    *bytes = s->off;
    *sum = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    free(s);
    return st;
}

/* Read exactly n bytes at *off. */
static int restore_bytes(int fd, uint64_t *off, void *p, uint64_t n)
{
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = pread(fd, c, (size_t)n, (off_t)*off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (uint64_t)r;
        *off += (uint64_t)r;
    }
    return 0;
}

int h5shuf__pileset_restore(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, int fd, uint64_t bytes,
                            struct h5shuf_err *err)
{
    (void)cx;
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    uint64_t off = 0, head[5];
    if (restore_bytes(fd, &off, head, sizeof head) < 0 || head[0] != SAVE_MAGIC || head[1] != ps->m || head[2] != ps->cap ||
        head[3] != dsets->n || head[4] != dsets->nvlen)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers do not match its piles", ps->sc->path);
    for (uint64_t k = 0; k < ps->m; k++) {
        struct h5shuf_pile_writer *w = &ps->w[k];
        uint64_t v3[3];
        if (restore_bytes(fd, &off, v3, sizeof v3) < 0 || v3[2] > ps->cap)
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
        w->written = v3[0];
        w->created = v3[1] != 0;
        w->nbuf = v3[2];
        for (size_t d = 0; d <= dsets->n; d++)
            if (restore_bytes(fd, &off, w->buf[d], w->nbuf * saved_row_bytes(dsets, d)) < 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
        for (size_t v = 0; v < dsets->nvlen; v++) {
            uint64_t v2[2];
            if (restore_bytes(fd, &off, v2, sizeof v2) < 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
            struct h5shuf_varena *a = &w->va[v];
            size_t d = vlen_dataset(dsets, v);
            if ((a->cap == 0 && h5shuf__varena_reserve(a, h5shuf__vlen_arena_bytes(&dsets->ds[d], ps->vchunk[v])) < 0) ||
                (v2[1] > a->cap && h5shuf__varena_reserve(a, v2[1]) < 0))
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for variable-length rows");
            a->written = v2[0];
            a->n = v2[1];
            if (a->n && restore_bytes(fd, &off, a->data, a->n) < 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
        }
    }
    if (off != bytes)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
    /* the pipelines of asynchronous flushes are probed again from the first pile made after this */
    ps->pl_ready = 0;
    return H5SHUF_OK;
}

/* h5shuf__pile_open with its datasets opened with dapl (H5P_DEFAULT: HDF5's chunk cache). */
static int pile_open(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *group, hid_t *sets,
                     hid_t dapl, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    char name[PILE_NAME_MAX], cause[256];
    pile_name(p->number, name, sizeof name);
    const size_t nsets = h5shuf__pile_nsets(dsets);
    for (size_t d = 0; d < nsets; d++)
        sets[d] = H5I_INVALID_HID;
    *group = dapl >= 0 ? H5Gopen2(sc->file, name, H5P_DEFAULT) : H5I_INVALID_HID;
    if (*group < 0)
        goto fail;
    for (size_t d = 0; d < nsets; d++) {
        char dname[32];
        pile_dset_name(dsets, d, dname, sizeof dname);
        sets[d] = H5Dopen2(*group, dname, dapl);
        if (sets[d] < 0)
            goto fail;
    }
    return H5SHUF_OK;
fail:
    h5shuf__pile_close(*group, sets, nsets);
    *group = H5I_INVALID_HID;
    return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot open pile: %s", sc->path, name,
                        h5shuf__hdf5_cause(cause, sizeof cause));
}

int h5shuf__pile_open(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *group, hid_t *sets,
                      struct h5shuf_err *err)
{
    return pile_open(sc, p, group, sets, H5P_DEFAULT, err);
}

int h5shuf__pile_open_whole(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *group, hid_t *sets,
                            struct h5shuf_err *err)
{
    /* As pile_create opens them: an unfiltered chunk (a vlen payload's, or every chunk of an uncompressed
     * scratch) too large for the cache goes straight between the file and the caller's buffer; with HDF5's
     * default cache of 1 MiB it was zeroed (a write), copied through the cache and written at the close:
     * a fifth of the reads and writes of 2 GiB of token rows' piles. */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl >= 0 && H5Pset_chunk_cache(dapl, 521, 0, 1.0) < 0) {
        H5Pclose(dapl);
        dapl = H5I_INVALID_HID;
    }
    int st = pile_open(sc, p, group, sets, dapl, err);
    if (dapl >= 0)
        H5Pclose(dapl);
    return st;
}

void h5shuf__pile_close(hid_t group, hid_t *sets, size_t n)
{
    for (size_t d = 0; d < n; d++)
        if (sets[d] >= 0) {
            H5Dclose(sets[d]);
            sets[d] = H5I_INVALID_HID;
        }
    if (group >= 0)
        H5Gclose(group);
}

/* Punch the whole pages of [addr, addr + size) out of fd. */
static void punch_pages(int fd, uint64_t addr, uint64_t size, uint64_t page)
{
#ifdef FALLOC_FL_PUNCH_HOLE
    const uint64_t lo = (addr + page - 1) / page * page, hi = (addr + size) / page * page;
    if (hi > lo)
        (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo, (off_t)(hi - lo));
#else
    (void)fd, (void)addr, (void)size, (void)page;
#endif
}

void h5shuf__pile_release(int fd, const hid_t *sets, size_t n)
{
    const long page = sysconf(_SC_PAGESIZE);
    for (size_t d = 0; fd >= 0 && page > 0 && d < n; d++) {
        /* a pile's datasets are chunked along axis 0 only (pile_create): chunk i starts at row i * cdims[0] */
        hsize_t dims[H5S_MAX_RANK], cdims[H5S_MAX_RANK], offset[H5S_MAX_RANK] = {0};
        hid_t space = H5Dget_space(sets[d]), dcpl = H5Dget_create_plist(sets[d]);
        int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
        if (rank > 0 && dcpl >= 0 && H5Pget_chunk(dcpl, rank, cdims) == rank && cdims[0] > 0)
            for (offset[0] = 0; offset[0] < dims[0]; offset[0] += cdims[0]) {
                unsigned mask = 0;
                haddr_t addr = HADDR_UNDEF;
                hsize_t size = 0;
                if (H5Dget_chunk_info_by_coord(sets[d], offset, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF)
                    punch_pages(fd, addr, size, (uint64_t)page);
            }
        if (dcpl >= 0)
            H5Pclose(dcpl);
        if (space >= 0)
            H5Sclose(space);
    }
    H5Eclear2(H5E_DEFAULT);
}

int h5shuf__pile_create_empty(const struct h5shuf_scratch *sc, uint64_t number, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    hid_t group = H5I_INVALID_HID;
    const size_t nsets = h5shuf__pile_nsets(dsets);
    hid_t *sets = malloc(nsets * sizeof *sets);
    uint64_t *vchunk = dsets->nvlen ? calloc(dsets->nvlen, sizeof *vchunk) : NULL;
    if (!sets || (dsets->nvlen && !vchunk)) {
        free(sets);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    for (size_t d = 0; d < nsets; d++)
        sets[d] = H5I_INVALID_HID;
    for (size_t d = 0; d < dsets->n; d++)
        if (dsets->ds[d].vlen)
            vchunk[dsets->ds[d].vslot] = h5shuf__vlen_chunk_elems(&dsets->ds[d], 1);
    int st = pile_create(sc, number, 1, vchunk, &group, sets, err);
    h5shuf__pile_close(group, sets, nsets);
    free(sets);
    free(vchunk);
    return st;
}

int h5shuf__pile_remove(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, struct h5shuf_err *err)
{
    char name[PILE_NAME_MAX], cause[256];
    pile_name(p->number, name, sizeof name);
    if (H5Ldelete(sc->file, name, H5P_DEFAULT) < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot remove pile: %s", sc->path, name,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

uint64_t h5shuf__pile_mem_bytes(const struct h5shuf_datasets *dsets, const struct h5shuf_pile *p)
{
    uint64_t per_row = H5SHUF_PASS2_ROW_OVERHEAD;
    for (size_t d = 0; d < dsets->n; d++)
        per_row += dsets->ds[d].row_bytes;
    h5shuf_u128 b = (h5shuf_u128)p->rows * per_row + p->bytes;
    return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

int h5shuf__pile_oversize(const struct h5shuf_datasets *dsets, const h5shuf_plan *plan, const struct h5shuf_pile *p)
{
    if (p->rows > plan->pile_bound_rows)
        return 1;
    return plan->pile_bound_bytes && h5shuf__pile_mem_bytes(dsets, p) > plan->pile_bound_bytes;
}
