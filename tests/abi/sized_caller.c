/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sized_caller.c - the public structs that grow, through struct_size (include/h5shuf.h, "The ABI"), as
 * programs built with other releases' headers pass them (tests/abi.sh): an earlier release's struct is a
 * prefix of today's (its struct_size smaller), a later release's has fields past today's (larger).
 *
 *  - options of an earlier release: h5shuf_options_init_size writes its size and no byte past it, the
 *    job takes the defaults for the fields past it (bytes 0xa5 there are never read: a stratify of
 *    0xa5a5a5a5 would fail the plan), and the shuffle writes the tool's bytes (tests/abi.sh compares);
 *  - a plan and mixing reports of an earlier release: filled as far as their struct_size, no further;
 *  - a later release's: options with zeros past today's run alike, a nonzero byte there is refused
 *    (H5SHUF_EINVAL naming it), a plan is filled as far as today's and its struct_size lowered to say so;
 *  - a struct_size of 0 (a struct never initialised) is refused, options and plan, the job left unplanned;
 *  - the version: h5shuf_version_number() is the header's H5SHUF_VERSION_NUMBER, and
 *    H5SHUF_AT_LEAST_VERSION compares as curl's does;
 *  - the test knobs (h5shuf_debug.h) are set through h5shuf_job_set_debug, not the options.
 *
 * usage: sized_caller INPUT ROWS (in a directory of its own: writes out-small.h5 and out-newer.h5 there,
 * each the shuffle of INPUT with seed 7, -m 64M, -j 1).  Prints "ok - ..." or "not ok - ..." per check,
 * then "N passed, M failed"; exit 1 when any failed.
 */
#include "h5shuf.h"
#include "h5shuf_debug.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FILL = 0xa5, ROOM = 256 };

static int passed, failed;

static void check(int ok, const char *what, const char *detail)
{
    printf("%s - %s%s%s\n", ok ? "ok" : "not ok", what, ok || !detail ? "" : ": ", ok || !detail ? "" : detail);
    ok ? passed++ : failed++;
}

/* Bytes b[0 .. n) all equal to v. */
static int all(const void *b, size_t n, unsigned char v)
{
    for (size_t k = 0; k < n; k++)
        if (((const unsigned char *)b)[k] != v)
            return 0;
    return 1;
}

/* Options and room past them, as one object: a program's struct with the bytes that follow it. */
struct boxed_options {
    h5shuf_options o;
    unsigned char past[ROOM];
};
struct boxed_plan {
    h5shuf_plan p;
    unsigned char past[ROOM];
};

static void seed7(h5shuf_options *o)
{
    o->seed = 7;
    o->seed_set = 1;
    o->mem_limit_bytes = 64u << 20;
    o->threads = 1;
}

/* A job of opts over input, output out (NULL: none); its plan into plan (NULL: none).  Returns the status
 * of the plan, the job in *jobp (the caller frees it). */
static int plan_job(const h5shuf_options *opts, const char *input, const char *out, h5shuf_plan *plan,
                    h5shuf_job **jobp)
{
    h5shuf_job *job = *jobp = h5shuf_job_create(opts);
    if (!job)
        return H5SHUF_ENOMEM;
    int st = h5shuf_job_add_input(job, input);
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_output(job, out ? out : "unused.h5");
    return st == H5SHUF_OK ? h5shuf_job_plan(job, plan) : st;
}

static void version(void)
{
    char d[128];
    snprintf(d, sizeof d, "h5shuf_version_number() %u, H5SHUF_VERSION_NUMBER %d", h5shuf_version_number(),
             H5SHUF_VERSION_NUMBER);
    check(h5shuf_version_number() == H5SHUF_VERSION_NUMBER, "h5shuf_version_number() is the header's macro", d);
    check(H5SHUF_VERSION_NUMBER == H5SHUF_VERSION_MAJOR * 10000 + H5SHUF_VERSION_MINOR * 100 + H5SHUF_VERSION_PATCH,
          "H5SHUF_VERSION_NUMBER is MAJOR * 10000 + MINOR * 100 + PATCH", NULL);
    char s[32];
    snprintf(s, sizeof s, "%d.%d.%d", H5SHUF_VERSION_MAJOR, H5SHUF_VERSION_MINOR, H5SHUF_VERSION_PATCH);
    check(strcmp(s, H5SHUF_VERSION_STRING) == 0 && strcmp(h5shuf_version(), s) == 0,
          "the version string is MAJOR.MINOR.PATCH, the library's too", h5shuf_version());
#if H5SHUF_AT_LEAST_VERSION(H5SHUF_VERSION_MAJOR, H5SHUF_VERSION_MINOR, H5SHUF_VERSION_PATCH) && \
    H5SHUF_AT_LEAST_VERSION(0, 0, 99) && !H5SHUF_AT_LEAST_VERSION(H5SHUF_VERSION_MAJOR, H5SHUF_VERSION_MINOR + 1, 0) && \
    !H5SHUF_AT_LEAST_VERSION(H5SHUF_VERSION_MAJOR + 1, 0, 0)
    check(1, "H5SHUF_AT_LEAST_VERSION in #if: this version and 0.0.99 yes, the next minor and major no", NULL);
#else
    check(0, "H5SHUF_AT_LEAST_VERSION in #if: this version and 0.0.99 yes, the next minor and major no", NULL);
#endif
}

