/*
 * dist.h - the distributed run of a planned job over the processes of c (dist.c; DESIGN.md section 5):
 * the serial run's stages composed over parts, with the serial run's output bytes.
 */
#ifndef H5SHUF_MPI_DIST_H
#define H5SHUF_MPI_DIST_H

#include "comm.h"
#include "h5shuf.h"

/* Run job (planned the same way by every process, with the two passes) as process c->rank of c->size:
 * pass 1 over its share of the input rows into its own scratch file (in its --tmpdir); pass 2 over the
 * piles whose rows fall in its output rows, their rows sent to it by every process; its shards written
 * whole, or its part of the single output copied into the output by whole chunks by process 0.  Every
 * process returns H5SHUF_OK only when every output is in place; on any failure nothing is left at the
 * final paths nor in any scratch directory.  The error is job's (H5SHUF_ECANCELED when another process
 * failed: c->failed_rank). */
int h5shuf_dist_run(h5shuf_job *job, struct h5shuf_comm *c);

/* What a distributed run cannot do with planned job, found from the plan alone (so every process finds
 * the same, and the caller can end the job with one line, by the first process, and no abort):
 * variable-length rows, the direct path.  H5SHUF_OK, or the error (job's message). */
int h5shuf_dist_check(h5shuf_job *job);

#endif /* H5SHUF_MPI_DIST_H */
