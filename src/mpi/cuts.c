/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuts.c - where the processes' output ranges cut the piles, found by all processes together (cuts.h).
 *
 * The gather sorts a pile's rows by key, ties in increasing id (sort.h: a stable sort of rows held in
 * increasing id), that is by the pair (key, id), which is unique: as one 128-bit number key << 64 | id.
 * The cut at rank k of a pile (the first k rows go before it) is any value T with exactly k of the
 * pile's rows below it.  Each process sorts its part's (key, id) and the processes bisect each cut's
 * interval [lo, hi) together: at each step every process counts its rows below 31 points cutting the
 * interval into 32 parts (binary searches), one sum over the processes gives each point's global count,
 * and the interval becomes the part holding rank k, until a point has exactly k rows below it.  The
 * keys are uniform in their pile's key range, so each step divides the rows in the interval by about
 * 32; an interval narrower than 32 values has every value as a point, so a step always ends it then.
 * Every process decides from the same sums, so all take the same steps.
 */
#include "cuts.h"

#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "h5err.h"
#include "keyparts.h"
#include "sort.h"

enum { PARTS = 32, MAX_STEPS = 200 };

/* A cut being found: in pile `pile`, at rank k; its interval [lo, hi) holds it, with n_lo of the pile's
 * rows (all processes') below lo. */
struct hunt {
    size_t pile;
    uint64_t k, n_lo;
    h5shuf_u128 lo, hi;
    int done;
};

/* This process's part of a pile: its rows' (key, id), sorted (idx holds the id). */
struct part {
    struct h5shuf_keyidx *kv;
    uint64_t n;
};

static h5shuf_u128 pair_of(const struct h5shuf_keyidx *p)
{
    return (h5shuf_u128)p->key << 64 | p->idx;
}

/* Rows of the part below v. */
static uint64_t rows_below(const struct part *p, h5shuf_u128 v)
{
    uint64_t lo = 0, hi = p->n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (pair_of(&p->kv[mid]) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Point i (1 .. PARTS - 1) of [lo, hi) in PARTS parts (at most hi). */
static h5shuf_u128 point(h5shuf_u128 lo, h5shuf_u128 hi, unsigned i)
{
    const h5shuf_u128 step = (hi - lo) / PARTS;
    if (step)
        return lo + step * i;
    return hi - lo > i ? lo + i : hi;
}

/* The (key, id) range of pile p: its keys' range, all ids. */
static void pile_span(const struct h5shuf_pile *p, h5shuf_u128 *lo, h5shuf_u128 *hi)
{
    *lo = p->range.lo << 64;
    *hi = p->range.hi >> 64 ? ~(h5shuf_u128)0 : p->range.hi << 64; /* (no id is 2^64 - 1) */
}

/* Load this process's part p of sc of the pile gp (all processes' rows): its ids, their keys, sorted. */
static int part_load(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                     const struct h5shuf_pile *gp, uint64_t seed, const struct h5shuf_strata *strata, struct part *out)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    char cause[256];
    out->n = p->rows;
    out->kv = NULL;
    if (p->rows == 0)
        return H5SHUF_OK;
    uint64_t *ids = malloc(p->rows * sizeof *ids);
    struct h5shuf_keyidx *tmp = malloc(p->rows * sizeof *tmp);
    hid_t *sets = malloc(h5shuf__pile_nsets(dsets) * sizeof *sets), group = H5I_INVALID_HID;
    out->kv = malloc(p->rows * sizeof *out->kv);
    int st = ids && tmp && sets && out->kv ? H5SHUF_OK
                                           : h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory for the keys of "
                                                          "%llu rows", (unsigned long long)p->rows);
    if (st == H5SHUF_OK)
        st = h5shuf__pile_open_whole(sc, p, &group, sets, cx->err);
    if (st == H5SHUF_OK && h5shuf__chunkio_read(cx->cio, sets[dsets->n], H5T_NATIVE_UINT64, 0, p->rows, ids) < 0)
        st = h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path, (unsigned long long)p->number,
                          h5shuf__hdf5_cause(cause, sizeof cause));
    if (group >= 0)
        h5shuf__pile_close(group, sets, h5shuf__pile_nsets(dsets));
    if (st == H5SHUF_OK) {
        h5shuf__keys_in_parts(h5shuf__chunkio_pool(cx->cio), seed, strata, ids, 0, p->rows, NULL, out->kv);
        h5shuf__sort_keyidx(out->kv, tmp, p->rows);
        for (uint64_t r = 0; r < p->rows; r++)
            out->kv[r].idx = ids[out->kv[r].idx];
        h5shuf_u128 lo, hi;
        pile_span(gp, &lo, &hi);
        if (pair_of(&out->kv[0]) < lo || pair_of(&out->kv[p->rows - 1]) >= hi)
            st = h5shuf__fail(cx->err, H5SHUF_EINTERNAL, "%s: pile %llu holds keys outside its range", sc->path,
                              (unsigned long long)p->number);
    }
    free(ids);
    free(tmp);
    free(sets);
    return st;
}

