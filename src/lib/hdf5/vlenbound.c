/* SPDX-License-Identifier: BSD-3-Clause */
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
 * through a soft conversion that leaves the stored bytes as they are (registered once for the library's
 * lifetime, never removed: a job's read cannot take another's conversion away) --
 * and each is checked against the collection it names, walked (gheap.c) as H5HG__cache_heap_deserialize
 * walks it but with every length held against the collection and the collection against the file.  The file's
 * bytes come through HDF5's own descriptor (the sec2 driver; a file open through another is refused).
 *
 * The bound on the total.  The dataset's own storage (H5Dget_storage_size) holds only the descriptors,
 * 16 bytes an element whatever its length, so it bounds nothing.  The file does: a heap object is never
 * compressed and HDF5 writes one for each element, after a header of 16 bytes, so the payload of any
 * rows -- L * base bytes an element, plus a string's NUL -- is made of distinct bytes of the file, and
 * is at most the file's size (a factor of 1; the headers more than pay for the NULs).  Only descriptors
 * that share an object, which HDF5 never writes, get past it, and those are refused.  The caller's limit
 * (from its memory budget) is the other bound: rows whose payload alone exceeds it cannot be afforded.
 */
#include <pthread.h>
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
#include "vlenrec.h" /* h5shuf__type_has_var */

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

/*-*************************************
*  Conversions to descriptors
***************************************/

/* Is t a variable-length sequence or string, or an array (of arrays) of them?  Such a type is stored as
 * descriptors alone, one after another: what the descriptor type reads as one opaque run. */
static int all_descriptors(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    if (c == H5T_VLEN || (c == H5T_STRING && H5Tis_variable_str(t) > 0))
        return 1;
    if (c != H5T_ARRAY)
        return 0;
    hid_t s = H5Tget_super(t);
    int r = s >= 0 && all_descriptors(s);
    if (s >= 0)
        H5Tclose(s);
    return r;
}

/* The soft conversion from stored descriptors (a vlen sequence or string, or an array of them) to the
 * opaque DESC_TAG type of the same size: the descriptors as stored, so there is nothing to convert.  It
 * declines every other pair, so registered once it changes no other conversion of the process.  (An array
 * of descriptors is converted here whole rather than through HDF5's array conversion, which calls an
 * application's conversion of its elements in a way HDF5 1.14 crashes on.) */
static herr_t desc_conv(hid_t src, hid_t dst, H5T_cdata_t *cdata, size_t nelmts, size_t buf_stride,
                        size_t bkg_stride, void *buf, void *bkg, hid_t dxpl)
{
    (void)nelmts, (void)buf_stride, (void)bkg_stride, (void)buf, (void)bkg, (void)dxpl;
    if (cdata->command != H5T_CONV_INIT)
        return 0;
    char *tag = H5Tget_class(dst) == H5T_OPAQUE ? H5Tget_tag(dst) : NULL;
    int ours = tag && strcmp(tag, DESC_TAG) == 0 && H5Tget_size(src) == H5Tget_size(dst) && all_descriptors(src);
    if (tag)
        H5free_memory(tag);
    cdata->need_bkg = H5T_BKG_NO;
    return ours ? 0 : -1;
}

/* desc_conv registered for the classes it converts from, once for the HDF5 library's lifetime: again only
 * after the library was closed and opened again (H5close drops every registration), which a conversion
 * path that no longer leads to desc_conv tells (H5Tfind; no id is kept open across calls).  0, or < 0 when
 * HDF5 failed. */
static herr_t register_conv(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    hsize_t one = 1;
    pthread_mutex_lock(&lock);
    hid_t seq = H5Tvlen_create(H5T_NATIVE_UCHAR), str = H5Tcopy(H5T_C_S1);
    hid_t arr = seq >= 0 ? H5Tarray_create2(seq, 1, &one) : H5I_INVALID_HID;
    hid_t op = H5Tcreate(H5T_OPAQUE, sizeof(hvl_t)); /* (the size of seq in memory: a pair desc_conv takes) */
    herr_t r = seq < 0 || str < 0 || arr < 0 || op < 0 || H5Tset_size(str, H5T_VARIABLE) < 0 ||
                       H5Tset_tag(op, DESC_TAG) < 0
                   ? -1
                   : 0;
    H5T_cdata_t *cd = NULL;
    H5T_conv_t found = r >= 0 ? H5Tfind(seq, op, &cd) : NULL;
    if (r >= 0 && found != desc_conv) {
        H5Eclear2(H5E_DEFAULT); /* (no path yet: not registered) */
        r = H5Tregister(H5T_PERS_SOFT, CONV_NAME, seq, op, desc_conv) < 0 ||
                    H5Tregister(H5T_PERS_SOFT, CONV_NAME, str, op, desc_conv) < 0 ||
                    H5Tregister(H5T_PERS_SOFT, CONV_NAME, arr, op, desc_conv) < 0
                ? -1
                : 0;
    }
    hid_t t[] = {seq, str, arr, op};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (t[i] >= 0)
            H5Tclose(t[i]);
    pthread_mutex_unlock(&lock);
    return r;
}

