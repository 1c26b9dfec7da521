/*
 * attrs.c - attributes: every attribute of an input object copied to its output object as raw values of
 * its own type, and the attributes h5shuf writes itself (provenance, shard ranges, the pile file's
 * records).
 */
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"

struct copy_ctx {
    hid_t dst;
    int failed;
};

/* Copy one attribute as raw values of its own type (variable-length values are read into memory and
 * reclaimed).  Reference attributes would point into the input file and are left out. */
static herr_t copy_attr_cb(hid_t src, const char *name, const H5A_info_t *ainfo, void *data)
{
    (void)ainfo;
    struct copy_ctx *cx = data;
    hid_t a = H5I_INVALID_HID, t = H5I_INVALID_HID, s = H5I_INVALID_HID, b = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    void *buf = NULL;
    int ok = 0, has_vlen = 0;
    a = H5Aopen(src, name, H5P_DEFAULT);
    if (a < 0 || (t = H5Aget_type(a)) < 0 || (s = H5Aget_space(a)) < 0)
        goto out;
    if (H5Tget_class(t) == H5T_REFERENCE || H5Tdetect_class(t, H5T_REFERENCE) > 0) {
        ok = 1;
        goto out;
    }
    has_vlen = H5Tdetect_class(t, H5T_VLEN) > 0 || (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0);
    /* The memory type: the file type itself (no conversion), or its native form when it holds vlen
     * data (HDF5 needs a memory vlen type to hand out pointers). */
    mt = has_vlen ? H5Tget_native_type(t, H5T_DIR_DEFAULT) : H5Tcopy(t);
    if (mt < 0)
        goto out;
    hssize_t npoints = H5Sget_simple_extent_npoints(s);
    size_t sz = H5Tget_size(mt);
    buf = calloc(npoints > 0 ? (size_t)npoints : 1, sz ? sz : 1);
    if (!buf)
        goto out;
    if (H5Aread(a, mt, buf) < 0)
        goto out;
    if (H5Aexists(cx->dst, name) > 0)
        H5Adelete(cx->dst, name);
    b = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Acreate2(cx->dst, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    if (b < 0 || H5Awrite(b, mt, buf) < 0)
        goto out;
    ok = 1;
out:
    if (buf && has_vlen && s >= 0 && mt >= 0)
        H5Dvlen_reclaim(mt, s, H5P_DEFAULT, buf);
    free(buf);
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
    if (!ok) {
        cx->failed = 1;
        return -1;
    }
    return 0;
}

int h5shuf__attrs_copy(hid_t src, hid_t dst, const char *what, struct h5shuf_err *err)
{
    struct copy_ctx cx = {dst, 0};
    char cause[256];
    hsize_t idx = 0;
    if (H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attr_cb, &cx) < 0 || cx.failed)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot copy attributes: %s", what,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
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