/* Options of an earlier release: its struct ends before stratify. */
static void earlier_options(const char *input)
{
    const size_t small = offsetof(h5shuf_options, stratify);
    struct boxed_options b;
    memset(&b, FILL, sizeof b);
    h5shuf_options_init_size(&b.o, small);
    char d[160];
    snprintf(d, sizeof d, "struct_size %zu, wanted %zu", b.o.struct_size, small);
    check(all((unsigned char *)&b + small, sizeof b - small, FILL) && b.o.struct_size == small &&
              b.o.mem_limit_bytes == UINT64_C(1) << 30 && b.o.checkpoint_seconds == 60 && b.o.seed_set == 0,
          "h5shuf_options_init_size of an earlier struct: the defaults as far as its size, not a byte past", d);
    seed7(&b.o);
    h5shuf_job *job;
    int st = plan_job(&b.o, input, "out-small.h5", NULL, &job);
    if (st == H5SHUF_OK)
        st = h5shuf_run(job);
    check(st == H5SHUF_OK, "an earlier struct's options shuffle (the fields past it, 0xa5 bytes, never read)",
          job ? h5shuf_errmsg(job) : "no job");
    h5shuf_job_free(job);
}

/* Options of a later release: fields past today's, zero, or one of them set. */
static void later_options(const char *input)
{
    const size_t big = sizeof(h5shuf_options) + 16;
    struct boxed_options b;
    memset(&b, FILL, sizeof b);
    h5shuf_options_init_size(&b.o, big);
    check(b.o.struct_size == big && all(b.past, 16, 0) && all(b.past + 16, ROOM - 16, FILL),
          "h5shuf_options_init_size of a later struct: zeros past today's fields, as far as its size", NULL);
    seed7(&b.o);
    h5shuf_job *job;
    int st = plan_job(&b.o, input, "out-newer.h5", NULL, &job);
    if (st == H5SHUF_OK)
        st = h5shuf_run(job);
    check(st == H5SHUF_OK, "a later struct's options, nothing set past today's fields: the shuffle runs",
          job ? h5shuf_errmsg(job) : "no job");
    h5shuf_job_free(job);
    b.past[3] = 1; /* an option of the later release, set */
    st = plan_job(&b.o, input, NULL, NULL, &job);
    check(st == H5SHUF_EINVAL && strstr(h5shuf_errmsg(job), "does not know"),
          "a later struct's option set past today's fields: H5SHUF_EINVAL, saying so", h5shuf_errmsg(job));
    h5shuf_job_free(job);
    memset(&b.o, 0, sizeof b.o); /* never initialised */
    seed7(&b.o);
    st = plan_job(&b.o, input, NULL, NULL, &job);
    check(st == H5SHUF_EINVAL && strstr(h5shuf_errmsg(job), "h5shuf_options_init"),
          "options of struct_size 0 (no h5shuf_options_init): H5SHUF_EINVAL naming it", h5shuf_errmsg(job));
    h5shuf_job_free(job);
    job = h5shuf_job_create(&b.o);
    st = job ? h5shuf_job_add_input(job, input) : H5SHUF_ENOMEM;
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_output(job, input);
    if (st == H5SHUF_OK)
        st = h5shuf_verify(job);
    check(st == H5SHUF_EINVAL, "... and h5shuf_verify refuses them too", job ? h5shuf_errmsg(job) : "no job");
    h5shuf_job_free(job);
}

