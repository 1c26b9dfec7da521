/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blocks.c - a dataset's stored blocks read and written as they are (blocks.h): chunks through
 * H5Dread_chunk / H5Dwrite_chunk (HDF5 1.10.2+), with no filter run, so a chunk copied is the chunk
 * encoded; unchunked data in runs of rows of about 4 MiB.
 */
#include "blocks.h"

#include <string.h>

#include "fault.h"
#include "rows.h"

#define RUN_BYTES ((uint64_t)4 << 20)

herr_t h5shuf__blocks_open(struct h5shuf_blocks *it, hid_t dset, hid_t ftype)
{
    memset(it, 0, sizeof *it);
    it->dset = dset;
    it->ftype = ftype;
    hid_t space = H5Dget_space(dset), dcpl = H5Dget_create_plist(dset);
    herr_t r = space < 0 || dcpl < 0 ? -1 : 0;
    if (r >= 0 && (it->rank = H5Sget_simple_extent_dims(space, it->dims, NULL)) < 1)
        r = -1;
    if (r >= 0 && (it->chunked = H5Pget_layout(dcpl) == H5D_CHUNKED))
        r = H5Pget_chunk(dcpl, it->rank, it->cdims) == it->rank ? 0 : -1;
    it->row_bytes = H5Tget_size(ftype);
    for (int k = 1; r >= 0 && k < it->rank; k++)
        it->row_bytes *= it->dims[k];
    it->run_rows = it->row_bytes && it->row_bytes < RUN_BYTES ? RUN_BYTES / it->row_bytes : 1;
    it->done = it->dims[0] == 0;
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return H5SHUF_FAULT() ? -1 : r;
}

int h5shuf__blocks_next(struct h5shuf_blocks *it, struct h5shuf_block *b)
{
    if (it->done)
        return 0;
    memset(b, 0, sizeof *b);
    for (int k = 0; k < it->rank; k++)
        b->offset[k] = it->next[k];
    if (!it->chunked) {
        b->rows = it->dims[0] - it->next[0] < it->run_rows ? it->dims[0] - it->next[0] : it->run_rows;
        b->bytes = b->rows * it->row_bytes;
        it->next[0] += b->rows;
        it->done = it->next[0] >= it->dims[0];
        return 1;
    }
    hsize_t size = 0;
    if (H5SHUF_FAULT() || H5Dget_chunk_storage_size(it->dset, it->next, &size) < 0 || size == 0)
        return -1;
    b->bytes = size;
    /* the next chunk: the last dimension first, row band by row band */
    int k = it->rank - 1;
    for (; k >= 0; k--) {
        it->next[k] += it->cdims[k];
        if (it->next[k] < it->dims[k])
            break;
        it->next[k] = 0;
    }
    it->done = k < 0;
    return 1;
}

herr_t h5shuf__read_chunk(hid_t dset, const hsize_t *offset, uint32_t *mask, void *buf, size_t cap)
{
#if H5_VERSION_GE(2, 0, 0)
    size_t n = cap;
    herr_t r = H5Dread_chunk2(dset, H5P_DEFAULT, offset, mask, buf, &n);
    if (r >= 0 && n > cap) { /* (nothing was read) */
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_DATASET, H5E_READERROR,
                 "a stored chunk of %zu bytes, more than the %zu bytes read for it", n, cap);
        r = -1;
    }
    return r;
#else
    (void)cap;
    return H5Dread_chunk(dset, H5P_DEFAULT, offset, mask, buf);
#endif
}

herr_t h5shuf__blocks_read(const struct h5shuf_blocks *it, struct h5shuf_block *b, void *buf)
{
    if (H5SHUF_FAULT())
        return -1;
    if (!it->chunked)
        return h5shuf__read_rows(it->dset, it->ftype, b->offset[0], b->rows, buf);
    hsize_t offset[H5S_MAX_RANK];
    for (int k = 0; k < it->rank; k++)
        offset[k] = b->offset[k];
    return h5shuf__read_chunk(it->dset, offset, &b->filter_mask, buf, (size_t)b->bytes);
}

herr_t h5shuf__block_write(hid_t dset, hid_t ftype, const struct h5shuf_block *b, uint64_t row_offset, const void *buf)
{
    if (H5SHUF_FAULT())
        return -1;
    if (b->rows)
        return h5shuf__write_rows(dset, ftype, b->offset[0] + row_offset, b->rows, buf, 0);
    hsize_t offset[H5S_MAX_RANK];
    for (int k = 0; k < H5S_MAX_RANK; k++)
        offset[k] = b->offset[k];
    offset[0] += row_offset;
    return H5Dwrite_chunk(dset, H5P_DEFAULT, b->filter_mask, offset, (size_t)b->bytes, buf);
}
