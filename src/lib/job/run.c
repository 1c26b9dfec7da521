/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * run.c - the runs that string the stages together, as the job was planned (jobplan.c): h5shuf_run (pass
 * 1, oversize, pass 2; or the direct path), h5shuf_run_scatter (pass 1 into a pile file) and
 * h5shuf_run_gather (pass 2 from it).
 *
 * Each stage is handed what it uses (the inputs, the datasets, the plan, the scratch file, the output
 * files, and a context with the error, the codec threads and the progress callback); the serial run is
 * pass 1 over all rows [0, N) composed with pass 2 over all piles.
 *
 * A run never leaves anything half-done behind: the output is written as ".NAME.h5shuf-PID-XXXXXX" in the
 * output's directory, through its descriptor (tempfile.h), and linked into place only after the file is
 * closed without error; the scratch file is removed on every return.  Inputs are opened read-only.  HDF5's automatic error printing is switched
 * off for the duration of a call and restored after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "ckpttargets.h"
#include "chunkio.h"
#include "ctx.h"
#include "direct.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "filters.h"
#include "gather.h"
#include "h5err.h"
#include "job.h"
#include "pilefile.h"
#include "plan.h"
#include "piles.h"
#include "pool.h"
#include "scatter.h"
#include "spanread.h"
#include "targets.h"
#include "tempfile.h"
#include "verify.h"
#include "vlen.h" /* h5shuf__vlen_read_limit */
#include "writer.h"

/* The context the job's stages run in. */
static struct h5shuf_ctx ctx_of(h5shuf_job *job)
{
    struct h5shuf_ctx cx = {&job->err, job->cio, {job->opts.progress, job->opts.progress_user}};
    return cx;
}

/*-*************************************
*  The runs: preparing, one pass, two passes
***************************************/

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

/* Plan (if not done), refuse an output that is an input or exists (without force), check free space,
 * and start the codec threads (the public entry point stops them when the run ends). */
static int run_prepare(h5shuf_job *job)
{
    int st = job->planned ? H5SHUF_OK : h5shuf__job_make_plan(job);
    if (st == H5SHUF_OK)
        st = h5shuf__targets_check(&job->out, &job->in, job->mode == H5SHUF_MODE_GATHER ? job->piles_path : NULL,
                                   job->opts.force, &job->err);
    if (st == H5SHUF_OK) /* an interrupted run's leftovers, before the free space is checked (jobfiles.c) */
        st = h5shuf__job_leftovers_clear(job);
    if (st == H5SHUF_OK && !job->debug_skip_space_check)
        st = check_disk(job);
    if (st == H5SHUF_OK && !job->cio && (st = h5shuf__chunkio_create(job->plan.threads, &job->cio)) != H5SHUF_OK)
        h5shuf__fail(&job->err, st, "out of memory for %u threads", job->plan.threads);
    return st;
}

/* Bytes of the span of one dataset's stored chunks pass 1 reads ahead for a slab of inputs larger than the
 * page cache (spanread.h), when the budget has room for one a dataset beside pass 1's buffers; else 0.
 * A span holds the slab's chunks, a chunk more at either end, and a sixteenth more for chunks that do not
 * compress (codec.c's bound). */
static uint64_t span_bytes(const h5shuf_job *job)
{
    const h5shuf_plan *p = &job->plan;
    if (!job->beyond_cache || !h5shuf__plan_pipelined(p) || job->one_pass)
        return 0;
    h5shuf_u128 cap = 0;
    for (size_t d = 0; d < job->dsets.n; d++) {
        h5shuf_u128 b = (h5shuf_u128)(p->slab_rows + 2 * job->dsets.ds[d].in_chunk_rows_max) * job->dsets.ds[d].row_bytes;
        cap = b > cap ? b : cap;
    }
    cap += cap / 16 + ((uint64_t)1 << 16);
    /* pass 1's buffers: its slabs and pile buffers (pass 2's piles come after the spans are freed) */
    const uint64_t pass1 = h5shuf__plan_slab_bytes(p) + h5shuf__plan_pass1_pile_bytes(p, p->piles);
    const uint64_t held = pass1 < p->mem_limit_bytes ? p->mem_limit_bytes - pass1 : 0;
    return cap <= SIZE_MAX / 2 && h5shuf__spanread_bytes(job->dsets.n, (size_t)cap) <= held ? (uint64_t)cap : 0;
}

