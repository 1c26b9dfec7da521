/*
 * scatter.c - pass 1 (scatter the inputs into piles) and the oversize recursion.
 *
 * Pass 1 reads each input in slabs of whole chunks (DESIGN.md section 3), computes every row's key and
 * pile, and appends the row to its pile's buffer; the buffers are the buckets of a counting sort by pile,
 * and each full buffer is one scratch chunk.  Rows reach a pile in increasing global id, which pass 2's
 * stable sort relies on to break key ties by id.
 *
 * Oversize recursion re-scatters a pile whose rows exceed the bound into sub-piles over its own key range,
 * the same way, and replaces it in the key-ordered list by them.  Because piles are key ranges, neither
 * recursion nor a restart of pass 1 can change the output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "inputs.h"
#include "job.h"
#include "piles.h"
#include "plan.h"
#include "scatter.h"
#include "vlen.h"

/* Give up splitting a pile this many levels down: it cannot happen with uniform keys. */
#define SPLIT_DEPTH_MAX 16

/* Slab buffers, one per dataset plus ids (h5shuf__bufs_alloc). */
struct slab {
    unsigned char **buf;
    uint64_t rows;
};

static int slab_alloc(h5shuf_job *job, struct slab *sl, uint64_t rows)
{
    sl->rows = rows;
    sl->buf = h5shuf__bufs_alloc(job, rows);
    for (size_t d = 0; sl->buf && d < job->nds; d++)
        if (job->ds[d].vlen) /* records HDF5 fills with pointers: zero, so slab_release is always safe */
            memset(sl->buf[d], 0, (rows ? rows : 1) * job->ds[d].row_bytes);
    return sl->buf ? H5SHUF_OK : job->err.status;
}

/* Append n rows of the slab, with ids ids[0..n), to their piles in ps. */
static int scatter_rows(h5shuf_job *job, struct h5shuf_pileset *ps, struct slab *sl, const uint64_t *ids, uint64_t n)
{
    const unsigned char *rows[64];
    const unsigned char **rp = job->nds <= 64 ? rows : malloc(job->nds * sizeof *rp);
    if (!rp)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    int st = H5SHUF_OK;
    int head = job->out_rows < job->rows;
    for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
        uint64_t key = h5shuf_key(job->seed, ids[r]);
        /* a head keeps the rows up to its bound (key, id) only */
        if (head && (key > job->head_bound.key || (key == job->head_bound.key && ids[r] > job->head_bound.idx)))
            continue;
        uint64_t k = h5shuf__range_part(ps->range, ps->m, key);
        for (size_t d = 0; d < job->nds; d++)
            rp[d] = sl->buf[d] + r * job->ds[d].row_bytes;
        st = h5shuf__pileset_append(job, ps, k, rp, ids[r]);
    }
    if (rp != rows)
        free(rp);
    return st;
}

/* Free the vlen data HDF5 allocated for the slab's rows (safe on a zeroed slab: slab_alloc zeroes). */
static void slab_release(h5shuf_job *job, struct slab *sl)
{
    for (size_t d = 0; sl->buf && d < job->nds; d++)
        if (job->ds[d].vlen)
            h5shuf__vlen_reclaim(&job->ds[d], sl->rows, sl->buf[d]);
}

static int piles_reserve(h5shuf_job *job, struct h5shuf_scratch *sc, size_t n)
{
    if (n <= sc->cap)
        return H5SHUF_OK;
    size_t cap = sc->cap ? sc->cap : 64;
    while (cap < n)
        cap *= 2;
    struct h5shuf_pile *p = realloc(sc->piles, cap * sizeof *p);
    if (!p)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    sc->piles = p;
    sc->cap = cap;
    return H5SHUF_OK;
}

/* A slab of pass 1: rows [start, start + n) of input f. */
struct slab_pos {
    size_t f;
    uint64_t start, n;
};

