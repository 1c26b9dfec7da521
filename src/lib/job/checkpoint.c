/*
 * checkpoint.c - the checkpoints of a run and the continuation of an interrupted one (checkpoint.h).
 *
 * Why a checkpoint is safe on HDF5 1.10, whose files are not crash-consistent: every file h5shuf writes
 * in a resumable run (the scratch, each output) goes through walfile.c's driver, which never overwrites a
 * byte the last commit holds (such writes go to a redo log).  A commit is: HDF5's state flushed (H5Fflush)
 * or the file closed, base and log synced (h5shuf__walfile_prepare), the journal record appended and
 * synced (the commit point), the log copied into the base (_apply).  After a kill at any instant, the
 * journal's last valid record names a state that _recover brings the file back to, byte for byte; every
 * other byte written since is dropped.  Pass 1's buffered rows are in a spill file synced before the
 * record that names it.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "checkpoint.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "plan.h"
#include "tempfile.h"
#include "walrecover.h"
#include "walvfd.h"

/* Output datasets' chunk rows whose least common multiple is beyond this many times a unit: no checkpoint
 * inside an output file, only at its end. */
#define UNIT_LCM_SLACK 4

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- planning ------------------------------------------------------------------------------------ */

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

/* Append to *text (of *len, cap *cap) a printf-formatted line. */
static int h5shuf__ckpt_add_line(char **text, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int h5shuf__ckpt_add_line(char **text, size_t *len, size_t *cap, const char *fmt, ...)
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

/* How many of this process's outputs (job->out.v[lo..hi)) are in place as the interrupted run's files
 * (their device and inode are the recorded ones). */
static size_t h5shuf__ckpt_placed_count(const h5shuf_job *job)
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

/* ---- the output files ------------------------------------------------------------------------------ */

/* The log prefix of target k's redo logs. */
static void target_prefix(size_t k, char *buf, size_t cap)
{
    snprintf(buf, cap, "out%zu", k);
}

/* targets.fapl: target k opened for writing through a new driver over fd, at its committed size. */
static hid_t target_fapl(void *user, size_t k, int fd, struct h5shuf_err *err)
{
    h5shuf_job *job = user;
    struct h5shuf_ckpt *c = &job->ckpt;
    char prefix[32];
    target_prefix(k, prefix, sizeof prefix);
    struct stat s;
    if (fstat(fd, &s) < 0)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: %s", job->out.v[k].tf.path, strerror(errno)), H5I_INVALID_HID;
    h5shuf__walfile_free(c->target_wal);
    c->target_wal = NULL;
    /* its size is its committed state: made and synced, or applied at its last commit */
    if (h5shuf__walfile_new(fd, c->rs.dirfd, (uint64_t)s.st_size, prefix, &c->target_wal, err) != H5SHUF_OK)
        return H5I_INVALID_HID;
    h5shuf__walfile_set_sync(c->target_wal, c->rs.synced);
    return h5shuf__walfile_fapl(c->target_wal, 0, err);
}

/* Give back the scratch's piles that end at or before output row row (pass 2 has committed them). */
static void release_piles(struct h5shuf_ckpt *c, uint64_t row)
{
    const struct h5shuf_scratch *sc = c->release_sc;
    while (sc && c->release_n > 0 && c->release_row + c->release_piles[0].rows <= row) {
        const struct h5shuf_pile *p = &c->release_piles[0];
        const size_t n = h5shuf__pile_nsets(sc->dsets);
        hid_t group = H5I_INVALID_HID, *sets = malloc(n * sizeof *sets);
        struct h5shuf_err ignored = {0};
        if (sets && p->rows > 0 && h5shuf__pile_open(sc, p, &group, sets, &ignored) == H5SHUF_OK)
            h5shuf__pile_release(sc->tf.fd, sets, n);
        if (sets && p->rows > 0)
            h5shuf__pile_close(group, sets, n);
        free(sets);
        c->release_row += p->rows;
        c->release_piles++;
        c->release_n--;
    }
}

/* targets.discard: a failed run's open output file keeps its last commit. */
static int target_discard(void *user)
{
    h5shuf_job *job = user;
    if (!job->ckpt.target_wal)
        return 0;
    h5shuf__walfile_discard(job->ckpt.target_wal);
    return 1;
}

/* Commit target k (closed) at output row row (its last: done), with more words for the record. */
static int commit_target(h5shuf_job *job, size_t k, uint64_t row, int done, const char *more, struct h5shuf_err *err)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_wal_commit wc;
    char fs[512];
    H5SHUF_KILL_POINT();
    int st = h5shuf__walfile_prepare(c->target_wal, &wc, err);
    if (st == H5SHUF_OK) {
        h5shuf__fstate_text(&wc, fs, sizeof fs);
        H5SHUF_KILL_POINT();
        st = h5shuf__resume_record(&c->rs, H5SHUF_REC_PASS2, err, "row %" PRIu64 " t %zu done %d %s%s", row,
                                   k - job->out.lo, done, fs, more);
    }
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__walfile_apply(c->target_wal, err);
    h5shuf__walfile_free(c->target_wal);
    c->target_wal = NULL;
    if (st == H5SHUF_OK)
        release_piles(c, row);
    H5SHUF_KILL_POINT();
    return st;
}

