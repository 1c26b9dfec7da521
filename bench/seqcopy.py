#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""seqcopy: the yardstick of a plain copy -- one sequential libhdf5 read+write pass (h5py), same dtype,
shape, chunks and filters as the input, in blocks of whole chunks of about 64 MiB (at least one chunk).
No shuffle: it is what any tool that reads and rewrites the file must at least spend.

    /usr/bin/python3 bench/seqcopy.py [--durable] IN.h5 OUT.h5 /x [/y ...]

With --durable, two copies: IN to OUT.copy1.h5 (beside OUT), that to OUT, then OUT fsynced and the first
copy removed -- what a two-pass rewrite that commits its output as h5shuf does (fsync of the output, not of
its scratch file) must at least spend.  Without it nothing is fsynced.
"""
import os
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


def copy_file(src_path, dst_path, paths):
    with h5py.File(src_path, "r") as src, h5py.File(dst_path, "w") as dst:
        for path in paths:
            copy(src, dst, path)


def main():
    args = sys.argv[1:]
    durable = bool(args) and args[0] == "--durable"
    if durable:
        args = args[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    src, dst, paths = args[0], args[1], args[2:]
    if not durable:
        copy_file(src, dst, paths)
        return
    first = dst + ".copy1.h5"
    try:
        copy_file(src, first, paths)
        copy_file(first, dst, paths)
    finally:
        if os.path.exists(first):
            os.unlink(first)
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


if __name__ == "__main__":
    main()
