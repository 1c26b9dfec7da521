/*
 * attrs.h - attributes: every attribute of an input object copied to its output object, and the one
 * writer of the attributes h5shuf writes itself (provenance, shard ranges, the pile file's records)
 * (attrs.c).
 */
#ifndef H5SHUF_ATTRS_H
#define H5SHUF_ATTRS_H

#include <hdf5.h>

#include "error.h"

/* Copy every attribute of src to dst, values unchanged; what names dst in the message on failure. */
H5SHUF_INTERNAL int h5shuf__attrs_copy(hid_t src, hid_t dst, const char *what, struct h5shuf_err *err);

/* Write attribute name on obj, replacing one of that name: n values of file type ftype from buf in
 * memory type mtype, a 1-D array, or a scalar when n == 0.  < 0 on error (HDF5's stack says why). */
H5SHUF_INTERNAL herr_t h5shuf__attr_put(hid_t obj, const char *name, hid_t ftype, hid_t mtype, size_t n, const void *buf);
/* The same for a scalar uint64 (little-endian in the file), n uint64 values, a scalar variable-length
 * UTF-8 string, and n of them. */
H5SHUF_INTERNAL herr_t h5shuf__attr_put_u64(hid_t obj, const char *name, uint64_t v);
H5SHUF_INTERNAL herr_t h5shuf__attr_put_u64s(hid_t obj, const char *name, const uint64_t *v, size_t n);
H5SHUF_INTERNAL herr_t h5shuf__attr_put_string(hid_t obj, const char *name, const char *value);
H5SHUF_INTERNAL herr_t h5shuf__attr_put_strings(hid_t obj, const char *name, const char *const *v, size_t n);

/* A variable-length UTF-8 string type (caller closes), or H5I_INVALID_HID. */
H5SHUF_INTERNAL hid_t h5shuf__vstring_type(void);

#endif /* H5SHUF_ATTRS_H */