/* targets.commit: target k closed at output row row (its last: done): committed. */
static int target_commit(void *user, size_t k, uint64_t row, int done, struct h5shuf_err *err)
{
    return commit_target(user, k, row, done, "", err);
}

/* Sync target k's file (closed, made) and return its size. */
static int target_sync(h5shuf_job *job, size_t k, uint64_t *size)
{
    struct h5shuf_target *tg = &job->out.v[k];
    struct stat s;
    int st = h5shuf__tempfile_unpark(&tg->tf, tg->path, &job->err);
    if (st == H5SHUF_OK && ((job->ckpt.rs.synced && fsync(tg->tf.fd) < 0) || fstat(tg->tf.fd, &s) < 0)) {
        h5shuf__err_note_errno(errno);
        st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot sync %s: %s", tg->path, tg->tf.path, strerror(errno));
    }
    if (st == H5SHUF_OK)
        *size = (uint64_t)s.st_size;
    if (job->out.hi - job->out.lo > 8)
        h5shuf__tempfile_park(&tg->tf);
    return st;
}

/* The state directory and its IDENTITY record, once (a fresh run). */
static int h5shuf__ckpt_state_start(h5shuf_job *job)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    if (c->started || c->rs.found) { /* (a resumed run's state is its own from now on) */
        c->started = 1;
        return H5SHUF_OK;
    }
    c->started = 1;
    return h5shuf__resume_start(&c->rs, c->identity, &job->err);
}

