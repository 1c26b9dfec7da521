/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vlenbound.h - the bound on a read of variable-length rows from a file that may be hostile (vlenbound.c).
 */
#ifndef H5SHUF_VLENBOUND_H
#define H5SHUF_VLENBOUND_H

#include <stdint.h>

#include <hdf5.h>

#include "datasets.h"
#include "varena.h"

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

/* h5shuf__vlen_bound, which also reads the rows' payload, when it can, from the global heap collections
 * it reads for the check, without HDF5's conversion (a heap allocation per element, the collections read
 * a second time into HDF5's cache).  buf holds n rows of ds (zeroed by the caller; ds->row_bytes each);
 * payload is appended to arena a (a->n bytes already there are kept).  *copied 1: every element was
 * read, buf holds the rows in memory form (hvl_t) pointing into a, valid until a is changed, with the same
 * lengths and bytes as HDF5's read.  *copied 0 (and some of buf's records and of a's payload written,
 * for the caller to drop): the rows are for HDF5 to read (h5shuf__vlen_bound's checks passed): they are
 * not all sequences (strings and records with vlen members never are), a collection is larger than 1 MiB,
 * or an element's heap object holds fewer
 * bytes than its length says.  Holds up to 4 MiB of collections during the call (instead of HDF5's heap
 * cache, which then reads none).  < 0 as h5shuf__vlen_bound, or out of memory for a. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_bound_copy(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                                               uint64_t limit_bytes, unsigned char *buf, struct h5shuf_varena *a,
                                               int *copied);

/* The same checks for all of obj, an open dataset or attribute, whose datatype holds variable-length
 * data (a sequence or a string, or compounds and arrays with such members, at any depth; a dataset in
 * blocks of rows), against the file's size only: before a copy of it (an attribute's H5Aread, a dataset's
 * H5Ocopy) decodes it.  Nested variable-length data (a sequence of sequences or of strings, whose inner
 * descriptors lie in the heap) is refused.  0 when it may be read (or holds no vlen data); < 0 with the
 * cause on HDF5's error stack ("element E: ...", "row R, element E: ...", or the nesting). */
H5SHUF_INTERNAL herr_t h5shuf__vlen_bound_whole(hid_t obj);

#endif /* H5SHUF_VLENBOUND_H */
