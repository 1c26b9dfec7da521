/*
 * sort.c - the in-memory sort of pass 2.
 *
 * A pile's keys are uniform over its key range, so a least-significant-digit radix sort (Knuth, TAOCP
 * vol. 3, 5.2.5) is linear and branch-free.  Bytes that are the same in every key (the top bits a pile
 * shares) are detected from the histograms and their passes skipped.  LSD radix sort is stable, which is
 * what breaks key ties by row id as the contract asks.
 */
#include <string.h>

#include "sort.h"

void h5shuf__sort_keyidx(struct h5shuf_keyidx *a, struct h5shuf_keyidx *tmp, size_t n)
{
    if (n < 2)
        return;
    static const size_t nbytes = sizeof(uint64_t);
    size_t hist[sizeof(uint64_t)][256];
    memset(hist, 0, sizeof hist);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = a[i].key;
        for (size_t b = 0; b < nbytes; b++)
            hist[b][(k >> (8 * b)) & 0xff]++;
    }
    struct h5shuf_keyidx *src = a, *dst = tmp;
    for (size_t b = 0; b < nbytes; b++) {
        size_t *h = hist[b];
        if (h[(src[0].key >> (8 * b)) & 0xff] == n)
            continue; /* this byte is constant: the pass would not move anything */
        size_t sum = 0;
        for (size_t v = 0; v < 256; v++) {
            size_t c = h[v];
            h[v] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[h[(src[i].key >> (8 * b)) & 0xff]++] = src[i];
        struct h5shuf_keyidx *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}
