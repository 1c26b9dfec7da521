/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lz4.c - the LZ4 filter (id 32004) called as HDF5 calls it, and through HDF5.
 *
 * Round trips of data that compresses and data that does not, in one block and in several (cd_values[0]),
 * each stream taken apart here by the format's own description (the header's sizes, each block's stored
 * size, the block decoded by plain liblz4 or stored as it is), so the checks do not rest on the filter's
 * own decoder; every truncation and a set of damaged headers and block sizes refused (0, buffer untouched,
 * a message on HDF5's stack); a declared decoded-size limit; a dataset written and read through HDF5.
 * Debian's reference plugin (libh5lz4.so) reads and writes these streams in tests/filters_h5py.py
 * (mode plugins), which also compares the chunks byte for byte.
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "filter_lz4.h"
#include "filters.h"
#include "testutil.h"

static uint64_t be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

/* Take stream s (sn bytes) apart by the format: header, then blocks of block bytes; each decoded with
 * plain LZ4_decompress_safe or copied when stored as it is.  Returns the blocks stored as they are, or -1
 * when the stream is not data's (n bytes) in blocks of block bytes. */
static int parse_stream(const unsigned char *s, size_t sn, const unsigned char *data, size_t n, size_t block)
{
    if (sn < 12 || be(s, 8) != n || be(s + 8, 4) != (block < n ? block : n))
        return -1;
    unsigned char *got = malloc(n);
    size_t pos = 12;
    int raw = 0;
    for (size_t done = 0; done < n;) {
        size_t b = n - done < block ? n - done : block;
        if (sn - pos < 4)
            break;
        size_t c = (size_t)be(s + pos, 4);
        pos += 4;
        if (c > sn - pos)
            break;
        if (c == b) {
            memcpy(got + done, s + pos, b);
            raw++;
        } else if (LZ4_decompress_safe((const char *)s + pos, (char *)got + done, (int)c, (int)b) != (int)b) {
            break;
        }
        pos += c;
        done += b;
    }
    int ok = pos == sn && memcmp(got, data, n) == 0;
    free(got);
    return ok ? raw : -1;
}

/* Round trip through the filter; returns the blocks stored as they are. */
static int roundtrip(const unsigned char *data, size_t n, size_t ncd, const unsigned *cd)
{
    void *c, *d;
    size_t cs, ds;
    size_t cn = tu_run_filter(h5shuf_lz4_filter, 0, ncd, cd, data, n, &c, &cs);
    ASSERT_GT_INT_FATAL(cn, 0);
    ASSERT_LE_INT(cn, cs);
    ASSERT_LE_INT(cn, h5shuf_lz4_bound(n, h5shuf_lz4_block(ncd, cd)));
    int raw = parse_stream(c, cn, data, n, h5shuf_lz4_block(ncd, cd));
    ASSERT_GE_INT(raw, 0);
    size_t dn = tu_run_filter(h5shuf_lz4_filter, H5Z_FLAG_REVERSE, ncd, cd, c, cn, &d, &ds);
    ASSERT_EQ_INT_FATAL(dn, n);
    ASSERT_GE_INT(ds, dn);
    ASSERT_EQ_MEM(d, data, n);
    H5free_memory(c);
    H5free_memory(d);
    return raw;
}

static void fill_compressible(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i / 7 % 13);
}

static void fill_random(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        p[i] = (unsigned char)(seed >> 56);
    }
}

static void test_roundtrips(void)
{
    enum { BIG = 1 << 20 };
    unsigned char *data = malloc(BIG);
    const unsigned none[1] = {0}, k1[1] = {1000}, k7[1] = {7};
    const size_t sizes[] = {1, 15, 16, 4096, 65537, BIG};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        fill_compressible(data, sizes[i]);
        roundtrip(data, sizes[i], 0, NULL);
        roundtrip(data, sizes[i], 1, none);
        roundtrip(data, sizes[i], 1, k1);
        if (sizes[i] <= 65537)
            roundtrip(data, sizes[i], 1, k7);
    }
    /* one block of compressible data is stored compressed */
    fill_compressible(data, BIG);
    ASSERT_EQ_INT(roundtrip(data, BIG, 0, NULL), 0);
    /* random bytes do not shrink: every block stored as it is, 4 bytes a block and the header added */
    fill_random(data, BIG, 52);
    ASSERT_EQ_INT(roundtrip(data, BIG, 0, NULL), 1);
    ASSERT_EQ_INT(roundtrip(data, 65537, 1, k1), 66);
    void *c;
    size_t cs;
    ASSERT_EQ_INT(tu_run_filter(h5shuf_lz4_filter, 0, 1, k1, data, 65537, &c, &cs), 65537 + 12 + 66 * 4);
    H5free_memory(c);
    free(data);
}

/* The filter refuses s (n bytes): 0, buffer untouched, a message on HDF5's stack. */
static void refused(const unsigned char *s, size_t n)
{
    void *buf = H5allocate_memory(n ? n : 1, 0);
    memcpy(buf, s, n);
    size_t size = n ? n : 1;
    H5Eclear2(H5E_DEFAULT);
    size_t r = h5shuf_lz4_filter(H5Z_FLAG_REVERSE, 0, NULL, n, &size, &buf);
    ASSERT_EQ_INT(r, 0);
    ASSERT_EQ_MEM(buf, s, n);
    ASSERT_GT_INT(H5Eget_num(H5E_DEFAULT), 0);
    H5Eclear2(H5E_DEFAULT);
    H5free_memory(buf);
}