/* Make the output files (named), sync each and record CREATED with their sizes. */
static int targets_make(h5shuf_job *job, const struct h5shuf_ctx *cx, uint64_t files)
{
    struct h5shuf_targets *t = &job->out;
    char *text = NULL;
    size_t len = 0, cap = 0;
    int st = h5shuf__targets_create(cx, t, &job->of, files);
    for (size_t i = 0; st == H5SHUF_OK && i < t->hi - t->lo; i++) {
        uint64_t size = 0;
        st = target_sync(job, t->lo + i, &size);
        if (st == H5SHUF_OK && h5shuf__ckpt_add_line(&text, &len, &cap, "t %zu eof %" PRIu64, i, size) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    char boot[128];
    h5shuf__resume_boot_words(&job->ckpt.rs, boot, sizeof boot);
    if (st == H5SHUF_OK && h5shuf__ckpt_add_line(&text, &len, &cap, "%s", boot + 1) < 0)
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__journal_append(&job->ckpt.rs.j, H5SHUF_REC_CREATED, text ? text : "", len, &job->err);
    free(text);
    H5SHUF_KILL_POINT();
    return st;
}

/* A fresh run: the state directory and IDENTITY, the output files' names, then the files made, synced
 * and recorded. */
static int targets_fresh(h5shuf_job *job, const struct h5shuf_ctx *cx, uint64_t files, int start)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_targets *t = &job->out;
    (void)start;
    int st = h5shuf__ckpt_state_start(job);
    c->started = 1;
    /* the names are recorded before the files exist: a kill between the two leaves nothing unnamed */
    char *text = NULL;
    size_t len = 0, cap = 0;
    const size_t n = t->hi - t->lo; /* this process's (all of them but in a distributed run) */
    int bad = st != H5SHUF_OK ? 0 : h5shuf__ckpt_add_line(&text, &len, &cap, "targets %zu", n);
    char **names = st == H5SHUF_OK ? calloc(n ? n : 1, sizeof *names) : NULL;
    if (st == H5SHUF_OK && !names)
        bad = 1;
    for (size_t i = 0; st == H5SHUF_OK && !bad && i < n; i++) {
        char name[NAME_MAX + 1];
        h5shuf__targets_temp_name(t, t->lo + i, name, sizeof name);
        bad = !(names[i] = strdup(name)) || h5shuf__ckpt_add_line(&text, &len, &cap, "t %zu name %s", i, name);
    }
    if (bad)
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__journal_append(&c->rs.j, H5SHUF_REC_NAMES, text, len, &job->err);
    H5SHUF_KILL_POINT();
    for (size_t i = 0; st == H5SHUF_OK && i < n; i++)
        st = h5shuf__targets_reserve_as(t, t->lo + i, names[i], &job->err);
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(text);
    text = NULL;
    len = cap = 0;
    bad = st != H5SHUF_OK ? 0 : h5shuf__ckpt_add_line(&text, &len, &cap, "targets %zu", n);
    for (size_t i = 0; st == H5SHUF_OK && !bad && i < n; i++) {
        const struct h5shuf_tempfile *tf = &t->v[t->lo + i].tf;
        bad = h5shuf__ckpt_add_line(&text, &len, &cap, "t %zu name %s dev %" PRIu64 " ino %" PRIu64, i, tf->name,
                                    (uint64_t)tf->dev, (uint64_t)tf->ino);
    }
    if (bad)
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__journal_append(&c->rs.j, H5SHUF_REC_TARGETS, text, len, &job->err);
    free(text);
    H5SHUF_KILL_POINT();
    return st == H5SHUF_OK ? targets_make(job, cx, files) : st;
}

/* Remove name in the directory of path when it is a regular file of this user's (a temporary file an
 * interrupted run named in its journal and may have made). */
static void h5shuf__ckpt_remove_own(const char *path, const char *name)
{
    char *dir = h5shuf__dir_of(path);
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    struct stat s;
    if (dfd >= 0 && fstatat(dfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode) && s.st_uid == geteuid())
        unlinkat(dfd, name, 0);
    if (dfd >= 0)
        close(dfd);
    free(dir);
}

/* A resumed run: the interrupted run's output files taken back, each brought to its last commit (made
 * afresh when they were not all made). */
static int targets_resumed(h5shuf_job *job, const struct h5shuf_ctx *cx, uint64_t files)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_resume *rs = &c->rs;
    struct h5shuf_targets *t = &job->out;
    c->started = 1;
    const size_t n = t->hi - t->lo;
    if (rs->t && rs->names_only) /* named, maybe made, never written: removed, then made afresh */
        for (size_t i = 0; i < rs->ntargets && i < n; i++)
            h5shuf__ckpt_remove_own(t->v[t->lo + i].path, rs->t[i].name);
    if (!rs->t || rs->names_only) /* killed before the files were recorded: nothing of the outputs was written */
        return targets_fresh(job, cx, files, 0);
    if (rs->ntargets != n)
        return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: the journal names %zu output files, this run makes %zu",
                            rs->dir, rs->ntargets, n);
    int st = H5SHUF_OK;
    for (size_t i = 0; i < n && st == H5SHUF_OK; i++)
        st = h5shuf__targets_adopt(t, t->lo + i, rs->t[i].name, rs->t[i].dev, rs->t[i].ino, &job->err);
    if (st == H5SHUF_OK && !rs->created) /* made again from the start (H5Fcreate truncates each) */
        return targets_make(job, cx, files);
    if (st == H5SHUF_OK)
        st = h5shuf__targets_attach(t, &job->of, &job->err);
    for (size_t i = 0; i < n && st == H5SHUF_OK; i++) {
        const size_t k = t->lo + i;
        struct h5shuf_target *tg = &t->v[k];
        char prefix[32];
        target_prefix(k, prefix, sizeof prefix);
        st = h5shuf__tempfile_unpark(&tg->tf, tg->path, &job->err);
        if (st == H5SHUF_OK)
            st = h5shuf__walfile_recover(tg->tf.fd, rs->dirfd, prefix, &rs->t[i].st, &job->err);
        if (t->hi - t->lo > 8)
            h5shuf__tempfile_park(&tg->tf);
    }
    return st;
}

int h5shuf__ckpt_targets(h5shuf_job *job, const struct h5shuf_ctx *cx)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_targets *t = &job->out;
    const int scratch = job->mode == H5SHUF_MODE_RUN && job->plan.strategy != H5SHUF_STRATEGY_DIRECT && !job->one_pass;
    const uint64_t files = t->n + scratch;
    t->unit_rows = c->unit_rows; /* (without a state too, when unit_layout) */
    if (!c->rs.on)
        return h5shuf__targets_create(cx, t, &job->of, files);
    t->commit = target_commit;
    t->fapl = target_fapl;
    t->discard = target_discard;
    t->commit_user = job;
    return c->rs.found ? targets_resumed(job, cx, files) : targets_fresh(job, cx, files, 1);
}

/* ---- pass 1 ------------------------------------------------------------------------------------------- */

#define SCRATCH_PREFIX "scratch"

/* The scratch file's identity for a record: "sname NAME sdev D sino I". */
static void scratch_text(const struct h5shuf_scratch *sc, char *buf, size_t cap)
{
    snprintf(buf, cap, "sname %s sdev %" PRIu64 " sino %" PRIu64, sc->tf.name, (uint64_t)sc->tf.dev, (uint64_t)sc->tf.ino);
}

