/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inmap.c - where a small input's rows are stored, gathered when the input is scanned (inmap.h).
 *
 * HDF5 gives the places: H5Dget_offset for a contiguous dataset (absolute in the file), and
 * H5Dget_num_chunks and H5Dget_chunk_info (HDF5 1.10.5 and later) for the chunks of a chunked one, with
 * each chunk's stored size and filter mask, which is all H5Dread_chunk would return.  A chunk's bytes are
 * then read with pread() and decoded by chunkio's tasks, as if HDF5 had handed them over.  Chunk addresses
 * are relative to HDF5's base address, which is the start of the file unless the file has a userblock:
 * such files are not mapped.
 */
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "inmap.h"
#include "vlenrec.h" /* h5shuf__type_has_var */

int h5shuf__inmap_begin(struct h5shuf_inmap_build *b, size_t nds, const struct stat *st, hsize_t userblock)
{
    b->ok = userblock == 0;
    b->want = nds;
    b->nds = 0;
    b->nchunks = 0;
    b->st = *st;
    b->ds = malloc((nds ? nds : 1) * sizeof *b->ds);
    return b->ds ? H5SHUF_OK : H5SHUF_ENOMEM;
}

/* Dataset d of a contiguous layout: one extent of all its rows, when allocated in the file itself. */
static int add_contiguous(struct h5shuf_inmap_build *b, hid_t dset, hid_t dcpl, uint64_t rows, uint64_t row_bytes)
{
    if (H5Pget_external_count(dcpl) != 0 || b->nchunks >= H5SHUF_INMAP_INPUT_CHUNKS_MAX)
        return 0;
    haddr_t addr = H5Dget_offset(dset);
    hsize_t size = H5Dget_storage_size(dset);
    if (addr == HADDR_UNDEF || rows > UINT32_MAX / row_bytes || size != rows * row_bytes)
        return 0;
    b->ds[b->nds] = (struct h5shuf_inmap_ds){(uint32_t)b->nchunks, 1, 1};
    b->chunk[b->nchunks++] = (struct h5shuf_inmap_chunk){addr, (uint32_t)size, 0};
    return 1;
}

/* Dataset d chunked: every chunk allocated, of whole rows, at most H5SHUF_INMAP_CHUNKS_MAX, and its
 * pipeline the one of all mapped inputs (*ref, set by the first). */
