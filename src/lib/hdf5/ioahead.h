/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ioahead.h - the disk's work started ahead of the reads that need it (ioahead.c): the stored chunks of a
 * pile asked of the kernel before pass 2 reads them (issue 52: data larger than memory).
 */
#ifndef H5SHUF_IOAHEAD_H
#define H5SHUF_IOAHEAD_H

#include <hdf5.h>

#include "base.h"

/* Ask the kernel to start reading (posix_fadvise POSIX_FADV_WILLNEED, which queues the reads and returns)
 * every allocated chunk of the n datasets sets[0 .. n) of one file, whose descriptor is fd (the file's
 * own, or any open one of the same file: the page cache is the file's).  The datasets are chunked along
 * dim 0 only (a pile's, piles.c).  The chunks are asked for in address order, neighbours (at most 64 KiB
 * apart) as one range, so the disk streams them instead of waiting for one read at a time: pass 2's
 * reads of a pile are spread over the whole scratch file, one chunk every M chunks.  Best effort: a
 * dataset HDF5 cannot describe, a failed call or a system without the advice change nothing (HDF5's
 * stack is cleared).  Returns the bytes asked for. */
H5SHUF_INTERNAL uint64_t h5shuf__chunks_willneed(int fd, const hid_t *sets, size_t n);

#endif /* H5SHUF_IOAHEAD_H */
