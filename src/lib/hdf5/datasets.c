/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datasets.c - the shuffled datasets' descriptions (filled by inputs.c, vlen.c and output.c) and the row
 * buffers every stage moves rows in: one buffer per dataset plus one of global row ids.
 */
#include <stdlib.h>
#include <string.h>

#include "datasets.h"
#include "fault.h"

void h5shuf__datasets_free(struct h5shuf_datasets *dsets)
{
    for (size_t d = 0; dsets->ds && d < dsets->n; d++) {
        struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (ds->ftype >= 0)
            H5Tclose(ds->ftype);
        if (ds->dcpl >= 0)
            H5Pclose(ds->dcpl);
        if (ds->out_dcpl >= 0)
            H5Pclose(ds->out_dcpl);
        if (ds->mtype >= 0)
            H5Tclose(ds->mtype);
        if (ds->etype >= 0)
            H5Tclose(ds->etype);
        if (ds->ltype >= 0)
            H5Tclose(ds->ltype);
        free(ds->slot);
        free(ds->run);
        free(ds->in_path);
        free(ds->out_path);
    }
    free(dsets->ds);
    memset(dsets, 0, sizeof *dsets);
}

unsigned char **h5shuf__bufs_alloc(const struct h5shuf_datasets *dsets, uint64_t rows, struct h5shuf_err *err)
{
    unsigned char **bufs = calloc(dsets->n + 1, sizeof *bufs);
    for (size_t d = 0; bufs && d <= dsets->n; d++) {
        bufs[d] = malloc((rows ? rows : 1) * h5shuf__buf_row_bytes(dsets, d));
        if (!bufs[d]) {
            h5shuf__bufs_free(dsets, bufs);
            bufs = NULL;
        }
    }
    if (!bufs)
        h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for buffers of %llu rows", (unsigned long long)rows);
    return bufs;
}

void h5shuf__bufs_free(const struct h5shuf_datasets *dsets, unsigned char **bufs)
{
    if (!bufs)
        return;
    for (size_t d = 0; d <= dsets->n; d++)
        free(bufs[d]);
    free(bufs);
}
