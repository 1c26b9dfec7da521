/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keys.h - the permutation contract's keys and key ranges (keys.c; docs/design.md section 2).
 *
 * K(seed, i) is the public h5shuf_key(); here are the block function behind it and the arithmetic of key
 * ranges that piles are made of.  No HDF5.
 */
#ifndef H5SHUF_KEYS_H
#define H5SHUF_KEYS_H

#include "base.h"

/* Philox4x64-10 block: out[0..3] for counter ctr[0..3] and key key[0..1] (Salmon et al., SC'11). */
H5SHUF_INTERNAL void h5shuf__philox4x64_10(const uint64_t ctr[4], const uint64_t key[2], uint64_t out[4]);

/* keys[r] = K(seed, id) = h5shuf_key(seed, id) for r < n, with id = ids[r], or first + r when ids is NULL.
 * The same values, computed several rows at a time (h5shuf__keys_lanes) with Philox's first and last rounds
 * reduced to the words the key needs: the keys of many rows (keyparts.c).  Cannot fail. */
H5SHUF_INTERNAL void h5shuf__keys(uint64_t seed, const uint64_t *ids, uint64_t first, uint64_t n, uint64_t *keys);
/* Rows h5shuf__keys computes at once on this processor: 8 with AVX-512F, else 4 with AVX2 (x86-64,
 * checked at run time), else 1.  The environment's H5SHUF_DEBUG_NO_SIMD asks for 1, H5SHUF_DEBUG_NO_AVX512
 * for AVX2's 4 where AVX-512F is present too (the tests' way to every path).  The keys are the same. */
H5SHUF_INTERNAL unsigned h5shuf__keys_lanes(void);

/* A key range [lo, hi) of piles, hi <= 2^64. */
struct h5shuf_range {
    h5shuf_u128 lo, hi;
};

/* The first key of part j when range r is cut into m parts: lo + ceil(j * (hi - lo) / m).
 * For r = [0, 2^64) this is the contract's pile boundary: pile(K) = floor(K * m / 2^64). */
H5SHUF_INTERNAL h5shuf_u128 h5shuf__range_cut(struct h5shuf_range r, uint64_t m, uint64_t j);

/* The part of key k (lo <= k < hi) when range r is cut into m parts: floor((k - lo) * m / (hi - lo)). */
static inline uint64_t h5shuf__range_part(struct h5shuf_range r, uint64_t m, uint64_t k)
{
    h5shuf_u128 width = r.hi - r.lo;
    h5shuf_u128 off = (h5shuf_u128)k - r.lo;
    if (width == ((h5shuf_u128)1 << 64))
        return (uint64_t)((off * m) >> 64); /* the top level: the contract's (K * M) >> 64 */
    return (uint64_t)(off * m / width);
}

#endif /* H5SHUF_KEYS_H */
