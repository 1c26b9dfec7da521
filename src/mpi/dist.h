/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dist.h - the distributed run of a planned job over the processes of c (dist.c; docs/design.md section 5):
 * the serial run's stages composed over parts, with the serial run's output bytes.
 */
#ifndef H5SHUF_MPI_DIST_H
#define H5SHUF_MPI_DIST_H

#include "comm.h"
#include "h5shuf.h"

/* Run job (planned the same way by every process, with the two passes) as process c->rank of c->size:
 * pass 1 over its share of the input rows into its own scratch file (in its --tmpdir); pass 2 over the
 * piles whose rows fall in its output rows, their rows sent to it by every process; its shards written
 * whole, or its part of the single output copied into the output by whole chunks by process 0.  Every
 * process returns H5SHUF_OK only when every output is in place; on any failure nothing is left at the
 * final paths nor in any scratch directory.  The error is job's (H5SHUF_ECANCELED when another process
 * failed: c->failed_rank). */
struct h5shuf_dist_resume;
struct h5shuf_dist_figures;
int h5shuf_dist_run(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_dist_resume *r,
                    struct h5shuf_dist_figures *fig);

/* What this process's run did besides job's plan figures, for the report (set by h5shuf_dist_run). */
struct h5shuf_dist_figures {
    uint64_t rounds;          /* pass 2's rounds (an all-to-all of counts each) */
    uint64_t assembled_bytes; /* bytes of its part of the single output it sent to process 0 */
};

/* The plan's lines for the processes of c (after h5shuf_job_plan): the single output's writer when one
 * process writes it all (process 0; with its bytes), into buf (size bytes, "" when there is nothing to
 * say). */
void h5shuf_dist_plan_text(const h5shuf_job *job, const struct h5shuf_comm *c, char *buf, size_t size);

/* Before planning job: it is process c->rank of c->size (its state directory, when it checkpoints, is
 * its own: "-rankR", resume.h). */
void h5shuf_dist_prepare(h5shuf_job *job, struct h5shuf_comm *c);

/* What the processes agreed on when they resume an interrupted run (every field 0 for a fresh one). */
struct h5shuf_dist_resume {
    int finished;           /* some process had put its outputs in place, so all were written: the others
                             * put theirs in place, and nothing else is done */
    uint64_t level;         /* pass 1's furthest plan recorded: 1 + its restarts (0: none began pass 1) */
    uint64_t piles, cap;    /* that plan's piles and pile buffer rows */
    int all_piles;          /* every process had recorded PILES at that plan: pass 2 goes on */
    int assembled;          /* process 0 had assembled the single output */
};

/* After planning job (every process, collectively): select this process's outputs and agree with the
 * others on where a resumed run goes on (r, for h5shuf_dist_run; checkpoint.h tells how).  H5SHUF_OK, or
 * this process's error, in one line (the caller ends the job by the first process's): some of its
 * outputs in place but not all; no state of its own where the others' need it (EMISMATCH); an output
 * that exists (EEXIST, as h5shuf). */
int h5shuf_dist_agree(h5shuf_job *job, struct h5shuf_comm *c, struct h5shuf_dist_resume *r);

/* The output rows [*first, *end) process c->rank puts (planned job; both 0 when out of memory). */
void h5shuf_dist_rows(const h5shuf_job *job, const struct h5shuf_comm *c, uint64_t *first, uint64_t *end);

#endif /* H5SHUF_MPI_DIST_H */
