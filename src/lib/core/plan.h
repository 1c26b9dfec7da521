/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plan.h - how many piles, how large, and the buffers of both passes, from N, the row size and the
 * memory budget (plan.c; docs/design.md section 3).  No HDF5.
 */
#ifndef H5SHUF_PLAN_H
#define H5SHUF_PLAN_H

#include "error.h"

/* Bytes per row that pass 2 needs besides the row itself: id (8), key/index pair (16), radix tmp (16). */
#define H5SHUF_PASS2_ROW_OVERHEAD 40u
/* Bytes per row of the pipelined pass 2 for sorting the next pile while this one's rows are written: a
 * third key/index array (the next pile's records and radix scratch take the two this pile does not use). */
#define H5SHUF_PASS2_SORT_AHEAD_BYTES 16u
/* Bytes per row that pass 1's pile buffers need besides the row itself: the id. */
#define H5SHUF_PASS1_ROW_OVERHEAD 8u
/* Bytes each pile costs in pass 1 besides its buffered rows (writer, buffer pointers, malloc headers,
 * its record in the pile list), per pile plus per dataset; an upper bound, measured with malloc_usable_size. */
#define H5SHUF_PILE_OVERHEAD 160u
#define H5SHUF_PILE_OVERHEAD_PER_DATASET 24u
/* Fixed buffers outside the per-row arithmetic: the output band of each dataset (at most this many
 * bytes, or one chunk band if larger), counted inside the budget. */
#define H5SHUF_BAND_BYTES_MAX (4u << 20)
/* Rows per chunk of the --index dataset (1 MiB of uint64). */
#define H5SHUF_INDEX_CHUNK_ROWS (UINT64_C(1) << 17)
/* Pass 1 reads slabs of at most this many bytes (tens of MiB, as docs/design.md section 3 asks). */
#define H5SHUF_SLAB_BYTES_MAX (32u << 20)
/* Spare pile buffer sets per thread in pass 1 (asynchronous flushes; none with one thread). */
#define H5SHUF_SPARE_PILE_BUFFERS 2u
/* Scratch chunks (one pile buffer flush) hold at most this many bytes (all datasets of a row together). */
#define H5SHUF_PILE_CHUNK_BYTES_MAX (1u << 20)
/* Pass 2's piles take at most this much memory (rows, ids, pairs, payload; both piles when pipelined), when
 * pass 1 can still give every pile buffer a whole scratch chunk (plan.c): a larger pile sorts and writes
 * no faster, and each of its bytes is fresh memory once more, taken from the page cache that holds the
 * scratch file.  Against the plan without it, runs of large and small rows were faster and their peak
 * RSS much smaller, the output bytes the same (measured: docs/benchmark.md, section "Issue 28: pass 2's
 * piles in at most 256 MiB"). */
#define H5SHUF_PASS2_BYTES_MAX (256u << 20)

/* Inputs of the planner. */
struct h5shuf_plan_in {
    uint64_t rows;            /* N */
    uint64_t row_bytes;       /* sum of the datasets' row sizes */
    uint64_t ndatasets;
    uint64_t mem_limit_bytes;
    uint64_t band_bytes;      /* the output writer's buffers (all datasets) */
    uint64_t slab_align_rows; /* pass 1 slabs are a multiple of this (the first input's chunk rows) */
    uint64_t debug_pile_bound_rows;
    unsigned threads;         /* chunk codec threads (h5shuf_plan.threads) */
    int no_pipeline;          /* nonzero: never overlap the passes (variable-length rows: HDF5 reads them on
                               * one thread, so a second slab or pile would only cost memory) */
    int ranks;                /* processes of a distributed run (0 or 1: one).  With more, pass 2 also holds
                               * the part of a pile being sent and one received, about 1/ranks of a pile each
                               * (src/mpi/dist.c): without the overlap's second pile to stand for them, a
                               * pile then gets half of pass 2's budget, what 2 ranks need (1 + 2/2), at
                               * every number of ranks, so that a process's memory does not grow with
                               * ranks (issue 51; ranks/(ranks + 2) would use the rest at large ranks) */
    uint64_t pile_rows;       /* rows that go into piles when fewer than rows (a head); 0: rows */
    uint64_t mem_row_bytes;   /* vlen rows only (else 0): a row's bytes in memory without its payload */
    double row_var;           /* vlen rows only: variance of a row's payload bytes */
    /* Per dataset (ndatasets entries, or NULL for none): the inputs' largest chunk rows (0 for a dataset
     * pass 1 reads through HDF5 alone, a vlen one) and its row bytes, for the slab's chunk cache. */
    const uint64_t *chunk_rows;
    const uint64_t *ds_row_bytes;
};

/* Nonzero when pass 1 keeps the decoded chunk rows of a dataset of chunk_rows rows a chunk beside slabs of
 * slab_rows: its chunks do not tile the slabs, so a chunk row would be decoded once for every slab it
 * meets (h5py's default chunks of thousands of rows, a label dataset's of 65536). */
static inline int h5shuf__plan_slab_cached(uint64_t chunk_rows, uint64_t slab_rows)
{
    return chunk_rows > 1 && slab_rows % chunk_rows != 0;
}

