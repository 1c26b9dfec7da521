/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * job.c - the job handle: create and free it, its inputs, output, pile file and options, and what a
 * caller may ask of it (seed, datasets, output files, temporary files, the last error).  Planning and
 * running it are in run.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "error.h"
#include "fault.h"
#include "h5err.h" /* h5shuf__quiet_begin, h5shuf__hdf5_threadsafe */
#include "inputs.h"
#include "job.h"
#include "mixing.h"
#include "pilefile.h"
#include "strata.h"
#include "targets.h"
#include "walfile.h"
#include "h5shuf_debug.h"

const char *h5shuf_version(void)
{
    return H5SHUF_VERSION_STRING;
}

unsigned h5shuf_version_number(void)
{
    return H5SHUF_VERSION_NUMBER;
}

int h5shuf_hdf5_threadsafe(void)
{
    return h5shuf__hdf5_threadsafe();
}

const char *h5shuf_hdf5_version(void)
{
    static char buf[32];
    unsigned maj, min, rel;
    if (!buf[0] && H5get_libversion(&maj, &min, &rel) >= 0)
        snprintf(buf, sizeof buf, "%u.%u.%u", maj, min, rel);
    return buf;
}

#ifdef H5SHUF_FAULT_INJECTION
/* Jobs alive in the process: the check below runs when the last one is freed (jobs in other threads hold
 * their objects open meanwhile: test_threads). */
static int jobs_alive;

/* Test builds: when a job is freed, every file, dataset, group and attribute it opened is closed (the tool
 * holds none of its own); anything left open is named, then abort().  Not datatypes: HDF5 counts every
 * transient one, and a filter plugin may leave some (Debian's ZFP plugin, one per dataset it is applied
 * to).  Files close weakly in these builds (h5err.h): an object left open keeps its file open too. */

static void check_closed(void)
{
    const unsigned kinds = H5F_OBJ_FILE | H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_ATTR;
    ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, kinds);
    if (n <= 0)
        return;
    fprintf(stderr, "h5shuf: internal: %zd HDF5 objects left open\n", n);
    hid_t ids[16];
    ssize_t k = H5Fget_obj_ids(H5F_OBJ_ALL, kinds, sizeof ids / sizeof *ids, ids);
    for (ssize_t i = 0; i < k; i++) {
        char name[512] = "?";
        H5I_type_t type = H5Iget_type(ids[i]);
        if (type == H5I_FILE)
            H5Fget_name(ids[i], name, sizeof name);
        else
            H5Iget_name(ids[i], name, sizeof name);
        fprintf(stderr, "h5shuf: internal: %s %s\n",
                type == H5I_FILE ? "file" : type == H5I_DATASET ? "dataset" : type == H5I_GROUP ? "group" : "attribute of",
                name);
    }
    abort();
}
#endif

h5shuf_job *h5shuf_job_create(const h5shuf_options *opts)
{
    h5shuf_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
#ifdef H5SHUF_FAULT_INJECTION
    __atomic_add_fetch(&jobs_alive, 1, __ATOMIC_SEQ_CST);
#endif
    /* As far as the caller's struct_size (abi.c); options that cannot be taken fail the job's plan, run or
     * verify (a status h5shuf_job_create has no room for). */
    if (!h5shuf__abi_options_take(&job->opts, opts, job->opts_bad, sizeof job->opts_bad) && !job->opts_bad[0])
        snprintf(job->opts_bad, sizeof job->opts_bad, "options not taken");
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
                {&job->opts.split, &job->split},
                {&job->opts.mix, &job->mix}};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        if (*strs[i].from && !(*strs[i].to = strdup(*strs[i].from))) {
            h5shuf_job_free(job);
            return NULL;
        }
        *strs[i].from = *strs[i].to;
    }
    job->out.file = H5I_INVALID_HID;
    job->ckpt.rs.dirfd = job->ckpt.rs.j.fd = -1;
    return job;
}

void h5shuf_job_free(h5shuf_job *job)
{
    if (!job)
        return;
    struct h5shuf_quiet q; /* (HDF5 ids closed: on an HDF5 that is not thread-safe, in turn with other jobs) */
    h5shuf__quiet_begin(&q);
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
    free(job->mix);
    h5shuf__mixture_free(&job->mixture);
    for (size_t k = 0; k < job->nmix; k++)
        free(job->mix_spec[k]);
    free(job->mix_spec);
    free(job->mix_tag);
    free(job->mix_text);
    free(job->mixing_counts);
    h5shuf__strata_free(job->strata);
    free(job->strata);
    free(job->strata_text);
    free(job->direct_rows.held);
    h5shuf__targets_free(&job->out);
    h5shuf__objcopy_free(&job->objects);
    for (size_t k = 0; k < job->nwarnings; k++)
        free(job->warnings[k]);
    free(job->warnings);
    free(job->scratch_dir);
    h5shuf__pilefile_free(job->pf);
    free(job->piles_path);
    h5shuf__walfile_free(job->ckpt.target_wal); /* the checkpoints' (checkpoint.h); the state directory stays */
    h5shuf__walfile_free(job->ckpt.scratch_wal);
    h5shuf__resume_free(&job->ckpt.rs);
    free(job->ckpt.identity);
    free(job);
#ifdef H5SHUF_FAULT_INJECTION
    if (__atomic_sub_fetch(&jobs_alive, 1, __ATOMIC_SEQ_CST) == 0)
        check_closed();
#endif
    h5shuf__quiet_end(&q);
}

