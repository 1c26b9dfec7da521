/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lzf.c - the LZF filter (id 32000) called as HDF5 calls it, and through HDF5.
 *
 * Round trips over data that compresses and data that does not (the filter then returns 0 and HDF5
 * stores the chunk with the filter skipped), a decoder whose first size guess is missing or wrong
 * (it grows the buffer), corrupt and truncated streams (0, buffer untouched, message on HDF5's stack),
 * and set_local's cd_values: h5py's [revision 4, LZF_VERSION, chunk bytes], the first two kept when
 * set, the third recomputed, later values kept.  h5py itself reads and writes these files in
 * tests/filters_h5py.sh.
 */
#include <lzf.h>
#include <stdlib.h>
#include <string.h>

#include "filters.h"
#include "filter_lzf.h"
#include "testutil.h"

static void roundtrip(const void *data, size_t n, size_t ncd, const unsigned *cd)
{
    void *c, *d;
    size_t cs, ds;
    size_t cn = tu_run_filter(h5shuf_lzf_filter, 0, ncd, cd, data, n, &c, &cs);
    ASSERT_GT_INT_FATAL(cn, 0);
    ASSERT_LE_INT_FATAL(cn, n);
    /* plain liblzf reads it, as h5py's bundled copy does */
    unsigned char *plain = malloc(n);
    ASSERT_EQ_INT(lzf_decompress(c, (unsigned)cn, plain, (unsigned)n), n);
    ASSERT_EQ_MEM(plain, data, n);
    free(plain);
    size_t dn = tu_run_filter(h5shuf_lzf_filter, H5Z_FLAG_REVERSE, ncd, cd, c, cn, &d, &ds);
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
    unsigned cd[3] = {4, LZF_VERSION, N};
    roundtrip(text, N, 3, cd);
    roundtrip(zeros, N, 3, cd);
    roundtrip(text, 1000, 3, cd); /* cd[2] larger than the chunk: fine */
    /* no size guess (a file without set_local's values, or [2] = 0): the buffer grows */
    roundtrip(zeros, N, 0, NULL);
    unsigned small[3] = {4, LZF_VERSION, 16};
    roundtrip(zeros, N, 3, small);
    roundtrip(text, 77, 3, small);
    free(text);
    free(zeros);
}

/* Data that does not compress: the filter fails (0), *buf untouched, so HDF5 skips the optional filter
 * for that chunk.  The stream must fit in nbytes, not in a larger *buf_size. */
static void test_incompressible(void)
{
    enum { N = 5000 };
    unsigned char data[N];
    tu_fill(data, N, 3);
    void *b;
    size_t bs;
    ASSERT_EQ_INT(tu_run_filter(h5shuf_lzf_filter, 0, 0, NULL, data, N, &b, &bs), 0);
    ASSERT_EQ_MEM(b, data, N);
    H5free_memory(b);
    unsigned char out[N];
    ASSERT_EQ_INT(h5shuf_lzf_encode(data, N, out, N), 0);
    ASSERT_EQ_INT(h5shuf_lzf_encode(data, N, out, N), 0);
    ASSERT_GT_INT(h5shuf_lzf_encode("aaaaaaaaaaaaaaaaaaaa", 20, out, 20), 0);
    ASSERT_EQ_INT(h5shuf_lzf_encode(data, 0, out, N), 0);
}

static void test_corrupt(void)
{
    enum { N = 100000 };
    unsigned char *data = malloc(N), *bad = malloc(N);
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i % 251 < 100 ? 0 : i % 7);
    void *c;
    size_t cs;
    size_t cn = tu_run_filter(h5shuf_lzf_filter, 0, 0, NULL, data, N, &c, &cs);
    ASSERT_GT_INT_FATAL(cn, 16);
    struct {
        const char *name;
        size_t len;
        int corrupt; /* 1: must fail; 2: fail or decode short (LZF has no end marker: a stream cut between
                      * two runs is a valid shorter one; chunkio checks the size); 0: may decode (no
                      * checksum either), but never past the buffer */
    } cases[] = {{"truncated", cn / 2, 2}, {"one byte", 1, 1}, {"back reference before the start", 3, 1},
                 {"flipped control byte", cn, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t len = cases[k].len;
        memcpy(bad, c, len);
        if (k == 2) { /* a literal of one byte, then a back reference of length 3 at distance 200 */
            bad[0] = 0;
            bad[1] = 'x';
            bad[2] = (1 << 5) | 0;
            len = 4;
            bad[3] = 200;
        }
        if (k == 3)
            bad[0] ^= 0xe0;
        unsigned cd[3] = {4, LZF_VERSION, N};
        H5Eclear2(H5E_DEFAULT);
        void *d;
        size_t ds;
        size_t dn = tu_run_filter(h5shuf_lzf_filter, H5Z_FLAG_REVERSE, 3, cd, bad, len, &d, &ds);
        if (cases[k].corrupt == 1)
            ASSERT_EQ_INT(dn, 0);
        if (cases[k].corrupt == 2)
            ASSERT_LT_INT(dn, N);
        ASSERT_LE_INT(dn, ds);
        if (dn == 0) {
            ASSERT_EQ_MEM(d, bad, len);
            ASSERT_GT_INT(H5Eget_num(H5E_DEFAULT), 0);
        }
        H5free_memory(d);
    }
    /* the pure decoder: E2BIG when the output does not fit, ECORRUPT for garbage */
    size_t got;
    ASSERT_EQ_INT(h5shuf_lzf_decode(c, cn, bad, N - 1, &got), H5SHUF_LZF_E2BIG);
    ASSERT_EQ_INT(h5shuf_lzf_decode(c, cn, bad, N, &got), H5SHUF_LZF_OK);
    ASSERT_EQ_INT(got, N);
    ASSERT_EQ_INT(h5shuf_lzf_decode(c, 0, bad, N, &got), H5SHUF_LZF_ECORRUPT);
    H5Eclear2(H5E_DEFAULT);
    H5free_memory(c);
    free(data);
    free(bad);
}

/* Filter parameters as stored for a dataset of dcpl's chunk shape and type. */
static void stored_cd(hid_t d, size_t *n, unsigned *cd)
{
    hid_t dcpl = H5Dget_create_plist(d);
    unsigned flags;
    *n = 8;
    ASSERT_GE_INT(H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_LZF, &flags, n, cd, 0, NULL, NULL), 0);
    CU_ASSERT(flags & H5Z_FLAG_OPTIONAL);
    H5Pclose(dcpl);
}

