/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_writepace.c - writepace.c: when does the disk hold a thread's writes back?  Synthetic writes (their
 * wall, CPU and run-queue times given) and real ones (a sleep inside begin/end waits; a busy loop does
 * not).
 */
#include <stdlib.h>
#include <time.h>

#include "tu_core.h"
#include "writepace.h"

/* n writes, one every gap seconds from t, each of wall seconds of which cpu on the CPU and delay waiting
 * for one. */
static double writes(struct h5shuf_writepace *p, double t, int n, double gap, double wall, double cpu, double delay)
{
    for (int i = 0; i < n; i++) {
        t += gap;
        h5shuf__writepace_add(p, t, wall, cpu, delay);
    }
    return t;
}

static void test_synthetic(void)
{
    struct h5shuf_writepace p = {0};
    CU_ASSERT(!h5shuf__writepace_waiting(&p)); /* nothing written yet */
    double t = writes(&p, 100.0, 50, 0.01, 0.002, 0.002, 0); /* writes that only copy, 20% of the time */
    CU_ASSERT(!h5shuf__writepace_waiting(&p));
    CU_ASSERT(!h5shuf__writepace_costly(&p));
    t = writes(&p, t, 50, 0.01, 0.003, 0.001, 0.0019); /* waiting for a CPU, not the disk */
    CU_ASSERT(!h5shuf__writepace_waiting(&p));
    t = writes(&p, t, 20, 0.01, 0.007, 0.001, 0); /* 6 ms of every 10 waited: 60% */
    CU_ASSERT(h5shuf__writepace_waiting(&p));
    CU_ASSERT(p.waits == 20);
    t = writes(&p, t, 1000, 0.01, 0.001, 0.001, 0); /* 10 s without waits: forgotten */
    CU_ASSERT(!h5shuf__writepace_waiting(&p));
    t = writes(&p, t, 200, 0.01, 0.0004, 0.0001, 0); /* 3% of the time waited: below the line */
    CU_ASSERT(!h5shuf__writepace_waiting(&p));
    t = writes(&p, t, 200, 0.01, 0.0011, 0.0001, 0); /* 10%: above it */
    CU_ASSERT(h5shuf__writepace_waiting(&p));
    CU_ASSERT(!h5shuf__writepace_costly(&p)); /* 11% of the time in the writes */
    t = writes(&p, t, 1000, 0.01, 0.006, 0.006, 0); /* 10 s of copies taking 60%: costly, no wait */
    CU_ASSERT(!h5shuf__writepace_waiting(&p));
    CU_ASSERT(h5shuf__writepace_costly(&p));
    t = writes(&p, t, 1000, 0.01, 0.0035, 0.0035, 0); /* 35%: below the line */
    CU_ASSERT(!h5shuf__writepace_costly(&p));
    t = writes(&p, t, 1000, 0.01, 0.0045, 0.0045, 0); /* 45%: above it */
    CU_ASSERT(h5shuf__writepace_costly(&p));
    t = writes(&p, t, 200, 0.01, 0.001, 0.001, 0); /* 2 s at 10%: forgotten again */
    CU_ASSERT(!h5shuf__writepace_costly(&p));
    (void)t;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_real(void)
{
    struct h5shuf_writepace p = {0};
    for (int i = 0; i < 5; i++) { /* blocked, neither running nor waiting for a CPU: the disk's */
        h5shuf__writepace_begin(&p);
        sleep_ms(20);
        h5shuf__writepace_end(&p);
    }
    CU_ASSERT(h5shuf__writepace_waiting(&p));
    CU_ASSERT(p.writes == 5 && p.waits == 5);
    h5shuf__writepace_free(&p);
    CU_ASSERT(p.writes == 0 && p.fd == 0);
    for (int i = 0; i < 5; i++) { /* on the CPU all the time (or waiting for it): never the disk's */
        h5shuf__writepace_begin(&p);
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        do
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
        h5shuf__writepace_end(&p);
    }
    CU_ASSERT(!h5shuf__writepace_waiting(&p));
    CU_ASSERT(h5shuf__writepace_costly(&p)); /* all of the time in the writes */
    h5shuf__writepace_free(&p);
}

/* The decision pass 1 takes: waiting or costly, unless a test decides (H5SHUF_DEBUG_WRITES_WAIT). */
static void test_compress(void)
{
    struct h5shuf_writepace p = {0};
    unsetenv("H5SHUF_DEBUG_WRITES_WAIT");
    CU_ASSERT(!h5shuf__writepace_compress(&p));
    double t = writes(&p, 100.0, 300, 0.01, 0.005, 0.005, 0); /* costly only */
    CU_ASSERT(!h5shuf__writepace_waiting(&p) && h5shuf__writepace_compress(&p));
    t = writes(&p, t, 1000, 0.01, 0.0002, 0.0001, 0); /* cheap */
    CU_ASSERT(!h5shuf__writepace_compress(&p));
    t = writes(&p, t, 300, 0.01, 0.002, 0.0005, 0); /* 15% waited, 20% in all: waiting only */
    CU_ASSERT(!h5shuf__writepace_costly(&p) && h5shuf__writepace_compress(&p));
    setenv("H5SHUF_DEBUG_WRITES_WAIT", "0", 1);
    CU_ASSERT(!h5shuf__writepace_compress(&p));
    setenv("H5SHUF_DEBUG_WRITES_WAIT", "alternate", 1);
    int a = h5shuf__writepace_compress(&p), b = h5shuf__writepace_compress(&p);
    CU_ASSERT(a != b);
    unsetenv("H5SHUF_DEBUG_WRITES_WAIT");
    (void)t;
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"writes that wait for the disk, for a CPU, or not at all", test_synthetic},
        {"a sleep in a write waits, a busy one does not but is costly", test_real},
        {"compress when the writes wait or are costly", test_compress},
        {NULL, NULL},
    };
    return tu_run("writepace", tests);
}
