/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cancel.c - cancelling a run from its progress callback, through the public API only (h5shuf.h, and the
 * piles' test knob of h5shuf_debug.h).
 *
 * The contract (include/h5shuf.h, h5shuf_progress_fn): a callback that returns nonzero cancels the run,
 * which cleans up and returns H5SHUF_ECANCELED.  For every phase a run reports (create, scatter, split, gather),
 * of h5shuf_run (two-pass and direct), h5shuf_run_scatter and h5shuf_run_gather, the callback cancels at its first, a
 * middle and its last report of that phase, and the test checks that the run returned H5SHUF_ECANCELED,
 * never reported again, and left nothing: no output (nor pile file), no temporary ".NAME.h5shuf-XXXXXX"
 * beside it, no scratch file in the tmpdir, every HDF5 object closed, and the input (and, for a gather,
 * the pile file) byte-identical.  A callback that returns 0 lets the run finish, with the same bytes as a
 * run without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5shuf_debug.h"
#include "testutil.h"

/* ~16 MiB of rows over two datasets: several slabs in pass 1 and several 4 MiB bands in pass 2, within a
 * 6 MiB budget; a low pile bound makes every pile split. */
enum { ROWS = 230000, COLS = 16 };
#define MEM_BYTES (UINT64_C(6) << 20)
#define PILE_BOUND 5000

/* DIRECT: h5shuf_run on the direct path, its rows held in memory (a budget of 64 MiB) and its windows of
 * keys bounded by PILE_BOUND too (dozens of windows). */
enum kind { RUN, SCATTER, GATHER, DIRECT };
static const char *const KIND_NAME[] = {"h5shuf_run", "h5shuf_run_scatter", "h5shuf_run_gather",
                                        "h5shuf_run (direct)"};
static const char *const PHASE_NAME[] = {"", "scatter", "split", "gather", "create"};

/* What the callback counts, and when it cancels. */
struct probe {
    h5shuf_phase cancel_phase; /* 0: never cancel */
    uint64_t cancel_at;        /* cancel at this report (1-based) of cancel_phase */
    uint64_t reports[5];       /* reports seen, by phase */
    uint64_t after_cancel;     /* reports seen after the callback asked to cancel */
    int canceled;
    int bad_progress;          /* rows_done > rows_total, or going backwards in a phase */
    uint64_t last_done[5], last_total[5];
};

static int on_progress(void *user, h5shuf_phase phase, uint64_t rows_done, uint64_t rows_total)
{
    struct probe *p = user;
    if (p->canceled) {
        p->after_cancel++;
        return 1;
    }
    if (phase < H5SHUF_PHASE_SCATTER || phase > H5SHUF_PHASE_CREATE || rows_done > rows_total ||
        rows_done < p->last_done[phase]) {
        p->bad_progress = 1;
        return 0;
    }
    p->last_done[phase] = rows_done;
    p->last_total[phase] = rows_total;
    if (++p->reports[phase] == p->cancel_at && phase == p->cancel_phase) {
        p->canceled = 1;
        return 1;
    }
    return 0;
}

/* The test's files: in/in.h5 (the input), ref/in.h5 (its copy), piles/piles.h5 (a pile file made once,
 * for the gathers) and its copy, and out/ and tmp/, empty between runs. */
struct fixture {
    char *dir;
    char in[4200], in_copy[4200], piles[4200], piles_copy[4200], outdir[4200], tmpdir[4200], out[4200];
    unsigned char *rows_x, *rows_y;
};

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int ok = a && b;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a)
        fclose(a);
    if (b && fclose(b) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

static h5shuf_options options(const struct fixture *fx, struct probe *p, unsigned threads, enum kind kind)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = 20240607;
    o.seed_set = 1;
    o.mem_limit_bytes = kind == DIRECT ? MEM_BYTES * 64 / 6 : MEM_BYTES;
    o.strategy = kind == DIRECT ? H5SHUF_STRATEGY_DIRECT : H5SHUF_STRATEGY_TWO_PASS;
    o.tmpdir = fx->tmpdir;
    o.threads = threads;
    o.progress = p ? on_progress : NULL;
    o.progress_user = p;
    return o;
}

