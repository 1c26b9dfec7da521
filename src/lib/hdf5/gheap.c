/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gheap.c - a file's global heap collections read with pread(), outside HDF5 (gheap.h).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gheap.h"

/* HDF5's alignment of heap objects (H5HG_ALIGN): up to a multiple of 8; UINT64_MAX on overflow. */
static uint64_t align8(uint64_t x)
{
    return x > UINT64_MAX - 7 ? UINT64_MAX : (x + 7) / 8 * 8;
}

/* Record why the file is refused in (*minor, msg); returns -1. */
__attribute__((format(printf, 5, 6))) static herr_t refuse(hid_t *minor, char *msg, size_t cap, hid_t code,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    *minor = code;
    return -1;
}

void h5shuf__heapfile_close(struct heapfile *h)
{
    h->fd = -1;
}

herr_t h5shuf__heapfile_open(hid_t dset, struct heapfile *h, hid_t *minor, char *msg, size_t cap)
{
    *minor = 0;
    hid_t fid = H5Iget_file_id(dset);
    hid_t fapl = fid >= 0 ? H5Fget_access_plist(fid) : H5I_INVALID_HID;
    hid_t fcpl = fid >= 0 ? H5Fget_create_plist(fid) : H5I_INVALID_HID;
    size_t sa = 0, ss = 0;
    hsize_t ub = 0;
    herr_t r = fapl >= 0 && fcpl >= 0 && H5Pget_sizes(fcpl, &sa, &ss) >= 0 && H5Pget_userblock(fcpl, &ub) >= 0 ? 0 : -1;
    void *handle = NULL;
    if (r >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(fid, fapl, &handle) >= 0 && handle) {
        h->fd = *(int *)handle;
    } else if (r >= 0) { /* another driver (HDF5_DRIVER, an application's file): its bytes are not a descriptor's
                          * to read, and the file by its name may be another file by now */
        H5Eclear2(H5E_DEFAULT);
        r = refuse(minor, msg, cap, H5E_UNSUPPORTED,
                   "cannot check its variable-length data: the file is not open through HDF5's sec2 driver");
    }
    struct stat st;
    if (r >= 0 && fstat(h->fd, &st) != 0)
        r = refuse(minor, msg, cap, H5E_CANTGET, "cannot stat the file to check its variable-length data");
    if (r >= 0 && (sa < 1 || sa > 8 || ss < 1 || ss > 8))
        r = refuse(minor, msg, cap, H5E_BADVALUE, "file addresses of %zu bytes and lengths of %zu bytes are not supported", sa,
                   ss);
    h->size = r >= 0 ? (uint64_t)st.st_size : 0;
    h->base = ub;
    h->sa = (unsigned)sa;
    h->ss = (unsigned)ss;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (fid >= 0)
        H5Fclose(fid);
    return r;
}

/* Read bytes [off, off+n) of the file into buf; 0, or -1 when they are not all there. */
static int pread_all(const struct heapfile *h, uint64_t off, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t k = pread(h->fd, p, n, (off_t)off);
        if (k <= 0)
            return -1;
        p += k, off += (uint64_t)k, n -= (size_t)k;
    }
    return 0;
}

/* Record object idx of size, its bytes at offset at of the collection, in g's table (a second object of the
 * same index replaces the first, as in HDF5's table). */
static int gcol_put(struct gcol *g, uint32_t idx, uint64_t size, uint64_t at)
{
    if (idx >= g->nobj) {
        uint32_t n = idx + 1 > 2 * g->nobj ? idx + 1 : 2 * g->nobj;
        struct gobj *o = realloc(g->obj, n * sizeof *o);
        if (!o)
            return -1;
        for (uint32_t i = g->nobj; i < n; i++)
            o[i] = (struct gobj){OBJ_ABSENT, 0};
        g->obj = o;
        g->nobj = n;
    }
    g->obj[idx] = (struct gobj){size, at};
    return 0;
}

