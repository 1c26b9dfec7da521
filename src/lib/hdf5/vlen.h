/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vlen.h - rows of variable-length datatypes: sequences of a fixed-size base type and strings (vlen.c).
 */
#ifndef H5SHUF_VLEN_H
#define H5SHUF_VLEN_H

#include <hdf5.h>

#include "datasets.h"
#include "varena.h"

/* Variable-length rows.  In memory a row of a vlen dataset is HDF5's own memory form: elems hvl_t
 * (sequences) or char * (strings, NUL-terminated), pointing into HDF5's allocations (input reads) or
 * an arena (piles loaded from the scratch).  In the scratch a pile stores, per vlen dataset, the
 * elements' lengths in "dN" (uint64, the dataset's shape; sequences: elements, strings: bytes with the
 * NUL) and their concatenated payload in "dN_data" (1-D, the base type or uint8), so no global heap.
 * Compound or array elements with variable-length members (H5SHUF_VLEN_REC) are HDF5's memory records;
 * vlenrec.c flattens them into the same form (lengths per member, payload bytes) and back. */

/* Why type t cannot be shuffled as variable-length rows (vlen of vlen anywhere in it, references in a
 * compound or array with vlen members), or NULL when it can (or holds no variable-length data). */
H5SHUF_INTERNAL const char *h5shuf__vlen_unsupported(hid_t t);
/* Fill ds's vlen fields from its file type (called for the first input), as vlen dataset number vslot:
 * a sequence, a string, or a compound or array with such members (h5shuf__vrec_setup); H5SHUF_OK or an
 * error naming where. */
H5SHUF_INTERNAL int h5shuf__vlen_setup(struct h5shuf_dsinfo *ds, size_t vslot, const char *where, struct h5shuf_err *err);
/* Rows read from the inputs to estimate the payload per row: at most this many blocks of this many
 * rows, spread evenly over the rows (all rows when there are at most that many). */
#define H5SHUF_VLEN_SAMPLE_BLOCKS 16
#define H5SHUF_VLEN_SAMPLE_BLOCK_ROWS 64
/* One block of the sample: rows [start, start + n) (n <= H5SHUF_VLEN_SAMPLE_BLOCK_ROWS) of the open
 * datasets dset[0 .. dsets->n) of the input file named file. */
struct h5shuf_vlen_block {
    const char *file;
    const hid_t *dset;
    uint64_t start, n;
};
/* The payload bytes of the rows sampled so far: sum[v] of vlen dataset v, sum[nvlen] of the rows'
 * totals, sum2 of their squares; tot is room for one block's totals.  Blocks are added one at a time, so
 * that only the input of the block being read need be open. */
struct h5shuf_vlen_sample {
    double *sum, *tot, sum2;
    uint64_t rows;
};
/* Start an empty sample; H5SHUF_OK or H5SHUF_ENOMEM (in err).  End it with h5shuf__vlen_estimate,
 * whatever happened meanwhile. */
H5SHUF_INTERNAL int h5shuf__vlen_sample_begin(const struct h5shuf_datasets *dsets, struct h5shuf_vlen_sample *sm,
                                              struct h5shuf_err *err);
/* Add block b's rows to the sample.  Errors name the file and dataset. */
H5SHUF_INTERNAL int h5shuf__vlen_sample_add(const struct h5shuf_datasets *dsets, struct h5shuf_vlen_sample *sm,
                                            const struct h5shuf_vlen_block *b, struct h5shuf_err *err);
/* When st is H5SHUF_OK, estimate the payload bytes per row (mean per dataset, variance of the row's sum)
 * from the sample: sets ds[].mean_bytes, ds[].plan_row_bytes and dsets->vlen_var.  Frees the sample. */
H5SHUF_INTERNAL void h5shuf__vlen_estimate(struct h5shuf_datasets *dsets, struct h5shuf_vlen_sample *sm, int st);
/* Payload (pointer and bytes, the NUL of a string included) of element e of a row in memory form. */
H5SHUF_INTERNAL const void *h5shuf__vlen_elem(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t e,
                                              uint64_t *bytes);
/* The most payload bytes one read of vlen rows may bring in under a memory budget of mem_limit_bytes:
 * H5SHUF_VLEN_READ_BUDGETS budgets (saturating).  Not the budget itself: the plan sizes reads from a
 * sampled mean (a quarter of the budget or less), and long rows the sample missed may take a read past
 * it, which the budget's design allows; reads of several budgets are not a skew but a hostile file. */