/* Pass 1 over all rows of the inputs. */
static struct h5shuf_pass1 pass1_of(h5shuf_job *job)
{
    const struct h5shuf_pass1 p1 = {
        .inputs = &job->in,
        .seed = job->seed,
        .strata = job->strata,
        .first_row = 0,
        .end_row = job->in.rows,
        .total_rows = job->in.rows,
        .pile_rows = job->out_rows,
        .head_bound = job->out_rows < job->in.rows ? &job->head_bound : NULL,
        .plan = &job->plan,
        .on_oversize = job->opts.on_oversize,
        .span_bytes = span_bytes(job),
    };
    return p1;
}

/* Pass 1 into sc, with the oversize handling (and a resumable run's checkpoints). */
static int pass1(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    struct h5shuf_pass1 p1 = pass1_of(job);
    h5shuf__ckpt_pass1_hooks(job, sc, &p1);
    return h5shuf__pass1(&cx, &p1, sc);
}

int h5shuf__job_direct(h5shuf_job *job, uint64_t from, uint64_t end)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    struct h5shuf_writer w;
    int st = h5shuf__writer_init(&w, &job->of, from, job->out_rows, job->band_threads, &job->err);
    const struct h5shuf_direct d = {
        .inputs = &job->in,
        .dsets = &job->dsets,
        .rows = &job->direct_rows,
        .plan = &job->direct_plan,
        .seed = job->seed,
        .strata = job->strata,
        .head_bound = job->out_rows < job->in.rows ? &job->head_bound : NULL,
        .put_first = from,
        .put_end = end,
    };
    /* progress about every band's worth of bytes, whichever dataset is first */
    w.progress_rows = job->dsets.row_bytes < H5SHUF_BAND_BYTES_MAX ? H5SHUF_BAND_BYTES_MAX / job->dsets.row_bytes : 1;
    if (st == H5SHUF_OK)
        st = h5shuf__direct(&cx, &d, &job->out, &w);
    if (st == H5SHUF_OK)
        st = h5shuf__writer_flush(&cx, &w);
    if (st == H5SHUF_OK)
        st = h5shuf__writer_check_end(&w, end ? end : job->out_rows, &job->err);
    h5shuf__writer_free(&w);
    return st;
}

/* The output files (created) filled through a writer, then closed: by pass 2 over all piles of sc (their
 * rows loaded by load(load_user, ...) when it is not NULL, h5shuf_pass2.load; release: sc is this run's
 * own scratch file, whose piles' blocks are given back as they are loaded, h5shuf_pass2.release), or (sc
 * NULL) by the direct path. */
