/*
 * files.c - the filesystem side of a run: directories, free space, and the commit of a finished file.
 *
 * A finished output is moved into place with link() when the user did not ask to replace an existing
 * file: link fails if a file appeared at the name while h5shuf ran, which rename would silently replace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "files.h"

char *h5shuf__dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

char *h5shuf__temp_template(const char *dir, const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = strlen(dir) + strlen(base) + 32;
    char *t = malloc(len);
    if (t)
        snprintf(t, len, "%s/.%s.h5shuf-XXXXXX", dir, base);
    return t;
}

void h5shuf__mode_of_new_file(const char *path)
{
    /* mkstemp makes the file 0600; give it the mode a new file gets (0666 less the umask). */
    mode_t mask = umask(0);
    umask(mask);
    chmod(path, 0666 & ~mask);
}

uint64_t h5shuf__free_bytes(const char *dir, dev_t *dev)
{
    struct statvfs v;
    struct stat st;
    *dev = stat(dir, &st) == 0 ? st.st_dev : 0;
    return statvfs(dir, &v) == 0 ? (uint64_t)v.f_bavail * v.f_frsize : 0;
}

int h5shuf__commit_file(const char *tmp_path, const char *out, int force, struct h5shuf_err *err)
{
    if (force) {
        if (rename(tmp_path, out) != 0)
            return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot rename the finished output into place: %s", out,
                                strerror(errno));
        return H5SHUF_OK;
    }
    if (link(tmp_path, out) == 0) { /* fails if a file appeared at out meanwhile: never replace it */
        unlink(tmp_path);
        return H5SHUF_OK;
    }
    int e = errno;
    if (e == EEXIST)
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)", out);
    if (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP) {
        /* a filesystem without hard links: check, then rename (a file appearing in between is replaced) */
        struct stat st;
        if (stat(out, &st) == 0)
            return h5shuf__fail(err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)",
                                out);
        if (rename(tmp_path, out) == 0)
            return H5SHUF_OK;
        e = errno;
    }
    return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot move the output into place: %s", out, strerror(e));
}
