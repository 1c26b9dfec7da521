/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rowstage.c - software write-combining of rows scattered to many piles (rowstage.h has why).
 */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "rowstage.h"

#define LINE 64 /* bytes of a cache line: each part's stage starts on one */

int h5shuf__rowstage_init(struct h5shuf_rowstage *st, uint64_t m, size_t nparts, const size_t *part_bytes)
{
    memset(st, 0, sizeof *st);
    size_t row = 0;
    for (size_t p = 0; p < nparts; p++)
        row += part_bytes[p];
    const size_t per = row ? H5SHUF_ROWSTAGE_PILE_BYTES / row : 0;
    if (per < 2 || m == 0 || m > H5SHUF_ROWSTAGE_MAX_BYTES / H5SHUF_ROWSTAGE_PILE_BYTES)
        return 0;
    st->off = malloc(nparts * sizeof *st->off);
    st->part_bytes = malloc(nparts * sizeof *st->part_bytes);
    st->n = calloc(m, sizeof *st->n);
    if (!st->off || !st->part_bytes || !st->n) {
        h5shuf__rowstage_free(st);
        return -1;
    }
    size_t off = 0;
    for (size_t p = 0; p < nparts; p++) {
        st->off[p] = off;
        st->part_bytes[p] = part_bytes[p];
        off += (per * part_bytes[p] + LINE - 1) / LINE * LINE;
    }
    st->nparts = nparts;
    st->per = per;
    st->pile_bytes = off;
    if (!(st->mem = aligned_alloc(LINE, m * off))) {
        h5shuf__rowstage_free(st);
        return -1;
    }
    return 0;
}

void h5shuf__rowstage_free(struct h5shuf_rowstage *st)
{
    free(st->mem);
    free(st->n);
    free(st->off);
    free(st->part_bytes);
    memset(st, 0, sizeof *st);
}

/* Copy bytes from an aligned stage to dst, bypassing the cache when dst and bytes are 16-byte aligned. */
static void copy_out(unsigned char *dst, const unsigned char *src, size_t bytes)
{
#if defined(__SSE2__)
    if ((((uintptr_t)dst | bytes) & 15) == 0) {
        for (size_t o = 0; o < bytes; o += 16)
            _mm_stream_si128((__m128i *)(void *)(dst + o), _mm_load_si128((const __m128i *)(const void *)(src + o)));
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void h5shuf__rowstage_drain(struct h5shuf_rowstage *st, uint64_t k, unsigned char *const *dst, uint64_t at)
{
    const unsigned char *from = st->mem + k * st->pile_bytes;
    for (size_t p = 0; p < st->nparts; p++)
        copy_out(dst[p] + at * st->part_bytes[p], from + st->off[p], st->n[k] * st->part_bytes[p]);
    st->n[k] = 0;
}

void h5shuf__rowstage_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}
