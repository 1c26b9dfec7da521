/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_keys.c - the permutation contract's key function and key ranges.
 *
 * Philox4x64-10 is checked against Random123's known-answer vectors (kat_vectors, which numpy's
 * Philox also reproduces), h5shuf_key against values computed with numpy.random.Philox, and the pile
 * arithmetic against the contract's (K * M) >> 64 and against its own boundaries.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "tu_core.h"

/* Random123 kat_vectors, philox4x64 10 rounds: counter, key, expected output. */
static void test_philox_kat(void)
{
    static const struct {
        uint64_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0},
         {0x16554d9eca36314cULL, 0xdb20fe9d672d0fdcULL, 0xd7e772cee186176bULL, 0x7e68b68aec7ba23bULL}},
        {{~0ULL, ~0ULL, ~0ULL, ~0ULL}, {~0ULL, ~0ULL},
         {0x87b092c3013fe90bULL, 0x438c3c67be8d0224ULL, 0x9cc7d7c69cd777b6ULL, 0xa09caebf594f0ba0ULL}},
        {{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL},
         {0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL},
         {0xa528f45403e61d95ULL, 0x38c72dbd566e9788ULL, 0xa5a1610e72fd18b5ULL, 0x57bd43b5e52b7fe6ULL}},
    };
    for (size_t t = 0; t < sizeof kat / sizeof kat[0]; t++) {
        uint64_t out[4];
        h5shuf__philox4x64_10(kat[t].ctr, kat[t].key, out);
        for (int w = 0; w < 4; w++)
            ASSERT_EQ_INT(out[w], kat[t].out[w]);
    }
}

/* h5shuf_key(seed, i) against numpy: Philox(key=seed, counter=i-1).random_raw(4)[0]. */
static void test_key_vectors(void)
{
    ASSERT_EQ_INT(h5shuf_key(0, 0), 0x16554d9eca36314cULL);
    ASSERT_EQ_INT(h5shuf_key(42, 5), 0xfc8f015cf1f8f3efULL);
}

/* h5shuf__keys, the keys of many rows at once, gives h5shuf_key's values: from ids and from a first row,
 * for odd and even counts (its pairs of rows and the one left over), seeds and ids at the ends of their
 * range included. */
static void test_keys_many_rows(void)
{
    enum { N = 1001 };
    static const uint64_t seeds[] = {0, 1, 42, 0x243f6a8885a308d3ULL, ~0ULL};
    static uint64_t ids[N], keys[N + 1];
    for (uint64_t r = 0; r < N; r++)
        ids[r] = r % 3 == 0 ? ~0ULL - r : r * 0x9E3779B97F4A7C15ULL;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (uint64_t n = N - 2; n <= N; n++) {
            keys[n] = 0x5a5a;
            h5shuf__keys(seeds[s], ids, 0, n, keys);
            for (uint64_t r = 0; r < n; r++)
                ASSERT_EQ_INT_FATAL(keys[r], h5shuf_key(seeds[s], ids[r]));
            h5shuf__keys(seeds[s], NULL, ~0ULL - n + 1, n, keys);
            for (uint64_t r = 0; r < n; r++)
                ASSERT_EQ_INT_FATAL(keys[r], h5shuf_key(seeds[s], ~0ULL - n + 1 + r));
            ASSERT_EQ_INT(keys[n], 0x5a5a); /* nothing written past n */
        }
    h5shuf__keys(42, NULL, 5, 1, keys);
    ASSERT_EQ_INT(keys[0], 0xfc8f015cf1f8f3efULL); /* numpy's value, as above */
}

/* Every count from 0 to 40 (vector blocks of 8 rows and every remainder after them), at offsets into the
 * ids, gives h5shuf_key's values and writes nothing past n. */
static void test_keys_every_remainder(void)
{
    static uint64_t ids[64], keys[64];
    for (uint64_t r = 0; r < 64; r++)
        ids[r] = r * 0x9E3779B97F4A7C15ULL + (r & 1 ? ~0ULL : 7);
    for (uint64_t n = 0; n <= 40; n++)
        for (uint64_t off = 0; off < 3; off++) {
            for (uint64_t r = 0; r < 64; r++)
                keys[r] = 0x5a5a;
            h5shuf__keys(77, ids + off, 0, n, keys);
            for (uint64_t r = 0; r < n; r++)
                ASSERT_EQ_INT_FATAL(keys[r], h5shuf_key(77, ids[off + r]));
            ASSERT_EQ_INT(keys[n], 0x5a5a);
            h5shuf__keys(78, NULL, UINT64_C(1) << 63 | off, n, keys);
            for (uint64_t r = 0; r < n; r++)
                ASSERT_EQ_INT_FATAL(keys[r], h5shuf_key(78, (UINT64_C(1) << 63 | off) + r));
        }
    printf("  (keys computed %u rows at a time on this processor)\n", h5shuf__keys_lanes());
}

