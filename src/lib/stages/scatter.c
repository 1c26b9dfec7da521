/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scatter.c - pass 1 (scatter the inputs into piles) and the oversize handling.
 *
 * Pass 1 reads each input in slabs of whole chunks (slabs.c; docs/design.md section 3), computes every row's key and
 * pile, and appends the row to its pile's buffer; the buffers are the buckets of a counting sort by pile,
 * and each full buffer is one scratch chunk.  Rows reach a pile in increasing global id, which pass 2's
 * stable sort relies on to break key ties by id.
 *
 * Oversize recursion re-scatters a pile whose rows exceed the bound into sub-piles over its own key range,
 * the same way, and replaces it in the key-ordered list by them; a restart redoes pass 1 with more piles.
 * Because piles are key ranges, neither recursion nor a restart can change the output.
 *
 * Pass 1 reads a range of the global rows: all of them for one process, a part for each of several
 * (docs/design.md section 5); every row reaches its pile in increasing id order either way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "inputs.h"
#include "keyparts.h"
#include "keys.h"
#include "piles.h"
#include "pileset.h"
#include "plan.h"
#include "scatter.h"
#include "slabs.h"
#include "spanread.h"
#include "vlen.h"
#include "strata.h"

/* Give up splitting a pile this many levels down: it cannot happen with uniform keys. */
#define SPLIT_DEPTH_MAX 16
/* Restarts of pass 1 before giving up (each at least doubles M). */
#define RESTARTS_MAX 20

/* Rows whose piles are found before they are appended: 32 KiB of pile numbers, in the L1 cache. */
#define SCATTER_BLOCK_ROWS 4096

/*-*************************************
*  Pass 1: scattering slabs into piles
***************************************/

/* Append n rows of the slab, with ids ids[0..n) (NULL: first + r), to their piles in ps (a head's rows
 * only); keys[r] is row r's key when keys is not NULL (computed here otherwise).  Every
 * H5SHUF_SCAN_STEP_ROWS rows, reports done + r rows of phase (a slab of tiny rows is tens of millions). */
static int scatter_rows(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_pileset *ps,
                        struct h5shuf_slab *sl, const uint64_t *ids, uint64_t first, const uint64_t *keys, uint64_t n,
                        h5shuf_phase phase, uint64_t done)
{
    uint64_t ks[SCATTER_BLOCK_ROWS];
    int st = H5SHUF_OK;
    const struct h5shuf_keyidx *bound = p->head_bound;
    for (uint64_t r0 = 0; r0 < n && st == H5SHUF_OK; r0 += SCATTER_BLOCK_ROWS) {
        const uint64_t m = n - r0 < SCATTER_BLOCK_ROWS ? n - r0 : SCATTER_BLOCK_ROWS;
        if (r0 / H5SHUF_SCAN_STEP_ROWS != (r0 + m) / H5SHUF_SCAN_STEP_ROWS &&
            (st = h5shuf__progress(&cx->progress, cx->err, phase, done + r0, p->total_rows)) != H5SHUF_OK)
            break;
        if (!keys)
            h5shuf__order_keys(p->seed, p->strata, ids ? ids + r0 : NULL, first + r0, m, ks);
        const uint64_t *key_of = keys ? keys + r0 : ks; /* (ks[j] is replaced by row j's pile below) */
        for (uint64_t j = 0; j < m; j++) {
            const uint64_t key = key_of[j];
            /* a head keeps the rows up to its bound (key, id) only */
            if (bound) {
                const uint64_t id = ids ? ids[r0 + j] : first + r0 + j;
                if (key > bound->key || (key == bound->key && id > bound->idx)) {
                    ks[j] = H5SHUF_PILE_NONE;
                    continue;
                }
            }
            ks[j] = h5shuf__range_part(ps->range, ps->m, key);
        }
        st = h5shuf__pileset_append_rows(cx, ps, ks, (const unsigned char *const *)sl->buf, r0, m,
                                         ids ? ids + r0 : NULL, first + r0);
    }
    return st;
}

static int piles_reserve(struct h5shuf_scratch *sc, size_t n, struct h5shuf_err *err)
{
    if (n <= sc->cap)
        return H5SHUF_OK;
    size_t cap = sc->cap ? sc->cap : 64;
    while (cap < n)
        cap *= 2;
    struct h5shuf_pile *v = realloc(sc->piles, cap * sizeof *v);
    if (!v)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    sc->piles = v;
    sc->cap = cap;
    return H5SHUF_OK;
}

