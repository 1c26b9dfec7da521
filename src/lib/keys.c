/*
 * keys.c - the permutation contract's keys and key ranges.
 *
 * K(seed, i) is word 0 of Philox4x64-10 with counter (i, 0, 0, 0) and key (seed, 0): J. K. Salmon,
 * M. A. Moraes, R. O. Dror, D. E. Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11.  Philox is
 * a keyed bijection of the counter that passes TestU01's BigCrush for every key, consecutive keys
 * included, so nearby seeds give unrelated streams.  The round constants and the known-answer vectors
 * in tests/test_keys.c are Random123's; numpy.random.Philox implements the same function.
 */
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

void h5shuf__keys(uint64_t seed, const uint64_t *ids, uint64_t first, uint64_t n, uint64_t *keys)
{
    uint64_t r = 0;
    /* Two rows a round: one row's rounds are a chain of dependent multiplications, two chains overlap
     * (about 12 ns a key against 17 on this project's VMs); more rows than two run out of registers. */
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

h5shuf_u128 h5shuf__range_cut(struct h5shuf_range r, uint64_t m, uint64_t j)
{
    h5shuf_u128 width = r.hi - r.lo;
    if (j >= m)
        return r.hi;
    /* ceil(j * width / m); j * width < 2^128 because j < m < 2^64 and width <= 2^64. */
    h5shuf_u128 num = (h5shuf_u128)j * width;
    return r.lo + num / m + (num % m != 0);
}
