/*
 * vlenbound.c - what a read of variable-length rows will cost, checked before HDF5 reads them.
 *
 * A vlen element is stored in its dataset as a descriptor: its length L (elements, 4 bytes), the file
 * address of a global heap collection and the index of an object in it (4 bytes); its payload is that
 * heap object.  HDF5 1.10 trusts both halves.  H5T__conv_vlen allocates and zeroes L * base bytes before
 * reading (a descriptor with L near 2^32 took 6.5 GB in 8 s at -m 2M), and H5HG_read copies as many
 * bytes as the object's header claims into that buffer, from wherever the object begins: an inflated
 * size, or an index the collection does not hold, is a SIGSEGV inside the library.  h5shuf cannot mend
 * HDF5, but it can refuse such rows first.  H5Dvlen_get_buf_size is no guard: in 1.10 it reads every
 * element through the same conversion, so it crashes (or runs away) exactly as the read would.
 *
 * So the descriptors are read without their payload -- H5Dread into an opaque type of the same size
 * through a soft conversion registered for the read alone, which leaves the stored bytes as they are --
 * and each is checked against the collection it names, walked (gheap.c) as H5HG__cache_heap_deserialize
 * walks it but with every length held against the collection and the collection against the file.  The file's
 * bytes come through HDF5's own descriptor (the sec2 driver) or from the file opened by its name.
 *
 * The bound on the total.  The dataset's own storage (H5Dget_storage_size) holds only the descriptors,
 * 16 bytes an element whatever its length, so it bounds nothing.  The file does: a heap object is never
 * compressed and HDF5 writes one for each element, after a header of 16 bytes, so the payload of any
 * rows -- L * base bytes an element, plus a string's NUL -- is made of distinct bytes of the file, and
 * is at most the file's size (a factor of 1; the headers more than pay for the NULs).  Only descriptors
 * that share an object, which HDF5 never writes, get past it, and those are refused.  The caller's limit
 * (from its memory budget) is the other bound: rows whose payload alone exceeds it cannot be afforded.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "boundread.h" /* h5shuf__dread */
#include "gheap.h"
#include "rows.h"
#include "varena.h"
#include "vlenbound.h"
#include "vlenrec.h" /* h5shuf__vrec_desc_type */

#define CONV_NAME "h5shuf vlen descriptors"
#define DESC_TAG "h5shuf vlen descriptor"
/* Descriptors read at a time (whole rows, at least one). */
#define DESC_BLOCK 4096

/* Why a read is refused: pushed onto HDF5's error stack last, once every HDF5 call is done (each call
 * of the API empties the stack). */
struct why {
    hid_t minor;   /* HDF5's minor error code */
    char msg[512]; /* one line; "" while nothing is refused */
};

/* Record the cause of a refusal in *w (the first one stays); returns -1. */
__attribute__((format(printf, 3, 4))) static herr_t refuse(struct why *w, hid_t minor, const char *fmt, ...)
{
    if (w->msg[0])
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->msg, sizeof w->msg, fmt, ap);
    va_end(ap);
    w->minor = minor;
    return -1;
}

/* The soft conversion from a stored vlen (sequence or string) to the opaque DESC_TAG type of the same
 * size: the descriptors as stored, so there is nothing to convert.  It declines every other pair. */
static herr_t desc_conv(hid_t src, hid_t dst, H5T_cdata_t *cdata, size_t nelmts, size_t buf_stride,
                        size_t bkg_stride, void *buf, void *bkg, hid_t dxpl)
{
    (void)nelmts, (void)buf_stride, (void)bkg_stride, (void)buf, (void)bkg, (void)dxpl;
    if (cdata->command != H5T_CONV_INIT)
        return 0;
    H5T_class_t c = H5Tget_class(src);
    int var = c == H5T_VLEN || (c == H5T_STRING && H5Tis_variable_str(src) > 0);
    char *tag = var && H5Tget_class(dst) == H5T_OPAQUE ? H5Tget_tag(dst) : NULL;
    int ours = tag && strcmp(tag, DESC_TAG) == 0 && H5Tget_size(src) == H5Tget_size(dst);
    if (tag)
        H5free_memory(tag);
    cdata->need_bkg = H5T_BKG_NO;
    return ours ? 0 : -1;
}

