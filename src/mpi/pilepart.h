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

#include "codec.h"
#include "ctx.h"
#include "piles.h"

struct h5shuf_varena; /* vlen.h */

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

#endif /* H5SHUF_MPI_PILEPART_H */
