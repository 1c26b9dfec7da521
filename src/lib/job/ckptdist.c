/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ckptdist.c - the checkpoints of a distributed run (ckptdist.h): which process this is, what its state
 * says for the processes' agreement on resuming (src/mpi/dist.c reduces it), and pass 1's plan as they
 * agreed it.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "ckptdist.h"
#include "ckptplan.h"
#include "error.h"
#include "fault.h"
#include "resume.h"

void h5shuf__ckpt_set_rank(h5shuf_job *job, int rank, int ranks, int (*barrier)(void *user, struct h5shuf_err *err),
                           void *user)
{
    job->ckpt.rank = rank;
    job->ckpt.ranks = ranks;
    job->ckpt.barrier = barrier;
    job->ckpt.barrier_user = user;
}

void h5shuf__ckpt_dist_state(const h5shuf_job *job, struct h5shuf_ckpt_dist *d)
{
    const struct h5shuf_resume *rs = &job->ckpt.rs;
    memset(d, 0, sizeof *d);
    if (!rs->on || !rs->found)
        return;
    d->found = 1;
    const size_t placed = h5shuf__ckpt_placed_count(job);
    d->finished = placed > 0 && placed == job->out.hi - job->out.lo;
    d->partly_placed = placed > 0 && !d->finished;
    if (rs->level.set) {
        d->level = rs->level.restarts + 1;
        d->piles = rs->level.piles;
        d->cap = rs->level.cap;
    }
    d->piles_done = rs->has_piles;
    d->assembled = rs->assembled;
    /* what the other processes' states depend on: pass 1's end, its restarts, or pass 2 */
    d->shared = rs->has_piles || (rs->level.set && rs->level.restarts > 0) || rs->p2_row > 0 || rs->assembled;
}

int h5shuf__ckpt_pass1_agree(h5shuf_job *job, uint64_t level, uint64_t piles, uint64_t cap, int all_piles)
{
    struct h5shuf_resume *rs = &job->ckpt.rs;
    if (!rs->on || level == 0 || all_piles) /* no process had begun pass 1; or all had finished it */
        return H5SHUF_OK;
    const uint64_t restarts = level - 1;
    const int from_pass1 = rs->found && rs->has_pass1 && rs->p1.restarts == restarts && rs->p1.piles == piles &&
                           rs->p1.cap == cap;
    int st = H5SHUF_OK;
    if (rs->found && (rs->has_piles || (rs->has_pass1 && !from_pass1))) {
        /* recorded before anything of this run's: a kill from here on resumes from that point too */
        H5SHUF_KILL_POINT();
        st = h5shuf__resume_record(rs, H5SHUF_REC_AGAIN, &job->err,
                                   "from %s plan-restarts %" PRIu64 " plan-piles %" PRIu64 " plan-cap %" PRIu64 " ",
                                   from_pass1 ? "pass1" : "start", restarts, piles, cap);
        H5SHUF_KILL_POINT();
    }
    if (st != H5SHUF_OK)
        return st;
    if (rs->found && !from_pass1 && (rs->has_pass1 || rs->has_piles) && rs->scratch_name[0]) {
        unlinkat(rs->dirfd, rs->scratch_name, 0); /* the scratch of an earlier plan: pass 1 starts a new one */
        rs->scratch_name[0] = '\0';
    }
    rs->has_piles = 0;
    rs->has_pass1 = from_pass1;
    job->plan.piles = piles;
    job->plan.pile_buffer_rows = cap;
    job->plan.restarts = restarts;
    return H5SHUF_OK;
}
