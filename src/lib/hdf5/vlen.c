/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vlen.c - rows of variable-length datatypes: sequences (H5T_VLEN of a fixed-size base type, e.g. int32
 * token ids) and variable-length strings.
 *
 * The rest of the library moves rows as fixed-size records; a vlen dataset's record is HDF5's memory
 * form of its elements (hvl_t for sequences, char * for strings), so slabs, pass-2 piles and the row
 * pointers handed between stages need no special case.  What differs is where the payload lives and how
 * it is read and written, all of it here:
 * - input slabs (and verify) are read with H5Dread into HDF5's allocations, reclaimed after use;
 * - a pile buffer keeps the elements' lengths and copies their payload into a byte arena; the scratch
 *   pile stores the lengths ("dN") and the concatenated payload ("dN_data", 1-D chunked, compressed):
 *   no global heap, whole chunks only, and compressible like any array;
 * - loading a pile (pass 2, oversize split) reads the lengths and the payload into an arena and builds
 *   the records in place;
 * - an output band copies the payload into its own arena and writes whole output chunks with H5Dwrite.
 * Memory types keep the file's base type (H5Tvlen_create of it) and the string type as is, so HDF5
 * converts nothing: the elements' bytes move unchanged.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boundread.h" /* h5shuf__dread, h5shuf__dwrite */
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "plan.h"
#include "rows.h"
#include "vlen.h"
#include "vlenbound.h"
#include "vlenrec.h"

/* Bytes the plan allows per vlen element beside its payload (the record, HDF5's allocation header). */
#define ELEM_ALLOWANCE 16
/* Smallest scratch payload chunk of a pile, bytes. */
#define PAYLOAD_CHUNK_MIN 256
/* Metadata cache of a file with vlen datasets (their global heap), most bytes. */
#define VLEN_MDC_BYTES (2u << 20)

/*-*************************************
*  Types with variable-length data
***************************************/

/* Why t, which holds variable-length data, cannot be moved (NULL when it can): a sequence of
 * variable-length data anywhere in it. */
static const char *nested(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    const char *why = NULL;
    if (c == H5T_VLEN) {
        hid_t s = H5Tget_super(t);
        if (s < 0 || h5shuf__type_has_var(s))
            why = "variable-length sequence of variable-length data (nested variable-length datatypes)";
        if (s >= 0)
            H5Tclose(s);
    } else if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !why; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            why = m < 0 ? "compound datatype HDF5 cannot describe" : nested(m);
            if (m >= 0)
                H5Tclose(m);
        }
    } else if (c == H5T_ARRAY) {
        hid_t s = H5Tget_super(t);
        why = s < 0 ? "array datatype HDF5 cannot describe" : nested(s);
        if (s >= 0)
            H5Tclose(s);
    }
    return why;
}

const char *h5shuf__vlen_unsupported(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    if (c == H5T_STRING || !h5shuf__type_has_var(t))
        return NULL;
    const char *why = nested(t);
    if (!why && c != H5T_VLEN && H5Tdetect_class(t, H5T_REFERENCE) > 0)
        why = "references inside a compound or array datatype with variable-length members";
    return why;
}