const char *h5shuf_job_temp_file(const h5shuf_job *job, int which)
{
    if (!job || which < 0 || job->ckpt.rs.on) /* a resumable run's files are its state: never unlinked by name */
        return NULL;
    if (which >= 2) /* further outputs (shards, splits) */
        return (size_t)which - 1 < job->out.n ? job->out.v[which - 1].tf.path : NULL;
    if (which == 0 && !job->temp_file[0]) /* the output (a scatter's pile file is temp_file[0]) */
        return job->out.n ? job->out.v[0].tf.path : NULL;
    return job->temp_file[which];
}

int h5shuf__job_warn(h5shuf_job *job, const char *fmt, ...)
{
    char text[H5SHUF_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char **v = realloc(job->warnings, (job->nwarnings + 1) * sizeof *v);
    if (!v)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    job->warnings = v;
    if (!(v[job->nwarnings] = strdup(text)))
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    job->nwarnings++;
    return H5SHUF_OK;
}

const char *h5shuf_job_warning(const h5shuf_job *job, size_t index)
{
    return job && index < job->nwarnings ? job->warnings[index] : NULL;
}

const char *h5shuf_job_resume_text(const h5shuf_job *job)
{
    return job ? job->ckpt.resume_text : "";
}

const char *h5shuf_job_verify_text(const h5shuf_job *job)
{
    return job ? job->verify_text : "";
}

const char *h5shuf_job_strategy_why(const h5shuf_job *job)
{
    return job ? job->strategy_why : "";
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
    int st = h5shuf__abi_out_check(first, "first mixing report", "h5shuf_mixing_init", &job->err);
    if (st == H5SHUF_OK)
        st = h5shuf__abi_out_check(last, "last mixing report", "h5shuf_mixing_init", &job->err);
    const struct h5shuf_keyidx *bound = job->out_rows < job->in.rows ? &job->head_bound : NULL;
    const struct h5shuf_progress progress = {job->opts.progress, job->opts.progress_user};
    h5shuf_mixing m[2]; /* the library's structs, copied out as far as the caller's reach */
    memset(m, 0, sizeof m);
    if (st == H5SHUF_OK)
        st = h5shuf__mixing(&job->in, job->seed, job->strata, job->out_rows, bound, window_rows, &job->mixing_counts,
                            &m[0], &m[1], &progress, &job->err);
    if (st == H5SHUF_OK) {
        h5shuf__abi_out_put(first, &m[0], sizeof m[0]);
        h5shuf__abi_out_put(last, &m[1], sizeof m[1]);
    }
    return st;
}

int h5shuf_job_mixing_windows(h5shuf_job *job, uint64_t window_rows, h5shuf_mixing_windows *out)
{
    h5shuf__err_reset(&job->err);
    if (!job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is not planned");
    int st = h5shuf__abi_out_check(out, "mixing windows report", "h5shuf_mixing_windows_init", &job->err);
    const struct h5shuf_keyidx *bound = job->out_rows < job->in.rows ? &job->head_bound : NULL;
    const struct h5shuf_progress progress = {job->opts.progress, job->opts.progress_user};
    h5shuf_mixing_windows w;
    memset(&w, 0, sizeof w);
    if (st == H5SHUF_OK)
        st = h5shuf__mixing_windows(&job->in, job->seed, job->strata, job->out_rows, bound, window_rows, &w, &progress,
                                    &job->err);
    if (st == H5SHUF_OK)
        h5shuf__abi_out_put(out, &w, sizeof w);
    return st;
}

int h5shuf_job_set_debug(h5shuf_job *job, h5shuf_debug_key key, uint64_t value)
{
    h5shuf__err_reset(&job->err);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    switch (key) {
    case H5SHUF_DEBUG_PILE_BOUND_ROWS: job->debug_pile_bound_rows = value; return H5SHUF_OK;
    case H5SHUF_DEBUG_SKIP_SPACE_CHECK: job->debug_skip_space_check = value != 0; return H5SHUF_OK;
    }
    return h5shuf__fail(&job->err, H5SHUF_EINVAL, "no test knob %d", (int)key);
}
