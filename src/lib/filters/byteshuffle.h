/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * byteshuffle.h - HDF5's byte shuffle filter (H5Z_FILTER_SHUFFLE, H5Zshuffle.c) as a transform of one
 * chunk's bytes, for the chunk pipeline that h5shuf runs on its own threads (codec.c).  No HDF5 call.
 */
#ifndef H5SHUF_BYTESHUFFLE_H
#define H5SHUF_BYTESHUFFLE_H

#include <stddef.h>

#include "base.h"

/* Shuffle (reverse 0) or unshuffle (reverse 1) the n bytes of src into dst, as HDF5's filter does for
 * elements of size bytes: shuffled, byte j of element i is at j * (n / size) + i; the n % size bytes after
 * the last whole element stay where they are; size <= 1 or fewer than two elements: a copy.  src and dst
 * must not overlap.  Cannot fail.  Elements of 2, 4 and 8 bytes go 16 at a time through SSE2 unpacks
 * where the processor has them (every x86-64), several times faster than the byte loop (byteshuffle.c;
 * measured: docs/benchmark.md, section "The byte shuffle"). */
H5SHUF_INTERNAL void h5shuf__byteshuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int reverse);

#endif /* H5SHUF_BYTESHUFFLE_H */
