/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ioahead.c - the disk's work started ahead of the reads that need it (ioahead.h).
 *
 * Measured on 20 GiB of 1032-byte rows at -m 4G with the scratch left uncompressed (issue 52): pass 2 read
 * 11 GB of its 22 GB scratch back from the disk, one stored chunk at a time (H5Dread_chunk: a pread
 * that waits for its own bytes), and took 174 s against 56 s for a compressed scratch that mostly stayed
 * in the page cache.  A pile's chunks lie one every M chunks of the file (pass 1 appends each pile's
 * chunks as its buffer fills), so the kernel's own read-ahead, which follows sequential reads, never
 * starts: the reads are asked for here first, all of a pile's at once.
 */
#include <fcntl.h>
#include <stdlib.h>

#include "ioahead.h"

/* Chunks closer than this are asked for as one range (the gap is read too: cheaper than another request). */
#define MERGE_GAP ((uint64_t)64 << 10)

struct extent {
    uint64_t addr, size;
};

static int by_addr(const void *a, const void *b)
{
    const struct extent *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Append the allocated chunks of dset (chunked along dim 0 only) to *v (n used, cap allocated).  0, or
 * -1 when out of memory or HDF5 cannot say. */
static int chunks_of(hid_t dset, struct extent **v, size_t *n, size_t *cap)
{
    hsize_t dims[H5S_MAX_RANK], cdims[H5S_MAX_RANK], off[H5S_MAX_RANK] = {0};
    hid_t space = H5Dget_space(dset), dcpl = H5Dget_create_plist(dset);
    int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1, r = 0;
    if (rank <= 0 || dcpl < 0 || H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, rank, cdims) != rank ||
        cdims[0] == 0)
        r = -1;
    for (off[0] = 0; r == 0 && off[0] < dims[0]; off[0] += cdims[0]) {
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(dset, off, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF || size == 0)
            continue; /* not allocated: nothing to read */
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 256;
            struct extent *w = realloc(*v, c * sizeof *w);
            if (!w) {
                r = -1;
                break;
            }
            *v = w;
            *cap = c;
        }
        (*v)[(*n)++] = (struct extent){addr, size};
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return r;
}

uint64_t h5shuf__chunks_willneed(int fd, const hid_t *sets, size_t n)
{
    uint64_t asked = 0;
#ifdef POSIX_FADV_WILLNEED
    struct extent *v = NULL;
    size_t used = 0, cap = 0;
    for (size_t d = 0; fd >= 0 && d < n; d++)
        if (sets[d] >= 0)
            (void)chunks_of(sets[d], &v, &used, &cap); /* what could be listed is asked for */
    if (used > 1)
        qsort(v, used, sizeof *v, by_addr);
    for (size_t i = 0; i < used;) {
        uint64_t lo = v[i].addr, hi = v[i].addr + v[i].size;
        for (i++; i < used && v[i].addr <= hi + MERGE_GAP; i++)
            hi = v[i].addr + v[i].size > hi ? v[i].addr + v[i].size : hi;
        if (posix_fadvise(fd, (off_t)lo, (off_t)(hi - lo), POSIX_FADV_WILLNEED) == 0)
            asked += hi - lo;
    }
    free(v);
#else
    (void)fd, (void)sets, (void)n;
#endif
    H5Eclear2(H5E_DEFAULT);
    return asked;
}
