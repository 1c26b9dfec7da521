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
 * fsync, new log, unlink the old log last).  Recovery replays the log named by the journal, record by
 * record and checked, or, when it is gone, knows apply had finished, since the log is unlinked only once
 * the base is synced.
 * The callbacks follow HDF5 1.10's sec2 driver (src/H5FDsec2.c): reads past the end of file give zeros,
 * a write past it extends it, truncate makes the end of file the end of address, eoa is only recorded.
 * What HDF5 1.10.8 does with it (traced, and pinned by tests/test_walfile.c):
 * - H5Fcreate and H5Fopen open the driver twice: a tentative open without CREAT/TRUNC, closed again, then
 *   the real one (H5F_open), so a failure of the first is retried, and a second H5Fopen of a file already
 *   open through the same walfile fails (one open at a time, since the state is the walfile's).
 * - H5Fflush: the cached metadata is written (object headers, B-trees, heaps: below E once committed, so
 *   to the log; about 5-8 KB a flush for a few datasets and groups), set_eoa may shrink the end of
 *   address (the metadata aggregator gives back its unused tail), truncate(closing = 0) makes the end of
 *   file the end of address, then the superblock (48 bytes at 0, to the log) and flush.  H5Fclose does the
 *   same with closing = 1.  The end of address does go below E: after H5Ldelete of a contiguous dataset
 *   at the end of the file, the next flush truncated 402048 bytes to 195 (free space at the end is given
 *   back); the base keeps its committed bytes until apply cuts it, and zero records keep a regrown file
 *   exact.
 * - A chunk partly filled when a commit is made and filled later is rewritten whole, in place: below E,
 *   so the whole chunk goes to the log.
 * - The latest format's superblock (v3) records "open for write" until the close, so a checkpoint taken
 *   after H5Fflush reopens only with the fapl property "clear_status_flags" (H5SHUF_WALFILE_REOPEN).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "fault.h"
#include "walfile.h"

#define H5SHUF_WAL_MAXADDR (((haddr_t)1 << (8 * sizeof(off_t) - 1)) - 1)
#define H5SHUF_WAL_REC_MAGIC 0x4c573548u /* "H5WL" little-endian */
#define H5SHUF_WAL_REC_DATA 1u
#define H5SHUF_WAL_REC_ZERO 2u
#define H5SHUF_WAL_REC_HEADER 32u
#define ZERO_POS UINT64_MAX /* an extent of zeros, in no record */
#define H5SHUF_WAL_COPY_BYTES (1u << 20)

void (*h5shuf__walfile_step_hook)(const char *step);

/* One mapped extent of the logical file below E. */
struct h5shuf_wal_extent {
    uint64_t off, len;
    uint64_t pos;   /* the payload's byte in the log for [off, off + len), or ZERO_POS */
    uint64_t whole; /* 1: exactly one record's payload (so it can be overwritten in place) */
};

struct h5shuf_walfile {
    int base_fd, dir_fd;     /* the caller's */
    uint64_t committed;      /* E: bytes of the base that are the last commit's */
    uint64_t eof, eoa;       /* the logical file's end of file, HDF5's end of address */
    uint64_t base_size;      /* the base's size: committed <= base_size <= max(eof, committed) */
    int log_fd;              /* the current log, -1 when none */
    uint64_t log_bytes;
    uint64_t seq;            /* the current log's sequence number */
    char log_name[256];
    char prefix[H5SHUF_WAL_PREFIX_MAX + 1];
    char base_name[256];     /* for messages */
    struct h5shuf_wal_extent *ext; /* sorted by off, disjoint */
    size_t n, cap;
    int open;                /* an HDF5 file is open on it */
    int prepared;            /* between prepare and apply: c is the prepared commit */
    int broken;              /* a write or resize failed since the last commit: HDF5 may have lost data */
    int discard;             /* h5shuf__walfile_discard: writes and resizes are dropped */
    int nosync;              /* h5shuf__walfile_set_sync(wf, 0): commits are not fsync'ed */
    struct h5shuf_wal_commit c;
};

/* The HDF5 file: the public part HDF5 fills, and ours. */
struct wal_h5fd {
    H5FD_t pub;
    struct h5shuf_walfile *wf;
};

/* The driver info carried by a fapl. */
struct wal_info {
    struct h5shuf_walfile *wf;
    unsigned flags;
};

static void h5shuf__wal_step(const char *what)
{
    if (h5shuf__walfile_step_hook)
        h5shuf__walfile_step_hook(what);
    H5SHUF_KILL_POINT_AT(what); /* (tests/kill_sweep.sh; the step names the point in a trace) */
}

/* An injected I/O fault in test builds (errno EIO), never otherwise: a fault point, or (write set) the
 * Nth write of the process's walfiles when H5SHUF_DEBUG_WAL_EIO_AT=N (tests/disk_full.sh: a disk that fails
 * in the middle of a resumable run). */
static int h5shuf__wal_io_fault(int write)
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

/* Write all n bytes at off: 0 or an errno (a short write that makes no progress is ENOSPC). */
static int h5shuf__wal_write_all(int fd, const void *buf, size_t n, uint64_t off)
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

/* Read up to n bytes at off, zeros past the file's end: 0 or an errno. */
static int h5shuf__wal_read_full(int fd, void *buf, size_t n, uint64_t off)
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

/* fsync: 0 or an errno; EINVAL/ENOTSUP (a file system that cannot sync) count as done. */
static int h5shuf__wal_sync_fd(int fd)
{
    if (h5shuf__wal_io_fault(0))
        return EIO;
    int e = fsync(fd) == 0 ? 0 : errno;
    return e == EINVAL || e == ENOTSUP ? 0 : e;
}

static int h5shuf__wal_truncate_fd(int fd, uint64_t size)
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
static uint64_t h5shuf__wal_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Fill a record header; its hash covers the header's first 24 bytes and the payload. */
static void h5shuf__wal_header(unsigned char h[H5SHUF_WAL_REC_HEADER], unsigned kind, uint64_t off, uint64_t len,
                               const void *payload)
{
    put64(h, (uint64_t)H5SHUF_WAL_REC_MAGIC | (uint64_t)kind << 32);
    put64(h + 8, off);
    put64(h + 16, len);
    put64(h + 24, XXH3_64bits_withSeed(payload, payload ? (size_t)len : 0, XXH3_64bits(h, 24)));
}

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

/* Is name a log of prefix (PREFIX.DIGITS.XXXXXX)? */
static int is_log_name(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0 || name[n] != '.')
        return 0;
    const char *p = name + n + 1, *d = p;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == d || *p != '.')
        return 0;
    p++;
    size_t x = 0;
    for (; p[x]; x++)
        if (!((p[x] >= 'a' && p[x] <= 'z') || (p[x] >= 'A' && p[x] <= 'Z') || (p[x] >= '0' && p[x] <= '9')))
            return 0;
    return x == 6;
}

