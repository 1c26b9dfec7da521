/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rows.h - rows of a dataset moved through HDF5 as raw bytes of its file datatype: hyperslabs of whole
 * rows along dim 0 (rows.c).  HDF5 converts nothing, so the output's bytes are the input's.
 */
#ifndef H5SHUF_ROWS_H
#define H5SHUF_ROWS_H

#include <hdf5.h>

#include "base.h"

/* Read rows [start, start+count) of dataset dset (rank, file type ftype) into buf as raw bytes; rows
 * whose storage was never written and has no fill value (h5shuf__read_may_skip) read as zero bytes. */
H5SHUF_INTERNAL herr_t h5shuf__read_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf);

/* 1 when an H5Dread of dset may leave part of the caller's buffer as it was: some storage may never have
 * been written and no fill value stands in for it (fill time H5D_FILL_TIME_NEVER, or IFSET with no fill
 * value; a virtual dataset, whose sources decide), unless the dataset is compact or contiguous with all
 * its storage allocated.  0 when every byte a read gives comes from the file or its fill value.  1 when
 * HDF5 cannot say (zeroing is always safe).  h5shuf__read_rows zeroes its buffer first when it is 1. */
H5SHUF_INTERNAL int h5shuf__read_may_skip(hid_t dset);

/* Write rows [start, start+count) of dset from buf (raw bytes of ftype).  When extend, the dataset is
 * first extended to start+count rows. */
H5SHUF_INTERNAL herr_t h5shuf__write_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count,
                                          const void *buf, int extend);

/* The file dataspace of dset with rows [start, start+count) selected and a memory dataspace of their
 * shape (dset extended to start+count rows first when extend); both H5I_INVALID_HID until made, for
 * the caller to close.  Returns < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__select_rows(hid_t dset, uint64_t start, uint64_t count, hid_t *fspace, hid_t *mspace,
                                           int extend);

/* Close dataspaces fs and ms (either may be H5I_INVALID_HID) after an HDF5 call that returned r, keeping
 * its error stack when it failed; returns r. */
H5SHUF_INTERNAL herr_t h5shuf__spaces_close(herr_t r, hid_t fs, hid_t ms);

/* Extend dset's dimension 0 to rows (the other dimensions unchanged).  Returns < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__extend_rows(hid_t dset, uint64_t rows);

#endif /* H5SHUF_ROWS_H */
