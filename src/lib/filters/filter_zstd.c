/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_zstd.c - Zstandard as an HDF5 filter (id 32015), compatible with the HDF Group's reference
 * plugin and hdf5plugin: the same cd_values (level in cd_values[0]) and the same stream (one zstd frame
 * per chunk, content size in its header).  A chunk decodes to at most the size its reader declared
 * (filter_limit.h: the decompression bomb of issue 48 was a frame without a content size).  Buffers
 * handed to or taken from HDF5 are allocated with H5allocate_memory / H5free_memory, which a plugin must
 * use (the library may be built with its own allocator).  Every zstd result is checked: a corrupt chunk
 * becomes an HDF5 error, never garbage.
 */
#include "filter_zstd.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h> /* ZSTD_getErrorCode */

#include "filter_limit.h"

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

/* Hand out (a buffer of cap bytes holding n decoded bytes) to HDF5 in place of *buf. */
static size_t hand_over(void *out, size_t cap, size_t n, size_t *buf_size, void **buf)
{
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return n;
}

/* What the limit [lo, hi] of a chunk is, for a message (filter_limit.h: lo == hi when the size is exact). */
static const char *limit_name(size_t lo, size_t hi, int declared)
{
    return !declared ? "the most an HDF5 chunk holds" : lo == hi ? "the chunk's size" : "the most this chunk can hold";
}

/* Frames without a content size (streaming writers), where no limit is declared (another program
 * through the plugin): decompress into a buffer that grows, to at most H5SHUF_CHUNK_MAX bytes. */
static size_t decompress_stream(size_t nbytes, size_t *buf_size, void **buf)
{
    const size_t most = H5SHUF_CHUNK_MAX + (size_t)1; /* one more than any chunk: reaching it is too much */
    ZSTD_DStream *ds = ZSTD_createDStream();
    size_t cap = nbytes * 4 > ZSTD_DStreamOutSize() ? nbytes * 4 : ZSTD_DStreamOutSize();
    if (cap > most)
        cap = most;
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
            if (cap == most) {
                (void)REFUSE(*buf, nbytes, "zstd: chunk decodes to more than %zu bytes, the most an HDF5 chunk holds "
                       "(corrupt chunk)", H5SHUF_CHUNK_MAX);
                goto fail;
            }
            size_t grown = cap > most / 2 ? most : cap * 2;
            void *bigger = H5resize_memory(out, grown);
            if (!bigger) {
                ZSTD_ERR("zstd: cannot allocate %zu bytes", grown);
                goto fail;
            }
            out = bigger;
            cap = grown;
            ob.dst = out;
            ob.size = cap;
        }
        size_t before_in = in.pos, before_out = ob.pos;
        r = ZSTD_decompressStream(ds, &ob, &in);
        if (ZSTD_isError(r)) {
            (void)REFUSE(*buf, nbytes, "zstd: corrupt data: %s", ZSTD_getErrorName(r));
            goto fail;
        }
        if (in.pos == in.size && r != 0 && ob.pos < ob.size && before_in == in.pos && before_out == ob.pos) {
            (void)REFUSE(*buf, nbytes, "zstd: truncated frame (corrupt chunk)");
            goto fail;
        }
    }
    ZSTD_freeDStream(ds);
    if (ob.pos == 0) { /* HDF5 has no empty chunks */
        H5free_memory(out);
        return REFUSE(*buf, nbytes, "zstd: chunk decodes to no bytes (corrupt chunk)");
    }
    return hand_over(out, cap, ob.pos, buf_size, buf);
fail:
    ZSTD_freeDStream(ds);
    H5free_memory(out);
    return 0;
}

/* Decompress in[0 .. nbytes) (frames) in one call into a new buffer of cap bytes: their whole content
 * when its size is known (cap), else at most the declared limit (cap = hi).  libzstd stops at the end of
 * the buffer (dstSize_tooSmall), so a chunk that decodes to more costs cap bytes and no more. */
static size_t decompress_into(size_t nbytes, size_t cap, size_t lo, size_t hi, int declared, size_t *buf_size,
                              void **buf)
{
    void *out = H5allocate_memory(cap ? cap : 1, 0);
    if (!out) {
        ZSTD_ERR("zstd: cannot allocate %zu bytes", cap);
        return 0;
    }
    size_t n = ZSTD_decompress(out, cap, *buf, nbytes);
    if (ZSTD_isError(n) || n < lo || n > hi) {
        H5free_memory(out);
        if (!ZSTD_isError(n))
            return REFUSE(*buf, nbytes, "zstd: chunk decodes to %zu bytes, %s %zu (corrupt chunk)", n,
                          lo == hi ? "not the chunk's" : "fewer than the chunk's", lo);
        if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
            return REFUSE(*buf, nbytes, "zstd: chunk decodes to more than %zu bytes, %s (corrupt chunk)", cap,
                          limit_name(lo, hi, declared));
        return REFUSE(*buf, nbytes, "zstd: corrupt data: %s", ZSTD_getErrorName(n));
    }
    return hand_over(out, cap ? cap : 1, n, buf_size, buf);
}

static size_t decompress_chunk(size_t nbytes, size_t *buf_size, void **buf)
{
    size_t lo, hi;
    const int declared = h5shuf_filter_limit(H5SHUF_FILTER_ZSTD, &lo, &hi);
    unsigned long long size = ZSTD_getFrameContentSize(*buf, nbytes);
    if (size == ZSTD_CONTENTSIZE_ERROR)
        return REFUSE(*buf, nbytes, "zstd: not a valid zstd frame (corrupt chunk)");
    size_t frame = ZSTD_findFrameCompressedSize(*buf, nbytes);
    if (ZSTD_isError(frame))
        return REFUSE(*buf, nbytes, "zstd: corrupt frame: %s", ZSTD_getErrorName(frame));
    /* One frame with its size (what every known writer of 32015 produces): its header says what it decodes
     * to, checked against the limit before anything is allocated, then one call. */
    if (size != ZSTD_CONTENTSIZE_UNKNOWN && frame == nbytes) {
        if (size > hi)
            return REFUSE(*buf, nbytes, "zstd: frame claims %llu bytes, more than %zu, %s (corrupt chunk)", size, hi,
                          limit_name(lo, hi, declared));
        if (size < lo) /* (0 included: HDF5 has no empty chunks) */
            return REFUSE(*buf, nbytes, "zstd: frame holds %llu bytes, %s %zu (corrupt chunk)", size,
                          lo == hi ? "not the chunk's" : "fewer than the chunk's", lo);
        return decompress_into(nbytes, (size_t)size, lo, hi, declared, buf_size, buf);
    }
    /* No size, or several frames (streaming writers): at most the declared limit in one call; with none
     * declared, a growing buffer. */
    if (declared)
        return decompress_into(nbytes, hi, lo, hi, declared, buf_size, buf);
    return decompress_stream(nbytes, buf_size, buf);
}

size_t h5shuf_zstd_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                          size_t *buf_size, void **buf)
{
    if (flags & H5Z_FLAG_REVERSE)
        return decompress_chunk(nbytes, buf_size, buf);
    return compress_chunk(clamp_level(cd_nelmts, cd_values), nbytes, buf_size, buf);
}
