/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walio.h - the durable I/O under a walfile and its recovery (walio.c): writes, reads, syncs and
 * truncations of a base file and its logs, each a step of a commit; a log record's header; the checks and
 * names their messages use.
 */
#ifndef H5SHUF_WALIO_H
#define H5SHUF_WALIO_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "error.h"

/* The longest log prefix (bytes): log names are PREFIX.SEQ.XXXXXX and must fit NAME_MAX. */
#define H5SHUF_WAL_PREFIX_MAX 200

/* The largest address of a walfile (off_t's), the driver's maximum as sec2's. */
#define H5SHUF_WAL_MAXADDR (((haddr_t)1 << (8 * sizeof(off_t) - 1)) - 1)
/* A log record: a header of H5SHUF_WAL_REC_HEADER bytes (magic and kind, offset, length, XXH3 of header and
 * payload: h5shuf__wal_header), then a data record's payload; a zero record has none. */
#define H5SHUF_WAL_REC_MAGIC 0x4c573548u /* "H5WL" little-endian */
#define H5SHUF_WAL_REC_DATA 1u
#define H5SHUF_WAL_REC_ZERO 2u
#define H5SHUF_WAL_REC_HEADER 32u
/* Bytes copied or hashed at a time. */
#define H5SHUF_WAL_COPY_BYTES (1u << 20)

/* Tests only: when set, called with the name of each durable step before it is taken ("log-write",
 * "base-write", "log-sync", "base-sync", "dir-sync", "log-create", "replay-write", "truncate", "unlink"),
 * so that a test can kill the process at the Nth one (tests/test_walfile.c's H5SHUF_WALFILE_KILL_AT). */
H5SHUF_INTERNAL extern void (*h5shuf__walfile_step_hook)(const char *step);

/* Before each durable step: h5shuf__walfile_step_hook, and a kill point named by the step. */
H5SHUF_INTERNAL void h5shuf__wal_step(const char *what);

/* An injected I/O fault in test builds (errno EIO), never otherwise: a fault point, or (write set) the
 * Nth write of the process's walfiles when H5SHUF_DEBUG_WAL_EIO_AT=N (tests/disk_full.sh: a disk that fails
 * in the middle of a resumable run). */
H5SHUF_INTERNAL int h5shuf__wal_io_fault(int write);

/* Write all n bytes at off: 0 or an errno (a short write that makes no progress is ENOSPC). */
H5SHUF_INTERNAL int h5shuf__wal_write_all(int fd, const void *buf, size_t n, uint64_t off);

/* Read up to n bytes at off, zeros past the file's end: 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__wal_read_full(int fd, void *buf, size_t n, uint64_t off);

/* fsync: 0 or an errno; EINVAL/ENOTSUP (a file system that cannot sync) count as done. */
H5SHUF_INTERNAL int h5shuf__wal_sync_fd(int fd);

/* ftruncate to size bytes: 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__wal_truncate_fd(int fd, uint64_t size);

/* Little-endian fields of a record header. */
H5SHUF_INTERNAL uint64_t h5shuf__wal_get64(const unsigned char *p);

/* Fill a record header; its hash covers the header's first 24 bytes and the payload. */
H5SHUF_INTERNAL void h5shuf__wal_header(unsigned char h[H5SHUF_WAL_REC_HEADER], unsigned kind, uint64_t off,
                                        uint64_t len, const void *payload);

/* H5SHUF_OK when prefix is a plain name of at most H5SHUF_WAL_PREFIX_MAX bytes, else H5SHUF_EINVAL with the
 * cause in err. */
H5SHUF_INTERNAL int h5shuf__wal_check_prefix(const char *prefix, struct h5shuf_err *err);

/* The name of descriptor fd for messages (its /proc link), or "descriptor N". */
H5SHUF_INTERNAL void h5shuf__wal_fd_name(int fd, char *buf, size_t cap);

/* The status of errno e, which the error being recorded carries (error.h). */
H5SHUF_INTERNAL int h5shuf__wal_status_of(int e);

/* XXH3_64bits of the first n bytes of fd: 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__wal_hash_file(int fd, uint64_t n, uint64_t *hash);

/* Write len zeros at off of fd: 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__wal_write_zeros(int fd, uint64_t off, uint64_t len);

/* Copy len bytes at from of src to to of dst through buf (H5SHUF_WAL_COPY_BYTES): 0 or an errno. */
H5SHUF_INTERNAL int h5shuf__wal_copy_range(int src, uint64_t from, int dst, uint64_t to, uint64_t len,
                                           unsigned char *buf);

#endif /* H5SHUF_WALIO_H */
