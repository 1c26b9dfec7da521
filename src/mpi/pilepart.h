/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pilepart.h - a process's part of a pile as its scratch stores it (pilepart.c): packed into one message
 * of stored chunks for the process that gathers the pile, which decodes them into rows.  Pass 2 of a
 * distributed run (dist.c) sends parts this way: the stored chunks are about the scratch ratio smaller
 * than the decoded rows (zstd-1 with byte shuffle halves float features), and each chunk is decoded once,
 * by the receiver instead of the sender.
 */
#ifndef H5SHUF_MPI_PILEPART_H
#define H5SHUF_MPI_PILEPART_H

#include <stdint.h>

#include "base.h"
#include "codec.h"
#include "ctx.h"
#include "piles.h"

struct h5shuf_varena; /* vlen.h */
struct h5shuf_strata; /* strata.h */

/* A message (a struct h5shuf_varena of vlen.h: data, n bytes, grown with h5shuf__varena_reserve):
 * records {set, filter mask, chunk rows, offset, bytes} (uint32 x 2, uint64 x 3, native byte order: the
 * processes of one job share it) each followed by a stored chunk's bytes, for every stored chunk of every
 * dataset of the pile (h5shuf__pile_nsets of them: each shuffled dataset's rows or a vlen dataset's
 * lengths, the ids, each vlen dataset's payload). */

/* Can every dataset of sc's piles (chunk_rows rows to a chunk, payloads vchunk elements) be decoded by
 * h5shuf's codecs (h5shuf_pipeline.direct)?  The same answer on every process of a job (the same plan and
 * filters): parts are then packed, else sent as decoded rows.  < 0 on an HDF5 error. */
int h5shuf_part_packable(const struct h5shuf_scratch *sc, uint64_t chunk_rows);

/* Pack this process's part of pile p (p->rows > 0) of sc into the message m (its bytes replaced, m->n
 * set; m is kept and grown across packs, freed by the caller with h5shuf__varena_free).  H5SHUF_OK, or
 * an error in cx->err naming the scratch file and the pile. */
int h5shuf_part_pack(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                     struct h5shuf_varena *m);

/* Decode a packed part of rows rows (msg, bytes long, from process src) into to[0..n] (each dataset's
 * rows and the ids, at row 0; a vlen dataset's lengths at the end of its rows, h5shuf__vlen_lengths), its
 * vlen payload appended to payload[vslot] (the records are the caller's to make: h5shuf__vlen_point).
 * ctx is the calling thread's codec state.  H5SHUF_OK, or an error in err (a corrupt or short message). */
int h5shuf_part_unpack(const struct h5shuf_scratch *sc, const unsigned char *msg, uint64_t bytes, uint64_t rows,
                       int src, unsigned char **to, struct h5shuf_varena *payload, struct h5shuf_codec_ctx *ctx,
                       struct h5shuf_err *err);

/* Keep, of the n rows of a part loaded in bufs (each dataset's rows and the ids at row 0, a vlen
 * dataset's lengths at h5shuf__vlen_lengths(ds, bufs[d], n), its payload in payload[vslot]: as
 * h5shuf__gather_load loads them), those whose (key << 64 | id) is in [lo, hi) (keys from seed and strata,
 * as the gather's sort), moved to the front in their order: the same form for *kept rows (the lengths at
 * h5shuf__vlen_lengths(ds, bufs[d], want), the payloads' n reduced).  want: the rows expected to be kept
 * (cuts.h); another count is H5SHUF_EINTERNAL in err. */
int h5shuf_part_keep(const struct h5shuf_scratch *sc, unsigned char **bufs, uint64_t n, struct h5shuf_varena *payload,
                     uint64_t seed, const struct h5shuf_strata *strata, h5shuf_u128 lo, h5shuf_u128 hi, uint64_t want,
                     struct h5shuf_err *err);

/* Pack n rows in bufs and payload (the form h5shuf_part_keep leaves) into the message m, as
 * h5shuf_part_pack packs stored chunks: encoded by h5shuf's codecs as the scratch's datasets are (which
 * h5shuf_part_packable said they can), in chunks of at most chunk_rows rows (the scratch's) that tile the
 * rows, with ctx, the calling thread's codec state.  A part cut by a range is sent so, at about the
 * scratch's bytes a row.  H5SHUF_OK, or an error in err. */
int h5shuf_part_pack_rows(const struct h5shuf_scratch *sc, unsigned char **bufs, uint64_t n,
                          const struct h5shuf_varena *payload, uint64_t chunk_rows, struct h5shuf_varena *m,
                          struct h5shuf_codec_ctx *ctx, struct h5shuf_err *err);

#endif /* H5SHUF_MPI_PILEPART_H */
