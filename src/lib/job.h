/*
 * job.h - the job: a shuffle's inputs, output and options, its plan, and the state of a run (job.c,
 * run.c).  The job is the orchestrator: it strings the stages together, and nothing below it calls
 * back up into it.
 */
#ifndef H5SHUF_JOB_H
#define H5SHUF_JOB_H

#include <hdf5.h>

#include "datasets.h"
#include "error.h"
#include "inputs.h"
#include "sort.h"
#include "spec.h"

struct h5shuf_scratch;
struct h5shuf_chunkio;
struct h5shuf_target;

/* What a job does: the one-shot shuffle, or one of its two passes through a pile file (lazy.c). */
enum h5shuf_mode { H5SHUF_MODE_RUN = 0, H5SHUF_MODE_SCATTER, H5SHUF_MODE_GATHER };

struct h5shuf_pilefile; /* lazy.c: what a gather read from its pile file */

/* A job (the public opaque type). */
struct h5shuf_job {
    h5shuf_options opts;
    enum h5shuf_mode mode;         /* set when planned, from piles_path and the inputs */
    char *piles_path;              /* h5shuf_job_set_piles: the pile file a scatter writes or a gather reads */
    struct h5shuf_pilefile *pf;    /* a gather's pile file, open while the job lives */
    char *tmpdir;
    struct h5shuf_err err;
    struct h5shuf_input *inputs;
    size_t ninputs;
    struct h5shuf_spec out_spec;   /* out_spec.file is NULL until an output is set */
    int whole_file;                /* the first input had no paths: copy the other objects */
    struct h5shuf_dsinfo *ds;
    size_t nds;
    uint64_t rows;                 /* N */
    uint64_t row_bytes;            /* planned bytes of a row: sum of ds[].plan_row_bytes */
    size_t nvlen;                  /* datasets with variable-length rows */
    double vlen_var;               /* estimated variance of a row's payload bytes (all vlen datasets) */
    uint64_t seed;
    char *compression, *chunk_shape, *scratch_compression, *index_path; /* copies of the options' strings */
    char *scratch_dir;             /* where the scratch file goes: tmpdir, $TMPDIR or the output's dir */
    const char *temp_file[2];      /* during a run: the output's temporary name, the scratch file */
    struct h5shuf_filters out_filters, scratch_filters;
    int planned;
    h5shuf_plan plan;
    struct h5shuf_chunkio *cio;    /* during a run: the thread pool and chunk buffers */
    /* The output files (outputs.c): one, K shards or the splits; out_rows rows of the output order in all. */
    char *source_index_path, *split;   /* copies of the options' strings */
    struct h5shuf_target *targets;
    size_t ntargets;
    uint64_t out_rows;
    size_t cur_target;             /* the target open for writing in pass 2, when cur_file >= 0 */
    hid_t cur_file;
    hid_t *out_dsets;              /* nds + 2: datasets, index, source index of the open target (or invalid) */
    const char *out_name;          /* the output file being written, for messages */
    uint64_t *mixing_counts;       /* h5shuf_job_mixing's arrays: 2 * ninputs counts, then 2 * ninputs doubles */
    struct h5shuf_keyidx head_bound; /* with a head (out_rows < rows): the largest (key, id) written */
};

/* The phases of a run, shared by h5shuf_run, h5shuf_run_scatter and h5shuf_run_gather. */

/* Plan (if not done), refuse an output that is an input or exists (without force), check free space. */
H5SHUF_INTERNAL int h5shuf__run_prepare(h5shuf_job *job);

/* Pass 1 and the oversize handling (recursion or restarts): on return every pile is within its bound. */
H5SHUF_INTERNAL int h5shuf__scatter_all(h5shuf_job *job, struct h5shuf_scratch *sc);

/* Planning a scatter: the pile file takes the output's place (out_spec.file). */
H5SHUF_INTERNAL int h5shuf__piles_scatter_setup(h5shuf_job *job);

/* A public run (h5shuf_run, _run_scatter, _run_gather): a clean error, HDF5's printing off, fn, and the
 * job's chunk I/O released whatever fn returned. */
H5SHUF_INTERNAL int h5shuf__public_run(h5shuf_job *job, int (*fn)(h5shuf_job *job));

#endif /* H5SHUF_JOB_H */
