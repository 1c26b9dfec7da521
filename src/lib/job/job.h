/* SPDX-License-Identifier: BSD-3-Clause */
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
#include "mixture.h"
#include "output.h"
#include "resume.h"
#include "sort.h"
#include "spec.h"
#include "targets.h"

struct h5shuf_chunkio;
struct h5shuf_pilefile;
struct h5shuf_scratch;

/* What a job does: the one-shot shuffle, or one of its two passes through a pile file. */
enum h5shuf_mode { H5SHUF_MODE_RUN = 0, H5SHUF_MODE_SCATTER, H5SHUF_MODE_GATHER };

struct h5shuf_walfile;

/* A resumable run's checkpoints (checkpoint.c): the state directory and journal, and the run's side of
 * them. */
struct h5shuf_ckpt {
    struct h5shuf_resume rs;      /* rs.on: this run checkpoints; rs.found: it continues an interrupted one */
    char *identity;               /* this run's IDENTITY record (owned) */
    uint64_t unit_rows;           /* pass 2: rows of an output file between its commits (0: at its end only) */
    struct h5shuf_walfile *scratch_wal; /* the scratch file's driver, while it is open */
    struct h5shuf_walfile *target_wal;  /* the open output file's */
    struct h5shuf_scratch *scratch;     /* pass 1: the scratch file its checkpoints commit */
    uint64_t last_rows;           /* pass 1: global rows scattered at the last checkpoint */
    double last_time;             /* and its time (CLOCK_MONOTONIC, seconds) */
    unsigned spill_seq;
    char spill[64];               /* the spill file the last checkpoint of pass 1 names, "" when none */
    const struct h5shuf_scratch *release_sc; /* pass 2: the scratch whose piles are given back at commits */
    const struct h5shuf_pile *release_piles; /* its piles, from this one on not yet given back */
    size_t release_n;
    uint64_t release_row;         /* the output row release_piles[0] starts at */
    int started;                  /* the state directory was made or taken over by this run */
    int given_up;                 /* removed by h5shuf__ckpt_give_up before the outputs were discarded */
    int restored;                 /* pass 1's restore was done (a restart starts afresh) */
    int finished;                 /* the interrupted run had put its outputs in place: only its state is left */
    int disk_decided, disk_keep; /* h5shuf__job_disk_failed decided (keep: the failure is the disk's) */
    int unit_layout;              /* no state (rs.on 0: a foreign directory at its name), but the outputs closed
                                   * and reopened every unit_rows as the checkpointed run's are: same bytes */
    char resume_text[1024];       /* h5shuf_job_resume_text */
    /* A distributed run (h5shuf__ckpt_set_rank; ranks 0: a serial run): this process's rank, and barrier(
     * barrier_user, err), which returns once every process called it (pass 1's end is applied only once
     * every process recorded it). */
    int rank, ranks;
    int (*barrier)(void *user, struct h5shuf_err *err);
    void *barrier_user;
};

struct h5shuf_strata; /* strata.h */

/* A job (the public opaque type). */
struct h5shuf_job {
    h5shuf_options opts;           /* the caller's, its strings pointing at the copies below */
    char opts_bad[320];            /* why the caller's options were not taken (abi.c), "" when they were */
    uint64_t debug_pile_bound_rows; /* test knobs (h5shuf_debug.h h5shuf_job_set_debug) */
    int debug_skip_space_check;
    char *tmpdir, *compression, *chunk_shape, *scratch_compression, *index_path, *source_index_path, *split, *mix;
    /* A mixture (opts.mix; jobmix.c): its domains, each input's domain and spec as added (without the
     * "NAME="), nmix of them, and what the plan chose (h5shuf_job_mix_text; NULL before). */
    struct h5shuf_mixture mixture;
    size_t *mix_tag;
    char **mix_spec;
    size_t nmix;
    char *mix_text;
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
    struct h5shuf_strata *strata;  /* --stratify: the strata of the output files (strata.h), made by the plan
                                    * once the seed is drawn; owned; NULL otherwise */
    char *strata_text;             /* --stratify: the groups, as the provenance and the resume state say them */
    uint64_t out_rows;             /* rows of the output order: N, or a head's */
    struct h5shuf_keyidx head_bound; /* with a head (out_rows < N): the largest (key, id) written */
    int planned;
    h5shuf_plan plan;
    struct h5shuf_direct_rows direct_rows; /* the direct path: which datasets are held (planned when it applies) */
    struct h5shuf_direct_plan direct_plan;
    char strategy_why[256];        /* h5shuf_job_strategy_why */
    char verify_text[2 * 4096 + 256]; /* h5shuf_job_verify_text */
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
    int beyond_cache;              /* the rows and their ids take more than half of the memory available
                                    * (plan_scratch_filters): the inputs and the scratch do not stay in the
                                    * page cache, and their reads are asked of the disk ahead (issue 52) */
    int scratch_adaptive;          /* with beyond_cache and the scratch's filters left to h5shuf: a chunk of
                                    * rows is stored as it is unless pass 1's writes wait for the disk or
                                    * take much of its time
                                    * (h5shuf_scratch.raw_unless_costly), when the free space allows */
    uint64_t piles_uncapped;       /* the two passes' piles without pass 2's cap (plan.h), said by strategy_why */
    unsigned band_threads;         /* codec threads the output bands are planned for (writer.h): more
                                    * than 1, they are double-buffered */
    uint64_t band_bytes;           /* the output bands' bytes (h5shuf__writer_bytes), part of the budget */
    struct h5shuf_chunkio *cio;    /* during a run: the thread pool and chunk buffers */
    uint64_t *mixing_counts;       /* h5shuf_job_mixing's arrays */
    struct h5shuf_ckpt ckpt;       /* checkpoints and resume (checkpoint.h) */
    int nospace_said;              /* h5shuf__job_disk_failed has said how much room the run lacks */
    size_t leftovers_note;         /* 1 + the index in warnings of the plan's note of what interrupted runs
                                    * left that the run removes (jobfiles.c), 0 when there is none */
};