/* The keys of a slab's rows (ids first + r), computed by a pool thread ahead of the slab's scatter. */
struct keys_ahead {
    struct h5shuf_task task; /* first: the pool hands back this pointer */
    uint64_t seed, first, n;
    const struct h5shuf_strata *strata;
    uint64_t *keys;
};

static void keys_ahead_run(struct h5shuf_task *task, unsigned thread)
{
    (void)thread;
    const struct keys_ahead *a = (const struct keys_ahead *)task;
    h5shuf__order_keys(a->seed, a->strata, NULL, a->first, a->n, a->keys);
}

/* Scatter the slabs into ps, reading slab k + 1 (pipelined: decoding it on the pool, and computing its
 * rows' keys there after its chunks) while slab k is scattered (docs/design.md section 4).  The job's thread,
 * which scatters, was the longer of the two: its half of the keys was 13% of its pass 1 (16-byte rows). */
static int scatter_slabs(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_pileset *ps,
                         struct h5shuf_slab *sl, struct h5shuf_prefetch **pf, int pipelined, struct h5shuf_chunk_cache *cache,
                         struct h5shuf_spanread *spans)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    struct h5shuf_pool *pool = h5shuf__chunkio_pool(cx->cio);
    const uint64_t from = p->restore ? p->start_row : p->first_row; /* a resumed pass 1 goes on from its checkpoint */
    uint64_t done = from - p->first_row;
    int cur = 0, st = H5SHUF_OK;
    struct keys_ahead ahead[2] = {{.n = 0}, {.n = 0}}; /* per slab buffer: idle until submitted */
    struct h5shuf_slab_pos pos = {.f = SIZE_MAX};
    int more = h5shuf__slab_next(p->inputs, from, p->end_row, p->plan->slab_rows, &pos);
    if (more) {
        struct h5shuf_slab_pos after = pos; /* asked of the disk at once */
        const int has_after = spans && h5shuf__slab_next(p->inputs, from, p->end_row, p->plan->slab_rows, &after);
        st = h5shuf__slab_start(cx, p->inputs, dsets, &pos, &sl[0], pf, pipelined, cache, spans,
                                has_after ? &after : NULL);
    }
    while (st == H5SHUF_OK && more) {
        struct h5shuf_slab_pos next = pos;
        int next_more = h5shuf__slab_next(p->inputs, from, p->end_row, p->plan->slab_rows, &next);
        int to = pipelined ? cur ^ 1 : cur;
        st = h5shuf__slab_finish(cx, p->inputs, dsets, &pos, pf);
        if (st == H5SHUF_OK && pipelined && next_more) {
            struct h5shuf_slab_pos after = next; /* the slab asked of the disk while this one is scattered */
            const int has_after = spans && h5shuf__slab_next(p->inputs, from, p->end_row, p->plan->slab_rows, &after);
            st = h5shuf__slab_start(cx, p->inputs, dsets, &next, &sl[to], pf, pipelined, cache, spans,
                                    has_after ? &after : NULL);
            if (st == H5SHUF_OK) { /* the slab's id buffer holds its rows' keys (its ids are first + r) */
                ahead[to] = (struct keys_ahead){.seed = p->seed, .strata = p->strata, .first = p->inputs->v[next.f].first_row + next.start,
                                                .n = next.n, .keys = (uint64_t *)sl[to].buf[dsets->n]};
                ahead[to].task.run = keys_ahead_run;
                h5shuf__pool_submit(pool, &ahead[to].task);
            }
        }
        if (st != H5SHUF_OK)
            break;
        uint64_t *keys = (uint64_t *)sl[cur].buf[dsets->n];
        uint64_t first = p->inputs->v[pos.f].first_row + pos.start;
        if (ahead[cur].task.submitted) {
            h5shuf__pool_wait(pool, &ahead[cur].task);
            ahead[cur].task.submitted = 0;
        } else { /* the first slab, or not pipelined: on the pool's threads and this one */
            h5shuf__keys_in_parts(pool, p->seed, p->strata, NULL, first, pos.n, keys, NULL);
        }
        st = scatter_rows(cx, p, ps, &sl[cur], NULL, first, keys, pos.n, H5SHUF_PHASE_SCATTER, done);
        h5shuf__slab_release(dsets, &sl[cur]);
        done += pos.n;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_SCATTER, done, p->total_rows);
        if (st == H5SHUF_OK && p->checkpoint)
            st = p->checkpoint(p->checkpoint_user, p->first_row + done, ps, cx->err);
        if (st == H5SHUF_OK && !pipelined && next_more)
            st = h5shuf__slab_start(cx, p->inputs, dsets, &next, &sl[to], pf, pipelined, cache, NULL, NULL);
        pos = next;
        more = next_more;
        cur = to;
    }
    for (int k = 0; k < 2; k++) /* after an error: never free what a task still writes */
        h5shuf__pool_wait(pool, &ahead[k].task);
    return st;
}

