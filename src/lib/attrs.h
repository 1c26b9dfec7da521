/*
 * attrs.h - attributes: copied from an input object to an output object, and written by h5shuf itself
 * (provenance, shard ranges, the pile file's records) (attrs.c).
 */
#ifndef H5SHUF_ATTRS_H
#define H5SHUF_ATTRS_H

#include <hdf5.h>

#include "base.h"

/* Copy every attribute of src to dst, values unchanged; what names dst in the message on failure. */
H5SHUF_INTERNAL int h5shuf__attrs_copy(h5shuf_job *job, hid_t src, hid_t dst, const char *what);

/* Write the scalar UTF-8 string attribute name on obj (replacing one of that name).  < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__put_string_attr(hid_t obj, const char *name, const char *value);

/* A variable-length UTF-8 string type (caller closes), or H5I_INVALID_HID. */
H5SHUF_INTERNAL hid_t h5shuf__vstring_type(void);

/* Write attribute name: n values of type (file type ftype, memory type mtype); n == 0: a scalar. */
H5SHUF_INTERNAL herr_t h5shuf__put_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, size_t n, const void *buf);
H5SHUF_INTERNAL herr_t h5shuf__put_u64(hid_t obj, const char *name, uint64_t v);
H5SHUF_INTERNAL herr_t h5shuf__put_strings(hid_t obj, const char *name, const char *const *v, size_t n);
H5SHUF_INTERNAL herr_t h5shuf__put_string(hid_t obj, const char *name, const char *v);
/* n uint64 values; n == 1: a scalar. */
H5SHUF_INTERNAL herr_t h5shuf__put_u64_attr(hid_t obj, const char *name, const uint64_t *v, hsize_t n);

#endif /* H5SHUF_ATTRS_H */
