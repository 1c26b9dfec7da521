/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.c - pass 2 of a distributed run (exchange.h): the rows of each pile, spread over every
 * process's scratch, brought to the process that gathers the pile.
 *
 * Process q gathers the piles that hold its output rows (a pile cut by a range boundary is gathered by
 * both processes, each putting its own rows).  Pile rows are spread over every process's scratch, so
 * pass 2 goes in rounds: in round t, every process q with a t-th pile receives its part from every
 * process r (an all-to-all of counts, then pairwise exchanges in the order r = q, q-1, ...), in order of
 * r, hence in increasing row id, as the serial pile holds them; the sort and the writer are the serial
 * run's.
 */
#include "exchange.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cuts.h"
#include "gather.h"
#include "pilepart.h"
#include "vlen.h"
#include "writer.h"

enum { TAG_ROWS = 100, TAG_PAYLOAD = 150, TAG_PART_SIZE = 180, TAG_PART = 181 };

struct exchange {
    struct h5shuf_comm *c;
    const struct h5shuf_ctx *cx;
    const struct h5shuf_scratch *sc; /* this process's parts of the piles (same order as the global ones) */
    const size_t *plo, *phi;         /* each process's piles */
    const uint64_t *a, *b;           /* each process's output rows */
    const uint64_t *start;           /* the piles' first output rows (npiles + 1) */
    const struct h5shuf_cuts *cuts;  /* where the ranges cut the piles */
    uint64_t seed;                   /* the keys (as the gather's sort) */
    const struct h5shuf_strata *strata;
    uint64_t chunk_rows;             /* the scratch's chunk rows: a part cut by a range is packed so */
    size_t round;
    const uint64_t *first;           /* each process's first round to gather (a resumed pass 2: later ones) */
    const struct h5shuf_pile *mine;  /* this process's piles, cut to its output rows */
    unsigned char **send;            /* a part being sent: sc->dsets->n + 1 buffers of send_rows rows */
    uint64_t send_rows;
    uint64_t *cnt, *rcnt, *off;      /* size each: rows to each process, from each, and where they go */
    unsigned char **to;              /* n + 1: where this process's own part goes */
    /* vlen rows (nvlen of each; NULL without): the payload of the part being sent, and of the pile
     * gathered (its records point into it until the next round), where each process's part of it starts
     * (P * nvlen) */
    struct h5shuf_varena *send_payload, *payload;
    uint64_t *payload_at;
    uint64_t sent_bytes;             /* bytes given MPI to send: rows, ids, payload (or their chunks), counts */
    /* parts sent as their stored chunks (pilepart.h; else as decoded rows): the message being sent, the
     * one received, and the codec state that decodes it */
    int packed;
    struct h5shuf_varena msg, rmsg;
    struct h5shuf_codec_ctx codec;
};

/*-*************************************
*  Loading parts of piles
***************************************/

static uint64_t set_bytes(const struct h5shuf_datasets *dsets, size_t d)
{
    return d < dsets->n ? dsets->ds[d].row_bytes : sizeof(uint64_t);
}

/* Load this process's part of pile j into to[0..n] (rows of each dataset, ids; vlen rows as lengths, with
 * their payload appended to payload: h5shuf__gather_load). */
static int load_part(struct exchange *x, size_t j, unsigned char **to, struct h5shuf_varena *payload)
{
    return x->sc->piles[j].rows ? h5shuf__gather_load(x->cx, x->sc, &x->sc->piles[j], to, payload) : H5SHUF_OK;
}

/*-*************************************
*  Which rows go where
***************************************/

/* Process q's share of pile j: the (key, id) range [*lo, *hi) of its rows of the pile, and how many of
 * this process's part are in it (*rows).  0 when q gathers the whole pile (its share is the whole part),
 * 1 when a cut of its range is inside the pile, -1 when a cut is missing (an internal error). */
