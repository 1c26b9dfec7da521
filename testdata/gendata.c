/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gendata.c - writes the HDF5 files of testdata/ and of the benchmarks; the project owns its data.
 *
 *   h5shuf_gendata example PATH
 *       a small training set like the real ones: /X (1000, 8, 8, 3) uint8 images (chunked, shuffle +
 *       deflate), /y (1000,) int64 labels, /ids (1000,) uint64 row numbers, /classes (3,) strings.
 *       Image i is a pure function of i, and ids[i] = i, so a shuffled copy can be checked pair by pair.
 *   h5shuf_gendata floats PATH ROWS COLS [GZIP_LEVEL]
 *       /x (ROWS, COLS) float32, values rounded to 1/256 (compresses about 2:1 with gzip, as real
 *       features do), chunks of about 1 MiB; GZIP_LEVEL 0 or absent: no filter.  Written in 64 MiB
 *       slabs, so any size fits in memory.
 */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): a reproducible stream for test values. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int fail(const char *what)
{
    fprintf(stderr, "h5shuf_gendata: %s failed\n", what);
    return 1;
}

/* File and dataset creation properties without object timestamps: the same command writes the same
 * bytes, so outputs made from these files (whole-file copies keep their objects' headers) are
 * reproducible to the byte, e.g. in tests/md5_matrix.sh. */
/* File access properties of the files written here: the earliest file format that holds each object, as
 * HDF5 1.10 to 1.14 choose by default (2.0 writes the 1.8 format at least), so that every HDF5 writes the
 * same files. */
static hid_t earliest_format(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    return fapl;
}

static hid_t untimed(hid_t cls)
{
    hid_t p = H5Pcreate(cls);
    H5Pset_obj_track_times(p, 0);
    return p;
}

static int example(const char *path)
{
    enum { N = 1000, H = 8, W = 8, C = 3 };
    static unsigned char X[N][H][W][C];
    static int64_t y[N];
    static uint64_t ids[N];
    for (uint64_t i = 0; i < N; i++) {
        uint64_t st = i;
        y[i] = (int64_t)(splitmix64(&st) % 3);
        ids[i] = i;
        unsigned char *px = &X[i][0][0][0];
        for (int k = 0; k < H * W * C; k++)
            px[k] = (unsigned char)(splitmix64(&st) >> 56);
    }
    hid_t fcpl = untimed(H5P_FILE_CREATE), plain = untimed(H5P_DATASET_CREATE);
    hid_t fapl = earliest_format();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (f < 0)
        return fail("H5Fcreate");
    hsize_t xd[4] = {N, H, W, C}, xc[4] = {100, H, W, C}, n1[1] = {N}, nc[1] = {3};
    hid_t dcpl = untimed(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 4, xc);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    hid_t s = H5Screate_simple(4, xd, NULL);
    hid_t d = H5Dcreate2(f, "/X", H5T_STD_U8LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    herr_t r = H5Dwrite(d, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, X);
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t at = H5Tcopy(H5T_C_S1);
    const char *desc = "8x8 RGB images, pseudo-random pixels from their row number";
    H5Tset_size(at, strlen(desc) + 1);
    hid_t a = H5Acreate2(d, "description", at, as, H5P_DEFAULT, H5P_DEFAULT);
    r |= H5Awrite(a, at, desc);
    H5Aclose(a);
    H5Dclose(d);
    H5Sclose(s);

    s = H5Screate_simple(1, n1, NULL);
    d = H5Dcreate2(f, "/y", H5T_STD_I64LE, s, H5P_DEFAULT, plain, H5P_DEFAULT);
    r |= H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, y);
    H5Dclose(d);
    d = H5Dcreate2(f, "/ids", H5T_STD_U64LE, s, H5P_DEFAULT, plain, H5P_DEFAULT);
    r |= H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids);
    H5Dclose(d);
    H5Sclose(s);

    static const char classes[3][8] = {"circle", "square", "star"};
    H5Tset_size(at, 8);
    s = H5Screate_simple(1, nc, NULL);
    d = H5Dcreate2(f, "/classes", at, s, H5P_DEFAULT, plain, H5P_DEFAULT);
    r |= H5Dwrite(d, at, H5S_ALL, H5S_ALL, H5P_DEFAULT, classes);
    H5Dclose(d);
    H5Sclose(s);
    H5Tclose(at);
    H5Sclose(as);
    H5Pclose(dcpl);
    H5Pclose(plain);
    if (H5Fclose(f) < 0 || r < 0)
        return fail("writing the example");
    return 0;
}

static int floats(const char *path, uint64_t rows, uint64_t cols, unsigned level)
{
    hid_t fcpl = untimed(H5P_FILE_CREATE);
    hid_t fapl = earliest_format();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (f < 0)
        return fail("H5Fcreate");
    uint64_t chunk_rows = (UINT64_C(1) << 20) / (cols * 4);
    if (chunk_rows == 0)
        chunk_rows = 1;
    if (chunk_rows > rows && rows > 0)
        chunk_rows = rows;
    hsize_t dims[2] = {rows, cols}, cdims[2] = {chunk_rows ? chunk_rows : 1, cols};
    hid_t dcpl = untimed(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cdims);
    if (level > 0)
        H5Pset_deflate(dcpl, level);
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "/x", H5T_IEEE_F32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0)
        return fail("H5Dcreate");
    uint64_t slab = ((UINT64_C(64) << 20) / (cols * 4) / cdims[0]) * cdims[0];
    if (slab == 0)
        slab = cdims[0];
    float *buf = malloc(slab * cols * sizeof *buf);
    if (!buf)
        return fail("malloc");
    uint64_t state = 12345;
    herr_t r = 0;
    for (uint64_t start = 0; start < rows && r >= 0; start += slab) {
        uint64_t n = rows - start < slab ? rows - start : slab;
        for (uint64_t k = 0; k < n * cols; k++) {
            /* a bell-ish value in [-4, 4) with 8 fractional bits */
            uint64_t u = splitmix64(&state);
            int v = (int)((u & 0x3ff) + ((u >> 10) & 0x3ff) + ((u >> 20) & 0x3ff) + ((u >> 30) & 0x3ff)) - 2046;
            buf[k] = (float)v / 256.0f;
        }
        hsize_t off[2] = {start, 0}, cnt[2] = {n, cols};
        hid_t fs = H5Dget_space(d);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL);
        hid_t ms = H5Screate_simple(2, cnt, NULL);
        r = H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, buf);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    free(buf);
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
    if (H5Fclose(f) < 0 || r < 0)
        return fail("writing the floats");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "example") == 0)
        return example(argv[2]);
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "floats") == 0)
        return floats(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                      argc == 6 ? (unsigned)atoi(argv[5]) : 0);
    fprintf(stderr, "usage: h5shuf_gendata example PATH\n"
                    "       h5shuf_gendata floats PATH ROWS COLS [GZIP_LEVEL]\n");
    return 2;
}
