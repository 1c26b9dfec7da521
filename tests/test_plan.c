/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_plan.c - the pile target, the oversize bound and the buffers of both passes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "tu_core.h"

static void test_bound_values(void)
{
    /* s + ceil(6 sqrt(s)), worked by hand: perfect squares have no rounding */
    ASSERT_EQ_INT(h5shuf__pile_bound_for_target(0), 0);
    ASSERT_EQ_INT(h5shuf__pile_bound_for_target(1), 7);
    ASSERT_EQ_INT(h5shuf__pile_bound_for_target(2), 2 + 9);   /* 6*1.414 = 8.49 */
    ASSERT_EQ_INT(h5shuf__pile_bound_for_target(100), 160);
    ASSERT_EQ_INT(h5shuf__pile_bound_for_target(10000), 10600);
    ASSERT_EQ_INT(h5shuf__pile_bound_for_target(UINT64_C(1) << 40), (UINT64_C(1) << 40) + 6 * (UINT64_C(1) << 20));
}

static void test_target_is_largest(void)
{
    for (uint64_t b = 0; b < 200000; b++) {
        uint64_t s = h5shuf__pile_target_for_bound(b);
        ASSERT_LE_INT_FATAL(h5shuf__pile_bound_for_target(s), b);
        ASSERT_GT_INT_FATAL(h5shuf__pile_bound_for_target(s + 1), b);
    }
}

/* Over a grid of sizes: M * s covers N, the planned buffers stay within the budget, slabs align. */
static void test_plan_grid(void)
{
    uint64_t rows[] = {1, 2, 1000, 1000003, UINT64_C(1) << 30};
    uint64_t rb[] = {1, 8, 1024, 65536, 3 << 20};
    uint64_t mem[] = {64 << 20, 1ULL << 30, 8ULL << 30};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t c = 0; c < 3; c++) {
                struct h5shuf_plan_in in = {.rows = rows[a], .row_bytes = rb[b], .ndatasets = 1,
                                            .mem_limit_bytes = mem[c], .band_bytes = 4 << 20, .slab_align_rows = 100};
                h5shuf_plan p;
                struct h5shuf_err e = {0};
                int st = h5shuf__plan_make(&in, &p, &e);
                if (st == H5SHUF_EBUDGET) {
                    ASSERT_HAS_STR(e.msg, "at least");
                    continue;
                }
                ASSERT_EQ_INT_FATAL(st, H5SHUF_OK);
                ASSERT_GE_INT(p.piles * p.pile_target_rows, p.rows);
                ASSERT_GE_INT(p.pile_bound_rows, p.pile_target_rows);
                ASSERT_LE_INT(p.mem_planned_bytes, p.mem_limit_bytes);
                ASSERT_GE_INT(p.slab_rows, 1);
                ASSERT_LE_INT(p.slab_rows, p.rows);
                if (p.slab_rows >= 100 && p.slab_rows < p.rows)
                    ASSERT_EQ_INT(p.slab_rows % 100, 0);
                ASSERT_GE_INT(p.pile_buffer_rows, 1);
                ASSERT_LE_INT(p.pile_buffer_rows, p.pile_bound_rows);
            }
}

static void test_budget_too_small(void)
{
    struct h5shuf_plan_in in = {.rows = 1000, .row_bytes = 1 << 20, .ndatasets = 1, .mem_limit_bytes = 4 << 20,
                                .band_bytes = 4 << 20};
    h5shuf_plan p;
    struct h5shuf_err e = {0};
    ASSERT_EQ_INT(h5shuf__plan_make(&in, &p, &e), H5SHUF_EBUDGET);
    ASSERT_HAS_STR(e.msg, "at least");
}

static void test_debug_bound_only_lowers(void)
{
    struct h5shuf_plan_in in = {.rows = 100000, .row_bytes = 64, .ndatasets = 1, .mem_limit_bytes = 1 << 30,
                                .band_bytes = 1 << 20, .debug_pile_bound_rows = 50};
    h5shuf_plan p;
    struct h5shuf_err e = {0};
    ASSERT_EQ_INT_FATAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_OK);
    ASSERT_EQ_INT(p.pile_bound_rows, 50);
    ASSERT_EQ_INT(p.piles, 1); /* the plan itself is the budget's: the knob makes piles oversize */
}

