/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_walfile.c - the redo-log file driver (walfile.c): an HDF5 file of chunked gzip datasets and many
 * small groups written through it over several commits reads back with the plain sec2 driver, and after
 * each apply the base holds exactly the logical file of the commit; a child killed (SIGKILL) at every
 * durable step of a small run, in turn, recovers to the bytes of the last commit it recorded, reopens
 * for writing and takes more writes; a flushed (not closed) checkpoint needs H5SHUF_WALFILE_REOPEN; a
 * damaged, short or foreign log is refused in one line; a write that fails (file size limit) fails the
 * HDF5 call, no commit is made after it, and the last commit recovers; each injected fault of a run
 * (fault-injection builds) leaves the last commit recoverable.  H5SHUF_WALFILE_BENCH=MB measures a commit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "error.h"
#include "h5err.h"
#include "testutil.h"
#include "walfile.h"
#include "walio.h"
#include "walrecover.h"
#include "walvfd.h"

#ifdef H5SHUF_FAULT_INJECTION
long h5shuf__fault_count(void); /* fault.h's, without its allocation macros: the test's own never fail */
#endif

#define PREFIX "scratch.wal"
#define NDSETS 3
#define COLS 4
#define ROWS_PER_EPOCH 300
#define GROUPS_PER_EPOCH 40
#define HEAD_ROWS 10

/* ---- the file's contents: epoch k of writes, and the check of the state after epoch k ---- */

static int32_t value(int d, hsize_t row, int col)
{
    return (int32_t)(d * 1000003 + (int64_t)row * 7 + col) % 1000; /* compressible */
}

static int32_t head_value(int k, int d, hsize_t row, int col)
{
    return k * 100000 + d * 1000 + (int32_t)row * COLS + col;
}

/* Epoch k: datasets grow by ROWS_PER_EPOCH rows (/dN, chunked, gzip), their first HEAD_ROWS rows are
 * rewritten, GROUPS_PER_EPOCH groups with an attribute are made, the root's attribute "count" becomes k.
 * 0 or -1. */
static int populate(hid_t f, int k)
{
    int rc = -1;
    int32_t *buf = malloc(ROWS_PER_EPOCH * COLS * sizeof *buf);
    if (!buf)
        return -1;
    for (int d = 0; d < NDSETS; d++) {
        char name[16];
        snprintf(name, sizeof name, "/d%d", d);
        hid_t ds;
        if (k == 0) {
            hsize_t dims[2] = {0, COLS}, maxd[2] = {H5S_UNLIMITED, COLS}, chunk[2] = {64, COLS};
            hid_t sp = H5Screate_simple(2, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
            H5Pset_chunk(dcpl, 2, chunk);
            H5Pset_deflate(dcpl, 4);
            ds = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
            H5Pclose(dcpl);
            H5Sclose(sp);
        } else {
            ds = H5Dopen2(f, name, H5P_DEFAULT);
        }
        if (ds < 0)
            goto out;
        hsize_t old = (hsize_t)k * ROWS_PER_EPOCH, dims[2] = {old + ROWS_PER_EPOCH, COLS};
        hsize_t start[2] = {old, 0}, count[2] = {ROWS_PER_EPOCH, COLS};
        for (hsize_t r = 0; r < ROWS_PER_EPOCH; r++)
            for (int c = 0; c < COLS; c++)
                buf[r * COLS + c] = value(d, old + r, c);
        herr_t e = H5Dset_extent(ds, dims);
        hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, count, NULL);
        e |= H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
        e |= H5Dwrite(ds, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, buf);
        H5Sclose(ms);
        hsize_t hstart[2] = {0, 0}, hcount[2] = {HEAD_ROWS, COLS};
        for (hsize_t r = 0; r < HEAD_ROWS; r++)
            for (int c = 0; c < COLS; c++)
                buf[r * COLS + c] = head_value(k, d, r, c);
        ms = H5Screate_simple(2, hcount, NULL);
        e |= H5Sselect_hyperslab(fs, H5S_SELECT_SET, hstart, NULL, hcount, NULL);
        e |= H5Dwrite(ds, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, buf);
        H5Sclose(ms);
        H5Sclose(fs);
        e |= H5Dclose(ds); /* (it writes the chunks it caches: a failure there loses data) */
        if (e < 0)
            goto out;
    }
    hid_t g = k == 0 ? H5Gcreate2(f, "/g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : H5Gopen2(f, "/g", H5P_DEFAULT);
    if (g < 0)
        goto out;
    for (int i = 0; i < GROUPS_PER_EPOCH; i++) {
        char name[32];
        snprintf(name, sizeof name, "e%d_%d", k, i);
        hid_t s = H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), sp = H5Screate(H5S_SCALAR);
        int v = k * 1000 + i;
        hid_t a = H5Acreate2(s, "v", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        herr_t e = H5Awrite(a, H5T_NATIVE_INT, &v);
        e |= H5Aclose(a);
        H5Sclose(sp);
        e |= H5Gclose(s);
        if (s < 0 || a < 0 || e < 0) {
            H5Gclose(g);
            goto out;
        }
    }
    if (H5Gclose(g) < 0)
        goto out;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = k == 0 ? H5Acreate2(f, "count", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT) : H5Aopen(f, "count", H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT, &k);
    e |= H5Aclose(a);
    H5Sclose(sp);
    rc = e < 0 ? -1 : 0;
out:
    free(buf);
    return rc;
}

/* The number of differences between f and the state after epoch k (0: all as written). */
static int check(hid_t f, int k)
{
    int bad = 0;
    const hsize_t rows = (hsize_t)(k + 1) * ROWS_PER_EPOCH;
    int32_t *buf = malloc(rows * COLS * sizeof *buf);
    if (!buf)
        return 1;
    for (int d = 0; d < NDSETS; d++) {
        char name[16];
        snprintf(name, sizeof name, "/d%d", d);
        hid_t ds = H5Dopen2(f, name, H5P_DEFAULT), sp = ds < 0 ? -1 : H5Dget_space(ds);
        hsize_t dims[2] = {0, 0};
        if (sp < 0 || H5Sget_simple_extent_dims(sp, dims, NULL) != 2 || dims[0] != rows ||
            H5Dread(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            bad++;
        } else {
            for (hsize_t r = 0; r < rows; r++)
                for (int c = 0; c < COLS; c++)
                    bad += buf[r * COLS + c] != (r < HEAD_ROWS ? head_value(k, d, r, c) : value(d, r, c));
        }
        if (sp >= 0)
            H5Sclose(sp);
        if (ds >= 0)
            H5Dclose(ds);
    }
    free(buf);
    for (int j = 0; j <= k; j++)
        for (int i = 0; i < GROUPS_PER_EPOCH; i++) {
            char name[48];
            snprintf(name, sizeof name, "/g/e%d_%d", j, i);
            int v = -1;
            hid_t a = H5Aopen_by_name(f, name, "v", H5P_DEFAULT, H5P_DEFAULT);
            bad += a < 0 || H5Aread(a, H5T_NATIVE_INT, &v) < 0 || v != j * 1000 + i;
            if (a >= 0)
                H5Aclose(a);
        }
    hsize_t n = 0;
    hid_t g = H5Gopen2(f, "/g", H5P_DEFAULT);
    H5G_info_t info;
    if (g < 0 || H5Gget_info(g, &info) < 0)
        bad++;
    else
        n = info.nlinks;
    if (g >= 0)
        H5Gclose(g);
    bad += n != (hsize_t)(k + 1) * GROUPS_PER_EPOCH;
    int count = -1;
    hid_t a = H5Aopen(f, "count", H5P_DEFAULT);
    bad += a < 0 || H5Aread(a, H5T_NATIVE_INT, &count) < 0 || count != k;
    if (a >= 0)
        H5Aclose(a);
    return bad;
}

/* ---- a scratch file in a directory of its own ---- */

struct scratch {
    char *dir;
    char path[4200];
    int base, dirfd;
};

static void scratch_open(struct scratch *s, int create)
{
    if (create) {
        s->dir = tu_mkdtemp();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s->dir);
        snprintf(s->path, sizeof s->path, "%s/scratch.h5", s->dir);
    }
    s->base = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE_INT_FATAL(s->base, 0);
    ASSERT_GE_INT_FATAL(s->dirfd, 0);
}

static void scratch_close(struct scratch *s)
{
    close(s->base);
    close(s->dirfd);
}

static void scratch_remove(struct scratch *s)
{
    tu_rmtree(s->dir);
    free(s->dir);
}

/* A file access property list of wf with the latest format (as h5shuf's scratch). */
static hid_t latest_fapl(struct h5shuf_walfile *wf, unsigned flags)
{
    struct h5shuf_err err = {0};
    hid_t fapl = h5shuf__walfile_fapl(wf, flags, &err);
    if (fapl >= 0)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    return fapl;
}

/* The whole logical file of wf, malloc'ed (*n bytes). */
static unsigned char *logical(struct h5shuf_walfile *wf, uint64_t n)
{
    struct h5shuf_err err = {0};
    unsigned char *p = malloc(n ? n : 1);
    if (p && h5shuf__walfile_pread(wf, p, n, 0, &err) != H5SHUF_OK) {
        free(p);
        p = NULL;
    }
    return p;
}

/* 1 when file path holds exactly n bytes equal to want. */
static int file_is(const char *path, const unsigned char *want, uint64_t n)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || (uint64_t)sb.st_size != n)
        return 0;
    unsigned char *got = malloc(n ? n : 1);
    int fd = open(path, O_RDONLY);
    int same = got && fd >= 0 && pread(fd, got, n, 0) == (ssize_t)n && memcmp(got, want, n) == 0;
    if (fd >= 0)
        close(fd);
    free(got);
    return same;
}

