/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal.c - the journal of a resumable run: append-only checksummed records (format in journal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "fault.h"
#include "journal.h"

#define HEADER "h5shuf-journal1\n"
#define HEADER_BYTES H5SHUF_JOURNAL_HEADER_BYTES
#define RECORD_MAGIC UINT32_C(0x4a524543)
/* A record longer than this is not one of ours (the largest, a pile table, is 40 bytes a pile). */
#define RECORD_MAX (UINT64_C(1) << 32)

static uint64_t record_sum(uint32_t kind, uint64_t length, const void *payload)
{
    /* the header's fields and the payload hashed in one: a seed from the header (no streaming state) */
    const uint64_t seed = ((uint64_t)kind << 32) ^ length ^ UINT64_C(0x9e3779b97f4a7c15);
    return XXH3_64bits_withSeed(payload, (size_t)length, seed);
}

/* Write all of buf at off; 0, or -1 with errno. */
static int pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t w = H5SHUF_FAULT() ? (errno = EIO, -1) : pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0) /* (no progress: the disk is full) */
                errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Read exactly n bytes at off: 1, 0 at a short read (end of file), -1 with errno. */
static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return 0;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 1;
}

int h5shuf__journal_create(int dirfd, const char *name, const char *path, struct h5shuf_journal *j,
                           struct h5shuf_err *err)
{
    j->fd = -1;
    j->end = HEADER_BYTES;
    if (!(j->path = strdup(path)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    j->fd = H5SHUF_FAULT() ? (errno = EIO, -1) : openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (j->fd < 0 || pwrite_all(j->fd, HEADER, HEADER_BYTES, 0) < 0 || fsync(j->fd) < 0 || fsync(dirfd) < 0) {
        h5shuf__err_note_errno(errno);
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot create the journal: %s", path, strerror(errno));
    }
    return H5SHUF_OK;
}

void h5shuf__records_free(struct h5shuf_record *recs, size_t n)
{
    for (size_t i = 0; recs && i < n; i++)
        free(recs[i].payload);
    free(recs);
}

/* Read the record at *off into r (payload allocated): 1 and *off past it, 0 when there is no valid record
 * there (the end, or a torn or damaged one), -1 on a read error or no memory (errno). */
static int read_record(int fd, uint64_t *off, struct h5shuf_record *r)
{
    unsigned char head[16];
    int got = pread_all(fd, head, sizeof head, *off);
    if (got <= 0)
        return got;
    uint32_t magic, kind;
    uint64_t length, sum;
    memcpy(&magic, head, 4);
    memcpy(&kind, head + 4, 4);
    memcpy(&length, head + 8, 8);
    if (magic != RECORD_MAGIC || length > RECORD_MAX)
        return 0;
    char *payload = malloc((size_t)length + 1);
    if (!payload)
        return -1;
    got = pread_all(fd, payload, (size_t)length, *off + sizeof head);
    if (got > 0)
        got = pread_all(fd, &sum, sizeof sum, *off + sizeof head + length);
    if (got <= 0 || sum != record_sum(kind, length, payload)) {
        free(payload);
        return got < 0 ? -1 : 0;
    }
    payload[length] = '\0';
    r->kind = kind;
    r->payload = payload;
    r->length = length;
    *off += sizeof head + length + sizeof sum;
    return 1;
}

int h5shuf__journal_open(int dirfd, const char *name, const char *path, struct h5shuf_journal *j,
                         struct h5shuf_record **recs, size_t *n, struct h5shuf_err *err)
{
    *recs = NULL;
    *n = 0;
    j->end = HEADER_BYTES;
    if (!(j->path = strdup(path)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    struct stat s;
    j->fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (j->fd < 0 || fstat(j->fd, &s) < 0)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot open the journal: %s", path, strerror(errno));
    if (!S_ISREG(s.st_mode) || s.st_uid != geteuid())
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: not a journal of this user's", path);
    char head[HEADER_BYTES];
    if (pread_all(j->fd, head, HEADER_BYTES, 0) != 1 || memcmp(head, HEADER, HEADER_BYTES) != 0)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: not an h5shuf journal", path);
    size_t cap = 0;
    for (;;) {
        struct h5shuf_record r;
        int got = read_record(j->fd, &j->end, &r);
        if (got < 0)
            return h5shuf__fail(err, errno == ENOMEM ? H5SHUF_ENOMEM : H5SHUF_EIO, "%s: cannot read the journal: %s",
                                path, strerror(errno));
        if (got == 0)
            break;
        if (*n == cap) {
            size_t c = cap ? 2 * cap : 16;
            struct h5shuf_record *v = realloc(*recs, c * sizeof *v);
            if (!v) {
                free(r.payload);
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            }
            *recs = v;
            cap = c;
        }
        (*recs)[(*n)++] = r;
    }
    /* a torn last record is cut off: the next append follows the last valid one */
    if (ftruncate(j->fd, (off_t)j->end) < 0 || fdatasync(j->fd) < 0)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot write the journal: %s", path, strerror(errno));
    return H5SHUF_OK;
}

int h5shuf__journal_append(struct h5shuf_journal *j, uint32_t kind, const char *payload, uint64_t length,
                           struct h5shuf_err *err)
{
    unsigned char head[16];
    const uint32_t magic = RECORD_MAGIC;
    const uint64_t sum = record_sum(kind, length, payload);
    memcpy(head, &magic, 4);
    memcpy(head + 4, &kind, 4);
    memcpy(head + 8, &length, 8);
    if (pwrite_all(j->fd, head, sizeof head, j->end) < 0 || pwrite_all(j->fd, payload, (size_t)length, j->end + sizeof head) < 0 ||
        pwrite_all(j->fd, &sum, sizeof sum, j->end + sizeof head + length) < 0 ||
        (H5SHUF_FAULT() ? (errno = EIO, -1) : fdatasync(j->fd)) < 0) {
        h5shuf__err_note_errno(errno);
        return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot write the journal: %s", j->path, strerror(errno));
    }
    j->end += sizeof head + length + sizeof sum;
    return H5SHUF_OK;
}

void h5shuf__journal_close(struct h5shuf_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
    free(j->path);
    j->path = NULL;
}
