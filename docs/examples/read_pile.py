# SPDX-License-Identifier: BSD-3-Clause
"""Read pile j of an h5shuf pile file and put its rows in the shuffle's order (docs/lazy.md).

A training loader that reads piles in a random order (or in order) and this function shuffles each
pile in memory when it is needed: the lazy second pass.  Sorting by the contract's key gives exactly
rows offset_j .. offset_j + rows_j - 1 of `h5shuf gather`'s output; any uniform in-memory shuffle
(rng.permutation(len(ids))) would do as well for training.  The pile datasets are zstd-compressed
unless the scatter was given --scratch-compression gzip:1+shuffle or none: set HDF5_PLUGIN_PATH to
h5shuf's plugin directory (or `import hdf5plugin`) to read zstd.
"""
import h5py
import numpy as np

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
LO32 = np.uint64(0xFFFFFFFF)


def _mulhilo(a, b):
    """(hi, lo) 64-bit halves of the 128-bit products a * b (a: uint64 array, b: Python int)."""
    a0, a1 = a & LO32, a >> np.uint64(32)
    b0, b1 = np.uint64(b & 0xFFFFFFFF), np.uint64(b >> 32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> np.uint64(32)) + (p01 & LO32) + (p10 & LO32)
    hi = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (mid >> np.uint64(32))
    return hi, a * np.uint64(b)


def h5shuf_keys(seed, ids):
    """K(seed, i) for every i in ids: word 0 of Philox4x64-10, counter (i, 0, 0, 0), key (seed, 0)."""
    c0, c1 = ids.astype(np.uint64), np.zeros_like(ids, dtype=np.uint64)
    c2, c3 = np.zeros_like(c1), np.zeros_like(c1)
    k0, k1 = seed, 0
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF, (k1 + 0xBB67AE8584CAA73B) & 0xFFFFFFFFFFFFFFFF
        hi0, lo0 = _mulhilo(c0, 0xD2E7470EE14C6C93)
        hi1, lo1 = _mulhilo(c2, 0xCA5A826395121157)
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
    return c0


def read_pile(path, j):
    """Pile j's rows in shuffled order: ({dataset path: array}, global input row ids)."""
    with h5py.File(path, "r") as f:
        seed = int(f.attrs["h5shuf_seed"])
        pile = f["piles/%06d" % j]
        ids = pile["index"][:]
        order = np.lexsort((ids, h5shuf_keys(seed, ids)))  # by key, ties by id
        names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["h5shuf_datasets"]]
        rows = {name: pile["d%d" % k][:][order] for k, name in enumerate(names)}
    return rows, ids[order]


if __name__ == "__main__":
    import sys
    with h5py.File(sys.argv[1], "r") as f:
        m = int(f.attrs["h5shuf_piles"])
    for j in np.random.default_rng().permutation(m):  # an epoch: piles in a random order
        rows, ids = read_pile(sys.argv[1], int(j))
        print("pile %d: %d rows" % (j, len(ids)))
