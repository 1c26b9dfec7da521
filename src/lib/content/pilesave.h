/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pilesave.h - a pile set saved at a checkpoint of pass 1 and restored by the resumed run (pilesave.c).
 */
#ifndef H5SHUF_PILESAVE_H
#define H5SHUF_PILESAVE_H

#include <stdint.h>

#include "ctx.h"
#include "pileset.h"

/* A checkpoint of pass 1 (resume.h): store every pending flush (the scratch file then holds every row
 * that left a buffer), then write what the pile set holds in memory to fd from offset 0 (each pile's rows
 * written and whether its group exists, its buffered rows, its vlen payload not yet written): about the
 * pile buffers' bytes.  *bytes gets the length, *sum its XXH3-64.  The file is not synced here. */
H5SHUF_INTERNAL int h5shuf__pileset_save(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, int fd, uint64_t *bytes,
                                         uint64_t *sum);
/* A resumed pass 1: fill ps (just opened over the same piles and buffer rows) from a file written by
 * h5shuf__pileset_save, bytes long.  H5SHUF_EINVAL when it does not match ps. */
H5SHUF_INTERNAL int h5shuf__pileset_restore(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, int fd, uint64_t bytes,
                                            struct h5shuf_err *err);

#endif /* H5SHUF_PILESAVE_H */
