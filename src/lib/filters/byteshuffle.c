/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * byteshuffle.c - HDF5's byte shuffle (byteshuffle.h).  The format is H5Zshuffle.c's: a chunk of n bytes
 * of elements of size bytes becomes size planes of n / size bytes, plane j holding byte j of every
 * element, and the n % size bytes after the last element are copied as they are.
 *
 * The byte loop reads or writes one plane at a time with a stride of size bytes, slowly: a sixth of a run
 * of 16-byte rows' pass 1 (the scratch's ids, 8 bytes, are shuffled before zstd).  Elements of 2, 4 and 8
 * bytes are moved 16 at a time instead, as a transpose
 * of a 16 x size byte matrix in SSE2 registers by rounds of unpacks (each round interleaves the bytes, or
 * groups of bytes, of two registers; log2 of the matrix's sides rounds transpose it: the technique of
 * bitshuffle's byte transposes, K. Masui et al., Astronomy and Computing 12 (2015), here written anew),
 * several times faster (measured: docs/benchmark.md, section "The byte shuffle").  The rest of the
 * elements, fewer than 16, go through the byte loop.
 */
#include <string.h>

#include "byteshuffle.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define LD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ST(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))

/* 16 elements of 8 bytes at src to byte planes j (16 bytes at dst + j * nelem), by four rounds of
 * unpacks: bytes, bytes again (each register then holds 4-byte groups of one byte of four elements), 4-byte
 * groups, 8-byte halves. */
static inline void shuffle16x8(const unsigned char *src, unsigned char *dst, size_t nelem)
{
    __m128i x[8], a[8], b[8];
    for (int k = 0; k < 8; k++)
        x[k] = LD(src + 16 * k);
    for (int k = 0; k < 8; k += 2) {
        a[k] = _mm_unpacklo_epi8(x[k], x[k + 1]);
        a[k + 1] = _mm_unpackhi_epi8(x[k], x[k + 1]);
    }
    for (int k = 0; k < 8; k += 2) {
        b[k] = _mm_unpacklo_epi8(a[k], a[k + 1]);     /* bytes 0-3 of elements 4k/2 .. +3 */
        b[k + 1] = _mm_unpackhi_epi8(a[k], a[k + 1]); /* bytes 4-7 */
    }
    for (int h = 0; h < 2; h++) { /* h = 0: planes 0-3, 1: planes 4-7 */
        const __m128i c0 = _mm_unpacklo_epi32(b[h], b[2 + h]), c1 = _mm_unpackhi_epi32(b[h], b[2 + h]);
        const __m128i c2 = _mm_unpacklo_epi32(b[4 + h], b[6 + h]), c3 = _mm_unpackhi_epi32(b[4 + h], b[6 + h]);
        ST(dst + (4 * h + 0) * nelem, _mm_unpacklo_epi64(c0, c2));
        ST(dst + (4 * h + 1) * nelem, _mm_unpackhi_epi64(c0, c2));
        ST(dst + (4 * h + 2) * nelem, _mm_unpacklo_epi64(c1, c3));
        ST(dst + (4 * h + 3) * nelem, _mm_unpackhi_epi64(c1, c3));
    }
}

/* The inverse: byte planes j (16 bytes at src + j * nelem) to 16 elements of 8 bytes at dst, by unpacks of
 * bytes, 2-byte and 4-byte groups. */
static inline void unshuffle16x8(const unsigned char *src, unsigned char *dst, size_t nelem)
{
    __m128i p[8], d[8];
    for (int k = 0; k < 8; k++)
        p[k] = LD(src + k * nelem);
    for (int k = 0; k < 8; k += 2) {
        d[k] = _mm_unpacklo_epi8(p[k], p[k + 1]);     /* elements 0-7, bytes k, k+1 */
        d[k + 1] = _mm_unpackhi_epi8(p[k], p[k + 1]); /* elements 8-15 */
    }
    for (int h = 0; h < 2; h++) { /* h = 0: elements 0-7, 1: 8-15 */
        const __m128i f0 = _mm_unpacklo_epi16(d[h], d[2 + h]), f1 = _mm_unpackhi_epi16(d[h], d[2 + h]);
        const __m128i f2 = _mm_unpacklo_epi16(d[4 + h], d[6 + h]), f3 = _mm_unpackhi_epi16(d[4 + h], d[6 + h]);
        ST(dst + 64 * h + 0, _mm_unpacklo_epi32(f0, f2));
        ST(dst + 64 * h + 16, _mm_unpackhi_epi32(f0, f2));
        ST(dst + 64 * h + 32, _mm_unpacklo_epi32(f1, f3));
        ST(dst + 64 * h + 48, _mm_unpackhi_epi32(f1, f3));
    }
}

/* 16 elements of 4 bytes to byte planes: three rounds of byte unpacks, then 8-byte halves. */
static inline void shuffle16x4(const unsigned char *src, unsigned char *dst, size_t nelem)
{
    const __m128i x0 = LD(src), x1 = LD(src + 16), x2 = LD(src + 32), x3 = LD(src + 48);
    const __m128i a0 = _mm_unpacklo_epi8(x0, x1), a1 = _mm_unpackhi_epi8(x0, x1);
    const __m128i a2 = _mm_unpacklo_epi8(x2, x3), a3 = _mm_unpackhi_epi8(x2, x3);
    const __m128i b0 = _mm_unpacklo_epi8(a0, a1), b1 = _mm_unpackhi_epi8(a0, a1);
    const __m128i b2 = _mm_unpacklo_epi8(a2, a3), b3 = _mm_unpackhi_epi8(a2, a3);
    const __m128i c0 = _mm_unpacklo_epi8(b0, b1), c1 = _mm_unpackhi_epi8(b0, b1);
    const __m128i c2 = _mm_unpacklo_epi8(b2, b3), c3 = _mm_unpackhi_epi8(b2, b3);
    ST(dst, _mm_unpacklo_epi64(c0, c2));
    ST(dst + nelem, _mm_unpackhi_epi64(c0, c2));
    ST(dst + 2 * nelem, _mm_unpacklo_epi64(c1, c3));
    ST(dst + 3 * nelem, _mm_unpackhi_epi64(c1, c3));
}

static inline void unshuffle16x4(const unsigned char *src, unsigned char *dst, size_t nelem)
{
    const __m128i p0 = LD(src), p1 = LD(src + nelem), p2 = LD(src + 2 * nelem), p3 = LD(src + 3 * nelem);
    const __m128i d0 = _mm_unpacklo_epi8(p0, p1), d1 = _mm_unpackhi_epi8(p0, p1);
    const __m128i d2 = _mm_unpacklo_epi8(p2, p3), d3 = _mm_unpackhi_epi8(p2, p3);
    ST(dst, _mm_unpacklo_epi16(d0, d2));
    ST(dst + 16, _mm_unpackhi_epi16(d0, d2));
    ST(dst + 32, _mm_unpacklo_epi16(d1, d3));
    ST(dst + 48, _mm_unpackhi_epi16(d1, d3));
}

/* 16 elements of 2 bytes: the low bytes and the high bytes, packed. */
static inline void shuffle16x2(const unsigned char *src, unsigned char *dst, size_t nelem)
{
    const __m128i x0 = LD(src), x1 = LD(src + 16), low = _mm_set1_epi16(0xff);
    ST(dst, _mm_packus_epi16(_mm_and_si128(x0, low), _mm_and_si128(x1, low)));
    ST(dst + nelem, _mm_packus_epi16(_mm_srli_epi16(x0, 8), _mm_srli_epi16(x1, 8)));
}

static inline void unshuffle16x2(const unsigned char *src, unsigned char *dst, size_t nelem)
{
    const __m128i p0 = LD(src), p1 = LD(src + nelem);
    ST(dst, _mm_unpacklo_epi8(p0, p1));
    ST(dst + 16, _mm_unpackhi_epi8(p0, p1));
}
#endif

void h5shuf__byteshuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int reverse)
{
    const size_t nelem = size > 1 ? n / size : 0;
    if (nelem <= 1) {
        memcpy(dst, src, n);
        return;
    }
    size_t i = 0;
#if defined(__SSE2__)
    if (size == 8 || size == 4 || size == 2)
        for (; i + 16 <= nelem; i += 16) {
            if (reverse) {
                if (size == 8)
                    unshuffle16x8(src + i, dst + i * 8, nelem);
                else if (size == 4)
                    unshuffle16x4(src + i, dst + i * 4, nelem);
                else
                    unshuffle16x2(src + i, dst + i * 2, nelem);
            } else {
                if (size == 8)
                    shuffle16x8(src + i * 8, dst + i, nelem);
                else if (size == 4)
                    shuffle16x4(src + i * 4, dst + i, nelem);
                else
                    shuffle16x2(src + i * 2, dst + i, nelem);
            }
        }
#endif
    for (; i < nelem; i++) /* the byte loop, element by element */
        for (size_t j = 0; j < size; j++) {
            if (reverse)
                dst[i * size + j] = src[j * nelem + i];
            else
                dst[j * nelem + i] = src[i * size + j];
        }
    memcpy(dst + nelem * size, src + nelem * size, n - nelem * size);
}