/* The largest s with s + 6*sqrt(s) <= bound: floor((sqrt(bound + 9) - 3)^2), at least 0. */
H5SHUF_INTERNAL uint64_t h5shuf__pile_target_for_bound(uint64_t bound);

/* The oversize bound of a pile of target s rows: s + ceil(6*sqrt(s)). */
H5SHUF_INTERNAL uint64_t h5shuf__pile_bound_for_target(uint64_t s);

/* Make the plan (fields of h5shuf_plan other than seed/restarts/splits).  Returns H5SHUF_OK or
 * H5SHUF_EBUDGET with a message saying the smallest budget that works. */
H5SHUF_INTERNAL int h5shuf__plan_make(const struct h5shuf_plan_in *in, h5shuf_plan *plan, struct h5shuf_err *err);
/* The piles h5shuf__plan_make would plan for in without H5SHUF_PASS2_BYTES_MAX, pass 2 taking its whole
 * budget (more piles in the plan than this: the cap made them smaller, for the speed of their sort).
 * Only for an in whose plan was made (1 for a budget of no more than the band, or no rows). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_piles_uncapped(const struct h5shuf_plan_in *in);

/* Bytes one pile costs in pass 1 besides its rows (H5SHUF_PILE_OVERHEAD...). */
H5SHUF_INTERNAL uint64_t h5shuf__pile_overhead(uint64_t ndatasets);

/* Nonzero when the plan overlaps I/O with work (more than one thread): two slabs in pass 1, two piles in
 * pass 2, and the stored chunks of the one being read (docs/design.md section 4). */
H5SHUF_INTERNAL int h5shuf__plan_pipelined(const h5shuf_plan *plan);
/* Bytes a pile row costs in pass 2, sequential or pipelined (see plan.c). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_pass2_row_bytes(uint64_t row_bytes, int pipelined);
/* The direct path (direct.c, docs/design.md section 3): rows read in output order straight from the inputs,
 * no scratch.  It holds the rows of the small datasets whole ("held"), a ring of slots rows of the
 * others read one at a time (slots - 1 read ahead, decoded by the pool while the current row is
 * written), the writer's bands, and the sorted (key, id) pairs of one window of the output order: a
 * key range scanned over all N ids.  More windows mean more scans of the N keys, never a different
 * output. */
struct h5shuf_direct_in {
    uint64_t rows;             /* N: ids scanned for each window */
    uint64_t out_rows;         /* rows of the output order (N, or a head's) */
    uint64_t read_row_bytes;   /* bytes of one row of the datasets read row by row (plan_row_bytes) */
    uint64_t held_bytes;       /* bytes of the held datasets, all N rows */
    uint64_t band_bytes;       /* the writer's buffers */
    uint64_t mem_limit_bytes;
    unsigned threads;          /* codec threads: up to this many rows in flight */
};
struct h5shuf_direct_plan {
    uint64_t windows;          /* key ranges of equal width (a range over its cap is halved at run time) */
    uint64_t window_rows;      /* pairs a window may hold: s + 6*sqrt(s) for s = out_rows / windows */
    uint64_t slots;            /* rows held for reading: the one being written and slots - 1 ahead */
    uint64_t mem_bytes;        /* held + bands + slots rows + 2 * window_rows pairs (sort scratch) */
    uint64_t min_bytes;        /* the smallest budget that works: one slot, pairs for the most windows */
};
/* At most this many windows (scans of the N keys), so a run costs at most this many key passes. */
#define H5SHUF_DIRECT_WINDOWS_MAX 64u
/* Bytes a window's pair costs: the (key, id) pair and its radix sort scratch. */
#define H5SHUF_DIRECT_PAIR_BYTES 32u
/* Plan the direct path: H5SHUF_OK, or H5SHUF_EBUDGET naming its smallest budget (out->min_bytes is set
 * either way). */
H5SHUF_INTERNAL int h5shuf__plan_direct(const struct h5shuf_direct_in *in, struct h5shuf_direct_plan *out,
                                        struct h5shuf_err *err);

/* Bytes of pass 1's slab buffers under the plan (all copies when pipelined, each with its rows' keys),
 * and its chunk cache. */
H5SHUF_INTERNAL uint64_t h5shuf__plan_slab_bytes(const h5shuf_plan *plan);

/* Spare pile buffer sets of pass 1 under the plan (H5SHUF_SPARE_PILE_BUFFERS per thread, none with one). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_spare_buffers(const h5shuf_plan *plan);

/* Bytes of pass 1's m piles under the plan: buffers (h5shuf__plan_pile_buffer_rows), spare buffers
 * with their encoded chunks, and overhead. */
H5SHUF_INTERNAL uint64_t h5shuf__plan_pass1_pile_bytes(const h5shuf_plan *plan, uint64_t m);

/* Pile buffer rows of pass 1 for m piles under the plan's budget (at least 1). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_pile_buffer_rows(const h5shuf_plan *plan, uint64_t m);

#endif /* H5SHUF_PLAN_H */
