/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_runcopy.c - runs of split chunks moved between rows and chunks (runcopy.c): h5shuf__copy_runs and
 * h5shuf__copy_lines against a byte loop written here, on the block shapes split chunks have (h5py's
 * (2500, 4, 8, 1) of uint8 images, other types and blocks, both directions) and on random run tables,
 * with every byte outside the runs checked untouched; codec.c's groups of image chunks as one table and
 * random tables whose destinations are ranges of 16 bytes or more (the SSSE3 gather), in buffers that end
 * at the runs.  ctest runs it twice: as the processor allows (the AVX-512 VBMI progressions where it has
 * them, else the SSSE3 gather) and with H5SHUF_DEBUG_NO_SIMD=1 (the byte loops).
 */
#include <stdlib.h>
#include <string.h>

#include "runcopy.h"
#include "tu_core.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(uint64_t n) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return n ? z % n : z;
}

/* Copy with h5shuf__copy_runs and with a byte loop into two copies of the same destination; 1 when they
 * are equal everywhere (so bytes outside the runs kept their values in both). */
static int same_as_loop(size_t drow, const size_t *doff, size_t srow, const size_t *soff, size_t rows, size_t nruns,
                        size_t run, size_t dsize, size_t ssize)
{
    unsigned char *s = malloc(ssize), *a = malloc(dsize), *b = malloc(dsize);
    for (size_t i = 0; i < ssize; i++)
        s[i] = (unsigned char)rnd(256);
    for (size_t i = 0; i < dsize; i++)
        a[i] = b[i] = (unsigned char)rnd(256);
    h5shuf__copy_runs(a, drow, doff, s, srow, soff, rows, nruns, run);
    for (size_t k = 0; k < rows; k++)
        for (size_t i = 0; i < nruns; i++)
            for (size_t t = 0; t < run; t++)
                b[k * drow + doff[i] + t] = s[k * srow + soff[i] + t];
    int same = memcmp(a, b, dsize) == 0;
    free(s);
    free(a);
    free(b);
    return same;
}

/* A block of a chunk of (rows, c1, c2, c3) elements of type bytes inside rows of (d1, d2, d3), at offset
 * (o1, o2, o3): the runs of one row (along the last dimension), in both directions. */
static int block_ok(size_t rows, size_t c1, size_t c2, size_t c3, size_t d1, size_t d2, size_t d3, size_t o1,
                    size_t o2, size_t o3, size_t type)
{
    size_t nruns = c1 * c2, run = c3 * type, *coff = malloc(nruns * sizeof *coff), *uoff = malloc(nruns * sizeof *uoff);
    for (size_t a = 0; a < c1; a++)
        for (size_t b = 0; b < c2; b++) {
            coff[a * c2 + b] = (a * c2 + b) * c3 * type;
            uoff[a * c2 + b] = (((o1 + a) * d2 + o2 + b) * d3 + o3) * type;
        }
    const size_t crow = c1 * c2 * c3 * type, urow = d1 * d2 * d3 * type;
    int ok = same_as_loop(crow, coff, urow, uoff, rows, nruns, run, rows * crow, rows * urow) && /* rows -> chunk */
             same_as_loop(urow, uoff, crow, coff, rows, nruns, run, rows * urow, rows * crow);  /* chunk -> rows */
    free(coff);
    free(uoff);
    return ok;
}

static void test_blocks(void)
{
    /* h5py's images: (2500, 4, 8, 1) of (64, 64, 3) uint8, every block of a chunk row */
    int ok = 1;
    for (size_t o1 = 0; o1 < 64; o1 += 4)
        for (size_t o2 = 0; o2 < 64; o2 += 8)
            for (size_t o3 = 0; o3 < 3; o3++)
                ok &= block_ok(37, 4, 8, 1, 64, 64, 3, o1, o2, o3, 1);
    CU_ASSERT(ok);
    CU_ASSERT(block_ok(100, 4, 8, 1, 64, 64, 3, 60, 56, 2, 2));   /* uint16 */
    CU_ASSERT(block_ok(100, 2, 16, 1, 32, 32, 3, 30, 16, 1, 4));  /* float32 */
    CU_ASSERT(block_ok(50, 8, 4, 2, 16, 16, 4, 8, 12, 2, 1));     /* runs of 2 */
    CU_ASSERT(block_ok(50, 3, 9, 1, 9, 27, 5, 6, 18, 4, 1));      /* progressions cut at 64 bytes */
    CU_ASSERT(block_ok(50, 2, 3, 1, 4, 3, 1, 2, 0, 0, 8));        /* contiguous: steps equal to the run */
    CU_ASSERT(block_ok(3, 4, 8, 1, 64, 64, 3, 0, 0, 0, 1));       /* fewer rows than the vector path takes */
}

/* Random tables: runs in increasing order with random gaps (progressions of every length, and none). */
static void test_random(void)
{
    int ok = 1;
    for (int c = 0; c < 2000; c++) {
        const size_t run = 1 + rnd(c % 3 ? 4 : 40), nruns = 1 + rnd(120), rows = 1 + rnd(20);
        size_t doff[128], soff[128], dpos = rnd(50), spos = rnd(50);
        const size_t dstep = run + rnd(4), sstep = run + rnd(8);
        for (size_t i = 0; i < nruns; i++) {
            const int regular = rnd(4) != 0; /* mostly a constant step, sometimes a jump */
            doff[i] = dpos;
            soff[i] = spos;
            dpos += regular ? dstep : run + rnd(100);
            spos += regular ? sstep : run + rnd(100);
        }
        ok &= same_as_loop(dpos + 7, doff, spos + 5, soff, rows, nruns, run, rows * (dpos + 7), rows * (spos + 5));
    }
    CU_ASSERT(ok);
}

