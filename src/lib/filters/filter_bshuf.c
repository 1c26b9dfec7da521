/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_bshuf.c - bitshuffle as an HDF5 filter (id 32008), written from its published format: Masui et
 * al., "A compression scheme for radio data in high performance computing", Astronomy and Computing 12
 * (2015), and the reference implementation kiyo-masui/bitshuffle (bitshuffle_core.c, bitshuffle.c,
 * bshuf_h5filter.c), read to learn the format, none of its code taken.  Debian ships no bitshuffle
 * library for C; its python3 "bitshuffle" package (0.3.5, with an HDF5 plugin) is an oracle in the tests.
 *
 * The transform.  A chunk of n bytes holds size = n / elem_size elements.  They are cut into blocks of
 * block_size elements (a multiple of 8), then one last block of the remaining elements rounded down to a
 * multiple of 8, then the size % 8 trailing elements, which are stored as they are.  Within a block of
 * m elements the bits are transposed: the output is 8 * elem_size rows of m / 8 bytes, row 8 * j + b
 * holding bit b (0 = least significant) of byte j of every element, element i at bit i % 8 of the row's
 * byte i / 8.  Elements of similar values thus give long runs of equal bytes.
 *
 * The stream.  Without compression (cd_values[4] absent or 0) the transposed blocks and the trailing
 * bytes are the chunk, of the same size.  With LZ4 (2) or zstd (3): a 12-byte header, the uncompressed
 * size in bytes as a big-endian uint64 and the block size in bytes (block_size * elem_size) as a
 * big-endian uint32; then each block (the last, shorter one included) as a big-endian uint32 compressed
 * size followed by that many bytes of one LZ4 block (LZ4_compress_default) or one zstd frame
 * (ZSTD_compress at cd_values[5]); then the trailing bytes, uncompressed.  The decoder takes the block
 * size from the header, not from cd_values.  The default block size is 8192 bytes' worth of elements
 * rounded down to a multiple of 8, at least 128 (bshuf_default_block_size; it can never change, as the
 * uncompressed mode does not record it).
 *
 * The transposes are plain C (8x8 bit-matrix transposes in a 64-bit word, Hacker's Delight 7-3): slower
 * than the reference's SSE2/AVX2 code, but every stream is decoded with every size checked first.
 */
#include "filter_bshuf.h"

#include <limits.h>
#include <lz4.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "filter_limit.h"

#define BSHUF_ERR(...) H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, __VA_ARGS__)

/* Largest chunk HDF5 stores: 4 GiB - 1 bytes. */
#define CHUNK_MAX ((size_t)UINT32_MAX)
/* Largest block of the compressed modes: LZ4's input limit (and below the int32 the sizes are read as). */
#define BLOCK_BYTES_MAX ((size_t)LZ4_MAX_INPUT_SIZE)
/* Header of the compressed modes, and the size before each block. */
#define HEADER_BYTES 12
#define BLOCK_HEADER_BYTES 4

const H5Z_class2_t h5shuf_bshuf_class = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5SHUF_FILTER_BSHUF,
    1, /* encoder present */
    1, /* decoder present */
    "bitshuffle (h5shuf)",
    NULL, /* can_apply */
    h5shuf_bshuf_set_local,
    (H5Z_func_t)h5shuf_bshuf_filter,
};

/*-*************************************
*  Results
***************************************/

const char *h5shuf_bshuf_strerror(int status)
{
    switch (status) {
    case H5SHUF_BSHUF_OK:
        return "success";
    case H5SHUF_BSHUF_EPARAM:
        return "filter parameters not understood";
    case H5SHUF_BSHUF_ECORRUPT:
        return "malformed stream (corrupt chunk)";
    case H5SHUF_BSHUF_E2BIG:
        return "output larger than its buffer";
    case H5SHUF_BSHUF_ENOMEM:
        return "out of memory";
    default:
        return "unknown error";
    }
}

/*-*************************************
*  The bit transpose
***************************************/

