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
    size_t round;
    const uint64_t *first;           /* each process's first round to gather (a resumed pass 2: later ones) */
    unsigned char **send;            /* a part being sent: sc->dsets->n + 1 buffers of send_rows rows */
    uint64_t send_rows;
    uint64_t *cnt, *rcnt, *off;      /* size each: rows to each process, from each, and where they go */
    unsigned char **to;              /* n + 1: where this process's own part goes */
    /* vlen rows (nvlen of each; NULL without): the payload of the part being sent, and of the pile
     * gathered (its records point into it until the next round), where each process's part of it starts
     * (P * nvlen) */
    struct h5shuf_varena *send_payload, *payload;
    uint64_t *payload_at;
    uint64_t sent_bytes;             /* bytes of rows, ids and payload sent to other processes */
    /* parts sent as their stored chunks (pilepart.h; else as decoded rows): the message being sent, the
     * one received, and the codec state that decodes it */
    int packed;
    struct h5shuf_varena msg, rmsg;
    struct h5shuf_codec_ctx codec;
};

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

/* Send this process's part of pile j (n rows; none: nothing) to process dst as its stored chunks while
 * receiving rn rows of process src's part of the pile it gathers into the buffers into (at their row 0;
 * vlen payload appended to x->payload). */
static int exchange_packed(struct exchange *x, size_t j, uint64_t n, int dst, unsigned char **into, uint64_t rn,
                           int src, struct h5shuf_err *err)
{
    int st = n ? h5shuf_part_pack(x->cx, x->sc, &x->sc->piles[j], &x->msg) : H5SHUF_OK;
    uint64_t size = n ? x->msg.n : 0, rsize = 0;
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sendrecv(x->c, n ? &size : NULL, n ? sizeof size : 0, dst, rn ? &rsize : NULL,
                                  rn ? sizeof rsize : 0, src, TAG_PART_SIZE, err);
    if (st == H5SHUF_OK && h5shuf__varena_reserve(&x->rmsg, rsize) < 0)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu bytes of a pile's part", (unsigned long long)rsize);
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sendrecv(x->c, size ? x->msg.data : NULL, size, dst, rsize ? x->rmsg.data : NULL, rsize, src,
                                  TAG_PART, err);
    x->sent_bytes += size;
    const size_t nv = x->sc->dsets->nvlen;
    for (size_t v = 0; v < nv; v++)
        x->payload_at[(size_t)src * nv + v] = x->payload[v].n;
    if (st == H5SHUF_OK && rn)
        st = h5shuf_part_unpack(x->sc, x->rmsg.data, rsize, rn, src, into, x->payload, &x->codec, err);
    return st;
}

/* One round: this process's parts of the round's piles to the processes gathering them, and (buf not
 * NULL) the rows of its own pile of the round from every process into buf, in order of process. */
