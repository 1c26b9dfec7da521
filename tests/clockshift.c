/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clockshift.c - an LD_PRELOAD module for tests/clock.sh: every read of the wall clock through time(2) or
 * gettimeofday(2), the calls HDF5 1.10 stamps object headers with (H5_now), answers one second later than
 * the read before it, so a second boundary falls between any two.  A file that carries the clock (HDF5
 * records a dataset's modification time unless H5Pset_obj_track_times(dcpl, 0)) then differs from run to
 * run and from a file written beside it; one that does not is the same bytes.  Monotonic clocks
 * (clock_gettime(CLOCK_MONOTONIC), progress rates and timeouts) are left alone.
 */
#define _GNU_SOURCE
#include <sys/time.h>
#include <time.h>

static long reads; /* clock reads so far in this process */

/* (the build hides symbols by default: these two must be seen to take the C library's place) */
#define VISIBLE __attribute__((visibility("default")))

VISIBLE time_t time(time_t *t)
{
    time_t now = (time_t)(1700000000L + __atomic_add_fetch(&reads, 1, __ATOMIC_RELAXED));
    if (t)
        *t = now;
    return now;
}

VISIBLE int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz; /* tv: not NULL (glibc declares it nonnull) */
    tv->tv_sec = time(NULL);
    tv->tv_usec = 0;
    return 0;
}
