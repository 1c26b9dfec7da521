/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_filter_paths.c - lzf (32000), lzo (305) and bitshuffle (32008) on chunkio's threaded path: the
 * chunks the pool encodes are byte for byte the ones HDF5 stores through the registered filters (with the
 * same filter mask: an lzf or lzo chunk that does not shrink is stored with the filter skipped), what the
 * pool decodes equals H5Dread's, for partial last chunks and unaligned row ranges; bitshuffle with blocks
 * too small for the stage buffers, and lzo after another codec, fall back to HDF5; a corrupt chunk is a
 * clean error; and a whole shuffle of such inputs is byte-identical for every thread count and in the
 * contract's order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "filter_bshuf.h"
#include "filters.h"
#include "filter_lzf.h"
#include "filter_lzo.h"
#include "filter_zstd.h"
#include "chunkio.h"
#include "h5err.h"
#include "codec.h"
#include "rows.h"
#include "testutil.h"

#define ROWS 1000u /* not a multiple of CHUNK_ROWS: the last chunk is partial */
#define COLS 12u
#define CHUNK_ROWS 64u

/* Pipelines under test: lzf (optional, as h5py sets it), lzo (optional, PyTables' cd_values) or
 * bitshuffle (cd 3..5), with shuffle before and fletcher32 after when asked. */
struct pipe {
    const char *name;
    int lzf, bshuf, shuffle, fletcher32;
    unsigned block, compression;
    int lzo;
};
static const struct pipe pipes[] = {
    {"lzf", 1, 0, 0, 0, 0, 0, 0},
    {"shuffle+lzf+fletcher32", 1, 0, 1, 1, 0, 0, 0},
    {"bitshuffle", 0, 1, 0, 0, 0, 0, 0},
    {"bitshuffle:lz4", 0, 1, 0, 0, 0, 2, 0},
    {"bitshuffle:lz4 block 64", 0, 1, 0, 0, 64, 2, 0},
    {"bitshuffle:zstd+fletcher32", 0, 1, 0, 1, 0, 3, 0},
#ifdef H5SHUF_HAVE_LZO /* (-DH5SHUF_LZO=OFF: no LZO cases in this file) */
    {"lzo", 0, 0, 0, 0, 0, 0, 1},
    {"shuffle+lzo+fletcher32", 0, 0, 1, 1, 0, 0, 1},
#endif
};

/* A dataset of ROWS x COLS int32 in chunks of CHUNK_ROWS rows with filter id alone (cd_values ncd, cd). */
static hid_t make_filtered(hid_t file, const char *name, H5Z_filter_t id, size_t ncd, const unsigned *cd)
{
    hsize_t dims[2] = {ROWS, COLS}, cdims[2] = {CHUNK_ROWS, COLS};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(2, dims, NULL);
    H5Pset_chunk(dcpl, 2, cdims);
    H5Pset_filter(dcpl, id, H5Z_FLAG_MANDATORY, ncd, cd);
    hid_t d = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(space);
    H5Pclose(dcpl);
    return d;
}

/* Rows of int32: the first half smooth (compresses), the second half random (lzf cannot shrink it). */
static int32_t *values(void)
{
    int32_t *x = malloc(ROWS * COLS * sizeof *x);
    uint64_t st = 7;
    for (unsigned i = 0; i < ROWS * COLS; i++)
        x[i] = i < ROWS * COLS / 2 ? (int32_t)(i / 5 % 300) : (int32_t)tu_splitmix64(&st);
    return x;
}

static hid_t make_dset(hid_t file, const char *name, const struct pipe *p, hsize_t rows)
{
    hsize_t dims[2] = {rows, COLS}, maxdims[2] = {H5S_UNLIMITED, COLS}, cdims[2] = {CHUNK_ROWS, COLS};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cdims);
    if (p->shuffle)
        H5Pset_shuffle(dcpl);
    if (p->lzf)
        H5Pset_filter(dcpl, H5SHUF_FILTER_LZF, H5Z_FLAG_OPTIONAL, 0, NULL);
    if (p->lzo) {
        const unsigned cd[3] = {5, 11, 4}; /* PyTables' CArray: level 5, VERSION 1.1, CArray */
        H5Pset_filter(dcpl, H5SHUF_FILTER_LZO, H5Z_FLAG_OPTIONAL, 3, cd);
    }
    if (p->bshuf) {
        unsigned cd[3] = {p->block, p->compression, 1};
        H5Pset_filter(dcpl, H5SHUF_FILTER_BSHUF, H5Z_FLAG_OPTIONAL, p->compression == 3 ? 3 : 2, cd);
    }
    if (p->fletcher32)
        H5Pset_fletcher32(dcpl);
    hid_t space = H5Screate_simple(2, dims, maxdims);
    hid_t d = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(space);
    H5Pclose(dcpl);
    return d;
}

