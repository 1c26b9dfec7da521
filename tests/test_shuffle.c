/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_shuffle.c - whole shuffles through the public API, checked against the in-memory reference
 * shuffle (tu_reference: keys, qsort, copy), which shares nothing with the library but the key function.
 *
 * Each test writes its inputs with plain HDF5 calls, runs h5shuf_run and compares the output's raw
 * bytes with the reference's: that checks the multiset of rows, the exact order the contract defines,
 * the datatype (bytes move without conversion) and, across budgets, that nothing but the seed matters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5shuf_debug.h"
#include "testutil.h"

static const struct tu_layout CONTIG = {H5D_CONTIGUOUS, 0, 0, 0, 0};
static const struct tu_layout COMPACT = {H5D_COMPACT, 0, 0, 0, 0};
static const struct tu_layout CHUNKED_DEFLATE = {H5D_CHUNKED, 64, 4, 1, 1};

static h5shuf_options seeded(uint64_t seed)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = seed;
    o.seed_set = 1;
    return o;
}

/* Write one dataset of random rows, shuffle it, compare with the reference.  Returns nothing; asserts. */
static void roundtrip(hid_t ftype, int rank, const hsize_t *dims, const struct tu_layout *lay, uint64_t seed)
{
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    uint64_t row_bytes = H5Tget_size(ftype);
    for (int k = 1; k < rank; k++)
        row_bytes *= dims[k];
    size_t bytes = (size_t)(dims[0] * row_bytes);
    unsigned char *in = malloc(bytes + 1), *want = malloc(bytes + 1);
    tu_fill(in, bytes, seed * 31 + dims[0]);
    if (H5Tget_class(ftype) == H5T_ENUM) /* enum values must be members; use 0..3 */
        for (size_t i = 0; i < bytes; i++)
            in[i] &= 3;
    const char *ipath = tu_path(dir, "in.h5"), *opath = tu_path(dir, "out.h5");
    ASSERT_EQ_INT_FATAL(tu_write(ipath, 1, "/data/x", ftype, rank, dims, lay, in), 0);

    char ispec[4200], ospec[4200], msg[1024];
    snprintf(ispec, sizeof ispec, "%s:/data/x", ipath);
    snprintf(ospec, sizeof ospec, "%s:/y", opath);
    h5shuf_options o = seeded(seed);
    const char *inputs[] = {ispec};
    int st = tu_shuffle(inputs, 1, ospec, &o, msg, sizeof msg);
    ASSERT_EQ_INT(st, H5SHUF_OK);
    if (st != H5SHUF_OK)
        fprintf(stderr, "\n  shuffle failed: %s\n", msg);

    uint64_t rows = 0, rb = 0;
    unsigned char *got = tu_read(opath, "/y", &rows, &rb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    ASSERT_EQ_INT(rows, dims[0]);
    ASSERT_EQ_INT(rb, row_bytes);
    tu_reference(seed, in, dims[0], row_bytes, want);
    ASSERT_EQ_MEM(got, want, bytes);

    /* The output's datatype is the input's, bit for bit. */
    hid_t f = H5Fopen(opath, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "/y", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    ASSERT_GT_INT(H5Tequal(t, ftype), 0);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
    ASSERT_EQ_INT(tu_count_entries(dir), 2); /* in.h5 and out.h5: no temporary or scratch file */
    free(got);
    free(in);
    free(want);
    tu_rmtree(dir);
    free(dir);
}

static void test_1d_int32_contiguous(void)
{
    hsize_t dims[] = {1000};
    roundtrip(H5T_STD_I32LE, 1, dims, &CONTIG, 1);
}

static void test_2d_float64_chunked_filters(void)
{
    hsize_t dims[] = {5000, 7};
    roundtrip(H5T_IEEE_F64LE, 2, dims, &CHUNKED_DEFLATE, 2);
}

static void test_4d_uint8_compact(void)
{
    hsize_t dims[] = {100, 4, 4, 3};
    roundtrip(H5T_STD_U8LE, 4, dims, &COMPACT, 3);
}

static void test_4d_uint8_chunked(void)
{
    hsize_t dims[] = {777, 8, 8, 3};
    roundtrip(H5T_STD_U8LE, 4, dims, &CHUNKED_DEFLATE, 4);
}

/* Types other than native numbers: rows move as raw bytes, no conversion. */
static void test_other_types(void)
{
    hsize_t dims[] = {300}, dims2[] = {300, 2};
    roundtrip(H5T_STD_I16BE, 1, dims, &CHUNKED_DEFLATE, 10);
    roundtrip(H5T_IEEE_F32BE, 2, dims2, &CONTIG, 11);

    hid_t s5 = H5Tcopy(H5T_C_S1);
    H5Tset_size(s5, 5);
    roundtrip(s5, 1, dims, &CONTIG, 12);

    hid_t cmp = H5Tcreate(H5T_COMPOUND, 1 + 8 + 5);
    H5Tinsert(cmp, "a", 0, H5T_STD_I8LE);
    H5Tinsert(cmp, "b", 1, H5T_IEEE_F64BE);
    H5Tinsert(cmp, "s", 9, s5);
    roundtrip(cmp, 1, dims, &CHUNKED_DEFLATE, 13);

    hsize_t adims[] = {2};
    hid_t arr = H5Tarray_create2(H5T_STD_I32LE, 1, adims);
    roundtrip(arr, 2, dims2, &CONTIG, 14);

    hid_t en = H5Tenum_create(H5T_STD_U8LE);
    const char *names[] = {"zero", "one", "two", "three"};
    for (unsigned char v = 0; v < 4; v++)
        H5Tenum_insert(en, names[v], &v);
    roundtrip(en, 1, dims, &CONTIG, 15);

    hid_t op = H5Tcreate(H5T_OPAQUE, 6);
    H5Tset_tag(op, "six opaque bytes");
    roundtrip(op, 1, dims, &CHUNKED_DEFLATE, 16);

    roundtrip(H5T_STD_B16LE, 1, dims, &CONTIG, 17);
    H5Tclose(s5);
    H5Tclose(cmp);
    H5Tclose(arr);
    H5Tclose(en);
    H5Tclose(op);
}

static void test_n0_n1(void)
{
    hsize_t d0[] = {0, 3}, d1[] = {1, 3};
    roundtrip(H5T_STD_I32LE, 2, d0, &CHUNKED_DEFLATE, 20);
    roundtrip(H5T_STD_I32LE, 2, d0, &CONTIG, 21);
    roundtrip(H5T_STD_I32LE, 2, d1, &CHUNKED_DEFLATE, 22);
    roundtrip(H5T_STD_I32LE, 2, d1, &CONTIG, 23);
}

/* Three inputs of 100, 1 and 57 rows, different layouts, concatenated then shuffled. */
static void test_multiple_inputs(void)
{
    char *dir = tu_mkdtemp();
    const uint64_t n[3] = {100, 1, 57}, total = 158, rb = 3 * 8;
    const struct tu_layout *lay[3] = {&CHUNKED_DEFLATE, &CONTIG, &COMPACT};
    unsigned char *all = malloc(total * rb), *want = malloc(total * rb);
    tu_fill(all, total * rb, 99);
    char specs[3][4200], ospec[4200], msg[1024];
    const char *inputs[3];
    uint64_t off = 0;
    for (int f = 0; f < 3; f++) {
        char name[32];
        snprintf(name, sizeof name, "in%d.h5", f);
        hsize_t dims[] = {n[f], 3};
        ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, name), 1, "/x", H5T_IEEE_F64LE, 2, dims, lay[f], all + off * rb), 0);
        snprintf(specs[f], sizeof specs[f], "%s:/x", tu_path(dir, name));
        inputs[f] = specs[f];
        off += n[f];
    }
    snprintf(ospec, sizeof ospec, "%s", tu_path(dir, "out.h5"));
    h5shuf_options o = seeded(5);
    ASSERT_EQ_INT(tu_shuffle(inputs, 3, ospec, &o, msg, sizeof msg), H5SHUF_OK);
    uint64_t rows, gotrb;
    unsigned char *got = tu_read(ospec, "/x", &rows, &gotrb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    ASSERT_EQ_INT(rows, total);
    tu_reference(5, all, total, rb, want);
    ASSERT_EQ_MEM(got, want, total * rb);
    free(got);
    free(all);
    free(want);
    tu_rmtree(dir);
    free(dir);
}