int h5shuf__ckpt_scratch(h5shuf_job *job, const struct h5shuf_ctx *cx, struct h5shuf_scratch *sc, int *pass1_done)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_resume *rs = &c->rs;
    *pass1_done = 0;
    const struct h5shuf_wal_commit *at = rs->has_piles ? &rs->scratch : rs->has_pass1 ? &rs->p1.scratch : NULL;
    int st;
    const int scatter = job->mode == H5SHUF_MODE_SCATTER; /* the scratch is the pile file, beside its name */
    const char *sdir = scatter ? job->scratch_dir : rs->dir;
    if (rs->found && rs->done)
        at = &rs->done_state;
    if (rs->found)
        c->started = 1; /* the interrupted run's state is this run's now */
    if (rs->found && at) { /* the interrupted run's, at its last commit */
        char name[256] = "";
        uint64_t dev = 0, ino = 0;
        memset(sc, 0, sizeof *sc);
        sc->file = H5I_INVALID_HID;
        sc->dsets = &job->dsets;
        sc->filters = job->scratch_filters;
        sc->id_filters = job->scratch_id_filters;
        snprintf(name, sizeof name, "%s", rs->scratch_name);
        dev = rs->scratch_dev;
        ino = rs->scratch_ino;
        st = h5shuf__tempfile_adopt(&sc->tf, sdir, name, dev, ino, &job->err);
        sc->path = sc->tf.path;
        if (st == H5SHUF_OK)
            st = h5shuf__tempfile_unpark(&sc->tf, sc->path, &job->err);
        if (st == H5SHUF_OK)
            st = h5shuf__walfile_recover(sc->tf.fd, rs->dirfd, SCRATCH_PREFIX, at, &job->err);
        if (st == H5SHUF_OK && rs->done) { /* a finished pile file: only to be placed, never opened again */
            *pass1_done = 2;
            return H5SHUF_OK;
        }
        if (st == H5SHUF_OK)
            st = h5shuf__walfile_new(sc->tf.fd, rs->dirfd, at->eof, SCRATCH_PREFIX, &c->scratch_wal, &job->err);
        h5shuf__walfile_set_sync(c->scratch_wal, rs->synced);
        hid_t fapl = st == H5SHUF_OK ? h5shuf__walfile_fapl(c->scratch_wal, H5SHUF_WALFILE_REOPEN, &job->err) : H5I_INVALID_HID;
        if (st == H5SHUF_OK && fapl < 0)
            st = job->err.status;
        if (st == H5SHUF_OK)
            st = h5shuf__scratch_reopen(sc, fapl, &job->err);
        if (fapl >= 0)
            H5Pclose(fapl);
        if (st == H5SHUF_OK && rs->has_piles) {
            sc->piles = malloc((rs->npiles ? rs->npiles : 1) * sizeof *sc->piles);
            if (!sc->piles)
                return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
            memcpy(sc->piles, rs->piles, rs->npiles * sizeof *sc->piles);
            sc->npiles = sc->cap = rs->npiles;
            sc->next_number = rs->next_number;
            job->plan.piles = rs->npiles;
            *pass1_done = 1;
        } else if (st == H5SHUF_OK) {
            sc->next_number = rs->p1.first_number; /* the pile set reserves its numbers again */
        }
        return st;
    }
    if (!scatter) {
        st = h5shuf__scratch_reserve(sc, rs->dir, "h5shuf-scratch-", job->out_spec.file, "-", &job->dsets,
                                     &job->scratch_filters, &job->scratch_id_filters, &job->err);
    } else { /* named in the journal before it is made (a kill between leaves nothing unnamed) */
        if (rs->found && rs->scratch_intent[0])
            h5shuf__ckpt_remove_own(job->out_spec.file, rs->scratch_intent);
        char name[NAME_MAX + 1];
        h5shuf__tempfile_name(".", job->out_spec.file, ".h5shuf-", name, sizeof name);
        st = h5shuf__ckpt_state_start(job);
        H5SHUF_KILL_POINT();
        if (st == H5SHUF_OK)
            st = h5shuf__resume_record(rs, H5SHUF_REC_SCRATCH, &job->err, "name %s", name);
        H5SHUF_KILL_POINT();
        if (st == H5SHUF_OK)
            st = h5shuf__scratch_reserve_as(sc, job->scratch_dir, name, &job->dsets, &job->scratch_filters,
                                            &job->scratch_id_filters, &job->err);
    }
    if (st == H5SHUF_OK)
        st = h5shuf__progress(&cx->progress, &job->err, H5SHUF_PHASE_CREATE, job->out.n + 1, job->out.n + 1);
    if (st == H5SHUF_OK)
        st = h5shuf__walfile_new(sc->tf.fd, rs->dirfd, 0, SCRATCH_PREFIX, &c->scratch_wal, &job->err);
    h5shuf__walfile_set_sync(c->scratch_wal, rs->synced);
    hid_t fapl = st == H5SHUF_OK ? h5shuf__walfile_fapl(c->scratch_wal, 0, &job->err) : H5I_INVALID_HID;
    if (st == H5SHUF_OK && fapl < 0)
        st = job->err.status;
    if (st == H5SHUF_OK)
        st = h5shuf__scratch_open(sc, fapl, &job->err);
    if (fapl >= 0)
        H5Pclose(fapl);
    return st;
}

