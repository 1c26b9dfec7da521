/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * testutil.c - see testutil.h.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lzf.h>
#ifdef H5SHUF_HAVE_LZO
#include <lzo1x.h>
#endif
#include <zlib.h>
#include <zstd.h>

#include "filter_limit.h"
#include "h5shuf_debug.h"

int tu_write(const char *file, int create, const char *path, hid_t ftype, int rank, const hsize_t *dims,
             const struct tu_layout *lay, const void *data)
{
    hid_t f = create ? H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT) : H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return -1;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t maxdims[H5S_MAX_RANK];
    memcpy(maxdims, dims, (size_t)rank * sizeof *dims);
    if (lay && lay->layout == H5D_CHUNKED) {
        hsize_t c[H5S_MAX_RANK];
        memcpy(c, dims, (size_t)rank * sizeof *dims);
        c[0] = lay->chunk_rows;
        for (int k = 1; k < rank; k++)
            if (c[k] == 0)
                c[k] = 1;
        H5Pset_chunk(dcpl, rank, c);
        maxdims[0] = H5S_UNLIMITED;
        if (lay->shuffle)
            H5Pset_shuffle(dcpl);
        if (lay->deflate)
            H5Pset_deflate(dcpl, (unsigned)lay->deflate);
        if (lay->fletcher32)
            H5Pset_fletcher32(dcpl);
    } else if (lay && lay->layout == H5D_COMPACT) {
        H5Pset_layout(dcpl, H5D_COMPACT);
    }
    hid_t s = H5Screate_simple(rank, dims, maxdims);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t d = H5Dcreate2(f, path, ftype, s, lcpl, dcpl, H5P_DEFAULT);
    herr_t r = d < 0 ? -1 : 0;
    hssize_t n = H5Sget_simple_extent_npoints(s);
    if (r >= 0 && n > 0)
        r = H5Dwrite(d, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(lcpl);
    H5Sclose(s);
    H5Pclose(dcpl);
    if (H5Fclose(f) < 0)
        r = -1;
    return r < 0 ? -1 : 0;
}

void *tu_read(const char *file, const char *path, uint64_t *rows, uint64_t *row_bytes)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return NULL;
    void *buf = NULL;
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d >= 0) {
        hid_t t = H5Dget_type(d), s = H5Dget_space(d);
        hsize_t dims[H5S_MAX_RANK];
        int rank = H5Sget_simple_extent_ndims(s);
        H5Sget_simple_extent_dims(s, dims, NULL);
        uint64_t rb = H5Tget_size(t);
        for (int k = 1; k < rank; k++)
            rb *= dims[k];
        *rows = dims[0];
        *row_bytes = rb;
        buf = malloc(dims[0] * rb + 1);
        if (buf && dims[0] > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            free(buf);
            buf = NULL;
        }
        H5Tclose(t);
        H5Sclose(s);
        H5Dclose(d);
    }
    H5Fclose(f);
    return buf;
}

int tu_shuffle(const char *const *inputs, size_t n, const char *output, const h5shuf_options *opts, char *msg,
               size_t cap)
{
    return tu_shuffle_bound(inputs, n, output, opts, 0, msg, cap);
}

int tu_shuffle_bound(const char *const *inputs, size_t n, const char *output, const h5shuf_options *opts,
                     uint64_t pile_bound_rows, char *msg, size_t cap)
{
    /* Every run, failed ones included, must close every file, group, dataset, committed datatype and
     * attribute it opened.  (HDF5 1.10 counts no other kinds publicly: H5Inmembers refuses the library's
     * own types, so dataspaces and property lists are not checked here.) */
    ssize_t before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    h5shuf_job *job = h5shuf_job_create(opts);
    if (!job)
        return H5SHUF_ENOMEM;
    int st = H5SHUF_OK;
    if (pile_bound_rows)
        st = h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, pile_bound_rows);
    for (size_t i = 0; i < n && st == H5SHUF_OK; i++)
        st = h5shuf_job_add_input(job, inputs[i]);
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_output(job, output);
    if (st == H5SHUF_OK)
        st = h5shuf_run(job);
    if (msg)
        snprintf(msg, cap, "%s", h5shuf_errmsg(job));
    h5shuf_job_free(job);
    ssize_t after = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    ASSERT_GE_INT(before, 0);
    ASSERT_EQ_INT(after, before);
    if (after != before)
        fprintf(stderr, "\n  open HDF5 objects: %zd before the run, %zd after\n", before, after);
    return st;
}