static int h5shuf__wal_check_prefix(const char *prefix, struct h5shuf_err *err)
{
    if (!prefix || !*prefix || strlen(prefix) > H5SHUF_WAL_PREFIX_MAX || strchr(prefix, '/') ||
        !strcmp(prefix, ".") || !strcmp(prefix, ".."))
        return h5shuf__fail(err, H5SHUF_EINVAL, "invalid log prefix '%s' (a plain name of at most %d bytes)",
                            prefix ? prefix : "(null)", H5SHUF_WAL_PREFIX_MAX);
    return H5SHUF_OK;
}

/* The name of descriptor fd for messages (its /proc link), or "descriptor N". */
static void h5shuf__wal_fd_name(int fd, char *buf, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, cap - 1);
    if (n <= 0)
        snprintf(buf, cap, "descriptor %d", fd);
    else
        buf[n] = '\0';
}

/* The status of errno e, which the error being recorded carries (error.h). */
static int h5shuf__wal_status_of(int e)
{
    h5shuf__err_note_errno(e);
    return e == ENOMEM ? H5SHUF_ENOMEM : e == ENOSPC ? H5SHUF_ENOSPC : H5SHUF_EIO;
}

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

/* Set the logical end of file to n (HDF5's truncate, or a write past it): 0 or an errno. */
static int h5shuf__walfile_set_eof(struct h5shuf_walfile *wf, uint64_t n)
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

