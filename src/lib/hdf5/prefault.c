/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefault.c - memory mapped ahead by a pool thread (prefault.h).
 *
 * MADV_POPULATE_WRITE maps pages as a write fault would, without writing them: the caller may fill the
 * same pages at the same time (a read of rows into them), which a touch by store could not allow.  On a
 * kernel without it the call fails and nothing is mapped ahead.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prefault.h"

/* Map this many bytes a call: a part is mapped from its end, so that the caller, filling it from its start,
 * meets the mapped pages half way. */
#define STEP ((size_t)8 << 20)

static void run(struct h5shuf_task *task, unsigned thread)
{
    (void)thread;
    struct h5shuf_prefault *pf = (struct h5shuf_prefault *)task;
#ifdef MADV_POPULATE_WRITE
    const long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; page > 0 && i < pf->n; i++) {
        const uintptr_t lo = ((uintptr_t)pf->part[i].p + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
        const uintptr_t hi = ((uintptr_t)pf->part[i].p + pf->part[i].len) / (uintptr_t)page * (uintptr_t)page;
        for (uintptr_t end = hi; end > lo;) {
            const uintptr_t start = end - lo > STEP ? end - STEP : lo;
            if (madvise((void *)start, end - start, MADV_POPULATE_WRITE) != 0)
                return; /* (not on this kernel, or memory short: the caller's touches map the rest) */
            pf->mapped += end - start;
            end = start;
        }
    }
#else
    (void)pf;
#endif
}

void h5shuf__prefault_add(struct h5shuf_prefault *pf, void *p, size_t len)
{
    if (pf->n < H5SHUF_PREFAULT_PARTS && p && len)
        pf->part[pf->n++] = (typeof(pf->part[0])){p, len};
}

void h5shuf__prefault_start(struct h5shuf_pool *pool, struct h5shuf_prefault *pf)
{
    if (!pool || h5shuf__pool_threads(pool) < 2 || pf->n == 0)
        return;
    pf->task.run = run;
    h5shuf__pool_submit(pool, &pf->task);
}
