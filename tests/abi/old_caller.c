/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * old_caller.c - a program of the first release: built with its header (include/h5shuf.h as 0.1.0 had it,
 * byte for byte: tests/abi/h5shuf-0.1.0.h.gz, which tests/abi.sh unpacks and checks) and linked as it was,
 * against libh5shuf.so.0 (tests/abi.sh).
 *
 * Run with a later library it must either work as it did then (a shuffle with seed 7, and its plan read
 * without a byte written past the program's structs) or not load at all: the SONAME's promise.  What it
 * must never do is run with structs laid out another way, so it checks bytes past each struct the library
 * fills and what the plan says.
 *
 * usage: old_caller INPUT OUTPUT ROWS: prints "ok ROWS SEED", exit 0; a failure prints why, exit 1.
 */
#include "h5shuf-0.1.0.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CANARY = 0x5a, ROOM = 256 };

static int intact(const unsigned char *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (b[k] != CANARY)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    struct {
        h5shuf_options o;
        unsigned char past[ROOM];
    } opts;
    memset(opts.past, CANARY, sizeof opts.past);
    h5shuf_options_init(&opts.o);
    if (!intact(opts.past, sizeof opts.past)) {
        printf("h5shuf_options_init wrote past the program's h5shuf_options (%zu bytes)\n", sizeof opts.o);
        return 1;
    }
    opts.o.seed = 7;
    opts.o.seed_set = 1;
    opts.o.mem_limit_bytes = 64u << 20;
    opts.o.threads = 1;
    h5shuf_job *job = h5shuf_job_create(&opts.o);
    if (!job)
        return printf("h5shuf_job_create failed\n"), 1;
    struct {
        h5shuf_plan p;
        unsigned char past[ROOM];
    } plan;
    memset(&plan, CANARY, sizeof plan);
    int st = h5shuf_job_add_input(job, argv[1]);
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_output(job, argv[2]);
    if (st == H5SHUF_OK)
        st = h5shuf_job_plan(job, &plan.p);
    if (st == H5SHUF_OK)
        st = h5shuf_run(job);
    int bad = 0;
    if (st != H5SHUF_OK)
        bad = printf("status %d: %s\n", st, h5shuf_errmsg(job));
    else if (!intact(plan.past, sizeof plan.past))
        bad = printf("h5shuf_job_plan wrote past the program's h5shuf_plan (%zu bytes)\n", sizeof plan.p);
    else if (plan.p.rows != strtoull(argv[3], NULL, 10) || plan.p.seed != 7 || h5shuf_job_seed(job) != 7)
        bad = printf("the plan reads rows %llu seed %llu, not rows %s seed 7\n", (unsigned long long)plan.p.rows,
                     (unsigned long long)plan.p.seed, argv[3]);
    else
        printf("ok %llu %llu\n", (unsigned long long)plan.p.rows, (unsigned long long)plan.p.seed);
    h5shuf_job_free(job);
    return bad ? 1 : 0;
}