/* Write n bytes at off into the logical file: 0 or an errno. */
static int h5shuf__walfile_write_bytes(struct h5shuf_walfile *wf, const void *buf, size_t n, uint64_t off)
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

/* ---- the HDF5 driver's callbacks ---- */

#define WAL_ERR(min, ...) H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_VFL, min, __VA_ARGS__)

static hid_t driver_id = H5I_INVALID_HID;

static herr_t wal_terminate(void)
{
    driver_id = H5I_INVALID_HID;
    return 0;
}

static void *wal_fapl_get(H5FD_t *file)
{
    struct wal_info *i = malloc(sizeof *i);
    if (i) {
        i->wf = ((struct wal_h5fd *)file)->wf;
        i->flags = 0;
    }
    return i;
}

static void *wal_fapl_copy(const void *info)
{
    struct wal_info *i = malloc(sizeof *i);
    if (i)
        memcpy(i, info, sizeof *i);
    return i;
}

static herr_t wal_fapl_free(void *info)
{
    free(info);
    return 0;
}

static H5FD_t *wal_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)name;
    const struct wal_info *info = H5Pget_driver_info(fapl);
    if (!info || !info->wf) {
        WAL_ERR(H5E_BADVALUE, "no walfile in the file access property list");
        return NULL;
    }
    struct h5shuf_walfile *wf = info->wf;
    (void)maxaddr; /* (addresses are checked against H5SHUF_WAL_MAXADDR, the class's maximum, as sec2's) */
    if (wf->open) {
        WAL_ERR(H5E_CANTOPENFILE, "%s: already open through its walfile", wf->base_name);
        return NULL;
    }
    if (flags & H5F_ACC_TRUNC) {
        if (wf->committed > 0 || wf->prepared) {
            WAL_ERR(H5E_CANTOPENFILE, "%s: cannot truncate a file with a commit", wf->base_name);
            return NULL;
        }
        int e = wf->base_size > 0 ? h5shuf__wal_truncate_fd(wf->base_fd, 0) : 0;
        if (e) {
            WAL_ERR(H5E_CANTOPENFILE, "%s: cannot truncate it: %s", wf->base_name, strerror(e));
            return NULL;
        }
        wf->n = 0;
        wf->eof = wf->base_size = 0;
    }
    struct wal_h5fd *f = calloc(1, sizeof *f);
    if (!f) {
        WAL_ERR(H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    f->wf = wf;
    wf->open = 1;
    wf->eoa = 0;
    return &f->pub;
}

static herr_t wal_close(H5FD_t *file)
{
    struct wal_h5fd *f = (struct wal_h5fd *)file;
    f->wf->open = 0;
    free(f);
    return 0;
}

static int wal_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const struct h5shuf_walfile *x = ((const struct wal_h5fd *)a)->wf, *y = ((const struct wal_h5fd *)b)->wf;
    return x < y ? -1 : x > y;
}

static herr_t wal_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
    return 0;
}

static haddr_t wal_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const struct wal_h5fd *)file)->wf->eoa;
}

static herr_t wal_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    if (addr > H5SHUF_WAL_MAXADDR) {
        WAL_ERR(H5E_OVERFLOW, "address %llu past the driver's maximum", (unsigned long long)addr);
        return -1;
    }
    ((struct wal_h5fd *)file)->wf->eoa = addr;
    return 0;
}

static haddr_t wal_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const struct wal_h5fd *)file)->wf->eof;
}

