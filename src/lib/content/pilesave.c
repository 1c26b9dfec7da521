/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pilesave.c - a pile set saved at a checkpoint of pass 1 and restored by the resumed run (pilesave.h):
 * what it holds in memory (each pile's rows written and whether its group exists, its buffered rows, its
 * vlen payload not yet written), written through a small buffer and hashed as it goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "error.h"
#include "fault.h"
#include "pilesave.h"
#include "vlen.h"

#define SAVE_MAGIC UINT64_C(0x5355464853354831) /* "1H5SHFUS" */

/* Bytes of one buffered row of buffer d: a vlen dataset's holds its elements' lengths. */
static uint64_t saved_row_bytes(const struct h5shuf_datasets *dsets, size_t d)
{
    return d < dsets->n && dsets->ds[d].vlen ? dsets->ds[d].elems * sizeof(uint64_t) : h5shuf__buf_row_bytes(dsets, d);
}

/* Writes through a small buffer, hashing as it goes. */
struct saver {
    int fd;
    uint64_t off;
    XXH3_state_t *h;
    unsigned char buf[1 << 16];
    size_t n;
    int failed;
};

static void save_flush(struct saver *s)
{
    size_t at = 0;
    while (!s->failed && at < s->n) {
        ssize_t w = H5SHUF_FAULT() ? (errno = EIO, -1) : pwrite(s->fd, s->buf + at, s->n - at, (off_t)s->off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            s->failed = w == 0 ? ENOSPC : errno ? errno : EIO;
        else {
            at += (size_t)w;
            s->off += (uint64_t)w;
        }
    }
    s->n = 0;
}

static void save_bytes(struct saver *s, const void *p, uint64_t n)
{
    const unsigned char *c = p;
    XXH3_64bits_update(s->h, p, (size_t)n);
    while (n > 0 && !s->failed) {
        size_t take = sizeof s->buf - s->n < n ? sizeof s->buf - s->n : (size_t)n;
        memcpy(s->buf + s->n, c, take);
        s->n += take;
        c += take;
        n -= take;
        if (s->n == sizeof s->buf)
            save_flush(s);
    }
}

static void save_u64(struct saver *s, uint64_t v)
{
    save_bytes(s, &v, sizeof v);
}

int h5shuf__pileset_save(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, int fd, uint64_t *bytes, uint64_t *sum)
{
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    while (ps->fl_count > 0) {
        int st = h5shuf__pileset_flush_reap(cx, ps);
        if (st != H5SHUF_OK)
            return st;
    }
    h5shuf__pileset_stage_drain_all(ps); /* a staged row is saved as a buffered one */
    struct saver *s = malloc(sizeof *s);
    XXH3_state_t *h = XXH3_createState();
    if (!s || !h) {
        free(s);
        XXH3_freeState(h);
        return h5shuf__fail(cx->err, H5SHUF_ENOMEM, "out of memory");
    }
    s->fd = fd;
    s->off = 0;
    s->h = h;
    s->n = 0;
    s->failed = 0;
    XXH3_64bits_reset(h);
    save_u64(s, SAVE_MAGIC);
    save_u64(s, ps->m);
    save_u64(s, ps->cap);
    save_u64(s, dsets->n);
    save_u64(s, dsets->nvlen);
    for (uint64_t k = 0; k < ps->m; k++) {
        const struct h5shuf_pile_writer *w = &ps->w[k];
        save_u64(s, w->written);
        save_u64(s, (uint64_t)w->created);
        save_u64(s, w->nbuf);
        for (size_t d = 0; d <= dsets->n; d++)
            save_bytes(s, w->buf[d], w->nbuf * saved_row_bytes(dsets, d));
        for (size_t v = 0; v < dsets->nvlen; v++) {
            const struct h5shuf_varena *a = w->va ? &w->va[v] : NULL;
            save_u64(s, a ? a->written : 0);
            save_u64(s, a ? a->n : 0);
            if (a && a->n)
                save_bytes(s, a->data, a->n);
        }
    }
    save_flush(s);
    if (s->failed)
        h5shuf__err_note_errno(s->failed);
    int st = s->failed ? h5shuf__fail(cx->err, H5SHUF_EIO, "%s: cannot save pass 1's pile buffers: %s", ps->sc->path,
                                      strerror(s->failed))
                       : H5SHUF_OK;
    *bytes = s->off;
    *sum = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    free(s);
    return st;
}

/* Read exactly n bytes at *off. */
static int restore_bytes(int fd, uint64_t *off, void *p, uint64_t n)
{
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = pread(fd, c, (size_t)n, (off_t)*off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (uint64_t)r;
        *off += (uint64_t)r;
    }
    return 0;
}

int h5shuf__pileset_restore(const struct h5shuf_ctx *cx, struct h5shuf_pileset *ps, int fd, uint64_t bytes,
                            struct h5shuf_err *err)
{
    (void)cx;
    const struct h5shuf_datasets *dsets = ps->sc->dsets;
    uint64_t off = 0, head[5];
    if (restore_bytes(fd, &off, head, sizeof head) < 0 || head[0] != SAVE_MAGIC || head[1] != ps->m || head[2] != ps->cap ||
        head[3] != dsets->n || head[4] != dsets->nvlen)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers do not match its piles", ps->sc->path);
    for (uint64_t k = 0; k < ps->m; k++) {
        struct h5shuf_pile_writer *w = &ps->w[k];
        uint64_t v3[3];
        if (restore_bytes(fd, &off, v3, sizeof v3) < 0 || v3[2] > ps->cap)
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
        w->written = v3[0];
        w->created = v3[1] != 0;
        w->nbuf = v3[2];
        for (size_t d = 0; d <= dsets->n; d++)
            if (restore_bytes(fd, &off, w->buf[d], w->nbuf * saved_row_bytes(dsets, d)) < 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
        for (size_t v = 0; v < dsets->nvlen; v++) {
            uint64_t v2[2];
            if (restore_bytes(fd, &off, v2, sizeof v2) < 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
            struct h5shuf_varena *a = &w->va[v];
            size_t d = h5shuf__pile_vlen_dataset(dsets, v);
            if ((a->cap == 0 && h5shuf__varena_reserve(a, h5shuf__vlen_arena_bytes(&dsets->ds[d], ps->vchunk[v])) < 0) ||
                (v2[1] > a->cap && h5shuf__varena_reserve(a, v2[1]) < 0))
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for variable-length rows");
            a->written = v2[0];
            a->n = v2[1];
            if (a->n && restore_bytes(fd, &off, a->data, a->n) < 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
        }
    }
    if (off != bytes)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: pass 1's saved pile buffers are damaged", ps->sc->path);
    /* the pipelines of asynchronous flushes are probed again from the first pile made after this */
    ps->pl_ready = 0;
    return H5SHUF_OK;
}