static int share(const struct exchange *x, int q, size_t j, h5shuf_u128 *lo, h5shuf_u128 *hi, uint64_t *rows)
{
    const struct h5shuf_cuts *k = x->cuts;
    const ptrdiff_t cl = x->a[q] > x->start[j] ? h5shuf_cuts_at(k, x->a[q]) : -2;
    const ptrdiff_t ch = x->b[q] < x->start[j + 1] ? h5shuf_cuts_at(k, x->b[q]) : -2;
    *lo = cl >= 0 ? k->at[cl] : 0;
    *hi = ch >= 0 ? k->at[ch] : ~(h5shuf_u128)0;
    *rows = (ch >= 0 ? k->below[ch] : x->sc->piles[j].rows) - (cl >= 0 ? k->below[cl] : 0);
    return cl == -1 || ch == -1 ? -1 : cl >= 0 || ch >= 0;
}

/* The rows of this process's part of round t's pile of process q that go to q. */
static uint64_t rows_to(const struct exchange *x, int q, size_t t)
{
    if (t < x->first[q] || x->plo[q] + t >= x->phi[q])
        return 0;
    h5shuf_u128 lo, hi;
    uint64_t rows;
    return share(x, q, x->plo[q] + t, &lo, &hi, &rows) < 0 ? 0 : rows;
}

/* Make the send buffers hold rows rows. */
static int send_room(struct exchange *x, uint64_t rows, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = x->sc->dsets;
    if (rows > x->send_rows) {
        h5shuf__bufs_free(dsets, x->send);
        x->send_rows = 0;
        if (!(x->send = h5shuf__bufs_alloc(dsets, rows, err)))
            return err->status;
        x->send_rows = rows;
    }
    for (size_t v = 0; v < dsets->nvlen; v++)
        x->send_payload[v].n = 0;
    return H5SHUF_OK;
}

/* Load this process's part of pile j for process q into the send buffers, decoded: the whole part, or
 * (q's range cuts the pile) only q's rows of it.  *cut: whether it was cut. */
static int load_share(struct exchange *x, int q, size_t j, int *cut, struct h5shuf_err *err)
{
    h5shuf_u128 lo, hi;
    uint64_t rows;
    const int s = share(x, q, j, &lo, &hi, &rows);
    *cut = s > 0;
    if (s < 0)
        return h5shuf__fail(err, H5SHUF_EINTERNAL, "no cut of pile %zu at rank %d's range", j, q);
    int st = send_room(x, x->sc->piles[j].rows, err);
    if (st == H5SHUF_OK)
        st = load_part(x, j, x->send, x->send_payload);
    if (st == H5SHUF_OK && s > 0)
        st = h5shuf_part_keep(x->sc, x->send, x->sc->piles[j].rows, x->send_payload, x->seed, x->strata, lo, hi, rows, err);
    return st;
}

/* This process's own share of pile j, cut by its range, from the send buffers (rows rows) into to and
 * the pile's payload. */
static int keep_own(struct exchange *x, uint64_t rows, unsigned char **to, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = x->sc->dsets;
    for (size_t d = 0; d <= dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = d < dsets->n && dsets->ds[d].vlen ? &dsets->ds[d] : NULL;
        if (ds)
            memcpy(h5shuf__vlen_lengths(ds, to[d], rows), h5shuf__vlen_lengths(ds, x->send[d], rows),
                   rows * ds->elems * sizeof(uint64_t));
        else
            memcpy(to[d], x->send[d], rows * set_bytes(dsets, d));
    }
    for (size_t v = 0; v < dsets->nvlen; v++) {
        struct h5shuf_varena *sp = &x->send_payload[v], *rp = &x->payload[v];
        if (h5shuf__varena_reserve(rp, rp->n + sp->n) < 0)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu bytes of variable-length rows",
                                (unsigned long long)(rp->n + sp->n));
        if (sp->n)
            memcpy(rp->data + rp->n, sp->data, sp->n);
        rp->n += sp->n;
    }
    return H5SHUF_OK;
}

/*-*************************************
*  The rounds of the exchange
***************************************/

/* Send n rows of set d of a part (buffers from) to process dst while receiving rn rows from process src
 * into the buffers into (at their row 0).  A vlen dataset's rows go as their lengths, then their payload
 * (from send_payload, into x->payload); their records are made once the whole pile is in. */
