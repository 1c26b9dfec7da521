/*
 * job.c - the job handle: create and free it, its inputs, output, pile file and options, and what a
 * caller may ask of it (seed, datasets, output files, temporary files, the last error).  Planning and
 * running it are in run.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "inputs.h"
#include "job.h"
#include "mixing.h"
#include "pilefile.h"
#include "targets.h"

#define DEFAULT_MEM_LIMIT_BYTES (UINT64_C(1) << 30)

const char *h5shuf_version(void)
{
    return H5SHUF_VERSION_STRING;
}

const char *h5shuf_hdf5_version(void)
{
    static char buf[32];
    unsigned maj, min, rel;
    if (!buf[0] && H5get_libversion(&maj, &min, &rel) >= 0)
        snprintf(buf, sizeof buf, "%u.%u.%u", maj, min, rel);
    return buf;
}

void h5shuf_options_init(h5shuf_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->mem_limit_bytes = DEFAULT_MEM_LIMIT_BYTES;
    opts->on_oversize = H5SHUF_OVERSIZE_RECURSE;
}

h5shuf_job *h5shuf_job_create(const h5shuf_options *opts)
{
    h5shuf_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    if (opts)
        job->opts = *opts;
    else
        h5shuf_options_init(&job->opts);
    /* The options' strings are the caller's: keep copies. */
    struct {
        const char **from;
        char **to;
    } strs[] = {{&job->opts.tmpdir, &job->tmpdir},
                {&job->opts.compression, &job->compression},
                {&job->opts.chunk_shape, &job->chunk_shape},
                {&job->opts.scratch_compression, &job->scratch_compression},
                {&job->opts.index_path, &job->index_path},
                {&job->opts.source_index_path, &job->source_index_path},
                {&job->opts.split, &job->split}};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        if (*strs[i].from && !(*strs[i].to = strdup(*strs[i].from))) {
            h5shuf_job_free(job);
            return NULL;
        }
        *strs[i].from = *strs[i].to;
    }
    job->out.file = H5I_INVALID_HID;
    return job;
}

void h5shuf_job_free(h5shuf_job *job)
{
    if (!job)
        return;
    h5shuf__inputs_close(&job->in, &job->dsets);
    h5shuf__inputs_free(&job->in);
    h5shuf__spec_clear(&job->out_spec);
    free(job->tmpdir);
    free(job->compression);
    free(job->chunk_shape);
    free(job->scratch_compression);
    free(job->index_path);
    free(job->source_index_path);
    free(job->split);
    free(job->mixing_counts);
    h5shuf__targets_free(&job->out);
    h5shuf__objcopy_free(&job->objects);
    for (size_t k = 0; k < job->nwarnings; k++)
        free(job->warnings[k]);
    free(job->warnings);
    free(job->scratch_dir);
    h5shuf__pilefile_free(job->pf);
    free(job->piles_path);
    free(job);
}

const char *h5shuf_job_temp_file(const h5shuf_job *job, int which)
{
    if (!job || which < 0)
        return NULL;
    if (which >= 2) /* further outputs (shards, splits) */
        return (size_t)which - 1 < job->out.n ? job->out.v[which - 1].tmp_path : NULL;
    if (which == 0 && !job->temp_file[0]) /* the output (a scatter's pile file is temp_file[0]) */
        return job->out.n ? job->out.v[0].tmp_path : NULL;
    return job->temp_file[which];
}

const char *h5shuf_job_warning(const h5shuf_job *job, size_t index)
{
    return job && index < job->nwarnings ? job->warnings[index] : NULL;
}

const char *h5shuf_errmsg(const h5shuf_job *job)
{
    return job ? job->err.msg : "";
}

uint64_t h5shuf_job_seed(const h5shuf_job *job)
{
    return job->seed;
}

const char *h5shuf_job_dataset(const h5shuf_job *job, size_t index)
{
    return job->planned && index < job->dsets.n ? job->dsets.ds[index].in_path : NULL;
}

int h5shuf_job_add_input(h5shuf_job *job, const char *spec)
{
    h5shuf__err_reset(&job->err);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    return h5shuf__inputs_append(&job->in, spec, &job->err);
}

int h5shuf_job_set_output(h5shuf_job *job, const char *spec)
{
    h5shuf__err_reset(&job->err);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    h5shuf__spec_clear(&job->out_spec);
    return h5shuf__spec_parse(spec, &job->out_spec, &job->err);
}

int h5shuf_job_set_piles(h5shuf_job *job, const char *path)
{
    h5shuf__err_reset(&job->err);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    if (!path || !*path)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "empty pile file name");
    char *p = strdup(path);
    if (!p)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    free(job->piles_path);
    job->piles_path = p;
    return H5SHUF_OK;
}

const char *h5shuf_job_output_file(const h5shuf_job *job, size_t index, uint64_t *first_row, uint64_t *rows)
{
    if (!job || !job->planned || index >= job->out.n)
        return NULL;
    if (first_row)
        *first_row = job->out.v[index].first;
    if (rows)
        *rows = job->out.v[index].rows;
    return job->out.v[index].path;
}

int h5shuf_job_mixing(h5shuf_job *job, uint64_t window_rows, h5shuf_mixing *first, h5shuf_mixing *last)
{
    h5shuf__err_reset(&job->err);
    if (!job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is not planned");
    const struct h5shuf_keyidx *bound = job->out_rows < job->in.rows ? &job->head_bound : NULL;
    return h5shuf__mixing(&job->in, job->seed, job->out_rows, bound, window_rows, &job->mixing_counts, first, last,
                          &job->err);
}
