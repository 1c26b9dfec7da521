/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_inmap.c - inputs mapped when they are scanned (inmap.c) and read with pread() in pass 1: which
 * inputs are mapped (contiguous, chunked with gzip and with more chunks than the cap, another pipeline,
 * compact); the rows read from a map equal HDF5's own read of them (H5Dread: the oracle), through
 * chunkio's read and its prefetch; a file changed after the scan (appended to, touched, replaced) is
 * refused with "changed while h5shuf ran" naming it; a chunk made undecodable behind the map's back (its
 * modification time put back) and a read past the end of the file are clean errors.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunkio.h"
#include "error.h"
#include "h5err.h"
#include "inmap.h"
#include "inputs.h"
#include "testutil.h"

#define COLS 12u

static const struct tu_layout CONTIG = {H5D_CONTIGUOUS, 0, 0, 0, 0};
static const struct tu_layout GZIP16 = {H5D_CHUNKED, 16, 4, 1, 0};  /* shuffle + gzip, chunks of 16 rows */
static const struct tu_layout PLAIN16 = {H5D_CHUNKED, 16, 0, 0, 0}; /* another pipeline */
static const struct tu_layout GZIP2 = {H5D_CHUNKED, 2, 4, 1, 0};    /* 20 chunks of 40 rows: over the cap */
static const struct tu_layout COMPACT = {H5D_COMPACT, 0, 0, 0, 0};

/* Input name in dir: /x (rows, COLS) int32 under layout lx, /y (rows,) int64 under ly; values from seed. */
static void write_input(const char *dir, const char *name, hsize_t rows, const struct tu_layout *lx,
                        const struct tu_layout *ly, uint64_t seed)
{
    hsize_t dx[2] = {rows, COLS}, dy[1] = {rows};
    int32_t *x = malloc(rows * COLS * sizeof *x);
    int64_t *y = malloc(rows * sizeof *y);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    for (hsize_t i = 0; i < rows * COLS; i++)
        x[i] = (int32_t)(tu_splitmix64(&seed) % 1000); /* compressible */
    for (hsize_t i = 0; i < rows; i++)
        y[i] = (int64_t)tu_splitmix64(&seed);
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, name), 1, "/x", H5T_STD_I32LE, 2, dx, lx, x), 0);
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(dir, name), 0, "/y", H5T_STD_I64LE, 1, dy, ly, y), 0);
    free(x);
    free(y);
}

/* The inputs of a test: a.h5 .. f.h5 in dir, opened (scanned) as a job's are. */
struct fixture {
    char *dir;
    struct h5shuf_inputs in;
    struct h5shuf_datasets dsets;
    struct h5shuf_err err;
    struct h5shuf_chunkio *cio;
};

static const char *const NAMES[] = {"a.h5", "b.h5", "c.h5", "d.h5", "e.h5", "f.h5", "g.h5"};
#define NINPUTS 7

static void setup(struct fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(fx->dir);
    write_input(fx->dir, "a.h5", 30, &GZIP16, &CONTIG, 1);   /* the first: never mapped */
    write_input(fx->dir, "b.h5", 40, &GZIP16, &CONTIG, 2);   /* 3 chunks, the last partial: mapped */
    write_input(fx->dir, "c.h5", 40, &GZIP2, &CONTIG, 3);    /* 20 chunks: over the cap */
    write_input(fx->dir, "d.h5", 40, &PLAIN16, &CONTIG, 4);  /* another pipeline than b's */
    write_input(fx->dir, "e.h5", 25, &CONTIG, &CONTIG, 5);   /* contiguous: mapped */
    write_input(fx->dir, "f.h5", 5, &COMPACT, &CONTIG, 6);   /* compact: not mapped */
    /* b's layout behind a userblock of 512 bytes (HDF5's addresses are then not file offsets): not mapped */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_userblock(fcpl, 512);
    hid_t g = H5Fcreate(tu_path(fx->dir, "g.h5"), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(g, 0);
    H5Fclose(g);
    H5Pclose(fcpl);
    hsize_t gx[2] = {40, COLS}, gy[1] = {40};
    int32_t gv[40 * COLS] = {0};
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(fx->dir, "g.h5"), 0, "/x", H5T_STD_I32LE, 2, gx, &GZIP16, gv), 0);
    ASSERT_EQ_INT_FATAL(tu_write(tu_path(fx->dir, "g.h5"), 0, "/y", H5T_STD_I64LE, 1, gy, &CONTIG, gv), 0);
    for (int k = 0; k < NINPUTS; k++) {
        char spec[4200];
        snprintf(spec, sizeof spec, "%s:/x,/y", tu_path(fx->dir, NAMES[k]));
        ASSERT_EQ_INT_FATAL(h5shuf__inputs_append(&fx->in, spec, &fx->err), H5SHUF_OK);
    }
    struct h5shuf_spec out = {0};
    ASSERT_EQ_INT_FATAL(h5shuf__inputs_open(&fx->in, &out, &fx->dsets, &fx->err), H5SHUF_OK);
    ASSERT_EQ_INT_FATAL(h5shuf__chunkio_create(2, &fx->cio), H5SHUF_OK);
}

