/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boundread.c - HDF5 calls that may decode a dataset's chunks, bracketed with the dataset's decoded-size
 * limits (boundread.h).  The limits live in a thread-local that the filters read (filters/filter_limit.c
 * says why that is right: HDF5 runs a filter on the calling thread, inside the call).  Every HDF5 call of
 * h5shuf's that can run a filter's decoder on an input's chunks goes through here: rows read or written
 * through HDF5 (rows.c, chunkio.c's chunks HDF5 reads, vlen.c, vlenbound.c), the datasets copied
 * (content/objcopy.c: H5Dread of references, H5Ocopy, which decodes chunks of vlen and reference types).
 *
 * Naming the chunk.  A filter knows only the bytes it was given.  When one refuses them it records their
 * size and hash (filter_limit.h); afterwards the stored chunks the read selected are looked up by
 * coordinate (H5Dget_chunk_info_by_coord, HDF5 1.10.5+), and those whose stored size is that size, or 4
 * bytes more per fletcher32 of the pipeline (decoded before the filter), are read raw (H5Dread_chunk, no
 * filter run) until one's first bytes hash the same.  A pipeline where another filter runs before h5shuf's
 * on the way back (h5shuf's codec not the last filter but fletcher32) leaves the chunk unnamed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "boundread.h"
#include "chunklimit.h"

/* Stored chunks looked at, at most, to name a refused one (a lookup each: a second or so). */
#define LOCATE_MAX ((uint64_t)1 << 20)

void h5shuf__bound_begin(struct h5shuf_bound *b, hid_t dset)
{
    struct h5shuf_filter_limits *here = h5shuf_filter_limits_here();
    b->saved = *here;
    b->dset = dset;
    b->loc = H5I_INVALID_HID;
    b->path = NULL;
    hid_t dcpl = H5Dget_create_plist(dset), ftype = H5Dget_type(dset);
    struct h5shuf_filter_limits l;
    h5shuf__chunk_limits(dcpl, ftype, &l); /* l.set = 0 when nothing is to be declared */
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (ftype >= 0)
        H5Tclose(ftype);
    *here = l;
}

/* Fletcher32 filters in dcpl's pipeline. */
static int fletchers(hid_t dcpl)
{
    int nf = H5Pget_nfilters(dcpl), n = 0;
    for (int i = 0; i < nf; i++) {
        unsigned flags;
        size_t ncd = 0;
        if (H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, NULL, 0, NULL, NULL) == H5Z_FILTER_FLETCHER32)
            n++;
    }
    return n;
}

/* Is the stored chunk at off the one refused (its first nbytes bytes hash to hash)? */
static int is_refused(hid_t dset, const hsize_t *off, size_t nbytes, uint64_t hash, int nfl)
{
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info_by_coord(dset, off, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF || size < nbytes ||
        (size - nbytes) % 4 || (size - nbytes) / 4 > (hsize_t)nfl)
        return 0;
    unsigned char *raw = malloc(size ? (size_t)size : 1);
    uint32_t filters = 0;
    int same = raw && H5Dread_chunk(dset, H5P_DEFAULT, off, &filters, raw) >= 0 &&
               h5shuf_filter_hash(raw, nbytes) == hash;
    free(raw);
    return same;
}

/* Find the refused chunk (l->refused_*) among the chunks of dset that fspace selects: 1 with its offset in
 * off[0 .. *rank) and its stored size, else 0. */
static int locate(hid_t dset, hid_t fspace, const struct h5shuf_filter_limits *l, hsize_t *off, int *rank)
{
    hid_t dcpl = H5Dget_create_plist(dset), space = H5Dget_space(dset);
    hsize_t cd[H5S_MAX_RANK], dims[H5S_MAX_RANK], lo[H5S_MAX_RANK] = {0}, hi[H5S_MAX_RANK];
    int r = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1, found = 0;
    int ok = r > 0 && dcpl >= 0 && H5Pget_chunk(dcpl, r, cd) == r;
    for (int k = 0; ok && k < r; k++) {
        ok = cd[k] > 0 && dims[k] > 0;
        hi[k] = dims[k] - 1;
    }
    if (ok && fspace != H5S_ALL)
        ok = H5Sget_select_npoints(fspace) > 0 && H5Sget_select_bounds(fspace, lo, hi) >= 0;
    const int nfl = ok ? fletchers(dcpl) : 0;
    uint64_t looked = 0;
    for (int k = 0; ok && k < r; k++)
        off[k] = lo[k] / cd[k] * cd[k];
    while (ok && !found && looked++ < LOCATE_MAX) {
        found = is_refused(dset, off, l->refused_nbytes, l->refused_hash, nfl);
        int k = r - 1; /* the next chunk of the box, the last dimension first */
        for (; !found && k >= 0; k--) {
            off[k] += cd[k];
            if (off[k] <= hi[k])
                break;
            off[k] = lo[k] / cd[k] * cd[k];
        }
        ok = found || k >= 0;
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    *rank = r;
    return found;
}

void h5shuf__bound_detach(struct h5shuf_bound *b, hid_t loc, const char *path)
{
    b->dset = H5I_INVALID_HID;
    b->loc = loc;
    b->path = path;
}

herr_t h5shuf__bound_end(struct h5shuf_bound *b, herr_t r, hid_t fspace)
{
    struct h5shuf_filter_limits *here = h5shuf_filter_limits_here(), mine = *here;
    *here = b->saved;
    if (r >= 0 || !mine.set || !mine.refused)
        return r;
    hid_t stack = H5Eget_current_stack(); /* (the lookups below would empty it) */
    hsize_t off[H5S_MAX_RANK];
    int rank = 0;
    hid_t dset = b->dset >= 0 ? b->dset : H5Dopen2(b->loc, b->path, H5P_DEFAULT);
    int found = dset >= 0 && locate(dset, fspace, &mine, off, &rank);
    if (b->dset < 0 && dset >= 0)
        H5Dclose(dset);
    if (!found) {
        if (stack >= 0)
            H5Eset_current_stack(stack);
        return r;
    }
    char at[H5S_MAX_RANK * 21 + 4] = "", *p = at;
    for (int k = 0; k < rank; k++)
        p += snprintf(p, sizeof at - (size_t)(p - at), "%s%llu", k ? ", " : "", (unsigned long long)off[k]);
    if (stack >= 0)
        H5Eclose_stack(stack);
    H5Eclear2(H5E_DEFAULT);
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "chunk at (%s): %s", at,
             mine.refused_msg);
    return r;
}

herr_t h5shuf__dread(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, void *buf)
{
    struct h5shuf_bound b;
    h5shuf__bound_begin(&b, dset);
    return h5shuf__bound_end(&b, H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf), fspace);
}

herr_t h5shuf__dwrite(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, const void *buf)
{
    struct h5shuf_bound b;
    h5shuf__bound_begin(&b, dset);
    return h5shuf__bound_end(&b, H5Dwrite(dset, mtype, mspace, fspace, H5P_DEFAULT, buf), fspace);
}
