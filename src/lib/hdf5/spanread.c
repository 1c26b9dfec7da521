/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanread.c - pass 1's reads of an input larger than the page cache, one span of the file a slab and
 * dataset, by a thread of their own, with O_DIRECT (spanread.h).
 *
 * The thread only waits for the disk: it takes no part in the pool's work, and a direct read costs it no
 * copy.  A span is read into a buffer aligned to ALIGN, from the aligned offset below its first byte to
 * the aligned one above its last; a descriptor that refuses O_DIRECT (a file system without it: EINVAL at
 * open or at the read) is replaced by a plain one, whose reads the page cache serves as before, still off
 * the job's thread.  Every failure leaves the rows to the usual path (HDF5's H5Dread_chunk), which then
 * says what is wrong in its own words.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "spanread.h"

/* Offsets, lengths and buffers of direct reads are multiples of this (the logical block size of the
 * devices h5shuf runs on is 512 or 4096 bytes). */
#define ALIGN ((uint64_t)4096)

enum { SLOT_IDLE = 0, SLOT_QUEUED, SLOT_DONE };

struct slot {
    struct h5shuf_span span;
    unsigned char *mem; /* ALIGN-aligned, cap bytes */
    size_t file;        /* the input it is of */
    int state;          /* SLOT_*, under the reader's lock */
    int ok;             /* the read got every byte of the span */
    struct h5shuf_inmap_chunk *chunk;
    size_t chunk_cap;
};

struct h5shuf_spanread {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    int started, stop;
    int fd, direct; /* the current input's descriptor (-1: none), opened with O_DIRECT */
    size_t file;    /* which input fd is */
    size_t nds;
    size_t cap;
    struct slot *slot; /* nds */
};

uint64_t h5shuf__spanread_bytes(size_t nds, size_t cap)
{
    return (uint64_t)nds * (cap + ALIGN);
}

