/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_compression.c - output filters and chunk shapes as asked, zstd output read back, compressed
 * scratch that changes no output byte, and a corrupt zstd chunk reported as a clean error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_zstd.h"
#include "testutil.h"

struct pipeline {
    int n;
    H5Z_filter_t id[8];
    unsigned cd0[8];
    hsize_t chunk[8];
    int chunked;
};

static struct pipeline pipeline_of(const char *file, const char *path)
{
    struct pipeline p = {0};
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(d);
    p.chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
    if (p.chunked)
        H5Pget_chunk(dcpl, 8, p.chunk);
    p.n = H5Pget_nfilters(dcpl);
    for (int i = 0; i < p.n && i < 8; i++) {
        unsigned flags, cd[8] = {0}, cfg;
        size_t ncd = 8;
        p.id[i] = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, &cfg);
        p.cd0[i] = cd[0];
    }
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    return p;
}

struct fixture {
    char *dir, in[4200];
    float *x;
    uint64_t n, cols;
};

static void setup(struct fixture *fx, int chunked)
{
    fx->dir = tu_mkdtemp();
    fx->n = 3000;
    fx->cols = 12;
    fx->x = malloc(fx->n * fx->cols * sizeof *fx->x);
    for (uint64_t i = 0; i < fx->n * fx->cols; i++)
        fx->x[i] = (float)((i * 2654435761u) % 1000) / 256.0f; /* compressible, like real features */
    hsize_t dims[] = {fx->n, fx->cols};
    struct tu_layout lay = {chunked ? H5D_CHUNKED : H5D_CONTIGUOUS, 250, chunked ? 4 : 0, 0, 0};
    snprintf(fx->in, sizeof fx->in, "%s", tu_path(fx->dir, "in.h5"));
    ASSERT_EQ_INT_FATAL(tu_write(fx->in, 1, "/x", H5T_IEEE_F32LE, 2, dims, &lay, fx->x), 0);
}

static void teardown(struct fixture *fx)
{
    free(fx->x);
    tu_rmtree(fx->dir);
    free(fx->dir);
}

/* Shuffle fx's input with compression / chunk shape / scratch spec; check the data against the
 * reference; return the output path (static slot). */
static const char *run(struct fixture *fx, const char *name, const char *comp, const char *chunk, const char *scratch)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = 11;
    o.seed_set = 1;
    o.compression = comp;
    o.chunk_shape = chunk;
    o.scratch_compression = scratch;
    o.mem_limit_bytes = 5 << 20; /* several piles */
    const char *out = tu_path(fx->dir, name);
    const char *inputs[] = {fx->in};
    char msg[1024];
    int st = tu_shuffle(inputs, 1, out, &o, msg, sizeof msg);
    ASSERT_EQ_INT(st, H5SHUF_OK);
    if (st != H5SHUF_OK) {
        fprintf(stderr, "\n  %s: %s\n", name, msg);
        return out;
    }
    uint64_t rows, rb;
    float *got = tu_read(out, "/x", &rows, &rb), *want = malloc(fx->n * fx->cols * sizeof *want);
    tu_reference(11, fx->x, fx->n, fx->cols * sizeof(float), want);
    CU_ASSERT_PTR_NOT_NULL(got);
    ASSERT_EQ_INT(rows, fx->n);
    if (rows == fx->n)
        ASSERT_EQ_MEM(got, want, fx->n * fx->cols * sizeof(float));
    free(got);
    free(want);
    return out;
}

static void test_output_filters_as_asked(void)
{
    struct fixture fx;
    setup(&fx, 1);
    struct pipeline p = pipeline_of(run(&fx, "zstd.h5", "zstd:3+shuffle", NULL, NULL), "/x");
    CU_ASSERT(p.chunked);
    ASSERT_EQ_INT(p.chunk[0], 250);
    ASSERT_EQ_INT(p.chunk[1], 12); /* chunk shape kept */
    ASSERT_EQ_INT(p.n, 2);
    ASSERT_EQ_INT(p.id[0], H5Z_FILTER_SHUFFLE);
    ASSERT_EQ_INT(p.id[1], H5SHUF_FILTER_ZSTD);
    ASSERT_EQ_INT(p.cd0[1], 3);

    p = pipeline_of(run(&fx, "gzip.h5", "gzip:6+fletcher32", "100", NULL), "/x");
    CU_ASSERT(p.chunked);
    ASSERT_EQ_INT(p.chunk[0], 100);
    ASSERT_EQ_INT(p.chunk[1], 12);
    ASSERT_EQ_INT(p.n, 2);
    ASSERT_EQ_INT(p.id[0], H5Z_FILTER_DEFLATE);
    ASSERT_EQ_INT(p.cd0[0], 6);
    ASSERT_EQ_INT(p.id[1], H5Z_FILTER_FLETCHER32);

    p = pipeline_of(run(&fx, "none.h5", "none", "64x6", NULL), "/x");
    CU_ASSERT(p.chunked);
    ASSERT_EQ_INT(p.chunk[0], 64);
    ASSERT_EQ_INT(p.chunk[1], 6);
    ASSERT_EQ_INT(p.n, 0);

    p = pipeline_of(run(&fx, "keep.h5", NULL, NULL, NULL), "/x");
    CU_ASSERT(p.chunked);
    ASSERT_EQ_INT(p.chunk[0], 250);
    ASSERT_EQ_INT(p.n, 1);
    ASSERT_EQ_INT(p.id[0], H5Z_FILTER_DEFLATE);
    ASSERT_EQ_INT(p.cd0[0], 4);

    p = pipeline_of(run(&fx, "neg.h5", "zstd:-3", NULL, NULL), "/x");
    ASSERT_EQ_INT(p.n, 1);
    ASSERT_EQ_INT(p.id[0], H5SHUF_FILTER_ZSTD);
    ASSERT_EQ_INT((int)p.cd0[0], -3);
    teardown(&fx);
}

