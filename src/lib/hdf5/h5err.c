/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h5err.c - HDF5's error stack: its innermost message for our one-line errors, and its automatic
 * printing switched off during a public call (the library never prints).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "h5err.h"

/* The HDF5 h5shuf builds against (README, "Another HDF5"): 1.10.3 and later, where H5Dread_chunk and
 * H5Dwrite_chunk (blocks.c, chunkio.c) came; 1.12, 1.14 and 2.x through their 1.10 API (H5_USE_110_API,
 * defined by CMakeLists.txt for every target that uses HDF5), but for the calls a later version made
 * safer (H5Dread_chunk2's buffer size, blocks.c), under H5_VERSION_GE where they differ. */
#if !H5_VERSION_GE(1, 10, 3)
#error "h5shuf needs HDF5 1.10.3 or later (H5Dread_chunk, H5Dwrite_chunk)"
#endif

/* Whether HDF5 serialises its own calls (built with --enable-threadsafe, as Debian's is; conda's and
 * Homebrew's default builds are not), asked once; and, for an HDF5 that does not, the lock that makes
 * the public calls of separate jobs take turns (recursive: a progress callback may call the library). */
static pthread_once_t threadsafe_once = PTHREAD_ONCE_INIT;
static int threadsafe;
static pthread_mutex_t serial;

static void threadsafe_init(void)
{
    hbool_t t = 0;
    threadsafe = H5is_library_threadsafe(&t) >= 0 && t;
    if (getenv("H5SHUF_DEBUG_HDF5_NOT_THREADSAFE")) /* tests: the path of an HDF5 that is not (test_threads) */
        threadsafe = 0;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&serial, &a);
    pthread_mutexattr_destroy(&a);
}

int h5shuf__hdf5_threadsafe(void)
{
    pthread_once(&threadsafe_once, threadsafe_init);
    return threadsafe;
}

void h5shuf__quiet_begin(struct h5shuf_quiet *q)
{
    if (!h5shuf__hdf5_threadsafe())
        pthread_mutex_lock(&serial);
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void h5shuf__quiet_end(const struct h5shuf_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
    if (!h5shuf__hdf5_threadsafe())
        pthread_mutex_unlock(&serial);
}

struct cause_walk {
    char *buf;
    size_t cap;
};

/* A file driver's failure ("file write failed: time = ..., filename = '...', file descriptor = 5, errno =
 * 28, error message = 'No space left on device', buf = 0x..., total write size = ...") as its operation
 * and the system's message, "file write failed: No space left on device", into buf[0..cap): the rest
 * repeats the file's name (our message names it already: with a long path the system's message was cut
 * off), the wall clock and addresses.  0 when desc is not such a text. */
static int driver_cause(const char *desc, char *buf, size_t cap)
{
    static const char key[] = "error message = '";
    const char *colon = strchr(desc, ':'), *m = strstr(desc, key);
    const char *end = m ? strchr(m + sizeof key - 1, '\'') : NULL;
    if (!colon || !m || !end || colon > m)
        return 0;
    const char *no = strstr(desc, "errno = ");
    if (no && no < m) /* the system's errno: a disk out of space or failing is told apart (error.h) */
        h5shuf__err_note_errno(atoi(no + strlen("errno = ")));
    m += sizeof key - 1;
    snprintf(buf, cap, "%.*s: %.*s", (int)(colon - desc), desc, (int)(end - m), m);
    return 1;
}

/* H5Ewalk2 visits the stack from the innermost frame (H5E_WALK_UPWARD); keep the first description. */
static herr_t cause_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    struct cause_walk *w = data;
    if (n == 0 && e->desc && driver_cause(e->desc, w->buf, w->cap))
        return 0;
    if (n == 0) {
        const char *d = e->desc && *e->desc ? e->desc : NULL;
        char minor[128] = "";
        H5Eget_msg(e->min_num, NULL, minor, sizeof minor);
        if (d && *minor)
            snprintf(w->buf, w->cap, "%s (%s)", d, minor);
        else
            snprintf(w->buf, w->cap, "%s", d ? d : (*minor ? minor : "unknown HDF5 error"));
    }
    return 0;
}

const char *h5shuf__hdf5_cause(char *buf, size_t cap)
{
    struct cause_walk w = {buf, cap};
    snprintf(buf, cap, "unknown HDF5 error");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, cause_cb, &w);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}

#ifdef H5SHUF_FAULT_INJECTION
int h5shuf__fault_hdf5(void)
{
    if (!h5shuf__fault())
        return 0;
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_IO, H5E_WRITEERROR, "injected fault");
    return 1;
}
#endif