/* One run of the given kind with options o; checks that it closed every HDF5 object it opened. */
static int run_kind(const struct fixture *fx, enum kind kind, const h5shuf_options *o, const char *piles,
                    char *msg, size_t cap)
{
    ssize_t before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    h5shuf_job *job = h5shuf_job_create(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    int st = h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, PILE_BOUND); /* small piles, many windows */
    if (st == H5SHUF_OK && kind != GATHER)
        st = h5shuf_job_add_input(job, fx->in);
    if (st == H5SHUF_OK && kind != RUN && kind != DIRECT)
        st = h5shuf_job_set_piles(job, piles);
    if (st == H5SHUF_OK && kind != SCATTER)
        st = h5shuf_job_set_output(job, fx->out);
    if (st == H5SHUF_OK)
        st = kind == RUN || kind == DIRECT ? h5shuf_run(job) : kind == SCATTER ? h5shuf_run_scatter(job) : h5shuf_run_gather(job);
    snprintf(msg, cap, "%s", h5shuf_errmsg(job));
    h5shuf_job_free(job);
    ASSERT_EQ_INT(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), before);
    return st;
}

static void fixture_setup(struct fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(fx->dir);
    static const char *const sub[] = {"in", "ref", "piles", "out", "tmp"};
    for (size_t k = 0; k < 5; k++)
        ASSERT_EQ_INT_FATAL(mkdir(tu_path(fx->dir, sub[k]), 0777), 0);
    snprintf(fx->in, sizeof fx->in, "%s", tu_path(fx->dir, "in/in.h5"));
    snprintf(fx->in_copy, sizeof fx->in_copy, "%s", tu_path(fx->dir, "ref/in.h5"));
    snprintf(fx->piles, sizeof fx->piles, "%s", tu_path(fx->dir, "piles/piles.h5"));
    snprintf(fx->piles_copy, sizeof fx->piles_copy, "%s", tu_path(fx->dir, "ref/piles.h5"));
    snprintf(fx->outdir, sizeof fx->outdir, "%s", tu_path(fx->dir, "out"));
    snprintf(fx->tmpdir, sizeof fx->tmpdir, "%s", tu_path(fx->dir, "tmp"));
    snprintf(fx->out, sizeof fx->out, "%s", tu_path(fx->dir, "out/o.h5"));

    const hsize_t dx[2] = {ROWS, COLS}, dy[1] = {ROWS};
    const struct tu_layout lay = {H5D_CHUNKED, 4096, 0, 0, 0};
    fx->rows_x = malloc((size_t)ROWS * COLS * 4);
    fx->rows_y = malloc((size_t)ROWS * 8);
    CU_ASSERT_FATAL(fx->rows_x && fx->rows_y);
    tu_fill(fx->rows_x, (size_t)ROWS * COLS * 4, 1);
    for (uint64_t i = 0; i < ROWS; i++)
        memcpy(fx->rows_y + 8 * i, &i, 8);
    ASSERT_EQ_INT_FATAL(tu_write(fx->in, 1, "/x", H5T_IEEE_F32LE, 2, dx, &lay, fx->rows_x), 0);
    ASSERT_EQ_INT_FATAL(tu_write(fx->in, 0, "/y", H5T_STD_U64LE, 1, dy, &lay, fx->rows_y), 0);
    ASSERT_EQ_INT_FATAL(copy_file(fx->in, fx->in_copy), 0);

    char msg[1024];
    h5shuf_options o = options(fx, NULL, 0, SCATTER);
    int st = run_kind(fx, SCATTER, &o, fx->piles, msg, sizeof msg);
    if (st != H5SHUF_OK)
        fprintf(stderr, "\n  the gathers' pile file: %s\n", msg);
    ASSERT_EQ_INT_FATAL(st, H5SHUF_OK);
    ASSERT_EQ_INT_FATAL(copy_file(fx->piles, fx->piles_copy), 0);
}

static void fixture_teardown(struct fixture *fx)
{
    free(fx->rows_x);
    free(fx->rows_y);
    tu_rmtree(fx->dir);
    free(fx->dir);
}

/* Nothing left by a failed run: out/ and tmp/ empty (no output, no temporary output, no scratch; for a
 * scatter, no pile file in piles/ besides the fixture's), the input and the pile file unchanged. */
