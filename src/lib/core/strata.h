/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * strata.h - the stratified order of --stratify (strata.c; docs/algorithm.md, "Stratified mixtures").
 * No HDF5.
 *
 * The output is cut into S strata, consecutive ranges of rows [E_s, E_{s+1}) (the output files: shards or
 * splits), and the rows into D groups (the --mix domains, else the inputs as given).  A stratified order
 * gives every stratum exactly c[t][s] rows of group t, where c[t][s] is floor or ceil of its share
 * x = n_t L_s / R (n_t the group's rows, L_s the stratum's, R all rows), every group's counts summing to
 * n_t and every stratum's to L_s.  Such a rounding always exists (the table's constraint matrix is totally
 * unimodular; Cox, "A constructive procedure for unbiased controlled rounding", JASA 1987): the counts
 * are found by a greedy pass over the strata and, when it leaves a group short, augmenting paths
 * (h5shuf__strata_make).  So each group's share of every stratum is within one row of its target.
 *
 * Which rows of group t go to stratum s: row j of the group (its rows numbered over its inputs in global
 * order) is sent to the stratum holding position P_t(j) of the group's cumulative counts, P_t a
 * permutation of 0 .. n_t-1.  A group of at most H5SHUF_STRATA_TABLE_MAX rows is shuffled by Fisher and
 * Yates (a table of 4 bytes a row, deviates from Philox4x64-10 (keys.h) with counter (i / 4, t, 3, 0) and
 * key (seed, 0)): exactly uniform.  A larger group uses a pseudorandom permutation, computed per row with
 * no table: a Feistel network of 8 rounds on the fewest bits that hold n_t (13 or more: halves of 6 bits
 * or more), walked until it lands below n_t (cycle walking; Black and Rogaway, "Ciphers with arbitrary
 * finite domains", CT-RSA 2002), whose round r function is word 0 of Philox4x64-10 with counter
 * (half, t, 2, r) and key (seed, 0).  (Feistel networks on halves of 2 or 3 bits are measurably biased:
 * a row of a 12-row group landed in its stratum 0.4% too often over 2 million seeds; none was seen from
 * 8-bit halves up, which is why small groups take the table.)  Counters whose third word is 2 or 3 meet
 * neither the permutation's keys (i, 0, 0, 0) nor the weights' samples (., ., 1, 0).  Within a stratum the rows keep the contract's
 * order: row i's key K = K(seed, i) becomes B_s + floor(K (B_{s+1} - B_s) / 2^64), with
 * B_s = floor(E_s 2^64 / R), and the output is the rows sorted by (that key, i), as always.  Every
 * stage that orders rows (pass 1's piles, pass 2's sort, the direct path, verify) uses the stratified
 * key when the job has strata, so the output bytes stay the same for any budget, strategy and ranks.
 */
#ifndef H5SHUF_STRATA_H
#define H5SHUF_STRATA_H

#include <stddef.h>

#include "base.h"
#include "keys.h"

/* Feistel rounds of the permutation of a group's rows (above). */
#define H5SHUF_STRATA_ROUNDS 8
/* Groups of at most this many rows are permuted by a table (4 bytes a row), larger ones by Feistel. */
#define H5SHUF_STRATA_TABLE_MAX 4096
/* Cells D x (S + 1) of the counts table, at most (8 bytes each). */
#define H5SHUF_STRATA_CELLS_MAX ((uint64_t)1 << 24)

/* Strata of an output order.  Owns every array. */
struct h5shuf_strata {
    uint64_t seed;
    uint64_t rows;        /* R: the rows of all entries */
    uint64_t nstrata;     /* S >= 1 */
    h5shuf_u128 *bound;   /* S + 1 keys: bound[s] = B_s (bound[S] = 2^64) */
    size_t ngroups;       /* D */
    uint64_t *cum;        /* D x (S + 1): cum[t (S + 1) + s] = rows of group t in strata before s */
    uint64_t *group_rows; /* n_t */
    unsigned *bits;       /* the width of group t's Feistel network */
    size_t nentries;      /* the row ranges of the inputs' entries, in global order: */
    uint64_t *first;      /* nentries + 1 global ids: entry e holds rows [first[e], first[e + 1]) */
    uint64_t *offset;     /* the group row of entry e's first row */
    size_t *group;        /* entry e's group */
    uint32_t **table;     /* D: group t's permutation when it has at most H5SHUF_STRATA_TABLE_MAX rows, else NULL */
    uint64_t repairs;     /* augmenting paths the rounding needed (for tests) */
};

/* Make the strata for seed: nentries entries, entry e of rows[e] rows in group group[e] (< ngroups), in
 * global order; nstrata strata, stratum s ending at output row ends[s] (increasing; ends[nstrata - 1] = the
 * rows of all entries).  Returns 0; -1 when out of memory; -2 when D x (S + 1) exceeds
 * H5SHUF_STRATA_CELLS_MAX.  *st is then empty.  Free with h5shuf__strata_free. */
H5SHUF_INTERNAL int h5shuf__strata_make(struct h5shuf_strata *st, uint64_t seed, size_t nentries, const uint64_t *rows,
                                        const size_t *group, size_t ngroups, uint64_t nstrata, const uint64_t *ends);
/* The rounding behind h5shuf__strata_make, for D groups and S strata: sets take[t S + s] = 1 (take all 0
 * on entry) for the groups that get the ceiling of their share of stratum s, so that group t gets need[t]
 * ceilings and stratum s gives ceil[s], only where rem[t S + s] != 0 (its share is not whole).  need is
 * used up (all 0 on return).  greedy: each stratum gives its ceilings to the groups that need them most
 * for the strata left, then augmenting paths repair what that left short; 0 (for tests): to the first
 * groups, all repaired by paths.  repairs counts the paths.  Returns 0, -1 when out of memory, -3 when
 * no rounding exists (never, when the margins are those of a table of shares: total unimodularity). */
H5SHUF_INTERNAL int h5shuf__strata_round(size_t D, uint64_t S, const h5shuf_u128 *rem, int64_t *need,
                                         const uint64_t *ceil, unsigned char *take, int greedy, uint64_t *repairs);
/* Free (NULL or empty: nothing). */
H5SHUF_INTERNAL void h5shuf__strata_free(struct h5shuf_strata *st);

/* Turn keys[r] = K(seed, id) into row id's stratified key for r < n, id = ids[r], or first + r when ids is
 * NULL (ids < st->rows).  st NULL: nothing.  Cannot fail. */
H5SHUF_INTERNAL void h5shuf__strata_keys(const struct h5shuf_strata *st, const uint64_t *ids, uint64_t first, uint64_t n,
                                         uint64_t *keys);
/* The stratum row id goes to (id < st->rows). */
H5SHUF_INTERNAL uint64_t h5shuf__strata_of(const struct h5shuf_strata *st, uint64_t id);
/* Rows of group t in stratum s: c[t][s]. */
static inline uint64_t h5shuf__strata_count(const struct h5shuf_strata *st, size_t t, uint64_t s)
{
    const uint64_t *c = st->cum + t * (st->nstrata + 1);
    return c[s + 1] - c[s];
}

/* keys[r] = the output order's key of row id (id = ids[r], or first + r when ids is NULL), r < n: K(seed, id)
 * (h5shuf__keys), made stratified when st is not NULL (h5shuf__strata_keys). */
static inline void h5shuf__order_keys(uint64_t seed, const struct h5shuf_strata *st, const uint64_t *ids, uint64_t first,
                                      uint64_t n, uint64_t *keys)
{
    h5shuf__keys(seed, ids, first, n, keys);
    h5shuf__strata_keys(st, ids, first, n, keys);
}

#endif /* H5SHUF_STRATA_H */