/* Transpose the 8x8 bit matrix whose row r is byte r of x: bit c of byte r <-> bit r of byte c. */
static inline uint64_t transpose8x8(uint64_t x)
{
    uint64_t t;
    t = (x ^ (x >> 7)) & UINT64_C(0x00AA00AA00AA00AA);
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & UINT64_C(0x0000CCCC0000CCCC);
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & UINT64_C(0x00000000F0F0F0F0);
    x ^= t ^ (t << 28);
    return x;
}

static inline uint64_t load_le64(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

static inline void store_le64(unsigned char *p, uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    memcpy(p, &x, 8);
}

/* Byte planes: dst[j * m + i] = src[i * es + j].  Inlined with a constant es for the common sizes, so the
 * compiler unrolls the inner loop. */
static inline __attribute__((always_inline)) void planes_es(const unsigned char *src, unsigned char *dst, size_t m,
                                                            size_t es)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < es; j++)
            dst[j * m + i] = src[i * es + j];
}

static void to_planes(const unsigned char *src, unsigned char *dst, size_t m, size_t es)
{
    switch (es) {
    case 1: memcpy(dst, src, m); break;
    case 2: planes_es(src, dst, m, 2); break;
    case 4: planes_es(src, dst, m, 4); break;
    case 8: planes_es(src, dst, m, 8); break;
    default: planes_es(src, dst, m, es);
    }
}

/* The inverse: dst[i * es + j] = src[j * m + i]. */
static inline __attribute__((always_inline)) void unplanes_es(const unsigned char *src, unsigned char *dst, size_t m,
                                                              size_t es)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < es; j++)
            dst[i * es + j] = src[j * m + i];
}

static void from_planes(const unsigned char *src, unsigned char *dst, size_t m, size_t es)
{
    switch (es) {
    case 1: memcpy(dst, src, m); break;
    case 2: unplanes_es(src, dst, m, 2); break;
    case 4: unplanes_es(src, dst, m, 4); break;
    case 8: unplanes_es(src, dst, m, 8); break;
    default: unplanes_es(src, dst, m, es);
    }
}

/* Transpose the 8x8 byte matrix whose row k is w[k] (byte b of w[k] <-> byte k of w[b]): three rounds of
 * block swaps, 4x4 blocks of bytes, then 2x2, then single bytes. */
static inline void transpose_bytes8(uint64_t w[8])
{
    for (int k = 0; k < 4; k++) {
        uint64_t t = ((w[k] >> 32) ^ w[k + 4]) & UINT64_C(0x00000000FFFFFFFF);
        w[k] ^= t << 32;
        w[k + 4] ^= t;
    }
    for (int k = 0; k < 8; k += (k & 1) ? 3 : 1) { /* 0, 1, 4, 5 */
        uint64_t t = ((w[k] >> 16) ^ w[k + 2]) & UINT64_C(0x0000FFFF0000FFFF);
        w[k] ^= t << 16;
        w[k + 2] ^= t;
    }
    for (int k = 0; k < 8; k += 2) {
        uint64_t t = ((w[k] >> 8) ^ w[k + 1]) & UINT64_C(0x00FF00FF00FF00FF);
        w[k] ^= t << 8;
        w[k + 1] ^= t;
    }
}

/*
 * Bit-transpose one block of m elements (m a multiple of 8) of es bytes from src to dst (no overlap), in
 * two passes through tmp (m * es bytes): byte planes (plane j holds byte j of every element), then each
 * plane's 8-byte words transposed as 8x8 bit matrices, byte b of word g going to row 8j + b at byte g.
 * Eight words at a time, their bytes are transposed too, so each row gets whole 8-byte stores.
 */
static void shuffle_block(const unsigned char *src, unsigned char *dst, unsigned char *tmp, size_t m, size_t es)
{
    const size_t row = m / 8; /* bytes of one bit row */
    to_planes(src, tmp, m, es);
    for (size_t j = 0; j < es; j++) {
        const unsigned char *p = tmp + j * m;
        unsigned char *o = dst + 8 * j * row;
        size_t g = 0;
        for (; g + 8 <= row; g += 8) {
            uint64_t w[8];
            for (int k = 0; k < 8; k++)
                w[k] = transpose8x8(load_le64(p + 8 * (g + k)));
            transpose_bytes8(w);
            for (int b = 0; b < 8; b++)
                store_le64(o + b * row + g, w[b]);
        }
        for (; g < row; g++) {
            uint64_t x = transpose8x8(load_le64(p + 8 * g));
            for (unsigned b = 0; b < 8; b++)
                o[b * row + g] = (unsigned char)(x >> (8 * b));
        }
    }
}

