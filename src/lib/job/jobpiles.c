/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobpiles.c - the planning of a job that runs one of the two passes through a pile file (h5shuf scatter,
 * h5shuf gather): the pile file in the output's place, or read for its inputs, seed and recorded output
 * options, and checked against the inputs and the budget.  Moved out of jobplan.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "job.h"
#include "jobpiles.h"
#include "pilefile.h"
#include "plan.h"

/* A scatter: the pile file takes the output's place (out_spec.file). */
int h5shuf__job_scatter_setup(h5shuf_job *job)
{
    if (job->out_spec.file)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a scatter writes the pile file %s and takes no output",
                            job->piles_path);
    job->out_spec.file = strdup(job->piles_path);
    if (!job->out_spec.file)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    return H5SHUF_OK;
}

/* An output option the gather was not given: the copy of the one recorded at scatter time, if any. */
static int recorded(struct h5shuf_err *err, const char *rec, char **opt, const char **in_opts)
{
    if (*opt || !rec)
        return H5SHUF_OK;
    if (!(*opt = strdup(rec)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    *in_opts = *opt;
    return H5SHUF_OK;
}

/* A gather, before the inputs are opened: read the pile file; its inputs (opened by their absolute
 * names), seed and recorded output options become the job's. */
int h5shuf__job_gather_setup(h5shuf_job *job)
{
    const char *pfile = job->piles_path;
    struct h5shuf_err *err = &job->err;
    if (!job->out_spec.file)
        return h5shuf__fail(err, H5SHUF_EINVAL, "no output given");
    int st = h5shuf__pilefile_open(pfile, &job->pf, err);
    const struct h5shuf_pilefile *pf = job->pf;
    for (size_t f = 0; st == H5SHUF_OK && f < pf->ninputs; f++) {
        if (!pf->specs[f][0] && f > 0) /* a further copy of a weighted input: made by its first's "@W" */
            continue;
        const size_t first = job->in.n;
        st = h5shuf__inputs_append(&job->in, pf->specs[f], err);
        if (st != H5SHUF_OK && st != H5SHUF_ENOMEM) {
            err->status = H5SHUF_OK; /* say where the bad spec came from */
            st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: input spec '%s'", pfile, pf->specs[f]);
        }
        for (size_t k = first; st == H5SHUF_OK && k < job->in.n; k++)
            if (!(job->in.v[k].open_path = strdup(pf->files[f])))
                st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    if (st != H5SHUF_OK)
        return st;
    if (pf->whole_file != (job->in.v[0].spec.npaths == 0))
        return h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: whole-file flag and first input disagree",
                            pfile);
    if (job->opts.seed_set && job->opts.seed != pf->seed)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: the piles were scattered with seed %" PRIu64 ", not %" PRIu64,
                            pfile, pf->seed, job->opts.seed);
    job->opts.seed = pf->seed;
    job->opts.seed_set = 1;
    if ((st = recorded(err, pf->compression, &job->compression, &job->opts.compression)) != H5SHUF_OK ||
        (st = recorded(err, pf->chunk_shape, &job->chunk_shape, &job->opts.chunk_shape)) != H5SHUF_OK ||
        (st = recorded(err, pf->index_path, &job->index_path, &job->opts.index_path)) != H5SHUF_OK)
        return st;
    return H5SHUF_OK;
}

/* A gather, after the inputs are opened: they must be the ones scattered, and the largest pile must fit
 * the budget; the plan takes the pile file's figures. */
int h5shuf__job_gather_check(h5shuf_job *job)
{
    const struct h5shuf_pilefile *pf = job->pf;
    int st = h5shuf__pilefile_check(pf, job->piles_path, &job->in, &job->dsets, &job->err);
    if (st != H5SHUF_OK)
        return st;
    /* Pass 2 holds the largest pile, its ids, sort records and the output bands. */
    uint64_t most = 0;
    for (size_t j = 0; j < pf->npiles; j++)
        most = pf->piles[j].rows > most ? pf->piles[j].rows : most;
    uint64_t bands = job->band_bytes;
    h5shuf_u128 need = (h5shuf_u128)most * (job->dsets.row_bytes + H5SHUF_PASS2_ROW_OVERHEAD) + bands;
    if (need > job->opts.mem_limit_bytes)
        return h5shuf__fail(&job->err, H5SHUF_EBUDGET,
                            "%s: its largest pile (%" PRIu64 " rows) needs %" PRIu64 " MiB in pass 2, more than the "
                            "budget of %" PRIu64 " MiB (use -m)",
                            job->piles_path, most, (uint64_t)((need + (1 << 20) - 1) >> 20),
                            job->opts.mem_limit_bytes >> 20);
    h5shuf_plan *p = &job->plan;
    p->piles = pf->npiles;
    p->pile_bound_rows = pf->bound_rows;
    p->pile_target_rows = h5shuf__pile_target_for_bound(pf->bound_rows);
    p->splits = pf->splits;
    p->restarts = pf->restarts;
    p->scratch_bytes = pf->file_bytes;
    p->mem_planned_bytes = (uint64_t)need;
    return H5SHUF_OK;
}
