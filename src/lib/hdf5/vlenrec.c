/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vlenrec.c - rows of compound or array elements with variable-length members: tables with text
 * columns (h5py and PyTables compounds with a variable-length string field), token sequences beside a
 * label, arrays of variable-length strings.
 *
 * Such a row moves as vlen.c moves a sequence or a string, with one more step each way.  In memory a row
 * is HDF5's memory form of its type (H5Dget_type's, in which every variable-length member is an hvl_t or
 * a char *): read by H5Dread into HDF5's allocations, reclaimed with H5Dvlen_reclaim, written by H5Dwrite,
 * so HDF5 converts no payload and the output's type is the input's.  The type is walked once (setup) into
 * a table of its members: each variable-length member is a slot (where its hvl_t or char * is, string or
 * sequence, bytes of a payload element) and the fixed-size members are runs of bytes.  On the way into a
 * pile a row is flattened into vlen.c's form: one length per slot (bytes) and, in the payload (uint8),
 * each element's fixed-size bytes followed by its slots' payloads; on the way out it is made a record
 * again.  Padding of the memory record is never stored, so the scratch and the hash of a row hold only
 * values.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "h5err.h"
#include "vlenrec.h"

int h5shuf__type_has_var(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    int r = 0;
    if (c == H5T_VLEN)
        return 1;
    if (c == H5T_STRING)
        return H5Tis_variable_str(t) > 0;
    if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r = m >= 0 && h5shuf__type_has_var(m);
            if (m >= 0)
                H5Tclose(m);
        }
    } else if (c == H5T_ARRAY) {
        hid_t s = H5Tget_super(t);
        r = s >= 0 && h5shuf__type_has_var(s);
        if (s >= 0)
            H5Tclose(s);
    }
    return r;
}

/* The table being built by walk. */
struct table {
    struct h5shuf_vslot *slot;
    size_t nslot, slot_cap;
    struct h5shuf_vrun *run;
    size_t nrun, run_cap;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 8;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Add memory type t at offset off of an element to the table: its variable-length members as slots, the
 * rest as runs (adjacent runs merged).  < 0: HDF5 failed or no memory (-2). */
static int walk(hid_t t, uint64_t off, struct table *tb)
{
    H5T_class_t c = H5Tget_class(t);
    int r = 0;
    if (c == H5T_VLEN || (c == H5T_STRING && H5Tis_variable_str(t) > 0)) {
        uint64_t base = 1;
        if (c == H5T_VLEN) {
            hid_t s = H5Tget_super(t);
            base = s >= 0 ? H5Tget_size(s) : 0;
            if (s >= 0)
                H5Tclose(s);
            if (base == 0)
                return -1;
        }
        if (grow((void **)&tb->slot, &tb->slot_cap, tb->nslot + 1, sizeof *tb->slot) < 0)
            return -2;
        tb->slot[tb->nslot++] = (struct h5shuf_vslot){.off = off, .base = base, .str = c == H5T_STRING};
    } else if (c == H5T_COMPOUND && h5shuf__type_has_var(t)) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && r >= 0; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r = m < 0 ? -1 : walk(m, off + H5Tget_member_offset(t, (unsigned)i), tb);
            if (m >= 0)
                H5Tclose(m);
        }
    } else if (c == H5T_ARRAY && h5shuf__type_has_var(t)) {
        hid_t s = H5Tget_super(t);
        hssize_t k = H5Tget_array_ndims(t);
        hsize_t dims[H5S_MAX_RANK];
        uint64_t n = 1, size = s >= 0 ? H5Tget_size(s) : 0;
        if (s < 0 || k < 0 || H5Tget_array_dims2(t, dims) < 0 || size == 0)
            r = -1;
        for (hssize_t i = 0; r >= 0 && i < k; i++)
            n *= dims[i];
        for (uint64_t i = 0; r >= 0 && i < n; i++)
            r = walk(s, off + i * size, tb);
        if (s >= 0)
            H5Tclose(s);
    } else {
        uint64_t len = H5Tget_size(t);
        if (len == 0)
            return -1;
        if (tb->nrun && tb->run[tb->nrun - 1].off + tb->run[tb->nrun - 1].len == off) {
            tb->run[tb->nrun - 1].len += len;
        } else {
            if (grow((void **)&tb->run, &tb->run_cap, tb->nrun + 1, sizeof *tb->run) < 0)
                return -2;
            tb->run[tb->nrun++] = (struct h5shuf_vrun){.off = off, .len = len};
        }
    }
    return r;
}

