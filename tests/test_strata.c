/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_strata.c - the stratified order (strata.c): the counts table rounded under both margins (every
 * count the floor or ceiling of its share, each group's summing to its rows, each stratum's to its rows)
 * on many random tables; every row sent to a stratum so that the counts hold exactly (which also shows
 * each group's Feistel walk is a permutation); the stratified keys inside their stratum's key range and
 * in the order of the contract's keys; and uniformity: over many seeds each row lands in each stratum as
 * often as an exactly uniform assignment with those counts would put it, and two rows share a stratum
 * as often (chi-square and a binomial z-test, each at significance 0.001; p from mixing.c's
 * h5shuf__chi2_upper, which test_mixing checks against published values).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mixing.h"
#include "strata.h"
#include "testutil.h"

static uint64_t rng_state = 0x243F6A8885A308D3u;
static uint64_t rnd(uint64_t n) /* splitmix64, an independent generator for the test's instances */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return n ? z % n : z;
}

/* Check st's table against its margins and the floor/ceil rule. */
static int table_ok(const struct h5shuf_strata *st, const uint64_t *ends)
{
    int bad = 0;
    for (uint64_t s = 0; s < st->nstrata; s++) {
        const uint64_t L = ends[s] - (s ? ends[s - 1] : 0);
        uint64_t col = 0;
        for (size_t t = 0; t < st->ngroups; t++) {
            const uint64_t c = h5shuf__strata_count(st, t, s);
            const h5shuf_u128 x = (h5shuf_u128)st->group_rows[t] * L; /* the share is x / R */
            const h5shuf_u128 lo = st->rows ? x / st->rows : 0, hi = st->rows ? (x + st->rows - 1) / st->rows : 0;
            bad |= c < lo || c > hi;
            col += c;
        }
        bad |= col != L;
    }
    for (size_t t = 0; t < st->ngroups; t++)
        bad |= st->cum[t * (st->nstrata + 1) + st->nstrata] != st->group_rows[t];
    return !bad;
}

/* A random instance: D groups over E entries (some empty, groups interleaved), S strata (some empty). */
static int make_random(struct h5shuf_strata *st, uint64_t seed, size_t D, size_t E, uint64_t S, uint64_t max_rows,
                       uint64_t **ends_out)
{
    uint64_t *rows = malloc(E * sizeof *rows), *ends = malloc(S * sizeof *ends);
    size_t *group = malloc(E * sizeof *group);
    uint64_t R = 0;
    for (size_t e = 0; e < E; e++) {
        rows[e] = rnd(5) == 0 ? 0 : rnd(max_rows + 1);
        group[e] = e < D ? e : (size_t)rnd(D);
        R += rows[e];
    }
    for (uint64_t s = 0; s + 1 < S; s++)
        ends[s] = rnd(R + 1);
    ends[S - 1] = R;
    for (uint64_t s = 1; s < S; s++) /* sorted: strata of any size, some empty */
        for (uint64_t k = s; k > 0 && ends[k - 1] > ends[k]; k--) {
            uint64_t x = ends[k];
            ends[k] = ends[k - 1];
            ends[k - 1] = x;
        }
    int rc = h5shuf__strata_make(st, seed, E, rows, group, D, S, ends);
    free(rows);
    free(group);
    *ends_out = ends;
    return rc;
}

