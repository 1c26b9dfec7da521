/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_zstd.c - the Zstandard filter (id 32015) called as HDF5 calls it.
 *
 * Round trips over a sample of levels and of data (tiny, incompressible, repetitive), compatibility both
 * ways with plain libzstd (what the HDF Group's reference plugin calls: ZSTD_compress and one-shot
 * ZSTD_decompress), frames without a content size and several frames (streaming writers), and corrupt
 * or truncated input, which must fail cleanly (return 0, buffer untouched, message on HDF5's stack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <zstd.h>

#include "filter_limit.h"
#include "filter_zstd.h"
#include "testutil.h"

/* Run the filter on a copy of data as HDF5 would (buffer from H5allocate_memory); returns the output
 * size (0: failure) and the buffer in *out (caller frees with H5free_memory). */
static size_t run_filter(unsigned flags, int level, const void *data, size_t n, void **out)
{
    void *buf = H5allocate_memory(n ? n : 1, 0);
    memcpy(buf, data, n);
    size_t size = n ? n : 1;
    unsigned cd[1] = {(unsigned)level};
    size_t r = h5shuf_zstd_filter(flags, 1, cd, n, &size, &buf);
    *out = buf;
    return r;
}

static void roundtrip(const void *data, size_t n, int level)
{
    void *c, *d;
    size_t cn = run_filter(0, level, data, n, &c);
    ASSERT_GT_INT_FATAL(cn, 0);
    /* plain libzstd reads it: what any other implementation of 32015 does */
    unsigned long long size = ZSTD_getFrameContentSize(c, cn);
    ASSERT_EQ_INT(size, n);
    void *plain = malloc(n + 1);
    ASSERT_EQ_INT(ZSTD_decompress(plain, n, c, cn), n);
    ASSERT_EQ_MEM(plain, data, n);
    free(plain);
    size_t dn = run_filter(H5Z_FLAG_REVERSE, 0, c, cn, &d);
    ASSERT_EQ_INT(dn, n);
    if (dn == n)
        ASSERT_EQ_MEM(d, data, n);
    H5free_memory(c);
    H5free_memory(d);
}

static void test_levels_and_data(void)
{
    enum { N = 1 << 20 };
    unsigned char *random = malloc(N), *zeros = calloc(1, N), *text = malloc(N);
    tu_fill(random, N, 5);
    for (size_t i = 0; i < N; i++)
        text[i] = "the quick brown fox "[i % 20];
    const int levels[] = {-5, -1, 0, 1, 3, 9, 19};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        roundtrip(random, N, levels[l]);
        roundtrip(zeros, N, levels[l]);
        roundtrip(text, 4096, levels[l]);
        roundtrip("x", 1, levels[l]);
    }
    roundtrip(text, N, 22);
    free(random);
    free(zeros);
    free(text);
}

/* Levels out of range are clamped, as the reference plugin's users expect a level to be honoured. */
static void test_level_clamped(void)
{
    unsigned char data[5000];
    tu_fill(data, sizeof data, 9);
    roundtrip(data, sizeof data, 1000);
    roundtrip(data, sizeof data, -1000000);
    void *a, *b;
    size_t na = run_filter(0, 1000, data, sizeof data, &a), nb = run_filter(0, ZSTD_maxCLevel(), data, sizeof data, &b);
    ASSERT_EQ_INT(na, nb);
    if (na == nb)
        ASSERT_EQ_MEM(a, b, na);
    H5free_memory(a);
    H5free_memory(b);
}

/* Repetitive data shrinks: the filter really compresses. */
static void test_compresses(void)
{
    unsigned char *zeros = calloc(1, 1 << 20);
    void *c;
    size_t cn = run_filter(0, 1, zeros, 1 << 20, &c);
    ASSERT_GT_INT(cn, 0);
    ASSERT_LT_INT(cn, 1000);
    H5free_memory(c);
    free(zeros);
}

/* An empty chunk compresses to a valid frame of content size 0 (HDF5 never hands the filter one, and
 * a 0-byte result is the H5Z contract's "failure", so decompressing it cannot be told from an error). */
static void test_empty(void)
{
    void *c;
    size_t cn = run_filter(0, 3, "", 0, &c);
    ASSERT_GT_INT(cn, 0);
    ASSERT_EQ_INT(ZSTD_getFrameContentSize(c, cn), 0);
    H5free_memory(c);
}

/* Streaming writers leave the content size out; some concatenate frames. */
static void test_unknown_size_and_frames(void)
{
    enum { N = 300000 };
    unsigned char *data = malloc(N);
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 7 / 1000);
    size_t cap = ZSTD_compressBound(N) * 2;
    unsigned char *frame = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
    ZSTD_inBuffer in = {data, N, 0};
    ZSTD_outBuffer out = {frame, cap, 0};
    size_t r;
    do
        r = ZSTD_compressStream2(cc, &out, &in, ZSTD_e_end);
    while (r != 0 && !ZSTD_isError(r));
    CU_ASSERT_FATAL(!ZSTD_isError(r));
    ASSERT_EQ_INT(ZSTD_getFrameContentSize(frame, out.pos), ZSTD_CONTENTSIZE_UNKNOWN);
    void *d;
    size_t dn = run_filter(H5Z_FLAG_REVERSE, 0, frame, out.pos, &d);
    ASSERT_EQ_INT(dn, N);
    if (dn == N)
        ASSERT_EQ_MEM(d, data, N);
    H5free_memory(d);

    /* two frames: the first N/2 bytes, then the rest */
    size_t a = ZSTD_compress(frame, cap, data, N / 2, 3);
    size_t b = ZSTD_compress(frame + a, cap - a, data + N / 2, N - N / 2, 3);
    dn = run_filter(H5Z_FLAG_REVERSE, 0, frame, a + b, &d);
    ASSERT_EQ_INT(dn, N);
    if (dn == N)
        ASSERT_EQ_MEM(d, data, N);
    H5free_memory(d);
    ZSTD_freeCCtx(cc);
    free(frame);
    free(data);
}

