/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keyparts.h - the permutation keys of many rows at once, computed in parts by the pool's threads
 * (keyparts.c).  A Philox4x64-10 key (keys.c) is a few dozen multiplications: for rows of 16 bytes the
 * keys of both passes were a fifth of a run when the job's thread made them all.
 */
#ifndef H5SHUF_KEYPARTS_H
#define H5SHUF_KEYPARTS_H

#include "pool.h"
#include "sort.h"

struct h5shuf_strata; /* strata.h */

/* For r < n, with id = ids[r] (or first + r when ids is NULL): keys[r] = K(seed, id) when keys is not
 * NULL, and pairs[r] = (K(seed, id), r) when pairs is not NULL; K stratified by strata when it is not
 * NULL (strata.h h5shuf__order_keys).  Parts of at least 65536 rows, one a
 * thread of pool (NULL, or one part: on the calling thread); returns when all are done.  Cannot fail. */
H5SHUF_INTERNAL void h5shuf__keys_in_parts(struct h5shuf_pool *pool, uint64_t seed, const struct h5shuf_strata *strata,
                                           const uint64_t *ids, uint64_t first,
                                           uint64_t n, uint64_t *keys, struct h5shuf_keyidx *pairs);

#endif /* H5SHUF_KEYPARTS_H */