static int exchange_set(struct exchange *x, size_t d, unsigned char *from, uint64_t n, int dst, unsigned char *into,
                        uint64_t rn, int src, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = x->sc->dsets;
    const struct h5shuf_dsinfo *ds = d < dsets->n && dsets->ds[d].vlen ? &dsets->ds[d] : NULL;
    if (!ds) {
        const uint64_t rb = set_bytes(dsets, d);
        x->sent_bytes += n * rb;
        return h5shuf_comm_sendrecv(x->c, n ? from : NULL, n * rb, dst, rn ? into : NULL, rn * rb, src, TAG_ROWS + (int)d,
                                    err);
    }
    const uint64_t lb = ds->elems * sizeof(uint64_t);
    struct h5shuf_varena *sp = &x->send_payload[ds->vslot], *rp = &x->payload[ds->vslot];
    int st = h5shuf_comm_sendrecv(x->c, n ? h5shuf__vlen_lengths(ds, from, n) : NULL, n * lb, dst,
                                  rn ? h5shuf__vlen_lengths(ds, into, rn) : NULL, rn * lb, src, TAG_ROWS + (int)d, err);
    const uint64_t rbytes = st == H5SHUF_OK && rn ? h5shuf__vlen_payload_bytes(ds, into, rn) : 0;
    if (st == H5SHUF_OK && h5shuf__varena_reserve(rp, rp->n + rbytes) < 0)
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu bytes of variable-length rows",
                          (unsigned long long)(rp->n + rbytes));
    if (st == H5SHUF_OK) {
        x->payload_at[(size_t)src * dsets->nvlen + ds->vslot] = rp->n;
        st = h5shuf_comm_sendrecv(x->c, n ? sp->data : NULL, n ? sp->n : 0, dst, rbytes ? rp->data + rp->n : NULL, rbytes,
                                  src, TAG_PAYLOAD + (int)ds->vslot, err);
    }
    rp->n += rbytes;
    x->sent_bytes += n * lb + (n ? sp->n : 0);
    return st;
}

/* Send the message x->msg (n rows; none: nothing) to process dst while receiving rn rows of process
 * src's part of the pile this process gathers, packed, into the buffers into (at their row 0; vlen
 * payload appended to x->payload). */
static int exchange_msg(struct exchange *x, uint64_t n, int dst, unsigned char **into, uint64_t rn, int src,
                        struct h5shuf_err *err)
{
    uint64_t size = n ? x->msg.n : 0, rsize = 0;
    int st = h5shuf_comm_sendrecv(x->c, n ? &size : NULL, n ? sizeof size : 0, dst, rn ? &rsize : NULL,
                                  rn ? sizeof rsize : 0, src, TAG_PART_SIZE, err);
    if (st == H5SHUF_OK && h5shuf__varena_reserve(&x->rmsg, rsize) < 0)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu bytes of a pile's part", (unsigned long long)rsize);
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sendrecv(x->c, size ? x->msg.data : NULL, size, dst, rsize ? x->rmsg.data : NULL, rsize, src,
                                  TAG_PART, err);
    x->sent_bytes += size + (n ? sizeof size : 0);
    const size_t nv = x->sc->dsets->nvlen;
    for (size_t v = 0; v < nv; v++)
        x->payload_at[(size_t)src * nv + v] = x->payload[v].n;
    if (st == H5SHUF_OK && rn)
        st = h5shuf_part_unpack(x->sc, x->rmsg.data, rsize, rn, src, into, x->payload, &x->codec, err);
    return st;
}

/* Step k of round t: this process's share of round t's pile of process dst = me + k to dst, and (into
 * not NULL) the share of process src = me - k of its own pile into into.  Step 0: its own share of its
 * own pile, loaded in place when whole. */
