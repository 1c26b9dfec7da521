/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walvfd.c - a walfile as an HDF5 file driver (walvfd.h): HDF5's calls of a file opened through
 * h5shuf__walfile_fapl's property list become reads, writes and resizes of the walfile (walfile.h).
 *
 * The callbacks follow HDF5 1.10's sec2 driver (src/H5FDsec2.c): reads past the end of file give zeros,
 * a write past it extends it, truncate makes the end of file the end of address, eoa is only recorded.
 * What HDF5 1.10.8 does with it (traced, and pinned by tests/test_walfile.c):
 * - H5Fcreate and H5Fopen open the driver twice: a tentative open without CREAT/TRUNC, closed again, then
 *   the real one (H5F_open), so a failure of the first is retried, and a second H5Fopen of a file already
 *   open through the same walfile fails (one open at a time, since the state is the walfile's).
 * - H5Fflush: the cached metadata is written (object headers, B-trees, heaps: below E once committed, so
 *   to the log; about 5-8 KB a flush for a few datasets and groups), set_eoa may shrink the end of
 *   address (the metadata aggregator gives back its unused tail), truncate(closing = 0) makes the end of
 *   file the end of address, then the superblock (48 bytes at 0, to the log) and flush.  H5Fclose does the
 *   same with closing = 1.  The end of address does go below E: after H5Ldelete of a contiguous dataset
 *   at the end of the file, the next flush truncated 402048 bytes to 195 (free space at the end is given
 *   back); the base keeps its committed bytes until apply cuts it, and zero records keep a regrown file
 *   exact.
 * - A chunk partly filled when a commit is made and filled later is rewritten whole, in place: below E,
 *   so the whole chunk goes to the log.
 * - The latest format's superblock (v3) records "open for write" until the close, so a checkpoint taken
 *   after H5Fflush reopens only with the fapl property "clear_status_flags" (H5SHUF_WALFILE_REOPEN).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "walio.h"
#include "walvfd.h"

/* The HDF5 file: the public part HDF5 fills, and ours. */
struct wal_h5fd {
    H5FD_t pub;
    struct h5shuf_walfile *wf;
};

/* The driver info carried by a fapl. */
struct wal_info {
    struct h5shuf_walfile *wf;
    unsigned flags;
};

#define WAL_ERR(min, ...) H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_VFL, min, __VA_ARGS__)

static hid_t driver_id = H5I_INVALID_HID;

static herr_t wal_terminate(void)
{
    driver_id = H5I_INVALID_HID;
    return 0;
}

static void *wal_fapl_get(H5FD_t *file)
{
    struct wal_info *i = malloc(sizeof *i);
    if (i) {
        i->wf = ((struct wal_h5fd *)file)->wf;
        i->flags = 0;
    }
    return i;
}

static void *wal_fapl_copy(const void *info)
{
    struct wal_info *i = malloc(sizeof *i);
    if (i)
        memcpy(i, info, sizeof *i);
    return i;
}

static herr_t wal_fapl_free(void *info)
{
    free(info);
    return 0;
}

static H5FD_t *wal_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)name;
    const struct wal_info *info = H5Pget_driver_info(fapl);
    if (!info || !info->wf) {
        WAL_ERR(H5E_BADVALUE, "no walfile in the file access property list");
        return NULL;
    }
    struct h5shuf_walfile *wf = info->wf;
    (void)maxaddr; /* (addresses are checked against H5SHUF_WAL_MAXADDR, the class's maximum, as sec2's) */
    if (wf->open) {
        WAL_ERR(H5E_CANTOPENFILE, "%s: already open through its walfile", wf->base_name);
        return NULL;
    }
    if (flags & H5F_ACC_TRUNC) {
        if (wf->committed > 0 || wf->prepared) {
            WAL_ERR(H5E_CANTOPENFILE, "%s: cannot truncate a file with a commit", wf->base_name);
            return NULL;
        }
        int e = wf->base_size > 0 ? h5shuf__wal_truncate_fd(wf->base_fd, 0) : 0;
        if (e) {
            WAL_ERR(H5E_CANTOPENFILE, "%s: cannot truncate it: %s", wf->base_name, strerror(e));
            return NULL;
        }
        wf->n = 0;
        wf->eof = wf->base_size = 0;
    }
    struct wal_h5fd *f = calloc(1, sizeof *f);
    if (!f) {
        WAL_ERR(H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    f->wf = wf;
    wf->open = 1;
    wf->eoa = 0;
    return &f->pub;
}

static herr_t wal_close(H5FD_t *file)
{
    struct wal_h5fd *f = (struct wal_h5fd *)file;
    f->wf->open = 0;
    free(f);
    return 0;
}

static int wal_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const struct h5shuf_walfile *x = ((const struct wal_h5fd *)a)->wf, *y = ((const struct wal_h5fd *)b)->wf;
    return x < y ? -1 : x > y;
}

