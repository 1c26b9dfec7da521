/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keys.c - the permutation contract's keys and key ranges.
 *
 * K(seed, i) is word 0 of Philox4x64-10 with counter (i, 0, 0, 0) and key (seed, 0): J. K. Salmon,
 * M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11.  Philox is
 * a keyed bijection of the counter that passes TestU01's BigCrush for every key, consecutive keys
 * included, so nearby seeds give unrelated streams.  The round constants and the known-answer vectors
 * in tests/test_keys.c are Random123's; numpy.random.Philox implements the same function.
 */
#include <stdlib.h>

#include "keys.h"

#define PHILOX_M0 UINT64_C(0xD2E7470EE14C6C93)
#define PHILOX_M1 UINT64_C(0xCA5A826395121157)
#define PHILOX_W0 UINT64_C(0x9E3779B97F4A7C15) /* golden ratio */
#define PHILOX_W1 UINT64_C(0xBB67AE8584CAA73B) /* sqrt(3) - 1 */

static inline void mulhilo(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    h5shuf_u128 p = (h5shuf_u128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
}

void h5shuf__philox4x64_10(const uint64_t ctr[4], const uint64_t key[2], uint64_t out[4])
{
    uint64_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint64_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint64_t hi0, lo0, hi1, lo1;
        mulhilo(PHILOX_M0, c0, &hi0, &lo0);
        mulhilo(PHILOX_M1, c2, &hi1, &lo1);
        uint64_t n0 = hi1 ^ c1 ^ k0;
        uint64_t n1 = lo1;
        uint64_t n2 = hi0 ^ c3 ^ k1;
        uint64_t n3 = lo0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += PHILOX_W0; /* the key schedule bumps after each round; the last bump is unused */
        k1 += PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

uint64_t h5shuf_key(uint64_t seed, uint64_t i)
{
    const uint64_t ctr[4] = {i, 0, 0, 0};
    const uint64_t key[2] = {seed, 0};
    uint64_t out[4];
    h5shuf__philox4x64_10(ctr, key, out);
    return out[0];
}

/* One Philox round of a row's counter c with round key (k0, k1); rounds 2 to 9 of h5shuf__keys. */
struct philox_ctr {
    uint64_t c0, c1, c2, c3;
};

static inline struct philox_ctr philox_round(struct philox_ctr c, uint64_t k0, uint64_t k1)
{
    uint64_t hi0, lo0, hi1, lo1;
    mulhilo(PHILOX_M0, c.c0, &hi0, &lo0);
    mulhilo(PHILOX_M1, c.c2, &hi1, &lo1);
    return (struct philox_ctr){hi1 ^ c.c1 ^ k0, lo1, hi0 ^ c.c3 ^ k1, lo0};
}

/* Round 1 of counter (i, 0, 0, 0) with key (seed, 0): M1 * 0 and the zero words drop out. */
static inline struct philox_ctr philox_first_round(uint64_t seed, uint64_t i)
{
    uint64_t hi0, lo0;
    mulhilo(PHILOX_M0, i, &hi0, &lo0);
    return (struct philox_ctr){seed, 0, hi0, lo0};
}

/* Word 0 after round 10 (round key word 0 is k0): only the M1 product feeds it. */
static inline uint64_t philox_last_word(struct philox_ctr c, uint64_t k0)
{
    uint64_t hi1, lo1;
    mulhilo(PHILOX_M1, c.c2, &hi1, &lo1);
    return hi1 ^ c.c1 ^ k0;
}

/* The keys of rows [0, n) two at a time, with the scalar multiplier. */
static void keys_scalar(uint64_t seed, const uint64_t *ids, uint64_t first, uint64_t n, uint64_t *keys)
{
    uint64_t r = 0;
    /* Two rows a round: one row's rounds are a chain of dependent multiplications, two chains overlap
     * (measured: docs/benchmark.md, section "The keys"); more rows than two run out of registers. */
    for (; r + 2 <= n; r += 2) {
        struct philox_ctr a = philox_first_round(seed, ids ? ids[r] : first + r);
        struct philox_ctr b = philox_first_round(seed, ids ? ids[r + 1] : first + r + 1);
        uint64_t k0 = seed, k1 = 0;
        for (int round = 2; round <= 9; round++) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
            a = philox_round(a, k0, k1);
            b = philox_round(b, k0, k1);
        }
        k0 += PHILOX_W0;
        keys[r] = philox_last_word(a, k0);
        keys[r + 1] = philox_last_word(b, k0);
    }
    if (r < n)
        keys[r] = h5shuf_key(seed, ids ? ids[r] : first + r);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Eight rows at a time in AVX-512 lanes, on processors that have AVX-512F (checked at run time): a
 * 64 x 64-bit product is made of four 32 x 32-bit products (vpmuludq) with their carries, as in Hacker's
 * Delight 8-2 (mulhu).  The same Philox4x64-10, word for
 * word: 128M keys of a run of 16-byte rows were a fifth of its CPU time with the scalar multiplier
 * (measured: docs/benchmark.md, section "The keys"). */
#include <immintrin.h>
#define KEYS_LANES 8
#define KEYS_BLOCKS 4 /* blocks of lanes in flight: the fastest of 1 to 4 (docs/benchmark.md, "The keys") */
#define TARGET_AVX512 __attribute__((target("avx512f")))

/* The 128-bit product x * m in each lane, as its high and low words, m = m_hi * 2^32 + m_lo (each lane's
 * m_lo, m_hi < 2^32): four 32 x 32-bit products (vpmuludq) and their carries.  The low word from the same
 * products is cheaper than vpmullq (three of the multiplier's micro-ops). */
TARGET_AVX512 static inline __m512i mulhilo_u64(__m512i x, __m512i m_lo, __m512i m_hi, __m512i *lo)
{
    const __m512i low32 = _mm512_set1_epi64(0xffffffff);
    const __m512i x_hi = _mm512_srli_epi64(x, 32);
    const __m512i p00 = _mm512_mul_epu32(x, m_lo), p01 = _mm512_mul_epu32(x, m_hi);
    const __m512i p10 = _mm512_mul_epu32(x_hi, m_lo), p11 = _mm512_mul_epu32(x_hi, m_hi);
    const __m512i t = _mm512_add_epi64(p10, _mm512_srli_epi64(p00, 32));           /* < 2^64 */
    const __m512i u = _mm512_add_epi64(p01, _mm512_and_si512(t, low32));          /* < 2^64 */
    *lo = _mm512_add_epi64(p00, _mm512_slli_epi64(_mm512_add_epi64(p01, p10), 32)); /* mod 2^64 */
    return _mm512_add_epi64(_mm512_add_epi64(p11, _mm512_srli_epi64(t, 32)), _mm512_srli_epi64(u, 32));
}

/* One Philox round of the eight counters in c[0..3] with round key (k0, k1), as philox_round. */
TARGET_AVX512 static inline void philox_round8(__m512i *c, uint64_t k0, uint64_t k1, __m512i m0_lo, __m512i m0_hi,
                                               __m512i m1_lo, __m512i m1_hi)
{
    __m512i lo0, lo1;
    const __m512i hi0 = mulhilo_u64(c[0], m0_lo, m0_hi, &lo0), hi1 = mulhilo_u64(c[2], m1_lo, m1_hi, &lo1);
    c[0] = _mm512_xor_si512(_mm512_xor_si512(hi1, c[1]), _mm512_set1_epi64((long long)k0));
    c[1] = lo1;
    c[2] = _mm512_xor_si512(_mm512_xor_si512(hi0, c[3]), _mm512_set1_epi64((long long)k1));
    c[3] = lo0;
}

/* keys_scalar's values for rows [0, n - n % (8 * KEYS_BLOCKS)), KEYS_BLOCKS blocks of eight lanes at a
 * time, whose chains of dependent products overlap; returns how many rows it did. */
TARGET_AVX512 static uint64_t keys_avx512(uint64_t seed, const uint64_t *ids, uint64_t first, uint64_t n, uint64_t *keys)
{
    const __m512i m0_lo = _mm512_set1_epi64((long long)(PHILOX_M0 & 0xffffffff));
    const __m512i m0_hi = _mm512_set1_epi64((long long)(PHILOX_M0 >> 32));
    const __m512i m1_lo = _mm512_set1_epi64((long long)(PHILOX_M1 & 0xffffffff));
    const __m512i m1_hi = _mm512_set1_epi64((long long)(PHILOX_M1 >> 32));
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    uint64_t r = 0;
    for (; r + KEYS_BLOCKS * KEYS_LANES <= n; r += KEYS_BLOCKS * KEYS_LANES) {
        __m512i c[KEYS_BLOCKS][4];
        for (int h = 0; h < KEYS_BLOCKS; h++) {
            const uint64_t at = r + (uint64_t)h * KEYS_LANES;
            const __m512i i = ids ? _mm512_loadu_si512((const void *)(ids + at))
                                  : _mm512_add_epi64(_mm512_set1_epi64((long long)(first + at)), lane);
            /* round 1 of counter (i, 0, 0, 0) with key (seed, 0), as philox_first_round */
            c[h][0] = _mm512_set1_epi64((long long)seed);
            c[h][1] = _mm512_setzero_si512();
            c[h][2] = mulhilo_u64(i, m0_lo, m0_hi, &c[h][3]);
        }
        uint64_t k0 = seed, k1 = 0;
        for (int round = 2; round <= 9; round++) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
            for (int h = 0; h < KEYS_BLOCKS; h++)
                philox_round8(c[h], k0, k1, m0_lo, m0_hi, m1_lo, m1_hi);
        }
        k0 += PHILOX_W0; /* round 10's word 0, as philox_last_word */
        for (int h = 0; h < KEYS_BLOCKS; h++) {
            __m512i unused;
            const __m512i out = _mm512_xor_si512(_mm512_xor_si512(mulhilo_u64(c[h][2], m1_lo, m1_hi, &unused), c[h][1]),
                                                 _mm512_set1_epi64((long long)k0));
            _mm512_storeu_si512((void *)(keys + r + (uint64_t)h * KEYS_LANES), out);
        }
    }
    return r;
}

static int have_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}

