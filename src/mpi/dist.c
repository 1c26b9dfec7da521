/*
 * dist.c - the distributed run (docs/design.md section 5), composed from the serial run's stages.
 *
 * Rows.  Process r of P scatters the global rows [r*N/P, (r+1)*N/P) into piles of the same key ranges as
 * every other (pass 1, scatter.c), in its own scratch file: node-local scratch works.  The oversize
 * handling decides from the piles' rows summed over all processes (h5shuf_pass1.sums), so every process
 * splits or restarts the same way, and the piles are the serial run's.  The pile sizes summed give each
 * pile's first output row.
 *
 * Outputs.  Each process puts a consecutive range of the output order: K shards (or splits) are dealt out
 * whole, shards [q*K/P, (q+1)*K/P) to process q, each written by one process exactly as the serial run
 * writes it.  The single output is cut at multiples of every row dataset's chunk rows: process 0 writes
 * its range into the output itself, every other process into a part file in its scratch directory,
 * chunked and filtered as the output, whose stored chunks it then sends to process 0, which writes them
 * into the output with H5Dwrite_chunk.  Each chunk is thus encoded once, by the process that made it, and
 * is byte for byte the serial run's.  (Parallel HDF5 1.10 cannot write chunks directly, and writes
 * filtered data only collectively, with known bugs before 1.12: each process uses serial HDF5 on files of
 * its own.)
 *
 * Pass 2.  Process q gathers the piles that hold its output rows (a pile cut by a range boundary is
 * gathered by both processes, each putting its own rows).  Pile rows are spread over every process's
 * scratch, so pass 2 goes in rounds: in round t, every process q with a t-th pile receives its part from
 * every process r (an all-to-all of counts, then pairwise exchanges in the order r = q, q-1, ...), in
 * order of r, hence in increasing row id, as the serial pile holds them; the sort and the writer are the
 * serial run's.
 *
 * Resume (checkpoint.h).  Every process journals its own share in its own state directory: its pass 1
 * at checkpoints, its PILES (applied only once every process recorded its own), its output files at
 * their commits, process 0 the assembled output.  On resuming, the processes agree (h5shuf_dist_agree):
 * pass 1 goes on at the furthest restart recorded, each from its own last PASS1 at that plan or from its
 * first row; pass 2 only when all recorded PILES, in rounds from the earliest any process still has to
 * gather (the others only send in those); the assembly again unless it was recorded; and when any
 * process had put its outputs in place, every output was written: the others place theirs.
 */
#include "dist.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocks.h"
#include "checkpoint.h"
#include "chunkio.h"
#include "direct.h"
#include "fault.h"
#include "gather.h"
#include "h5err.h"
#include "job.h"
#include "piles.h"
#include "pilepart.h"
#include "plan.h"
#include "scatter.h"
#include "targets.h"
#include "verify.h"
#include "vlen.h"
#include "writer.h"

enum { TAG_ROWS = 100, TAG_PAYLOAD = 150, TAG_PART_SIZE = 180, TAG_PART = 181, TAG_BLOCK = 200, TAG_BLOCK_DATA = 201 };

static struct h5shuf_ctx ctx_of(h5shuf_job *job)
{
    struct h5shuf_ctx cx = {&job->err, job->cio, {job->opts.progress, job->opts.progress_user}};
    return cx;
}

static int sums(void *user, uint64_t *v, size_t n, struct h5shuf_err *err)
{
    return h5shuf_comm_sums(user, v, n, err);
}

/* ---- who writes what ------------------------------------------------------------------------------ */

/* The rows a cut of the single output must be a multiple of (output.h). */
static uint64_t cut_unit(const h5shuf_job *job)
{
    return h5shuf__output_cut_rows(&job->dsets, job->index_path != NULL, job->source_index_path != NULL, job->out_rows);
}

/* Do the stored chunks of some dataset's rows hold addresses in the output file: vlen rows (of their
 * payload in the global heap), rows of references (of their targets, made for the file: writer.c)? */
static int rows_hold_addresses(const h5shuf_job *job)
{
    for (size_t d = 0; d < job->dsets.n; d++)
        if (job->dsets.ds[d].vlen || h5shuf__type_has_refs(job->dsets.ds[d].ftype))
            return 1;
    return 0;
}

