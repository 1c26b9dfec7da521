/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lzo.c - PyTables' LZO filter (id 305) called as HDF5 calls it, and through HDF5.
 *
 * Round trips over data that compresses and data that does not (the filter then returns 0 and HDF5
 * stores the chunk with the filter skipped: PyTables keeps a stream only when it is shorter than the
 * chunk), streams liblzo2 reads directly, a decoder whose first size guess is too small (it grows the
 * buffer), corrupt, truncated and over-long streams (a PyTables 0.5-0.7 chunk with its checksum
 * trailer among them: refused, as PyTables refuses it), the pure codec's results, and cd_values: stored
 * as the writer gave them (no set_local), under PyTables' filter name.  PyTables itself writes and reads
 * these files in tests/filters_h5py.py (mode lzo) and tests/corpus.
 */
#include <lzo1x.h>
#include <stdlib.h>
#include <string.h>

#include "filter_lzo.h"
#include "filters.h"
#include "testutil.h"

/* PyTables' cd_values for a Table of VERSION 2.7 at complevel 5. */
static const unsigned table_cd[3] = {5, 27, 0};

/* Run the filter on a copy of data as HDF5 would, with *out_size = n (HDF5's buffer of the stored size);
 * returns its result, the buffer in *out (H5free_memory). */
static size_t run_filter(unsigned flags, const void *data, size_t n, void **out, size_t *out_size)
{
    void *buf = H5allocate_memory(n ? n : 1, 0);
    memcpy(buf, data, n);
    *out_size = n ? n : 1;
    size_t r = h5shuf_lzo_filter(flags, 3, table_cd, n, out_size, &buf);
    *out = buf;
    return r;
}

static void roundtrip(const void *data, size_t n)
{
    void *c, *d;
    size_t cs, ds;
    size_t cn = run_filter(0, data, n, &c, &cs);
    ASSERT_GT_INT_FATAL(cn, 0);
    ASSERT_LT_INT_FATAL(cn, n);
    ASSERT_GE_INT(cs, cn);
    /* plain liblzo2 reads it as PyTables' decoder does, and its LZO1X-1 makes the same bytes */
    unsigned char *plain = malloc(n), *work = malloc(LZO1X_1_MEM_COMPRESS), *again = malloc(n + n / 16 + 67);
    lzo_uint got = n, again_n = 0;
    ASSERT_EQ_INT(lzo_init(), LZO_E_OK);
    ASSERT_EQ_INT(lzo1x_decompress_safe(c, cn, plain, &got, NULL), LZO_E_OK);
    ASSERT_EQ_INT(got, n);
    ASSERT_EQ_MEM(plain, data, n);
    ASSERT_EQ_INT(lzo1x_1_compress(data, n, again, &again_n, work), LZO_E_OK);
    ASSERT_EQ_INT(again_n, cn);
    ASSERT_EQ_MEM(again, c, cn);
    free(plain);
    free(work);
    free(again);
    size_t dn = run_filter(H5Z_FLAG_REVERSE, c, cn, &d, &ds);
    ASSERT_EQ_INT(dn, n);
    ASSERT_GE_INT(ds, n);
    if (dn == n && ds >= n)
        ASSERT_EQ_MEM(d, data, n);
    H5free_memory(c);
    H5free_memory(d);
}

static void test_roundtrips(void)
{
    enum { N = 1 << 20 };
    unsigned char *text = malloc(N), *zeros = calloc(1, N);
    for (size_t i = 0; i < N; i++)
        text[i] = "the quick brown fox "[i % 20] ^ (unsigned char)(i / 4096);
    roundtrip(text, N);
    roundtrip(zeros, N); /* about 4 KiB of stream: the decoder's buffer grows from it to 1 MiB */
    roundtrip(text, 1000);
    roundtrip(zeros, 100);
    roundtrip(text, N); /* after a large chunk: this thread's guess is its size */
    free(text);
    free(zeros);
}

/* Data that does not compress: the filter fails (0), *buf untouched and no error pushed, so HDF5 skips
 * the optional filter for that chunk.  PyTables' rule: the stream must be shorter than the chunk. */
