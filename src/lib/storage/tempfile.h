/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tempfile.h - a file of h5shuf's own under a temporary name: made with O_CREAT|O_EXCL|O_NOFOLLOW in a
 * directory opened once, then used only through its descriptor (HDF5 opens it as /proc/self/fd/N), and
 * at the end moved to its final name by linkat(2) of that descriptor, or removed (tempfile.c).
 *
 * Why: the directory may be writable by another user (a group project directory without the sticky
 * bit), who can replace the temporary name with a symbolic link at any instant.  A file reopened or moved
 * by name would then write, truncate or rename whatever the link points at.  Through the descriptor, what
 * h5shuf writes and what it moves into place is always the inode it created.
 */
#ifndef H5SHUF_TEMPFILE_H
#define H5SHUF_TEMPFILE_H

#include <sys/types.h>

#include "error.h"

/* A temporary file.  It holds one while path is set; zeroed (or h5shuf__tempfile_init) it holds nothing,
 * and the functions below touch no descriptor of it. */
struct h5shuf_tempfile {
    int dirfd;          /* its directory, opened once (O_DIRECTORY); valid while path is set */
    int fd;             /* the file (O_RDWR), from its creation; -1 while parked (h5shuf__tempfile_park) */
    char *path;         /* "DIR/NAME": for messages and signal handlers; NULL when there is no file */
    const char *name;   /* NAME: the last component of path, relative to dirfd */
    dev_t dev;          /* its identity, to recognise it at its name after a park */
    ino_t ino;
    char hdf5_name[32]; /* "/proc/self/fd/N" while fd >= 0: the name HDF5 opens it by */
};

/* An empty tempfile (no file, descriptors -1). */
H5SHUF_INTERNAL void h5shuf__tempfile_init(struct h5shuf_tempfile *tf);

/* Create an empty file (mode 0600) in dir named "LEAD BASE MID PID-TAG-XXXXXX" (XXXXXX random; BASE the
 * last component of for_path, cut so that the name fits NAME_MAX; TAG the space of process ids PID is in,
 * files.h), e.g. ".out.h5.h5shuf-4242-9c0e21f7-a8Zq0F": the name says which output (BASE) and which run
 * (the process PID of this machine's boot and pid namespace) it belongs to, so that a later run can
 * remove it once that process is gone (leftovers.h).  The directory is
 * opened once and kept; the file is created with O_CREAT|O_EXCL|O_NOFOLLOW, so it is always new and ours.
 * Returns H5SHUF_OK, H5SHUF_EIO ("WHAT in DIR: cause", what e.g. "cannot create the scratch file") or
 * H5SHUF_ENOMEM; on failure tf holds nothing.  Release with h5shuf__tempfile_remove or _commit_all. */
H5SHUF_INTERNAL int h5shuf__tempfile_create(struct h5shuf_tempfile *tf, const char *dir, const char *lead,
                                            const char *for_path, const char *mid, const char *what,
                                            struct h5shuf_err *err);

/* The name to give HDF5's H5Fcreate/H5Fopen for the file: /proc/self/fd/N of its descriptor, which
 * resolves to the inode itself whatever is at its name now.  Valid while the file is not parked. */
static inline const char *h5shuf__tempfile_hdf5_name(const struct h5shuf_tempfile *tf)
{
    return tf->hdf5_name;
}

/* Close the descriptor of a file not in use (HDF5 closed it too), so that a run of many files holds a
 * bounded number of descriptors; h5shuf__tempfile_unpark takes it back.  The name stays. */
H5SHUF_INTERNAL void h5shuf__tempfile_park(struct h5shuf_tempfile *tf);

/* Open a parked file again: openat(dirfd, NAME, O_RDWR|O_NOFOLLOW|O_NONBLOCK), then kept only when it is
 * the same inode (device and inode number) as created; anything else at the name (a symbolic link, a
 * FIFO, another file) is closed untouched and the call fails with H5SHUF_EIO "OUT: its temporary file
 * PATH was replaced while h5shuf ran".  out names the final file in the message.  No-op when not parked. */
H5SHUF_INTERNAL int h5shuf__tempfile_unpark(struct h5shuf_tempfile *tf, const char *out, struct h5shuf_err *err);

/* The two halves of h5shuf__tempfile_create, for a name that must be recorded before the file exists (a
 * resumable run's journal, resume.h): a fresh name as h5shuf__tempfile_create makes it but for "state-"
 * before its XXXXXX ("LEAD BASE MID PID-TAG-state-XXXXXX": a file a state names, which a later run never
 * removes as a leftover; the last component only, into buf of cap bytes; its XXXXXX random), then the
 * file created with exactly that name (O_EXCL: EEXIST is an error, H5SHUF_EIO). */