static herr_t wal_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = &((struct wal_h5fd *)file)->wf->base_fd;
    return 0;
}

static herr_t wal_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    (void)type;
    (void)dxpl;
    struct h5shuf_walfile *wf = ((struct wal_h5fd *)file)->wf;
    if (addr == HADDR_UNDEF || addr > H5SHUF_WAL_MAXADDR || size > H5SHUF_WAL_MAXADDR - addr) {
        WAL_ERR(H5E_OVERFLOW, "read of %zu bytes at %llu past the driver's maximum", size, (unsigned long long)addr);
        return -1;
    }
    struct h5shuf_err err = {0};
    if (h5shuf__walfile_pread(wf, buf, size, addr, &err) != H5SHUF_OK) {
        WAL_ERR(H5E_READERROR, "%s", err.msg);
        return -1;
    }
    return 0;
}

static herr_t wal_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)type;
    (void)dxpl;
    struct h5shuf_walfile *wf = ((struct wal_h5fd *)file)->wf;
    if (wf->discard)
        return 0;
    if (addr == HADDR_UNDEF || addr > H5SHUF_WAL_MAXADDR || size > H5SHUF_WAL_MAXADDR - addr) {
        WAL_ERR(H5E_OVERFLOW, "write of %zu bytes at %llu past the driver's maximum", size, (unsigned long long)addr);
        return -1;
    }
    int e = h5shuf__walfile_write_bytes(wf, buf, size, addr);
    if (e) {
        wf->broken = 1; /* HDF5 may go on (H5Dclose's failed chunk write is only its return value) */
        h5shuf__err_note_errno(e); /* (for the h5shuf__fail of HDF5's failure: error.h) */
    }
    if (e == EBUSY)
        WAL_ERR(H5E_WRITEERROR, "%s: written between a commit's prepare and apply", wf->base_name);
    else if (e)
        WAL_ERR(H5E_WRITEERROR, "%s: cannot write %zu bytes at %llu%s%s: %s", wf->base_name, size,
                (unsigned long long)addr, addr < wf->committed ? " to its log " : "",
                addr < wf->committed ? wf->log_name : "", strerror(e));
    return e ? -1 : 0;
}

static herr_t wal_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)file;
    (void)dxpl;
    (void)closing;
    return 0; /* durability is the commit's (prepare syncs) */
}

static herr_t wal_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl;
    (void)closing;
    struct h5shuf_walfile *wf = ((struct wal_h5fd *)file)->wf;
    if (wf->eoa == wf->eof || wf->discard)
        return 0;
    if (wf->prepared) {
        WAL_ERR(H5E_CANTUPDATE, "%s: resized between a commit's prepare and apply", wf->base_name);
        return -1;
    }
    int e = h5shuf__walfile_set_eof(wf, wf->eoa);
    if (e) {
        wf->broken = 1;
        h5shuf__err_note_errno(e);
        WAL_ERR(H5E_CANTUPDATE, "%s: cannot set its size to %llu: %s", wf->base_name, (unsigned long long)wf->eoa,
                strerror(e));
        return -1;
    }
    return 0;
}

static herr_t wal_lock(H5FD_t *file, hbool_t rw)
{
    (void)file;
    (void)rw;
    return 0; /* the base descriptor is the caller's: it excludes others */
}

static herr_t wal_unlock(H5FD_t *file)
{
    (void)file;
    return 0;
}

/* The driver's identifier for HDF5 1.13.2 and later, which refuse a class without its struct version and a
 * value: one of 256-511, the values HDF5 sets aside for drivers not registered with The HDF Group
 * ("Registered Virtual File Drivers", HDF5's documentation). */
#define WAL_DRIVER_VALUE 0x1A5

