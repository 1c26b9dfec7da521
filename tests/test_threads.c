/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_threads.c - separate jobs run in separate threads, through the public API only (h5shuf.h).
 *
 * The header's promise: a job is used by one thread at a time, and separate jobs may run in separate
 * threads.  With a thread-safe HDF5 (Debian's) the jobs run at once behind HDF5's global lock; with one
 * that is not (conda's, Homebrew's: h5shuf_hdf5_threadsafe() 0), the library's calls of separate jobs
 * take turns.  Both are checked here: two jobs shuffling two files in two threads write the bytes a run
 * of each alone writes, and with H5SHUF_DEBUG_HDF5_NOT_THREADSAFE=1 (the library then takes the path of
 * an HDF5 that is not thread-safe) every progress report of one run comes before every report of the
 * other (a run holds the turn for its whole span, and reports from within it).  Run under ThreadSanitizer
 * in CI.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

enum { ROWS = 120000, COLS = 16, JOBS = 2 };

/* The progress reports of every job, in the order they came: job ids 1..JOBS. */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static int order[1 << 16];
static size_t norder;

static int on_progress(void *user, h5shuf_phase phase, uint64_t rows_done, uint64_t rows_total)
{
    (void)phase, (void)rows_done, (void)rows_total;
    pthread_mutex_lock(&order_lock);
    if (norder < sizeof order / sizeof *order)
        order[norder++] = *(const int *)user;
    pthread_mutex_unlock(&order_lock);
    return 0;
}

struct run {
    int id;
    char in[4200], out[4200];
    int st;
    char msg[600];
};

static void *run_job(void *arg)
{
    struct run *r = arg;
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = 7 + (uint64_t)r->id;
    o.seed_set = 1;
    o.mem_limit_bytes = UINT64_C(6) << 20; /* two passes, several piles */
    o.threads = 2;
    o.progress = on_progress;
    o.progress_user = &r->id;
    /* (not tu_shuffle: its count of the process's open HDF5 objects would see the other job's) */
    h5shuf_job *job = h5shuf_job_create(&o);
    r->st = job ? h5shuf_job_add_input(job, r->in) : H5SHUF_ENOMEM;
    if (r->st == H5SHUF_OK)
        r->st = h5shuf_job_set_output(job, r->out);
    if (r->st == H5SHUF_OK)
        r->st = h5shuf_run(job);
    snprintf(r->msg, sizeof r->msg, "%s", job ? h5shuf_errmsg(job) : "out of memory");
    h5shuf_job_free(job);
    return NULL;
}

/* Write the inputs, run each job alone for the reference bytes, then all at once in threads; returns the
 * number of switches between jobs in the order of their progress reports (-1 on a failure, asserted). */
static int run_all(const char *dir)
{
    struct run r[JOBS], alone[JOBS];
    for (int j = 0; j < JOBS; j++) {
        uint32_t *rows = malloc((size_t)ROWS * COLS * sizeof *rows);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
        for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
            rows[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)j;
        memset(&r[j], 0, sizeof r[j]);
        r[j].id = j + 1;
        snprintf(r[j].in, sizeof r[j].in, "%s/in%d.h5:/x", dir, j);
        snprintf(r[j].out, sizeof r[j].out, "%s/out%d.h5", dir, j);
        char file[4200];
        snprintf(file, sizeof file, "%s/in%d.h5", dir, j);
        const hsize_t dims[2] = {ROWS, COLS};
        const struct tu_layout lay = {.layout = H5D_CHUNKED, .chunk_rows = 4096, .deflate = 1};
        ASSERT_EQ_INT_FATAL(tu_write(file, 1, "/x", H5T_STD_U32LE, 2, dims, &lay, rows), 0);
        free(rows);
        alone[j] = r[j];
        snprintf(alone[j].out, sizeof alone[j].out, "%s/alone%d.h5", dir, j);
        run_job(&alone[j]);
        ASSERT_EQ_INT(alone[j].st, H5SHUF_OK);
    }
    norder = 0;
    pthread_t t[JOBS];
    for (int j = 0; j < JOBS; j++)
        ASSERT_EQ_INT_FATAL(pthread_create(&t[j], NULL, run_job, &r[j]), 0);
    for (int j = 0; j < JOBS; j++)
        pthread_join(t[j], NULL);
    int switches = 0;
    for (int j = 0; j < JOBS; j++) {
        if (r[j].st != H5SHUF_OK)
            fprintf(stderr, "job %d: %s\n", j + 1, r[j].msg);
        ASSERT_EQ_INT(r[j].st, H5SHUF_OK);
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s", r[j].out);
        snprintf(b, sizeof b, "%s", alone[j].out);
        CU_ASSERT(tu_same_bytes(a, b));
        remove(a);
        remove(b);
    }
    int seen[JOBS + 1] = {0};
    for (size_t i = 0; i < norder; i++) {
        seen[order[i]]++;
        switches += i > 0 && order[i] != order[i - 1];
    }
    for (int j = 1; j <= JOBS; j++)
        ASSERT_GT_INT(seen[j], 1); /* (each run reported more than once: an interleaving could show) */
    return switches;
}

/* Thread-safe HDF5 as built (Debian's): both jobs right, whatever their interleaving. */
static void test_threadsafe(void)
{
    if (!h5shuf_hdf5_threadsafe()) {
        fprintf(stderr, "(HDF5 is not thread-safe here: the jobs take turns)\n");
    }
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    int switches = run_all(dir);
    printf("\n  thread-safe HDF5: %d switches between the two jobs' progress reports\n", switches);
    tu_rmtree(dir);
    free(dir);
}

/* The path of an HDF5 that is not thread-safe: the runs take turns, one job's reports all before the
 * other's. */
static void test_turns(void)
{
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    int switches = run_all(dir);
    ASSERT_EQ_INT(switches, 1);
    tu_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    /* (the library asks once per process: the mode is chosen before the first call) */
    int turns = argc > 1 && strcmp(argv[1], "--not-threadsafe") == 0;
    if (turns)
        setenv("H5SHUF_DEBUG_HDF5_NOT_THREADSAFE", "1", 1);
    static const struct tu_test plain[] = {{"jobs in two threads", test_threadsafe}, {NULL, NULL}};
    static const struct tu_test serial[] = {{"jobs in two threads take turns", test_turns}, {NULL, NULL}};
    if (turns && h5shuf_hdf5_threadsafe()) {
        fprintf(stderr, "H5SHUF_DEBUG_HDF5_NOT_THREADSAFE was not honoured\n");
        return 1;
    }
    return tu_main("threads", turns ? serial : plain);
}