/* One step of every hunt of h[0 .. n) not done (their parts pt, by pile): each process's counts below
 * the points of their intervals, summed; each interval narrowed to the part holding its rank.  *left
 * gets the hunts still not done. */
static int step(struct h5shuf_comm *c, struct hunt *h, size_t n, const struct part *pt, size_t *left, uint64_t *sent,
                struct h5shuf_err *err)
{
    size_t active = 0;
    for (size_t i = 0; i < n; i++)
        active += !h[i].done;
    *left = active;
    if (!active)
        return H5SHUF_OK;
    uint64_t *v = malloc(active * (PARTS - 1) * sizeof *v);
    if (!v)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t i = 0, at = 0; i < n; i++) {
        if (h[i].done)
            continue;
        const struct part *p = &pt[h[i].pile];
        const uint64_t base = rows_below(p, h[i].lo);
        for (unsigned k = 1; k < PARTS; k++)
            v[at++] = rows_below(p, point(h[i].lo, h[i].hi, k)) - base;
    }
    int st = h5shuf_comm_sums(c, v, active * (PARTS - 1), err);
    *sent += active * (PARTS - 1) * sizeof *v;
    for (size_t i = 0, at = 0; i < n && st == H5SHUF_OK; i++) {
        if (h[i].done)
            continue;
        const uint64_t want = h[i].k - h[i].n_lo; /* rows of [lo, hi) below the cut: > 0 */
        const uint64_t *g = v + at;
        at += PARTS - 1;
        unsigned k = 1;
        while (k < PARTS && g[k - 1] < want)
            k++;
        if (k < PARTS && g[k - 1] == want) {
            h[i].lo = point(h[i].lo, h[i].hi, k);
            h[i].done = 1;
            (*left)--;
            continue;
        }
        /* rank k lies in part k - 1 .. k (points 0 and PARTS are lo and hi) */
        const h5shuf_u128 lo = k > 1 ? point(h[i].lo, h[i].hi, k - 1) : h[i].lo;
        h[i].hi = k < PARTS ? point(h[i].lo, h[i].hi, k) : h[i].hi;
        h[i].n_lo += k > 1 ? g[k - 2] : 0;
        h[i].lo = lo;
    }
    free(v);
    return st;
}

/* The cut rows: the boundaries of the processes' ranges strictly inside a pile, increasing. */
static int cut_rows(const uint64_t *start, size_t npiles, const uint64_t *a, const uint64_t *b, int P,
                    struct h5shuf_cuts *cuts, size_t **pile_of, struct h5shuf_err *err)
{
    cuts->row = malloc(2 * (size_t)P * sizeof *cuts->row);
    *pile_of = malloc(2 * (size_t)P * sizeof **pile_of);
    if (!cuts->row || !*pile_of)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    size_t n = 0;
    for (int q = 0; q < P; q++) /* the ranges are consecutive: their starts and ends, increasing */
        for (int e = 0; e < 2 && a[q] < b[q]; e++) {
            const uint64_t row = e ? b[q] : a[q];
            size_t lo = 0, hi = npiles; /* the pile j with start[j] <= row < start[j + 1] */
            while (hi - lo > 1) {
                const size_t mid = lo + (hi - lo) / 2;
                if (start[mid] <= row)
                    lo = mid;
                else
                    hi = mid;
            }
            if (npiles == 0 || row <= start[lo] || row >= start[lo + 1] || (n && cuts->row[n - 1] >= row))
                continue;
            cuts->row[n] = row;
            (*pile_of)[n++] = lo;
        }
    cuts->n = n;
    return H5SHUF_OK;
}

/* Find cuts [c0, c1) (their piles pile_of[c0 .. c1)), this process's parts of those piles loaded one by
 * one into pt (indexed by pile - pile_of[c0]). */
