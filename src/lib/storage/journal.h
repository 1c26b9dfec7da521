/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal.h - the journal of a resumable run: an append-only file of checksummed records, each made
 * durable (fdatasync) before the call returns (journal.c).  It is the only source of truth about what an
 * interrupted run finished: a state is reused only when a record that names it verifies.
 *
 * Format (little-endian): a 16-byte header "h5shuf-journal1\n", then records of
 *     u32 magic 0x4a524543 ("CERJ"), u32 kind, u64 length, length bytes of payload,
 *     u64 XXH3-64 of (kind, length, payload).
 * A record is trusted only when it is whole and its checksum holds; the first one that is not (a torn
 * last write after a crash) ends the journal, and the next append overwrites it.  The same write-ahead
 * idea as SQLite's and ext4's journals: a state is first made durable, then its record is appended.
 */
#ifndef H5SHUF_JOURNAL_H
#define H5SHUF_JOURNAL_H

/* Bytes of a journal's header ("h5shuf-journal1\n"): a shorter file was cut before it was whole. */
#define H5SHUF_JOURNAL_HEADER_BYTES 16

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* A journal open for appending. */
struct h5shuf_journal {
    int fd;          /* owned; -1 when closed */
    uint64_t end;    /* bytes of the valid journal: the next record goes here */
    char *path;      /* for messages (owned) */
};

/* One record read back: payload[0 .. length) (owned by the reader's array). */
struct h5shuf_record {
    uint32_t kind;
    char *payload;   /* NUL-terminated copy (payloads are text; the NUL is not counted in length) */
    uint64_t length;
};

/* Create the journal `name` in directory dirfd (openat O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), write its
 * header and fsync it and the directory.  path is dir/name, for messages.  H5SHUF_OK, or H5SHUF_EIO /
 * ENOMEM with one line in err. */
H5SHUF_INTERNAL int h5shuf__journal_create(int dirfd, const char *name, const char *path, struct h5shuf_journal *j,
                                           struct h5shuf_err *err);
/* Open an existing journal (O_RDWR|O_NOFOLLOW, a regular file of this effective user) and read its valid
 * records into *recs (n of them, freed with h5shuf__records_free); j then appends after the last valid
 * one.  A file that is not a journal (no header) is H5SHUF_EINVAL. */
H5SHUF_INTERNAL int h5shuf__journal_open(int dirfd, const char *name, const char *path, struct h5shuf_journal *j,
                                         struct h5shuf_record **recs, size_t *n, struct h5shuf_err *err);
/* Append a record (kind, payload of length bytes) and fdatasync: on H5SHUF_OK it survives a crash. */
H5SHUF_INTERNAL int h5shuf__journal_append(struct h5shuf_journal *j, uint32_t kind, const char *payload,
                                           uint64_t length, struct h5shuf_err *err);
/* Close (safe on a closed or zeroed journal). */
H5SHUF_INTERNAL void h5shuf__journal_close(struct h5shuf_journal *j);
H5SHUF_INTERNAL void h5shuf__records_free(struct h5shuf_record *recs, size_t n);

#endif /* H5SHUF_JOURNAL_H */