/* The slab after pos (the first one when pos->f == SIZE_MAX); 0 when there is none. */
static int slab_next(const h5shuf_job *job, uint64_t slab_rows, struct slab_pos *pos)
{
    uint64_t start = pos->f == SIZE_MAX ? 0 : pos->start + pos->n;
    size_t f = pos->f == SIZE_MAX ? 0 : pos->f;
    while (f < job->ninputs && start >= job->inputs[f].rows) {
        f++;
        start = 0;
    }
    if (f >= job->ninputs)
        return 0;
    uint64_t left = job->inputs[f].rows - start;
    pos->f = f;
    pos->start = start;
    pos->n = left < slab_rows ? left : slab_rows;
    return 1;
}

static int slab_fail(h5shuf_job *job, const struct slab_pos *pos, size_t d)
{
    char where[512], cause[256];
    return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot read rows %llu..%llu: %s",
                        h5shuf__where(job, pos->f, d, where, sizeof where), (unsigned long long)pos->start,
                        (unsigned long long)(pos->start + pos->n - 1), h5shuf__hdf5_cause(cause, sizeof cause));
}

/* Start reading slab pos into sl: pipelined, decoded by the pool while the caller scatters another; else
 * read whole before the call returns (without a copy of its stored chunks, which only the pipelined plan
 * counts). */
static int slab_start(h5shuf_job *job, const struct slab_pos *pos, struct slab *sl, struct h5shuf_prefetch **pf,
                      int pipelined)
{
    const struct h5shuf_input *in = &job->inputs[pos->f];
    for (size_t d = 0; d < job->nds; d++) {
        const struct h5shuf_dsinfo *ds = &job->ds[d];
        /* vlen rows: read now, into HDF5's allocations (slab_release frees them) */
        if ((ds->vlen ? h5shuf__vlen_read(ds, in->src[d].dset, pos->start, pos->n, sl->buf[d])
             : pipelined ? h5shuf__prefetch_start(job->cio, in->src[d].dset, ds->ftype, pos->start, pos->n, sl->buf[d], pf[d])
                         : h5shuf__chunkio_read(job->cio, in->src[d].dset, ds->ftype, pos->start, pos->n, sl->buf[d])) < 0)
            return slab_fail(job, pos, d);
    }
    return H5SHUF_OK;
}

static int slab_finish(h5shuf_job *job, const struct slab_pos *pos, struct h5shuf_prefetch **pf)
{
    int st = H5SHUF_OK;
    for (size_t d = 0; d < job->nds; d++)
        if (h5shuf__prefetch_finish(job->cio, pf[d]) < 0 && st == H5SHUF_OK)
            st = slab_fail(job, pos, d);
    return st;
}

