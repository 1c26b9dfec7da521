/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walfile.c - an HDF5 file driver (VFD) whose committed bytes are never overwritten: writes below the
 * committed end of file go to a redo log (walfile.h).
 *
 * HDF5 rewrites its metadata in place (object headers, B-trees, the superblock's end-of-address), so a
 * scratch file flushed at a checkpoint is damaged by the writes after it, and a run killed later cannot
 * go back to that checkpoint.  As SQLite's write-ahead log (https://sqlite.org/wal.html), this driver
 * splits the file at the committed end of file E:
 * - bytes at or above E were never committed: written straight into the base file;
 * - bytes below E are frozen: a write there is appended to the log as a self-describing record
 *   (header {magic, kind, offset, length, XXH3 of header and payload} + payload), and an in-memory map
 *   of sorted, disjoint extents [off, off + len) -> position in the log serves reads (binary search);
 *   a later write over mapped extents trims or splits them, and a write of exactly a whole record's
 *   extent overwrites that record in place (HDF5 rewrites the same object at the same size).
 * - shrinking the file below E only moves the logical end of file; growing it back over [old eof, E)
 *   appends a "zero" record, so the log alone says what the bytes are.
 * A commit: prepare (fsync base, log and directory; the log's size and XXH3), the caller's journal
 * record (the commit point), apply (copy the mapped extents into the base, cut it to the commit's eof,
 * fsync, new log, unlink the old log last).  After a crash, walrecover.c brings the base back to a recorded
 * commit; HDF5 reaches the walfile through the file driver of walvfd.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walfile.h"
#include "walio.h"

#define ZERO_POS UINT64_MAX /* an extent of zeros, in no record */

/* One mapped extent of the logical file below E. */
struct h5shuf_wal_extent {
    uint64_t off, len;
    uint64_t pos;   /* the payload's byte in the log for [off, off + len), or ZERO_POS */
    uint64_t whole; /* 1: exactly one record's payload (so it can be overwritten in place) */
};

/*-*************************************
*  The extent map and the log
***************************************/

/* The first extent whose end is past off. */
static size_t find(const struct h5shuf_walfile *wf, uint64_t off)
{
    size_t lo = 0, hi = wf->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (wf->ext[mid].off + wf->ext[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Map [off, off + len) to pos (ZERO_POS: zeros), trimming or splitting what it covers; 0 or ENOMEM. */
static int map_put(struct h5shuf_walfile *wf, uint64_t off, uint64_t len, uint64_t pos, int whole)
{
    const uint64_t end = off + len;
    size_t i = find(wf, off), j = i;
    while (j < wf->n && wf->ext[j].off < end)
        j++;
    /* [i, j) overlap; a head of ext[i] before off and a tail of ext[j - 1] after end survive */
    struct h5shuf_wal_extent head = {0, 0, 0, 0}, tail = {0, 0, 0, 0};
    if (i < j && wf->ext[i].off < off) {
        head = wf->ext[i];
        head.len = off - head.off;
        head.whole = 0;
    }
    if (i < j && wf->ext[j - 1].off + wf->ext[j - 1].len > end) {
        tail = wf->ext[j - 1];
        const uint64_t cut = end - tail.off;
        tail.off = end;
        tail.len -= cut;
        if (tail.pos != ZERO_POS)
            tail.pos += cut;
        tail.whole = 0;
    }
    const size_t add = 1 + (head.len > 0) + (tail.len > 0);
    const size_t need = wf->n - (j - i) + add;
    if (need > wf->cap) {
        size_t cap = wf->cap ? wf->cap * 2 : 64;
        while (cap < need)
            cap *= 2;
        struct h5shuf_wal_extent *e = realloc(wf->ext, cap * sizeof *e);
        if (!e)
            return ENOMEM;
        wf->ext = e;
        wf->cap = cap;
    }
    memmove(wf->ext + i + add, wf->ext + j, (wf->n - j) * sizeof *wf->ext);
    size_t k = i;
    if (head.len)
        wf->ext[k++] = head;
    wf->ext[k++] = (struct h5shuf_wal_extent){off, len, pos, (uint64_t)whole};
    if (tail.len)
        wf->ext[k++] = tail;
    wf->n = need;
    return 0;
}

/* Append a record (payload NULL: a zero record) to the log and map it: 0 or an errno. */
static int log_append(struct h5shuf_walfile *wf, unsigned kind, uint64_t off, uint64_t len, const void *payload)
{
    unsigned char h[H5SHUF_WAL_REC_HEADER];
    h5shuf__wal_header(h, kind, off, len, payload);
    int e;
    if (kind == H5SHUF_WAL_REC_DATA) {
        /* a write of exactly a whole record's extent: overwrite the record in place */
        size_t i = find(wf, off);
        if (i < wf->n && wf->ext[i].off == off && wf->ext[i].len == len && wf->ext[i].whole) {
            h5shuf__wal_step("log-write");
            const uint64_t pos = wf->ext[i].pos;
            if ((e = h5shuf__wal_write_all(wf->log_fd, payload, (size_t)len, pos)) != 0 ||
                (e = h5shuf__wal_write_all(wf->log_fd, h, H5SHUF_WAL_REC_HEADER, pos - H5SHUF_WAL_REC_HEADER)) != 0)
                wf->broken = 1; /* (the record no longer matches its hash) */
            return e;
        }
    }
    if (wf->log_bytes > UINT64_MAX - H5SHUF_WAL_REC_HEADER - len)
        return EFBIG;
    h5shuf__wal_step("log-write");
    if ((e = h5shuf__wal_write_all(wf->log_fd, h, H5SHUF_WAL_REC_HEADER, wf->log_bytes)) != 0)
        return e;
    if (payload &&
        (e = h5shuf__wal_write_all(wf->log_fd, payload, (size_t)len, wf->log_bytes + H5SHUF_WAL_REC_HEADER)) != 0)
        return e;
    if ((e = map_put(wf, off, len, payload ? wf->log_bytes + H5SHUF_WAL_REC_HEADER : ZERO_POS, payload != NULL)) != 0)
        return e; /* (the record stays in the log unmapped; a replay writes what HDF5 was told failed) */
    wf->log_bytes += H5SHUF_WAL_REC_HEADER + (payload ? len : 0);
    return 0;
}

/* Open a new empty log PREFIX.SEQ.XXXXXX in the directory: 0 or an errno; *fd and name set. */
static int log_create(struct h5shuf_walfile *wf, uint64_t seq, int *fd, char name[256])
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    h5shuf__wal_step("log-create");
    for (int tries = 0; tries < 1000; tries++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            for (size_t i = 0; i < sizeof r; i++)
                r[i] = (unsigned char)(rand() >> 7);
        int n = snprintf(name, 256, "%s.%llu.", wf->prefix, (unsigned long long)seq);
        for (size_t i = 0; i < sizeof r; i++)
            name[n + (int)i] = set[r[i] % (sizeof set - 1)];
        name[n + 6] = '\0';
        if (h5shuf__wal_io_fault(0))
            return EIO;
        *fd = openat(wf->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (*fd >= 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

/*-*************************************
*  A write-ahead file: open, read, write
***************************************/

int h5shuf__walfile_new(int base_fd, int dir_fd, uint64_t committed_eof, const char *log_prefix,
                        struct h5shuf_walfile **wfp, struct h5shuf_err *err)
{
    *wfp = NULL;
    int st = h5shuf__wal_check_prefix(log_prefix, err), e;
    if (st != H5SHUF_OK)
        return st;
    struct h5shuf_walfile *wf = calloc(1, sizeof *wf);
    if (!wf)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    wf->base_fd = base_fd;
    wf->dir_fd = dir_fd;
    wf->log_fd = -1;
    snprintf(wf->prefix, sizeof wf->prefix, "%s", log_prefix);
    h5shuf__wal_fd_name(base_fd, wf->base_name, sizeof wf->base_name);
    struct stat sb;
    if (fstat(base_fd, &sb) != 0) {
        st = h5shuf__fail(err, H5SHUF_EIO, "%s: %s", wf->base_name, strerror(errno));
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = h5shuf__fail(err, H5SHUF_EINVAL, "%s: not a regular file", wf->base_name);
        goto out;
    }
    if ((uint64_t)sb.st_size < committed_eof) {
        st = h5shuf__fail(err, H5SHUF_EIO,
                          "%s: %llu bytes, shorter than its committed %llu (recover it from its journal first)",
                          wf->base_name, (unsigned long long)sb.st_size, (unsigned long long)committed_eof);
        goto out;
    }
    if ((uint64_t)sb.st_size > committed_eof && (e = h5shuf__wal_truncate_fd(base_fd, committed_eof)) != 0) {
        st = h5shuf__fail(err, H5SHUF_EIO, "%s: cannot cut it to its committed %llu bytes: %s", wf->base_name,
                          (unsigned long long)committed_eof, strerror(e));
        goto out;
    }
    wf->committed = wf->eof = wf->base_size = committed_eof;
    if ((e = log_create(wf, wf->seq, &wf->log_fd, wf->log_name)) != 0) {
        char dir[256];
        h5shuf__wal_fd_name(dir_fd, dir, sizeof dir);
        st = h5shuf__fail(err, h5shuf__wal_status_of(e), "%s: cannot create its log in %s: %s", wf->base_name, dir,
                          strerror(e));
    }
out:
    if (st != H5SHUF_OK)
        free(wf);
    else
        *wfp = wf;
    return st;
}

void h5shuf__walfile_free(struct h5shuf_walfile *wf)
{
    if (!wf)
        return;
    if (wf->log_fd >= 0) {
        close(wf->log_fd);
        if (!wf->prepared)
            unlinkat(wf->dir_fd, wf->log_name, 0);
    }
    free(wf->ext);
    free(wf);
}

int h5shuf__walfile_pread(struct h5shuf_walfile *wf, void *buf, size_t n, uint64_t off, struct h5shuf_err *err)
{
    unsigned char *p = buf;
    if (n == 0)
        return H5SHUF_OK;
    if (off >= wf->eof) {
        memset(p, 0, n);
        return H5SHUF_OK;
    }
    const uint64_t lim = off + n < wf->eof ? off + n : wf->eof; /* (off + n cannot wrap: n is a buffer) */
    if (lim < off + n)
        memset(p + (lim - off), 0, (size_t)(off + n - lim));
    int e = 0;
    uint64_t at = off; /* bytes before at are done */
    if (off < wf->committed) {
        /* below E: the log's extents, the base between them (read once: a rewritten chunk is not read twice) */
        for (size_t i = find(wf, off); i < wf->n && wf->ext[i].off < lim; i++) {
            const struct h5shuf_wal_extent *x = &wf->ext[i];
            const uint64_t s = x->off > at ? x->off : at, t = x->off + x->len < lim ? x->off + x->len : lim;
            if (s > at && (e = h5shuf__wal_read_full(wf->base_fd, p + (at - off), (size_t)(s - at), at)) != 0)
                goto base_fail;
            if (x->pos == ZERO_POS)
                memset(p + (s - off), 0, (size_t)(t - s));
            else if ((e = h5shuf__wal_read_full(wf->log_fd, p + (s - off), (size_t)(t - s), x->pos + (s - x->off))) != 0)
                return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot read its log %s: %s", wf->base_name, wf->log_name,
                                    strerror(e));
            at = t;
        }
    }
    if (at < lim && (e = h5shuf__wal_read_full(wf->base_fd, p + (at - off), (size_t)(lim - at), at)) != 0)
        goto base_fail;
    return H5SHUF_OK;
base_fail:
    return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot read it: %s", wf->base_name, strerror(e));
}

int h5shuf__walfile_set_eof(struct h5shuf_walfile *wf, uint64_t n)
{
    int e;
    if (n < wf->eof) {
        /* the base keeps [0, E); past it, nothing beyond the new end may linger */
        const uint64_t keep = n > wf->committed ? n : wf->committed;
        if (wf->base_size > keep) {
            h5shuf__wal_step("truncate");
            if ((e = h5shuf__wal_truncate_fd(wf->base_fd, keep)) != 0)
                return e;
            wf->base_size = keep;
        }
    } else if (n > wf->eof) {
        /* bytes cut off below E come back as zeros (sec2's ftruncate gives zeros) */
        if (wf->eof < wf->committed) {
            const uint64_t to = n < wf->committed ? n : wf->committed;
            if ((e = log_append(wf, H5SHUF_WAL_REC_ZERO, wf->eof, to - wf->eof, NULL)) != 0)
                return e;
        }
    }
    wf->eof = n;
    return 0;
}

int h5shuf__walfile_write_bytes(struct h5shuf_walfile *wf, const void *buf, size_t n, uint64_t off)
{
    const unsigned char *p = buf;
    const uint64_t end = off + n;
    int e;
    if (wf->prepared)
        return EBUSY;
    if (off > wf->eof && wf->eof < wf->committed) { /* a gap below E that was cut off: zeros */
        const uint64_t to = off < wf->committed ? off : wf->committed;
        if ((e = log_append(wf, H5SHUF_WAL_REC_ZERO, wf->eof, to - wf->eof, NULL)) != 0)
            return e;
        wf->eof = to;
    }
    if (off < wf->committed) {
        const uint64_t t = end < wf->committed ? end : wf->committed;
        if ((e = log_append(wf, H5SHUF_WAL_REC_DATA, off, t - off, p)) != 0)
            return e;
    }
    if (end > wf->committed) {
        const uint64_t s = off > wf->committed ? off : wf->committed;
        h5shuf__wal_step("base-write");
        if ((e = h5shuf__wal_write_all(wf->base_fd, p + (s - off), (size_t)(end - s), s)) != 0)
            return e;
        if (end > wf->base_size)
            wf->base_size = end;
    }
    if (end > wf->eof)
        wf->eof = end;
    return 0;
}

/*-*************************************
*  Commits
***************************************/

int h5shuf__walfile_prepare(struct h5shuf_walfile *wf, struct h5shuf_wal_commit *c, struct h5shuf_err *err)
{
    int e;
    char what[300];
    if (wf->broken)
        return h5shuf__fail(err, H5SHUF_EIO,
                            "%s: a write to it failed since its last commit, so its state cannot be committed (recover "
                            "the last commit)",
                            wf->base_name);
    if (wf->prepared) {
        *c = wf->c;
        return H5SHUF_OK;
    }
    memset(c, 0, sizeof *c);
    snprintf(what, sizeof what, "sync its log %s to disk", wf->log_name);
    h5shuf__wal_step("log-sync");
    if (!wf->nosync && (e = h5shuf__wal_sync_fd(wf->log_fd)) != 0)
        goto fail;
    snprintf(what, sizeof what, "sync it to disk");
    h5shuf__wal_step("base-sync");
    if (!wf->nosync && (e = h5shuf__wal_sync_fd(wf->base_fd)) != 0)
        goto fail;
    /* the log's name must survive a power loss with the journal record that names it */
    snprintf(what, sizeof what, "sync the directory of its log %s", wf->log_name);
    h5shuf__wal_step("dir-sync");
    if (!wf->nosync && (e = h5shuf__wal_sync_fd(wf->dir_fd)) != 0)
        goto fail;
    snprintf(what, sizeof what, "read back its log %s", wf->log_name);
    if ((e = h5shuf__wal_hash_file(wf->log_fd, wf->log_bytes, &c->log_hash)) != 0)
        goto fail;
    c->eof = wf->eof;
    c->log_bytes = wf->log_bytes;
    snprintf(c->log_name, sizeof c->log_name, "%s", wf->log_name);
    wf->c = *c;
    wf->prepared = 1;
    return H5SHUF_OK;
fail:
    return h5shuf__fail(err, h5shuf__wal_status_of(e), "%s: cannot %s: %s", wf->base_name, what, strerror(e));
}

int h5shuf__walfile_apply(struct h5shuf_walfile *wf, struct h5shuf_err *err)
{
    if (!wf->prepared)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: apply without a prepared commit", wf->base_name);
    int e, fd = -1;
    char name[256];
    unsigned char *buf = NULL;
    const char *what;
    /* the next log first: a failure to make it leaves everything as it was */
    what = "create a new log";
    if ((e = log_create(wf, wf->seq + 1, &fd, name)) != 0)
        goto fail;
    what = "copy its log into it";
    if (wf->n && !(buf = malloc(H5SHUF_WAL_COPY_BYTES))) {
        e = ENOMEM;
        goto fail;
    }
    /* the map is the log's net effect: the extents in address order (the records past eof are cut) */
    for (size_t i = 0; i < wf->n; i++) {
        const struct h5shuf_wal_extent *x = &wf->ext[i];
        if (x->off >= wf->c.eof)
            break;
        const uint64_t len = x->off + x->len <= wf->c.eof ? x->len : wf->c.eof - x->off;
        h5shuf__wal_step("replay-write");
        e = x->pos == ZERO_POS ? h5shuf__wal_write_zeros(wf->base_fd, x->off, len)
                               : h5shuf__wal_copy_range(wf->log_fd, x->pos, wf->base_fd, x->off, len, buf);
        if (e)
            goto fail;
    }
    what = "cut it to its committed size";
    h5shuf__wal_step("truncate");
    if ((e = h5shuf__wal_truncate_fd(wf->base_fd, wf->c.eof)) != 0)
        goto fail;
    what = "sync it to disk";
    h5shuf__wal_step("base-sync");
    if (!wf->nosync && (e = h5shuf__wal_sync_fd(wf->base_fd)) != 0)
        goto fail;
    /* the base holds the commit durably: the old log may go */
    h5shuf__wal_step("unlink");
    unlinkat(wf->dir_fd, wf->log_name, 0);
    close(wf->log_fd);
    wf->log_fd = fd;
    snprintf(wf->log_name, sizeof wf->log_name, "%s", name);
    wf->seq++;
    wf->log_bytes = 0;
    wf->n = 0;
    wf->committed = wf->eof = wf->base_size = wf->c.eof;
    wf->prepared = 0;
    free(buf);
    return H5SHUF_OK;
fail:
    free(buf);
    if (fd >= 0) {
        close(fd);
        unlinkat(wf->dir_fd, name, 0);
    }
    return h5shuf__fail(err, h5shuf__wal_status_of(e), "%s: cannot %s (the commit stands; apply again or recover): %s",
                        wf->base_name, what, strerror(e));
}

void h5shuf__walfile_discard(struct h5shuf_walfile *wf)
{
    if (wf)
        wf->discard = 1;
}

void h5shuf__walfile_set_sync(struct h5shuf_walfile *wf, int sync)
{
    if (wf)
        wf->nosync = !sync;
}
