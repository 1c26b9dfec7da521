/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attrget.c - the attributes h5shuf reads itself (a dimension scale's CLASS, an output's h5shuf_seed and
 * h5shuf_index, a pile file's records), each read into a buffer sized from what the attribute holds.
 *
 * An attribute is whatever the file says: a CLASS of 2000 strings is as valid HDF5 as one string, and
 * H5Aread writes every value it holds into the caller's buffer.  So each read here first checks the
 * dataspace (exactly the count the caller expects; a scalar holds one value) and the type (its class, and
 * its size where the memory form depends on it), and reads only then, into memory sized from both.  What
 * is not of that shape and type is reported as such (H5SHUF_ATTR_WRONG with a phrase saying why), for the
 * caller to take as "not that attribute" or to refuse in one line.
 *
 * HDF5's dimension-scale functions are no safer: H5DSget_num_scales and H5DSiterate_scales read
 * DIMENSION_LIST with its own type into one hvl_t per dimension of the dataset (hl/src/H5DS.c, 1.10 to
 * 2.x), so h5shuf__attr_dimlist checks it before they run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrget.h"
#include "h5err.h"
#include "vlenbound.h" /* h5shuf__vlen_bound_whole */

/* A datatype class as a message names it. */
static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "an integer";
    case H5T_FLOAT: return "a float";
    case H5T_TIME: return "a time";
    case H5T_STRING: return "a string";
    case H5T_BITFIELD: return "a bitfield";
    case H5T_OPAQUE: return "an opaque type";
    case H5T_COMPOUND: return "a compound";
    case H5T_REFERENCE: return "a reference";
    case H5T_ENUM: return "an enum";
    case H5T_VLEN: return "a variable-length sequence";
    case H5T_ARRAY: return "an array";
    default: return "of an unknown type";
    }
}

