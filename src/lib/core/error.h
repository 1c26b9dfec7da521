/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.h - the one-line error message of a failed call, and the progress reports of a run (error.c).
 *
 * The library never prints: the first failure on a path records "FILE:/dataset: cause" and every caller
 * above it only forwards the status.  No HDF5 here (h5err.h has HDF5's side).
 */
#ifndef H5SHUF_ERROR_H
#define H5SHUF_ERROR_H

#include "base.h"

/* A fixed-size message buffer; errors are formatted "FILE:/dataset: cause": room for two paths of
 * PATH_MAX (4096 on Linux: a file and a dataset, or the output and an input) and a cause of 1 KiB, so a
 * message is not cut before its cause. */
#define H5SHUF_ERRMSG_MAX (2 * 4096 + 1024)

struct h5shuf_err {
    int status;    /* H5SHUF_OK until the first failure */
    int sys_errno; /* the system's errno behind it when known (h5shuf__err_note_errno), else 0 */
    char msg[H5SHUF_ERRMSG_MAX];
};

/* Record an error (printf-style) unless one is already recorded, and return status.  The first error
 * wins: it is the cause; later ones are its consequences during cleanup.  The errno noted on this thread
 * since the last call (h5shuf__err_note_errno) goes with a recorded error as its sys_errno, and is
 * forgotten either way. */
H5SHUF_INTERNAL int h5shuf__fail(struct h5shuf_err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Note errno e of a failed system call (a write, a sync) whose failure the next h5shuf__fail on this
 * thread records: so that a disk out of space or failing (ENOSPC, EDQUOT, EIO) is known as such, whatever
 * the message and status (H5SHUF_EHDF5 when HDF5 made the call: its file drivers' messages carry the
 * errno as text, which h5err.c reads).  Thread-local: the job's thread and HDF5's callbacks on it. */
H5SHUF_INTERNAL void h5shuf__err_note_errno(int e);

/* Whether err's failure is the disk's: out of space or quota (ENOSPC, EDQUOT: 1), an I/O error (EIO: 2),
 * by its sys_errno; 0 otherwise. */
H5SHUF_INTERNAL int h5shuf__err_disk(const struct h5shuf_err *err);

/* Forget the recorded error (each public call starts clean). */
H5SHUF_INTERNAL void h5shuf__err_reset(struct h5shuf_err *err);

/* Put prefix ("FILE:/dataset: ") in front of the recorded message, cut to fit. */
H5SHUF_INTERNAL void h5shuf__err_prefix(struct h5shuf_err *err, const char *prefix);

/* What a file of stat() mode is, for a message refusing it ("a FIFO", "a directory", ...), or NULL for a
 * regular file: HDF5 reads a file at any offset, and opening a FIFO waits for a writer, so an input, a
 * pile file or a file to verify must be regular, and is checked before HDF5 opens it.  Static text. */
H5SHUF_INTERNAL const char *h5shuf__not_regular(unsigned mode);

/* The caller's progress callback (h5shuf_options.progress), NULL for none. */
struct h5shuf_progress {
    h5shuf_progress_fn fn;
    void *user;
};

/* Rows a loop over all N rows (a scan of keys, rows hashed) goes between two progress reports, and so
 * between two chances to cancel: N may be 2^40 (a file that only declares its rows), and a cancel must
 * be seen within about 0.1 s.  2^20 keys take 10-30 ms. */
#define H5SHUF_SCAN_STEP_ROWS (UINT64_C(1) << 20)

/* Report rows done of total in phase; H5SHUF_ECANCELED (recorded in err as "canceled") when the callback
 * asks to stop, else H5SHUF_OK. */
H5SHUF_INTERNAL int h5shuf__progress(const struct h5shuf_progress *p, struct h5shuf_err *err, h5shuf_phase phase,
                                     uint64_t done, uint64_t total);

#endif /* H5SHUF_ERROR_H */
