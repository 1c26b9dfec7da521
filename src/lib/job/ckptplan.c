/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ckptplan.c - a checkpointed run planned (ckptplan.h): whether it checkpoints, an interrupted run's state
 * found and taken over, this run's identity held against that run's, and the rows of an output between
 * its commits.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "ckptplan.h"
#include "error.h"
#include "output.h"
#include "resume.h"

/* Output datasets' chunk rows whose least common multiple is beyond this many times a unit: no checkpoint
 * inside an output file, only at its end. */
#define UNIT_LCM_SLACK 4

int h5shuf__ckpt_plan_find(h5shuf_job *job)
{
    struct h5shuf_resume *rs = &job->ckpt.rs;
    rs->on = 0;
    if (job->opts.checkpoint_bytes == 0)
        return job->opts.resume ? h5shuf__fail(&job->err, H5SHUF_EINVAL, "--resume needs checkpoints (not with "
                                                                        "--checkpoint off)")
                                : H5SHUF_OK;
    rs->interval_bytes = job->opts.checkpoint_bytes;
    rs->synced = job->opts.checkpoint_sync != 0;
    rs->interval_seconds = job->opts.checkpoint_seconds;
    free(rs->dir);
    if (!(rs->dir = h5shuf__resume_dir_for(job->scratch_dir, job->out_spec.file, job->ckpt.ranks ? job->ckpt.rank : -1)))
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    /* an interrupted run's state: refused without --resume, whatever this run's size */
    int st = h5shuf__resume_find(rs, job->opts.resume, &job->err);
    if (st == H5SHUF_OK && rs->found && !job->opts.seed_set) { /* the interrupted run's seed, drawn or given */
        job->opts.seed = rs->seed;
        job->opts.seed_set = 1;
    }
    /* Checkpoints when asked for (--resume), or when the input is more than one interval: a smaller run
     * loses at most an interval's work to a kill anyway, and keeps no state (a cancelled or failed run
     * removes everything, as it always did). */
    const h5shuf_u128 bytes = (h5shuf_u128)job->in.rows * job->dsets.row_bytes;
    rs->on = rs->found || job->opts.resume || bytes > job->opts.checkpoint_bytes;
    job->ckpt.unit_layout = 0;
    if (st == H5SHUF_OK && rs->foreign) { /* (not with --resume: refused) */
        /* another user's directory or a link at the state's name: no state, but the outputs written as
         * a checkpointed run writes them (closed and reopened every interval), so their bytes are the same */
        job->ckpt.unit_layout = rs->on;
        st = h5shuf__job_warn(job, "%s: %s, not a state of this user's: ignored%s", rs->dir, rs->foreign_why,
                              rs->on ? "; this run keeps no state (no --resume after a kill)" : "");
        rs->on = 0;
    }
    return st;
}

int h5shuf__ckpt_add_line(char **text, size_t *len, size_t *cap, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line - 1)
        return -1;
    if (*len + (size_t)n + 2 > *cap) {
        size_t c = *cap ? 2 * *cap : 4096;
        while (c < *len + (size_t)n + 2)
            c *= 2;
        char *t = realloc(*text, c);
        if (!t)
            return -1;
        *text = t;
        *cap = c;
    }
    memcpy(*text + *len, line, (size_t)n);
    *len += (size_t)n;
    (*text)[(*len)++] = '\n';
    (*text)[*len] = '\0';
    return 0;
}

/* A hash of a dataset's datatype (H5Tencode) and the filters of a property list (ids, flags, values). */
static uint64_t type_hash(hid_t t)
{
    size_t n = 0;
    if (H5Tencode(t, NULL, &n) < 0 || n == 0)
        return 0;
    unsigned char *buf = malloc(n);
    uint64_t h = buf && H5Tencode(t, buf, &n) >= 0 ? XXH3_64bits(buf, n) : 0;
    free(buf);
    return h;
}

static uint64_t filters_hash(hid_t dcpl)
{
    XXH3_state_t *s = XXH3_createState();
    if (!s)
        return 0;
    XXH3_64bits_reset(s);
    int nf = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[32], conf = 0;
        size_t ncd = 32;
        char name[64];
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &conf);
        XXH3_64bits_update(s, &id, sizeof id);
        XXH3_64bits_update(s, &flags, sizeof flags);
        XXH3_64bits_update(s, cd, (ncd < 32 ? ncd : 32) * sizeof *cd);
    }
    int layout = dcpl >= 0 ? (int)H5Pget_layout(dcpl) : -1;
    XXH3_64bits_update(s, &layout, sizeof layout);
    hsize_t cdims[H5S_MAX_RANK] = {0};
    if (layout == H5D_CHUNKED)
        H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims);
    XXH3_64bits_update(s, cdims, sizeof cdims);
    uint64_t h = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    return h;
}

