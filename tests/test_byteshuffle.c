/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_byteshuffle.c - HDF5's byte shuffle as byteshuffle.c makes it, against two oracles: HDF5's own
 * shuffle filter (a chunk written through H5Pset_shuffle and read back raw with H5Dread_chunk) and the
 * filter's definition written out here as a byte loop (byte j of element i at j * nelem + i, the bytes
 * after the last whole element copied).  Element sizes 1 to 17 and counts around the vector path's
 * blocks of 16 elements, both directions, and the round trip.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byteshuffle.h"
#include "testutil.h"

/* The definition (H5Zshuffle.c's format), one byte at a time. */
static void reference(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int reverse)
{
    const size_t nelem = size > 1 ? n / size : 0;
    memcpy(dst, src, n);
    if (nelem <= 1)
        return;
    for (size_t i = 0; i < nelem; i++)
        for (size_t j = 0; j < size; j++) {
            if (reverse)
                dst[i * size + j] = src[j * nelem + i];
            else
                dst[j * nelem + i] = src[i * size + j];
        }
}

/* Every size 1..17 and byte count 0..400 (tails after whole elements, blocks of 16 and what is left of
 * them), random bytes: both directions equal the definition, nothing written past n, and the round trip
 * gives the bytes back. */
static void test_against_definition(void)
{
    enum { N = 400 };
    static unsigned char src[N], got[N + 16], want[N], back[N + 16];
    uint64_t seed = 11;
    for (size_t size = 1; size <= 17; size++)
        for (size_t n = 0; n <= N; n++) {
            tu_fill(src, n, seed++);
            for (int reverse = 0; reverse < 2; reverse++) {
                memset(got, 0xa5, sizeof got);
                reference(src, want, n, size, reverse);
                h5shuf__byteshuffle(src, got, n, size, reverse);
                ASSERT_EQ_MEM_FATAL(got, want, n);
                ASSERT_EQ_INT_FATAL(got[n], 0xa5);
            }
            h5shuf__byteshuffle(src, got, n, size, 0);
            h5shuf__byteshuffle(got, back, n, size, 1);
            ASSERT_EQ_MEM_FATAL(back, src, n);
        }
}

/* HDF5's shuffle filter on one chunk of nelem elements of size bytes (an opaque type of that size):
 * its stored bytes equal h5shuf__byteshuffle's, and unshuffled they are the data. */
static void check_hdf5(hid_t file, size_t size, size_t nelem, uint64_t seed)
{
    const size_t n = size * nelem;
    unsigned char *data = malloc(n + 1), *raw = malloc(n + 1), *mine = malloc(n + 1);
    CU_ASSERT_FATAL(data && raw && mine);
    tu_fill(data, n, seed);
    hid_t type = H5Tcreate(H5T_OPAQUE, size);
    H5Tset_tag(type, "bytes");
    hsize_t dims = nelem;
    hid_t space = H5Screate_simple(1, &dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    ASSERT_GE_INT_FATAL(H5Pset_chunk(dcpl, 1, &dims), 0);
    ASSERT_GE_INT_FATAL(H5Pset_shuffle(dcpl), 0);
    char name[64];
    snprintf(name, sizeof name, "s%zu_n%zu", size, nelem);
    hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(d, 0);
    ASSERT_GE_INT_FATAL(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    ASSERT_GE_INT_FATAL(H5Dflush(d), 0);
    hsize_t offset = 0, stored = 0;
    uint32_t mask = 0;
    ASSERT_GE_INT_FATAL(H5Dget_chunk_storage_size(d, &offset, &stored), 0);
    ASSERT_EQ_INT_FATAL(stored, n);
    ASSERT_GE_INT_FATAL(H5Dread_chunk(d, H5P_DEFAULT, &offset, &mask, raw), 0);
    ASSERT_EQ_INT(mask, 0); /* the shuffle was applied */
    h5shuf__byteshuffle(data, mine, n, size, 0);
    ASSERT_EQ_MEM(mine, raw, n);
    h5shuf__byteshuffle(raw, mine, n, size, 1);
    ASSERT_EQ_MEM(mine, data, n);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Tclose(type);
    free(data);
    free(raw);
    free(mine);
}

static void test_against_hdf5(void)
{
    char *dir = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/shuffled.h5", dir);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE_INT_FATAL(file, 0);
    static const size_t sizes[] = {2, 3, 4, 5, 8, 12, 16};
    static const size_t counts[] = {2, 15, 16, 17, 33, 1000, 65536 + 7};
    uint64_t seed = 5;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            check_hdf5(file, sizes[s], counts[c], seed++);
    H5Fclose(file);
    unlink(path);
    rmdir(dir);
    free(dir);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"byte shuffle equals its definition (sizes 1-17, every tail)", test_against_definition},
        {"byte shuffle equals HDF5's shuffle filter", test_against_hdf5},
        {NULL, NULL},
    };
    return tu_run("byteshuffle", tests);
}
