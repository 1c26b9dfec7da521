/*
 * run.c - planning a job and the runs that string the stages together: h5shuf_run (pass 1, oversize,
 * pass 2), h5shuf_run_scatter (pass 1 into a pile file) and h5shuf_run_gather (pass 2 from it).
 *
 * A run never leaves anything half-done behind: the output is written as ".NAME.h5shuf-XXXXXX" in the
 * output's directory and renamed into place only after the file is closed without error; the scratch file
 * is removed on every return.  Inputs are opened read-only.  HDF5's automatic error printing is switched
 * off for the duration of a call and restored after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "filters.h"
#include "gather.h"
#include "h5err.h"
#include "head.h"
#include "job.h"
#include "output.h"
#include "pilefile.h"
#include "piles.h"
#include "plan.h"
#include "scatter.h"
#include "targets.h"
#include "writer.h"

/* Restarts of pass 1 before giving up (each at least doubles M). */
#define RESTARTS_MAX 20

/* Fill the plan's disk estimates and free space (see h5shuf_plan). */
static int plan_disk(h5shuf_job *job)
{
    h5shuf_plan *p = &job->plan;
    const char *env = getenv("TMPDIR");
    /* A scatter's scratch file is the pile file itself, written next to its final name. */
    job->scratch_dir = job->mode == H5SHUF_MODE_SCATTER ? h5shuf__dir_of(job->targets[0].path)
                       : job->opts.tmpdir                ? strdup(job->opts.tmpdir)
                       : env && *env                     ? strdup(env)
                                                         : h5shuf__dir_of(job->targets[0].path);
    char *out_dir = h5shuf__dir_of(job->targets[0].path);
    if (!job->scratch_dir || !out_dir) {
        free(out_dir);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    for (size_t f = 0; f < job->ninputs; f++)
        for (size_t d = 0; d < job->nds; d++) /* a vlen dataset's payload is in the global heap: estimate it */
            p->input_stored_bytes += job->ds[d].vlen ? job->inputs[f].rows * job->ds[d].plan_row_bytes
                                                     : H5Dget_storage_size(job->inputs[f].src[d].dset);
    uint64_t stored = p->input_stored_bytes < p->total_bytes ? p->input_stored_bytes : p->total_bytes;
    int scratch_packed = job->scratch_filters.codec != H5SHUF_CODEC_NONE;
    p->scratch_estimate_bytes = (scratch_packed ? stored : p->total_bytes) + 8 * p->rows;
    /* Kept filters: about the input's stored size.  No codec: the raw size.  A new codec: the stored
     * size when the input was compressed too, else (no ratio to go by) the raw size. */
    p->output_estimate_bytes = job->out_filters.keep || job->out_filters.codec != H5SHUF_CODEC_NONE ? stored : p->total_bytes;
    if (job->mode == H5SHUF_MODE_SCATTER) /* the pile file is the scatter's only output */
        p->output_estimate_bytes = 0;
    if (job->mode == H5SHUF_MODE_GATHER) /* the piles exist already */
        p->scratch_estimate_bytes = 0;
    if (job->out_rows < job->rows) /* a head: its share */
        p->output_estimate_bytes = (uint64_t)((long double)p->output_estimate_bytes * job->out_rows / job->rows);
    dev_t ds, dout;
    p->scratch_free_bytes = h5shuf__free_bytes(job->scratch_dir, &ds);
    p->output_free_bytes = h5shuf__free_bytes(out_dir, &dout);
    p->same_filesystem = ds != 0 && ds == dout;
    free(out_dir);
    return H5SHUF_OK;
}

/* Refuse to start when the estimates do not fit the free space (a statvfs failure counts as room). */
static int check_disk(h5shuf_job *job)
{
    const h5shuf_plan *p = &job->plan;
    uint64_t need_scratch = p->scratch_estimate_bytes, need_out = p->output_estimate_bytes;
    if (p->same_filesystem && p->scratch_free_bytes && need_scratch + need_out > p->scratch_free_bytes)
        return h5shuf__fail(&job->err, H5SHUF_ENOSPC,
                            "%s: not enough free space: scratch and output need about %llu MiB together, %llu MiB free "
                            "(put the scratch elsewhere with -t DIR)",
                            job->scratch_dir, (unsigned long long)((need_scratch + need_out) >> 20),
                            (unsigned long long)(p->scratch_free_bytes >> 20));
    if (!p->same_filesystem && p->scratch_free_bytes && need_scratch > p->scratch_free_bytes)
        return h5shuf__fail(&job->err, H5SHUF_ENOSPC,
                            "%s: not enough free space for the scratch file: about %llu MiB needed, %llu MiB free (use -t DIR)",
                            job->scratch_dir, (unsigned long long)(need_scratch >> 20),
                            (unsigned long long)(p->scratch_free_bytes >> 20));
    if (!p->same_filesystem && p->output_free_bytes && need_out > p->output_free_bytes)
        return h5shuf__fail(&job->err, H5SHUF_ENOSPC,
                            "%s: not enough free space for the output: about %llu MiB needed, %llu MiB free",
                            job->out_spec.file, (unsigned long long)(need_out >> 20),
                            (unsigned long long)(p->output_free_bytes >> 20));
    return H5SHUF_OK;
}

static int make_plan(h5shuf_job *job)
{
    int st = H5SHUF_OK;
    if (job->piles_path) { /* a scatter writes the pile file, a gather reads it (lazy.c) */
        job->mode = job->ninputs ? H5SHUF_MODE_SCATTER : H5SHUF_MODE_GATHER;
        st = job->mode == H5SHUF_MODE_SCATTER ? h5shuf__piles_scatter_setup(job) : h5shuf__piles_load(job);
        if (st != H5SHUF_OK)
            return st;
    }
    if (job->mode == H5SHUF_MODE_SCATTER && (job->opts.shards || job->split || job->source_index_path))
        return h5shuf__fail(&job->err, H5SHUF_EINVAL,
                            "--shards, --split and --source-index shape the output: give them to the gather, not the scatter");
    if (job->mode != H5SHUF_MODE_RUN && job->opts.head_set)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL,
                            "--head chooses the rows before pass 1: it works with the one-shot shuffle only, not with "
                            "scatter or gather");
    if (job->ninputs == 0)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "no input given");
    if (!job->out_spec.file)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "no output given");
    if (job->opts.mem_limit_bytes == 0)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "memory budget of 0 bytes");
    if (job->index_path && job->index_path[0] != '/')
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--index '%s': a dataset path must start with '/'", job->index_path);
    if (job->source_index_path && job->source_index_path[0] != '/')
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--source-index '%s': a dataset path must start with '/'",
                            job->source_index_path);
    if (job->source_index_path && job->index_path && strcmp(job->index_path, job->source_index_path) == 0)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--index and --source-index name the same dataset '%s'",
                            job->index_path);
    if (job->opts.tmpdir && !*job->opts.tmpdir)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "empty scratch directory name (--tmpdir)");
    st = h5shuf__zstd_register();
    if (st != H5SHUF_OK)
        return h5shuf__fail(&job->err, st, "cannot register the zstd filter with HDF5");
    st = h5shuf__filters_parse(job->compression, "keep", 1, "--compression", &job->out_filters, &job->err);
    if (st == H5SHUF_OK)
        st = h5shuf__filters_parse(job->scratch_compression, "zstd:1+shuffle", 0, "--scratch-compression",
                                   &job->scratch_filters, &job->err);
    if (st == H5SHUF_OK && job->chunk_shape) {
        hsize_t dims[H5S_MAX_RANK];
        int rank;
        st = h5shuf__chunk_parse(job->chunk_shape, dims, &rank, &job->err);
    }
    if (st == H5SHUF_OK)
        st = h5shuf__inputs_open(job);
    if (st == H5SHUF_OK)
        st = h5shuf__output_plan(job);
    job->out_rows = job->rows;
    if (job->opts.head_set && job->opts.head_rows < job->rows)
        job->out_rows = job->opts.head_rows;
    if (st == H5SHUF_OK)
        st = h5shuf__outputs_plan(job);
    if (st != H5SHUF_OK)
        return st;
    if (job->opts.seed_set) {
        job->seed = job->opts.seed;
    } else if (getrandom(&job->seed, sizeof job->seed, 0) != (ssize_t)sizeof job->seed) {
        return h5shuf__fail(&job->err, H5SHUF_EIO, "cannot draw a random seed: %s", strerror(errno));
    }
    if (job->opts.head_set && job->opts.head_rows < job->rows && (st = h5shuf__head_bound(job)) != H5SHUF_OK)
        return st;
    struct h5shuf_plan_in pin = {
        .rows = job->rows,
        .row_bytes = job->row_bytes,
        .ndatasets = job->nds,
        .mem_limit_bytes = job->opts.mem_limit_bytes,
        .band_bytes = h5shuf__writer_bytes(job),
        .slab_align_rows = job->ds[0].chunk_rows,
        .debug_pile_bound_rows = job->opts.debug_pile_bound_rows,
        .threads = job->opts.threads,
        .no_pipeline = job->nvlen > 0,
        .pile_rows = job->out_rows,
        .row_var = job->vlen_var,
    };
    if (!pin.threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        pin.threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    for (size_t d = 0; job->nvlen && d < job->nds; d++) /* vlen rows: plan by bytes too */
        pin.mem_row_bytes += job->ds[d].row_bytes;
    memset(&job->plan, 0, sizeof job->plan);
    st = h5shuf__plan_make(&pin, &job->plan, &job->err);
    if (st != H5SHUF_OK) {
        /* Say which datasets the rows come from. */
        char msg[H5SHUF_ERRMSG_MAX];
        memcpy(msg, job->err.msg, sizeof msg);
        int n = snprintf(job->err.msg, sizeof job->err.msg, "%s:%s: ", job->inputs[0].spec.file, job->ds[0].in_path);
        if (n > 0 && (size_t)n < sizeof job->err.msg) {
            size_t len = strnlen(msg, sizeof job->err.msg - (size_t)n - 1);
            memcpy(job->err.msg + n, msg, len);
            job->err.msg[(size_t)n + len] = '\0';
        }
        return st;
    }
    job->plan.seed = job->seed;
    if (job->mode == H5SHUF_MODE_GATHER && (st = h5shuf__piles_check(job)) != H5SHUF_OK)
        return st;
    if ((st = plan_disk(job)) != H5SHUF_OK)
        return st;
    job->planned = 1;
    return H5SHUF_OK;
}

