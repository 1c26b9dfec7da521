/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dist.c - the distributed run (docs/design.md section 5), composed from the serial run's stages.
 *
 * Rows.  Process r of P scatters the global rows [r*N/P, (r+1)*N/P) into piles of the same key ranges as
 * every other (pass 1, scatter.c), in its own scratch file: node-local scratch works.  The oversize
 * handling decides from the piles' rows summed over all processes (h5shuf_pass1.sums), so every process
 * splits or restarts the same way, and the piles are the serial run's.  The pile sizes summed give each
 * pile's first output row.
 *
 * Outputs.  Each process puts a consecutive range of the output order: K shards (or splits) are dealt out
 * whole, shards [q*K/P, (q+1)*K/P) to process q, each written by one process exactly as the serial run
 * writes it.  The single output is cut at multiples of every row dataset's chunk rows: process 0 writes
 * its range into the output itself, every other process into a part file in its scratch directory,
 * chunked and filtered as the output, whose stored chunks it then sends to process 0, which writes them
 * into the output with H5Dwrite_chunk.  Each chunk is thus encoded once, by the process that made it, and
 * is byte for byte the serial run's.  (Parallel HDF5 1.10 cannot write chunks directly, and writes
 * filtered data only collectively, with known bugs before 1.12: each process uses serial HDF5 on files of
 * its own.)
 *
 * Pass 2 (exchange.c) brings each pile's rows from every process to the processes that gather it; the
 * single output's parts are assembled by process 0 (assemble.c).
 *
 * Resume (checkpoint.h).  Every process journals its own share in its own state directory: its pass 1
 * at checkpoints, its PILES (applied only once every process recorded its own), its output files at
 * their commits, process 0 the assembled output.  On resuming, the processes agree (h5shuf_dist_agree):
 * pass 1 goes on at the furthest restart recorded, each from its own last PASS1 at that plan or from its
 * first row; pass 2 only when all recorded PILES, in rounds from the earliest any process still has to
 * gather (the others only send in those); the assembly again unless it was recorded; and when any
 * process had put its outputs in place, every output was written: the others place theirs.
 */
#include "dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assemble.h"
#include "checkpoint.h"
#include "chunkio.h"
#include "exchange.h"
#include "fault.h"
#include "h5err.h"
#include "job.h"
#include "piles.h"
#include "plan.h"
#include "scatter.h"
#include "targets.h"
#include "verify.h"

static struct h5shuf_ctx ctx_of(h5shuf_job *job)
{
    struct h5shuf_ctx cx = {&job->err, job->cio, {job->opts.progress, job->opts.progress_user}};
    return cx;
}

static int sums(void *user, uint64_t *v, size_t n, struct h5shuf_err *err)
{
    return h5shuf_comm_sums(user, v, n, err);
}

/*-*************************************
*  Output ranges: who writes what
***************************************/

/* The rows a cut of the single output must be a multiple of (output.h). */
static uint64_t cut_unit(const h5shuf_job *job)
{
    return h5shuf__output_cut_rows(&job->dsets, job->index_path != NULL, job->source_index_path != NULL, job->out_rows);
}

/* Do the stored chunks of some dataset's rows hold addresses in the output file: vlen rows (of their
 * payload in the global heap), rows of references (of their targets, made for the file: writer.c)? */
static int rows_hold_addresses(const h5shuf_job *job)
{
    for (size_t d = 0; d < job->dsets.n; d++)
        if (job->dsets.ds[d].vlen || h5shuf__type_has_refs(job->dsets.ds[d].ftype))
            return 1;
    return 0;
}

/* The output rows [a[q], b[q]) each process q puts, and (several targets) its targets [tlo, thi).  A
 * single output whose rows hold addresses in it (rows_hold_addresses) is put by process 0 alone, so the
 * file is written as the serial run writes it. */