/* Commit the scratch (flushed by the caller), recording what record_fmt's caller describes. */
static int scratch_commit_begin(h5shuf_job *job, struct h5shuf_scratch *sc, struct h5shuf_wal_commit *wc)
{
    char cause[256];
    H5SHUF_KILL_POINT();
    if (H5SHUF_FAULT() || H5Fflush(sc->file, H5F_SCOPE_LOCAL) < 0)
        return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot write: %s", sc->path, h5shuf__hdf5_cause(cause, sizeof cause));
    H5SHUF_KILL_POINT();
    return h5shuf__walfile_prepare(job->ckpt.scratch_wal, wc, &job->err);
}

/* A new spill file in the state directory: its name in name, its descriptor, or -1 (error recorded). */
static int spill_create(h5shuf_job *job, char *name, size_t cap)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    int fd = -1;
    errno = EEXIST;
    for (int tries = 0; fd < 0 && errno == EEXIST && tries < 1000; tries++) { /* (one a killed run made, unnamed) */
        snprintf(name, cap, "spill.%u", ++c->spill_seq);
        fd = H5SHUF_FAULT() ? (errno = EIO, -1) : openat(c->rs.dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        h5shuf__err_note_errno(errno);
        h5shuf__fail(&job->err, H5SHUF_EIO, "%s/%s: cannot create: %s", c->rs.dir, name, strerror(errno));
    }
    return fd;
}


/* h5shuf_pass1.checkpoint: every interval, the pile buffers spilled and the scratch committed. */
static int pass1_checkpoint(void *user, uint64_t rows, struct h5shuf_pileset *ps, struct h5shuf_err *err)
{
    h5shuf_job *job = user;
    struct h5shuf_ckpt *c = &job->ckpt;
    struct h5shuf_scratch *sc = c->scratch;
    const double t = now_seconds();
    const uint64_t rb = job->dsets.row_bytes ? job->dsets.row_bytes : 1;
    const int due = (rows - c->last_rows) >= c->rs.interval_bytes / rb ||
                    (c->rs.interval_seconds > 0 && t - c->last_time >= c->rs.interval_seconds);
    if (!due || rows >= job->in.rows) { /* (the end of pass 1 is recorded with its piles) */
        if (c->rs.synced) /* the disk writes the scratch as it grows, not all at the commit's sync */
            h5shuf__fd_writeback(sc->tf.fd);
        return H5SHUF_OK;
    }
    char name[64], fs[512], sn[512];
    uint64_t bytes = 0, sum = 0;
    struct h5shuf_wal_commit wc;
    H5SHUF_KILL_POINT();
    int fd = spill_create(job, name, sizeof name);
    int st = fd < 0 ? err->status : h5shuf__pileset_save(&(struct h5shuf_ctx){err, job->cio, {NULL, NULL}}, ps, fd, &bytes, &sum);
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK && c->rs.synced && fsync(fd) < 0) {
        h5shuf__err_note_errno(errno);
        st = h5shuf__fail(err, H5SHUF_EIO, "%s/%s: cannot sync: %s", c->rs.dir, name, strerror(errno));
    }
    const int made = fd >= 0;
    int recorded = 0;
    if (fd >= 0)
        close(fd);
    if (st == H5SHUF_OK)
        st = scratch_commit_begin(job, sc, &wc);
    if (st == H5SHUF_OK) {
        h5shuf__fstate_text(&wc, fs, sizeof fs);
        scratch_text(sc, sn, sizeof sn);
        H5SHUF_KILL_POINT();
        st = h5shuf__resume_record(&c->rs, H5SHUF_REC_PASS1, err,
                                   "rows %" PRIu64 " piles %" PRIu64 " cap %" PRIu64 " restarts %" PRIu64 " first %" PRIu64
                                   " next %" PRIu64 " %s spill %s spillbytes %" PRIu64 " spillsum 0x%016" PRIx64 " %s",
                                   rows, ps->m, ps->cap, job->plan.restarts, ps->first_number, sc->next_number, fs, name,
                                   bytes, sum, sn);
        recorded = st == H5SHUF_OK;
    }
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__walfile_apply(c->scratch_wal, err);
    if (recorded) { /* the previous spill file is named by no record that counts now */
        if (c->spill[0])
            unlinkat(c->rs.dirfd, c->spill, 0);
        snprintf(c->spill, sizeof c->spill, "%s", name);
    } else if (made) { /* a failure (a full disk) before the record: a resume has no use for this one */
        unlinkat(c->rs.dirfd, name, 0);
    }
    c->last_rows = rows;
    c->last_time = now_seconds();
    H5SHUF_KILL_POINT();
    return st;
}