/* The inverse of shuffle_block. */
static void unshuffle_block(const unsigned char *src, unsigned char *dst, unsigned char *tmp, size_t m, size_t es)
{
    const size_t row = m / 8;
    for (size_t j = 0; j < es; j++) {
        const unsigned char *in = src + 8 * j * row;
        unsigned char *p = tmp + j * m;
        /* (gathering eight words and transposing their bytes, as shuffle_block does, measured slower here) */
        for (size_t g = 0; g < row; g++) {
            uint64_t x = 0;
            for (unsigned b = 0; b < 8; b++)
                x |= (uint64_t)in[b * row + g] << (8 * b);
            store_le64(p + 8 * g, transpose8x8(x));
        }
    }
    from_planes(tmp, dst, m, es);
}

/*-*************************************
*  Parameters and layout
***************************************/

size_t h5shuf_bshuf_default_block_size(size_t elem_size)
{
    size_t b = elem_size ? 8192 / elem_size : 0;
    b -= b % 8;
    return b < 128 ? 128 : b;
}

int h5shuf_bshuf_params_from_cd(size_t cd_nelmts, const unsigned cd_values[], struct h5shuf_bshuf_params *p)
{
    memset(p, 0, sizeof *p);
    if (cd_nelmts < 3 || cd_values[2] == 0)
        return H5SHUF_BSHUF_EPARAM;
    p->elem_size = cd_values[2];
    p->block_size = cd_nelmts > 3 ? cd_values[3] : 0;
    if (p->block_size % 8)
        return H5SHUF_BSHUF_EPARAM;
    if (p->block_size == 0)
        p->block_size = h5shuf_bshuf_default_block_size(p->elem_size);
    p->compression = cd_nelmts > 4 ? (int)cd_values[4] : H5SHUF_BSHUF_NONE;
    if (p->compression != H5SHUF_BSHUF_NONE && p->compression != H5SHUF_BSHUF_LZ4 && p->compression != H5SHUF_BSHUF_ZSTD)
        return H5SHUF_BSHUF_EPARAM;
    p->zstd_level = cd_nelmts > 5 ? (int)cd_values[5] : 0; /* 0: zstd's default level */
    if (p->compression != H5SHUF_BSHUF_NONE && p->block_size > BLOCK_BYTES_MAX / p->elem_size)
        return H5SHUF_BSHUF_EPARAM;
    return H5SHUF_BSHUF_OK;
}

/* How a chunk of size elements splits: nfull blocks of bs, one last block of last elements (0: none),
 * then tail trailing elements. */
struct layout {
    size_t nfull, bs, last, tail;
};

static struct layout layout_of(size_t size, size_t bs)
{
    struct layout l = {size / bs, bs, size % bs, size % 8};
    l.last -= l.tail; /* bs is a multiple of 8, so size % bs % 8 == size % 8 */
    return l;
}

static size_t block_bound(int compression, size_t bytes)
{
    return compression == H5SHUF_BSHUF_LZ4 ? (size_t)LZ4_compressBound((int)bytes) : ZSTD_compressBound(bytes);
}

size_t h5shuf_bshuf_bound(const struct h5shuf_bshuf_params *p, size_t src_bytes)
{
    if (p->compression == H5SHUF_BSHUF_NONE)
        return src_bytes;
    struct layout l = layout_of(src_bytes / p->elem_size, p->block_size);
    size_t full = block_bound(p->compression, l.bs * p->elem_size) + BLOCK_HEADER_BYTES, n;
    if (__builtin_mul_overflow(l.nfull, full, &n) || __builtin_add_overflow(n, HEADER_BYTES + l.tail * p->elem_size, &n))
        return 0;
    if (l.last && __builtin_add_overflow(n, block_bound(p->compression, l.last * p->elem_size) + BLOCK_HEADER_BYTES, &n))
        return 0;
    return n;
}