static const H5FD_class_t wal_class = {
#if H5_VERSION_GE(1, 13, 2)
    .version = H5FD_CLASS_VERSION,
    .value = (H5FD_class_value_t)WAL_DRIVER_VALUE,
#endif
    .name = "h5shuf_walfile",
    .maxaddr = H5SHUF_WAL_MAXADDR,
    .fc_degree = H5F_CLOSE_WEAK,
    .terminate = wal_terminate,
    .fapl_size = sizeof(struct wal_info),
    .fapl_get = wal_fapl_get,
    .fapl_copy = wal_fapl_copy,
    .fapl_free = wal_fapl_free,
    .open = wal_open,
    .close = wal_close,
    .cmp = wal_cmp,
    .query = wal_query,
    .get_eoa = wal_get_eoa,
    .set_eoa = wal_set_eoa,
    .get_eof = wal_get_eof,
    .get_handle = wal_get_handle,
    .read = wal_read,
    .write = wal_write,
    .flush = wal_flush,
    .truncate = wal_truncate,
    .lock = wal_lock,
    .unlock = wal_unlock,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

hid_t h5shuf__walfile_fapl(struct h5shuf_walfile *wf, unsigned flags, struct h5shuf_err *err)
{
    char cause[256];
    if (driver_id < 0 || H5Iis_valid(driver_id) <= 0) {
        driver_id = H5SHUF_FAULT() ? H5I_INVALID_HID : H5FDregister(&wal_class);
        if (driver_id < 0) {
            H5Eclear2(H5E_DEFAULT);
            return h5shuf__fail(err, H5SHUF_EHDF5, "cannot register the walfile driver with HDF5"), H5I_INVALID_HID;
        }
    }
    struct wal_info info = {wf, flags};
    hid_t fapl = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_driver(fapl, driver_id, &info) < 0)
        goto fail;
    if (flags & H5SHUF_WALFILE_REOPEN) {
        /* h5clear's way (HDF5 1.10 tools/src/h5clear): the fapl property "clear_status_flags"
         * (H5F_ACS_CLEAR_STATUS_FLAGS_NAME in H5Fprivate.h; registered in every fapl, private by name only)
         * makes H5F_open zero the superblock's status flags, which say "open for write" after a flush that
         * was never followed by a close; an RDWR open then sets them again as usual.  A version without
         * the property fails here, not at the open. */
        hbool_t clear = 1;
        if (H5Pexist(fapl, "clear_status_flags") <= 0 || H5Pset(fapl, "clear_status_flags", &clear) < 0)
            goto fail;
    }
    return fapl;
fail:
    snprintf(cause, sizeof cause, "%s", "HDF5 refused the walfile driver's file access property list");
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Eclear2(H5E_DEFAULT);
    h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", wf->base_name, cause);
    return H5I_INVALID_HID;
}

/* ---- commits ---- */

/* XXH3_64bits of the first n bytes of fd: 0 or an errno. */
static int h5shuf__wal_hash_file(int fd, uint64_t n, uint64_t *hash)
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

/* Write len zeros at off of fd: 0 or an errno. */
static int h5shuf__wal_write_zeros(int fd, uint64_t off, uint64_t len)
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

/* Copy len bytes at from of src to to of dst through buf (H5SHUF_WAL_COPY_BYTES): 0 or an errno. */
static int h5shuf__wal_copy_range(int src, uint64_t from, int dst, uint64_t to, uint64_t len, unsigned char *buf)
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

/* ---- recovery ---- */

/* Check every record of the log fd of n bytes and, when base >= 0, replay them into base (only a log
 * already checked whole: nothing of a damaged one is written).  0, an errno, or -1 with *bad set to
 * what is wrong. */
