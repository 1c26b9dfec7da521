/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pilepart.c - a process's part of a pile packed as its stored chunks, and decoded by the process that
 * gathers the pile (pilepart.h); a part cut to the rows of one process's range, and packed from its
 * rows, encoded as the scratch stores them.
 */
#include "pilepart.h"

#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "error.h"
#include "filters.h"
#include "h5err.h"
#include "keyparts.h"
#include "vlen.h"
#include "vlenrec.h"

/* A record's header in a message. */
struct rec {
    uint32_t set, mask;
    uint64_t chunk_rows, offset, bytes;
};

/* The vlen dataset of payload slot v (a payload set is dsets->n + 1 + v). */
static const struct h5shuf_dsinfo *payload_owner(const struct h5shuf_datasets *dsets, size_t v)
{
    for (size_t d = 0; d < dsets->n; d++)
        if (dsets->ds[d].vlen && dsets->ds[d].vslot == v)
            return &dsets->ds[d];
    return NULL;
}

/* The file type of set s of a pile (as piles.c makes them). */
static hid_t set_type(const struct h5shuf_datasets *dsets, size_t s)
{
    return s <= dsets->n ? h5shuf__buf_type(dsets, s) : payload_owner(dsets, s - dsets->n - 1)->etype;
}

/* The pipeline of set s of a pile of sc chunked chunk_rows rows (or payload elements) at a time, as
 * piles.c creates it, for an extent of rows rows. */
static int set_pipeline(const struct h5shuf_scratch *sc, size_t s, uint64_t chunk_rows, uint64_t rows,
                        struct h5shuf_pipeline *pl)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    hsize_t dims[H5S_MAX_RANK] = {0}, cdims[H5S_MAX_RANK] = {0};
    int rank = 1;
    const int lengths = s == dsets->n || (s < dsets->n && dsets->ds[s].vlen); /* ids or lengths: index filters */
    if (s < dsets->n) {
        rank = dsets->ds[s].rank;
        memcpy(dims, dsets->ds[s].dims, sizeof dims);
    }
    memcpy(cdims, dims, sizeof dims);
    dims[0] = rows;
    cdims[0] = chunk_rows;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int r = dcpl >= 0 && H5Pset_chunk(dcpl, rank, cdims) >= 0 &&
                    h5shuf__filters_apply(lengths ? &sc->id_filters : &sc->filters, dcpl) >= 0
                ? 0
                : -1;
    if (r == 0)
        h5shuf__pipeline_of(dcpl, rank, dims, set_type(dsets, s), pl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return r;
}

int h5shuf_part_packable(const struct h5shuf_scratch *sc, uint64_t chunk_rows)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    for (size_t s = 0; s < h5shuf__pile_nsets(dsets); s++) {
        struct h5shuf_pipeline pl;
        uint64_t rows = s > dsets->n ? h5shuf__vlen_chunk_elems(payload_owner(dsets, s - dsets->n - 1), chunk_rows)
                                     : chunk_rows;
        if (set_pipeline(sc, s, rows ? rows : 1, rows ? rows : 1, &pl) < 0)
            return -1;
        if (!pl.direct)
            return 0;
    }
    return 1;
}

int h5shuf_part_pack(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                     struct h5shuf_varena *m)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    const size_t nsets = h5shuf__pile_nsets(dsets);
    char cause[256];
    m->n = 0;
    hid_t group = H5I_INVALID_HID, *sets = malloc(nsets * sizeof *sets);
    if (!sets)
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    int st = h5shuf__pile_open(sc, p, &group, sets, cx->err);
    for (size_t s = 0; s < nsets && st == H5SHUF_OK; s++) {
        struct h5shuf_blocks it;
        struct h5shuf_block b;
        int more = h5shuf__blocks_open(&it, sets[s], set_type(dsets, s)) < 0 || !it.chunked ? -1 : 1;
        while (st == H5SHUF_OK && more > 0 && (more = h5shuf__blocks_next(&it, &b)) > 0) {
            const uint64_t at = m->n + sizeof(struct rec);
            const uint64_t need = at + b.bytes; /* (grown by doubling: a part is many chunks) */
            if (need > m->cap && h5shuf__varena_reserve(m, need > 2 * m->cap ? need : 2 * m->cap) < 0) {
                st = h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for %llu bytes of a pile's part",
                                  (unsigned long long)(at + b.bytes));
                break;
            }
            if (h5shuf__blocks_read(&it, &b, m->data + at) < 0) {
                more = -1;
                break;
            }
            const struct rec r = {(uint32_t)s, b.filter_mask, it.cdims[0], b.offset[0], b.bytes};
            memcpy(m->data + m->n, &r, sizeof r);
            m->n = at + b.bytes;
        }
        if (st == H5SHUF_OK && more < 0)
            st = h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot read pile %llu's stored chunks: %s", sc->path,
                              (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (group >= 0)
        h5shuf__pile_close(group, sets, nsets);
    free(sets);
    return st;
}