/* same_as_loop with buffers that end where the runs' last bytes do (a read or write past them is
 * AddressSanitizer's error in the sanitizer build): rows of at least 256 (the SSSE3 gather's least). */
static int tight_ok(size_t drow, const size_t *doff, size_t srow, const size_t *soff, size_t rows, size_t nruns, size_t run)
{
    size_t dend = 0, send = 0;
    for (size_t i = 0; i < nruns; i++) {
        dend = doff[i] + run > dend ? doff[i] + run : dend;
        send = soff[i] + run > send ? soff[i] + run : send;
    }
    return same_as_loop(drow, doff, srow, soff, rows, nruns, run, (rows - 1) * drow + dend, (rows - 1) * srow + send);
}

/* A group as codec.c moves it: 12 consecutive chunks of an h5py image chunk row ((R, 4, 8, 1) uint8 of
 * (64, 64, 3): 4 blocks of 8 columns times 3 channels), each at stride bytes in the group's buffer, their
 * runs one table: every row's destination is then whole ranges (4 of 96 bytes in a row, 12 of 32 in the
 * chunks), which the SSSE3 gather moves.  Every group of a chunk row, both directions. */
static void test_groups(void)
{
    const size_t rows = 300, crow = 32, stride = rows * crow + 64, urow = 64 * 64 * 3;
    size_t coff[384], uoff[384];
    int ok = 1;
    for (size_t first = 0; first < 384; first += 12) {
        size_t n = 0;
        for (size_t g = 0; g < 12; g++) {
            const size_t c = first + g, o1 = c / 24 * 4, o2 = c / 3 % 8 * 8, o3 = c % 3;
            for (size_t a = 0; a < 4; a++)
                for (size_t b = 0; b < 8; b++, n++) {
                    coff[n] = g * stride + (a * 8 + b);
                    uoff[n] = ((o1 + a) * 64 + o2 + b) * 3 + o3;
                }
        }
        ok &= tight_ok(urow, uoff, crow, coff, rows, n, 1); /* decode: chunks -> rows */
        ok &= tight_ok(crow, coff, urow, uoff, rows, n, 1); /* encode: rows -> chunks */
    }
    CU_ASSERT(ok);
}

/* Random tables whose destination bytes are ranges of 16 bytes or more (lengths no multiple of 16 too),
 * cut into runs of one length, their sources anywhere in the source row (overlapping too): the gather's
 * windows of every count; and tables with a range under 16 bytes, which it leaves to the byte loop. */
static void test_gather_random(void)
{
    int ok = 1;
    for (int c = 0; c < 300; c++) {
        const size_t run = 1 + rnd(c % 2 ? 3 : 8), rows = 256 + rnd(50), srow = 64 + rnd(400);
        const int short_range = c % 7 == 0;
        size_t doff[512], soff[512], nruns = 0, dpos = rnd(40);
        for (int range = 0, nr = 1 + (int)rnd(6); range < nr; range++) {
            size_t len = short_range && range == 0 ? 1 + rnd(2) : (16 + rnd(80) + run - 1) / run; /* runs */
            for (size_t i = 0; i < len && nruns < 512; i++, nruns++) {
                doff[nruns] = dpos + i * run;
                soff[nruns] = rnd(srow - run + 1);
            }
            dpos += len * run + 1 + rnd(30);
        }
        /* the runs in a random order (the table's order is not the destination's) */
        for (size_t i = nruns; i > 1; i--) {
            size_t j = rnd(i), t = doff[i - 1];
            doff[i - 1] = doff[j], doff[j] = t;
            t = soff[i - 1], soff[i - 1] = soff[j], soff[j] = t;
        }
        ok &= tight_ok(dpos + rnd(20), doff, srow, soff, rows, nruns, run);
    }
    CU_ASSERT(ok);
}

static void test_lines(void)
{
    unsigned char s[4096], a[4096], b[4096];
    int ok = 1;
    for (int c = 0; c < 200; c++) {
        const size_t run = 1 + rnd(12), lines = 1 + rnd(40), ds = run + rnd(40), ss = run + rnd(40);
        for (size_t i = 0; i < sizeof s; i++)
            s[i] = (unsigned char)rnd(256), a[i] = b[i] = (unsigned char)rnd(256);
        h5shuf__copy_lines(a, ds, s, ss, lines, run);
        for (size_t i = 0; i < lines; i++)
            memcpy(b + i * ds, s + i * ss, run);
        ok &= memcmp(a, b, sizeof a) == 0;
    }
    CU_ASSERT(ok);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"split chunks' blocks, both directions, bytes outside the runs kept", test_blocks},
        {"random run tables against a byte loop", test_random},
        {"groups of image chunks as one table, both directions, buffers ending at the runs", test_groups},
        {"random tables tiling ranges of 16 bytes or more, and not", test_gather_random},
        {"lines of runs against memcpy", test_lines},
        {NULL, NULL},
    };
    return tu_run("runcopy", tests);
}