static int replay(int fd, uint64_t n, int base, const char **bad)
{
    unsigned char h[H5SHUF_WAL_REC_HEADER], *buf = malloc(H5SHUF_WAL_COPY_BYTES);
    int e = 0;
    if (!buf)
        return ENOMEM;
    for (uint64_t at = 0; at < n;) {
        if (n - at < H5SHUF_WAL_REC_HEADER) {
            *bad = "a record's header is cut short";
            e = -1;
            break;
        }
        if ((e = h5shuf__wal_read_full(fd, h, H5SHUF_WAL_REC_HEADER, at)) != 0)
            break;
        const uint64_t w0 = h5shuf__wal_get64(h), off = h5shuf__wal_get64(h + 8), len = h5shuf__wal_get64(h + 16),
                       sum = h5shuf__wal_get64(h + 24);
        const unsigned kind = (unsigned)(w0 >> 32);
        if ((uint32_t)w0 != H5SHUF_WAL_REC_MAGIC || (kind != H5SHUF_WAL_REC_DATA && kind != H5SHUF_WAL_REC_ZERO)) {
            *bad = "a record has no valid header";
            e = -1;
            break;
        }
        const uint64_t plen = kind == H5SHUF_WAL_REC_DATA ? len : 0;
        if (off > H5SHUF_WAL_MAXADDR || len > H5SHUF_WAL_MAXADDR - off || plen > n - at - H5SHUF_WAL_REC_HEADER) {
            *bad = "a record's extent is out of bounds";
            e = -1;
            break;
        }
        /* check the record whole before writing any of it */
        XXH64_hash_t seed = XXH3_64bits(h, 24), got;
        if (kind == H5SHUF_WAL_REC_ZERO) {
            got = XXH3_64bits_withSeed(NULL, 0, seed);
        } else if (plen <= H5SHUF_WAL_COPY_BYTES) {
            if ((e = h5shuf__wal_read_full(fd, buf, (size_t)plen, at + H5SHUF_WAL_REC_HEADER)) != 0)
                break;
            got = XXH3_64bits_withSeed(buf, (size_t)plen, seed);
        } else {
            XXH3_state_t *s = XXH3_createState();
            if (!s) {
                e = ENOMEM;
                break;
            }
            XXH3_64bits_reset_withSeed(s, seed);
            for (uint64_t k = 0; k < plen && !e; k += H5SHUF_WAL_COPY_BYTES) {
                size_t m = plen - k < H5SHUF_WAL_COPY_BYTES ? (size_t)(plen - k) : H5SHUF_WAL_COPY_BYTES;
                if ((e = h5shuf__wal_read_full(fd, buf, m, at + H5SHUF_WAL_REC_HEADER + k)) == 0)
                    XXH3_64bits_update(s, buf, m);
            }
            got = XXH3_64bits_digest(s);
            XXH3_freeState(s);
            if (e)
                break;
        }
        if (got != sum) {
            *bad = "a record's checksum does not match";
            e = -1;
            break;
        }
        if (base < 0)
            e = 0;
        else if (h5shuf__wal_step("replay-write"), kind == H5SHUF_WAL_REC_ZERO)
            e = h5shuf__wal_write_zeros(base, off, len);
        else if (plen <= H5SHUF_WAL_COPY_BYTES)
            e = h5shuf__wal_write_all(base, buf, (size_t)plen, off);
        else
            e = h5shuf__wal_copy_range(fd, at + H5SHUF_WAL_REC_HEADER, base, off, plen, buf);
        if (e)
            break;
        at += H5SHUF_WAL_REC_HEADER + plen;
    }
    free(buf);
    return e;
}

