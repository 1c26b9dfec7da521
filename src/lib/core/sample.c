/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample.c - the exact seeded sample of a weighted input's fractional part (sample.h).
 */
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "sample.h"

uint64_t h5shuf__sample_size(uint64_t n, uint64_t num, uint64_t den)
{
    return (uint64_t)(((h5shuf_u128)num * n * 2 + den) / ((h5shuf_u128)den * 2));
}

void h5shuf__sample_free(struct h5shuf_sample *s)
{
    free(s->bits);
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

int h5shuf__sample_make(struct h5shuf_sample *s, uint64_t seed, uint64_t stream, uint64_t n, uint64_t e)
{
    memset(s, 0, sizeof *s);
    const uint64_t words = (n + 63) / 64, blocks = (n + 511) / 512;
    s->bits = calloc(words ? words : 1, sizeof *s->bits);
    s->ranks = malloc((blocks + 1) * sizeof *s->ranks);
    if (!s->bits || !s->ranks) {
        h5shuf__sample_free(s);
        return -1;
    }
    s->n = n;
    s->e = e;
    const uint64_t key[2] = {seed, 0};
    uint64_t u[4] = {0}, m = 0;
    for (uint64_t t = 0; t < n && m < e; t++) {
        if (t % 4 == 0) {
            const uint64_t ctr[4] = {t / 4, stream, 1, 0};
            h5shuf__philox4x64_10(ctr, key, u);
        }
        /* taken with probability (e - m) / (n - t): floor(U (n - t) / 2^64) < e - m */
        if ((uint64_t)(((h5shuf_u128)u[t % 4] * (n - t)) >> 64) < e - m) {
            s->bits[t >> 6] |= (uint64_t)1 << (t & 63);
            m++;
        }
    }
    uint64_t c = 0;
    for (uint64_t b = 0; b < blocks; b++) {
        s->ranks[b] = c;
        for (uint64_t w = b * 8; w < words && w < b * 8 + 8; w++)
            c += (uint64_t)__builtin_popcountll(s->bits[w]);
    }
    s->ranks[blocks] = c;
    return 0;
}

uint64_t h5shuf__sample_rank(const struct h5shuf_sample *s, uint64_t t)
{
    uint64_t b = t / 512, c = s->ranks[b];
    for (uint64_t w = b * 8; w < t / 64; w++)
        c += (uint64_t)__builtin_popcountll(s->bits[w]);
    if (t % 64)
        c += (uint64_t)__builtin_popcountll(s->bits[t / 64] & (((uint64_t)1 << (t % 64)) - 1));
    return c;
}

uint64_t h5shuf__sample_select(const struct h5shuf_sample *s, uint64_t j)
{
    uint64_t lo = 0, hi = (s->n + 511) / 512; /* the last block b with ranks[b] <= j */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->ranks[mid] <= j)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t left = j - s->ranks[lo], w = lo * 8;
    for (;; w++) {
        uint64_t c = (uint64_t)__builtin_popcountll(s->bits[w]);
        if (left < c)
            break;
        left -= c;
    }
    uint64_t x = s->bits[w];
    while (left--)
        x &= x - 1; /* drop the lowest taken rows before it */
    return w * 64 + (uint64_t)__builtin_ctzll(x);
}