int h5shuf_part_unpack(const struct h5shuf_scratch *sc, const unsigned char *msg, uint64_t bytes, uint64_t rows,
                       int src, unsigned char **to, struct h5shuf_varena *payload, struct h5shuf_codec_ctx *ctx,
                       struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    const size_t nsets = h5shuf__pile_nsets(dsets), nv = dsets->nvlen;
    struct h5shuf_pipeline *pl = calloc(nsets, sizeof *pl);
    uint64_t *pl_rows = calloc(nsets, sizeof *pl_rows), *done = calloc(nsets, sizeof *done);
    uint64_t *base = nv ? calloc(nv, sizeof *base) : NULL, *elems = nv ? calloc(nv, sizeof *elems) : NULL;
    int st = pl && pl_rows && done && (!nv || (base && elems)) ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t v = 0; v < nv && st == H5SHUF_OK; v++)
        base[v] = payload[v].n;
    /* the rows first (a vlen dataset's lengths say how much payload follows), then the payloads */
    for (int pass = 0; pass < 2 && st == H5SHUF_OK; pass++) {
        uint64_t pos = 0;
        while (pos < bytes && st == H5SHUF_OK) {
            struct rec r;
            if (bytes - pos < sizeof r) {
                st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d sent a pile's part cut short", src);
                break;
            }
            memcpy(&r, msg + pos, sizeof r);
            pos += sizeof r;
            if (r.set >= nsets || r.bytes > bytes - pos || r.chunk_rows == 0) {
                st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d sent a pile's part that is not one", src);
                break;
            }
            const unsigned char *raw = msg + pos;
            pos += r.bytes;
            const size_t s = r.set;
            const int is_payload = s > dsets->n;
            if (is_payload != pass)
                continue;
            /* where the set's rows go: each dataset's rows (a vlen dataset's lengths at their end), the
             * ids, or the payload */
            const struct h5shuf_dsinfo *ds = s < dsets->n && dsets->ds[s].vlen ? &dsets->ds[s] : NULL;
            const struct h5shuf_dsinfo *owner = is_payload ? payload_owner(dsets, s - dsets->n - 1) : NULL;
            const uint64_t total = owner ? elems[owner->vslot] : rows;
            if (r.offset >= total) { /* (a payload of no elements has no chunk either) */
                st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d sent a chunk outside its part", src);
                break;
            }
            unsigned char *at = owner ? payload[owner->vslot].data + base[owner->vslot]
                                : ds ? h5shuf__vlen_lengths(ds, to[s], rows) : to[s];
            if (pl_rows[s] != r.chunk_rows) {
                if (set_pipeline(sc, s, r.chunk_rows, total, &pl[s]) < 0 || !pl[s].direct) {
                    st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d sent chunks h5shuf cannot decode", src);
                    break;
                }
                pl_rows[s] = r.chunk_rows;
            }
            if (r.offset % r.chunk_rows) {
                st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d sent a chunk outside its part", src);
                break;
            }
            struct h5shuf_codec_chunk k = {.pl = &pl[s], .raw = (unsigned char *)raw, .raw_cap = r.bytes,
                                           .raw_n = r.bytes, .mask = r.mask};
            k.off[0] = r.offset;
            k.rows = total - r.offset < r.chunk_rows ? total - r.offset : r.chunk_rows;
            k.user = at + r.offset * pl[s].row_bytes;
            if (h5shuf__codec_decode(&k, ctx) < 0)
                st = h5shuf__fail(err, H5SHUF_EIO, "%s: a chunk of pile data from rank %d does not decode: %s", sc->path,
                                  src, k.err);
            done[s] += k.rows;
        }
        for (size_t d = 0; pass == 0 && st == H5SHUF_OK && d < dsets->n; d++) /* the payload to come */
            if (dsets->ds[d].vlen) {
                const struct h5shuf_dsinfo *ds = &dsets->ds[d];
                const uint64_t b = rows ? h5shuf__vlen_payload_bytes(ds, to[d], rows) : 0;
                elems[ds->vslot] = b / ds->elem_bytes;
                if (h5shuf__varena_reserve(&payload[ds->vslot], base[ds->vslot] + b) < 0)
                    st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu bytes of variable-length rows",
                                      (unsigned long long)(base[ds->vslot] + b));
            }
    }
    /* every row of every set arrived */
    for (size_t s = 0; s < nsets && st == H5SHUF_OK; s++) {
        const uint64_t want = s > dsets->n ? elems[s - dsets->n - 1] : rows;
        if (done[s] != want)
            st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d sent %llu rows of a pile's dataset %zu, not %llu", src,
                              (unsigned long long)done[s], s, (unsigned long long)want);
    }
    for (size_t v = 0; v < nv && st == H5SHUF_OK; v++)
        payload[v].n = base[v] + elems[v] * payload_owner(dsets, v)->elem_bytes;
    free(pl);
    free(pl_rows);
    free(done);
    free(base);
    free(elems);
    return st;
}