int h5shuf__pass1_load(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, const struct h5shuf_datasets *dsets,
                       unsigned char **buf)
{
    unsigned char **at = malloc((dsets->n + 1) * sizeof *at);
    if (!at)
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    struct h5shuf_slab sl = {.buf = at}; /* (no vlen arenas: HDF5 reads any vlen rows straight into buf) */
    struct h5shuf_slab_pos pos = {.f = SIZE_MAX};
    int st = H5SHUF_OK;
    while (st == H5SHUF_OK && h5shuf__slab_next(p->inputs, p->first_row, p->end_row, p->plan->slab_rows, &pos)) {
        const uint64_t first = p->inputs->v[pos.f].first_row + pos.start, off = first - p->first_row;
        for (size_t d = 0; d < dsets->n; d++)
            at[d] = buf[d] + off * dsets->ds[d].row_bytes;
        sl.rows = pos.n;
        st = h5shuf__slab_start(cx, p->inputs, dsets, &pos, &sl, NULL, 0, NULL, NULL, NULL); /* straight into buf */
        uint64_t *ids = (uint64_t *)buf[dsets->n] + off;
        for (uint64_t r = 0; st == H5SHUF_OK && r < pos.n; r++)
            ids[r] = first + r;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(&cx->progress, cx->err, H5SHUF_PHASE_SCATTER, off + pos.n, p->total_rows);
    }
    free(at);
    return st;
}

int h5shuf__scatter(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    const h5shuf_plan *plan = p->plan;
    struct h5shuf_err *err = cx->err;
    struct h5shuf_range all = {0, (h5shuf_u128)1 << 64};
    if (p->head_bound) /* a head: piles cut the keys up to its bound */
        all.hi = (h5shuf_u128)p->head_bound->key + 1;
    struct h5shuf_pileset ps = {0};
    struct h5shuf_slab sl[2] = {{0}, {0}};
    const int pipelined = h5shuf__plan_pipelined(plan) && h5shuf__chunkio_threads(cx->cio) > 1;
    struct h5shuf_prefetch **pf = calloc(dsets->n ? dsets->n : 1, sizeof *pf);
    struct h5shuf_chunk_cache *cache = plan->slab_cache_bytes ? calloc(dsets->n, sizeof *cache) : NULL;
    /* (no spans for a restarted pass 1's smaller buffers: nothing else differs) */
    struct h5shuf_spanread *spans = pipelined && p->span_bytes ? h5shuf__spanread_new(dsets->n, (size_t)p->span_bytes) : NULL;
    int st = pf && (cache || !plan->slab_cache_bytes) ? piles_reserve(sc, plan->piles, err)
                                                      : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; st == H5SHUF_OK && d < dsets->n; d++)
        if (!(pf[d] = h5shuf__prefetch_new()))
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; st == H5SHUF_OK && cache && d < dsets->n; d++) { /* the datasets the plan counted */
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (ds->vlen || !h5shuf__plan_slab_cached(ds->in_chunk_rows_max, plan->slab_rows))
            continue;
        cache[d].cap_rows = ds->in_chunk_rows_max;
        void *buf = NULL; /* on cache lines: threads decode split chunks into it (chunkio.c group_chunks) */
        if (posix_memalign(&buf, 64, cache[d].cap_rows * ds->row_bytes) == 0)
            cache[d].buf = buf;
        else
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for a chunk row of %llu bytes",
                              (unsigned long long)(cache[d].cap_rows * ds->row_bytes));
    }
    if (st == H5SHUF_OK)
        st = h5shuf__slab_alloc(dsets, &sl[0], plan->slab_rows, err);
    if (st == H5SHUF_OK && pipelined)
        st = h5shuf__slab_alloc(dsets, &sl[1], plan->slab_rows, err);
    if (st == H5SHUF_OK)
        st = h5shuf__pileset_open(cx, sc, all, plan->piles, plan->pile_buffer_rows,
                                  (size_t)h5shuf__plan_spare_buffers(plan), &ps);
    if (st == H5SHUF_OK && p->restore)
        st = p->restore(p->checkpoint_user, &ps, err);
    if (st == H5SHUF_OK)
        st = scatter_slabs(cx, p, &ps, sl, pf, pipelined, cache, spans);
    if (st == H5SHUF_OK) {
        st = h5shuf__pileset_finish(cx, &ps, sc->piles);
        if (st == H5SHUF_OK)
            sc->npiles = plan->piles;
    }
    for (size_t d = 0; pf && d < dsets->n; d++)
        h5shuf__prefetch_free(cx->cio, pf[d]); /* waits for decodes still queued after an error */
    free(pf);
    h5shuf__spanread_free(spans); /* waits for a read still under way */
    for (size_t d = 0; cache && d < dsets->n; d++)
        free(cache[d].buf);
    free(cache);
    h5shuf__pileset_free(cx->cio, &ps);
    h5shuf__slab_release(dsets, &sl[0]);
    h5shuf__slab_release(dsets, &sl[1]);
    h5shuf__slab_free(dsets, &sl[0]);
    h5shuf__slab_free(dsets, &sl[1]);
    return st;
}