/* XXH3-64 of a file's bytes (0 on a read error). */
static uint64_t file_hash(int fd)
{
    XXH3_state_t *h = XXH3_createState();
    unsigned char *buf = malloc(1 << 16);
    uint64_t off = 0, sum = 0;
    int ok = h && buf;
    if (ok)
        XXH3_64bits_reset(h);
    for (ssize_t r; ok && (r = pread(fd, buf, 1 << 16, (off_t)off)) != 0; off += (uint64_t)(r > 0 ? r : 0))
        if (r < 0 && errno != EINTR)
            ok = 0;
        else if (r > 0)
            XXH3_64bits_update(h, buf, (size_t)r);
    if (ok)
        sum = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    free(buf);
    return sum;
}

/* h5shuf_pass1.restore: the pile set as the last checkpoint left it. */
static int pass1_restore(void *user, struct h5shuf_pileset *ps, struct h5shuf_err *err)
{
    h5shuf_job *job = user;
    struct h5shuf_ckpt *c = &job->ckpt;
    const struct h5shuf_rpass1 *p1 = &c->rs.p1;
    if (c->restored) /* a restart of the resumed pass 1 begins afresh */
        return H5SHUF_OK;
    c->restored = 1;
    struct h5shuf_scratch *sc = c->scratch;
    if (ps->first_number != p1->first_number || ps->m != p1->piles || ps->cap != p1->cap)
        return h5shuf__fail(err, H5SHUF_EINTERNAL, "the resumed pass 1's piles are not the interrupted run's");
    sc->next_number = p1->next_number;
    int fd = openat(c->rs.dirfd, p1->spill, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat s;
    if (fd < 0 || fstat(fd, &s) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return h5shuf__fail(err, H5SHUF_EIO, "%s/%s: cannot open pass 1's saved buffers: %s", c->rs.dir, p1->spill, strerror(e));
    }
    int st = (uint64_t)s.st_size == p1->spill_bytes && file_hash(fd) == p1->spill_sum
                 ? h5shuf__pileset_restore(&(struct h5shuf_ctx){err, job->cio, {NULL, NULL}}, ps, fd, p1->spill_bytes, err)
                 : h5shuf__fail(err, H5SHUF_EINVAL, "%s/%s: pass 1's saved buffers are not as recorded", c->rs.dir, p1->spill);
    close(fd);
    snprintf(c->spill, sizeof c->spill, "%s", p1->spill);
    unsigned seq = 0;
    if (sscanf(p1->spill, "spill.%u", &seq) == 1 && seq > c->spill_seq) /* new spill files after the one named */
        c->spill_seq = seq;
    return st;
}

void h5shuf__ckpt_pass1_hooks(h5shuf_job *job, struct h5shuf_scratch *sc, struct h5shuf_pass1 *p)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    if (!c->rs.on)
        return;
    c->scratch = sc;
    c->last_rows = p->first_row; /* (a process of a distributed run scatters from its first row) */
    c->last_time = now_seconds();
    p->checkpoint = pass1_checkpoint;
    p->checkpoint_user = job;
    if (c->rs.found && c->rs.has_pass1 && !c->rs.has_piles) {
        p->restore = pass1_restore;
        p->start_row = c->rs.p1.rows_done;
        c->last_rows = c->rs.p1.rows_done;
    }
}

int h5shuf__ckpt_pass1_done(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    if (!c->rs.on)
        return H5SHUF_OK;
    struct h5shuf_wal_commit wc;
    char sn[512], more[768];
    int st = scratch_commit_begin(job, sc, &wc);
    scratch_text(sc, sn, sizeof sn);
    snprintf(more, sizeof more, "%s plan-restarts %" PRIu64 " plan-piles %" PRIu64 " plan-cap %" PRIu64, sn,
             job->plan.restarts, job->plan.piles, job->plan.pile_buffer_rows);
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__resume_record_piles(&c->rs, sc->piles, sc->npiles, sc->next_number, &wc, more, &job->err);
    H5SHUF_KILL_POINT();
    /* a distributed run: applied (and the spill file of the last PASS1 removed) only once every process
     * recorded its PILES, so that until then each can go back to its PASS1 (h5shuf__ckpt_pass1_agree) */
    if (st == H5SHUF_OK && c->barrier)
        st = c->barrier(c->barrier_user, &job->err);
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__walfile_apply(c->scratch_wal, &job->err);
    if (st == H5SHUF_OK && c->spill[0]) {
        unlinkat(c->rs.dirfd, c->spill, 0);
        c->spill[0] = '\0';
    }
    H5SHUF_KILL_POINT();
    return st;
}

/* ---- pass 2 ------------------------------------------------------------------------------------------- */

uint64_t h5shuf__ckpt_first_row(const h5shuf_job *job)
{
    return job->ckpt.rs.on && job->ckpt.rs.found ? job->ckpt.rs.p2_row : 0;
}