/* What is checked: rows [start, start+n) of per elements each of obj (a dataset; or one row of all its
 * elements when whole: a scalar dataset, or an attribute when attr), whose elements are vlen sequences of
 * base-byte elements or strings (str), of type vtype (its class is registered for the conversion; with
 * slot, the memory type of compound or array elements whose members are the elements). */
struct target {
    hid_t obj, vtype;
    int attr, whole, str;
    uint64_t base, per, start, n;
    /* rows of compound or array elements (vlenrec.c): vtype is their memory type, and descriptor e of a
     * row is member slot[e % nslot] (its own base and str); NULL otherwise */
    const struct h5shuf_vslot *slot;
    size_t nslot;
};

/* "row R, element E" of a dataset's rows, "element E" of an attribute or a whole dataset. */
static const char *where_of(const struct target *tg, uint64_t row, uint64_t e, char *buf, size_t cap)
{
    if (tg->attr || tg->whole)
        snprintf(buf, cap, "element %llu", (unsigned long long)e);
    else
        snprintf(buf, cap, "row %llu, element %llu", (unsigned long long)row, (unsigned long long)e);
    return buf;
}

/* Read the descriptors of rows [b, b+k) of tg into desc. */
static herr_t read_descs(const struct target *tg, hid_t dt, uint64_t b, uint64_t k, unsigned char *desc)
{
    if (tg->attr)
        return H5Aread(tg->obj, dt, desc);
    if (tg->whole)
        return h5shuf__dread(tg->obj, dt, H5S_ALL, H5S_ALL, desc);
    hid_t fs, ms;
    herr_t r = h5shuf__select_rows(tg->obj, b, k, &fs, &ms, 0);
    if (r >= 0)
        r = h5shuf__dread(tg->obj, dt, ms, fs, desc);
    return h5shuf__spaces_close(r, fs, ms);
}

/* Where bound() also copies the payload of sequence rows as it checks them (h5shuf__vlen_bound_copy): rec
 * the rows' records (hvl_t; .p an offset into a until the end of the read, then a pointer into it), a the
 * arena the payload is appended to; ok 0 once an element cannot be copied exactly as HDF5 would read it. */
struct copy {
    unsigned char *rec;
    struct h5shuf_varena *a;
    int ok;
};

/* Copy element i (of the read's elements) of len base-size units, bytes of them, stored as object idx of g
 * (checked: it lies in the collection and holds at most bytes), into cp.  Copied only when HDF5 would read
 * exactly the object's bytes: HDF5 copies the object into a conversion buffer it zeroes only when it grows
 * it, so a shorter object would read as whatever an earlier element left there; and only from a
 * collection read whole.  Else cp->ok becomes 0 (and HDF5 reads the rows).  < 0: out of memory. */
static int copy_elem(struct copy *cp, uint64_t i, uint64_t len, uint64_t bytes, const struct gcol *g, uint32_t idx)
{
    if (len == 0) /* HDF5 makes it {0, NULL}, as the caller's zeroed record is */
        return 0;
    if (!g->bytes || g->obj[idx].size != bytes) {
        cp->ok = 0;
        return 0;
    }
    struct h5shuf_varena *a = cp->a;
    if (a->n + bytes > a->cap) {
        uint64_t cap = 2 * a->cap > a->n + bytes ? 2 * a->cap : a->n + bytes;
        if (h5shuf__varena_reserve(a, cap < 65536 ? 65536 : cap) < 0)
            return -1;
    }
    memcpy(a->data + a->n, g->bytes + g->obj[idx].at, bytes);
    hvl_t h = {.len = (size_t)len, .p = (void *)(uintptr_t)a->n};
    memcpy(cp->rec + i * sizeof h, &h, sizeof h);
    a->n += bytes;
    return 0;
}

