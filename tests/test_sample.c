/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sample.c - the exact sample of a weighted input's fractional part (sample.c): its size rounded
 * half up exactly, exactly e rows drawn for every (n, e), rank and select against a plain count, the
 * stream and seed changing the draw, and uniformity: over many seeds every row, and every pair of rows,
 * is drawn equally often (chi-square tests, each at significance 0.001, against the counts that a
 * uniform choice of e rows of n gives; p from mixing.c's h5shuf__chi2_upper, which test_mixing checks
 * against published values).
 */
#include <stdlib.h>
#include <string.h>

#include "mixing.h"
#include "sample.h"
#include "testutil.h"

static void test_size(void)
{
    ASSERT_EQ_INT(h5shuf__sample_size(1000, 25, 100), 250);
    ASSERT_EQ_INT(h5shuf__sample_size(3, 5, 10), 2);      /* 1.5 rounds up */
    ASSERT_EQ_INT(h5shuf__sample_size(5, 1, 10), 1);      /* 0.5 rounds up */
    ASSERT_EQ_INT(h5shuf__sample_size(5, 9, 100), 0);     /* 0.45 */
    ASSERT_EQ_INT(h5shuf__sample_size(7, 1, 3), 2);       /* 2.33 */
    ASSERT_EQ_INT(h5shuf__sample_size(0, 1, 2), 0);
    /* 2^63 rows at 0.999999999999999999: no overflow, 128-bit exact */
    const uint64_t n = UINT64_C(1) << 63, den = UINT64_C(1000000000000000000);
    ASSERT_EQ_INT(h5shuf__sample_size(n, den - 1, den), n - 9); /* n - n/10^18 = n - 9.22 -> n - 9 */
}

/* Draw e of n and check its count, and rank and select against counting the bitmap row by row. */
static void check_draw(uint64_t n, uint64_t e, uint64_t seed, uint64_t stream)
{
    struct h5shuf_sample s;
    ASSERT_EQ_INT_FATAL(h5shuf__sample_make(&s, seed, stream, n, e), 0);
    uint64_t c = 0, bad = 0;
    for (uint64_t t = 0; t < n; t++) {
        bad += h5shuf__sample_rank(&s, t) != c;
        if (h5shuf__sample_has(&s, t)) {
            bad += h5shuf__sample_select(&s, c) != t;
            c++;
        }
    }
    bad += h5shuf__sample_rank(&s, n) != c;
    ASSERT_EQ_INT(c, e);
    ASSERT_EQ_INT(bad, 0);
    h5shuf__sample_free(&s);
}

static void test_exact_counts(void)
{
    const uint64_t ns[] = {0, 1, 2, 63, 64, 65, 511, 512, 513, 1000, 4097, 100003};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        const uint64_t n = ns[i];
        const uint64_t es[] = {0, n > 0, n / 3, n / 2, n > 0 ? n - 1 : 0, n};
        for (size_t j = 0; j < sizeof es / sizeof *es; j++)
            check_draw(n, es[j], 1000 + i, j);
    }
}

static void test_seed_and_stream(void)
{
    struct h5shuf_sample a, b, c, d;
    ASSERT_EQ_INT_FATAL(h5shuf__sample_make(&a, 5, 0, 4096, 1024), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__sample_make(&b, 5, 0, 4096, 1024), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__sample_make(&c, 6, 0, 4096, 1024), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__sample_make(&d, 5, 1, 4096, 1024), 0);
    ASSERT_EQ_MEM(a.bits, b.bits, 4096 / 8);
    ASSERT_NE_MEM(a.bits, c.bits, 4096 / 8);
    ASSERT_NE_MEM(a.bits, d.bits, 4096 / 8);
    h5shuf__sample_free(&a);
    h5shuf__sample_free(&b);
    h5shuf__sample_free(&c);
    h5shuf__sample_free(&d);
}

/* e = 5 rows of n = 20 over 20000 seeds: each row is drawn 20000 e / n = 5000 times in expectation
 * (df 19), and each of the 190 pairs 20000 C(18, 3) / C(20, 5) = 1052.6 times (df 189, the pairs' counts
 * summing to 20000 C(5, 2)). */
static void test_uniform(void)
{
    enum { N = 20, E = 5, SEEDS = 20000 };
    static uint64_t one[N], two[N][N];
    memset(one, 0, sizeof one);
    memset(two, 0, sizeof two);
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        struct h5shuf_sample s;
        ASSERT_EQ_INT_FATAL(h5shuf__sample_make(&s, seed * 0x9E3779B97F4A7C15u, 3, N, E), 0);
        for (int i = 0; i < N; i++) {
            if (!h5shuf__sample_has(&s, (uint64_t)i))
                continue;
            one[i]++;
            for (int j = i + 1; j < N; j++)
                two[i][j] += (uint64_t)h5shuf__sample_has(&s, (uint64_t)j);
        }
        h5shuf__sample_free(&s);
    }
    double chi1 = 0, chi2 = 0;
    const double e1 = (double)SEEDS * E / N, e2 = (double)SEEDS * (E * (E - 1.0)) / (N * (N - 1.0));
    for (int i = 0; i < N; i++) {
        chi1 += ((double)one[i] - e1) * ((double)one[i] - e1) / e1;
        for (int j = i + 1; j < N; j++)
            chi2 += ((double)two[i][j] - e2) * ((double)two[i][j] - e2) / e2;
    }
    double p1 = h5shuf__chi2_upper(chi1, N - 1), p2 = h5shuf__chi2_upper(chi2, N * (N - 1) / 2 - 1);
    printf("\n  rows: chi-square %.1f (df %d), p %.3f; pairs: chi-square %.1f (df %d), p %.3f\n", chi1, N - 1, p1, chi2,
           N * (N - 1) / 2 - 1, p2);
    ASSERT_GT_DBL(p1, 0.001);
    ASSERT_GT_DBL(p2, 0.001);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"sample size: round(f x n) half up, exactly", test_size},
        {"exactly e rows for every (n, e); rank and select", test_exact_counts},
        {"the seed and the stream change the draw", test_seed_and_stream},
        {"uniform: each row and each pair equally often (chi-square, 0.001)", test_uniform},
        {NULL, NULL},
    };
    return tu_run("sample", tests);
}