/* A distributed run's pile (issue 51): half of pass 2's budget at every number of ranks, so a process's
 * memory does not grow with ranks; a run of one rank keeps the whole budget. */
static void test_ranks_pile_flat(void)
{
    const uint64_t mem = 64u << 20, band = 1u << 20;
    uint64_t target[4];
    const int ranks[4] = {1, 2, 4, 32};
    for (int k = 0; k < 4; k++) {
        struct h5shuf_plan_in in = {.rows = 1000000, .row_bytes = 256, .ndatasets = 1, .mem_limit_bytes = mem,
                                    .band_bytes = band, .threads = 1, .ranks = ranks[k]};
        h5shuf_plan p;
        struct h5shuf_err e = {0};
        ASSERT_EQ_INT_FATAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_OK);
        target[k] = p.pile_target_rows;
        if (ranks[k] > 1) /* the pile's bound fits half of pass 2's budget */
            CU_ASSERT(p.pile_bound_rows * h5shuf__plan_pass2_row_bytes(256, 0) <= (mem - band) / 2);
    }
    CU_ASSERT(target[0] > target[1]);
    CU_ASSERT(target[1] == target[2] && target[2] == target[3]);
}

/* The pile target for variable-length rows, computed here independently of plan.c: a pile's bytes in
 * pass 2 are a sum of s rows of mean c bytes (the row and its pass-2 overhead) and variance v (of the
 * payload), standard deviation sqrt(s * (c^2 + v)); the plan takes the largest s whose mean plus `sigmas`
 * standard deviations fits the pass-2 budget B (the budget less the writer's bands):
 *     s*c + sigmas*sqrt(s*(c^2 + v)) <= B
 * which, for s*c <= B, is sigmas^2 * s * (c^2 + v) <= (B - s*c)^2: exact in 128-bit integers for integer
 * c, v and B.  The left side grows with s, so a binary search finds the largest s. */
struct vlen_pile {
    uint64_t c, v, budget, sigmas;
};

static int vlen_fits(uint64_t s, const void *arg)
{
    const struct vlen_pile *p = arg;
    h5shuf_u128 room = (h5shuf_u128)(p->budget - s * p->c);
    return (h5shuf_u128)p->sigmas * p->sigmas * s * ((h5shuf_u128)p->c * p->c + p->v) <= room * room;
}

/* The largest s in [0, hi] with fits(s, arg), for a fits that holds at 0 and, once false, stays false. */
static uint64_t largest_fitting(uint64_t hi, int (*fits)(uint64_t s, const void *arg), const void *arg)
{
    uint64_t lo = 0;
    while (lo < hi) {
        uint64_t s = lo + (hi - lo + 1) / 2;
        if (fits(s, arg))
            lo = s;
        else
            hi = s - 1;
    }
    return lo;
}

static uint64_t vlen_target(uint64_t c, uint64_t v, uint64_t budget, uint64_t sigmas)
{
    const struct vlen_pile p = {c, v, budget, sigmas};
    return largest_fitting(budget / c, vlen_fits, &p); /* nothing above budget / c can fit */
}

/* Variable-length rows (row_var > 0): the plan's pile target is the largest s with 6 standard deviations
 * of a pile's bytes within the pass-2 budget; one thread, so no pipelining: c = row_bytes + 40. */
