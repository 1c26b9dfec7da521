/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * chunkio.c - reading and writing rows chunk by chunk, with the filters run by h5shuf's own threads.
 *
 * HDF5 runs a dataset's filter pipeline inside its global lock, on one core.  For the pipelines h5shuf
 * can run itself (shuffle, deflate, zstd, lzf, lzo, bitshuffle and fletcher32, docs/design.md section 4) rows
 * move instead as raw chunks: the job's thread reads each stored chunk with H5Dread_chunk and the pool's
 * threads decode it (codec.c); on the way out the pool encodes whole chunks and the job's thread stores
 * them with H5Dwrite_chunk, in chunk order (a whole chunk without filters straight from the caller's rows:
 * no copy, no task).  Everything else (contiguous layout, other filters,
 * variable-length types, unallocated chunks) goes through H5Dread/H5Dwrite as before.  The chunks of an
 * input mapped when it was scanned (inmap.h: a few chunks of whole rows) are read with pread() instead of
 * H5Dread_chunk, from the places and sizes HDF5 gave then, and decoded the same way.  Chunks are stored
 * in the same order whatever the thread count, and a chunk's bytes depend on its rows only (codec.c): the
 * file is the same.
 *
 * Chunks that split rows (h5py's automatic chunks of images: (2500, 4, 8, 1) for (N, 64, 64, 3)) move by
 * chunk rows: every chunk at one offset of dim 0, in the row-major order of the chunk indices, which is
 * the order HDF5's own H5Dwrite stores them in (output datasets have no chunk cache).  A task is a group
 * of consecutive chunks of a chunk row (up to GROUP_BYTES of them) whose worker moves their blocks between
 * the chunks and the rows together, a row at a time for all of them (h5shuf__codec_encode_group, _decode_group):
 * chunk by chunk, h5py's image chunks missed cache and TLB on every row.  The blocks of a chunk row are
 * disjoint, so the groups run at once.  Reads (h5shuf__chunkio_read, which slabs.c's chunk rows kept
 * between slabs use, and the prefetch) and writes alike.
 *
 * Buffers: a chunk's rows can be large (a row of 16 MiB is one chunk), and the budget may hold only a
 * few, so chunkio holds only the buffers a chunk in flight needs.  A read keeps the stored bytes in a raw
 * buffer of about the stored size; a write makes them in a raw buffer of h5shuf__codec_bound(chunk) bytes,
 * room for any encoding; the threads' stage and group buffers are codec.c's.  Raw buffers belong to task slots
 * and are grown by the job's thread before the task is queued; stage buffers are touched by their own
 * thread only; so no buffer is ever resized under a running task (which is why nothing waits for pass
 * 1's queued encodes before a transfer of larger chunks).  Buffers only grow, to the largest chunk seen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocks.h" /* h5shuf__read_chunk */
#include "boundread.h" /* h5shuf__dread */
#include "chunkio.h"
#include "codec.h"
#include "fault.h"
#include "inmap.h"
#include "pool.h"
#include "rows.h"
#include "spanread.h"

/* Task slots per thread: the job's thread reads (or writes) this far ahead of the decoders (encoders). */
#define SLOTS_PER_THREAD 2u

/* Split chunks move in groups of a chunk row's consecutive chunks, up to this many bytes of chunks a
 * group: a thread's group buffer (codec.h) holds a group's chunks, and an encode's task slot holds their
 * encodings.  Outside the budget, as the buffers of chunks of 1 MiB are. */
#define GROUP_BYTES ((size_t)1 << 20)
/* ... or up to this many times more, to end on the chunks of a chunk index of dim 1 (group_chunks). */
#define GROUP_SPAN_MAX 4u

/* A chunk in flight: decode k.raw into the caller's rows, or encode them into k.raw; or a group of split
 * chunks of a chunk row decoded or encoded together (group[0 .. n), when n > 0; k is not used). */
struct chunk_task {
    struct h5shuf_task task; /* first: the pool hands back this pointer */
    struct h5shuf_chunkio *cio;
    int encode;
    struct h5shuf_codec_chunk k; /* k.off: the chunk's offset in the dataset */
    struct h5shuf_codec_chunk *group; /* group_cap of them, each with its raw buffer */
    size_t n, group_cap;
};

struct h5shuf_chunkio {
    struct h5shuf_pool *pool;
    unsigned nthreads;
    struct h5shuf_codec_ctx *ctx; /* nthreads */
    struct chunk_task *slot; /* nslots; a slot's raw buffer is made the first time it is used */
    unsigned nslots;
};

static void chunk_task_run(struct h5shuf_task *task, unsigned worker)
{
    struct chunk_task *t = (struct chunk_task *)task;
    struct h5shuf_codec_ctx *c = &t->cio->ctx[worker];
    t->k.err[0] = '\0';
    if (t->n > 0 && t->encode)
        h5shuf__codec_encode_group(t->group, t->n, c);
    else if (t->n > 0)
        h5shuf__codec_decode_group(t->group, t->n, c);
    else if (t->encode)
        h5shuf__codec_encode(&t->k, c);
    else
        h5shuf__codec_decode(&t->k, c);
}

/*-*************************************
*  The job's chunk I/O state
***************************************/

int h5shuf__chunkio_create(unsigned nthreads, struct h5shuf_chunkio **out)
{
    *out = NULL;
    struct h5shuf_chunkio *cio = calloc(1, sizeof *cio);
    if (!cio)
        return H5SHUF_ENOMEM;
    int st = h5shuf__pool_create(nthreads, &cio->pool);
    if (st == H5SHUF_OK) {
        cio->nthreads = h5shuf__pool_threads(cio->pool);
        cio->ctx = calloc(cio->nthreads, sizeof *cio->ctx);
        cio->nslots = SLOTS_PER_THREAD * cio->nthreads;
        cio->slot = calloc(cio->nslots, sizeof *cio->slot);
        if (!cio->ctx || !cio->slot)
            st = H5SHUF_ENOMEM;
    }
    if (st != H5SHUF_OK) {
        h5shuf__chunkio_free(cio);
        return st;
    }
    *out = cio;
    return H5SHUF_OK;
}

void h5shuf__chunkio_free(struct h5shuf_chunkio *cio)
{
    if (!cio)
        return;
    h5shuf__pool_free(cio->pool); /* joins the workers: nothing runs past here */
    for (unsigned i = 0; cio->ctx && i < cio->nthreads; i++) {
        h5shuf__codec_ctx_release(&cio->ctx[i]);
    }
    for (unsigned i = 0; cio->slot && i < cio->nslots; i++) {
        struct chunk_task *t = &cio->slot[i];
        free(t->k.raw);
        for (size_t g = 0; g < t->group_cap; g++)
            free(t->group[g].raw);
        free(t->group);
    }
    free(cio->ctx);
    free(cio->slot);
    free(cio);
}

struct h5shuf_pool *h5shuf__chunkio_pool(struct h5shuf_chunkio *cio)
{
    return cio ? cio->pool : NULL;
}

unsigned h5shuf__chunkio_threads(const struct h5shuf_chunkio *cio)
{
    return cio ? cio->nthreads : 1;
}

void h5shuf__chunkio_held(const struct h5shuf_chunkio *cio, size_t *raw_bytes, unsigned *stages, size_t *stage_bytes)
{
    *raw_bytes = *stage_bytes = 0;
    *stages = 0;
    for (unsigned i = 0; i < cio->nslots; i++) {
        const struct chunk_task *t = &cio->slot[i];
        *raw_bytes += t->k.raw_cap;
        for (size_t g = 0; g < t->group_cap; g++)
            *raw_bytes += t->group[g].raw_cap;
    }
    /* the threads' writes happened before their tasks were marked done, under the pool's lock, which
     * the caller's wait for them took */
    for (unsigned i = 0; i < cio->nthreads; i++) {
        for (int s = 0; s < 2; s++)
            if (cio->ctx[i].stage[s]) {
                (*stages)++;
                *stage_bytes += cio->ctx[i].stage_cap[s];
            }
        *stage_bytes += cio->ctx[i].group_cap; /* (only split chunks have one) */
    }
}

/*-*************************************
*  Errors
***************************************/

static void push_error(const char *msg)
{
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "%s", msg);
}

/* Chunk k's failure, named by its offset (k->off, over the dataset's rank): "chunk at (r, c): why". */
static void push_chunk_error(const struct h5shuf_codec_chunk *k)
{
    char at[H5S_MAX_RANK * 21 + 4] = "", *p = at;
    for (int d = 0; d < k->pl->rank; d++)
        p += snprintf(p, sizeof at - (size_t)(p - at), "%s%llu", d ? ", " : "", (unsigned long long)k->off[d]);
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "chunk at (%s): %s", at,
             k->err);
}

