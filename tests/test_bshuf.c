/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bshuf.c - the bitshuffle filter (id 32008): its transform against a bit-by-bit model written from
 * the format's definition, its streams against liblz4 and libzstd called directly, round trips for
 * element sizes 1, 2, 4, 8, 16 and odd ones (3, 5, 7, 12, 17), element counts that are not a multiple
 * of 8 or of the block size, every compression mode; malformed streams (sizes that do not add up, bad
 * blocks, truncation) rejected without reading or writing out of bounds; set_local's cd_values, and a
 * property list copied from a dataset not shifted twice.  The reference implementation (Debian's
 * bitshuffle 0.3.5 plugin) reads and writes these files in tests/filters_h5py.sh.
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "filter_bshuf.h"
#include "filters.h"
#include "testutil.h"

/* The transform by its definition: in a block of m elements, bit b of byte j of element i goes to bit
 * i % 8 of byte i / 8 of row 8j + b (rows of m / 8 bytes). */
static void model_block(const unsigned char *in, unsigned char *out, size_t m, size_t es)
{
    memset(out, 0, m * es);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < es; j++)
            for (unsigned b = 0; b < 8; b++)
                if (in[i * es + j] >> b & 1)
                    out[(8 * j + b) * (m / 8) + i / 8] |= (unsigned char)(1u << (i % 8));
}

/* The uncompressed stream by the model: blocks of bs, one last block rounded down to 8, the rest as is. */
static void model(const unsigned char *in, unsigned char *out, size_t size, size_t es, size_t bs)
{
    size_t done = 0;
    while (size - done >= bs) {
        model_block(in + done * es, out + done * es, bs, es);
        done += bs;
    }
    size_t last = (size - done) / 8 * 8;
    model_block(in + done * es, out + done * es, last, es);
    done += last;
    memcpy(out + done * es, in + done * es, (size - done) * es);
}

static struct h5shuf_bshuf_params params(size_t es, size_t bs, int compression)
{
    unsigned cd[6] = {0, 4, (unsigned)es, (unsigned)bs, (unsigned)compression, 3};
    struct h5shuf_bshuf_params p;
    ASSERT_EQ_INT_FATAL(h5shuf_bshuf_params_from_cd(6, cd, &p), H5SHUF_BSHUF_OK);
    return p;
}

/* A known answer from the definition: the bytes 0..7 give rows 0xAA, 0xCC, 0xF0, then zeros. */
static void test_known_answer(void)
{
    unsigned char in[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[8], want[8] = {0xaa, 0xcc, 0xf0, 0, 0, 0, 0, 0};
    struct h5shuf_bshuf_params p = params(1, 0, 0);
    size_t n;
    ASSERT_EQ_INT(h5shuf_bshuf_encode(&p, in, 8, out, 8, &n), H5SHUF_BSHUF_OK);
    ASSERT_EQ_INT(n, 8);
    ASSERT_EQ_MEM(out, want, 8);
    ASSERT_EQ_INT(h5shuf_bshuf_default_block_size(1), 8192);
    ASSERT_EQ_INT(h5shuf_bshuf_default_block_size(3), 2728);
    ASSERT_EQ_INT(h5shuf_bshuf_default_block_size(4), 2048);
    ASSERT_EQ_INT(h5shuf_bshuf_default_block_size(100), 128);
    ASSERT_EQ_INT(h5shuf_bshuf_default_block_size(8192), 128);
}

/* The transform equals the model, and every mode round-trips, over sizes, counts and block sizes. */
static void test_model_and_roundtrips(void)
{
    static const size_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17};
    static const size_t counts[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4099, 20000};
    static const size_t blocks[] = {0, 8, 16, 264};
    enum { MAXB = 20000 * 17 };
    unsigned char *in = malloc(MAXB), *want = malloc(MAXB), *dec = malloc(MAXB);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
                size_t es = sizes[s], count = counts[c], bytes = es * count;
                /* smooth values with noise in the low bits: what bitshuffle is for */
                for (size_t i = 0; i < bytes; i++)
                    in[i] = (unsigned char)((i / es) * 3 / 7 + (i % es) * 31) ^ (unsigned char)(i * 2654435761u >> 29);
                struct h5shuf_bshuf_params p0 = params(es, blocks[b], 0);
                model(in, want, count, es, p0.block_size);
                for (int mode = 0; mode <= 3; mode++) {
                    if (mode == 1)
                        continue;
                    struct h5shuf_bshuf_params p = params(es, blocks[b], mode);
                    size_t bound = h5shuf_bshuf_bound(&p, bytes), n = 0, m = 0;
                    unsigned char *enc = malloc(bound + 1);
                    CU_ASSERT_FATAL(enc && (bound > 0 || bytes == 0));
                    int st = h5shuf_bshuf_encode(&p, in, bytes, enc, bound, &n);
                    ASSERT_EQ_INT_FATAL(st, H5SHUF_BSHUF_OK);
                    ASSERT_LE_INT_FATAL(n, bound);
                    if (mode == 0) {
                        ASSERT_EQ_INT(n, bytes);
                        if (n == bytes)
                            ASSERT_EQ_MEM(enc, want, bytes);
                    }
                    size_t size;
                    ASSERT_EQ_INT(h5shuf_bshuf_decoded_size(&p, enc, n, &size), H5SHUF_BSHUF_OK);
                    ASSERT_EQ_INT(size, bytes);
                    st = h5shuf_bshuf_decode(&p, enc, n, dec, bytes, &m);
                    ASSERT_EQ_INT(st, H5SHUF_BSHUF_OK);
                    ASSERT_EQ_INT(m, bytes);
                    ASSERT_EQ_MEM(dec, in, bytes);
                    if (bytes) /* one byte less room: E2BIG, never an overflow */
                        ASSERT_EQ_INT(h5shuf_bshuf_decode(&p, enc, n, dec, bytes - 1, &m), H5SHUF_BSHUF_E2BIG);
                    if (mode && bytes) /* the bound is needed: one byte less may not do, and is refused cleanly */
                        ASSERT_EQ_INT(h5shuf_bshuf_encode(&p, in, bytes, enc, n - 1, &m), H5SHUF_BSHUF_E2BIG);
                    free(enc);
                }
            }
    free(in);
    free(want);
    free(dec);
}