static int find_batch(const struct h5shuf_ctx *cx, struct h5shuf_comm *c, const struct h5shuf_scratch *sc,
                      const struct h5shuf_pile *g, const uint64_t *start, const size_t *pile_of, size_t c0, size_t c1, uint64_t seed,
                      const struct h5shuf_strata *strata, struct h5shuf_cuts *cuts, uint64_t *sent)
{
    const size_t first = pile_of[c0], np = pile_of[c1 - 1] - first + 1;
    struct part *pt = calloc(np, sizeof *pt);
    struct hunt *h = calloc(c1 - c0, sizeof *h);
    int st = pt && h ? H5SHUF_OK : h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t i = c0; i < c1 && st == H5SHUF_OK; i++) {
        const size_t j = pile_of[i] - first;
        if (!pt[j].kv && sc->piles[pile_of[i]].rows)
            st = part_load(cx, sc, &sc->piles[pile_of[i]], &g[pile_of[i]], seed, strata, &pt[j]);
        h[i - c0] = (struct hunt){.pile = j, .k = cuts->row[i] - start[pile_of[i]]};
        pile_span(&g[pile_of[i]], &h[i - c0].lo, &h[i - c0].hi);
    }
    size_t left = c1 - c0;
    for (int s = 0; st == H5SHUF_OK && left; s++)
        st = s < MAX_STEPS ? step(c, h, c1 - c0, pt, &left, sent, cx->err)
                           : h5shuf__fail(cx->err, H5SHUF_EINTERNAL, "the cuts of piles %zu.. were not found", first);
    for (size_t i = c0; i < c1 && st == H5SHUF_OK; i++) {
        cuts->at[i] = h[i - c0].lo;
        cuts->below[i] = rows_below(&pt[pile_of[i] - first], h[i - c0].lo);
    }
    for (size_t j = 0; pt && j < np; j++)
        free(pt[j].kv);
    free(pt);
    free(h);
    return st;
}

int h5shuf_cuts_find(const struct h5shuf_ctx *cx, struct h5shuf_comm *c, const struct h5shuf_scratch *sc,
                     const struct h5shuf_pile *g, const uint64_t *start, const uint64_t *a, const uint64_t *b, uint64_t seed,
                     const struct h5shuf_strata *strata, uint64_t mem_bytes, struct h5shuf_cuts *cuts, uint64_t *sent)
{
    memset(cuts, 0, sizeof *cuts);
    size_t *pile_of = NULL;
    int st = cut_rows(start, sc->npiles, a, b, c->size, cuts, &pile_of, cx->err);
    const size_t n = cuts->n;
    cuts->at = malloc((n ? n : 1) * sizeof *cuts->at);
    cuts->below = malloc((n ? n : 1) * sizeof *cuts->below);
    uint64_t *most = malloc((n ? n : 1) * sizeof *most); /* the most rows any process holds of each cut's pile */
    if (st == H5SHUF_OK && (!cuts->at || !cuts->below || !most))
        st = h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && st == H5SHUF_OK; i++)
        most[i] = sc->piles[pile_of[i]].rows;
    if (st == H5SHUF_OK && n)
        st = h5shuf_comm_max(c, most, n, cx->err);
    *sent += n * sizeof *most;
    /* batches of piles whose parts' sorted keys (and the sort's scratch and ids) fit mem_bytes, the same on
     * every process (from the maxima) */
    for (size_t c0 = 0, c1; c0 < n && st == H5SHUF_OK; c0 = c1) {
        uint64_t bytes = most[c0] * 40;
        for (c1 = c0 + 1; c1 < n; c1++) {
            if (pile_of[c1] == pile_of[c1 - 1])
                continue;
            if (bytes + most[c1] * 40 > mem_bytes)
                break;
            bytes += most[c1] * 40;
        }
        st = find_batch(cx, c, sc, g, start, pile_of, c0, c1, seed, strata, cuts, sent);
    }
    free(most);
    free(pile_of);
    return st;
}

void h5shuf_cuts_free(struct h5shuf_cuts *cuts)
{
    free(cuts->row);
    free(cuts->at);
    free(cuts->below);
    memset(cuts, 0, sizeof *cuts);
}

ptrdiff_t h5shuf_cuts_at(const struct h5shuf_cuts *cuts, uint64_t row)
{
    size_t lo = 0, hi = cuts->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (cuts->row[mid] < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cuts->n && cuts->row[lo] == row ? (ptrdiff_t)lo : -1;
}