int h5shuf__scatter(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    const h5shuf_plan *plan = &job->plan;
    struct h5shuf_range all = {0, (h5shuf_u128)1 << 64};
    if (job->out_rows < job->rows) /* a head: piles cut the keys up to its bound */
        all.hi = (h5shuf_u128)job->head_bound.key + 1;
    struct h5shuf_pileset ps = {0};
    struct slab sl[2] = {{0}, {0}};
    /* Pipelined: slab k + 1 is read and decoded while slab k is scattered (DESIGN.md section 4). */
    const int pipelined = h5shuf__plan_pipelined(plan) && h5shuf__chunkio_threads(job->cio) > 1;
    struct h5shuf_prefetch **pf = calloc(job->nds ? job->nds : 1, sizeof *pf);
    int st = pf ? piles_reserve(job, sc, plan->piles) : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; st == H5SHUF_OK && d < job->nds; d++)
        if (!(pf[d] = h5shuf__prefetch_new()))
            st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK)
        st = slab_alloc(job, &sl[0], plan->slab_rows);
    if (st == H5SHUF_OK && pipelined)
        st = slab_alloc(job, &sl[1], plan->slab_rows);
    if (st == H5SHUF_OK)
        st = h5shuf__pileset_open(job, sc, all, plan->piles, plan->pile_buffer_rows, &ps);
    uint64_t done = 0;
    int cur = 0;
    struct slab_pos pos = {.f = SIZE_MAX};
    int more = slab_next(job, plan->slab_rows, &pos);
    if (st == H5SHUF_OK && more)
        st = slab_start(job, &pos, &sl[0], pf, pipelined);
    while (st == H5SHUF_OK && more) {
        struct slab_pos next = pos;
        int next_more = slab_next(job, plan->slab_rows, &next);
        int to = pipelined ? cur ^ 1 : cur;
        st = slab_finish(job, &pos, pf);
        if (st == H5SHUF_OK && pipelined && next_more)
            st = slab_start(job, &next, &sl[to], pf, pipelined);
        if (st != H5SHUF_OK)
            break;
        uint64_t *ids = (uint64_t *)sl[cur].buf[job->nds];
        uint64_t first = job->inputs[pos.f].first_row + pos.start;
        for (uint64_t r = 0; r < pos.n; r++)
            ids[r] = first + r;
        st = scatter_rows(job, &ps, &sl[cur], ids, pos.n);
        slab_release(job, &sl[cur]);
        done += pos.n;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(job, H5SHUF_PHASE_SCATTER, done, job->rows);
        if (st == H5SHUF_OK && !pipelined && next_more)
            st = slab_start(job, &next, &sl[to], pf, pipelined);
        pos = next;
        more = next_more;
        cur = to;
    }
    if (st == H5SHUF_OK) {
        st = h5shuf__pileset_finish(job, &ps, sc->piles);
        if (st == H5SHUF_OK)
            sc->npiles = plan->piles;
    }
    for (size_t d = 0; pf && d < job->nds; d++)
        h5shuf__prefetch_free(job->cio, pf[d]); /* waits for decodes still queued after an error */
    free(pf);
    h5shuf__pileset_free(job, &ps);
    slab_release(job, &sl[0]);
    slab_release(job, &sl[1]);
    h5shuf__bufs_free(job, sl[0].buf);
    h5shuf__bufs_free(job, sl[1].buf);
    return st;
}

/* Split pile p (over the bound) into sub-piles, appending the resulting piles, in key order and each
 * within the bound, to *out (n of cap).  The split pile's group is removed. */