/* Bytes of the largest block of a layout (the buffer a block is transposed through). */
static size_t largest_block(const struct layout *l, size_t es)
{
    return (l->nfull ? l->bs : l->last) * es;
}

static void put_be(unsigned char *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t get_be(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

/*-*************************************
*  Encoding
***************************************/

int h5shuf_bshuf_encode(const struct h5shuf_bshuf_params *p, const void *src, size_t src_bytes, void *dst,
                        size_t dst_capacity, size_t *dst_bytes)
{
    const size_t es = p->elem_size;
    const unsigned char *in = src;
    unsigned char *out = dst;
    *dst_bytes = 0;
    if (es == 0 || src_bytes % es)
        return H5SHUF_BSHUF_EPARAM;
    struct layout l = layout_of(src_bytes / es, p->block_size);
    const size_t nblocks = l.nfull + (l.last != 0);
    if (dst_capacity < (p->compression == H5SHUF_BSHUF_NONE ? src_bytes : HEADER_BYTES))
        return H5SHUF_BSHUF_E2BIG;
    /* tmp: the byte planes of a block, then (compressed modes) its transposed bits */
    const size_t blk = nblocks ? largest_block(&l, es) : 1;
    unsigned char *tmp = malloc(p->compression == H5SHUF_BSHUF_NONE ? blk : 2 * blk);
    ZSTD_CCtx *zc = p->compression == H5SHUF_BSHUF_ZSTD ? ZSTD_createCCtx() : NULL;
    int st = H5SHUF_BSHUF_OK;
    if (!tmp || (p->compression == H5SHUF_BSHUF_ZSTD && !zc)) {
        st = H5SHUF_BSHUF_ENOMEM;
        goto out;
    }
    if (p->compression == H5SHUF_BSHUF_NONE) {
        for (size_t k = 0; k < nblocks; k++) {
            size_t m = k < l.nfull ? l.bs : l.last;
            shuffle_block(in, out, tmp, m, es);
            in += m * es;
            out += m * es;
        }
        memcpy(out, in, l.tail * es);
        *dst_bytes = src_bytes;
        goto out;
    }
    put_be(out, src_bytes, 8);
    put_be(out + 8, l.bs * es, 4);
    size_t pos = HEADER_BYTES;
    for (size_t k = 0; k < nblocks; k++) {
        size_t m = k < l.nfull ? l.bs : l.last, bytes = m * es;
        if (dst_capacity - pos < BLOCK_HEADER_BYTES) {
            st = H5SHUF_BSHUF_E2BIG;
            goto out;
        }
        shuffle_block(in, tmp + blk, tmp, m, es);
        in += bytes;
        size_t room = dst_capacity - pos - BLOCK_HEADER_BYTES, got;
        if (p->compression == H5SHUF_BSHUF_LZ4) {
            int r = LZ4_compress_default((const char *)tmp + blk, (char *)out + pos + BLOCK_HEADER_BYTES, (int)bytes,
                                         room > INT_MAX ? INT_MAX : (int)room);
            got = r > 0 ? (size_t)r : 0;
        } else {
            got = ZSTD_compressCCtx(zc, out + pos + BLOCK_HEADER_BYTES, room, tmp + blk, bytes, p->zstd_level);
            if (ZSTD_isError(got))
                got = 0;
        }
        if (got == 0) { /* neither codec makes an empty block: it did not fit */
            st = H5SHUF_BSHUF_E2BIG;
            goto out;
        }
        put_be(out + pos, got, 4);
        pos += BLOCK_HEADER_BYTES + got;
    }
    if (dst_capacity - pos < l.tail * es) {
        st = H5SHUF_BSHUF_E2BIG;
        goto out;
    }
    memcpy(out + pos, in, l.tail * es);
    *dst_bytes = pos + l.tail * es;
out:
    ZSTD_freeCCtx(zc);
    free(tmp);
    return st;
}

/*-*************************************
*  Decoding
***************************************/

/* The compressed modes' stream, checked: header, every block's size within the input, the trailing
 * bytes ending it exactly.  On success *l, *total (uncompressed bytes) describe it. */
static int parse(const struct h5shuf_bshuf_params *p, const unsigned char *in, size_t n, struct layout *l,
                 size_t *total)
{
    const size_t es = p->elem_size;
    if (n < HEADER_BYTES)
        return H5SHUF_BSHUF_ECORRUPT;
    uint64_t bytes = get_be(in, 8), block_bytes = get_be(in + 8, 4);
    if ((SIZE_MAX < UINT64_MAX && bytes > (uint64_t)SIZE_MAX) || bytes % es || block_bytes == 0 || block_bytes % es || (block_bytes / es) % 8 ||
        block_bytes > BLOCK_BYTES_MAX)
        return H5SHUF_BSHUF_ECORRUPT;
    *l = layout_of((size_t)bytes / es, (size_t)block_bytes / es);
    *total = (size_t)bytes;
    size_t pos = HEADER_BYTES, nblocks = l->nfull + (l->last != 0);
    if (nblocks > (n - pos) / BLOCK_HEADER_BYTES) /* each block takes at least its size field */
        return H5SHUF_BSHUF_ECORRUPT;
    for (size_t k = 0; k < nblocks; k++) {
        if (n - pos < BLOCK_HEADER_BYTES)
            return H5SHUF_BSHUF_ECORRUPT;
        size_t c = (size_t)get_be(in + pos, 4), out = (k < l->nfull ? l->bs : l->last) * es;
        pos += BLOCK_HEADER_BYTES;
        if (c == 0 || c > n - pos)
            return H5SHUF_BSHUF_ECORRUPT;
        /* An LZ4 block expands at most about 255 times (a match's length bytes add 255 each): a larger
         * claim is corrupt, and refusing it here keeps a tiny chunk from asking for gigabytes. */
        if (p->compression == H5SHUF_BSHUF_LZ4 && out / 256 > c)
            return H5SHUF_BSHUF_ECORRUPT;
        if (p->compression == H5SHUF_BSHUF_ZSTD) {
            /* a zstd block of at most 128 KiB takes at least 4 bytes (an RLE block) */
            unsigned long long fs = ZSTD_getFrameContentSize(in + pos, c);
            if (fs == ZSTD_CONTENTSIZE_ERROR || (fs != ZSTD_CONTENTSIZE_UNKNOWN && fs != out) || out / 32768 > c + 8)
                return H5SHUF_BSHUF_ECORRUPT;
        }
        pos += c;
    }
    return n - pos == l->tail * es ? H5SHUF_BSHUF_OK : H5SHUF_BSHUF_ECORRUPT;
}

int h5shuf_bshuf_decoded_size(const struct h5shuf_bshuf_params *p, const void *src, size_t src_bytes,
                              size_t *size)
{
    *size = 0;
    if (p->elem_size == 0)
        return H5SHUF_BSHUF_EPARAM;
    if (p->compression == H5SHUF_BSHUF_NONE) {
        if (src_bytes % p->elem_size)
            return H5SHUF_BSHUF_ECORRUPT;
        *size = src_bytes;
        return H5SHUF_BSHUF_OK;
    }
    struct layout l;
    return parse(p, src, src_bytes, &l, size);
}

int h5shuf_bshuf_decode(const struct h5shuf_bshuf_params *p, const void *src, size_t src_bytes, void *dst,
                        size_t dst_capacity, size_t *dst_bytes)
{
    const size_t es = p->elem_size;
    const unsigned char *in = src;
    unsigned char *out = dst;
    *dst_bytes = 0;
    if (es == 0)
        return H5SHUF_BSHUF_EPARAM;
    struct layout l;
    size_t total = src_bytes;
    int st = H5SHUF_BSHUF_OK;
    if (p->compression == H5SHUF_BSHUF_NONE) {
        if (src_bytes % es)
            return H5SHUF_BSHUF_ECORRUPT;
        l = layout_of(src_bytes / es, p->block_size);
    } else if ((st = parse(p, in, src_bytes, &l, &total)) != H5SHUF_BSHUF_OK) {
        return st;
    }
    if (total > dst_capacity)
        return H5SHUF_BSHUF_E2BIG;
    const size_t nblocks = l.nfull + (l.last != 0), blk = nblocks ? largest_block(&l, es) : 1;
    /* tmp: (compressed modes) a decompressed block, then the byte planes of a block */
    unsigned char *tmp = malloc(p->compression == H5SHUF_BSHUF_NONE ? blk : 2 * blk);
    ZSTD_DCtx *zd = p->compression == H5SHUF_BSHUF_ZSTD ? ZSTD_createDCtx() : NULL;
    if (!tmp || (p->compression == H5SHUF_BSHUF_ZSTD && !zd)) {
        st = H5SHUF_BSHUF_ENOMEM;
        goto out;
    }
    if (p->compression == H5SHUF_BSHUF_NONE) {
        for (size_t k = 0; k < nblocks; k++) {
            size_t m = k < l.nfull ? l.bs : l.last;
            unshuffle_block(in, out, tmp, m, es);
            in += m * es;
            out += m * es;
        }
        memcpy(out, in, l.tail * es);
        *dst_bytes = src_bytes;
        goto out;
    }
    size_t pos = HEADER_BYTES;
    for (size_t k = 0; k < nblocks; k++) {
        size_t m = k < l.nfull ? l.bs : l.last, bytes = m * es;
        size_t c = (size_t)get_be(in + pos, 4); /* parse checked every size */
        pos += BLOCK_HEADER_BYTES;
        size_t got;
        if (p->compression == H5SHUF_BSHUF_LZ4) {
            int r = LZ4_decompress_safe((const char *)in + pos, (char *)tmp + blk, (int)c, (int)bytes);
            got = r < 0 ? 0 : (size_t)r;
        } else {
            got = ZSTD_decompressDCtx(zd, tmp + blk, bytes, in + pos, c);
            if (ZSTD_isError(got))
                got = 0;
        }
        if (got != bytes) {
            st = H5SHUF_BSHUF_ECORRUPT;
            goto out;
        }
        unshuffle_block(tmp + blk, out, tmp, m, es);
        out += bytes;
        pos += c;
    }
    memcpy(out, in + pos, l.tail * es);
    *dst_bytes = total;
out:
    ZSTD_freeDCtx(zd);
    free(tmp);
    return st;
}

/*-*************************************
*  The HDF5 filter
***************************************/

/* cd_values already in set_local's form (see filter_bshuf.h): a copied property list. */
static int already_set(const unsigned *v, size_t n, size_t elem_size)
{
    return n >= 3 && n <= 6 && v[0] == H5SHUF_BSHUF_VERSION_MAJOR && v[1] >= 1 && v[1] <= 15 && v[2] == elem_size &&
           (n < 4 || v[3] % 8 == 0) &&
           (n < 5 || v[4] == H5SHUF_BSHUF_NONE || v[4] == H5SHUF_BSHUF_LZ4 || v[4] == H5SHUF_BSHUF_ZSTD);
}

herr_t h5shuf_bshuf_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    (void)space;
    enum { MAXV = 16 };
    unsigned flags = 0, user[MAXV] = {0}, v[MAXV] = {0};
    size_t n = MAXV;
    if (H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_BSHUF, &flags, &n, user, 0, NULL, NULL) < 0)
        return -1;
    size_t es = H5Tget_size(type);
    if (es == 0 || es > UINT_MAX) {
        BSHUF_ERR("bitshuffle: the datatype has no usable size");
        return -1;
    }
    size_t nv;
    if (already_set(user, n, es)) {
        memcpy(v, user, n * sizeof *v);
        nv = n;
    } else {
        if (n > MAXV - 3) {
            BSHUF_ERR("bitshuffle: %zu filter parameters, at most %d expected", n, MAXV - 3);
            return -1;
        }
        v[0] = H5SHUF_BSHUF_VERSION_MAJOR;
        v[1] = H5SHUF_BSHUF_VERSION_MINOR;
        v[2] = (unsigned)es;
        memcpy(v + 3, user, n * sizeof *v);
        nv = n + 3;
    }
    struct h5shuf_bshuf_params p;
    if (h5shuf_bshuf_params_from_cd(nv, v, &p) != H5SHUF_BSHUF_OK) {
        BSHUF_ERR("bitshuffle: invalid parameters (block size %u: a multiple of 8, under 2 GiB of data; "
                  "compression %u: 0 none, 2 LZ4, 3 zstd)", nv > 3 ? v[3] : 0, nv > 4 ? v[4] : 0);
        return -1;
    }
    return H5Pmodify_filter(dcpl, H5SHUF_FILTER_BSHUF, flags, nv, v) < 0 ? -1 : 1;
}