/* What decides the output, one item a line ("WORD values"); a resume compares it line by line. */
static int identity_text(h5shuf_job *job, char **out)
{
    char *t = NULL;
    size_t len = 0, cap = 0;
    int bad = h5shuf__ckpt_add_line(&t, &len, &cap, "h5shuf-state 1");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "seed %" PRIu64, job->seed);
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "output %s", job->out_spec.file);
    struct stat ps;
    if (job->mode == H5SHUF_MODE_GATHER && stat(job->piles_path, &ps) == 0) /* a gather's input is its pile file */
        bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "input piles file %s dev %" PRIu64 " ino %" PRIu64 " size %" PRIu64 " mtime %" PRId64 ".%09ld",
                        job->piles_path, (uint64_t)ps.st_dev, (uint64_t)ps.st_ino, (uint64_t)ps.st_size,
                        (int64_t)ps.st_mtim.tv_sec, (long)ps.st_mtim.tv_nsec);
    for (size_t f = 0; f < job->in.n && !bad; f++) {
        const struct h5shuf_input *in = &job->in.v[f];
        struct stat s;
        if (stat(in->spec.file, &s) != 0)
            memset(&s, 0, sizeof s);
        bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "input %zu file %s dev %" PRIu64 " ino %" PRIu64 " size %" PRIu64 " mtime %" PRId64 ".%09ld rows %" PRIu64,
                        f, in->spec.file, (uint64_t)s.st_dev, (uint64_t)s.st_ino, (uint64_t)s.st_size,
                        (int64_t)s.st_mtim.tv_sec, (long)s.st_mtim.tv_nsec, in->rows);
    }
    for (size_t d = 0; d < job->dsets.n && !bad; d++) {
        const struct h5shuf_dsinfo *ds = &job->dsets.ds[d];
        char dims[512] = "";
        size_t at = 0;
        for (int r = 0; r < ds->rank && at < sizeof dims; r++)
            at += (size_t)snprintf(dims + at, sizeof dims - at, "%s%llu", r ? "x" : "", (unsigned long long)ds->dims[r]);
        bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "dataset %zu %s from %s dims %s type %016" PRIx64 " in %016" PRIx64 " out %016" PRIx64,
                        d, ds->out_path, ds->in_path, dims, type_hash(ds->ftype), filters_hash(ds->dcpl),
                        filters_hash(ds->out_dcpl));
    }
    const h5shuf_options *o = &job->opts;
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "compression %s", job->compression ? job->compression : "keep");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "chunks %s", job->chunk_shape ? job->chunk_shape : "input");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "shards %" PRIu64, o->shards);
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "split %s", job->split ? job->split : "-");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "head %" PRIu64, job->out_rows);
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "index %s", job->index_path ? job->index_path : "-");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "source-index %s",
                                 job->source_index_path ? job->source_index_path : "-");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "references %s", o->drop_references ? "dropped" : "kept");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "lossy %s", o->allow_lossy ? "allowed" : "refused");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "external %s", o->allow_external ? "allowed" : "refused");
    bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "checkpoint %" PRIu64 " rows %" PRIu64, o->checkpoint_bytes,
                                 job->ckpt.unit_rows);
    if (job->strata_text) /* (only then: the states of unstratified runs keep their lines) */
        bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "stratify %s", job->strata_text);
    if (job->ckpt.ranks) /* a distributed run: every process has its own state */
        bad |= h5shuf__ckpt_add_line(&t, &len, &cap, "processes %d rank %d", job->ckpt.ranks, job->ckpt.rank);
    if (bad) {
        free(t);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    *out = t;
    return H5SHUF_OK;
}

size_t h5shuf__ckpt_placed_count(const h5shuf_job *job)
{
    const struct h5shuf_resume *rs = &job->ckpt.rs;
    const struct h5shuf_targets *t = &job->out;
    size_t placed = 0;
    for (size_t i = 0; rs->t && !rs->names_only && !t->part && rs->ntargets == t->hi - t->lo && i < rs->ntargets; i++) {
        struct stat s;
        placed += stat(t->v[t->lo + i].path, &s) == 0 && (uint64_t)s.st_dev == rs->t[i].dev &&
                  (uint64_t)s.st_ino == rs->t[i].ino;
    }
    return placed;
}