/* ---- a part cut to a range, packed from its rows ---------------------------------------------------- */

/* Payload bytes of one row of ds whose lengths are lens[0 .. ds->elems). */
static uint64_t row_payload(const struct h5shuf_dsinfo *ds, const unsigned char *lens)
{
    uint64_t elems = 0;
    for (uint64_t e = 0; e < ds->elems; e++) {
        uint64_t len;
        memcpy(&len, lens + e * sizeof len, sizeof len);
        elems += len;
    }
    return elems * ds->elem_bytes + (ds->vlen == H5SHUF_VLEN_REC ? h5shuf__vrec_fixed_payload(ds, 1) : 0);
}

/* Where row r of set d of a part of n rows is, and its bytes. */
static unsigned char *row_at(const struct h5shuf_datasets *dsets, unsigned char **bufs, size_t d, uint64_t n, uint64_t r,
                             uint64_t *bytes)
{
    const struct h5shuf_dsinfo *ds = d < dsets->n ? &dsets->ds[d] : NULL;
    if (ds && ds->vlen) {
        *bytes = ds->elems * sizeof(uint64_t);
        return h5shuf__vlen_lengths(ds, bufs[d], n) + r * *bytes;
    }
    *bytes = ds ? ds->row_bytes : sizeof(uint64_t);
    return bufs[d] + r * *bytes;
}

int h5shuf_part_keep(const struct h5shuf_scratch *sc, unsigned char **bufs, uint64_t n, struct h5shuf_varena *payload,
                     uint64_t seed, const struct h5shuf_strata *strata, h5shuf_u128 lo, h5shuf_u128 hi, uint64_t want,
                     struct h5shuf_err *err)
{
    enum { BATCH = 4096 };
    const struct h5shuf_datasets *dsets = sc->dsets;
    const size_t nv = dsets->nvlen;
    uint64_t keys[BATCH], kept = 0;
    uint64_t *from = nv ? calloc(2 * nv, sizeof *from) : NULL, *to = from ? from + nv : NULL; /* payload offsets */
    if (nv && !from)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    const uint64_t *ids = (const uint64_t *)bufs[dsets->n];
    /* Rows move only towards the front (row kept < row read, lengths' new place below their old one:
     * h5shuf__vlen_lengths), so one pass in order moves each before anything overwrites it. */
    for (uint64_t r0 = 0; r0 < n; r0 += BATCH) {
        const uint64_t m = n - r0 < BATCH ? n - r0 : BATCH;
        h5shuf__keys_in_parts(NULL, seed, strata, ids + r0, 0, m, keys, NULL);
        for (uint64_t i = 0; i < m; i++) {
            const uint64_t r = r0 + i;
            const h5shuf_u128 v = (h5shuf_u128)keys[i] << 64 | ids[r];
            const int keep = v >= lo && v < hi && kept < want;
            for (size_t d = 0; d < dsets->n; d++) { /* a vlen row's payload, kept or skipped */
                const struct h5shuf_dsinfo *ds = &dsets->ds[d];
                if (!ds->vlen)
                    continue;
                uint64_t lb;
                const uint64_t bytes = row_payload(ds, row_at(dsets, bufs, d, n, r, &lb));
                if (keep && to[ds->vslot] != from[ds->vslot])
                    memmove(payload[ds->vslot].data + to[ds->vslot], payload[ds->vslot].data + from[ds->vslot], bytes);
                from[ds->vslot] += bytes;
                to[ds->vslot] += keep ? bytes : 0;
            }
            for (size_t d = 0; keep && d <= dsets->n; d++) {
                uint64_t rb;
                const unsigned char *src = row_at(dsets, bufs, d, n, r, &rb);
                unsigned char *dst = row_at(dsets, bufs, d, want, kept, &rb);
                if (dst != src)
                    memmove(dst, src, rb);
            }
            kept += keep;
            if (v >= lo && v < hi && keep == 0) /* more rows than expected: counted below */
                kept = want + 1;
        }
    }
    for (size_t v = 0; v < nv; v++)
        payload[v].n = to[v];
    free(from);
    if (kept != want)
        return h5shuf__fail(err, H5SHUF_EINTERNAL, "%s: a pile's part holds %s%llu rows of a process's range, not %llu",
                            sc->path, kept > want ? "more than " : "", (unsigned long long)(kept > want ? want : kept),
                            (unsigned long long)want);
    return H5SHUF_OK;
}