/* Plans of an earlier release (ending before slab_cache_bytes) and of a later one; a plan never set. */
static void plans(const char *input, uint64_t rows)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    seed7(&o);
    struct boxed_plan b;
    memset(&b, FILL, sizeof b);
    b.p.struct_size = 0;
    h5shuf_job *job;
    int st = plan_job(&o, input, NULL, &b.p, &job);
    check(st == H5SHUF_EINVAL && strstr(h5shuf_errmsg(job), "h5shuf_plan_init") &&
              all((unsigned char *)&b + sizeof b.p.struct_size, sizeof b - sizeof b.p.struct_size, FILL),
          "a plan of struct_size 0 (no h5shuf_plan_init): H5SHUF_EINVAL naming it, nothing written", h5shuf_errmsg(job));
    const size_t small = offsetof(h5shuf_plan, slab_cache_bytes);
    b.p.struct_size = small;
    st = h5shuf_job_plan(job, &b.p);
    char d[200];
    snprintf(d, sizeof d, "status %d, rows %llu of %llu, struct_size %zu", st, (unsigned long long)b.p.rows,
             (unsigned long long)rows, b.p.struct_size);
    check(st == H5SHUF_OK && b.p.rows == rows && b.p.seed == 7 && b.p.struct_size == small &&
              all((unsigned char *)&b + small, sizeof b - small, FILL),
          "an earlier struct's plan (the job planned now): filled as far as its size, not a byte past", d);
    const size_t big = sizeof(h5shuf_plan) + 16;
    memset(&b, FILL, sizeof b);
    b.p.struct_size = big;
    st = h5shuf_job_plan(job, &b.p);
    snprintf(d, sizeof d, "status %d, rows %llu, struct_size %zu", st, (unsigned long long)b.p.rows, b.p.struct_size);
    check(st == H5SHUF_OK && b.p.rows == rows && b.p.struct_size == sizeof(h5shuf_plan) && all(b.past, ROOM, FILL),
          "a later struct's plan: filled as far as today's fields, its struct_size lowered to today's size", d);
    /* mixing reports of earlier releases: ending before p_value, before below_001 */
    h5shuf_mixing m[2];
    h5shuf_mixing_windows w;
    memset(m, FILL, sizeof m);
    memset(&w, FILL, sizeof w);
    m[0].struct_size = m[1].struct_size = offsetof(h5shuf_mixing, p_value);
    w.struct_size = offsetof(h5shuf_mixing_windows, below_001);
    st = h5shuf_job_mixing(job, 100, &m[0], &m[1]);
    if (st == H5SHUF_OK)
        st = h5shuf_job_mixing_windows(job, 100, &w);
    check(st == H5SHUF_OK && m[0].window_rows == 100 && m[1].window_rows == 100 && w.windows >= 1 &&
              all(&m[0].p_value, sizeof m[0].p_value, FILL) && all(&m[1].p_value, sizeof m[1].p_value, FILL) &&
              all(&w.below_001, sizeof w.below_001, FILL),
          "earlier structs' mixing reports: filled as far as their size, not a byte past", h5shuf_errmsg(job));
    h5shuf_job_free(job);
}

/* The test knobs, a job's own (h5shuf_debug.h). */
static void debug_knobs(const char *input)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    seed7(&o);
    o.strategy = H5SHUF_STRATEGY_TWO_PASS;
    h5shuf_job *job = h5shuf_job_create(&o);
    int bad_key = job ? h5shuf_job_set_debug(job, (h5shuf_debug_key)99, 1) : H5SHUF_ENOMEM;
    int st = job ? h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, 37) : H5SHUF_ENOMEM;
    if (st == H5SHUF_OK)
        st = h5shuf_job_add_input(job, input);
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_output(job, "unused.h5");
    h5shuf_plan p;
    h5shuf_plan_init(&p);
    if (st == H5SHUF_OK)
        st = h5shuf_job_plan(job, &p);
    check(bad_key == H5SHUF_EINVAL && st == H5SHUF_OK && p.pile_bound_rows == 37,
          "h5shuf_job_set_debug: an unknown key refused, the piles' bound taken by the plan", job ? h5shuf_errmsg(job) : "");
    check(job && h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, 40) == H5SHUF_EINVAL,
          "h5shuf_job_set_debug on a planned job: H5SHUF_EINVAL", NULL);
    h5shuf_job_free(job);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sized_caller INPUT ROWS\n");
        return 2;
    }
    const uint64_t rows = strtoull(argv[2], NULL, 10);
    version();
    earlier_options(argv[1]);
    later_options(argv[1]);
    plans(argv[1], rows);
    debug_knobs(argv[1]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