/* Remove the logs of prefix in dir other than keep (NULL: all); 0 or an errno. */
static int remove_logs(int dir, const char *prefix, const char *keep)
{
    int d = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0)
        return errno;
    DIR *ds = fdopendir(d);
    if (!ds) {
        int e = errno;
        close(d);
        return e;
    }
    int e = 0;
    struct dirent *de;
    while ((de = readdir(ds)) != NULL) {
        struct stat sb;
        if (!is_log_name(de->d_name, prefix) || (keep && !strcmp(de->d_name, keep)))
            continue;
        if (fstatat(dir, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue;
        h5shuf__wal_step("unlink");
        if (unlinkat(dir, de->d_name, 0) != 0 && errno != ENOENT)
            e = errno;
    }
    closedir(ds);
    return e;
}

int h5shuf__walfile_recover(int base_fd, int dir_fd, const char *log_prefix, const struct h5shuf_wal_commit *c,
                            struct h5shuf_err *err)
{
    char base[256], cname[256];
    int st = h5shuf__wal_check_prefix(log_prefix, err), e = 0, fd = -1;
    const char *bad = NULL, *what = "";
    if (st != H5SHUF_OK)
        return st;
    h5shuf__wal_fd_name(base_fd, base, sizeof base);
    snprintf(cname, sizeof cname, "%.*s", (int)sizeof c->log_name - 1, c->log_name);
    if (cname[0] && !is_log_name(cname, log_prefix)) /* "": a state with no log (a file made and synced) */
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: the commit names '%s', not a log of '%s'", base, cname, log_prefix);
    if (c->eof > H5SHUF_WAL_MAXADDR)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: the commit's size %llu is out of range", base,
                            (unsigned long long)c->eof);
    fd = cname[0] ? openat(dir_fd, cname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : (errno = ENOENT, -1);
    if (fd < 0 && errno != ENOENT) {
        e = errno;
        what = "open its log";
        goto fail;
    }
    if (fd >= 0) {
        struct stat sb;
        uint64_t hash = 0;
        if (fstat(fd, &sb) != 0) {
            e = errno;
            what = "read its log";
            goto fail;
        }
        if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != c->log_bytes) {
            st = h5shuf__fail(err, H5SHUF_EIO,
                              "%s: its log %s has %llu bytes where the commit recorded %llu: the checkpoint cannot be "
                              "trusted",
                              base, cname, (unsigned long long)sb.st_size, (unsigned long long)c->log_bytes);
            goto out;
        }
        if ((e = h5shuf__wal_hash_file(fd, c->log_bytes, &hash)) != 0) {
            what = "read its log";
            goto fail;
        }
        if (hash != c->log_hash) {
            st = h5shuf__fail(err, H5SHUF_EIO,
                              "%s: its log %s does not match the commit's checksum: the checkpoint cannot be trusted",
                              base, cname);
            goto out;
        }
        if ((e = replay(fd, c->log_bytes, -1, &bad)) != 0 || (e = replay(fd, c->log_bytes, base_fd, &bad)) != 0) {
            if (e < 0) {
                st = h5shuf__fail(err, H5SHUF_EIO, "%s: its log %s is damaged (%s): the checkpoint cannot be trusted",
                                  base, cname, bad);
                goto out;
            }
            what = "replay its log into it";
            goto fail;
        }
    }
    what = "cut it to its committed size";
    h5shuf__wal_step("truncate");
    if ((e = h5shuf__wal_truncate_fd(base_fd, c->eof)) != 0)
        goto fail;
    what = "sync it to disk";
    h5shuf__wal_step("base-sync");
    if ((e = h5shuf__wal_sync_fd(base_fd)) != 0)
        goto fail;
    /* the base is the commit, durably: no log is needed any more */
    what = "remove its old logs";
    if ((e = remove_logs(dir_fd, log_prefix, NULL)) != 0)
        goto fail;
    h5shuf__wal_step("dir-sync");
    if ((e = h5shuf__wal_sync_fd(dir_fd)) != 0) {
        what = "sync its logs' directory";
        goto fail;
    }
    goto out;
fail:
    st = h5shuf__fail(err, h5shuf__wal_status_of(e), "%s: cannot %s (log %s): %s", base, what,
                      cname, strerror(e));
out:
    if (fd >= 0)
        close(fd);
    return st;
}

void h5shuf__walfile_discard(struct h5shuf_walfile *wf)
{
    if (wf)
        wf->discard = 1;
}

hid_t h5shuf__walfile_driver(void)
{
    return driver_id >= 0 && H5Iis_valid(driver_id) > 0 ? driver_id : H5I_INVALID_HID;
}

void h5shuf__walfile_set_sync(struct h5shuf_walfile *wf, int sync)
{
    if (wf)
        wf->nosync = !sync;
}
