/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * comm.c - MPI between the processes of a distributed run: sums and counts (collectives), rows and
 * chunks (point to point, in messages of at most 1 GiB, since MPI counts are ints), and the failure
 * notices of comm.h.
 *
 * Every wait polls for failure notices, so that no process blocks for good on one that has failed:
 * collectives are the nonblocking ones (MPI-3) on private buffers, which a cancelled run leaves to MPI
 * (a collective cannot be cancelled; the job ends with MPI_Abort), and receives still pending are
 * cancelled before their buffers are freed.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_FAIL = 1, TAG_ACK = 2, TAG_STALL = 3 };
#define PIECE_BYTES ((uint64_t)1 << 30)

int h5shuf_comm_init(struct h5shuf_comm *c)
{
    memset(c, 0, sizeof *c);
    c->failed_rank = -1;
    int r = MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    if (r == MPI_SUCCESS)
        r = MPI_Comm_rank(c->comm, &c->rank);
    if (r == MPI_SUCCESS)
        r = MPI_Comm_size(c->comm, &c->size);
    if (r == MPI_SUCCESS && !(c->heard = calloc((size_t)c->size, 1)))
        r = MPI_ERR_NO_MEM;
    return r;
}

void h5shuf_comm_free(struct h5shuf_comm *c)
{
    free(c->notices);
    c->notices = NULL;
    free(c->heard);
    c->heard = NULL;
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
}