static int exchange_step(struct exchange *x, size_t t, int k, unsigned char **into, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = x->sc->dsets;
    const size_t nv = dsets->nvlen;
    const int P = x->c->size, me = x->c->rank, dst = (me + k) % P, src = (me - k + P) % P;
    const uint64_t n = x->cnt[dst], rn = x->rcnt[src];
    const size_t j = x->plo[dst] + t;
    int cut = 0, st = H5SHUF_OK;
    if (k == 0) {
        for (size_t v = 0; v < nv; v++)
            x->payload_at[(size_t)me * nv + v] = x->payload[v].n;
        if (n && share(x, me, j, &(h5shuf_u128){0}, &(h5shuf_u128){0}, &(uint64_t){0}) == 0)
            return load_part(x, j, into, x->payload); /* whole: loaded in place */
        if (n)
            st = load_share(x, me, j, &cut, err);
        return st == H5SHUF_OK && n ? keep_own(x, n, into, err) : st;
    }
    if (x->packed && n) { /* the stored chunks of a whole part, or the rows of a share encoded so */
        st = share(x, dst, j, &(h5shuf_u128){0}, &(h5shuf_u128){0}, &(uint64_t){0}) == 0
                 ? h5shuf_part_pack(x->cx, x->sc, &x->sc->piles[j], &x->msg)
                 : load_share(x, dst, j, &cut, err);
        if (st == H5SHUF_OK && cut)
            st = h5shuf_part_pack_rows(x->sc, x->send, n, x->send_payload, x->chunk_rows, &x->msg, &x->codec, err);
    } else if (n) {
        st = load_share(x, dst, j, &cut, err);
    }
    if (st == H5SHUF_OK && x->packed)
        return exchange_msg(x, n, dst, into, rn, src, err);
    for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK; d++)
        st = exchange_set(x, d, x->send ? x->send[d] : NULL, n, dst, rn ? into[d] : NULL, rn, src, err);
    return st;
}

/* One round: this process's shares of the round's piles to the processes gathering them, and (buf not
 * NULL) the rows of its own pile of the round from every process into buf, in order of process: want
 * rows in all. */
static int exchange_round(struct exchange *x, unsigned char **buf, uint64_t want, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = x->sc->dsets;
    const size_t nv = dsets->nvlen;
    const int P = x->c->size, me = x->c->rank;
    const size_t t = x->round++;
    for (int q = 0; q < P; q++)
        x->cnt[q] = rows_to(x, q, t);
    int st = h5shuf_comm_alltoall(x->c, x->cnt, x->rcnt, err);
    x->sent_bytes += (uint64_t)(P - 1) * sizeof *x->cnt;
    uint64_t total = 0;
    for (int r = 0; r < P; r++) {
        x->off[r] = total;
        total += x->rcnt[r];
    }
    if (st == H5SHUF_OK && total != (buf ? want : 0))
        st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d: %llu rows sent for a pile of %llu of its rows", me,
                          (unsigned long long)total, (unsigned long long)(buf ? want : 0));
    for (size_t v = 0; v < nv; v++)
        x->payload[v].n = 0;
    unsigned char **to = x->to;
    for (int k = 0; k < P && st == H5SHUF_OK; k++) {
        const int from = (me - k + P) % P;
        for (size_t d = 0; buf && d <= dsets->n; d++)
            to[d] = buf[d] + x->off[from] * set_bytes(dsets, d);
        st = exchange_step(x, t, k, buf ? to : NULL, err);
    }
    /* the vlen rows' records, now that their payload no longer moves */
    for (int r = 0; r < P && st == H5SHUF_OK && buf && nv; r++)
        for (size_t d = 0; x->rcnt[r] && d < dsets->n; d++)
            if (dsets->ds[d].vlen &&
                h5shuf__vlen_point(&dsets->ds[d], buf[d] + x->off[r] * dsets->ds[d].row_bytes, x->rcnt[r],
                                   x->payload[dsets->ds[d].vslot].data
                                       ? x->payload[dsets->ds[d].vslot].data + x->payload_at[(size_t)r * nv + dsets->ds[d].vslot]
                                       : NULL) < 0)
                st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    return st;
}

/*-*************************************
*  Piles sent and gathered: pass 2
***************************************/

/* The gather's loader (gather.h): its pile j, the round's (first[me] + j: the gather counts its piles
 * from the first it gathers), its share of pile plo[me] + round, mine[round].rows rows. */
static int load_pile(void *user, size_t j, unsigned char **buf, struct h5shuf_err *err)
{
    struct exchange *x = user;
    const size_t round = j + x->first[x->c->rank];
    if (x->round != round)
        return h5shuf__fail(err, H5SHUF_EINTERNAL, "pass 2 out of step: pile %zu in round %zu", round, x->round);
    return exchange_round(x, buf, x->mine[round].rows, err);
}

