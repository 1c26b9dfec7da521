/*
 * vlenbound.h - the bound on a read of variable-length rows from a file that may be hostile (vlenbound.c).
 */
#ifndef H5SHUF_VLENBOUND_H
#define H5SHUF_VLENBOUND_H

#include <stdint.h>

#include <hdf5.h>

#include "datasets.h"

/* Check, before HDF5 decodes them, that rows [start, start+n) of vlen dataset dset (ds describes it) can
 * be read safely and within limit_bytes: every element's global heap object lies inside its collection,
 * which lies inside the file, and holds no more bytes than the element's length says; and the decoded
 * payload of the rows (bytes, a string's NUL included) is at most the file's size and at most
 * limit_bytes (0: no limit).  Reads the rows' stored descriptors (not their payload) and the headers of
 * the collections they name; allocates at most about 1 MiB plus 16 bytes per element of a row.
 * Returns 0 when the read may go ahead; < 0 with the cause on HDF5's error stack (one line: the rows and
 * the bytes they need, or the element and what is wrong with its heap object), for the caller's
 * h5shuf__hdf5_cause. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_bound(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                                          uint64_t limit_bytes);

/* The same checks for all of obj, an open dataset or attribute, when its datatype is a variable-length
 * sequence or string (a dataset in blocks of rows; nested variable-length data, inside a compound, an
 * array or another sequence, is not checked), against the file's size only: before a copy of it (an
 * attribute's H5Aread, a dataset's H5Ocopy) decodes it.  0 when it may be read (or holds no vlen data at
 * its top); < 0 with the cause on HDF5's error stack ("element E: ...", "row R, element E: ..."). */
H5SHUF_INTERNAL herr_t h5shuf__vlen_bound_whole(hid_t obj);

#endif /* H5SHUF_VLENBOUND_H */
