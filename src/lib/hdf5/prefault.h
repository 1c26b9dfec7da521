/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefault.h - memory mapped ahead by a pool thread (prefault.c; issue 52): the one pass's pile of every
 * row is about a GiB that the kernel maps page by page at its first touch (280 000 faults for 1 GiB of
 * rows with labels: a quarter of the run's samples), all of it on the job's thread while the pool's
 * threads have nothing to decode (rows without filters).  Mapped ahead on a pool thread, half of those
 * faults overlap the job's reads, and the key/index arrays' all of them.
 */
#ifndef H5SHUF_PREFAULT_H
#define H5SHUF_PREFAULT_H

#include <stddef.h>

#include "base.h"
#include "pool.h"

/* Parts of memory to map, at most H5SHUF_PREFAULT_PARTS. */
#define H5SHUF_PREFAULT_PARTS 16
struct h5shuf_prefault {
    struct h5shuf_task task; /* first: the pool hands back this pointer */
    size_t n;
    struct {
        unsigned char *p;
        size_t len;
    } part[H5SHUF_PREFAULT_PARTS];
    size_t mapped; /* bytes the kernel mapped (madvise MADV_POPULATE_WRITE, Linux 5.14): for tests */
};

/* Add [p, p + len) (a part past the first H5SHUF_PREFAULT_PARTS is left out), before the start. */
H5SHUF_INTERNAL void h5shuf__prefault_add(struct h5shuf_prefault *pf, void *p, size_t len);
/* Queue the mapping of the parts' whole pages on pool (a pool without workers: nothing is done, the
 * caller's own touches map them).  The contents never change: the caller may write the memory meanwhile.
 * Wait with h5shuf__pool_wait(pool, &pf->task) before freeing it. */
H5SHUF_INTERNAL void h5shuf__prefault_start(struct h5shuf_pool *pool, struct h5shuf_prefault *pf);

#endif /* H5SHUF_PREFAULT_H */
