/*
 * files.h - the filesystem side of a run: the directory of a path, free space, and moving a finished
 * file into place without ever replacing a file that appeared meanwhile (files.c).
 */
#ifndef H5SHUF_FILES_H
#define H5SHUF_FILES_H

#include <sys/types.h>

#include "base.h"

/* The directory part of path ("." when it has none); caller frees; NULL when out of memory. */
H5SHUF_INTERNAL char *h5shuf__dir_of(const char *path);

/* Free bytes for unprivileged users on dir's filesystem, and its device; 0 when unknown. */
H5SHUF_INTERNAL uint64_t h5shuf__free_bytes(const char *dir, dev_t *dev);

/* Move the finished file tmp_path to out; without force, never replace a file that appeared. */
H5SHUF_INTERNAL int h5shuf__commit_file(h5shuf_job *job, const char *tmp_path, const char *out);

/* Move the finished file tmp_path to the output's name; without force, never replace a file that appeared.
 * (The pile file of a scatter; targets.c commits the outputs.) */
H5SHUF_INTERNAL int h5shuf__output_commit(h5shuf_job *job, const char *tmp_path);

#endif /* H5SHUF_FILES_H */
