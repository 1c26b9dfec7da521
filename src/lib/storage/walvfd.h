/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walvfd.h - a walfile as an HDF5 file driver (walvfd.c): the file-access property list through which
 * HDF5 opens a file that a walfile (walfile.h) writes.
 */
#ifndef H5SHUF_WALVFD_H
#define H5SHUF_WALVFD_H

#include <hdf5.h>

#include "base.h"
#include "error.h"
#include "walfile.h"

/* h5shuf__walfile_fapl flags. */
#define H5SHUF_WALFILE_REOPEN 1u /* open a file whose superblock still says "open for write" (a recovered
                                  * checkpoint: it was flushed, not closed), as h5clear does */

/* A new file-access property list (the caller closes it) whose driver is wf.  The name given to
 * H5Fcreate or H5Fopen with it is not used: the file is wf's base descriptor.  One HDF5 file at a time is
 * open on a wf.  H5F_ACC_TRUNC is refused once a commit exists (it would discard committed bytes).
 * flags: 0 or H5SHUF_WALFILE_REOPEN.  Returns the list, or H5I_INVALID_HID with the cause in err. */
H5SHUF_INTERNAL hid_t h5shuf__walfile_fapl(struct h5shuf_walfile *wf, unsigned flags, struct h5shuf_err *err);

/* The driver's HDF5 id once a fapl was made with it (H5Pget_driver of such a file's fapl), else
 * H5I_INVALID_HID.  Its file handle (H5Fget_vfd_handle) is the base descriptor, an int, as sec2's. */
H5SHUF_INTERNAL hid_t h5shuf__walfile_driver(void);

#endif /* H5SHUF_WALVFD_H */
