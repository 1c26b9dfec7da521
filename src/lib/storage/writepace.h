/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writepace.h - what a file's writes cost the thread that makes them (writepace.c; issue 52): the time it
 * spends waiting in them, beyond its own CPU time and its wait for a CPU, and that waiting with the CPU
 * time they take, each as a share of the time that passes.  Pass 1 compresses a scratch chunk when its
 * writes wait (a disk slower than the compressor is the limit, and compressing halves what it must write)
 * or when they take much of the thread's time even without waiting: the kernel's copy of a chunk into a
 * page cache that must first reclaim room for it (a scratch larger than the cache) cost 2 s of system CPU
 * a GB on these VMs, on the thread that scatters, while the pool that compresses sat a third idle (20 GiB
 * of gzip-4 rows at -m 4G: 55-68% of the scattering thread's time in its writes; pass 1 took 92.7 s with
 * every chunk of rows stored as it is, 60.9 s with every one compressed).  Otherwise the chunk is stored
 * as it is.
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
    double spent;            /* waits and the writes' CPU time, decayed the same way */
    double delayed;          /* the writes' waits for a CPU, decayed the same way */
    uint64_t writes, waits;  /* calls measured, and those that waited (for tests and measurements) */
    int fd;                  /* 1 + the thread's /proc/thread-self/schedstat, opened by the first begin */
    uint64_t asked;          /* h5shuf__writepace_compress's calls */
};

/* The decay of the recent past, seconds. */
#define H5SHUF_WRITEPACE_TAU 2.0
/* The share of the recent time spent waiting in writes above which the disk is the limit. */
#define H5SHUF_WRITEPACE_WAITING 0.05
/* The share of the recent time spent in writes, waiting or on the CPU, above which they hold the thread
 * back (measured: 55-68% for a scratch larger than the page cache, docs/benchmark.md "Larger than
 * memory"; tests/test_writepace.c checks the line). */
#define H5SHUF_WRITEPACE_COSTLY 0.40

/* Around the writes of the calling thread (always the same one for p): begin, the writes, end. */
H5SHUF_INTERNAL void h5shuf__writepace_begin(struct h5shuf_writepace *p);
H5SHUF_INTERNAL void h5shuf__writepace_end(struct h5shuf_writepace *p);
/* Close what begin opened (p is zero again). */
H5SHUF_INTERNAL void h5shuf__writepace_free(struct h5shuf_writepace *p);
/* Do the recent writes wait for the disk (their share of waiting above H5SHUF_WRITEPACE_WAITING)? */
H5SHUF_INTERNAL int h5shuf__writepace_waiting(const struct h5shuf_writepace *p);
/* Do they take the thread's time, waiting or not (their share above H5SHUF_WRITEPACE_COSTLY of the time
 * that passes, less the writes' waits for a CPU: on a busy machine the thread's own time is shorter)? */
H5SHUF_INTERNAL int h5shuf__writepace_costly(const struct h5shuf_writepace *p);
/* Should the next chunk be compressed: do the recent writes wait, or take the thread's time?  Tests
 * decide instead with H5SHUF_DEBUG_WRITES_WAIT: "1" yes, "0" no, "alternate" no and yes in turn. */
H5SHUF_INTERNAL int h5shuf__writepace_compress(struct h5shuf_writepace *p);
/* The same from what a measurement found: a write of wall seconds that took cpu seconds of the thread's
 * CPU and waited delay seconds for a CPU, ending at monotonic time now (tests give their own). */
H5SHUF_INTERNAL void h5shuf__writepace_add(struct h5shuf_writepace *p, double now, double wall, double cpu, double delay);

#endif /* H5SHUF_WRITEPACE_H */
