/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault.c - fault injection for tests (the SQLite habit), compiled only with H5SHUF_FAULT_INJECTION.
 *
 * Every allocation of the library and every HDF5 I/O or creation call it makes passes a numbered fault
 * point; with H5SHUF_FAULT_AT=N in the environment the Nth point fails (an allocation returns NULL, an
 * HDF5 call returns an error with "injected fault" on the error stack).  tests/fault_sweep.sh walks N
 * over all the points of a small shuffle and checks that each failure ends cleanly.  A process-wide
 * counter: only for test builds, never in a release.  Atomic, because chunkio's codec threads pass fault
 * points too (their stage buffers); so the Nth point of a run with several threads may be a different
 * allocation from run to run, and a worker's allocations may move the later points by one or two.
 */
#define H5SHUF_FAULT_IMPL
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

static atomic_long fault_at = -1, fault_seen;

int h5shuf__fault(void)
{
    long at = atomic_load(&fault_at);
    if (at < 0) { /* two threads may both read the environment: they store the same value */
        const char *e = getenv("H5SHUF_FAULT_AT");
        at = e ? atol(e) : 0;
        atomic_store(&fault_at, at);
    }
    return at > 0 && atomic_fetch_add(&fault_seen, 1) + 1 == at;
}

long h5shuf__fault_count(void)
{
    return atomic_load(&fault_seen);
}

void *h5shuf__fault_malloc(size_t n)
{
    return h5shuf__fault() ? NULL : malloc(n);
}

void *h5shuf__fault_calloc(size_t n, size_t size)
{
    return h5shuf__fault() ? NULL : calloc(n, size);
}

void *h5shuf__fault_realloc(void *p, size_t n)
{
    return h5shuf__fault() ? NULL : realloc(p, n);
}

char *h5shuf__fault_strdup(const char *s)
{
    return h5shuf__fault() ? NULL : strdup(s);
}

char *h5shuf__fault_strndup(const char *s, size_t n)
{
    return h5shuf__fault() ? NULL : strndup(s, n);
}

static atomic_long kill_at = -1, kill_seen;

static void kill_count_write(void)
{
    const char *f = getenv("H5SHUF_KILL_COUNT");
    FILE *fp = f ? fopen(f, "w") : NULL;
    if (fp) {
        fprintf(fp, "%ld\n", (long)atomic_load(&kill_seen));
        fclose(fp);
    }
}

static int trace_fd = -1;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static void trace_open(void)
{
    const char *f = getenv("H5SHUF_KILL_TRACE");
    if (f)
        trace_fd = open(f, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

void h5shuf__kill_point(const char *site)
{
    long at = atomic_load(&kill_at);
    if (at < 0) {
        const char *e = getenv("H5SHUF_KILL_AT");
        at = e ? atol(e) : 0;
        long expected = -1;
        if (atomic_compare_exchange_strong(&kill_at, &expected, at) && getenv("H5SHUF_KILL_COUNT"))
            atexit(kill_count_write);
    }
    long n = atomic_fetch_add(&kill_seen, 1) + 1;
    pthread_once(&trace_once, trace_open);
    if (trace_fd >= 0) { /* one write(2) a line, O_APPEND: lines of several threads do not mix */
        char line[256];
        int len = snprintf(line, sizeof line, "%ld %s\n", n, site);
        if (len > 0 && write(trace_fd, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1) < 0)
            trace_fd = -1;
    }
    if (n == at) {
        const char *sig = getenv("H5SHUF_KILL_SIGNAL");
        raise(sig && strcmp(sig, "STOP") == 0 ? SIGSTOP : SIGKILL);
    }
}
