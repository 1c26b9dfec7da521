/*
 * leftovers.h - the files an interrupted run of h5shuf left behind for the same outputs (leftovers.c).
 *
 * A run killed with SIGKILL (the OOM killer, a scheduler's time limit) cannot remove its own files.  Their
 * names say whose they are (tempfile.c): ".NAME.h5shuf-PID-XXXXXX" beside the output NAME (its temporary),
 * ".NAME.h5shuf-PID-old-XXXXXX" (the file NAME held, set aside by --force until the new one was in place),
 * and "h5shuf-scratch-NAME-PID-XXXXXX" in the scratch directory.  A later run for the same output finds
 * those whose process is gone and says so; it neither reuses nor removes them (issue 26: --resume will).
 */
#ifndef H5SHUF_LEFTOVERS_H
#define H5SHUF_LEFTOVERS_H

#include "base.h"

/* What was found. */
struct h5shuf_leftovers {
    size_t files;        /* temporaries and scratch files */
    uint64_t bytes;      /* their sizes, bytes */
    size_t set_aside;    /* outputs that --force had set aside (the files the outputs' names held before) */
    char first[1024];    /* the path of one of them (a set-aside file first), "" when none */
};

/* Look in out_dir for the leftovers of each of the n output names (base names, no directory) and in
 * scratch_dir for the scratch files of scratch_name (the base name of the output as given): regular files
 * owned by this process's effective user whose PID is no live process (kill(pid, 0) fails with ESRCH;
 * a PID in use again is taken as alive, so nothing is claimed that may be another run's).  Names cut to
 * fit NAME_MAX (outputs of over 200 bytes) are not recognized.  Fills *found (zeroed first).  Directories
 * that cannot be read are passed over: this is advice, never an error. */
H5SHUF_INTERNAL void h5shuf__leftovers_find(const char *out_dir, const char *const *names, size_t n,
                                            const char *scratch_dir, const char *scratch_name,
                                            struct h5shuf_leftovers *found);

#endif /* H5SHUF_LEFTOVERS_H */
