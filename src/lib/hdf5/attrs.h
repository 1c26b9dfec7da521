/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attrs.h - attributes: every attribute of an input object copied to its output object, and the one
 * writer of the attributes h5shuf writes itself (provenance, shard ranges, the pile file's records)
 * (attrs.c).
 */
#ifndef H5SHUF_ATTRS_H
#define H5SHUF_ATTRS_H

#include <hdf5.h>

#include "error.h"
#include "refmap.h"

/* Copy every attribute of src to dst, values unchanged, in src's creation order where it tracks it (else by
 * name), each name in its own character set.  References are rewritten through rw (refmap.h) to the
 * output's objects; a dimension scale's REFERENCE_LIST keeps the datasets the output holds (none: no
 * attribute).  With rw->out invalid nothing is written: the references are only checked.  what names
 * dst in messages. */
H5SHUF_INTERNAL int h5shuf__attrs_copy(hid_t src, hid_t dst, const char *what, struct h5shuf_rewrite *rw,
                                       struct h5shuf_err *err);
/* One look at every attribute of obj: whether any holds references (*refs), and the stored bytes of the
 * largest (*largest).  0, or -1 when HDF5 cannot read one (its stack says why). */
H5SHUF_INTERNAL int h5shuf__attrs_survey(hid_t obj, int *refs, hsize_t *largest);
/* The attribute creation-order flags of obj (H5P_CRT_ORDER_TRACKED, _INDEXED), 0 when unknown. */
H5SHUF_INTERNAL int h5shuf__attr_order(hid_t obj);

/* Write attribute name on obj, replacing one of that name: n values of file type ftype from buf in
 * memory type mtype, a 1-D array, or a scalar when n == 0.  < 0 on error (HDF5's stack says why). */
H5SHUF_INTERNAL herr_t h5shuf__attr_put(hid_t obj, const char *name, hid_t ftype, hid_t mtype, size_t n, const void *buf);
/* The same for a scalar uint64 (little-endian in the file), n uint64 values, a scalar variable-length
 * UTF-8 string, and n of them. */
H5SHUF_INTERNAL herr_t h5shuf__attr_put_u64(hid_t obj, const char *name, uint64_t v);
H5SHUF_INTERNAL herr_t h5shuf__attr_put_u64s(hid_t obj, const char *name, const uint64_t *v, size_t n);
H5SHUF_INTERNAL herr_t h5shuf__attr_put_string(hid_t obj, const char *name, const char *value);
H5SHUF_INTERNAL herr_t h5shuf__attr_put_strings(hid_t obj, const char *name, const char *const *v, size_t n);

/* With text, value (not empty) as a scalar fixed-length ASCII string (netCDF's NC_CHAR); without, as a
 * scalar variable-length UTF-8 string. */
H5SHUF_INTERNAL herr_t h5shuf__attr_put_text(hid_t obj, const char *name, const char *value, int text);
/* A scalar uint64, or with text its decimal digits as a fixed-length string. */
H5SHUF_INTERNAL herr_t h5shuf__attr_put_u64_text(hid_t obj, const char *name, uint64_t v, int text);

/* A variable-length UTF-8 string type (caller closes), or H5I_INVALID_HID. */
H5SHUF_INTERNAL hid_t h5shuf__vstring_type(void);

#endif /* H5SHUF_ATTRS_H */
