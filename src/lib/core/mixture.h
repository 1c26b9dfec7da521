/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mixture.h - target proportions of named domains turned into the weights of their inputs (mixture.c;
 * --mix, docs/guide.md "Mixtures").  No HDF5.
 *
 * A mixture "web=0.7,code=0.2,books=0.1" names domains and their shares of the output (decimal, >= 0, at
 * most 9 digits after the point, normalised by their sum).  Each input belongs to one domain.  For an
 * output of R rows, domain t gets exactly T_t rows: floor(R a_t / A) and one more for the R - sum of those
 * domains with the largest remainders (a_t its share, A the sum; ties to the earlier name), the largest
 * remainder method of apportionment (Hamilton's).  Its T_t rows are spread over its inputs the same way,
 * in proportion to their rows; an input of n rows that is to give c rows gets the weight c / n, written
 * in decimal with 18 digits after the point, which the weights' rounding (inputs.h) turns back into
 * exactly c rows.
 */
#ifndef H5SHUF_MIXTURE_H
#define H5SHUF_MIXTURE_H

#include "error.h"

/* The longest weight text h5shuf__mixture_weights writes, with its NUL ("65535." and 18 digits). */
#define H5SHUF_MIX_WEIGHT_TEXT 32

/* A parsed mixture: n names and their shares (units of 10^-9).  Owns names. */
struct h5shuf_mixture {
    size_t n;
    char **names;
    uint64_t *share;
};

/* Parse text "NAME=P[,NAME=P...]" into *m (names of letters, digits, '_', '-' and '.', each once; P a
 * decimal >= 0, not all 0).  H5SHUF_OK, or H5SHUF_EINVAL / H5SHUF_ENOMEM with a message naming "--mix"
 * and what is wrong.  Free with h5shuf__mixture_free (also after a failure). */
H5SHUF_INTERNAL int h5shuf__mixture_parse(const char *text, struct h5shuf_mixture *m, struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__mixture_free(struct h5shuf_mixture *m);

/* The name of m that spec starts with, followed by '=' (its index), with *rest after the '='; SIZE_MAX
 * when it starts with none. */
H5SHUF_INTERNAL size_t h5shuf__mixture_tag(const struct h5shuf_mixture *m, const char *spec, const char **rest);

/* The weights of n inputs, input f of domain tag[f] (< m->n) with rows[f] rows, for an output of
 * *out_rows rows (when rows_set; else the most rows the shares allow without repeating a row, written to
 * *out_rows): domain t's rows into target[t] (m->n of them), input f's into count[f] and its weight into
 * weight[f].  Fails (H5SHUF_EINVAL, naming the domain) when a domain with a share has no rows, or needs
 * more rows than its inputs have and repeat is 0; H5SHUF_EUNSUPPORTED past 65535 copies of an input. */
H5SHUF_INTERNAL int h5shuf__mixture_weights(const struct h5shuf_mixture *m, size_t n, const size_t *tag,
                                            const uint64_t *rows, int rows_set, uint64_t *out_rows, int repeat,
                                            uint64_t *target, uint64_t *count, char (*weight)[H5SHUF_MIX_WEIGHT_TEXT],
                                            struct h5shuf_err *err);

#endif /* H5SHUF_MIXTURE_H */
