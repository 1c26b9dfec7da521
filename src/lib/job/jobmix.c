/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobmix.c - a job's inputs as they are added (h5shuf_job_add_input) and its mixture (--mix): with one,
 * each input is tagged with its domain, and when the job is planned their rows are counted and turned into
 * weights (mixture.h) with which they are added again.  Part of the orchestrator, above job.c (job.h);
 * the arithmetic is mixture.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "inputs.h"
#include "job.h"
#include "mixture.h"
#include "vlen.h"

/* Add "NAME=SPEC" of a job with a mixture: SPEC to the inputs, NAME to the job's. */
static int mix_add(h5shuf_job *job, const char *spec)
{
    struct h5shuf_err *err = &job->err;
    int st = H5SHUF_OK;
    if (!job->mixture.names && (st = h5shuf__mixture_parse(job->mix, &job->mixture, err)) != H5SHUF_OK) {
        h5shuf__mixture_free(&job->mixture);
        return st;
    }
    const char *rest = NULL;
    size_t t = spec ? h5shuf__mixture_tag(&job->mixture, spec, &rest) : SIZE_MAX;
    if (t == SIZE_MAX)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: with --mix, an input is NAME=SPEC, NAME one of --mix's",
                            spec ? spec : "(null)");
    const size_t before = job->in.n;
    if ((st = h5shuf__inputs_append(&job->in, rest, err)) != H5SHUF_OK)
        return st;
    if (job->in.v[before].weight)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: --mix computes the inputs' weights: give it without @%s", spec,
                            job->in.v[before].weight);
    size_t *tag = realloc(job->mix_tag, (job->nmix + 1) * sizeof *tag);
    char **specs = tag ? realloc(job->mix_spec, (job->nmix + 1) * sizeof *specs) : NULL;
    if (tag)
        job->mix_tag = tag;
    if (specs)
        job->mix_spec = specs;
    if (!tag || !specs || !(specs[job->nmix] = strdup(rest)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    tag[job->nmix++] = t;
    return H5SHUF_OK;
}

int h5shuf_job_add_input(h5shuf_job *job, const char *spec)
{
    h5shuf__err_reset(&job->err);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    if (job->mix)
        return mix_add(job, spec);
    return h5shuf__inputs_append(&job->in, spec, &job->err);
}

const char *h5shuf_job_mix_text(const h5shuf_job *job)
{
    return job && job->mix_text ? job->mix_text : "";
}

/* What the plan chose, as h5shuf_job_mix_text gives it (caller frees); NULL when out of memory. */
static char *mix_text(const h5shuf_job *job, const uint64_t *rows, uint64_t out_rows, const uint64_t *target,
                      const uint64_t *count, char (*weight)[H5SHUF_MIX_WEIGHT_TEXT])
{
    const struct h5shuf_mixture *m = &job->mixture;
    size_t cap = 1;
    for (size_t t = 0; t < m->n; t++)
        cap += strlen(m->names[t]) + 160;
    for (size_t f = 0; f < job->nmix; f++)
        cap += strlen(job->mix_spec[f]) + 120;
    char *text = malloc(cap), *p = text;
    if (!text)
        return NULL;
    uint64_t sum = 0;
    for (size_t t = 0; t < m->n; t++)
        sum += m->share[t];
    for (size_t t = 0; t < m->n; t++) {
        uint64_t have = 0;
        size_t k = 0;
        for (size_t f = 0; f < job->nmix; f++)
            if (job->mix_tag[f] == t) {
                have += rows[f];
                k++;
            }
        p += sprintf(p, "mix: %s: %.6f of %llu rows = %llu rows, from %zu input%s of %llu rows\n", m->names[t],
                     (double)m->share[t] / (double)sum, (unsigned long long)out_rows, (unsigned long long)target[t], k,
                     k == 1 ? "" : "s", (unsigned long long)have);
        for (size_t f = 0; f < job->nmix; f++)
            if (job->mix_tag[f] == t)
                p += sprintf(p, "mix:   %s: %llu rows, weight %s: %llu rows\n", job->mix_spec[f],
                             (unsigned long long)rows[f], weight[f], (unsigned long long)count[f]);
    }
    return text;
}

int h5shuf__job_mix_plan(h5shuf_job *job)
{
    if (!job->mix)
        return H5SHUF_OK;
    struct h5shuf_err *err = &job->err;
    if (job->nmix != job->in.nsrc) /* (every input came through mix_add) */
        return h5shuf__fail(err, H5SHUF_EINVAL, "--mix: every input is NAME=SPEC");
    job->in.allow_external = job->opts.allow_external;
    job->dsets.vlen_read_limit = h5shuf__vlen_read_limit(job->opts.mem_limit_bytes);
    int st = h5shuf__inputs_open(&job->in, &job->out_spec, &job->dsets, err);
    const size_t n = job->nmix;
    uint64_t *rows = calloc(n ? n : 1, sizeof *rows), *count = calloc(n ? n : 1, sizeof *count);
    uint64_t *target = calloc(job->mixture.n, sizeof *target);
    char(*weight)[H5SHUF_MIX_WEIGHT_TEXT] = calloc(n ? n : 1, sizeof *weight);
    if (st == H5SHUF_OK && (!rows || !count || !target || !weight))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; st == H5SHUF_OK && f < job->in.n; f++) /* one entry an input: none has a weight */
        rows[job->in.v[f].src] = job->in.v[f].file_rows;
    uint64_t out_rows = job->opts.mix_rows;
    if (st == H5SHUF_OK)
        st = h5shuf__mixture_weights(&job->mixture, n, job->mix_tag, rows, job->opts.mix_rows_set, &out_rows,
                                     job->opts.allow_repeat, target, count, weight, err);
    h5shuf__inputs_close(&job->in, &job->dsets);
    h5shuf__inputs_free(&job->in);
    for (size_t f = 0; st == H5SHUF_OK && f < n; f++) { /* the inputs again, with their weights */
        size_t len = strlen(job->mix_spec[f]) + H5SHUF_MIX_WEIGHT_TEXT + 2;
        char *spec = malloc(len);
        if (!spec) {
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            break;
        }
        snprintf(spec, len, "%s@%s", job->mix_spec[f], weight[f]);
        st = h5shuf__inputs_append(&job->in, spec, err);
        free(spec);
    }
    if (st == H5SHUF_OK && !(job->mix_text = mix_text(job, rows, out_rows, target, count, weight)))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    free(rows);
    free(count);
    free(target);
    free(weight);
    return st;
}
