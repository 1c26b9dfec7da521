/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tempfile.c - h5shuf's own files under temporary names, used through their descriptors (tempfile.h).
 *
 * The threat: a directory another user can write (a group project directory, mode 2775, without the
 * sticky bit), who swaps a temporary name for a symbolic link to one of the runner's files.  Every write
 * here goes through the descriptor that the O_EXCL creation returned, so it reaches the inode h5shuf made
 * and nothing else:
 * - HDF5 opens the file as /proc/self/fd/N: the kernel resolves that magic link to the open file itself
 *   (proc(5)), never to whatever the name in the directory now is; nobody but this process can change its
 *   descriptor table.  (HDF5 1.10 has no call that takes a descriptor; its sec2 driver opens a name.)
 * - truncating is ftruncate, the mode fchmod, the sync fsync of the descriptor;
 * - the final move is linkat(AT_FDCWD, "/proc/self/fd/N", dirfd, NAME, AT_SYMLINK_FOLLOW), the way
 *   open(2) documents for O_TMPFILE: it links the inode itself, and fails if NAME exists, so a file that
 *   appeared there is never replaced.  Replacing (--force) needs a rename, and rename takes names: the
 *   inode is linked under a fresh random name just before and that name renamed onto NAME, which is then
 *   checked (fstatat, AT_SYMLINK_NOFOLLOW) to be this file; a swap in that instant is undone from the hard
 *   link the caller kept of the old file (all or nothing).  renameat2's RENAME_EXCHANGE would not help:
 *   it too takes names.
 * - a name is unlinked only after fstatat shows it still is this file.
 * A parked file (its descriptor closed, so that a run of many shards holds few descriptors) is opened
 * again with O_NOFOLLOW|O_NONBLOCK through the directory's descriptor and kept only when its device and
 * inode are the ones created: a link, FIFO or other file at the name is closed unread and unwritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "files.h"
#include "tempfile.h"

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* Tries at a random name before giving up (as glibc's mkstemp: TMP_MAX is 238328). */
#define NAME_TRIES 1000

/*-*************************************
*  Temporary files: names and creation
***************************************/

void h5shuf__tempfile_init(struct h5shuf_tempfile *tf)
{
    memset(tf, 0, sizeof *tf);
    tf->dirfd = tf->fd = -1;
}

int h5shuf__tempfile_is_at(int dirfd, const char *name, dev_t dev, ino_t ino)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev && st.st_ino == ino;
}

int h5shuf__tempfile_lost(const struct h5shuf_tempfile *tf)
{
    return tf->path && !h5shuf__tempfile_is_at(tf->dirfd, tf->name, tf->dev, tf->ino);
}

int h5shuf__tempfile_fail_replaced(const struct h5shuf_tempfile *tf, const char *out, struct h5shuf_err *err)
{
    const int dirlen = (int)(tf->name - tf->path) - 1;
    return h5shuf__fail(err, H5SHUF_EIO,
                        "%s: its temporary file %s was replaced while h5shuf ran (does another user write %.*s?); "
                        "nothing was written through it",
                        out, tf->path, dirlen > 0 ? dirlen : 1, dirlen > 0 ? tf->path : "/");
}

/* Fill the XXXXXX at the end of name with random letters and digits. */
static void randomize(char *name)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char r[6];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) { /* (never short for 6 bytes) */
        static unsigned long counter;
        unsigned long x = (unsigned long)getpid() * 2654435761u + ++counter * 40503u;
        for (size_t i = 0; i < sizeof r; i++, x >>= 5)
            r[i] = (unsigned char)x;
    }
    char *x = name + strlen(name) - 6;
    for (size_t i = 0; i < 6; i++)
        x[i] = set[r[i] % (sizeof set - 1)];
}