int h5shuf__vrec_setup(struct h5shuf_dsinfo *ds, const char *where, struct h5shuf_err *err)
{
    char cause[256];
    struct table tb = {0};
    uint64_t elems = 1;
    for (int k = 1; k < ds->rank; k++)
        elems *= ds->dims[k];
    ds->vlen = H5SHUF_VLEN_REC;
    ds->mtype = H5Tcopy(ds->ftype); /* H5Dget_type's: its variable-length members in memory form */
    ds->etype = H5Tcopy(H5T_NATIVE_UINT8);
    ds->elem_bytes = 1;
    int r = ds->mtype < 0 || ds->etype < 0 ? -1 : walk(ds->mtype, 0, &tb);
    if (r == -2) {
        free(tb.slot);
        free(tb.run);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    ds->slot = tb.slot;
    ds->nslot = tb.nslot;
    ds->run = tb.run;
    ds->nrun = tb.nrun;
    ds->fixed_bytes = 0;
    for (size_t k = 0; k < tb.nrun; k++)
        ds->fixed_bytes += tb.run[k].len;
    ds->rec_bytes = r >= 0 ? H5Tget_size(ds->mtype) : 0;
    if (r >= 0 && (ds->nslot == 0 || ds->rec_bytes == 0))
        r = -1;
    if (r >= 0) {
        hsize_t n = ds->nslot;
        ds->ltype = H5Tarray_create2(H5T_NATIVE_UINT64, 1, &n);
        r = ds->ltype < 0 ? -1 : 0;
    }
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot make its memory datatype: %s", where,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    ds->elems = elems * ds->nslot;
    ds->row_bytes = elems * ds->rec_bytes;
    return H5SHUF_OK;
}

const void *h5shuf__vrec_elem(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t e, uint64_t *bytes)
{
    const struct h5shuf_vslot *s = &ds->slot[e % ds->nslot];
    const unsigned char *at = row + e / ds->nslot * ds->rec_bytes + s->off;
    if (!s->str) {
        hvl_t h;
        memcpy(&h, at, sizeof h);
        *bytes = (uint64_t)h.len * s->base;
        return h.p;
    }
    const char *p;
    memcpy(&p, at, sizeof p);
    if (!p)
        p = "";
    *bytes = strlen(p) + 1;
    return p;
}

/* Append bytes to a, growing it by doubling; < 0: no memory. */
static int append(struct h5shuf_varena *a, const void *p, uint64_t bytes)
{
    if (a->n + bytes > a->cap) {
        uint64_t cap = 2 * a->cap > a->n + bytes ? 2 * a->cap : a->n + bytes;
        if (h5shuf__varena_reserve(a, cap < 4096 ? 4096 : cap) < 0)
            return -1;
    }
    if (bytes)
        memcpy(a->data + a->n, p, bytes);
    a->n += bytes;
    return 0;
}

int h5shuf__vrec_pile_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t *lens,
                          struct h5shuf_varena *a)
{
    const uint64_t nel = ds->elems / ds->nslot;
    for (uint64_t x = 0; x < nel; x++) {
        const unsigned char *rec = row + x * ds->rec_bytes;
        for (size_t k = 0; k < ds->nrun; k++)
            if (append(a, rec + ds->run[k].off, ds->run[k].len) < 0)
                return -1;
        for (size_t k = 0; k < ds->nslot; k++) {
            uint64_t bytes, e = x * ds->nslot + k;
            const void *p = h5shuf__vrec_elem(ds, row, e, &bytes);
            memcpy(&lens[e], &bytes, sizeof bytes);
            if (append(a, p, bytes) < 0)
                return -1;
        }
    }
    return 0;
}