/*-*************************************
*  Descriptor types
***************************************/

/* The descriptors of one element of t, a type all_descriptors() accepts: 1 for a sequence or a string,
 * the product of the dims (recursively) for an array.  0 when HDF5 fails. */
static uint64_t leaf_count(hid_t t)
{
    if (H5Tget_class(t) != H5T_ARRAY)
        return 1;
    hsize_t dims[H5S_MAX_RANK];
    int k = H5Tget_array_ndims(t);
    hid_t s = H5Tget_super(t);
    uint64_t n = s >= 0 && k > 0 && H5Tget_array_dims2(t, dims) >= 0 ? leaf_count(s) : 0;
    for (int i = 0; i < k && n; i++)
        n = dims[i] && n <= UINT64_MAX / dims[i] ? n * dims[i] : 0;
    if (s >= 0)
        H5Tclose(s);
    return n;
}

/* A datatype that reads only the stored descriptors of t's variable-length members: each sequence or
 * string, and each array of them, an opaque DESC_TAG run of dsz bytes a descriptor; compounds keep the
 * names of the members that hold variable-length data (in order, packed), arrays of compounds their dims;
 * everything else is left out, so the descriptors come in slot order.  H5I_INVALID_HID on failure; the
 * caller closes it. */
static hid_t desc_type(hid_t t, size_t dsz)
{
    H5T_class_t c = H5Tget_class(t);
    if (all_descriptors(t)) {
        uint64_t n = leaf_count(t);
        hid_t d = n && n <= SIZE_MAX / dsz ? H5Tcreate(H5T_OPAQUE, (size_t)(n * dsz)) : H5I_INVALID_HID;
        if (d >= 0 && H5Tset_tag(d, DESC_TAG) < 0) {
            H5Tclose(d);
            d = H5I_INVALID_HID;
        }
        return d;
    }
    if (c == H5T_ARRAY) {
        hid_t s = H5Tget_super(t), m = s >= 0 ? desc_type(s, dsz) : H5I_INVALID_HID;
        hsize_t dims[H5S_MAX_RANK];
        int k = H5Tget_array_ndims(t);
        hid_t r = m >= 0 && k > 0 && H5Tget_array_dims2(t, dims) >= 0 ? H5Tarray_create2(m, (unsigned)k, dims)
                                                                      : H5I_INVALID_HID;
        if (m >= 0)
            H5Tclose(m);
        if (s >= 0)
            H5Tclose(s);
        return r;
    }
    if (c != H5T_COMPOUND)
        return H5I_INVALID_HID;
    int n = H5Tget_nmembers(t);
    hid_t *m = n > 0 ? calloc((size_t)n, sizeof *m) : NULL;
    size_t size = 0;
    int ok = m != NULL;
    for (int i = 0; ok && i < n; i++) {
        hid_t mt = H5Tget_member_type(t, (unsigned)i);
        m[i] = H5I_INVALID_HID;
        ok = mt >= 0;
        if (ok && h5shuf__type_has_var(mt)) {
            m[i] = desc_type(mt, dsz);
            ok = m[i] >= 0;
            size += ok ? H5Tget_size(m[i]) : 0;
        }
        if (mt >= 0)
            H5Tclose(mt);
    }
    hid_t r = ok && size ? H5Tcreate(H5T_COMPOUND, size) : H5I_INVALID_HID;
    size_t off = 0;
    for (int i = 0; r >= 0 && i < n; i++) {
        if (m[i] < 0)
            continue;
        char *name = H5Tget_member_name(t, (unsigned)i);
        if (!name || H5Tinsert(r, name, off, m[i]) < 0) {
            H5Tclose(r);
            r = H5I_INVALID_HID;
        }
        off += H5Tget_size(m[i]);
        if (name)
            H5free_memory(name);
    }
    for (int i = 0; m && i < n; i++)
        if (m[i] >= 0)
            H5Tclose(m[i]);
    free(m);
    return r;
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

/*-*************************************
*  Reading descriptors and copying elements
***************************************/

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

/* Does heap object idx of the collection g at addr (NULL: out of memory) hold element e of row row, of
 * bytes bytes?  0, or -1 with the refusal in w. */
static herr_t check_object(const struct target *tg, struct why *w, const struct gcol *g, uint64_t addr, uint32_t idx,
                           uint64_t bytes, uint64_t row, uint64_t e)
{
    char at[96];
    uint64_t osize = g && idx < g->nobj ? g->obj[idx].size : OBJ_ABSENT;
    if (!g)
        return refuse(w, H5E_NOSPACE, "out of memory");
    if (g->bad[0])
        return refuse(w, H5E_BADVALUE, "%s: its global heap collection (address %llu) %s",
                      where_of(tg, row, e, at, sizeof at), (unsigned long long)addr, g->bad);
    if (osize == OBJ_ABSENT)
        return refuse(w, H5E_BADVALUE, "%s: its global heap collection (address %llu) holds no object %u",
                      where_of(tg, row, e, at, sizeof at), (unsigned long long)addr, idx);
    if (osize > bytes)
        return refuse(w, H5E_BADVALUE,
                      "%s: global heap object %u (collection at address %llu) claims "
                      "%llu bytes for an element of %llu",
                      where_of(tg, row, e, at, sizeof at), idx, (unsigned long long)addr,
                      (unsigned long long)osize, (unsigned long long)bytes);
    return 0;
}

/*-*************************************
*  Bounding a dataset's payload
***************************************/

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
    const int str = tg->str;
    h5shuf_u128 total = 0; /* decoded payload bytes of the rows (of those checked, when cut) */
    int cut = 0;
    herr_t r = h5shuf__heapfile_open(tg->obj, &h, &why.minor, why.msg, sizeof why.msg);
    if (cp && (tg->slot || tg->str || tg->attr || tg->whole))
        cp->ok = 0;
    const uint64_t dsz = 8 + (uint64_t)h.sa, per = tg->per;
    uint64_t brows = per < DESC_BLOCK ? DESC_BLOCK / per : 1;
    if (brows > n)
        brows = n;
    if (r >= 0 && (h5shuf_u128)brows * per * dsz > SIZE_MAX / 2)
        r = refuse(w, H5E_NOSPACE, "rows of %llu variable-length elements are too large to check",
                   (unsigned long long)per);
    if (r >= 0 && !(desc = malloc((size_t)(brows * per * dsz))))
        r = refuse(w, H5E_NOSPACE, "out of memory");
    if (r >= 0 && (register_conv() < 0 || (dt = desc_type(tg->vtype, (size_t)dsz)) < 0))
        r = -1;
    for (uint64_t b = start; r >= 0 && b < start + n; b += brows) {
        uint64_t k = start + n - b < brows ? start + n - b : brows;
        /* storage never written, with no fill value (rows.h h5shuf__read_may_skip), is left as it was by
         * HDF5: zeroes are nil descriptors, read as empty, not heap contents taken for descriptors */
        memset(desc, 0, (size_t)(k * per * dsz));
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
            r = check_object(tg, w, g, addr, idx, bytes, row, e);
            if (r >= 0 && cp && cp->ok && copy_elem(cp, (b - start) * per + i, len, bytes, g, idx) < 0)
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

/*-*************************************
*  Whole-dataset bounds and copies
***************************************/

/* The variable-length leaves of one element of file type t, in slot order (the order desc_type reads
 * their descriptors): each one's payload element bytes and whether it is a string, appended to *sl (*n
 * of them, *cap allocated).  0; 1 when t holds a sequence of variable-length data (nested: its inner
 * descriptors lie in the heap, where nothing checks them first); < 0 when HDF5 fails, memory runs out
 * or an element has more than 2^22 leaves. */
static int var_slots(hid_t t, struct h5shuf_vslot **sl, size_t *n, size_t *cap)
{
    H5T_class_t c = H5Tget_class(t);
    int r = 0;
    if (c == H5T_VLEN || (c == H5T_STRING && H5Tis_variable_str(t) > 0)) {
        hid_t s = c == H5T_VLEN ? H5Tget_super(t) : H5I_INVALID_HID;
        if (c == H5T_VLEN && (s < 0 || h5shuf__type_has_var(s)))
            r = s < 0 ? -1 : 1;
        if (r == 0 && *n == *cap) {
            size_t k = *cap ? 2 * *cap : 16;
            struct h5shuf_vslot *q = k <= (1u << 22) ? realloc(*sl, k * sizeof *q) : NULL;
            r = q ? 0 : -1;
            if (q)
                *sl = q, *cap = k;
        }
        if (r == 0)
            (*sl)[(*n)++] = (struct h5shuf_vslot){.base = s >= 0 ? H5Tget_size(s) : 1, .str = c == H5T_STRING};
        if (s >= 0)
            H5Tclose(s);
        return r;
    }
    if (c == H5T_ARRAY) {
        hid_t s = H5Tget_super(t);
        hsize_t dims[H5S_MAX_RANK];
        int k = H5Tget_array_ndims(t);
        uint64_t reps = s >= 0 && k > 0 && H5Tget_array_dims2(t, dims) >= 0 ? 1 : 0;
        for (int i = 0; i < k && reps; i++)
            reps = dims[i] && reps <= (1u << 22) / dims[i] ? reps * dims[i] : 0;
        size_t first = *n;
        r = reps ? var_slots(s, sl, n, cap) : -1;
        size_t one = *n - first; /* the leaves of one array element, repeated for the others */
        for (uint64_t i = 1; r == 0 && i < reps && one; i++) {
            for (size_t j = 0; r == 0 && j < one; j++) {
                if (*n == *cap) {
                    size_t kk = 2 * *cap;
                    struct h5shuf_vslot *q = kk <= (1u << 22) ? realloc(*sl, kk * sizeof *q) : NULL;
                    r = q ? 0 : -1;
                    if (q)
                        *sl = q, *cap = kk;
                }
                if (r == 0)
                    (*sl)[(*n)++] = (*sl)[first + j];
            }
        }
        if (s >= 0)
            H5Tclose(s);
        return r;
    }
    if (c == H5T_COMPOUND)
        for (int i = 0, nm = H5Tget_nmembers(t); r == 0 && i < nm; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r = m < 0 ? -1 : h5shuf__type_has_var(m) ? var_slots(m, sl, n, cap) : 0;
            if (m >= 0)
                H5Tclose(m);
        }
    return r;
}

herr_t h5shuf__vlen_bound_whole(hid_t obj)
{
    int attr = H5Iget_type(obj) == H5I_ATTR;
    hid_t t = attr ? H5Aget_type(obj) : H5Dget_type(obj);
    hid_t s = attr ? H5Aget_space(obj) : H5Dget_space(obj);
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    int str = c == H5T_STRING && H5Tis_variable_str(t) > 0;
    hsize_t dims[H5S_MAX_RANK] = {0};
    int rank = s >= 0 ? H5Sget_simple_extent_dims(s, dims, NULL) : -1;
    hssize_t np = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    herr_t r = t < 0 || s < 0 || rank < 0 || np < 0 ? -1 : 0;
    struct h5shuf_vslot *slot = NULL;
    size_t nslot = 0, cap = 0;
    int nested = r >= 0 && h5shuf__type_has_var(t) ? var_slots(t, &slot, &nslot, &cap) : 0;
    if (nested < 0)
        r = -1;
    struct target tg = {.obj = obj, .vtype = t, .attr = attr, .whole = attr || rank == 0, .str = str,
                        .base = nslot ? slot[0].base : 0};
    const int top = c == H5T_VLEN || str; /* a sequence or a string itself, else members (slots) */
    if (!top && nslot) {
        tg.slot = slot;
        tg.nslot = nslot;
    }
    if (tg.whole) {
        tg.per = (uint64_t)np * (top ? 1 : nslot);
        tg.n = 1;
    } else if (rank > 0) {
        tg.per = dims[0] ? (uint64_t)np / dims[0] * (top ? 1 : nslot) : 0;
        tg.n = dims[0];
    }
    if (nested > 0) {
        H5Eclear2(H5E_DEFAULT);
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_DATATYPE, H5E_UNSUPPORTED, "%s",
                 "it holds nested variable-length data (a sequence of sequences or of strings), which h5shuf "
                 "cannot check before HDF5 reads it");
        r = -1;
    } else if (r >= 0 && nslot) { /* (else nothing of the heap is read) */
        r = bound(&tg, 0, NULL);
    }
    hid_t stack = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    free(slot);
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