int h5shuf__vlen_setup(struct h5shuf_dsinfo *ds, size_t vslot, const char *where, struct h5shuf_err *err)
{
    char cause[256];
    H5T_class_t c = H5Tget_class(ds->ftype);
    ds->vslot = vslot;
    if (c == H5T_COMPOUND || c == H5T_ARRAY) {
        int st = h5shuf__vrec_setup(ds, where, err);
        ds->plan_row_bytes = ds->row_bytes; /* h5shuf__vlen_estimate adds the payload */
        return st;
    }
    ds->elems = 1;
    for (int k = 1; k < ds->rank; k++)
        ds->elems *= ds->dims[k];
    if (c == H5T_VLEN) {
        ds->vlen = H5SHUF_VLEN_SEQ;
        ds->etype = H5Tget_super(ds->ftype);
        ds->mtype = ds->etype >= 0 ? H5Tvlen_create(ds->etype) : H5I_INVALID_HID;
        ds->elem_bytes = ds->etype >= 0 ? H5Tget_size(ds->etype) : 0;
        ds->row_bytes = ds->elems * sizeof(hvl_t);
    } else {
        ds->vlen = H5SHUF_VLEN_STR;
        ds->etype = H5Tcopy(H5T_NATIVE_UCHAR);
        ds->mtype = H5Tcopy(ds->ftype); /* same cset and padding: HDF5 converts nothing */
        ds->elem_bytes = 1;
        ds->row_bytes = ds->elems * sizeof(char *);
    }
    if (ds->etype < 0 || ds->mtype < 0 || ds->elem_bytes == 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot make its memory datatype: %s", where,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    ds->vslot = vslot;
    ds->plan_row_bytes = ds->row_bytes; /* h5shuf__vlen_estimate adds the payload */
    return H5SHUF_OK;
}

const void *h5shuf__vlen_elem(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t e, uint64_t *bytes)
{
    if (ds->vlen == H5SHUF_VLEN_REC)
        return h5shuf__vrec_elem(ds, row, e, bytes);
    if (ds->vlen == H5SHUF_VLEN_SEQ) {
        hvl_t h;
        memcpy(&h, row + e * sizeof h, sizeof h);
        *bytes = (uint64_t)h.len * ds->elem_bytes;
        return h.p;
    }
    const char *s;
    memcpy(&s, row + e * sizeof s, sizeof s);
    if (!s) /* a null string reads as an empty one */
        s = "";
    *bytes = strlen(s) + 1;
    return s;
}

/*-*************************************
*  Reading and reclaiming rows
***************************************/

herr_t h5shuf__vlen_read(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                         uint64_t limit_bytes, void *buf)
{
    int in_arena;
    return h5shuf__vlen_read_arena(ds, dset, start, n, limit_bytes, buf, NULL, &in_arena);
}

herr_t h5shuf__vlen_read_arena(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                               uint64_t limit_bytes, void *buf, struct h5shuf_varena *a, int *in_arena)
{
    memset(buf, 0, n * ds->row_bytes);
    *in_arena = 0;
    if (n == 0)
        return 0;
    /* HDF5 trusts the file's descriptors and heap objects: bound the read before it is made.  Sequences
     * are read by the bound itself when it can (from the collections it reads for the check): HDF5's
     * read of 2 GiB of token rows spent a third of pass 1 allocating, zeroing and freeing a buffer per row
     * and read each collection a second time into its cache. */
    /* H5SHUF_DEBUG_VLEN_HDF5: HDF5 reads every row, for the tests that compare the two reads' outputs */
    if (a && ds->vlen == H5SHUF_VLEN_SEQ && !getenv("H5SHUF_DEBUG_VLEN_HDF5")) {
        a->n = 0;
        herr_t r = H5SHUF_FAULT() ? -1 : h5shuf__vlen_bound_copy(ds, dset, start, n, limit_bytes, buf, a, in_arena);
        if (r >= 0 && *in_arena)
            return 0;
        /* failed, or HDF5 must read them: the records copied so far hold arena offsets, never to be
         * reclaimed as pointers */
        memset(buf, 0, n * ds->row_bytes);
        a->n = 0;
        *in_arena = 0;
        if (r < 0)
            return -1;
    } else if (h5shuf__vlen_bound(ds, dset, start, n, limit_bytes) < 0) {
        return -1;
    }
    hid_t fs, ms;
    herr_t r = h5shuf__select_rows(dset, start, n, &fs, &ms, 0);
    if (r >= 0 && H5SHUF_FAULT())
        r = -1;
    else if (r >= 0)
        r = h5shuf__dread(dset, ds->mtype, ms, fs, buf);
    return h5shuf__spaces_close(r, fs, ms);
}

void h5shuf__vlen_reclaim(const struct h5shuf_dsinfo *ds, uint64_t n, void *buf)
{
    if (n == 0)
        return;
    hsize_t dims[H5S_MAX_RANK];
    memcpy(dims, ds->dims, sizeof dims);
    dims[0] = n;
    hid_t stack = H5Eget_current_stack(); /* a failure being reported keeps its message */
    hid_t ms = H5Screate_simple(ds->rank, dims, NULL);
    if (ms >= 0) {
        H5Dvlen_reclaim(ds->mtype, ms, H5P_DEFAULT, buf);
        H5Sclose(ms);
    }
    if (stack >= 0)
        H5Eset_current_stack(stack);
    memset(buf, 0, n * ds->row_bytes);
}

uint64_t h5shuf__vlen_payload_bytes(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n)
{
    const unsigned char *tail = h5shuf__vlen_lengths(ds, buf, n);
    uint64_t elems = 0;
    for (uint64_t i = 0; i < n * ds->elems; i++) {
        uint64_t len;
        memcpy(&len, tail + i * sizeof len, sizeof len);
        elems += len;
    }
    return elems * ds->elem_bytes + (ds->vlen == H5SHUF_VLEN_REC ? h5shuf__vrec_fixed_payload(ds, n) : 0);
}

int h5shuf__vlen_point(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n, unsigned char *payload)
{
    if (ds->vlen == H5SHUF_VLEN_REC)
        return h5shuf__vrec_point(ds, buf, n, payload);
    const unsigned char *tail = h5shuf__vlen_lengths(ds, buf, n);
    uint64_t off = 0;
    for (uint64_t i = 0; i < n * ds->elems; i++) { /* record i is written below length i + 1: never ahead */
        uint64_t len;
        memcpy(&len, tail + i * sizeof len, sizeof len);
        if (ds->vlen == H5SHUF_VLEN_SEQ) {
            hvl_t h = {.len = (size_t)len, .p = len && payload ? payload + off : NULL};
            memcpy(buf + i * sizeof h, &h, sizeof h);
        } else { /* (no payload at all: a corrupt pile's empty strings; a null string reads as "") */
            char *s = payload ? (char *)payload + off : NULL;
            memcpy(buf + i * sizeof s, &s, sizeof s);
        }
        off += len * ds->elem_bytes;
    }
    return 0;
}

herr_t h5shuf__vlen_load_lengths(const struct h5shuf_dsinfo *ds, hid_t lens, hid_t data, uint64_t start, uint64_t n,
                                 uint64_t *cursor, unsigned char *buf, struct h5shuf_varena *a)
{
    if (n == 0)
        return 0;
    hid_t lt = ds->vlen == H5SHUF_VLEN_REC ? ds->ltype : H5T_NATIVE_UINT64;
    if (h5shuf__read_rows(lens, lt, start, n, h5shuf__vlen_lengths(ds, buf, n)) < 0)
        return -1;
    uint64_t bytes = h5shuf__vlen_payload_bytes(ds, buf, n);
    if (h5shuf__varena_reserve(a, a->n + bytes) < 0) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
                 "out of memory for %llu bytes of variable-length data", (unsigned long long)bytes);
        return -1;
    }
    if (bytes && h5shuf__read_rows(data, ds->etype, *cursor, bytes / ds->elem_bytes, a->data + a->n) < 0)
        return -1;
    a->n += bytes;
    *cursor += bytes / ds->elem_bytes;
    return 0;
}

