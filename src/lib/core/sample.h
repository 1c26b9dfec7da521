/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample.h - the exact seeded sample of a weighted input's fractional part (sample.c).  No HDF5.
 *
 * An input of weight w = q + f (q copies, 0 <= f < 1) contributes q copies of each of its n rows and
 * exactly e = round(f x n) further rows, chosen uniformly without replacement (docs/algorithm.md,
 * "Mixtures").  The e rows are drawn by selection sampling (Knuth, TAOCP vol. 2, 3.4.2, Algorithm S; Fan,
 * Muller and Rezucha 1962): row t is taken with probability (e - m) / (n - t), m the rows taken before it,
 * which gives exactly e rows, each of the C(n, e) subsets equally likely.  The uniform deviate of row t is
 * word t mod 4 of Philox4x64-10 (keys.h) with counter (t / 4, stream, 1, 0) and key (seed, 0): counters
 * whose third word is 1 never meet the permutation's keys K(seed, i) (counter (i, 0, 0, 0)), so the
 * sample is independent of where its rows land.  Row t is taken when floor(U x (n - t) / 2^64) < e - m,
 * for U the 64-bit deviate: a probability within 2^-64 of (e - m) / (n - t).
 *
 * The sample is held as a bitmap of n bits with the count of taken rows before every 512 rows, so that
 * the rank of a row and the row of a rank (the j-th taken row) are found in O(log n): about 0.14 bytes a
 * row of the input (n = 10^9: 140 MB).
 */
#ifndef H5SHUF_SAMPLE_H
#define H5SHUF_SAMPLE_H

#include "base.h"

/* The sample: e of the rows 0 .. n-1.  Owns bits and ranks. */
struct h5shuf_sample {
    uint64_t n, e;
    uint64_t *bits;  /* bit t % 64 of bits[t / 64]: row t is taken; ceil(n / 64) words */
    uint64_t *ranks; /* ranks[b]: rows taken before row 512 b; ceil(n / 512) + 1 entries */
};

/* e rows of n, rounding f x n half up, for the fraction f = num / den (num < den, den <= 10^18).  Exact
 * (128-bit arithmetic). */
H5SHUF_INTERNAL uint64_t h5shuf__sample_size(uint64_t n, uint64_t num, uint64_t den);

/* Draw the sample of e rows of n (e <= n) for seed and stream (the weighted input's number), as above,
 * into *s.  Returns 0, or -1 when out of memory (*s then empty).  Free with h5shuf__sample_free. */
H5SHUF_INTERNAL int h5shuf__sample_make(struct h5shuf_sample *s, uint64_t seed, uint64_t stream, uint64_t n, uint64_t e);
H5SHUF_INTERNAL void h5shuf__sample_free(struct h5shuf_sample *s);

/* Whether row t (< n) is taken. */
static inline int h5shuf__sample_has(const struct h5shuf_sample *s, uint64_t t)
{
    return (int)((s->bits[t >> 6] >> (t & 63)) & 1);
}

/* Rows taken before row t (t <= n). */
H5SHUF_INTERNAL uint64_t h5shuf__sample_rank(const struct h5shuf_sample *s, uint64_t t);
/* The row of rank j: the (j+1)-th row taken (j < e). */
H5SHUF_INTERNAL uint64_t h5shuf__sample_select(const struct h5shuf_sample *s, uint64_t j);

#endif /* H5SHUF_SAMPLE_H */