static void check_nothing_left(const struct fixture *fx, enum kind kind, const char *what)
{
    int out_n = tu_count_entries(fx->outdir), tmp_n = tu_count_entries(fx->tmpdir);
    int piles_n = tu_count_entries(tu_path(fx->dir, "piles"));
    int in_same = tu_same_bytes(fx->in, fx->in_copy), piles_same = tu_same_bytes(fx->piles, fx->piles_copy);
    if (out_n || tmp_n || piles_n != 1 || !in_same || !piles_same)
        fprintf(stderr, "\n  %s %s: left %d in out/, %d in tmp/, %d in piles/; input %s, pile file %s\n",
                KIND_NAME[kind], what, out_n, tmp_n, piles_n, in_same ? "unchanged" : "CHANGED",
                piles_same ? "unchanged" : "CHANGED");
    ASSERT_EQ_INT(out_n, 0);
    ASSERT_EQ_INT(tmp_n, 0);
    ASSERT_EQ_INT(piles_n, 1);
    CU_ASSERT(in_same);
    CU_ASSERT(piles_same);
    /* start the next run clean even after a failure here */
    const char *names[] = {fx->outdir, fx->tmpdir};
    for (size_t k = 0; k < 2; k++) {
        tu_rmtree(names[k]);
        mkdir(names[k], 0777);
    }
}

/* Where a run of this kind writes: the output, or a second pile file beside the fixture's. */
static const char *target(const struct fixture *fx, enum kind kind)
{
    return kind == SCATTER ? tu_path(fx->outdir, "piles.h5") : fx->out;
}

/* What a finished run of kind wrote, as an output in ref/NAME: the output itself, or for a scatter the
 * output a gather (without a callback) makes of its pile file.  Pile files are compared through their
 * gathers: their bytes depend on the order their chunks reached the disk; the output's never do. */
static void keep_output(const struct fixture *fx, enum kind kind, unsigned threads, const char *name)
{
    char msg[1024], keep[4200];
    snprintf(keep, sizeof keep, "%s", tu_path(fx->dir, name));
    if (kind == SCATTER) {
        char piles[4200];
        snprintf(piles, sizeof piles, "%s", tu_path(fx->dir, "ref/scattered.h5"));
        ASSERT_EQ_INT_FATAL(rename(target(fx, kind), piles), 0);
        h5shuf_options o = options(fx, NULL, threads, GATHER);
        int st = run_kind(fx, GATHER, &o, piles, msg, sizeof msg);
        if (st != H5SHUF_OK)
            fprintf(stderr, "\n  gathering the scattered piles: %s\n", msg);
        ASSERT_EQ_INT_FATAL(st, H5SHUF_OK);
        unlink(piles);
    }
    ASSERT_EQ_INT_FATAL(rename(fx->out, keep), 0);
}

/* Run kind with a callback that returns 0: the run succeeds, reports every phase it goes through, ends
 * the gather at its total, and its output is byte-identical to a run's without a callback.  Fills
 * counts with the reports of each phase. */
static void check_finishes(const struct fixture *fx, enum kind kind, unsigned threads, uint64_t counts[5])
{
    char msg[1024];
    h5shuf_options o = options(fx, NULL, threads, kind);
    int st = run_kind(fx, kind, &o, kind == SCATTER ? target(fx, kind) : fx->piles, msg, sizeof msg);
    ASSERT_EQ_INT_FATAL(st, H5SHUF_OK);
    keep_output(fx, kind, threads, "ref/plain.h5");

    struct probe p = {0};
    o = options(fx, &p, threads, kind);
    st = run_kind(fx, kind, &o, kind == SCATTER ? target(fx, kind) : fx->piles, msg, sizeof msg);
    if (st != H5SHUF_OK)
        fprintf(stderr, "\n  %s with a callback returning 0: %s\n", KIND_NAME[kind], msg);
    ASSERT_EQ_INT_FATAL(st, H5SHUF_OK);
    keep_output(fx, kind, threads, "ref/probed.h5");
    CU_ASSERT(tu_same_bytes(tu_path(fx->dir, "ref/probed.h5"), tu_path(fx->dir, "ref/plain.h5")));
    CU_ASSERT_FALSE(p.bad_progress);
    ASSERT_EQ_INT(p.reports[H5SHUF_PHASE_SCATTER] > 0, kind == RUN || kind == SCATTER);
    ASSERT_EQ_INT(p.reports[H5SHUF_PHASE_SPLIT] > 0, kind == RUN || kind == SCATTER); /* the low bound splits */
    ASSERT_EQ_INT(p.reports[H5SHUF_PHASE_GATHER] > 0, kind != SCATTER);
    ASSERT_GT_INT(p.reports[H5SHUF_PHASE_CREATE], 0); /* every kind creates its files first */
    if (kind != SCATTER) {
        ASSERT_EQ_INT(p.last_done[H5SHUF_PHASE_GATHER], ROWS);
        ASSERT_EQ_INT(p.last_total[H5SHUF_PHASE_GATHER], ROWS);
    }
    printf("\n  %s, %u thread(s): %llu create, %llu scatter, %llu split, %llu gather reports\n", KIND_NAME[kind],
           threads, (unsigned long long)p.reports[4], (unsigned long long)p.reports[1], (unsigned long long)p.reports[2],
           (unsigned long long)p.reports[3]);
    memcpy(counts, p.reports, sizeof p.reports);
    unlink(tu_path(fx->dir, "ref/plain.h5"));
    unlink(tu_path(fx->dir, "ref/probed.h5"));
    check_nothing_left(fx, kind, "after a run to the end");
}