/* An unchunked input that gets filters is chunked, rows of about 1 MiB capped at N. */
static void test_contiguous_gets_chunked(void)
{
    struct fixture fx;
    setup(&fx, 0);
    struct pipeline p = pipeline_of(run(&fx, "z.h5", "zstd", NULL, NULL), "/x");
    CU_ASSERT(p.chunked);
    ASSERT_EQ_INT(p.chunk[0], fx.n);
    ASSERT_EQ_INT(p.chunk[1], fx.cols);
    p = pipeline_of(run(&fx, "c.h5", NULL, NULL, NULL), "/x");
    CU_ASSERT(!p.chunked);
    ASSERT_EQ_INT(p.n, 0);
    teardown(&fx);
}

/* Scratch compression is invisible in the output: the same bytes with and without it. */
static void test_scratch_compression_invisible(void)
{
    struct fixture fx;
    setup(&fx, 1);
    const char *a = run(&fx, "a.h5", "zstd:1", NULL, NULL);
    char first[4200];
    snprintf(first, sizeof first, "%s", a);
    CU_ASSERT(tu_same_bytes(first, run(&fx, "b.h5", "zstd:1", NULL, "none")));
    CU_ASSERT(tu_same_bytes(first, run(&fx, "c.h5", "zstd:1", NULL, "gzip:1+shuffle")));
    CU_ASSERT(tu_same_bytes(first, run(&fx, "d.h5", "zstd:1", NULL, "zstd:5+shuffle+fletcher32")));
    CU_ASSERT(tu_same_bytes(first, run(&fx, "e.h5", "zstd:1", NULL, "lz4+shuffle")));
    CU_ASSERT(tu_same_bytes(first, run(&fx, "f.h5", "zstd:1", NULL, "lz4+fletcher32")));
    teardown(&fx);
}

static void test_bad_specs(void)
{
    struct fixture fx;
    setup(&fx, 1);
    const char *bad_comp[] = {"zstd:99", "gzip:10", "lz4:1", "lz4+zstd", "lzf", "zstd+gzip", "", "shuffle+shuffle", "gzip:", "zstd:1x"};
    for (size_t i = 0; i < sizeof bad_comp / sizeof *bad_comp; i++) {
        h5shuf_options o;
        h5shuf_options_init(&o);
        o.compression = bad_comp[i];
        const char *inputs[] = {fx.in};
        char msg[1024];
        ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(fx.dir, "bad.h5"), &o, msg, sizeof msg), H5SHUF_EINVAL);
        ASSERT_HAS_STR(msg, "--compression");
    }
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.scratch_compression = "keep";
    const char *inputs[] = {fx.in};
    ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(fx.dir, "bad.h5"), &o, NULL, 0), H5SHUF_EINVAL);
    const char *bad_chunk[] = {"0", "x", "10x", "10x0", "1x2x3", "10x13", "-5"};
    for (size_t i = 0; i < sizeof bad_chunk / sizeof *bad_chunk; i++) {
        h5shuf_options_init(&o);
        o.chunk_shape = bad_chunk[i];
        ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(fx.dir, "bad.h5"), &o, NULL, 0), H5SHUF_EINVAL);
    }
    ASSERT_EQ_INT(tu_count_entries(fx.dir), 1);
    teardown(&fx);
}

/* A zstd chunk with bytes flipped: a clean error naming the file and dataset, nothing left behind. */
static void test_corrupt_zstd_chunk(void)
{
    struct fixture fx;
    setup(&fx, 1);
    char src[4200];
    snprintf(src, sizeof src, "%s", run(&fx, "zstd.h5", "zstd:3", NULL, NULL));
    hid_t f = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/x", H5P_DEFAULT);
    haddr_t addr;
    hsize_t size, off[2];
    unsigned mask;
    hid_t space = H5Dget_space(d);
    ASSERT_GE_INT_FATAL(H5Dget_chunk_info(d, space, 3, off, &mask, &addr, &size), 0);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
    FILE *fp = fopen(src, "r+b");
    unsigned char junk[16];
    tu_fill(junk, sizeof junk, 1);
    fseek(fp, (long)(addr + 2), SEEK_SET); /* the frame header: zstd must notice */
    fwrite(junk, 1, sizeof junk, fp);
    fclose(fp);

    h5shuf_options o;
    h5shuf_options_init(&o);
    char spec[4300], msg[1024];
    snprintf(spec, sizeof spec, "%s:/x", src);
    const char *inputs[] = {spec};
    int before = tu_count_entries(fx.dir);
    int st = tu_shuffle(inputs, 1, tu_path(fx.dir, "from-corrupt.h5"), &o, msg, sizeof msg);
    ASSERT_EQ_INT(st, H5SHUF_EIO);
    ASSERT_HAS_STR(msg, "zstd.h5:/x");
    ASSERT_HAS_STR(msg, "zstd");
    CU_ASSERT(!strchr(msg, '\n'));
    ASSERT_EQ_INT(tu_count_entries(fx.dir), before);
    teardown(&fx);
}

int main(void)
{
    h5shuf_register_zstd(); /* this process reads zstd outputs back with plain HDF5 calls */
    static const struct tu_test tests[] = {
        {"output filters and chunks as asked", test_output_filters_as_asked},
        {"unchunked input gets chunked for filters", test_contiguous_gets_chunked},
        {"scratch compression changes no output byte", test_scratch_compression_invisible},
        {"bad compression and chunk specs", test_bad_specs},
        {"corrupt zstd chunk: clean error", test_corrupt_zstd_chunk},
        {NULL, NULL},
    };
    return tu_main("compression", tests);
}
