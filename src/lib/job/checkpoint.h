/*
 * checkpoint.h - a run that survives a kill: its checkpoints and, with --resume, the continuation of an
 * interrupted run from the last of them (checkpoint.c; docs/guide.md, "Long runs").
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

#include "gather.h"
#include "job.h"
#include "piles.h"
#include "resume.h"
#include "scatter.h"
#include "walfile.h"

/* Planning (jobplan.c).  First, before the seed is drawn: look for an interrupted run's state (refusing
 * one without --resume) and take its seed when none is given. */
H5SHUF_INTERNAL int h5shuf__ckpt_plan_find(h5shuf_job *job);
/* After the strategy: a resumed pass 1 continues with the interrupted run's piles; then this run's
 * identity, compared with the interrupted run's (H5SHUF_EMISMATCH naming what changed), and the rows
 * between checkpoints of pass 2.  Also fills job->resume_text. */
H5SHUF_INTERNAL int h5shuf__ckpt_plan_check(h5shuf_job *job);

/* The run (run.c).  Make (or, resumed, take back) the output files, recording them. */
H5SHUF_INTERNAL int h5shuf__ckpt_targets(h5shuf_job *job, const struct h5shuf_ctx *cx);
/* A resumable run's (job->ckpt.rs.on) scratch file in the state directory (a scatter's: its pile file,
 * beside its final name): made, or
 * an interrupted run's reopened at its last commit.  *pass1_done: 1, its piles are all there (sc->piles
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
/* Close the scratch file of a run whose state is kept (its file stays for the resume), or remove it. */
H5SHUF_INTERNAL void h5shuf__ckpt_scratch_keep(h5shuf_job *job, struct h5shuf_scratch *sc);
H5SHUF_INTERNAL void h5shuf__ckpt_scratch_destroy(h5shuf_job *job, struct h5shuf_scratch *sc);

/* ---- A distributed run (src/mpi/dist.c): one state per process, and their agreement on resuming.
 *
 * Each process journals its own share in its own state directory ("-rankR", resume.h).  Pass 1 is each
 * process's own until its end, where the processes sum their piles; so on resuming they agree on pass 1's
 * plan first: the furthest restart any of them recorded (a restart is decided by all at once), and
 * pass 2 only when every process recorded its PILES (applied only after all did: the barrier).  Pass 2's
 * rounds start at the earliest round any process still has to gather. */

/* Before planning: this is process rank of ranks, with a barrier over all of them. */
H5SHUF_INTERNAL void h5shuf__ckpt_set_rank(h5shuf_job *job, int rank, int ranks,
                                           int (*barrier)(void *user, struct h5shuf_err *err), void *user);

/* What this process's state says, for the agreement (all 0 when it found none): its outputs (job->out's
 * selection) all in place or some; pass 1's level (1 + restarts, 0 when no record gives it) with its piles
 * and buffer rows; PILES recorded; the single output assembled; and whether the other processes' states
 * depend on it (pass 1 finished or restarted, pass 2 begun). */
struct h5shuf_ckpt_dist {
    uint64_t found, finished, partly_placed, level, piles, cap, piles_done, assembled, shared;
};
H5SHUF_INTERNAL void h5shuf__ckpt_dist_state(const h5shuf_job *job, struct h5shuf_ckpt_dist *d);

/* The agreement on pass 1 (before h5shuf__ckpt_scratch): level (the highest over the processes; 0: none
 * began pass 1), that level's piles and buffer rows, and whether every process recorded PILES at it.
 * Unless all did, this process's pass 1 runs with that plan, going on from its own PASS1 when it is at
 * that plan, else from its first row (an AGAIN record says which).  Returns H5SHUF_OK or the error. */
H5SHUF_INTERNAL int h5shuf__ckpt_pass1_agree(h5shuf_job *job, uint64_t level, uint64_t piles, uint64_t cap, int all_piles);

/* Another process had put its outputs in place (so every output was written): take this process's
 * back, each at its last commit, for placing (none when they are in place or it has only a part). */
H5SHUF_INTERNAL int h5shuf__ckpt_place_done(h5shuf_job *job, const struct h5shuf_ctx *cx);

/* The single output's assembly: target k (written, closed) opened for writing through its checkpoint
 * driver (a plain list when the run does not checkpoint; NULL with job's error on failure), then, closed
 * again, committed as assembled; or its writes dropped after a failure (its last commit stays). */
H5SHUF_INTERNAL hid_t h5shuf__ckpt_target_fapl(h5shuf_job *job, size_t k);
H5SHUF_INTERNAL int h5shuf__ckpt_target_assembled(h5shuf_job *job, size_t k);
H5SHUF_INTERNAL void h5shuf__ckpt_target_discard(h5shuf_job *job);

#endif /* H5SHUF_CHECKPOINT_H */
