/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * head.c - the first (and last) rows of the output order, from the keys alone.
 *
 * Output row r is the row of rank r in the order of (key, i), so the first W output rows are the W
 * smallest (key, i) and the last W the W largest (among the output's rows, when a head limits them).
 * One stream over the N row ids keeps the W smallest and the W largest pairs in two binary heaps
 * (O(N log W) time, 16 bytes a kept pair); no data is read.  --head keeps the rows up to the N-th
 * smallest pair; the mixing report (mixing.c) counts the inputs of both windows.  The stream reports
 * progress (H5SHUF_PHASE_SELECT) every H5SHUF_SCAN_STEP_ROWS rows: N may be 2^40 and more (a file that
 * only declares its rows), and a cancel must be seen within a fraction of a second.
 */
#include <stdlib.h>

#include "error.h"
#include "fault.h"
#include "head.h"
#include "keys.h"
#include "strata.h"

static int pair_less(struct h5shuf_keyidx a, struct h5shuf_keyidx b)
{
    return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

/* Heap order: the root is the worst pair kept (the largest when keeping the smallest). */
static int heap_above(struct h5shuf_keyidx a, struct h5shuf_keyidx b, int largest)
{
    return largest ? pair_less(a, b) : pair_less(b, a);
}

static void sift_down(struct h5shuf_keyidx *h, size_t n, size_t i, int largest)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < n && heap_above(h[l], h[top], largest))
            top = l;
        if (r < n && heap_above(h[r], h[top], largest))
            top = r;
        if (top == i)
            return;
        struct h5shuf_keyidx t = h[i];
        h[i] = h[top];
        h[top] = t;
        i = top;
    }
}

static void sift_up(struct h5shuf_keyidx *h, size_t i, int largest)
{
    while (i > 0 && heap_above(h[i], h[(i - 1) / 2], largest)) {
        struct h5shuf_keyidx t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void heap_offer(struct h5shuf_keyidx *heap, size_t *n, uint64_t w, struct h5shuf_keyidx p, int largest)
{
    if (*n < w) {
        heap[*n] = p;
        sift_up(heap, (*n)++, largest);
    } else if (w > 0 && heap_above(heap[0], p, largest)) {
        heap[0] = p;
        sift_down(heap, *n, 0, largest);
    }
}

int h5shuf__select_pairs(uint64_t seed, const struct h5shuf_strata *strata, uint64_t rows, struct h5shuf_keyidx *small, struct h5shuf_keyidx *large,
                         uint64_t w, const struct h5shuf_keyidx *bound, const struct h5shuf_progress *progress,
                         struct h5shuf_err *err)
{
    size_t ns = 0, nl = 0;
    uint64_t keys[1024];
    int st = H5SHUF_OK;
    /* Steps of H5SHUF_SCAN_STEP_ROWS rows between reports (a cancel is seen within one), keys in blocks. */
    for (uint64_t step = 0; step < rows && w > 0 && st == H5SHUF_OK; step += H5SHUF_SCAN_STEP_ROWS) {
        const uint64_t step_end = rows - step < H5SHUF_SCAN_STEP_ROWS ? rows : step + H5SHUF_SCAN_STEP_ROWS;
        for (uint64_t first = step; first < step_end; first += 1024) {
            const uint64_t n = step_end - first < 1024 ? step_end - first : 1024;
            h5shuf__order_keys(seed, strata, NULL, first, n, keys);
            for (uint64_t r = 0; r < n; r++) {
                struct h5shuf_keyidx p = {keys[r], first + r};
                if (bound && pair_less(*bound, p))
                    continue;
                heap_offer(small, &ns, w, p, 0);
                if (large)
                    heap_offer(large, &nl, w, p, 1);
            }
        }
        st = h5shuf__progress(progress, err, H5SHUF_PHASE_SELECT, step_end, rows);
    }
    return st;
}

int h5shuf__head_bound(uint64_t seed, uint64_t rows, uint64_t n, uint64_t mem_limit_bytes, struct h5shuf_keyidx *bound,
                       const struct h5shuf_progress *progress, struct h5shuf_err *err)
{
    if (n == 0)
        return H5SHUF_OK; /* nothing is written: no bound needed */
    if (n > mem_limit_bytes / sizeof(struct h5shuf_keyidx))
        return h5shuf__fail(err, H5SHUF_EBUDGET,
                            "--head %llu: selecting the rows takes %llu bytes of keys, more than the memory budget",
                            (unsigned long long)n, (unsigned long long)(n * sizeof(struct h5shuf_keyidx)));
    struct h5shuf_keyidx *heap = malloc(n * sizeof *heap);
    if (!heap)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory selecting the first %llu rows", (unsigned long long)n);
    int st = h5shuf__select_pairs(seed, NULL, rows, heap, NULL, n, NULL, progress, err);
    if (st == H5SHUF_OK)
        *bound = heap[0]; /* the root of the max-heap: the n-th smallest */
    free(heap);
    return st;
}