static void test_vlen_six_sigma(void)
{
    static const struct {
        uint64_t row_bytes, var, mem, band;
    } cases[] = {
        {1000, 25000000, 64 << 20, 1 << 20},              /* payload sd 5000 bytes, 5 times the mean */
        {100, 10000, 16 << 20, 1 << 20},                  /* sd 100 */
        {4000, 100000000, UINT64_C(1) << 30, 4 << 20},    /* sd 10000, a 1 GiB budget */
        {64, 1, 8 << 20, 1 << 20},                        /* almost fixed-size rows */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct h5shuf_plan_in in = {.rows = UINT64_C(1) << 32, .row_bytes = cases[k].row_bytes, .ndatasets = 1,
                                    .mem_limit_bytes = cases[k].mem, .band_bytes = cases[k].band, .threads = 1,
                                    .mem_row_bytes = 16, .row_var = (double)cases[k].var};
        uint64_t c = cases[k].row_bytes + 40, budget = cases[k].mem - cases[k].band;
        /* piles of at most H5SHUF_PASS2_BYTES_MAX (10 piles leave pass 1 room for them); the bound of a
         * pile's bytes stays the budget's */
        uint64_t piles_budget = budget < H5SHUF_PASS2_BYTES_MAX ? budget : H5SHUF_PASS2_BYTES_MAX;
        uint64_t want = vlen_target(c, cases[k].var, piles_budget, 6);
        /* the inputs tell 6 sigmas from 5 and 7, so a changed constant cannot pass */
        ASSERT_GT_INT(vlen_target(c, cases[k].var, piles_budget, 5), want);
        ASSERT_LT_INT(vlen_target(c, cases[k].var, piles_budget, 7), want);
        in.rows = want * 10;
        h5shuf_plan p;
        struct h5shuf_err e = {0};
        ASSERT_EQ_INT_FATAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_OK);
        if (p.pile_target_rows != want)
            printf("\n  case %zu: pile target %llu rows, expected %llu\n", k, (unsigned long long)p.pile_target_rows,
                   (unsigned long long)want);
        ASSERT_EQ_INT(p.pile_target_rows, want);
        ASSERT_EQ_INT(p.piles, 10);
        ASSERT_EQ_INT(p.pile_bound_bytes, budget);
    }
}

/* ceil(6*sqrt(n)): the smallest t with t*t >= 36*n. */
static uint64_t ceil_6sqrt(uint64_t n)
{
    uint64_t t = (uint64_t)sqrt(36.0 * (double)n);
    while (t > 0 && (h5shuf_u128)(t - 1) * (t - 1) >= (h5shuf_u128)36 * n)
        t--;
    while ((h5shuf_u128)t * t < (h5shuf_u128)36 * n)
        t++;
    return t;
}

static int bound_fits(uint64_t s, const void *arg)
{
    return s + ceil_6sqrt(s) <= *(const uint64_t *)arg;
}

/* The largest s with s + ceil(6*sqrt(s)) <= b, by binary search (the left side grows with s), apart from
 * plan.c's closed form. */
static uint64_t fixed_target(uint64_t b)
{
    return largest_fitting(b, bound_fits, &b);
}

/* With a budget above H5SHUF_PASS2_BYTES_MAX, pass 2's piles are planned in that much memory when pass 1
 * can give each pile buffer a whole scratch chunk (1 MiB) within half of the budget; else in the
 * budget, as below it.  One thread: a fixed-size row costs row_bytes + 40 bytes in pass 2. */
static void test_pile_memory_capped(void)
{
    static const struct {
        uint64_t rows, row_bytes, mem;
        int capped;
    } cases[] = {
        {UINT64_C(1) << 30, 64, UINT64_C(2) << 30, 1},      /* 64 GiB of 64-byte rows, 2 GiB: 418 piles, not 53 */
        {UINT64_C(1) << 20, 1024, UINT64_C(1) << 30, 1},    /* 1 GiB of 1 KiB rows, 1 GiB: 5 piles, not 2 */
        {UINT64_C(1) << 25, 4096, UINT64_C(1) << 30, 0},    /* 128 GiB of 4 KiB rows: 530 MiB of buffers for 530 capped piles */
        {UINT64_C(1) << 30, 64, 200 << 20, 0},              /* a budget below the cap: 538 piles */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const uint64_t band = 1 << 20, per_row = cases[k].row_bytes + 40, budget = cases[k].mem - band;
        struct h5shuf_plan_in in = {.rows = cases[k].rows, .row_bytes = cases[k].row_bytes, .ndatasets = 1,
                                    .mem_limit_bytes = cases[k].mem, .band_bytes = band, .threads = 1};
        h5shuf_plan p;
        struct h5shuf_err e = {0};
        ASSERT_EQ_INT_FATAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_OK);
        uint64_t capped = fixed_target(H5SHUF_PASS2_BYTES_MAX / per_row), whole = fixed_target(budget / per_row);
        uint64_t m = (cases[k].rows + capped - 1) / capped;
        /* the case says which rule applies; the numbers confirm it */
        ASSERT_EQ_INT(cases[k].capped, budget > H5SHUF_PASS2_BYTES_MAX && m * (UINT64_C(1) << 20) <= cases[k].mem / 2);
        uint64_t want = cases[k].capped ? capped : whole;
        if (p.pile_target_rows != want)
            printf("\n  case %zu: pile target %llu rows, expected %llu\n", k, (unsigned long long)p.pile_target_rows,
                   (unsigned long long)want);
        ASSERT_EQ_INT(p.pile_target_rows, want);
        ASSERT_EQ_INT(p.piles, (cases[k].rows + want - 1) / want);
        if (cases[k].capped)
            ASSERT_LE_INT(p.pile_bound_rows * per_row, H5SHUF_PASS2_BYTES_MAX);
        /* what -v says the budget alone would hold: the whole budget's target, more piles than that when
         * capped, the plan's own otherwise */
        uint64_t uncapped = h5shuf__plan_piles_uncapped(&in);
        ASSERT_EQ_INT(uncapped, (cases[k].rows + whole - 1) / whole);
        if (cases[k].capped)
            ASSERT_GT_INT(p.piles, uncapped);
        else
            ASSERT_EQ_INT(p.piles, uncapped);
    }
}

