/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ckptplan.h - a checkpointed run planned (ckptplan.c): whether the run checkpoints, the interrupted run's
 * state it takes over, its identity held against that run's, and the rows of an output between commits;
 * and the text helpers the journal's records share.
 */
#ifndef H5SHUF_CKPTPLAN_H
#define H5SHUF_CKPTPLAN_H

#include <stddef.h>

#include "job.h"

/* Planning (jobplan.c).  First, before the seed is drawn: look for an interrupted run's state (refusing
 * one without --resume) and take its seed when none is given. */
H5SHUF_INTERNAL int h5shuf__ckpt_plan_find(h5shuf_job *job);
/* After the strategy: a resumed pass 1 continues with the interrupted run's piles; then this run's
 * identity, compared with the interrupted run's (H5SHUF_EMISMATCH naming what changed), and the rows
 * between checkpoints of pass 2.  Also fills job->resume_text. */
H5SHUF_INTERNAL int h5shuf__ckpt_plan_check(h5shuf_job *job);

/* Append to *text (of *len, cap *cap) a printf-formatted line (a record of several lines).  Returns 0, or
 * -1 when out of memory or the line is longer than 8 KiB. */
H5SHUF_INTERNAL int h5shuf__ckpt_add_line(char **text, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* How many of this process's outputs (job->out.v[lo..hi)) are in place as the interrupted run's files
 * (their device and inode are the recorded ones). */
H5SHUF_INTERNAL size_t h5shuf__ckpt_placed_count(const h5shuf_job *job);

#endif /* H5SHUF_CKPTPLAN_H */
