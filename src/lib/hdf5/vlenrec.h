/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vlenrec.h - rows of compound or array elements with variable-length members (vlenrec.c).
 */
#ifndef H5SHUF_VLENREC_H
#define H5SHUF_VLENREC_H

#include <hdf5.h>

#include "datasets.h"
#include "varena.h"

/* Does datatype t hold variable-length data (a sequence or a variable-length string) anywhere, itself
 * included?  0 or 1 (0 when HDF5 cannot say). */
H5SHUF_INTERNAL int h5shuf__type_has_var(hid_t t);

/* Fill ds's H5SHUF_VLEN_REC fields from its file type ds->ftype (a compound or array type with
 * variable-length members and none nested in a sequence): mtype (HDF5's memory form of the type, so
 * the members' payload bytes are not converted), etype (uint8: the payload is bytes), elem_bytes 1,
 * slot/nslot, run/nrun, rec_bytes, fixed_bytes, ltype, elems (elements x nslot) and row_bytes (elements
 * x rec_bytes).  H5SHUF_OK, or H5SHUF_EHDF5 / H5SHUF_ENOMEM with a message naming where (file:dataset). */
H5SHUF_INTERNAL int h5shuf__vrec_setup(struct h5shuf_dsinfo *ds, const char *where, struct h5shuf_err *err);

/* The payload of variable-length member e (0 .. ds->elems: element e / nslot, member e % nslot) of a
 * row in memory form, and its bytes (a string's NUL included; a null string reads as ""). */
H5SHUF_INTERNAL const void *h5shuf__vrec_elem(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t e,
                                              uint64_t *bytes);

/* In the scratch a row is its members' lengths (ds->elems uint64: bytes, a string's NUL included) and, in
 * the payload, for each element its fixed-size bytes (fixed_bytes, runs in order) followed by each
 * member's payload bytes.  Append a row (memory form) so: lengths to lens, the rest to a.  < 0: no
 * memory. */
H5SHUF_INTERNAL int h5shuf__vrec_pile_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t *lens,
                                          struct h5shuf_varena *a);
/* Payload bytes of n rows besides their members' lengths: their fixed-size bytes. */
static inline uint64_t h5shuf__vrec_fixed_payload(const struct h5shuf_dsinfo *ds, uint64_t n)
{
    return n * (ds->elems / ds->nslot) * ds->fixed_bytes;
}
/* Make n rows' records in buf (memory form) from their lengths at h5shuf__vlen_lengths(ds, buf, n) and
 * their payload at payload (not owned; it must outlive the records).  < 0: no memory. */
H5SHUF_INTERNAL int h5shuf__vrec_point(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n,
                                       unsigned char *payload);
/* Append a row (memory form) to an output band: its fixed-size bytes copied to desc, its members' payload
 * to a and their offsets into it to desc.  < 0: no memory. */
H5SHUF_INTERNAL int h5shuf__vrec_band_put(const struct h5shuf_dsinfo *ds, const unsigned char *row,
                                          unsigned char *desc, struct h5shuf_varena *a);
/* Turn the offsets of n band rows in desc into pointers into a (before H5Dwrite). */
H5SHUF_INTERNAL void h5shuf__vrec_band_point(const struct h5shuf_dsinfo *ds, uint64_t n, unsigned char *desc,
                                             const struct h5shuf_varena *a);

#endif /* H5SHUF_VLENREC_H */