static int fill_outputs(h5shuf_job *job, const struct h5shuf_scratch *sc, int release,
                        int (*load)(void *user, size_t j, unsigned char **buf, struct h5shuf_err *err), void *load_user)
{
    const uint64_t from = h5shuf__ckpt_first_row(job); /* a resumed run's rows before it are written */
    if (!sc)
        return h5shuf__targets_close(&job->out, h5shuf__job_direct(job, from, 0), &job->err);
    const struct h5shuf_ctx cx = ctx_of(job);
    struct h5shuf_writer w;
    int st = h5shuf__writer_init(&w, &job->of, from, job->out_rows, job->band_threads, &job->err);
    if (st == H5SHUF_OK) {
        struct h5shuf_pass2 p2 = {
            .sc = sc,
            .piles = sc->piles,
            .npiles = sc->npiles,
            .seed = job->seed,
            .strata = job->strata,
            .pipelined = h5shuf__plan_pipelined(&job->plan),
            .mem_limit_bytes = job->opts.mem_limit_bytes,
            .band_bytes = job->band_bytes,
            .put_end = UINT64_MAX,
            .release = release,
            .advise = job->beyond_cache,
            .load = load,
            .load_user = load_user,
        };
        h5shuf__ckpt_pass2_from(job, sc, &p2);
        st = h5shuf__gather(&cx, &p2, &job->out, &w);
    }
    if (st == H5SHUF_OK)
        st = h5shuf__writer_flush(&cx, &w);
    if (st == H5SHUF_OK)
        st = h5shuf__writer_check_end(&w, job->out_rows, &job->err);
    h5shuf__writer_free(&w);
    return h5shuf__targets_close(&job->out, st, &job->err);
}

int h5shuf__job_scratch_open(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    int st = h5shuf__scratch_reserve(sc, job->scratch_dir, "h5shuf-scratch-", job->out_spec.file, "-", &job->dsets,
                                     &job->scratch_filters, &job->scratch_id_filters, &job->err);
    job->temp_file[1] = sc->path;
    if (st == H5SHUF_OK)
        st = h5shuf__progress(&cx.progress, &job->err, H5SHUF_PHASE_CREATE, job->out.n + 1, job->out.n + 1);
    return st == H5SHUF_OK ? h5shuf__scratch_open(sc, H5P_DEFAULT, &job->err) : st;
}

/* The two passes through a scratch file, into the output files (made).  A resumable run's scratch is in
 * its state directory, and a resumed one's pass 1 may be done already or go on from a checkpoint. */
static int two_pass(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID};
    int done = 0;
    int st = job->ckpt.rs.on ? h5shuf__ckpt_scratch(job, &cx, &sc, &done) : h5shuf__job_scratch_open(job, &sc);
    sc.raw_unless_costly = job->scratch_adaptive;
    if (st == H5SHUF_OK && job->out_rows > 0) {
        if (!done)
            st = pass1(job, &sc);
        if (st == H5SHUF_OK && !done)
            st = h5shuf__ckpt_pass1_done(job, &sc);
        hsize_t size = 0;
        if (st == H5SHUF_OK && H5Fget_filesize(sc.file, &size) >= 0)
            job->plan.scratch_bytes = size;
        if (st == H5SHUF_OK)
            st = fill_outputs(job, &sc, 1, NULL, NULL);
    }
    job->temp_file[1] = NULL;
    st = h5shuf__job_disk_failed(job, st, &sc.tf); /* (a full disk: said with the room needed, while the files are there) */
    if (h5shuf__ckpt_keeps(job, st))
        h5shuf__ckpt_scratch_keep(job, &sc);
    else
        h5shuf__ckpt_scratch_destroy(job, &sc);
    return st;
}

/* The one pass (job->one_pass): pass 2 of one pile holding every row, its load the read of the inputs. */
struct one_pass_load {
    const struct h5shuf_ctx *cx;
    const struct h5shuf_pass1 *p1;
    const struct h5shuf_datasets *dsets;
};

static int load_inputs(void *user, size_t j, unsigned char **buf, struct h5shuf_err *err)
{
    (void)j;
    (void)err; /* the context's */
    const struct one_pass_load *u = user;
    return h5shuf__pass1_load(u->cx, u->p1, u->dsets, buf);
}

static int run_one_pass(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    const struct h5shuf_pass1 p1 = pass1_of(job);
    struct one_pass_load u = {&cx, &p1, &job->dsets};
    struct h5shuf_pile all = {.range = {0, (h5shuf_u128)1 << 64}, .number = 0, .rows = job->in.rows};
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID, .piles = &all, .npiles = 1, .dsets = &job->dsets};
    return fill_outputs(job, &sc, 0, load_inputs, &u);
}