/* Rows of an output file between its commits: about checkpoint_bytes of rows (the rows' bytes as the
 * plan counts them, which depend on the inputs only), a multiple of every output dataset's chunk rows
 * (a band then ends at a chunk's end: the writer's bands restart whole there), 0 when that multiple is
 * far beyond the interval. */
static uint64_t unit_rows_of(const h5shuf_job *job)
{
    const uint64_t rb = job->dsets.row_bytes ? job->dsets.row_bytes : 1;
    uint64_t u = job->opts.checkpoint_bytes / rb;
    if (u == 0)
        u = 1;
    const uint64_t l = h5shuf__output_cut_rows(&job->dsets, job->index_path != NULL, job->source_index_path != NULL,
                                               job->out_rows);
    if (l > UNIT_LCM_SLACK * u)
        return 0;
    u = (u + l - 1) / l * l;
    return u >= job->out_rows ? 0 : u;
}

int h5shuf__ckpt_plan_check(h5shuf_job *job)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_resume *rs = &c->rs;
    c->unit_rows = rs->on || c->unit_layout ? unit_rows_of(job) : 0;
    if (!rs->on)
        return H5SHUF_OK;
    free(c->identity);
    c->identity = NULL;
    int st = identity_text(job, &c->identity);
    if (st == H5SHUF_OK && rs->found)
        st = h5shuf__resume_same(rs, c->identity, &job->err);
    if (st != H5SHUF_OK || !rs->found)
        return st;
    /* killed between putting its outputs in place and removing its state: nothing is left to do (a
     * distributed run's processes find theirs once they know which outputs are theirs: dist.c) */
    size_t placed = c->ranks ? 0 : h5shuf__ckpt_placed_count(job);
    struct stat sp;
    if (job->mode == H5SHUF_MODE_SCATTER && rs->done && stat(job->out_spec.file, &sp) == 0 &&
        (uint64_t)sp.st_dev == rs->scratch_dev && (uint64_t)sp.st_ino == rs->scratch_ino)
        placed = job->out.n; /* a scatter's pile file in place */
    if (placed && placed == job->out.n) {
        c->finished = c->started = 1;
        snprintf(c->resume_text, sizeof c->resume_text, "resuming from %s: the interrupted run had finished (its output "
                 "is in place); its state is removed", rs->dir);
        return H5SHUF_OK;
    }
    if (placed)
        return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: the interrupted run had put %zu of its %zu outputs in place: "
                            "remove them and %s to start again", job->out.v[0].path, placed, job->out.n, rs->dir);
    /* a pass 1 under way goes on with its piles: the one pass and the direct path would start it again */
    if ((rs->has_pass1 || rs->has_piles) && job->plan.strategy != H5SHUF_STRATEGY_TWO_PASS)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the interrupted run was in its pass 1 of two: resume it with "
                                                      "--strategy two-pass (or remove %s to start again)", rs->dir);
    if ((rs->has_pass1 || rs->has_piles) && job->one_pass)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the interrupted run was in its pass 1 of two: resume it with "
                                                      "--strategy two-pass (or remove %s to start again)", rs->dir);
    if (rs->has_pass1 && !rs->has_piles) { /* its piles and buffers: the plan it started with */
        job->plan.piles = rs->p1.piles;
        job->plan.pile_buffer_rows = rs->p1.cap;
        job->plan.restarts = rs->p1.restarts;
    }
    char p1[256], p2[256];
    if (rs->has_piles)
        snprintf(p1, sizeof p1, "pass 1 done (%zu piles)", rs->npiles);
    else if (rs->has_pass1)
        snprintf(p1, sizeof p1, "pass 1 done to row %" PRIu64 " of %" PRIu64, rs->p1.rows_done, job->in.rows);
    else
        snprintf(p1, sizeof p1, "%s", rs->created ? "no rows read yet" : "nothing done yet");
    snprintf(p2, sizeof p2, "%soutput rows written: %" PRIu64 " of %" PRIu64, job->plan.strategy == H5SHUF_STRATEGY_TWO_PASS && !job->one_pass ? "pass 2: " : "", rs->p2_row, job->out_rows);
    if (job->mode == H5SHUF_MODE_SCATTER)
        snprintf(c->resume_text, sizeof c->resume_text, "resuming from %s: %s", rs->dir,
                 rs->done ? "the pile file is written, to be put in place" : p1);
    else
        snprintf(c->resume_text, sizeof c->resume_text, "resuming from %s: %s; %s", rs->dir, p1, p2);
    return H5SHUF_OK;
}
