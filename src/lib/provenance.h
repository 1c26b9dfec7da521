/*
 * provenance.h - what an output file says about itself: the tool, seed, inputs and key function on its
 * root group, and for one of several outputs (shards, splits, a head) its range of the output order
 * (provenance.c).
 */
#ifndef H5SHUF_PROVENANCE_H
#define H5SHUF_PROVENANCE_H

#include <hdf5.h>

#include "base.h"

/* Write the provenance attributes on the output's root group. */
H5SHUF_INTERNAL int h5shuf__output_provenance(h5shuf_job *job, hid_t out);

/* The range attributes of target k in a run with several outputs (nothing for the single whole output). */
H5SHUF_INTERNAL int h5shuf__target_attrs(h5shuf_job *job, size_t k, hid_t file);

#endif /* H5SHUF_PROVENANCE_H */