/* Do the processes send their parts of the piles g of sc as stored chunks (*packed 1) or as decoded rows?
 * Stored chunks when that moves fewer bytes (the scratch files' bytes, summed over the processes, against
 * the rows, ids, vlen lengths and payload of all piles) and every process can decode them: the same
 * answer everywhere.  H5SHUF_DEBUG_SEND_ROWS=1 or 0 (tests) asks for decoded rows or stored chunks
 * whatever the sizes.  Collective. */
static int send_stored(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_scratch *sc, const struct h5shuf_pile *g,
                       int *packed)
{
    uint64_t per_row = sizeof(uint64_t), decoded = 0;
    for (size_t d = 0; d < sc->dsets->n; d++)
        per_row += sc->dsets->ds[d].vlen ? sc->dsets->ds[d].elems * sizeof(uint64_t) : sc->dsets->ds[d].row_bytes;
    for (size_t j = 0; j < sc->npiles; j++)
        decoded += g[j].rows * per_row + g[j].bytes;
    const char *rows_env = getenv("H5SHUF_DEBUG_SEND_ROWS");
    const int want = rows_env && *rows_env ? *rows_env == '0' : job->plan.scratch_bytes < decoded;
    uint64_t cannot = !want || h5shuf_part_packable(sc, job->plan.pile_buffer_rows) <= 0;
    int st = h5shuf_comm_max(c, &cannot, 1, &job->err);
    *packed = st == H5SHUF_OK && !cannot;
    return st;
}

/* The buffers of an exchange among c's processes (its fields set by the caller), and their release. */
static int exchange_open(struct exchange *x, struct h5shuf_comm *c, const struct h5shuf_scratch *sc, struct h5shuf_err *err)
{
    const size_t nv = sc->dsets->nvlen, P = (size_t)c->size;
    x->cnt = calloc(P, sizeof *x->cnt);
    x->rcnt = calloc(P, sizeof *x->rcnt);
    x->off = calloc(P, sizeof *x->off);
    x->to = calloc(sc->dsets->n + 1, sizeof *x->to);
    if (nv) {
        x->send_payload = calloc(nv, sizeof *x->send_payload);
        x->payload = calloc(nv, sizeof *x->payload);
        x->payload_at = calloc(P * nv, sizeof *x->payload_at);
    }
    return x->cnt && x->rcnt && x->off && x->to && (!nv || (x->send_payload && x->payload && x->payload_at))
               ? H5SHUF_OK
               : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
}

static void exchange_close(struct exchange *x)
{
    const size_t nv = x->sc->dsets->nvlen;
    h5shuf__bufs_free(x->sc->dsets, x->send);
    for (size_t v = 0; x->send_payload && x->payload && v < nv; v++) {
        h5shuf__varena_free(&x->send_payload[v]);
        h5shuf__varena_free(&x->payload[v]);
    }
    free(x->send_payload);
    free(x->payload);
    free(x->payload_at);
    h5shuf__varena_free(&x->msg);
    h5shuf__varena_free(&x->rmsg);
    h5shuf__codec_ctx_release(&x->codec);
    free(x->cnt);
    free(x->rcnt);
    free(x->off);
    free(x->to);
}

/* This process's piles [plo, phi) of g, each cut to its output rows [a, b) (rows: its share). */
static struct h5shuf_pile *my_piles(const struct h5shuf_pile *g, const uint64_t *start, size_t plo, size_t phi,
                                    uint64_t a, uint64_t b)
{
    struct h5shuf_pile *m = malloc((phi > plo ? phi - plo : 1) * sizeof *m);
    for (size_t j = plo; m && j < phi; j++) {
        m[j - plo] = g[j];
        m[j - plo].rows = (start[j + 1] < b ? start[j + 1] : b) - (start[j] > a ? start[j] : a);
    }
    return m;
}

/* This process's gather of its piles p2 into its output rows [p2->put_first, b). */
static int gather(h5shuf_job *job, const struct h5shuf_ctx *cx, const struct h5shuf_pass2 *p2, uint64_t b)
{
    struct h5shuf_writer w;
    int st = h5shuf__writer_init(&w, &job->of, p2->put_first, job->out_rows, job->band_threads, &job->err);
    if (st == H5SHUF_OK)
        st = h5shuf__gather(cx, p2, &job->out, &w);
    if (st == H5SHUF_OK)
        st = h5shuf__writer_flush(cx, &w);
    if (st == H5SHUF_OK)
        st = h5shuf__writer_check_end(&w, b, &job->err);
    h5shuf__writer_free(&w);
    return st;
}

