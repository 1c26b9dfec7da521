/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resume.h - the state a resumable run keeps so that another run can continue it after a kill: a state
 * directory, its journal (journal.h) and what the journal says was finished (resume.c; docs/guide.md,
 * "Long runs").
 *
 * The state directory is "h5shuf-resume-NAME-HASH-uidU" in the scratch directory (NAME the output's base
 * name, HASH 16 hex digits of XXH3 of the output's absolute path, U the effective user id), mode 0700 and
 * this user's: nobody else can put a file in it, so the files h5shuf reopens by name after a kill are its
 * own.  Another user's directory (or a symbolic link, or any other file) at that name, which anyone may
 * make in a shared /tmp, is not a state: a run without --resume warns and goes on without one, a resume
 * is refused.  It holds the journal,
 * the scratch file and the redo logs of the files being written (walfile.h) and pass 1's pile buffers at
 * a checkpoint.  The outputs' temporary files stay beside the outputs (tempfile.h), each recorded in the
 * journal with its device and inode number, and are reopened only when they are still that file.
 *
 * A record of a checkpoint ends with "boot ID synced S": the machine's boot (/proc's boot_id) and whether
 * the files it names were synced; one not synced is trusted only on the same boot (the kernel kept the
 * data), so a state from before a restart is refused.
 *
 * Records (text payloads of "key value" words, one record per line of work):
 *   IDENTITY  what decides the output: the inputs (size, mtime, device, inode, rows), the datasets'
 *             shapes, types and filters, the options (seed, filters, chunks, shards, split, head, index,
 *             checkpoint interval) and the strategy; a resume compares it and names what differs.
 *   NAMES     the output files' temporary names, before they are made (a resume removes them when no
 *             TARGETS follows: they may or may not have been made).
 *   TARGETS   the output files' temporary names, device, inode (before HDF5 writes to them).
 *   CREATED   the output files made (objects, attributes, empty datasets), each closed and synced: its
 *             size, the state pass 2 starts from.
 *   PASS1     a checkpoint of pass 1: rows scattered, the piles' numbering and buffers (spill file), the
 *             scratch file's committed state.
 *   PILES     pass 1 finished: the table of piles, the scratch file's committed state.
 *   SCRATCH   a scatter's pile file's temporary name beside its final one, before it is made.
 *   DONE      a scatter's pile file finished (its metadata written, closed): its committed state.
 *   PASS2     pass 2 reached an output row at which the open output file was closed and synced: that
 *             file's committed state (a file whose last rows were written is finished); "assembled 1":
 *             a distributed run's single output with every process's part written into it.
 *   AGAIN     a process of a distributed run goes back in pass 1 because the others had not all recorded
 *             PILES (or had restarted pass 1 with more piles): from its last PASS1, or from the start
 *             with the plan given (piles, buffer rows, restarts).
 *
 * PASS1, PILES and AGAIN give the plan pass 1 ran with (its level: restarts, piles, buffer rows), which
 * the processes of a distributed run compare when they resume (src/mpi/dist.c).
 */
#ifndef H5SHUF_RESUME_H
#define H5SHUF_RESUME_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "journal.h"
#include "piles.h"
#include "walfile.h"

enum {
    H5SHUF_REC_IDENTITY = 1,
    H5SHUF_REC_TARGETS = 2,
    H5SHUF_REC_CREATED = 3,
    H5SHUF_REC_PASS1 = 4,
    H5SHUF_REC_PILES = 5,
    H5SHUF_REC_PASS2 = 6,
    H5SHUF_REC_NAMES = 7,
    H5SHUF_REC_SCRATCH = 8,
    H5SHUF_REC_DONE = 9,
    H5SHUF_REC_AGAIN = 10,
};

/* The plan of pass 1 at the last record that gives it (PASS1, PILES, AGAIN). */
struct h5shuf_rlevel {
    int set;                   /* 0: no record gave it */
    uint64_t restarts, piles, cap; /* the plan's restarts so far, its M and pile buffer rows */
};

/* An output file of an interrupted run. */
struct h5shuf_rtarget {
    char name[256];       /* its temporary name beside the output */
    uint64_t dev, ino;
    struct h5shuf_wal_commit st; /* the last committed state (CREATED, then PASS2) */
    int done;             /* all its rows written (a PASS2 at its end) */
};

/* Pass 1 at its last checkpoint. */
struct h5shuf_rpass1 {
    uint64_t rows_done;   /* global input rows scattered: [0, rows_done) */
    uint64_t piles, cap, restarts; /* the plan's M, pile buffer rows, restarts so far */
    uint64_t first_number, next_number; /* the pile set's numbering, the scratch's next number */
    struct h5shuf_wal_commit scratch;
    char spill[64];       /* the pile buffers' file in the state directory */
    uint64_t spill_bytes, spill_sum;
};

