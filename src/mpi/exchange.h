/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.h - pass 2 of a distributed run (exchange.c): each process gathers the piles of its output
 * rows, their rows sent to it by every process in rounds.
 */
#ifndef H5SHUF_MPI_EXCHANGE_H
#define H5SHUF_MPI_EXCHANGE_H

#include "comm.h"
#include "ctx.h"
#include "job.h"
#include "piles.h"

/* Pass 2 of this process (c->rank of c->size; every process calls it): its piles [plo[me], phi[me]) of
 * the global piles g[0 .. sc->npiles) (their first output rows start[0 .. npiles]) gathered into its
 * output rows [a[me], b[me]) (none: only its parts sent), then the rounds left of the other processes'.
 * plo, phi, a and b: every process's piles and output rows; each process is sent only the rows of its
 * output rows, also of a pile that other processes' ranges cut (cuts.h).  sc: this process's scratch, its parts of the piles in the same order.
 * job->plan.exchanged_bytes gets the bytes sent, summed over the processes; *rounds the rounds.  H5SHUF_OK, or an error in
 * cx->err (H5SHUF_ECANCELED when another process failed). */
int h5shuf_dist_pass2(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc,
                      const struct h5shuf_pile *g, const uint64_t *start, const size_t *plo, const size_t *phi,
                      const uint64_t *a, const uint64_t *b, uint64_t *rounds);

#endif /* H5SHUF_MPI_EXCHANGE_H */