/* Read s's span from fd into its buffer: all of it, or s->ok stays 0. */
static void read_slot(struct h5shuf_spanread *r, struct slot *s, int fd, int direct)
{
    const uint64_t lo = s->span.off, want = s->span.len; /* both aligned when direct */
    uint64_t got = 0;
    while (got < want) {
        ssize_t k = H5SHUF_FAULT() ? (errno = EIO, -1) : pread(fd, s->mem + got, (size_t)(want - got), (off_t)(lo + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EINVAL && direct) { /* no direct reads here after all: a plain descriptor */
            int plain = -1;
            pthread_mutex_lock(&r->lock);
            if (r->fd == fd && r->direct) {
                char path[64];
                snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
                plain = open(path, O_RDONLY | O_CLOEXEC);
                if (plain >= 0) {
                    close(r->fd);
                    r->fd = plain;
                    r->direct = 0;
                }
            }
            pthread_mutex_unlock(&r->lock);
            if (plain < 0)
                break;
            fd = plain;
            direct = 0;
            continue;
        }
        if (k <= 0)
            break;
        got += (uint64_t)k;
    }
    /* a direct read may stop at the end of the file, short of the aligned end: enough when it holds every
     * chunk */
    uint64_t need = 0;
    for (size_t i = 0; i < s->span.n; i++)
        if (s->chunk[i].size && s->chunk[i].addr + s->chunk[i].size - lo > need)
            need = s->chunk[i].addr + s->chunk[i].size - lo;
    s->ok = got >= need;
}

static void *reader(void *arg)
{
    struct h5shuf_spanread *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        struct slot *s = NULL;
        for (size_t d = 0; d < r->nds && !s; d++)
            if (r->slot[d].state == SLOT_QUEUED)
                s = &r->slot[d];
        if (!s && r->stop)
            break;
        if (!s) {
            pthread_cond_wait(&r->cond, &r->lock);
            continue;
        }
        const int fd = r->fd, direct = r->direct;
        pthread_mutex_unlock(&r->lock);
        if (fd >= 0)
            read_slot(r, s, fd, direct);
        pthread_mutex_lock(&r->lock);
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

struct h5shuf_spanread *h5shuf__spanread_new(size_t nds, size_t cap)
{
    struct h5shuf_spanread *r = H5SHUF_FAULT() ? NULL : calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = -1;
    r->nds = nds;
    r->cap = (size_t)((cap + ALIGN - 1) / ALIGN * ALIGN + ALIGN); /* room for the alignment at both ends */
    r->slot = calloc(nds ? nds : 1, sizeof *r->slot);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    if (!r->slot) {
        h5shuf__spanread_free(r);
        return NULL;
    }
    return r;
}

/* Wait until slot s is not being read (the reader's lock held). */
static void settle(struct h5shuf_spanread *r, struct slot *s)
{
    while (s->state == SLOT_QUEUED)
        pthread_cond_wait(&r->cond, &r->lock);
}

void h5shuf__spanread_free(struct h5shuf_spanread *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (r->started)
        pthread_join(r->thread, NULL);
    for (size_t d = 0; r->slot && d < r->nds; d++) {
        free(r->slot[d].mem);
        free(r->slot[d].chunk);
    }
    free(r->slot);
    if (r->fd >= 0)
        close(r->fd);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Make r's descriptor input file's, opened at path, the file HDF5 has open as hdf5_fd (r's lock held, no
 * read under way).  0, or -1 when it cannot be. */
static int open_file(struct h5shuf_spanread *r, size_t file, const char *path, int hdf5_fd)
{
    if (r->fd >= 0 && r->file == file)
        return 0;
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    struct stat a, b;
    if (hdf5_fd < 0 || fstat(hdf5_fd, &a) != 0)
        return -1;
    int direct = 1, fd = H5SHUF_FAULT() ? -1 : open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0 && errno == EINVAL) { /* a file system without direct reads */
        direct = 0;
        fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0)
        return -1;
    if (fstat(fd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) { /* not the file HDF5 reads */
        close(fd);
        return -1;
    }
    r->fd = fd;
    r->direct = direct;
    r->file = file;
    return 0;
}

/* Fill s's chunk list for rows [start, start + count) of dset (chunks of whole rows, pl), and its span.
 * 0, or -1 when HDF5 cannot say, out of memory, or the chunks do not make a span worth one read. */
static int plan_span(struct slot *s, hid_t dset, const struct h5shuf_pipeline *pl, uint64_t start, uint64_t count,
                     size_t cap)
{
    const uint64_t c = pl->chunk_rows, n = (count + c - 1) / c;
    if (c == 0 || start % c != 0 || n == 0 || n > SIZE_MAX / sizeof *s->chunk)
        return -1;
    if (n > s->chunk_cap) {
        struct h5shuf_inmap_chunk *v = realloc(s->chunk, (size_t)n * sizeof *v);
        if (!v)
            return -1;
        s->chunk = v;
        s->chunk_cap = (size_t)n;
    }
    uint64_t lo = UINT64_MAX, hi = 0, bytes = 0;
    for (uint64_t i = 0; i < n; i++) {
        hsize_t off[H5S_MAX_RANK] = {start + i * c};
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(dset, off, &mask, &addr, &size) < 0 || size > UINT32_MAX) {
            H5Eclear2(H5E_DEFAULT);
            return -1;
        }
        if (addr == HADDR_UNDEF)
            size = 0; /* not allocated: HDF5 reads those rows */
        s->chunk[i] = (struct h5shuf_inmap_chunk){size ? addr : 0, (uint32_t)size, mask};
        if (size) {
            lo = addr < lo ? addr : lo;
            hi = addr + size > hi ? addr + size : hi;
            bytes += size;
        }
    }
    if (bytes == 0 || hi - lo > 2 * bytes) /* not side by side: one read would fetch more than it uses */
        return -1;
    const uint64_t alo = lo / ALIGN * ALIGN, ahi = (hi + ALIGN - 1) / ALIGN * ALIGN;
    if (ahi - alo > cap)
        return -1;
    s->span = (struct h5shuf_span){.off = alo, .len = (size_t)(ahi - alo), .start = start, .count = count,
                                   .chunk_rows = c, .n = (size_t)n, .chunk = s->chunk};
    return 0;
}

int h5shuf__spanread_ask(struct h5shuf_spanread *r, size_t d, hid_t dset, const struct h5shuf_pipeline *pl,
                         size_t file, const char *path, int hdf5_fd, uint64_t start, uint64_t count)
{
    if (!r || d >= r->nds || !pl->direct || pl->split)
        return 0;
    struct slot *s = &r->slot[d];
    pthread_mutex_lock(&r->lock);
    settle(r, s);
    s->state = SLOT_IDLE;
    s->ok = 0;
    int queued = 0;
    if (!s->mem && posix_memalign((void **)&s->mem, (size_t)ALIGN, r->cap) != 0)
        s->mem = NULL;
    /* (every other slot is idle or done when the file changes: a slab reads one input) */
    int busy = 0;
    for (size_t k = 0; k < r->nds; k++)
        busy |= r->slot[k].state == SLOT_QUEUED;
    if (s->mem && plan_span(s, dset, pl, start, count, r->cap) == 0 &&
        (busy ? r->fd >= 0 && r->file == file : open_file(r, file, path, hdf5_fd) == 0)) {
        s->span.mem = s->mem;
        s->file = file;
        s->state = SLOT_QUEUED;
        queued = 1;
        if (!r->started)
            r->started = pthread_create(&r->thread, NULL, reader, r) == 0;
        if (!r->started) {
            s->state = SLOT_IDLE;
            queued = 0;
        }
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->lock);
    return queued;
}

const struct h5shuf_span *h5shuf__spanread_take(struct h5shuf_spanread *r, size_t d, size_t file, uint64_t start,
                                                uint64_t count)
{
    if (!r || d >= r->nds)
        return NULL;
    struct slot *s = &r->slot[d];
    pthread_mutex_lock(&r->lock);
    settle(r, s);
    const int hit = s->state == SLOT_DONE && s->ok && s->file == file && s->span.start == start &&
                    s->span.count == count;
    pthread_mutex_unlock(&r->lock);
    return hit ? &s->span : NULL;
}