int h5shuf_job_plan(h5shuf_job *job, h5shuf_plan *plan)
{
    h5shuf__err_clear(job);
    if (job->planned) {
        if (plan)
            *plan = job->plan;
        return H5SHUF_OK;
    }
    struct h5shuf_quiet q;
    h5shuf__quiet_begin(&q);
    int st = make_plan(job);
    h5shuf__quiet_end(&q);
    if (st == H5SHUF_OK && plan)
        *plan = job->plan;
    return st;
}

/* Is any pile over the bound (rows, or bytes of vlen rows)? */
static int any_oversize(const h5shuf_job *job, const struct h5shuf_scratch *sc)
{
    for (size_t j = 0; j < sc->npiles; j++)
        if (h5shuf__pile_oversize(job, &sc->piles[j]))
            return 1;
    return 0;
}

int h5shuf__scatter_all(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    int st = h5shuf__scatter(job, sc);
    if (job->opts.on_oversize == H5SHUF_OVERSIZE_RESTART) {
        while (st == H5SHUF_OK && any_oversize(job, sc)) {
            if (job->plan.restarts == RESTARTS_MAX)
                return h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "piles still oversize after %d restarts", RESTARTS_MAX);
            /* More piles: at least twice as many, and enough for the bound's own target. */
            uint64_t target = h5shuf__pile_target_for_bound(job->plan.pile_bound_rows);
            uint64_t m = job->out_rows / (target ? target : 1) + 1;
            if (m < 2 * job->plan.piles)
                m = 2 * job->plan.piles;
            /* Pass 1 keeps a buffer of at least one row per pile: when M piles no longer fit the budget,
             * split the oversize piles instead (the output is the same either way). */
            if (h5shuf__plan_slab_bytes(&job->plan) + h5shuf__plan_pass1_pile_bytes(&job->plan, m) >
                job->plan.mem_limit_bytes)
                return h5shuf__split_oversize(job, sc);
            job->plan.piles = m;
            job->plan.pile_buffer_rows = h5shuf__plan_pile_buffer_rows(&job->plan, m);
            job->plan.restarts++;
            st = h5shuf__scratch_reset(job, sc);
            if (st == H5SHUF_OK)
                st = h5shuf__scatter(job, sc);
        }
        return st;
    }
    if (st == H5SHUF_OK && any_oversize(job, sc))
        st = h5shuf__split_oversize(job, sc);
    return st;
}

