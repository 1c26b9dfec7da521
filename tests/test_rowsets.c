/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rowsets.c - whole-file mode without dimension scales: which length of dim 0 holds the rows, and
 * the one-line refusal when the file leaves it in doubt (rowsets.c).
 */
#include <stdio.h>
#include <string.h>

#include "rowsets.h"
#include "tu_core.h"

#define N(a) (sizeof(a) / sizeof *(a))

/* The outcome for v[0..n): its status, *rows when chosen, the message in msg. */
static int choose(const struct h5shuf_rowcand *v, size_t n, uint64_t *rows, char *msg, size_t cap)
{
    struct h5shuf_err e = {0};
    *rows = UINT64_MAX;
    int st = h5shuf__rows_by_length(v, n, "f.h5", rows, &e);
    snprintf(msg, cap, "%s", e.msg);
    if (st != H5SHUF_OK && strchr(msg, '\n'))
        CU_FAIL("a refusal of more than one line");
    return st;
}

#define EXPECT_ROWS(v, want)                                                                                           \
    do {                                                                                                               \
        uint64_t r_;                                                                                                   \
        char m_[H5SHUF_ERRMSG_MAX];                                                                                    \
        int st_ = choose(v, N(v), &r_, m_, sizeof m_);                                                                 \
        if (st_ != H5SHUF_OK || r_ != (want))                                                                          \
            printf("\n  %s: status %d, rows %llu, want %llu: %s\n", #v, st_, (unsigned long long)r_,                   \
                   (unsigned long long)(want), m_);                                                                    \
        ASSERT_EQ_INT(st_, H5SHUF_OK);                                                                                 \
        ASSERT_EQ_INT(r_, (want));                                                                                     \
    } while (0)

/* A refusal whose message holds each of the NULL-ended needles. */
static void expect_refused(const char *what, const struct h5shuf_rowcand *v, size_t n, const char *const *needles)
{
    uint64_t r;
    char m[H5SHUF_ERRMSG_MAX];
    int st = choose(v, n, &r, m, sizeof m);
    if (st != H5SHUF_EAMBIGUOUS)
        printf("\n  %s: status %d, rows %llu, want a refusal\n", what, st, (unsigned long long)r);
    ASSERT_EQ_INT(st, H5SHUF_EAMBIGUOUS);
    for (const char *const *p = needles; *p; p++) {
        if (!strstr(m, *p))
            printf("\n  %s: message lacks \"%s\": %s\n", what, *p, m);
        CU_ASSERT_PTR_NOT_NULL(strstr(m, *p));
    }
}

/* train_catvnoncat.h5, test_signs.h5: one length held by two datasets, the class list of its own. */
static void test_clear_choice(void)
{
    const struct h5shuf_rowcand cat[] = {
        {"/list_classes", 2, 14}, {"/train_set_x", 209, 209 * 12288}, {"/train_set_y", 209, 209 * 8}};
    EXPECT_ROWS(cat, 209);
    const struct h5shuf_rowcand signs[] = {
        {"/list_classes", 6, 48}, {"/test_set_x", 120, 120 * 12288}, {"/test_set_y", 120, 960}};
    EXPECT_ROWS(signs, 120);
    /* one dataset alone; one dataset of 2 rows or more beside lengths 0 and 1 */
    const struct h5shuf_rowcand one[] = {{"/x", 10, 80}};
    EXPECT_ROWS(one, 10);
    const struct h5shuf_rowcand lone[] = {{"/x", 10, 80}, {"/version", 1, 8}, {"/empty", 0, 0}};
    EXPECT_ROWS(lone, 10);
    /* lengths 0 and 1 are no candidates, however many datasets hold them */
    const struct h5shuf_rowcand meta1[] = {{"/X", 1000, 32000}, {"/a", 1, 8}, {"/b", 1, 8}, {"/c", 1, 8},
                                           {"/y", 1000, 8000},  {"/e", 0, 0}, {"/f", 0, 0}};
    EXPECT_ROWS(meta1, 1000);
    /* several lengths, only one held by several datasets, and those hold most bytes */
    const struct h5shuf_rowcand mixed[] = {{"/X", 500, 4000}, {"/y", 500, 500}, {"/mean", 4, 32}, {"/bins", 17, 136}};
    EXPECT_ROWS(mixed, 500);
    /* no length of 2 rows or more: the one most datasets share */
    const struct h5shuf_rowcand small[] = {{"/a", 1, 8}, {"/b", 1, 8}, {"/c", 0, 0}};
    EXPECT_ROWS(small, 1);
}