static int count_logs(const char *dir)
{
    return tu_count_entries(dir) - 1; /* all but scratch.h5 */
}

/* The file at path, opened with the default (sec2) driver read-only, checked against epoch k. */
static int check_plain(const char *path, int k)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -1;
    int bad = check(f, k);
    H5Fclose(f);
    return bad;
}

/* ---- 1. round trip ---- */

static void test_round_trip(void)
{
    struct scratch s;
    struct h5shuf_err err = {0};
    struct h5shuf_walfile *wf;
    scratch_open(&s, 1);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, 0, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t fapl = latest_fapl(wf, 0);
    ASSERT_GE_INT_FATAL(fapl, 0);
    hid_t f = H5Fcreate("ignored-name.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    ASSERT_GE_INT_FATAL(f, 0);
    const int K = 5;
    uint64_t logged = 0;
    for (int k = 0; k <= K; k++) {
        if (k < K) {
            ASSERT_EQ_INT_FATAL(populate(f, k), 0);
            ASSERT_GE_INT(H5Fflush(f, H5F_SCOPE_GLOBAL), 0);
            ASSERT_EQ_INT(check(f, k), 0); /* read back through the driver */
        } else {
            ASSERT_GE_INT(H5Fclose(f), 0);
        }
        struct h5shuf_wal_commit c;
        ASSERT_EQ_INT_FATAL(h5shuf__walfile_prepare(wf, &c, &err), H5SHUF_OK);
        if (k != 0) /* metadata below the committed eof was rewritten */
            ASSERT_GT_INT(c.log_bytes, 0);
        logged += c.log_bytes;
        unsigned char *want = logical(wf, c.eof);
        CU_ASSERT_PTR_NOT_NULL_FATAL(want);
        ASSERT_EQ_INT_FATAL(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
        CU_ASSERT(file_is(s.path, want, c.eof)); /* the base is the logical file of the commit */
        ASSERT_EQ_INT(count_logs(s.dir), 1);   /* the next (empty) log only */
        free(want);
    }
    ASSERT_GT_INT(logged, 0);
    h5shuf__walfile_free(wf);
    ASSERT_EQ_INT(count_logs(s.dir), 0);
    H5Pclose(fapl);
    scratch_close(&s);
    ASSERT_EQ_INT(check_plain(s.path, K - 1), 0);
    scratch_remove(&s);
}

/* ---- the driver against a model of sec2 ---- */

#define SPAN 65536u /* addresses of the model */

/* The file as sec2 keeps it: bytes and a size; past the size, zeros. */
struct model {
    unsigned char b[2 * SPAN];
    uint64_t size;
};

/* Copy file from into directory dir (a crash image of the base or the log). */
static void copy_into(const char *from, const char *dir)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s/'", from, dir);
    ASSERT_EQ_INT_FATAL(system(cmd), 0);
}

/* Random writes (below and across the committed eof), truncates that shrink below it and grow back,
 * reads and commits, through HDF5's public driver calls (H5FDwrite, H5FDtruncate: what the library
 * calls), against the model; at each commit a crash image (the base and the log after prepare) is
 * recovered elsewhere and must equal the model, as must the base after apply. */
static void test_model(void)
{
    struct scratch s, img;
    struct h5shuf_err err = {0};
    struct h5shuf_walfile *wf;
    static struct model m;
    static unsigned char buf[2 * SPAN];
    memset(&m, 0, sizeof m);
    scratch_open(&s, 1);
    scratch_open(&img, 1);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, 0, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t fapl = h5shuf__walfile_fapl(wf, 0, &err);
    H5FD_t *fd = H5FDopen("x", H5F_ACC_RDWR, fapl, HADDR_UNDEF);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fd);
    uint64_t seed = 7, eoa = 0;
    int commits = 0, shrinks = 0, mismatches = 0;
    for (int op = 0; op < 4000; op++) {
        const unsigned r = (unsigned)(tu_splitmix64(&seed) % 100);
        if (r < 60) { /* a write */
            const uint64_t addr = tu_splitmix64(&seed) % SPAN, len = 1 + tu_splitmix64(&seed) % 3000;
            tu_fill(buf, len, tu_splitmix64(&seed));
            if (addr + len > eoa)
                ASSERT_GE_INT(H5FDset_eoa(fd, H5FD_MEM_DRAW, eoa = addr + len), 0);
            ASSERT_GE_INT_FATAL(H5FDwrite(fd, H5FD_MEM_DRAW, H5P_DEFAULT, addr, len, buf), 0);
            memcpy(m.b + addr, buf, len);
            if (addr + len > m.size)
                m.size = addr + len;
        } else if (r < 70) { /* a truncate to a new end of address */
            eoa = tu_splitmix64(&seed) % SPAN;
            shrinks += eoa < m.size;
            ASSERT_GE_INT(H5FDset_eoa(fd, H5FD_MEM_DRAW, eoa), 0);
            ASSERT_GE_INT_FATAL(H5FDtruncate(fd, H5P_DEFAULT, 0), 0);
            if (eoa < m.size)
                memset(m.b + eoa, 0, m.size - eoa);
            m.size = eoa;
            ASSERT_EQ_INT(H5FDget_eof(fd, H5FD_MEM_DRAW), eoa);
        } else if (r < 95) { /* a read, past the end too */
            const uint64_t addr = tu_splitmix64(&seed) % SPAN, len = 1 + tu_splitmix64(&seed) % 5000;
            if (addr + len > eoa)
                ASSERT_GE_INT(H5FDset_eoa(fd, H5FD_MEM_DRAW, eoa = addr + len), 0);
            ASSERT_GE_INT_FATAL(H5FDread(fd, H5FD_MEM_DRAW, H5P_DEFAULT, addr, len, buf), 0);
            mismatches += memcmp(buf, m.b + addr, len) != 0;
        } else { /* a commit, with a crash image between prepare and apply */
            struct h5shuf_wal_commit c;
            ASSERT_EQ_INT_FATAL(h5shuf__walfile_prepare(wf, &c, &err), H5SHUF_OK);
            ASSERT_EQ_INT(c.eof, m.size);
            char log[4400];
            snprintf(log, sizeof log, "%s/%s", s.dir, c.log_name);
            tu_rmtree(img.dir);
            ASSERT_EQ_INT_FATAL(mkdir(img.dir, 0700), 0);
            scratch_close(&img);
            copy_into(s.path, img.dir);
            copy_into(log, img.dir);
            scratch_open(&img, 0);
            ASSERT_EQ_INT_FATAL(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
            CU_ASSERT(file_is(s.path, m.b, m.size));
            ASSERT_EQ_INT(h5shuf__walfile_recover(img.base, img.dirfd, PREFIX, &c, &err), H5SHUF_OK);
            CU_ASSERT(file_is(img.path, m.b, m.size));
            commits++;
        }
    }
    ASSERT_EQ_INT(mismatches, 0);
    ASSERT_GT_INT(commits, 50);
    ASSERT_GT_INT(shrinks, 50);
    ASSERT_GE_INT(H5FDclose(fd), 0);
    H5Pclose(fapl);
    h5shuf__walfile_free(wf);
    scratch_close(&s);
    scratch_close(&img);
    scratch_remove(&s);
    scratch_remove(&img);
}

/* ---- HDF5 shrinking the file below its commit ---- */

/* Contiguous dataset name of n ints, value i * mul + add at i; 0 or -1. */
static int write_contig(hid_t f, const char *name, hsize_t n, int mul, int add)
{
    int *v = malloc(n * sizeof *v);
    for (hsize_t i = 0; v && i < n; i++)
        v[i] = (int)i * mul + add;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = !v || ds < 0 ? -1 : H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    e |= H5Dclose(ds);
    H5Sclose(sp);
    free(v);
    return e < 0 ? -1 : 0;
}

/* HDF5 gives back free space at the end of the file: deleting the last (contiguous) dataset truncates the
 * file far below the committed eof; a dataset made next grows it again over the committed bytes, which
 * must read as written (the base still holds the deleted dataset's).  The commit recovers from a crash
 * image (the base and the log after prepare) and applies to a file sec2 reads.  (HDF5 writes all it
 * allocates here, so the zero records of a regrown gap are test_model's to check.) */
static void test_shrink_below_commit(void)
{
    struct scratch s, img;
    struct h5shuf_err err = {0};
    struct h5shuf_walfile *wf;
    struct h5shuf_wal_commit c;
    scratch_open(&s, 1);
    scratch_open(&img, 1);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, 0, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t fapl = latest_fapl(wf, 0);
    hid_t f = H5Fcreate("x", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    ASSERT_GE_INT_FATAL(f, 0);
    ASSERT_EQ_INT_FATAL(write_contig(f, "/big", 100000, 3, 1), 0);
    ASSERT_GE_INT(H5Fflush(f, H5F_SCOPE_GLOBAL), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_prepare(wf, &c, &err), H5SHUF_OK);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
    const uint64_t committed = c.eof;
    ASSERT_GE_INT(H5Ldelete(f, "/big", H5P_DEFAULT), 0);
    ASSERT_GE_INT(H5Fflush(f, H5F_SCOPE_GLOBAL), 0);
    /* shrunk below the commit: the logical file ends early, the base still holds /big's last values */
    int32_t tail[2] = {1, 1}, base_tail[2] = {0, 0};
    ASSERT_EQ_INT(h5shuf__walfile_pread(wf, tail, sizeof tail, committed - 8, &err), H5SHUF_OK);
    ASSERT_EQ_INT(tail[0], 0);
    ASSERT_EQ_INT(tail[1], 0);
    ASSERT_EQ_INT(pread(s.base, base_tail, sizeof base_tail, (off_t)committed - 8), 8);
    ASSERT_EQ_INT(base_tail[0], 99998 * 3 + 1);
    ASSERT_EQ_INT(base_tail[1], 99999 * 3 + 1);
    ASSERT_EQ_INT_FATAL(write_contig(f, "/half", 50000, -5, 7), 0); /* grows over the old bytes */
    ASSERT_GE_INT(H5Fflush(f, H5F_SCOPE_GLOBAL), 0);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_prepare(wf, &c, &err), H5SHUF_OK);
    unsigned char *want = logical(wf, c.eof);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    char log[4400];
    snprintf(log, sizeof log, "%s/%s", s.dir, c.log_name);
    scratch_close(&img);
    copy_into(s.path, img.dir);
    copy_into(log, img.dir);
    scratch_open(&img, 0);
    ASSERT_EQ_INT(h5shuf__walfile_recover(img.base, img.dirfd, PREFIX, &c, &err), H5SHUF_OK);
    CU_ASSERT(file_is(img.path, want, c.eof));
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
    CU_ASSERT(file_is(s.path, want, c.eof));
    free(want);
    ASSERT_GE_INT(H5Fclose(f), 0);
    int prepared = h5shuf__walfile_prepare(wf, &c, &err);
    ASSERT_EQ_INT(prepared, H5SHUF_OK);
    if (prepared == H5SHUF_OK)
        ASSERT_EQ_INT(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
    h5shuf__walfile_free(wf);
    H5Pclose(fapl);
    f = H5Fopen(s.path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(f, 0);
    ASSERT_EQ_INT(H5Lexists(f, "/big", H5P_DEFAULT), 0);
    int *v = malloc(50000 * sizeof *v);
    hid_t ds = H5Dopen2(f, "/half", H5P_DEFAULT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    ASSERT_GE_INT_FATAL(ds, 0);
    ASSERT_GE_INT_FATAL(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    int bad = 0;
    for (int i = 0; i < 50000; i++)
        bad += v[i] != i * -5 + 7;
    ASSERT_EQ_INT(bad, 0);
    free(v);
    H5Dclose(ds);
    H5Fclose(f);
    scratch_close(&s);
    scratch_close(&img);
    scratch_remove(&s);
    scratch_remove(&img);
}

/* ---- 2. crash consistency ---- */

static long kill_at, steps;

static void count_step(const char *what)
{
    (void)what;
    if (++steps == kill_at)
        raise(SIGKILL);
}

#define CRASH_EPOCHS 3

/* A journal record: the epoch and its commit. */
struct record {
    int epoch;
    struct h5shuf_wal_commit c;
    uint64_t sum; /* XXH3 of the above: a record cut by a kill is not one */
};

/* The child: CRASH_EPOCHS epochs, each flushed and committed, then closed and committed again (epoch
 * CRASH_EPOCHS: the file of epoch CRASH_EPOCHS - 1, closed).  Before the journal record of epoch k, the
 * logical file is saved as snapshot k.  Killed at step H5SHUF_WALFILE_KILL_AT (0: never); the number of
 * steps of a whole run goes to ../steps.  Exit 0, or 1 on a failure. */
static void child(struct scratch *s, const char *side)
{
    const char *at = getenv("H5SHUF_WALFILE_KILL_AT");
    kill_at = at ? atol(at) : 0;
    steps = 0;
    h5shuf__walfile_step_hook = count_step;
    struct h5shuf_err err = {0};
    struct h5shuf_walfile *wf;
    char path[4400];
    snprintf(path, sizeof path, "%s/journal", side);
    int journal = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (journal < 0 || h5shuf__walfile_new(s->base, s->dirfd, 0, PREFIX, &wf, &err) != H5SHUF_OK)
        _exit(1);
    hid_t fapl = latest_fapl(wf, 0);
    hid_t f = H5Fcreate("x", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0)
        _exit(1);
    for (int k = 0; k <= CRASH_EPOCHS; k++) {
        if (k < CRASH_EPOCHS) {
            if (populate(f, k) != 0 || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
                _exit(1);
        } else if (H5Fclose(f) < 0) {
            _exit(1);
        }
        struct record r = {k, {0}, 0};
        if (h5shuf__walfile_prepare(wf, &r.c, &err) != H5SHUF_OK)
            _exit(1);
        unsigned char *snap = logical(wf, r.c.eof);
        snprintf(path, sizeof path, "%s/snap.%d", side, k);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (!snap || fd < 0 || write(fd, snap, r.c.eof) != (ssize_t)r.c.eof)
            _exit(1);
        close(fd);
        free(snap);
        r.sum = XXH3_64bits(&r, offsetof(struct record, sum));
        count_step("record");
        if (write(journal, &r, sizeof r) != (ssize_t)sizeof r || fsync(journal) != 0)
            _exit(1);
        if (h5shuf__walfile_apply(wf, &err) != H5SHUF_OK)
            _exit(1);
    }
    h5shuf__walfile_free(wf);
    snprintf(path, sizeof path, "%s/steps", side);
    FILE *o = fopen(path, "w");
    if (!o)
        _exit(1);
#ifdef H5SHUF_FAULT_INJECTION
    fprintf(o, "%ld %ld\n", steps, h5shuf__fault_count());
#else
    fprintf(o, "%ld 0\n", steps);
#endif
    fclose(o);
    _exit(0);
}

/* Run the child killed at step n (0: never) in a fresh scratch; its exit status as waitpid gives it. */
static int run_child(struct scratch *s, const char *side, long n)
{
    pid_t pid = fork();
    if (pid == 0) {
        char v[32];
        snprintf(v, sizeof v, "%ld", n);
        setenv("H5SHUF_WALFILE_KILL_AT", v, 1);
        child(s, side);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    return ws;
}

/* The last whole record of side/journal: 1 and *r, or 0 when there is none. */
static int last_record(const char *side, struct record *r)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/journal", side);
    FILE *j = fopen(path, "rb");
    int found = 0;
    struct record x;
    while (j && fread(&x, sizeof x, 1, j) == 1)
        if (x.sum == XXH3_64bits(&x, offsetof(struct record, sum))) {
            *r = x;
            found = 1;
        }
    if (j)
        fclose(j);
    return found;
}

/* After a crash at a commit r: recover, compare with its snapshot, reopen for writing, check, write the
 * next epoch, close, and read it back with sec2.  The number of failed checks. */
static int recover_and_go_on(struct scratch *s, const char *side, const struct record *r)
{
    struct h5shuf_err err = {0};
    int bad = 0;
    if (h5shuf__walfile_recover(s->base, s->dirfd, PREFIX, &r->c, &err) != H5SHUF_OK) {
        fprintf(stderr, "recover: %s\n", err.msg);
        return 1;
    }
    char path[4400];
    snprintf(path, sizeof path, "%s/snap.%d", side, r->epoch);
    struct stat sb;
    unsigned char *snap = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &sb) != 0 || !(snap = malloc((size_t)sb.st_size + 1)) ||
        read(fd, snap, (size_t)sb.st_size) != sb.st_size)
        bad++;
    else
        bad += !file_is(s->path, snap, (uint64_t)sb.st_size); /* byte for byte the commit's file */
    if (fd >= 0)
        close(fd);
    free(snap);
    bad += count_logs(s->dir) != 0;
    struct h5shuf_walfile *wf;
    if (h5shuf__walfile_new(s->base, s->dirfd, r->c.eof, PREFIX, &wf, &err) != H5SHUF_OK)
        return bad + 1;
    const int k = r->epoch < CRASH_EPOCHS ? r->epoch : CRASH_EPOCHS - 1;
    hid_t fapl = latest_fapl(wf, H5SHUF_WALFILE_REOPEN);
    hid_t f = H5Fopen("x", H5F_ACC_RDWR, fapl);
    if (f < 0) {
        bad++;
    } else {
        bad += check(f, k);
        bad += populate(f, k + 1) != 0;
        bad += H5Fclose(f) < 0;
        struct h5shuf_wal_commit c;
        bad += h5shuf__walfile_prepare(wf, &c, &err) != H5SHUF_OK || h5shuf__walfile_apply(wf, &err) != H5SHUF_OK;
    }
    H5Pclose(fapl);
    h5shuf__walfile_free(wf);
    bad += count_logs(s->dir) != 0;
    bad += check_plain(s->path, k + 1) != 0;
    return bad;
}

static void test_crash_sweep(void)
{
    struct scratch s;
    char side[4096];
    scratch_open(&s, 1);
    snprintf(side, sizeof side, "%s.side", s.dir);
    ASSERT_EQ_INT_FATAL(mkdir(side, 0700), 0);
    /* a whole run: how many steps it takes */
    int ws = run_child(&s, side, 0);
    CU_ASSERT_FATAL(WIFEXITED(ws));
    ASSERT_EQ_INT_FATAL(WEXITSTATUS(ws), 0);
    char path[4400];
    snprintf(path, sizeof path, "%s/steps", side);
    long total = 0;
    FILE *st = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    ASSERT_EQ_INT_FATAL(fscanf(st, "%ld", &total), 1);
    ASSERT_GT_INT_FATAL(total, 10);
    fclose(st);
    scratch_close(&s);
    long swept = 0, recovered = 0, failures = 0;
    for (long n = 1; n <= total; n++) {
        /* fresh files: the scratch directory and the side one emptied */
        tu_rmtree(s.dir);
        tu_rmtree(side);
        ASSERT_EQ_INT_FATAL(mkdir(s.dir, 0700), 0);
        ASSERT_EQ_INT_FATAL(mkdir(side, 0700), 0);
        scratch_open(&s, 0);
        ws = run_child(&s, side, n);
        CU_ASSERT(WIFSIGNALED(ws));
        ASSERT_EQ_INT(WTERMSIG(ws), SIGKILL);
        swept++;
        struct record r;
        if (last_record(side, &r)) {
            int bad = recover_and_go_on(&s, side, &r);
            if (bad) {
                fprintf(stderr, "killed at step %ld of %ld (commit of epoch %d): %d checks failed\n", n, total,
                        r.epoch, bad);
                failures++;
            }
            recovered++;
        }
        scratch_close(&s);
    }
    ASSERT_EQ_INT(failures, 0);
    ASSERT_GT_INT(recovered, 0);
    ASSERT_LT_INT(recovered, swept);
    printf("\n    swept %ld kill points (%ld after a commit, recovered)\n", swept, recovered);
    tu_rmtree(side);
    scratch_remove(&s);
}

/* ---- injected faults ---- */

/* Each fault point (allocation, write, sync, truncate, log creation: fault.h) of the crash child's run
 * failing in turn, in a fresh process (the test binary again: the fault counter is read once a process):
 * the child gives up at the first failure, and the last commit it recorded must recover to its snapshot,
 * reopen and take more writes, as after a kill.  Fault-injection builds only. */
static void test_fault_sweep(void)
{
#ifndef H5SHUF_FAULT_INJECTION
    printf("(a fault-injection build only) ");
#else
    struct scratch s;
    char side[4096];
    scratch_open(&s, 1);
    snprintf(side, sizeof side, "%s.side", s.dir);
    long total = 0, steps_run = 0, recovered = 0, failures = 0, tolerated = 0;
    for (long n = 0; n <= total; n++) { /* n = 0: a whole run with no fault, counting the points */
        tu_rmtree(s.dir);
        tu_rmtree(side);
        ASSERT_EQ_INT_FATAL(mkdir(s.dir, 0700), 0);
        ASSERT_EQ_INT_FATAL(mkdir(side, 0700), 0);
        pid_t pid = fork();
        if (pid == 0) {
            char v[32];
            snprintf(v, sizeof v, "%ld", n ? n : 1000000000L);
            setenv("H5SHUF_FAULT_AT", v, 1);
            execl("/proc/self/exe", "test_walfile", "--crash-child", s.dir, side, (char *)NULL);
            _exit(127);
        }
        int ws = 0;
        waitpid(pid, &ws, 0);
        CU_ASSERT_FATAL(WIFEXITED(ws));
        ASSERT_LE_INT_FATAL(WEXITSTATUS(ws), 1); /* 0 or 1 */
        if (n == 0) {
            char path[4400];
            snprintf(path, sizeof path, "%s/steps", side);
            FILE *st = fopen(path, "r");
            CU_ASSERT_PTR_NOT_NULL_FATAL(st);
            ASSERT_EQ_INT_FATAL(fscanf(st, "%ld %ld", &steps_run, &total), 2);
            ASSERT_GT_INT_FATAL(total, 20);
            fclose(st);
            continue;
        }
        tolerated += WEXITSTATUS(ws) == 0; /* (HDF5 retries a failed tentative open with its full flags) */
        scratch_open(&s, 0);
        struct record r;
        if (last_record(side, &r)) {
            int bad = recover_and_go_on(&s, side, &r);
            if (bad) {
                fprintf(stderr, "fault %ld (commit of epoch %d): %d checks failed\n", n, r.epoch, bad);
                failures++;
            }
            recovered++;
        }
        scratch_close(&s);
    }
    ASSERT_EQ_INT(failures, 0);
    ASSERT_GT_INT(recovered, 0);
    ASSERT_LT_INT(tolerated, total);
    printf("\n    swept %ld fault points (%ld after a commit, recovered; %ld tolerated by HDF5)\n", total, recovered,
           tolerated);
    tu_rmtree(side);
    scratch_remove(&s);
#endif
}

/* ---- the status flags of a flushed checkpoint ---- */

/* A child that commits one flushed epoch and is then killed: a checkpoint of a file open for write. */
static void crash_after_flush(struct scratch *s, struct h5shuf_wal_commit *out, int apply, int prepare_more)
{
    int p[2];
    ASSERT_EQ_INT_FATAL(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        struct h5shuf_err err = {0};
        struct h5shuf_walfile *wf;
        struct h5shuf_wal_commit c;
        if (h5shuf__walfile_new(s->base, s->dirfd, 0, PREFIX, &wf, &err) != H5SHUF_OK)
            _exit(1);
        hid_t f = H5Fcreate("x", H5F_ACC_TRUNC, H5P_DEFAULT, latest_fapl(wf, 0));
        if (f < 0 || populate(f, 0) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 ||
            h5shuf__walfile_prepare(wf, &c, &err) != H5SHUF_OK || (apply && h5shuf__walfile_apply(wf, &err)))
            _exit(1);
        if (prepare_more) { /* a second commit, prepared but never applied */
            if (populate(f, 1) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 || h5shuf__walfile_prepare(wf, &c, &err))
                _exit(1);
        }
        if (write(p[1], &c, sizeof c) != (ssize_t)sizeof c)
            _exit(1);
        raise(SIGKILL);
    }
    close(p[1]);
    ASSERT_EQ_INT_FATAL(read(p[0], out, sizeof *out), (ssize_t)sizeof *out);
    close(p[0]);
    waitpid(pid, NULL, 0);
}

static void test_reopen_flags(void)
{
    struct scratch s;
    struct h5shuf_err err = {0};
    struct h5shuf_wal_commit c;
    scratch_open(&s, 1);
    crash_after_flush(&s, &c, 1, 0);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &c, &err), H5SHUF_OK);
    /* the superblock says "open for write": a plain open fails, as HDF5 does for any unclosed file */
    ASSERT_LT_INT(H5Fopen(s.path, H5F_ACC_RDWR, H5P_DEFAULT), 0);
    struct h5shuf_walfile *wf;
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, c.eof, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t plain = latest_fapl(wf, 0), reopen = latest_fapl(wf, H5SHUF_WALFILE_REOPEN);
    ASSERT_LT_INT(H5Fopen("x", H5F_ACC_RDWR, plain), 0);
    hid_t f = H5Fopen("x", H5F_ACC_RDWR, reopen);
    ASSERT_GE_INT_FATAL(f, 0);
    ASSERT_EQ_INT(check(f, 0), 0);
    ASSERT_EQ_INT(populate(f, 1), 0);
    ASSERT_GE_INT(H5Fclose(f), 0);
    ASSERT_EQ_INT(h5shuf__walfile_prepare(wf, &c, &err), H5SHUF_OK);
    ASSERT_EQ_INT(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
    /* one HDF5 file at a time: a second open through the same walfile is refused (HDF5 opens the driver
     * before it looks for the file among its open ones) */
    f = H5Fopen("x", H5F_ACC_RDWR, plain);
    ASSERT_GE_INT_FATAL(f, 0);
    ASSERT_LT_INT(H5Fopen("x", H5F_ACC_RDONLY, plain), 0);
    ASSERT_GE_INT(H5Fclose(f), 0);
    /* truncating a committed file is refused */
    ASSERT_LT_INT(H5Fcreate("x", H5F_ACC_TRUNC, H5P_DEFAULT, plain), 0);
    H5Pclose(plain);
    H5Pclose(reopen);
    h5shuf__walfile_free(wf);
    scratch_close(&s);
    ASSERT_EQ_INT(check_plain(s.path, 1), 0);
    scratch_remove(&s);
}

/* ---- 3. damaged logs ---- */

static int one_line(const char *msg)
{
    return *msg && !strchr(msg, '\n');
}

/* Copy from to to (the whole file). */
static void copy_file(const char *from, const char *to)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s'", from, to);
    ASSERT_EQ_INT_FATAL(system(cmd), 0);
}

static void test_damaged_log(void)
{
    struct scratch s;
    struct h5shuf_err err = {0};
    struct h5shuf_wal_commit c, x;
    scratch_open(&s, 1);
    crash_after_flush(&s, &c, 1, 1); /* commit 0 applied, commit 1 prepared: its log is named in c */
    char log[4400], keep[4400], base_keep[4400];
    snprintf(log, sizeof log, "%s/%s", s.dir, c.log_name);
    snprintf(keep, sizeof keep, "%s.log", s.dir);
    snprintf(base_keep, sizeof base_keep, "%s.base", s.dir);
    ASSERT_GT_INT_FATAL(c.log_bytes, 100);
    copy_file(log, keep);
    copy_file(s.path, base_keep);
    /* a byte flipped in the middle of the log */
    int fd = open(log, O_RDWR);
    unsigned char b;
    ASSERT_GE_INT_FATAL(fd, 0);
    ASSERT_EQ_INT_FATAL(pread(fd, &b, 1, (off_t)c.log_bytes / 2), 1);
    b ^= 0x10;
    ASSERT_EQ_INT(pwrite(fd, &b, 1, (off_t)c.log_bytes / 2), 1);
    ASSERT_NE_INT(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &c, &err), H5SHUF_OK);
    CU_ASSERT(one_line(err.msg) && strstr(err.msg, "checksum") && strstr(err.msg, c.log_name));
    printf("\n    %s", err.msg);
    /* the same, with the commit's checksum made to match: the record's own checksum catches it */
    x = c;
    unsigned char *all = malloc(c.log_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    ASSERT_EQ_INT_FATAL(pread(fd, all, c.log_bytes, 0), (ssize_t)c.log_bytes);
    x.log_hash = XXH3_64bits(all, c.log_bytes);
    free(all);
    close(fd);
    h5shuf__err_reset(&err);
    ASSERT_NE_INT(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &x, &err), H5SHUF_OK);
    CU_ASSERT(one_line(err.msg) && strstr(err.msg, "damaged"));
    printf("\n    %s", err.msg);
    /* a log cut short */
    copy_file(keep, log);
    ASSERT_EQ_INT(truncate(log, (off_t)c.log_bytes - 1), 0);
    h5shuf__err_reset(&err);
    ASSERT_NE_INT(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &c, &err), H5SHUF_OK);
    CU_ASSERT(one_line(err.msg) && strstr(err.msg, "bytes where the commit recorded"));
    printf("\n    %s", err.msg);
    /* a commit naming something that is not a log of the prefix */
    x = c;
    snprintf(x.log_name, sizeof x.log_name, "../etc/passwd");
    h5shuf__err_reset(&err);
    ASSERT_NE_INT(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &x, &err), H5SHUF_OK);
    CU_ASSERT(one_line(err.msg) && strstr(err.msg, "not a log of"));
    printf("\n    %s\n", err.msg);
    /* the base untouched by the refusals; the intact log recovers commit 1 */
    CU_ASSERT(tu_same_bytes(s.path, base_keep));
    copy_file(keep, log);
    h5shuf__err_reset(&err);
    ASSERT_EQ_INT(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &c, &err), H5SHUF_OK);
    struct h5shuf_walfile *wf;
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, c.eof, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t fapl = latest_fapl(wf, H5SHUF_WALFILE_REOPEN);
    hid_t f = H5Fopen("x", H5F_ACC_RDONLY, fapl);
    ASSERT_GE_INT_FATAL(f, 0);
    ASSERT_EQ_INT(check(f, 1), 0);
    H5Fclose(f);
    H5Pclose(fapl);
    h5shuf__walfile_free(wf);
    unlink(keep);
    unlink(base_keep);
    scratch_close(&s);
    scratch_remove(&s);
}