/*-*************************************
*  A run, a scatter, a gather
***************************************/

/* --check: the finished single output (through its temporary file's descriptor) against the inputs. */
static int check_output(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    struct h5shuf_target *tg = &job->out.v[0];
    int st = h5shuf__tempfile_unpark(&tg->tf, tg->path, &job->err);
    return st == H5SHUF_OK ? h5shuf__verify_file(job->cio, &job->in, &job->dsets, h5shuf__tempfile_hdf5_name(&tg->tf),
                                                 tg->path, job->opts.mem_limit_bytes, &cx.progress, &job->err)
                           : st;
}

/* The one-shot shuffle: the outputs are made first (their bytes follow from the sequence of HDF5 calls on
 * them, which a gather repeats exactly), then the two passes through the scratch file, or the direct path. */
static int run(h5shuf_job *job)
{
    if (job->piles_path)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a job with a pile file runs with h5shuf_run_scatter or h5shuf_run_gather");
    const struct h5shuf_ctx cx = ctx_of(job);
    if ((job->planned || h5shuf__job_make_plan(job) == H5SHUF_OK) && job->ckpt.finished)
        return h5shuf__ckpt_end(job, H5SHUF_OK); /* a resume of a run that had finished: its state removed */
    int st = job->err.status ? job->err.status : run_prepare(job);
    const int direct = job->plan.strategy == H5SHUF_STRATEGY_DIRECT;
    const int scratch = !direct && !job->one_pass;
    (void)scratch; /* the scratch file is named after the outputs (progress counts it) */
    if (st == H5SHUF_OK) /* (a resumed run takes back the files the interrupted run made) */
        st = h5shuf__ckpt_targets(job, &cx);
    if (st == H5SHUF_OK && job->out_rows > 0 && !scratch)
        st = direct ? fill_outputs(job, NULL, 0, NULL, NULL) : run_one_pass(job);
    else if (st == H5SHUF_OK && scratch)
        st = two_pass(job);
    if (st == H5SHUF_OK && job->opts.check) /* before the rename: a failed check leaves nothing in place */
        st = check_output(job);
    if (job->ckpt.rs.on) /* (a kill here finds every output written: a resume only places them) */
        H5SHUF_KILL_POINT();
    st = h5shuf__job_disk_failed(job, st, NULL);
    job->out.keep_files = h5shuf__ckpt_keeps(job, st); /* interrupted: the outputs are the state kept */
    st = h5shuf__targets_place(&job->out, st, job->opts.force, job->out_mode, &job->err);
    h5shuf__ckpt_give_up(job, st); /* (before the outputs it names go) */
    h5shuf__targets_settle(&job->out, st == H5SHUF_OK);
    return h5shuf__ckpt_end(job, st);
}