static int split_pile(h5shuf_job *job, struct h5shuf_scratch *sc, const struct h5shuf_pile *p, int depth,
                      struct h5shuf_pile **out, size_t *n, size_t *cap, uint64_t *done)
{
    const h5shuf_plan *plan = &job->plan;
    if (!h5shuf__pile_oversize(job, p)) {
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 64;
            struct h5shuf_pile *v = realloc(*out, c * sizeof *v);
            if (!v)
                return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
            *out = v;
            *cap = c;
        }
        (*out)[(*n)++] = *p;
        return H5SHUF_OK;
    }
    if (p->rows == 1 && p->rows <= plan->pile_bound_rows) {
        char where[512];
        size_t d = 0;
        while (d + 1 < job->nds && !job->ds[d].vlen)
            d++;
        return h5shuf__fail(&job->err, H5SHUF_EBUDGET,
                            "%s: a row of %llu bytes of variable-length data does not fit the memory budget "
                            "(a pile may use %llu bytes; raise --memory)",
                            h5shuf__where(job, 0, d, where, sizeof where), (unsigned long long)p->bytes,
                            (unsigned long long)plan->pile_bound_bytes);
    }
    if (depth >= SPLIT_DEPTH_MAX || p->range.hi - p->range.lo < 2)
        return h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "a pile of %llu rows cannot be split below its bound",
                            (unsigned long long)p->rows);

    uint64_t target = h5shuf__pile_target_for_bound(plan->pile_bound_rows);
    if (target == 0)
        target = 1;
    uint64_t m = p->rows / target + (p->rows % target != 0);
    if (plan->pile_bound_bytes) {
        /* vlen rows: also enough sub-piles for their bytes, at the target's share of the byte bound */
        h5shuf_u128 unit = (h5shuf_u128)plan->pile_bound_bytes * target / plan->pile_bound_rows;
        h5shuf_u128 mb = unit ? ((h5shuf_u128)h5shuf__pile_mem_bytes(job, p) + unit - 1) / unit : 2;
        if (mb > m)
            m = mb < p->rows ? (uint64_t)mb : p->rows;
    }
    if (m < 2)
        m = 2;
    struct h5shuf_pileset ps = {0};
    struct slab sl = {0};
    struct h5shuf_pile *sub = calloc(m, sizeof *sub);
    hid_t group = H5I_INVALID_HID;
    hid_t *dsets = malloc(h5shuf__pile_nsets(job) * sizeof *dsets);
    /* vlen rows: where each payload is read up to, and the slab's payload */
    uint64_t *cursor = job->nvlen ? calloc(job->nvlen, sizeof *cursor) : NULL;
    struct h5shuf_varena *arena = job->nvlen ? calloc(job->nvlen, sizeof *arena) : NULL;
    char cause[256];
    int st = sub && dsets && (!job->nvlen || (cursor && arena)) ? H5SHUF_OK
                                                                : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK)
        st = slab_alloc(job, &sl, plan->slab_rows < p->rows ? plan->slab_rows : p->rows);
    if (st == H5SHUF_OK)
        st = h5shuf__pile_open(job, sc, p, &group, dsets);
    if (st == H5SHUF_OK)
        st = h5shuf__pileset_open(job, sc, p->range, m, h5shuf__plan_pile_buffer_rows(plan, m), &ps);
    for (uint64_t start = 0; start < p->rows && st == H5SHUF_OK; start += sl.rows) {
        uint64_t cnt = p->rows - start < sl.rows ? p->rows - start : sl.rows;
        for (size_t d = 0; d <= job->nds; d++) {
            const struct h5shuf_dsinfo *ds = d < job->nds && job->ds[d].vlen ? &job->ds[d] : NULL;
            if (ds)
                arena[ds->vslot].n = 0;
            if ((ds ? h5shuf__vlen_load(ds, dsets[d], dsets[job->nds + 1 + ds->vslot], start, cnt, &cursor[ds->vslot],
                                        sl.buf[d], &arena[ds->vslot])
                    : h5shuf__chunkio_read(job->cio, dsets[d], h5shuf__buf_type(job, d), start, cnt, sl.buf[d])) < 0) {
                st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                                  (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
                break;
            }
        }
        if (st == H5SHUF_OK)
            st = scatter_rows(job, &ps, &sl, (const uint64_t *)sl.buf[job->nds], cnt);
        *done += cnt;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(job, H5SHUF_PHASE_SPLIT, *done, job->rows);
    }
    if (st == H5SHUF_OK)
        st = h5shuf__pileset_finish(job, &ps, sub);
    h5shuf__pileset_free(job, &ps);
    h5shuf__bufs_free(job, sl.buf);
    if (dsets)
        h5shuf__pile_close(group, dsets, h5shuf__pile_nsets(job));
    free(dsets);
    for (size_t v = 0; arena && v < job->nvlen; v++)
        h5shuf__varena_free(&arena[v]);
    free(arena);
    free(cursor);
    if (st == H5SHUF_OK) {
        job->plan.splits++;
        st = h5shuf__pile_remove(job, sc, p);
    }
    for (uint64_t k = 0; k < m && st == H5SHUF_OK; k++)
        st = split_pile(job, sc, &sub[k], depth + 1, out, n, cap, done);
    free(sub);
    return st;
}

int h5shuf__split_oversize(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    struct h5shuf_pile *out = NULL;
    size_t n = 0, cap = 0;
    uint64_t done = 0;
    int st = H5SHUF_OK;
    for (size_t j = 0; j < sc->npiles && st == H5SHUF_OK; j++)
        st = split_pile(job, sc, &sc->piles[j], 0, &out, &n, &cap, &done);
    if (st != H5SHUF_OK) {
        free(out);
        return st;
    }
    free(sc->piles);
    sc->piles = out;
    sc->npiles = n;
    sc->cap = cap;
    return H5SHUF_OK;
}