/* The records of cp's n elements made pointers into its arena, now that it no longer moves. */
static void copy_point(const struct copy *cp, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        hvl_t h;
        memcpy(&h, cp->rec + i * sizeof h, sizeof h);
        if (h.len) {
            h.p = cp->a->data + (uintptr_t)h.p;
            memcpy(cp->rec + i * sizeof h, &h, sizeof h);
        }
    }
}

/* Check tg's rows within limit_bytes; with cp (sequences of tg->base-byte elements only), copy their
 * payload too while cp->ok. */
static herr_t bound(const struct target *tg, uint64_t limit_bytes, struct copy *cp)
{
    const uint64_t start = tg->start, n = tg->n;
    if (n == 0 || tg->per == 0)
        return 0;
    char at[96];
    struct why why = {.msg = ""}, *w = &why;
    struct heapfile h = {.fd = -1};
    struct gcol cache[GCOL_CACHE];
    unsigned next = 0;
    for (unsigned i = 0; i < GCOL_CACHE; i++)
        cache[i] = (struct gcol){.addr = UINT64_MAX};
    unsigned char *desc = NULL;
    hid_t dt = H5I_INVALID_HID;
    int registered = 0;
    const int str = tg->str;
    h5shuf_u128 total = 0; /* decoded payload bytes of the rows (of those checked, when cut) */
    int cut = 0;
    herr_t r = h5shuf__heapfile_open(tg->obj, &h, &why.minor, why.msg, sizeof why.msg);
    if (cp && (h.own || tg->slot || tg->str || tg->attr || tg->whole))
        cp->ok = 0; /* copied only from HDF5's own descriptor of the file (the sec2 driver), as it reads it */
    const uint64_t dsz = 8 + (uint64_t)h.sa, per = tg->per;
    uint64_t brows = per < DESC_BLOCK ? DESC_BLOCK / per : 1;
    if (brows > n)
        brows = n;
    if (r >= 0 && (h5shuf_u128)brows * per * dsz > SIZE_MAX / 2)
        r = refuse(w, H5E_NOSPACE, "rows of %llu variable-length elements are too large to check",
                   (unsigned long long)per);
    if (r >= 0 && !(desc = malloc((size_t)(brows * per * dsz))))
        r = refuse(w, H5E_NOSPACE, "out of memory");
    if (r >= 0 && ((dt = H5Tcreate(H5T_OPAQUE, (size_t)dsz)) < 0 || H5Tset_tag(dt, DESC_TAG) < 0))
        r = -1;
    if (r >= 0 && !tg->slot) {
        r = H5Tregister(H5T_PERS_SOFT, CONV_NAME, tg->vtype, dt, desc_conv);
        registered = r >= 0;
    } else if (r >= 0) { /* compound or array elements: read through their shape with a descriptor at each
                          * vlen member (sequences and strings both registered) */
        hid_t rec = h5shuf__vrec_desc_type(tg->vtype, dt), seq = H5Tvlen_create(H5T_NATIVE_UCHAR);
        hid_t vstr = H5Tcopy(H5T_C_S1);
        r = rec < 0 || seq < 0 || vstr < 0 || H5Tset_size(vstr, H5T_VARIABLE) < 0 ? -1 : 0;
        if (r >= 0)
            r = H5Tregister(H5T_PERS_SOFT, CONV_NAME, seq, dt, desc_conv);
        registered = r >= 0;
        if (r >= 0)
            r = H5Tregister(H5T_PERS_SOFT, CONV_NAME, vstr, dt, desc_conv);
        if (seq >= 0)
            H5Tclose(seq);
        if (vstr >= 0)
            H5Tclose(vstr);
        H5Tclose(dt);
        dt = rec;
    }
    for (uint64_t b = start; r >= 0 && b < start + n; b += brows) {
        uint64_t k = start + n - b < brows ? start + n - b : brows;
        r = read_descs(tg, dt, b, k, desc);
        for (uint64_t i = 0; r >= 0 && i < k * per; i++) {
            const unsigned char *d = desc + i * dsz;
            uint64_t len = h5shuf__get_le(d, 4), addr = h5shuf__get_le(d + 4, h.sa);
            uint32_t idx = (uint32_t)h5shuf__get_le(d + 4 + h.sa, 4);
            if (addr == 0) /* nil: HDF5 reads no heap object (an empty sequence is read: len is not asked) */
                continue;
            const struct h5shuf_vslot *sl = tg->slot ? &tg->slot[i % tg->nslot] : NULL;
            const uint64_t base = sl ? sl->base : tg->base, is_str = sl ? (uint64_t)sl->str : (uint64_t)str;
            uint64_t bytes = len * base, row = b + i / per, e = i % per; /* (len < 2^32) */
            total += bytes + is_str;
            struct gcol *g = h5shuf__gcol_get(&h, cache, &next, addr, cp && cp->ok);
            uint64_t osize = g && idx < g->nobj ? g->obj[idx].size : OBJ_ABSENT;
            if (!g)
                r = refuse(w, H5E_NOSPACE, "out of memory");
            else if (g->bad[0])
                r = refuse(w, H5E_BADVALUE, "%s: its global heap collection (address %llu) %s",
                           where_of(tg, row, e, at, sizeof at), (unsigned long long)addr, g->bad);
            else if (osize == OBJ_ABSENT)
                r = refuse(w, H5E_BADVALUE,
                           "%s: its global heap collection (address %llu) holds no object %u",
                           where_of(tg, row, e, at, sizeof at), (unsigned long long)addr, idx);
            else if (osize == OBJ_PAST)
                r = refuse(w, H5E_BADVALUE,
                           "%s: global heap object %u (collection at address %llu) claims "
                           "more bytes than its collection holds",
                           where_of(tg, row, e, at, sizeof at), idx, (unsigned long long)addr);
            else if (osize > bytes)
                r = refuse(w, H5E_BADVALUE,
                           "%s: global heap object %u (collection at address %llu) claims "
                           "%llu bytes for an element of %llu",
                           where_of(tg, row, e, at, sizeof at), idx, (unsigned long long)addr,
                           (unsigned long long)osize, (unsigned long long)bytes);
            else if (cp && cp->ok && copy_elem(cp, (b - start) * per + i, len, bytes, g, idx) < 0)
                r = refuse(w, H5E_NOSPACE, "out of memory for %llu bytes of variable-length data",
                           (unsigned long long)(cp->a->n + bytes));
        }
        if (r >= 0 && (total > h.size || (limit_bytes && total > limit_bytes)) && b + k < start + n) {
            cut = 1; /* (the rows after cannot bring it back under) */
            break;
        }
    }
    if (tg->attr || tg->whole)
        snprintf(at, sizeof at, "its variable-length data needs");
    else
        snprintf(at, sizeof at, "variable-length rows %llu..%llu need", (unsigned long long)start,
                 (unsigned long long)(start + n - 1));
    if (r >= 0 && total > h.size)
        r = refuse(w, H5E_BADVALUE, "%s %s%llu bytes, more than the file holds (%llu)", at, cut ? "more than " : "",
                   (unsigned long long)(total > UINT64_MAX ? UINT64_MAX : (uint64_t)total),
                   (unsigned long long)h.size);
    else if (r >= 0 && limit_bytes && total > limit_bytes)
        r = refuse(w, H5E_NOSPACE, "%s %s%llu bytes, more than one read may take under the memory budget (%llu, from -m)",
                   at, cut ? "more than " : "",
                   (unsigned long long)(total > UINT64_MAX ? UINT64_MAX : (uint64_t)total),
                   (unsigned long long)limit_bytes);
    if (r >= 0 && cp && cp->ok)
        copy_point(cp, n * per);
    hid_t stack = r < 0 && !why.msg[0] ? H5Eget_current_stack() : H5I_INVALID_HID; /* HDF5's failure */
    if (registered)
        H5Tunregister(H5T_PERS_SOFT, CONV_NAME, H5I_INVALID_HID, H5I_INVALID_HID, desc_conv);
    if (dt >= 0)
        H5Tclose(dt);
    for (unsigned i = 0; i < GCOL_CACHE; i++)
        h5shuf__gcol_free(&cache[i]);
    free(desc);
    h5shuf__heapfile_close(&h);
    if (why.msg[0]) {
        H5Eclear2(H5E_DEFAULT);
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_DATASET, why.minor, "%s", why.msg);
    } else if (stack >= 0) {
        H5Eset_current_stack(stack);
    }
    return r;
}