/* Record the descriptor's identity and its /proc name. */
static void adopt(struct h5shuf_tempfile *tf, int fd, const struct stat *st)
{
    tf->fd = fd;
    tf->dev = st->st_dev;
    tf->ino = st->st_ino;
    snprintf(tf->hdf5_name, sizeof tf->hdf5_name, "/proc/self/fd/%d", fd);
}

/* "PID-TAG-KIND" (KIND "XXXXXX", "old-XXXXXX" or "state-XXXXXX"): which process made a name, in which
 * space of process ids (h5shuf__pid_space), and for what (leftovers.h), into buf of cap bytes. */
static void run_words(const char *kind, char *buf, size_t cap)
{
    char tag[9];
    h5shuf__pid_space(tag);
    snprintf(buf, cap, "%ld-%s-%sXXXXXX", (long)getpid(), tag, kind);
}

/* The name "LEAD BASE MID PID-TAG-[KIND]XXXXXX" (XXXXXX left for randomize) in buf of cap bytes (at
 * least NAME_MAX + 1); its length. */
static size_t make_name(const char *lead, const char *for_path, const char *mid, const char *kind, char *buf,
                        size_t cap)
{
    const char *slash = strrchr(for_path, '/');
    const char *base = slash ? slash + 1 : for_path;
    char pid[64];
    run_words(kind, pid, sizeof pid);
    /* the name fits NAME_MAX however long BASE is (an output name near the limit still gets a temporary) */
    const size_t fixed = strlen(lead) + strlen(mid) + strlen(pid);
    const size_t keep = strlen(base) + fixed <= NAME_MAX ? strlen(base) : NAME_MAX - fixed;
    int n = snprintf(buf, cap, "%s%.*s%s%s", lead, (int)keep, base, mid, pid);
    return n < 0 ? 0 : (size_t)n;
}

void h5shuf__tempfile_name(const char *lead, const char *for_path, const char *mid, char *buf, size_t cap)
{
    make_name(lead, for_path, mid, "state-", buf, cap);
    randomize(buf);
}

/* Create tf->name (in tf->path) in dir with O_EXCL, tries times with a fresh random suffix each (tries 1:
 * that name only). */
static int create_in(struct h5shuf_tempfile *tf, const char *dir, int tries, const char *what, struct h5shuf_err *err);

