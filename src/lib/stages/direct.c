/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * direct.c - the direct path: rows copied from the inputs straight into output order, no scratch file.
 *
 * Output row r is the input row of rank r in the order of (K(seed, i), i).  The two passes reach that
 * order through piles so that every read is sequential; when a row is large (a volume, a waveform: a
 * MiB or more, stored in chunks of one row) reading it alone is as efficient as reading it in a slab,
 * and the piles only move every byte twice more.  Here the order comes from the keys alone, as --head's
 * does (head.c): one scan of the N ids collects the (key, id) pairs of a window of keys, a radix sort
 * orders them, and their rows are read in that order and put into the same writer as pass 2's, so the
 * output's bytes are the two-pass run's.  A window is a key range holding about the pairs the budget
 * allows (all of them in one window when they fit); like a pile it is bounded at s + 6*sqrt(s) pairs
 * and a range that holds more is halved and scanned again, which changes nothing but the time.
 *
 * Datasets of small rows (the labels beside the volumes) are read whole first and indexed by id; the
 * others are read row by row through a ring of slots: while the current row is written (its chunks
 * encoded by the pool), the next slots - 1 rows' chunks are read and decoded by the pool too.
 */
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "direct.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "slabs.h"
#include "vlen.h"
#include "strata.h"

/* ---- which datasets are held ----------------------------------------------------------------------- */

/* Sort the dataset numbers order[0..n) by planned row bytes, smallest first, ties by number (insertion
 * sort: a job has a few datasets, and the choice must be the same every time). */
static void by_row_bytes(const struct h5shuf_datasets *dsets, size_t *order, size_t n)
{
    for (size_t k = 1; k < n; k++)
        for (size_t j = k; j > 0 && dsets->ds[order[j - 1]].plan_row_bytes > dsets->ds[order[j]].plan_row_bytes; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

int h5shuf__direct_rows(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, uint64_t mem_limit_bytes,
                        struct h5shuf_direct_rows *out, struct h5shuf_err *err)
{
    memset(out, 0, sizeof *out);
    out->chunk_rows = 1;
    size_t *order = malloc((dsets->n ? dsets->n : 1) * sizeof *order);
    out->held = calloc(dsets->n ? dsets->n : 1, 1);
    if (!order || !out->held) {
        free(order);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    for (size_t d = 0; d < dsets->n; d++)
        order[d] = d;
    by_row_bytes(dsets, order, dsets->n);
    h5shuf_u128 held = 0;
    for (size_t k = 0; k < dsets->n; k++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[order[k]];
        h5shuf_u128 bytes = (h5shuf_u128)in->rows * ds->plan_row_bytes;
        if (ds->plan_row_bytes >= H5SHUF_DIRECT_HELD_ROW_BYTES_MAX || held + bytes > mem_limit_bytes / 4)
            break;
        held += bytes;
        out->held[order[k]] = 1;
    }
    free(order);
    out->held_bytes = (uint64_t)held;
    for (size_t d = 0; d < dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (out->held[d])
            continue;
        out->read_row_bytes += ds->plan_row_bytes;
        if (!ds->vlen && ds->in_chunk_rows_max > out->chunk_rows) /* vlen: the payload is in the heap */
            out->chunk_rows = ds->in_chunk_rows_max;
    }
    return H5SHUF_OK;
}

/* ---- the held datasets ------------------------------------------------------------------------------- */

/* Read every held dataset whole into held[d] (N rows, indexed by global id). */
static int read_held(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, unsigned char **held)
{
    const struct h5shuf_inputs *in = p->inputs;
    const struct h5shuf_datasets *dsets = p->dsets;
    char where[512], cause[256];
    for (size_t d = 0; d < dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (!p->rows->held[d])
            continue;
        /* vlen rows: zeroed, so the reclaim after a failed read is safe */
        held[d] = ds->vlen ? calloc(in->rows ? in->rows : 1, ds->row_bytes) : malloc((in->rows ? in->rows : 1) * ds->row_bytes);
        if (!held[d])
            return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for %s's %llu rows", ds->out_path,
                                (unsigned long long)in->rows);
        for (size_t f = 0; f < in->n; f++) {
            unsigned char *at = held[d] + in->v[f].first_row * ds->row_bytes;
            const hid_t *src = h5shuf__input_dsets(in, dsets, f, cx->err);
            if (!src)
                return cx->err->status;
            if (h5shuf__input_rows_read(cx->cio, in, f, ds, src[d], dsets->vlen_read_limit, 0, in->v[f].rows, at) < 0)
                return h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot read its %llu rows: %s",
                                    h5shuf__where(in, dsets, f, d, where, sizeof where),
                                    (unsigned long long)in->v[f].rows, h5shuf__hdf5_cause(cause, sizeof cause));
        }
    }
    return H5SHUF_OK;
}

static void free_held(const struct h5shuf_direct *p, unsigned char **held)
{
    for (size_t d = 0; held && d < p->dsets->n; d++) {
        if (held[d] && p->dsets->ds[d].vlen)
            h5shuf__vlen_reclaim(&p->dsets->ds[d], p->inputs->rows, held[d]);
        free(held[d]);
    }
    free(held);
}

/* ---- the ring of rows read one at a time ------------------------------------------------------------ */

/* One row in flight: a buffer and a read per dataset read row by row (NULL for a held one). */
struct slot {
    unsigned char **buf;
    struct h5shuf_prefetch **pf;
    uint64_t id;
};

struct ring {
    struct slot *s;
    size_t n;
};

static void ring_free(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, struct ring *rg)
{
    for (size_t k = 0; rg->s && k < rg->n; k++) {
        struct slot *sl = &rg->s[k];
        for (size_t d = 0; d < p->dsets->n; d++) {
            if (sl->pf)
                h5shuf__prefetch_free(cx->cio, sl->pf[d]); /* waits for a decode still queued */
            if (sl->buf && sl->buf[d] && p->dsets->ds[d].vlen)
                h5shuf__vlen_reclaim(&p->dsets->ds[d], 1, sl->buf[d]);
            if (sl->buf)
                free(sl->buf[d]);
        }
        free(sl->buf);
        free(sl->pf);
    }
    free(rg->s);
}

static int ring_make(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, struct ring *rg)
{
    const struct h5shuf_datasets *dsets = p->dsets;
    rg->n = (size_t)p->plan->slots;
    rg->s = calloc(rg->n, sizeof *rg->s);
    int ok = rg->s != NULL;
    for (size_t k = 0; ok && k < rg->n; k++) {
        struct slot *sl = &rg->s[k];
        ok = (sl->buf = calloc(dsets->n, sizeof *sl->buf)) && (sl->pf = calloc(dsets->n, sizeof *sl->pf));
        for (size_t d = 0; ok && d < dsets->n; d++)
            if (!p->rows->held[d]) /* vlen: zeroed records, so a reclaim is always safe */
                ok = (sl->buf[d] = calloc(1, dsets->ds[d].row_bytes)) && (sl->pf[d] = h5shuf__prefetch_new());
    }
    return ok ? H5SHUF_OK : h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for %zu rows of %llu bytes", rg->n,
                                         (unsigned long long)p->rows->read_row_bytes);
}