int h5shuf_dist_pass2(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_ctx *cxp, const struct h5shuf_scratch *sc,
                      const struct h5shuf_pile *g, const uint64_t *start, const size_t *plo, const size_t *phi,
                      const uint64_t *a, const uint64_t *b, uint64_t *nrounds)
{
    const struct h5shuf_ctx cx = *cxp;
    const int P = c->size, me = c->rank;
    uint64_t *first = calloc((size_t)P, sizeof *first);
    struct h5shuf_pile *mine = my_piles(g, start, plo[me], phi[me], a[me], b[me]);
    struct h5shuf_cuts cuts = {0};
    struct exchange x = {.c = c, .cx = &cx, .sc = sc, .plo = plo, .phi = phi, .a = a, .b = b, .start = start,
                         .cuts = &cuts, .seed = job->seed, .strata = job->strata,
                         .chunk_rows = job->plan.pile_buffer_rows, .first = first, .mine = mine};
    /* one process: its piles hold every row, so they are loaded, overlapped and given back as the serial
     * run's (no rounds) */
    const int local = P == 1;
    size_t rounds = 0;
    for (int q = 0; q < P && !local; q++)
        rounds = phi[q] - plo[q] > rounds ? phi[q] - plo[q] : rounds;
    *nrounds = rounds;
    int st = exchange_open(&x, c, sc, &job->err);
    if (st == H5SHUF_OK && (!first || !mine))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK && !local)
        st = send_stored(job, c, sc, g, &x.packed);
    if (st == H5SHUF_OK && !local) /* (before the gather's buffers: half the budget for the parts' keys) */
        st = h5shuf_cuts_find(&cx, c, sc, g, start, a, b, job->seed, job->strata, job->opts.mem_limit_bytes / 2, &cuts,
                              &x.sent_bytes);
    struct h5shuf_pass2 p2 = {
        .sc = sc,
        .piles = local ? g : mine,
        .npiles = phi[me] - plo[me],
        .seed = job->seed,
        .strata = job->strata,
        .pipelined = local && h5shuf__plan_pipelined(&job->plan),
        .mem_limit_bytes = job->opts.mem_limit_bytes,
        .band_bytes = job->band_bytes,
        .first_row = local ? start[plo[me]] : a[me] > start[plo[me]] ? a[me] : start[plo[me]],
        .put_first = a[me],
        .put_end = b[me],
        .release = local,
        .load = local ? NULL : load_pile,
        .load_user = &x,
    };
    /* a resumed run: each process gathers from the pile holding its first row not committed, and the
     * rounds start at the earliest of them */
    h5shuf__ckpt_pass2_from(job, sc, &p2);
    if (p2.put_first > b[me])
        p2.put_first = b[me];
    if (st == H5SHUF_OK) {
        first[me] = (uint64_t)(p2.piles - (local ? g : mine));
        st = h5shuf_comm_sums(c, first, (size_t)P, &job->err);
    }
    x.round = rounds;
    for (int q = 0; st == H5SHUF_OK && q < P; q++)
        if (plo[q] < phi[q] && first[q] < x.round)
            x.round = (size_t)first[q];
    if (x.round == rounds)
        x.round = 0;
    if (st == H5SHUF_OK && !local)
        st = h5shuf_comm_debug_stall(c, &job->err); /* (tests: one process blocks, the others wait on it) */
    while (st == H5SHUF_OK && x.round < first[me] && x.round < rounds) /* the others' rounds before this one's */
        st = exchange_round(&x, NULL, 0, &job->err);
    if (st == H5SHUF_OK && a[me] < b[me])
        st = gather(job, &cx, &p2, b[me]);
    st = h5shuf__targets_close(&job->out, st, &job->err);
    while (st == H5SHUF_OK && x.round < rounds)
        st = exchange_round(&x, NULL, 0, &job->err);
    uint64_t sent = x.sent_bytes; /* (a resumed run: this run's) */
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sums(c, &sent, 1, &job->err);
    job->plan.exchanged_bytes = sent;
    exchange_close(&x);
    h5shuf_cuts_free(&cuts);
    free(mine);
    free(first);
    return st;
}
