/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobpiles.h - a scatter's and a gather's planning (jobpiles.c), called by h5shuf__job_make_plan.
 */
#ifndef H5SHUF_JOBPILES_H
#define H5SHUF_JOBPILES_H

#include "job.h"

/* A scatter: the pile file (job->piles_path) takes the output's place in job->out_spec.file.
 * H5SHUF_OK; H5SHUF_EINVAL when an output was given too, H5SHUF_ENOMEM (recorded in job->err). */
H5SHUF_INTERNAL int h5shuf__job_scatter_setup(h5shuf_job *job);
/* A gather, before the inputs are opened: the pile file read (job->pf, owned by the job); its inputs
 * (opened by their absolute names), seed and recorded output options become the job's unless given.
 * H5SHUF_OK, or a failure recorded in job->err (a damaged pile file, another seed: H5SHUF_EUNSUPPORTED,
 * H5SHUF_EINVAL). */
H5SHUF_INTERNAL int h5shuf__job_gather_setup(h5shuf_job *job);
/* A gather, after the inputs are opened: they must be the ones scattered, and the largest pile (its rows
 * at job->dsets.row_bytes plus the pass-2 overhead, and the bands) must fit the budget (else
 * H5SHUF_EBUDGET); job->plan takes the pile file's figures (piles, bounds, splits, restarts, bytes). */
H5SHUF_INTERNAL int h5shuf__job_gather_check(h5shuf_job *job);

#endif /* H5SHUF_JOBPILES_H */