static void push_nomem(size_t bytes)
{
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
             "out of memory for a chunk buffer of %zu bytes", bytes);
}

/*-*************************************
*  Reading chunks: fetch, decode, place
***************************************/

/* Give chunk k (idle: no worker uses its buffer) a raw buffer for the chunk at off of dset, as stored, and
 * set k->raw_n.  1: ready to read; 0: HDF5 must read these rows (the chunk is not allocated, or larger than
 * any encoding of it, cap bytes: corrupt, and HDF5 says so); -1: out of memory (pushed). */
static int raw_for_read(struct h5shuf_codec_chunk *k, hid_t dset, const hsize_t *off, size_t cap)
{
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(dset, off, &size) < 0 || size == 0 || size > cap) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    /* an eighth more than this chunk: the next chunks of the dataset, a little larger, fit too (a buffer
     * grown by a few bytes at every chunk may move each time, leaving holes: 36 MiB more peak RSS when
     * 16 MiB rows of gzip-1 were shuffled) */
    size_t want = (size_t)size + (size_t)size / 8;
    if (h5shuf__codec_grow(&k->raw, &k->raw_cap, (size_t)size, want < cap ? want : cap) < 0) {
        push_nomem((size_t)size);
        return -1;
    }
    k->raw_n = (size_t)size;
    return 1;
}