/*-*************************************
*  Splitting piles over the bound
***************************************/

/* Append pile p, within its bounds, to the list out (n of cap). */
static int keep_pile(const struct h5shuf_pile *p, struct h5shuf_pile **out, size_t *n, size_t *cap,
                     struct h5shuf_err *err)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        struct h5shuf_pile *v = realloc(*out, c * sizeof *v);
        if (!v)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        *out = v;
        *cap = c;
    }
    (*out)[(*n)++] = *p;
    return H5SHUF_OK;
}

/* Into how many sub-piles pile p is split: enough for the bound's own target rows, and with vlen rows
 * enough for their bytes at the target's share of the byte bound; at least 2. */
static uint64_t split_parts(const struct h5shuf_datasets *dsets, const h5shuf_plan *plan, const struct h5shuf_pile *p)
{
    uint64_t target = h5shuf__pile_target_for_bound(plan->pile_bound_rows);
    if (target == 0)
        target = 1;
    uint64_t m = p->rows / target + (p->rows % target != 0);
    if (plan->pile_bound_bytes) {
        h5shuf_u128 unit = (h5shuf_u128)plan->pile_bound_bytes * target / plan->pile_bound_rows;
        h5shuf_u128 mb = unit ? ((h5shuf_u128)h5shuf__pile_mem_bytes(dsets, p) + unit - 1) / unit : 2;
        if (mb > m)
            m = mb < p->rows ? (uint64_t)mb : p->rows;
    }
    return m < 2 ? 2 : m;
}

/* Read pile p back in slabs and scatter its rows into m sub-piles over its key range, recorded in
 * sub[0..m); *done counts the rows for progress.  A pile without rows (another process's part of an
 * oversize pile may be empty here) has no group: its sub-piles are empty key ranges. */
