/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keyparts.c - the keys of many rows computed in parts by the pool's threads (keyparts.h).  The parts are
 * queued like chunk tasks, and the caller, waiting for them, runs queued tasks itself (pool.c); the keys
 * are the contract's (keys.c), whichever thread computes them.
 */
#include "keyparts.h"
#include "keys.h"
#include "strata.h"

#define PARTS_MAX 16
#define PART_ROWS_MIN 65536
#define BLOCK_ROWS 256 /* keys made at a time when only the pairs are wanted: 2 KiB of stack */

struct key_part {
    struct h5shuf_task task; /* first: the pool hands back this pointer */
    const uint64_t *ids;
    uint64_t first, seed, lo, hi;
    const struct h5shuf_strata *strata;
    uint64_t *keys;
    struct h5shuf_keyidx *pairs;
};

static void key_part_run(struct h5shuf_task *task, unsigned thread)
{
    (void)thread;
    const struct key_part *k = (const struct key_part *)task;
    uint64_t block[BLOCK_ROWS];
    for (uint64_t r = k->lo; r < k->hi; r += BLOCK_ROWS) {
        uint64_t n = k->hi - r < BLOCK_ROWS ? k->hi - r : BLOCK_ROWS;
        uint64_t *keys = k->keys ? k->keys + r : block;
        h5shuf__order_keys(k->seed, k->strata, k->ids ? k->ids + r : NULL, k->first + r, n, keys);
        if (k->pairs)
            for (uint64_t i = 0; i < n; i++) {
                k->pairs[r + i].key = keys[i];
                k->pairs[r + i].idx = r + i;
            }
    }
}

void h5shuf__keys_in_parts(struct h5shuf_pool *pool, uint64_t seed, const struct h5shuf_strata *strata, const uint64_t *ids, uint64_t first, uint64_t n,
                           uint64_t *keys, struct h5shuf_keyidx *pairs)
{
    uint64_t parts = h5shuf__pool_threads(pool);
    if (parts > PARTS_MAX)
        parts = PARTS_MAX;
    if (parts > n / PART_ROWS_MIN)
        parts = n / PART_ROWS_MIN ? n / PART_ROWS_MIN : 1;
    struct key_part k[PARTS_MAX];
    for (uint64_t p = 0; p < parts; p++) {
        k[p] = (struct key_part){.ids = ids, .first = first, .seed = seed, .strata = strata, .lo = n * p / parts,
                                 .hi = n * (p + 1) / parts, .keys = keys, .pairs = pairs};
        k[p].task.run = key_part_run;
    }
    if (parts == 1) { /* no thread to wake for one part (a slab of one small input: 64 rows) */
        key_part_run(&k[0].task, 0);
        return;
    }
    for (uint64_t p = 0; p < parts; p++)
        h5shuf__pool_submit(pool, &k[p].task);
    for (uint64_t p = 0; p < parts; p++)
        h5shuf__pool_wait(pool, &k[p].task);
}