static int row_fail(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, uint64_t id, size_t d)
{
    char where[512], cause[256];
    size_t f = h5shuf__input_of(p->inputs, id);
    return h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot read row %llu: %s",
                        h5shuf__where(p->inputs, p->dsets, f, d, where, sizeof where),
                        (unsigned long long)(id - p->inputs->v[f].first_row), h5shuf__hdf5_cause(cause, sizeof cause));
}

/* Start reading row id into sl: its chunks read now and decoded by the pool (vlen rows: read now). */
static int row_start(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, struct slot *sl, uint64_t id)
{
    const size_t f = h5shuf__input_of(p->inputs, id);
    const uint64_t row = h5shuf__input_file_row(p->inputs, f, id - p->inputs->v[f].first_row);
    const hid_t *src = h5shuf__input_dsets(p->inputs, p->dsets, f, cx->err); /* (read now: closed at will) */
    sl->id = id;
    if (!src)
        return cx->err->status;
    for (size_t d = 0; d < p->dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &p->dsets->ds[d];
        if (p->rows->held[d])
            continue;
        if ((ds->vlen ? h5shuf__vlen_read(ds, src[d], row, 1, p->dsets->vlen_read_limit, sl->buf[d])
                      : h5shuf__prefetch_start(cx->cio, src[d], ds->ftype, row, 1, sl->buf[d], sl->pf[d])) < 0)
            return row_fail(cx, p, id, d);
    }
    return H5SHUF_OK;
}

/* Wait for sl's row and put it, with the held datasets' rows of its id, into the output. */
static int row_put(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, struct slot *sl, unsigned char **held,
                   const unsigned char **rows, struct h5shuf_targets *out, struct h5shuf_writer *w)
{
    const struct h5shuf_datasets *dsets = p->dsets;
    int st = H5SHUF_OK;
    for (size_t d = 0; d < dsets->n; d++) {
        if (!p->rows->held[d] && h5shuf__prefetch_finish(cx->cio, sl->pf[d]) < 0 && st == H5SHUF_OK)
            st = row_fail(cx, p, sl->id, d);
        rows[d] = p->rows->held[d] ? held[d] + sl->id * dsets->ds[d].row_bytes : sl->buf[d];
    }
    if (st == H5SHUF_OK)
        st = h5shuf__targets_put(cx, out, w, rows, sl->id);
    for (size_t d = 0; d < dsets->n; d++) /* vlen rows: HDF5's allocations freed, the records zeroed */
        if (!p->rows->held[d] && dsets->ds[d].vlen)
            h5shuf__vlen_reclaim(&dsets->ds[d], 1, sl->buf[d]);
    return st;
}