/* The output rows [a[q], b[q]) each process q puts, and (several targets) its targets [tlo, thi).  A
 * single output whose rows hold addresses in it (rows_hold_addresses) is put by process 0 alone, so the
 * file is written as the serial run writes it. */
static void output_ranges(const h5shuf_job *job, int P, uint64_t *a, uint64_t *b, size_t *tlo, size_t *thi)
{
    const struct h5shuf_targets *t = &job->out;
    const uint64_t rows = job->out_rows, unit = cut_unit(job);
    for (int q = 0; q < P; q++) {
        if (t->n > 1) {
            size_t k0 = (size_t)((uint64_t)q * t->n / (uint64_t)P), k1 = (size_t)((uint64_t)(q + 1) * t->n / (uint64_t)P);
            tlo[q] = k0;
            thi[q] = k1;
            a[q] = k0 < k1 ? t->v[k0].first : 0;
            b[q] = k0 < k1 ? t->v[k1 - 1].first + t->v[k1 - 1].rows : a[q];
        } else {
            tlo[q] = 0;
            thi[q] = q == 0;
            a[q] = q == 0 ? 0 : (uint64_t)((h5shuf_u128)rows * (uint64_t)q / (uint64_t)P) / unit * unit;
            b[q] = q == P - 1 ? rows : (uint64_t)((h5shuf_u128)rows * (uint64_t)(q + 1) / (uint64_t)P) / unit * unit;
            if (rows_hold_addresses(job)) { /* their chunks hold the file's addresses: process 0 writes them all */
                a[q] = q == 0 ? 0 : rows;
                b[q] = rows;
            }
        }
    }
}

/* The piles [plo, phi) holding output rows [a, b), from the piles' first rows start[0..n]. */
static void pile_range(const uint64_t *start, size_t n, uint64_t a, uint64_t b, size_t *plo, size_t *phi)
{
    *plo = *phi = 0;
    if (a >= b)
        return;
    size_t j = 0;
    while (j < n && start[j + 1] <= a)
        j++;
    *plo = j;
    while (j < n && start[j] < b)
        j++;
    *phi = j;
}

/* ---- pass 2's rows between processes -------------------------------------------------------------- */

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

/* ---- the single output from its parts ------------------------------------------------------------- */

static const char *row_dataset_path(const h5shuf_job *job, size_t d)
{
    return d < job->dsets.n ? job->dsets.ds[d].out_path : d == job->dsets.n ? job->index_path : job->source_index_path;
}

static hid_t row_dataset_type(const h5shuf_job *job, size_t d)
{
    return d < job->dsets.n ? job->dsets.ds[d].ftype : d == job->dsets.n ? H5T_STD_U64LE : h5shuf__source_type(&job->in);
}