/* Where a read's stored chunks come from: dset through HDF5 (H5Dread_chunk), or, when sto is not NULL,
 * the extents of a mapped input (inmap.h) read with pread() from sto->fd, or, when span is not NULL, a
 * span of the file read already (spanread.h; its unallocated chunks through HDF5, dset). */
struct source {
    hid_t dset;
    const struct h5shuf_stored *sto;
    const struct h5shuf_span *span;
};

/* pread n bytes at off of fd into buf, all of them.  0, or -1 with the cause pushed (a short read: the
 * file ends before them). */
static int pread_all(int fd, unsigned char *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = H5SHUF_FAULT() ? (errno = EIO, -1) : pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            char msg[200];
            if (r < 0)
                snprintf(msg, sizeof msg, "read of %zu bytes at byte %llu: %s", n, (unsigned long long)off,
                         strerror(errno));
            else
                snprintf(msg, sizeof msg, "short read: %zu of %zu bytes at byte %llu (the file was truncated?)", got,
                         n, (unsigned long long)off);
            H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_IO, H5E_READERROR, "%s", msg);
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

/* fetch() from a span read already: as from a mapped input, the bytes copied instead of read. */
static int fetch_span(struct h5shuf_codec_chunk *k, const struct h5shuf_span *s, size_t cap)
{
    const uint64_t i = (k->off[0] - s->start) / s->chunk_rows;
    if (k->off[0] < s->start || i >= s->n) {
        push_error("a chunk outside the span read");
        return -1;
    }
    const struct h5shuf_inmap_chunk *c = &s->chunk[i];
    if (c->size == 0)
        return 0; /* not allocated: HDF5 reads these rows */
    const unsigned char *at = s->mem + (c->addr - s->off);
    if (k->pl->nfilters == 0 && c->size == k->pl->chunk_bytes) { /* the rows as they are */
        memcpy(k->user, at + k->from * k->pl->row_bytes, (size_t)(k->rows * k->pl->row_bytes));
        return 2;
    }
    size_t want = (size_t)c->size + (size_t)c->size / 8; /* as raw_for_read */
    if (h5shuf__codec_grow(&k->raw, &k->raw_cap, c->size, want < cap ? want : cap) < 0) {
        push_nomem(c->size);
        return -1;
    }
    memcpy(k->raw, at, c->size);
    k->raw_n = c->size;
    k->mask = c->mask;
    return 1;
}

/* Read the stored chunk k (placed, its off set) from src into its raw buffer, with its filter
 * mask.  1: read, to be decoded; 2: read, and nothing to decode (a mapped chunk without filters: its
 * rows were read straight into the caller's); 0: HDF5 must read these rows (raw_for_read's cases; never
 * for a mapped input, whose chunks were all allocated and of a sane size when scanned); -1: an error
 * (pushed). */
static int fetch(struct h5shuf_codec_chunk *k, const struct source *src, size_t cap)
{
    if (src->span)
        return fetch_span(k, src->span, cap);
    if (!src->sto) {
        hsize_t size = 0;
        if (k->pl->nfilters == 0 && !k->pl->split && k->from == 0 && k->rows == k->pl->chunk_rows &&
            H5Dget_chunk_storage_size(src->dset, k->off, &size) >= 0 && size == k->pl->chunk_bytes)
            /* a whole chunk without filters: straight into the rows, no copy (a raw input's, an uncompressed
             * scratch's: 2 GB of memmove a 1 GiB run of small rows, issue 52) */
            return H5SHUF_FAULT() || h5shuf__read_chunk(src->dset, k->off, &k->mask, k->user, (size_t)size) < 0 ? -1 : 2;
        H5Eclear2(H5E_DEFAULT);
        int r = raw_for_read(k, src->dset, k->off, cap);
        if (r <= 0)
            return r;
        return H5SHUF_FAULT() || h5shuf__read_chunk(src->dset, k->off, &k->mask, k->raw, k->raw_n) < 0 ? -1 : 1;
    }
    const struct h5shuf_stored *s = src->sto;
    uint64_t i = k->off[0] / s->pl->chunk_rows;
    if (i >= s->n) { /* (inputs_open mapped every chunk of the rows it counted) */
        push_error("a chunk missing from the input's map");
        return -1;
    }
    const struct h5shuf_inmap_chunk *c = &s->chunk[i];
    if (s->pl->nfilters == 0 && c->size == s->pl->chunk_bytes) /* the rows as they are: no copy, no task */
        return pread_all(s->fd, k->user, (size_t)(k->rows * s->row_bytes), c->addr + k->from * s->row_bytes) < 0
                   ? -1
                   : 2;
    size_t want = (size_t)c->size + (size_t)c->size / 8; /* as raw_for_read: room for the next chunks too */
    if (h5shuf__codec_grow(&k->raw, &k->raw_cap, c->size, want < cap ? want : cap) < 0) {
        push_nomem(c->size);
        return -1;
    }
    k->raw_n = c->size;
    k->mask = c->mask;
    return pread_all(s->fd, k->raw, c->size, c->addr) < 0 ? -1 : 1;
}