herr_t h5shuf__vlen_load(const struct h5shuf_dsinfo *ds, hid_t lens, hid_t data, uint64_t start, uint64_t n,
                         uint64_t *cursor, unsigned char *buf, struct h5shuf_varena *a)
{
    const uint64_t off = a->n;
    if (h5shuf__vlen_load_lengths(ds, lens, data, start, n, cursor, buf, a) < 0)
        return -1;
    /* (a->data is NULL when no row has payload) */
    if (n && h5shuf__vlen_point(ds, buf, n, a->data ? a->data + off : NULL) < 0) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE, "out of memory");
        return -1;
    }
    return 0;
}

/*-*************************************
*  Piles and bands of vlen rows
***************************************/

int h5shuf__vlen_pile_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t *lens,
                          struct h5shuf_varena *a)
{
    if (ds->vlen == H5SHUF_VLEN_REC)
        return h5shuf__vrec_pile_put(ds, row, lens, a);
    for (uint64_t e = 0; e < ds->elems; e++) {
        uint64_t bytes;
        const void *p = h5shuf__vlen_elem(ds, row, e, &bytes);
        uint64_t len = bytes / ds->elem_bytes;
        memcpy(&lens[e], &len, sizeof len);
        if (h5shuf__varena_reserve(a, a->n + bytes) < 0)
            return -1;
        if (bytes)
            memcpy(a->data + a->n, p, bytes);
        a->n += bytes;
    }
    return 0;
}

herr_t h5shuf__vlen_pile_flush(const struct h5shuf_dsinfo *ds, hid_t data, uint64_t chunk, int all, uint64_t *written,
                               struct h5shuf_varena *a)
{
    uint64_t cb = chunk * ds->elem_bytes;
    uint64_t whole = all ? a->n : a->n / cb * cb;
    if (whole == 0)
        return 0;
    if (h5shuf__write_rows(data, ds->etype, *written, whole / ds->elem_bytes, a->data, 1) < 0)
        return -1;
    memmove(a->data, a->data + whole, a->n - whole);
    a->n -= whole;
    *written += whole / ds->elem_bytes;
    uint64_t keep = h5shuf__vlen_arena_bytes(ds, chunk);
    if (a->cap > keep && a->n <= keep) { /* a row larger than the buffer grew it: back to its size */
        unsigned char *p = realloc(a->data, keep);
        if (!p) {
            H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
                     "out of memory");
            return -1;
        }
        a->data = p;
        a->cap = keep;
    }
    return 0;
}

