/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piles.h - the scratch HDF5 file and the piles in it: pass 1 fills pile sets (pileset.h), pass 2 and the
 * oversize split read piles back (piles.c).
 */
#ifndef H5SHUF_PILES_H
#define H5SHUF_PILES_H

#include <hdf5.h>

#include "ctx.h"
#include "datasets.h"
#include "keys.h"
#include "spec.h"
#include "tempfile.h"

/* Datasets of a pile: one per shuffled dataset, the index, then one payload dataset per vlen dataset. */
static inline size_t h5shuf__pile_nsets(const struct h5shuf_datasets *dsets)
{
    return dsets->n + 1 + dsets->nvlen;
}

/* A pile on disk: its key range, its group in the scratch file, its rows. */
struct h5shuf_pile {
    struct h5shuf_range range;
    uint64_t number;   /* the group is /piles/<number>, 6 digits or more */
    uint64_t rows;
    uint64_t bytes;    /* payload bytes of its vlen rows (0 without vlen datasets) */
};

/* The scratch file (or a pile file) and the piles in it, in key order. */
struct h5shuf_scratch {
    const char *path;            /* for messages: tf.path, or the pile file a gather reads */
    struct h5shuf_tempfile tf;   /* a scratch file's own file (empty for a gather's pile file) */
    hid_t file;
    struct h5shuf_pile *piles;
    size_t npiles, cap;
    uint64_t next_number;
    const struct h5shuf_datasets *dsets; /* what a pile holds: a dataset per shuffled dataset, ids, payloads */
    struct h5shuf_filters filters;       /* of the piles' datasets (--scratch-compression) */
    int raw_unless_costly;               /* a chunk of rows is stored unfiltered (its filters skipped in its
                                          * mask) unless the scratch's writes wait for the disk or take
                                          * much of the scattering thread's time (writepace.h;
                                          * pass 1 with spare buffers only); the ids always filtered */
    struct h5shuf_filters id_filters;    /* of their ids and vlen lengths */
};

/* A scratch file is made in two steps, so that its name is known (sc->path, for a handler of fatal
 * signals) before HDF5 writes to it.  Reserve: an empty file in dir (h5shuf__tempfile_create: lead,
 * for_path and mid make its name, e.g. "DIR/h5shuf-scratch-out.h5-PID-TAG-XXXXXX") for piles holding rows of
 * dsets (which must outlive it), compressed with filters (their ids and vlen lengths with id_filters).
 * Destroy with h5shuf__scratch_destroy, also after a failure. */
H5SHUF_INTERNAL int h5shuf__scratch_reserve(struct h5shuf_scratch *sc, const char *dir, const char *lead,
                                            const char *for_path, const char *mid,
                                            const struct h5shuf_datasets *dsets, const struct h5shuf_filters *filters,
                                            const struct h5shuf_filters *id_filters, struct h5shuf_err *err);
/* The same, the file named exactly name in dir (h5shuf__tempfile_create_as: a name recorded first). */
H5SHUF_INTERNAL int h5shuf__scratch_reserve_as(struct h5shuf_scratch *sc, const char *dir, const char *name,
                                               const struct h5shuf_datasets *dsets, const struct h5shuf_filters *filters,
                                               const struct h5shuf_filters *id_filters, struct h5shuf_err *err);
/* Then create the (empty) HDF5 scratch file at the reserved name, through its descriptor, with fapl (a
 * file-access property list of the caller's, e.g. a resumable run's driver; H5P_DEFAULT for none). */
H5SHUF_INTERNAL int h5shuf__scratch_open(struct h5shuf_scratch *sc, hid_t fapl, struct h5shuf_err *err);
/* A resumed run: open the scratch file sc->tf (an interrupted run's, brought back to a checkpoint) for
 * writing with fapl. */
