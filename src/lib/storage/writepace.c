/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writepace.c - what a thread's writes cost it (writepace.h): whether the disk holds them back, and the
 * share of its time they take.
 *
 * A buffered write returns as soon as its bytes are in the page cache, until the dirty pages reach the
 * kernel's limits (vm.dirty_ratio and its background threshold, a few GiB on the machines measured): the
 * kernel then makes the writer sleep (balance_dirty_pages) at the pace the disk writes.  That sleep is
 * wall time the thread neither runs nor waits for a CPU for, which the kernel's per-thread counters tell
 * apart (/proc/thread-self/schedstat: time run, time waited on a run queue): on a busy machine a thread
 * waits for a CPU too, and that must not count as the disk's (it says the CPU is short, not the disk).
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writepace.h"

static double seconds(clockid_t clock)
{
    struct timespec ts;
    return clock_gettime(clock, &ts) == 0 ? (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 : 0.0;
}

/* The thread's wait for a CPU so far, seconds, from its schedstat file fd ("run wait slices", in ns); 0
 * where the kernel does not say. */
static double run_delay(int fd)
{
    char buf[96];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    (void)strtoull(buf, &end, 10);
    return (double)strtoull(end, NULL, 10) * 1e-9;
}

void h5shuf__writepace_begin(struct h5shuf_writepace *p)
{
    if (!p->fd)
        p->fd = 1 + open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); /* (failed: 0, tried again) */
    p->t0 = seconds(CLOCK_MONOTONIC);
    p->cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    p->delay0 = run_delay(p->fd - 1);
}

void h5shuf__writepace_end(struct h5shuf_writepace *p)
{
    const double now = seconds(CLOCK_MONOTONIC);
    h5shuf__writepace_add(p, now, now - p->t0, seconds(CLOCK_THREAD_CPUTIME_ID) - p->cpu0,
                          run_delay(p->fd - 1) - p->delay0);
}

void h5shuf__writepace_add(struct h5shuf_writepace *p, double now, double wall, double cpu, double delay)
{
    double waited = wall - cpu - delay;
    if (waited < 0)
        waited = 0;
    /* the time since the last update (at most the decay's scale: the first write starts a window) */
    double dt = p->last > 0 ? now - p->last : wall;
    if (dt < wall)
        dt = wall;
    const double keep = exp(-dt / H5SHUF_WRITEPACE_TAU);
    p->waited = p->waited * keep + waited;
    p->spent = p->spent * keep + waited + (cpu > 0 ? cpu : 0);
    p->delayed = p->delayed * keep + (delay > 0 ? delay : 0);
    p->window = p->window * keep + dt;
    p->last = now;
    p->writes++;
    p->waits += waited > 0.001;
}

int h5shuf__writepace_waiting(const struct h5shuf_writepace *p)
{
    return p->window > 0 && p->waited > H5SHUF_WRITEPACE_WAITING * p->window;
}

int h5shuf__writepace_costly(const struct h5shuf_writepace *p)
{
    return p->window > p->delayed && p->spent > H5SHUF_WRITEPACE_COSTLY * (p->window - p->delayed);
}

int h5shuf__writepace_compress(struct h5shuf_writepace *p)
{
    const char *debug = getenv("H5SHUF_DEBUG_WRITES_WAIT");
    const uint64_t k = p->asked++;
    if (debug && *debug)
        return strcmp(debug, "alternate") == 0 ? (int)(k & 1) : strcmp(debug, "0") != 0;
    return h5shuf__writepace_waiting(p) || h5shuf__writepace_costly(p);
}

void h5shuf__writepace_free(struct h5shuf_writepace *p)
{
    if (p->fd > 0)
        close(p->fd - 1);
    memset(p, 0, sizeof *p);
}
