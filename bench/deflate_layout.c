/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deflate_layout.c - what libdeflate alone costs one dataset's bytes in two chunk layouts (issue 28's
 * images: h5py's chunks that split rows against chunks of whole rows), bench/cases.sh's images case.
 *
 *   h5shuf_deflate_layout FILE DSET WHOLE_ROWS C0 C1 C2 C3 [ROUNDS]
 *
 * DSET: a 4-D dataset of 1-byte elements (N, D1, D2, D3), read whole into memory.  Its first
 * N - N % lcm(WHOLE_ROWS, C0) rows are deflated at level 4 (libdeflate, one thread) as chunks of WHOLE_ROWS
 * whole rows, and again, the same bytes rearranged, as chunks of (C0, C1, C2, C3) in the row-major order
 * of the chunk indices (each chunk's bytes row-major, as HDF5 stores a chunk; C1..C3 must divide D1..D3),
 * alternately, ROUNDS times each (default 3).  Prints each timing, the medians, their ratio, and the
 * deflated size / raw size of each layout.  No file is written.  Exit 0; 1 on any failure (one line on
 * stderr); 2 on a usage error.
 */
#include <hdf5.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS_MAX 15

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Deflate buf (n bytes) in pieces of piece bytes; seconds, and the deflated bytes in *out (0 on failure). */
static double deflate_pieces(struct libdeflate_compressor *c, const unsigned char *buf, size_t n, size_t piece,
                             unsigned char *tmp, size_t cap, size_t *out)
{
    double t = now();
    *out = 0;
    for (size_t a = 0; a + piece <= n; a += piece) {
        size_t k = libdeflate_deflate_compress(c, buf + a, piece, tmp, cap);
        if (k == 0) {
            *out = 0;
            return 0;
        }
        *out += k;
    }
    return now() - t;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv)
{
    if (argc < 8 || argc > 9) {
        fprintf(stderr, "usage: h5shuf_deflate_layout FILE DSET WHOLE_ROWS C0 C1 C2 C3 [ROUNDS]\n");
        return 2;
    }
    size_t whole = strtoull(argv[3], NULL, 10), ch[4], dims[4];
    for (int i = 0; i < 4; i++)
        ch[i] = strtoull(argv[4 + i], NULL, 10);
    int rounds = argc > 8 ? atoi(argv[8]) : 3;
    if (whole == 0 || !ch[0] || !ch[1] || !ch[2] || !ch[3] || rounds < 1 || rounds > ROUNDS_MAX) {
        fprintf(stderr, "h5shuf_deflate_layout: WHOLE_ROWS and C0..C3 must be positive, ROUNDS 1..%d\n", ROUNDS_MAX);
        return 2;
    }
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, argv[2], H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID, ty = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    hsize_t hd[H5S_MAX_RANK];
    if (sp < 0 || ty < 0 || H5Sget_simple_extent_ndims(sp) != 4 || H5Tget_size(ty) != 1 ||
        H5Sget_simple_extent_dims(sp, hd, NULL) != 4) {
        fprintf(stderr, "h5shuf_deflate_layout: %s: %s: not a 4-D dataset of 1-byte elements\n", argv[1], argv[2]);
        return 1;
    }
    for (int i = 0; i < 4; i++)
        dims[i] = (size_t)hd[i];
    if (dims[1] % ch[1] || dims[2] % ch[2] || dims[3] % ch[3]) {
        fprintf(stderr, "h5shuf_deflate_layout: C1..C3 must divide the dataset's dims 1..3\n");
        return 2;
    }
    const size_t row = dims[1] * dims[2] * dims[3], lcm = whole / gcd(whole, ch[0]) * ch[0];
    const size_t rows = dims[0] - dims[0] % lcm, n = rows * row, cbytes = ch[0] * ch[1] * ch[2] * ch[3];
    unsigned char *buf = malloc(dims[0] * row), *split = malloc(n ? n : 1);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(4);
    size_t cap = libdeflate_deflate_compress_bound(NULL, whole * row > cbytes ? whole * row : cbytes);
    unsigned char *tmp = malloc(cap);
    if (rows == 0 || !buf || !split || !c || !tmp ||
        H5Dread(d, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        fprintf(stderr, "h5shuf_deflate_layout: %s: %s: cannot read it (or out of memory, or fewer than %zu rows)\n",
                argv[1], argv[2], lcm);
        return 1;
    }
    size_t q = 0; /* the chunks (r0, a, b, e) in row-major order, each one's bytes row-major */
    for (size_t r0 = 0; r0 < rows; r0 += ch[0])
        for (size_t a = 0; a < dims[1]; a += ch[1])
            for (size_t b = 0; b < dims[2]; b += ch[2])
                for (size_t e = 0; e < dims[3]; e += ch[3])
                    for (size_t r = r0; r < r0 + ch[0]; r++)
                        for (size_t i = a; i < a + ch[1]; i++)
                            for (size_t j = b; j < b + ch[2]; j++)
                                memcpy(split + q, buf + r * row + (i * dims[2] + j) * dims[3] + e, ch[3]),
                                    q += ch[3];
    double tw[ROUNDS_MAX], ts[ROUNDS_MAX];
    size_t ow = 0, os = 0;
    for (int k = 0; k < rounds; k++) {
        tw[k] = deflate_pieces(c, buf, n, whole * row, tmp, cap, &ow);
        ts[k] = deflate_pieces(c, split, n, cbytes, tmp, cap, &os);
        if (!ow || !os) {
            fprintf(stderr, "h5shuf_deflate_layout: libdeflate failed\n");
            return 1;
        }
        printf("round %d: whole rows %.3f s, split chunks %.3f s\n", k + 1, tw[k], ts[k]);
    }
    qsort(tw, (size_t)rounds, sizeof *tw, cmp_double);
    qsort(ts, (size_t)rounds, sizeof *ts, cmp_double);
    double mw = rounds % 2 ? tw[rounds / 2] : (tw[rounds / 2 - 1] + tw[rounds / 2]) / 2;
    double ms = rounds % 2 ? ts[rounds / 2] : (ts[rounds / 2 - 1] + ts[rounds / 2]) / 2;
    printf("deflate-layout: %zu rows (%zu bytes), level 4, 1 thread: chunks of %zu whole rows %.3f s (size %.4f of raw), "
           "chunks (%zu, %zu, %zu, %zu) %.3f s (size %.4f of raw): split / whole %.2f\n",
           rows, n, whole, mw, (double)ow / (double)n, ch[0], ch[1], ch[2], ch[3], ms, (double)os / (double)n, ms / mw);
    libdeflate_free_compressor(c);
    free(tmp);
    free(split);
    free(buf);
    H5Tclose(ty);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    return 0;
}
