/*
 * files.c - the filesystem side of a run: directories, free space, and the commit of a finished file.
 *
 * A finished output is moved into place with link() when the user did not ask to replace an existing
 * file: link fails if a file appeared at the name while h5shuf ran, which rename would silently replace.
 * The file's data reach the disk (fsync) before its name does, and the directory entry after (fsync of
 * the directory), so a crash or power loss leaves either no file at the final name or the whole of it:
 * the order ext4's and XFS's documentation ask of applications (rename alone orders nothing), as
 * SQLite, git and LMDB do it.  Scratch files are never synced: they are worthless after a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "files.h"

int h5shuf__file_fd(hid_t file, const char *path)
{
    void *handle = NULL;
    hid_t fapl = H5Fget_access_plist(file);
    const int sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (!sec2 || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    const int fd = *(const int *)handle; /* sec2's handle is its int descriptor */
    struct stat a, b;
    if (path && !(fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
        return -1;
    return fd;
}

void h5shuf__file_writeback(hid_t file)
{
    const int fd = h5shuf__file_fd(file, NULL);
    if (fd < 0)
        return;
#ifdef SYNC_FILE_RANGE_WRITE
    (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
#ifdef POSIX_FADV_DONTNEED
    /* the pages the calls before wrote back are clean now: free them, and the output's next pages reuse
     * them (dirty pages and those still being written are not dropped) */
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
#endif
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

/* fsync the file or directory at path; 0 or an errno.  EINVAL/ENOTSUP (a file system that cannot sync,
 * such as some FUSE ones, or a directory on one that syncs directories implicitly) count as done. */
static int sync_path(const char *path, int directory)
{
#ifdef H5SHUF_FAULT_INJECTION
    if (h5shuf__fault())
        return EIO;
#endif
    int fd = open(path, (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int e = fsync(fd) == 0 ? 0 : errno;
    close(fd);
    return e == EINVAL || e == ENOTSUP ? 0 : e;
}

/* fsync the directory holding out, after its new entry; when that fails, take out back (a run that fails
 * leaves nothing at its output's name).  Errors name out. */
static int sync_dir_of(const char *out, struct h5shuf_err *err)
{
    char *dir = h5shuf__dir_of(out);
    int e = dir ? sync_path(dir, 1) : ENOMEM;
    free(dir);
    if (!e)
        return H5SHUF_OK;
    unlink(out);
    return h5shuf__fail(err, e == ENOMEM ? H5SHUF_ENOMEM : H5SHUF_EIO, "%s: cannot sync its directory to disk: %s", out,
                        strerror(e));
}

int h5shuf__commit_file(const char *tmp_path, const char *out, int force, struct h5shuf_err *err)
{
    int e = sync_path(tmp_path, 0);
    if (e)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot sync the finished output to disk: %s", out, strerror(e));
    if (force) {
        if (rename(tmp_path, out) != 0)
            return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot rename the finished output into place: %s", out,
                                strerror(errno));
        return sync_dir_of(out, err);
    }
    if (link(tmp_path, out) == 0) { /* fails if a file appeared at out meanwhile: never replace it */
        unlink(tmp_path);
        return sync_dir_of(out, err);
    }
    e = errno;
    if (e == EEXIST)
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)", out);
    if (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP) {
        /* a filesystem without hard links: check, then rename (a file appearing in between is replaced) */
        struct stat st;
        if (stat(out, &st) == 0)
            return h5shuf__fail(err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)",
                                out);
        if (rename(tmp_path, out) == 0)
            return sync_dir_of(out, err);
        e = errno;
    }
    return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot move the output into place: %s", out, strerror(e));
}

const char *h5shuf__fd_shortage(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return NULL;
    }
    if (errno == ENFILE) {
        snprintf(buf, cap, "too many open files in the system");
        return buf;
    }
    if (errno != EMFILE)
        return NULL;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(buf, cap, "too many open files (ulimit -n is %llu)", (unsigned long long)rl.rlim_cur);
    else
        snprintf(buf, cap, "too many open files");
    return buf;
}
