/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writepace.h - whether the disk holds a file's writes back (writepace.c; issue 52): the time a thread
 * spends waiting in its writes, beyond its own CPU time and its wait for a CPU, as a share of the time
 * that passes.  Pass 1 compresses a scratch chunk only when its writes wait: a disk slower than the
 * compressor is the limit, and compressing halves what it must write; otherwise the CPU is (a gzip input,
 * a fast disk) and the chunk is stored as it is.
 */
#ifndef H5SHUF_WRITEPACE_H
#define H5SHUF_WRITEPACE_H

#include <stdint.h>

#include "base.h"

/* The recent writes of one thread.  Zero it before use. */
struct h5shuf_writepace {
    double t0, cpu0, delay0; /* at h5shuf__writepace_begin: monotonic, thread CPU, run-queue wait (s) */
    double last;             /* monotonic time of the last update (s); 0 before the first */
    double waited, window;   /* waits and time, each decayed by exp(-dt / H5SHUF_WRITEPACE_TAU) */
    uint64_t writes, waits;  /* calls measured, and those that waited (for tests and measurements) */
    int fd;                  /* 1 + the thread's /proc/thread-self/schedstat, opened by the first begin */
    uint64_t asked;          /* h5shuf__writepace_waiting's calls */
};

/* The decay of the recent past, seconds. */
#define H5SHUF_WRITEPACE_TAU 2.0
/* The share of the recent time spent waiting in writes above which the disk is the limit. */
#define H5SHUF_WRITEPACE_WAITING 0.05

/* Around the writes of the calling thread (always the same one for p): begin, the writes, end. */
H5SHUF_INTERNAL void h5shuf__writepace_begin(struct h5shuf_writepace *p);
H5SHUF_INTERNAL void h5shuf__writepace_end(struct h5shuf_writepace *p);
/* Close what begin opened (p is zero again). */
H5SHUF_INTERNAL void h5shuf__writepace_free(struct h5shuf_writepace *p);
/* Do the recent writes wait for the disk (their share of waiting above H5SHUF_WRITEPACE_WAITING)?  Tests
 * decide instead with H5SHUF_DEBUG_WRITES_WAIT: "1" yes, "0" no, "alternate" no and yes in turn. */
H5SHUF_INTERNAL int h5shuf__writepace_waiting(struct h5shuf_writepace *p);
/* The same from what a measurement found: a write of wall seconds that took cpu seconds of the thread's
 * CPU and waited delay seconds for a CPU, ending at monotonic time now (tests give their own). */
H5SHUF_INTERNAL void h5shuf__writepace_add(struct h5shuf_writepace *p, double now, double wall, double cpu, double delay);

#endif /* H5SHUF_WRITEPACE_H */