/* Open the row datasets of file (named name) into dsets[0..n+2) (invalid where there is none). */
static int open_row_datasets(h5shuf_job *job, hid_t file, const char *name, hid_t *dsets)
{
    char cause[256];
    for (size_t d = 0; d < job->dsets.n + 2; d++)
        dsets[d] = H5I_INVALID_HID;
    for (size_t d = 0; d < job->dsets.n + 2; d++)
        if (row_dataset_path(job, d) && (dsets[d] = H5Dopen2(file, row_dataset_path(job, d), H5P_DEFAULT)) < 0)
            return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", name, row_dataset_path(job, d),
                                h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

static void close_row_datasets(const h5shuf_job *job, hid_t *dsets)
{
    for (size_t d = 0; d < job->dsets.n + 2; d++)
        if (dsets[d] >= 0)
            H5Dclose(dsets[d]);
}

/* Process q > 0: send every stored block of its part (closed, its temporary file job->out.v[0].tf) to process 0,
 * then an end mark. */
static int send_part(h5shuf_job *job, struct h5shuf_comm *c)
{
    char cause[256];
    struct h5shuf_tempfile *tf = &job->out.v[0].tf;
    const char *path = tf->path;
    if (h5shuf__tempfile_unpark(tf, job->out.v[0].path, &job->err) != H5SHUF_OK)
        return job->err.status;
    hid_t *dsets = malloc((job->dsets.n + 2) * sizeof *dsets);
    if (!dsets)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    hid_t file = H5Fopen(h5shuf__tempfile_hdf5_name(tf), H5F_ACC_RDONLY, H5P_DEFAULT);
    int st = file < 0 ? h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot reopen the part: %s", path,
                                     h5shuf__hdf5_cause(cause, sizeof cause))
                      : open_row_datasets(job, file, path, dsets);
    unsigned char *buf = NULL;
    uint64_t cap = 0;
    struct h5shuf_block b;
    for (size_t d = 0; st == H5SHUF_OK && d < job->dsets.n + 2; d++) {
        struct h5shuf_blocks it;
        if (dsets[d] < 0)
            continue;
        int more = h5shuf__blocks_open(&it, dsets[d], row_dataset_type(job, d)) < 0 ? -1 : 1;
        while (st == H5SHUF_OK && (more = more < 0 ? more : h5shuf__blocks_next(&it, &b)) > 0) {
            b.dataset = (uint32_t)d;
            if (b.bytes > cap) {
                free(buf);
                cap = b.bytes;
                if (!(buf = malloc(cap)))
                    st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a chunk of %llu bytes",
                                      (unsigned long long)cap);
            }
            if (st == H5SHUF_OK && h5shuf__blocks_read(&it, &b, buf) < 0)
                more = -1;
            if (st == H5SHUF_OK && more > 0)
                st = h5shuf_comm_sendrecv(c, &b, sizeof b, 0, NULL, 0, -1, TAG_BLOCK, &job->err);
            if (st == H5SHUF_OK && more > 0)
                st = h5shuf_comm_sendrecv(c, buf, b.bytes, 0, NULL, 0, -1, TAG_BLOCK_DATA, &job->err);
            H5SHUF_KILL_POINT();
        }
        if (st == H5SHUF_OK && more < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot read the part: %s", path, row_dataset_path(job, d),
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    memset(&b, 0, sizeof b);
    b.bytes = UINT64_MAX; /* the end */
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sendrecv(c, &b, sizeof b, 0, NULL, 0, -1, TAG_BLOCK, &job->err);
    free(buf);
    if (file >= 0) {
        close_row_datasets(job, dsets);
        H5Fclose(file);
    }
    free(dsets);
    return st;
}

/* Process 0: receive the blocks of process q's part (its rows start at output row first) and write them
 * into the output's row datasets dsets (named name). */
static int receive_part(h5shuf_job *job, struct h5shuf_comm *c, int q, uint64_t first, const hid_t *dsets,
                        const char *name)
{
    char cause[256];
    unsigned char *buf = NULL;
    uint64_t cap = 0;
    struct h5shuf_block b;
    int st = H5SHUF_OK;
    for (;;) {
        st = h5shuf_comm_sendrecv(c, NULL, 0, -1, &b, sizeof b, q, TAG_BLOCK, &job->err);
        if (st != H5SHUF_OK || b.bytes == UINT64_MAX)
            break;
        if (b.dataset >= job->dsets.n + 2 || dsets[b.dataset] < 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "rank %d sent a block of no dataset", q);
            break;
        }
        if (b.bytes > cap) {
            free(buf);
            cap = b.bytes;
            if (!(buf = malloc(cap))) {
                st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a chunk of %llu bytes", (unsigned long long)cap);
                break;
            }
        }
        st = h5shuf_comm_sendrecv(c, NULL, 0, -1, buf, b.bytes, q, TAG_BLOCK_DATA, &job->err);
        H5SHUF_KILL_POINT();
        if (st == H5SHUF_OK && h5shuf__block_write(dsets[b.dataset], row_dataset_type(job, b.dataset), &b, first, buf) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot write rows of rank %d: %s", name,
                              row_dataset_path(job, b.dataset), q, h5shuf__hdf5_cause(cause, sizeof cause));
        if (st != H5SHUF_OK)
            break;
    }
    free(buf);
    return st;
}

