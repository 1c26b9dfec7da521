/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lazy.c - the lazy second pass through the public API: h5shuf_run_scatter into a pile file, then
 * h5shuf_run_gather from it, against h5shuf_run (byte-identical files) and the in-memory reference
 * shuffle (the exact rows and order), and the API's refusals of jobs set up the wrong way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5shuf_debug.h"
#include "testutil.h"

static const struct tu_layout CHUNKED = {H5D_CHUNKED, 50, 1, 1, 0};

/* Run a scatter (inputs -> piles) or, when ninputs == 0, a gather (piles -> output) with options o and the
 * test knob of the piles' bound (0: none).  Checks that the run closed every HDF5 object it opened.
 * Returns the status; msg gets the message. */
static int lazy_run(const char *const *inputs, size_t ninputs, const char *piles, const char *output,
                    const h5shuf_options *o, uint64_t pile_bound, char *msg, size_t cap)
{
    ssize_t before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    h5shuf_job *job = h5shuf_job_create(o);
    if (!job)
        return H5SHUF_ENOMEM;
    int st = pile_bound ? h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, pile_bound) : H5SHUF_OK;
    for (size_t i = 0; i < ninputs && st == H5SHUF_OK; i++)
        st = h5shuf_job_add_input(job, inputs[i]);
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_piles(job, piles);
    if (st == H5SHUF_OK && output)
        st = h5shuf_job_set_output(job, output);
    if (st == H5SHUF_OK)
        st = ninputs ? h5shuf_run_scatter(job) : h5shuf_run_gather(job);
    snprintf(msg, cap, "%s", h5shuf_errmsg(job));
    h5shuf_job_free(job);
    ASSERT_EQ_INT(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), before);
    return st;
}

/* Two inputs of one dataset each; one-shot vs scatter + gather (the gather with another budget), and
 * the gathered rows against the reference shuffle of the concatenated inputs. */
static void check_lazy(uint64_t seed, uint64_t pile_bound, h5shuf_oversize mode)
{
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    const hsize_t dims_a[2] = {900, 3}, dims_b[2] = {411, 3};
    const uint64_t rows = dims_a[0] + dims_b[0], row_bytes = 3 * 2;
    unsigned char *in = malloc(rows * row_bytes), *want = malloc(rows * row_bytes);
    tu_fill(in, rows * row_bytes, seed + 5);
    char a[4200], b[4200], one[4200], two[4200], piles[4200], msg[1024];
    snprintf(a, sizeof a, "%s:/v", tu_path(dir, "a.h5"));
    snprintf(b, sizeof b, "%s:/v", tu_path(dir, "b.h5"));
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, "a.h5"), 1, "/v", H5T_STD_I16BE, 2, dims_a, &CHUNKED, in), 0);
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, "b.h5"), 1, "/v", H5T_STD_I16BE, 2, dims_b, &CHUNKED,
                                 in + dims_a[0] * row_bytes), 0);
    snprintf(one, sizeof one, "%s", tu_path(dir, "one.h5"));
    snprintf(two, sizeof two, "%s:/w", tu_path(dir, "two.h5"));
    snprintf(piles, sizeof piles, "%s", tu_path(dir, "piles.h5"));
    const char *inputs[] = {a, b};

    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = seed;
    o.seed_set = 1;
    o.on_oversize = mode;
    o.mem_limit_bytes = 1u << 20;
    char onespec[4300];
    snprintf(onespec, sizeof onespec, "%s:/w", one);
    ASSERT_EQ_INT_FATAL(tu_shuffle_bound(inputs, 2, onespec, &o, pile_bound, msg, sizeof msg), H5SHUF_OK);
    int st = lazy_run(inputs, 2, piles, NULL, &o, pile_bound, msg, sizeof msg);
    ASSERT_EQ_INT(st, H5SHUF_OK);
    if (st != H5SHUF_OK)
        fprintf(stderr, "\n  scatter: %s\n", msg);
    h5shuf_options g;
    h5shuf_options_init(&g); /* no seed: the pile file's; another budget */
    g.mem_limit_bytes = 64u << 20;
    st = lazy_run(NULL, 0, piles, two, &g, 0, msg, sizeof msg);
    ASSERT_EQ_INT(st, H5SHUF_OK);
    if (st != H5SHUF_OK)
        fprintf(stderr, "\n  gather: %s\n", msg);
    CU_ASSERT(tu_same_bytes(one, tu_path(dir, "two.h5")));

    uint64_t got_rows = 0, rb = 0;
    unsigned char *got = tu_read(tu_path(dir, "two.h5"), "/w", &got_rows, &rb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    tu_reference(seed, in, rows, row_bytes, want);
    ASSERT_EQ_INT(got_rows, rows);
    ASSERT_EQ_INT(rb, row_bytes);
    if (got_rows == rows && rb == row_bytes)
        ASSERT_EQ_MEM(got, want, rows * row_bytes);
    /* a.h5, b.h5, one.h5, piles.h5, two.h5: no temporary file */
    ASSERT_EQ_INT(tu_count_entries(dir), 5);
    free(got);
    free(in);
    free(want);
    tu_rmtree(dir);
    free(dir);
}

