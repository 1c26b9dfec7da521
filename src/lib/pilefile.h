/*
 * pilefile.h - the pile file of h5shuf scatter / gather (format v1, docs/lazy.md): the piles of pass 1
 * renumbered in key order, with what a gather needs recorded as attributes and a pile table (pilefile.c).
 */
#ifndef H5SHUF_PILEFILE_H
#define H5SHUF_PILEFILE_H

#include <hdf5.h>

#include "piles.h"

/* What a gather read from its pile file. */
struct h5shuf_pilefile {
    hid_t file;
    struct h5shuf_pile *piles;
    size_t npiles;
    uint64_t rows, bound_rows, splits, restarts;
    size_t ninputs, nds;
    uint64_t *in_rows, *in_bytes, *in_mtime_ns;
    char **datasets; /* nds input dataset paths */
    uint64_t file_bytes;
};

/* A scatter, after pass 1: rename the piles /piles/0 .. M-1 in key order (empty piles get empty groups). */
H5SHUF_INTERNAL int h5shuf__piles_renumber(h5shuf_job *job, struct h5shuf_scratch *sc);
/* A scatter, last: record on the pile file's root and in /pile_table what a gather and a loader need. */
H5SHUF_INTERNAL int h5shuf__piles_write_meta(h5shuf_job *job, struct h5shuf_scratch *sc);
/* Planning a gather, before the inputs are opened: read the pile file, add its inputs, seed and output
 * options.  Errors name the pile file. */
H5SHUF_INTERNAL int h5shuf__piles_load(h5shuf_job *job);
/* Planning a gather, after the inputs are opened: check they are the ones scattered, unchanged, and that
 * the largest pile fits the budget; put the pile file's figures in the plan. */
H5SHUF_INTERNAL int h5shuf__piles_check(h5shuf_job *job);
/* Release what h5shuf__piles_load kept (the open pile file).  Safe when there is none. */
H5SHUF_INTERNAL void h5shuf__piles_free(h5shuf_job *job);

#endif /* H5SHUF_PILEFILE_H */
