/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ckpttargets.h - a checkpointed run's output files (ckpttargets.c): named in the journal, made and
 * recorded, committed every unit of rows through their redo logs (targets.h's hooks), and taken back at
 * their last commit by a resumed run.
 */
#ifndef H5SHUF_CKPTTARGETS_H
#define H5SHUF_CKPTTARGETS_H

#include <hdf5.h>
#include <stddef.h>

#include "ctx.h"
#include "job.h"

/* The run (run.c): make (or, resumed, take back) the output files, recording them. */
H5SHUF_INTERNAL int h5shuf__ckpt_targets(h5shuf_job *job, const struct h5shuf_ctx *cx);

/* For pass 1's scratch (checkpoint.c).  The state directory and its IDENTITY record, once (a fresh run). */
H5SHUF_INTERNAL int h5shuf__ckpt_state_start(h5shuf_job *job);
/* Remove name in the directory of path when it is a regular file of this user's (a temporary file an
 * interrupted run named in its journal and may have made). */
H5SHUF_INTERNAL void h5shuf__ckpt_remove_own(const char *path, const char *name);

/* ---- A distributed run's outputs (src/mpi/dist.c) */

/* Another process had put its outputs in place (so every output was written): take this process's
 * back, each at its last commit, for placing (none when they are in place or it has only a part). */
H5SHUF_INTERNAL int h5shuf__ckpt_place_done(h5shuf_job *job, const struct h5shuf_ctx *cx);

/* The single output's assembly: target k (written, closed) opened for writing through its checkpoint
 * driver (a plain list when the run does not checkpoint; NULL with job's error on failure), then, closed
 * again, committed as assembled; or its writes dropped after a failure (its last commit stays). */
H5SHUF_INTERNAL hid_t h5shuf__ckpt_target_fapl(h5shuf_job *job, size_t k);
H5SHUF_INTERNAL int h5shuf__ckpt_target_assembled(h5shuf_job *job, size_t k);
H5SHUF_INTERNAL void h5shuf__ckpt_target_discard(h5shuf_job *job);

#endif /* H5SHUF_CKPTTARGETS_H */