static herr_t wal_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
    return 0;
}

static haddr_t wal_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const struct wal_h5fd *)file)->wf->eoa;
}

static herr_t wal_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    if (addr > H5SHUF_WAL_MAXADDR) {
        WAL_ERR(H5E_OVERFLOW, "address %llu past the driver's maximum", (unsigned long long)addr);
        return -1;
    }
    ((struct wal_h5fd *)file)->wf->eoa = addr;
    return 0;
}

static haddr_t wal_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const struct wal_h5fd *)file)->wf->eof;
}

static herr_t wal_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = &((struct wal_h5fd *)file)->wf->base_fd;
    return 0;
}

static herr_t wal_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    (void)type;
    (void)dxpl;
    struct h5shuf_walfile *wf = ((struct wal_h5fd *)file)->wf;
    if (addr == HADDR_UNDEF || addr > H5SHUF_WAL_MAXADDR || size > H5SHUF_WAL_MAXADDR - addr) {
        WAL_ERR(H5E_OVERFLOW, "read of %zu bytes at %llu past the driver's maximum", size, (unsigned long long)addr);
        return -1;
    }
    struct h5shuf_err err = {0};
    if (h5shuf__walfile_pread(wf, buf, size, addr, &err) != H5SHUF_OK) {
        WAL_ERR(H5E_READERROR, "%s", err.msg);
        return -1;
    }
    return 0;
}

static herr_t wal_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)type;
    (void)dxpl;
    struct h5shuf_walfile *wf = ((struct wal_h5fd *)file)->wf;
    if (wf->discard)
        return 0;
    if (addr == HADDR_UNDEF || addr > H5SHUF_WAL_MAXADDR || size > H5SHUF_WAL_MAXADDR - addr) {
        WAL_ERR(H5E_OVERFLOW, "write of %zu bytes at %llu past the driver's maximum", size, (unsigned long long)addr);
        return -1;
    }
    int e = h5shuf__walfile_write_bytes(wf, buf, size, addr);
    if (e) {
        wf->broken = 1; /* HDF5 may go on (H5Dclose's failed chunk write is only its return value) */
        h5shuf__err_note_errno(e); /* (for the h5shuf__fail of HDF5's failure: error.h) */
    }
    if (e == EBUSY)
        WAL_ERR(H5E_WRITEERROR, "%s: written between a commit's prepare and apply", wf->base_name);
    else if (e)
        WAL_ERR(H5E_WRITEERROR, "%s: cannot write %zu bytes at %llu%s%s: %s", wf->base_name, size,
                (unsigned long long)addr, addr < wf->committed ? " to its log " : "",
                addr < wf->committed ? wf->log_name : "", strerror(e));
    return e ? -1 : 0;
}

static herr_t wal_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)file;
    (void)dxpl;
    (void)closing;
    return 0; /* durability is the commit's (prepare syncs) */
}

