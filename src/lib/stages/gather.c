/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gather.c - pass 2: for each pile in key order, load it whole, sort its rows by (key, id) and stream
 * them to the output writer.  Concatenating sorted key ranges in order is the global sort by key, which
 * is the permutation contract.
 *
 * With several threads the passes overlap (docs/design.md section 4): pile j + 1's stored chunks are read and
 * queued for decoding before pile j's rows are written, into a second set of pile buffers that the plan
 * counts (h5shuf__plan_make).  Its ids are decoded first; the job's thread computes its keys while the
 * pool decodes its rows, and a pool task sorts them while the job's thread puts pile j's rows, in a third
 * key/index array (the sort's scratch is free once a pile is sorted, so three arrays serve two piles: the
 * one being put, and the next one's records and sort scratch).  Rows of 16 bytes spent a quarter of a run
 * in the keys and sort on the job's thread, the pool's other thread idle; with keys and sort both on the
 * pool, the pool was the longer (16-byte rows: keys 14%, sort 16% of the run's samples against 15% for
 * the job thread's puts).  The order of rows written is the same either way.
 */
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "gather.h"
#include "h5err.h"
#include "ioahead.h"
#include "piles.h"
#include "keyparts.h"
#include "plan.h"
#include "prefault.h"
#include "sort.h"
#include "vlen.h"

/* Ask the kernel to read pile p's stored chunks ahead (ioahead.h), so that its load finds them in the page
 * cache: they lie one every few chunks of the whole scratch file, which the kernel's own read-ahead never
 * follows.  Best effort: a pile that cannot be opened is read as it comes. */
static void advise_pile(const struct h5shuf_scratch *sc, const struct h5shuf_pile *p, hid_t *sets)
{
    struct h5shuf_err quiet = {0};
    hid_t group;
    const int fd = h5shuf__file_fd(sc->file);
    if (fd < 0 || p->rows == 0 || h5shuf__pile_open_whole(sc, p, &group, sets, &quiet) != H5SHUF_OK)
        return;
    (void)h5shuf__chunks_willneed(fd, sets, h5shuf__pile_nsets(sc->dsets));
    h5shuf__pile_close(group, sets, h5shuf__pile_nsets(sc->dsets));
}

/* Start loading pile p into buf (n + 1 buffers): pipelined, its chunks are read now and decoded by the
 * pool, the ids' first (pf[n]: the keys wait for them only); else it is loaded whole before the call
 * returns (a few chunks in flight, no copy of the pile's stored chunks, which only the pipelined plan
 * counts).  A vlen dataset is loaded now, its payload into arena[vslot] (one arena set per buffer set,
 * vlen.c); with lengths_only, its records are not made (h5shuf__vlen_load_lengths). */
static int load_start(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                      unsigned char **buf, struct h5shuf_prefetch **pf, hid_t *sets, int pipelined,
                      struct h5shuf_varena *arena, int lengths_only, int release_fd)
{
    const struct h5shuf_datasets *dsets = sc->dsets;
    char cause[256];
    if (p->rows == 0)
        return H5SHUF_OK;
    hid_t group;
    int st = h5shuf__pile_open_whole(sc, p, &group, sets, cx->err); /* every chunk read once */
    for (size_t k = 0; k <= dsets->n && st == H5SHUF_OK; k++) {
        const size_t d = k == 0 ? dsets->n : k - 1; /* the ids, then each dataset */
        const struct h5shuf_dsinfo *ds = d < dsets->n && dsets->ds[d].vlen ? &dsets->ds[d] : NULL;
        uint64_t cursor = 0;
        if (ds && !lengths_only)
            arena[ds->vslot].n = 0;
        if ((ds ? (lengths_only ? h5shuf__vlen_load_lengths : h5shuf__vlen_load)(
                      ds, sets[d], sets[dsets->n + 1 + ds->vslot], 0, p->rows, &cursor, buf[d], &arena[ds->vslot])
            : pipelined ? h5shuf__prefetch_start(cx->cio, sets[d], h5shuf__buf_type(dsets, d), 0, p->rows, buf[d], pf[d])
                        : h5shuf__chunkio_read(cx->cio, sets[d], h5shuf__buf_type(dsets, d), 0, p->rows, buf[d])) < 0)
            st = h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                              (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK && release_fd >= 0) /* every stored byte of the pile was read above, none again */
        h5shuf__pile_release(release_fd, sets, h5shuf__pile_nsets(dsets));
    h5shuf__pile_close(group, sets, h5shuf__pile_nsets(dsets)); /* the raw chunks are in memory already */
    return st;
}

/* Wait for the decoding of pile p's chunks started by load_start: all of them, or (ids_only) the ids'. */
static int load_finish(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                       struct h5shuf_prefetch **pf, int ids_only)
{
    char cause[256];
    int st = H5SHUF_OK;
    for (size_t d = ids_only ? sc->dsets->n : 0; d <= sc->dsets->n; d++)
        if (h5shuf__prefetch_finish(cx->cio, pf[d]) < 0 && st == H5SHUF_OK)
            st = h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                              (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
    return st;
}

int h5shuf__gather_load(const struct h5shuf_ctx *cx, const struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                        unsigned char **buf, struct h5shuf_varena *arena)
{
    hid_t *sets = malloc(h5shuf__pile_nsets(sc->dsets) * sizeof *sets);
    int st = sets ? load_start(cx, sc, p, buf, NULL, sets, 0, arena, 1, -1)
                  : h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    free(sets);
    return st;
}

/* Sort the n rows of a pile by (key, id): pairs[r] = (K(seed, ids[r]), r) sorted, tmp the radix
 * scratch; the keys in parts on pool (NULL: on the calling thread). */
static void sort_pile(struct h5shuf_pool *pool, uint64_t seed, const struct h5shuf_strata *strata, const uint64_t *ids,
                      uint64_t n, struct h5shuf_keyidx *pairs, struct h5shuf_keyidx *tmp)
{
    h5shuf__keys_in_parts(pool, seed, strata, ids, 0, n, NULL, pairs);
    h5shuf__sort_keyidx(pairs, tmp, n);
}

/* The next pile's sort, run by a pool thread while the job's thread puts this pile's rows: it reads and
 * writes only the next pile's pairs (keyed before it is queued) and tmp. */
struct sort_ahead {
    struct h5shuf_task task; /* first: the pool hands back this pointer */
    uint64_t n;
    struct h5shuf_keyidx *pairs, *tmp;
};

static void sort_ahead_run(struct h5shuf_task *task, unsigned thread)
{
    (void)thread;
    struct sort_ahead *a = (struct sort_ahead *)task;
    h5shuf__sort_keyidx(a->pairs, a->tmp, a->n);
}

/* Hand the rows of pile p (loaded in buf, sorted in pairs; its first row is output row first) of output
 * rows [p2->put_first, p2->put_end) to the output. */
static int put_rows(const struct h5shuf_ctx *cx, const struct h5shuf_pass2 *p2, const struct h5shuf_pile *p,
                    uint64_t first, unsigned char **buf, const struct h5shuf_keyidx *pairs,
                    struct h5shuf_targets *out, struct h5shuf_writer *w)
{
    const struct h5shuf_datasets *dsets = p2->sc->dsets;
    /* a row's id is read only when the writer records it: at random in the pile, it costs a cache miss */
    const uint64_t *ids = w->has_index || w->has_source ? (const uint64_t *)buf[dsets->n] : NULL;
    uint64_t from = p2->put_first > first ? p2->put_first - first : 0;
    uint64_t to = p2->put_end <= first ? 0 : p2->put_end - first < p->rows ? p2->put_end - first : p->rows;
    return from < to ? h5shuf__targets_put_sorted(cx, out, w, buf, pairs + from, to - from, ids) : H5SHUF_OK;
}

/* How pass 2 overlaps its piles: not at all; loading the next pile with sorting and writing this one; or
 * that and the next pile's keys and sort with writing this one. */
enum { OVERLAP_NONE, OVERLAP_LOAD, OVERLAP_SORT };

/* The overlap the plan allows (pipelined) that fits the budget beside the bands: two of the largest piles
 * (most rows, or most bytes of vlen rows: most_bytes, whose two sort arrays each cover the third), and
 * for OVERLAP_SORT a third key/index array (a gather of piles made by a one-thread scatter, or by an
 * earlier version's plan, may hold piles too large for either). */
static int overlap(const struct h5shuf_ctx *cx, const struct h5shuf_pass2 *p, uint64_t most, uint64_t most_bytes)
{
    const struct h5shuf_datasets *dsets = p->sc->dsets;
    const uint64_t per_row = h5shuf__plan_pass2_row_bytes(dsets->row_bytes, 1);
    if (!p->pipelined || h5shuf__chunkio_threads(cx->cio) < 2 || p->npiles < 2 ||
        (h5shuf_u128)most * (per_row - H5SHUF_PASS2_SORT_AHEAD_BYTES) + p->band_bytes > p->mem_limit_bytes ||
        (dsets->nvlen && (h5shuf_u128)2 * most_bytes + p->band_bytes > p->mem_limit_bytes))
        return OVERLAP_NONE;
    return (h5shuf_u128)most * per_row + p->band_bytes <= p->mem_limit_bytes ? OVERLAP_SORT : OVERLAP_LOAD;
}

/* The buffers of pass 2, for the largest pile (two sets when overlapping): rows of each dataset and ids,
 * key/index arrays (a pile's records and sort scratch; a third for OVERLAP_SORT), pile
 * dataset ids, prefetches, vlen payload arenas. */
struct pass2_bufs {
    unsigned char **buf[2];
    struct h5shuf_keyidx *pairs[3];
    hid_t *sets;
    struct h5shuf_prefetch **pf;
    struct h5shuf_varena *arena; /* 2 * nvlen */
};

static int bufs_make(const struct h5shuf_ctx *cx, const struct h5shuf_datasets *dsets, uint64_t most,
                     uint64_t most_payload, int mode, struct pass2_bufs *b)
{
    struct h5shuf_err *err = cx->err;
    const int pipelined = mode != OVERLAP_NONE, npairs = mode == OVERLAP_SORT ? 3 : 2;
    b->buf[0] = h5shuf__bufs_alloc(dsets, most, err);
    b->buf[1] = pipelined ? h5shuf__bufs_alloc(dsets, most, err) : NULL;
    int pairs_ok = 1;
    for (int k = 0; k < npairs; k++)
        pairs_ok &= (b->pairs[k] = malloc((most ? most : 1) * sizeof *b->pairs[k])) != NULL;
    b->sets = malloc(h5shuf__pile_nsets(dsets) * sizeof *b->sets);
    b->pf = calloc(dsets->n + 1, sizeof *b->pf);
    b->arena = dsets->nvlen ? calloc(2 * dsets->nvlen, sizeof *b->arena) : NULL;
    int st = H5SHUF_OK;
    for (size_t d = 0; b->pf && d <= dsets->n; d++)
        if (!(b->pf[d] = h5shuf__prefetch_new()))
            st = st == H5SHUF_OK ? h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory") : st;
    if (st == H5SHUF_OK && (!b->buf[0] || (pipelined && !b->buf[1]) || !pairs_ok || !b->sets ||
                            !b->pf || (dsets->nvlen && !b->arena)))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for a pile of %llu rows", (unsigned long long)most);
    /* vlen rows: each payload buffer sized once for the largest pile's payload (pages are only touched as
     * needed), so loading piles of growing size never reallocates and fragments the heap */
    for (size_t v = 0; st == H5SHUF_OK && b->arena && v < (pipelined ? 2 : 1) * dsets->nvlen; v++)
        if (h5shuf__varena_reserve(&b->arena[v], most_payload) < 0)
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for a pile of %llu bytes",
                              (unsigned long long)most_payload);
    return st;
}

static void bufs_free(const struct h5shuf_ctx *cx, const struct h5shuf_datasets *dsets, struct pass2_bufs *b)
{
    for (size_t d = 0; b->pf && d <= dsets->n; d++)
        h5shuf__prefetch_free(cx->cio, b->pf[d]); /* waits for decodes still queued after an error */
    free(b->pf);
    for (size_t v = 0; b->arena && v < 2 * dsets->nvlen; v++)
        h5shuf__varena_free(&b->arena[v]);
    free(b->arena);
    h5shuf__bufs_free(dsets, b->buf[0]);
    h5shuf__bufs_free(dsets, b->buf[1]);
    for (int k = 0; k < 3; k++)
        free(b->pairs[k]);
    free(b->sets);
}

/* Queue on pool the mapping of the second half of each of the pile's row and id buffers of set 0 (the
 * load fills them from the start) and of its npairs key/index arrays (n rows each) into pre. */
static void prefault_pile(struct h5shuf_pool *pool, const struct h5shuf_datasets *dsets, uint64_t n,
                          const struct pass2_bufs *b, int npairs, struct h5shuf_prefault *pre)
{
    for (size_t d = 0; d <= dsets->n; d++) {
        const size_t bytes = (size_t)(n * h5shuf__buf_row_bytes(dsets, d));
        h5shuf__prefault_add(pre, b->buf[0][d] + bytes / 2, bytes - bytes / 2);
    }
    for (int k = 0; k < npairs; k++)
        h5shuf__prefault_add(pre, b->pairs[k], (size_t)n * sizeof *b->pairs[k]);
    h5shuf__prefault_start(pool, pre);
}

int h5shuf__gather(const struct h5shuf_ctx *cx, const struct h5shuf_pass2 *p, struct h5shuf_targets *out,
                   struct h5shuf_writer *w)
{
    const struct h5shuf_datasets *dsets = p->sc->dsets;
    uint64_t most = 0, most_bytes = 0, most_payload = 0;
    for (size_t j = 0; j < p->npiles; j++) {
        uint64_t b = h5shuf__pile_mem_bytes(dsets, &p->piles[j]);
        most = p->piles[j].rows > most ? p->piles[j].rows : most;
        most_bytes = b > most_bytes ? b : most_bytes;
        most_payload = p->piles[j].bytes > most_payload ? p->piles[j].bytes : most_payload;
    }
    const int mode = p->load ? OVERLAP_NONE : overlap(cx, p, most, most_bytes);
    const int pipelined = mode != OVERLAP_NONE, ahead = mode == OVERLAP_SORT, npairs = ahead ? 3 : 2;
    struct h5shuf_pool *pool = h5shuf__chunkio_pool(cx->cio);
    struct pass2_bufs b = {{NULL, NULL}, {NULL, NULL, NULL}, NULL, NULL, NULL};
    struct sort_ahead sorting = {.n = 0}; /* idle until queued */
    int st = bufs_make(cx, dsets, most, most_payload, mode, &b);
    const size_t nv = dsets->nvlen;
    /* vlen sequence rows go to the bands as the piles' records, their payload copied only for the rows a
     * band still holds at a pile's end (h5shuf__writer_settle): the bands' copy of every row's payload was
     * a tenth of pass 2's CPU on 2 GiB of token rows */
    w->borrow = 1;
    int cur = 0, a = 0; /* pile j's buffer set, and its sorted records' array */
    uint64_t first = p->first_row;
    /* the scratch file's descriptor when its piles' blocks are given back (-1: its piles are kept) */
    const int release_fd = p->release && !p->load && p->sc->tf.path ? p->sc->tf.fd : -1; /* (a run's own scratch only) */
    if (st == H5SHUF_OK && p->npiles > 0 && !p->load) {
        for (size_t j = 0; p->advise && j < 2 && j < p->npiles; j++) /* the first piles' reads queued */
            advise_pile(p->sc, &p->piles[j], b.sets);
        st = load_start(cx, p->sc, &p->piles[0], b.buf[0], b.pf, b.sets, pipelined, b.arena, 0, release_fd);
    }
    for (size_t j = 0; j < p->npiles && st == H5SHUF_OK; j++) {
        const struct h5shuf_pile *pile = &p->piles[j];
        struct h5shuf_prefault pre = {.n = 0}; /* (idle unless queued) */
        if (p->load && j == 0) /* the one pass's pile, new memory: mapped by the pool while it is read */
            prefault_pile(pool, dsets, pile->rows, &b, npairs, &pre);
        st = p->load ? p->load(p->load_user, j, b.buf[cur], cx->err) : load_finish(cx, p->sc, pile, b.pf, 0);
        h5shuf__pool_wait(pool, &pre.task);
        const int sorted = ahead && j > 0; /* by the task queued in the previous round */
        if (sorted) {
            h5shuf__pool_wait(pool, &sorting.task);
            sorting.task.submitted = 0;
        }
        int next = pipelined ? cur ^ 1 : cur;
        if (st == H5SHUF_OK && p->advise && !p->load && j + 2 < p->npiles) /* read while this pile is put */
            advise_pile(p->sc, &p->piles[j + 2], b.sets);
        if (st == H5SHUF_OK && pipelined && j + 1 < p->npiles) { /* overlaps the sort and writes below */
            st = load_start(cx, p->sc, &p->piles[j + 1], b.buf[next], b.pf, b.sets, pipelined,
                            b.arena ? b.arena + next * nv : NULL, 0, release_fd);
            if (st == H5SHUF_OK && ahead)
                st = load_finish(cx, p->sc, &p->piles[j + 1], b.pf, 1);
        }
        if (st == H5SHUF_OK && !sorted)
            sort_pile(pool, p->seed, p->strata, (const uint64_t *)b.buf[cur][dsets->n], pile->rows, b.pairs[a],
                      b.pairs[(a + 1) % npairs]);
        if (st == H5SHUF_OK && ahead && j + 1 < p->npiles) { /* keys while the pool decodes; the sort overlaps
                                                              * the writes below */
            sorting = (struct sort_ahead){.n = p->piles[j + 1].rows, .pairs = b.pairs[(a + 1) % 3],
                                          .tmp = b.pairs[(a + 2) % 3]};
            h5shuf__keys_in_parts(NULL, p->seed, p->strata, (const uint64_t *)b.buf[next][dsets->n], 0, sorting.n, NULL,
                                  sorting.pairs);
            sorting.task.run = sort_ahead_run;
            h5shuf__pool_submit(pool, &sorting.task);
        }
        if (st == H5SHUF_OK)
            st = put_rows(cx, p, pile, first, b.buf[cur], b.pairs[a], out, w);
        if (st == H5SHUF_OK) /* the rows still in bands stop pointing into this pile, whose set is reused */
            st = h5shuf__writer_settle(cx, w);
        if (st == H5SHUF_OK && !pipelined && !p->load && j + 1 < p->npiles)
            st = load_start(cx, p->sc, &p->piles[j + 1], b.buf[next], b.pf, b.sets, pipelined,
                            b.arena ? b.arena + next * nv : NULL, 0, release_fd);
        first += pile->rows;
        cur = next;
        a = ahead ? (a + 1) % 3 : a;
    }
    h5shuf__pool_wait(pool, &sorting.task); /* after an error: never free what the task still uses */
    int settled = h5shuf__writer_settle(cx, w); /* (after an error too: nothing in a band points into b) */
    st = st == H5SHUF_OK ? settled : st;
    w->borrow = 0;
    bufs_free(cx, dsets, &b);
    return st;
}