int h5shuf__run_prepare(h5shuf_job *job)
{
    int st = job->planned ? H5SHUF_OK : make_plan(job);
    if (st == H5SHUF_OK)
        st = h5shuf__outputs_check(job);
    if (st == H5SHUF_OK && !job->opts.debug_skip_space_check)
        st = check_disk(job);
    if (st == H5SHUF_OK && !job->cio && (st = h5shuf__chunkio_create(job->plan.threads, &job->cio)) != H5SHUF_OK)
        h5shuf__fail(&job->err, st, "out of memory for %u threads", job->plan.threads);
    return st; /* the public entry point frees job->cio when the run ends */
}

/* The one-shot shuffle: the outputs are made first (their bytes follow from the sequence of HDF5 calls on
 * them, which a gather repeats exactly), then pass 1 into the scratch file and pass 2 into the outputs. */
static int run(h5shuf_job *job)
{
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID};
    if (job->piles_path)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a job with a pile file runs with h5shuf_run_scatter or h5shuf_run_gather");
    int st = h5shuf__run_prepare(job);
    if (st == H5SHUF_OK)
        st = h5shuf__outputs_create(job);
    if (st == H5SHUF_OK)
        st = h5shuf__scratch_create(job, job->scratch_dir, &sc);
    job->temp_file[1] = sc.path;
    if (st == H5SHUF_OK && job->out_rows > 0) {
        st = h5shuf__scatter_all(job, &sc);
        hsize_t size = 0;
        if (st == H5SHUF_OK && H5Fget_filesize(sc.file, &size) >= 0)
            job->plan.scratch_bytes = size;
        if (st == H5SHUF_OK)
            st = h5shuf__gather(job, &sc);
        st = h5shuf__outputs_close(job, st);
    }
    job->temp_file[1] = NULL;
    h5shuf__scratch_destroy(&sc);
    return h5shuf__outputs_finish(job, st);
}