/* The single output made whole: process 0 writes every other process's part into it. */
static int assemble(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b)
{
    if (c->rank != 0)
        return a[c->rank] < b[c->rank] ? send_part(job, c) : H5SHUF_OK;
    char cause[256];
    struct h5shuf_target *tg = &job->out.v[0];
    if (h5shuf__tempfile_unpark(&tg->tf, tg->path, &job->err) != H5SHUF_OK)
        return job->err.status;
    hid_t *dsets = malloc((job->dsets.n + 2) * sizeof *dsets);
    if (!dsets)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    /* a resumable run writes it through its checkpoint driver: a kill leaves it at its last commit */
    hid_t fapl = h5shuf__ckpt_target_fapl(job, 0);
    hid_t file = fapl < 0 ? H5I_INVALID_HID : H5Fopen(h5shuf__tempfile_hdf5_name(&tg->tf), H5F_ACC_RDWR, fapl);
    int st = fapl < 0    ? job->err.status
             : file < 0 ? h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot reopen: %s", tg->path,
                                        h5shuf__hdf5_cause(cause, sizeof cause))
                        : open_row_datasets(job, file, tg->path, dsets);
    if (fapl >= 0)
        H5Pclose(fapl);
    for (int q = 1; q < c->size && st == H5SHUF_OK; q++)
        if (a[q] < b[q])
            st = receive_part(job, c, q, a[q], dsets, tg->path);
    if (file >= 0) {
        close_row_datasets(job, dsets);
        if (st != H5SHUF_OK)
            h5shuf__ckpt_target_discard(job);
        if (st == H5SHUF_OK && H5Fflush(file, H5F_SCOPE_LOCAL) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", tg->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        if (H5Fclose(file) < 0 && st == H5SHUF_OK)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", tg->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK)
        st = h5shuf__ckpt_target_assembled(job, 0);
    free(dsets);
    return st;
}

/* ---- the run ---------------------------------------------------------------------------------------- */

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

/* Pass 2 of this process: its piles gathered into its output rows [a, b) (none: only its parts sent),
 * then the rounds left of the other processes'. */
static int pass2(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_scratch *sc, const struct h5shuf_pile *g,
                 const uint64_t *start, const size_t *plo, const size_t *phi, uint64_t a, uint64_t b)
{
    const struct h5shuf_ctx cx = ctx_of(job);
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

/* Pass 1 over this process's share of the inputs, then pass 2 and (the single output) the assembly. */
static int two_pass(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b,
                    const struct h5shuf_dist_resume *r)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    const int P = c->size, me = c->rank;
    const uint64_t N = job->in.rows;
    struct h5shuf_scratch sc = {.file = H5I_INVALID_HID};
    int st = H5SHUF_OK, done = 0; /* done: a resumed pass 1 is finished (every process's) */
    if (job->ckpt.rs.on) {
        st = h5shuf__ckpt_pass1_agree(job, r->level, r->piles, r->cap, r->all_piles);
        if (st == H5SHUF_OK)
            st = h5shuf__ckpt_scratch(job, &cx, &sc, &done);
    } else {
        st = h5shuf__job_scratch_open(job, &sc);
    }
    struct h5shuf_pass1 p1 = {
        .inputs = &job->in,
        .seed = job->seed,
        .strata = job->strata,
        .first_row = (uint64_t)((h5shuf_u128)N * (uint64_t)me / (uint64_t)P),
        .end_row = (uint64_t)((h5shuf_u128)N * (uint64_t)(me + 1) / (uint64_t)P),
        .total_rows = (uint64_t)((h5shuf_u128)N * (uint64_t)(me + 1) / (uint64_t)P) -
                      (uint64_t)((h5shuf_u128)N * (uint64_t)me / (uint64_t)P), /* (its share: progress) */
        .pile_rows = job->out_rows,
        .head_bound = job->out_rows < N ? &job->head_bound : NULL,
        .plan = &job->plan,
        .on_oversize = job->opts.on_oversize,
        .sums = sums,
        .sums_user = c,
    };
    h5shuf__ckpt_pass1_hooks(job, &sc, &p1);
    if (st == H5SHUF_OK && !done)
        st = h5shuf__pass1(&cx, &p1, &sc);
    if (st == H5SHUF_OK && !done)
        st = h5shuf__ckpt_pass1_done(job, &sc);
    struct h5shuf_pile *g = NULL;
    uint64_t *start = NULL;
    size_t *plo = calloc((size_t)P, sizeof *plo), *phi = calloc((size_t)P, sizeof *phi);
    if (st == H5SHUF_OK && (!plo || !phi))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK)
        st = h5shuf__piles_global(&cx, &p1, sc.piles, sc.npiles, &g);
    if (st == H5SHUF_OK && !(start = malloc((sc.npiles + 1) * sizeof *start)))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) {
        start[0] = 0;
        for (size_t j = 0; j < sc.npiles; j++)
            start[j + 1] = start[j] + g[j].rows;
        if (start[sc.npiles] != job->out_rows)
            st = h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "the piles hold %llu rows, not %llu",
                              (unsigned long long)start[sc.npiles], (unsigned long long)job->out_rows);
        for (int q = 0; q < P; q++)
            pile_range(start, sc.npiles, a[q], b[q], &plo[q], &phi[q]);
        hsize_t size = 0;
        uint64_t v[2] = {0, 0};
        if (H5Fget_filesize(sc.file, &size) >= 0)
            v[0] = size;
        if (st == H5SHUF_OK)
            st = h5shuf_comm_sums(c, v, 2, &job->err);
        job->plan.scratch_bytes = v[0];
        job->plan.piles = sc.npiles;
    }
    if (st == H5SHUF_OK)
        st = pass2(job, c, &sc, g, start, plo, phi, a[me], b[me]);
    else
        st = h5shuf__targets_close(&job->out, st, &job->err);
    job->temp_file[1] = NULL;
    st = h5shuf__job_disk_failed(job, st, &sc.tf);
    if (h5shuf__ckpt_keeps(job, st))
        h5shuf__ckpt_scratch_keep(job, &sc);
    else
        h5shuf__ckpt_scratch_destroy(job, &sc);
    free(g);
    free(start);
    free(plo);
    free(phi);
    if (st == H5SHUF_OK && job->out.n == 1 && P > 1 && !r->assembled)
        st = assemble(job, c, a, b);
    return st;
}