static void test_rounding(void)
{
    uint64_t repairs = 0, tables = 0;
    for (int i = 0; i < 3000; i++) {
        const size_t D = 1 + (size_t)rnd(i < 2000 ? 6 : 40);
        const uint64_t S = 1 + rnd(i < 2000 ? 12 : 300);
        struct h5shuf_strata st;
        uint64_t *ends;
        ASSERT_EQ_INT_FATAL(make_random(&st, (uint64_t)i, D, D + (size_t)rnd(8), S, rnd(2) ? 50 : 100000, &ends), 0);
        CU_ASSERT(table_ok(&st, ends));
        repairs += st.repairs;
        tables++;
        h5shuf__strata_free(&st);
        free(ends);
    }
    /* the three-domain mixture of the issue: 64 equal shards */
    const uint64_t rows[] = {700000, 123457, 99991, 76543};
    const size_t group[] = {0, 1, 2, 1};
    uint64_t ends[64], R = 700000 + 123457 + 99991 + 76543;
    for (uint64_t s = 0; s < 64; s++)
        ends[s] = (uint64_t)((h5shuf_u128)(s + 1) * R / 64);
    struct h5shuf_strata st;
    ASSERT_EQ_INT_FATAL(h5shuf__strata_make(&st, 7, 4, rows, group, 3, 64, ends), 0);
    CU_ASSERT(table_ok(&st, ends));
    repairs += st.repairs;
    h5shuf__strata_free(&st);
    printf("\n  %llu tables rounded, %llu augmenting paths needed\n", (unsigned long long)tables + 1,
           (unsigned long long)repairs);
    ASSERT_EQ_INT(h5shuf__strata_make(&st, 1, 1, rows, group, 1, 0, ends), -2); /* no strata */
}

/* Every row's stratum against the table; the keys inside their stratum's range, in K's order. */
static void test_rows(void)
{
    for (int i = 0; i < 200; i++) {
        const size_t D = 1 + (size_t)rnd(5);
        const uint64_t S = 1 + rnd(20);
        struct h5shuf_strata st;
        uint64_t *ends;
        ASSERT_EQ_INT_FATAL(make_random(&st, 1000 + (uint64_t)i, D, D + (size_t)rnd(6), S, rnd(3) ? 300 : 3000, &ends),
                            0);
        uint64_t *tally = calloc(D * S + 1, sizeof *tally), *ids = malloc((st.rows + 1) * sizeof *ids);
        uint64_t *k1 = malloc((st.rows + 1) * sizeof *k1), *k2 = malloc((st.rows + 1) * sizeof *k2);
        int bad = 0;
        for (uint64_t id = 0; id < st.rows; id++) {
            size_t e = 0;
            while (!(id >= st.first[e] && id < st.first[e + 1]))
                e++;
            tally[st.group[e] * S + h5shuf__strata_of(&st, id)]++;
            ids[id] = st.rows - 1 - id; /* (reversed: the ids path) */
            k1[id] = rnd(0);
            k2[st.rows - 1 - id] = k1[id];
        }
        for (size_t t = 0; t < D; t++)
            for (uint64_t s = 0; s < S; s++)
                bad |= tally[t * S + s] != h5shuf__strata_count(&st, t, s);
        h5shuf__strata_keys(&st, NULL, 0, st.rows, k1);
        h5shuf__strata_keys(&st, ids, 0, st.rows, k2);
        for (uint64_t id = 0; id < st.rows; id++) {
            const uint64_t s = h5shuf__strata_of(&st, id);
            bad |= k1[id] != k2[st.rows - 1 - id];
            bad |= (h5shuf_u128)k1[id] < st.bound[s] || (h5shuf_u128)k1[id] >= st.bound[s + 1];
        }
        if (st.rows) { /* one row's key for K rising: never falls */
            uint64_t prev = 0;
            for (int k = 0; k < 1000; k++) {
                uint64_t K = (uint64_t)k * (UINT64_MAX / 999) - (k == 999), key = K;
                h5shuf__strata_keys(&st, NULL, st.rows / 2, 1, &key);
                bad |= key < prev;
                prev = key;
            }
        }
        CU_ASSERT(!bad);
        free(tally);
        free(ids);
        free(k1);
        free(k2);
        h5shuf__strata_free(&st);
        free(ends);
    }
}

/* Two groups (12 and 8 rows: tables, as entries 7, 8 and 5) over 4 strata of 5 rows, 20000 seeds: each row's
 * stratum against c[t][s] / n_t (df 3 a row, Bonferroni over the 20 rows), and rows 0 and 1 of group 0
 * in one stratum against sum c (c - 1) / (n (n - 1)). */