/* The compressed stream, taken apart with liblz4 / libzstd and the model: header, block sizes, blocks,
 * trailing elements. */
static void test_stream_layout(void)
{
    enum { ES = 4, COUNT = 2048 * 3 + 96 + 5 }; /* 3 full blocks, a last one of 96, 5 trailing elements */
    unsigned char *in = malloc(COUNT * ES), *want = malloc(COUNT * ES), *enc = malloc(2 * COUNT * ES + 4096);
    unsigned char *blk = malloc(2048 * ES);
    for (size_t i = 0; i < COUNT; i++) {
        uint32_t v = (uint32_t)(i * 37 / 5);
        memcpy(in + i * ES, &v, ES);
    }
    for (int mode = 2; mode <= 3; mode++) {
        struct h5shuf_bshuf_params p = params(ES, 0, mode);
        size_t n;
        ASSERT_EQ_INT_FATAL(h5shuf_bshuf_encode(&p, in, COUNT * ES, enc, h5shuf_bshuf_bound(&p, COUNT * ES), &n), 0);
        uint64_t total = 0;
        for (int k = 0; k < 8; k++)
            total = total << 8 | enc[k];
        uint32_t block = (uint32_t)enc[8] << 24 | (uint32_t)enc[9] << 16 | (uint32_t)enc[10] << 8 | enc[11];
        ASSERT_EQ_INT(total, COUNT * ES);
        ASSERT_EQ_INT(block, 2048 * ES);
        size_t pos = 12, done = 0;
        for (int k = 0; k < 4; k++) {
            size_t m = k < 3 ? 2048 : 96;
            uint32_t c = (uint32_t)enc[pos] << 24 | (uint32_t)enc[pos + 1] << 16 | (uint32_t)enc[pos + 2] << 8 | enc[pos + 3];
            pos += 4;
            size_t got = mode == 2 ? (size_t)LZ4_decompress_safe((char *)enc + pos, (char *)blk, (int)c, (int)(m * ES))
                                   : ZSTD_decompress(blk, m * ES, enc + pos, c);
            ASSERT_EQ_INT(got, m * ES);
            model_block(in + done * ES, want, m, ES);
            ASSERT_EQ_MEM(blk, want, m * ES);
            pos += c;
            done += m;
        }
        ASSERT_EQ_INT(done, COUNT - 5);
        ASSERT_EQ_INT(pos + 5 * ES, n);
        if (pos + 5 * ES == n)
            ASSERT_EQ_MEM(enc + pos, in + done * ES, 5 * ES);
    }
    free(in);
    free(want);
    free(enc);
    free(blk);
}

/* Every truncation, and every byte of the header and of a block size changed, is rejected or decodes to
 * a stream of the right size: never an overflow (ASan watches), never an unbounded allocation. */
