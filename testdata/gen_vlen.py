#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gen_vlen.py: write an HDF5 file of variable-length token sequences, for the vlen acceptance run.

usage: /usr/bin/python3 testdata/gen_vlen.py OUT.h5 [ROWS [MAXLEN [SEED]]]
       /usr/bin/python3 testdata/gen_vlen.py --check SHUFFLED.h5 SHUFSEED SAMPLES [ROWS [MAXLEN [SEED]]]

/tokens (ROWS,) vlen int32: row i holds lengths[i] token ids in [0, 50257), lengths uniform in
1..MAXLEN (defaults: 1000000 rows, 2048: about 4.1 GB of tokens); /label (ROWS,) int64 = i.  Written in
blocks of 8192 rows, so memory stays small whatever ROWS is.  Row i is a pure function of (SEED, i's
block), so a checker can regenerate any row without reading the file: --check takes SAMPLES random
output rows r of a shuffle made with seed SHUFSEED and checks /label[r] and /tokens[r] against input row
order[r], with the order from tests/oracle_h5py.py's numpy Philox (rows sorted by (K(seed, i), i)).
"""
import os
import sys

import h5py
import numpy as np

BLOCK = 8192


def block_rows(seed, b, n, maxlen):
    """The rows of block b (n rows): a list of int32 arrays."""
    rng = np.random.default_rng([seed, b])
    lens = rng.integers(1, maxlen + 1, n)
    flat = rng.integers(0, 50257, int(lens.sum()), dtype=np.int32)
    return np.split(flat, np.cumsum(lens)[:-1])


def check(path, shufseed, samples, rows, maxlen, seed):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    import oracle_h5py
    order = oracle_h5py.oracle_order(shufseed, rows)
    rs = np.sort(np.random.default_rng(12345).choice(rows, samples, replace=False))
    bad = 0
    cache = {}
    with h5py.File(path, "r") as f:
        labels = f["label"][()]
        bad += int(np.count_nonzero(labels != order.astype(np.int64)))
        for r in rs:
            i = int(order[r])
            b = i // BLOCK
            if b not in cache:
                cache[b] = block_rows(seed, b, min(rows, (b + 1) * BLOCK) - b * BLOCK, maxlen)
            got = f["tokens"][r]
            want = cache[b][i - b * BLOCK]
            if got.dtype != want.dtype or not np.array_equal(got, want):
                bad += 1
    print("%s: /label equals the oracle's order for all %d rows; /tokens checked on %d sampled rows: %s"
          % (path, rows, samples, "all match" if bad == 0 else "%d MISMATCHES" % bad))
    return 0 if bad == 0 else 1


def main():
    if sys.argv[1] == "--check":
        a = sys.argv[2:]
        return check(a[0], int(a[1]), int(a[2]), int(a[3]) if len(a) > 3 else 1000000,
                     int(a[4]) if len(a) > 4 else 2048, int(a[5]) if len(a) > 5 else 1)
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    maxlen = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    with h5py.File(out, "w") as f:
        t = f.create_dataset("tokens", (rows,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(min(rows, 4096),))
        f.create_dataset("label", data=np.arange(rows, dtype=np.int64), chunks=(min(rows, 65536),), compression="gzip")
        for b in range(0, (rows + BLOCK - 1) // BLOCK):
            lo, hi = b * BLOCK, min(rows, (b + 1) * BLOCK)
            a = np.empty(hi - lo, dtype=object)
            a[:] = block_rows(seed, b, hi - lo, maxlen)
            t[lo:hi] = a
    return 0


if __name__ == "__main__":
    sys.exit(main())