/* The direct path (direct.h) into this process's output rows [a, b) (from a resumed run's first row not
 * written): every process reads the rows of its own range straight from the inputs, in output order; no
 * scratch, nothing exchanged.  Then (the single output) the assembly. */
static int direct_run(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b,
                      const struct h5shuf_dist_resume *r)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    const int me = c->rank;
    uint64_t from = h5shuf__ckpt_first_row(job);
    from = from < a[me] ? a[me] : from > b[me] ? b[me] : from;
    int st = H5SHUF_OK;
    if (from < b[me]) {
        struct h5shuf_writer w;
        st = h5shuf__writer_init(&w, &job->of, from, job->out_rows, job->band_threads, &job->err);
        const struct h5shuf_direct d = {
            .inputs = &job->in,
            .dsets = &job->dsets,
            .rows = &job->direct_rows,
            .plan = &job->direct_plan,
            .seed = job->seed,
            .strata = job->strata,
            .head_bound = job->out_rows < job->in.rows ? &job->head_bound : NULL,
            .put_first = from,
            .put_end = b[me],
        };
        /* progress about every band's worth of bytes (as the serial run's direct path) */
        w.progress_rows = job->dsets.row_bytes < H5SHUF_BAND_BYTES_MAX ? H5SHUF_BAND_BYTES_MAX / job->dsets.row_bytes : 1;
        if (st == H5SHUF_OK)
            st = h5shuf__direct(&cx, &d, &job->out, &w);
        if (st == H5SHUF_OK)
            st = h5shuf__writer_flush(&cx, &w);
        if (st == H5SHUF_OK)
            st = h5shuf__writer_check_end(&w, b[me], &job->err);
        h5shuf__writer_free(&w);
    }
    st = h5shuf__targets_close(&job->out, st, &job->err);
    if (st == H5SHUF_OK && job->out.n == 1 && c->size > 1 && !r->assembled)
        st = assemble(job, c, a, b);
    return st;
}

/* This process's outputs: its shards, or process 0 the single output and every other its part (in its
 * state directory when the run checkpoints, in its scratch directory otherwise).  Once per run. */
static int select_outputs(h5shuf_job *job, struct h5shuf_comm *c)
{
    const int P = c->size, me = c->rank;
    uint64_t *a = calloc((size_t)P, sizeof *a), *b = calloc((size_t)P, sizeof *b);
    size_t *tlo = calloc((size_t)P, sizeof *tlo), *thi = calloc((size_t)P, sizeof *thi);
    int st = a && b && tlo && thi ? H5SHUF_OK : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) {
        output_ranges(job, P, a, b, tlo, thi);
        if (job->out.n > 1 || me == 0) {
            h5shuf__targets_select(&job->out, tlo[me], thi[me]);
        } else {
            h5shuf__targets_free(&job->out); /* process 0 makes the output; this one a part of it, or nothing */
            const char *dir = job->ckpt.rs.on ? job->ckpt.rs.dir : job->scratch_dir;
            st = h5shuf__targets_plan_part(&job->out, dir, a[me], b[me] - a[me], job->out_rows, &job->err);
            if (a[me] == b[me])
                h5shuf__targets_select(&job->out, 0, 0);
        }
    }
    free(a);
    free(b);
    free(tlo);
    free(thi);
    return st;
}