/* The state of a run that checkpoints (all zero: it does not). */
struct h5shuf_resume {
    int on;                    /* checkpointing */
    int synced;                /* this run syncs its checkpoints (h5shuf_options.checkpoint_sync) */
    int stale;                 /* the interrupted run's unsynced checkpoints are from another boot */
    uint64_t interval_bytes;   /* input bytes between checkpoints */
    double interval_seconds;   /* and seconds */
    char *dir;                 /* the state directory (owned) */
    int dirfd;                 /* open while the run lasts, else -1 */
    struct h5shuf_journal j;   /* open for appending while the run lasts (fd -1 otherwise) */
    /* What the journal of an interrupted run says (found != 0: this run continues it). */
    int found;
    int foreign;               /* at rs->dir: something that is not this user's directory (foreign_why), ignored */
    char foreign_why[160];
    char *identity;            /* its IDENTITY text (owned) */
    uint64_t seed;             /* its seed */
    struct h5shuf_rtarget *t;  /* ntargets: TARGETS (or NAMES) and their states, or NULL before NAMES */
    size_t ntargets;
    int names_only;            /* NAMES without its TARGETS: the files may exist, nothing was written to them */
    int created;               /* CREATED seen */
    int has_pass1;             /* a PASS1 seen (p1 holds the last) */
    struct h5shuf_rpass1 p1;
    int has_piles;             /* PILES seen */
    struct h5shuf_pile *piles; /* its table (owned) */
    size_t npiles;
    uint64_t next_number;
    struct h5shuf_wal_commit scratch; /* the scratch's state at PILES */
    char scratch_name[256];    /* the scratch file in the state directory (PASS1, PILES), dev, ino */
    uint64_t scratch_dev, scratch_ino;
    uint64_t p2_row;           /* pass 2 done up to this output row (the last PASS2) */
    char scratch_intent[256];  /* SCRATCH: the name a scatter's pile file was to be made with, "" */
    int done;                  /* DONE seen: the scratch's state is done_state */
    struct h5shuf_wal_commit done_state;
    struct h5shuf_rlevel level; /* pass 1's plan at the last record giving it */
    int assembled;             /* a distributed run's single output was assembled (PASS2 "assembled 1") */
};

/* The state directory's path for the output out (as given) in scratch_dir:
 * "DIR/h5shuf-resume-NAME-HASH-uidU", and "-rankR" after it for process rank of a distributed run (rank <
 * 0: a serial run).  Allocated
 * (caller frees), NULL when out of memory. */
H5SHUF_INTERNAL char *h5shuf__resume_dir_for(const char *scratch_dir, const char *out, int rank);

/* Look for an interrupted run's state in rs->dir (set): none (rs->found 0, H5SHUF_OK); one (opened and
 * read, rs->found 1) when resume is set; else H5SHUF_EEXIST "an interrupted run's state is in DIR: add
 * --resume to continue, or remove it".  Something at rs->dir that is not this user's directory (another
 * user's, a symbolic link, a file): without resume, H5SHUF_OK with rs->foreign set and rs->foreign_why
 * saying what it is (the caller keeps no state); with resume, H5SHUF_EEXIST.  This user's directory open
 * to others is refused (H5SHUF_EEXIST), and so is a journal without an IDENTITY (H5SHUF_EMISMATCH). */
H5SHUF_INTERNAL int h5shuf__resume_find(struct h5shuf_resume *rs, int resume, struct h5shuf_err *err);

/* Compare identity (this run's IDENTITY text) with the interrupted run's: H5SHUF_OK, or H5SHUF_EMISMATCH
 * naming the first item that differs ("the input a.h5 changed since the interrupted run (its mtime)"). */
H5SHUF_INTERNAL int h5shuf__resume_same(const struct h5shuf_resume *rs, const char *identity, struct h5shuf_err *err);

/* A fresh state: make rs->dir (mode 0700, O_EXCL semantics), its journal and the IDENTITY record. */
H5SHUF_INTERNAL int h5shuf__resume_start(struct h5shuf_resume *rs, const char *identity, struct h5shuf_err *err);

/* Append a record of kind whose payload is printf-formatted (at most 64 KiB; a pile table goes through
 * h5shuf__resume_record_piles), followed by the boot words (h5shuf__resume_boot_words). */
H5SHUF_INTERNAL int h5shuf__resume_record(struct h5shuf_resume *rs, uint32_t kind, struct h5shuf_err *err,
                                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* PILES: the table of piles, the scratch's state and more (words for the first line: the scratch's name). */
H5SHUF_INTERNAL int h5shuf__resume_record_piles(struct h5shuf_resume *rs, const struct h5shuf_pile *piles, size_t n,
                                                uint64_t next_number, const struct h5shuf_wal_commit *scratch,
                                                const char *more, struct h5shuf_err *err);
/* Text of a file's committed state (walfile.h) for a record: "eof E log NAME logbytes B logsum S" (NAME
 * "-" when there is no log). */
H5SHUF_INTERNAL void h5shuf__fstate_text(const struct h5shuf_wal_commit *s, char *buf, size_t cap);

/* " boot ID synced S" for a record of rs's checkpoints, into buf of cap bytes. */
H5SHUF_INTERNAL void h5shuf__resume_boot_words(const struct h5shuf_resume *rs, char *buf, size_t cap);

/* Remove the state directory and everything in it (after a finished run, or a fresh start's failure). */
H5SHUF_INTERNAL void h5shuf__resume_remove(struct h5shuf_resume *rs);
/* Close what is open and free (keeps the directory: an interrupted run's state stays for --resume). */
H5SHUF_INTERNAL void h5shuf__resume_free(struct h5shuf_resume *rs);

#endif /* H5SHUF_RESUME_H */