/* A file like a training set: X[i] = (i, 2i, 3i), y[i] = i, plus an unrelated /classes and attributes. */
static char *make_training_file(const char *dir, uint64_t n)
{
    int32_t *X = malloc(n * 3 * sizeof *X + 1);
    int64_t *y = malloc(n * sizeof *y + 1);
    for (uint64_t i = 0; i < n; i++) {
        X[3 * i] = (int32_t)i, X[3 * i + 1] = (int32_t)(2 * i), X[3 * i + 2] = (int32_t)(3 * i);
        y[i] = (int64_t)i;
    }
    char *path = strdup(tu_path(dir, "train.h5"));
    hsize_t xd[] = {n, 3}, yd[] = {n}, cd[] = {2};
    struct tu_layout lay = {H5D_CHUNKED, 50, 1, 0, 0};
    tu_write(path, 1, "/X", H5T_STD_I32LE, 2, xd, &lay, X);
    tu_write(path, 0, "/y", H5T_STD_I64LE, 1, yd, &CONTIG, y);
    const char classes[2][4] = {"cat", "dog"};
    hid_t s4 = H5Tcopy(H5T_C_S1);
    H5Tset_size(s4, 4);
    tu_write(path, 0, "/meta/classes", s4, 1, cd, &CONTIG, classes);
    H5Tclose(s4);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t sp = H5Screate(H5S_SCALAR);
    int v = 7;
    hid_t a = H5Acreate2(f, "root_attr", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    hid_t d = H5Dopen2(f, "/X", H5P_DEFAULT);
    a = H5Acreate2(d, "units", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    v = 42;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
    free(X);
    free(y);
    return path;
}

/* Read an integer attribute as unsigned 64 bits (a seed may be >= 2^63; HDF5 would clamp a signed read). */
static int read_int_attr(const char *file, const char *obj, const char *name, unsigned long long *v)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -1;
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Aread(a, H5T_NATIVE_ULLONG, v);
    if (a >= 0)
        H5Aclose(a);
    H5Fclose(f);
    return r;
}

/* Whole-file form: X and y shuffled with one permutation (y[r] still labels X[r]), the rest copied. */
static void test_whole_file_aligned(void)
{
    char *dir = tu_mkdtemp();
    const uint64_t n = 2000;
    char *train = make_training_file(dir, n);
    const char *out = tu_path(dir, "out.h5");
    h5shuf_options o = seeded(77);
    o.mem_limit_bytes = 5 << 20;
    const char *inputs[] = {train};
    char msg[1024];
    ASSERT_EQ_INT_FATAL(tu_shuffle_bound(inputs, 1, out, &o, 100, msg, sizeof msg), H5SHUF_OK); /* many sub-piles */
    uint64_t rows, rb;
    int32_t *X = tu_read(out, "/X", &rows, &rb);
    int64_t *y = tu_read(out, "/y", &rows, &rb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(X);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    int aligned = 1, moved = 0;
    for (uint64_t r = 0; r < n; r++) {
        aligned &= X[3 * r] == y[r] && X[3 * r + 1] == 2 * y[r] && X[3 * r + 2] == 3 * y[r];
        moved += y[r] != (int64_t)r;
    }
    CU_ASSERT(aligned);
    ASSERT_GT_INT(moved, (int)n / 2);
    /* y is exactly the reference order of row ids */
    int64_t *ids = malloc(n * sizeof *ids), *want = malloc(n * sizeof *want);
    for (uint64_t i = 0; i < n; i++)
        ids[i] = (int64_t)i;
    tu_reference(77, ids, n, sizeof *ids, want);
    ASSERT_EQ_MEM(y, want, n * sizeof *y);

    char cl[2][4];
    uint64_t crows, crb;
    void *c = tu_read(out, "/meta/classes", &crows, &crb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    memcpy(cl, c, sizeof cl);
    ASSERT_EQ_INT(crows, 2);
    if (crows == 2) {
        ASSERT_EQ_MEM(cl[0], "cat", 4);
        ASSERT_EQ_MEM(cl[1], "dog", 4);
    }
    unsigned long long v = 0;
    ASSERT_GE_INT(read_int_attr(out, "/", "root_attr", &v), 0);
    ASSERT_EQ_INT(v, 7);
    ASSERT_GE_INT(read_int_attr(out, "/X", "units", &v), 0);
    ASSERT_EQ_INT(v, 42);
    ASSERT_GE_INT(read_int_attr(out, "/", "h5shuf_seed", &v), 0);
    ASSERT_EQ_INT(v, 77);
    free(c);
    free(X);
    free(y);
    free(ids);
    free(want);
    free(train);
    tu_rmtree(dir);
    free(dir);
}

/* Whole file with several hard links to one object (h5py: f['alias'] = f['x']): every name of a
 * shuffled dataset, and of a group holding one, must lead to the shuffled data, still aligned. */
static void test_whole_file_hard_links(void)
{
    char *dir = tu_mkdtemp();
    const uint64_t n = 300;
    char *train = make_training_file(dir, n);
    int64_t *z = malloc(n * sizeof *z);
    for (uint64_t i = 0; i < n; i++)
        z[i] = 10 * (int64_t)i;
    hsize_t zd[] = {n};
    struct tu_layout contig = {H5D_CONTIGUOUS, 0, 0, 0, 0};
    ASSERT_EQ_INT_FATAL(tu_write(train, 0, "/g/z", H5T_STD_I64LE, 1, zd, &contig, z), 0);
    hid_t f = H5Fopen(train, H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE_INT(H5Lcreate_hard(f, "/X", f, "/alias", H5P_DEFAULT, H5P_DEFAULT), 0);
    ASSERT_GE_INT(H5Lcreate_hard(f, "/g", f, "/g2", H5P_DEFAULT, H5P_DEFAULT), 0);
    ASSERT_GE_INT(H5Lcreate_hard(f, "/X", f, "/meta/x_again", H5P_DEFAULT, H5P_DEFAULT), 0);
    H5Fclose(f);
    const char *out = tu_path(dir, "out.h5");
    h5shuf_options o = seeded(9);
    const char *inputs[] = {train};
    char msg[1024];
    ASSERT_EQ_INT_FATAL(tu_shuffle(inputs, 1, out, &o, msg, sizeof msg), H5SHUF_OK);
    uint64_t rows, rb;
    int64_t *y = tu_read(out, "/y", &rows, &rb);
    int32_t *X = tu_read(out, "/X", &rows, &rb), *alias = tu_read(out, "/alias", &rows, &rb),
            *again = tu_read(out, "/meta/x_again", &rows, &rb);
    int64_t *gz = tu_read(out, "/g/z", &rows, &rb), *g2z = tu_read(out, "/g2/z", &rows, &rb);
    CU_ASSERT_FATAL(y && X && alias && again && gz && g2z);
    int aligned = 1, moved = 0;
    for (uint64_t r = 0; r < n; r++) {
        aligned &= X[3 * r] == y[r] && alias[3 * r] == y[r] && again[3 * r] == y[r];
        aligned &= gz[r] == 10 * y[r] && g2z[r] == 10 * y[r];
        moved += y[r] != (int64_t)r;
    }
    CU_ASSERT(aligned);
    ASSERT_GT_INT(moved, (int)n / 2);
    /* and the aliases are links to the one shuffled dataset, not copies */
    f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    H5O_info_t a, b;
    H5Oget_info_by_name(f, "/X", &a, H5P_DEFAULT);
    H5Oget_info_by_name(f, "/alias", &b, H5P_DEFAULT);
    ASSERT_EQ_INT(a.addr, b.addr);
    H5Fclose(f);
    free(y), free(X), free(alias), free(again), free(gz), free(g2z), free(z), free(train);
    tu_rmtree(dir);
    free(dir);
}

/* The contract: the same seed gives the same output file, byte for byte, for every budget, for
 * recursion and for restarts; the input is never modified. */
static void test_identical_across_budgets(void)
{
    char *dir = tu_mkdtemp();
    const uint64_t n = 60000, cols = 16;
    float *x = malloc(n * cols * sizeof *x);
    tu_fill(x, n * cols * sizeof *x, 1234);
    for (uint64_t i = 0; i < n * cols; i++) /* finite floats */
        x[i] = (float)(((uint32_t *)x)[i] % 100000) / 256.0f;
    hsize_t dims[] = {n, cols};
    struct tu_layout lay = {H5D_CHUNKED, 1000, 1, 1, 0};
    char in[4200];
    snprintf(in, sizeof in, "%s", tu_path(dir, "in.h5"));
    ASSERT_EQ_INT_FATAL(tu_write(in, 1, "/x", H5T_IEEE_F32LE, 2, dims, &lay, x), 0);
    ASSERT_EQ_INT_FATAL(tu_write(in, 0, "/y", H5T_IEEE_F32LE, 2, dims, &CONTIG, x), 0);
    char copy[4200];
    snprintf(copy, sizeof copy, "%s", tu_path(dir, "in-copy.h5"));
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", in, copy);
    ASSERT_EQ_INT_FATAL(system(cmd), 0);

    struct {
        uint64_t mem, bound;
        h5shuf_oversize mode;
        const char *name;
    } runs[] = {
        {1ULL << 30, 0, H5SHUF_OVERSIZE_RECURSE, "big.h5"},
        {8 << 20, 0, H5SHUF_OVERSIZE_RECURSE, "small.h5"},   /* several piles */
        {6 << 20, 0, H5SHUF_OVERSIZE_RECURSE, "smaller.h5"}, /* more piles */
        {8 << 20, 500, H5SHUF_OVERSIZE_RECURSE, "recurse.h5"},
        {8 << 20, 500, H5SHUF_OVERSIZE_RESTART, "restart.h5"},
    };
    const char *inputs[] = {in};
    char first[4200] = "";
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        h5shuf_options o = seeded(2024);
        o.mem_limit_bytes = runs[k].mem;
        o.on_oversize = runs[k].mode;
        char out[4200], msg[1024];
        snprintf(out, sizeof out, "%s", tu_path(dir, runs[k].name));
        h5shuf_job *job = h5shuf_job_create(&o);
        if (runs[k].bound)
            h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, runs[k].bound);
        h5shuf_job_add_input(job, inputs[0]);
        h5shuf_job_set_output(job, out);
        int st = h5shuf_run(job);
        snprintf(msg, sizeof msg, "%s", h5shuf_errmsg(job));
        h5shuf_plan p;
        h5shuf_plan_init(&p);
        h5shuf_job_plan(job, &p);
        h5shuf_job_free(job);
        ASSERT_EQ_INT_FATAL(st, H5SHUF_OK);
        if (k == 1 || k == 2)
            ASSERT_GE_INT(p.piles, 3);
        if (k == 3) {
            ASSERT_GE_INT(p.splits, 1);
            ASSERT_EQ_INT(p.restarts, 0);
        }
        if (k == 4) {
            ASSERT_GE_INT(p.restarts, 1);
            ASSERT_EQ_INT(p.splits, 0);
        }
        if (k == 0) {
            snprintf(first, sizeof first, "%s", out);
            uint64_t rows, rb;
            float *got = tu_read(out, "/x", &rows, &rb), *want = malloc(n * cols * sizeof *want);
            tu_reference(2024, x, n, cols * sizeof *x, want);
            CU_ASSERT_PTR_NOT_NULL(got);
            ASSERT_EQ_MEM(got, want, n * cols * sizeof *x);
            free(got);
            free(want);
        } else {
            CU_ASSERT(tu_same_bytes(first, out));
        }
    }
    CU_ASSERT(tu_same_bytes(in, copy)); /* the input is untouched */
    free(x);
    tu_rmtree(dir);
    free(dir);
}

static void test_seeds_differ(void)
{
    char *dir = tu_mkdtemp();
    char *train = make_training_file(dir, 1000);
    const char *inputs[] = {train};
    uint64_t rows, rb;
    h5shuf_options o1 = seeded(1), o2 = seeded(2);
    ASSERT_EQ_INT_FATAL(tu_shuffle(inputs, 1, tu_path(dir, "a.h5"), &o1, NULL, 0), H5SHUF_OK);
    ASSERT_EQ_INT_FATAL(tu_shuffle(inputs, 1, tu_path(dir, "b.h5"), &o2, NULL, 0), H5SHUF_OK);
    int64_t *a = tu_read(tu_path(dir, "a.h5"), "/y", &rows, &rb);
    int64_t *b = tu_read(tu_path(dir, "b.h5"), "/y", &rows, &rb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int same = 0;
    for (uint64_t r = 0; r < rows; r++)
        same += a[r] == b[r];
    ASSERT_LT_INT(same, 20); /* two independent permutations of 1000 share ~1 fixed point */
    free(a);
    free(b);
    free(train);
    tu_rmtree(dir);
    free(dir);
}

/* A random seed is drawn when none is given, and stored so the run can be repeated. */
static void test_random_seed_stored(void)
{
    char *dir = tu_mkdtemp();
    char *train = make_training_file(dir, 500);
    h5shuf_job *job = h5shuf_job_create(NULL);
    h5shuf_job_add_input(job, train);
    h5shuf_job_set_output(job, tu_path(dir, "a.h5"));
    ASSERT_EQ_INT_FATAL(h5shuf_run(job), H5SHUF_OK);
    uint64_t seed = h5shuf_job_seed(job);
    h5shuf_job_free(job);
    unsigned long long stored = 0;
    ASSERT_GE_INT(read_int_attr(tu_path(dir, "a.h5"), "/", "h5shuf_seed", &stored), 0);
    ASSERT_EQ_INT((uint64_t)stored, seed);
    h5shuf_options o = seeded(seed);
    const char *inputs[] = {train};
    ASSERT_EQ_INT(tu_shuffle(inputs, 1, tu_path(dir, "b.h5"), &o, NULL, 0), H5SHUF_OK);
    CU_ASSERT(tu_same_bytes(tu_path(dir, "a.h5"), tu_path(dir, "b.h5")));
    free(train);
    tu_rmtree(dir);
    free(dir);
}

/* Errors: the right status, a message naming the file and dataset, nothing left behind. */
static void expect_error(const char *dir, const char *in, const char *out, int want, const char *needle)
{
    char msg[1024];
    h5shuf_options o = seeded(1);
    o.tmpdir = dir;
    const char *inputs[] = {in};
    int before = tu_count_entries(dir);
    int st = tu_shuffle(inputs, 1, out, &o, msg, sizeof msg);
    ASSERT_EQ_INT(st, want);
    ASSERT_HAS_STR(msg, needle);
    CU_ASSERT_PTR_NULL(strchr(msg, '\n'));
    ASSERT_EQ_INT(tu_count_entries(dir), before); /* no scratch, no temporary output */
    if (st != want || !strstr(msg, needle))
        fprintf(stderr, "\n  %s -> %d '%s' (wanted %d, '%s')\n", in, st, msg, want, needle);
}

static void test_errors(void)
{
    char *dir = tu_mkdtemp();
    char *train = make_training_file(dir, 100);
    char spec[4200], out[4200];
    snprintf(out, sizeof out, "%s", tu_path(dir, "out.h5"));

    expect_error(dir, tu_path(dir, "missing.h5"), out, H5SHUF_ENOENT, "missing.h5");
    FILE *f = fopen(tu_path(dir, "text.h5"), "w");
    fputs("not hdf5\n", f);
    fclose(f);
    expect_error(dir, tu_path(dir, "text.h5"), out, H5SHUF_ENOTHDF5, "not an HDF5 file");
    snprintf(spec, sizeof spec, "%s:/nope", train);
    expect_error(dir, spec, out, H5SHUF_ENOENT, "/nope");
    snprintf(spec, sizeof spec, "%s:/meta", train);
    expect_error(dir, spec, out, H5SHUF_EUNSUPPORTED, "group");

    /* a vlen sequence of variable-length strings: nested variable-length data is refused */
    hid_t vs = H5Tcopy(H5T_C_S1);
    H5Tset_size(vs, H5T_VARIABLE);
    hid_t vvs = H5Tvlen_create(vs);
    const char *strs[] = {"a", "bb", "ccc"};
    hvl_t rows3[3] = {{1, &strs[0]}, {2, &strs[1]}, {0, NULL}};
    hsize_t d3[] = {3};
    ASSERT_EQ_INT(tu_write(tu_path(dir, "vlen.h5"), 1, "/s", vvs, 1, d3, &CONTIG, rows3), 0);
    H5Tclose(vvs);
    H5Tclose(vs);
    snprintf(spec, sizeof spec, "%s:/s", tu_path(dir, "vlen.h5"));
    expect_error(dir, spec, out, H5SHUF_EUNSUPPORTED, "nested variable-length");

    /* /X (100 rows) and /meta/classes (2 rows) named together */
    snprintf(spec, sizeof spec, "%s:/X,/meta/classes", train);
    expect_error(dir, spec, out, H5SHUF_EMISMATCH, "rows");

    /* existing output without force: kept as it was */
    f = fopen(out, "w");
    fputs("precious\n", f);
    fclose(f);
    expect_error(dir, train, out, H5SHUF_EEXIST, "exists");
    char buf[32] = "";
    f = fopen(out, "r");
    CU_ASSERT_PTR_NOT_NULL(fgets(buf, sizeof buf, f));
    ASSERT_EQ_STR(buf, "precious\n");
    fclose(f);
    unlink(out);

    /* the output is the input: refused even with force */
    char msg[1024];
    h5shuf_options o = seeded(1);
    o.force = 1;
    const char *inputs[] = {train};
    ASSERT_EQ_INT(tu_shuffle(inputs, 1, train, &o, msg, sizeof msg), H5SHUF_ESAMEFILE);
    uint64_t rows, rb;
    int64_t *y = tu_read(train, "/y", &rows, &rb);
    CU_ASSERT_PTR_NOT_NULL(y);
    ASSERT_EQ_INT(rows, 100);
    if (y && rows == 100) {
        ASSERT_EQ_INT(y[0], 0);
        ASSERT_EQ_INT(y[99], 99);
    }
    free(y);
    free(train);
    tu_rmtree(dir);
    free(dir);
}

/* Mismatched inputs: row shapes and datatypes must agree across files. */
static void test_mismatched_inputs(void)
{
    char *dir = tu_mkdtemp();
    int32_t v[40] = {0};
    hsize_t a[] = {10, 3}, b[] = {10, 4};
    tu_write(tu_path(dir, "a.h5"), 1, "/x", H5T_STD_I32LE, 2, a, &CONTIG, v);
    tu_write(tu_path(dir, "b.h5"), 1, "/x", H5T_STD_I32LE, 2, b, &CONTIG, v);
    tu_write(tu_path(dir, "c.h5"), 1, "/x", H5T_IEEE_F32LE, 2, a, &CONTIG, v);
    char s1[4200], s2[4200], s3[4200], msg[1024];
    snprintf(s1, sizeof s1, "%s:/x", tu_path(dir, "a.h5"));
    snprintf(s2, sizeof s2, "%s:/x", tu_path(dir, "b.h5"));
    snprintf(s3, sizeof s3, "%s:/x", tu_path(dir, "c.h5"));
    h5shuf_options o = seeded(1);
    const char *ab[] = {s1, s2}, *ac[] = {s1, s3};
    ASSERT_EQ_INT(tu_shuffle(ab, 2, tu_path(dir, "o.h5"), &o, msg, sizeof msg), H5SHUF_EMISMATCH);
    CU_ASSERT(strstr(msg, "b.h5:/x") && strstr(msg, "shape"));
    ASSERT_EQ_INT(tu_shuffle(ac, 2, tu_path(dir, "o.h5"), &o, msg, sizeof msg), H5SHUF_EMISMATCH);
    CU_ASSERT(strstr(msg, "c.h5:/x") && strstr(msg, "datatype"));
    ASSERT_EQ_INT(tu_count_entries(dir), 3);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"1-D int32 contiguous", test_1d_int32_contiguous},
        {"2-D float64 chunked deflate+shuffle+fletcher32", test_2d_float64_chunked_filters},
        {"4-D uint8 compact", test_4d_uint8_compact},
        {"4-D uint8 chunked", test_4d_uint8_chunked},
        {"big-endian, string, compound, array, enum, opaque, bitfield", test_other_types},
        {"N = 0 and N = 1", test_n0_n1},
        {"three inputs concatenated", test_multiple_inputs},
        {"whole file: X and y aligned, rest copied", test_whole_file_aligned},
        {"whole file: hard links to shuffled objects stay aligned", test_whole_file_hard_links},
        {"same bytes for every budget, recurse, restart", test_identical_across_budgets},
        {"different seeds, different orders", test_seeds_differ},
        {"random seed stored and reproducible", test_random_seed_stored},
        {"errors name the cause and leave nothing", test_errors},
        {"mismatched inputs", test_mismatched_inputs},
        {NULL, NULL},
    };
    return tu_main("shuffle", tests);
}