/* Fill g (addr set) from the file: the collection's header checked, its objects walked as HDF5 walks them
 * (H5HG__cache_heap_deserialize) but each held against the collection's end.  What cannot be read goes to
 * g->bad.  With keep, a collection read whole keeps its bytes in g->bytes.  -1: out of memory. */
static int gcol_load(const struct heapfile *h, struct gcol *g, int keep)
{
    const uint64_t hdr = align8(8 + h->ss), objhdr = align8(8 + h->ss); /* H5HG_SIZEOF_HDR, _OBJHDR */
    unsigned char head[32], *whole = NULL;
    g->bad[0] = 0;
    g->nobj = 0;
    free(g->bytes);
    g->bytes = NULL;
    if (g->addr >= h->size || h->size - g->addr < h->base || h->size - g->addr - h->base < hdr) {
        snprintf(g->bad, sizeof g->bad, "lies past the end of the file");
        return 0;
    }
    const uint64_t off = h->base + g->addr;
    if (pread_all(h, off, head, (size_t)hdr) < 0 || memcmp(head, "GCOL", 4) != 0 || head[4] != 1) {
        snprintf(g->bad, sizeof g->bad, "is not a global heap collection");
        return 0;
    }
    const uint64_t size = h5shuf__get_le(head + 8, h->ss);
    if (size < hdr || size > h->size - off) {
        snprintf(g->bad, sizeof g->bad, "claims %llu bytes, more than the file holds past it",
                 (unsigned long long)size);
        return 0;
    }
    if (size <= GCOL_READ_WHOLE) {
        if (!(whole = malloc((size_t)size)))
            return -1;
        if (pread_all(h, off, whole, (size_t)size) < 0) {
            free(whole);
            snprintf(g->bad, sizeof g->bad, "cannot be read");
            return 0;
        }
    }
    int r = 0;
    for (uint64_t p = hdr; p < size && size - p >= objhdr;) { /* (less than a header left: free space) */
        const unsigned char *o = whole ? whole + p : head;
        if (!whole && pread_all(h, off + p, head, (size_t)objhdr) < 0) {
            snprintf(g->bad, sizeof g->bad, "cannot be read");
            break;
        }
        uint32_t idx = (uint32_t)h5shuf__get_le(o, 2);
        uint64_t osize = h5shuf__get_le(o + 8, h->ss);
        if (idx == 0) { /* free space: HDF5 keeps it last, its size running exactly to the end */
            if (osize != size - p)
                snprintf(g->bad, sizeof g->bad, "has free space of %llu bytes where %llu are left",
                         (unsigned long long)osize, (unsigned long long)(size - p));
            break;
        }
        if (osize > size - p - objhdr) { /* the collection is corrupt, not only this object: HDF5's walk rounds
                                          * the size up (H5HG_ALIGN) with a wrap-around and goes on inside the
                                          * object, where a free-space header of 0 bytes loops forever (HDF5 1.10
                                          * to 2.x, found by fuzz_file) */
            snprintf(g->bad, sizeof g->bad, "holds object %u of %llu bytes, past the end of the collection", idx,
                     (unsigned long long)osize);
            break;
        }
        if ((r = gcol_put(g, idx, osize, p + objhdr)) < 0)
            break;
        uint64_t need = objhdr + align8(osize);
        p = need > size - p ? size : p + need;
    }
    if (keep && r == 0 && !g->bad[0])
        g->bytes = whole;
    else
        free(whole);
    return r;
}

struct gcol *h5shuf__gcol_get(const struct heapfile *h, struct gcol *cache, unsigned *next, uint64_t addr, int keep)
{
    for (unsigned i = 0; i < GCOL_CACHE; i++)
        if (cache[i].addr == addr)
            return &cache[i];
    struct gcol *g = &cache[*next];
    *next = (*next + 1) % GCOL_CACHE;
    g->addr = addr;
    if (gcol_load(h, g, keep) < 0) {
        g->addr = UINT64_MAX;
        return NULL;
    }
    return g;
}

void h5shuf__gcol_free(struct gcol *g)
{
    free(g->obj);
    free(g->bytes);
    *g = (struct gcol){.addr = UINT64_MAX};
}