int h5shuf__vlen_band_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, unsigned char *desc,
                          struct h5shuf_varena *a)
{
    if (ds->vlen == H5SHUF_VLEN_REC)
        return h5shuf__vrec_band_put(ds, row, desc, a);
    for (uint64_t e = 0; e < ds->elems; e++) {
        uint64_t bytes;
        const void *p = h5shuf__vlen_elem(ds, row, e, &bytes);
        if (a->n + bytes > a->cap) {
            uint64_t cap = 2 * a->cap > a->n + bytes ? 2 * a->cap : a->n + bytes;
            if (h5shuf__varena_reserve(a, cap < 4096 ? 4096 : cap) < 0)
                return -1;
        }
        uintptr_t off = (uintptr_t)a->n; /* a pointer once the band is written (the arena may move) */
        if (bytes)
            memcpy(a->data + a->n, p, bytes);
        a->n += bytes;
        if (ds->vlen == H5SHUF_VLEN_SEQ) {
            hvl_t h = {.len = (size_t)(bytes / ds->elem_bytes), .p = (void *)off};
            memcpy(desc + e * sizeof h, &h, sizeof h);
        } else {
            char *s = (char *)off;
            memcpy(desc + e * sizeof s, &s, sizeof s);
        }
    }
    return 0;
}

int h5shuf__vlen_band_settle(const struct h5shuf_dsinfo *ds, unsigned char *desc, uint64_t from, uint64_t to,
                             struct h5shuf_varena *a)
{
    /* in place: h5shuf__vlen_band_put reads a row's element e before it writes element e's offset */
    for (uint64_t r = from; r < to; r++)
        if (h5shuf__vlen_band_put(ds, desc + r * ds->row_bytes, desc + r * ds->row_bytes, a) < 0)
            return -1;
    return 0;
}

herr_t h5shuf__vlen_band_write(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                               uint64_t settled, unsigned char *desc, const struct h5shuf_varena *a)
{
    if (n == 0)
        return 0;
    if (ds->vlen == H5SHUF_VLEN_REC)
        h5shuf__vrec_band_point(ds, n, desc, a);
    for (uint64_t i = 0; ds->vlen != H5SHUF_VLEN_REC && i < settled * ds->elems; i++) {
        if (ds->vlen == H5SHUF_VLEN_SEQ) {
            hvl_t h;
            memcpy(&h, desc + i * sizeof h, sizeof h);
            h.p = h.len ? a->data + (uintptr_t)h.p : NULL;
            memcpy(desc + i * sizeof h, &h, sizeof h);
        } else {
            char *s;
            memcpy(&s, desc + i * sizeof s, sizeof s);
            s = (char *)a->data + (uintptr_t)s;
            memcpy(desc + i * sizeof s, &s, sizeof s);
        }
    }
    hid_t fs, ms;
    herr_t r = h5shuf__select_rows(dset, start, n, &fs, &ms, 0);
    if (r >= 0 && H5SHUF_FAULT())
        r = -1;
    else if (r >= 0)
        r = h5shuf__dwrite(dset, ds->mtype, ms, fs, desc);
    return h5shuf__spaces_close(r, fs, ms);
}

/*-*************************************
*  Estimates of the payload
***************************************/

int h5shuf__vlen_sample_begin(const struct h5shuf_datasets *dsets, struct h5shuf_vlen_sample *sm,
                              struct h5shuf_err *err)
{
    sm->sum = calloc(dsets->nvlen + 1, sizeof *sm->sum);
    sm->tot = malloc(H5SHUF_VLEN_SAMPLE_BLOCK_ROWS * sizeof *sm->tot);
    sm->sum2 = 0;
    sm->rows = 0;
    return sm->sum && sm->tot ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
}

