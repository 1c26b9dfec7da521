/*
 * job.c - the public entry points: a job's inputs, output and options, its plan, and the run that
 * strings the stages together.
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
#include <sys/statvfs.h>
#include <unistd.h>

#include <zstd.h>

#include "filter_builtin.h"
#include "filter_zstd.h"
#include "internal.h"

#define DEFAULT_MEM_LIMIT_BYTES (UINT64_C(1) << 30)
/* Restarts of pass 1 before giving up (each at least doubles M). */
#define RESTARTS_MAX 20

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

const char *h5shuf_zstd_version(void)
{
    return ZSTD_versionString();
}

int h5shuf__zstd_register(void)
{
    /* Ours replaces any 32015 filter registered before: same stream, same cd_values. */
    return H5Zregister(&h5shuf_zstd_class) < 0 ? H5SHUF_EHDF5 : H5SHUF_OK;
}

int h5shuf_register_zstd(void)
{
    return h5shuf__zstd_register();
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
    job->cur_file = H5I_INVALID_HID;
    return job;
}

void h5shuf_job_free(h5shuf_job *job)
{
    if (!job)
        return;
    h5shuf__inputs_close(job);
    for (size_t f = 0; f < job->ninputs; f++) {
        h5shuf__spec_clear(&job->inputs[f].spec);
        free(job->inputs[f].open_path);
    }
    free(job->inputs);
    h5shuf__spec_clear(&job->out_spec);
    free(job->tmpdir);
    free(job->compression);
    free(job->chunk_shape);
    free(job->scratch_compression);
    free(job->index_path);
    free(job->source_index_path);
    free(job->split);
    free(job->mixing_counts);
    h5shuf__outputs_free(job);
    free(job->scratch_dir);
    h5shuf__piles_free(job);
    free(job->piles_path);
    free(job);
}

const char *h5shuf_job_temp_file(const h5shuf_job *job, int which)
{
    if (job && which >= 2 && (size_t)which - 1 < job->ntargets)
        return job->targets[which - 1].tmp_path;
    return job && (which == 0 || which == 1) ? job->temp_file[which] : NULL;
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
    return job->planned && index < job->nds ? job->ds[index].in_path : NULL;
}

void h5shuf__err_clear(h5shuf_job *job)
{
    job->err.status = H5SHUF_OK;
    job->err.msg[0] = '\0';
}

int h5shuf__input_append(h5shuf_job *job, const char *spec)
{
    struct h5shuf_input *v = realloc(job->inputs, (job->ninputs + 1) * sizeof *v);
    if (!v)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    job->inputs = v;
    struct h5shuf_input *in = &v[job->ninputs];
    memset(in, 0, sizeof *in);
    in->file = H5I_INVALID_HID;
    int st = h5shuf__spec_parse(spec, &in->spec, &job->err);
    if (st == H5SHUF_OK)
        job->ninputs++;
    return st;
}

int h5shuf_job_add_input(h5shuf_job *job, const char *spec)
{
    h5shuf__err_clear(job);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    int st = h5shuf__input_append(job, spec);
    return st;
}

int h5shuf_job_set_output(h5shuf_job *job, const char *spec)
{
    h5shuf__err_clear(job);
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is already planned");
    h5shuf__spec_clear(&job->out_spec);
    return h5shuf__spec_parse(spec, &job->out_spec, &job->err);
}

int h5shuf__progress(h5shuf_job *job, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    if (job->opts.progress && job->opts.progress(job->opts.progress_user, phase, done, total) != 0)
        return h5shuf__fail(&job->err, H5SHUF_ECANCELED, "canceled");
    return H5SHUF_OK;
}

void h5shuf__quiet_begin(struct h5shuf_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void h5shuf__quiet_end(const struct h5shuf_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

char *h5shuf__dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Free bytes for unprivileged users on dir's filesystem, and its device; 0 when unknown. */
static uint64_t free_bytes(const char *dir, dev_t *dev)
{
    struct statvfs v;
    struct stat st;
    *dev = stat(dir, &st) == 0 ? st.st_dev : 0;
    return statvfs(dir, &v) == 0 ? (uint64_t)v.f_bavail * v.f_frsize : 0;
}

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
    p->scratch_free_bytes = free_bytes(job->scratch_dir, &ds);
    p->output_free_bytes = free_bytes(out_dir, &dout);
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
    st = h5shuf__register_builtin_filters();
    if (st != H5SHUF_OK)
        return h5shuf__fail(&job->err, st, "cannot register the built-in filters (zstd, lzf, bitshuffle) with HDF5");
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