/* ---- a write that fails ---- */

/* A child whose file size limit stops a write (EFBIG, as ENOSPC would) in its second epoch: the HDF5 call
 * fails cleanly, and the first commit recovers. */
static void test_write_fails(void)
{
    struct scratch s;
    struct h5shuf_err err = {0};
    scratch_open(&s, 1);
    int p[2];
    ASSERT_EQ_INT_FATAL(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        struct h5shuf_walfile *wf;
        struct h5shuf_wal_commit c;
        if (h5shuf__walfile_new(s.base, s.dirfd, 0, PREFIX, &wf, &err) != H5SHUF_OK)
            _exit(1);
        hid_t f = H5Fcreate("x", H5F_ACC_TRUNC, H5P_DEFAULT, latest_fapl(wf, 0));
        if (f < 0 || populate(f, 0) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 ||
            h5shuf__walfile_prepare(wf, &c, &err) != H5SHUF_OK || h5shuf__walfile_apply(wf, &err))
            _exit(1);
        if (write(p[1], &c, sizeof c) != (ssize_t)sizeof c)
            _exit(1);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl, was;
        getrlimit(RLIMIT_FSIZE, &was);
        rl = was;
        rl.rlim_cur = c.eof + 4096;
        setrlimit(RLIMIT_FSIZE, &rl);
        int failed = populate(f, 1) != 0 || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0;
        char cause[512];
        h5shuf__hdf5_cause(cause, sizeof cause);
        /* the state after a failed write is never committed, even once writes succeed again */
        setrlimit(RLIMIT_FSIZE, &was);
        failed += H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0; /* (HDF5 writes what it could not) */
        struct h5shuf_err perr = {0};
        failed += h5shuf__walfile_prepare(wf, &c, &perr) != H5SHUF_OK && strstr(perr.msg, "cannot be committed");
        char msg[600];
        snprintf(msg, sizeof msg, "%d %s", failed, cause);
        if (write(p[1], msg, strlen(msg) + 1) < 0)
            _exit(1);
        raise(SIGKILL);
    }
    close(p[1]);
    struct h5shuf_wal_commit c;
    char failed[512] = "";
    ASSERT_EQ_INT_FATAL(read(p[0], &c, sizeof c), (ssize_t)sizeof c);
    ASSERT_GT_INT(read(p[0], failed, sizeof failed), 0);
    close(p[0]);
    waitpid(pid, NULL, 0);
    /* the HDF5 calls failed, with the driver's cause innermost */
    ASSERT_EQ_INT(failed[0], '3');
    ASSERT_HAS_STR(failed, "scratch.h5: cannot write");
    ASSERT_HAS_STR(failed, "File too large");
    printf("\n    %s\n", failed + 2);
    ASSERT_EQ_INT(h5shuf__walfile_recover(s.base, s.dirfd, PREFIX, &c, &err), H5SHUF_OK);
    struct h5shuf_walfile *wf;
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, c.eof, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t fapl = latest_fapl(wf, H5SHUF_WALFILE_REOPEN);
    hid_t f = H5Fopen("x", H5F_ACC_RDONLY, fapl);
    ASSERT_GE_INT_FATAL(f, 0);
    ASSERT_EQ_INT(check(f, 0), 0);
    H5Fclose(f);
    H5Pclose(fapl);
    h5shuf__walfile_free(wf);
    scratch_close(&s);
    scratch_remove(&s);
}