void h5shuf_dist_rows(const h5shuf_job *job, const struct h5shuf_comm *c, uint64_t *first, uint64_t *end)
{
    const int P = c->size;
    uint64_t *a = calloc((size_t)P, sizeof *a), *b = calloc((size_t)P, sizeof *b);
    size_t *tlo = calloc((size_t)P, sizeof *tlo), *thi = calloc((size_t)P, sizeof *thi);
    *first = *end = 0;
    if (a && b && tlo && thi) {
        output_ranges(job, P, a, b, tlo, thi);
        *first = a[c->rank];
        *end = b[c->rank];
    }
    free(a);
    free(b);
    free(tlo);
    free(thi);
}

/* Make this process's outputs (or, resumed, take them back). */
static int make_outputs(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    if (job->ckpt.rs.on)
        return h5shuf__ckpt_targets(job, &cx);
    job->out.unit_rows = job->ckpt.unit_rows; /* (a run without state written as a checkpointed run's) */
    return h5shuf__targets_create(&cx, &job->out, &job->of, job->out.hi - job->out.lo + 1);
}

/* Every process's outputs moved into place, or none: each moves its own once all have written theirs,
 * and takes them back if any other failed to. */
static int commit(h5shuf_job *job, struct h5shuf_comm *c, int st)
{
    uint64_t ok = 0;
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sums(c, &ok, 1, &job->err); /* every process has written its outputs */
    st = h5shuf__targets_place(&job->out, st, job->opts.force, job->out_mode, &job->err);
    if (st == H5SHUF_OK) /* fails when another process could not place its own: take ours back */
        st = h5shuf_comm_sums(c, &ok, 1, &job->err);
    h5shuf__targets_settle(&job->out, st == H5SHUF_OK); /* (with --force the files replaced come back) */
    return st;
}

/* The barrier before a process applies its PILES (checkpoint.h). */
static int barrier(void *user, struct h5shuf_err *err)
{
    uint64_t v = 0;
    return h5shuf_comm_sums(user, &v, 1, err);
}

void h5shuf_dist_prepare(h5shuf_job *job, struct h5shuf_comm *c)
{
    h5shuf__ckpt_set_rank(job, c->rank, c->size, barrier, c);
}

int h5shuf_dist_agree(h5shuf_job *job, struct h5shuf_comm *c, struct h5shuf_dist_resume *r)
{
    h5shuf__err_reset(&job->err);
    memset(r, 0, sizeof *r);
    int st = select_outputs(job, c);
    struct h5shuf_ckpt_dist d;
    h5shuf__ckpt_dist_state(job, &d);
    /* maxima: found, finished, level, shared, assembled; minima (as maxima of their complements): found,
     * PILES at the top level */
    uint64_t v[6] = {d.found, d.finished, d.level, d.shared, d.assembled, !d.found};
    if (st == H5SHUF_OK)
        st = h5shuf_comm_max(c, v, 6, &job->err);
    uint64_t lv[3] = {0, 0, !(d.piles_done && d.level == v[2])};
    if (d.level == v[2] && d.level > 0) { /* the plan of the furthest restart (the same wherever recorded) */
        lv[0] = d.piles;
        lv[1] = d.cap;
    }
    if (st == H5SHUF_OK)
        st = h5shuf_comm_max(c, lv, 3, &job->err);
    if (st != H5SHUF_OK)
        return st;
    r->finished = v[1] != 0;
    r->level = v[2];
    r->piles = lv[0];
    r->cap = lv[1];
    r->all_piles = lv[2] == 0 && v[2] > 0;
    r->assembled = v[4] != 0;
    const struct h5shuf_resume *rs = &job->ckpt.rs;
    if (d.partly_placed)
        return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: the interrupted run had put some of this process's outputs "
                            "in place: remove them and every process's state (%s) to start again", job->out.v[job->out.lo].path,
                            rs->dir);
    if (!r->finished && v[0] && v[5] && v[3] && !d.found) /* the others' states need this process's */
        return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: no state of the interrupted run, which the other processes' "
                            "need (its --tmpdir changed?): remove every process's h5shuf-resume-* to start again",
                            rs->dir ? rs->dir : job->scratch_dir);
    if (!r->finished && !job->out.part)
        st = h5shuf__targets_check(&job->out, &job->in, NULL, job->opts.force, &job->err);
    return st;
}

