/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walio.c - the durable I/O of a walfile and of its recovery (walio.h): the writes, reads, syncs and
 * truncations of a base file and its logs, each a step a test can kill the process at and a fault point in
 * test builds; a log record's header; what their messages say.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "fault.h"
#include "walio.h"

void (*h5shuf__walfile_step_hook)(const char *step);

void h5shuf__wal_step(const char *what)
{
    if (h5shuf__walfile_step_hook)
        h5shuf__walfile_step_hook(what);
    H5SHUF_KILL_POINT_AT(what); /* (tests/kill_sweep.sh; the step names the point in a trace) */
}

int h5shuf__wal_io_fault(int write)
{
#ifdef H5SHUF_FAULT_INJECTION
    static _Atomic long writes;
    const char *at = write ? getenv("H5SHUF_DEBUG_WAL_EIO_AT") : NULL;
    if (h5shuf__fault() || (at && ++writes == atol(at))) {
        errno = EIO;
        return 1;
    }
#else
    (void)write;
#endif
    return 0;
}

int h5shuf__wal_write_all(int fd, const void *buf, size_t n, uint64_t off)
{
    const unsigned char *p = buf;
    while (n > 0) {
        if (h5shuf__wal_io_fault(1))
            return EIO;
        ssize_t w = pwrite(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return ENOSPC;
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

int h5shuf__wal_read_full(int fd, void *buf, size_t n, uint64_t off)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0) {
            memset(p, 0, n);
            return 0;
        }
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int h5shuf__wal_sync_fd(int fd)
{
    if (h5shuf__wal_io_fault(0))
        return EIO;
    int e = fsync(fd) == 0 ? 0 : errno;
    return e == EINVAL || e == ENOTSUP ? 0 : e;
}

int h5shuf__wal_truncate_fd(int fd, uint64_t size)
{
    if (h5shuf__wal_io_fault(0))
        return EIO;
    return ftruncate(fd, (off_t)size) == 0 ? 0 : errno;
}

/* Little-endian fields of a record header. */
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
uint64_t h5shuf__wal_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void h5shuf__wal_header(unsigned char h[H5SHUF_WAL_REC_HEADER], unsigned kind, uint64_t off, uint64_t len,
                        const void *payload)
{
    put64(h, (uint64_t)H5SHUF_WAL_REC_MAGIC | (uint64_t)kind << 32);
    put64(h + 8, off);
    put64(h + 16, len);
    put64(h + 24, XXH3_64bits_withSeed(payload, payload ? (size_t)len : 0, XXH3_64bits(h, 24)));
}

int h5shuf__wal_check_prefix(const char *prefix, struct h5shuf_err *err)
{
    if (!prefix || !*prefix || strlen(prefix) > H5SHUF_WAL_PREFIX_MAX || strchr(prefix, '/') ||
        !strcmp(prefix, ".") || !strcmp(prefix, ".."))
        return h5shuf__fail(err, H5SHUF_EINVAL, "invalid log prefix '%s' (a plain name of at most %d bytes)",
                            prefix ? prefix : "(null)", H5SHUF_WAL_PREFIX_MAX);
    return H5SHUF_OK;
}

void h5shuf__wal_fd_name(int fd, char *buf, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, cap - 1);
    if (n <= 0)
        snprintf(buf, cap, "descriptor %d", fd);
    else
        buf[n] = '\0';
}

int h5shuf__wal_status_of(int e)
{
    h5shuf__err_note_errno(e);
    return e == ENOMEM ? H5SHUF_ENOMEM : e == ENOSPC ? H5SHUF_ENOSPC : H5SHUF_EIO;
}

int h5shuf__wal_hash_file(int fd, uint64_t n, uint64_t *hash)
{
    XXH3_state_t *s = XXH3_createState();
    unsigned char *buf = malloc(H5SHUF_WAL_COPY_BYTES);
    int e = 0;
    if (!s || !buf) {
        e = ENOMEM;
        goto out;
    }
    XXH3_64bits_reset(s);
    for (uint64_t at = 0; at < n;) {
        size_t k = n - at < H5SHUF_WAL_COPY_BYTES ? (size_t)(n - at) : H5SHUF_WAL_COPY_BYTES;
        ssize_t r = pread(fd, buf, k, (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            e = r < 0 ? errno : EIO; /* shorter than it should be */
            goto out;
        }
        XXH3_64bits_update(s, buf, (size_t)r);
        at += (uint64_t)r;
    }
    *hash = XXH3_64bits_digest(s);
out:
    XXH3_freeState(s);
    free(buf);
    return e;
}

int h5shuf__wal_write_zeros(int fd, uint64_t off, uint64_t len)
{
    static const unsigned char zeros[65536];
    while (len > 0) {
        size_t k = len < sizeof zeros ? (size_t)len : sizeof zeros;
        int e = h5shuf__wal_write_all(fd, zeros, k, off);
        if (e)
            return e;
        off += k;
        len -= k;
    }
    return 0;
}

int h5shuf__wal_copy_range(int src, uint64_t from, int dst, uint64_t to, uint64_t len, unsigned char *buf)
{
    while (len > 0) {
        size_t k = len < H5SHUF_WAL_COPY_BYTES ? (size_t)len : H5SHUF_WAL_COPY_BYTES;
        int e = h5shuf__wal_read_full(src, buf, k, from);
        if (!e)
            e = h5shuf__wal_write_all(dst, buf, k, to);
        if (e)
            return e;
        from += k;
        to += k;
        len -= k;
    }
    return 0;
}