/* Consecutive seeds must not give shifted streams: no key of seed s+1 among the first keys of seed s. */
static void test_nearby_seeds_unrelated(void)
{
    enum { N = 4096 };
    static uint64_t a[N];
    for (uint64_t i = 0; i < N; i++)
        a[i] = h5shuf_key(1000, i);
    int hits = 0;
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t k = h5shuf_key(1001, i);
        for (uint64_t j = 0; j < N; j++)
            hits += a[j] == k;
    }
    ASSERT_EQ_INT(hits, 0);
}

/* The top byte of keys is uniform: chi-square over 256 cells, 2^16 keys, alpha = 0.001 (critical value
 * 330.52 for 255 degrees of freedom). */
static void test_key_top_byte_uniform(void)
{
    enum { N = 1 << 16 };
    for (uint64_t seed = 0; seed < 3; seed++) {
        double count[256] = {0};
        for (uint64_t i = 0; i < N; i++)
            count[h5shuf_key(seed, i) >> 56] += 1;
        double chi = 0, e = N / 256.0;
        for (int v = 0; v < 256; v++)
            chi += (count[v] - e) * (count[v] - e) / e;
        ASSERT_LT_DBL(chi, 330.52);
    }
}

static void test_top_level_pile_is_contract(void)
{
    struct h5shuf_range all = {0, (h5shuf_u128)1 << 64};
    uint64_t st = 7;
    for (int t = 0; t < 100000; t++) {
        uint64_t k = tu_splitmix64(&st), m = 1 + tu_splitmix64(&st) % 100000;
        uint64_t want = (uint64_t)(((h5shuf_u128)k * m) >> 64);
        ASSERT_EQ_INT_FATAL(h5shuf__range_part(all, m, k), want);
    }
    ASSERT_EQ_INT(h5shuf__range_part(all, 3, UINT64_MAX), 2);
    ASSERT_EQ_INT(h5shuf__range_part(all, 1, UINT64_MAX), 0);
}

/* Part j of a range starts at cut(j): the key there is in part j and the key before it in part j-1. */
static void test_range_cuts(void)
{
    uint64_t st = 11;
    for (int t = 0; t < 2000; t++) {
        struct h5shuf_range r;
        uint64_t a = tu_splitmix64(&st), b = tu_splitmix64(&st);
        if (t % 3 == 0)
            r = (struct h5shuf_range){0, (h5shuf_u128)1 << 64};
        else if (a < b)
            r = (struct h5shuf_range){a, (h5shuf_u128)b + 1};
        else
            r = (struct h5shuf_range){b, (h5shuf_u128)a + 1};
        uint64_t width = (uint64_t)((r.hi - r.lo) > UINT64_MAX ? UINT64_MAX : (r.hi - r.lo));
        uint64_t m = 2 + tu_splitmix64(&st) % 1000;
        if (m > width)
            m = width < 2 ? 1 : width;
        ASSERT_EQ_U128_FATAL(h5shuf__range_cut(r, m, 0), r.lo);
        ASSERT_EQ_U128_FATAL(h5shuf__range_cut(r, m, m), r.hi);
        for (uint64_t j = 1; j < m; j++) {
            h5shuf_u128 c = h5shuf__range_cut(r, m, j);
            ASSERT_EQ_INT_FATAL(h5shuf__range_part(r, m, (uint64_t)c), j);
            ASSERT_EQ_INT_FATAL(h5shuf__range_part(r, m, (uint64_t)(c - 1)), j - 1);
        }
    }
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"philox4x64-10 known-answer vectors", test_philox_kat},
        {"h5shuf_key matches numpy Philox", test_key_vectors},
        {"keys of many rows at once are h5shuf_key's", test_keys_many_rows},
        {"keys of 0..40 rows (vector blocks and remainders) are h5shuf_key's", test_keys_every_remainder},
        {"nearby seeds give unrelated keys", test_nearby_seeds_unrelated},
        {"top byte of keys uniform (chi-square)", test_key_top_byte_uniform},
        {"top-level pile is (K*M)>>64", test_top_level_pile_is_contract},
        {"range cuts and parts agree", test_range_cuts},
        {NULL, NULL},
    };
    return tu_run("keys", tests);
}