/* Cancel at report k of phase: H5SHUF_ECANCELED, no report after it, nothing left. */
static void check_cancel(const struct fixture *fx, enum kind kind, unsigned threads, h5shuf_phase phase, uint64_t k)
{
    char msg[1024], what[128];
    struct probe p = {.cancel_phase = phase, .cancel_at = k};
    h5shuf_options o = options(fx, &p, threads, kind);
    int st = run_kind(fx, kind, &o, kind == SCATTER ? target(fx, kind) : fx->piles, msg, sizeof msg);
    snprintf(what, sizeof what, "canceled at %s report %llu (%u thread(s))", PHASE_NAME[phase], (unsigned long long)k,
             threads);
    if (st != H5SHUF_ECANCELED || !p.canceled || p.after_cancel)
        fprintf(stderr, "\n  %s %s: status %d (%s), callback %s, %llu reports after it\n", KIND_NAME[kind], what, st,
                msg, p.canceled ? "canceled" : "never reached the report", (unsigned long long)p.after_cancel);
    CU_ASSERT(p.canceled);
    ASSERT_EQ_INT(st, H5SHUF_ECANCELED);
    ASSERT_HAS_STR(msg, "cancel");
    ASSERT_EQ_INT(p.after_cancel, 0);
    CU_ASSERT_FALSE(p.bad_progress);
    check_nothing_left(fx, kind, what);
}

/* For each phase the kind reports: cancel at its first, a middle and its last report. */
static void check_kind(enum kind kind, unsigned threads)
{
    struct fixture fx;
    fixture_setup(&fx);
    uint64_t counts[5];
    check_finishes(&fx, kind, threads, counts);
    for (int phase = H5SHUF_PHASE_SCATTER; phase <= H5SHUF_PHASE_CREATE; phase++) {
        uint64_t n = counts[phase], at[3] = {1, (n + 1) / 2, n};
        for (size_t j = 0; j < 3; j++)
            if (n > 0 && (j == 0 || at[j] != at[j - 1]))
                check_cancel(&fx, kind, threads, (h5shuf_phase)phase, at[j]);
    }
    fixture_teardown(&fx);
}

static void test_run(void)
{
    check_kind(RUN, 1);
    check_kind(RUN, 2);
}

static void test_run_scatter(void)
{
    check_kind(SCATTER, 1);
    check_kind(SCATTER, 2);
}

static void test_run_direct(void)
{
    check_kind(DIRECT, 1);
    check_kind(DIRECT, 2);
}

static void test_run_gather(void)
{
    check_kind(GATHER, 1);
    check_kind(GATHER, 2);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"h5shuf_run: cancel in scatter, split and gather", test_run},
        {"h5shuf_run_scatter: cancel in scatter and split", test_run_scatter},
        {"h5shuf_run_gather: cancel in gather", test_run_gather},
        {"h5shuf_run, direct path: cancel in gather", test_run_direct},
        {NULL, NULL},
    };
    return tu_main("cancel", tests);
}
