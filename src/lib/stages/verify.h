/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verify.h - is a file (or a set of shards or splits, or a head) a permutation of the inputs' rows (or of
 * the first rows of their shuffle), with the datasets shuffled together still aligned (and, when it has
 * its seed and index, in exactly the seed's order)?  One streamed pass over each side with multiset
 * hashes (verify.c).
 */
#ifndef H5SHUF_VERIFY_H
#define H5SHUF_VERIFY_H

#include "chunkio.h"
#include "inputs.h"
#include "outset.h"

/* Check the output set (outset.h: one whole output, a head, or the files of shards or splits) against the
 * open inputs: the whole output and a set of all N rows must hold a permutation of the inputs' rows, a set
 * of R < N rows (a head) the rows of the first R of the shuffle of the set's seed; with an index in every
 * file, the order too (a stratified set's by its stratified keys).  The samples of weighted inputs are
 * drawn from the set's seed when they are not yet (inputs.h h5shuf__inputs_draw).  Reads on cio's threads
 * in slabs of at most half of mem bytes, reporting rows hashed of N + R to progress (H5SHUF_PHASE_VERIFY:
 * every slab and every H5SHUF_SCAN_STEP_ROWS rows; a head's selection as H5SHUF_PHASE_SELECT).  When said
 * is not NULL, what was verified in one line goes there (said_cap bytes).  H5SHUF_OK, H5SHUF_EMISMATCH
 * with a one-line reason naming the file (a set: its first and last) and dataset, H5SHUF_ECANCELED, or
 * another error. */
H5SHUF_INTERNAL int h5shuf__verify_set(struct h5shuf_chunkio *cio, struct h5shuf_inputs *in,
                                       const struct h5shuf_datasets *dsets, const struct h5shuf_outset *set,
                                       uint64_t mem, const struct h5shuf_progress *progress, char *said,
                                       size_t said_cap, struct h5shuf_err *err);

/* --check: the one whole output at path (its temporary name; named name in messages) checked as above. */
H5SHUF_INTERNAL int h5shuf__verify_file(struct h5shuf_chunkio *cio, struct h5shuf_inputs *in,
                                        const struct h5shuf_datasets *dsets, const char *path, const char *name,
                                        uint64_t mem, const struct h5shuf_progress *progress, struct h5shuf_err *err);

#endif /* H5SHUF_VERIFY_H */