H5SHUF_INTERNAL int h5shuf__scratch_reopen(struct h5shuf_scratch *sc, hid_t fapl, struct h5shuf_err *err);
/* Close and remove the scratch file (emptied first).  Safe on a zeroed or half-made scratch. */
H5SHUF_INTERNAL void h5shuf__scratch_destroy(struct h5shuf_scratch *sc);
/* Create group name at loc without modification times, as every object of a scratch or pile file is
 * made: no clock in the file, so the same run writes the same bytes (a pile file of h5shuf scatter is
 * compared byte for byte).  The group's id, or < 0 (cause on HDF5's stack). */
H5SHUF_INTERNAL hid_t h5shuf__scratch_group(hid_t loc, const char *name);
/* Drop all piles (for a restart of pass 1): unlinks /piles and makes it anew. */
H5SHUF_INTERNAL int h5shuf__scratch_reset(struct h5shuf_scratch *sc, struct h5shuf_err *err);

/* A pile's group name ("/piles/NNNNNN"), at most H5SHUF_PILE_NAME_MAX bytes with its NUL. */
#define H5SHUF_PILE_NAME_MAX 64
H5SHUF_INTERNAL void h5shuf__pile_name(uint64_t number, char *buf, size_t cap);
/* The dataset of vlen slot v. */
H5SHUF_INTERNAL size_t h5shuf__pile_vlen_dataset(const struct h5shuf_datasets *dsets, size_t v);
/* Create pile group number with its datasets, chunked cap rows at a time (vlen payloads vchunk[v]
 * elements); they are left open in *group and sets[0..h5shuf__pile_nsets). */
H5SHUF_INTERNAL int h5shuf__pile_create(const struct h5shuf_scratch *sc, uint64_t number, uint64_t cap,
                                        const uint64_t *vchunk, hid_t *group, hid_t *sets, struct h5shuf_err *err);

/* Open pile p's datasets: sets[0..h5shuf__pile_nsets) (index at n).  Caller closes them with
 * h5shuf__pile_close. */
H5SHUF_INTERNAL int h5shuf__pile_open(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *group,
                                      hid_t *sets, struct h5shuf_err *err);
/* The same without HDF5's chunk cache, as h5shuf__pile_create makes them, for a caller that reads or writes
 * each chunk once, whole (a pile buffer's flush, pass 2's load): an unfiltered chunk then moves straight
 * between the file and the caller's buffer; a filtered one is decoded or encoded at each access. */
H5SHUF_INTERNAL int h5shuf__pile_open_whole(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *group,
                                            hid_t *sets, struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__pile_close(hid_t group, hid_t *sets, size_t n);
/* Give the file system back the blocks of a pile's stored chunks, its datasets open as sets[0 .. n), once
 * their bytes are in memory and the pile will not be read again (pass 2 of a run's own scratch file): the
 * scratch then shrinks as the output grows, and its pages, if not yet written to the disk, never are.
 * fd: the scratch file's descriptor, sc->tf.fd (-1: nothing released).  Only
 * whole pages inside a chunk are released (fallocate's FALLOC_FL_PUNCH_HOLE), never a byte of a
 * neighbour.  Best effort, and it cannot fail: where holes cannot be punched the blocks stay until the
 * scratch is deleted, as they always did. */
H5SHUF_INTERNAL void h5shuf__pile_release(int fd, const hid_t *sets, size_t n);
/* Create pile number's group with empty datasets (a pile that received no row has none). */
H5SHUF_INTERNAL int h5shuf__pile_create_empty(const struct h5shuf_scratch *sc, uint64_t number, struct h5shuf_err *err);
/* Remove pile p's group (after it has been consumed). */
H5SHUF_INTERNAL int h5shuf__pile_remove(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                                        struct h5shuf_err *err);

/* Bytes pile p needs in pass 2 (rows with their sort records, plus payload), and whether it is over the
 * plan's bounds (rows, or those bytes for vlen rows). */
H5SHUF_INTERNAL uint64_t h5shuf__pile_mem_bytes(const struct h5shuf_datasets *dsets, const struct h5shuf_pile *p);
H5SHUF_INTERNAL int h5shuf__pile_oversize(const struct h5shuf_datasets *dsets, const h5shuf_plan *plan,
                                          const struct h5shuf_pile *p);

#endif /* H5SHUF_PILES_H */