#define H5SHUF_VLEN_READ_BUDGETS 8
static inline uint64_t h5shuf__vlen_read_limit(uint64_t mem_limit_bytes)
{
    return mem_limit_bytes > UINT64_MAX / H5SHUF_VLEN_READ_BUDGETS ? UINT64_MAX
                                                                   : mem_limit_bytes * H5SHUF_VLEN_READ_BUDGETS;
}
/* Read rows [start, start+n) of dset into buf (memory form, HDF5's allocations).  buf is zeroed first,
 * so h5shuf__vlen_reclaim is safe after a failure too.  The read is first bounded (h5shuf__vlen_bound,
 * vlenbound.h): rows whose heap objects are corrupt, or whose payload is more than the file holds or
 * more than limit_bytes (the caller's memory budget, bytes; 0: no limit), are refused before HDF5 reads
 * them.  < 0 on failure, the cause on HDF5's error stack. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_read(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                                         uint64_t limit_bytes, void *buf);
/* The same, with sequences (H5SHUF_VLEN_SEQ) read into arena a (its contents replaced; NULL: none) when
 * h5shuf__vlen_bound_copy can read them, without HDF5's conversion: *in_arena 1 then, and buf's records
 * point into a (nothing to reclaim; valid until a changes).  *in_arena 0: HDF5 read them (reclaim them
 * with h5shuf__vlen_reclaim).  After a failure *in_arena is 0 and buf is safe to reclaim. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_read_arena(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                                               uint64_t limit_bytes, void *buf, struct h5shuf_varena *a,
                                               int *in_arena);
/* Free what h5shuf__vlen_read allocated for n rows (H5Dvlen_reclaim) and zero buf. */
H5SHUF_INTERNAL void h5shuf__vlen_reclaim(const struct h5shuf_dsinfo *ds, uint64_t n, void *buf);
/* Load rows [start, start+n) of a pile's vlen dataset (lengths lens, payload data from element *cursor
 * on, which advances) into buf (memory form) with the payload appended to arena a. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_load(const struct h5shuf_dsinfo *ds, hid_t lens, hid_t data, uint64_t start,
                                         uint64_t n, uint64_t *cursor, unsigned char *buf, struct h5shuf_varena *a);
/* The same in two steps, for rows that travel between processes (src/mpi/dist.c) in the scratch's form:
 * h5shuf__vlen_load_lengths reads the n rows' lengths (n * ds->elems uint64) to the end of buf's n rows
 * (h5shuf__vlen_lengths: where they are) and appends their payload to a, without making records; then
 * h5shuf__vlen_point makes buf's records (memory form) from those lengths and the payload at payload
 * (not owned; it must outlive the records; NULL when they have none; < 0: no memory),
 * h5shuf__vlen_payload_bytes says how many bytes they take. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_load_lengths(const struct h5shuf_dsinfo *ds, hid_t lens, hid_t data, uint64_t start,
                                                 uint64_t n, uint64_t *cursor, unsigned char *buf, struct h5shuf_varena *a);
H5SHUF_INTERNAL uint64_t h5shuf__vlen_payload_bytes(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n);
H5SHUF_INTERNAL int h5shuf__vlen_point(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n,
                                       unsigned char *payload);
/* Append a row (memory form) to a pile buffer: its lengths to lens, its payload to a.  < 0: no memory. */
H5SHUF_INTERNAL int h5shuf__vlen_pile_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t *lens,
                                          struct h5shuf_varena *a);
/* Write the payload buffered in a to a pile's payload dataset (which holds *written elements): whole
 * chunks of chunk elements, or everything when all; the rest stays in a. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_pile_flush(const struct h5shuf_dsinfo *ds, hid_t data, uint64_t chunk, int all,
                                               uint64_t *written, struct h5shuf_varena *a);
/* Append a row (memory form) to an output band: payload copied into a, desc gets offsets into it. */
H5SHUF_INTERNAL int h5shuf__vlen_band_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, unsigned char *desc,
                                          struct h5shuf_varena *a);
/* Copy the payload of band rows [from, to) of a sequence dataset, records as the caller's (pointers),
 * into a and make them offsets into it, as h5shuf__vlen_band_put makes them.  < 0: no memory. */
H5SHUF_INTERNAL int h5shuf__vlen_band_settle(const struct h5shuf_dsinfo *ds, unsigned char *desc, uint64_t from,
                                             uint64_t to, struct h5shuf_varena *a);
/* Write n band rows at output row start: rows [0, settled) with offsets into a in desc (made pointers
 * here), the rest records pointing to their payload (a sequence dataset's, borrowed). */
H5SHUF_INTERNAL herr_t h5shuf__vlen_band_write(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                                               uint64_t settled, unsigned char *desc, const struct h5shuf_varena *a);
/* Payload elements per scratch chunk (and pile buffer) of vlen dataset ds for piles of cap_rows rows. */
H5SHUF_INTERNAL uint64_t h5shuf__vlen_chunk_elems(const struct h5shuf_dsinfo *ds, uint64_t cap_rows);
/* Bytes of a pile's payload buffer for chunks of chunk elements: the chunk and a quarter more. */
H5SHUF_INTERNAL uint64_t h5shuf__vlen_arena_bytes(const struct h5shuf_dsinfo *ds, uint64_t chunk);
/* Cap the metadata cache of an input or output file when some of the datasets have vlen rows. */
H5SHUF_INTERNAL void h5shuf__vlen_limit_cache(const struct h5shuf_datasets *dsets, hid_t file);

#endif /* H5SHUF_VLEN_H */
