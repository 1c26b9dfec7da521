/*
 * targets.h - the output files of a run: one file, K shards or named splits, each a consecutive range
 * of the output order (targets.c).
 */
#ifndef H5SHUF_TARGETS_H
#define H5SHUF_TARGETS_H

#include <hdf5.h>

#include "base.h"

struct h5shuf_writer;

/* One output file: a range of the output order.  The single output is one target over all rows. */
struct h5shuf_target {
    char *path;        /* the final file name */
    char *tmp_path;    /* its temporary name, while it exists */
    char *label;       /* split name; NULL for a shard or the single output */
    uint64_t first;    /* first row, in the output order */
    uint64_t rows;
};

/* Make job->targets from the options (shards, split) and job->out_rows; at plan time.  Errors are
 * H5SHUF_EINVAL naming the option. */
H5SHUF_INTERNAL int h5shuf__outputs_plan(h5shuf_job *job);
/* Refuse a target that is an input, or exists (without force). */
H5SHUF_INTERNAL int h5shuf__outputs_check(h5shuf_job *job);
/* Create every target under its temporary name: datasets of its rows, copied objects, provenance and
 * its range attributes; each is closed again (pass 2 opens one at a time). */
H5SHUF_INTERNAL int h5shuf__outputs_create(h5shuf_job *job);
/* Pass 2 reached the end of the open target (or starts): close it, open the next target with rows and
 * point the writer at it. */
H5SHUF_INTERNAL int h5shuf__outputs_next(h5shuf_job *job, struct h5shuf_writer *w);
/* Close the open target; st != H5SHUF_OK discards it (emptied first).  Returns the first error. */
H5SHUF_INTERNAL int h5shuf__outputs_close(h5shuf_job *job, int st);
/* Move every finished target into place (all or none), or on st != H5SHUF_OK remove them all. */
H5SHUF_INTERNAL int h5shuf__outputs_finish(h5shuf_job *job, int st);
H5SHUF_INTERNAL void h5shuf__outputs_free(h5shuf_job *job);

#endif /* H5SHUF_TARGETS_H */