H5SHUF_INTERNAL void h5shuf__tempfile_name(const char *lead, const char *for_path, const char *mid, char *buf, size_t cap);
H5SHUF_INTERNAL int h5shuf__tempfile_create_as(struct h5shuf_tempfile *tf, const char *dir, const char *name,
                                               const char *what, struct h5shuf_err *err);

/* Take over a file an interrupted run made (resume.h): tf (empty) becomes the file named name in directory
 * dir, parked, which h5shuf__tempfile_unpark then opens only while it is still the file dev/ino (a
 * regular file of this user's).  H5SHUF_OK, or ENOMEM / EIO (the directory cannot be opened). */
H5SHUF_INTERNAL int h5shuf__tempfile_adopt(struct h5shuf_tempfile *tf, const char *dir, const char *name, uint64_t dev,
                                           uint64_t ino, struct h5shuf_err *err);

/* Let go of the file without removing it (a resumable run's, kept for --resume): descriptors closed, tf
 * emptied. */
H5SHUF_INTERNAL void h5shuf__tempfile_forget(struct h5shuf_tempfile *tf);

/* Empty the file (ftruncate through the descriptor), e.g. before HDF5's flush at the close of a discarded
 * file, which then needs no room on a full disk.  Best effort; nothing when parked. */
H5SHUF_INTERNAL void h5shuf__tempfile_empty(const struct h5shuf_tempfile *tf);

/* Remove the file: its name is unlinked only while it still is this file (fstatat without following
 * links), then the descriptors are closed and tf holds nothing.  Safe on an empty tempfile. */
H5SHUF_INTERNAL void h5shuf__tempfile_remove(struct h5shuf_tempfile *tf);

/* Move the n finished files tf[i] (closed by HDF5; parked or not) to out[i], each in its temporary's
 * directory, all or nothing, durably.  For each: fchmod to mode less the umask (cp's rule for a new
 * file), fsync of the descriptor, then linkat(2) of /proc/self/fd/N to out's name (AT_SYMLINK_FOLLOW:
 * the inode itself, and never over an existing name), then the temporary name removed (if still ours)
 * and the directory fsync'ed.  A file that appeared at out is never replaced without force
 * (H5SHUF_EEXIST).  With force, every existing out is first linked aside (".NAME.h5shuf-PID-TAG-old-XXXXXX")
 * and replaced by renameat(2) of the temporary name, checked just before (still this file) and after (out
 * is this file); the second names go once all are in place.  On any failure every out is as it was
 * before: files already placed are taken back and the old ones renamed back, and the tf are left for the
 * caller to remove.  Errors (H5SHUF_EIO, H5SHUF_EEXIST, H5SHUF_ENOMEM) name the out that failed.  On
 * success every tf holds nothing. */
H5SHUF_INTERNAL int h5shuf__tempfile_commit_all(struct h5shuf_tempfile *const *tf, const char *const *out, size_t n,
                                                mode_t mode, int force, struct h5shuf_err *err);

/* The two halves of h5shuf__tempfile_commit_all, for a set whose fate is decided elsewhere too (the
 * shards of a distributed run: kept only if every process placed its own).  place_all places the files
 * as commit_all does and on success returns in *set what settle needs (else it has taken everything back
 * itself, and *set is NULL); the strings of out must live until the settle.  settle(set, 1) keeps the
 * placed files (the replaced ones' second names go; every tf then holds nothing), settle(set, 0) takes
 * them back (the replaced files return; the tf are left for the caller to remove).  settle(NULL, ...)
 * does nothing. */
struct h5shuf_placed;
H5SHUF_INTERNAL int h5shuf__tempfile_place_all(struct h5shuf_tempfile *const *tf, const char *const *out, size_t n,
                                               mode_t mode, int force, struct h5shuf_placed **set,
                                               struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__tempfile_settle(struct h5shuf_placed *set, int keep);

/* Whether tf's file lost its name (another file, a link or nothing is there now): HDF5 then cannot open
 * it, since HDF5 1.10 resolves /proc/self/fd/N with realpath(3) (H5F_build_actual_name), and a file with
 * no link cannot be linked into place.  Such a run fails (safely: nothing is written through the name);
 * this tells the caller to say why.  0 for an empty tempfile. */
H5SHUF_INTERNAL int h5shuf__tempfile_lost(const struct h5shuf_tempfile *tf);

/* Record the failure of a run whose temporary file lost its name: H5SHUF_EIO, "OUT: its temporary file
 * PATH was replaced while h5shuf ran (does another user write DIR?); nothing was written through it". */
H5SHUF_INTERNAL int h5shuf__tempfile_fail_replaced(const struct h5shuf_tempfile *tf, const char *out,
                                                   struct h5shuf_err *err);

/* Whether the entry name in directory dirfd is the file dev/ino (fstatat without following links). */
H5SHUF_INTERNAL int h5shuf__tempfile_is_at(int dirfd, const char *name, dev_t dev, ino_t ino);

#endif /* H5SHUF_TEMPFILE_H */
