/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * provenance.h - what an output file says about itself: the tool, seed, inputs and key function on its
 * root group (provenance.c).
 */
#ifndef H5SHUF_PROVENANCE_H
#define H5SHUF_PROVENANCE_H

#include <hdf5.h>

#include "output.h"

/* The key function, as the attribute h5shuf_key of outputs and pile files states it (docs/design.md section 2). */
#define H5SHUF_KEY_TEXT "Philox4x64-10 word 0, counter (i,0,0,0), key (seed,0); rows sorted by (key, i)"
/* The same with --stratify (strata.h; the groups and files in h5shuf_stratify). */
#define H5SHUF_KEY_STRATIFIED_TEXT                                                                                     \
    "stratified: each group's rows permuted (Fisher-Yates up to 4096 rows, else an 8-round Feistel walk, "         \
    "Philox4x64-10 counters (.,group,3,0) and (.,group,2,round), key (seed,0)) and cut by the rounded counts "     \
    "into the output files; within a file, rows sorted by (key, i), key from Philox4x64-10 word 0, counter "      \
    "(i,0,0,0), key (seed,0)"

/* Write the provenance attributes of of on the root group of the open file out (named ofile):
 * h5shuf_version, h5shuf_inputs, h5shuf_index and h5shuf_source_index (when set), h5shuf_key,
 * h5shuf_seed. */
H5SHUF_INTERNAL int h5shuf__output_provenance(const struct h5shuf_outfile *of, hid_t out, const char *ofile,
                                              struct h5shuf_err *err);

#endif /* H5SHUF_PROVENANCE_H */