static void output_ranges(const h5shuf_job *job, int P, uint64_t *a, uint64_t *b, size_t *tlo, size_t *thi)
{
    const struct h5shuf_targets *t = &job->out;
    const uint64_t rows = job->out_rows, unit = cut_unit(job);
    for (int q = 0; q < P; q++) {
        if (t->n > 1) {
            size_t k0 = (size_t)((uint64_t)q * t->n / (uint64_t)P), k1 = (size_t)((uint64_t)(q + 1) * t->n / (uint64_t)P);
            tlo[q] = k0;
            thi[q] = k1;
            a[q] = k0 < k1 ? t->v[k0].first : 0;
            b[q] = k0 < k1 ? t->v[k1 - 1].first + t->v[k1 - 1].rows : a[q];
        } else {
            tlo[q] = 0;
            thi[q] = q == 0;
            a[q] = q == 0 ? 0 : (uint64_t)((h5shuf_u128)rows * (uint64_t)q / (uint64_t)P) / unit * unit;
            b[q] = q == P - 1 ? rows : (uint64_t)((h5shuf_u128)rows * (uint64_t)(q + 1) / (uint64_t)P) / unit * unit;
            if (rows_hold_addresses(job)) { /* their chunks hold the file's addresses: process 0 writes them all */
                a[q] = q == 0 ? 0 : rows;
                b[q] = rows;
            }
        }
    }
}

/* The piles [plo, phi) holding output rows [a, b), from the piles' first rows start[0..n]. */
static void pile_range(const uint64_t *start, size_t n, uint64_t a, uint64_t b, size_t *plo, size_t *phi)
{
    *plo = *phi = 0;
    if (a >= b)
        return;
    size_t j = 0;
    while (j < n && start[j + 1] <= a)
        j++;
    *plo = j;
    while (j < n && start[j] < b)
        j++;
    *phi = j;
}


/*-*************************************
*  The distributed run
***************************************/

/* Pass 1 over this process's share of the inputs, then pass 2 and (the single output) the assembly. */
static int two_pass(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b,
                    const struct h5shuf_dist_resume *r, struct h5shuf_dist_figures *fig)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    const int P = c->size, me = c->rank;
    const uint64_t N = job->in.rows;
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID};
    int st = H5SHUF_OK, done = 0; /* done: a resumed pass 1 is finished (every process's) */
    if (job->ckpt.rs.on) {
        st = h5shuf__ckpt_pass1_agree(job, r->level, r->piles, r->cap, r->all_piles);
        if (st == H5SHUF_OK)
            st = h5shuf__ckpt_scratch(job, &cx, &sc, &done);
    } else {
        st = h5shuf__job_scratch_open(job, &sc);
    }
    struct h5shuf_pass1 p1 = {
        .inputs = &job->in,
        .seed = job->seed,
        .strata = job->strata,
        .first_row = (uint64_t)((h5shuf_u128)N * (uint64_t)me / (uint64_t)P),
        .end_row = (uint64_t)((h5shuf_u128)N * (uint64_t)(me + 1) / (uint64_t)P),
        .total_rows = (uint64_t)((h5shuf_u128)N * (uint64_t)(me + 1) / (uint64_t)P) -
                      (uint64_t)((h5shuf_u128)N * (uint64_t)me / (uint64_t)P), /* (its share: progress) */
        .pile_rows = job->out_rows,
        .head_bound = job->out_rows < N ? &job->head_bound : NULL,
        .plan = &job->plan,
        .on_oversize = job->opts.on_oversize,
        .sums = sums,
        .sums_user = c,
    };
    h5shuf__ckpt_pass1_hooks(job, &sc, &p1);
    if (st == H5SHUF_OK && !done)
        st = h5shuf__pass1(&cx, &p1, &sc);
    if (st == H5SHUF_OK && !done)
        st = h5shuf__ckpt_pass1_done(job, &sc);
    struct h5shuf_pile *g = NULL;
    uint64_t *start = NULL;
    size_t *plo = calloc((size_t)P, sizeof *plo), *phi = calloc((size_t)P, sizeof *phi);
    if (st == H5SHUF_OK && (!plo || !phi))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK)
        st = h5shuf__piles_global(&cx, &p1, sc.piles, sc.npiles, &g);
    if (st == H5SHUF_OK && !(start = malloc((sc.npiles + 1) * sizeof *start)))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) {
        start[0] = 0;
        for (size_t j = 0; j < sc.npiles; j++)
            start[j + 1] = start[j] + g[j].rows;
        if (start[sc.npiles] != job->out_rows)
            st = h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "the piles hold %llu rows, not %llu",
                              (unsigned long long)start[sc.npiles], (unsigned long long)job->out_rows);
        for (int q = 0; q < P; q++)
            pile_range(start, sc.npiles, a[q], b[q], &plo[q], &phi[q]);
        hsize_t size = 0;
        uint64_t v[2] = {0, 0};
        if (H5Fget_filesize(sc.file, &size) >= 0)
            v[0] = size;
        if (st == H5SHUF_OK)
            st = h5shuf_comm_sums(c, v, 2, &job->err);
        job->plan.scratch_bytes = v[0];
        job->plan.piles = sc.npiles;
    }
    if (st == H5SHUF_OK)
        st = h5shuf_dist_pass2(job, c, &cx, &sc, g, start, plo, phi, a, b, &fig->rounds);
    else
        st = h5shuf__targets_close(&job->out, st, &job->err);
    job->temp_file[1] = NULL;
    st = h5shuf__job_disk_failed(job, st, &sc.tf);
    if (h5shuf__ckpt_keeps(job, st))
        h5shuf__ckpt_scratch_keep(job, &sc);
    else
        h5shuf__ckpt_scratch_destroy(job, &sc);
    free(g);
    free(start);
    free(plo);
    free(phi);
    if (st == H5SHUF_OK && job->out.n == 1 && P > 1 && !r->assembled)
        st = h5shuf_dist_assemble(job, c, a, b, &fig->assembled_bytes);
    return st;
}