/* Another process had put its outputs in place: this one places its own (written), and removes its state. */
static int place_only(h5shuf_job *job)
{
    const struct h5shuf_ctx cx = ctx_of(job);
    int st = job->ckpt.rs.found ? h5shuf__ckpt_place_done(job, &cx) : H5SHUF_OK;
    if (!job->ckpt.rs.found || st != H5SHUF_OK)
        h5shuf__targets_select(&job->out, 0, 0);
    st = h5shuf__targets_place(&job->out, st, job->opts.force, job->out_mode, &job->err);
    h5shuf__targets_settle(&job->out, st == H5SHUF_OK);
    return h5shuf__ckpt_end(job, st);
}

static int dist_run(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_dist_resume *r)
{
    const int P = c->size;
    int st = H5SHUF_OK;
    if (r->finished)
        return place_only(job);
    if ((st = h5shuf__chunkio_create(job->plan.threads, &job->cio)) != H5SHUF_OK)
        h5shuf__fail(&job->err, st, "out of memory for %u threads", job->plan.threads);
    uint64_t *a = calloc((size_t)P, sizeof *a), *b = calloc((size_t)P, sizeof *b);
    size_t *tlo = calloc((size_t)P, sizeof *tlo), *thi = calloc((size_t)P, sizeof *thi);
    if (st == H5SHUF_OK && (!a || !b || !tlo || !thi))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) /* what interrupted runs left (each process its own scratch directory's) */
        st = h5shuf__job_leftovers_clear(job);
    if (st == H5SHUF_OK) {
        output_ranges(job, P, a, b, tlo, thi);
        st = make_outputs(job);
    }
    /* Every process has its state (made, or found) before any records progress: a resume is refused when
     * a process has none while another's has gone on (h5shuf_dist_agree), and the direct path has no
     * collective before its first commit, so a process slow to start, ended with the others when one was
     * killed after its commit, left a run that could never resume. */
    if (st == H5SHUF_OK && job->ckpt.rs.on)
        st = barrier(c, &job->err);
    if (st == H5SHUF_OK && job->out_rows > 0)
        st = job->plan.strategy == H5SHUF_STRATEGY_DIRECT ? direct_run(job, c, a, b, r) : two_pass(job, c, a, b, r);
    const struct h5shuf_progress progress = {job->opts.progress, job->opts.progress_user};
    if (st == H5SHUF_OK && job->opts.check && c->rank == 0) /* before the rename: a failed check leaves nothing */
        st = h5shuf__tempfile_unpark(&job->out.v[0].tf, job->out.v[0].path, &job->err);
    if (st == H5SHUF_OK && job->opts.check && c->rank == 0)
        st = h5shuf__verify_file(job->cio, &job->in, &job->dsets, h5shuf__tempfile_hdf5_name(&job->out.v[0].tf),
                                 job->out.v[0].path, job->opts.mem_limit_bytes, &progress, &job->err);
    H5SHUF_KILL_POINT();
    st = h5shuf__job_disk_failed(job, st, NULL);
    job->out.keep_files = h5shuf__ckpt_keeps(job, st); /* interrupted: the outputs are the state kept */
    st = commit(job, c, st);
    free(a);
    free(b);
    free(tlo);
    free(thi);
    return h5shuf__ckpt_end(job, st);
}

int h5shuf_dist_run(h5shuf_job *job, struct h5shuf_comm *c, const struct h5shuf_dist_resume *r)
{
    h5shuf__err_reset(&job->err);
    struct h5shuf_quiet q;
    h5shuf__quiet_begin(&q);
    int st = dist_run(job, c, r);
    h5shuf__chunkio_free(job->cio);
    job->cio = NULL;
    h5shuf__quiet_end(&q);
    return st;
}
