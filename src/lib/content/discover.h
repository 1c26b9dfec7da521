/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * discover.h - which datasets of a file hold the rows: in whole-file mode decided by the dimension scales
 * attached to dim 0 where there are any (netCDF-4's record dimension), else by the length most datasets
 * share; in dataset mode, the scales that go with the named datasets (discover.c).
 */
#ifndef H5SHUF_DISCOVER_H
#define H5SHUF_DISCOVER_H

#include <hdf5.h>

#include "spec.h"

/* Whole-file mode: fill spec->paths (empty before) with the datasets of file (named name, for messages)
 * that hold the rows.  H5SHUF_EAMBIGUOUS names the candidates when the file does not say;
 * H5SHUF_ENOENT when it has no dataset of rank >= 1. */
H5SHUF_INTERNAL int h5shuf__discover(hid_t file, const char *name, struct h5shuf_spec *spec, struct h5shuf_err *err);

/* Dataset mode: the dimension scales attached to the datasets spec names (in file): a scale of dim 0
 * has their rows and is appended to spec->paths (shuffled with them, unless named already); a scale of
 * another dimension is appended to (*extra)[0 .. *nextra) (copied into the output; the caller frees the
 * strings and the array). */
H5SHUF_INTERNAL int h5shuf__discover_scales(hid_t file, const char *name, struct h5shuf_spec *spec, char ***extra,
                                            size_t *nextra, struct h5shuf_err *err);

#endif /* H5SHUF_DISCOVER_H */