static int add_chunked(struct h5shuf_inmap_build *b, hid_t dset, hid_t dcpl, hid_t ftype, int rank,
                       const hsize_t *dims, struct h5shuf_pipeline *ref)
{
    struct h5shuf_pipeline pl;
    const uint64_t rows = dims[0];
    h5shuf__pipeline_of(dcpl, rank, dims, ftype, &pl);
    if (!pl.direct || pl.split)
        return 0;
    if (ref->rank == 0)
        *ref = pl;
    pl.dims[0] = ref->dims[0]; /* inputs differ in their rows only */
    if (memcmp(&pl, ref, sizeof pl) != 0) /* (probe zeroes the whole struct first: padding compares too) */
        return 0;
    uint64_t need = (rows + pl.chunk_rows - 1) / pl.chunk_rows;
    if (need == 0 || need > H5SHUF_INMAP_CHUNKS_MAX || b->nchunks + need > H5SHUF_INMAP_INPUT_CHUNKS_MAX)
        return 0;
    /* (HDF5 1.10.8 takes the dataset's own dataspace here, not H5S_ALL; the selection is not used) */
    hid_t space = H5Dget_space(dset);
    hsize_t n = 0;
    int ok = space >= 0 && H5Dget_num_chunks(dset, space, &n) >= 0 && n == need; /* (fewer: some are not
                                                                            * allocated: fill values) */
    struct h5shuf_inmap_chunk *c = &b->chunk[b->nchunks];
    memset(c, 0, need * sizeof *c);
    const size_t cap = h5shuf__codec_bound(pl.chunk_bytes);
    for (hsize_t i = 0; ok && i < n; i++) {
        hsize_t off[H5S_MAX_RANK] = {0}, size = 0;
        haddr_t addr = HADDR_UNDEF;
        unsigned mask = 0;
        ok = H5Dget_chunk_info(dset, space, i, off, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF && size > 0 &&
             size <= cap && size <= UINT32_MAX && off[0] % pl.chunk_rows == 0;
        for (int k = 1; ok && k < pl.rank; k++)
            ok = off[k] == 0;
        uint64_t k = off[0] / pl.chunk_rows;
        ok = ok && k < need && c[k].size == 0;
        if (ok)
            c[k] = (struct h5shuf_inmap_chunk){addr, (uint32_t)size, mask};
    }
    if (space >= 0)
        H5Sclose(space);
    if (!ok)
        return 0;
    b->ds[b->nds] = (struct h5shuf_inmap_ds){(uint32_t)b->nchunks, (uint16_t)need, 0};
    b->nchunks += need;
    return 1;
}

uint64_t h5shuf__inmap_add(struct h5shuf_inmap_build *b, hid_t dset, hid_t dcpl, hid_t ftype, int rank,
                           const hsize_t *dims, uint64_t row_bytes, struct h5shuf_pipeline *ref)
{
    const uint64_t rows = dims[0];
    const size_t first = b->nchunks;
    if (!b->ok)
        return 0;
    H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    int vlen = h5shuf__type_has_var(ftype) != 0;
    b->ok = !vlen && rows > 0 && row_bytes > 0 && b->nds < b->want &&
            (layout == H5D_CONTIGUOUS ? add_contiguous(b, dset, dcpl, rows, row_bytes)
             : layout == H5D_CHUNKED  ? add_chunked(b, dset, dcpl, ftype, rank, dims, ref)
                                      : 0);
    uint64_t stored = 0;
    if (b->ok) {
        b->nds++;
        for (size_t k = first; k < b->nchunks; k++)
            stored += b->chunk[k].size;
    }
    H5Eclear2(H5E_DEFAULT);
    return stored;
}

void h5shuf__inmap_abandon(struct h5shuf_inmap_build *b)
{
    free(b->ds);
    b->ds = NULL;
}

int h5shuf__inmap_end(struct h5shuf_inmap_build *b, struct h5shuf_inmap **out)
{
    *out = NULL;
    int st = H5SHUF_OK;
    if (b->ok && b->nds == b->want) {
        size_t bytes = sizeof **out + b->nds * sizeof *b->ds + b->nchunks * sizeof *b->chunk;
        struct h5shuf_inmap *m = malloc(bytes);
        if (m) {
            m->dev = (uint64_t)b->st.st_dev;
            m->ino = (uint64_t)b->st.st_ino;
            m->size = (uint64_t)b->st.st_size;
            m->mtime_sec = (int64_t)b->st.st_mtim.tv_sec;
            m->mtime_nsec = (int64_t)b->st.st_mtim.tv_nsec;
            m->nds = b->nds;
            /* the chunks first: their 8-byte addresses stay aligned */
            m->chunk = (struct h5shuf_inmap_chunk *)(m + 1);
            m->ds = (struct h5shuf_inmap_ds *)(m->chunk + b->nchunks);
            memcpy(m->chunk, b->chunk, b->nchunks * sizeof *b->chunk);
            memcpy(m->ds, b->ds, b->nds * sizeof *b->ds);
            *out = m;
        } else {
            st = H5SHUF_ENOMEM;
        }
    }
    h5shuf__inmap_abandon(b);
    return st;
}

void h5shuf__inmap_free(struct h5shuf_inmap *m)
{
    free(m);
}

size_t h5shuf__inmap_bytes(const struct h5shuf_inmap *m)
{
    if (!m)
        return 0;
    size_t n = 0;
    for (size_t d = 0; d < m->nds; d++)
        n += m->ds[d].n;
    return sizeof *m + m->nds * sizeof *m->ds + n * sizeof *m->chunk;
}

int h5shuf__inmap_same_file(const struct h5shuf_inmap *m, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    return (uint64_t)st.st_dev == m->dev && (uint64_t)st.st_ino == m->ino && (uint64_t)st.st_size == m->size &&
           (int64_t)st.st_mtim.tv_sec == m->mtime_sec && (int64_t)st.st_mtim.tv_nsec == m->mtime_nsec;
}

void h5shuf__inmap_stored(const struct h5shuf_inmap *m, size_t d, int fd, const struct h5shuf_pipeline *pl,
                          uint64_t row_bytes, uint64_t rows, struct h5shuf_stored *s)
{
    const struct h5shuf_inmap_ds *ds = &m->ds[d];
    s->fd = fd;
    s->pl = ds->contiguous ? NULL : pl;
    s->row_bytes = row_bytes;
    s->rows = rows;
    s->chunk = m->chunk + ds->first;
    s->n = ds->n;
}
