/*
 * job.h - the job: a shuffle's inputs, output and options, its plan, and the state of a run.  The job
 * is the orchestrator (job.c: the handle; jobplan.c: planning; run.c: the runs): it strings the stages
 * together, handing each what it uses, and nothing below it includes this header.
 */
#ifndef H5SHUF_JOB_H
#define H5SHUF_JOB_H

#include <hdf5.h>
#include <sys/types.h>

#include "datasets.h"
#include "direct.h"
#include "error.h"
#include "inputs.h"
#include "output.h"
#include "sort.h"
#include "spec.h"
#include "targets.h"

struct h5shuf_chunkio;
struct h5shuf_pilefile;
struct h5shuf_scratch;

/* What a job does: the one-shot shuffle, or one of its two passes through a pile file. */
enum h5shuf_mode { H5SHUF_MODE_RUN = 0, H5SHUF_MODE_SCATTER, H5SHUF_MODE_GATHER };

/* A job (the public opaque type). */
struct h5shuf_job {
    h5shuf_options opts;           /* the caller's, its strings pointing at the copies below */
    char *tmpdir, *compression, *chunk_shape, *scratch_compression, *index_path, *source_index_path, *split;
    struct h5shuf_err err;
    enum h5shuf_mode mode;         /* set when planned, from piles_path and the inputs */
    char *piles_path;              /* h5shuf_job_set_piles: the pile file a scatter writes or a gather reads */
    struct h5shuf_pilefile *pf;    /* a gather's pile file, open while the job lives */
    struct h5shuf_inputs in;
    struct h5shuf_spec out_spec;   /* out_spec.file is NULL until an output is set */
    struct h5shuf_datasets dsets;  /* what a row is (filled by h5shuf__inputs_open) */
    struct h5shuf_filters out_filters, scratch_filters;
    struct h5shuf_filters scratch_id_filters; /* of the piles' ids and vlen lengths (jobplan.c) */
    uint64_t seed;
    uint64_t out_rows;             /* rows of the output order: N, or a head's */
    struct h5shuf_keyidx head_bound; /* with a head (out_rows < N): the largest (key, id) written */
    int planned;
    h5shuf_plan plan;
    struct h5shuf_direct_rows direct_rows; /* the direct path: which datasets are held (planned when it applies) */
    struct h5shuf_direct_plan direct_plan;
    char strategy_why[256];        /* h5shuf_job_strategy_why */
    struct h5shuf_outfile of;      /* what every output file holds (points into the job) */
    struct h5shuf_objcopy objects; /* the objects besides the rows (of.objects) */
    char **warnings;               /* h5shuf_job_warning */
    size_t nwarnings;
    struct h5shuf_targets out;     /* the output files */
    char *scratch_dir;             /* where the scratch file goes: tmpdir, $TMPDIR or the output's dir */
    mode_t out_mode;               /* of the output files, less the umask at their commit: the read and write
                                    * bits every input has (cp's rule for a new file, taken over all inputs,
                                    * so that no reader gains access to rows), a gather's pile file's */
    const char *temp_file[2];      /* during a run: a scatter's pile file under its temporary name (0), the
                                    * scratch file (1); the outputs' are out.v[k].tmp_path */
    int one_pass;                  /* the rows fit the budget: read once, sorted in memory, no scratch (run.c) */
    unsigned band_threads;         /* codec threads the output bands are planned for (writer.h): more
                                    * than 1, they are double-buffered */
    uint64_t band_bytes;           /* the output bands' bytes (h5shuf__writer_bytes), part of the budget */
    struct h5shuf_chunkio *cio;    /* during a run: the thread pool and chunk buffers */
    uint64_t *mixing_counts;       /* h5shuf_job_mixing's arrays */
};

/* Plan the job (jobplan.c): everything h5shuf_job_plan does, without its quieting of HDF5's error printing
 * (the caller's).  H5SHUF_OK and job->planned set, or the first error in job->err. */
H5SHUF_INTERNAL int h5shuf__job_make_plan(h5shuf_job *job);

/* The run's scratch file (run.c): reserved in the job's scratch directory, its name made known to signal
 * handlers (h5shuf_job_temp_file 1) and the files made reported (H5SHUF_PHASE_CREATE), then created.
 * The caller destroys sc (h5shuf__scratch_destroy) and clears job->temp_file[1], also after a failure. */
H5SHUF_INTERNAL int h5shuf__job_scratch_open(h5shuf_job *job, struct h5shuf_scratch *sc);

#endif /* H5SHUF_JOB_H */
