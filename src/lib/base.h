/*
 * base.h - what every module of libh5shuf uses: the public status codes (h5shuf.h), the marker of
 * functions shared between the library's files but hidden from its users, and a 128-bit integer for key
 * arithmetic (keys are 64-bit; a key range [lo, hi) may end at 2^64).
 */
#ifndef H5SHUF_BASE_H
#define H5SHUF_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "h5shuf.h"

#define H5SHUF_INTERNAL __attribute__((visibility("hidden")))

typedef unsigned __int128 h5shuf_u128;

#endif /* H5SHUF_BASE_H */
