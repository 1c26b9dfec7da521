/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walfile.h - a crash-safe HDF5 file driver with a redo log, for checkpoints of a long-written scratch file
 * (walfile.c; HDF5 opens it through walvfd.h, and walrecover.h brings it back after a crash).
 *
 * The driver keeps the file's bytes below its committed end of file frozen: every write there goes to an
 * append-only log beside it, and reads see the base overlaid with the log.  A commit (prepare, the
 * caller's journal record, apply) copies the log into the base; after SIGKILL or power loss,
 * h5shuf__walfile_recover (walrecover.h) restores the base to exactly the bytes of the last recorded commit.
 */
#ifndef H5SHUF_WALFILE_H
#define H5SHUF_WALFILE_H

#include <hdf5.h>
#include <stdint.h>

#include "base.h"
#include "error.h"
#include "walio.h"

/* What a commit needs recorded in the caller's journal; plain data, copied byte for byte.  Its layout is
 * this build's (host byte order): a journal meant to move between machines serializes the fields. */
struct h5shuf_wal_commit {
    uint64_t eof;       /* bytes: the logical file's size at the commit (the base's size after apply) */
    uint64_t log_bytes; /* the log's size in bytes */
    uint64_t log_hash;  /* XXH3_64bits of the log's log_bytes bytes */
    char log_name[256]; /* the log's name in the directory (no '/'), NUL-terminated */
};

/* A file written through a redo log.  Its fields are walfile.c's and its HDF5 driver's (walvfd.c); every
 * other caller uses the functions below. */
struct h5shuf_wal_extent;
struct h5shuf_walfile {
    int base_fd, dir_fd;     /* the caller's */
    uint64_t committed;      /* E: bytes of the base that are the last commit's */
    uint64_t eof, eoa;       /* the logical file's end of file, HDF5's end of address */
    uint64_t base_size;      /* the base's size: committed <= base_size <= max(eof, committed) */
    int log_fd;              /* the current log, -1 when none */
    uint64_t log_bytes;
    uint64_t seq;            /* the current log's sequence number */
    char log_name[256];
    char prefix[H5SHUF_WAL_PREFIX_MAX + 1];
    char base_name[256];     /* for messages */
    struct h5shuf_wal_extent *ext; /* sorted by off, disjoint */
    size_t n, cap;
    int open;                /* an HDF5 file is open on it */
    int prepared;            /* between prepare and apply: c is the prepared commit */
    int broken;              /* a write or resize failed since the last commit: HDF5 may have lost data */
    int discard;             /* h5shuf__walfile_discard: writes and resizes are dropped */
    int nosync;              /* h5shuf__walfile_set_sync(wf, 0): commits are not fsync'ed */
    struct h5shuf_wal_commit c;
};

/* A driver over base_fd (O_RDWR, the caller's: never closed here) whose bytes [0, committed_eof) are the
 * state of the last commit (0 for a new file; h5shuf__walfile_recover's c->eof after a crash).  Logs are
 * made in dir_fd (the caller's, an O_DIRECTORY descriptor, never closed) as "LOG_PREFIX.SEQ.XXXXXX"
 * (openat O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600); log_prefix is a plain name of at most
 * H5SHUF_WAL_PREFIX_MAX bytes, and nothing else in the directory may be named so.  A base longer than
 * committed_eof is cut to it (the bytes past it were never committed); a shorter one is an error.
 * Returns H5SHUF_OK and *wf (free with h5shuf__walfile_free), or a status with the cause in err. */
H5SHUF_INTERNAL int h5shuf__walfile_new(int base_fd, int dir_fd, uint64_t committed_eof, const char *log_prefix,
                                        struct h5shuf_walfile **wf, struct h5shuf_err *err);

/* Free wf (NULL: no-op) and remove its current log, which no commit can name yet (a prepared but not
 * applied log stays: the caller's journal may name it).  The HDF5 file must be closed first. */
H5SHUF_INTERNAL void h5shuf__walfile_free(struct h5shuf_walfile *wf);

/* Read n bytes of the logical file (what HDF5 sees: base, log, zeros past its end) at byte off into buf.
 * Returns H5SHUF_OK or a status with the cause in err.  For checks and tests. */
H5SHUF_INTERNAL int h5shuf__walfile_pread(struct h5shuf_walfile *wf, void *buf, size_t n, uint64_t off,
                                          struct h5shuf_err *err);

/* Commit, step 1: after H5Fflush (or H5Fclose) of the file, make the base and the log durable (fsync,
 * and the directory for the log's name) and describe them in *c.  Writes are refused from here until
 * h5shuf__walfile_apply.  The caller then records *c in its journal and syncs it: that is the commit
 * point.  A write or resize of the file that failed since the last commit (which HDF5 may have survived,
 * as H5Dclose does a failed chunk write: it only returns an error) makes every later prepare fail: the
 * caller recovers the last commit.  Returns H5SHUF_OK or a status with the cause in err (then nothing is
 * committed). */
H5SHUF_INTERNAL int h5shuf__walfile_prepare(struct h5shuf_walfile *wf, struct h5shuf_wal_commit *c,
                                            struct h5shuf_err *err);

/* Commit, step 2 (after the journal record is durable): copy the log into the base, cut the base to the
 * commit's eof, fsync it, and start a new empty log (the old one is unlinked last).  The committed eof
 * becomes c->eof.  Returns H5SHUF_OK or a status with the cause in err; after a failure the commit
 * stands (h5shuf__walfile_apply may be tried again, or h5shuf__walfile_recover run by a later process). */
H5SHUF_INTERNAL int h5shuf__walfile_apply(struct h5shuf_walfile *wf, struct h5shuf_err *err);

/* For the HDF5 driver (walvfd.c).  Set the logical end of file to n (HDF5's truncate, or a write past it):
 * 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__walfile_set_eof(struct h5shuf_walfile *wf, uint64_t n);
/* Write n bytes at off into the logical file: 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__walfile_write_bytes(struct h5shuf_walfile *wf, const void *buf, size_t n, uint64_t off);

/* sync 0: prepare and apply do not fsync (a commit then survives the death of the process, whose
 * writes the kernel keeps, but not a crash of the machine: the caller records which, resume.h).  The
 * default is 1.  NULL: no-op. */
H5SHUF_INTERNAL void h5shuf__walfile_set_sync(struct h5shuf_walfile *wf, int sync);

/* A run that fails and keeps its state (a resume continues from the last commit): every write and resize
 * through wf is dropped from now on, so that HDF5 closes the file without touching the base or needing room
 * on a full disk.  NULL: no-op. */
H5SHUF_INTERNAL void h5shuf__walfile_discard(struct h5shuf_walfile *wf);

#endif /* H5SHUF_WALFILE_H */