static void test_set_local_and_hdf5(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "lzf.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {1000, 6}, cdims[2] = {100, 6};
    hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cdims);
    H5Pset_filter(dcpl, H5SHUF_FILTER_LZF, H5Z_FLAG_OPTIONAL, 0, NULL); /* h5py's spelling */
    hid_t d = H5Dcreate2(f, "a", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(d, 0);
    size_t n;
    unsigned cd[8];
    stored_cd(d, &n, cd);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(cd[0], 4);
    ASSERT_EQ_INT(cd[1], LZF_VERSION);
    ASSERT_EQ_INT(cd[2], 100 * 6 * 4);

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

    /* a property list copied from the dataset (h5shuf's -c keep, h5repack): values kept, the chunk size
     * recomputed for the new chunk shape; values past [2] kept */
    hid_t copy = H5Dget_create_plist(d);
    hsize_t cdims2[2] = {10, 6};
    H5Pset_chunk(copy, 2, cdims2);
    hid_t d2 = H5Dcreate2(f, "b", H5T_STD_I32LE, space, H5P_DEFAULT, copy, H5P_DEFAULT);
    stored_cd(d2, &n, cd);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(cd[0], 4);
    ASSERT_EQ_INT(cd[1], LZF_VERSION);
    ASSERT_EQ_INT(cd[2], 10 * 6 * 4);
    unsigned mine[4] = {9, 77, 1, 42};
    H5Pmodify_filter(copy, H5SHUF_FILTER_LZF, H5Z_FLAG_OPTIONAL, 4, mine);
    hid_t d3 = H5Dcreate2(f, "c", H5T_STD_I16LE, space, H5P_DEFAULT, copy, H5P_DEFAULT);
    stored_cd(d3, &n, cd);
    ASSERT_EQ_INT(n, 4);
    ASSERT_EQ_INT(cd[0], 9);
    ASSERT_EQ_INT(cd[1], 77);
    ASSERT_EQ_INT(cd[2], 10 * 6 * 2);
    ASSERT_EQ_INT(cd[3], 42);
    H5Dclose(d);
    H5Dclose(d2);
    H5Dclose(d3);
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
 * is refused without growing the buffer past it, one that decodes to fewer (a stream cut between runs)
 * too; the exact size reads; with nothing declared the decoder grows its buffer as h5py's does. */
static void test_declared_limit(void)
{
    enum { N = 4000, BIG = 1 << 20 };
    unsigned char *data = malloc(BIG), *c = malloc(BIG);
    for (size_t i = 0; i < BIG; i++)
        data[i] = (unsigned char)(i / 7 % 13);
    size_t cn = h5shuf_lzf_encode(data, N, c, N);
    ASSERT_GT_INT_FATAL(cn, 0);
    const unsigned cd[3] = {4, 0x0105, 1600};
    H5Z_func_t f = (H5Z_func_t)h5shuf_lzf_filter;
    tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, 1600, 1600,
                      "lzf: chunk decodes to more than 1600 bytes, the chunk's size (corrupt chunk)");
    tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, 8000, 8000,
                      "lzf: chunk decodes to 4000 bytes, not the chunk's 8000");
    tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, 4001, 9000,
                      "decodes to 4000 bytes, fewer than the chunk's 4001");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, N, N, NULL), N);
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, 0, 0, NULL), N); /* cd[2] only a guess */
    /* 1 MiB of zeros in a stream of 12 KiB: the bomb lzf can make, refused at the chunk's size */
    memset(data, 0, BIG);
    cn = h5shuf_lzf_encode(data, BIG, c, BIG);
    ASSERT_GT_INT_FATAL(cn, 0);
    ASSERT_LT_INT_FATAL(cn, BIG / 16);
    tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, 1600, 1600, "more than 1600 bytes");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_LZF, 3, cd, c, cn, 0, 0, NULL), BIG);
    free(data);
    free(c);
}

int main(void)
{
    h5shuf__filters_register();
    static const struct tu_test tests[] = {
        {"round trips, readable by plain liblzf; decoder buffer grows", test_roundtrips},
        {"incompressible chunks: 0, buffer untouched", test_incompressible},
        {"corrupt and truncated input fail cleanly", test_corrupt},
        {"a declared limit: more and fewer bytes refused", test_declared_limit},
        {"set_local's cd_values; optional filter skipped per chunk through HDF5", test_set_local_and_hdf5},
        {NULL, NULL},
    };
    return tu_main("lzf", tests);
}
