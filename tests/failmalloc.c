/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * failmalloc.c - an LD_PRELOAD library that makes one allocation of the codec libraries fail: with
 * FAILMALLOC_AT=N in the environment, the Nth call of malloc, calloc, realloc, posix_memalign or
 * aligned_alloc made directly from libzstd, libdeflate, liblz4, liblzf or libxxhash returns NULL (ENOMEM).
 * h5shuf's own allocations are fault points of the H5SHUF_FAULT_INJECTION build already (fault.h); these
 * are the allocations of the libraries it calls, which report a failure by their return value (a NULL
 * context, an error code) that h5shuf must turn into exit 1 and one line.  libhdf5's own allocations are
 * not failed: HDF5 1.10.8 crashes on them (H5AC_create), which no caller can fix (ulimit_v.sh keeps runs
 * away from them).  With FAILMALLOC_REPORT=PATH, the number of such calls counted so far is kept in PATH
 * (rewritten at each one: a failed h5shuf exits with _exit, past any atexit handler).
 *
 * The caller is the return address of the allocation call (__builtin_return_address), found among the
 * libraries' loaded segments (dl_iterate_phdr, which does not allocate); the real functions are glibc's
 * __libc_malloc and friends.  Test code only: glibc, x86-64/aarch64 Linux.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define RANGES_MAX 32
static struct {
    uintptr_t lo, hi;
} ranges[RANGES_MAX];
static int nranges;
static atomic_int ready; /* 0: not looked for, 1: looking, 2: known */
static atomic_long counted;
static long fail_at = -1;

static const char *const libs[] = {"libzstd.so", "libdeflate.so", "liblz4.so", "liblzf.so", "libxxhash.so"};

static int add_ranges(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    name = name ? name + 1 : info->dlpi_name;
    int ours = 0;
    for (size_t i = 0; name && i < sizeof libs / sizeof *libs; i++)
        ours |= strncmp(name, libs[i], strlen(libs[i])) == 0;
    for (int k = 0; ours && k < info->dlpi_phnum && nranges < RANGES_MAX; k++)
        if (info->dlpi_phdr[k].p_type == PT_LOAD && (info->dlpi_phdr[k].p_flags & PF_X)) {
            ranges[nranges].lo = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
            ranges[nranges].hi = ranges[nranges].lo + info->dlpi_phdr[k].p_memsz;
            nranges++;
        }
    return 0;
}

static int report_fd = -1;
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static long reported;

/* Write n, in decimal and padded to 20 digits, at the start of the report file (no allocation). */
static void report(long n)
{
    char digits[21];
    for (int i = 19; i >= 0; i--, n /= 10)
        digits[i] = (char)('0' + n % 10);
    digits[20] = '\n';
    if (report_fd >= 0 && pwrite(report_fd, digits, sizeof digits, 0) < 0)
        return;
}

/* Whether this call, made from caller, is to fail. */
static int fail_now(const void *caller)
{
    int r = atomic_load(&ready);
    if (r == 0) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&ready, &expect, 1)) { /* the first caller looks, once */
            const char *at = getenv("FAILMALLOC_AT");
            fail_at = at ? atol(at) : 0;
            dl_iterate_phdr(add_ranges, NULL);
            const char *rp = getenv("FAILMALLOC_REPORT");
            if (rp) {
                report_fd = open(rp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                report(0);
            }
            atomic_store(&ready, 2);
        }
        return 0;
    }
    if (r != 2)
        return 0;
    uintptr_t a = (uintptr_t)caller;
    for (int i = 0; i < nranges; i++)
        if (a >= ranges[i].lo && a < ranges[i].hi) {
            long n = atomic_fetch_add(&counted, 1) + 1;
            pthread_mutex_lock(&report_mu); /* the largest count wins, whatever the threads' order */
            if (n > reported) {
                reported = n;
                report(n);
            }
            pthread_mutex_unlock(&report_mu);
            return n == fail_at;
        }
    return 0;
}

void *malloc(size_t n)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t s)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(n, s);
}

void *realloc(void *p, size_t n)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (fail_now(__builtin_return_address(0)))
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (fail_now(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, n);
}
