/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * targets.h - the output files of a run: one file, K shards or named splits, each a consecutive range
 * of the output order (a "target"); created before pass 1, filled one at a time by pass 2, moved into
 * place all together or not at all (targets.c).
 */
#ifndef H5SHUF_TARGETS_H
#define H5SHUF_TARGETS_H

#include <hdf5.h>

#include "ctx.h"
#include "output.h"
#include "tempfile.h"
#include "writer.h"

/* One output file: a range of the output order.  The single output is one target over all rows. */
struct h5shuf_target {
    char *path;        /* the final file name */
    struct h5shuf_tempfile tf; /* its temporary file, while it exists (tf.path its name) */
    char *label;       /* split name; NULL for a shard or the single output */
    uint64_t first;    /* first row, in the output order */
    uint64_t rows;
};

/* The targets of a run and the one open for writing. */
struct h5shuf_targets {
    struct h5shuf_target *v;
    size_t n;
    uint64_t rows;     /* rows of the output order in all (N, or a head's) */
    uint64_t shards;   /* --shards K, or 0 */
    const char *split; /* the --split spec (not owned), or NULL */
    int ranges;        /* the files carry range attributes: several outputs, or a head */
    const struct h5shuf_outfile *of; /* what each file holds (h5shuf__targets_create) */
    size_t lo, hi;     /* the targets this process makes, fills and moves into place: v[lo .. hi) (all of
                        * them, unless a distributed run selects: h5shuf__targets_select) */
    int part;          /* the one target is a part of the single output (h5shuf__targets_plan_part) */
    size_t cur;        /* pass 2: the target open for writing, when file >= 0 */
    hid_t file;
    hid_t *dsets;      /* of->dsets->n + 2: datasets, index, source index of the open target (or invalid) */
    uint64_t writeback_at; /* output row at which the open target's pages are next written back (targets.c) */
    struct h5shuf_placed *placed; /* between h5shuf__targets_place and _settle: the targets placed */
    /* Checkpoints (a resumable run, resume.h; all zero otherwise).  The open target is closed and opened
     * again every unit_rows rows of it, counted from its first row (0: only at its end), so that its file
     * is whole and synced at those rows; after each close, commit(commit_user, k, row, done, err) is called
     * with the target's index, the output row reached and whether it was the target's last (its
     * descriptor still open: v[k].tf.fd), and must return H5SHUF_OK to go on.  fapl(commit_user, k, fd,
     * err), when set, gives the file-access property list target k is opened with for writing (the
     * caller's own driver over descriptor fd; closed here), or < 0 with err recorded. */
    uint64_t unit_rows;
    int (*commit)(void *user, size_t k, uint64_t row, int done, struct h5shuf_err *err);
    /* A failed run closes its open target: discard(commit_user) makes the file's driver drop every write
     * from then on (and returns 1) instead of the file being emptied, so that its last commit stays. */
    int (*discard)(void *user);
    int keep_files;    /* set before h5shuf__targets_finish fails: the files stay (a kept state), unnamed */
    hid_t (*fapl)(void *user, size_t k, int fd, struct h5shuf_err *err);
    void *commit_user;
};

/* Make the targets for the output file name out: K shards (shards > 0; named by h5shuf_job_output_file's
 * rule), the splits of split ("NAME=F,..."), or one file, over rows rows (all_rows: the inputs' N).
 * Errors are H5SHUF_EINVAL naming the option, or H5SHUF_ENOMEM.  Free with h5shuf__targets_free. */
H5SHUF_INTERNAL int h5shuf__targets_plan(struct h5shuf_targets *t, const char *out, uint64_t shards, const char *split,
                                         uint64_t rows, uint64_t all_rows, struct h5shuf_err *err);
/* A distributed run (docs/design.md section 5): this process makes, fills and moves into place only targets
 * [lo, hi) of t (planned), which hold output rows [t->v[lo].first, t->v[hi - 1].first + rows). */
H5SHUF_INTERNAL void h5shuf__targets_select(struct h5shuf_targets *t, size_t lo, size_t hi);

/* A distributed run's part of the single output: t (empty) becomes one target over output rows [first,
 * first + rows) of all_rows, a temporary file in dir holding only the row datasets, chunked and filtered
 * as the whole output's (h5shuf__output_create_part), so that its chunks are the output's own and are
 * copied whole into it by the process that writes it.  h5shuf__targets_finish removes it, always. */
H5SHUF_INTERNAL int h5shuf__targets_plan_part(struct h5shuf_targets *t, const char *dir, uint64_t first, uint64_t rows,
                                              uint64_t all_rows, struct h5shuf_err *err);