/* h5py's split chunks of 64x64x3 uint8 images, (2500, 4, 8, 1), and their labels in chunks of 1250, on
 * two threads: at -m 128M pass 1's slab is one whole chunk row of the images (2500 rows: read ahead, no
 * chunk row cache; its three copies 94.2 MB, within three quarters of 134.2 MB); at -m 119M (124.8 MB)
 * those copies pass three quarters (93.6 MB) and the slab is the quarter's, shorter than a chunk row, with
 * the cache of a chunk row of each (30.7 MB, within a quarter); at -m 96M the cache passes a quarter too. */
static void test_wide_slab(void)
{
    const uint64_t chunk_rows[2] = {2500, 1250}, ds_row_bytes[2] = {12288, 8};
    const uint64_t rb = 12296, band = 2500 * rb;
    const uint64_t mems[3] = {UINT64_C(128) << 20, UINT64_C(119) << 20, UINT64_C(96) << 20};
    for (int k = 0; k < 3; k++) {
        struct h5shuf_plan_in in = {.rows = 40000, .row_bytes = rb, .ndatasets = 2, .mem_limit_bytes = mems[k],
                                    .band_bytes = band, .slab_align_rows = 2500, .threads = 2,
                                    .chunk_rows = chunk_rows, .ds_row_bytes = ds_row_bytes};
        h5shuf_plan p;
        struct h5shuf_err e = {0};
        ASSERT_EQ_INT_FATAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_OK);
        ASSERT_LE_INT(p.mem_planned_bytes, p.mem_limit_bytes);
        if (k == 0) {
            const uint64_t b = 2500 * rb, keys = 2500 * 8; /* pipelined: two slabs, and the next one's chunks */
            ASSERT_EQ_INT(p.slab_rows, 2500);
            ASSERT_EQ_INT(p.slab_cache_bytes, 0);
            ASSERT_EQ_INT(h5shuf__plan_slab_bytes(&p), 2 * (b + keys) + b + b / 16);
            ASSERT_LE_INT(h5shuf__plan_slab_bytes(&p) + h5shuf__plan_pass1_pile_bytes(&p, p.piles), mems[k]);
        } else {
            ASSERT_LT_INT(p.slab_rows, 1250);
            ASSERT_EQ_INT(p.slab_cache_bytes, k == 1 ? 2500 * 12288 + 1250 * 8 : 0);
        }
    }
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"bound values", test_bound_values},
        {"target is the largest within the bound", test_target_is_largest},
        {"plans over a grid of sizes", test_plan_grid},
        {"budget too small", test_budget_too_small},
        {"pass 2's piles in at most H5SHUF_PASS2_BYTES_MAX", test_pile_memory_capped},
        {"debug bound only lowers", test_debug_bound_only_lowers},
        {"a distributed run's piles do not grow with ranks", test_ranks_pile_flat},
        {"variable-length rows: 6 sigmas of a pile's bytes", test_vlen_six_sigma},
        {"a slab of a whole chunk row when the budget holds it", test_wide_slab},
        {NULL, NULL},
    };
    return tu_run("plan", tests);
}
