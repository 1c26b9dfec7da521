/*
 * test_plan.c - the pile target, the oversize bound and the buffers of both passes.
 */
#include <math.h>
#include <string.h>

#include "plan.h"
#include "tu_core.h"

static void test_bound_values(void)
{
    /* s + ceil(6 sqrt(s)), worked by hand: perfect squares have no rounding */
    CU_ASSERT_EQUAL(h5shuf__pile_bound_for_target(0), 0);
    CU_ASSERT_EQUAL(h5shuf__pile_bound_for_target(1), 7);
    CU_ASSERT_EQUAL(h5shuf__pile_bound_for_target(2), 2 + 9);   /* 6*1.414 = 8.49 */
    CU_ASSERT_EQUAL(h5shuf__pile_bound_for_target(100), 160);
    CU_ASSERT_EQUAL(h5shuf__pile_bound_for_target(10000), 10600);
    CU_ASSERT_EQUAL(h5shuf__pile_bound_for_target(UINT64_C(1) << 40), (UINT64_C(1) << 40) + 6 * (UINT64_C(1) << 20));
}

static void test_target_is_largest(void)
{
    for (uint64_t b = 0; b < 200000; b++) {
        uint64_t s = h5shuf__pile_target_for_bound(b);
        CU_ASSERT_FATAL(h5shuf__pile_bound_for_target(s) <= b);
        CU_ASSERT_FATAL(h5shuf__pile_bound_for_target(s + 1) > b);
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
                    CU_ASSERT(strstr(e.msg, "at least") != NULL);
                    continue;
                }
                CU_ASSERT_EQUAL_FATAL(st, H5SHUF_OK);
                CU_ASSERT(p.piles * p.pile_target_rows >= p.rows);
                CU_ASSERT(p.pile_bound_rows >= p.pile_target_rows);
                CU_ASSERT(p.mem_planned_bytes <= p.mem_limit_bytes);
                CU_ASSERT(p.slab_rows >= 1 && p.slab_rows <= p.rows);
                if (p.slab_rows >= 100 && p.slab_rows < p.rows)
                    CU_ASSERT_EQUAL(p.slab_rows % 100, 0);
                CU_ASSERT(p.pile_buffer_rows >= 1 && p.pile_buffer_rows <= p.pile_bound_rows);
            }
}

static void test_budget_too_small(void)
{
    struct h5shuf_plan_in in = {.rows = 1000, .row_bytes = 1 << 20, .ndatasets = 1, .mem_limit_bytes = 4 << 20,
                                .band_bytes = 4 << 20};
    h5shuf_plan p;
    struct h5shuf_err e = {0};
    CU_ASSERT_EQUAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_EBUDGET);
    CU_ASSERT(strstr(e.msg, "at least") != NULL);
}

static void test_debug_bound_only_lowers(void)
{
    struct h5shuf_plan_in in = {.rows = 100000, .row_bytes = 64, .ndatasets = 1, .mem_limit_bytes = 1 << 30,
                                .band_bytes = 1 << 20, .debug_pile_bound_rows = 50};
    h5shuf_plan p;
    struct h5shuf_err e = {0};
    CU_ASSERT_EQUAL_FATAL(h5shuf__plan_make(&in, &p, &e), H5SHUF_OK);
    CU_ASSERT_EQUAL(p.pile_bound_rows, 50);
    CU_ASSERT_EQUAL(p.piles, 1); /* the plan itself is the budget's: the knob makes piles oversize */
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"bound values", test_bound_values},
        {"target is the largest within the bound", test_target_is_largest},
        {"plans over a grid of sizes", test_plan_grid},
        {"budget too small", test_budget_too_small},
        {"debug bound only lowers", test_debug_bound_only_lowers},
        {NULL, NULL},
    };
    return tu_run("plan", tests);
}
