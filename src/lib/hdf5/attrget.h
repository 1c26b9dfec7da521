/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attrget.h - the attributes h5shuf reads itself, read only after their shape and type are checked
 * (attrget.c): n integers, n strings, and a dataset's DIMENSION_LIST before HDF5's H5DS functions read it.
 */
#ifndef H5SHUF_ATTRGET_H
#define H5SHUF_ATTRGET_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "base.h"

/* What a checked read of an attribute found. */
enum h5shuf_attr_found {
    H5SHUF_ATTR_NOMEM = -2, /* out of memory (why says so) */
    H5SHUF_ATTR_WRONG = -1, /* one of another shape or type, or one HDF5 cannot read: why says which */
    H5SHUF_ATTR_NONE = 0,   /* the object has no attribute of that name */
    H5SHUF_ATTR_READ = 1    /* read: the values are in the caller's buffer */
};

/* Room for a why ("holds 2000 values, not 1", "is a float, not an integer", "cannot be read: ..."), a
 * phrase to follow "attribute NAME " in the caller's one-line message. */
#define H5SHUF_ATTR_WHY_MAX 200

/* Read attribute name of obj as n integers (n >= 1; a scalar holds one) into v[0..n), as uint64.  The
 * attribute must hold exactly n values of an integer type of at most 8 bytes, none negative.  Returns an
 * h5shuf_attr_found; v is written only on H5SHUF_ATTR_READ, why[0..cap) on a WRONG or NOMEM. */
H5SHUF_INTERNAL int h5shuf__attr_get_u64s(hid_t obj, const char *name, size_t n, uint64_t *v, char *why, size_t cap);

/* h5shuf__attr_get_u64s, or one string of n decimal numbers separated by spaces: the form h5shuf writes an
 * output's integer root attributes in when the output is a netCDF file (h5shuf__attr_put_u64_text). */
H5SHUF_INTERNAL int h5shuf__attr_get_u64s_or_text(hid_t obj, const char *name, size_t n, uint64_t *v, char *why,
                                                  size_t cap);

/* Read attribute name of obj as n strings (n >= 1; a scalar holds one) into v[0..n), each a malloc'd
 * NUL-terminated copy the caller frees (all NULL unless H5SHUF_ATTR_READ).  The attribute must hold
 * exactly n values of a string type: fixed-length (a value's bytes up to its first NUL, a space-padded
 * one's trailing spaces dropped) or, unless fixed_only, variable-length (its global heap objects checked
 * first, h5shuf__vlen_bound_whole; a null string reads as "").  Returns an h5shuf_attr_found; why as
 * h5shuf__attr_get_u64s. */
H5SHUF_INTERNAL int h5shuf__attr_get_texts(hid_t obj, const char *name, size_t n, int fixed_only, char **v, char *why,
                                           size_t cap);

/* Whether dataset dset has a DIMENSION_LIST that HDF5's H5DSget_num_scales and H5DSiterate_scales can
 * read.  They read it with its own type into one hvl_t per dimension of dset and take each element as
 * a sequence of object references, trusting all of it (1.10 to 2.x): more values than dimensions
 * overflow their buffer, fewer leave elements unset, another type overflows it or is read as references.
 * So it must hold exactly rank(dset) values of a variable-length sequence of H5T_STD_REF_OBJ, whose heap
 * objects pass h5shuf__vlen_bound_whole.  H5SHUF_ATTR_READ when it does (the H5DS calls may go ahead;
 * nothing is read into the caller's memory), NONE when dset has no DIMENSION_LIST, WRONG with why. */
H5SHUF_INTERNAL int h5shuf__attr_dimlist(hid_t dset, char *why, size_t cap);

#endif /* H5SHUF_ATTRGET_H */
