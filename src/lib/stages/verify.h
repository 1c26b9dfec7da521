/*
 * verify.h - is a file a permutation of the inputs' rows, with the datasets shuffled together still
 * aligned (and, when it has its seed and index, in exactly the seed's order)?  One streamed pass over
 * each side with multiset hashes (verify.c).
 */
#ifndef H5SHUF_VERIFY_H
#define H5SHUF_VERIFY_H

#include "chunkio.h"
#include "inputs.h"

/* Check the HDF5 file at path (named name in messages; its datasets at the datasets' out paths) against
 * the open inputs (the samples of weighted inputs drawn from the output's seed when they are not yet:
 * inputs.h h5shuf__inputs_draw), reading on cio's threads in slabs of at most half of mem bytes, reporting rows hashed
 * of 2 N to progress (H5SHUF_PHASE_VERIFY: every slab and every H5SHUF_SCAN_STEP_ROWS rows).  H5SHUF_OK,
 * H5SHUF_EMISMATCH with a one-line reason naming the dataset, H5SHUF_ECANCELED, or another error. */
H5SHUF_INTERNAL int h5shuf__verify_file(struct h5shuf_chunkio *cio, struct h5shuf_inputs *in,
                                        const struct h5shuf_datasets *dsets, const char *path, const char *name,
                                        uint64_t mem, const struct h5shuf_progress *progress, struct h5shuf_err *err);

#endif /* H5SHUF_VERIFY_H */