static void test_uniform(void)
{
    enum { SEEDS = 20000, S = 4, R = 20 };
    const uint64_t rows[] = {7, 8, 5}, ends[S] = {5, 10, 15, 20};
    const size_t group[] = {0, 1, 0};
    static uint64_t tally[R][S];
    memset(tally, 0, sizeof tally);
    uint64_t same = 0;
    double p_same = 0;
    struct h5shuf_strata st;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        ASSERT_EQ_INT_FATAL(h5shuf__strata_make(&st, seed * 0x9E3779B97F4A7C15u, 3, rows, group, 2, S, ends), 0);
        for (uint64_t id = 0; id < R; id++)
            tally[id][h5shuf__strata_of(&st, id)]++;
        same += h5shuf__strata_of(&st, 0) == h5shuf__strata_of(&st, 1);
        if (seed + 1 < SEEDS)
            h5shuf__strata_free(&st);
    }
    double worst = 1;
    for (uint64_t id = 0; id < R; id++) {
        const size_t t = id < 7 || id >= 15 ? 0 : 1;
        double chi = 0;
        for (uint64_t s = 0; s < S; s++) {
            const double e = (double)SEEDS * (double)h5shuf__strata_count(&st, t, s) / (double)st.group_rows[t];
            chi += ((double)tally[id][s] - e) * ((double)tally[id][s] - e) / e;
        }
        const double p = h5shuf__chi2_upper(chi, S - 1);
        worst = p < worst ? p : worst;
    }
    for (uint64_t s = 0; s < S; s++) {
        const double c = (double)h5shuf__strata_count(&st, 0, s);
        p_same += c * (c - 1) / (12.0 * 11.0);
    }
    const double z = ((double)same - SEEDS * p_same) / sqrt(SEEDS * p_same * (1 - p_same));
    printf("\n  rows: smallest p %.4f of 20 (Bonferroni 0.001 / 20); rows 0 and 1 together %llu times, expected "
           "%.1f, z %.2f\n", worst, (unsigned long long)same, SEEDS * p_same, z);
    ASSERT_GT_DBL(worst, 0.001 / R);
    ASSERT_LT_DBL(fabs(z), 3.29); /* two-sided 0.001 */
    h5shuf__strata_free(&st);
}

/* The augmenting paths alone: ceilings given to the first groups of each stratum, the paths repairing
 * every group's count; the margins checked from the shares. */
static void test_repair(void)
{
    uint64_t paths = 0;
    for (int i = 0; i < 500; i++) {
        const size_t D = 2 + (size_t)rnd(8);
        const uint64_t S = 1 + rnd(40);
        uint64_t n[10], L[41], R = 0, RL = 0;
        for (size_t t = 0; t < D; t++)
            R += n[t] = rnd(1000);
        for (uint64_t s = 0; s + 1 < S; s++)
            RL += L[s] = rnd(R / S + 1);
        L[S - 1] = R - RL;
        h5shuf_u128 rem[10 * 40];
        int64_t need[10];
        uint64_t ceil[40], floors[10][40];
        unsigned char take[10 * 40];
        memset(take, 0, sizeof take);
        for (uint64_t s = 0; s < S; s++) {
            ceil[s] = L[s];
            for (size_t t = 0; t < D; t++) {
                const h5shuf_u128 x = (h5shuf_u128)n[t] * L[s];
                floors[t][s] = R ? (uint64_t)(x / R) : 0;
                rem[t * S + s] = R ? x % R : 0;
                ceil[s] -= floors[t][s];
            }
        }
        for (size_t t = 0; t < D; t++) {
            need[t] = (int64_t)n[t];
            for (uint64_t s = 0; s < S; s++)
                need[t] -= (int64_t)floors[t][s];
        }
        uint64_t repairs = 0;
        ASSERT_EQ_INT_FATAL(h5shuf__strata_round(D, S, rem, need, ceil, take, 0, &repairs), 0);
        paths += repairs;
        int bad = 0;
        for (size_t t = 0; t < D; t++) {
            uint64_t sum = 0;
            for (uint64_t s = 0; s < S; s++) {
                bad |= take[t * S + s] && !rem[t * S + s];
                sum += floors[t][s] + take[t * S + s];
            }
            bad |= sum != n[t] || need[t] != 0;
        }
        for (uint64_t s = 0; s < S; s++) {
            uint64_t sum = 0;
            for (size_t t = 0; t < D; t++)
                sum += floors[t][s] + take[t * S + s];
            bad |= sum != L[s];
        }
        CU_ASSERT(!bad);
    }
    printf("\n  500 tables, %llu augmenting paths\n", (unsigned long long)paths);
    ASSERT_GT_INT(paths, 500); /* (the first groups are the wrong ones often enough to exercise the paths) */
}

