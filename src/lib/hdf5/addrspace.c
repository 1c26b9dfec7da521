/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * addrspace.c - the address-space limits of the process (ulimit -v: RLIMIT_AS; ulimit -d: RLIMIT_DATA)
 * against what a run will map.  Linux reports what the process maps in /proc/self/statm (proc(5)): its
 * first field is the size (VmSize, what RLIMIT_AS limits), its sixth the data and stack (what RLIMIT_DATA
 * limits since Linux 4.7), both in pages.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "addrspace.h"

/* One limit and what the process uses of it, bytes. */
struct room {
    uint64_t limit, used;
    const char *flag; /* the ulimit option that sets it */
};

/* What a new thread maps: its default stack (glibc: RLIMIT_STACK when it was finite at start, else 8 MiB)
 * and, with glibc, the heap of the malloc arena its first allocation creates: HEAP_MAX_SIZE, 64 MiB on
 * 64-bit systems (2 * DEFAULT_MMAP_THRESHOLD_MAX, glibc malloc/arena.c), reserved whole at once, up to
 * 8 arenas a CPU.  A 1 GiB budget run with one codec thread under ulimit -v 300M passed a check without
 * it and then failed to allocate its pile: the thread's arena held the 64 MiB. */
static uint64_t thread_bytes(void)
{
    pthread_attr_t a;
    size_t sz = 8u << 20;
    if (pthread_attr_init(&a) == 0) {
        if (pthread_attr_getstacksize(&a, &sz) != 0)
            sz = 8u << 20;
        pthread_attr_destroy(&a);
    }
    uint64_t bytes = (uint64_t)sz + (64u << 10); /* and its guard page(s), rounded up */
#if defined(__GLIBC__) && UINTPTR_MAX > 0xffffffffu
    bytes += 64u << 20;
#endif
    return bytes;
}

/* The tighter of the two limits (the one with less room), or 0 when neither is set or the use is unknown. */
static int tightest(struct room *r)
{
    unsigned long long size = 0, resident, shared, text, lib, data;
    FILE *f = fopen("/proc/self/statm", "r");
    int got = f && fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text, &lib, &data) == 6;
    if (f)
        fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    if (!got || page <= 0)
        return 0;
    const struct {
        int resource;
        unsigned long long used_pages;
        const char *flag;
    } lim[2] = {{RLIMIT_AS, size, "ulimit -v"}, {RLIMIT_DATA, data, "ulimit -d"}};
    int found = 0;
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(lim[i].resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
            continue;
        uint64_t limit = rl.rlim_cur, used = (uint64_t)lim[i].used_pages * (uint64_t)page;
        uint64_t room = limit > used ? limit - used : 0;
        if (!found || room < (r->limit > r->used ? r->limit - r->used : 0)) {
            r->limit = limit;
            r->used = used;
            r->flag = lim[i].flag;
            found = 1;
        }
    }
    return found;
}

static double mib(uint64_t b)
{
    return (double)b / (1 << 20);
}

int h5shuf__addrspace_check(uint64_t planned, uint64_t chunks, uint64_t mem_limit_bytes, unsigned workers,
                            struct h5shuf_err *err)
{
    struct room r;
    if (!tightest(&r))
        return H5SHUF_OK;
    const uint64_t threads = (uint64_t)workers * thread_bytes();
    if (!planned) {
        const uint64_t need = r.used + H5SHUF_ADDRSPACE_OPEN_BYTES;
        if (need <= r.limit)
            return H5SHUF_OK;
        return h5shuf__fail(err, H5SHUF_EBUDGET,
                            "the address-space limit (%s) of %.1f MiB leaves %.1f MiB beyond the %.1f MiB h5shuf "
                            "maps at start, and HDF5 needs about %.1f MiB to open a file: raise the limit",
                            r.flag, mib(r.limit), r.used < r.limit ? mib(r.limit - r.used) : 0.0, mib(r.used),
                            mib(H5SHUF_ADDRSPACE_OPEN_BYTES));
    }
    /* What does not shrink with the budget, and then the buffers, which do. */
    const uint64_t fixed = r.used + H5SHUF_ADDRSPACE_OVERHEAD_BYTES + threads + chunks;
    if (fixed <= r.limit && planned <= r.limit - fixed)
        return H5SHUF_OK;
    const uint64_t fit = r.limit > fixed ? (r.limit - fixed) >> 20 : 0; /* a budget of fit MiB plans at most that */
    char hint[128];
    if (fit >= 1)
        snprintf(hint, sizeof hint, "lower -m to at most %lluM (or raise the limit)", (unsigned long long)fit);
    else
        snprintf(hint, sizeof hint, "raise the limit to at least %.0f MiB", mib(fixed + planned) + 1);
    return h5shuf__fail(err, H5SHUF_EBUDGET,
                        "the address-space limit (%s) of %.1f MiB is too small for a budget (-m) of %.1f MiB: the "
                        "run would map about %.1f MiB (%.1f MiB of planned buffers, %.1f MiB of chunk buffers, %.1f "
                        "MiB mapped already, %.1f MiB for HDF5 and %.1f MiB for %u codec threads): %s",
                        r.flag, mib(r.limit), mib(mem_limit_bytes), mib(fixed + planned), mib(planned), mib(chunks),
                        mib(r.used), mib(H5SHUF_ADDRSPACE_OVERHEAD_BYTES), mib(threads), workers, hint);
}