/* Rows [start, start + count) of a mapped contiguous dataset, read straight into buf. */
static herr_t read_contiguous(const struct h5shuf_stored *s, uint64_t start, uint64_t count, void *buf)
{
    if (s->n != 1 || start + count > s->rows || (start + count) * s->row_bytes > s->chunk[0].size) {
        push_error("rows past the input's map");
        return -1;
    }
    return pread_all(s->fd, buf, (size_t)(count * s->row_bytes), s->chunk[0].addr + start * s->row_bytes);
}

/* Wait for slot t; on a write, store its chunk.  -1 (with an HDF5 error pushed) when it failed. */
static int finish(struct h5shuf_chunkio *cio, hid_t dset, struct chunk_task *t, int ok)
{
    if (!t->task.submitted)
        return 0;
    h5shuf__pool_wait(cio->pool, &t->task);
    t->task.submitted = 0;
    if (!ok)
        return -1;
    const size_t n = t->n > 0 ? t->n : 1;
    for (size_t g = 0; g < n; g++) {
        const struct h5shuf_codec_chunk *k = t->n > 0 ? &t->group[g] : &t->k;
        if (k->err[0]) {
            push_chunk_error(k);
            return -1;
        }
        if (t->encode && (H5SHUF_FAULT() || H5Dwrite_chunk(dset, H5P_DEFAULT, k->mask, k->off, k->raw_n, k->raw) < 0))
            return -1;
    }
    return 0;
}

/* Make k chunk j (0 .. chunks_per_row - 1, row-major over the chunk indices of dims[1:]) of the chunk row
 * at row c, for its rows [lo, hi), which the caller's buffer buf holds from row start on. */
static void place_chunk(struct h5shuf_codec_chunk *k, const struct h5shuf_pipeline *pl, uint64_t c, uint64_t j,
                        uint64_t lo, uint64_t hi, uint64_t start, unsigned char *buf)
{
    k->pl = pl;
    memset(k->off, 0, sizeof k->off);
    k->off[0] = c;
    for (int d = pl->rank - 1; d >= 1; d--) {
        uint64_t n = (pl->dims[d] + pl->cdims[d] - 1) / pl->cdims[d];
        k->off[d] = (j % n) * pl->cdims[d];
        j /= n;
    }
    k->from = lo - c;
    k->rows = hi - lo;
    k->user = buf + (lo - start) * pl->row_bytes;
    k->made = NULL;
    k->err[0] = '\0';
}

/* Make task t chunk j of the chunk row at row c (place_chunk), one chunk alone. */
static void place(struct chunk_task *t, struct h5shuf_chunkio *cio, const struct h5shuf_pipeline *pl, int encode,
                  uint64_t c, uint64_t j, uint64_t lo, uint64_t hi, uint64_t start, unsigned char *buf)
{
    t->cio = cio;
    t->encode = encode;
    t->task.run = chunk_task_run;
    t->n = 0;
    place_chunk(&t->k, pl, c, j, lo, hi, start, buf);
}

/* Chunks of a chunk row of pl a task takes together: one unless pl splits rows. */
static uint64_t group_chunks(const struct h5shuf_pipeline *pl)
{
    if (!pl->split)
        return 1;
    size_t g = GROUP_BYTES / h5shuf__codec_group_stride(pl->chunk_bytes);
    if (g < 1)
        g = 1;
    /* the chunks of one chunk index of dim 1 (24 of h5py's image chunks): their blocks are whole ranges of
     * a row, so groups of a multiple of them share at most a cache line of a row at their ends (none in
     * pass 1's chunk row cache, on cache lines), where two threads wrote several at once (issue 52:
     * pass 1 of h5py's image chunks 2.0-2.2 -> 1.6-1.7 s) */
    const uint64_t n1 = pl->rank > 1 ? (pl->dims[1] + pl->cdims[1] - 1) / pl->cdims[1] : 1;
    const uint64_t inner = n1 ? pl->chunks_per_row / n1 : 0;
    if (inner > 1 && inner <= (uint64_t)g * GROUP_SPAN_MAX)
        return g >= inner ? g / inner * inner : inner;
    return g;
}

