# SPDX-License-Identifier: BSD-3-Clause
"""keys.py - the permutation contract's keys, vectorised with numpy.

K(seed, i) = word 0 of Philox4x64-10 (Salmon, Moraes, Dror, Shaw, SC'11) with counter (i, 0, 0, 0) and
key (seed, 0); the shuffled order is the rows sorted by (K, i).  The library computes K one row at a time
(h5shuf_key); a pile's ids are not consecutive, so numpy's own Philox (a stream over consecutive
counters) does not serve.  This is the same function on uint64 arrays: each 64 x 64 -> 128-bit product
of a round is built from four 32 x 32 -> 64-bit products.  tests/python_api.py checks it against
h5shuf_key for many ids and seeds.
"""

import numpy as np

_M0, _M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157  # Philox4x64 multipliers
_W0, _W1 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B  # key schedule (Weyl) increments
_MASK = (1 << 64) - 1
_BLOCK = 1 << 16  # ids per block: numpy's temporaries stay in cache


def _mul128(x, m):
    """(high, low) 64-bit words of x * m for a uint64 array x and a 64-bit constant m."""
    s32 = np.uint64(32)
    lo32 = np.uint64(0xFFFFFFFF)
    mlo, mhi = np.uint64(m & 0xFFFFFFFF), np.uint64(m >> 32)
    xlo, xhi = x & lo32, x >> s32
    ll, lh, hl, hh = xlo * mlo, xlo * mhi, xhi * mlo, xhi * mhi
    carry = ((ll >> s32) + (lh & lo32) + (hl & lo32)) >> s32
    return hh + (lh >> s32) + (hl >> s32) + carry, x * np.uint64(m)


def _block(seed, c0):
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = seed, 0
    for rnd in range(10):
        if rnd:
            k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
        hi0, lo0 = _mul128(c0, _M0)
        hi1, lo1 = _mul128(c2, _M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
    return c0


def keys(seed, ids):
    """K(seed, i) for every i in ids.

    seed: int, 0 .. 2**64-1.  ids: array-like of row numbers (any shape; converted to uint64).
    Returns a uint64 array of ids' shape.  Raises ValueError for a seed outside 64 bits.
    """
    seed = int(seed)
    if not 0 <= seed <= _MASK:
        raise ValueError("seed %d is not a 64-bit unsigned integer" % seed)
    ids = np.asarray(ids, dtype=np.uint64)
    flat = ids.reshape(-1)
    out = np.empty(flat.shape, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for a in range(0, flat.size, _BLOCK):
            out[a:a + _BLOCK] = _block(seed, flat[a:a + _BLOCK])
    return out.reshape(ids.shape)


def order(seed, ids):
    """The positions of ids in shuffled order: argsort by (K(seed, i), i).  ids: 1-D array of row numbers."""
    ids = np.asarray(ids, dtype=np.uint64)
    return np.lexsort((ids, keys(seed, ids)))