static void test_scatter_gather(void)
{
    check_lazy(42, 0, H5SHUF_OVERSIZE_RECURSE);
}

static void test_scatter_gather_split(void)
{
    check_lazy(7, 60, H5SHUF_OVERSIZE_RECURSE);
}

static void test_scatter_gather_restart(void)
{
    check_lazy(99, 60, H5SHUF_OVERSIZE_RESTART);
}

/* Jobs set up for the wrong kind of run are refused with H5SHUF_EINVAL, and write nothing. */
static void test_misuse(void)
{
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    const hsize_t dims[1] = {10};
    int v[10] = {0};
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, "in.h5"), 1, "/v", H5T_NATIVE_INT, 1, dims, &CHUNKED, v), 0);
    char in[4200], piles[4200], out[4200];
    snprintf(in, sizeof in, "%s", tu_path(dir, "in.h5"));
    snprintf(piles, sizeof piles, "%s", tu_path(dir, "piles.h5"));
    snprintf(out, sizeof out, "%s", tu_path(dir, "out.h5"));

    h5shuf_job *job = h5shuf_job_create(NULL);
    ASSERT_EQ_INT(h5shuf_job_set_piles(job, ""), H5SHUF_EINVAL);
    ASSERT_EQ_INT(h5shuf_run_scatter(job), H5SHUF_EINVAL); /* no pile file */
    ASSERT_EQ_INT(h5shuf_run_gather(job), H5SHUF_EINVAL);
    h5shuf_job_add_input(job, in);
    h5shuf_job_set_piles(job, piles);
    ASSERT_EQ_INT(h5shuf_run(job), H5SHUF_EINVAL);        /* a pile job is not a one-shot job */
    ASSERT_EQ_INT(h5shuf_run_gather(job), H5SHUF_EINVAL); /* a gather has no inputs */
    h5shuf_job_set_output(job, out);
    ASSERT_EQ_INT(h5shuf_run_scatter(job), H5SHUF_EINVAL); /* a scatter has no output */
    h5shuf_job_free(job);

    job = h5shuf_job_create(NULL); /* planned as a scatter, then asked to gather */
    h5shuf_job_add_input(job, in);
    h5shuf_job_set_piles(job, piles);
    ASSERT_EQ_INT(h5shuf_job_plan(job, NULL), H5SHUF_OK);
    ASSERT_EQ_INT(h5shuf_job_set_piles(job, piles), H5SHUF_EINVAL); /* already planned */
    ASSERT_EQ_INT(h5shuf_run_gather(job), H5SHUF_EINVAL);
    h5shuf_job_free(job);
    ASSERT_EQ_INT(tu_count_entries(dir), 1); /* in.h5 only */
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"scatter + gather == h5shuf_run, rows in the reference order", test_scatter_gather},
        {"... with oversize piles split", test_scatter_gather_split},
        {"... with pass 1 restarted", test_scatter_gather_restart},
        {"jobs set up for the wrong run are refused", test_misuse},
        {NULL, NULL},
    };
    return tu_main("lazy", tests);
}
