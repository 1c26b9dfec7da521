/*
 * filter_zstd.c - Zstandard as an HDF5 filter (id 32015), compatible with the HDF Group's reference
 * plugin and hdf5plugin: the same cd_values (level in cd_values[0]) and the same stream (one zstd frame
 * per chunk, content size in its header).  Buffers handed to or taken from HDF5 are allocated with
 * H5allocate_memory / H5free_memory, which a plugin must use (the library may be built with its own
 * allocator).  Every zstd result is checked: a corrupt chunk becomes an HDF5 error, never garbage.
 */
#include "filter_zstd.h"

#include <stdint.h>
#include <string.h>
#include <zstd.h>

#define ZSTD_ERR(...) H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, __VA_ARGS__)

const H5Z_class2_t h5shuf_zstd_class = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5SHUF_FILTER_ZSTD,
    1, /* encoder present */
    1, /* decoder present */
    "Zstandard (h5shuf)",
    NULL, /* can_apply */
    NULL, /* set_local */
    (H5Z_func_t)h5shuf_zstd_filter,
};

static int clamp_level(size_t cd_nelmts, const unsigned cd_values[])
{
    int level = cd_nelmts > 0 ? (int)cd_values[0] : 0; /* a negative level arrives as its two's complement */
    if (level < ZSTD_minCLevel())
        level = ZSTD_minCLevel();
    if (level > ZSTD_maxCLevel())
        level = ZSTD_maxCLevel();
    return level;
}

static size_t compress_chunk(int level, size_t nbytes, size_t *buf_size, void **buf)
{
    size_t cap = ZSTD_compressBound(nbytes);
    void *out = H5allocate_memory(cap, 0);
    if (!out) {
        ZSTD_ERR("zstd: cannot allocate %zu bytes", cap);
        return 0;
    }
    size_t n = ZSTD_compress(out, cap, *buf, nbytes, level);
    if (ZSTD_isError(n)) {
        ZSTD_ERR("zstd: compression failed: %s", ZSTD_getErrorName(n));
        H5free_memory(out);
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return n;
}

/* Frames without a content size (streaming writers): decompress into a buffer that grows. */
static size_t decompress_stream(size_t nbytes, size_t *buf_size, void **buf)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    size_t cap = nbytes * 4 > ZSTD_DStreamOutSize() ? nbytes * 4 : ZSTD_DStreamOutSize();
    void *out = H5allocate_memory(cap, 0);
    ZSTD_inBuffer in = {*buf, nbytes, 0};
    ZSTD_outBuffer ob = {out, cap, 0};
    size_t r = 1;
    if (!ds || !out) {
        ZSTD_ERR("zstd: out of memory");
        goto fail;
    }
    while (in.pos < in.size || r != 0) {
        if (ob.pos == ob.size) {
            if (cap > SIZE_MAX / 2) {
                ZSTD_ERR("zstd: decompressed size overflows");
                goto fail;
            }
            void *bigger = H5resize_memory(out, cap * 2);
            if (!bigger) {
                ZSTD_ERR("zstd: cannot allocate %zu bytes", cap * 2);
                goto fail;
            }
            out = bigger;
            cap *= 2;
            ob.dst = out;
            ob.size = cap;
        }
        size_t before_in = in.pos, before_out = ob.pos;
        r = ZSTD_decompressStream(ds, &ob, &in);
        if (ZSTD_isError(r)) {
            ZSTD_ERR("zstd: corrupt data: %s", ZSTD_getErrorName(r));
            goto fail;
        }
        if (in.pos == in.size && r != 0 && ob.pos < ob.size && before_in == in.pos && before_out == ob.pos) {
            ZSTD_ERR("zstd: truncated frame");
            goto fail;
        }
    }
    ZSTD_freeDStream(ds);
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return ob.pos;
fail:
    ZSTD_freeDStream(ds);
    H5free_memory(out);
    return 0;
}

static size_t decompress_chunk(size_t nbytes, size_t *buf_size, void **buf)
{
    unsigned long long size = ZSTD_getFrameContentSize(*buf, nbytes);
    if (size == ZSTD_CONTENTSIZE_ERROR) {
        ZSTD_ERR("zstd: not a valid zstd frame (corrupt chunk)");
        return 0;
    }
    /* One frame with its size (what every known writer of 32015 produces): decompress in one call.
     * No size, or more than one frame: stream, which handles any sequence of frames. */
    size_t frame = ZSTD_findFrameCompressedSize(*buf, nbytes);
    if (ZSTD_isError(frame)) {
        ZSTD_ERR("zstd: corrupt frame: %s", ZSTD_getErrorName(frame));
        return 0;
    }
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || frame != nbytes)
        return decompress_stream(nbytes, buf_size, buf);
    if (size > UINT32_MAX) { /* HDF5 chunks are at most 4 GiB: a larger claim is a corrupt header */
        ZSTD_ERR("zstd: frame claims %llu bytes, more than an HDF5 chunk holds (corrupt chunk)", size);
        return 0;
    }
    void *out = H5allocate_memory(size ? (size_t)size : 1, 0);
    if (!out) {
        ZSTD_ERR("zstd: cannot allocate %llu bytes (corrupt frame header?)", size);
        return 0;
    }
    size_t n = ZSTD_decompress(out, (size_t)size, *buf, nbytes);
    if (ZSTD_isError(n) || n != size) {
        ZSTD_ERR("zstd: corrupt data: %s", ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from the header");
        H5free_memory(out);
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = size ? (size_t)size : 1;
    return n;
}

size_t h5shuf_zstd_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                          size_t *buf_size, void **buf)
{
    if (flags & H5Z_FLAG_REVERSE)
        return decompress_chunk(nbytes, buf_size, buf);
    return compress_chunk(clamp_level(cd_nelmts, cd_values), nbytes, buf_size, buf);
}
