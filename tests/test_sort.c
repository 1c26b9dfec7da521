/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sort.c - the sort of pass 2 against qsort on (key, idx), with ties, shared top bits, gaps in the
 * bits that differ, skewed buckets and piles' key ranges: the MSD pass, its recursion and the leaves.
 */
#include <stdlib.h>
#include <string.h>

#include "sort.h"
#include "tu_core.h"

static int cmp(const void *a, const void *b)
{
    const struct h5shuf_keyidx *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sort a[0..n) (freed here) and compare with qsort of the same records by (key, idx). */
static void sort_and_compare(struct h5shuf_keyidx *a, size_t n)
{
    struct h5shuf_keyidx *b = malloc((n + 1) * sizeof *b), *tmp = malloc((n + 1) * sizeof *tmp);
    memcpy(b, a, n * sizeof *a);
    h5shuf__sort_keyidx(a, tmp, n);
    qsort(b, n, sizeof *b, cmp); /* idx increasing on ties = what a stable sort keeps */
    ASSERT_EQ_MEM(a, b, n * sizeof *a); /* n == 0: equal, whatever the pointers */
    free(a);
    free(b);
    free(tmp);
}

static void check(size_t n, uint64_t mask, uint64_t fixed, uint64_t seed)
{
    struct h5shuf_keyidx *a = malloc((n + 1) * sizeof *a);
    for (size_t i = 0; i < n; i++) {
        a[i].key = (tu_splitmix64(&seed) & mask) | fixed;
        a[i].idx = i;
    }
    sort_and_compare(a, n);
}

static void test_sizes(void)
{
    size_t sizes[] = {0, 1, 2, 3, 255, 256, 257, 1000, 65536, 100001};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        check(sizes[i], ~0ULL, 0, i);
}

static void test_ties(void)
{
    check(10000, 0xf, 0, 1);                /* 16 distinct keys: many ties, must keep idx order */
    check(10000, 0, 0x1234, 2);             /* all equal */
}

static void test_shared_top_bytes(void)
{
    /* a pile's keys share their top bits: those passes are skipped, the result must not change */
    check(50000, 0x0000ffffffffffffULL, 0xabcd000000000000ULL, 3);
    check(50000, 0x00000000000000ffULL, 0x7700000000000000ULL, 4);
}

/* Keys of the form (hi << 48) | lo with lo in [0, 2^k): several MSD passes, constant digits between them,
 * buckets far above the in-cache size sorted by recursion, leaves of heavy ties. */
static void test_gaps_and_skew(void)
{
    check(200000, 0xf0000000000000ffULL, 0, 5);          /* 16 x 256 keys: buckets of ~50 ties each */
    check(200000, 0xc000000000000000ULL, 0x12345, 6);    /* 4 keys, 50000 ties each */
    check(300000, 0x8000000000ffffffULL, 0, 7);          /* two halves, each sorted by a deeper pass */
}

/* Half of the records share one key, the others are spread: one bucket holds half of them. */
static void test_one_heavy_key(void)
{
    const size_t n = 100000;
    struct h5shuf_keyidx *a = malloc(n * sizeof *a);
    uint64_t seed = 8;
    for (size_t i = 0; i < n; i++) {
        a[i].key = i % 2 ? UINT64_C(0x8000000000000000) : tu_splitmix64(&seed);
        a[i].idx = i;
    }
    sort_and_compare(a, n);
}

/* Keys uniform in a pile's range [lo, lo + width) of a width that is not a power of two, at sizes around
 * the in-cache bucket (sort.c's SORT_LEAF: 4096; 16384 before) and its multiples. */
static void test_pile_ranges(void)
{
    const size_t sizes[] = {33, 4096, 4097, 3 * 4096 + 1, 16384, 16385, 3 * 16384 + 1, 1 << 20};
    uint64_t seed = 9;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const size_t n = sizes[s];
        const uint64_t lo = UINT64_C(0x3a00000000000000) + 12345, width = UINT64_C(0x0107000000000000) / 3;
        struct h5shuf_keyidx *a = malloc(n * sizeof *a);
        for (size_t i = 0; i < n; i++) {
            a[i].key = lo + tu_splitmix64(&seed) % width;
            a[i].idx = i;
        }
        sort_and_compare(a, n);
    }
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"radix sort equals qsort for many sizes", test_sizes},
        {"ties keep index order (stable)", test_ties},
        {"constant bytes skipped correctly", test_shared_top_bytes},
        {"gaps between differing bits, deep passes, heavy ties", test_gaps_and_skew},
        {"one key held by half of the records", test_one_heavy_key},
        {"keys of a pile's range around the in-cache bucket size", test_pile_ranges},
        {NULL, NULL},
    };
    return tu_run("sort", tests);
}