static int rescatter(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc,
                     const struct h5shuf_pile *pile, uint64_t m, struct h5shuf_pile *sub, uint64_t *done)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    const h5shuf_plan *plan = p->plan;
    struct h5shuf_err *err = cx->err;
    if (pile->rows == 0) {
        for (uint64_t k = 0; k < m; k++)
            sub[k] = (struct h5shuf_pile){{h5shuf__range_cut(pile->range, m, k), h5shuf__range_cut(pile->range, m, k + 1)},
                                          UINT64_MAX, 0, 0};
        return H5SHUF_OK;
    }
    struct h5shuf_pileset ps = {0};
    struct h5shuf_slab sl = {0};
    hid_t group = H5I_INVALID_HID;
    hid_t *sets = malloc(h5shuf__pile_nsets(dsets) * sizeof *sets);
    /* vlen rows: where each payload is read up to, and the slab's payload */
    uint64_t *cursor = dsets->nvlen ? calloc(dsets->nvlen, sizeof *cursor) : NULL;
    struct h5shuf_varena *arena = dsets->nvlen ? calloc(dsets->nvlen, sizeof *arena) : NULL;
    char cause[256];
    int st = sets && (!dsets->nvlen || (cursor && arena)) ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK)
        st = h5shuf__slab_alloc(dsets, &sl, plan->slab_rows < pile->rows ? plan->slab_rows : pile->rows, err);
    if (st == H5SHUF_OK)
        st = h5shuf__pile_open(sc, pile, &group, sets, err);
    if (st == H5SHUF_OK)
        st = h5shuf__pileset_open(cx, sc, pile->range, m, h5shuf__plan_pile_buffer_rows(plan, m),
                                  (size_t)h5shuf__plan_spare_buffers(plan), &ps);
    for (uint64_t start = 0; start < pile->rows && st == H5SHUF_OK; start += sl.rows) {
        uint64_t cnt = pile->rows - start < sl.rows ? pile->rows - start : sl.rows;
        for (size_t d = 0; d <= dsets->n; d++) {
            const struct h5shuf_dsinfo *ds = d < dsets->n && dsets->ds[d].vlen ? &dsets->ds[d] : NULL;
            if (ds)
                arena[ds->vslot].n = 0;
            if ((ds ? h5shuf__vlen_load(ds, sets[d], sets[dsets->n + 1 + ds->vslot], start, cnt, &cursor[ds->vslot],
                                        sl.buf[d], &arena[ds->vslot])
                    : h5shuf__chunkio_read(cx->cio, sets[d], h5shuf__buf_type(dsets, d), start, cnt, sl.buf[d])) < 0) {
                st = h5shuf__fail(err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                                  (unsigned long long)pile->number, h5shuf__hdf5_cause(cause, sizeof cause));
                break;
            }
        }
        if (st == H5SHUF_OK)
            st = scatter_rows(cx, p, &ps, &sl, (const uint64_t *)sl.buf[dsets->n], 0, NULL, cnt, H5SHUF_PHASE_SPLIT,
                              *done);
        *done += cnt;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(&cx->progress, err, H5SHUF_PHASE_SPLIT, *done, p->total_rows);
    }
    if (st == H5SHUF_OK)
        st = h5shuf__pileset_finish(cx, &ps, sub);
    h5shuf__pileset_free(cx->cio, &ps);
    h5shuf__slab_free(dsets, &sl);
    if (sets)
        h5shuf__pile_close(group, sets, h5shuf__pile_nsets(dsets));
    free(sets);
    for (size_t v = 0; arena && v < dsets->nvlen; v++)
        h5shuf__varena_free(&arena[v]);
    free(arena);
    free(cursor);
    if (st == H5SHUF_OK)
        st = h5shuf__pile_remove(sc, pile, err);
    return st;
}

int h5shuf__piles_global(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, const struct h5shuf_pile *piles,
                         size_t n, struct h5shuf_pile **g)
{
    *g = malloc((n ? n : 1) * sizeof **g);
    uint64_t *v = p->sums ? malloc((n ? 2 * n : 1) * sizeof *v) : NULL;
    if (!*g || (p->sums && !v)) {
        free(v);
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    }
    memcpy(*g, piles, n * sizeof **g);
    int st = H5SHUF_OK;
    if (p->sums) {
        for (size_t j = 0; j < n; j++) {
            v[2 * j] = piles[j].rows;
            v[2 * j + 1] = piles[j].bytes;
        }
        st = p->sums(p->sums_user, v, 2 * n, cx->err);
        for (size_t j = 0; j < n && st == H5SHUF_OK; j++) {
            (*g)[j].rows = v[2 * j];
            (*g)[j].bytes = v[2 * j + 1];
        }
    }
    free(v);
    return st;
}

/* Split pile (this process's part of pile g, which holds the rows of all processes and is over the bound)
 * into sub-piles, appending the resulting piles, in key order and each within the bound over all
 * processes, to *out (n of cap).  The split pile's group is removed.  Every process makes the same
 * decisions, from g. */