int h5shuf__public_run(h5shuf_job *job, int (*fn)(h5shuf_job *job))
{
    h5shuf__err_clear(job);
    struct h5shuf_quiet q;
    h5shuf__quiet_begin(&q);
    int st = fn(job);
    h5shuf__chunkio_free(job->cio); /* made by h5shuf__run_prepare */
    job->cio = NULL;
    h5shuf__quiet_end(&q);
    return st;
}

int h5shuf_run(h5shuf_job *job)
{
    return h5shuf__public_run(job, run);
}

int h5shuf__piles_scatter_setup(h5shuf_job *job)
{
    if (job->out_spec.file)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a scatter writes the pile file %s and takes no output",
                            job->piles_path);
    job->out_spec.file = strdup(job->piles_path);
    if (!job->out_spec.file)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    return H5SHUF_OK;
}

static int run_scatter(h5shuf_job *job)
{
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID};
    char cause[256];
    if (!job->piles_path || (job->planned ? job->mode != H5SHUF_MODE_SCATTER : job->ninputs == 0))
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a scatter needs inputs and a pile file (h5shuf_job_set_piles)");
    int st = h5shuf__run_prepare(job);
    if (st == H5SHUF_OK) {
        /* The pile file is written as .NAME.h5shuf-XXXXXX beside its final name, like an output. */
        const char *out = job->out_spec.file;
        const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
        size_t len = strlen(job->scratch_dir) + strlen(base) + 32;
        char *tmpl = malloc(len);
        if (!tmpl) {
            st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        } else {
            snprintf(tmpl, len, "%s/.%s.h5shuf-XXXXXX", job->scratch_dir, base);
            st = h5shuf__scratch_create_at(job, tmpl, &sc);
            free(tmpl);
        }
    }
    job->temp_file[0] = job->temp_file[1] = sc.path;
    if (st == H5SHUF_OK) {
        /* mkstemp makes the file 0600; give it the mode a new file gets (0666 less the umask). */
        mode_t mask = umask(0);
        umask(mask);
        chmod(sc.path, 0666 & ~mask);
        st = h5shuf__scatter_all(job, &sc);
    }
    if (st == H5SHUF_OK)
        st = h5shuf__piles_renumber(job, &sc);
    if (st == H5SHUF_OK)
        st = h5shuf__piles_write_meta(job, &sc);
    if (st == H5SHUF_OK && H5Fflush(sc.file, H5F_SCOPE_LOCAL) < 0)
        st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", job->out_spec.file,
                          h5shuf__hdf5_cause(cause, sizeof cause));
    hsize_t size = 0;
    if (st == H5SHUF_OK && H5Fget_filesize(sc.file, &size) >= 0)
        job->plan.scratch_bytes = size;
    if (st == H5SHUF_OK) {
        job->plan.piles = sc.npiles;
        herr_t r = H5Fclose(sc.file);
        sc.file = H5I_INVALID_HID;
        if (r < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", job->out_spec.file,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK)
        st = h5shuf__output_commit(job, sc.path);
    job->temp_file[0] = job->temp_file[1] = NULL;
    if (st == H5SHUF_OK) { /* in place: keep it */
        free(sc.path);
        sc.path = NULL;
    }
    h5shuf__scratch_destroy(&sc);
    return st;
}

int h5shuf_run_scatter(h5shuf_job *job)
{
    return h5shuf__public_run(job, run_scatter);
}

static int run_gather(h5shuf_job *job)
{
    if (!job->piles_path || (job->planned ? job->mode != H5SHUF_MODE_GATHER : job->ninputs != 0))
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a gather needs a pile file (h5shuf_job_set_piles), an output and no inputs");
    int st = h5shuf__run_prepare(job);
    if (st == H5SHUF_OK)
        st = h5shuf__outputs_create(job);
    if (st == H5SHUF_OK && job->out_rows > 0) {
        struct h5shuf_scratch sc = {.path = job->piles_path, .file = job->pf->file, .piles = job->pf->piles,
                                    .npiles = job->pf->npiles};
        st = h5shuf__gather(job, &sc);
        st = h5shuf__outputs_close(job, st);
    }
    return h5shuf__outputs_finish(job, st);
}

int h5shuf_run_gather(h5shuf_job *job)
{
    return h5shuf__public_run(job, run_gather);
}