static void test_incompressible(void)
{
    enum { N = 5000 };
    unsigned char data[N], out[N + N / 16 + 67];
    tu_fill(data, N, 3);
    void *b;
    size_t bs;
    H5Eclear2(H5E_DEFAULT);
    ASSERT_EQ_INT(run_filter(0, data, N, &b, &bs), 0);
    ASSERT_EQ_MEM(b, data, N);
    ASSERT_EQ_INT(H5Eget_num(H5E_DEFAULT), 0);
    H5free_memory(b);
    size_t got = 99;
    void *work = malloc(H5SHUF_LZO_WORK_BYTES);
    ASSERT_EQ_INT(h5shuf_lzo_encode(data, N, out, sizeof out, work, &got), H5SHUF_LZO_NOGAIN);
    ASSERT_EQ_INT(got, 0);
    /* a tiny input cannot shrink either: LZO1X's end marker alone is 3 bytes */
    ASSERT_EQ_INT(h5shuf_lzo_encode("aaa", 3, out, sizeof out, work, &got), H5SHUF_LZO_NOGAIN);
    ASSERT_EQ_INT(h5shuf_lzo_encode("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 40, out, sizeof out, work, &got),
                  H5SHUF_LZO_OK);
    ASSERT_GT_INT(got, 0);
    ASSERT_LT_INT(got, 40);
    /* the output must hold LZO's worst case (liblzo2 does not check its end) */
    ASSERT_EQ_INT(h5shuf_lzo_bound(N), N + N / 16 + 67);
    ASSERT_EQ_INT(h5shuf_lzo_encode(data, N, out, h5shuf_lzo_bound(N) - 1, work, &got), H5SHUF_LZO_EINVAL);
    ASSERT_EQ_INT(h5shuf_lzo_encode(data, 0, out, sizeof out, work, &got), H5SHUF_LZO_EINVAL);
    ASSERT_EQ_INT(h5shuf_lzo_bound(SIZE_MAX), SIZE_MAX);
    free(work);
}

static void test_corrupt(void)
{
    enum { N = 100000 };
    unsigned char *data = malloc(N), *bad = malloc(N + 64);
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i % 251 < 100 ? 0 : i % 7);
    void *c;
    size_t cs;
    size_t cn = run_filter(0, data, N, &c, &cs);
    ASSERT_GT_INT_FATAL(cn, 16);
    /* PyTables 0.5-0.7 appended the Adler-32 of the rows and their count (native order) */
    uint32_t trailer[2] = {(uint32_t)lzo_adler32(lzo_adler32(0, NULL, 0), data, N), N};
    struct {
        const char *name;
        size_t len;
        int corrupt; /* 1: must fail; 0: may decode (no checksum), but never past the buffer */
    } cases[] = {{"truncated", cn / 2, 1}, {"one byte", 1, 1}, {"end marker cut", cn - 1, 1},
                 {"a checksum trailer", cn + 8, 1}, {"one byte too many", cn + 1, 1}, {"flipped byte", cn, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t len = cases[k].len;
        memcpy(bad, c, len < cn ? len : cn);
        if (k == 3)
            memcpy(bad + cn, trailer, 8);
        if (k == 4)
            bad[cn] = 0;
        if (k == 5)
            bad[cn / 3] ^= 0x5a;
        H5Eclear2(H5E_DEFAULT);
        void *d;
        size_t ds;
        size_t dn = run_filter(H5Z_FLAG_REVERSE, bad, len, &d, &ds);
        if (cases[k].corrupt)
            ASSERT_EQ_INT(dn, 0);
        ASSERT_LE_INT(dn, ds);
        if (dn == 0) {
            ASSERT_EQ_MEM(d, bad, len);
            ASSERT_GT_INT(H5Eget_num(H5E_DEFAULT), 0);
        }
        H5free_memory(d);
    }
    /* the pure decoder */
    size_t got;
    ASSERT_EQ_INT(h5shuf_lzo_decode(c, cn, bad, N - 1, &got), H5SHUF_LZO_E2BIG);
    ASSERT_EQ_INT(h5shuf_lzo_decode(c, cn, bad, N, &got), H5SHUF_LZO_OK);
    ASSERT_EQ_INT(got, N);
    ASSERT_EQ_MEM(bad, data, N);
    ASSERT_EQ_INT(h5shuf_lzo_decode(c, 0, bad, N, &got), H5SHUF_LZO_ECORRUPT);
    ASSERT_EQ_INT(h5shuf_lzo_decode(c, cn / 2, bad, N, &got), H5SHUF_LZO_ECORRUPT);
    memcpy(bad, c, cn);
    memcpy(bad + cn, trailer, 8);
    unsigned char *out = malloc(N);
    ASSERT_EQ_INT(h5shuf_lzo_decode(bad, cn + 8, out, N, &got), H5SHUF_LZO_ETRAILING);
    ASSERT_HAS_STR(h5shuf_lzo_strerror(H5SHUF_LZO_ETRAILING), "checksum");
    H5Eclear2(H5E_DEFAULT);
    H5free_memory(c);
    free(out);
    free(data);
    free(bad);
}

/* The filter parameters and name as stored for dataset d. */
static void stored_cd(hid_t d, size_t *n, unsigned *cd, char *name, size_t name_cap)
{
    hid_t dcpl = H5Dget_create_plist(d);
    unsigned flags;
    *n = 8;
    ASSERT_GE_INT(H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_LZO, &flags, n, cd, name_cap, name, NULL), 0);
    CU_ASSERT(flags & H5Z_FLAG_OPTIONAL);
    H5Pclose(dcpl);
}

