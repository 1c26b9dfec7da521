/*
 * head.c - the first (and last) rows of the output order, from the keys alone.
 *
 * Output row r is the row of rank r in the order of (key, i), so the first W output rows are the W
 * smallest (key, i) and the last W the W largest (among the output's rows, when a head limits them).
 * One stream over the N row ids keeps the W smallest and the W largest pairs in two binary heaps
 * (O(N log W) time, 16 bytes a kept pair); no data is read.  --head keeps the rows up to the N-th
 * smallest pair; the mixing report (mixing.c) counts the inputs of both windows.
 */
#include <stdlib.h>

#include "error.h"
#include "fault.h"
#include "head.h"

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

void h5shuf__select_pairs(uint64_t seed, uint64_t rows, struct h5shuf_keyidx *small, struct h5shuf_keyidx *large,
                          uint64_t w, const struct h5shuf_keyidx *bound)
{
    size_t ns = 0, nl = 0;
    for (uint64_t i = 0; i < rows && w > 0; i++) {
        struct h5shuf_keyidx p = {h5shuf_key(seed, i), i};
        if (bound && pair_less(*bound, p))
            continue;
        heap_offer(small, &ns, w, p, 0);
        if (large)
            heap_offer(large, &nl, w, p, 1);
    }
}

int h5shuf__head_bound(uint64_t seed, uint64_t rows, uint64_t n, uint64_t mem_limit_bytes, struct h5shuf_keyidx *bound,
                       struct h5shuf_err *err)
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
    h5shuf__select_pairs(seed, rows, heap, NULL, n, NULL);
    *bound = heap[0]; /* the root of the max-heap: the n-th smallest */
    free(heap);
    return H5SHUF_OK;
}
