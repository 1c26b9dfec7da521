#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""seqcopy: the yardstick of a plain copy -- one sequential libhdf5 read+write pass (h5py), same dtype,
shape, chunks and filters as the input, in blocks of whole chunks of about 64 MiB (at least one chunk).
No shuffle: it is what any tool that reads and rewrites the file must at least spend.

    /usr/bin/python3 bench/seqcopy.py IN.h5 OUT.h5 /x [/y ...]
"""
import sys

import h5py


def copy(src, dst, path):
    d = src[path]
    kw = dict(shape=d.shape, dtype=d.dtype, chunks=d.chunks, maxshape=d.maxshape,
              compression=d.compression, compression_opts=d.compression_opts,
              shuffle=d.shuffle, fletcher32=d.fletcher32)
    o = dst.create_dataset(path, **kw)
    row = d.dtype.itemsize
    for n in d.shape[1:]:
        row *= n
    unit = d.chunks[0] if d.chunks else 1
    block = max(unit, (64 << 20) // max(row, 1) // unit * unit)
    for start in range(0, d.shape[0], block):
        end = min(d.shape[0], start + block)
        o[start:end] = d[start:end]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    with h5py.File(sys.argv[1], "r") as src, h5py.File(sys.argv[2], "w") as dst:
        for path in sys.argv[3:]:
            copy(src, dst, path)


if __name__ == "__main__":
    main()
