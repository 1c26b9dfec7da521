/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.h - a small pool of worker threads for chunk compression and decompression (pool.c).
 */
#ifndef H5SHUF_POOL_H
#define H5SHUF_POOL_H

#include "base.h"

/* A unit of work for the pool: run(task, thread) computes only (no HDF5 call, nothing on HDF5's error
 * stack); it may allocate what belongs to its thread alone (chunkio's stage buffers: fault points too,
 * fault.c's counter is atomic), and reports a failure in the task.  thread is 0 for the submitting thread,
 * 1..n-1 for workers, and runs one task at a time.  Embed it first in a larger struct. */
enum { H5SHUF_TASK_IDLE = 0, H5SHUF_TASK_QUEUED, H5SHUF_TASK_RUNNING, H5SHUF_TASK_DONE };
struct h5shuf_task {
    void (*run)(struct h5shuf_task *task, unsigned thread);
    struct h5shuf_task *next;
    int state;     /* H5SHUF_TASK_*: read and written under the pool's lock once submitted */
    int submitted; /* set by h5shuf__pool_submit; the submitter's own: it clears it when it has used the result */
};
struct h5shuf_pool;

/* A pool of nthreads threads counting the submitter (nthreads - 1 workers; 0 or 1: none, tasks run at
 * submission).  Returns H5SHUF_OK or H5SHUF_ENOMEM; fewer workers than asked when the system refuses
 * threads.  Free with h5shuf__pool_free (accepts NULL), which joins the workers. */
H5SHUF_INTERNAL int h5shuf__pool_create(unsigned nthreads, struct h5shuf_pool **out);
H5SHUF_INTERNAL void h5shuf__pool_free(struct h5shuf_pool *p);
/* The threads a run uses for asked (h5shuf_options.threads): asked, or the online CPUs when 0. */
H5SHUF_INTERNAL unsigned h5shuf__pool_threads_for(unsigned asked);
/* Threads that run tasks, the submitter included (1 for NULL). */
H5SHUF_INTERNAL unsigned h5shuf__pool_threads(const struct h5shuf_pool *p);
/* Queue task (FIFO); with no workers it runs now.  The task must stay alive until waited for. */
H5SHUF_INTERNAL void h5shuf__pool_submit(struct h5shuf_pool *p, struct h5shuf_task *task);
/* Return when task has run, running queued tasks meanwhile.  An idle task returns at once. */
H5SHUF_INTERNAL void h5shuf__pool_wait(struct h5shuf_pool *p, struct h5shuf_task *task);

#endif /* H5SHUF_POOL_H */