static int exchange_round(struct exchange *x, unsigned char **buf, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = x->sc->dsets;
    const size_t nv = dsets->nvlen;
    const int P = x->c->size, me = x->c->rank;
    const size_t t = x->round++;
    for (int q = 0; q < P; q++)
        x->cnt[q] = t >= x->first[q] && x->plo[q] + t < x->phi[q] ? x->sc->piles[x->plo[q] + t].rows : 0;
    int st = h5shuf_comm_alltoall(x->c, x->cnt, x->rcnt, err);
    uint64_t total = 0;
    for (int r = 0; r < P; r++) {
        x->off[r] = total;
        total += x->rcnt[r];
    }
    if (st == H5SHUF_OK && total && !buf)
        st = h5shuf__fail(err, H5SHUF_EINTERNAL, "rank %d: rows sent for a pile it does not gather", me);
    for (size_t v = 0; v < nv; v++)
        x->payload[v].n = 0;
    unsigned char **to = x->to;
    for (int k = 0; k < P && st == H5SHUF_OK; k++) {
        const int dst = (me + k) % P, src = (me - k + P) % P;
        if (k == 0) { /* this process's own part: loaded in place */
            for (size_t d = 0; buf && d <= dsets->n; d++)
                to[d] = buf[d] + x->off[me] * set_bytes(dsets, d);
            for (size_t v = 0; v < nv; v++)
                x->payload_at[(size_t)me * nv + v] = x->payload[v].n;
            st = x->cnt[me] ? load_part(x, x->plo[me] + t, to, x->payload) : H5SHUF_OK;
            continue;
        }
        if (x->packed) {
            for (size_t d = 0; buf && d <= dsets->n; d++)
                to[d] = buf[d] + x->off[src] * set_bytes(dsets, d);
            st = exchange_packed(x, x->plo[dst] + t, x->cnt[dst], dst, to, x->rcnt[src], src, err);
            continue;
        }
        if (x->cnt[dst] > x->send_rows) {
            h5shuf__bufs_free(dsets, x->send);
            x->send_rows = 0;
            if (!(x->send = h5shuf__bufs_alloc(dsets, x->cnt[dst], err)))
                return err->status;
            x->send_rows = x->cnt[dst];
        }
        for (size_t v = 0; v < nv; v++)
            x->send_payload[v].n = 0;
        if (x->cnt[dst])
            st = load_part(x, x->plo[dst] + t, x->send, x->send_payload);
        for (size_t d = 0; d <= dsets->n && st == H5SHUF_OK; d++) {
            const uint64_t rb = set_bytes(dsets, d);
            st = exchange_set(x, d, x->send ? x->send[d] : NULL, x->cnt[dst], dst,
                              x->rcnt[src] ? buf[d] + x->off[src] * rb : NULL, x->rcnt[src], src, err);
        }
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

static int load_pile(void *user, size_t j, unsigned char **buf, struct h5shuf_err *err)
{
    struct exchange *x = user;
    j += x->first[x->c->rank]; /* (the gather counts its piles from the first it gathers) */
    if (x->round != j)
        return h5shuf__fail(err, H5SHUF_EINTERNAL, "pass 2 out of step: pile %zu in round %zu", j, x->round);
    return exchange_round(x, buf, err);
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

int h5shuf_dist_pass2(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_ctx *cxp, const struct h5shuf_scratch *sc,
                      const struct h5shuf_pile *g, const uint64_t *start, const size_t *plo, const size_t *phi, uint64_t a,
                      uint64_t b)
{
    const struct h5shuf_ctx cx = *cxp;
    const int P = c->size, me = c->rank;
    uint64_t *first = calloc((size_t)P, sizeof *first);
    const size_t nv = sc->dsets->nvlen;
    struct exchange x = {.c = c, .cx = &cx, .sc = sc, .plo = plo, .phi = phi, .first = first};
    /* one process: its piles hold every row, so they are loaded, overlapped and given back as the serial
     * run's (no rounds) */
    const int local = P == 1;
    size_t rounds = 0;
    for (int q = 0; q < P && !local; q++)
        rounds = phi[q] - plo[q] > rounds ? phi[q] - plo[q] : rounds;
    x.cnt = calloc((size_t)P, sizeof *x.cnt);
    x.rcnt = calloc((size_t)P, sizeof *x.rcnt);
    x.off = calloc((size_t)P, sizeof *x.off);
    x.to = calloc(sc->dsets->n + 1, sizeof *x.to);
    if (nv) {
        x.send_payload = calloc(nv, sizeof *x.send_payload);
        x.payload = calloc(nv, sizeof *x.payload);
        x.payload_at = calloc((size_t)P * nv, sizeof *x.payload_at);
    }
    int st = first && x.cnt && x.rcnt && x.off && x.to && (!nv || (x.send_payload && x.payload && x.payload_at))
                 ? H5SHUF_OK
                 : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK && !local)
        st = send_stored(job, c, sc, g, &x.packed);
    struct h5shuf_pass2 p2 = {
        .sc = sc,
        .piles = g + plo[me],
        .npiles = phi[me] - plo[me],
        .seed = job->seed,
        .strata = job->strata,
        .pipelined = local && h5shuf__plan_pipelined(&job->plan),
        .mem_limit_bytes = job->opts.mem_limit_bytes,
        .band_bytes = job->band_bytes,
        .first_row = start[plo[me]],
        .put_first = a,
        .put_end = b,
        .release = local,
        .load = local ? NULL : load_pile,
        .load_user = &x,
    };
    /* a resumed run: each process gathers from the pile holding its first row not committed, and the
     * rounds start at the earliest of them */
    h5shuf__ckpt_pass2_from(job, sc, &p2);
    if (p2.put_first > b)
        p2.put_first = b;
    if (st == H5SHUF_OK) {
        first[me] = (uint64_t)(p2.piles - (g + plo[me]));
        st = h5shuf_comm_sums(c, first, (size_t)P, &job->err);
    }
    x.round = rounds;
    for (int q = 0; st == H5SHUF_OK && q < P; q++)
        if (plo[q] < phi[q] && first[q] < x.round)
            x.round = (size_t)first[q];
    if (x.round == rounds)
        x.round = 0;
    while (st == H5SHUF_OK && x.round < first[me] && x.round < rounds) /* the others' rounds before this one's */
        st = exchange_round(&x, NULL, &job->err);
    if (st == H5SHUF_OK && a < b) {
        struct h5shuf_writer w;
        st = h5shuf__writer_init(&w, &job->of, p2.put_first, job->out_rows, job->band_threads, &job->err);
        if (st == H5SHUF_OK)
            st = h5shuf__gather(&cx, &p2, &job->out, &w);
        if (st == H5SHUF_OK)
            st = h5shuf__writer_flush(&cx, &w);
        if (st == H5SHUF_OK)
            st = h5shuf__writer_check_end(&w, b, &job->err);
        h5shuf__writer_free(&w);
    }
    st = h5shuf__targets_close(&job->out, st, &job->err);
    while (st == H5SHUF_OK && x.round < rounds)
        st = exchange_round(&x, NULL, &job->err);
    uint64_t sent = x.sent_bytes; /* (a resumed run: this run's) */
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sums(c, &sent, 1, &job->err);
    job->plan.exchanged_bytes = sent;
    h5shuf__bufs_free(sc->dsets, x.send);
    for (size_t v = 0; x.send_payload && x.payload && v < nv; v++) {
        h5shuf__varena_free(&x.send_payload[v]);
        h5shuf__varena_free(&x.payload[v]);
    }
    free(x.send_payload);
    free(x.payload);
    free(x.payload_at);
    h5shuf__varena_free(&x.msg);
    h5shuf__varena_free(&x.rmsg);
    h5shuf__codec_ctx_release(&x.codec);
    free(first);
    free(x.cnt);
    free(x.rcnt);
    free(x.off);
    free(x.to);
    return st;
}
