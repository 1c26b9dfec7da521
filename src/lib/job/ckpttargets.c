/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ckpttargets.c - the output files of a checkpointed run (ckpttargets.h): named in the journal before they
 * are made, made, synced and recorded; written through their redo logs and committed at each unit of rows
 * (the piles before that row given back); taken back at their last commit by a resumed run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckptplan.h"
#include "ckpttargets.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "tempfile.h"
#include "walrecover.h"
#include "walvfd.h"

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

int h5shuf__ckpt_state_start(h5shuf_job *job)
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

void h5shuf__ckpt_remove_own(const char *path, const char *name)
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

/* ---- a distributed run's outputs (src/mpi/dist.c) ---------------------------------------------------- */

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