/* Close a finished pile file (flushed first, so a full disk fails here), recording its size. */
static int close_pilefile(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    char cause[256];
    hsize_t size = 0;
    if (H5Fflush(sc->file, H5F_SCOPE_LOCAL) < 0)
        return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", job->out_spec.file,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    if (H5Fget_filesize(sc->file, &size) >= 0)
        job->plan.scratch_bytes = size;
    job->plan.piles = sc->npiles;
    herr_t r = H5Fclose(sc->file);
    sc->file = H5I_INVALID_HID;
    if (r < 0)
        return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", job->out_spec.file,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

/* A scatter: pass 1 and the oversize handling into the pile file, written as .NAME.h5shuf-XXXXXX beside
 * its final name (like an output), renumbered and recorded, then moved into place. */
static int run_scatter(h5shuf_job *job)
{
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID};
    if (!job->piles_path || (job->planned ? job->mode != H5SHUF_MODE_SCATTER : job->in.n == 0))
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a scatter needs inputs and a pile file (h5shuf_job_set_piles)");
    if ((job->planned || h5shuf__job_make_plan(job) == H5SHUF_OK) && job->ckpt.finished)
        return h5shuf__ckpt_end(job, H5SHUF_OK); /* a resume of a scatter that had finished: its state removed */
    int st = job->err.status ? job->err.status : run_prepare(job);
    const struct h5shuf_ctx cx = ctx_of(job);
    int done = 0; /* a resumed scatter: 1, pass 1 done; 2, the pile file written too */
    if (st == H5SHUF_OK && job->ckpt.rs.on) { /* named in the journal, beside its final name */
        st = h5shuf__ckpt_scratch(job, &cx, &sc, &done);
    } else if (st == H5SHUF_OK) {
        st = h5shuf__scratch_reserve(&sc, job->scratch_dir, ".", job->out_spec.file, ".h5shuf-", &job->dsets,
                                     &job->scratch_filters, &job->scratch_id_filters, &job->err);
        job->temp_file[0] = job->temp_file[1] = sc.path;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(&cx.progress, &job->err, H5SHUF_PHASE_CREATE, 1, 1);
        if (st == H5SHUF_OK)
            st = h5shuf__scratch_open(&sc, H5P_DEFAULT, &job->err);
    }
    if (st == H5SHUF_OK && !done)
        st = pass1(job, &sc);
    if (st == H5SHUF_OK && !done)
        st = h5shuf__ckpt_pass1_done(job, &sc);
    const struct h5shuf_pilefile_meta meta = {&job->in, &job->dsets, job->seed, &job->plan,
                                              job->compression, job->chunk_shape, job->index_path};
    if (st == H5SHUF_OK && done < 2)
        st = h5shuf__pilefile_finish(&sc, &meta, &job->err);
    if (st == H5SHUF_OK && done < 2)
        st = close_pilefile(job, &sc);
    if (st == H5SHUF_OK && done < 2) /* (a resumable run's: committed, the bytes placed below) */
        st = h5shuf__ckpt_scatter_done(job, &sc);
    struct h5shuf_tempfile *tf = &sc.tf;
    const char *out = job->out_spec.file;
    if (st == H5SHUF_OK) /* in place: nothing left for h5shuf__scratch_destroy to remove */
        st = h5shuf__tempfile_commit_all(&tf, &out, 1, job->out_mode, job->opts.force, &job->err);
    job->temp_file[0] = job->temp_file[1] = NULL;
    st = h5shuf__job_disk_failed(job, st, &sc.tf);
    if (h5shuf__ckpt_keeps(job, st))
        h5shuf__ckpt_scratch_keep(job, &sc);
    else
        h5shuf__ckpt_scratch_destroy(job, &sc);
    return h5shuf__ckpt_end(job, st);
}

/* A gather: the output files made as the one-shot run makes them, and pass 2 from the pile file. */
static int run_gather(h5shuf_job *job)
{
    if (!job->piles_path || (job->planned ? job->mode != H5SHUF_MODE_GATHER : job->in.n != 0))
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "a gather needs a pile file (h5shuf_job_set_piles), an output and no inputs");
    const struct h5shuf_ctx cx = ctx_of(job);
    if ((job->planned || h5shuf__job_make_plan(job) == H5SHUF_OK) && job->ckpt.finished)
        return h5shuf__ckpt_end(job, H5SHUF_OK); /* a resume of a gather that had finished: its state removed */
    int st = job->err.status ? job->err.status : run_prepare(job);
    if (st == H5SHUF_OK) /* (a resumed gather takes back the files the interrupted one made) */
        st = h5shuf__ckpt_targets(job, &cx);
    if (st == H5SHUF_OK && job->out_rows > 0) {
        struct h5shuf_scratch sc = {.path = job->piles_path, .file = job->pf->file, .piles = job->pf->piles,
                                    .npiles = job->pf->npiles, .dsets = &job->dsets, .filters = job->scratch_filters,
                                    .id_filters = job->scratch_id_filters};
        st = fill_outputs(job, &sc, 0, NULL, NULL); /* the user's pile file: nothing released */
    }
    st = h5shuf__job_disk_failed(job, st, NULL);
    job->out.keep_files = h5shuf__ckpt_keeps(job, st);
    st = h5shuf__targets_place(&job->out, st, job->opts.force, job->out_mode, &job->err);
    h5shuf__ckpt_give_up(job, st); /* (before the outputs it names go) */
    h5shuf__targets_settle(&job->out, st == H5SHUF_OK);
    return h5shuf__ckpt_end(job, st);
}