static void test_malformed(void)
{
    enum { ES = 2, COUNT = 3000 };
    unsigned char *in = malloc(COUNT * ES), *enc = malloc(4 * COUNT * ES), *bad = malloc(4 * COUNT * ES),
                  *dec = malloc(COUNT * ES);
    for (size_t i = 0; i < COUNT * ES; i++)
        in[i] = (unsigned char)(i / 64);
    struct h5shuf_bshuf_params p = params(ES, 512, H5SHUF_BSHUF_LZ4);
    size_t n, m, size;
    ASSERT_EQ_INT_FATAL(h5shuf_bshuf_encode(&p, in, COUNT * ES, enc, h5shuf_bshuf_bound(&p, COUNT * ES), &n), 0);
    for (size_t len = 0; len < n; len += (len < 40 ? 1 : 37)) {
        ASSERT_EQ_INT(h5shuf_bshuf_decoded_size(&p, enc, len, &size), H5SHUF_BSHUF_ECORRUPT);
        ASSERT_EQ_INT(h5shuf_bshuf_decode(&p, enc, len, dec, COUNT * ES, &m), H5SHUF_BSHUF_ECORRUPT);
    }
    memcpy(bad, enc, n);
    bad[n] = 0; /* one byte too many */
    ASSERT_EQ_INT(h5shuf_bshuf_decode(&p, bad, n + 1, dec, COUNT * ES, &m), H5SHUF_BSHUF_ECORRUPT);
    for (size_t k = 0; k < 16; k++) /* header and the first block's size */
        for (unsigned x = 1; x < 256; x <<= 1) {
            memcpy(bad, enc, n);
            bad[k] ^= (unsigned char)x;
            int st = h5shuf_bshuf_decode(&p, bad, n, dec, COUNT * ES, &m);
            CU_ASSERT(st == H5SHUF_BSHUF_ECORRUPT || st == H5SHUF_BSHUF_E2BIG);
        }
    /* a tiny stream claiming 4 GiB in one block of 1 GiB: refused before anything is allocated */
    unsigned char liar[20] = {0, 0, 0, 1, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4};
    struct h5shuf_bshuf_params p1 = params(1, 0, H5SHUF_BSHUF_LZ4);
    ASSERT_EQ_INT(h5shuf_bshuf_decoded_size(&p1, liar, sizeof liar, &size), H5SHUF_BSHUF_ECORRUPT);
    /* a block that is not LZ4 */
    memcpy(bad, enc, n);
    memset(bad + 16, 0xff, 8);
    ASSERT_EQ_INT(h5shuf_bshuf_decode(&p, bad, n, dec, COUNT * ES, &m), H5SHUF_BSHUF_ECORRUPT);
    /* uncompressed mode: a chunk that is not a whole number of elements */
    struct h5shuf_bshuf_params p0 = params(ES, 0, 0);
    ASSERT_EQ_INT(h5shuf_bshuf_decode(&p0, in, 7, dec, COUNT * ES, &m), H5SHUF_BSHUF_ECORRUPT);
    ASSERT_EQ_INT(h5shuf_bshuf_encode(&p0, in, 7, dec, COUNT * ES, &m), H5SHUF_BSHUF_EPARAM);
    /* parameters */
    struct h5shuf_bshuf_params q;
    unsigned cd_bad_block[5] = {0, 4, 4, 12, 2}, cd_bad_comp[5] = {0, 4, 4, 0, 1}, cd_zero[3] = {0, 4, 0};
    ASSERT_EQ_INT(h5shuf_bshuf_params_from_cd(5, cd_bad_block, &q), H5SHUF_BSHUF_EPARAM);
    ASSERT_EQ_INT(h5shuf_bshuf_params_from_cd(5, cd_bad_comp, &q), H5SHUF_BSHUF_EPARAM);
    ASSERT_EQ_INT(h5shuf_bshuf_params_from_cd(3, cd_zero, &q), H5SHUF_BSHUF_EPARAM);
    ASSERT_EQ_INT(h5shuf_bshuf_params_from_cd(2, cd_zero, &q), H5SHUF_BSHUF_EPARAM);

    /* the HDF5 filter function: 0, buffer untouched, a message on the stack */
    unsigned cd[5] = {0, 4, ES, 512, 2};
    void *buf = H5allocate_memory(n, 0);
    memcpy(buf, enc, n / 2);
    size_t bs = n;
    H5Eclear2(H5E_DEFAULT);
    ASSERT_EQ_INT(h5shuf_bshuf_filter(H5Z_FLAG_REVERSE, 5, cd, n / 2, &bs, &buf), 0);
    ASSERT_EQ_INT(bs, n);
    ASSERT_EQ_MEM(buf, enc, n / 2);
    ASSERT_GT_INT(H5Eget_num(H5E_DEFAULT), 0);
    H5Eclear2(H5E_DEFAULT);
    memcpy(buf, enc, n);
    ASSERT_EQ_INT(h5shuf_bshuf_filter(H5Z_FLAG_REVERSE, 5, cd, n, &bs, &buf), COUNT * ES);
    ASSERT_GE_INT(bs, COUNT * ES);
    if (bs >= COUNT * ES)
        ASSERT_EQ_MEM(buf, in, COUNT * ES);
    ASSERT_EQ_INT(h5shuf_bshuf_filter(0, 2, cd, COUNT * ES, &bs, &buf), 0); /* too few parameters */
    H5Eclear2(H5E_DEFAULT);
    H5free_memory(buf);
    free(in);
    free(enc);
    free(bad);
    free(dec);
}