/* Put the rows of pairs[0..n) (sorted) into the output, slots - 1 of them read ahead. */
static int put_window(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, const struct h5shuf_keyidx *pairs,
                      uint64_t n, struct ring *rg, unsigned char **held, const unsigned char **rows,
                      struct h5shuf_targets *out, struct h5shuf_writer *w)
{
    const uint64_t ahead = rg->n - 1;
    int st = H5SHUF_OK;
    for (uint64_t r = 0; r < n && r < ahead && st == H5SHUF_OK; r++)
        st = row_start(cx, p, &rg->s[r % rg->n], pairs[r].idx);
    for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
        if (r + ahead < n) /* into the slot freed by row r - 1: decoded while row r is written */
            st = row_start(cx, p, &rg->s[(r + ahead) % rg->n], pairs[r + ahead].idx);
        if (st == H5SHUF_OK)
            st = row_put(cx, p, &rg->s[r % rg->n], held, rows, out, w);
    }
    return st; /* after a failure, ring_free waits for the reads still queued */
}

/* ---- the windows of keys ----------------------------------------------------------------------------- */

static int pair_le(struct h5shuf_keyidx a, struct h5shuf_keyidx b)
{
    return a.key < b.key || (a.key == b.key && a.idx <= b.idx);
}

/* The pairs (K(seed, i), i) with lo <= key < hi (and within the head) in increasing i, into pairs[0..*n);
 * 0, -1 when there are more than cap, or -2 when canceled (recorded in cx->err).  Every
 * H5SHUF_SCAN_STEP_ROWS rows the writer's position is reported again (the phase's rows do not move
 * during a scan), so a cancel is seen within one step. */
static int scan(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, const struct h5shuf_writer *w,
                h5shuf_u128 lo, h5shuf_u128 hi, struct h5shuf_keyidx *pairs, uint64_t cap, uint64_t *n)
{
    *n = 0;
    for (uint64_t i = 0; i < p->inputs->rows; i++) {
        if ((i + 1) % H5SHUF_SCAN_STEP_ROWS == 0 &&
            h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_GATHER, w->pos, w->total) != H5SHUF_OK)
            return -2;
        struct h5shuf_keyidx q = {h5shuf_key(p->seed, i), i};
        h5shuf__strata_keys(p->strata, NULL, i, 1, &q.key);
        if (q.key < lo || q.key >= hi || (p->head_bound && !pair_le(q, *p->head_bound)))
            continue;
        if (*n == cap)
            return -1;
        pairs[(*n)++] = q;
    }
    return 0;
}

int h5shuf__direct(const struct h5shuf_ctx *cx, const struct h5shuf_direct *p, struct h5shuf_targets *out,
                   struct h5shuf_writer *w)
{
    const struct h5shuf_direct_plan *plan = p->plan;
    const uint64_t cap = plan->window_rows;
    struct h5shuf_keyidx *pairs = malloc((cap ? cap : 1) * sizeof *pairs), *tmp = malloc((cap ? cap : 1) * sizeof *tmp);
    unsigned char **held = calloc(p->dsets->n ? p->dsets->n : 1, sizeof *held);
    const unsigned char **rows = calloc(p->dsets->n ? p->dsets->n : 1, sizeof *rows);
    struct ring rg = {NULL, 0};
    int st = pairs && tmp && held && rows ? H5SHUF_OK
                                          : h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for %llu sort records",
                                                         (unsigned long long)cap);
    if (st == H5SHUF_OK)
        st = ring_make(cx, p, &rg);
    if (st == H5SHUF_OK)
        st = read_held(cx, p, held);
    /* Key ranges of equal width over the keys written (a head's end at its bound); a range over the bound
     * is halved, and the ones after it keep its width. */
    const h5shuf_u128 end = p->head_bound ? (h5shuf_u128)p->head_bound->key + 1 : (h5shuf_u128)1 << 64;
    h5shuf_u128 width = (end + plan->windows - 1) / plan->windows;
    uint64_t done = 0; /* output rows of the windows before this one */
    const uint64_t put_end = p->put_end ? p->put_end : UINT64_MAX;
    for (h5shuf_u128 lo = 0, hi; st == H5SHUF_OK && lo < end && done < put_end; width = hi - lo, lo = hi) {
        hi = end - lo < width ? end : lo + width;
        uint64_t n;
        int over;
        while (st == H5SHUF_OK && (over = scan(cx, p, w, lo, hi, pairs, cap, &n)) < 0)
            if (over == -2)
                st = cx->err->status;
            else if (hi - lo > 1) /* over the bound: halve it (p ~ 1e-9) */
                hi = lo + (hi - lo) / 2;
            else
                st = h5shuf__fail(cx->err, H5SHUF_EINTERNAL, "more than %llu rows share one key",
                                  (unsigned long long)cap);
        if (st == H5SHUF_OK && done + n > p->put_first) { /* (a resumed run's windows before it only counted) */
            const uint64_t skip = p->put_first > done ? p->put_first - done : 0;
            const uint64_t upto = put_end - done < n ? put_end - done : n; /* (a process's range ends there) */
            h5shuf__sort_keyidx(pairs, tmp, n);
            st = put_window(cx, p, pairs + skip, upto - skip, &rg, held, rows, out, w);
        }
        done += n;
    }
    ring_free(cx, p, &rg);
    free_held(p, held);
    free(pairs);
    free(tmp);
    free(rows);
    return st;
}
