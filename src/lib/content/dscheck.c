/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dscheck.c - an input dataset looked at before its rows are shuffled (dscheck.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "dscheck.h"
#include "fault.h"
#include "h5err.h"
#include "vlen.h"
#include "vlenrec.h" /* h5shuf__type_has_var */

/* Check that every link on path exists, so a missing dataset gets "no such dataset" and not HDF5's
 * error.  Returns 1 when it exists, 0 when not, -1 on a broken file. */
static int path_exists(hid_t file, const char *path)
{
    char *buf = strdup(path);
    if (!buf)
        return -1;
    int ok = 1;
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
            if (e > 0 && c != '\0') {
                /* an intermediate link must resolve to a group for the next H5Lexists to be legal */
                H5O_info_t oi;
                if (H5Oget_info_by_name(file, buf, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
                    e = 0;
            }
            *p = c;
            if (e <= 0) {
                H5Eclear2(H5E_DEFAULT);
                ok = e < 0 ? -1 : 0;
                break;
            }
            if (c == '\0')
                break;
        }
    }
    free(buf);
    return ok;
}

/* Why a datatype cannot be shuffled, or NULL when it can. */
static const char *type_unsupported(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    const char *why = h5shuf__vlen_unsupported(t);
    if (why)
        return why;
    /* References move as their raw bytes, rewritten on the way out (writer.c): where a row has them at fixed
     * places, not inside variable-length sequences */
    if ((c == H5T_REFERENCE || H5Tdetect_class(t, H5T_REFERENCE) > 0) && (c == H5T_VLEN || H5Tdetect_class(t, H5T_VLEN) > 0))
        return "variable-length sequences of references";
    if (H5Tget_size(t) == 0)
        return "datatype of size 0";
    return NULL;
}

int h5shuf__check_object(hid_t fid, const char *file, const char *path, struct h5shuf_err *err)
{
    int e = path_exists(fid, path);
    if (e <= 0)
        return h5shuf__fail(err, e < 0 ? H5SHUF_EHDF5 : H5SHUF_ENOENT, "%s:%s: no such dataset", file, path);
    H5O_info_t oi;
    if (H5Oget_info_by_name(fid, path, &oi, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return h5shuf__fail(err, H5SHUF_ENOENT, "%s:%s: link does not resolve to an object (dangling link?)", file, path);
    }
    if (oi.type != H5O_TYPE_DATASET)
        return h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s:%s: is a %s, not a dataset", file, path,
                            oi.type == H5O_TYPE_GROUP ? "group" : "named datatype");
    return H5SHUF_OK;
}

/* A chunked dataset's chunk shape as HDF5 requires it of every file it writes: each chunk dim at least 1
 * and no larger than a fixed maximum dim (H5Pset_chunk, H5Dcreate).  Anything else is a corrupt layout
 * message (HDF5 1.10 opens such a dataset and then reads its chunk index wrongly, even to a heap
 * corruption), refused as the input's, not taken for an output chunk shape asked for. */
static int check_chunks(hid_t dset, const struct h5shuf_shape *sh, const char *file, const char *path,
                        struct h5shuf_err *err)
{
    char cause[256];
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: %s", file, path, h5shuf__hdf5_cause(cause, sizeof cause));
    hsize_t cdims[H5S_MAX_RANK];
    int st = H5SHUF_OK;
    if (H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims) == sh->rank)
        for (int k = 0; k < sh->rank && st == H5SHUF_OK; k++)
            if (cdims[k] == 0 || (sh->maxdims[k] != H5S_UNLIMITED && cdims[k] > sh->maxdims[k]))
                st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED,
                                  "%s:%s: corrupt chunk shape: chunk dimension %d is %llu, the dataset's maximum %llu",
                                  file, path, k, (unsigned long long)cdims[k], (unsigned long long)sh->maxdims[k]);
    H5Pclose(dcpl);
    return st;
}

int h5shuf__read_shape(hid_t dset, const char *file, const char *path, struct h5shuf_shape *sh, struct h5shuf_err *err)
{
    char cause[256];
    int st = H5SHUF_OK;
    sh->ftype = H5Dget_type(dset);
    hid_t space = H5Dget_space(dset);
    if (sh->ftype < 0 || space < 0) {
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: %s", file, path, h5shuf__hdf5_cause(cause, sizeof cause));
        goto out;
    }
    const char *why = type_unsupported(sh->ftype);
    if (why) {
        st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s:%s: unsupported %s", file, path, why);
        goto out;
    }
    sh->rank = H5Sget_simple_extent_ndims(space);
    if (H5Sget_simple_extent_type(space) != H5S_SIMPLE || sh->rank < 1) {
        st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s:%s: unsupported %s dataspace (rows need rank >= 1)", file, path,
                          H5Sget_simple_extent_type(space) == H5S_NULL ? "null" : "scalar");
        goto out;
    }
    H5Sget_simple_extent_dims(space, sh->dims, sh->maxdims);
    if ((st = check_chunks(dset, sh, file, path, err)) != H5SHUF_OK)
        goto out;
    H5T_class_t tclass = H5Tget_class(sh->ftype);
    sh->is_vlen = h5shuf__type_has_var(sh->ftype);
    /* a vlen row's record in memory is HDF5's: hvl_t or char * per element (vlen.c), a compound's or an
     * array's the size of H5Dget_type's type, whose vlen members are in memory form (vlenrec.c) */
    sh->row_bytes = !sh->is_vlen || (tclass != H5T_VLEN && tclass != H5T_STRING) ? H5Tget_size(sh->ftype)
                    : tclass == H5T_VLEN                                       ? sizeof(hvl_t)
                                                                               : sizeof(char *);
    for (int k = 1; k < sh->rank; k++) {
        if (sh->dims[k] != 0 && sh->row_bytes > UINT64_MAX / sh->dims[k]) {
            st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s:%s: row size overflows 64 bits", file, path);
            goto out;
        }
        sh->row_bytes *= sh->dims[k];
    }
    if (sh->row_bytes == 0)
        st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s:%s: rows are empty (a dimension after the first is 0)", file,
                          path);
