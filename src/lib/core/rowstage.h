/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rowstage.h - software write-combining of rows scattered to many piles (rowstage.c).  No HDF5.
 *
 * Pass 1 appends each row to one of m piles at random: a row of 16 bytes written straight into its
 * pile's buffer touches a cache line that 130 other streams have evicted, and costs a read of the line
 * from memory before the write, the most of pass 1's time for small rows.  A stage keeps each pile's
 * last few rows in a small cache-resident buffer and writes them to the pile's buffer together, in whole
 * lines, with stores that bypass the cache, in a third of that time (measured: docs/benchmark.md, section
 * "Issue 28: small rows").  The technique is the
 * "software write-combining" of radix sorts (Wassenberg and Sanders, "Engineering a multi-core radix
 * sort", Euro-Par 2011; Intel's Optimization Reference Manual, "Write Combining").
 */
#ifndef H5SHUF_ROWSTAGE_H
#define H5SHUF_ROWSTAGE_H

#include "base.h"

/* Bytes of stage one pile may have (all its parts), and of all piles' stages together (the L2 cache of
 * the machines measured is 2 MiB; the stages stay a small, fixed part of any budget). */
#define H5SHUF_ROWSTAGE_PILE_BYTES 1024
#define H5SHUF_ROWSTAGE_MAX_BYTES ((size_t)1 << 20)

/* The stages of m piles, for rows in nparts parts (a part per shuffled dataset, then the row's id) of
 * part_bytes[p] bytes.  Pile k's part p is at mem + k * pile_bytes + off[p], per rows long. */
struct h5shuf_rowstage {
    unsigned char *mem;  /* NULL: rows are not staged */
    uint32_t *n;         /* rows staged per pile */
    size_t nparts, per, pile_bytes;
    size_t *off, *part_bytes;
};

/* Prepare the stages of m piles for rows of parts part_bytes[0 .. nparts).  Rows are not staged (st->mem
 * stays NULL, and that is not a failure) when fewer than 2 of them fit a pile's stage or the stages of m
 * piles would pass H5SHUF_ROWSTAGE_MAX_BYTES.  Returns 0, or -1 when out of memory.  Free with
 * h5shuf__rowstage_free (also after a failure). */
H5SHUF_INTERNAL int h5shuf__rowstage_init(struct h5shuf_rowstage *st, uint64_t m, size_t nparts, const size_t *part_bytes);
H5SHUF_INTERNAL void h5shuf__rowstage_free(struct h5shuf_rowstage *st);

/* Stage row r of pile k: its part p at base[p] + r * part_bytes[p] for p < nparts - 1, and its id (the
 * last part, 8 bytes).  Returns the rows now staged for pile k (at most st->per: the caller drains at its
 * limit). */
static inline uint32_t h5shuf__rowstage_put(struct h5shuf_rowstage *st, uint64_t k, const unsigned char *const *base,
                                            uint64_t r, uint64_t id)
{
    const uint32_t i = st->n[k];
    unsigned char *at = st->mem + k * st->pile_bytes;
    const size_t last = st->nparts - 1;
    for (size_t p = 0; p < last; p++)
        h5shuf__row_copy(at + st->off[p] + i * st->part_bytes[p], base[p] + r * st->part_bytes[p], st->part_bytes[p]);
    memcpy(at + st->off[last] + i * sizeof id, &id, sizeof id);
    return st->n[k] = i + 1;
}

/* Move pile k's staged rows to the end of its buffers: part p to dst[p] + at * part_bytes[p].  The
 * stores may bypass the cache: call h5shuf__rowstage_fence before another thread reads dst. */
H5SHUF_INTERNAL void h5shuf__rowstage_drain(struct h5shuf_rowstage *st, uint64_t k, unsigned char *const *dst, uint64_t at);
/* Order the drains' stores before what follows (a buffer handed to another thread, or read by HDF5). */
H5SHUF_INTERNAL void h5shuf__rowstage_fence(void);

#endif /* H5SHUF_ROWSTAGE_H */
