/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * base.h - what every module of libh5shuf uses: the public status codes (h5shuf.h), the marker of
 * functions shared between the library's files but hidden from its users, and a 128-bit integer for key
 * arithmetic (keys are 64-bit; a key range [lo, hi) may end at 2^64), and the copy of one row.
 */
#ifndef H5SHUF_BASE_H
#define H5SHUF_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "h5shuf.h"

#define H5SHUF_INTERNAL __attribute__((visibility("hidden")))

typedef unsigned __int128 h5shuf_u128;

/* Copy one row of n bytes.  Rows are moved one at a time into piles and bands; for the small sizes of
 * labels and short records a memcpy of a constant size is a few instructions where a call to memcpy with a
 * variable size cost a fifth of a run of 16-byte rows (perf, issue 15). */
static inline void h5shuf__row_copy(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 12: memcpy(dst, src, 12); break;
    case 16: memcpy(dst, src, 16); break;
    case 24: memcpy(dst, src, 24); break;
    case 32: memcpy(dst, src, 32); break;
    case 48: memcpy(dst, src, 48); break;
    case 64: memcpy(dst, src, 64); break;
    default: memcpy(dst, src, n); break;
    }
}

#endif /* H5SHUF_BASE_H */