static void test_encodings_match_hdf5(void)
{
    char *dir = tu_mkdtemp();
    int32_t *x = values(), *back = malloc(ROWS * COLS * sizeof *back);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(3, &cio), H5SHUF_OK);
    hid_t f = H5Fcreate(tu_path(dir, "enc.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    for (size_t i = 0; i < sizeof pipes / sizeof *pipes; i++) {
        const struct pipe *p = &pipes[i];
        char a[64], b[64];
        snprintf(a, sizeof a, "hdf5-%zu", i);
        snprintf(b, sizeof b, "ours-%zu", i);
        hid_t dh = make_dset(f, a, p, ROWS), dour = make_dset(f, b, p, 0);
        ASSERT_GE_INT_FATAL(dh, 0);
        ASSERT_GE_INT_FATAL(dour, 0);
        ASSERT_GE_INT(H5Dwrite(dh, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
        struct h5shuf_pipeline pl;
        ASSERT_EQ_INT(h5shuf__pipeline_probe(dour, H5T_STD_I32LE, &pl), 0);
        CU_ASSERT(pl.direct);
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_STD_I32LE, 0, 5 * CHUNK_ROWS, x, 1), 0);
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_STD_I32LE, 5 * CHUNK_ROWS, ROWS - 5 * CHUNK_ROWS,
                                            x + 5 * CHUNK_ROWS * COLS, 1), 0);
        memset(back, 0, ROWS * COLS * sizeof *back);
        ASSERT_GE_INT(H5Dread(dour, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
        ASSERT_EQ_MEM(back, x, ROWS * COLS * sizeof *x);
        int same = 1, skipped = 0;
        for (uint64_t c = 0; c * CHUNK_ROWS < ROWS; c++) {
            hsize_t nh = 0, no = 0;
            uint32_t mh = 99, mo = 98;
            hsize_t row = (hsize_t)c * CHUNK_ROWS;
            unsigned char *rh = tu_raw_chunk(dh, row, &nh, &mh), *ro = tu_raw_chunk(dour, row, &no, &mo);
            CU_ASSERT(rh && ro);
            same = same && rh && ro && mh == mo && nh == no && memcmp(rh, ro, nh) == 0;
            skipped += mo != 0;
            free(rh);
            free(ro);
        }
        if (!same)
            fprintf(stderr, "pipeline %s: chunks differ from HDF5's\n", p->name);
        CU_ASSERT(same);
        if (p->lzf || p->lzo) /* the random half does not shrink */
            ASSERT_GT_INT(skipped, 0);
        else
            ASSERT_EQ_INT(skipped, 0);
        H5Dclose(dh);
        H5Dclose(dour);
    }
    H5Fclose(f);
    h5shuf__chunkio_free(cio);
    free(back);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

static void test_decode_matches_hdf5(void)
{
    char *dir = tu_mkdtemp();
    int32_t *x = values(), *want = malloc(ROWS * COLS * sizeof *want), *got = malloc(ROWS * COLS * sizeof *got);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    hid_t f = H5Fcreate(tu_path(dir, "dec.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    static const uint64_t ranges[][2] = {{0, ROWS}, {5, 1}, {63, 2}, {100, 517}, {960, 40}, {999, 1}};
    for (size_t i = 0; i < sizeof pipes / sizeof *pipes; i++) {
        hid_t d = make_dset(f, pipes[i].name, &pipes[i], ROWS);
        ASSERT_GE_INT_FATAL(d, 0);
        ASSERT_GE_INT(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
        H5Dclose(d);
        d = H5Dopen2(f, pipes[i].name, H5P_DEFAULT);
        ASSERT_GE_INT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
        ASSERT_EQ_MEM(want, x, ROWS * COLS * sizeof *x);
        for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
            memset(got, 0xff, ROWS * COLS * sizeof *got);
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, d, H5T_STD_I32LE, ranges[r][0], ranges[r][1], got), 0);
            ASSERT_EQ_MEM(got, want + ranges[r][0] * COLS, ranges[r][1] * COLS * sizeof *got);
        }
        H5Dclose(d);
    }
    H5Fclose(f);
    h5shuf__chunkio_free(cio);
    free(want);
    free(got);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* Blocks of 8 elements: LZ4's per-block margin outgrows the stage buffers, so HDF5 runs the filter; so
 * does lzo after another codec (LZO1X-1 writes up to its worst case of that codec's output, unchecked);
 * lzf and lzo set mandatory are still run by the pool (and fail cleanly on a chunk that does not shrink). */
static void test_fallback_and_mandatory(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "fb.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    /* 64 rows of 1200 int32 (300 KiB chunks): blocks of 8 elements cost up to 52 bytes per 32 */
    hsize_t tdims[2] = {128, 1200}, tcdims[2] = {64, 1200};
    unsigned tcd[2] = {8, 2};
    hid_t tdcpl = H5Pcreate(H5P_DATASET_CREATE), tspace = H5Screate_simple(2, tdims, NULL);
    H5Pset_chunk(tdcpl, 2, tcdims);
    H5Pset_filter(tdcpl, H5SHUF_FILTER_BSHUF, H5Z_FLAG_OPTIONAL, 2, tcd);
    hid_t d = H5Dcreate2(f, "tiny", H5T_STD_I32LE, tspace, H5P_DEFAULT, tdcpl, H5P_DEFAULT);
    struct h5shuf_pipeline pl;
    ASSERT_EQ_INT(h5shuf__pipeline_probe(d, H5T_STD_I32LE, &pl), 0);
    CU_ASSERT(!pl.direct);
    H5Dclose(d);
    tcd[0] = 0; /* default blocks: run by the pool */
    H5Pmodify_filter(tdcpl, H5SHUF_FILTER_BSHUF, H5Z_FLAG_OPTIONAL, 2, tcd);
    d = H5Dcreate2(f, "default", H5T_STD_I32LE, tspace, H5P_DEFAULT, tdcpl, H5P_DEFAULT);
    ASSERT_EQ_INT(h5shuf__pipeline_probe(d, H5T_STD_I32LE, &pl), 0);
    CU_ASSERT(pl.direct);
    H5Dclose(d);
    const unsigned lcd[3] = {5, 11, 4};
#ifdef H5SHUF_HAVE_LZO
    hid_t ldcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(ldcpl, 2, tcdims);
    H5Pset_deflate(ldcpl, 1);
    H5Pset_filter(ldcpl, H5SHUF_FILTER_LZO, H5Z_FLAG_OPTIONAL, 3, lcd);
    d = H5Dcreate2(f, "deflate+lzo", H5T_STD_I32LE, tspace, H5P_DEFAULT, ldcpl, H5P_DEFAULT);
    ASSERT_EQ_INT(h5shuf__pipeline_probe(d, H5T_STD_I32LE, &pl), 0);
    CU_ASSERT(!pl.direct);
    H5Dclose(d);
    H5Pclose(ldcpl);
#endif
    H5Sclose(tspace);
    H5Pclose(tdcpl);

    hsize_t dims[2] = {0, COLS}, maxdims[2] = {H5S_UNLIMITED, COLS}, cdims[2] = {CHUNK_ROWS, COLS};

    hid_t space = H5Screate_simple(2, dims, maxdims);
    int32_t *x = values();
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
#ifdef H5SHUF_HAVE_LZO
    const int kinds = 2; /* lzf, lzo */
#else
    const int kinds = 1;
    (void)lcd;
#endif
    for (int k = 0; k < kinds; k++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, 2, cdims);
        if (k == 0)
            H5Pset_filter(dcpl, H5SHUF_FILTER_LZF, H5Z_FLAG_MANDATORY, 0, NULL);
        else
            H5Pset_filter(dcpl, H5SHUF_FILTER_LZO, H5Z_FLAG_MANDATORY, 3, lcd);
        d = H5Dcreate2(f, k ? "mandatory-lzo" : "mandatory", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ASSERT_EQ_INT(h5shuf__pipeline_probe(d, H5T_STD_I32LE, &pl), 0);
        CU_ASSERT(pl.direct);
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, d, H5T_STD_I32LE, 0, 2 * CHUNK_ROWS, x, 1), 0); /* compresses */
        H5E_BEGIN_TRY
        {
            const int32_t *rnd = x + 8 * CHUNK_ROWS * COLS; /* random rows: no gain */
            ASSERT_LT_INT(h5shuf__chunkio_write(cio, d, H5T_STD_I32LE, 8 * CHUNK_ROWS, CHUNK_ROWS, rnd, 1), 0);
        }
        H5E_END_TRY;
        char cause[256];
        h5shuf__hdf5_cause(cause, sizeof cause);
        ASSERT_HAS_STR(cause, "mandatory");
        H5Eclear2(H5E_DEFAULT);
        H5Dclose(d);
        H5Pclose(dcpl);
    }
    h5shuf__chunkio_free(cio);
    free(x);
    H5Sclose(space);
    H5Fclose(f);
    tu_rmtree(dir);
    free(dir);
}

/* A stored chunk made invalid: the threaded read fails with the codec's message, not garbage. */
static void test_corrupt_chunks(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "bad.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int32_t *x = values(), *got = malloc(ROWS * COLS * sizeof *got);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
#ifdef H5SHUF_HAVE_LZO
    const struct pipe *cases[] = {&pipes[0], &pipes[3], &pipes[6]};
    static const char *const names[] = {"lzf", "bitshuffle", "lzo"};
#else
    const struct pipe *cases[] = {&pipes[0], &pipes[3]};
    static const char *const names[] = {"lzf", "bitshuffle"};
#endif
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hid_t d = make_dset(f, cases[i]->name, cases[i], ROWS);
        H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
        H5Dclose(d);
        d = H5Dopen2(f, cases[i]->name, H5P_DEFAULT);
        hsize_t n;
        uint32_t mask;
        unsigned char *raw = tu_raw_chunk(d, CHUNK_ROWS, &n, &mask);
        CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
        ASSERT_EQ_INT_FATAL(mask, 0);
        ASSERT_GT_INT_FATAL(n, 20);
        hsize_t off[2] = {CHUNK_ROWS, 0};
        ASSERT_GE_INT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, n / 2, raw), 0); /* truncated */
        H5Dclose(d);
        d = H5Dopen2(f, cases[i]->name, H5P_DEFAULT);
        H5Eclear2(H5E_DEFAULT);
        H5E_BEGIN_TRY
        {
            ASSERT_LT_INT(h5shuf__chunkio_read(cio, d, H5T_STD_I32LE, 0, ROWS, got), 0);
        }
        H5E_END_TRY;
        char cause[256];
        h5shuf__hdf5_cause(cause, sizeof cause);
        ASSERT_HAS_STR(cause, names[i]);
        ASSERT_HAS_STR(cause, "corrupt");
        if (!strstr(cause, names[i]))
            fprintf(stderr, "cause: %s\n", cause);
        free(raw);
        H5Dclose(d);
    }
    h5shuf__chunkio_free(cio);
    H5Fclose(f);
    free(x);
    free(got);
    tu_rmtree(dir);
    free(dir);
}

