/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_limit.c - the decoded-size limits a thread declares to h5shuf's HDF5 filters (filter_limit.h).
 *
 * Why a limit must come from outside the filter.  HDF5 calls a filter's decoder with the stored chunk,
 * its size and the dataset's cd_values (H5Z_func_t), never with the chunk's own size.  cd_values could
 * carry it (h5py's LZF set_local writes it in cd_values[2]), but set_local runs only when a dataset is
 * created (H5Z_set_local from H5D__create; opening a dataset runs no filter callback), so files written
 * by others keep what their writer put there: hdf5plugin's and the HDF Group's zstd write [level] only,
 * bitshuffle [major, minor, element size, block size, compression], PyTables' LZO [level, version, kind].
 * And an output's cd_values are part of the contract (md5_matrix): h5shuf adds none.  A value in a
 * hostile file is no bound anyway: whoever wrote the bomb wrote its cd_values too.
 *
 * Why per thread is right.  h5shuf knows each dataset's chunk size when it reads it, and brackets the
 * HDF5 call (hdf5/boundread.c): limits set on the calling thread just before, the previous ones restored
 * just after.  HDF5 runs a filter synchronously, on the thread that made the API call (H5Dread ->
 * H5D__chunk_lock -> H5Z_pipeline; no HDF5 release h5shuf builds with, 1.10 to 2.x, runs filters on
 * threads of its own), and in a thread-safe build that thread holds HDF5's global lock for the whole
 * call.  So the filters that see this thread's limits are exactly those of the bracketed call, whatever
 * other threads do: theirs are their own (h5shuf's pool threads run filter_*.c's codecs directly, never
 * through HDF5, with their own bounds: codec.c).  A process-wide "current dataset" would be wrong as soon
 * as two threads read (or a library user runs two jobs); a dataset transfer property cannot reach a
 * filter (HDF5 keeps the API context private).  Filters are never reentered from a filter.
 *
 * Where nothing is declared (another program through src/plugin/'s plugins, or an HDF5 call h5shuf does
 * not bracket) the filters keep their own caps, at most H5SHUF_CHUNK_MAX, the largest chunk HDF5 stores.
 */
#include "filter_limit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local struct h5shuf_filter_limits here;

struct h5shuf_filter_limits *h5shuf_filter_limits_here(void)
{
    return &here;
}

int h5shuf_filter_limit(H5Z_filter_t id, size_t *lo, size_t *hi)
{
    *lo = 1;
    *hi = H5SHUF_CHUNK_MAX;
    if (!here.set)
        return 0;
    int found = 0;
    for (size_t i = 0; i < here.n && i < H5SHUF_LIMIT_SLOTS; i++) {
        if (here.f[i].id != id)
            continue;
        if (!found || here.f[i].lo < *lo)
            *lo = here.f[i].lo;
        if (!found || here.f[i].hi > *hi)
            *hi = here.f[i].hi;
        found = 1;
    }
    if (!found) {
        *lo = 1;
        *hi = H5SHUF_CHUNK_MAX;
        return 0;
    }
    if (*lo < 1)
        *lo = 1;
    if (*hi > H5SHUF_CHUNK_MAX)
        *hi = H5SHUF_CHUNK_MAX;
    if (*lo > *hi)
        *lo = *hi;
    return 1;
}

uint64_t h5shuf_filter_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

void h5shuf_filter_refuse(const char *func, const void *in, size_t nbytes, const char *fmt, ...)
{
    char msg[sizeof here.refused_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "%s", msg);
    if (!here.set)
        return;
    here.refused = 1;
    here.refused_nbytes = nbytes;
    here.refused_hash = h5shuf_filter_hash(in, nbytes);
    memcpy(here.refused_msg, msg, sizeof msg);
}