static herr_t wal_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl;
    (void)closing;
    struct h5shuf_walfile *wf = ((struct wal_h5fd *)file)->wf;
    if (wf->eoa == wf->eof || wf->discard)
        return 0;
    if (wf->prepared) {
        WAL_ERR(H5E_CANTUPDATE, "%s: resized between a commit's prepare and apply", wf->base_name);
        return -1;
    }
    int e = h5shuf__walfile_set_eof(wf, wf->eoa);
    if (e) {
        wf->broken = 1;
        h5shuf__err_note_errno(e);
        WAL_ERR(H5E_CANTUPDATE, "%s: cannot set its size to %llu: %s", wf->base_name, (unsigned long long)wf->eoa,
                strerror(e));
        return -1;
    }
    return 0;
}

static herr_t wal_lock(H5FD_t *file, hbool_t rw)
{
    (void)file;
    (void)rw;
    return 0; /* the base descriptor is the caller's: it excludes others */
}

static herr_t wal_unlock(H5FD_t *file)
{
    (void)file;
    return 0;
}

/* The driver's identifier for HDF5 1.13.2 and later, which refuse a class without its struct version and a
 * value: one of 256-511, the values HDF5 sets aside for drivers not registered with The HDF Group
 * ("Registered Virtual File Drivers", HDF5's documentation). */
#define WAL_DRIVER_VALUE 0x1A5

static const H5FD_class_t wal_class = {
#if H5_VERSION_GE(1, 13, 2)
    .version = H5FD_CLASS_VERSION,
    .value = (H5FD_class_value_t)WAL_DRIVER_VALUE,
#endif
    .name = "h5shuf_walfile",
    .maxaddr = H5SHUF_WAL_MAXADDR,
    .fc_degree = H5F_CLOSE_WEAK,
    .terminate = wal_terminate,
    .fapl_size = sizeof(struct wal_info),
    .fapl_get = wal_fapl_get,
    .fapl_copy = wal_fapl_copy,
    .fapl_free = wal_fapl_free,
    .open = wal_open,
    .close = wal_close,
    .cmp = wal_cmp,
    .query = wal_query,
    .get_eoa = wal_get_eoa,
    .set_eoa = wal_set_eoa,
    .get_eof = wal_get_eof,
    .get_handle = wal_get_handle,
    .read = wal_read,
    .write = wal_write,
    .flush = wal_flush,
    .truncate = wal_truncate,
    .lock = wal_lock,
    .unlock = wal_unlock,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

hid_t h5shuf__walfile_fapl(struct h5shuf_walfile *wf, unsigned flags, struct h5shuf_err *err)
{
    char cause[256];
    if (driver_id < 0 || H5Iis_valid(driver_id) <= 0) {
        driver_id = H5SHUF_FAULT() ? H5I_INVALID_HID : H5FDregister(&wal_class);
        if (driver_id < 0) {
            H5Eclear2(H5E_DEFAULT);
            return h5shuf__fail(err, H5SHUF_EHDF5, "cannot register the walfile driver with HDF5"), H5I_INVALID_HID;
        }
    }
    struct wal_info info = {wf, flags};
    hid_t fapl = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_driver(fapl, driver_id, &info) < 0)
        goto fail;
    if (flags & H5SHUF_WALFILE_REOPEN) {
        /* h5clear's way (HDF5 1.10 tools/src/h5clear): the fapl property "clear_status_flags"
         * (H5F_ACS_CLEAR_STATUS_FLAGS_NAME in H5Fprivate.h; registered in every fapl, private by name only)
         * makes H5F_open zero the superblock's status flags, which say "open for write" after a flush that
         * was never followed by a close; an RDWR open then sets them again as usual.  A version without
         * the property fails here, not at the open. */
        hbool_t clear = 1;
        if (H5Pexist(fapl, "clear_status_flags") <= 0 || H5Pset(fapl, "clear_status_flags", &clear) < 0)
            goto fail;
    }
    return fapl;
fail:
    snprintf(cause, sizeof cause, "%s", "HDF5 refused the walfile driver's file access property list");
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Eclear2(H5E_DEFAULT);
    h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", wf->base_name, cause);
    return H5I_INVALID_HID;
}

hid_t h5shuf__walfile_driver(void)
{
    return driver_id >= 0 && H5Iis_valid(driver_id) > 0 ? driver_id : H5I_INVALID_HID;
}