/* A whole shuffle of lzf, bitshuffle and lzo inputs ("-c keep"): the same file for 1, 2 and 3 threads,
 * the rows in the reference order, the filters kept (lzo's cd_values as PyTables wrote them). */
static void test_threads_same_bytes(void)
{
    char *dir = tu_mkdtemp();
    const char *in = tu_path(dir, "in.h5");
    int32_t *x = values();
    hid_t f = H5Fcreate(in, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t a = make_dset(f, "a", &pipes[1], ROWS), b = make_dset(f, "b", &pipes[3], ROWS);
#ifdef H5SHUF_HAVE_LZO
    hid_t c = make_dset(f, "c", &pipes[7], ROWS);
#else
    hid_t c = make_dset(f, "c", &pipes[5], ROWS); /* bitshuffle:zstd+fletcher32 */
#endif
    ASSERT_GE_INT(H5Dwrite(a, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    ASSERT_GE_INT(H5Dwrite(b, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    ASSERT_GE_INT(H5Dwrite(c, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
    H5Dclose(a);
    H5Dclose(b);
    H5Dclose(c);
    H5Fclose(f);
    const char *inputs[] = {in};
    char msg[512], name[32];
    for (unsigned t = 1; t <= 3; t++) {
        h5shuf_options opts;
        h5shuf_options_init(&opts);
        opts.seed = 99;
        opts.seed_set = 1;
        opts.threads = t;
        opts.mem_limit_bytes = 160 << 10; /* several piles */
        snprintf(name, sizeof name, "out%u.h5", t);
        ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(dir, name), &opts, msg, sizeof msg), H5SHUF_OK);
        if (msg[0])
            fprintf(stderr, "%s\n", msg);
        if (t > 1)
            CU_ASSERT(tu_same_bytes(tu_path(dir, "out1.h5"), tu_path(dir, name)));
    }
    int32_t *want = malloc(ROWS * COLS * sizeof *want);
    tu_reference(99, x, ROWS, COLS * sizeof *x, want);
    for (int k = 0; k < 3; k++) {
        uint64_t rows, row_bytes;
        int32_t *got = tu_read(tu_path(dir, "out3.h5"), k == 2 ? "/c" : k ? "/b" : "/a", &rows, &row_bytes);
        CU_ASSERT_PTR_NOT_NULL(got);
        ASSERT_EQ_INT(rows, ROWS);
        ASSERT_EQ_INT(row_bytes, COLS * 4);
        if (rows == ROWS && row_bytes == COLS * 4)
            ASSERT_EQ_MEM(got, want, ROWS * COLS * 4);
        free(got);
    }
    hid_t o = H5Fopen(tu_path(dir, "out2.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(o, "/b", H5P_DEFAULT), dcpl = H5Dget_create_plist(d);
    ASSERT_GE_INT(H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_BSHUF, NULL, NULL, NULL, 0, NULL, NULL), 0);
    H5Pclose(dcpl);
    H5Dclose(d);
#ifdef H5SHUF_HAVE_LZO
    d = H5Dopen2(o, "/c", H5P_DEFAULT);
    dcpl = H5Dget_create_plist(d);
    unsigned flags = 0, cd[8] = {0};
    size_t ncd = 8;
    char fname[16] = "";
    ASSERT_GE_INT(H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_LZO, &flags, &ncd, cd, sizeof fname, fname, NULL), 0);
    /* PyTables' values and name, which PyTables reads the filter by */
    ASSERT_EQ_INT(ncd, 3);
    ASSERT_EQ_INT(cd[0], 5);
    ASSERT_EQ_INT(cd[1], 11);
    ASSERT_EQ_INT(cd[2], 4);
    CU_ASSERT(flags & H5Z_FLAG_OPTIONAL);
    ASSERT_EQ_STR(fname, "lzo");
    H5Pclose(dcpl);
    H5Dclose(d);
#endif
    H5Fclose(o);
    free(want);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Read all rows of d on both paths, the stored chunk at row CHUNK_ROWS being one that decodes to more or
 * fewer bytes than a chunk holds: chunkio (h5shuf's codec path, or HDF5's for a chunk stored larger than
 * any encoding of it) and h5shuf__read_rows (HDF5's pipeline, bracketed with the chunk's size).  Each
 * must fail naming the chunk, within 64 MiB of memory. */
static void refused_both_ways(struct h5shuf_chunkio *cio, hid_t d, const char *what, const char *name)
{
    int32_t *got = malloc(ROWS * COLS * sizeof *got);
    for (int way = 0; way < 2; way++) {
        long before = max_rss_kib();
        H5Eclear2(H5E_DEFAULT);
        herr_t r;
        H5E_BEGIN_TRY
        {
            r = way ? h5shuf__read_rows(d, H5T_STD_I32LE, 0, ROWS, got)
                    : h5shuf__chunkio_read(cio, d, H5T_STD_I32LE, 0, ROWS, got);
        }
        H5E_END_TRY;
        char cause[256];
        h5shuf__hdf5_cause(cause, sizeof cause);
        long grown = max_rss_kib() - before;
        int ok = r < 0 && strstr(cause, "chunk at (64, 0): ") && strstr(cause, what) &&
                 strstr(cause, "corrupt chunk") && grown < 65536;
        if (!ok)
            fprintf(stderr, "\n  %s, %s: %d \"%s\", max RSS +%ld KiB\n", name, way ? "HDF5" : "chunkio", (int)r,
                    cause, grown);
        CU_ASSERT(ok);
    }
    free(got);
}

/* A chunk that decodes to more than its size (a decompression bomb: issue 48's 1 GiB zstd frame without
 * a content size, streams of 64 KiB to 4 MiB in a chunk of 3 KiB) or to fewer bytes, for each filter
 * h5shuf registers, stored small (h5shuf's codec path decodes it) and large (HDF5's pipeline does): both
 * read paths refuse it, name it, and stay within 64 MiB. */
static void test_bombs(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "bombs.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int32_t *x = values();
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    const size_t big = (size_t)4 << 20, giga = (size_t)1 << 30;
#ifdef H5SHUF_HAVE_LZO
    const size_t extra = h5shuf_lzo_bound(big);
#else
    const size_t extra = big + big / 16 + 64 + 3; /* (the same room: LZO1X-1's worst case) */
#endif
    unsigned char *zeros = calloc(1, big), *s = malloc(tu_zstd_rle_bytes(giga) + extra);
    unsigned char *work = malloc(H5SHUF_LZO_WORK_BYTES);
    const unsigned lzo_cd[3] = {5, 11, 4}, bshuf_cd[5] = {0, 4, 4, 0, 2}, zstd_cd[1] = {3};
    struct h5shuf_bshuf_params bp;
    ASSERT_EQ_INT_FATAL(h5shuf_bshuf_params_from_cd(5, bshuf_cd, &bp), H5SHUF_BSHUF_OK);
    static const char *const filters[] = {"zstd", "lzf", "lzo", "bitshuffle"};
    static const H5Z_filter_t ids[] = {H5SHUF_FILTER_ZSTD, H5SHUF_FILTER_LZF, H5SHUF_FILTER_LZO, H5SHUF_FILTER_BSHUF};
    const size_t chunk = CHUNK_ROWS * COLS * 4;
    for (int i = 0; i < 4; i++) {
#ifndef H5SHUF_HAVE_LZO
        if (i == 2)
            continue; /* no LZO in this build */
#endif
        /* decoded sizes: 64 KiB (stored small: the codec path), the large one (stored beyond any encoding of
         * the chunk: HDF5's), 1000 bytes (fewer) */
        const size_t sizes[3] = {(size_t)64 << 10, i == 0 ? giga : big, 1000};
        for (int k = 0; k < 3; k++) {
            size_t n = 0, m = sizes[k];
            if (i == 0) {
                n = tu_zstd_rle_frame(s, m);
            } else if (i == 1) {
                n = h5shuf_lzf_encode(zeros, m, s, m);
            } else if (i == 2) {
#ifdef H5SHUF_HAVE_LZO
                if (h5shuf_lzo_encode(zeros, m, s, h5shuf_lzo_bound(m), work, &n) != H5SHUF_LZO_OK)
                    n = 0;
#endif
            } else if (h5shuf_bshuf_encode(&bp, zeros, m, s, tu_zstd_rle_bytes(giga) + extra, &n) !=
                       H5SHUF_BSHUF_OK) {
                n = 0;
            }
            ASSERT_GT_INT_FATAL(n, 0);
            if (k == 1 && n <= h5shuf__codec_bound(chunk))
                fprintf(stderr, "\n  %s: %zu bytes stored: not beyond the codec's bound\n", filters[i], n);
            if (k == 1)
                ASSERT_GT_INT(n, h5shuf__codec_bound(chunk));
            char name[64];
            snprintf(name, sizeof name, "%s-%zu", filters[i], m);
            hid_t d = make_filtered(f, name, ids[i], i == 0 ? 1 : i == 2 ? 3 : i == 3 ? 5 : 0,
                                    i == 0 ? zstd_cd : i == 2 ? lzo_cd : bshuf_cd);
            ASSERT_GE_INT(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
            hsize_t off[2] = {CHUNK_ROWS, 0};
            ASSERT_GE_INT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, n, s), 0);
            H5Dclose(d);
            d = H5Dopen2(f, name, H5P_DEFAULT); /* (HDF5's chunk cache emptied) */
            refused_both_ways(cio, d, k < 2 ? "more than" : "1000", name);
            H5Dclose(d);
        }
    }
    h5shuf__chunkio_free(cio);
    H5Fclose(f);
    free(x);
    free(zeros);
    free(s);
    free(work);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    h5shuf__filters_register();
    static const struct tu_test tests[] = {
        {"encoded chunks and masks are HDF5's", test_encodings_match_hdf5},
        {"decoded rows equal H5Dread's", test_decode_matches_hdf5},
        {"fallbacks to HDF5; mandatory lzf and lzo fail cleanly", test_fallback_and_mandatory},
        {"corrupt lzf, bitshuffle and lzo chunks: clean errors", test_corrupt_chunks},
        {"output byte-identical for 1, 2, 3 threads, in the reference order", test_threads_same_bytes},
        {"decompression bombs and short chunks refused on both paths, named", test_bombs},
        {NULL, NULL},
    };
    return tu_main("filter_paths", tests);
}