/* Make room in task t for n chunks in its group.  0, or -1 when out of memory (pushed). */
static int group_room(struct chunk_task *t, size_t n)
{
    if (n <= t->group_cap)
        return 0;
    struct h5shuf_codec_chunk *v = realloc(t->group, n * sizeof *v);
    if (!v) {
        push_nomem(n * sizeof *v);
        return -1;
    }
    memset(v + t->group_cap, 0, (n - t->group_cap) * sizeof *v);
    t->group = v;
    t->group_cap = n;
    return 0;
}

/* Make task t (idle) chunks [j, j + n) of the chunk row at row c to be encoded together, with a raw buffer
 * of cap bytes each.  0, or -1 when out of memory (pushed). */
static int place_group(struct chunk_task *t, struct h5shuf_chunkio *cio, const struct h5shuf_pipeline *pl, uint64_t c,
                       uint64_t j, size_t n, uint64_t lo, uint64_t hi, unsigned char *buf, uint64_t start, size_t cap)
{
    if (group_room(t, n) < 0)
        return -1;
    t->cio = cio;
    t->encode = 1;
    t->task.run = chunk_task_run;
    t->n = n;
    for (size_t g = 0; g < n; g++) {
        if (h5shuf__codec_grow(&t->group[g].raw, &t->group[g].raw_cap, cap, cap) < 0) {
            push_nomem(cap);
            return -1;
        }
        place_chunk(&t->group[g], pl, c, j + g, lo, hi, start, buf);
    }
    return 0;
}

/* Read through HDF5 what chunk k (placed, not queued) would have decoded: its chunk is not allocated (fill
 * values, or zeroes when there are none: h5shuf__read_may_skip) or larger than any encoding of it (corrupt:
 * HDF5 says so).  Only k's part of the rows is written, so the other chunks of a split chunk row may be
 * decoded meanwhile.  < 0 on error. */
static herr_t read_by_hdf5(hid_t dset, hid_t ftype, const struct h5shuf_codec_chunk *k)
{
    const struct h5shuf_pipeline *pl = k->pl;
    const uint64_t lo = k->off[0] + k->from;
    if (!pl->split)
        return h5shuf__read_rows(dset, ftype, lo, k->rows, k->user);
    hsize_t foff[H5S_MAX_RANK], moff[H5S_MAX_RANK] = {0}, cnt[H5S_MAX_RANK], mdims[H5S_MAX_RANK];
    foff[0] = lo;
    cnt[0] = mdims[0] = k->rows;
    for (int d = 1; d < pl->rank; d++) {
        foff[d] = moff[d] = k->off[d];
        cnt[d] = pl->cdims[d] < pl->dims[d] - k->off[d] ? pl->cdims[d] : pl->dims[d] - k->off[d];
        mdims[d] = pl->dims[d];
    }
    hid_t fs = H5Dget_space(dset), ms = H5Screate_simple(pl->rank, mdims, NULL);
    herr_t r = fs < 0 || ms < 0 ? -1 : 0;
    if (r >= 0)
        r = H5Sselect_hyperslab(fs, H5S_SELECT_SET, foff, NULL, cnt, NULL);
    if (r >= 0)
        r = H5Sselect_hyperslab(ms, H5S_SELECT_SET, moff, NULL, cnt, NULL);
    if (r >= 0 && h5shuf__read_may_skip(dset)) /* as h5shuf__read_rows: no fill value, zeroes (NULL) */
        r = H5Dfill(NULL, ftype, k->user, ftype, ms);
    if (r >= 0)
        r = H5SHUF_FAULT() ? -1 : h5shuf__dread(dset, ftype, ms, fs, k->user);
    return h5shuf__spaces_close(r, fs, ms);
}

/* Fetch what task t decodes: chunk j of the chunk row at row c alone (step 1, in t->k, which place()
 * made), or chunks [j, j + n) of it as a group (step > 1: t->group[0 .. m), m <= n), for its rows [lo, hi)
 * held in buf from row start on.  A chunk HDF5 must read (fetch's 0) is read here and left out, one read
 * straight into the rows (fetch's 2) too.  The number of chunks to decode (t->n set: 0 to queue none),
 * or -1 on an error (pushed). */
