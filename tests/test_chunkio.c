/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_chunkio.c - the chunks h5shuf encodes itself are the ones HDF5 would store (shuffle, fletcher32,
 * zstd) or streams zlib reads (deflate, by libdeflate); what it decodes equals what H5Dread returns, for
 * partial chunks, skipped filters and unallocated chunks; pipelines it cannot run fall back to HDF5;
 * and a whole shuffle is byte-identical for every thread count.  Whole chunks of large rows, which go
 * straight between the caller's rows and the stored bytes, match HDF5 for every kind of pipeline (one
 * codec, shuffle + codec, fletcher32 first or last, lzf or lzo skipped, three codec steps) with the caller's
 * buffers exactly the rows' size, never written past nor, on the way out, written at all; moving one
 * chunk holds one raw buffer and only the stage buffers its pipeline needs; and a chunk that decodes to
 * more or fewer bytes than its rows is a clean error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_lzf.h"
#include "filter_lzo.h"
#include "filter_zstd.h"
#include "filters.h"
#include "chunkio.h"
#include "h5err.h"
#include "rows.h"
#include "testutil.h"

#define ROWS 1000u /* not a multiple of CHUNK_ROWS: the last chunk is partial */
#define COLS 12u
#define CHUNK_ROWS 64u

/* Filter pipelines under test, applied in this order; level 0 means "no such filter". */
struct pipe {
    const char *name;
    int shuffle, deflate, zstd, fletcher32;
};

/* A new file whose root group records no time: files written here are compared byte for byte, and HDF5 2.x
 * writes the 1.8 format by default, whose group header holds the time unless told not to. */
static hid_t create_untimed(const char *path)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    return f;
}
static const struct pipe pipes[] = {
    {"none", 0, 0, 0, 0},          {"shuffle", 1, 0, 0, 0},        {"fletcher32", 0, 0, 0, 1},
    {"zstd:3", 0, 0, 3, 0},        {"shuffle+zstd:1", 1, 0, 1, 0}, {"shuffle+zstd:5+fletcher32", 1, 0, 5, 1},
    {"gzip:4", 0, 4, 0, 0},        {"shuffle+gzip:1+fletcher32", 1, 1, 0, 1},
};

static float *values(void)
{
    float *x = malloc(ROWS * COLS * sizeof *x);
    uint64_t st = 42;
    for (unsigned i = 0; i < ROWS * COLS; i++)
        x[i] = (float)(tu_splitmix64(&st) % 4096) / 256.0f; /* compressible, like rounded features */
    return x;
}

static hid_t make_dset(hid_t file, const char *name, const struct pipe *p, hsize_t rows)
{
    hsize_t dims[2] = {rows, COLS}, maxdims[2] = {H5S_UNLIMITED, COLS}, cdims[2] = {CHUNK_ROWS, COLS};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cdims);
    if (p->shuffle)
        H5Pset_shuffle(dcpl);
    if (p->deflate)
        H5Pset_deflate(dcpl, (unsigned)p->deflate);
    if (p->zstd) {
        unsigned cd = (unsigned)p->zstd;
        H5Pset_filter(dcpl, H5SHUF_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, &cd);
    }
    if (p->fletcher32)
        H5Pset_fletcher32(dcpl);
    hid_t space = H5Screate_simple(2, dims, maxdims);
    hid_t d = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(space);
    H5Pclose(dcpl);
    return d;
}

