/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uniform.c - the shuffle is uniform, measured on the tool's output (through piles and recursion),
 * not just on the keys.
 *
 * Significance: each test compares a chi-square statistic with its critical value at alpha = 0.001.
 * The seeds are fixed (0, 1, 2, ...), so the outcome is deterministic; a correct shuffle fails a given
 * test for one seed set in a thousand, a biased one (e.g. a pile order or tie rule that favours low
 * ids) fails it every time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Upper alpha = 0.001 critical value of chi-square with df degrees of freedom, by the Wilson-Hilferty
 * approximation (accurate to about 0.5% for df >= 20); z = 3.0902 is the normal 0.999 quantile. */
static double chi2_crit_001(double df)
{
    double z = 3.090232, a = 2.0 / (9.0 * df);
    double c = 1.0 - a + z * sqrt(a);
    return df * c * c * c;
}

/* Shuffle a file of n int32 row ids with seed; returns the output ids (malloc'ed). */
static int32_t *shuffle_ids(const char *in, const char *out, uint64_t seed, uint64_t bound)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = seed;
    o.seed_set = 1;
    o.force = 1;
    char ispec[4200];
    snprintf(ispec, sizeof ispec, "%s:/i", in);
    const char *inputs[] = {ispec};
    if (tu_shuffle_bound(inputs, 1, out, &o, bound, NULL, 0) != H5SHUF_OK) /* sub-piles: uniformity must survive them */
        return NULL;
    uint64_t rows, rb;
    return tu_read(out, "/i", &rows, &rb);
}

static char *write_ids(const char *dir, uint64_t n)
{
    int32_t *ids = malloc(n * sizeof *ids);
    for (uint64_t i = 0; i < n; i++)
        ids[i] = (int32_t)i;
    hsize_t dims[] = {n};
    struct tu_layout lay = {H5D_CONTIGUOUS, 0, 0, 0, 0};
    char *path = strdup(tu_path(dir, "ids.h5"));
    tu_write(path, 1, "/i", H5T_STD_I32LE, 1, dims, &lay, ids);
    free(ids);
    return path;
}

/* N = 4: all 24 permutations, 2400 seeds (100 expected each), df = 23, critical value 49.73. */
static void test_all_permutations_of_4(void)
{
    enum { SEEDS = 2400 };
    char *dir = tu_mkdtemp();
    char *in = write_ids(dir, 4);
    const char *out = tu_path(dir, "out.h5");
    double count[24] = {0};
    for (uint64_t s = 0; s < SEEDS; s++) {
        int32_t *p = shuffle_ids(in, out, s, 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        /* Lehmer code of the permutation: its rank in 0..23 */
        int rank = 0, used[4] = {0};
        const int fact[4] = {6, 2, 1, 1};
        int valid = 1;
        for (int k = 0; k < 4; k++) {
            if (p[k] < 0 || p[k] > 3 || used[p[k]]) {
                valid = 0;
                break;
            }
            int smaller = 0;
            for (int j = 0; j < p[k]; j++)
                smaller += !used[j];
            used[p[k]] = 1;
            rank += smaller * fact[k];
        }
        CU_ASSERT_FATAL(valid);
        count[rank] += 1;
        free(p);
    }
    double chi = 0, e = SEEDS / 24.0;
    int seen = 0;
    for (int r = 0; r < 24; r++) {
        chi += (count[r] - e) * (count[r] - e) / e;
        seen += count[r] > 0;
    }
    printf("\n  N=4: %d of 24 permutations seen, chi-square %.2f (df 23, critical 49.73 at alpha 0.001)\n", seen, chi);
    ASSERT_EQ_INT(seen, 24);
    ASSERT_LT_DBL(chi, 49.73);
    free(in);
    tu_rmtree(dir);
    free(dir);
}

/* N = 40: the position of every row is uniform: a 40 x 40 table of (row, position) counts over 1600
 * seeds, 40 expected per cell; df = 39 * 39. */
static void test_positions_uniform(void)
{
    enum { N = 40, SEEDS = 1600 };
    char *dir = tu_mkdtemp();
    char *in = write_ids(dir, N);
    const char *out = tu_path(dir, "out.h5");
    static double count[N][N];
    memset(count, 0, sizeof count);
    for (uint64_t s = 0; s < SEEDS; s++) {
        int32_t *p = shuffle_ids(in, out, 1000000 + s, 8);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        for (int pos = 0; pos < N; pos++) {
            ASSERT_GE_INT_FATAL(p[pos], 0);
            ASSERT_LT_INT_FATAL(p[pos], N);
            count[p[pos]][pos] += 1;
        }
        free(p);
    }
    double chi = 0, e = (double)SEEDS / N;
    for (int r = 0; r < N; r++)
        for (int pos = 0; pos < N; pos++)
            chi += (count[r][pos] - e) * (count[r][pos] - e) / e;
    double df = (N - 1) * (N - 1), crit = chi2_crit_001(df);
    printf("\n  N=%d positions: chi-square %.1f (df %.0f, critical %.1f at alpha 0.001)\n", N, chi, df, crit);
    ASSERT_LT_DBL(chi, crit);
    /* And every row, the first included, lands in every position at least once.  Under a uniform shuffle a
     * cell's count is Binomial(1600, 1/40), zero with probability (39/40)^1600 = e^-40.5 = 2.6e-18; over
     * the 1600 cells at most 4.1e-15 (union bound), so a correct shuffle never fails this, while a bug that
     * keeps a row out of one position (say, the first row never first) fails it every time, though it moves
     * the chi-square above by only about 40, well within its critical value. */
    int empty = 0;
    for (int r = 0; r < N; r++)
        for (int pos = 0; pos < N; pos++)
            if (count[r][pos] == 0) {
                if (empty++ < 5)
                    printf("  row %d never landed in position %d\n", r, pos);
            }
    ASSERT_EQ_INT(empty, 0);
    free(in);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"all 24 permutations of 4 rows, uniform", test_all_permutations_of_4},
        {"position of each row uniform (N = 40)", test_positions_uniform},
        {NULL, NULL},
    };
    return tu_main("uniform", tests);
}
