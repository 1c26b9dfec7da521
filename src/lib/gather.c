/*
 * gather.c - pass 2: for each pile in key order, load it whole, sort its rows by (key, id) and stream
 * them to the output writer.  Concatenating sorted key ranges in order is the global sort by key, which
 * is the permutation contract.
 *
 * With several threads the passes overlap (DESIGN.md section 4): pile j + 1's stored chunks are read and
 * queued for decoding before pile j is sorted and written, into a second set of pile buffers that the
 * plan counts (h5shuf__plan_make).  The order of rows written is the same either way.
 */
#include <stdlib.h>
#include <string.h>

#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "gather.h"
#include "h5err.h"
#include "job.h"
#include "piles.h"
#include "plan.h"
#include "sort.h"
#include "vlen.h"
#include "writer.h"

/* Start loading pile p into buf (nds + 1 buffers): pipelined, its chunks are read now and decoded by the
 * pool; else it is loaded whole before the call returns (a few chunks in flight, no copy of the pile's
 * stored chunks, which only the pipelined plan counts).  A vlen dataset is loaded now, its payload into
 * arena[vslot] (one arena set per buffer set, vlen.c). */
static int load_start(h5shuf_job *job, struct h5shuf_scratch *sc, const struct h5shuf_pile *p, unsigned char **buf,
                      struct h5shuf_prefetch **pf, hid_t *dsets, int pipelined, struct h5shuf_varena *arena)
{
    char cause[256];
    if (p->rows == 0)
        return H5SHUF_OK;
    hid_t group;
    int st = h5shuf__pile_open(job, sc, p, &group, dsets);
    for (size_t d = 0; d <= job->nds && st == H5SHUF_OK; d++) {
        const struct h5shuf_dsinfo *ds = d < job->nds && job->ds[d].vlen ? &job->ds[d] : NULL;
        uint64_t cursor = 0;
        if (ds)
            arena[ds->vslot].n = 0;
        if ((ds ? h5shuf__vlen_load(ds, dsets[d], dsets[job->nds + 1 + ds->vslot], 0, p->rows, &cursor, buf[d],
                                    &arena[ds->vslot])
            : pipelined ? h5shuf__prefetch_start(job->cio, dsets[d], h5shuf__buf_type(job, d), 0, p->rows, buf[d], pf[d])
                        : h5shuf__chunkio_read(job->cio, dsets[d], h5shuf__buf_type(job, d), 0, p->rows, buf[d])) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                              (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
    }
    h5shuf__pile_close(group, dsets, h5shuf__pile_nsets(job)); /* the raw chunks are in memory already */
    return st;
}

static int load_finish(h5shuf_job *job, struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                       struct h5shuf_prefetch **pf)
{
    char cause[256];
    int st = H5SHUF_OK;
    for (size_t d = 0; d <= job->nds; d++)
        if (h5shuf__prefetch_finish(job->cio, pf[d]) < 0 && st == H5SHUF_OK)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                              (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
    return st;
}

/* Sort pile p (loaded in buf) by key and hand its rows to the writer. */
static int sort_and_write(h5shuf_job *job, const struct h5shuf_pile *p, unsigned char **buf, struct h5shuf_keyidx *pairs,
                          struct h5shuf_keyidx *tmp, const unsigned char **rows, struct h5shuf_writer *w)
{
    const uint64_t *ids = (const uint64_t *)buf[job->nds];
    for (uint64_t r = 0; r < p->rows; r++) {
        pairs[r].key = h5shuf_key(job->seed, ids[r]);
        pairs[r].idx = r;
    }
    h5shuf__sort_keyidx(pairs, tmp, p->rows);
    int st = H5SHUF_OK;
    for (uint64_t r = 0; r < p->rows && st == H5SHUF_OK; r++) {
        uint64_t i = pairs[r].idx;
        for (size_t d = 0; d < job->nds; d++)
            rows[d] = buf[d] + i * job->ds[d].row_bytes;
        st = h5shuf__writer_put(job, w, rows, ids[i]);
    }
    return st;
}

int h5shuf__gather(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    struct h5shuf_writer w = {0};
    uint64_t most = 0;
    for (size_t j = 0; j < sc->npiles; j++)
        if (sc->piles[j].rows > most)
            most = sc->piles[j].rows;
    /* Pipelined when the plan allows it and two of these piles fit the budget (a gather of piles made
     * by a one-thread scatter may hold piles too large for two). */
    int pipelined = h5shuf__plan_pipelined(&job->plan) && h5shuf__chunkio_threads(job->cio) > 1 && sc->npiles > 1 &&
                    (h5shuf_u128)most * h5shuf__plan_pass2_row_bytes(job->row_bytes, 1) + h5shuf__writer_bytes(job) <=
                        job->opts.mem_limit_bytes;
    if (pipelined && job->nvlen) { /* vlen rows: two of the largest piles by their real bytes */
        uint64_t most_bytes = 0;
        for (size_t j = 0; j < sc->npiles; j++) {
            uint64_t b = h5shuf__pile_mem_bytes(job, &sc->piles[j]);
            most_bytes = b > most_bytes ? b : most_bytes;
        }
        pipelined = (h5shuf_u128)2 * most_bytes + h5shuf__writer_bytes(job) <= job->opts.mem_limit_bytes;
    }

    /* Buffers for the largest pile (two sets when pipelined): rows of each dataset, ids, key/index pairs
     * and radix scratch. */
    unsigned char **buf[2] = {h5shuf__bufs_alloc(job, most), pipelined ? h5shuf__bufs_alloc(job, most) : NULL};
    struct h5shuf_keyidx *pairs = malloc((most ? most : 1) * sizeof *pairs);
    struct h5shuf_keyidx *tmp = malloc((most ? most : 1) * sizeof *tmp);
    const unsigned char **rows = calloc(job->nds ? job->nds : 1, sizeof *rows);
    hid_t *dsets = malloc(h5shuf__pile_nsets(job) * sizeof *dsets);
    struct h5shuf_prefetch **pf = calloc(job->nds + 1, sizeof *pf);
    /* vlen rows: each dataset's payload of the pile, per buffer set (grown to the largest, never copied) */
    struct h5shuf_varena *arena = job->nvlen ? calloc(2 * job->nvlen, sizeof *arena) : NULL;
    int st = h5shuf__writer_init(job, &w);
    for (size_t d = 0; pf && d <= job->nds; d++)
        if (!(pf[d] = h5shuf__prefetch_new()))
            st = st == H5SHUF_OK ? h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory") : st;
    if (st == H5SHUF_OK && (!buf[0] || (pipelined && !buf[1]) || !pairs || !tmp || !rows || !dsets || !pf || (job->nvlen && !arena)))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a pile of %llu rows", (unsigned long long)most);

    /* vlen rows: each payload buffer sized once for the largest pile's payload (pages are only touched as
     * needed), so loading piles of growing size never reallocates and fragments the heap */
    uint64_t most_payload = 0;
    for (size_t j = 0; j < sc->npiles; j++)
        most_payload = sc->piles[j].bytes > most_payload ? sc->piles[j].bytes : most_payload;
    for (size_t v = 0; st == H5SHUF_OK && arena && v < (pipelined ? 2 : 1) * job->nvlen; v++)
        if (h5shuf__varena_reserve(&arena[v], most_payload) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a pile of %llu bytes",
                              (unsigned long long)most_payload);
    int cur = 0;
    if (st == H5SHUF_OK && sc->npiles > 0)
        st = load_start(job, sc, &sc->piles[0], buf[0], pf, dsets, pipelined, arena);
    for (size_t j = 0; j < sc->npiles && st == H5SHUF_OK; j++) {
        const struct h5shuf_pile *p = &sc->piles[j];
        st = load_finish(job, sc, p, pf);
        int next = pipelined ? cur ^ 1 : cur;
        if (st == H5SHUF_OK && pipelined && j + 1 < sc->npiles) /* overlaps the sort and writes below */
            st = load_start(job, sc, &sc->piles[j + 1], buf[next], pf, dsets, pipelined,
                            arena ? arena + next * job->nvlen : NULL);
        if (st == H5SHUF_OK)
            st = sort_and_write(job, p, buf[cur], pairs, tmp, rows, &w);
        if (st == H5SHUF_OK && !pipelined && j + 1 < sc->npiles)
            st = load_start(job, sc, &sc->piles[j + 1], buf[next], pf, dsets, pipelined,
                            arena ? arena + next * job->nvlen : NULL);
        cur = next;
    }
    if (st == H5SHUF_OK)
        st = h5shuf__writer_flush(job, &w);
    for (size_t d = 0; st == H5SHUF_OK && d < job->nds + 2; d++)
        if (w.band[d].buf && w.band[d].next_row != job->out_rows)
            st = h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "wrote %llu rows of %llu", (unsigned long long)w.band[d].next_row,
                              (unsigned long long)job->out_rows);
    for (size_t d = 0; pf && d <= job->nds; d++)
        h5shuf__prefetch_free(job->cio, pf[d]); /* waits for decodes still queued after an error */
    free(pf);
    for (size_t v = 0; arena && v < 2 * job->nvlen; v++)
        h5shuf__varena_free(&arena[v]);
    free(arena);
    h5shuf__writer_free(&w);
    h5shuf__bufs_free(job, buf[0]);
    h5shuf__bufs_free(job, buf[1]);
    free(pairs);
    free(tmp);
    free(rows);
    free(dsets);
    return st;
}