/* Decode the chunk in *buf (nbytes) under p into a new buffer handed to HDF5: its size, read from the stream
 * (the header of the compressed modes, nbytes without compression), checked against the limit declared
 * for this thread (filter_limit.h) or, with none, HDF5's chunk limit, before anything is allocated. */
static size_t decode_chunk(const struct h5shuf_bshuf_params *p, size_t nbytes, size_t *buf_size, void **buf)
{
    size_t lo, hi, cap;
    const int declared = h5shuf_filter_limit(H5SHUF_FILTER_BSHUF, &lo, &hi);
    int st = h5shuf_bshuf_decoded_size(p, *buf, nbytes, &cap);
    if (st != H5SHUF_BSHUF_OK)
        return REFUSE(*buf, nbytes, "bitshuffle: %s", h5shuf_bshuf_strerror(st));
    if (cap > hi)
        return REFUSE(*buf, nbytes, "bitshuffle: chunk claims %zu bytes, more than %zu, %s (corrupt chunk)", cap, hi,
                      !declared  ? "the most an HDF5 chunk holds"
                      : lo == hi ? "the chunk's size"
                                 : "the most this chunk can hold");
    if (cap < lo) /* (0 included: HDF5 has no empty chunks) */
        return REFUSE(*buf, nbytes, "bitshuffle: chunk holds %zu bytes, %s %zu (corrupt chunk)", cap,
                      lo == hi ? "not the chunk's" : "fewer than the chunk's", lo);
    void *out = H5allocate_memory(cap, 0);
    if (!out) {
        BSHUF_ERR("bitshuffle: cannot allocate %zu bytes", cap);
        return 0;
    }
    size_t n = 0;
    st = h5shuf_bshuf_decode(p, *buf, nbytes, out, cap, &n);
    if (st != H5SHUF_BSHUF_OK) {
        H5free_memory(out);
        if (st == H5SHUF_BSHUF_ENOMEM) {
            BSHUF_ERR("bitshuffle: %s", h5shuf_bshuf_strerror(st));
            return 0;
        }
        return REFUSE(*buf, nbytes, "bitshuffle: %s", h5shuf_bshuf_strerror(st));
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return n;
}

size_t h5shuf_bshuf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                           size_t *buf_size, void **buf)
{
    struct h5shuf_bshuf_params p;
    if (h5shuf_bshuf_params_from_cd(cd_nelmts, cd_values, &p) != H5SHUF_BSHUF_OK) {
        BSHUF_ERR("bitshuffle: filter parameters not understood (%zu values; element size, block size a "
                  "multiple of 8, compression 0, 2 or 3 expected)", cd_nelmts);
        return 0;
    }
    if (flags & H5Z_FLAG_REVERSE)
        return decode_chunk(&p, nbytes, buf_size, buf);
    size_t cap = h5shuf_bshuf_bound(&p, nbytes);
    int st = nbytes % p.elem_size ? H5SHUF_BSHUF_EPARAM : cap == 0 ? H5SHUF_BSHUF_E2BIG : H5SHUF_BSHUF_OK;
    if (st != H5SHUF_BSHUF_OK) {
        BSHUF_ERR("bitshuffle: %s", st == H5SHUF_BSHUF_EPARAM ? "chunk is not a whole number of elements"
                                                              : h5shuf_bshuf_strerror(st));
        return 0;
    }
    void *out = H5allocate_memory(cap, 0);
    if (!out) {
        BSHUF_ERR("bitshuffle: cannot allocate %zu bytes", cap);
        return 0;
    }
    size_t n = 0;
    st = h5shuf_bshuf_encode(&p, *buf, nbytes, out, cap, &n);
    if (st != H5SHUF_BSHUF_OK) {
        BSHUF_ERR("bitshuffle: %s", h5shuf_bshuf_strerror(st));
        H5free_memory(out);
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return n;
}