/* The direct path (direct.h) into this process's output rows [a, b) (from a resumed run's first row not
 * written): every process reads the rows of its own range straight from the inputs, in output order; no
 * scratch, nothing exchanged.  Then (the single output) the assembly. */
static int direct_run(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b,
                      const struct h5shuf_dist_resume *r, struct h5shuf_dist_figures *fig)
{
    const int me = c->rank;
    uint64_t from = h5shuf__ckpt_first_row(job);
    from = from < a[me] ? a[me] : from > b[me] ? b[me] : from;
    int st = from < b[me] ? h5shuf__job_direct(job, from, b[me]) : H5SHUF_OK;
    st = h5shuf__targets_close(&job->out, st, &job->err);
    if (st == H5SHUF_OK && job->out.n == 1 && c->size > 1 && !r->assembled)
        st = h5shuf_dist_assemble(job, c, a, b, &fig->assembled_bytes);
    return st;
}

/* This process's outputs: its shards, or process 0 the single output and every other its part (in its
 * state directory when the run checkpoints, in its scratch directory otherwise).  Once per run. */
static int select_outputs(h5shuf_job *job, struct h5shuf_comm *c)
{
    const int P = c->size, me = c->rank;
    uint64_t *a = calloc((size_t)P, sizeof *a), *b = calloc((size_t)P, sizeof *b);
    size_t *tlo = calloc((size_t)P, sizeof *tlo), *thi = calloc((size_t)P, sizeof *thi);
    int st = a && b && tlo && thi ? H5SHUF_OK : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) {
        output_ranges(job, P, a, b, tlo, thi);
        if (job->out.n > 1 || me == 0) {
            h5shuf__targets_select(&job->out, tlo[me], thi[me]);
        } else {
            h5shuf__targets_free(&job->out); /* process 0 makes the output; this one a part of it, or nothing */
            const char *dir = job->ckpt.rs.on ? job->ckpt.rs.dir : job->scratch_dir;
            st = h5shuf__targets_plan_part(&job->out, dir, a[me], b[me] - a[me], job->out_rows, &job->err);
            if (a[me] == b[me])
                h5shuf__targets_select(&job->out, 0, 0);
        }
    }
    free(a);
    free(b);
    free(tlo);
    free(thi);
    return st;
}

void h5shuf_dist_rows(const h5shuf_job *job, const struct h5shuf_comm *c, uint64_t *first, uint64_t *end)
{
    const int P = c->size;
    uint64_t *a = calloc((size_t)P, sizeof *a), *b = calloc((size_t)P, sizeof *b);
    size_t *tlo = calloc((size_t)P, sizeof *tlo), *thi = calloc((size_t)P, sizeof *thi);
    *first = *end = 0;
    if (a && b && tlo && thi) {
        output_ranges(job, P, a, b, tlo, thi);
        *first = a[c->rank];
        *end = b[c->rank];
    }
    free(a);
    free(b);
    free(tlo);
    free(thi);
}

/* Make this process's outputs (or, resumed, take them back). */
static int make_outputs(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    if (job->ckpt.rs.on)
        return h5shuf__ckpt_targets(job, &cx);
    job->out.unit_rows = job->ckpt.unit_rows; /* (a run without state written as a checkpointed run's) */
    return h5shuf__targets_create(&cx, &job->out, &job->of, job->out.hi - job->out.lo + 1);
}

/* Every process's outputs moved into place, or none: each moves its own once all have written theirs,
 * and takes them back if any other failed to. */