int h5shuf_part_pack_rows(const struct h5shuf_scratch *sc, unsigned char **bufs, uint64_t n,
                          const struct h5shuf_varena *payload, uint64_t chunk_rows, struct h5shuf_varena *m,
                          struct h5shuf_codec_ctx *ctx, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    m->n = 0;
    for (size_t s = 0; s < h5shuf__pile_nsets(dsets); s++) {
        const struct h5shuf_dsinfo *owner = s > dsets->n ? payload_owner(dsets, s - dsets->n - 1) : NULL;
        const uint64_t total = owner ? payload[owner->vslot].n / owner->elem_bytes : n;
        const uint64_t most = owner ? h5shuf__vlen_chunk_elems(owner, chunk_rows) : chunk_rows;
        /* chunks of at most the scratch's rows that tile the rows (less than a row a chunk of padding, which
         * the scratch's filters may not shrink: "none" when it fits in memory) */
        const uint64_t nchunks = most && total ? (total + most - 1) / most : 1;
        const uint64_t crows = (total + nchunks - 1) / nchunks;
        uint64_t rb;
        unsigned char *src = owner ? payload[owner->vslot].data : n ? row_at(dsets, bufs, s, n, 0, &rb) : NULL;
        struct h5shuf_pipeline pl;
        if (total == 0)
            continue;
        if (set_pipeline(sc, s, crows ? crows : 1, total, &pl) < 0 || !pl.direct)
            return h5shuf__fail(err, H5SHUF_EINTERNAL, "%s: a pile's dataset %zu cannot be encoded by h5shuf", sc->path, s);
        const size_t bound = h5shuf__codec_bound(pl.chunk_bytes);
        for (uint64_t off = 0; off < total; off += pl.chunk_rows) {
            const uint64_t at = m->n + sizeof(struct rec), need = at + bound;
            if (need > m->cap && h5shuf__varena_reserve(m, need > 2 * m->cap ? need : 2 * m->cap) < 0)
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu bytes of a pile's part",
                                    (unsigned long long)need);
            struct h5shuf_codec_chunk k = {.pl = &pl, .raw = m->data + at, .raw_cap = bound, .from = 0};
            k.off[0] = off;
            k.rows = total - off < pl.chunk_rows ? total - off : pl.chunk_rows;
            k.user = src + off * pl.row_bytes;
            if (h5shuf__codec_encode(&k, ctx) < 0)
                return h5shuf__fail(err, H5SHUF_EIO, "%s: rows of a pile do not encode: %s", sc->path, k.err);
            const struct rec r = {(uint32_t)s, k.mask, pl.chunk_rows, off, k.raw_n};
            memcpy(m->data + m->n, &r, sizeof r);
            m->n = at + k.raw_n;
        }
    }
    return H5SHUF_OK;
}
