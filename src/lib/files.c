/*
 * files.c - the filesystem side of a run: directories, free space, and the commit of a finished file.
 *
 * A finished output is moved into place with link() when the user did not ask to replace an existing
 * file: link fails if a file appeared at the name while h5shuf ran, which rename would silently replace.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "files.h"
#include "job.h"

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
uint64_t h5shuf__free_bytes(const char *dir, dev_t *dev)
{
    struct statvfs v;
    struct stat st;
    *dev = stat(dir, &st) == 0 ? st.st_dev : 0;
    return statvfs(dir, &v) == 0 ? (uint64_t)v.f_bavail * v.f_frsize : 0;
}

/* Move the finished file tmp_path to out; without force, never replace a file that appeared. */
int h5shuf__commit_file(h5shuf_job *job, const char *tmp_path, const char *out)
{
    if (job->opts.force) {
        if (rename(tmp_path, out) != 0)
            return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot rename the finished output into place: %s", out,
                                strerror(errno));
        return H5SHUF_OK;
    }
    if (link(tmp_path, out) == 0) { /* fails if a file appeared at out meanwhile: never replace it */
        unlink(tmp_path);
        return H5SHUF_OK;
    }
    int e = errno;
    if (e == EEXIST)
        return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)", out);
    if (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP) {
        /* a filesystem without hard links: check, then rename (a file appearing in between is replaced) */
        struct stat st;
        if (stat(out, &st) == 0)
            return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)",
                                out);
        if (rename(tmp_path, out) == 0)
            return H5SHUF_OK;
        e = errno;
    }
    return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot move the output into place: %s", out, strerror(e));
}

int h5shuf__output_commit(h5shuf_job *job, const char *tmp_path)
{
    return h5shuf__commit_file(job, tmp_path, job->out_spec.file);
}