unsigned char *tu_raw_chunk(hid_t d, hsize_t row, hsize_t *n, uint32_t *mask)
{
    hsize_t off[2] = {row, 0};
    if (H5Dget_chunk_storage_size(d, off, n) < 0)
        return NULL;
    unsigned char *b = malloc(*n ? *n : 1);
    if (b && H5Dread_chunk(d, H5P_DEFAULT, off, mask, b) < 0) {
        free(b);
        return NULL;
    }
    return b;
}

/* Decode one stored chunk through the filters of dcpl (in reverse order, skipping those in mask) into out
 * (cap bytes, a whole chunk): its size, or 0 on a failure. */
static size_t decode_chunk(hid_t dcpl, const unsigned char *raw, size_t n, uint32_t mask, unsigned char *out, size_t cap)
{
    unsigned char *a = malloc(cap + n + 64), *b = malloc(cap + n + 64);
    size_t len = n, ok = a && b;
    if (ok)
        memcpy(a, raw, n);
    for (int i = H5Pget_nfilters(dcpl) - 1; ok && i >= 0; i--) {
        unsigned flags, cd[8];
        size_t ncd = 8;
        char name[64];
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (mask & (1u << i))
            continue;
        if (id == H5Z_FILTER_DEFLATE) {
            uLongf got = (uLongf)(cap + 64);
            ok = uncompress(b, &got, a, (uLong)len) == Z_OK;
            len = got;
        } else if (id == H5Z_FILTER_FLETCHER32) {
            ok = len >= 4;
            len -= 4;
            memcpy(b, a, len);
        } else if (id == H5Z_FILTER_SHUFFLE) { /* H5Zshuffle.c: byte k of every element, then byte k + 1 */
            size_t es = ncd > 0 && cd[0] ? cd[0] : 1, ne = len / es;
            for (size_t e = 0; e < ne; e++)
                for (size_t k = 0; k < es; k++)
                    b[e * es + k] = a[k * ne + e];
            memcpy(b + ne * es, a + ne * es, len - ne * es);
        } else if (id == 32015) { /* zstd */
            size_t got = ZSTD_decompress(b, cap + 64, a, len);
            ok = !ZSTD_isError(got);
            len = got;
        } else if (id == 32000) { /* lzf */
            unsigned got = lzf_decompress(a, (unsigned)len, b, (unsigned)(cap + 64));
            ok = got > 0;
            len = got;
#ifdef H5SHUF_HAVE_LZO
        } else if (id == 305) { /* lzo: LZO1X, as PyTables decodes it */
            lzo_uint got = cap + 64;
            ok = lzo_init() == LZO_E_OK && lzo1x_decompress_safe(a, len, b, &got, NULL) == LZO_E_OK;
            len = got;
#endif
        } else {
            ok = 0;
        }
        unsigned char *t = a;
        a = b;
        b = t;
    }
    if (ok && len <= cap)
        memcpy(out, a, len);
    free(a);
    free(b);
    return ok && len <= cap ? len : 0;
}

int tu_same_chunks(hid_t a, hid_t b)
{
    hid_t sa = H5Dget_space(a), dcpl = H5Dget_create_plist(a), type = H5Dget_type(a);
    hsize_t na = 0, nb = 0, cdims[H5S_MAX_RANK];
    int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims), same = rank > 0, deflate = 0;
    size_t cap = H5Tget_size(type);
    for (int k = 0; k < rank; k++)
        cap *= cdims[k];
    for (int i = 0; i < H5Pget_nfilters(dcpl); i++) {
        unsigned flags;
        size_t ncd = 0;
        deflate |= H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, NULL, 0, NULL, NULL) == H5Z_FILTER_DEFLATE;
    }
    same = same && H5Dget_num_chunks(a, sa, &na) >= 0 && H5Dget_num_chunks(b, sa, &nb) >= 0 && na == nb;
    if (!same)
        fprintf(stderr, "tu_same_chunks: %llu chunks against %llu\n", (unsigned long long)na, (unsigned long long)nb);
    unsigned char *da = malloc(cap), *db = malloc(cap);
    for (hsize_t c = 0; same && c < na; c++) {
        hsize_t oa[H5S_MAX_RANK], ob[H5S_MAX_RANK], za = 0, zb = 0;
        haddr_t aa, ab;
        unsigned ma = 0, mb = 0;
        same = H5Dget_chunk_info(a, sa, c, oa, &ma, &aa, &za) >= 0 && H5Dget_chunk_info(b, sa, c, ob, &mb, &ab, &zb) >= 0 &&
               memcmp(oa, ob, (size_t)rank * sizeof *oa) == 0 && ma == mb;
        unsigned char *ra = malloc(za ? za : 1), *rb = malloc(zb ? zb : 1);
        uint32_t fa = 0, fb = 0;
        same = same && H5Dread_chunk(a, H5P_DEFAULT, oa, &fa, ra) >= 0 && H5Dread_chunk(b, H5P_DEFAULT, ob, &fb, rb) >= 0;
        if (same && !deflate)
            same = za == zb && memcmp(ra, rb, za) == 0;
        size_t la = same ? decode_chunk(dcpl, ra, za, fa, da, cap) : 0, lb = same ? decode_chunk(dcpl, rb, zb, fb, db, cap) : 0;
        same = same && la == cap && lb == cap && memcmp(da, db, cap) == 0;
        if (!same)
            fprintf(stderr, "tu_same_chunks: chunk %llu differs (sizes %llu and %llu, masks %u and %u, decoded %zu and %zu)\n",
                    (unsigned long long)c, (unsigned long long)za, (unsigned long long)zb, ma, mb, la, lb);
        free(ra);
        free(rb);
    }
    free(da);
    free(db);
    H5Tclose(type);
    H5Pclose(dcpl);
    H5Sclose(sa);
    return same;
}

