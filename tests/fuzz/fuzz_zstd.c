/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_zstd.c - libFuzzer target for the zstd filter (filter_zstd.c), fed as HDF5 feeds it: a chunk in a
 * buffer from H5allocate_memory.  Besides never crashing, leaking, reading out of bounds or allocating
 * without bound (ASan+UBSan), the filter must keep these properties, and the target aborts when one fails:
 *   decompress  the input taken as a stored chunk: on success (nonzero) the bytes reported fit the buffer
 *               returned, and are exactly what libzstd's streaming decoder makes of the input (all of it
 *               consumed, every frame complete); on failure (0) the buffer is left as it was, except for a
 *               valid input that decodes to no bytes at all (HDF5 never stores an empty chunk); and an
 *               input the streaming decoder turns into 1 byte to 64 MiB is never refused.
 *   compress    the input taken as a chunk to store: compressing it (at a level from its first byte, or
 *               the default) gives one frame that fits the buffer and records the input's size in its
 *               header, as the reference plugin does, and decompressing that gives the input back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "filter_zstd.h"

#define REQUIRE(cond)                                                                                   \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            fprintf(stderr, "fuzz_zstd: property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);     \
            abort();                                                                                    \
        }                                                                                               \
    } while (0)

#define REFERENCE_MAX_BYTES ((size_t)64 << 20)

/* libzstd's own streaming decoder over the whole input, into at most limit bytes.  Returns the bytes
 * made (in *out, malloc'ed) and sets *status: 0 decoded completely, 1 corrupt or truncated, 2 more than
 * limit bytes. */
static size_t reference_decode(const void *src, size_t n, size_t limit, unsigned char **out, int *status)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    REQUIRE(ds != NULL);
    size_t cap = limit < 65536 ? limit : 65536;
    unsigned char *buf = malloc(cap ? cap : 1);
    REQUIRE(buf != NULL);
    ZSTD_inBuffer in = {src, n, 0};
    ZSTD_outBuffer ob = {buf, cap, 0};
    size_t r = 0;
    *status = 0;
    for (;;) {
        if (in.pos == in.size && r == 0)
            break; /* every frame complete, all input consumed */
        if (ob.pos == ob.size) {
            if (cap == limit) {
                *status = 2;
                break;
            }
            cap = cap * 2 < limit ? cap * 2 : limit;
            buf = realloc(buf, cap);
            REQUIRE(buf != NULL);
            ob.dst = buf;
            ob.size = cap;
        }
        size_t in_before = in.pos, out_before = ob.pos;
        r = ZSTD_decompressStream(ds, &ob, &in);
        if (ZSTD_isError(r) || (in.pos == in_before && ob.pos == out_before && ob.pos < ob.size)) {
            *status = 1; /* corrupt, or truncated: no progress with room to spare */
            break;
        }
    }
    ZSTD_freeDStream(ds);
    *out = buf;
    return ob.pos;
}

static void check_decompress(const uint8_t *data, size_t size)
{
    size_t cap = size ? size : 1;
    void *buf = H5allocate_memory(cap, 0), *given = buf;
    REQUIRE(buf != NULL);
    memcpy(buf, data, size);
    unsigned cd[1] = {3};
    size_t n = h5shuf_zstd_filter(H5Z_FLAG_REVERSE, 1, cd, size, &cap, &buf);
    H5Eclear2(H5E_DEFAULT);
    unsigned char *ref = NULL;
    int status;
    if (n > 0) {
        REQUIRE(n <= cap);
        size_t m = reference_decode(data, size, n + 1, &ref, &status);
        REQUIRE(status == 0 && m == n && memcmp(ref, buf, n) == 0);
    } else {
        size_t m = reference_decode(data, size, REFERENCE_MAX_BYTES, &ref, &status);
        if (buf != given)
            REQUIRE(status == 0 && m == 0); /* a valid input of no bytes: the one success that returns 0 */
        else
            REQUIRE(cap == (size ? size : 1) && memcmp(buf, data, size) == 0);
        REQUIRE(!(status == 0 && m > 0)); /* what libzstd decodes, the filter must too */
    }
    free(ref);
    H5free_memory(buf);
}

static void check_roundtrip(const uint8_t *data, size_t size)
{
    size_t cap = size;
    void *buf = H5allocate_memory(cap, 0);
    REQUIRE(buf != NULL);
    memcpy(buf, data, size);
    unsigned cd[1] = {(unsigned)((int)(data[0] % 25) - 5)}; /* levels -5 .. 19 (negative: two's complement) */
    size_t ncd = data[size - 1] & 1; /* and none: zstd's default */
    size_t n = h5shuf_zstd_filter(0, ncd, cd, size, &cap, &buf);
    REQUIRE(n > 0 && n <= cap);
    REQUIRE(ZSTD_findFrameCompressedSize(buf, n) == n);           /* one frame */
    REQUIRE(ZSTD_getFrameContentSize(buf, n) == (unsigned long long)size); /* its size in the header */
    size_t back = h5shuf_zstd_filter(H5Z_FLAG_REVERSE, ncd, cd, n, &cap, &buf);
    REQUIRE(back == size && back <= cap && memcmp(buf, data, size) == 0);
    H5free_memory(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    check_decompress(data, size);
    if (size > 0) /* HDF5 never filters an empty chunk */
        check_roundtrip(data, size);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