/* Plan the job (jobplan.c): everything h5shuf_job_plan does, without its quieting of HDF5's error printing
 * (the caller's).  H5SHUF_OK and job->planned set, or the first error in job->err. */
H5SHUF_INTERNAL int h5shuf__job_make_plan(h5shuf_job *job);

/* Add a warning (printf-formatted) to the job's (h5shuf_job_warning): H5SHUF_OK, or H5SHUF_ENOMEM in
 * job->err. */
H5SHUF_INTERNAL int h5shuf__job_warn(h5shuf_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What interrupted runs left for the job's outputs (jobfiles.c, leftovers.h), once its outputs and scratch
 * directory are planned: a warning for each kind of file that is only reported (set aside by --force, a
 * resumable run's temporaries whose state is elsewhere, another machine's), and one for those certainly
 * of a dead run ("... a run removes them"), which h5shuf__job_leftovers_clear removes when the run
 * starts, its warning then saying what it removed ("removed N files of M MiB that an interrupted run
 * (process P) left for this output, such as PATH"), the plan's free space counting their room.
 * H5SHUF_OK or H5SHUF_ENOMEM in job->err. */
H5SHUF_INTERNAL int h5shuf__job_leftovers_plan(h5shuf_job *job);
H5SHUF_INTERNAL int h5shuf__job_leftovers_clear(h5shuf_job *job);

/* Where a run with status st decides to keep or remove its files (the first call decides: later
 * failures, such as the outputs' commit, do not change it): a resumable run whose disk was full or failed
 * (ENOSPC, EDQUOT, EIO: error.h) keeps its state (job->ckpt.disk_keep, h5shuf__ckpt_keeps).  And a failure
 * for want of space, first seen at any call, becomes H5SHUF_ENOSPC "no space left on DIR: N MiB more
 * needed (...)", DIR the directory of the fuller of the filesystems the run writes (scratch, output), N
 * what the plan's estimates for that filesystem need beyond what its free space and the run's files
 * there (the scratch file, or else the state directory, and the outputs' temporaries) hold, at least
 * 1 MiB.  scratch: the scratch file when it is open (NULL: none, or in the state directory).  Returns the
 * status (st when the failure is another, or was said already). */
struct h5shuf_tempfile;
H5SHUF_INTERNAL int h5shuf__job_disk_failed(h5shuf_job *job, int st, const struct h5shuf_tempfile *scratch);

/* With a mixture, before the inputs are opened for the run: open them to count their rows, compute their
 * weights (mixture.h), and add them again with those weights; the job's mix_text says what it chose.  A
 * gather's inputs carry the weights its scatter chose.  H5SHUF_OK or an error in job->err. */
H5SHUF_INTERNAL int h5shuf__job_mix_plan(h5shuf_job *job);

/* The run's scratch file (run.c): reserved in the job's scratch directory, its name made known to signal
 * handlers (h5shuf_job_temp_file 1) and the files made reported (H5SHUF_PHASE_CREATE), then created.
 * The caller destroys sc (h5shuf__scratch_destroy) and clears job->temp_file[1], also after a failure. */
H5SHUF_INTERNAL int h5shuf__job_scratch_open(h5shuf_job *job, struct h5shuf_scratch *sc);

/* The direct path (direct.h) into the job's output files (made, left open): output rows [from, end) in
 * output order (end 0: to the last), through a writer of their own, flushed and checked to have put
 * every row up to end (or job->out_rows).  H5SHUF_OK, or the first failure (recorded in job->err). */
H5SHUF_INTERNAL int h5shuf__job_direct(h5shuf_job *job, uint64_t from, uint64_t end);

#endif /* H5SHUF_JOB_H */