static int commit(h5shuf_job *job, struct h5shuf_comm *c, int st)
{
    uint64_t ok = 0;
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sums(c, &ok, 1, &job->err); /* every process has written its outputs */
    /* interrupted (also while it waited for the others here: a signal, another's failure), the outputs are
     * the state kept */
    job->out.keep_files = h5shuf__ckpt_keeps(job, st);
    st = h5shuf__targets_place(&job->out, st, job->opts.force, job->out_mode, &job->err);
    if (st == H5SHUF_OK) /* fails when another process could not place its own: take ours back */
        st = h5shuf_comm_sums(c, &ok, 1, &job->err);
    h5shuf__ckpt_give_up(job, st); /* (before the outputs it names go) */
    h5shuf__targets_settle(&job->out, st == H5SHUF_OK); /* (with --force the files replaced come back) */
    return st;
}

/*-*************************************
*  The plan and the agreement
***************************************/

void h5shuf_dist_plan_text(const h5shuf_job *job, const struct h5shuf_comm *c, char *buf, size_t size)
{
    *buf = 0;
    if (c->size < 2 || job->out.n != 1 || job->out_rows == 0)
        return;
    const double mib = (double)job->plan.output_estimate_bytes / 1048576.0;
    const double share = (double)(c->size - 1) / (double)c->size;
    if (rows_hold_addresses(job) && job->plan.strategy != H5SHUF_STRATEGY_DIRECT)
        snprintf(buf, size,
                 "h5shuf-mpi: single writer: process 0 gathers every pile and writes all %llu rows of the output "
                 "alone (about %.0f MiB; its chunks hold addresses in the file, so no other process can make them), "
                 "%s sending it %.0f%% of the rows in pass 2; --shards K (K >= %d) writes in parallel\n",
                 (unsigned long long)job->out_rows, mib, c->size > 2 ? "the others" : "the other",
                 100.0 * share, c->size);
    else if (rows_hold_addresses(job))
        snprintf(buf, size,
                 "h5shuf-mpi: single writer: process 0 reads and writes all %llu rows of the output alone (about "
                 "%.0f MiB; its chunks hold addresses in the file); --shards K (K >= %d) writes in parallel\n",
                 (unsigned long long)job->out_rows, mib, c->size);
    else
        snprintf(buf, size,
                 "h5shuf-mpi: single writer: process 0 writes the whole output (about %.0f MiB), %s as their "
                 "stored chunks (about %.0f MiB sent to it); --shards K (K >= %d) writes in parallel\n",
                 mib, c->size > 2 ? "the others' parts" : "the other's part", mib * share, c->size);
}

/* The barrier before a process applies its PILES (checkpoint.h). */
static int barrier(void *user, struct h5shuf_err *err)
{
    uint64_t v = 0;
    return h5shuf_comm_sums(user, &v, 1, err);
}

void h5shuf_dist_prepare(h5shuf_job *job, struct h5shuf_comm *c)
{
    h5shuf__ckpt_set_rank(job, c->rank, c->size, barrier, c);
}

int h5shuf_dist_agree(h5shuf_job *job, struct h5shuf_comm *c, struct h5shuf_dist_resume *r)
{
    h5shuf__err_reset(&job->err);
    memset(r, 0, sizeof *r);
    int st = select_outputs(job, c);
    struct h5shuf_ckpt_dist d;
    h5shuf__ckpt_dist_state(job, &d);
    /* maxima: found, finished, level, shared, assembled; minima (as maxima of their complements): found,
     * PILES at the top level */
    uint64_t v[6] = {d.found, d.finished, d.level, d.shared, d.assembled, !d.found};
    if (st == H5SHUF_OK)
        st = h5shuf_comm_max(c, v, 6, &job->err);
    uint64_t lv[3] = {0, 0, !(d.piles_done && d.level == v[2])};
    if (d.level == v[2] && d.level > 0) { /* the plan of the furthest restart (the same wherever recorded) */
        lv[0] = d.piles;
        lv[1] = d.cap;
    }
    if (st == H5SHUF_OK)
        st = h5shuf_comm_max(c, lv, 3, &job->err);
    if (st != H5SHUF_OK)
        return st;
    r->finished = v[1] != 0;
    r->level = v[2];
    r->piles = lv[0];
    r->cap = lv[1];
    r->all_piles = lv[2] == 0 && v[2] > 0;
    r->assembled = v[4] != 0;
    const struct h5shuf_resume *rs = &job->ckpt.rs;
    if (d.partly_placed)
        return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: the interrupted run had put some of this process's outputs "
                            "in place: remove them and every process's state (%s) to start again", job->out.v[job->out.lo].path,
                            rs->dir);
    if (!r->finished && v[0] && v[5] && v[3] && !d.found) /* the others' states need this process's */
        return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: no state of the interrupted run, which the other processes' "
                            "need (its --tmpdir changed?): remove every process's h5shuf-resume-* to start again",
                            rs->dir ? rs->dir : job->scratch_dir);
    if (!r->finished && !job->out.part)
        st = h5shuf__targets_check(&job->out, &job->in, NULL, job->opts.force, &job->err);
    return st;
}