herr_t h5shuf__vlen_bound(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                          uint64_t limit_bytes)
{
    const int rec = ds->vlen == H5SHUF_VLEN_REC;
    const struct target tg = {.obj = dset, .vtype = ds->mtype, .str = ds->vlen == H5SHUF_VLEN_STR,
                              .base = ds->elem_bytes, .per = ds->elems, .start = start, .n = n,
                              .slot = rec ? ds->slot : NULL, .nslot = rec ? ds->nslot : 0};
    return bound(&tg, limit_bytes, NULL);
}

herr_t h5shuf__vlen_bound_whole(hid_t obj)
{
    int attr = H5Iget_type(obj) == H5I_ATTR;
    hid_t t = attr ? H5Aget_type(obj) : H5Dget_type(obj);
    hid_t s = attr ? H5Aget_space(obj) : H5Dget_space(obj);
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    int str = c == H5T_STRING && H5Tis_variable_str(t) > 0;
    hid_t super = c == H5T_VLEN ? H5Tget_super(t) : H5I_INVALID_HID;
    hsize_t dims[H5S_MAX_RANK] = {0};
    int rank = s >= 0 ? H5Sget_simple_extent_dims(s, dims, NULL) : -1;
    hssize_t np = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    herr_t r = t < 0 || s < 0 || rank < 0 || np < 0 || (c == H5T_VLEN && super < 0) ? -1 : 0;
    struct target tg = {.obj = obj, .vtype = t, .attr = attr, .whole = attr || rank == 0, .str = str,
                        .base = str ? 1 : super >= 0 ? H5Tget_size(super) : 0};
    if (tg.whole) {
        tg.per = (uint64_t)np;
        tg.n = 1;
    } else if (rank > 0) {
        tg.per = dims[0] ? (uint64_t)np / dims[0] : 0;
        tg.n = dims[0];
    }
    if (r >= 0 && (str || (c == H5T_VLEN && tg.base > 0))) /* (else nothing of the heap is read at the top) */
        r = bound(&tg, 0, NULL);
    hid_t stack = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    if (super >= 0)
        H5Tclose(super);
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (stack >= 0)
        H5Eset_current_stack(stack);
    return r;
}

herr_t h5shuf__vlen_bound_copy(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                               uint64_t limit_bytes, unsigned char *buf, struct h5shuf_varena *a, int *copied)
{
    const struct target tg = {.obj = dset, .vtype = ds->mtype, .str = ds->vlen == H5SHUF_VLEN_STR,
                              .base = ds->elem_bytes, .per = ds->elems, .start = start, .n = n,
                              .slot = ds->vlen == H5SHUF_VLEN_REC ? ds->slot : NULL,
                              .nslot = ds->vlen == H5SHUF_VLEN_REC ? ds->nslot : 0};
    struct copy cp = {.rec = buf, .a = a, .ok = ds->vlen == H5SHUF_VLEN_SEQ};
    herr_t r = bound(&tg, limit_bytes, &cp);
    *copied = r >= 0 && cp.ok;
    return r;
}