int h5shuf__tempfile_create_as(struct h5shuf_tempfile *tf, const char *dir, const char *name, const char *what,
                               struct h5shuf_err *err)
{
    h5shuf__tempfile_init(tf);
    const size_t len = strlen(dir) + strlen(name) + 2;
    if (!(tf->path = malloc(len)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    const int n = snprintf(tf->path, len, "%s/%s", dir, name);
    tf->name = tf->path + n - (int)strlen(name);
    return create_in(tf, dir, 1, what, err);
}

int h5shuf__tempfile_create(struct h5shuf_tempfile *tf, const char *dir, const char *lead, const char *for_path,
                            const char *mid, const char *what, struct h5shuf_err *err)
{
    h5shuf__tempfile_init(tf);
    char name[NAME_MAX + 1];
    const size_t nlen = make_name(lead, for_path, mid, "", name, sizeof name);
    const size_t len = strlen(dir) + 1 + nlen + 1;
    tf->path = malloc(len);
    if (!tf->path)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    const int n = snprintf(tf->path, len, "%s/%s", dir, name);
    tf->name = tf->path + n - (int)nlen;
    return create_in(tf, dir, NAME_TRIES, what, err);
}

static int create_in(struct h5shuf_tempfile *tf, const char *dir, int tries_max, const char *what, struct h5shuf_err *err)
{
    int st = H5SHUF_OK, e = 0;
    struct stat sb;
    /* the directory as the user named it: a symbolic link there is followed only if it was one already */
    struct stat ld;
    const int nofollow = lstat(dir, &ld) == 0 && !S_ISLNK(ld.st_mode) ? O_NOFOLLOW : 0;
    tf->dirfd = H5SHUF_FAULT() ? (errno = EIO, -1) : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow);
    if (tf->dirfd < 0) {
        e = errno;
        goto out;
    }
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < tries_max; tries++) {
        if (tries_max > 1)
            randomize(tf->path);
        fd = openat(tf->dirfd, tf->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        e = errno;
        goto out;
    }
    if (fstat(fd, &sb) != 0) {
        e = errno;
        unlinkat(tf->dirfd, tf->name, 0); /* just made with O_EXCL: ours (a swap since then is undone) */
        close(fd);
        goto out;
    }
    adopt(tf, fd, &sb);
    /* HDF5 reaches the file by /proc/self/fd/N: without /proc it cannot be used safely */
    if (access(tf->hdf5_name, R_OK | W_OK) != 0) {
        e = errno;
        h5shuf__tempfile_remove(tf);
        return h5shuf__fail(err, H5SHUF_EIO, "%s in %s: cannot reach it by its descriptor (%s: %s; is /proc mounted?)",
                            what, dir, "/proc/self/fd", strerror(e));
    }
out:
    if (e) {
        char cause[128];
        const char *why = h5shuf__fd_limit_cause(e, cause, sizeof cause);
        st = h5shuf__fail(err, e == ENOMEM ? H5SHUF_ENOMEM : H5SHUF_EIO, "%s in %s: %s", what, dir, why ? why : strerror(e));
        if (tf->dirfd >= 0)
            close(tf->dirfd);
        free(tf->path);
        h5shuf__tempfile_init(tf);
    }
    return st;
}

/*-*************************************
*  Parking, adopting and removing
***************************************/

void h5shuf__tempfile_park(struct h5shuf_tempfile *tf)
{
    if (tf->path && tf->fd >= 0)
        close(tf->fd);
    tf->fd = -1;
    tf->hdf5_name[0] = '\0';
}

int h5shuf__tempfile_unpark(struct h5shuf_tempfile *tf, const char *out, struct h5shuf_err *err)
{
    if (!tf->path || tf->fd >= 0)
        return H5SHUF_OK;
    int fd = H5SHUF_FAULT() ? (errno = EIO, -1)
                            : openat(tf->dirfd, tf->name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == tf->dev && sb.st_ino == tf->ino) {
        adopt(tf, fd, &sb);
        return H5SHUF_OK;
    }
    const int e = errno;
    if (fd >= 0) {
        close(fd);
        return h5shuf__tempfile_fail_replaced(tf, out, err);
    }
    if (e == ELOOP || e == ENOENT)
        return h5shuf__tempfile_fail_replaced(tf, out, err);
    return h5shuf__fail(err, e == ENOMEM ? H5SHUF_ENOMEM : H5SHUF_EIO, "%s: cannot reopen its temporary file %s: %s", out,
                        tf->path, strerror(e));
}

int h5shuf__tempfile_adopt(struct h5shuf_tempfile *tf, const char *dir, const char *name, uint64_t dev, uint64_t ino,
                           struct h5shuf_err *err)
{
    h5shuf__tempfile_init(tf);
    const size_t len = strlen(dir) + strlen(name) + 2;
    if (!(tf->path = malloc(len)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    const int n = snprintf(tf->path, len, "%s/%s", dir, name);
    tf->name = tf->path + n - (int)strlen(name);
    struct stat ld;
    const int nofollow = lstat(dir, &ld) == 0 && !S_ISLNK(ld.st_mode) ? O_NOFOLLOW : 0;
    tf->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow);
    if (tf->dirfd < 0) {
        const int e = errno;
        free(tf->path);
        h5shuf__tempfile_init(tf);
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot open the directory: %s", dir, strerror(e));
    }
    tf->dev = (dev_t)dev;
    tf->ino = (ino_t)ino;
    return H5SHUF_OK;
}

void h5shuf__tempfile_forget(struct h5shuf_tempfile *tf)
{
    if (tf->path && tf->fd >= 0)
        close(tf->fd);
    if (tf->path && tf->dirfd >= 0)
        close(tf->dirfd);
    free(tf->path);
    h5shuf__tempfile_init(tf);
}

void h5shuf__tempfile_empty(const struct h5shuf_tempfile *tf)
{
    if (tf->path && tf->fd >= 0)
        (void)!ftruncate(tf->fd, 0);
}

void h5shuf__tempfile_remove(struct h5shuf_tempfile *tf)
{
    if (!tf->path) { /* nothing (a zeroed tempfile's descriptors are not its own) */
        h5shuf__tempfile_init(tf);
        return;
    }
    if (tf->dirfd >= 0 && h5shuf__tempfile_is_at(tf->dirfd, tf->name, tf->dev, tf->ino))
        unlinkat(tf->dirfd, tf->name, 0);
    if (tf->fd >= 0)
        close(tf->fd);
    if (tf->dirfd >= 0)
        close(tf->dirfd);
    free(tf->path);
    h5shuf__tempfile_init(tf);
}

/*-*************************************
*  Committing: the finished files at their names
***************************************/

/* fsync descriptor fd; 0 or an errno.  EINVAL/ENOTSUP (a file system that cannot sync, such as some FUSE
 * ones, or a directory on one that syncs directories implicitly) count as done. */
static int sync_fd(int fd)
{
#ifdef H5SHUF_FAULT_INJECTION
    if (h5shuf__fault())
        return EIO;
#endif
    int e = fsync(fd) == 0 ? 0 : errno;
    return e == EINVAL || e == ENOTSUP ? 0 : e;
}

/* The last component of path. */
static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Link the file (its inode, through /proc/self/fd/N) under a new random name beside the temporary one
 * (".NAME.h5shuf-PID-TAG-XXXXXX"), written into fresh (NAME_MAX + 1 bytes); 0 or an errno. */
static int link_fresh(const struct h5shuf_tempfile *tf, const char *name, char *fresh)
{
    make_name(".", name, ".h5shuf-", "", fresh, NAME_MAX + 1);
    int e = EEXIST;
    for (int tries = 0; e == EEXIST && tries < NAME_TRIES; tries++) {
        randomize(fresh);
        e = linkat(AT_FDCWD, tf->hdf5_name, tf->dirfd, fresh, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
    }
    return e;
}

/* Put the finished file at out's name: 0, or an errno (EEXIST: a file is there and force is off; ESTALE:
 * what a rename put there is not this file, so the caller takes it back).  *renamed tells that the
 * temporary name itself was renamed onto out. */
static int place(struct h5shuf_tempfile *tf, const char *name, int force, int *renamed)
{
    *renamed = 0;
#ifdef H5SHUF_FAULT_INJECTION
    if (h5shuf__fault())
        return EIO;
#endif
    if (linkat(AT_FDCWD, tf->hdf5_name, tf->dirfd, name, AT_SYMLINK_FOLLOW) == 0)
        return 0; /* out is this inode, by construction */
    int e = errno;
    if (e == EEXIST && !force)
        return EEXIST;
    if (e == EEXIST) {
        /* Replace (force): rename onto out a second name of the inode made just now by linkat, not the
         * temporary name, which another user may have taken over during the run. */
        char fresh[NAME_MAX + 1];
        if ((e = link_fresh(tf, name, fresh)) == 0) {
            if (renameat(tf->dirfd, fresh, tf->dirfd, name) != 0) {
                e = errno;
                if (h5shuf__tempfile_is_at(tf->dirfd, fresh, tf->dev, tf->ino))
                    unlinkat(tf->dirfd, fresh, 0);
                return e;
            }
            return h5shuf__tempfile_is_at(tf->dirfd, name, tf->dev, tf->ino) ? 0 : ESTALE;
        }
    }
    if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP && e != ENOENT)
        return e;
    /* A file system without hard links (EPERM, ENOTSUP) or without /proc's links (ENOENT): rename the
     * temporary name, checked to still be this file just before and after. */
    if (!force && faccessat(tf->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return EEXIST;
    if (!h5shuf__tempfile_is_at(tf->dirfd, tf->name, tf->dev, tf->ino))
        return ESTALE; /* its name was taken over: nothing of ours to move */
    if (renameat(tf->dirfd, tf->name, tf->dirfd, name) != 0)
        return errno;
    *renamed = 1;
    return h5shuf__tempfile_is_at(tf->dirfd, name, tf->dev, tf->ino) ? 0 : ESTALE;
}

/* Move tf (finished, closed by HDF5) to out's name in its directory, durably; see h5shuf__tempfile_commit.
 * The descriptors stay open (the caller releases); *placed tells that out now is this file. */
static int commit_one(struct h5shuf_tempfile *tf, const char *out, mode_t mode, int force, int *placed,
                      struct h5shuf_err *err)
{
    const char *name = base_of(out);
    int renamed = 0, e, st;
    *placed = 0;
    if ((st = h5shuf__tempfile_unpark(tf, out, err)) != H5SHUF_OK)
        return st;
    e = fchmod(tf->fd, mode & ~h5shuf__umask()) == 0 ? sync_fd(tf->fd) : errno;
    if (e) {
        h5shuf__err_note_errno(e);
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot sync the finished output to disk: %s", out, strerror(e));
    }
    e = place(tf, name, force, &renamed);
    if (e == EEXIST)
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: it appeared while h5shuf ran (use --force to replace it)", out);
    if (e == ESTALE || (e == ENOENT && h5shuf__tempfile_lost(tf))) /* (a file with no link cannot be linked) */
        return h5shuf__tempfile_fail_replaced(tf, out, err); /* the caller puts back what a rename replaced */
    if (e)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot move the output into place: %s", out, strerror(e));
    *placed = 1;
    if (!renamed && h5shuf__tempfile_is_at(tf->dirfd, tf->name, tf->dev, tf->ino))
        unlinkat(tf->dirfd, tf->name, 0);
    if ((e = sync_fd(tf->dirfd)) != 0)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot sync its directory to disk: %s", out, strerror(e));
    return H5SHUF_OK;
}

/* An existing file at a final name, kept under a hard link until the set is in place. */
struct kept {
    char *name; /* the link's name in the directory, or NULL: nothing was at the final name */
    dev_t dev;
    ino_t ino;
};

/* Link the entry at name (if any) in tf's directory aside under ".NAME.h5shuf-PID-old-XXXXXX". */
static int keep_old(const struct h5shuf_tempfile *tf, const char *name, const char *out, struct kept *k,
                    struct h5shuf_err *err)
{
    struct stat sb;
    if (fstatat(tf->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? H5SHUF_OK
                               : h5shuf__fail(err, H5SHUF_EIO, "%s: %s", out, strerror(errno));
    if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) /* (a directory or device appeared there meanwhile) */
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: exists and is not a regular file; not replacing it", out);
    char pid[64];
    run_words("old-", pid, sizeof pid);
    const size_t keep = strlen(name) + strlen(pid) + 9 <= NAME_MAX ? strlen(name) : NAME_MAX - strlen(pid) - 9;
    const size_t len = keep + strlen(pid) + 10;
    if (!(k->name = malloc(len)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    snprintf(k->name, len, ".%.*s.h5shuf-%s", (int)keep, name, pid);
    int e = EEXIST;
    for (int tries = 0; e == EEXIST && tries < NAME_TRIES; tries++) {
        randomize(k->name);
        e = linkat(tf->dirfd, name, tf->dirfd, k->name, 0) == 0 ? 0 : errno; /* the entry itself, link or file */
    }
    if (e) {
        free(k->name);
        k->name = NULL;
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot keep the file it replaces until the output is in place: %s",
                            out, strerror(e));
    }
    k->dev = sb.st_dev;
    k->ino = sb.st_ino;
    return H5SHUF_OK;
}

/* A set of files placed at their final names, the files they replaced kept under second names. */
struct h5shuf_placed {
    size_t n;
    struct h5shuf_tempfile **tf; /* the caller's */
    const char **out;            /* the caller's strings */
    struct kept *kept;
    unsigned char *placed;       /* 1: this file is at out; 2: its placing failed (something may be there) */
};

void h5shuf__tempfile_settle(struct h5shuf_placed *set, int keep)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++) {
        struct h5shuf_tempfile *t = set->tf[i];
        const char *name = base_of(set->out[i]);
        if (!keep && set->placed[i]) {
            /* take back this run's file, or what a swap moved there: the old file returns, or none */
            if (set->kept[i].name) /* (a no-op when both names are the old file: its second name goes below) */
                (void)renameat(t->dirfd, set->kept[i].name, t->dirfd, name);
            else if (set->placed[i] == 1 && h5shuf__tempfile_is_at(t->dirfd, name, t->dev, t->ino))
                unlinkat(t->dirfd, name, 0);
            (void)sync_fd(t->dirfd);
        }
        if (set->kept[i].name && h5shuf__tempfile_is_at(t->dirfd, set->kept[i].name, set->kept[i].dev, set->kept[i].ino))
            unlinkat(t->dirfd, set->kept[i].name, 0); /* replaced (or never touched): the second name goes */
        free(set->kept[i].name);
        if (keep) { /* in place: nothing left to remove */
            free(t->path);
            t->path = NULL;
            h5shuf__tempfile_park(t);
            close(t->dirfd);
            h5shuf__tempfile_init(t);
        }
    }
    free(set->kept);
    free(set->placed);
    free(set->tf);
    free(set->out);
    free(set);
}

int h5shuf__tempfile_place_all(struct h5shuf_tempfile *const *tf, const char *const *out, size_t n, mode_t mode,
                               int force, struct h5shuf_placed **setp, struct h5shuf_err *err)
{
    struct h5shuf_placed *set = calloc(1, sizeof *set);
    *setp = NULL;
    if (set) {
        set->kept = calloc(n ? n : 1, sizeof *set->kept);
        set->placed = calloc(n ? n : 1, 1);
        set->tf = malloc((n ? n : 1) * sizeof *set->tf);
        set->out = malloc((n ? n : 1) * sizeof *set->out);
    }
    if (!set || !set->kept || !set->placed || !set->tf || !set->out) {
        if (set) {
            free(set->kept);
            free(set->placed);
            free(set->tf);
            free(set->out);
            free(set);
        }
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    set->n = n;
    for (size_t i = 0; i < n; i++) {
        set->tf[i] = tf[i];
        set->out[i] = out[i];
    }
    int st = H5SHUF_OK;
    /* with force, every file being replaced is kept under a second name until all new ones are in place */
    for (size_t i = 0; force && st == H5SHUF_OK && i < n; i++)
        st = keep_old(tf[i], base_of(out[i]), out[i], &set->kept[i], err);
    for (size_t i = 0; st == H5SHUF_OK && i < n; i++) {
        int p = 0;
        st = commit_one(tf[i], out[i], mode, force, &p, err);
        set->placed[i] = (unsigned char)(p ? 1 : st != H5SHUF_OK ? 2 : 0);
    }
    if (st != H5SHUF_OK)
        h5shuf__tempfile_settle(set, 0);
    else
        *setp = set;
    return st;
}

int h5shuf__tempfile_commit_all(struct h5shuf_tempfile *const *tf, const char *const *out, size_t n, mode_t mode,
                                int force, struct h5shuf_err *err)
{
    struct h5shuf_placed *set;
    int st = h5shuf__tempfile_place_all(tf, out, n, mode, force, &set, err);
    h5shuf__tempfile_settle(set, st == H5SHUF_OK);
    return st;
}
