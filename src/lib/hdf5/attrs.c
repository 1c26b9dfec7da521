/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attrs.c - attributes: every attribute of an input object copied to its output object as raw values of
 * its own type, the attributes h5shuf writes itself (provenance, shard ranges, the pile file's records),
 * and those of them read back from a file that may hold anything (verify): shape and type checked first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "refmap.h"
#include "vlenbound.h" /* h5shuf__vlen_bound_whole */
#include "vlenrec.h"   /* h5shuf__type_has_var */

/* The state of one object's attribute copy. */
struct copy_ctx {
    hid_t dst;
    const char *what;          /* dst, for messages */
    struct h5shuf_rewrite *rw; /* references: rewritten through it */
    struct h5shuf_err *err;
    int st;
};

/* REFERENCE_LIST, the back-references of a dimension scale (the H5DS convention: a compound of the
 * dataset's object reference and the dimension's index), lists the datasets the scale is attached to.
 * In the output it lists those of them the output holds: keep those elements, in their order. */
static size_t keep_attached(const struct h5shuf_refmap *map, hid_t mt, unsigned char *buf, size_t n)
{
    size_t size = H5Tget_size(mt), kept = 0, off = (size_t)-1;
    for (int m = 0, nm = H5Tget_nmembers(mt); m < nm && off == (size_t)-1; m++) {
        hid_t t = H5Tget_member_type(mt, (unsigned)m);
        if (t >= 0 && H5Tequal(t, H5T_STD_REF_OBJ) > 0)
            off = H5Tget_member_offset(mt, (unsigned)m);
        if (t >= 0)
            H5Tclose(t);
    }
    if (off == (size_t)-1)
        return n;
    for (size_t i = 0; i < n; i++) {
        hobj_ref_t ref;
        memcpy(&ref, buf + i * size + off, sizeof ref);
        if (h5shuf__refmap_find(map, (haddr_t)ref)) {
            memmove(buf + kept * size, buf + i * size, size);
            kept++;
        }
    }
    return kept;
}

/* Is attribute name of type t a dimension scale's REFERENCE_LIST? */
static int is_reference_list(const char *name, hid_t t)
{
    return strcmp(name, "REFERENCE_LIST") == 0 && H5Tget_class(t) == H5T_COMPOUND;
}

/* A failed read of attribute name of src: the input's file and object named, with HDF5's cause. */
static int read_failed(hid_t src, const char *name, struct h5shuf_err *err)
{
    char cause[256], file[4096] = "", obj[4096] = "";
    h5shuf__hdf5_cause(cause, sizeof cause);
    if (H5Fget_name(src, file, sizeof file) < 0 || H5Iget_name(src, obj, sizeof obj) < 0)
        H5Eclear2(H5E_DEFAULT);
    return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot read attribute %s: %s", file, obj, name, cause);
}

/* Copy one attribute as values of its own type: raw bytes, or for variable-length data and references
 * its native form (HDF5 hands out vlen pointers; references are rewritten for the output). */
static int copy_one(hid_t src, const char *name, const H5A_info_t *ainfo, struct copy_ctx *cx)
{
    char cause[256];
    int st = H5SHUF_OK, reclaim = 0;
    hid_t a = H5I_INVALID_HID, t = H5I_INVALID_HID, s = H5I_INVALID_HID, b = H5I_INVALID_HID, mt = H5I_INVALID_HID,
          acpl = H5I_INVALID_HID;
    void *buf = NULL;
    a = H5Aopen(src, name, H5P_DEFAULT);
    if (a < 0 || (t = H5Aget_type(a)) < 0 || (s = H5Aget_space(a)) < 0)
        goto hdf5_error;
    int refs = h5shuf__type_has_refs(t);
    /* (h5shuf__type_has_var, not H5Tdetect_class(t, H5T_VLEN), which does not count variable-length strings
     * inside compounds and arrays: read as the file's type, their strings were never reclaimed) */
    int native = refs || h5shuf__type_has_var(t);
    mt = native ? H5Tget_native_type(t, H5T_DIR_DEFAULT) : H5Tcopy(t);
    if (mt < 0)
        goto hdf5_error;
    hssize_t npoints = H5Sget_simple_extent_npoints(s);
    size_t n = npoints > 0 ? (size_t)npoints : 0, sz = H5Tget_size(mt);
    buf = calloc(n ? n : 1, sz ? sz : 1);
    if (!buf) {
        st = h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for attribute %s", name);
        goto out;
    }
    if (n && (h5shuf__vlen_bound_whole(a) < 0 || H5Aread(a, mt, buf) < 0)) { /* (HDF5 trusts its heap objects) */
        st = read_failed(src, name, cx->err);
        goto out;
    }
    reclaim = native && n;
    if (refs && is_reference_list(name, t)) {
        size_t kept = keep_attached(cx->rw->map, mt, buf, n);
        if (kept == 0)
            goto out; /* none of the datasets the scale is attached to is in the output */
        if (kept < n) {
            hsize_t dim = kept;
            hid_t s2 = H5Screate_simple(1, &dim, NULL);
            if (s2 < 0)
                goto hdf5_error;
            H5Sclose(s);
            s = s2;
            n = kept;
        }
    }
    if (refs) {
        char where[600];
        snprintf(where, sizeof where, "%s: attribute %s", cx->what, name);
        struct h5shuf_rewrite rw = *cx->rw;
        rw.where = where;
        st = h5shuf__refs_rewrite(&rw, mt, buf, n, cx->err);
        if (st != H5SHUF_OK)
            goto out;
    }
    if (cx->rw->out < 0)
        goto out; /* a check at plan time: nothing is written */
    if (H5Aexists(cx->dst, name) > 0)
        H5Adelete(cx->dst, name);
    acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE);
    if (acpl >= 0)
        H5Pset_char_encoding(acpl, ainfo->cset); /* the name's encoding, as given */
    b = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Acreate2(cx->dst, name, t, s, acpl, H5P_DEFAULT);
    if (b < 0 || (n && H5Awrite(b, mt, buf) < 0))
        goto hdf5_error;
    goto out;
hdf5_error:
    st = h5shuf__fail(cx->err, H5SHUF_EHDF5, "%s: cannot copy attribute %s: %s", cx->what, name,
                      h5shuf__hdf5_cause(cause, sizeof cause));
out:
    if (buf && reclaim && s >= 0 && mt >= 0) /* (nothing to free for references without vlen data) */
        H5Dvlen_reclaim(mt, s, H5P_DEFAULT, buf);
    free(buf);
    if (acpl >= 0)
        H5Pclose(acpl);
    if (b >= 0)
        H5Aclose(b);
    if (mt >= 0)
        H5Tclose(mt);
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return st;
}

