/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allprogress.h - the progress of every process, for process 0 to show the whole run (allprogress.c).
 *
 * Each process calls h5shuf_allprogress_report at each of its progress reports (phase, rows done of its
 * own total).  The others send theirs to process 0 (a 24-byte message, at most about every 0.2 s and at
 * each phase's end and change); process 0 takes in whatever has arrived and sums.  Point to point, not a
 * nonblocking reduce: processes report different numbers of times (their shares differ), and a
 * collective must be called the same number of times by all.
 */
#ifndef H5SHUF_MPI_ALLPROGRESS_H
#define H5SHUF_MPI_ALLPROGRESS_H

#include <stdint.h>

#include "comm.h"

struct h5shuf_allprogress;

/* State for c's processes, this one putting output rows [first, end) (NULL when out of memory: then
 * each process reports its own only).  Owned by the caller: h5shuf_allprogress_free, after
 * h5shuf_allprogress_end on success.  The phases every process does for its share (pass 1 and its
 * splits, pass 2) are summed; pass 2's reports, which count output rows from row 0, are made relative
 * to first; the others (the outputs created, --head's scan of the keys, --check) are process 0's own. */
struct h5shuf_allprogress *h5shuf_allprogress_new(struct h5shuf_comm *c, uint64_t first, uint64_t end);
void h5shuf_allprogress_free(struct h5shuf_allprogress *a);

/* This process is at rows done of total in phase (h5shuf_phase).  Process 0: *gdone and *gtotal get the
 * phase's rows over all processes (a process past the phase counts its total, one before it nothing);
 * when its own phase just changed from another, *prev_phase (else -1) and *prev_done, *prev_total get
 * the last phase's final sums, to be shown first.  Other processes: their own figures back. */
void h5shuf_allprogress_report(struct h5shuf_allprogress *a, int phase, uint64_t done, uint64_t total, uint64_t *gdone,
                               uint64_t *gtotal, int *prev_phase, uint64_t *prev_done, uint64_t *prev_total);

/* The run ended well on every process: each other process says so, and process 0 waits (polling for
 * failure notices, at most 30 s) until all have, so that no report is left in flight.  Process 0:
 * *phase (-1: none), *gdone and *gtotal get its last phase's final sums. */
void h5shuf_allprogress_end(struct h5shuf_allprogress *a, int *phase, uint64_t *gdone, uint64_t *gtotal);

#endif /* H5SHUF_MPI_ALLPROGRESS_H */
