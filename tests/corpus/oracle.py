# SPDX-License-Identifier: BSD-3-Clause
"""The permutation contract, computed independently of h5shuf (docs/design.md section 2).

Row i (0 .. N-1) gets the key K(seed, i) = word 0 of Philox4x64-10 with counter (i, 0, 0, 0) and key
(seed, 0); the output is the input rows sorted by (key, i).  numpy's Philox increments its counter before
it uses it, so the keys of rows i0 .. i0+n-1 are every fourth word of Philox(key=seed, counter=i0-1);
the pure-Python generator below, checked against Random123's known answers, pins that reading of numpy.
"""

import numpy as np

M64 = (1 << 64) - 1


def philox4x64_10(ctr, key):
    """Philox4x64-10 (Salmon et al., SC'11) in plain Python integers: 4 counter words, 2 key words."""
    c = list(ctr)
    k = list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B97F4A7C15) & M64, (k[1] + 0xBB67AE8584CAA73B) & M64]
        p0 = 0xD2E7470EE14C6C93 * c[0]
        p1 = 0xCA5A826395121157 * c[2]
        c = [(p1 >> 64) ^ c[1] ^ k[0], p1 & M64, (p0 >> 64) ^ c[3] ^ k[1], p0 & M64]
    return c


def keys(seed, n):
    """K(seed, i) for i = 0 .. n-1, vectorised with numpy's Philox."""
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    return np.random.Philox(key=seed, counter=(1 << 256) - 1).random_raw(4 * n)[::4].copy()


def order(seed, n):
    """The output order: output row r is input row order[r]."""
    return np.lexsort((np.arange(n, dtype=np.uint64), keys(seed, n)))


def selftest():
    """Problems with the oracle itself (empty when it agrees with Random123 and the pure-Python form)."""
    kat = [
        ([0, 0, 0, 0], [0, 0],
         [0x16554d9eca36314c, 0xdb20fe9d672d0fdc, 0xd7e772cee186176b, 0x7e68b68aec7ba23b]),
        ([M64] * 4, [M64, M64],
         [0x87b092c3013fe90b, 0x438c3c67be8d0224, 0x9cc7d7c69cd777b6, 0xa09caebf594f0ba0]),
    ]
    bad = ["Random123 vector %d" % i for i, (c, k, w) in enumerate(kat) if philox4x64_10(c, k) != w]
    for seed in (0, 7, M64):
        got = [int(v) for v in keys(seed, 5)]
        if got != [philox4x64_10([i, 0, 0, 0], [seed, 0])[0] for i in range(5)]:
            bad.append("numpy keys for seed %d" % seed)
    return bad
