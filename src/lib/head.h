/*
 * head.h - the first rows of the output order from the keys alone: the W smallest (key, i) (and the W
 * largest) in one stream over the row ids, kept in binary heaps (head.c).  --head and the mixing report
 * use it; no data is read.
 */
#ifndef H5SHUF_HEAD_H
#define H5SHUF_HEAD_H

#include "sort.h"

/* A head of out_rows < rows rows: find job->head_bound, the out_rows-th smallest (key, id), with a heap
 * of out_rows pairs (16 bytes each, within the budget, else H5SHUF_EBUDGET).  Keys only, no data read. */
H5SHUF_INTERNAL int h5shuf__head_bound(h5shuf_job *job);

/* In one stream over ids 0 .. job->rows-1 (those with (key, id) <= *bound when bound is not NULL): the w
 * smallest pairs (key, id) into small[0..w) and, when large is not NULL, the w largest into large[0..w),
 * each in heap order. */
H5SHUF_INTERNAL void h5shuf__select_pairs(const h5shuf_job *job, struct h5shuf_keyidx *small,
                                          struct h5shuf_keyidx *large, uint64_t w, const struct h5shuf_keyidx *bound);

#endif /* H5SHUF_HEAD_H */