/* The same scheme in AVX2's four 64-bit lanes, for processors without AVX-512F (the AMD EPYC machines among
 * this project's VMs, 512 KiB of L2 a core): vpmuludq on 256-bit registers, faster than the scalar path
 * there; 4 blocks in flight as for AVX-512, the counts measured being too noisy to choose another
 * (measured: docs/benchmark.md, section "The keys"). */
#define KEYS_LANES_AVX2 4
#define KEYS_BLOCKS_AVX2 4
#define TARGET_AVX2 __attribute__((target("avx2")))

/* mulhilo_u64 in four lanes. */
TARGET_AVX2 static inline __m256i mulhilo_u64x4(__m256i x, __m256i m_lo, __m256i m_hi, __m256i *lo)
{
    const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
    const __m256i x_hi = _mm256_srli_epi64(x, 32);
    const __m256i p00 = _mm256_mul_epu32(x, m_lo), p01 = _mm256_mul_epu32(x, m_hi);
    const __m256i p10 = _mm256_mul_epu32(x_hi, m_lo), p11 = _mm256_mul_epu32(x_hi, m_hi);
    const __m256i t = _mm256_add_epi64(p10, _mm256_srli_epi64(p00, 32));           /* < 2^64 */
    const __m256i u = _mm256_add_epi64(p01, _mm256_and_si256(t, low32));          /* < 2^64 */
    *lo = _mm256_add_epi64(p00, _mm256_slli_epi64(_mm256_add_epi64(p01, p10), 32)); /* mod 2^64 */
    return _mm256_add_epi64(_mm256_add_epi64(p11, _mm256_srli_epi64(t, 32)), _mm256_srli_epi64(u, 32));
}