int h5shuf__vlen_sample_add(const struct h5shuf_datasets *dsets, struct h5shuf_vlen_sample *sm,
                            const struct h5shuf_vlen_block *b, struct h5shuf_err *err)
{
    char cause[256];
    int st = H5SHUF_OK;
    uint64_t n = b->n;
    double *tot = sm->tot, *sum = sm->sum;
    memset(tot, 0, n * sizeof *tot);
    for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        if (!ds->vlen)
            continue;
        unsigned char *buf = malloc(n * ds->row_bytes);
        if (!buf)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        if (h5shuf__vlen_read(ds, b->dset[d], b->start, n, dsets->vlen_read_limit, buf) < 0)
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot read rows %llu..%llu: %s", b->file, ds->in_path,
                              (unsigned long long)b->start, (unsigned long long)(b->start + n - 1),
                              h5shuf__hdf5_cause(cause, sizeof cause));
        for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++)
            for (uint64_t e = 0; e < ds->elems; e++) {
                uint64_t bytes;
                h5shuf__vlen_elem(ds, buf + r * ds->row_bytes, e, &bytes);
                sum[ds->vslot] += (double)bytes;
                tot[r] += (double)bytes;
            }
        h5shuf__vlen_reclaim(ds, n, buf);
        free(buf);
    }
    for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
        sum[dsets->nvlen] += tot[r];
        sm->sum2 += tot[r] * tot[r];
    }
    sm->rows += n;
    return st;
}

void h5shuf__vlen_estimate(struct h5shuf_datasets *dsets, struct h5shuf_vlen_sample *sm, int st)
{
    if (st == H5SHUF_OK) {
        const uint64_t sampled = sm->rows;
        const double *sum = sm->sum;
        double mean = sampled ? sum[dsets->nvlen] / (double)sampled : 0;
        double var = sampled ? sm->sum2 / (double)sampled - mean * mean : 0;
        dsets->vlen_var = var > 0 ? var : 0;
        for (size_t d = 0; d < dsets->n; d++) {
            struct h5shuf_dsinfo *ds = &dsets->ds[d];
            if (!ds->vlen)
                continue;
            uint64_t m = sampled ? (uint64_t)ceil(sum[ds->vslot] / (double)sampled) : 0;
            if (ds->vlen == H5SHUF_VLEN_REC) /* the fixed-size bytes travel in the payload too */
                m += h5shuf__vrec_fixed_payload(ds, 1);
            ds->mean_bytes = m;
            ds->plan_row_bytes = ds->row_bytes + ds->elems * ELEM_ALLOWANCE + m;
        }
    }
    free(sm->sum);
    free(sm->tot);
    sm->sum = sm->tot = NULL;
}

void h5shuf__vlen_limit_cache(const struct h5shuf_datasets *dsets, hid_t file)
{
    /* Vlen data lives in global heap collections, which HDF5 keeps in the file's metadata cache: by
     * default that grows to 32 MiB per file outside any budget. */
    if (dsets->nvlen == 0)
        return;
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    if (H5Fget_mdc_config(file, &mdc) >= 0) {
        mdc.set_initial_size = 1;
        mdc.initial_size = VLEN_MDC_BYTES / 4;
        mdc.min_size = VLEN_MDC_BYTES / 4;
        mdc.max_size = VLEN_MDC_BYTES;
        H5Fset_mdc_config(file, &mdc);
    }
    H5Eclear2(H5E_DEFAULT);
}

uint64_t h5shuf__vlen_arena_bytes(const struct h5shuf_dsinfo *ds, uint64_t chunk)
{
    uint64_t cb = chunk * ds->elem_bytes;
    return cb + cb / 4;
}

uint64_t h5shuf__vlen_chunk_elems(const struct h5shuf_dsinfo *ds, uint64_t cap_rows)
{
    /* 4/5 of the planned bytes: the buffer (h5shuf__vlen_arena_bytes) keeps a quarter of a chunk more for
     * the row that crosses a chunk's end, so it is allocated once (no realloc churn, which fragmented
     * the heap by tens of MiB with hundreds of piles) */
    h5shuf_u128 bytes = (h5shuf_u128)cap_rows * (ds->mean_bytes ? ds->mean_bytes : 1) * 4 / 5;
    if (bytes > H5SHUF_PILE_CHUNK_BYTES_MAX)
        bytes = H5SHUF_PILE_CHUNK_BYTES_MAX;
    if (bytes < PAYLOAD_CHUNK_MIN)
        bytes = PAYLOAD_CHUNK_MIN;
    uint64_t elems = (uint64_t)bytes / ds->elem_bytes;
    return elems ? elems : 1;
}