/*-*************************************
*  The public calls
***************************************/

/* Around each public run: a clean error and HDF5's printing off before it; after it, whatever it
 * returned (st, returned again), the job's chunk I/O released and HDF5's printing as it was. */
static void public_begin(h5shuf_job *job, struct h5shuf_quiet *q)
{
    h5shuf__err_reset(&job->err);
    h5shuf__quiet_begin(q);
}

static int public_end(h5shuf_job *job, struct h5shuf_quiet *q, int st)
{
    h5shuf__chunkio_free(job->cio); /* made by run_prepare */
    job->cio = NULL;
    h5shuf__quiet_end(q);
    return st;
}

int h5shuf_run(h5shuf_job *job)
{
    struct h5shuf_quiet q;
    public_begin(job, &q);
    const int st = run(job);
    return public_end(job, &q, st);
}

int h5shuf_run_scatter(h5shuf_job *job)
{
    struct h5shuf_quiet q;
    public_begin(job, &q);
    const int st = run_scatter(job);
    return public_end(job, &q, st);
}

int h5shuf_run_gather(h5shuf_job *job)
{
    struct h5shuf_quiet q;
    public_begin(job, &q);
    const int st = run_gather(job);
    return public_end(job, &q, st);
}

/*-*************************************
*  Verification
***************************************/

/* h5shuf_verify: the inputs opened and described as a run does, the output checked against them. */
static int verify(h5shuf_job *job)
{
    if (job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "verify needs a job that was not planned");
    if (job->opts_bad[0]) /* options h5shuf_job_create could not take (abi.c) */
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s", job->opts_bad);
    unsigned threads = h5shuf__pool_threads_for(job->opts.threads); /* decompression as in a run */
    int st = h5shuf__chunkio_create(threads, &job->cio);
    if (st != H5SHUF_OK)
        return h5shuf__fail(&job->err, st, "out of memory for %u threads", threads);
    if ((st = h5shuf__filters_register()) != H5SHUF_OK)
        return h5shuf__fail(&job->err, st, "cannot register h5shuf's filters with HDF5");
    if (!job->out_spec.file || job->in.n == 0)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "verify needs inputs and an output");
    /* the output's set (its files among the last inputs, or beside it), the weights the run took */
    job->verify_text[0] = '\0';
    struct h5shuf_outset set;
    st = h5shuf__outset_find(&set, job->out_spec.file, &job->in, &job->err);
    if (st == H5SHUF_OK)
        st = h5shuf__outset_weights(&set, &job->in, &job->err);
    job->in.allow_external = job->opts.allow_external;
    job->dsets.vlen_read_limit = h5shuf__vlen_read_limit(job->opts.mem_limit_bytes);
    if (st == H5SHUF_OK)
        st = h5shuf__inputs_open(&job->in, &job->out_spec, &job->dsets, &job->err);
    const struct h5shuf_progress progress = {job->opts.progress, job->opts.progress_user};
    if (st == H5SHUF_OK)
        st = h5shuf__verify_set(job->cio, &job->in, &job->dsets, &set, job->opts.mem_limit_bytes, &progress,
                                job->verify_text, sizeof job->verify_text, &job->err);
    h5shuf__outset_free(&set);
    return st;
}

int h5shuf_verify(h5shuf_job *job)
{
    struct h5shuf_quiet q;
    public_begin(job, &q);
    const int st = verify(job);
    return public_end(job, &q, st);
}