static void test_hdf5(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "lzo.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {1000, 6}, cdims[2] = {100, 6};
    hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cdims);
    H5Pset_filter(dcpl, H5SHUF_FILTER_LZO, H5Z_FLAG_OPTIONAL, 3, table_cd); /* PyTables' call */
    hid_t d = H5Dcreate2(f, "a", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(d, 0);
    size_t n;
    unsigned cd[8];
    char name[32] = "";
    stored_cd(d, &n, cd, name, sizeof name);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(cd[0], 5);
    ASSERT_EQ_INT(cd[1], 27);
    ASSERT_EQ_INT(cd[2], 0);
    ASSERT_EQ_STR(name, "lzo"); /* PyTables finds its filters by this name */

    /* half the chunks compress, half (random) do not: those are stored with the filter skipped */
    int32_t *x = malloc(1000 * 6 * sizeof *x), *back = malloc(1000 * 6 * sizeof *back);
    for (size_t i = 0; i < 1000 * 6; i++)
        x[i] = (int32_t)(i / 6 % 7);
    tu_fill(x + 500 * 6, 500 * 6 * sizeof *x, 11);
    ASSERT_GE_INT(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    H5Dclose(d);
    d = H5Dopen2(f, "a", H5P_DEFAULT);
    ASSERT_GE_INT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
    ASSERT_EQ_MEM(x, back, 1000 * 6 * sizeof *x);
    for (unsigned c = 0; c < 10; c++) {
        hsize_t off[2] = {c * 100, 0}, size = 0;
        unsigned mask = 0;
        H5Dget_chunk_info_by_coord(d, off, &mask, NULL, &size);
        ASSERT_EQ_INT(mask, c < 5 ? 0u : 1u);
        if (c < 5)
            ASSERT_LT_INT(size, 100 * 6 * 4);
        else
            ASSERT_EQ_INT(size, 100 * 6 * 4);
    }

    /* a property list copied from the dataset (h5shuf's -c keep, h5repack), for another chunk shape and
     * type: the values are kept as they are (no set_local rewrites them) */
    hid_t copy = H5Dget_create_plist(d);
    hsize_t cdims2[2] = {10, 6};
    H5Pset_chunk(copy, 2, cdims2);
    hid_t d2 = H5Dcreate2(f, "b", H5T_STD_I16LE, space, H5P_DEFAULT, copy, H5P_DEFAULT);
    stored_cd(d2, &n, cd, name, sizeof name);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(cd[0], 5);
    ASSERT_EQ_INT(cd[1], 27);
    ASSERT_EQ_INT(cd[2], 0);
    H5Dclose(d);
    H5Dclose(d2);
    H5Pclose(copy);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(f);
    free(x);
    free(back);
    tu_rmtree(dir);
    free(dir);
}

/* With the chunk's size declared (h5shuf reading: filters/filter_limit.h), a stream that decodes to more
 * is refused without growing the buffer past it, one that decodes to fewer too; the exact size reads;
 * with nothing declared the decoder grows its buffer as PyTables' does. */
static void test_declared_limit(void)
{
    enum { N = 4000, BIG = 1 << 20 };
    unsigned char *data = malloc(BIG), *c = malloc(h5shuf_lzo_bound(BIG)), *work = malloc(H5SHUF_LZO_WORK_BYTES);
    for (size_t i = 0; i < BIG; i++)
        data[i] = (unsigned char)(i / 7 % 13);
    size_t cn = 0;
    ASSERT_EQ_INT_FATAL(h5shuf_lzo_encode(data, N, c, h5shuf_lzo_bound(BIG), work, &cn), H5SHUF_LZO_OK);
    H5Z_func_t f = (H5Z_func_t)h5shuf_lzo_filter;
    tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, 1600, 1600,
                      "lzo: chunk decodes to more than 1600 bytes, the chunk's size (corrupt chunk)");
    tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, 8000, 8000,
                      "lzo: chunk decodes to 4000 bytes, not the chunk's 8000");
    tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, 4001, 9000,
                      "decodes to 4000 bytes, fewer than the chunk's 4001");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, N, N, NULL), N);
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, 0, 0, NULL), N);
    ASSERT_EQ_INT_FATAL(h5shuf_lzo_encode(data, BIG, c, h5shuf_lzo_bound(BIG), work, &cn), H5SHUF_LZO_OK);
    ASSERT_LT_INT_FATAL(cn, BIG / 16);
    tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, 1600, 1600, "more than 1600 bytes");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZO, 3, table_cd, c, cn, 0, 0, NULL), BIG);
    free(data);
    free(c);
    free(work);
}

int main(void)
{
    h5shuf__filters_register();
    static const struct tu_test tests[] = {
        {"round trips, the bytes of plain liblzo2; decoder buffer grows", test_roundtrips},
        {"incompressible chunks: 0, buffer untouched; bounds", test_incompressible},
        {"corrupt, truncated and over-long input fail cleanly", test_corrupt},
        {"a declared limit: more and fewer bytes refused", test_declared_limit},
        {"cd_values stored as written, under PyTables' name; optional filter skipped per chunk", test_hdf5},
        {NULL, NULL},
    };
    return tu_main("lzo", tests);
}
