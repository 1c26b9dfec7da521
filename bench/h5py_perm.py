#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""h5py_perm: the in-memory alternative the benchmark times against h5shuf.

usage: /usr/bin/python3 bench/h5py_perm.py IN.h5 OUT.h5 FILTER SEED

Reads dataset /x of IN.h5 whole into a numpy array, permutes its rows with
numpy.random.default_rng(SEED).permutation (a uniform permutation), and writes them to /x of OUT.h5 with
the input's chunk shape and FILTER (none, gzip4 or zstd3; zstd is HDF5 filter 32015, found through
HDF5_PLUGIN_PATH).  Peak memory is about twice the dataset.  bench/bench.py check-h5py checks the output.
"""

import sys

import h5py
import numpy as np

FILTERS = {
    "none": {},
    "gzip4": {"compression": "gzip", "compression_opts": 4},
    "zstd3": {"compression": 32015, "compression_opts": (3,)},
}


def main():
    if len(sys.argv) != 5 or sys.argv[3] not in FILTERS:
        print("usage: h5py_perm.py IN.h5 OUT.h5 none|gzip4|zstd3 SEED", file=sys.stderr)
        return 2
    src, dst, filt, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with h5py.File(src, "r") as f:
        ds = f["x"]
        chunks = ds.chunks
        data = ds[()]
    perm = np.random.default_rng(seed).permutation(data.shape[0])
    out = data[perm]
    del data
    with h5py.File(dst, "w") as g:
        g.create_dataset("x", data=out, chunks=chunks, **FILTERS[filt])
    return 0


if __name__ == "__main__":
    sys.exit(main())