/* A group of 5000 rows (past H5SHUF_STRATA_TABLE_MAX: the Feistel walk) over 4 strata of 1250, 20000 seeds:
 * 8 rows' strata against 1/4 each (df 3 a row, Bonferroni over the 8), and rows 0 and 1 together against
 * 4 x 1250 x 1249 / (5000 x 4999). */
static void test_uniform_feistel(void)
{
    enum { SEEDS = 20000, S = 4, PROBES = 8 };
    const uint64_t rows[] = {5000}, ends[S] = {1250, 2500, 3750, 5000}, probe[PROBES] = {0, 1, 2, 3, 1000, 2499, 4095, 4999};
    const size_t group[] = {0};
    static uint64_t tally[PROBES][S];
    memset(tally, 0, sizeof tally);
    uint64_t same = 0;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        struct h5shuf_strata st;
        ASSERT_EQ_INT_FATAL(h5shuf__strata_make(&st, seed * 0x9E3779B97F4A7C15u + 1, 1, rows, group, 1, S, ends), 0);
        CU_ASSERT_PTR_NULL_FATAL(st.table[0]);
        for (int k = 0; k < PROBES; k++)
            tally[k][h5shuf__strata_of(&st, probe[k])]++;
        same += h5shuf__strata_of(&st, 0) == h5shuf__strata_of(&st, 1);
        h5shuf__strata_free(&st);
    }
    double worst = 1;
    for (int k = 0; k < PROBES; k++) {
        double chi = 0, e = SEEDS / 4.0;
        for (int s = 0; s < S; s++)
            chi += ((double)tally[k][s] - e) * ((double)tally[k][s] - e) / e;
        const double p = h5shuf__chi2_upper(chi, S - 1);
        worst = p < worst ? p : worst;
    }
    const double p_same = 4.0 * 1250 * 1249 / (5000.0 * 4999.0);
    const double z = ((double)same - SEEDS * p_same) / sqrt(SEEDS * p_same * (1 - p_same));
    printf("\n  Feistel: smallest p %.4f of %d rows; rows 0 and 1 together %llu times, expected %.1f, z %.2f\n", worst,
           PROBES, (unsigned long long)same, SEEDS * p_same, z);
    ASSERT_GT_DBL(worst, 0.001 / PROBES);
    ASSERT_LT_DBL(fabs(z), 3.29);
}

static void test_seed(void)
{
    const uint64_t rows[] = {1000, 1000}, ends[] = {500, 1000, 1500, 2000};
    const size_t group[] = {0, 1};
    struct h5shuf_strata a, b, c;
    ASSERT_EQ_INT_FATAL(h5shuf__strata_make(&a, 5, 2, rows, group, 2, 4, ends), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__strata_make(&b, 5, 2, rows, group, 2, 4, ends), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__strata_make(&c, 6, 2, rows, group, 2, 4, ends), 0);
    uint64_t diff_b = 0, diff_c = 0;
    for (uint64_t id = 0; id < 2000; id++) {
        diff_b += h5shuf__strata_of(&a, id) != h5shuf__strata_of(&b, id);
        diff_c += h5shuf__strata_of(&a, id) != h5shuf__strata_of(&c, id);
    }
    ASSERT_EQ_INT(diff_b, 0);
    ASSERT_GT_INT(diff_c, 1000); /* (3/4 of rows move, on average) */
    h5shuf__strata_free(&a);
    h5shuf__strata_free(&b);
    h5shuf__strata_free(&c);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"counts: floor or ceiling, both margins exact, on random tables", test_rounding},
        {"every row's stratum matches the counts; keys in their range, in K's order", test_rows},
        {"uniform: each row's stratum and pairs (chi-square, z, 0.001)", test_uniform},
        {"augmenting paths alone repair every count", test_repair},
        {"uniform through the Feistel walk (chi-square, z, 0.001)", test_uniform_feistel},
        {"the seed changes the assignment", test_seed},
        {NULL, NULL},
    };
    return tu_run("strata", tests);
}
