/*
 * gather.c - pass 2: for each pile in key order, load it whole, sort its rows by (key, id) and stream
 * them to the output writer.  Concatenating sorted key ranges in order is the global sort by key, which
 * is the permutation contract.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int h5shuf__gather(h5shuf_job *job, struct h5shuf_scratch *sc, hid_t *out_dsets)
{
    struct h5shuf_writer w = {0};
    char cause[256];
    uint64_t most = 0;
    for (size_t j = 0; j < sc->npiles; j++)
        if (sc->piles[j].rows > most)
            most = sc->piles[j].rows;

    /* Buffers for the largest pile: rows of each dataset, ids, key/index pairs and radix scratch. */
    unsigned char **buf = h5shuf__bufs_alloc(job, most);
    struct h5shuf_keyidx *pairs = malloc((most ? most : 1) * sizeof *pairs);
    struct h5shuf_keyidx *tmp = malloc((most ? most : 1) * sizeof *tmp);
    const unsigned char **rows = calloc(job->nds ? job->nds : 1, sizeof *rows);
    hid_t *dsets = malloc((job->nds + 1) * sizeof *dsets);
    int st = h5shuf__writer_init(job, &w, out_dsets);
    if (st == H5SHUF_OK && (!buf || !pairs || !tmp || !rows || !dsets))
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a pile of %llu rows", (unsigned long long)most);

    for (size_t j = 0; j < sc->npiles && st == H5SHUF_OK; j++) {
        const struct h5shuf_pile *p = &sc->piles[j];
        if (p->rows == 0)
            continue;
        hid_t group;
        st = h5shuf__pile_open(job, sc, p, &group, dsets);
        if (st != H5SHUF_OK)
            break;
        for (size_t d = 0; d <= job->nds && st == H5SHUF_OK; d++) {
            if (h5shuf__read_rows(dsets[d], h5shuf__buf_type(job, d), 0, p->rows, buf[d]) < 0)
                st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot read pile %llu: %s", sc->path,
                                  (unsigned long long)p->number, h5shuf__hdf5_cause(cause, sizeof cause));
        }
        h5shuf__pile_close(group, dsets, job->nds + 1);
        if (st != H5SHUF_OK)
            break;
        const uint64_t *ids = (const uint64_t *)buf[job->nds];
        for (uint64_t r = 0; r < p->rows; r++) {
            pairs[r].key = h5shuf_key(job->seed, ids[r]);
            pairs[r].idx = r;
        }
        h5shuf__sort_keyidx(pairs, tmp, p->rows);
        for (uint64_t r = 0; r < p->rows && st == H5SHUF_OK; r++) {
            uint64_t i = pairs[r].idx;
            for (size_t d = 0; d < job->nds; d++)
                rows[d] = buf[d] + i * job->ds[d].row_bytes;
            st = h5shuf__writer_put(job, &w, rows, ids[i]);
        }
    }
    if (st == H5SHUF_OK)
        st = h5shuf__writer_flush(job, &w);
    for (size_t d = 0; st == H5SHUF_OK && d < job->nds + (size_t)w.has_index; d++)
        if (w.band[d].next_row != job->rows)
            st = h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "wrote %llu rows of %llu", (unsigned long long)w.band[d].next_row,
                              (unsigned long long)job->rows);
    h5shuf__writer_free(&w);
    h5shuf__bufs_free(job, buf);
    free(pairs);
    free(tmp);
    free(rows);
    free(dsets);
    return st;
}