/* why: "cannot be read: " and HDF5's innermost message (the stack cleared); H5SHUF_ATTR_WRONG. */
static int unreadable(char *why, size_t cap)
{
    char cause[160];
    snprintf(why, cap, "cannot be read: %s", h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_ATTR_WRONG;
}

/* Open attribute name of obj (*a, its type *t, its dataspace *s) when it holds exactly n values.  NONE when
 * there is none; WRONG (why) when it holds another count or HDF5 cannot open it; the ids the caller closes
 * are those not H5I_INVALID_HID. */
static int open_n(hid_t obj, const char *name, size_t n, hid_t *a, hid_t *t, hid_t *s, char *why, size_t cap)
{
    *a = *t = *s = H5I_INVALID_HID;
    htri_t there = H5Aexists(obj, name);
    if (there == 0)
        return H5SHUF_ATTR_NONE;
    if (there < 0 || (*a = H5Aopen(obj, name, H5P_DEFAULT)) < 0 || (*t = H5Aget_type(*a)) < 0 ||
        (*s = H5Aget_space(*a)) < 0)
        return unreadable(why, cap);
    hssize_t np = H5Sget_simple_extent_npoints(*s);
    if (np < 0)
        return unreadable(why, cap);
    if ((uint64_t)np != (uint64_t)n) {
        if (np == 0)
            snprintf(why, cap, "holds no value, not %zu", n);
        else
            snprintf(why, cap, "holds %" PRIu64 " value%s, not %zu", (uint64_t)np, np == 1 ? "" : "s", n);
        return H5SHUF_ATTR_WRONG;
    }
    return H5SHUF_ATTR_READ;
}

static void close_ids(hid_t a, hid_t t, hid_t s)
{
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
}

/* The class of attribute name of obj's type; H5T_NO_CLASS when there is none or HDF5 cannot tell. */
static H5T_class_t attr_class(hid_t obj, const char *name)
{
    hid_t a = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    return c;
}

/* h5shuf__attr_get_u64s of a string attribute: one string of n decimal numbers separated by spaces (the
 * form h5shuf writes integers in a netCDF file, h5shuf__attr_put_text). */
static int text_u64s(hid_t obj, const char *name, size_t n, uint64_t *v, char *why, size_t cap)
{
    char *text = NULL;
    int got = h5shuf__attr_get_texts(obj, name, 1, 0, &text, why, cap);
    const char *p = text;
    for (size_t k = 0; k < n && got == H5SHUF_ATTR_READ; k++) {
        char *end;
        while (*p == ' ')
            p++;
        errno = 0;
        if (*p >= '0' && *p <= '9')
            v[k] = strtoull(p, &end, 10);
        if (*p < '0' || *p > '9' || errno) {
            snprintf(why, cap, "is a string, not %zu decimal number%s", n, n == 1 ? "" : "s");
            got = H5SHUF_ATTR_WRONG;
        } else {
            p = end;
        }
    }
    while (got == H5SHUF_ATTR_READ && *p == ' ')
        p++;
    if (got == H5SHUF_ATTR_READ && *p) {
        snprintf(why, cap, "is a string, not %zu decimal number%s", n, n == 1 ? "" : "s");
        got = H5SHUF_ATTR_WRONG;
    }
    free(text);
    return got;
}

int h5shuf__attr_get_u64s_or_text(hid_t obj, const char *name, size_t n, uint64_t *v, char *why, size_t cap)
{
    return attr_class(obj, name) == H5T_STRING ? text_u64s(obj, name, n, v, why, cap)
                                               : h5shuf__attr_get_u64s(obj, name, n, v, why, cap);
}

int h5shuf__attr_get_u64s(hid_t obj, const char *name, size_t n, uint64_t *v, char *why, size_t cap)
{
    hid_t a, t, s;
    int got = open_n(obj, name, n, &a, &t, &s, why, cap);
    if (got == H5SHUF_ATTR_READ) {
        H5T_class_t c = H5Tget_class(t);
        size_t size = H5Tget_size(t);
        int sign = c == H5T_INTEGER ? H5Tget_sign(t) == H5T_SGN_2 : 0;
        if (c != H5T_INTEGER) {
            snprintf(why, cap, "is %s, not an integer", class_name(c));
            got = H5SHUF_ATTR_WRONG;
        } else if (size > sizeof *v) {
            snprintf(why, cap, "is an integer of %zu bytes, more than 8", size);
            got = H5SHUF_ATTR_WRONG;
        } else if (H5Aread(a, sign ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64, v) < 0) {
            got = unreadable(why, cap);
        } else {
            for (size_t i = 0; sign && i < n && got == H5SHUF_ATTR_READ; i++)
                if (v[i] > (uint64_t)INT64_MAX) { /* read as int64: a negative value */
                    snprintf(why, cap, "holds a negative value");
                    got = H5SHUF_ATTR_WRONG;
                }
        }
    }
    close_ids(a, t, s);
    H5Eclear2(H5E_DEFAULT);
    return got;
}

/* The n fixed-length strings of size bytes each in buf, copied into v (strpad: the type's padding). */
static int copy_fixed(const char *buf, size_t size, size_t n, H5T_str_t strpad, char **v)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = buf + i * size;
        size_t len = strnlen(p, size);
        while (strpad == H5T_STR_SPACEPAD && len > 0 && p[len - 1] == ' ')
            len--;
        if (!(v[i] = strndup(p, len)))
            return -1;
    }
    return 0;
}

/* The n variable-length strings of attribute a (type t, dataspace s) copied into v.  READ, WRONG or NOMEM. */
static int read_vstrings(hid_t a, hid_t t, hid_t s, size_t n, char **v, char *why, size_t cap)
{
    char **raw = calloc(n, sizeof *raw);
    hid_t mt = H5Tcopy(H5T_C_S1);
    int got = raw ? H5SHUF_ATTR_READ : H5SHUF_ATTR_NOMEM;
    if (got == H5SHUF_ATTR_READ && (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 ||
                                    H5Tset_cset(mt, H5Tget_cset(t)) < 0 || h5shuf__vlen_bound_whole(a) < 0 ||
                                    H5Aread(a, mt, raw) < 0)) {
        got = unreadable(why, cap);
        memset(raw, 0, n * sizeof *raw); /* a failed read leaves nothing to free */
    }
    for (size_t i = 0; got == H5SHUF_ATTR_READ && i < n; i++)
        if (!(v[i] = strdup(raw[i] ? raw[i] : "")))
            got = H5SHUF_ATTR_NOMEM;
    if (raw && mt >= 0)
        H5Dvlen_reclaim(mt, s, H5P_DEFAULT, raw);
    if (mt >= 0)
        H5Tclose(mt);
    free(raw);
    return got;
}

