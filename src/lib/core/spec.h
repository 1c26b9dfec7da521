/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spec.h - the texts the library parses: "FILE[:/path[,/path...]]" specs, filter specs and chunk shapes
 * (spec.c; sizes with K/M/G/T are the public h5shuf_parse_size).  No HDF5.
 */
#ifndef H5SHUF_SPEC_H
#define H5SHUF_SPEC_H

#include "error.h"

/* A parsed "FILE[:/path[,/path...]]". */
struct h5shuf_spec {
    char *file;
    char **paths; /* NULL when none were given */
    size_t npaths;
};

/* Parse text into *spec (caller frees with h5shuf__spec_clear).  Returns H5SHUF_OK or H5SHUF_EINVAL
 * with a message in err. */
H5SHUF_INTERNAL int h5shuf__spec_parse(const char *text, struct h5shuf_spec *spec, struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__spec_clear(struct h5shuf_spec *spec);

/* A parsed filter spec (h5shuf_options.compression). */
enum h5shuf_codec { H5SHUF_CODEC_NONE = 0, H5SHUF_CODEC_GZIP, H5SHUF_CODEC_ZSTD, H5SHUF_CODEC_LZ4 };
struct h5shuf_filters {
    int keep;               /* "keep": the first input's pipeline */
    int shuffle, fletcher32;
    enum h5shuf_codec codec;
    int level;
};

/* Parse a filter spec ("keep" allowed when allow_keep); NULL parses as dflt.  Returns H5SHUF_OK or
 * H5SHUF_EINVAL with a message naming what (e.g. "--compression") is wrong. */
H5SHUF_INTERNAL int h5shuf__filters_parse(const char *text, const char *dflt, int allow_keep, const char *what,
                                          struct h5shuf_filters *f, struct h5shuf_err *err);

/* The most dimensions a dataset has (HDF5's H5S_MAX_RANK, checked where HDF5 is included). */
#define H5SHUF_RANK_MAX 32

/* Parse a chunk shape "ROWS" or "D0xD1x..." of positive integers below 2^32 (HDF5's chunk dims are
 * 32-bit) into dims[0 .. *rank), at most H5SHUF_RANK_MAX of them.  Returns H5SHUF_OK or H5SHUF_EINVAL. */
H5SHUF_INTERNAL int h5shuf__chunk_parse(const char *text, uint64_t *dims, int *rank, struct h5shuf_err *err);

/* A decimal "DIGITS[.DIGITS]" (at least one digit, no sign or exponent) of text[0 .. len): its whole part
 * (at most whole_max) and its fraction in units of 10^-frac_digits (frac_digits <= 18), so that the
 * value is exactly *whole + *frac / 10^frac_digits.  1 when it is one; 0 when it is no such number;
 * -1 when digits that are not 0 come past frac_digits after the point; -2 when the whole part passes
 * whole_max.  (Weights "@W": 18 digits; --mix's proportions: 9.) */
H5SHUF_INTERNAL int h5shuf__decimal_parse(const char *text, size_t len, unsigned frac_digits, uint64_t whole_max,
                                          uint64_t *whole, uint64_t *frac);

#endif /* H5SHUF_SPEC_H */
