/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allprogress.c - the progress of every process summed on process 0 (allprogress.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "allprogress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <h5shuf.h>

enum { TAG_PROGRESS = 3 };
#define PHASES 8           /* h5shuf_phase values are below it */
#define END_PHASE PHASES   /* a process's last message: its run ended well */
#define SEND_EVERY 0.2     /* seconds between two reports of one phase */

/* The order phases run in (h5shuf_phase's numbers are not): a process past a phase has done its rows. */
static int order(int phase)
{
    static const int rank_of[PHASES] = {0, 3, 4, 5, 1, 2, 6, 7}; /* none, scatter, split, gather, create, select,
                                                                  * verify */
    return phase >= 0 && phase < PHASES ? rank_of[phase] : PHASES;
}

struct h5shuf_allprogress {
    struct h5shuf_comm *c;
    uint64_t first, end;    /* this process's output rows */
    /* a process other than 0: its last report sent (buffer and request), when and in which phase */
    uint64_t out[3];
    MPI_Request req;
    double sent_at;
    int sent_phase;
    /* process 0: each process's latest phase, its rows done and its total of every phase it reported */
    int *phase;             /* (END_PHASE: its run ended well) */
    unsigned *seen;         /* bit p: it reported phase p */
    uint64_t *done, *total; /* size and size * PHASES */
    int last;               /* its own phase at its last report (-1: none yet) */
    int ended;              /* processes whose run ended well (process 0 counted) */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct h5shuf_allprogress *h5shuf_allprogress_new(struct h5shuf_comm *c, uint64_t first, uint64_t end)
{
    struct h5shuf_allprogress *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->c = c;
    a->first = first;
    a->end = end;
    a->req = MPI_REQUEST_NULL;
    a->sent_phase = a->last = -1;
    if (c->rank == 0) {
        a->phase = malloc((size_t)c->size * sizeof *a->phase);
        a->seen = calloc((size_t)c->size, sizeof *a->seen);
        a->done = calloc((size_t)c->size, sizeof *a->done);
        a->total = calloc((size_t)c->size * PHASES, sizeof *a->total);
        a->ended = 1;
        if (!a->phase || !a->seen || !a->done || !a->total) {
            h5shuf_allprogress_free(a);
            return NULL;
        }
        for (int r = 0; r < c->size; r++)
            a->phase[r] = -1;
    }
    return a;
}

void h5shuf_allprogress_free(struct h5shuf_allprogress *a)
{
    if (!a)
        return;
    free(a->phase);
    free(a->seen);
    free(a->done);
    free(a->total);
    free(a);
}

static void record(struct h5shuf_allprogress *a, int r, int phase, uint64_t done, uint64_t total)
{
    a->phase[r] = phase;
    if (phase >= 0 && phase < PHASES) {
        a->done[r] = done;
        a->total[(size_t)r * PHASES + (size_t)phase] = total;
        a->seen[r] |= 1u << phase;
    } else if (phase == END_PHASE) { /* with its output rows: it may have put them without a report */
        a->ended++;
        a->total[(size_t)r * PHASES + H5SHUF_PHASE_GATHER] = total;
        a->seen[r] |= 1u << H5SHUF_PHASE_GATHER;
    }
}

/* Process 0: does it know process r's total of phase?  (it reported the phase, or is past it) */
static int known(const struct h5shuf_allprogress *a, int r, int phase)
{
    return (a->seen[r] >> phase & 1u) || order(a->phase[r]) > order(phase);
}

/* Process 0: take in every report that has arrived. */
static void drain(struct h5shuf_allprogress *a)
{
    int flag = 0;
    MPI_Status s;
    while (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PROGRESS, a->c->comm, &flag, &s) == MPI_SUCCESS && flag) {
        uint64_t m[3];
        MPI_Recv(m, 3, MPI_UINT64_T, s.MPI_SOURCE, TAG_PROGRESS, a->c->comm, MPI_STATUS_IGNORE);
        record(a, s.MPI_SOURCE, (int)m[0], m[1], m[2]);
    }
}

/* Process 0: phase's rows over all processes (finished: every process is done with it). */
static void sum(const struct h5shuf_allprogress *a, int phase, int finished, uint64_t *gdone, uint64_t *gtotal)
{
    uint64_t d = 0, t = 0;
    for (int r = 0; r < a->c->size; r++) {
        const uint64_t tot = a->total[(size_t)r * PHASES + (size_t)phase];
        t += tot;
        if (finished)
            d += tot;
        else if (a->phase[r] == phase)
            d += a->done[r];
        else if (order(a->phase[r]) > order(phase))
            d += tot;
    }
    *gdone = d;
    *gtotal = t;
}

static void send(struct h5shuf_allprogress *a, int phase, uint64_t done, uint64_t total)
{
    if (a->req != MPI_REQUEST_NULL) /* 24 bytes: sent eagerly, so this returns at once */
        MPI_Wait(&a->req, MPI_STATUS_IGNORE);
    a->out[0] = (uint64_t)phase;
    a->out[1] = done;
    a->out[2] = total;
    MPI_Isend(a->out, 3, MPI_UINT64_T, 0, TAG_PROGRESS, a->c->comm, &a->req);
    a->sent_at = now();
    a->sent_phase = phase;
}

void h5shuf_allprogress_report(struct h5shuf_allprogress *a, int phase, uint64_t done, uint64_t total, uint64_t *gdone,
                               uint64_t *gtotal, int *prev_phase, uint64_t *prev_done, uint64_t *prev_total)
{
    *gdone = done;
    *gtotal = total;
    *prev_phase = -1;
    const int summed = phase == H5SHUF_PHASE_SCATTER || phase == H5SHUF_PHASE_SPLIT || phase == H5SHUF_PHASE_GATHER;
    if (!a || (!summed && a->c->rank != 0))
        return;
    if (phase == H5SHUF_PHASE_GATHER) { /* output rows from row 0: this process's from its first */
        done = done > a->first ? (done < a->end ? done : a->end) - a->first : 0;
        total = a->end - a->first;
        *gdone = done;
        *gtotal = total;
    }
    if (a->c->rank != 0) {
        if (phase != a->sent_phase || done >= total || now() - a->sent_at >= SEND_EVERY)
            send(a, phase, done, total);
        return;
    }
    drain(a);
    if (a->last >= 0 && a->last != phase) {
        /* the last phase's final figures.  Process 0 leaves a phase after a collective step every process
         * reaches once done with it (the piles summed after pass 1, the parts assembled after pass 2), so
         * each has done its total; a process's first report of a phase (with its total) is sent at once,
         * so wait for those briefly (a process that never enters the phase ends the wait at 1 s) */
        const double until = now() + 1.0;
        for (int r = 1; r < a->c->size && now() < until; r++)
            while (!known(a, r, a->last) && now() < until && !h5shuf_comm_poll(a->c)) {
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
                drain(a);
            }
        *prev_phase = a->last;
        sum(a, a->last, 1, prev_done, prev_total);
        a->last = -1;
    }
    if (!summed) /* process 0's own */
        return;
    record(a, 0, phase, done, total);
    a->last = phase;
    sum(a, phase, 0, gdone, gtotal);
}

void h5shuf_allprogress_end(struct h5shuf_allprogress *a, int *phase, uint64_t *gdone, uint64_t *gtotal)
{
    *phase = -1;
    if (!a)
        return;
    struct h5shuf_comm *c = a->c;
    if (c->rank != 0) {
        send(a, END_PHASE, 0, a->end - a->first);
        MPI_Wait(&a->req, MPI_STATUS_IGNORE);
        return;
    }
    const double until = now() + 30.0;
    while (a->ended < c->size && now() < until && !h5shuf_comm_poll(c)) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
        drain(a);
    }
    if (a->last >= 0) {
        *phase = a->last;
        sum(a, a->last, 1, gdone, gtotal);
    }
}
