/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * assemble.h - the single output made whole from its parts (assemble.c).
 */
#ifndef H5SHUF_MPI_ASSEMBLE_H
#define H5SHUF_MPI_ASSEMBLE_H

#include <stdint.h>

#include "comm.h"
#include "job.h"

/* The single output made whole (every process calls it once its part is written and closed): process 0
 * writes every other process q's part (its output rows [a[q], b[q]), its stored chunks sent by q) into
 * the output; the others send theirs (*sent grows by their bytes).  H5SHUF_OK, or an error in job->err. */
int h5shuf_dist_assemble(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b, uint64_t *sent);

#endif /* H5SHUF_MPI_ASSEMBLE_H */