static void test_corrupt(void)
{
    enum { N = 20000 };
    unsigned char *data = malloc(N), *c = malloc(h5shuf_lz4_bound(N, 4096)), *bad = malloc(h5shuf_lz4_bound(N, 4096) + 8);
    fill_compressible(data, N);
    fill_random(data + 8192, 4096, 1); /* the third block stored as it is, among compressed ones */
    size_t cn = h5shuf_lz4_encode(data, N, 4096, c, h5shuf_lz4_bound(N, 4096));
    ASSERT_GT_INT_FATAL(cn, 12);
    ASSERT_EQ_INT(parse_stream(c, cn, data, N, 4096), 1);
    /* every truncation */
    for (size_t k = 1; k < cn; k++)
        refused(c, k);
    /* the header: no decoded size, a block size of 0 */
    memcpy(bad, c, cn);
    memset(bad, 0, 8);
    refused(bad, cn);
    memcpy(bad, c, cn);
    memset(bad + 8, 0, 4);
    refused(bad, cn);
    /* a larger decoded size: the last block runs past the stream */
    memcpy(bad, c, cn);
    bad[7] ^= 0x40;
    refused(bad, cn);
    /* the first block's stored size: past the stream, and more than its block */
    memcpy(bad, c, cn);
    bad[12] = 0x7f;
    refused(bad, cn);
    memcpy(bad, c, cn);
    memset(bad + 12, 0, 4);
    bad[14] = 0x10; /* 4097: one byte more than its block */
    bad[15] = 0x01;
    refused(bad, cn);
    /* bytes after the last block are ignored, as the reference ignores them */
    memcpy(bad, c, cn);
    memset(bad + cn, 0xa5, 8);
    void *d;
    size_t ds;
    ASSERT_EQ_INT(tu_run_filter(h5shuf_lz4_filter, H5Z_FLAG_REVERSE, 0, NULL, bad, cn + 8, &d, &ds), N);
    ASSERT_EQ_MEM(d, data, N);
    H5free_memory(d);
    /* a decoded size beyond the output: E2BIG, without reading on */
    size_t got = 1;
    ASSERT_EQ_INT(h5shuf_lz4_decode(c, cn, bad, N - 1, &got), H5SHUF_LZ4_E2BIG);
    ASSERT_EQ_INT(got, 0);
    free(data);
    free(c);
    free(bad);
}

static void test_declared_limit(void)
{
    enum { N = 4000 };
    unsigned char *data = malloc(N), *c = malloc(h5shuf_lz4_bound(N, N));
    fill_compressible(data, N);
    size_t cn = h5shuf_lz4_encode(data, N, H5SHUF_LZ4_DEFAULT_BLOCK, c, h5shuf_lz4_bound(N, N));
    ASSERT_GT_INT_FATAL(cn, 0);
    H5Z_func_t f = (H5Z_func_t)h5shuf_lz4_filter;
    tu_decode_limited(f, H5SHUF_FILTER_LZ4, 0, NULL, c, cn, 1600, 1600, "lz4: chunk decodes to 4000 bytes, more than 1600");
    tu_decode_limited(f, H5SHUF_FILTER_LZ4, 0, NULL, c, cn, 8000, 8000, "lz4: chunk decodes to 4000 bytes, fewer than 8000");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZ4, 0, NULL, c, cn, N, N, NULL), N);
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZ4, 0, NULL, c, cn, 0, 0, NULL), N);
    free(data);
    free(c);
}

/* A dataset with shuffle + lz4 written and read through HDF5, as h5shuf's -c lz4+shuffle makes it. */
static void test_through_hdf5(void)
{
    char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "lz4.h5");
    enum { ROWS = 3000, COLS = 5 };
    float *x = malloc(sizeof(float) * ROWS * COLS), *y = malloc(sizeof(float) * ROWS * COLS);
    for (size_t i = 0; i < ROWS * COLS; i++)
        x[i] = (float)(i % 977) / 8.0f;
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {256, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    struct h5shuf_filters fl = {.shuffle = 1, .codec = H5SHUF_CODEC_LZ4};
    ASSERT_GE_INT(h5shuf__filters_apply(&fl, dcpl), 0);
    hid_t d = H5Dcreate2(file, "x", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(d, 0);
    ASSERT_GE_INT(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(file, "x", H5P_DEFAULT);
    hid_t p = H5Dget_create_plist(d);
    unsigned flags, cd[4];
    size_t ncd = 4;
    ASSERT_EQ_INT(H5Pget_nfilters(p), 2);
    ASSERT_EQ_INT(H5Pget_filter2(p, 1, &flags, &ncd, cd, 0, NULL, NULL), H5SHUF_FILTER_LZ4);
    ASSERT_EQ_INT(ncd, 1);
    ASSERT_EQ_INT(cd[0], 0);
    ASSERT_LT_INT(H5Dget_storage_size(d), sizeof(float) * ROWS * COLS / 2);
    ASSERT_GE_INT(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, y), 0);
    ASSERT_EQ_MEM(x, y, sizeof(float) * ROWS * COLS);
    H5Pclose(p);
    H5Dclose(d);
    H5Fclose(file);
    tu_rmtree(dir);
    free(dir);
    free(x);
    free(y);
}

int main(void)
{
    h5shuf__filters_register();
    static const struct tu_test tests[] = {
        {"round trips in one block and many, taken apart by the format", test_roundtrips},
        {"truncated and damaged streams refused", test_corrupt},
        {"a declared limit: more and fewer bytes refused", test_declared_limit},
        {"shuffle + lz4 written and read through HDF5", test_through_hdf5},
        {NULL, NULL},
    };
    return tu_main("lz4", tests);
}