int tu_same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        char x[65536], y[65536];
        size_t na = fread(x, 1, sizeof x, fa), nb = fread(y, 1, sizeof y, fb);
        if (na != nb || memcmp(x, y, na) != 0)
            same = 0;
        if (na == 0)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

int tu_main(const char *suite, const struct tu_test *tests)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the tests provoke HDF5 errors on purpose */
    int rc = tu_run(suite, tests);
    H5close();
    return rc;
}

/* H5Ewalk2 callback: the innermost description into data (256 bytes). */
static herr_t innermost_desc(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc)
        snprintf(data, 256, "%s", e->desc);
    return 0;
}

size_t tu_run_filter(H5Z_func_t fn, unsigned flags, size_t ncd, const unsigned *cd, const void *data, size_t n,
                     void **out, size_t *out_size)
{
    void *buf = H5allocate_memory(n ? n : 1, 0);
    memcpy(buf, data, n);
    *out_size = n ? n : 1;
    size_t r = fn(flags, ncd, cd, n, out_size, &buf);
    *out = buf;
    return r;
}

size_t tu_decode_limited(H5Z_func_t fn, H5Z_filter_t id, size_t ncd, const unsigned *cd, const void *data, size_t n,
                         size_t lo, size_t hi, const char *want)
{
    struct h5shuf_filter_limits *l = h5shuf_filter_limits_here();
    memset(l, 0, sizeof *l);
    if (hi) {
        l->set = 1;
        l->n = 1;
        l->f[0] = (struct h5shuf_filter_limit){id, lo, hi};
    }
    size_t size = n ? n : 1;
    void *buf = H5allocate_memory(size, 0);
    memcpy(buf, data, n);
    H5Eclear2(H5E_DEFAULT);
    size_t r = fn(H5Z_FLAG_REVERSE, ncd, cd, n, &size, &buf);
    char cause[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_desc, cause);
    if (want) {
        ASSERT_EQ_INT(r, 0);
        ASSERT_EQ_MEM(buf, data, n);
        if (!strstr(cause, want))
            fprintf(stderr, "\n  expected \"%s\" in \"%s\"\n", want, cause);
        ASSERT_HAS_STR(cause, want);
        if (hi) {
            CU_ASSERT(l->refused);
            ASSERT_EQ_INT(l->refused_nbytes, n);
            ASSERT_EQ_INT(l->refused_hash, h5shuf_filter_hash(data, n));
            ASSERT_EQ_STR(l->refused_msg, cause);
        }
    } else {
        if (r == 0)
            fprintf(stderr, "\n  refused: \"%s\"\n", cause);
        ASSERT_GT_INT(r, 0);
        ASSERT_LE_INT(r, size);
    }
    memset(l, 0, sizeof *l);
    H5Eclear2(H5E_DEFAULT);
    H5free_memory(buf);
    return r;
}

size_t tu_zstd_rle_frame(unsigned char *out, size_t total)
{
    /* magic, frame header: no content size, not single-segment, window 128 KiB */
    static const unsigned char head[6] = {0x28, 0xB5, 0x2F, 0xFD, 0x00, (17 - 10) << 3};
    memcpy(out, head, sizeof head);
    size_t p = sizeof head;
    while (total) {
        size_t n = total < 131072 ? total : 131072;
        total -= n;
        uint32_t h = (uint32_t)(total == 0) | 1u << 1 | (uint32_t)n << 3; /* last block?, RLE, its size */
        out[p++] = (unsigned char)h;
        out[p++] = (unsigned char)(h >> 8);
        out[p++] = (unsigned char)(h >> 16);
        out[p++] = 0; /* the byte repeated */
    }
    return p;
}
