/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * walrecover.h - a walfile's base brought back to a recorded commit after a crash (walrecover.c).
 */
#ifndef H5SHUF_WALRECOVER_H
#define H5SHUF_WALRECOVER_H

#include "base.h"
#include "error.h"
#include "walfile.h"

/* After a crash: make base_fd exactly the file of commit c.  If c's log is in dir_fd, it must have
 * c->log_bytes bytes hashing to c->log_hash (otherwise the state cannot be trusted: an error), and its
 * records are replayed into the base (again, if apply had begun: replay is idempotent); a missing log
 * means apply had finished, and a commit naming no log ("") is a file that was synced at that size.  The base is then cut to c->eof and synced, and the logs of log_prefix
 * other than c's (uncommitted ones) and then c's own are removed.  Returns H5SHUF_OK or a status with a
 * one-line cause in err.  Open the file again with h5shuf__walfile_new(..., c->eof, ...) and a fapl of
 * H5SHUF_WALFILE_REOPEN. */
H5SHUF_INTERNAL int h5shuf__walfile_recover(int base_fd, int dir_fd, const char *log_prefix,
                                            const struct h5shuf_wal_commit *c, struct h5shuf_err *err);

#endif /* H5SHUF_WALRECOVER_H */