out:
    if (space >= 0)
        H5Sclose(space);
    return st;
}

int h5shuf__describe(struct h5shuf_dsinfo *ds, struct h5shuf_shape *sh, hid_t dset, const char *file, const char *path,
                     size_t *nvlen, struct h5shuf_err *err)
{
    char cause[256];
    ds->ftype = sh->ftype;
    sh->ftype = H5I_INVALID_HID; /* owned by ds now */
    ds->rank = sh->rank;
    memcpy(ds->dims, sh->dims, sizeof ds->dims);
    memcpy(ds->maxdims, sh->maxdims, sizeof ds->maxdims);
    ds->row_bytes = ds->plan_row_bytes = sh->row_bytes;
    if (sh->is_vlen) {
        char where[600];
        snprintf(where, sizeof where, "%s:%s", file, path);
        int st = h5shuf__vlen_setup(ds, *nvlen, where, err);
        if (st != H5SHUF_OK)
            return st;
        ++*nvlen;
    }
    ds->dcpl = H5Dget_create_plist(dset);
    if (ds->dcpl < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: %s", file, path, h5shuf__hdf5_cause(cause, sizeof cause));
    if (H5Pget_layout(ds->dcpl) == H5D_CHUNKED) {
        hsize_t cdims[H5S_MAX_RANK];
        H5Pget_chunk(ds->dcpl, H5S_MAX_RANK, cdims);
        ds->chunk_rows = cdims[0];
    }
    return H5SHUF_OK;
}

int h5shuf__check_same(const struct h5shuf_dsinfo *ds, const struct h5shuf_shape *sh, const char *file,
                       const char *path, const char *first, struct h5shuf_err *err)
{
    if (H5Tequal(sh->ftype, ds->ftype) <= 0)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: datatype differs from %s:%s", file, path, first, ds->in_path);
    int same = sh->rank == ds->rank;
    for (int k = 1; same && k < sh->rank; k++)
        same = sh->dims[k] == ds->dims[k];
    if (!same)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: row shape differs from %s:%s", file, path, first, ds->in_path);
    return H5SHUF_OK;
}

int h5shuf__check_storage(hid_t dcpl, const char *file, const char *path, int allow, char **found,
                          struct h5shuf_err *err)
{
    char name[4096] = "";
    const char *kind = NULL;
    *found = NULL;
    if (dcpl >= 0 && H5Pget_external_count(dcpl) > 0) {
        off_t offset;
        hsize_t size;
        if (H5Pget_external(dcpl, 0, sizeof name, name, &offset, &size) >= 0)
            kind = "the external file";
    } else if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        size_t count = 0;
        H5Pget_virtual_count(dcpl, &count);
        for (size_t i = 0; i < count && !kind; i++) /* "." is the virtual dataset's own file */
            if (H5Pget_virtual_filename(dcpl, i, name, sizeof name) > 0 && strcmp(name, ".") != 0)
                kind = "another file, by a virtual dataset:";
    }
    H5Eclear2(H5E_DEFAULT);
    if (!kind)
        return H5SHUF_OK;
    if (!allow)
        return h5shuf__fail(err, H5SHUF_EUNSUPPORTED,
                            "%s:%s: its rows are stored in %s %s; refusing to read it (--allow-external reads it)", file,
                            path, kind, name);
    const size_t len = strlen(file) + strlen(path) + strlen(kind) + strlen(name) + 64;
    if (!(*found = malloc(len)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    snprintf(*found, len, "%s:%s: its rows are read from %s %s (--allow-external)", file, path, kind, name);
    return H5SHUF_OK;
}

int h5shuf__check_filters(hid_t dcpl, const char *file, const char *path, struct h5shuf_err *err)
{
    for (int i = 0, nf = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0; i < nf; i++) {
        unsigned flags, cfg, cd[16];
        size_t ncd = 16;
        char fname[128] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, &cfg);
        if (id >= 0 && H5Zfilter_avail(id) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return h5shuf__fail(err, H5SHUF_EUNSUPPORTED,
                                "%s:%s: needs HDF5 filter %d%s%s%s, which cannot be loaded here (set HDF5_PLUGIN_PATH "
                                "to the directory of its plugin)",
                                file, path, (int)id, *fname ? " (" : "", fname, *fname ? ")" : "");
        }
    }
    return H5SHUF_OK;
}

