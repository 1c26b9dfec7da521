/*
 * fault.c - fault injection for tests (the SQLite habit), compiled only with H5SHUF_FAULT_INJECTION.
 *
 * Every allocation of the library and every HDF5 I/O or creation call it makes passes a numbered fault
 * point; with H5SHUF_FAULT_AT=N in the environment the Nth point fails (an allocation returns NULL, an
 * HDF5 call returns an error with "injected fault" on the error stack).  tests/fault_sweep.sh walks N
 * over all the points of a small shuffle and checks that each failure ends cleanly.  A process-wide
 * counter: only for test builds, never in a release.
 */
#define H5SHUF_FAULT_IMPL
#include <stdlib.h>
#include <string.h>

#include "fault.h"

static long fault_at = -1, fault_seen;

int h5shuf__fault(void)
{
    if (fault_at < 0) {
        const char *e = getenv("H5SHUF_FAULT_AT");
        fault_at = e ? atol(e) : 0;
    }
    return fault_at > 0 && ++fault_seen == fault_at;
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