/*-*************************************
*  One process's run
***************************************/

/* Another process had put its outputs in place: this one places its own (written), and removes its state. */
static int place_only(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    int st = job->ckpt.rs.found ? h5shuf__ckpt_place_done(job, &cx) : H5SHUF_OK;
    if (!job->ckpt.rs.found || st != H5SHUF_OK)
        h5shuf__targets_select(&job->out, 0, 0);
    st = h5shuf__targets_place(&job->out, st, job->opts.force, job->out_mode, &job->err);
    h5shuf__ckpt_give_up(job, st); /* (before the outputs it names go) */
    h5shuf__targets_settle(&job->out, st == H5SHUF_OK);
    return h5shuf__ckpt_end(job, st);
}

static int dist_run(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_dist_resume *r,
                    struct h5shuf_dist_figures *fig)
{
    const int P = c->size;
    int st = H5SHUF_OK;
    if (r->finished)
        return place_only(job);
    if ((st = h5shuf__chunkio_create(job->plan.threads, &job->cio)) != H5SHUF_OK)
        h5shuf__fail(&job->err, st, "out of memory for %u threads", job->plan.threads);
    uint64_t *a = calloc((size_t)P, sizeof *a), *b = calloc((size_t)P, sizeof *b);
    size_t *tlo = calloc((size_t)P, sizeof *tlo), *thi = calloc((size_t)P, sizeof *thi);
    if (st == H5SHUF_OK && (!a || !b || !tlo || !thi))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) /* what interrupted runs left (each process its own scratch directory's) */
        st = h5shuf__job_leftovers_clear(job);
    if (st == H5SHUF_OK) {
        output_ranges(job, P, a, b, tlo, thi);
        st = make_outputs(job);
    }
    /* Every process has its state (made, or found) before any records progress: a resume is refused when
     * a process has none while another's has gone on (h5shuf_dist_agree), and the direct path has no
     * collective before its first commit, so a process slow to start, ended with the others when one was
     * killed after its commit, left a run that could never resume. */
    if (st == H5SHUF_OK && job->ckpt.rs.on)
        st = barrier(c, &job->err);
    if (st == H5SHUF_OK && job->out_rows > 0)
        st = job->plan.strategy == H5SHUF_STRATEGY_DIRECT ? direct_run(job, c, a, b, r, fig)
                                                                    : two_pass(job, c, a, b, r, fig);
    const struct h5shuf_progress progress = {job->opts.progress, job->opts.progress_user};
    if (st == H5SHUF_OK && job->opts.check && c->rank == 0) /* before the rename: a failed check leaves nothing */
        st = h5shuf__tempfile_unpark(&job->out.v[0].tf, job->out.v[0].path, &job->err);
    if (st == H5SHUF_OK && job->opts.check && c->rank == 0)
        st = h5shuf__verify_file(job->cio, &job->in, &job->dsets, h5shuf__tempfile_hdf5_name(&job->out.v[0].tf),
                                 job->out.v[0].path, job->opts.mem_limit_bytes, &progress, &job->err);
    H5SHUF_KILL_POINT();
    st = h5shuf__job_disk_failed(job, st, NULL); /* (a disk failure keeps the state: commit decides it) */
    st = commit(job, c, st);
    free(a);
    free(b);
    free(tlo);
    free(thi);
    return h5shuf__ckpt_end(job, st);
}

int h5shuf_dist_run(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_dist_resume *r,
                    struct h5shuf_dist_figures *fig)
{
    memset(fig, 0, sizeof *fig);
    h5shuf__err_reset(&job->err);
    struct h5shuf_quiet q;
    h5shuf__quiet_begin(&q);
    int st = dist_run(job, c, r, fig);
    h5shuf__chunkio_free(job->cio);
    job->cio = NULL;
    h5shuf__quiet_end(&q);
    return st;
}
