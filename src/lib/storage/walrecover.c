/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walrecover.c - after a crash, a file brought back to the commit its caller's journal recorded last
 * (walrecover.h).  Recovery replays the log named by the journal, record by record and checked, or, when it
 * is gone, knows apply had finished, since the log is unlinked only once the base is synced (walfile.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "walio.h"
#include "walrecover.h"

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