static void stored_cd(hid_t d, size_t *n, unsigned *cd)
{
    hid_t dcpl = H5Dget_create_plist(d);
    unsigned flags;
    *n = 8;
    ASSERT_GE_INT(H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_BSHUF, &flags, n, cd, 0, NULL, NULL), 0);
    H5Pclose(dcpl);
}

static hid_t create(hid_t f, const char *name, hid_t type, size_t nuser, const unsigned *user)
{
    hsize_t dims[1] = {1000}, cdims[1] = {300};
    hid_t space = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, cdims);
    H5Pset_filter(dcpl, H5SHUF_FILTER_BSHUF, H5Z_FLAG_OPTIONAL, nuser, user);
    hid_t d;
    H5E_BEGIN_TRY
    {
        d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    }
    H5E_END_TRY;
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

static void test_set_local_and_hdf5(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "bshuf.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    size_t n;
    unsigned cd[8];
    unsigned lz4[2] = {0, 2}, zstd[3] = {64, 3, 5}, bad_block[2] = {12, 2}, bad_comp[2] = {0, 7};
    hid_t d = create(f, "lz4", H5T_STD_I32LE, 2, lz4);
    ASSERT_GE_INT_FATAL(d, 0);
    stored_cd(d, &n, cd);
    ASSERT_EQ_INT(n, 5);
    ASSERT_EQ_INT(cd[0], 0);
    ASSERT_EQ_INT(cd[1], 4);
    ASSERT_EQ_INT(cd[2], 4);
    ASSERT_EQ_INT(cd[3], 0);
    ASSERT_EQ_INT(cd[4], 2);
    hid_t z = create(f, "zstd", H5T_IEEE_F64LE, 3, zstd);
    stored_cd(z, &n, cd);
    ASSERT_EQ_INT(n, 6);
    ASSERT_EQ_INT(cd[2], 8);
    ASSERT_EQ_INT(cd[3], 64);
    ASSERT_EQ_INT(cd[4], 3);
    ASSERT_EQ_INT(cd[5], 5);
    hid_t none = create(f, "none", H5T_STD_U8LE, 0, NULL);
    stored_cd(none, &n, cd);
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_INT(cd[0], 0);
    ASSERT_EQ_INT(cd[1], 4);
    ASSERT_EQ_INT(cd[2], 1);
    ASSERT_LT_INT(create(f, "bad block", H5T_STD_I32LE, 2, bad_block), 0);
    ASSERT_LT_INT(create(f, "bad compression", H5T_STD_I32LE, 2, bad_comp), 0);

    /* a copied property list keeps its values (bitshuffle's own set_local would shift them again) */
    hid_t copy = H5Dget_create_plist(d);
    hsize_t dims[1] = {1000};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t d2 = H5Dcreate2(f, "copy", H5T_STD_I32LE, space, H5P_DEFAULT, copy, H5P_DEFAULT);
    stored_cd(d2, &n, cd);
    ASSERT_EQ_INT(n, 5);
    ASSERT_EQ_INT(cd[0], 0);
    ASSERT_EQ_INT(cd[1], 4);
    ASSERT_EQ_INT(cd[2], 4);
    ASSERT_EQ_INT(cd[3], 0);
    ASSERT_EQ_INT(cd[4], 2);
    unsigned v03[5] = {0, 3, 4, 0, 2}; /* as Debian's bitshuffle 0.3.5 writes them */
    H5Pmodify_filter(copy, H5SHUF_FILTER_BSHUF, H5Z_FLAG_OPTIONAL, 5, v03);
    hid_t d3 = H5Dcreate2(f, "copy 0.3", H5T_STD_I32LE, space, H5P_DEFAULT, copy, H5P_DEFAULT);
    stored_cd(d3, &n, cd);
    ASSERT_EQ_INT(n, 5);
    ASSERT_EQ_INT(cd[1], 3);
    ASSERT_EQ_INT(cd[2], 4);
    ASSERT_EQ_INT(cd[4], 2);

    /* through HDF5: write and read back; the stored chunk has the LZ4 header */
    int32_t x[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = i * 3 - 500;
    ASSERT_GE_INT(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    ASSERT_GE_INT(H5Dwrite(z, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    H5Dclose(d);
    d = H5Dopen2(f, "lz4", H5P_DEFAULT);
    ASSERT_GE_INT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
    ASSERT_EQ_MEM(x, back, sizeof x);
    ASSERT_GE_INT(H5Dread(z, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
    ASSERT_EQ_MEM(x, back, sizeof x);
    hsize_t off[1] = {0}, size = 0;
    unsigned char raw[2000];
    uint32_t mask;
    ASSERT_GE_INT(H5Dget_chunk_storage_size(d, off, &size), 0);
    ASSERT_GT_INT(size, 12);
    ASSERT_LT_INT(size, sizeof raw);
    ASSERT_GE_INT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, raw), 0);
    ASSERT_EQ_INT(raw[0], 0);
    ASSERT_EQ_INT(raw[6], (300 * 4) >> 8);
    ASSERT_EQ_INT(raw[7], (300 * 4 & 0xff)); /* 1200 bytes */
    ASSERT_EQ_INT(raw[10], (2048 * 4) >> 8);
    ASSERT_EQ_INT(raw[11], 0);                         /* default block */
    H5Dclose(d);
    H5Dclose(z);
    H5Dclose(none);
    H5Dclose(d2);
    H5Dclose(d3);
    H5Sclose(space);
    H5Pclose(copy);
    H5Fclose(f);
    tu_rmtree(dir);
    free(dir);
}

/* With the chunk's size declared (h5shuf reading: filters/filter_limit.h), a stream whose header says
 * more, or fewer, bytes is refused before anything is allocated; the exact size reads.  Without
 * compression the chunk keeps its size, which must be the chunk's too. */
static void test_declared_limit(void)
{
    enum { N = 4000, BIG = 1 << 20 };
    unsigned char *data = malloc(BIG), *c = malloc(2 * BIG);
    for (size_t i = 0; i < BIG; i++)
        data[i] = (unsigned char)(i / 7 % 13);
    const unsigned cd[6] = {0, 4, 4, 0, 2, 0}; /* int32, default blocks, LZ4 */
    struct h5shuf_bshuf_params p = params(4, 0, 2);
    size_t cn = 0;
    ASSERT_EQ_INT_FATAL(h5shuf_bshuf_encode(&p, data, N, c, 2 * BIG, &cn), H5SHUF_BSHUF_OK);
    H5Z_func_t f = (H5Z_func_t)h5shuf_bshuf_filter;
    tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 6, cd, c, cn, 1600, 1600,
                      "bitshuffle: chunk claims 4000 bytes, more than 1600, the chunk's size (corrupt chunk)");
    tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 6, cd, c, cn, 8000, 8000,
                      "bitshuffle: chunk holds 4000 bytes, not the chunk's 8000");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 6, cd, c, cn, N, N, NULL), N);
    ASSERT_EQ_INT_FATAL(h5shuf_bshuf_encode(&p, data, BIG, c, 2 * BIG, &cn), H5SHUF_BSHUF_OK);
    tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 6, cd, c, cn, 1600, 1600, "claims 1048576 bytes, more than 1600");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 6, cd, c, cn, 0, 0, NULL), BIG);
    const unsigned none[5] = {0, 4, 4, 0, 0}; /* no compression: the stored size is the decoded one */
    tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 5, none, data, N, 8000, 8000, "holds 4000 bytes, not the chunk's 8000");
    ASSERT_EQ_INT(tu_decode_limited(f, H5SHUF_FILTER_BSHUF, 5, none, data, N, N, N, NULL), N);
    free(data);
    free(c);
}

int main(void)
{
    h5shuf__filters_register();
    static const struct tu_test tests[] = {
        {"known answer and default block sizes", test_known_answer},
        {"transform equals the model; round trips over sizes, counts, blocks, modes", test_model_and_roundtrips},
        {"LZ4 and zstd streams: header, blocks, trailing elements", test_stream_layout},
        {"malformed streams and parameters rejected", test_malformed},
        {"a declared limit: more and fewer bytes refused", test_declared_limit},
        {"set_local (copied property lists kept) and HDF5 round trip", test_set_local_and_hdf5},
        {NULL, NULL},
    };
    return tu_main("bshuf", tests);
}
