/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boundread.h - HDF5 calls that may decode a dataset's chunks, bracketed so that h5shuf's filters know
 * how many bytes each chunk may decode to (filters/filter_limit.h): a chunk that decodes to more (a
 * decompression bomb) or, where the stream says its size, to less, is refused without being decoded,
 * and the error names the chunk.
 */
#ifndef H5SHUF_BOUNDREAD_H
#define H5SHUF_BOUNDREAD_H

#include <hdf5.h>

#include "base.h"
#include "filter_limit.h"

/* One bracket: the calling thread's limits before it, restored at its end. */
struct h5shuf_bound {
    struct h5shuf_filter_limits saved;
    hid_t dset;        /* the dataset whose chunks are read, or H5I_INVALID_HID once detached: */
    hid_t loc;         /* ... then found again at loc, path to name a refused chunk */
    const char *path;
};

/* Declare on this thread, until h5shuf__bound_end(b, ...), the limits of dset's chunks
 * (filters/chunklimit.h; none when dset is not chunked or has none of h5shuf's filters, which also hides
 * any outer bracket's).  Never fails: a dataset whose properties cannot be read declares none. */
H5SHUF_INTERNAL void h5shuf__bound_begin(struct h5shuf_bound *b, hid_t dset);

/* The dataset b was begun with will be closed before the bracketed call (H5Ocopy: HDF5 1.10.8 copying
 * an open dataset of vlen type from its chunk cache writes past its background buffer when a filter's
 * output buffer is larger than the chunk): to name a refused chunk, h5shuf__bound_end opens path at loc
 * (a name that outlives the bracket). */
H5SHUF_INTERNAL void h5shuf__bound_detach(struct h5shuf_bound *b, hid_t loc, const char *path);

/* End b: restore the thread's limits and return r, the bracketed calls' result.  When r < 0 because one
 * of h5shuf's filters refused a chunk of the dataset, the chunk is looked for among the stored chunks
 * that fspace selects (H5S_ALL: all of them; at most about a million looked at, by their stored size and
 * the hash of the bytes the filter was given), and when found HDF5's error stack becomes one message,
 * "chunk at (r, c, ...): <the filter's reason>"; otherwise the stack is left as it was. */
H5SHUF_INTERNAL herr_t h5shuf__bound_end(struct h5shuf_bound *b, herr_t r, hid_t fspace);

/* H5Dread and H5Dwrite (a partial chunk is decoded before it is rewritten) of dset with the default
 * transfer properties, bracketed.  Same arguments and result as HDF5's. */
H5SHUF_INTERNAL herr_t h5shuf__dread(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, void *buf);
H5SHUF_INTERNAL herr_t h5shuf__dwrite(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, const void *buf);

#endif /* H5SHUF_BOUNDREAD_H */
