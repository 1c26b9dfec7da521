/*
 * walfile.h - a crash-safe HDF5 file driver with a redo log, for checkpoints of a long-written scratch file
 * (walfile.c).
 *
 * The driver keeps the file's bytes below its committed end of file frozen: every write there goes to an
 * append-only log beside it, and reads see the base overlaid with the log.  A commit (prepare, the
 * caller's journal record, apply) copies the log into the base; after SIGKILL or power loss,
 * h5shuf__walfile_recover restores the base to exactly the bytes of the last recorded commit.
 */
#ifndef H5SHUF_WALFILE_H
#define H5SHUF_WALFILE_H

#include <hdf5.h>
#include <stdint.h>

#include "base.h"
#include "error.h"

/* The longest log prefix (bytes): log names are PREFIX.SEQ.XXXXXX and must fit NAME_MAX. */
#define H5SHUF_WAL_PREFIX_MAX 200

/* What a commit needs recorded in the caller's journal; plain data, copied byte for byte.  Its layout is
 * this build's (host byte order): a journal meant to move between machines serializes the fields. */
struct h5shuf_wal_commit {
    uint64_t eof;       /* bytes: the logical file's size at the commit (the base's size after apply) */
    uint64_t log_bytes; /* the log's size in bytes */
    uint64_t log_hash;  /* XXH3_64bits of the log's log_bytes bytes */
    char log_name[256]; /* the log's name in the directory (no '/'), NUL-terminated */
};

struct h5shuf_walfile; /* opaque */

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

/* h5shuf__walfile_fapl flags. */
#define H5SHUF_WALFILE_REOPEN 1u /* open a file whose superblock still says "open for write" (a recovered
                                  * checkpoint: it was flushed, not closed), as h5clear does */

/* A new file-access property list (the caller closes it) whose driver is wf.  The name given to
 * H5Fcreate or H5Fopen with it is not used: the file is wf's base descriptor.  One HDF5 file at a time is
 * open on a wf.  H5F_ACC_TRUNC is refused once a commit exists (it would discard committed bytes).
 * flags: 0 or H5SHUF_WALFILE_REOPEN.  Returns the list, or H5I_INVALID_HID with the cause in err. */
H5SHUF_INTERNAL hid_t h5shuf__walfile_fapl(struct h5shuf_walfile *wf, unsigned flags, struct h5shuf_err *err);

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

/* After a crash: make base_fd exactly the file of commit c.  If c's log is in dir_fd, it must have
 * c->log_bytes bytes hashing to c->log_hash (otherwise the state cannot be trusted: an error), and its
 * records are replayed into the base (again, if apply had begun: replay is idempotent); a missing log
 * means apply had finished, and a commit naming no log ("") is a file that was synced at that size.  The base is then cut to c->eof and synced, and the logs of log_prefix
 * other than c's (uncommitted ones) and then c's own are removed.  Returns H5SHUF_OK or a status with a
 * one-line cause in err.  Open the file again with h5shuf__walfile_new(..., c->eof, ...) and a fapl of
 * H5SHUF_WALFILE_REOPEN. */
H5SHUF_INTERNAL int h5shuf__walfile_recover(int base_fd, int dir_fd, const char *log_prefix,
                                            const struct h5shuf_wal_commit *c, struct h5shuf_err *err);

/* The driver's HDF5 id once a fapl was made with it (H5Pget_driver of such a file's fapl), else
 * H5I_INVALID_HID.  Its file handle (H5Fget_vfd_handle) is the base descriptor, an int, as sec2's. */
H5SHUF_INTERNAL hid_t h5shuf__walfile_driver(void);

/* sync 0: prepare and apply do not fsync (a commit then survives the death of the process, whose
 * writes the kernel keeps, but not a crash of the machine: the caller records which, resume.h).  The
 * default is 1.  NULL: no-op. */
H5SHUF_INTERNAL void h5shuf__walfile_set_sync(struct h5shuf_walfile *wf, int sync);

/* A run that fails and keeps its state (a resume continues from the last commit): every write and resize
 * through wf is dropped from now on, so that HDF5 closes the file without touching the base or needing room
 * on a full disk.  NULL: no-op. */
H5SHUF_INTERNAL void h5shuf__walfile_discard(struct h5shuf_walfile *wf);

/* Tests only: when set, called with the name of each durable step before it is taken ("log-write",
 * "base-write", "log-sync", "base-sync", "dir-sync", "log-create", "replay-write", "truncate", "unlink"),
 * so that a test can kill the process at the Nth one (tests/test_walfile.c's H5SHUF_WALFILE_KILL_AT). */
H5SHUF_INTERNAL extern void (*h5shuf__walfile_step_hook)(const char *step);

#endif /* H5SHUF_WALFILE_H */
