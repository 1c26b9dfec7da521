/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rows.c - rows moved through HDF5: a hyperslab of whole rows along dim 0, read or written with the file
 * datatype as the memory type, so HDF5 converts nothing and the output's bytes are the input's, bit for
 * bit, whatever the type.
 *
 * A read of storage the file never wrote (a contiguous dataset never written, a chunk never stored) gives
 * the dataset's fill value, unless its fill time says none is ever written (H5D_FILL_TIME_NEVER, or
 * IFSET without a fill value): then HDF5 leaves the caller's buffer as it was, and what the rows would
 * hold is whatever that memory held before, which h5shuf would write into an output (other heap contents,
 * different bytes at every run).  So such a read zeroes its buffer first, as HDF5 itself zeroes the parts
 * of a chunk never written when it first stores the chunk under those fill times: the rows h5shuf moves
 * are a function of the input's bytes.  The zeroing is skipped when it cannot matter (a fill value is
 * written, or a contiguous dataset's storage is all there), so the common reads cost nothing more.
 */
#include <string.h>

#include "boundread.h"
#include "fault.h"
#include "rows.h"

herr_t h5shuf__extend_rows(hid_t dset, uint64_t rows)
{
    hsize_t dims[H5S_MAX_RANK];
    hid_t s = H5Dget_space(dset);
    if (s < 0)
        return -1;
    int rank = H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    if (rank < 1)
        return -1;
    dims[0] = rows;
    return H5Dset_extent(dset, dims);
}

herr_t h5shuf__select_rows(hid_t dset, uint64_t start, uint64_t count, hid_t *fspace, hid_t *mspace, int extend)
{
    hsize_t dims[H5S_MAX_RANK], off[H5S_MAX_RANK] = {0};
    *fspace = *mspace = H5I_INVALID_HID;
    if (extend && h5shuf__extend_rows(dset, start + count) < 0)
        return -1;
    *fspace = H5Dget_space(dset);
    if (*fspace < 0)
        return -1;
    int rank = H5Sget_simple_extent_ndims(*fspace);
    H5Sget_simple_extent_dims(*fspace, dims, NULL);
    off[0] = start;
    dims[0] = count;
    if (H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, off, NULL, dims, NULL) < 0)
        return -1;
    *mspace = H5Screate_simple(rank, dims, NULL);
    return *mspace < 0 ? -1 : 0;
}

int h5shuf__read_may_skip(hid_t dset)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 1;
    }
    H5D_fill_time_t when = H5D_FILL_TIME_ERROR;
    H5D_fill_value_t fill = H5D_FILL_VALUE_ERROR;
    H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
    const H5D_layout_t layout = H5Pget_layout(dcpl);
    int skip = H5Pget_fill_time(dcpl, &when) < 0 || H5Pfill_value_defined(dcpl, &fill) < 0 ||
               when == H5D_FILL_TIME_NEVER ||
               (when == H5D_FILL_TIME_IFSET && fill != H5D_FILL_VALUE_DEFAULT && fill != H5D_FILL_VALUE_USER_DEFINED);
    if (layout == H5D_VIRTUAL) /* its source datasets' fill times decide */
        skip = 1;
    else if (layout == H5D_COMPACT) /* the data is in the object header, always whole */
        skip = 0;
    else if (skip && layout == H5D_CONTIGUOUS) /* (a chunked dataset's status counts its stored bytes, which
                                                * filters change: not a count of its chunks) */
        skip = H5Dget_space_status(dset, &status) < 0 || status != H5D_SPACE_STATUS_ALLOCATED;
    H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    return skip;
}

/* Move rows [start, start+count) between dset and buf (raw bytes of ftype): write when buf_in, else read
 * into buf_out. */
static herr_t transfer_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf_out,
                            const void *buf_in, int extend)
{
    if (count == 0)
        return 0;
    hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    herr_t r = h5shuf__select_rows(dset, start, count, &fs, &ms, extend);
    if (r >= 0 && H5SHUF_FAULT())
        r = -1;
    else if (r >= 0 && buf_in)
        r = h5shuf__dwrite(dset, ftype, ms, fs, buf_in);
    else if (r >= 0) {
        const hssize_t elems = H5Sget_simple_extent_npoints(ms); /* (count whole rows) */
        if (elems > 0 && buf_out && h5shuf__read_may_skip(dset)) /* (buf_out: gcc -O3 sees the write path's NULL) */
            memset(buf_out, 0, (size_t)elems * H5Tget_size(ftype));
        r = h5shuf__dread(dset, ftype, ms, fs, buf_out);
    }
    return h5shuf__spaces_close(r, fs, ms);
}

herr_t h5shuf__spaces_close(herr_t r, hid_t fs, hid_t ms)
{
    /* Every HDF5 call clears the error stack: keep the failure's for the caller's message. */
    hid_t stack = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    if (stack >= 0)
        H5Eset_current_stack(stack);
    return r;
}

herr_t h5shuf__read_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf)
{
    return transfer_rows(dset, ftype, start, count, buf, NULL, 0);
}

herr_t h5shuf__write_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, const void *buf, int extend)
{
    return transfer_rows(dset, ftype, start, count, NULL, buf, extend);
}
