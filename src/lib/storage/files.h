/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * files.h - the filesystem side of a run: the directory of a path, free space, the descriptor of an open
 * HDF5 file and its writeback (files.c).  Temporary files and their commit: tempfile.h.
 */
#ifndef H5SHUF_FILES_H
#define H5SHUF_FILES_H

#include <hdf5.h>
#include <sys/types.h>

#include "error.h"

/* The directory part of path ("." when it has none); caller frees; NULL when out of memory. */
H5SHUF_INTERNAL char *h5shuf__dir_of(const char *path);

/* Free bytes for unprivileged users on dir's filesystem, and its device (*dev); 0 when unknown. */
H5SHUF_INTERNAL uint64_t h5shuf__free_bytes(const char *dir, dev_t *dev);

/* The descriptor of HDF5 file when it is open with HDF5's sec2 driver (its VFD handle is then its int
 * descriptor; another driver's handle is none), else -1.  Owned by HDF5: not to be closed. */
H5SHUF_INTERNAL int h5shuf__file_fd(hid_t file);

/* Start writing the dirty pages of file (open with HDF5's sec2 driver) to disk, without waiting
 * (sync_file_range(2), SYNC_FILE_RANGE_WRITE), and drop from the page cache its pages already written
 * (posix_fadvise(2), POSIX_FADV_DONTNEED, as dd's oflag=nocache does).  Called as an output grows, it
 * lets the disk work while the run goes on, so the fsync of its commit (tempfile.c) has little left to wait
 * for, and the output's pages are reused instead of new memory taken for each (on a VM that hands freed
 * memory back to its host, new memory costs seconds a GiB; measured: docs/benchmark.md, section "The cases
 * users have").  Best effort:
 * does nothing on another driver or system, or on an error. */
H5SHUF_INTERNAL void h5shuf__file_writeback(hid_t file);
/* Start writing back fd's dirty pages, without waiting and keeping them cached (a file that is read
 * again: a resumable run's scratch, whose next commit's fsync then has little left to write). */
H5SHUF_INTERNAL void h5shuf__fd_writeback(int fd);

/* This machine's boot: the random UUID the kernel draws at each boot (/proc/sys/kernel/random/boot_id),
 * or "unknown"; into buf of cap bytes (37 hold it).  Test builds take H5SHUF_DEBUG_BOOT_ID from the
 * environment instead (a restart, simulated: tests/resume_safety.sh). */
H5SHUF_INTERNAL void h5shuf__boot_id(char *buf, size_t cap);

/* The space this process's id lives in, as 8 hex digits and a NUL into tag: a hash of this machine's
 * boot and of its pid namespace (/proc/self/ns/pid: a container has its own).  Two processes with the
 * same tag see the same processes, so a pid in a name made by one is alive or gone for the other
 * (kill(pid, 0)); a name with another tag was made on another machine, boot or container (leftovers.h). */
H5SHUF_INTERNAL void h5shuf__pid_space(char tag[9]);

/* The process's file mode creation mask, read without setting it: the Umask line of /proc/self/status;
 * on a kernel without it (before 4.7), the mask when the library was loaded.  umask(2) cannot be read
 * without being set, and setting it, even back at once, would change it under the caller's other threads
 * (a file one of them makes in between would get mode 0666). */
H5SHUF_INTERNAL mode_t h5shuf__umask(void);

/* After an open of path failed (H5Fopen, H5Fis_hdf5, which say only "unable to open file" or nothing):
 * when the process or the system is out of file descriptors, so that open(2) of path fails now with
 * EMFILE or ENFILE, the cause for a message, "too many open files (ulimit -n is N)" or "too many open
 * files in the system", written into buf of cap bytes and returned; else NULL (the open failed for
 * another reason).  Leaves no descriptor open. */
H5SHUF_INTERNAL const char *h5shuf__fd_shortage(const char *path, char *buf, size_t cap);

/* For errno e of a failed open: EMFILE or ENFILE's cause, "too many open files (ulimit -n is N)" or "too
 * many open files in the system", written into buf of cap bytes and returned; else NULL. */
H5SHUF_INTERNAL const char *h5shuf__fd_limit_cause(int e, char *buf, size_t cap);

#endif /* H5SHUF_FILES_H */
