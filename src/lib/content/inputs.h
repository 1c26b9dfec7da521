/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inputs.h - the input files: their shuffled datasets found (or discovered, in whole-file mode) and
 * checked against the first input's, which describes the datasets (inputs.c).  Rows are numbered
 * globally 0 .. N-1 over the inputs in the order they were added.
 *
 * A job may have thousands of inputs, and HDF5 holds about 0.6 MiB for each open file (its metadata
 * cache's hash table alone is 512 KiB), besides a descriptor: so an input is open only while it is read.
 * The first input stays open for the whole job (the objects and attributes copied to the output, the
 * datatypes of the description come from it); the others are opened when their rows are read
 * (h5shuf__input_dsets) and closed again, at most H5SHUF_INPUTS_OPEN_MAX of them open at a time.
 *
 * A small input whose datasets are simply stored (inmap.h: contiguous, or a few chunks of whole rows) is
 * mapped when it is scanned: pass 1 then reads its stored bytes with pread() from a plain descriptor
 * (h5shuf__input_fd), under the same limit, and never opens it with HDF5 again.  The maps take at most
 * 1.1 KiB and 8 bytes a dataset per input (inmap.h), about 100 bytes for an input of two one-chunk
 * datasets, held from inputs_open to inputs_close.
 */
#ifndef H5SHUF_INPUTS_H
#define H5SHUF_INPUTS_H

#include <hdf5.h>

#include "datasets.h"
#include "spec.h"

struct h5shuf_inmap;    /* inmap.h */
struct h5shuf_sample;   /* sample.h */
struct h5shuf_pipeline; /* codec.h */

/* One input file. */
struct h5shuf_input {
    struct h5shuf_spec spec; /* as given; in whole-file mode the first input's paths are the discovered ones */
    char *open_path;         /* where the file is opened when not NULL (a gather: the name resolved at
                              * scatter time); spec.file stays as given, for provenance and messages */
    hid_t file;              /* open for reading, else H5I_INVALID_HID (the first input: from
                              * inputs_open to inputs_close; another: h5shuf__input_dsets) */
    uint64_t rows;           /* its rows in the permutation: dims[0] of its datasets (file_rows), or the
                              * rows of its sample */
    uint64_t file_rows;      /* dims[0] of its datasets */
    uint64_t first_row;      /* global id of its first row */
    /* Weights (docs/algorithm.md, "Mixtures"): an input given as SPEC@W is added as ceil(W) entries of
     * this list, copies 0 .. ceil(W)-1 of input src; the last one holds only a sample of its rows when W
     * is not whole. */
    size_t src;              /* the input as given (0-based, command-line order) */
    uint32_t copy;           /* which copy of it */
    char *weight;            /* copy 0 of a weighted input: the weight as given ("2.5"), else NULL; owned */
    uint64_t frac_num, frac_den; /* the sampled copy: its share num / den of the rows (0 / 1: weight 0);
                                  * den 0 otherwise */
    struct h5shuf_sample *sample; /* the sampled copy: which rows it holds (h5shuf__inputs_draw); owned */
    int own_chunks;          /* a dataset's chunk dim 0 differs from the first input's */
    hid_t *dset;             /* one open dataset per shuffled dataset while file is open, else
                              * H5I_INVALID_HID each (NULL before inputs_open) */
    struct h5shuf_inmap *map; /* where its rows are stored, when mapped at scan time (not the first
                               * input's), else NULL; owned */
    int fd;                  /* a mapped input open for pread (h5shuf__input_fd), else -1 */
    uint64_t dev, ino;       /* the file's st_dev and st_ino when inputs_open opened it (the same file
                              * named twice is found by them); 0 before */
};

/* Inputs other than the first open at a time, at most: each costs about 0.6 MiB of HDF5's memory and a
 * file descriptor (docs/guide.md, "Memory"); a mapped input open for pread() only, a descriptor. */
#define H5SHUF_INPUTS_OPEN_MAX 4

/* The inputs of a job, in order. */
struct h5shuf_inputs {
    struct h5shuf_input *v;
    size_t n;
    uint64_t rows;  /* N: the rows of all inputs */
    int whole_file; /* the first input named no dataset: its datasets were discovered, its other objects
                     * go to the output */
    char **extra;   /* dataset mode: objects of the first input copied into the output (the dimension
                     * scales of the shuffled datasets' other dimensions), nextra of them */
    size_t nextra;
    uint64_t stored_bytes; /* bytes the fixed-size datasets' rows take in the files (H5Dget_storage_size) */
    /* The inputs other than the first open now, least recently read first: H5SHUF_INPUTS_OPEN_MAX entries,
     * SIZE_MAX past the last (made by inputs_open).  A pointer, so that the stages, handed the inputs as
     * const, still open and close them: which inputs are open is no part of what the inputs are. */
    size_t *open;
    /* The filter pipeline of each shuffled dataset (dsets->n) of every mapped input whose dataset is
     * chunked (rank 0 until one is: inmap.h); owned. */
    struct h5shuf_pipeline *map_pl;
    int allow_external; /* set before h5shuf__inputs_open: read datasets whose rows are in other files
                         * (external storage, virtual datasets); else they are refused */
    char *external;     /* after it: the first such dataset read ("FILE:PATH: its rows are read from ..."),
                         * for a warning; owned; NULL when none */
    size_t nsrc;        /* the inputs as given (entries of v are copies of them: src) */
    int weighted;       /* set by inputs_open: an input has a weight other than 1 (copies or a sample) */
    hid_t source_type;  /* weighted: the source index's file datatype (output.h h5shuf__source_type),
                         * made by inputs_open, closed by inputs_close; else H5I_INVALID_HID */
};

/* The path an input is opened by. */
static inline const char *h5shuf__input_path(const struct h5shuf_input *in)
{
    return in->open_path ? in->open_path : in->spec.file;
}

/* Append input spec (parsed; nothing opened): "FILE[:/path,...][@W]", W a weight >= 0 in decimal (at most
 * 18 digits after the point, copies below 65536): ceil(W) entries, as above (W = 0: one entry holding a
 * sample of no rows, so that the inputs after it keep their numbers).  A file whose name ends in
 * "@" and digits is named with "@1" after it.  H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_EINVAL (in err). */
H5SHUF_INTERNAL int h5shuf__inputs_append(struct h5shuf_inputs *in, const char *spec, struct h5shuf_err *err);

/* Open each input read-only in turn, discover (whole-file mode) or find the datasets, check them against
 * the first input's, and describe them in dsets (output paths from out_spec's, or the input paths); for
 * vlen rows, estimate their payload from a sample.  Fills in->rows, first_row, stored_bytes,
 * dsets->row_bytes.  Every input but the first is closed again.  Errors name the file and dataset; a
 * process out of file descriptors is told so ("too many open files (ulimit -n is N)"). */
H5SHUF_INTERNAL int h5shuf__inputs_open(struct h5shuf_inputs *in, const struct h5shuf_spec *out_spec,
                                        struct h5shuf_datasets *dsets, struct h5shuf_err *err);
/* Draw the samples of the weighted inputs' sampled copies for seed (sample.h), after inputs_open, before
 * any of their rows is read (again for another seed).  H5SHUF_OK, or H5SHUF_ENOMEM naming the input. */
H5SHUF_INTERNAL int h5shuf__inputs_draw(struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, uint64_t seed,
                                        struct h5shuf_err *err);
/* The open datasets of input f (dsets->n of them, in the order of dsets), for reading its rows: opened
 * now when input f is not open, the input read least recently closed when H5SHUF_INPUTS_OPEN_MAX others
 * are open.  Valid until the next call for another input, or inputs_close; hold no read of them across
 * such a call.  NULL on failure, recorded in err naming the file (and dataset): the file cannot be opened
 * (no descriptor left: said so), or its rows changed since inputs_open. */
H5SHUF_INTERNAL const hid_t *h5shuf__input_dsets(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets,
                                                 size_t f, struct h5shuf_err *err);
/* Where input f's rows are stored when it was mapped at scan time (inmap.h), else NULL: its rows are then
 * read through h5shuf__input_dsets. */
static inline const struct h5shuf_inmap *h5shuf__input_map(const struct h5shuf_inputs *in, size_t f)
{
    return in->v[f].map;
}
/* A descriptor of mapped input f, open read-only for pread(): opened now when it is not open (O_CLOEXEC),
 * under the same limit and order as h5shuf__input_dsets (an input open either way counts once).  Valid
 * until the next call of either for another input, or inputs_close.  -1 on failure, recorded in err
 * naming the file and its first dataset: it cannot be opened (no descriptor left: said so), or it changed
 * since it was scanned ("changed while h5shuf ran": another device, inode, size or modification time). */
H5SHUF_INTERNAL int h5shuf__input_fd(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f,
                                     struct h5shuf_err *err);
/* Close what inputs_open, input_dsets and input_fd opened: the datasets' descriptions first, then the
 * files; free the maps.  Safe after a failed open. */
H5SHUF_INTERNAL void h5shuf__inputs_close(struct h5shuf_inputs *in, struct h5shuf_datasets *dsets);
/* Free the specs (after inputs_close). */
H5SHUF_INTERNAL void h5shuf__inputs_free(struct h5shuf_inputs *in);

/* The input (0-based) holding global row id. */
H5SHUF_INTERNAL size_t h5shuf__input_of(const struct h5shuf_inputs *in, uint64_t id);
/* The row of input f's datasets in the file that its row r (< in->v[f].rows) is. */
H5SHUF_INTERNAL uint64_t h5shuf__input_file_row(const struct h5shuf_inputs *in, size_t f, uint64_t r);

/* "file:/path" of dataset d of input f (just "file" when d is past the datasets), written into buf of
 * cap bytes, for messages. */
H5SHUF_INTERNAL const char *h5shuf__where(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f,
                                          size_t d, char *buf, size_t cap);

#endif /* H5SHUF_INPUTS_H */
