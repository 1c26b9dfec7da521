/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checkpoint.c - the checkpoints of a run and the continuation of an interrupted one (checkpoint.h): the
 * scratch file and pass 1's buffers, where pass 2 goes on, and the state kept or removed at the end (its
 * planning: ckptplan.c; its output files: ckpttargets.c; a distributed run's agreement: ckptdist.c).
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
#include "ckpttargets.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "pilesave.h"
#include "plan.h"
#include "tempfile.h"
#include "walrecover.h"
#include "walvfd.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*-*************************************
*  Pass 1: the scatter's checkpoints
***************************************/

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

/*-*************************************
*  Pass 2: where the gather resumes
***************************************/

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

/*-*************************************
*  The end: the scratch kept or destroyed
***************************************/

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

void h5shuf__ckpt_give_up(h5shuf_job *job, int st)
{
    struct h5shuf_ckpt *c = &job->ckpt;
    if (!c->rs.on || !c->started || st == H5SHUF_OK || c->given_up || h5shuf__ckpt_keeps(job, st))
        return;
    h5shuf__resume_remove(&c->rs);
    c->given_up = 1;
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
    if (!c->given_up) /* (once only: its name is not looked up again) */
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