static void pause_briefly(void)
{
    struct timespec ts = {0, 20000}; /* 20 us: a wait costs no core, a message no noticeable latency */
    nanosleep(&ts, NULL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int h5shuf_comm_poll(struct h5shuf_comm *c)
{
    int flag = 0;
    MPI_Status s;
    while (MPI_Iprobe(MPI_ANY_SOURCE, TAG_FAIL, c->comm, &flag, &s) == MPI_SUCCESS && flag) {
        int who = -1;
        MPI_Recv(&who, 1, MPI_INT, s.MPI_SOURCE, TAG_FAIL, c->comm, MPI_STATUS_IGNORE);
        c->heard[s.MPI_SOURCE] |= 1;
        if (c->failed_rank < 0)
            c->failed_rank = who;
    }
    return c->failed_rank >= 0;
}

/* Another process failed while this one waited on reqs: cancel what can be (receives still pending),
 * so that MPI writes into no buffer after the caller frees it. */
static void cancel_pending(MPI_Request *req, int n)
{
    for (int i = 0; i < n; i++)
        if (req[i] != MPI_REQUEST_NULL)
            MPI_Cancel(&req[i]);
    double until = now() + 1.0;
    int done = 0;
    while (!done && now() < until) {
        MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (!done)
            pause_briefly();
    }
}

static int cancelled(struct h5shuf_comm *c, struct h5shuf_err *err)
{
    if (c->failed_rank < 0)
        return h5shuf__fail(err, H5SHUF_ECANCELED, "rank %d: interrupted", c->rank);
    return h5shuf__fail(err, H5SHUF_ECANCELED, "cancelled: rank %d failed", c->failed_rank);
}

/* Wait for req[0..n) (point to point when p2p: those are cancelled when another process fails or this
 * one is stopped). */
static int wait_requests(struct h5shuf_comm *c, MPI_Request *req, int n, int p2p, struct h5shuf_err *err)
{
    for (;;) {
        int done = 0;
        if (MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return h5shuf__fail(err, H5SHUF_EIO, "rank %d: MPI failed", c->rank);
        if (done)
            return H5SHUF_OK;
        if (h5shuf_comm_poll(c) || (c->stopped && c->stopped())) {
            if (p2p)
                cancel_pending(req, n);
            return cancelled(c, err);
        }
        pause_briefly();
    }
}

int h5shuf_comm_wait(struct h5shuf_comm *c, MPI_Request *req, int n, struct h5shuf_err *err)
{
    return wait_requests(c, req, n, 1, err);
}

/* v[0..n) replaced by their reduction by op over the processes. */
static int reduce(struct h5shuf_comm *c, uint64_t *v, size_t n, MPI_Op op, struct h5shuf_err *err)
{
    if (n > (size_t)INT32_MAX / 2)
        return h5shuf__fail(err, H5SHUF_EINTERNAL, "too many sums for MPI: %zu", n);
    uint64_t *p = malloc(2 * (n ? n : 1) * sizeof *p);
    if (!p)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    memcpy(p, v, n * sizeof *v);
    MPI_Request req;
    c->messages++;
    if (MPI_Iallreduce(p, p + n, (int)n, MPI_UINT64_T, op, c->comm, &req) != MPI_SUCCESS) {
        free(p);
        return h5shuf__fail(err, H5SHUF_EIO, "rank %d: MPI_Iallreduce failed", c->rank);
    }
    int st = wait_requests(c, &req, 1, 0, err);
    if (st == H5SHUF_OK) {
        memcpy(v, p + n, n * sizeof *v);
        free(p);
    }
    return st;
}

int h5shuf_comm_sums(struct h5shuf_comm *c, uint64_t *v, size_t n, struct h5shuf_err *err)
{
    return reduce(c, v, n, MPI_SUM, err);
}

int h5shuf_comm_max(struct h5shuf_comm *c, uint64_t *v, size_t n, struct h5shuf_err *err)
{
    return reduce(c, v, n, MPI_MAX, err);
}

int h5shuf_comm_alltoall(struct h5shuf_comm *c, const uint64_t *sendv, uint64_t *recvv, struct h5shuf_err *err)
{
    size_t n = (size_t)c->size;
    uint64_t *p = malloc(2 * n * sizeof *p);
    if (!p)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    memcpy(p, sendv, n * sizeof *p);
    MPI_Request req;
    c->messages++;
    MPI_Ialltoall(p, 1, MPI_UINT64_T, p + n, 1, MPI_UINT64_T, c->comm, &req);
    int st = wait_requests(c, &req, 1, 0, err);
    if (st == H5SHUF_OK) { /* else p stays MPI's: the job is about to end */
        memcpy(recvv, p + n, n * sizeof *p);
        free(p);
    }
    return st;
}

int h5shuf_comm_sendrecv(struct h5shuf_comm *c, const void *buf, uint64_t bytes, int to, void *rbuf, uint64_t rbytes,
                         int from, int tag, struct h5shuf_err *err)
{
    if (to < 0)
        bytes = 0;
    if (from < 0)
        rbytes = 0;
    uint64_t off = 0, roff = 0;
    int st = H5SHUF_OK;
    while (st == H5SHUF_OK && (off < bytes || roff < rbytes)) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        uint64_t n = bytes - off < PIECE_BYTES ? bytes - off : PIECE_BYTES;
        uint64_t rn = rbytes - roff < PIECE_BYTES ? rbytes - roff : PIECE_BYTES;
        if (rn)
            MPI_Irecv((char *)rbuf + roff, (int)rn, MPI_BYTE, from, tag, c->comm, &req[1]);
        if (n)
            MPI_Isend((const char *)buf + off, (int)n, MPI_BYTE, to, tag, c->comm, &req[0]);
        c->messages += n > 0;
        st = h5shuf_comm_wait(c, req, 2, err);
        off += n;
        roff += rn;
    }
    return st;
}

int h5shuf_comm_debug_stall(struct h5shuf_comm *c, struct h5shuf_err *err)
{
    const char *env = getenv("H5SHUF_DEBUG_STALL_RANK");
    if (!env || !*env || atoi(env) != c->rank)
        return H5SHUF_OK;
    int dummy;
    MPI_Request req;
    fprintf(stderr, "h5shuf-mpi: rank %d: stalled (H5SHUF_DEBUG_STALL_RANK)\n", c->rank);
    fflush(stderr);
    MPI_Irecv(&dummy, 1, MPI_INT, c->rank, TAG_STALL, c->comm, &req);
    return h5shuf_comm_wait(c, &req, 1, err);
}

void h5shuf_comm_fail(struct h5shuf_comm *c, double seconds)
{
    if (!c->notices && (c->notices = malloc((size_t)c->size * sizeof *c->notices)) != NULL)
        for (int q = 0; q < c->size; q++) {
            c->notices[q] = MPI_REQUEST_NULL;
            if (q != c->rank)
                MPI_Isend(&c->rank, 1, MPI_INT, q, TAG_FAIL, c->comm, &c->notices[q]);
        }
    int answered = 0, flag;
    double until = now() + seconds;
    MPI_Status s;
    for (;;) {
        h5shuf_comm_poll(c); /* (other processes' notices) */
        answered = 0;
        for (int q = 0; q < c->size; q++) {
            if ((c->heard[q] & 1) && !(c->heard[q] & 2)) { /* it failed too: it waits for this one's answer */
                MPI_Send(&c->rank, 1, MPI_INT, q, TAG_ACK, c->comm);
                c->heard[q] |= 2; /* (and sends none) */
            }
            answered += q != c->rank && (c->heard[q] & 2);
        }
        if (answered >= c->size - 1 || now() >= until)
            break;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_ACK, c->comm, &flag, &s) == MPI_SUCCESS && flag) {
            int dummy;
            MPI_Recv(&dummy, 1, MPI_INT, s.MPI_SOURCE, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
            c->heard[s.MPI_SOURCE] |= 2;
        } else {
            pause_briefly();
        }
    }
}

void h5shuf_comm_acknowledge(struct h5shuf_comm *c)
{
    if (c->failed_rank >= 0) {
        MPI_Request req;
        MPI_Isend(&c->rank, 1, MPI_INT, c->failed_rank, TAG_ACK, c->comm, &req);
        double until = now() + 2.0;
        int done = 0;
        while (!done && now() < until) {
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (!done)
                pause_briefly();
        }
    }
}