static long fetch_task(struct chunk_task *t, const struct source *src, hid_t ftype, const struct h5shuf_pipeline *pl,
                       uint64_t step, uint64_t c, uint64_t j, uint64_t lo, uint64_t hi, uint64_t start,
                       unsigned char *buf, size_t cap)
{
    size_t n = (size_t)(pl->chunks_per_row - j < step ? pl->chunks_per_row - j : step), m = 0;
    if (step > 1 && group_room(t, n) < 0)
        return -1;
    for (size_t g = 0; g < n; g++) { /* the chunks to decode: group[0 .. m), or k alone */
        struct h5shuf_codec_chunk *k = step > 1 ? &t->group[m] : &t->k;
        if (step > 1)
            place_chunk(k, pl, c, j + g, lo, hi, start, buf);
        int r = fetch(k, src, cap);
        if (r < 0)
            return -1; /* the tasks queued so far are waited for by finish or free */
        /* 0: unallocated, or larger than any encoding of it: HDF5 reads it */
        if (r == 0 && read_by_hdf5(src->dset, ftype, k) < 0)
            return -1;
        m += r == 1;
    }
    t->n = step > 1 ? m : 0;
    return (long)m;
}

/* Finish every slot, in order from slot k (after a failure too: no task may outlive the call).  0, or -1
 * when one failed or !ok. */
static int finish_all(struct h5shuf_chunkio *cio, hid_t dset, unsigned k, int ok)
{
    for (unsigned i = 0; i < cio->nslots; i++) {
        struct chunk_task *t = &cio->slot[(k + i) % cio->nslots];
        if (finish(cio, dset, t, ok) < 0)
            ok = 0;
    }
    return ok ? 0 : -1;
}

/* Move rows [start, start + count) between src and buf chunk by chunk (see the file comment); a write's
 * source is a dataset. */
static herr_t transfer(struct h5shuf_chunkio *cio, const struct source *src, hid_t ftype,
                       const struct h5shuf_pipeline *pl, uint64_t start, uint64_t count, unsigned char *buf, int encode)
{
    const hid_t dset = src->dset;
    const size_t cap = h5shuf__codec_bound(pl->chunk_bytes);
    int ok = 1;
    uint64_t end = start + count;
    const uint64_t step = group_chunks(pl); /* chunks of a chunk row a task takes */
    unsigned k = 0;
    for (uint64_t c = start / pl->chunk_rows * pl->chunk_rows; c < end && ok; c += pl->chunk_rows) {
        uint64_t lo = c > start ? c : start, hi = c + pl->chunk_rows < end ? c + pl->chunk_rows : end;
        for (uint64_t j = 0; j < pl->chunks_per_row && ok; j += step, k = (k + 1) % cio->nslots) {
            struct chunk_task *t = &cio->slot[k];
            ok = finish(cio, dset, t, ok) == 0;
            if (!ok)
                break;
            if (encode && pl->nfilters == 0 && !pl->split && hi - lo == pl->chunk_rows) {
                /* no filters, a whole chunk: the rows are the chunk, stored from buf after those queued */
                hsize_t off[H5S_MAX_RANK] = {c};
                const unsigned char *rows = buf + (lo - start) * pl->row_bytes;
                ok = finish_all(cio, dset, k, ok) == 0 && !H5SHUF_FAULT() &&
                     H5Dwrite_chunk(dset, H5P_DEFAULT, 0, off, pl->chunk_bytes, rows) >= 0;
                continue;
            }
            if (encode && step > 1) {
                size_t n = (size_t)(pl->chunks_per_row - j < step ? pl->chunks_per_row - j : step);
                ok = place_group(t, cio, pl, c, j, n, lo, hi, buf, start, cap) == 0;
                if (ok)
                    h5shuf__pool_submit(cio->pool, &t->task);
                continue;
            }
            place(t, cio, pl, encode, c, j, lo, hi, start, buf);
            if (!encode) {
                long m = fetch_task(t, src, ftype, pl, step, c, j, lo, hi, start, buf, cap);
                if (m < 0) {
                    ok = 0;
                    break;
                }
                if (m == 0) /* read already: unallocated (fill values), corrupt, or straight into the rows */
                    continue;
            } else if (h5shuf__codec_grow(&t->k.raw, &t->k.raw_cap, cap, cap) < 0) {
                push_nomem(cap);
                ok = 0;
                break;
            }
            h5shuf__pool_submit(cio->pool, &t->task);
        }
    }
    return finish_all(cio, dset, k, ok);
}

/*-*************************************
*  Reads and writes
***************************************/

herr_t h5shuf__chunkio_read(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf)
{
    struct h5shuf_pipeline pl;
    if (count == 0)
        return 0;
    if (!cio || h5shuf__pipeline_probe(dset, ftype, &pl) < 0 || !pl.direct)
        return h5shuf__read_rows(dset, ftype, start, count, buf);
    const struct source src = {dset, NULL, NULL};
    return transfer(cio, &src, ftype, &pl, start, count, buf, 0);
}

