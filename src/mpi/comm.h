/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm.h - the processes of a distributed run and what passes between them (comm.c, over MPI): sums,
 * rows, chunks, and the failure of any one of them.
 *
 * Failure: a process that fails (bad input, a full disk, a signal) sends every other process a failure
 * notice.  The others see it within a block of work (their progress callbacks poll for it) or at once
 * when they wait on MPI (every wait here polls for it), cancel their runs, which remove their scratch and
 * temporary outputs as any failed run does, and acknowledge.  The failed process waits for the
 * acknowledgements (a few seconds at most) and ends the job with MPI_Abort, so that mpirun or srun
 * returns a nonzero status.
 *
 * Signals: every wait also polls the process's own stop flag (h5shuf_comm.stopped: SIGINT or SIGTERM
 * caught), so a process blocked in MPI notices a signal (a Slurm preemption, mpirun's SIGTERM) at once,
 * as a process at work notices it in its progress callback, and fails as for any other cause.
 */
#ifndef H5SHUF_MPI_COMM_H
#define H5SHUF_MPI_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct h5shuf_comm {
    MPI_Comm comm;        /* a duplicate of MPI_COMM_WORLD: h5shuf's messages and nobody else's */
    int rank, size;
    int failed_rank;      /* the first process whose failure notice arrived, or -1 */
    MPI_Request *notices; /* size: the notices this process sent when it failed */
    unsigned char *heard; /* size: for each process, whether its failure notice arrived (1), and whether it
                           * has answered this one's (2: by its acknowledgement or a notice of its own) */
    int (*stopped)(void); /* nonzero once this process is asked to stop (a signal caught); NULL: never */
    uint64_t messages;    /* messages this process sent: point to point (each piece) and collectives (each
                           * call counted once) */
};

/* Set up c over MPI_COMM_WORLD (after MPI_Init_thread).  Returns MPI's status. */
int h5shuf_comm_init(struct h5shuf_comm *c);
void h5shuf_comm_free(struct h5shuf_comm *c);

/* Has another process failed?  Polls for its notice (without blocking); 1 when one has arrived. */
int h5shuf_comm_poll(struct h5shuf_comm *c);

/* Wait for point-to-point requests req[0..n), polling for failure notices and c->stopped.  H5SHUF_OK, or
 * H5SHUF_ECANCELED recorded in err naming the rank that failed, or saying this one was interrupted (the
 * requests then cancelled). */
int h5shuf_comm_wait(struct h5shuf_comm *c, MPI_Request *req, int n, struct h5shuf_err *err);

/* v[0..n) replaced by their sums over the processes (every process calls it with the same n). */
int h5shuf_comm_sums(struct h5shuf_comm *c, uint64_t *v, size_t n, struct h5shuf_err *err);
/* v[0..n) replaced by their maxima over the processes (every process calls it with the same n). */
int h5shuf_comm_max(struct h5shuf_comm *c, uint64_t *v, size_t n, struct h5shuf_err *err);
/* sendv[q] to process q for every q; recvv[r] from process r (an MPI_Alltoall of uint64). */
int h5shuf_comm_alltoall(struct h5shuf_comm *c, const uint64_t *sendv, uint64_t *recvv, struct h5shuf_err *err);

/* Send bytes bytes of buf to process to, and receive rbytes bytes from process from into rbuf, at once
 * (either may be 0 bytes or a process of -1: nothing), in messages of at most 1 GiB (tag tells streams
 * apart). */
int h5shuf_comm_sendrecv(struct h5shuf_comm *c, const void *buf, uint64_t bytes, int to, void *rbuf, uint64_t rbytes,
                         int from, int tag, struct h5shuf_err *err);

/* Tests (H5SHUF_DEBUG_STALL_RANK=R in the environment): process R blocks here in an MPI wait that no
 * message ends (a receive from itself), as when waiting on a process stuck in a slow file system, until
 * a failure notice or a signal (H5SHUF_ECANCELED); it says so on stderr first.  Every other process:
 * H5SHUF_OK at once. */
int h5shuf_comm_debug_stall(struct h5shuf_comm *c, struct h5shuf_err *err);

/* This process failed: send every other process the failure notice (once), wait up to seconds for
 * their answers (an acknowledgement, or a failure notice of their own: all fail at once when each is
 * sent a signal, and their notices may have arrived before, in a wait), acknowledging theirs, and
 * return (the caller then ends the job with MPI_Abort). */
void h5shuf_comm_fail(struct h5shuf_comm *c, double seconds);
/* This process was cancelled by another's failure: acknowledge it. */
void h5shuf_comm_acknowledge(struct h5shuf_comm *c);

#endif /* H5SHUF_MPI_COMM_H */