void h5shuf__ckpt_pass2_from(h5shuf_job *job, const struct h5shuf_scratch *sc, struct h5shuf_pass2 *p)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    if (!c->rs.on)
        return;
    const uint64_t done = h5shuf__ckpt_first_row(job);
    const uint64_t from = done > p->put_first ? done : p->put_first; /* (a process's rows start at put_first) */
    uint64_t first = p->first_row;
    size_t j = 0;
    while (j < p->npiles && first + p->piles[j].rows <= from && p->piles[j].rows > 0)
        first += p->piles[j++].rows;
    while (j < p->npiles && p->piles[j].rows == 0 && first <= from && from > 0)
        j++;
    p->piles += j;
    p->npiles -= j;
    p->first_row = first;
    p->put_first = from;
    /* a pile is given back only once the rows after it are committed: a resume may need it again */
    if (p->release && p->sc->tf.path && !p->load) {
        p->release = 0;
        c->release_sc = sc;
        c->release_piles = p->piles;
        c->release_n = p->npiles;
        c->release_row = first;
    }
}

/* ---- the end ------------------------------------------------------------------------------------------ */

int h5shuf__ckpt_keeps(const h5shuf_job *job, int st)
{
    /* a resumed run's state is never given up by the run that takes it over (but when it finishes) */
    /* and a run whose disk was full or failed (ENOSPC, EDQUOT, EIO) keeps what it has done for the resume
     * once space is freed or the disk mended, with --resume or not */
    return job->ckpt.rs.on && job->ckpt.started && st != H5SHUF_OK &&
           (job->ckpt.rs.found || (st == H5SHUF_ECANCELED && job->opts.resume) || job->ckpt.disk_keep);
}

void h5shuf__ckpt_scratch_destroy(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    if (job->ckpt.scratch_wal && sc->file >= 0) { /* closed with nothing written: it is removed */
        h5shuf__walfile_discard(job->ckpt.scratch_wal);
        H5Fclose(sc->file);
        sc->file = H5I_INVALID_HID;
    }
    /* A scratch file in the state directory goes with it, once the outputs are in place: a kill before
     * then resumes from the journal, which names it. */
    if (job->ckpt.rs.on && job->ckpt.started && job->mode != H5SHUF_MODE_SCATTER && sc->tf.path) {
        h5shuf__ckpt_scratch_keep(job, sc);
        return;
    }
    h5shuf__scratch_destroy(sc);
}

void h5shuf__ckpt_scratch_keep(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    h5shuf__walfile_discard(job->ckpt.scratch_wal);
    if (sc->file >= 0)
        H5Fclose(sc->file); /* (its writes since the last commit go nowhere that counts) */
    sc->file = H5I_INVALID_HID;
    h5shuf__tempfile_forget(&sc->tf);
    sc->path = NULL;
    free(sc->piles);
    sc->piles = NULL;
    sc->npiles = sc->cap = 0;
}

int h5shuf__ckpt_end(h5shuf_job *job, int st)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    h5shuf__walfile_free(c->target_wal);
    h5shuf__walfile_free(c->scratch_wal);
    c->target_wal = c->scratch_wal = NULL;
    st = h5shuf__job_disk_failed(job, st, NULL); /* (a failure to place the outputs: said, not kept) */
    if (!c->rs.on || !c->started)
        return st;
    if (h5shuf__ckpt_keeps(job, st)) {
        char note[4096 + 128];
        const int disk = c->disk_keep ? h5shuf__err_disk(&job->err) : 0;
        if (disk)
            snprintf(note, sizeof note, "; the run's state is kept in %s: %s, run it again with --resume to continue",
                     c->rs.dir, disk == 1 ? "once there is room" : "once the disk is mended");
        else
            snprintf(note, sizeof note, " (the run's state is kept in %s: run it again with --resume to continue)",
                     c->rs.dir);
        size_t n = strlen(job->err.msg);
        snprintf(job->err.msg + n, sizeof job->err.msg - n, "%s", note);
        h5shuf__journal_close(&c->rs.j);
        return st;
    }
    h5shuf__resume_remove(&c->rs);
    return st;
}


int h5shuf__ckpt_scatter_done(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    if (!c->rs.on)
        return H5SHUF_OK;
    struct h5shuf_wal_commit wc;
    char fs[512], sn[512];
    H5SHUF_KILL_POINT();
    int st = h5shuf__walfile_prepare(c->scratch_wal, &wc, &job->err);
    h5shuf__fstate_text(&wc, fs, sizeof fs);
    scratch_text(sc, sn, sizeof sn);
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__resume_record(&c->rs, H5SHUF_REC_DONE, &job->err, "%s %s", fs, sn);
    H5SHUF_KILL_POINT();
    if (st == H5SHUF_OK)
        st = h5shuf__walfile_apply(c->scratch_wal, &job->err);
    H5SHUF_KILL_POINT();
    return st;
}

