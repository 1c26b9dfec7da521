/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pilefile.h - the pile file of h5shuf scatter / gather (format v1, docs/lazy.md): the piles of pass 1
 * renumbered in key order, with what a gather needs recorded as root attributes and a pile table; and
 * the same read back (pilefile.c).  The job (run.c) decides what to do with what is read.
 */
#ifndef H5SHUF_PILEFILE_H
#define H5SHUF_PILEFILE_H

#include <hdf5.h>

#include "inputs.h"
#include "piles.h"

/* What a scatter records besides its piles. */
struct h5shuf_pilefile_meta {
    const struct h5shuf_inputs *inputs;   /* open (their rows, sizes and modification times are recorded) */
    const struct h5shuf_datasets *dsets;  /* the shuffled datasets' input paths */
    uint64_t seed;
    const h5shuf_plan *plan;              /* pile_bound_rows, splits, restarts */
    const char *compression, *chunk_shape, *index_path; /* the output options given to the scatter, or NULL */
};

/* A scatter, after pass 1: rename the piles /piles/000000 .. M-1 in key order (empty piles get empty
 * groups, empty key ranges are dropped) and record m on the root and in /pile_table. */
H5SHUF_INTERNAL int h5shuf__pilefile_finish(struct h5shuf_scratch *sc, const struct h5shuf_pilefile_meta *m,
                                            struct h5shuf_err *err);

/* What a gather read from its pile file. */
struct h5shuf_pilefile {
    hid_t file;                  /* open read-only: a gather never changes the pile file */
    struct h5shuf_pile *piles;   /* npiles, in key order, numbered 0 .. npiles-1 */
    uint64_t npiles;
    uint64_t rows, bound_rows, splits, restarts, seed;
    int whole_file;
    size_t ninputs, nds;
    char **specs;                /* ninputs: as given to the scatter */
    char **files;                /* ninputs: absolute names (where the gather opens them) */
    uint64_t *in_rows, *in_bytes, *in_mtime_ns; /* ninputs: as they were */
    char **datasets;             /* nds input dataset paths */
    char *compression, *chunk_shape, *index_path; /* output options given to the scatter, or NULL */
    uint64_t file_bytes;
};

/* Open and read the pile file at path into *pf (set even on failure: free it with h5shuf__pilefile_free,
 * which accepts NULL).  Errors name the file: H5SHUF_ENOENT/ENOTHDF5 (no pile file), H5SHUF_EUNSUPPORTED
 * (not a pile file, a damaged one, or one of another format version). */
H5SHUF_INTERNAL int h5shuf__pilefile_open(const char *path, struct h5shuf_pilefile **pf, struct h5shuf_err *err);
/* The inputs, opened again by the gather, must be the ones scattered, unchanged (datasets, rows, size,
 * modification time), and the piles must hold their rows' datatypes and shapes: else H5SHUF_EMISMATCH. */
H5SHUF_INTERNAL int h5shuf__pilefile_check(const struct h5shuf_pilefile *pf, const char *path,
                                           const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                                           struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__pilefile_free(struct h5shuf_pilefile *pf);

#endif /* H5SHUF_PILEFILE_H */