/* philox_round8 in four lanes. */
TARGET_AVX2 static inline void philox_round4(__m256i *c, uint64_t k0, uint64_t k1, __m256i m0_lo, __m256i m0_hi,
                                             __m256i m1_lo, __m256i m1_hi)
{
    __m256i lo0, lo1;
    const __m256i hi0 = mulhilo_u64x4(c[0], m0_lo, m0_hi, &lo0), hi1 = mulhilo_u64x4(c[2], m1_lo, m1_hi, &lo1);
    c[0] = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), _mm256_set1_epi64x((long long)k0));
    c[1] = lo1;
    c[2] = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), _mm256_set1_epi64x((long long)k1));
    c[3] = lo0;
}

/* keys_avx512 in AVX2: rows [0, n - n % (4 * KEYS_BLOCKS_AVX2)); returns how many rows it did. */
TARGET_AVX2 static uint64_t keys_avx2(uint64_t seed, const uint64_t *ids, uint64_t first, uint64_t n, uint64_t *keys)
{
    const __m256i m0_lo = _mm256_set1_epi64x((long long)(PHILOX_M0 & 0xffffffff));
    const __m256i m0_hi = _mm256_set1_epi64x((long long)(PHILOX_M0 >> 32));
    const __m256i m1_lo = _mm256_set1_epi64x((long long)(PHILOX_M1 & 0xffffffff));
    const __m256i m1_hi = _mm256_set1_epi64x((long long)(PHILOX_M1 >> 32));
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    uint64_t r = 0;
    for (; r + KEYS_BLOCKS_AVX2 * KEYS_LANES_AVX2 <= n; r += KEYS_BLOCKS_AVX2 * KEYS_LANES_AVX2) {
        __m256i c[KEYS_BLOCKS_AVX2][4];
        for (int h = 0; h < KEYS_BLOCKS_AVX2; h++) {
            const uint64_t at = r + (uint64_t)h * KEYS_LANES_AVX2;
            const __m256i i = ids ? _mm256_loadu_si256((const void *)(ids + at))
                                  : _mm256_add_epi64(_mm256_set1_epi64x((long long)(first + at)), lane);
            c[h][0] = _mm256_set1_epi64x((long long)seed);
            c[h][1] = _mm256_setzero_si256();
            c[h][2] = mulhilo_u64x4(i, m0_lo, m0_hi, &c[h][3]);
        }
        uint64_t k0 = seed, k1 = 0;
        for (int round = 2; round <= 9; round++) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
            for (int h = 0; h < KEYS_BLOCKS_AVX2; h++)
                philox_round4(c[h], k0, k1, m0_lo, m0_hi, m1_lo, m1_hi);
        }
        k0 += PHILOX_W0;
        for (int h = 0; h < KEYS_BLOCKS_AVX2; h++) {
            __m256i unused;
            const __m256i out = _mm256_xor_si256(
                _mm256_xor_si256(mulhilo_u64x4(c[h][2], m1_lo, m1_hi, &unused), c[h][1]), _mm256_set1_epi64x((long long)k0));
            _mm256_storeu_si256((void *)(keys + r + (uint64_t)h * KEYS_LANES_AVX2), out);
        }
    }
    return r;
}

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#endif

