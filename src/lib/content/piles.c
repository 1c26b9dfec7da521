/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piles.c - the scratch HDF5 file and the piles in it (piles.h; the piles being filled in pass 1:
 * pileset.c; their buffers saved at a checkpoint: pilesave.c).
 *
 * Each pile is a group /piles/NNNNNN holding one extendible chunked dataset per shuffled dataset
 * ("d0", "d1", ...) and "index" (uint64 global row ids, increasing); a dataset of variable-length rows
 * has its elements' lengths in "dN" and their payload in "dN_data" (vlen.c).  The list of piles is kept in
 * key order: pass 2 walks it in order.
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

/* Most bytes HDF5's metadata cache may hold for the scratch file (part of the fixed overhead). */
#define SCRATCH_MDC_BYTES (4u << 20)

void h5shuf__pile_name(uint64_t number, char *buf, size_t cap)
{
    snprintf(buf, cap, "/piles/%06" PRIu64, number);
}

size_t h5shuf__pile_vlen_dataset(const struct h5shuf_datasets *dsets, size_t v)
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
        snprintf(buf, cap, "d%zu_data", h5shuf__pile_vlen_dataset(dsets, d - dsets->n - 1));
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

int h5shuf__pile_create(const struct h5shuf_scratch *sc, uint64_t number, uint64_t cap, const uint64_t *vchunk,
                        hid_t *group, hid_t *sets, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    char name[H5SHUF_PILE_NAME_MAX], cause[256];
    int st = H5SHUF_OK;
    hid_t dcpl = H5I_INVALID_HID, dapl = H5I_INVALID_HID, space = H5I_INVALID_HID;
    h5shuf__pile_name(number, name, sizeof name);
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
            type = dsets->ds[h5shuf__pile_vlen_dataset(dsets, d - dsets->n - 1)].etype;
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

/* h5shuf__pile_open with its datasets opened with dapl (H5P_DEFAULT: HDF5's chunk cache). */
static int pile_open(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *group, hid_t *sets,
                     hid_t dapl, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    char name[H5SHUF_PILE_NAME_MAX], cause[256];
    h5shuf__pile_name(p->number, name, sizeof name);
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
    /* As h5shuf__pile_create opens them: an unfiltered chunk (a vlen payload's, or every chunk of an
     * uncompressed scratch) too large for the cache goes straight between the file and the caller's buffer;
     * with HDF5's default cache of 1 MiB it was zeroed (a write), copied through the cache and written at
     * the close: a fifth of the reads and writes of 2 GiB of token rows' piles. */
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
        /* a pile's datasets are chunked along axis 0 only (h5shuf__pile_create): chunk i starts at row
         * i * cdims[0] */
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
    int st = h5shuf__pile_create(sc, number, 1, vchunk, &group, sets, err);
    h5shuf__pile_close(group, sets, nsets);
    free(sets);
    free(vchunk);
    return st;
}

int h5shuf__pile_remove(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, struct h5shuf_err *err)
{
    char name[H5SHUF_PILE_NAME_MAX], cause[256];
    h5shuf__pile_name(p->number, name, sizeof name);
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