/* ---- measurements (H5SHUF_WALFILE_BENCH=MB) ---- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Read every dataset of f whole; seconds taken. */
static double read_all(hid_t f, int32_t *buf)
{
    double t0 = now_s();
    for (int d = 0; d < 4; d++) {
        char name[16];
        snprintf(name, sizeof name, "/b%d", d);
        hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
        ASSERT_GE_INT(ds, 0);
        if (ds >= 0)
            ASSERT_GE_INT(H5Dread(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
        H5Dclose(ds);
    }
    return now_s() - t0;
}

/* A file of MB megabytes written in 10 epochs (4 chunked datasets of 1 MiB chunks, 200 groups with
 * attributes and 4 attributes rewritten an epoch), each flushed and committed: the time of H5Fflush,
 * prepare and apply and the log's bytes per commit; then every dataset read through the driver with the
 * last epoch's log mapped, against sec2 on the closed file (both from the page cache). */
static void test_bench(void)
{
    const char *mb_s = getenv("H5SHUF_WALFILE_BENCH");
    if (!mb_s) {
        printf("(set H5SHUF_WALFILE_BENCH=MB to run) ");
        return;
    }
    const hsize_t mb = (hsize_t)atol(mb_s), epochs = 10, cols = 256; /* rows of 1 KiB */
    const hsize_t rows_epoch = mb * 1024 / epochs / 4;
    struct scratch s;
    struct h5shuf_err err = {0};
    struct h5shuf_walfile *wf;
    scratch_open(&s, 1);
    ASSERT_EQ_INT_FATAL(h5shuf__walfile_new(s.base, s.dirfd, 0, PREFIX, &wf, &err), H5SHUF_OK);
    hid_t fapl = latest_fapl(wf, 0);
    hid_t f = H5Fcreate("x", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    ASSERT_GE_INT_FATAL(f, 0);
    int32_t *buf = malloc(rows_epoch * epochs * cols * sizeof *buf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    tu_fill(buf, rows_epoch * cols * sizeof *buf, 1);
    double t_flush = 0, t_prep = 0, t_apply = 0, t_read_wal = 0;
    uint64_t log_total = 0, log_max = 0;
    printf("\n    epoch  eof(MB)  flush(ms)  prepare(ms)  apply(ms)  log(bytes)\n");
    for (hsize_t k = 0; k < epochs; k++) {
        for (int d = 0; d < 4; d++) {
            char name[16];
            snprintf(name, sizeof name, "/b%d", d);
            hid_t ds;
            if (k == 0) {
                hsize_t dims[2] = {0, cols}, maxd[2] = {H5S_UNLIMITED, cols}, chunk[2] = {1024, cols};
                hid_t sp = H5Screate_simple(2, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
                H5Pset_chunk(dcpl, 2, chunk);
                ds = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
                H5Pclose(dcpl);
                H5Sclose(sp);
            } else {
                ds = H5Dopen2(f, name, H5P_DEFAULT);
            }
            hsize_t dims[2] = {(k + 1) * rows_epoch, cols}, start[2] = {k * rows_epoch, 0}, count[2] = {rows_epoch, cols};
            ASSERT_GE_INT(H5Dset_extent(ds, dims), 0);
            hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, count, NULL);
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
            ASSERT_GE_INT(H5Dwrite(ds, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, buf), 0);
            hid_t sp = H5Screate(H5S_SCALAR), a = k == 0 ? H5Acreate2(ds, "done", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT)
                                                         : H5Aopen(ds, "done", H5P_DEFAULT);
            ASSERT_GE_INT(H5Awrite(a, H5T_NATIVE_HSIZE, &dims[0]), 0);
            H5Aclose(a);
            H5Sclose(sp);
            H5Sclose(ms);
            H5Sclose(fs);
            H5Dclose(ds);
        }
        for (int i = 0; i < 20; i++) {
            char name[32];
            snprintf(name, sizeof name, "/e%d_%d", (int)k, i);
            H5Gclose(H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        }
        double t0 = now_s();
        ASSERT_GE_INT(H5Fflush(f, H5F_SCOPE_GLOBAL), 0);
        double t1 = now_s();
        if (k == epochs - 1) /* the datasets through the driver, the last epoch's log mapped */
            t_read_wal = read_all(f, buf);
        double t2 = now_s();
        struct h5shuf_wal_commit c;
        ASSERT_EQ_INT_FATAL(h5shuf__walfile_prepare(wf, &c, &err), H5SHUF_OK);
        double t3 = now_s();
        ASSERT_EQ_INT_FATAL(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
        double t4 = now_s();
        printf("    %5d  %7.1f  %9.2f  %11.2f  %9.2f  %10llu\n", (int)k, c.eof / 1048576.0, (t1 - t0) * 1e3,
               (t3 - t2) * 1e3, (t4 - t3) * 1e3, (unsigned long long)c.log_bytes);
        t_flush += t1 - t0;
        t_prep += t3 - t2;
        t_apply += t4 - t3;
        log_total += c.log_bytes;
        log_max = c.log_bytes > log_max ? c.log_bytes : log_max;
    }
    ASSERT_GE_INT(H5Fclose(f), 0);
    struct h5shuf_wal_commit c;
    int prepared = h5shuf__walfile_prepare(wf, &c, &err);
    ASSERT_EQ_INT(prepared, H5SHUF_OK);
    if (prepared == H5SHUF_OK)
        ASSERT_EQ_INT(h5shuf__walfile_apply(wf, &err), H5SHUF_OK);
    /* the committed file (no log), alternately through the driver and sec2: the best of 3 each */
    double t_wal = 1e9, t_sec2 = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        f = H5Fopen("x", H5F_ACC_RDONLY, fapl);
        ASSERT_GE_INT_FATAL(f, 0);
        double t = read_all(f, buf);
        t_wal = t < t_wal ? t : t_wal;
        H5Fclose(f);
        f = H5Fopen(s.path, H5F_ACC_RDONLY, H5P_DEFAULT);
        ASSERT_GE_INT_FATAL(f, 0);
        t = read_all(f, buf);
        t_sec2 = t < t_sec2 ? t : t_sec2;
        H5Fclose(f);
    }
    h5shuf__walfile_free(wf);
    H5Pclose(fapl);
    printf("    mean of %d commits: flush %.2f ms, prepare %.2f ms, apply %.2f ms, log %llu bytes (max %llu)\n",
           (int)epochs, t_flush * 1e3 / epochs, t_prep * 1e3 / epochs, t_apply * 1e3 / epochs,
           (unsigned long long)(log_total / epochs), (unsigned long long)log_max);
    printf("    reading %.1f MB: walfile %.1f ms with the last epoch's log mapped (first read); committed, best of 3: "
           "walfile %.1f ms, sec2 %.1f ms\n",
           c.eof / 1048576.0, t_read_wal * 1e3, t_wal * 1e3, t_sec2 * 1e3);
    free(buf);
    scratch_close(&s);
    scratch_remove(&s);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--crash-child")) { /* test_fault_sweep's child */
        struct scratch s = {argv[2], "", -1, -1};
        snprintf(s.path, sizeof s.path, "%s/scratch.h5", s.dir);
        s.base = open(s.path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        s.dirfd = open(s.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        if (s.base < 0 || s.dirfd < 0)
            return 2;
        child(&s, argv[3]);
    }
    static const struct tu_test tests[] = {
        {"commits of chunked gzip data and many groups read back with sec2", test_round_trip},
        {"random writes, truncates and reads against a model of sec2; crash images recover", test_model},
        {"HDF5 cuts the file below its commit and grows it again", test_shrink_below_commit},
        {"SIGKILL at every step recovers the last commit's bytes, which reopen for writing", test_crash_sweep},
        {"each injected fault of a run: the last commit recovers", test_fault_sweep},
        {"a flushed checkpoint reopens for writing with H5SHUF_WALFILE_REOPEN only", test_reopen_flags},
        {"a damaged, short or foreign log is refused in one line", test_damaged_log},
        {"a failed write fails HDF5's call and the last commit recovers", test_write_fails},
        {"measurements (H5SHUF_WALFILE_BENCH=MB)", test_bench},
        {NULL, NULL},
    };
    return tu_main("walfile", tests);
}