unsigned h5shuf__keys_lanes(void)
{
#ifdef KEYS_LANES
    if (getenv("H5SHUF_DEBUG_NO_SIMD"))
        return 1;
    if (have_avx512() && !getenv("H5SHUF_DEBUG_NO_AVX512"))
        return KEYS_LANES;
    if (have_avx2())
        return KEYS_LANES_AVX2;
#endif
    return 1;
}

void h5shuf__keys(uint64_t seed, const uint64_t *ids, uint64_t first, uint64_t n, uint64_t *keys)
{
    uint64_t r = 0;
#ifdef KEYS_LANES
    const unsigned lanes = h5shuf__keys_lanes();
    if (lanes == KEYS_LANES && n >= KEYS_BLOCKS * KEYS_LANES)
        r = keys_avx512(seed, ids, first, n, keys);
    else if (lanes == KEYS_LANES_AVX2 && n >= KEYS_BLOCKS_AVX2 * KEYS_LANES_AVX2)
        r = keys_avx2(seed, ids, first, n, keys);
#endif
    keys_scalar(seed, ids ? ids + r : NULL, first + r, n - r, keys + r);
}

h5shuf_u128 h5shuf__range_cut(struct h5shuf_range r, uint64_t m, uint64_t j)
{
    h5shuf_u128 width = r.hi - r.lo;
    if (j >= m)
        return r.hi;
    /* ceil(j * width / m); j * width < 2^128 because j < m < 2^64 and width <= 2^64. */
    h5shuf_u128 num = (h5shuf_u128)j * width;
    return r.lo + num / m + (num % m != 0);
}
