/*
 * test_sort.c - the radix sort of pass 2 against qsort on (key, idx), with ties and shared top bytes.
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

static void check(size_t n, uint64_t mask, uint64_t fixed, uint64_t seed)
{
    struct h5shuf_keyidx *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b),
                         *tmp = malloc((n + 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++) {
        a[i].key = (tu_splitmix64(&seed) & mask) | fixed;
        a[i].idx = i;
    }
    memcpy(b, a, n * sizeof *a);
    h5shuf__sort_keyidx(a, tmp, n);
    qsort(b, n, sizeof *b, cmp); /* idx increasing on ties = what a stable sort keeps */
    CU_ASSERT(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
    free(a);
    free(b);
    free(tmp);
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

int main(void)
{
    static const struct tu_test tests[] = {
        {"radix sort equals qsort for many sizes", test_sizes},
        {"ties keep index order (stable)", test_ties},
        {"constant bytes skipped correctly", test_shared_top_bytes},
        {NULL, NULL},
    };
    return tu_run("sort", tests);
}