int h5shuf__attr_get_texts(hid_t obj, const char *name, size_t n, int fixed_only, char **v, char *why, size_t cap)
{
    for (size_t i = 0; i < n; i++)
        v[i] = NULL;
    hid_t a, t, s;
    int got = open_n(obj, name, n, &a, &t, &s, why, cap);
    H5T_class_t c = got == H5SHUF_ATTR_READ ? H5Tget_class(t) : H5T_NO_CLASS;
    int var = c == H5T_STRING ? H5Tis_variable_str(t) : 0;
    size_t size = c == H5T_STRING && var == 0 ? H5Tget_size(t) : 0;
    if (got != H5SHUF_ATTR_READ) {
    } else if (c != H5T_STRING) {
        snprintf(why, cap, "is %s, not a string", class_name(c));
        got = H5SHUF_ATTR_WRONG;
    } else if (var < 0 || (var == 0 && size == 0)) {
        got = unreadable(why, cap);
    } else if (var > 0 && fixed_only) {
        snprintf(why, cap, "is a variable-length string, not a fixed-length one");
        got = H5SHUF_ATTR_WRONG;
    } else if (var > 0) {
        got = read_vstrings(a, t, s, n, v, why, cap);
    } else {
        /* (HDF5 holds all n * size bytes once the attribute is open: this is no larger) */
        char *buf = n && size <= SIZE_MAX / n ? malloc(n * size) : NULL;
        if (!buf)
            got = H5SHUF_ATTR_NOMEM;
        else if (H5Aread(a, t, buf) < 0)
            got = unreadable(why, cap);
        else if (copy_fixed(buf, size, n, H5Tget_strpad(t), v) < 0)
            got = H5SHUF_ATTR_NOMEM;
        free(buf);
    }
    if (got == H5SHUF_ATTR_NOMEM)
        snprintf(why, cap, "out of memory");
    for (size_t i = 0; got != H5SHUF_ATTR_READ && i < n; i++) {
        free(v[i]);
        v[i] = NULL;
    }
    close_ids(a, t, s);
    H5Eclear2(H5E_DEFAULT);
    return got;
}

int h5shuf__attr_dimlist(hid_t dset, char *why, size_t cap)
{
    hid_t ds = H5Dget_space(dset);
    int rank = ds >= 0 ? H5Sget_simple_extent_ndims(ds) : -1;
    if (ds >= 0)
        H5Sclose(ds);
    if (rank < 0)
        return unreadable(why, cap);
    hid_t a, t, s, super = H5I_INVALID_HID;
    /* (H5DS takes a scalar dataset's rank as 1: a scale of one value) */
    int got = open_n(dset, "DIMENSION_LIST", rank ? (size_t)rank : 1, &a, &t, &s, why, cap);
    H5T_class_t c = got == H5SHUF_ATTR_READ ? H5Tget_class(t) : H5T_NO_CLASS;
    if (got != H5SHUF_ATTR_READ) {
    } else if (c != H5T_VLEN) {
        snprintf(why, cap, "is %s, not a variable-length sequence of object references", class_name(c));
        got = H5SHUF_ATTR_WRONG;
    } else if ((super = H5Tget_super(t)) < 0) {
        got = unreadable(why, cap);
    } else if (H5Tequal(super, H5T_STD_REF_OBJ) <= 0) {
        snprintf(why, cap, "holds sequences of %s, not of object references", class_name(H5Tget_class(super)));
        got = H5SHUF_ATTR_WRONG;
    } else if (h5shuf__vlen_bound_whole(a) < 0) { /* (HDF5 trusts its heap objects) */
        got = unreadable(why, cap);
    }
    if (super >= 0)
        H5Tclose(super);
    close_ids(a, t, s);
    H5Eclear2(H5E_DEFAULT);
    return got;
}
