/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * leftovers.h - the files an interrupted run of h5shuf left behind for the same outputs (leftovers.c).
 *
 * A run killed with SIGKILL (the OOM killer, a scheduler's time limit) cannot remove its own files.  Their
 * names say whose they are (tempfile.h): ".NAME.h5shuf-PID-TAG-XXXXXX" beside the output NAME (its
 * temporary), ".NAME.h5shuf-PID-TAG-old-XXXXXX" (the file NAME held, set aside by --force until the new
 * one was in place), ".NAME.h5shuf-PID-TAG-state-XXXXXX" (a resumable run's temporary, named in its
 * journal) and "h5shuf-scratch-NAME-PID-TAG-XXXXXX" in the scratch directory; TAG is the space of process
 * ids PID belongs to (this machine's boot and pid namespace: files.h).  Names of h5shuf before TAG
 * ("PID-XXXXXX", "PID-old-XXXXXX") are still recognized.
 *
 * A later run for the same output removes what is certainly a dead run's and of no use to anyone: a
 * temporary or scratch file of this user's, with this run's TAG, whose PID is no live process (and a
 * set-aside file that is only a second name of what the output's name holds).  The rest it only reports:
 * files set aside that may be the only copy of a user's file, a resumable run's temporaries (its state is
 * elsewhere: resume it, or remove them), and names from another machine, boot or container, or from an
 * older h5shuf, whose process h5shuf cannot see.
 */
#ifndef H5SHUF_LEFTOVERS_H
#define H5SHUF_LEFTOVERS_H

#include "base.h"

/* What was found (or removed). */
struct h5shuf_leftovers {
    size_t removable;          /* files removed (h5shuf__leftovers_remove), or that it would remove */
    uint64_t removable_bytes;  /* their sizes, bytes */
    long pid;                  /* the process of one of them */
    int several_pids;          /* they are of more than one process */
    char first_removable[1024]; /* the path of one of them, "" when none */
    size_t files;              /* temporaries and scratch files reported, not removed */
    uint64_t bytes;            /* their sizes, bytes */
    size_t set_aside;          /* outputs that --force had set aside (the files the outputs' names held before) */
    size_t state_files;        /* resumable runs' temporaries (named "-state-") */
    char first[1024];          /* the path of one reported file (a set-aside file first), "" when none */
    char first_state[1024];    /* the path of one resumable run's temporary, "" when none */
};

/* Look in out_dir for the leftovers of each of the n output names (base names, no directory) and in
 * scratch_dir (NULL: none) for the scratch files of scratch_name (the base name of the output as given):
 * regular files owned by this process's effective user whose PID is no live process (kill(pid, 0) fails
 * with ESRCH; a PID in use again is taken as alive, so nothing is claimed that may be another run's).
 * Names cut to fit NAME_MAX (outputs of over 200 bytes) are not recognized.  Fills *found (zeroed first)
 * without touching anything.  Directories that cannot be read are passed over: this is advice, never an
 * error. */
H5SHUF_INTERNAL void h5shuf__leftovers_find(const char *out_dir, const char *const *names, size_t n,
                                            const char *scratch_dir, const char *scratch_name,
                                            struct h5shuf_leftovers *found);

/* The same search, and the removable files removed: each unlinked (unlinkat through the directory's
 * descriptor) only while its name is still the file found (device and inode).  *found says what was
 * removed (removable counts only the names unlinked) and what was only reported. */
H5SHUF_INTERNAL void h5shuf__leftovers_remove(const char *out_dir, const char *const *names, size_t n,
                                              const char *scratch_dir, const char *scratch_name,
                                              struct h5shuf_leftovers *found);

#endif /* H5SHUF_LEFTOVERS_H */
