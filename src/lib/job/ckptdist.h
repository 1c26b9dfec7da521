/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ckptdist.h - a distributed run's checkpoints (ckptdist.c; src/mpi/dist.c): one state per process, and
 * their agreement on resuming.
 *
 * Each process journals its own share in its own state directory ("-rankR", resume.h).  Pass 1 is each
 * process's own until its end, where the processes sum their piles; so on resuming they agree on pass 1's
 * plan first: the furthest restart any of them recorded (a restart is decided by all at once), and
 * pass 2 only when every process recorded its PILES (applied only after all did: the barrier).  Pass 2's
 * rounds start at the earliest round any process still has to gather.
 */
#ifndef H5SHUF_CKPTDIST_H
#define H5SHUF_CKPTDIST_H

#include <stdint.h>

#include "job.h"

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

#endif /* H5SHUF_CKPTDIST_H */