/* Reserve every target's temporary file (h5shuf__targets_create makes the ones still missing), so that
 * their names can be recorded before HDF5 writes to them. */
H5SHUF_INTERNAL int h5shuf__targets_reserve(struct h5shuf_targets *t, struct h5shuf_err *err);
/* A resumable run names each target's temporary file in its journal before making it: a fresh name for
 * target k (its last component, into buf of cap bytes: at least NAME_MAX + 1), then the file made with
 * exactly that name in the target's directory (h5shuf__tempfile_create_as). */
H5SHUF_INTERNAL void h5shuf__targets_temp_name(const struct h5shuf_targets *t, size_t k, char *buf, size_t cap);
H5SHUF_INTERNAL int h5shuf__targets_reserve_as(struct h5shuf_targets *t, size_t k, const char *name, struct h5shuf_err *err);
/* A resumed run: target k's file is the interrupted run's (name in the target's directory, dev/ino), kept
 * closed until it is opened for writing (h5shuf__tempfile_adopt). */
H5SHUF_INTERNAL int h5shuf__targets_adopt(struct h5shuf_targets *t, size_t k, const char *name, uint64_t dev, uint64_t ino,
                                          struct h5shuf_err *err);
/* A resumed run whose targets were made before: what h5shuf__targets_create sets up, making nothing. */
H5SHUF_INTERNAL int h5shuf__targets_attach(struct h5shuf_targets *t, const struct h5shuf_outfile *of, struct h5shuf_err *err);

/* Refuse a target that is an input or the pile file piles_path (may be NULL), or exists (unless force and
 * it is a regular file). */
H5SHUF_INTERNAL int h5shuf__targets_check(const struct h5shuf_targets *t, const struct h5shuf_inputs *in,
                                          const char *piles_path, int force, struct h5shuf_err *err);
/* Create every target under its temporary name: the datasets of its rows, copied objects, provenance and
 * its range attributes; each is closed again (pass 2 opens one at a time).  After each file is made (its
 * temporary name then known), progress reports H5SHUF_PHASE_CREATE with k + 1 of files.  of must outlive
 * t's use. */
H5SHUF_INTERNAL int h5shuf__targets_create(const struct h5shuf_ctx *cx, struct h5shuf_targets *t,
                                           const struct h5shuf_outfile *of, uint64_t files);
/* Put one row into the writer, first opening the target that holds it when the open one is full (or
 * none is open). */
H5SHUF_INTERNAL int h5shuf__targets_put(const struct h5shuf_ctx *cx, struct h5shuf_targets *t, struct h5shuf_writer *w,
                                        const unsigned char *const *rows, uint64_t id);
/* Put n rows taken in the order of pairs (h5shuf__writer_put_sorted: rows at base[d] + pairs[r].idx * row
 * bytes, ids for the index), opening the next target whenever the open one is full: the same as n calls of
 * h5shuf__targets_put. */
H5SHUF_INTERNAL int h5shuf__targets_put_sorted(const struct h5shuf_ctx *cx, struct h5shuf_targets *t,
                                               struct h5shuf_writer *w, unsigned char *const *base,
                                               const struct h5shuf_keyidx *pairs, uint64_t n, const uint64_t *ids);
/* Close the open target; st != H5SHUF_OK discards it (emptied first).  Returns st or the first error. */
H5SHUF_INTERNAL int h5shuf__targets_close(struct h5shuf_targets *t, int st, struct h5shuf_err *err);
/* Move every finished target into place, all or none (h5shuf__tempfile_commit_all: with force the files
 * they replace come back on a failure), with mode (less the umask), or on st != H5SHUF_OK remove them
 * all.  Returns st or the first error. */
H5SHUF_INTERNAL int h5shuf__targets_finish(struct h5shuf_targets *t, int st, int force, mode_t mode,
                                           struct h5shuf_err *err);
/* Its two halves, for a distributed run whose processes each place their own targets and keep them only
 * if all did (h5shuf__tempfile_place_all, _settle): place this process's targets (st != H5SHUF_OK: none);
 * then settle keeps them (keep) or takes them back, the files they replaced returning, and removes the
 * temporary files left. */
H5SHUF_INTERNAL int h5shuf__targets_place(struct h5shuf_targets *t, int st, int force, mode_t mode,
                                          struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__targets_settle(struct h5shuf_targets *t, int keep);
H5SHUF_INTERNAL void h5shuf__targets_free(struct h5shuf_targets *t);

#endif /* H5SHUF_TARGETS_H */