static void test_encodings_match_hdf5(void)
{
    char *dir = tu_mkdtemp();
    float *x = values();
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(3, &cio), H5SHUF_OK);
    hid_t f = H5Fcreate(tu_path(dir, "enc.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    float *back = malloc(ROWS * COLS * sizeof *back);
    for (size_t i = 0; i < sizeof pipes / sizeof *pipes; i++) {
        const struct pipe *p = &pipes[i];
        char a[64], b[64];
        snprintf(a, sizeof a, "hdf5-%zu", i);
        snprintf(b, sizeof b, "ours-%zu", i);
        hid_t dh = make_dset(f, a, p, ROWS), dour = make_dset(f, b, p, 0);
        ASSERT_GE_INT_FATAL(dh, 0);
        ASSERT_GE_INT_FATAL(dour, 0);
        ASSERT_GE_INT(H5Dwrite(dh, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
        struct h5shuf_pipeline pl;
        ASSERT_EQ_INT(h5shuf__pipeline_probe(dour, H5T_IEEE_F32LE, &pl), 0);
        CU_ASSERT(pl.direct);
        /* appended in three calls, as pile flushes are: whole chunks, then the partial last one */
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_IEEE_F32LE, 0, 5 * CHUNK_ROWS, x, 1), 0);
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_IEEE_F32LE, 5 * CHUNK_ROWS, 9 * CHUNK_ROWS,
                                            x + 5 * CHUNK_ROWS * COLS, 1), 0);
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_IEEE_F32LE, 14 * CHUNK_ROWS, ROWS - 14 * CHUNK_ROWS,
                                            x + 14 * CHUNK_ROWS * COLS, 1), 0);
        /* HDF5 (zlib) reads every chunk back to the values written */
        memset(back, 0, ROWS * COLS * sizeof *back);
        ASSERT_GE_INT(H5Dread(dour, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
        ASSERT_EQ_MEM(back, x, ROWS * COLS * sizeof *x);
        /* and, except deflate (libdeflate's encoder is not zlib's), the stored bytes are HDF5's own */
        int same = 1;
        for (uint64_t c = 0; c * CHUNK_ROWS < ROWS; c++) {
            hsize_t nh = 0, no = 0;
            uint32_t mh = 1, mo = 1;
            hsize_t row = (hsize_t)c * CHUNK_ROWS;
            unsigned char *rh = tu_raw_chunk(dh, row, &nh, &mh), *ro = tu_raw_chunk(dour, row, &no, &mo);
            CU_ASSERT_PTR_NOT_NULL(rh);
            CU_ASSERT_PTR_NOT_NULL(ro);
            ASSERT_EQ_INT(mh, 0);
            ASSERT_EQ_INT(mo, 0);
            if (rh && ro && !p->deflate)
                same = same && nh == no && memcmp(rh, ro, nh) == 0;
            free(rh);
            free(ro);
        }
        if (!same)
            fprintf(stderr, "pipeline %s: chunks differ from HDF5's\n", p->name);
        CU_ASSERT(same);
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
    float *x = values();
    float *want = malloc(ROWS * COLS * sizeof *want), *got = malloc(ROWS * COLS * sizeof *got);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    hid_t f = H5Fcreate(tu_path(dir, "dec.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    /* row ranges: everything, one row, unaligned spans, the partial tail */
    static const uint64_t ranges[][2] = {{0, ROWS}, {5, 1}, {63, 2}, {100, 517}, {960, 40}, {999, 1}};
    for (size_t i = 0; i < sizeof pipes / sizeof *pipes; i++) {
        hid_t d = make_dset(f, pipes[i].name, &pipes[i], ROWS);
        ASSERT_GE_INT_FATAL(d, 0);
        ASSERT_GE_INT(H5Dwrite(d, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
        H5Dclose(d); /* out of HDF5's chunk cache before a raw chunk replaces one */
        d = H5Dopen2(f, pipes[i].name, H5P_DEFAULT);
        if (pipes[i].deflate) { /* chunk 2 stored with deflate skipped, as an optional filter may be */
            int idx = pipes[i].shuffle ? 1 : 0;
            hsize_t off[2] = {2 * CHUNK_ROWS, 0};
            size_t n = CHUNK_ROWS * COLS * sizeof(float);
            unsigned char *buf = malloc(n + 4), *sh = malloc(n);
            const unsigned char *src = (const unsigned char *)(x + 2 * CHUNK_ROWS * COLS);
            if (pipes[i].shuffle) { /* byte planes, as H5Zshuffle.c lays them out */
                for (size_t e = 0; e < n / 4; e++)
                    for (size_t b = 0; b < 4; b++)
                        sh[b * (n / 4) + e] = src[e * 4 + b];
                src = sh;
            }
            memcpy(buf, src, n);
            size_t total = n;
            if (pipes[i].fletcher32) { /* let HDF5 compute the checksum: read one back from a twin */
                hid_t twin = make_dset(f, "twin", &(struct pipe){"twin", pipes[i].shuffle, 0, 0, 1}, ROWS);
                H5Dwrite(twin, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
                hsize_t tn;
                uint32_t tm;
                unsigned char *tr = tu_raw_chunk(twin, 2 * CHUNK_ROWS, &tn, &tm);
                CU_ASSERT_PTR_NOT_NULL_FATAL(tr);
                ASSERT_EQ_INT_FATAL(tn, n + 4);
                memcpy(buf, tr, n + 4);
                total = n + 4;
                free(tr);
                H5Dclose(twin);
                H5Ldelete(f, "twin", H5P_DEFAULT);
            }
            ASSERT_GE_INT(H5Dwrite_chunk(d, H5P_DEFAULT, 1u << idx, off, total, buf), 0);
            free(buf);
            free(sh);
        }
        ASSERT_GE_INT(H5Dread(d, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
        ASSERT_EQ_MEM(want, x, ROWS * COLS * sizeof *x);
        for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
            memset(got, 0xff, ROWS * COLS * sizeof *got);
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, d, H5T_IEEE_F32LE, ranges[r][0], ranges[r][1], got), 0);
            ASSERT_EQ_MEM(got, want + ranges[r][0] * COLS, ranges[r][1] * COLS * sizeof *got);
        }
        H5Dclose(d);
    }
    /* unallocated chunks read as the fill value (HDF5 reads those rows) */
    {
        struct pipe p = {"sparse", 1, 0, 2, 0};
        hid_t d = make_dset(f, "sparse", &p, 0);
        H5Dclose(d);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hsize_t dims[2] = {ROWS, COLS}, cdims[2] = {CHUNK_ROWS, COLS};
        float fill = -7.5f;
        H5Pset_chunk(dcpl, 2, cdims);
        H5Pset_shuffle(dcpl);
        H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill);
        hid_t space = H5Screate_simple(2, dims, NULL);
        d = H5Dcreate2(f, "sparse2", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        hsize_t off[2] = {3 * CHUNK_ROWS, 0}, cnt[2] = {CHUNK_ROWS, COLS};
        hid_t ms = H5Screate_simple(2, cnt, NULL);
        H5Sselect_hyperslab(space, H5S_SELECT_SET, off, NULL, cnt, NULL);
        H5Dwrite(d, H5T_IEEE_F32LE, ms, space, H5P_DEFAULT, x);
        H5Sclose(ms);
        H5Sclose(space);
        H5Pclose(dcpl);
        ASSERT_GE_INT(H5Dread(d, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
        ASSERT_EQ_DBL(want[0], fill);
        ASSERT_EQ_DBL(want[3 * CHUNK_ROWS * COLS], x[0]);
        ASSERT_GE_INT(h5shuf__chunkio_read(cio, d, H5T_IEEE_F32LE, 0, ROWS, got), 0);
        ASSERT_EQ_MEM(got, want, ROWS * COLS * sizeof *got);
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

static void test_fallback_pipelines(void)
{
    char *dir = tu_mkdtemp();
    hid_t f = H5Fcreate(tu_path(dir, "fb.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {100, 8};
    hid_t space = H5Screate_simple(2, dims, NULL);
    struct h5shuf_pipeline pl;
    struct {
        const char *name;
        hsize_t cdims[2];
        int nbit, contiguous;
        int direct;
    } cases[] = {
        {"whole rows", {10, 8}, 0, 0, 1},
        {"chunk splits rows", {10, 4}, 0, 0, 1},
        {"nbit filter", {10, 8}, 1, 0, 0},
        {"contiguous", {0, 0}, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (!cases[i].contiguous)
            H5Pset_chunk(dcpl, 2, cases[i].cdims);
        if (cases[i].nbit)
            H5Pset_nbit(dcpl);
        hid_t d = H5Dcreate2(f, cases[i].name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ASSERT_GE_INT_FATAL(d, 0);
        ASSERT_EQ_INT(h5shuf__pipeline_probe(d, H5T_STD_I32LE, &pl), 0);
        ASSERT_EQ_INT(pl.direct, cases[i].direct);
        H5Dclose(d);
        H5Pclose(dcpl);
    }
    H5Sclose(space);
    H5Fclose(f);
    tu_rmtree(dir);
    free(dir);
}

/* ---- whole chunks of large rows: decoded into, and encoded from, the caller's rows ------------------ */

#define WROWS 10u    /* 4-row chunks: two whole ones and a partial last one of 2 rows */
#define WCOLS 4096u  /* int32: rows of 16 KiB */

/* A pipeline in filter order, and the stage buffers a thread needs for it when every chunk is whole. */
struct wpipe {
    const char *name;
    int n;
    H5Z_filter_t f[3];
    unsigned stages;
};
static const struct wpipe wpipes[] = {
    {"deflate", 1, {H5Z_FILTER_DEFLATE}, 0},
    {"zstd", 1, {H5SHUF_FILTER_ZSTD}, 0},
    {"lzf", 1, {H5SHUF_FILTER_LZF}, 0},
    {"shuffle+deflate", 2, {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}, 1},
    {"shuffle+deflate+fletcher32", 3, {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE, H5Z_FILTER_FLETCHER32}, 1},
    {"fletcher32+deflate", 2, {H5Z_FILTER_FLETCHER32, H5Z_FILTER_DEFLATE}, 1},      /* the checksum is deflated */
    {"fletcher32", 1, {H5Z_FILTER_FLETCHER32}, 0},
    {"lzf+fletcher32", 2, {H5SHUF_FILTER_LZF, H5Z_FILTER_FLETCHER32}, 0},            /* lzf skipped: sum of the rows */
    {"shuffle+lzf+fletcher32", 3, {H5Z_FILTER_SHUFFLE, H5SHUF_FILTER_LZF, H5Z_FILTER_FLETCHER32}, 1},
    {"shuffle+deflate+zstd", 3, {H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE, H5SHUF_FILTER_ZSTD}, 2},
#ifdef H5SHUF_HAVE_LZO /* (last: test_whole_chunk_wrong_size names them by index) */
    {"lzo", 1, {H5SHUF_FILTER_LZO}, 0},
    {"lzo+fletcher32", 2, {H5SHUF_FILTER_LZO, H5Z_FILTER_FLETCHER32}, 0},            /* lzo skipped: sum of the rows */
    {"shuffle+lzo+fletcher32", 3, {H5Z_FILTER_SHUFFLE, H5SHUF_FILTER_LZO, H5Z_FILTER_FLETCHER32}, 1},
#endif
};

/* Whether pipeline p deflates: its chunks' bytes are then libdeflate's, not zlib's as HDF5 writes them, and
 * are compared decoded (tu_same_chunks), their sizes and so their places in the file free to differ. */
static int wpipe_deflates(const struct wpipe *p)
{
    for (int k = 0; k < p->n; k++)
        if (p->f[k] == H5Z_FILTER_DEFLATE)
            return 1;
    return 0;
}

/* Rows 0-4 smooth (every codec shrinks them), rows 5-9 random (lzf cannot: stored with lzf skipped). */
static int32_t *wvalues(void)
{
    int32_t *x = malloc((size_t)WROWS * WCOLS * sizeof *x);
    uint64_t st = 11;
    for (size_t i = 0; i < (size_t)WROWS * WCOLS; i++)
        x[i] = i < (size_t)WROWS * WCOLS / 2 ? (int32_t)(i / 7 % 500) : (int32_t)tu_splitmix64(&st);
    return x;
}

/* Creation properties with chunks cdims (rank dims) and p's filters, and no clock in the object header
 * (HDF5 stamps a dataset's header with the second it was last changed, by default: two files written side
 * by side would differ whenever a second boundary fell between them, as h5shuf's outputs never do). */
static hid_t wpipe_dcpl(const struct wpipe *p, int rank, const hsize_t *cdims)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, cdims);
    H5Pset_obj_track_times(dcpl, 0);
    for (int i = 0; i < p->n; i++) {
        unsigned zl = 3;
        switch (p->f[i]) {
        case H5Z_FILTER_SHUFFLE:
            H5Pset_shuffle(dcpl);
            break;
        case H5Z_FILTER_DEFLATE:
            H5Pset_deflate(dcpl, 1);
            break;
        case H5SHUF_FILTER_ZSTD:
            H5Pset_filter(dcpl, H5SHUF_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, &zl);
            break;
        case H5SHUF_FILTER_LZF:
            H5Pset_filter(dcpl, H5SHUF_FILTER_LZF, H5Z_FLAG_OPTIONAL, 0, NULL); /* as h5py sets it */
            break;
        case H5SHUF_FILTER_LZO: {
            const unsigned cd[3] = {5, 27, 0}; /* as PyTables sets it: level, Table VERSION 2.7, Table */
            H5Pset_filter(dcpl, H5SHUF_FILTER_LZO, H5Z_FLAG_OPTIONAL, 3, cd);
            break;
        }
        default:
            H5Pset_fletcher32(dcpl);
        }
    }
    return dcpl;
}

static hid_t make_wdset(hid_t file, const char *name, const struct wpipe *p, hsize_t rows, hsize_t chunk_rows,
                        hsize_t cols)
{
    hsize_t dims[2] = {rows, cols}, maxdims[2] = {H5S_UNLIMITED, cols}, cdims[2] = {chunk_rows, cols};
    hid_t dcpl = wpipe_dcpl(p, 2, cdims);
    hid_t space = H5Screate_simple(2, dims, maxdims);
    hid_t d = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(space);
    H5Pclose(dcpl);
    return d;
}

static int has(const struct wpipe *p, H5Z_filter_t id)
{
    for (int i = 0; i < p->n; i++)
        if (p->f[i] == id)
            return 1;
    return 0;
}

/* Every pipeline, with chunks of one row (all whole, as on the direct path) and of 4 rows (the last one
 * partial, which goes through a stage): HDF5 reads what chunkio wrote back to the rows, and stores the
 * same bytes under the same filter mask (deflate aside: libdeflate's stream is not zlib's); chunkio reads
 * what HDF5 wrote as H5Dread does, into buffers exactly the size of the rows read (ASan sees a write
 * past them), whole chunks one at a time, the whole dataset, and a row inside a chunk; and the rows a
 * chunk is encoded from are left as they were. */
static void test_whole_chunks_match_hdf5(void)
{
    char *dir = tu_mkdtemp();
    const size_t row = WCOLS * sizeof(int32_t), all = WROWS * row;
    int32_t *x = wvalues();
    unsigned char *want = malloc(all), *got = malloc(all);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    hid_t f = H5Fcreate(tu_path(dir, "whole.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    static const hsize_t chunk_rows[] = {1, 4};
    for (size_t i = 0; i < sizeof wpipes / sizeof *wpipes; i++)
        for (size_t k = 0; k < 2; k++) {
            const struct wpipe *p = &wpipes[i];
            const hsize_t cr = chunk_rows[k];
            char a[64], b[64];
            snprintf(a, sizeof a, "hdf5-%zu-%zu", i, k);
            snprintf(b, sizeof b, "ours-%zu-%zu", i, k);
            hid_t dh = make_wdset(f, a, p, WROWS, cr, WCOLS), dour = make_wdset(f, b, p, 0, cr, WCOLS);
            ASSERT_GE_INT_FATAL(dh, 0);
            ASSERT_GE_INT_FATAL(dour, 0);
            ASSERT_GE_INT(H5Dwrite(dh, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
            H5Dclose(dh); /* read back from the file, not from HDF5's chunk cache */
            dh = H5Dopen2(f, a, H5P_DEFAULT);
            struct h5shuf_pipeline pl;
            ASSERT_EQ_INT(h5shuf__pipeline_probe(dour, H5T_STD_I32LE, &pl), 0);
            CU_ASSERT(pl.direct);
            /* out: one chunk a call, each from a buffer of exactly its rows */
            int untouched = 1;
            for (hsize_t r = 0; r < WROWS; r += cr) {
                size_t n = (size_t)(r + cr <= WROWS ? cr : WROWS - r) * row;
                unsigned char *rows = malloc(n);
                memcpy(rows, (const unsigned char *)x + r * row, n);
                ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_STD_I32LE, r, n / row, rows, 1), 0);
                untouched = untouched && memcmp(rows, (const unsigned char *)x + r * row, n) == 0;
                free(rows);
            }
            CU_ASSERT(untouched);
            memset(got, 0, all);
            ASSERT_GE_INT(H5Dread(dour, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, got), 0);
            ASSERT_EQ_MEM(got, x, all);
            int same = 1, skipped = 0;
            for (hsize_t r = 0; r < WROWS; r += cr) {
                hsize_t nh = 0, no = 0;
                uint32_t mh = 99, mo = 98;
                unsigned char *rh = tu_raw_chunk(dh, r, &nh, &mh), *ro = tu_raw_chunk(dour, r, &no, &mo);
                CU_ASSERT(rh && ro);
                same = same && rh && ro && mh == mo &&
                       (has(p, H5Z_FILTER_DEFLATE) || (nh == no && memcmp(rh, ro, nh) == 0));
                skipped += mo != 0;
                free(rh);
                free(ro);
            }
            if (!same)
                fprintf(stderr, "pipeline %s, chunks of %llu rows: chunks differ from HDF5's\n", p->name,
                        (unsigned long long)cr);
            CU_ASSERT(same);
            /* the random rows: lzf or lzo skipped (and a fletcher32 after it sums the caller's rows) */
            if (!has(p, H5SHUF_FILTER_LZF) && !has(p, H5SHUF_FILTER_LZO))
                ASSERT_EQ_INT(skipped, 0);
            else
                CU_ASSERT(cr > 1 || skipped > 0);
            /* in: H5Dread is the oracle */
            ASSERT_GE_INT(H5Dread(dh, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
            ASSERT_EQ_MEM(want, x, all);
            int equal = 1;
            for (hsize_t r = 0; r < WROWS; r += cr) {
                size_t n = (size_t)(r + cr <= WROWS ? cr : WROWS - r) * row;
                unsigned char *rows = malloc(n);
                ASSERT_GE_INT(h5shuf__chunkio_read(cio, dh, H5T_STD_I32LE, r, n / row, rows), 0);
                equal = equal && memcmp(rows, want + r * row, n) == 0;
                free(rows);
            }
            CU_ASSERT(equal);
            memset(got, 0xff, all);
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, dh, H5T_STD_I32LE, 0, WROWS, got), 0);
            ASSERT_EQ_MEM(got, want, all);
            unsigned char *one = malloc(row); /* one row inside a chunk: through a stage */
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, dh, H5T_STD_I32LE, WROWS - 3, 1, one), 0);
            ASSERT_EQ_MEM(one, want + (WROWS - 3) * row, row);
            free(one);
            H5Dclose(dh);
            H5Dclose(dour);
        }
    H5Fclose(f);
    h5shuf__chunkio_free(cio);
    free(want);
    free(got);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* ---- chunks that split rows: chunk rows of blocks ---------------------------------------------------- */

#define SROWS 37u /* (37, 6, 5) int32 in chunks of (4, 4, 2): edge chunks in every dimension */
static const hsize_t sdims[3] = {SROWS, 6, 5}, scdims[3] = {4, 4, 2};

static hid_t make_sdset(hid_t file, const char *name, const struct wpipe *p, hsize_t rows, int fill)
{
    hsize_t dims[3] = {rows, sdims[1], sdims[2]}, maxdims[3] = {H5S_UNLIMITED, sdims[1], sdims[2]};
    hid_t dcpl = wpipe_dcpl(p, 3, scdims);
    int fv = 5;
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fv); /* a fill value, never written (as h5shuf's outputs) */
    H5Pset_fill_time(dcpl, fill ? H5D_FILL_TIME_IFSET : H5D_FILL_TIME_NEVER);
    hid_t space = H5Screate_simple(3, dims, maxdims);
    hid_t d = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(space);
    H5Pclose(dcpl);
    return d;
}

/* Every pipeline on chunks that split rows: chunkio writes bands of two chunk rows with 2 threads (the
 * last band partial) and stores every chunk as HDF5's H5Dwrite stores it: filter mask, decoded bytes (the
 * part of edge chunks beyond the extent zero) and, but for deflate (libdeflate's encoder), stored bytes
 * and place in the file (so the chunks are stored in HDF5's order); it reads back any range of rows as
 * H5Dread does, into buffers exactly their size; and chunks never written read as the fill value. */
static void test_split_chunks_match_hdf5(void)
{
    char *dir = tu_mkdtemp();
    const size_t row = sdims[1] * sdims[2] * sizeof(int32_t), all = SROWS * row;
    int32_t *x = malloc(all);
    uint64_t st = 5;
    for (size_t i = 0; i < all / sizeof *x; i++) /* half smooth, half random (lzf skipped) */
        x[i] = i < all / sizeof *x / 2 ? (int32_t)(i / 3 % 100) : (int32_t)tu_splitmix64(&st);
    unsigned char *got = malloc(all);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    for (size_t i = 0; i < sizeof wpipes / sizeof *wpipes; i++) {
        const struct wpipe *p = &wpipes[i];
        /* one file each, HDF5's and ours, written the same way: chunk addresses must match too */
        char fa[32], fb[32];
        snprintf(fa, sizeof fa, "split-hdf5-%zu.h5", i);
        snprintf(fb, sizeof fb, "split-ours-%zu.h5", i);
        hid_t f1 = create_untimed(tu_path(dir, fa)), f2 = create_untimed(tu_path(dir, fb));
        hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
        H5Pset_chunk_cache(dapl, 521, 0, 1.0); /* as h5shuf's outputs: each chunk stored when written */
        hid_t dh = make_sdset(f1, "x", p, 0, 0), dour = make_sdset(f2, "x", p, 0, 0);
        ASSERT_GE_INT_FATAL(dh, 0);
        ASSERT_GE_INT_FATAL(dour, 0);
        H5Dclose(dh);
        dh = H5Dopen2(f1, "x", dapl);
        struct h5shuf_pipeline pl;
        ASSERT_EQ_INT(h5shuf__pipeline_probe(dour, H5T_STD_I32LE, &pl), 0);
        CU_ASSERT(pl.direct);
        CU_ASSERT(pl.split);
        ASSERT_EQ_INT(pl.chunks_per_row, 2 * 3);
        for (hsize_t r = 0; r < SROWS; r += 2 * scdims[0]) {
            hsize_t n = r + 2 * scdims[0] <= SROWS ? 2 * scdims[0] : SROWS - r;
            unsigned char *rows = malloc(n * row);
            memcpy(rows, (const unsigned char *)x + r * row, n * row);
            ASSERT_GE_INT(h5shuf__chunkio_write(cio, dour, H5T_STD_I32LE, r, n, rows, 1), 0);
            ASSERT_GE_INT(h5shuf__write_rows(dh, H5T_STD_I32LE, r, n, rows, 1), 0);
            ASSERT_EQ_MEM(rows, (const unsigned char *)x + r * row, n * row);
            free(rows);
        }
        int same = 1;
        hsize_t nchunks = 0, nours = 0;
        hid_t sp = H5Dget_space(dh); /* (HDF5 1.10.8 refuses H5S_ALL here) */
        ASSERT_GE_INT(H5Dget_num_chunks(dh, sp, &nchunks), 0);
        ASSERT_GE_INT(H5Dget_num_chunks(dour, sp, &nours), 0);
        ASSERT_EQ_INT(nchunks, 10 * 2 * 3);
        ASSERT_EQ_INT(nours, nchunks);
        for (hsize_t c = 0; c < nchunks && nours == nchunks; c++) {
            hsize_t oh[3], oo[3], sh = 0, so = 0;
            haddr_t ah = 0, ao = 0;
            unsigned mh = 99, mo = 98;
            H5Dget_chunk_info(dh, sp, c, oh, &mh, &ah, &sh);
            H5Dget_chunk_info(dour, sp, c, oo, &mo, &ao, &so);
            unsigned char *bh = malloc(sh ? sh : 1), *bo = malloc(so ? so : 1);
            uint32_t m1 = 0, m2 = 0;
            ASSERT_GE_INT(H5Dread_chunk(dh, H5P_DEFAULT, oh, &m1, bh), 0);
            ASSERT_GE_INT(H5Dread_chunk(dour, H5P_DEFAULT, oo, &m2, bo), 0);
            same = same && memcmp(oh, oo, sizeof oh) == 0 && mh == mo &&
                   (wpipe_deflates(p) || (ah == ao && sh == so && memcmp(bh, bo, sh) == 0));
            free(bh);
            free(bo);
        }
        H5Sclose(sp);
        same = same && tu_same_chunks(dh, dour);
        if (!same)
            fprintf(stderr, "pipeline %s, split chunks: chunks differ from HDF5's\n", p->name);
        CU_ASSERT(same);
        /* in: any range of rows, whole chunk rows or not, as H5Dread reads it */
        static const hsize_t ranges[][2] = {{0, SROWS}, {3, 30}, {36, 1}, {8, 4}};
        for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
            unsigned char *rows = malloc(ranges[k][1] * row);
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, dh, H5T_STD_I32LE, ranges[k][0], ranges[k][1], rows), 0);
            ASSERT_EQ_MEM(rows, (const unsigned char *)x + ranges[k][0] * row, ranges[k][1] * row);
            free(rows);
        }
        H5Dclose(dh);
        H5Dclose(dour);
        H5Pclose(dapl);
        H5Fclose(f1);
        H5Fclose(f2);
        /* the files: the same bytes (the same chunks at the same places, the same index), but for deflate */
        CU_ASSERT(wpipe_deflates(p) || tu_same_bytes(tu_path(dir, fa), tu_path(dir, fb)));
    }
    /* chunks never written: their fill value, read by HDF5, beside chunks decoded by the threads */
    hid_t f = H5Fcreate(tu_path(dir, "sparse.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t d = make_sdset(f, "x", &wpipes[3], SROWS, 1);
    hsize_t off[3] = {4, 2, 2}, cnt[3] = {20, 3, 3};
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, sdims, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL);
    H5Sselect_hyperslab(ms, H5S_SELECT_SET, off, NULL, cnt, NULL);
    ASSERT_GE_INT(H5Dwrite(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, x), 0);
    H5Sclose(fs);
    H5Sclose(ms);
    unsigned char *want = malloc(all);
    ASSERT_GE_INT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
    memset(got, 0xff, all);
    ASSERT_GE_INT(h5shuf__chunkio_read(cio, d, H5T_STD_I32LE, 0, SROWS, got), 0);
    ASSERT_EQ_MEM(got, want, all);
    ASSERT_EQ_INT(((const int32_t *)got)[0], 5);
    free(want);
    H5Dclose(d);
    H5Fclose(f);
    h5shuf__chunkio_free(cio);
    free(got);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* Dataset "x" of new file path: type, rank 4, no rows yet (extendible along dim 0) of dims[1:], chunks
 * cdims with pipe p's filters, no fill written, no chunk cache (as h5shuf's outputs).  The file is
 * returned in *file. */
static hid_t make_4d(const char *path, hid_t type, const hsize_t *dims, const hsize_t *cdims, const struct wpipe *p,
                     hid_t *file)
{
    *file = create_untimed(path);
    hsize_t zero[4] = {0, dims[1], dims[2], dims[3]}, maxdims[4] = {H5S_UNLIMITED, dims[1], dims[2], dims[3]};
    hid_t dcpl = wpipe_dcpl(p, 4, cdims), space = H5Screate_simple(4, zero, maxdims);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 521, 0, 1.0); /* each chunk stored when written, as h5shuf's outputs */
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    hid_t d = H5Dcreate2(*file, "x", type, space, H5P_DEFAULT, dcpl, dapl);
    H5Sclose(space);
    H5Pclose(dcpl);
    H5Pclose(dapl);
    return d;
}

/* Split chunks whose runs are short (the last dimension split to one element, as h5py's (2500, 4, 8, 1)
 * chunks of uint8 images; runs of 1, 2, 3 and 6 bytes) under deflate: written by chunkio as HDF5 writes
 * them (the same chunks, filter masks and decoded bytes), and any rows read back as written. */
static void test_split_short_runs(void)
{
    static const struct {
        int wide; /* int16, else uint8 */
        hsize_t cdims[4];
    } cases[] = {
        {0, {4, 4, 2, 1}}, /* runs of 1 byte, 8 a row */
        {1, {4, 4, 5, 1}}, /* 2 bytes; edge chunks of 2 along dim 1 */
        {0, {3, 6, 1, 3}}, /* 3 bytes */
        {1, {5, 5, 4, 3}}, /* 6 bytes */
    };
    const hsize_t dims[4] = {SROWS, 6, 5, 3};
    char *dir = tu_mkdtemp();
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const hid_t type = cases[i].wide ? H5T_STD_I16LE : H5T_STD_U8LE;
        const size_t tb = H5Tget_size(type), row = dims[1] * dims[2] * dims[3] * tb, all = SROWS * row;
        unsigned char *x = malloc(all), *got = malloc(all);
        uint64_t st = 17 + i;
        for (size_t b = 0; b < all; b++) /* half smooth, half random */
            x[b] = b < all / 2 ? (unsigned char)(b / 5 % 7) : (unsigned char)tu_splitmix64(&st);
        char fa[32], fb[32];
        snprintf(fa, sizeof fa, "short-hdf5-%zu.h5", i);
        snprintf(fb, sizeof fb, "short-ours-%zu.h5", i);
        hid_t file[2], d[2];
        for (int w = 0; w < 2; w++)
            d[w] = make_4d(tu_path(dir, w ? fb : fa), type, dims, cases[i].cdims, &wpipes[0], &file[w]);
        struct h5shuf_pipeline pl;
        ASSERT_EQ_INT(h5shuf__pipeline_probe(d[1], type, &pl), 0);
        CU_ASSERT(pl.direct);
        CU_ASSERT(pl.split);
        for (hsize_t r = 0; r < SROWS; r += 2 * cases[i].cdims[0]) {
            hsize_t n = r + 2 * cases[i].cdims[0] <= SROWS ? 2 * cases[i].cdims[0] : SROWS - r;
            ASSERT_GE_INT(h5shuf__write_rows(d[0], type, r, n, x + r * row, 1), 0);
            ASSERT_GE_INT(h5shuf__chunkio_write(cio, d[1], type, r, n, x + r * row, 1), 0);
        }
        static const hsize_t ranges[][2] = {{0, SROWS}, {2, 31}, {36, 1}};
        for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
            memset(got, 0xa5, all);
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, d[1], type, ranges[k][0], ranges[k][1], got), 0);
            ASSERT_EQ_MEM(got, x + ranges[k][0] * row, ranges[k][1] * row);
        }
        CU_ASSERT(tu_same_chunks(d[0], d[1])); /* (deflate: compared decoded) */
        for (int w = 0; w < 2; w++) {
            H5Dclose(d[w]);
            H5Fclose(file[w]);
        }
        free(x);
        free(got);
    }
    h5shuf__chunkio_free(cio);
    tu_rmtree(dir);
    free(dir);
}

/* Split chunks move in groups of a chunk row's chunks (up to 1 MiB of them, chunkio.c GROUP_BYTES): with
 * 17 chunks of 64 KiB a chunk row, groups of 15 and 2; three pipelines (a codec, fletcher32 or a skipped
 * lzf last to decode).  Written as HDF5 writes them (the same chunks, decoded bytes and, but for deflate,
 * file bytes);
 * read back through a prefetch (decoded in groups, a chunk HDF5 never wrote among them read by HDF5 as its
 * fill value) and through chunkio_read, as H5Dread reads them. */
static void test_split_groups(void)
{
    const hsize_t dims[4] = {40, 64, 64, 17}, cdims[4] = {16, 64, 64, 1};
    const size_t row = 64 * 64 * 17, all = 40 * row;
    char *dir = tu_mkdtemp();
    unsigned char *x = malloc(all), *got = malloc(all), *want = malloc(all);
    uint64_t st = 29;
    for (size_t b = 0; b < all; b++) /* half smooth, half random */
        x[b] = b < all / 2 ? (unsigned char)(b / 9 % 11) : (unsigned char)tu_splitmix64(&st);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
    /* a codec last; fletcher32 last to decode; lzf or lzo skipped on the random half, then fletcher32 */
#ifdef H5SHUF_HAVE_LZO
    static const size_t which[] = {3, 5, 7, 11};
#else
    static const size_t which[] = {3, 5, 7};
#endif
    for (size_t i = 0; i < sizeof which / sizeof *which; i++) {
        const struct wpipe *p = &wpipes[which[i]];
        char fa[32], fb[32], fs[32];
        snprintf(fa, sizeof fa, "groups-hdf5-%zu.h5", i);
        snprintf(fb, sizeof fb, "groups-ours-%zu.h5", i);
        snprintf(fs, sizeof fs, "groups-sparse-%zu.h5", i);
        hid_t file[2], d[2];
        for (int w = 0; w < 2; w++)
            d[w] = make_4d(tu_path(dir, w ? fb : fa), H5T_STD_U8LE, dims, cdims, p, &file[w]);
        struct h5shuf_pipeline pl;
        ASSERT_EQ_INT(h5shuf__pipeline_probe(d[1], H5T_STD_U8LE, &pl), 0);
        CU_ASSERT(pl.direct);
        CU_ASSERT(pl.split);
        ASSERT_EQ_INT(pl.chunks_per_row, 17);
        for (hsize_t r = 0; r < dims[0]; r += 2 * cdims[0]) { /* bands of two chunk rows, the last partial */
            hsize_t n = r + 2 * cdims[0] <= dims[0] ? 2 * cdims[0] : dims[0] - r;
            ASSERT_GE_INT(h5shuf__write_rows(d[0], H5T_STD_U8LE, r, n, x + r * row, 1), 0);
            ASSERT_GE_INT(h5shuf__chunkio_write(cio, d[1], H5T_STD_U8LE, r, n, x + r * row, 1), 0);
        }
        const int same = tu_same_chunks(d[0], d[1]);
        for (int w = 0; w < 2; w++) {
            H5Dclose(d[w]);
            H5Fclose(file[w]);
        }
        const int same_file = wpipe_deflates(p) || tu_same_bytes(tu_path(dir, fa), tu_path(dir, fb));
        if (!same || !same_file)
            fprintf(stderr, "pipeline %s, groups: chunks differ from HDF5's\n", p->name);
        CU_ASSERT(same && same_file);
        /* a file with chunk (16, 0, 0, 3) never written (fill value 7), in the middle of the first group */
        hid_t f = H5Fcreate(tu_path(dir, fs), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t dcpl = wpipe_dcpl(p, 4, cdims), space = H5Screate_simple(4, dims, NULL);
        unsigned char fv = 7;
        H5Pset_fill_value(dcpl, H5T_NATIVE_UCHAR, &fv);
        hid_t dset = H5Dcreate2(f, "x", H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        hsize_t hole[4] = {16, 0, 0, 3};
        ASSERT_GE_INT(H5Sselect_all(space), 0);
        ASSERT_GE_INT(H5Sselect_hyperslab(space, H5S_SELECT_NOTB, hole, NULL, cdims, NULL), 0);
        ASSERT_GE_INT(H5Dwrite(dset, H5T_NATIVE_UCHAR, space, space, H5P_DEFAULT, x), 0);
        ASSERT_GE_INT(H5Dread(dset, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
        ASSERT_EQ_INT(want[16 * row + 3], 7);
        ASSERT_EQ_MEM(want, x, 16 * row);
        static const hsize_t ranges[][2] = {{0, 40}, {5, 30}, {39, 1}};
        for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
            struct h5shuf_prefetch *pf = h5shuf__prefetch_new();
            CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
            memset(got, 0xa5, all);
            ASSERT_GE_INT(h5shuf__prefetch_start(cio, dset, H5T_STD_U8LE, ranges[k][0], ranges[k][1], got, pf), 0);
            ASSERT_GE_INT(h5shuf__prefetch_finish(cio, pf), 0);
            ASSERT_EQ_MEM(got, want + ranges[k][0] * row, ranges[k][1] * row);
            h5shuf__prefetch_free(cio, pf);
            memset(got, 0xa5, all);
            ASSERT_GE_INT(h5shuf__chunkio_read(cio, dset, H5T_STD_U8LE, ranges[k][0], ranges[k][1], got), 0);
            ASSERT_EQ_MEM(got, want + ranges[k][0] * row, ranges[k][1] * row);
        }
        H5Sclose(space);
        H5Pclose(dcpl);
        H5Dclose(dset);
        H5Fclose(f);
    }
    h5shuf__chunkio_free(cio);
    free(x);
    free(got);
    free(want);
    tu_rmtree(dir);
    free(dir);
}

/* Moving one whole chunk in and one out, with 2 threads, holds one raw buffer (about the stored size of
 * the chunk read, then the encoding bound of the one written) and only the stage buffers the pipeline needs:
 * none for one codec, one a thread for shuffle + codec. */
static void test_one_chunk_buffers(void)
{
    char *dir = tu_mkdtemp();
    const size_t row = WCOLS * sizeof(int32_t);
    int32_t *x = wvalues();
    unsigned char *rows = malloc(row);
    hid_t f = H5Fcreate(tu_path(dir, "one.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    for (size_t i = 0; i < sizeof wpipes / sizeof *wpipes; i++) {
        const struct wpipe *p = &wpipes[i];
        struct h5shuf_chunkio *cio;
        ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
        unsigned threads = h5shuf__chunkio_threads(cio);
        char a[64], b[64];
        snprintf(a, sizeof a, "in-%zu", i);
        snprintf(b, sizeof b, "out-%zu", i);
        hid_t din = make_wdset(f, a, p, WROWS, 1, WCOLS), dout = make_wdset(f, b, p, 0, 1, WCOLS);
        ASSERT_GE_INT_FATAL(din, 0);
        ASSERT_GE_INT_FATAL(dout, 0);
        ASSERT_GE_INT(H5Dwrite(din, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0);
        hsize_t off[2] = {0, 0}, stored = 0;
        ASSERT_GE_INT(H5Dget_chunk_storage_size(din, off, &stored), 0);
        size_t raw, stage_bytes;
        unsigned stages;
        ASSERT_GE_INT(h5shuf__chunkio_read(cio, din, H5T_STD_I32LE, 0, 1, rows), 0);
        h5shuf__chunkio_held(cio, &raw, &stages, &stage_bytes);
        ASSERT_GE_INT(raw, stored);
        ASSERT_LE_INT(raw, stored + stored / 8); /* the stored size, and room for a little more */
        ASSERT_LE_INT(stages, p->stages * threads);
        if (p->stages) {
            ASSERT_GE_INT(stages, p->stages);
            ASSERT_LE_INT(stage_bytes, stages * (row + row / 16 + 4096));
        } else
            ASSERT_EQ_INT(stages, 0);
        ASSERT_GE_INT(h5shuf__chunkio_write(cio, dout, H5T_STD_I32LE, 0, 1, rows, 1), 0);
        h5shuf__chunkio_held(cio, &raw, &stages, &stage_bytes);
        ASSERT_GE_INT(raw, row);
        ASSERT_LE_INT(raw, row + row / 16 + 4096); /* the same slot, grown to the encoding bound */
        ASSERT_LE_INT(stages, p->stages * threads);
        if (p->stages)
            ASSERT_GE_INT(stages, p->stages);
        else
            ASSERT_EQ_INT(stages, 0);
        if (stages > p->stages * threads || (!p->stages && stages))
            fprintf(stderr, "pipeline %s: %u stage buffers\n", p->name, stages);
        H5Dclose(din);
        H5Dclose(dout);
        h5shuf__chunkio_free(cio);
    }
    H5Fclose(f);
    free(rows);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* A whole chunk whose stored stream decodes to more bytes than its rows (the chunk of a dataset with
 * wider rows), or to fewer: a clean error naming a corrupt chunk, the decoder stopped at the end of the
 * caller's rows (the buffer is exactly their size: ASan sees any write past it). */
static void test_whole_chunk_wrong_size(void)
{
    char *dir = tu_mkdtemp();
    const size_t row = WCOLS * sizeof(int32_t);
    int32_t *x = wvalues();
    hid_t f = H5Fcreate(tu_path(dir, "bad.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &cio), H5SHUF_OK);
#ifdef H5SHUF_HAVE_LZO
    static const size_t which[] = {0, 1, 2, 3, 10}; /* deflate, zstd, lzf, shuffle+deflate, lzo */
#else
    static const size_t which[] = {0, 1, 2, 3}; /* deflate, zstd, lzf, shuffle+deflate */
#endif
    static const int wider[] = {16, -16};
    for (size_t w = 0; w < sizeof which / sizeof *which; w++)
        for (size_t k = 0; k < 2; k++) {
            const struct wpipe *p = &wpipes[which[w]];
            char a[64], b[64];
            snprintf(a, sizeof a, "twin-%zu-%zu", w, k);
            snprintf(b, sizeof b, "bad-%zu-%zu", w, k);
            hid_t twin = make_wdset(f, a, p, 1, 1, (hsize_t)((int)WCOLS + wider[k]));
            ASSERT_GE_INT_FATAL(twin, 0);
            ASSERT_GE_INT(H5Dwrite(twin, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x), 0); /* smooth rows */
            hsize_t n;
            uint32_t mask;
            unsigned char *stream = tu_raw_chunk(twin, 0, &n, &mask);
            CU_ASSERT_PTR_NOT_NULL_FATAL(stream);
            ASSERT_EQ_INT_FATAL(mask, 0);
            H5Dclose(twin);
            hid_t d = make_wdset(f, b, p, 1, 1, WCOLS);
            hsize_t off[2] = {0, 0};
            ASSERT_GE_INT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, (size_t)n, stream), 0);
            free(stream);
            unsigned char *rows = malloc(row);
            H5Eclear2(H5E_DEFAULT);
            ASSERT_LT_INT(h5shuf__chunkio_read(cio, d, H5T_STD_I32LE, 0, 1, rows), 0);
            char cause[256];
            h5shuf__hdf5_cause(cause, sizeof cause);
            if (!strstr(cause, "corrupt"))
                fprintf(stderr, "pipeline %s, rows %+d: %s\n", p->name, wider[k], cause);
            ASSERT_HAS_STR(cause, "corrupt");
            free(rows);
            H5Dclose(d);
        }
    H5Fclose(f);
    h5shuf__chunkio_free(cio);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* Chunks encoded ahead (pass 1's pile flushes) still queued while a read of larger chunks makes the
 * threads grow their stage buffers: each thread grows only its own, between two of its tasks, so both
 * come out right (and ThreadSanitizer, which CI runs this under, sees no race). */
static void test_encode_ahead_during_growth(void)
{
    char *dir = tu_mkdtemp();
    float *x = values();
    int32_t *w = wvalues();
    const size_t all = (size_t)WROWS * WCOLS * sizeof(int32_t);
    int32_t *want = malloc(all), *got = malloc(all);
    float *back = malloc(ROWS * COLS * sizeof *back);
    struct h5shuf_chunkio *cio;
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(3, &cio), H5SHUF_OK);
    hid_t f = H5Fcreate(tu_path(dir, "ahead.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const unsigned nchunks = ROWS / CHUNK_ROWS;
    hid_t small = make_dset(f, "small", &pipes[7], (hsize_t)nchunks * CHUNK_ROWS); /* shuffle+gzip:1+fletcher32 */
    hid_t large = make_wdset(f, "large", &wpipes[9], WROWS, 1, WCOLS);            /* shuffle+deflate+zstd: 2 stages */
    ASSERT_GE_INT_FATAL(small, 0);
    ASSERT_GE_INT_FATAL(large, 0);
    ASSERT_GE_INT(H5Dwrite(large, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, w), 0);
    ASSERT_GE_INT(H5Dread(large, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, want), 0);
    struct h5shuf_pipeline pl;
    ASSERT_EQ_INT_FATAL(h5shuf__pipeline_probe(small, H5T_IEEE_F32LE, &pl), 0);
    CU_ASSERT_FATAL(pl.direct);
    struct h5shuf_chunk *c[ROWS / CHUNK_ROWS];
    for (unsigned i = 0; i < nchunks; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(c[i] = h5shuf__chunk_new());
        /* every other chunk stored as its rows, its filters skipped in its mask (a scratch beyond the
         * page cache whose writes do not wait for the disk, writepace.h) */
        ASSERT_EQ_INT(h5shuf__chunk_encode_start(cio, &pl, x + (size_t)i * CHUNK_ROWS * COLS, CHUNK_ROWS, i % 2, c[i]), 0);
    }
    ASSERT_GE_INT(h5shuf__chunkio_read(cio, large, H5T_STD_I32LE, 0, WROWS, got), 0);
    ASSERT_EQ_MEM(got, want, all);
    for (unsigned i = 0; i < nchunks; i++) {
        ASSERT_GE_INT(h5shuf__chunk_write(cio, small, (uint64_t)i * CHUNK_ROWS, c[i]), 0);
        h5shuf__chunk_free(cio, c[i]);
    }
    ASSERT_GE_INT(H5Dread(small, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0); /* HDF5's filters */
    ASSERT_EQ_MEM(back, x, (size_t)nchunks * CHUNK_ROWS * COLS * sizeof *x);
    memset(back, 0, (size_t)nchunks * CHUNK_ROWS * COLS * sizeof *x);
    ASSERT_GE_INT(h5shuf__chunkio_read(cio, small, H5T_IEEE_F32LE, 0, (uint64_t)nchunks * CHUNK_ROWS, back), 0); /* ours */
    ASSERT_EQ_MEM(back, x, (size_t)nchunks * CHUNK_ROWS * COLS * sizeof *x);
    unsigned mask = 99;
    hsize_t off[2] = {CHUNK_ROWS, 0}, size = 0;
    haddr_t addr;
    ASSERT_GE_INT(H5Dget_chunk_info_by_coord(small, off, &mask, &addr, &size), 0);
    ASSERT_EQ_INT(mask, 7); /* chunk 1: its three filters skipped, */
    ASSERT_EQ_INT(size, (hsize_t)CHUNK_ROWS * COLS * sizeof *x); /* its rows as they are */
    H5Dclose(small);
    H5Dclose(large);
    H5Fclose(f);
    h5shuf__chunkio_free(cio);
    free(want);
    free(got);
    free(back);
    free(w);
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* A whole shuffle: output file byte-identical for 1, 2, 3 and 5 threads; input and output filters each
 * run by the pool (gzip+shuffle+fletcher32 in, zstd+shuffle out) and by HDF5 (nbit in, scaleoffset out
 * would not be byte-stable across versions, so: gzip in, chunk-splitting out). */
static void test_threads_same_bytes(void)
{
    char *dir = tu_mkdtemp();
    float *x = values();
    hsize_t dims[2] = {ROWS, COLS};
    struct tu_layout lay = {H5D_CHUNKED, 50, 4, 1, 1};
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, "in.h5"), 1, "/x", H5T_IEEE_F32LE, 2, dims, &lay, x), 0);
    char in[4200];
    snprintf(in, sizeof in, "%s:/x", tu_path(dir, "in.h5"));
    const char *inputs[] = {in};
    static const char *outs[][2] = {{"gzip:6+shuffle+fletcher32", NULL}, {"zstd:2+shuffle", NULL}, {"keep", "7x6"}};
    for (size_t o = 0; o < sizeof outs / sizeof *outs; o++) {
        char first[4200] = "";
        static const unsigned threads[] = {1, 2, 3, 5};
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
            h5shuf_options opts;
            h5shuf_options_init(&opts);
            opts.seed = 99;
            opts.seed_set = 1;
            opts.threads = threads[t];
            opts.mem_limit_bytes = 64 << 10; /* several piles */
            opts.compression = outs[o][0];
            opts.chunk_shape = outs[o][1];
            char name[64], msg[1024];
            snprintf(name, sizeof name, "out-%zu-%u.h5", o, threads[t]);
            ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(dir, name), &opts, msg, sizeof msg), H5SHUF_OK);
            if (t == 0)
                snprintf(first, sizeof first, "%s", tu_path(dir, name));
            else
                CU_ASSERT(tu_same_bytes(first, tu_path(dir, name)));
        }
        /* and the rows are the reference shuffle's */
        uint64_t rows, rb;
        float *got = tu_read(first, "/x", &rows, &rb);
        float *want = malloc(ROWS * COLS * sizeof *want);
        tu_reference(99, x, ROWS, COLS * sizeof(float), want);
        CU_ASSERT_PTR_NOT_NULL(got);
        ASSERT_EQ_INT(rows, ROWS);
        if (rows == ROWS)
            ASSERT_EQ_MEM(got, want, ROWS * COLS * sizeof *want);
        free(got);
        free(want);
    }
    free(x);
    tu_rmtree(dir);
    free(dir);
}

/* A chunk whose fletcher32 checksum does not match: a clean error naming the dataset. */
static void test_corrupt_checksum(void)
{
    char *dir = tu_mkdtemp();
    float *x = values();
    hsize_t dims[2] = {ROWS, COLS};
    struct tu_layout lay = {H5D_CHUNKED, CHUNK_ROWS, 0, 0, 1};
    const char *file = tu_path(dir, "flet.h5");
    ASSERT_EQ_INT_FATAL(tu_write(file, 1, "/x", H5T_IEEE_F32LE, 2, dims, &lay, x), 0);
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/x", H5P_DEFAULT);
    hid_t space = H5Dget_space(d);
    haddr_t addr;
    hsize_t size, off[2];
    unsigned mask;
    ASSERT_GE_INT_FATAL(H5Dget_chunk_info(d, space, 4, off, &mask, &addr, &size), 0);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
    FILE *fp = fopen(file, "r+b");
    fseek(fp, (long)(addr + 100), SEEK_SET);
    fputc(0x5a ^ (int)((const unsigned char *)x)[100 + 4 * CHUNK_ROWS * COLS * sizeof(float)], fp);
    fclose(fp);
    char in[4200], msg[1024];
    snprintf(in, sizeof in, "%s:/x", file);
    const char *inputs[] = {in};
    h5shuf_options opts;
    h5shuf_options_init(&opts);
    opts.threads = 2;
    ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(dir, "out.h5"), &opts, msg, sizeof msg), H5SHUF_EIO);
    CU_ASSERT(strstr(msg, "flet.h5:/x") && strstr(msg, "fletcher32") && !strchr(msg, '\n'));
    free(x);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    h5shuf_register_zstd();
    h5shuf__filters_register(); /* lzf too */
    static const struct tu_test tests[] = {
        {"encoded chunks are HDF5's (zlib-readable for deflate)", test_encodings_match_hdf5},
        {"decoded rows equal H5Dread's", test_decode_matches_hdf5},
        {"pipelines h5shuf cannot run fall back to HDF5", test_fallback_pipelines},
        {"output byte-identical for 1, 2, 3, 5 threads", test_threads_same_bytes},
        {"corrupt fletcher32 chunk: clean error", test_corrupt_checksum},
        {"whole chunks straight from and into the rows match HDF5's", test_whole_chunks_match_hdf5},
        {"chunks that split rows: HDF5's bytes, order and places; any rows read back", test_split_chunks_match_hdf5},
        {"split chunks of short runs (1, 2, 3, 6 bytes): HDF5's bytes, rows read back", test_split_short_runs},
        {"split chunks in groups (15 and 2 a chunk row): HDF5's bytes, prefetched as H5Dread reads", test_split_groups},
        {"one chunk moved holds one raw buffer and only the stages its pipeline needs", test_one_chunk_buffers},
        {"a whole chunk that decodes to the wrong size: clean error", test_whole_chunk_wrong_size},
        {"chunks encoded ahead (or stored as rows) while the threads grow their stage buffers",
         test_encode_ahead_during_growth},
        {NULL, NULL},
    };
    return tu_main("chunkio", tests);
}
