/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checkpoint.h - a run that survives a kill: its checkpoints and, with --resume, the continuation of an
 * interrupted run from the last of them (checkpoint.c; docs/guide.md, "Long runs").  Its planning is
 * ckptplan.h, its output files ckpttargets.h, a distributed run's agreement ckptdist.h.
 *
 * The orchestrator's side of resume.h: it decides what is journaled and when, hands the stages the hooks
 * they call (pass 1's checkpoint and restore, the targets' commit and file driver) and tells each stage
 * where a resumed run starts.  What is trusted after a crash: only files closed or flushed, then synced,
 * at a checkpoint that the journal records, and brought back to exactly those bytes by their redo logs
 * (walfile.h); nothing open for writing when the process died is read as it is.
 *
 *   pass 1      every interval (h5shuf_options.checkpoint_bytes of input, or checkpoint_seconds) at a slab
 *               boundary: the pile buffers saved to a spill file, the scratch file flushed and committed;
 *               a resumed pass 1 reopens the scratch at that commit, restores the buffers and goes on from
 *               the next row.
 *   pass 2      each output file is closed and reopened every unit_rows rows of it (a multiple of every
 *               output dataset's chunk rows, about checkpoint_bytes of rows) and at its end, and committed
 *               then; a resumed run reopens the file being written at its last commit and puts the rows
 *               from there.  Closing at those rows is part of how the file is written, interrupted or not:
 *               so the bytes of an output depend on checkpoint_bytes (and on nothing a resume changes).
 */
#ifndef H5SHUF_CHECKPOINT_H
#define H5SHUF_CHECKPOINT_H

#include "ckptdist.h"    /* (src/mpi/dist.c reaches them through this header) */
#include "ckpttargets.h"
#include "gather.h"
#include "job.h"
#include "piles.h"
#include "resume.h"
#include "scatter.h"
#include "walfile.h"

/* The run (run.c).  A resumable run's (job->ckpt.rs.on) scratch file in the state directory (a scatter's:
 * its pile file, beside its final name): made, or an interrupted run's reopened at its last commit.  *pass1_done: 1, its piles are all there (sc->piles
 * set from the journal); 2, a scatter's pile file is finished too (only to be placed). */
H5SHUF_INTERNAL int h5shuf__ckpt_scratch(h5shuf_job *job, const struct h5shuf_ctx *cx, struct h5shuf_scratch *sc,
                                         int *pass1_done);
/* Pass 1's hooks for p (h5shuf_pass1.checkpoint, .restore, .start_row). */
H5SHUF_INTERNAL void h5shuf__ckpt_pass1_hooks(h5shuf_job *job, struct h5shuf_scratch *sc, struct h5shuf_pass1 *p);
/* Pass 1 finished (oversize handling too): the piles recorded with the scratch's commit. */
H5SHUF_INTERNAL int h5shuf__ckpt_pass1_done(h5shuf_job *job, struct h5shuf_scratch *sc);
/* A scatter's pile file written and closed: committed (DONE), the bytes its placing links. */
H5SHUF_INTERNAL int h5shuf__ckpt_scatter_done(h5shuf_job *job, struct h5shuf_scratch *sc);
/* Pass 2 of a resumed run starts at output row job->ckpt.rs.p2_row: p (over every pile of sc) is cut to
 * the piles from the one holding it (first_row, put_first).  Also sets the scratch whose piles are given
 * back as pass 2's commits pass them (instead of at their load). */
H5SHUF_INTERNAL void h5shuf__ckpt_pass2_from(h5shuf_job *job, const struct h5shuf_scratch *sc, struct h5shuf_pass2 *p);
/* The output row a resumed run's pass 2 starts at (0 for a fresh one). */
H5SHUF_INTERNAL uint64_t h5shuf__ckpt_first_row(const h5shuf_job *job);
/* The end of a run with status st: finished, the state is removed; cancelled (SIGINT, SIGTERM: a
 * scheduler's warning before its kill) when run with --resume, or a resumed run that failed, it is kept, the output files and
 * scratch with it, and the error says so; any other failure removes it, as a run without checkpoints
 * leaves nothing.  Returns st. */
H5SHUF_INTERNAL int h5shuf__ckpt_end(h5shuf_job *job, int st);
/* Whether the run's files are to be kept for a resume after a failure with status st. */
H5SHUF_INTERNAL int h5shuf__ckpt_keeps(const h5shuf_job *job, int st);
/* A run that failed with status st and does not keep its state (h5shuf__ckpt_keeps): the state removed now,
 * before the output files it names are discarded, so that a kill between the two never leaves a state
 * naming files that are gone (a resume of it failed: "its temporary file ... was replaced").  A kill after
 * this leaves only the temporaries, which the next run reports (leftovers.h).  No-op otherwise. */
H5SHUF_INTERNAL void h5shuf__ckpt_give_up(h5shuf_job *job, int st);
/* Close the scratch file of a run whose state is kept (its file stays for the resume), or remove it. */
H5SHUF_INTERNAL void h5shuf__ckpt_scratch_keep(h5shuf_job *job, struct h5shuf_scratch *sc);
H5SHUF_INTERNAL void h5shuf__ckpt_scratch_destroy(h5shuf_job *job, struct h5shuf_scratch *sc);

#endif /* H5SHUF_CHECKPOINT_H */
