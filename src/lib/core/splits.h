/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * splits.h - --split's named parts and where they end, in exact arithmetic (splits.c; docs/guide.md,
 * "Shards and splits").  No HDF5.
 *
 * "train=0.9,val=0.1" names consecutive parts of the output order.  Each fraction is an exact rational:
 * a decimal ("0.9", ".25", "1e-6", "2.5E-3") or a ratio of integers ("1/3"), never a binary float.  The
 * fractions must sum to 1 within 10^-6 (so 0.333333 three times is accepted) and are normalised by their
 * sum: part k of n ends at output row floor(N (F_0 + ... + F_k) / (F_0 + ... + F_{n-1})), the last at N.
 * So 0.9/0.1 of 200000 rows is 180000/20000 and 0.7/0.2/0.1 of 1000 is 700/200/100.  Bounds, each refused
 * in one line: a fraction's value in lowest terms has a numerator and a denominator of at most 10^18 (18
 * significant digits, at most 18 places after the point), and the least common multiple L of the
 * fractions' denominators is at most 10^18.  With every fraction over L, the cumulative sums are integers
 * below 2^61 and N < 2^64, so N x sum fits 128 bits.
 */
#ifndef H5SHUF_SPLITS_H
#define H5SHUF_SPLITS_H

#include "error.h"

/* The largest numerator, denominator and common denominator of --split's fractions. */
#define H5SHUF_SPLIT_DIGITS_MAX UINT64_C(1000000000000000000)

/* A parsed --split: n parts, part k named names[k] (owned), its fractions as integers over a common
 * denominator: cum[k] = F_0 + ... + F_k, cum[n - 1] = the sum. */
struct h5shuf_splits {
    size_t n;
    char **names;
    uint64_t *cum;
};

/* Parse one fraction of text[0 .. len): a decimal "DIGITS[.DIGITS][e[+-]DIGITS]" (or ".DIGITS...") or a
 * ratio "DIGITS/DIGITS", into *num / *den in lowest terms (0 is 0/1).  1 when it is one; 0 when it is no
 * such number (or a ratio over 0); -1 when its numerator or denominator in lowest terms passes
 * H5SHUF_SPLIT_DIGITS_MAX. */
H5SHUF_INTERNAL int h5shuf__fraction_parse(const char *text, size_t len, uint64_t *num, uint64_t *den);

/* Parse spec "NAME=F[,NAME=F...]" into *s (names of letters, digits, '_', '-' and '.', each once; every
 * F above 0; the sum 1 within 10^-6; the bounds above).  H5SHUF_OK, or H5SHUF_EINVAL / H5SHUF_ENOMEM
 * with a one-line message naming --split and what is wrong.  Free with h5shuf__splits_free (also after a
 * failure). */
H5SHUF_INTERNAL int h5shuf__splits_parse(const char *spec, struct h5shuf_splits *s, struct h5shuf_err *err);

/* The row after part k of s over rows rows: floor(rows cum[k] / cum[n - 1]) (rows for the last part). */
H5SHUF_INTERNAL uint64_t h5shuf__splits_end(const struct h5shuf_splits *s, size_t k, uint64_t rows);

/* Free what s holds (NULL members: nothing) and empty it. */
H5SHUF_INTERNAL void h5shuf__splits_free(struct h5shuf_splits *s);

#endif /* H5SHUF_SPLITS_H */