/* issue 50's files: two lengths each held by several datasets. */
static void test_two_sets(void)
{
    const struct h5shuf_rowcand meta[] = {{"/X", 1000, 32000}, {"/class_counts", 10, 80}, {"/class_names", 10, 20},
                                          {"/class_weights", 10, 80}, {"/y", 1000, 8000}};
    const char *want_meta[] = {"f.h5: cannot tell which datasets hold the rows",
                               "f.h5:/X,/y (1000 rows, 39.1 KiB), "
                               "f.h5:/class_counts,/class_names,/class_weights (10 rows, 180 bytes)",
                               "give one of them as the input", NULL};
    expect_refused("meta.h5", meta, N(meta), want_meta);
    const struct h5shuf_rowcand tt[] = {{"/test/X", 200, 6400}, {"/test/y", 200, 1600}, {"/train/X", 1000, 32000},
                                        {"/train/y", 1000, 8000}};
    const char *want_tt[] = {"f.h5:/train/X,/train/y (1000 rows, 39.1 KiB), f.h5:/test/X,/test/y (200 rows, 7.8 KiB);",
                             NULL};
    expect_refused("train/test", tt, N(tt), want_tt);
    /* two lengths of one dataset each, no shared one: the old tie */
    const struct h5shuf_rowcand amb[] = {{"/a", 10, 80}, {"/b", 20, 160}};
    const char *want_amb[] = {"f.h5:/b (20 rows, 160 bytes), f.h5:/a (10 rows, 80 bytes)", NULL};
    expect_refused("two singletons", amb, N(amb), want_amb);
    /* lengths 0 and 1 tied */
    const struct h5shuf_rowcand tie01[] = {{"/a", 1, 8}, {"/b", 0, 0}};
    const char *want_tie01[] = {"f.h5:/a (1 row, 8 bytes), f.h5:/b (0 rows, 0 bytes)", NULL};
    expect_refused("lengths 0 and 1 tied", tie01, N(tie01), want_tie01);
}

/* The chosen datasets must hold at least half of the bytes: exactly half runs, a byte less is refused. */
static void test_half_of_the_bytes(void)
{
    const struct h5shuf_rowcand half[] = {{"/a", 100, 100}, {"/b", 100, 100}, {"/big", 8, 200}};
    EXPECT_ROWS(half, 100);
    const struct h5shuf_rowcand less[] = {{"/a", 100, 100}, {"/b", 100, 100}, {"/big", 3, 201}};
    const char *want_less[] = {"(the 100-row datasets hold 200 bytes of the 401 bytes of all datasets)",
                               "f.h5:/big (3 rows, 201 bytes), f.h5:/a,/b (100 rows, 200 bytes)", NULL};
    expect_refused("a byte less than half", less, N(less), want_less);
    /* /X alone beside three class tables: the tables share a length but hold little */
    const struct h5shuf_rowcand xonly[] = {{"/X", 1000, 32000}, {"/c1", 10, 80}, {"/c2", 10, 80}, {"/c3", 10, 20}};
    const char *want_x[] = {"f.h5:/X (1000 rows, 31.2 KiB), f.h5:/c1,/c2,/c3 (10 rows, 180 bytes)", NULL};
    expect_refused("/X beside class tables", xonly, N(xonly), want_x);
    /* the only dataset of 2 rows or more, beside a larger one-row dataset */
    const struct h5shuf_rowcand lone[] = {{"/x", 10, 80}, {"/image", 1, 1 << 20}};
    const char *want_lone[] = {"(the 10-row dataset holds 80 bytes of the 1.0 MiB of all datasets)", NULL};
    expect_refused("a lone candidate holding little", lone, N(lone), want_lone);
    /* bytes saturate at 2^64 - 1 without wrapping: a chosen set that saturates holds "half" of a saturated total */
    const struct h5shuf_rowcand huge[] = {{"/a", 5, UINT64_MAX}, {"/b", 5, UINT64_MAX}, {"/c", 7, 1000}};
    EXPECT_ROWS(huge, 5);
    const struct h5shuf_rowcand huge2[] = {{"/a", 5, 10}, {"/b", 5, 10}, {"/c", 7, UINT64_MAX}, {"/d", 9, UINT64_MAX}};
    const char *want_huge2[] = {"16.0 EiB", NULL};
    expect_refused("saturated bytes", huge2, N(huge2), want_huge2);
}

/* More than six candidate sets: the six largest, then how many more. */
static void test_many_sets(void)
{
    struct h5shuf_rowcand v[20];
    char names[20][8];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "/d%d", i);
        v[i] = (struct h5shuf_rowcand){names[i], (uint64_t)(i + 2), (uint64_t)(i + 2) * 8};
    }
    const char *want[] = {"f.h5:/d19 (21 rows, 168 bytes), f.h5:/d18 (20 rows, 160 bytes)",
                          "f.h5:/d14 (16 rows, 128 bytes) and 14 more", NULL};
    expect_refused("twenty singletons", v, N(v), want);
    const char *none[] = {"/d13 ", NULL};
    uint64_t r;
    char m[H5SHUF_ERRMSG_MAX];
    choose(v, N(v), &r, m, sizeof m);
    CU_ASSERT_PTR_NULL(strstr(m, none[0]));
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"a clear choice", test_clear_choice},
        {"two candidate sets refused", test_two_sets},
        {"at least half of the bytes", test_half_of_the_bytes},
        {"many candidate sets", test_many_sets},
        {NULL, NULL},
    };
    return tu_run("rowsets", tests);
}