static void teardown(struct fixture *fx)
{
    h5shuf__chunkio_free(fx->cio);
    h5shuf__inputs_close(&fx->in, &fx->dsets);
    h5shuf__inputs_free(&fx->in);
    tu_rmtree(fx->dir);
    free(fx->dir);
}

/* Rows [start, start + count) of dataset d of mapped input f, read through its map (prefetch: through
 * prefetch_start_stored), against HDF5's read of the whole dataset. */
static void check_rows(struct fixture *fx, size_t f, size_t d, uint64_t start, uint64_t count, int prefetch)
{
    uint64_t rows = 0, row_bytes = 0;
    unsigned char *want = tu_read(fx->in.v[f].spec.file, fx->dsets.ds[d].in_path, &rows, &row_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    ASSERT_EQ_INT(row_bytes, fx->dsets.ds[d].row_bytes);
    unsigned char *got = malloc(count * row_bytes + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    int fd = h5shuf__input_fd(&fx->in, &fx->dsets, f, &fx->err);
    ASSERT_GE_INT_FATAL(fd, 0);
    struct h5shuf_stored sto;
    h5shuf__inmap_stored(fx->in.v[f].map, d, fd, &fx->in.map_pl[d], row_bytes, rows, &sto);
    herr_t r;
    if (prefetch) {
        struct h5shuf_prefetch *pf = h5shuf__prefetch_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
        r = h5shuf__prefetch_start_stored(fx->cio, &sto, start, count, got, pf);
        if (h5shuf__prefetch_finish(fx->cio, pf) < 0)
            r = -1;
        h5shuf__prefetch_free(fx->cio, pf);
    } else {
        r = h5shuf__chunkio_read_stored(fx->cio, &sto, start, count, got);
    }
    ASSERT_EQ_INT(r, 0);
    ASSERT_EQ_MEM(got, want + start * row_bytes, count * row_bytes);
    free(got);
    free(want);
}

/* Which inputs are mapped, what a map holds, and their rows against HDF5's. */
static void test_mapped(void)
{
    struct fixture fx;
    setup(&fx);
    const int mapped[NINPUTS] = {0, 1, 0, 0, 1, 0, 0};
    for (int k = 0; k < NINPUTS; k++)
        ASSERT_EQ_INT(fx.in.v[k].map != NULL, mapped[k]);
    const struct h5shuf_inmap *b = fx.in.v[1].map, *e = fx.in.v[4].map;
    CU_ASSERT_FATAL(b && e);
    ASSERT_EQ_INT(b->nds, 2);
    ASSERT_EQ_INT(b->ds[0].n, 3);
    ASSERT_EQ_INT(b->ds[0].contiguous, 0);
    ASSERT_EQ_INT(b->ds[1].contiguous, 1);
    ASSERT_EQ_INT(e->ds[0].contiguous, 1);
    /* the bound of inmap.h, and what these take: a header, 8 bytes a dataset, 16 a chunk */
    ASSERT_EQ_INT(h5shuf__inmap_bytes(b), sizeof *b + 2 * 8 + 4 * 16);
    ASSERT_LE_INT(h5shuf__inmap_bytes(b), sizeof *b + 2 * 8 + 16 * H5SHUF_INMAP_INPUT_CHUNKS_MAX);
    for (int prefetch = 0; prefetch < 2; prefetch++) {
        for (size_t d = 0; d < 2; d++) {
            check_rows(&fx, 1, d, 0, 40, prefetch);  /* all, the partial last chunk too */
            check_rows(&fx, 1, d, 5, 30, prefetch);  /* parts of chunks at both ends */
            check_rows(&fx, 1, d, 39, 1, prefetch);  /* the last row alone */
            check_rows(&fx, 4, d, 0, 25, prefetch);
            check_rows(&fx, 4, d, 7, 11, prefetch);
        }
    }
    teardown(&fx);
}

/* A mapped input changed after the scan is refused, whatever changed. */
static void test_changed(void)
{
    for (int how = 0; how < 3; how++) {
        struct fixture fx;
        setup(&fx);
        const char *path = fx.in.v[1].spec.file;
        if (how == 0) { /* appended to */
            FILE *fp = fopen(path, "ab");
            CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
            fputc(0, fp);
            fclose(fp);
        } else if (how == 1) { /* the same bytes, another modification time */
            struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
            ASSERT_EQ_INT(utimensat(AT_FDCWD, path, ts, 0), 0);
        } else { /* replaced by a copy (another inode) */
            char tmp[4200];
            snprintf(tmp, sizeof tmp, "%s.new", path);
            ASSERT_EQ_INT(link(fx.in.v[4].spec.file, tmp), 0);
            ASSERT_EQ_INT(rename(tmp, path), 0);
        }
        h5shuf__err_reset(&fx.err);
        ASSERT_EQ_INT(h5shuf__input_fd(&fx.in, &fx.dsets, 1, &fx.err), -1);
        ASSERT_EQ_INT(fx.err.status, H5SHUF_EMISMATCH);
        CU_ASSERT_PTR_NOT_NULL(strstr(fx.err.msg, "b.h5:/x: changed while h5shuf ran"));
        ASSERT_EQ_INT(fx.in.v[1].fd, -1); /* closed again */
        teardown(&fx);
    }
}

/* A chunk garbled behind the map's back (its modification time put back, so that the file looks the
 * same) fails to decode, cleanly; a read past the end of the file is a short read. */
static void test_corrupt(void)
{
    struct fixture fx;
    setup(&fx);
    const char *path = fx.in.v[1].spec.file;
    const struct h5shuf_inmap *m = fx.in.v[1].map;
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    struct stat st;
    ASSERT_EQ_INT_FATAL(stat(path, &st), 0);
    int w = open(path, O_WRONLY);
    ASSERT_GE_INT_FATAL(w, 0);
    unsigned char junk[64];
    memset(junk, 0xa5, sizeof junk);
    ASSERT_EQ_INT(pwrite(w, junk, sizeof junk, (off_t)m->chunk[m->ds[0].first + 1].addr), (ssize_t)sizeof junk);
    close(w);
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ_INT(utimensat(AT_FDCWD, path, ts, 0), 0);
    int fd = h5shuf__input_fd(&fx.in, &fx.dsets, 1, &fx.err);
    ASSERT_GE_INT_FATAL(fd, 0);
    unsigned char *buf = malloc(40 * COLS * 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    struct h5shuf_stored sto;
    h5shuf__inmap_stored(m, 0, fd, &fx.in.map_pl[0], COLS * 4, 40, &sto);
    char cause[256];
    H5Eclear2(H5E_DEFAULT);
    ASSERT_LT_INT(h5shuf__chunkio_read_stored(fx.cio, &sto, 0, 40, buf), 0);
    ASSERT_GT_INT(strlen(h5shuf__hdf5_cause(cause, sizeof cause)), 0);
    /* past the end: a contiguous extent beyond the file */
    struct h5shuf_inmap_chunk far = {(uint64_t)st.st_size - 8, 40 * 8, 0};
    struct h5shuf_stored past = {fd, NULL, 8, 40, &far, 1};
    H5Eclear2(H5E_DEFAULT);
    ASSERT_LT_INT(h5shuf__chunkio_read_stored(fx.cio, &past, 0, 40, buf), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(h5shuf__hdf5_cause(cause, sizeof cause), "short read"));
    free(buf);
    teardown(&fx);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"inputs mapped, their rows read by pread against H5Dread", test_mapped},
        {"a mapped input changed after the scan is refused", test_changed},
        {"a garbled chunk and a short read are clean errors", test_corrupt},
        {NULL, NULL},
    };
    return tu_main("inmap", tests);
}