static int split_pile(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc,
                      const struct h5shuf_pile *pile, const struct h5shuf_pile *g, int depth, struct h5shuf_pile **out,
                      size_t *n, size_t *cap, uint64_t *done)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    h5shuf_plan *plan = p->plan;
    if (!h5shuf__pile_oversize(dsets, plan, g))
        return keep_pile(pile, out, n, cap, cx->err);
    if (g->rows == 1 && g->rows <= plan->pile_bound_rows) {
        char where[512];
        size_t d = 0;
        while (d + 1 < dsets->n && !dsets->ds[d].vlen)
            d++;
        return h5shuf__fail(cx->err, H5SHUF_EBUDGET,
                            "%s: a row of %llu bytes of variable-length data does not fit the memory budget "
                            "(a pile may use %llu bytes; raise --memory)",
                            h5shuf__where(p->inputs, dsets, 0, d, where, sizeof where), (unsigned long long)g->bytes,
                            (unsigned long long)plan->pile_bound_bytes);
    }
    if (depth >= SPLIT_DEPTH_MAX || g->range.hi - g->range.lo < 2)
        return h5shuf__fail(cx->err, H5SHUF_EINTERNAL, "a pile of %llu rows cannot be split below its bound",
                            (unsigned long long)g->rows);
    uint64_t m = split_parts(dsets, plan, g);
    struct h5shuf_pile *sub = calloc(m, sizeof *sub), *gsub = NULL;
    int st = sub ? rescatter(cx, p, sc, pile, m, sub, done) : h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) {
        plan->splits++;
        st = h5shuf__piles_global(cx, p, sub, m, &gsub);
    }
    for (uint64_t k = 0; k < m && st == H5SHUF_OK; k++)
        st = split_pile(cx, p, sc, &sub[k], &gsub[k], depth + 1, out, n, cap, done);
    free(gsub);
    free(sub);
    return st;
}

/* Split every pile of sc whose rows over all processes (g) are over the bound. */
static int split_all(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc,
                     const struct h5shuf_pile *g)
{
    struct h5shuf_pile *out = NULL;
    size_t n = 0, cap = 0;
    uint64_t done = 0;
    int st = H5SHUF_OK;
    for (size_t j = 0; j < sc->npiles && st == H5SHUF_OK; j++)
        st = split_pile(cx, p, sc, &sc->piles[j], &g[j], 0, &out, &n, &cap, &done);
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

/* Is any pile over the bound (rows, or bytes of vlen rows) over all processes?  *any 1 or 0, and *g the
 * piles over all processes (h5shuf__piles_global; the caller frees it). */
static int any_oversize(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, const struct h5shuf_scratch *sc,
                        int *any, struct h5shuf_pile **g)
{
    free(*g);
    int st = h5shuf__piles_global(cx, p, sc->piles, sc->npiles, g);
    *any = 0;
    for (size_t j = 0; st == H5SHUF_OK && j < sc->npiles && !*any; j++)
        *any = h5shuf__pile_oversize(sc->dsets, p->plan, &(*g)[j]);
    return st;
}

/*-*************************************
*  Pass 1
***************************************/

int h5shuf__pass1(const struct h5shuf_ctx *cx, const struct h5shuf_pass1 *p, struct h5shuf_scratch *sc)
{
    h5shuf_plan *plan = p->plan;
    int any = 0;
    struct h5shuf_pile *g = NULL; /* the piles over all processes, once summed */
    int st = h5shuf__scatter(cx, p, sc);
    if (st == H5SHUF_OK)
        st = any_oversize(cx, p, sc, &any, &g);
    while (st == H5SHUF_OK && any && p->on_oversize == H5SHUF_OVERSIZE_RESTART) {
        if (plan->restarts == RESTARTS_MAX) {
            st = h5shuf__fail(cx->err, H5SHUF_EINTERNAL, "piles still oversize after %d restarts", RESTARTS_MAX);
            break;
        }
        /* More piles: at least twice as many, and enough for the bound's own target. */
        uint64_t target = h5shuf__pile_target_for_bound(plan->pile_bound_rows);
        uint64_t m = p->pile_rows / (target ? target : 1) + 1;
        if (m < 2 * plan->piles)
            m = 2 * plan->piles;
        /* Pass 1 keeps a buffer of at least one row per pile: when M piles no longer fit the budget, split
         * the oversize piles instead (the output is the same either way). */
        if (h5shuf__plan_slab_bytes(plan) + h5shuf__plan_pass1_pile_bytes(plan, m) > plan->mem_limit_bytes)
            break;
        plan->piles = m;
        plan->pile_buffer_rows = h5shuf__plan_pile_buffer_rows(plan, m);
        plan->restarts++;
        st = h5shuf__scratch_reset(sc, cx->err);
        struct h5shuf_pass1 again = *p; /* from the first row (a resumed pass 1 restarts whole too) */
        again.restore = NULL;
        if (st == H5SHUF_OK)
            st = h5shuf__scatter(cx, &again, sc);
        if (st == H5SHUF_OK)
            st = any_oversize(cx, p, sc, &any, &g);
    }
    if (st == H5SHUF_OK && any) /* recursion, or restarts that no longer fit */
        st = split_all(cx, p, sc, g);
    free(g);
    return st;
}