herr_t h5shuf__chunkio_read_stored(struct h5shuf_chunkio *cio, const struct h5shuf_stored *sto, uint64_t start,
                                   uint64_t count, void *buf)
{
    if (count == 0)
        return 0;
    if (!sto->pl)
        return read_contiguous(sto, start, count, buf);
    const struct source src = {H5I_INVALID_HID, sto, NULL};
    return transfer(cio, &src, H5I_INVALID_HID, sto->pl, start, count, buf, 0);
}

herr_t h5shuf__chunkio_write(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t count,
                             const void *buf, int extend)
{
    struct h5shuf_pipeline pl;
    if (count == 0)
        return 0;
    if (!cio || h5shuf__pipeline_probe(dset, ftype, &pl) < 0 || !pl.direct || start % pl.chunk_rows != 0)
        return h5shuf__write_rows(dset, ftype, start, count, buf, extend);
    if (extend && h5shuf__extend_rows(dset, start + count) < 0)
        return -1;
    const struct source src = {dset, NULL, NULL};
    return transfer(cio, &src, ftype, &pl, start, count, (unsigned char *)buf, 1);
}

/*-*************************************
*  One chunk encoded ahead of its write
***************************************/

struct h5shuf_chunk {
    struct chunk_task t;
    struct h5shuf_pipeline pl; /* a copy: the caller's may change before the write (raw: without filters) */
    unsigned skip;             /* the filters of the dataset's pipeline skipped (raw: all), for the mask */
    const void *rows;          /* a whole chunk without filters: its rows, stored as they are (no task) */
};

struct h5shuf_chunk *h5shuf__chunk_new(void)
{
    return calloc(1, sizeof(struct h5shuf_chunk));
}

void h5shuf__chunk_free(struct h5shuf_chunkio *cio, struct h5shuf_chunk *c)
{
    if (!c)
        return;
    h5shuf__pool_wait(cio ? cio->pool : NULL, &c->t.task); /* never free what a worker still uses */
    free(c->t.k.raw);
    free(c);
}

int h5shuf__chunk_encode_start(struct h5shuf_chunkio *cio, const struct h5shuf_pipeline *pl, const void *rows,
                               uint64_t nrows, int raw, struct h5shuf_chunk *c)
{
    struct chunk_task *t = &c->t;
    h5shuf__pool_wait(cio->pool, &t->task);
    c->pl = *pl;
    c->skip = 0;
    c->rows = NULL;
    if (raw) { /* a copy of the rows, zero-padded (codec.c: no filter), stored with every filter skipped */
        c->skip = pl->nfilters > 0 ? (1u << pl->nfilters) - 1 : 0;
        c->pl.nfilters = 0;
    }
    if (c->pl.nfilters == 0 && !pl->split && nrows == pl->chunk_rows) { /* the rows are the chunk: no copy */
        c->rows = rows;
        t->k.err[0] = '\0';
        return 0;
    }
    const size_t cap = h5shuf__codec_bound(pl->chunk_bytes);
    if (h5shuf__codec_grow(&t->k.raw, &t->k.raw_cap, cap, cap) < 0)
        return -1;
    place(t, cio, &c->pl, 1, 0, 0, 0, nrows, 0, (unsigned char *)rows);
    h5shuf__pool_submit(cio->pool, &t->task);
    return 0;
}

herr_t h5shuf__chunk_write(struct h5shuf_chunkio *cio, hid_t dset, uint64_t chunk_row, struct h5shuf_chunk *c)
{
    struct chunk_task *t = &c->t;
    h5shuf__pool_wait(cio->pool, &t->task);
    t->task.submitted = 0;
    if (t->k.err[0]) {
        push_error(t->k.err);
        return -1;
    }
    t->k.off[0] = chunk_row;
    if (c->rows) /* (its offset's other coordinates are 0: chunks of whole rows) */
        return H5SHUF_FAULT() || H5Dwrite_chunk(dset, H5P_DEFAULT, c->skip, t->k.off, c->pl.chunk_bytes, c->rows) < 0 ? -1 : 0;
    if (H5SHUF_FAULT() || H5Dwrite_chunk(dset, H5P_DEFAULT, t->k.mask | c->skip, t->k.off, t->k.raw_n, t->k.raw) < 0)
        return -1;
    return 0;
}

/*-*************************************
*  Reads that run while the caller works
***************************************/

struct h5shuf_prefetch {
    struct h5shuf_pipeline pl;
    struct chunk_task *t; /* one per chunk of the range (per group of split chunks), each with its raw
                           * buffers (kept for reuse) */
    size_t n, cap;
};

struct h5shuf_prefetch *h5shuf__prefetch_new(void)
{
    return calloc(1, sizeof(struct h5shuf_prefetch));
}