/* Garbage, flipped bytes and truncation: return 0, keep the buffer, say why on the HDF5 stack. */
static void test_corrupt(void)
{
    enum { N = 100000 };
    unsigned char *data = malloc(N);
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i % 251);
    void *c;
    size_t cn = run_filter(0, 3, data, N, &c);
    ASSERT_GT_INT_FATAL(cn, 16);
    unsigned char *bad = malloc(cn);
    struct {
        const char *name;
        size_t len;
        size_t flip;
    } cases[] = {{"garbage", 0, 0}, {"flipped middle", cn, cn / 2}, {"flipped header", cn, 5},
                 {"truncated", cn / 2, (size_t)-1}, {"truncated header", 3, (size_t)-1}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t len = cases[k].len ? cases[k].len : 64;
        if (cases[k].len == 0)
            tu_fill(bad, len, 77);
        else
            memcpy(bad, c, len);
        if (cases[k].flip != (size_t)-1 && cases[k].len)
            bad[cases[k].flip] ^= 0x5a;
        H5Eclear2(H5E_DEFAULT);
        void *d;
        size_t dn = run_filter(H5Z_FLAG_REVERSE, 0, bad, len, &d);
        /* Without a checksum (ZSTD_compress writes none, like the reference plugin) a flipped literal
         * byte may decode to other bytes of the right size; fletcher32 is HDF5's answer to that.  What
         * the filter must never do is return a size other than the chunk's. */
        CU_ASSERT(dn == 0 || dn == N);
        if (dn == 0) {
            ASSERT_EQ_MEM(d, bad, len); /* input untouched */
            ASSERT_GT_INT(H5Eget_num(H5E_DEFAULT), 0);
        }
        if (strcmp(cases[k].name, "garbage") == 0 || strncmp(cases[k].name, "truncated", 9) == 0)
            ASSERT_EQ_INT(dn, 0);
        H5free_memory(d);
    }
    H5Eclear2(H5E_DEFAULT);
    H5free_memory(c);
    free(bad);
    free(data);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* The decoder with the limit [lo, hi] declared (hi 0: none), refused with want (NULL: must succeed). */
static size_t limited(const void *data, size_t n, size_t lo, size_t hi, const char *want)
{
    static const unsigned cd[1] = {3};
    return tu_decode_limited((H5Z_func_t)h5shuf_zstd_filter, H5SHUF_FILTER_ZSTD, 1, cd, data, n, lo, hi, want);
}

/* The bomb of issue 48: a 32 KiB frame without a content size that decodes to 1 GiB.  With the chunk's
 * size declared (h5shuf reading), it is refused after at most that many bytes; sizes the frame states
 * are checked before anything is allocated; too few bytes are refused too; the exact size reads. */
static void test_declared_limit(void)
{
    const size_t giga = (size_t)1 << 30;
    unsigned char *bomb = malloc(tu_zstd_rle_bytes(giga));
    size_t bn = tu_zstd_rle_frame(bomb, giga);
    ASSERT_EQ_INT(bn, 32774);
    long before = max_rss_kib();
    limited(bomb, bn, 1600, 1600, "zstd: chunk decodes to more than 1600 bytes, the chunk's size (corrupt chunk)");
    long grown = max_rss_kib() - before;
    if (grown >= 65536)
        fprintf(stderr, "\n  max RSS grew by %ld KiB\n", grown);
    ASSERT_LT_INT(grown, 65536); /* 64 MiB: the frame was not decoded */

    /* a size the frame states: more, fewer, exact */
    enum { N = 4000 };
    unsigned char data[N], frame[N + 64];
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i / 7);
    size_t fn = ZSTD_compress(frame, sizeof frame, data, N, 3);
    CU_ASSERT_FATAL(!ZSTD_isError(fn));
    limited(frame, fn, 1600, 1600, "frame claims 4000 bytes, more than 1600, the chunk's size");
    limited(frame, fn, 8000, 8000, "frame holds 4000 bytes, not the chunk's 8000");
    ASSERT_EQ_INT(limited(frame, fn, N, N, NULL), N);

    /* no size in the frame: decoded into the limit, fewer bytes refused, a bound that is not exact */
    size_t small = tu_zstd_rle_frame(bomb, N);
    limited(bomb, small, 8000, 8000, "decodes to 4000 bytes, not the chunk's 8000");
    limited(bomb, small, N + 1, 2 * N, "decodes to 4000 bytes, fewer than the chunk's 4001");
    limited(bomb, small, 1000, 2000, "more than 2000 bytes, the most this chunk can hold");
    ASSERT_EQ_INT(limited(bomb, small, 1, 3 * N, NULL), N);

    /* with nothing declared (another program through the plugin) a large frame still reads */
    size_t big = tu_zstd_rle_frame(bomb, (size_t)64 << 20);
    ASSERT_EQ_INT(limited(bomb, big, 0, 0, NULL), (size_t)64 << 20);
    free(bomb);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"round trips over levels and data, readable by plain libzstd", test_levels_and_data},
        {"levels out of range are clamped", test_level_clamped},
        {"repetitive data compresses", test_compresses},
        {"empty chunk", test_empty},
        {"frames without content size, several frames", test_unknown_size_and_frames},
        {"corrupt and truncated input fail cleanly", test_corrupt},
        {"a declared limit: the 1 GiB bomb refused, sizes checked", test_declared_limit},
        {NULL, NULL},
    };
    return tu_main("zstd", tests);
}