static herr_t copy_attr_cb(hid_t src, const char *name, const H5A_info_t *ainfo, void *data)
{
    struct copy_ctx *cx = data;
    cx->st = copy_one(src, name, ainfo, cx);
    return cx->st == H5SHUF_OK ? 0 : 1; /* stop at the first failure */
}

int h5shuf__attr_order(hid_t obj)
{
    hid_t ocpl = H5I_INVALID_HID;
    switch (H5Iget_type(obj)) {
    case H5I_DATASET: ocpl = H5Dget_create_plist(obj); break;
    case H5I_GROUP: ocpl = H5Gget_create_plist(obj); break;
    case H5I_DATATYPE: ocpl = H5Tget_create_plist(obj); break;
    default: break;
    }
    unsigned flags = 0;
    if (ocpl >= 0 && H5Pget_attr_creation_order(ocpl, &flags) < 0)
        flags = 0;
    if (ocpl >= 0)
        H5Pclose(ocpl);
    H5Eclear2(H5E_DEFAULT);
    return (int)flags;
}

int h5shuf__attrs_copy(hid_t src, hid_t dst, const char *what, struct h5shuf_rewrite *rw, struct h5shuf_err *err)
{
    struct copy_ctx cx = {dst, what, rw, err, H5SHUF_OK};
    char cause[256];
    hsize_t idx = 0;
    /* In creation order where the object tracks it (netCDF-4 does), so the output keeps the order */
    H5_index_t by = h5shuf__attr_order(src) & H5P_CRT_ORDER_TRACKED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
    herr_t r = H5Aiterate2(src, by, H5_ITER_INC, &idx, copy_attr_cb, &cx);
    if (cx.st != H5SHUF_OK)
        return cx.st;
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot copy attributes: %s", what,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

int h5shuf__attrs_survey(hid_t obj, int *refs, hsize_t *largest)
{
    H5O_info_t oi;
    *refs = 0;
    *largest = 0;
    if (H5Oget_info(obj, &oi) < 0)
        return -1;
    for (hsize_t i = 0; i < oi.num_attrs; i++) {
        hid_t a = H5Aopen_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
        hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
        hsize_t bytes = a >= 0 ? H5Aget_storage_size(a) : 0;
        if (t >= 0 && h5shuf__type_has_refs(t))
            *refs = 1;
        if (bytes > *largest)
            *largest = bytes;
        if (t >= 0)
            H5Tclose(t);
        if (a >= 0)
            H5Aclose(a);
        if (t < 0)
            return -1;
    }
    return 0;
}

hid_t h5shuf__vstring_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

herr_t h5shuf__attr_put(hid_t obj, const char *name, hid_t ftype, hid_t mtype, size_t n, const void *buf)
{
    hsize_t dim = n;
    hid_t s = n ? H5Screate_simple(1, &dim, NULL) : H5Screate(H5S_SCALAR);
    if (s >= 0 && H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    hid_t a = s >= 0 && !H5SHUF_FAULT() ? H5Acreate2(obj, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
    herr_t r = a < 0 ? -1 : H5Awrite(a, mtype, buf);
    if (a >= 0)
        H5Aclose(a);
    if (s >= 0)
        H5Sclose(s);
    return r;
}

herr_t h5shuf__attr_put_u64(hid_t obj, const char *name, uint64_t v)
{
    return h5shuf__attr_put(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 0, &v);
}

herr_t h5shuf__attr_put_u64s(hid_t obj, const char *name, const uint64_t *v, size_t n)
{
    return h5shuf__attr_put(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, n, v);
}

herr_t h5shuf__attr_put_strings(hid_t obj, const char *name, const char *const *v, size_t n)
{
    hid_t t = h5shuf__vstring_type();
    herr_t r = t < 0 ? -1 : h5shuf__attr_put(obj, name, t, t, n, v);
    if (t >= 0)
        H5Tclose(t);
    return r;
}

herr_t h5shuf__attr_put_string(hid_t obj, const char *name, const char *v)
{
    hid_t t = h5shuf__vstring_type();
    herr_t r = t < 0 ? -1 : h5shuf__attr_put(obj, name, t, t, 0, &v);
    if (t >= 0)
        H5Tclose(t);
    return r;
}

herr_t h5shuf__attr_put_text(hid_t obj, const char *name, const char *value, int text)
{
    if (!text)
        return h5shuf__attr_put_string(obj, name, value);
    hid_t t = H5Tcopy(H5T_C_S1); /* (an empty value fails here: HDF5 has no string of size 0) */
    herr_t r = t < 0 || H5Tset_size(t, strlen(value)) < 0 ? -1 : h5shuf__attr_put(obj, name, t, t, 0, value);
    if (t >= 0)
        H5Tclose(t);
    return r;
}

herr_t h5shuf__attr_put_u64_text(hid_t obj, const char *name, uint64_t v, int text)
{
    char digits[24];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    return text ? h5shuf__attr_put_text(obj, name, digits, 1) : h5shuf__attr_put_u64(obj, name, v);
}

/* ---- attributes read back ------------------------------------------------------------------------- */

