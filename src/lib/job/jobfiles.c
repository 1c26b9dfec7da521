/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobfiles.c - the job's files on disk beyond its own: what interrupted runs left for the same outputs
 * (reported by the plan, removed by the run: leftovers.h), and, when a run fails for want of space, how
 * much more it needs and where (job.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "job.h"
#include "leftovers.h"
#include "tempfile.h"

/* The last component of path. */
static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The first file the job writes: a scatter's pile file, else its first output. */
static const char *first_out(const h5shuf_job *job)
{
    return job->mode == H5SHUF_MODE_SCATTER ? job->out_spec.file : job->out.v[0].path;
}

/* Search (or, remove set, clear) the job's outputs' leftovers into *found. */
static int search(h5shuf_job *job, int remove, struct h5shuf_leftovers *found)
{
    const char *const out = first_out(job);
    char *out_dir = h5shuf__dir_of(out);
    const char **names = calloc(job->out.n ? job->out.n : 1, sizeof *names);
    if (!out_dir || !names) {
        free(out_dir);
        free(names);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    size_t n = 0;
    if (job->mode == H5SHUF_MODE_SCATTER)
        names[n++] = base_of(out);
    else
        for (size_t k = 0; k < job->out.n; k++)
            names[n++] = base_of(job->out.v[k].path);
    const char *scratch_dir = job->mode == H5SHUF_MODE_GATHER ? NULL : job->scratch_dir;
    (remove ? h5shuf__leftovers_remove : h5shuf__leftovers_find)(out_dir, names, n, scratch_dir,
                                                                 base_of(job->out_spec.file), found);
    free(out_dir);
    free(names);
    return H5SHUF_OK;
}

/* "an interrupted run (process P)" or "interrupted runs", into buf. */
static const char *whose(const struct h5shuf_leftovers *f, char *buf, size_t cap)
{
    if (f->several_pids)
        snprintf(buf, cap, "interrupted runs");
    else
        snprintf(buf, cap, "an interrupted run (process %ld)", f->pid);
    return buf;
}

static double mib(uint64_t bytes)
{
    return (double)bytes / (1 << 20);
}

int h5shuf__job_leftovers_plan(h5shuf_job *job)
{
    struct h5shuf_leftovers found;
    job->leftovers_note = 0;
    int st = search(job, 0, &found);
    if (st == H5SHUF_OK && found.set_aside)
        st = h5shuf__job_warn(job, "an interrupted run set %zu file%s aside, such as %s: the file an output's name "
                                   "held before --force replaced it; if that name is now missing, move it back, else "
                                   "remove it",
                              found.set_aside, found.set_aside > 1 ? "s" : "", found.first);
    if (st == H5SHUF_OK && found.files)
        st = h5shuf__job_warn(job, "an interrupted run left %zu file%s of %.1f MiB for this output, such as %s, made "
                                   "on another machine, boot or container (or by an older h5shuf): h5shuf cannot tell "
                                   "whether that run is over, and neither reuses nor removes them",
                              found.files, found.files > 1 ? "s" : "", mib(found.bytes),
                              found.set_aside ? "its temporaries and scratch" : found.first);
    /* a resumed run's own temporaries are "-state-" files too: only another state's are reported */
    if (st == H5SHUF_OK && found.state_files && !job->ckpt.rs.found)
        st = h5shuf__job_warn(job, "an interrupted resumable run left %zu temporary file%s for this output, such as "
                                   "%s, and its state is not in %s: resume it with the --tmpdir it ran with, or "
                                   "remove them",
                              found.state_files, found.state_files > 1 ? "s" : "", found.first_state,
                              job->scratch_dir ? job->scratch_dir : "the scratch directory");
    char who[64];
    if (st == H5SHUF_OK && found.removable) {
        st = h5shuf__job_warn(job, "%s left %zu file%s of %.1f MiB for this output, such as %s: a run removes them",
                              whose(&found, who, sizeof who), found.removable, found.removable > 1 ? "s" : "",
                              mib(found.removable_bytes), found.first_removable);
        job->leftovers_note = job->nwarnings; /* (its index + 1) */
    }
    return st;
}

int h5shuf__job_leftovers_clear(h5shuf_job *job)
{
    if (!job->leftovers_note)
        return H5SHUF_OK;
    const size_t k = job->leftovers_note - 1;
    job->leftovers_note = 0;
    struct h5shuf_leftovers found;
    int st = search(job, 1, &found);
    if (st != H5SHUF_OK)
        return st;
    char text[H5SHUF_ERRMSG_MAX], who[64];
    if (found.removable)
        snprintf(text, sizeof text, "removed %zu file%s of %.1f MiB that %s left for this output, such as %s",
                 found.removable, found.removable > 1 ? "s" : "", mib(found.removable_bytes),
                 whose(&found, who, sizeof who), found.first_removable);
    char *line = found.removable ? strdup(text) : NULL;
    if (found.removable && !line)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    free(job->warnings[k]); /* the plan's "... a run removes them" */
    if (line) {
        job->warnings[k] = line;
    } else { /* none left (another run removed them): nothing to say */
        memmove(job->warnings + k, job->warnings + k + 1, (job->nwarnings - k - 1) * sizeof *job->warnings);
        job->nwarnings--;
    }
    /* the room they held is free now: the free-space check counts it */
    char *out_dir = h5shuf__dir_of(first_out(job));
    dev_t dev;
    if (job->scratch_dir)
        job->plan.scratch_free_bytes = h5shuf__free_bytes(job->scratch_dir, &dev);
    if (out_dir)
        job->plan.output_free_bytes = h5shuf__free_bytes(out_dir, &dev);
    free(out_dir);
    return H5SHUF_OK;
}

/* ---- a run out of space ---------------------------------------------------------------------------- */

/* A filesystem the run writes to: a directory on it, its device, free bytes, what the run needs there in
 * all (the plan's estimates) and what its files hold there now. */
struct fs_room {
    const char *dir;
    dev_t dev;
    uint64_t avail, need, used;
};

/* Add the blocks of the file sb to the filesystem it is on. */
static void count_file(struct fs_room *fs, size_t n, const struct stat *sb)
{
    for (size_t i = 0; i < n; i++)
        if (fs[i].dev == sb->st_dev) {
            fs[i].used += (uint64_t)sb->st_blocks * 512;
            return;
        }
}

static void count_tempfile(struct fs_room *fs, size_t n, const struct h5shuf_tempfile *tf)
{
    struct stat sb;
    if (tf && tf->path && (tf->fd >= 0 ? fstat(tf->fd, &sb) : fstatat(tf->dirfd, tf->name, &sb, AT_SYMLINK_NOFOLLOW)) == 0)
        count_file(fs, n, &sb);
}

/* The files of the state directory (a resumable run's scratch, pile buffers, logs). */
static void count_state(struct fs_room *fs, size_t n, const struct h5shuf_resume *rs)
{
    int fd = rs->dirfd >= 0 ? dup(rs->dirfd) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    struct stat sb;
    for (struct dirent *e; (e = readdir(d));)
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
            count_file(fs, n, &sb);
    closedir(d);
}

int h5shuf__job_disk_failed(h5shuf_job *job, int st, const struct h5shuf_tempfile *scratch)
{
    struct h5shuf_err *err = &job->err;
    if (!job->ckpt.disk_decided) {
        job->ckpt.disk_decided = 1;
        job->ckpt.disk_keep = st != H5SHUF_OK && h5shuf__err_disk(err) != 0;
    }
    if (st == H5SHUF_OK || job->nospace_said || h5shuf__err_disk(err) != 1 ||
        (job->mode != H5SHUF_MODE_SCATTER && !job->out.n)) /* (no output planned: nothing was written) */
        return st;
    job->nospace_said = 1;
    const h5shuf_plan *p = &job->plan;
    char *out_dir = h5shuf__dir_of(first_out(job));
    struct fs_room fs[2] = {{job->scratch_dir ? job->scratch_dir : out_dir, 0, 0, 0, 0}, {out_dir, 0, 0, 0, 0}};
    if (!out_dir)
        return st; /* (out of memory: the first error says what failed) */
    size_t n = 0;
    for (size_t i = 0; i < 2; i++) {
        fs[n] = fs[i];
        fs[n].avail = h5shuf__free_bytes(fs[n].dir, &fs[n].dev);
        if (n == 0 || fs[n].dev != fs[0].dev)
            n++;
    }
    /* the plan's estimates, on the filesystem each goes to: the scratch's (first), the output's */
    fs[0].need += p->scratch_estimate_bytes;
    fs[n - 1].need += p->output_estimate_bytes;
    if (job->ckpt.rs.on) /* (its scratch is in the state directory) */
        count_state(fs, n, &job->ckpt.rs);
    else
        count_tempfile(fs, n, scratch);
    for (size_t k = 0; k < job->out.n; k++)
        count_tempfile(fs, n, &job->out.v[k].tf);
    /* the fuller filesystem (the one that failed, as a rule): what it lacks for the whole run */
    size_t f = n > 1 && fs[1].avail < fs[0].avail ? 1 : 0;
    uint64_t have = fs[f].avail + fs[f].used, more = fs[f].need > have ? fs[f].need - have : 0;
    if (more < ((uint64_t)1 << 20)) /* the estimate fell short: ask for an eighth more than it */
        more = fs[f].need / 8 > ((uint64_t)1 << 20) ? fs[f].need / 8 : (uint64_t)1 << 20;
    char dir[4096], written[64] = "";
    snprintf(dir, sizeof dir, "%s", fs[f].dir);
    free(out_dir);
    if (fs[f].used >= ((uint64_t)1 << 20))
        snprintf(written, sizeof written, ", %llu of it written", (unsigned long long)(fs[f].used >> 20));
    err->status = H5SHUF_ENOSPC; /* the cause in the user's terms: which filesystem, how much room */
    snprintf(err->msg, sizeof err->msg, "no space left on %s: %llu MiB more needed (about %llu MiB in all there%s; "
             "%llu MiB free)", dir, (unsigned long long)((more + (1 << 20) - 1) >> 20),
             (unsigned long long)(fs[f].need >> 20), written, (unsigned long long)(fs[f].avail >> 20));
    return H5SHUF_ENOSPC;
}
