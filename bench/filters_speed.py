#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""filters_speed: write and read speed of an HDF5 filter plugin, through h5py, one plugin at a time.

usage: HDF5_PLUGIN_PATH=DIR /usr/bin/python3 bench/filters_speed.py FILTER [MIB] [--unregister-lzf]
  FILTER  lzf | bshuf-lz4 | bshuf-none | bshuf-zstd
  MIB     data size in MiB (default 256): int32 rows of 1024 values, a random walk of steps -2..2
          (compressible the way detector counts are), chunks of 256 rows (1 MiB)

HDF5_PLUGIN_PATH picks the implementation: a directory holding only h5shuf's plugin (build/plugins), or
only Debian's (libh5bshuf.so from the bitshuffle package, liblzf_filter.so from hdf5-plugin-lzf).  For
lzf, h5py's own built-in filter is used unless --unregister-lzf is given.  The file lives in /dev/shm
(memory), so the time is the filter's plus HDF5's copying, on one core.  Prints one line:
FILTER  write MB/s  read MB/s  ratio (MB = 10^6 bytes of uncompressed data per second).
"""
import os
import sys
import time

import h5py
import numpy as np


def main():
    filt = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 256
    if "--unregister-lzf" in sys.argv:
        h5py.h5z.unregister_filter(32000)
    kw = {"lzf": dict(compression="lzf"),
          "bshuf-lz4": dict(compression=32008, compression_opts=(0, 2)),
          "bshuf-none": dict(compression=32008, compression_opts=(0, 0)),
          "bshuf-zstd": dict(compression=32008, compression_opts=(0, 3, 1))}[filt]
    rows = mib * 256
    rng = np.random.default_rng(0)
    x = np.cumsum(rng.integers(-2, 3, (rows, 1024), dtype=np.int32), axis=1, dtype=np.int32)
    path = "/dev/shm/h5shuf-filters-speed-%d.h5" % os.getpid()
    try:
        with h5py.File(path, "w") as f:
            d = f.create_dataset("x", shape=x.shape, dtype=x.dtype, chunks=(256, 1024), **kw)
            t = time.perf_counter()
            d[...] = x
            f.flush()
            tw = time.perf_counter() - t
            stored = d.id.get_storage_size()
            name = d.id.get_create_plist().get_filter(0)[3].decode()
        with h5py.File(path, "r") as f:
            t = time.perf_counter()
            y = f["x"][...]
            tr = time.perf_counter() - t
        assert np.array_equal(x, y)
        print("%-11s %-40s write %7.0f MB/s  read %7.0f MB/s  ratio %.2f" %
              (filt, name[:40], x.nbytes / tw / 1e6, x.nbytes / tr / 1e6, x.nbytes / stored))
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