void h5shuf__prefetch_free(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf)
{
    if (!pf)
        return;
    for (size_t i = 0; i < pf->cap; i++) {
        struct chunk_task *t = &pf->t[i];
        h5shuf__pool_wait(cio ? cio->pool : NULL, &t->task);
        free(t->k.raw);
        for (size_t g = 0; g < t->group_cap; g++)
            free(t->group[g].raw);
        free(t->group);
    }
    free(pf->t);
    free(pf);
}

/* Start reading rows [start, start + count) of src, pipeline *pl (direct, copied into pf->pl), into buf. */
static herr_t prefetch_chunks(struct h5shuf_chunkio *cio, const struct source *src, hid_t ftype, uint64_t start,
                              uint64_t count, void *buf, struct h5shuf_prefetch *pf)
{
    const struct h5shuf_pipeline *pl = &pf->pl;
    uint64_t first = start / pl->chunk_rows * pl->chunk_rows, end = start + count;
    const uint64_t step = group_chunks(pl); /* chunks of a chunk row a task takes */
    uint64_t need64 = (end - first + pl->chunk_rows - 1) / pl->chunk_rows * ((pl->chunks_per_row + step - 1) / step);
    if (need64 > SIZE_MAX / sizeof *pf->t)
        goto nomem;
    size_t need = (size_t)need64;
    if (need > pf->cap) {
        struct chunk_task *v = realloc(pf->t, need * sizeof *v);
        if (!v)
            goto nomem;
        memset(v + pf->cap, 0, (need - pf->cap) * sizeof *v);
        pf->t = v;
        pf->cap = need;
    }
    const size_t cap = h5shuf__codec_bound(pl->chunk_bytes);
    for (uint64_t c = first; c < end; c += pl->chunk_rows) {
        uint64_t lo = c > start ? c : start, hi = c + pl->chunk_rows < end ? c + pl->chunk_rows : end;
        for (uint64_t j = 0; j < pl->chunks_per_row; j += step) {
            struct chunk_task *t = &pf->t[pf->n];
            place(t, cio, pl, 0, c, j, lo, hi, start, buf);
            long m = fetch_task(t, src, ftype, pl, step, c, j, lo, hi, start, buf, cap);
            if (m < 0)
                return -1; /* the tasks queued so far are waited for by finish or free */
            if (m == 0)
                continue;
            h5shuf__pool_submit(cio->pool, &t->task);
            pf->n++;
        }
    }
    return 0;
nomem:
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
             "out of memory for chunk tasks");
    return -1;
}

herr_t h5shuf__prefetch_start(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t count,
                              void *buf, struct h5shuf_prefetch *pf)
{
    pf->n = 0;
    if (count == 0)
        return 0;
    if (!cio || h5shuf__pipeline_probe(dset, ftype, &pf->pl) < 0 || !pf->pl.direct)
        return h5shuf__read_rows(dset, ftype, start, count, buf); /* HDF5 runs it: no overlap */
    const struct source src = {dset, NULL, NULL};
    return prefetch_chunks(cio, &src, ftype, start, count, buf, pf);
}

herr_t h5shuf__prefetch_start_stored(struct h5shuf_chunkio *cio, const struct h5shuf_stored *sto, uint64_t start,
                                     uint64_t count, void *buf, struct h5shuf_prefetch *pf)
{
    pf->n = 0;
    if (count == 0)
        return 0;
    if (!sto->pl) /* contiguous: nothing to decode */
        return read_contiguous(sto, start, count, buf);
    pf->pl = *sto->pl;
    const struct source src = {H5I_INVALID_HID, sto, NULL};
    return prefetch_chunks(cio, &src, H5I_INVALID_HID, start, count, buf, pf);
}

herr_t h5shuf__prefetch_start_span(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, const struct h5shuf_span *span,
                                   const struct h5shuf_pipeline *pl, uint64_t start, uint64_t count, void *buf,
                                   struct h5shuf_prefetch *pf)
{
    pf->n = 0;
    if (count == 0)
        return 0;
    if (start < span->start || start + count > span->start + span->count) {
        push_error("rows outside the span read");
        return -1;
    }
    pf->pl = *pl;
    const struct source src = {dset, NULL, span};
    return prefetch_chunks(cio, &src, ftype, start, count, buf, pf);
}

herr_t h5shuf__prefetch_finish(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf)
{
    herr_t r = 0;
    for (size_t i = 0; i < pf->n; i++) {
        struct chunk_task *t = &pf->t[i];
        h5shuf__pool_wait(cio->pool, &t->task);
        t->task.submitted = 0;
        for (size_t g = 0; g < (t->n > 0 ? t->n : 1) && r == 0; g++) {
            const struct h5shuf_codec_chunk *k = t->n > 0 ? &t->group[g] : &t->k;
            if (k->err[0]) {
                push_chunk_error(k);
                r = -1;
            }
        }
    }
    pf->n = 0;
    return r;
}