int h5shuf__vrec_point(const struct h5shuf_dsinfo *ds, unsigned char *buf, uint64_t n, unsigned char *payload)
{
    const uint64_t nel = n * (ds->elems / ds->nslot), lb = ds->nslot * sizeof(uint64_t);
    const unsigned char *tail = h5shuf__vlen_lengths(ds, buf, n);
    /* Record x covers the lengths of element x (rec_bytes >= lb: each slot holds 8 bytes or more) but none
     * after it, so element x's lengths are copied out before its record is made. */
    uint64_t *len = malloc(lb);
    if (!len)
        return -1;
    uint64_t off = 0;
    for (uint64_t x = 0; x < nel; x++) {
        memcpy(len, tail + x * lb, lb);
        unsigned char *rec = buf + x * ds->rec_bytes;
        memset(rec, 0, ds->rec_bytes);
        for (size_t k = 0; k < ds->nrun; k++) {
            if (payload)
                memcpy(rec + ds->run[k].off, payload + off, ds->run[k].len);
            off += ds->run[k].len;
        }
        for (size_t k = 0; k < ds->nslot; k++) {
            const struct h5shuf_vslot *s = &ds->slot[k];
            unsigned char *p = payload && len[k] ? payload + off : NULL;
            if (!s->str) {
                hvl_t h = {.len = (size_t)(len[k] / s->base), .p = p};
                memcpy(rec + s->off, &h, sizeof h);
            } else { /* (no payload: a corrupt pile's; a null string reads as "") */
                char *c = (char *)p;
                memcpy(rec + s->off, &c, sizeof c);
            }
            off += len[k];
        }
    }
    free(len);
    return 0;
}

int h5shuf__vrec_band_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, unsigned char *desc,
                          struct h5shuf_varena *a)
{
    const uint64_t nel = ds->elems / ds->nslot;
    for (uint64_t x = 0; x < nel; x++) {
        const unsigned char *rec = row + x * ds->rec_bytes;
        unsigned char *out = desc + x * ds->rec_bytes;
        memset(out, 0, ds->rec_bytes);
        for (size_t k = 0; k < ds->nrun; k++)
            memcpy(out + ds->run[k].off, rec + ds->run[k].off, ds->run[k].len);
        for (size_t k = 0; k < ds->nslot; k++) {
            uint64_t bytes;
            const void *p = h5shuf__vrec_elem(ds, row, x * ds->nslot + k, &bytes);
            uintptr_t at = (uintptr_t)a->n; /* a pointer once the band is written (the arena may move) */
            if (append(a, p, bytes) < 0)
                return -1;
            if (!ds->slot[k].str) {
                hvl_t h = {.len = (size_t)(bytes / ds->slot[k].base), .p = (void *)at};
                memcpy(out + ds->slot[k].off, &h, sizeof h);
            } else {
                char *c = (char *)at;
                memcpy(out + ds->slot[k].off, &c, sizeof c);
            }
        }
    }
    return 0;
}

void h5shuf__vrec_band_point(const struct h5shuf_dsinfo *ds, uint64_t n, unsigned char *desc,
                             const struct h5shuf_varena *a)
{
    const uint64_t nel = n * (ds->elems / ds->nslot);
    for (uint64_t x = 0; x < nel; x++)
        for (size_t k = 0; k < ds->nslot; k++) {
            unsigned char *at = desc + x * ds->rec_bytes + ds->slot[k].off;
            if (!ds->slot[k].str) {
                hvl_t h;
                memcpy(&h, at, sizeof h);
                h.p = h.len ? a->data + (uintptr_t)h.p : NULL;
                memcpy(at, &h, sizeof h);
            } else {
                char *c;
                memcpy(&c, at, sizeof c);
                c = (char *)a->data + (uintptr_t)c;
                memcpy(at, &c, sizeof c);
            }
        }
}