/* ---- a distributed run (src/mpi/dist.c) -------------------------------------------------------------- */

void h5shuf__ckpt_set_rank(h5shuf_job *job, int rank, int ranks, int (*barrier)(void *user, struct h5shuf_err *err),
                           void *user)
{
    job->ckpt.rank = rank;
    job->ckpt.ranks = ranks;
    job->ckpt.barrier = barrier;
    job->ckpt.barrier_user = user;
}

void h5shuf__ckpt_dist_state(const h5shuf_job *job, struct h5shuf_ckpt_dist *d)
{
    const struct h5shuf_resume *rs = &job->ckpt.rs;
    memset(d, 0, sizeof *d);
    if (!rs->on || !rs->found)
        return;
    d->found = 1;
    const size_t placed = h5shuf__ckpt_placed_count(job);
    d->finished = placed > 0 && placed == job->out.hi - job->out.lo;
    d->partly_placed = placed > 0 && !d->finished;
    if (rs->level.set) {
        d->level = rs->level.restarts + 1;
        d->piles = rs->level.piles;
        d->cap = rs->level.cap;
    }
    d->piles_done = rs->has_piles;
    d->assembled = rs->assembled;
    /* what the other processes' states depend on: pass 1's end, its restarts, or pass 2 */
    d->shared = rs->has_piles || (rs->level.set && rs->level.restarts > 0) || rs->p2_row > 0 || rs->assembled;
}

int h5shuf__ckpt_pass1_agree(h5shuf_job *job, uint64_t level, uint64_t piles, uint64_t cap, int all_piles)
{
    struct h5shuf_resume *rs = &job->ckpt.rs;
    if (!rs->on || level == 0 || all_piles) /* no process had begun pass 1; or all had finished it */
        return H5SHUF_OK;
    const uint64_t restarts = level - 1;
    const int from_pass1 = rs->found && rs->has_pass1 && rs->p1.restarts == restarts && rs->p1.piles == piles &&
                           rs->p1.cap == cap;
    int st = H5SHUF_OK;
    if (rs->found && (rs->has_piles || (rs->has_pass1 && !from_pass1))) {
        /* recorded before anything of this run's: a kill from here on resumes from that point too */
        H5SHUF_KILL_POINT();
        st = h5shuf__resume_record(rs, H5SHUF_REC_AGAIN, &job->err,
                                   "from %s plan-restarts %" PRIu64 " plan-piles %" PRIu64 " plan-cap %" PRIu64 " ",
                                   from_pass1 ? "pass1" : "start", restarts, piles, cap);
        H5SHUF_KILL_POINT();
    }
    if (st != H5SHUF_OK)
        return st;
    if (rs->found && !from_pass1 && (rs->has_pass1 || rs->has_piles) && rs->scratch_name[0]) {
        unlinkat(rs->dirfd, rs->scratch_name, 0); /* the scratch of an earlier plan: pass 1 starts a new one */
        rs->scratch_name[0] = '\0';
    }
    rs->has_piles = 0;
    rs->has_pass1 = from_pass1;
    job->plan.piles = piles;
    job->plan.pile_buffer_rows = cap;
    job->plan.restarts = restarts;
    return H5SHUF_OK;
}

int h5shuf__ckpt_place_done(h5shuf_job *job, const struct h5shuf_ctx *cx)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    const struct h5shuf_resume *rs = &c->rs;
    c->started = 1;
    if (h5shuf__ckpt_placed_count(job) > 0 || job->out.part) /* in place already, or nothing to place */
        return H5SHUF_OK;
    if (!rs->t || rs->names_only || !rs->created)
        return h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "%s: the interrupted run put outputs in place before "
                            "this process made its own", rs->dir);
    for (size_t i = 0; i < rs->ntargets; i++)
        if (!rs->t[i].done)
            return h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "%s: the interrupted run put outputs in place before "
                                "this process's were all written", rs->dir);
    return targets_resumed(job, cx, job->out.n);
}

hid_t h5shuf__ckpt_target_fapl(h5shuf_job *job, size_t k)
{
    struct h5shuf_target *tg = &job->out.v[k];
    if (!job->ckpt.rs.on)
        return H5Pcreate(H5P_FILE_ACCESS);
    if (h5shuf__tempfile_unpark(&tg->tf, tg->path, &job->err) != H5SHUF_OK)
        return H5I_INVALID_HID;
    return target_fapl(job, k, tg->tf.fd, &job->err);
}

int h5shuf__ckpt_target_assembled(h5shuf_job *job, size_t k)
{
    if (!job->ckpt.rs.on)
        return H5SHUF_OK;
    const struct h5shuf_target *tg = &job->out.v[k];
    return commit_target(job, k, tg->first + tg->rows, 1, " assembled 1", &job->err);
}

void h5shuf__ckpt_target_discard(h5shuf_job *job)
{
    target_discard(job);
}
