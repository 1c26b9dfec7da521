/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mixing.c - the chi-square upper tail of the mixing report against closed forms and table values.
 *
 * Closed forms: df = 1, P(X >= x) = erfc(sqrt(x / 2)); df = 2k (even), exp(-x/2) * sum_{j<k} (x/2)^j / j!.
 * Table values (NIST/SEMATECH e-Handbook, "Critical values of the chi-square distribution"): the upper
 * 5% point of df 7 is 14.067, of df 15 is 24.996, the upper 1% point of df 3 is 11.345.
 */
#include <math.h>

#include "mixing.h"
#include "testutil.h"

static double even_tail(double x, unsigned df)
{
    double h = x / 2, term = 1, sum = 0;
    for (unsigned j = 0; j < df / 2; j++) {
        sum += term;
        term *= h / (j + 1);
    }
    return exp(-h) * sum;
}

static void test_closed_forms(void)
{
    const double xs[] = {0.01, 0.5, 1, 2.5, 7, 15, 40, 120};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
        double x = xs[i];
        ASSERT_NEAR_DBL(h5shuf__chi2_upper(x, 1), erfc(sqrt(x / 2)), 1e-12 + 1e-9 * erfc(sqrt(x / 2)));
        for (unsigned df = 2; df <= 20; df += 2)
            ASSERT_NEAR_DBL(h5shuf__chi2_upper(x, df), even_tail(x, df), 1e-12 + 1e-9 * even_tail(x, df));
    }
}

static void test_table(void)
{
    ASSERT_NEAR_DBL(h5shuf__chi2_upper(14.067, 7), 0.05, 2e-5);
    ASSERT_NEAR_DBL(h5shuf__chi2_upper(24.996, 15), 0.05, 2e-5);
    ASSERT_NEAR_DBL(h5shuf__chi2_upper(11.345, 3), 0.01, 2e-5);
}

static void test_edges(void)
{
    ASSERT_EQ_DBL(h5shuf__chi2_upper(5, 0), 1.0); /* one input: nothing to compare */
    ASSERT_EQ_DBL(h5shuf__chi2_upper(0, 7), 1.0);
    ASSERT_LT_DBL(h5shuf__chi2_upper(1e4, 7), 1e-300); /* or 0 */
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"chi-square tail equals closed forms (df 1, even df)", test_closed_forms},
        {"chi-square tail at table critical values (df 3, 7, 15)", test_table},
        {"df 0, x 0 and far tails", test_edges},
        {NULL, NULL},
    };
    return tu_main("mixing", tests);
}
