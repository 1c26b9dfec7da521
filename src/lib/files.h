/*
 * files.h - the filesystem side of a run: the directory of a path, temporary names beside a final one,
 * free space, and moving a finished file into place without ever replacing a file that appeared
 * meanwhile (files.c).
 */
#ifndef H5SHUF_FILES_H
#define H5SHUF_FILES_H

#include <hdf5.h>
#include <sys/types.h>

#include "error.h"

/* The directory part of path ("." when it has none); caller frees; NULL when out of memory. */
H5SHUF_INTERNAL char *h5shuf__dir_of(const char *path);

/* "DIR/.BASE.h5shuf-XXXXXX", a mkstemp template in dir for the file that will be named path (BASE its
 * last component); caller frees; NULL when out of memory. */
H5SHUF_INTERNAL char *h5shuf__temp_template(const char *dir, const char *path);

/* Give the file at path the mode a new file gets, 0666 less the umask (mkstemp makes it 0600). */
H5SHUF_INTERNAL void h5shuf__mode_of_new_file(const char *path);

/* Free bytes for unprivileged users on dir's filesystem, and its device (*dev); 0 when unknown. */
H5SHUF_INTERNAL uint64_t h5shuf__free_bytes(const char *dir, dev_t *dev);

/* The descriptor of HDF5 file when it is open with HDF5's sec2 driver (its VFD handle is then its int
 * descriptor; another driver's handle is none), else -1.  With path not NULL, also -1 unless the
 * descriptor is path's file (same device and inode).  Owned by HDF5: not to be closed. */
H5SHUF_INTERNAL int h5shuf__file_fd(hid_t file, const char *path);

/* Start writing the dirty pages of file (open with HDF5's sec2 driver) to disk, without waiting
 * (sync_file_range(2), SYNC_FILE_RANGE_WRITE), and drop from the page cache its pages already written
 * (posix_fadvise(2), POSIX_FADV_DONTNEED, as dd's oflag=nocache does).  Called as an output grows, it
 * lets the disk work while the run goes on, so the fsync of h5shuf__commit_file has little left to wait
 * for, and the output's pages are reused instead of new memory taken for each (on a VM that hands freed
 * memory back to its host, new memory cost 2.5-3.4 s a GiB: ../shared/BENCHMARKING.md).  Best effort:
 * does nothing on another driver or system, or on an error. */
H5SHUF_INTERNAL void h5shuf__file_writeback(hid_t file);

/* Move the finished (closed) file tmp_path to out, durably: fsync tmp_path, then with force rename
 * (replacing whatever is there), without link then unlink, so that a file that appeared at out while
 * h5shuf ran is never replaced (H5SHUF_EEXIST); then fsync out's directory.  Errors (H5SHUF_EIO,
 * H5SHUF_EEXIST, H5SHUF_ENOMEM) name out; after a failed directory sync the file is removed from out. */
H5SHUF_INTERNAL int h5shuf__commit_file(const char *tmp_path, const char *out, int force, struct h5shuf_err *err);

/* After an open of path failed (H5Fopen, H5Fis_hdf5, which say only "unable to open file" or nothing):
 * when the process or the system is out of file descriptors, so that open(2) of path fails now with
 * EMFILE or ENFILE, the cause for a message, "too many open files (ulimit -n is N)" or "too many open
 * files in the system", written into buf of cap bytes and returned; else NULL (the open failed for
 * another reason).  Leaves no descriptor open. */
H5SHUF_INTERNAL const char *h5shuf__fd_shortage(const char *path, char *buf, size_t cap);

#endif /* H5SHUF_FILES_H */
