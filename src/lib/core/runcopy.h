/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runcopy.h - the bytes of split chunks moved between the caller's rows and a chunk (runcopy.c), for
 * codec.c's block copies.  No HDF5.
 */
#ifndef H5SHUF_RUNCOPY_H
#define H5SHUF_RUNCOPY_H

#include <stddef.h>

#include "base.h"

/* lines runs of run bytes, the ith at d + i * dstride and s + i * sstride.  Split chunks of small types
 * have short runs (h5py's chunks of images, (2500, 4, 8, 1) uint8: one byte): copied as loads and stores,
 * not calls. */
H5SHUF_INTERNAL void h5shuf__copy_lines(unsigned char *d, size_t dstride, const unsigned char *s, size_t sstride,
                                        size_t lines, size_t run);

/* rows rows of nruns runs of run bytes: run i of row k at d + k * drow + doff[i] and s + k * srow +
 * soff[i].  A row's runs are moved together, while its cache lines are at hand: h5py's chunks of uint8
 * images ((2500, 4, 8, 1) of (N, 64, 64, 3)) have 32 runs of one byte a row, which copy_lines moved 8 to a
 * call (a third less time a byte, measured on such a block).  On processors with AVX-512 VBMI (unless the
 * environment sets H5SHUF_DEBUG_NO_SIMD), runs whose offsets step evenly on both sides within 64 bytes go
 * a progression at a time (one masked load, one byte permutation, one masked store, the rows 8 ahead
 * prefetched); elsewhere on x86-64 (SSSE3), runs that tile ranges of 16 bytes or more of the destination
 * (codec.c's groups of image chunks), when rows >= 256, go 16 bytes at a time (a few 16-byte loads of
 * the source, a byte shuffle of each, one store; the last rows by the byte loop, so that no load reads past
 * the source's last run byte).  The same bytes, and no byte outside the runs is written (runcopy.c).
 * Plans of the SSSE3 path are made on the heap: when that fails, the byte loop moves the runs. */
H5SHUF_INTERNAL void h5shuf__copy_runs(unsigned char *d, size_t drow, const size_t *doff, const unsigned char *s,
                                       size_t srow, const size_t *soff, size_t rows, size_t nruns, size_t run);

#endif /* H5SHUF_RUNCOPY_H */
