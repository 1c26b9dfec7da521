#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of fuzz_file (tests/fuzz/corpus/file): small valid HDF5 files written by h5py.

usage: /usr/bin/python3 tests/fuzz/corpus_file.py DIR

One file per layout h5shuf reads differently: fixed-size rows contiguous, chunked with gzip+shuffle,
compact, a compound, vlen strings, vlen int32 sequences beside a fixed-size dataset, attributes and a
group (copied in whole-file mode), zstd (32015, hdf5plugin's cd_values [level]) in chunks that split
rows (written through h5shuf's plugin: run with HDF5_PLUGIN_PATH=build/plugins; without it that seed is
skipped, said on stderr).  Every one must pass the target (replay_file) before it is committed.
group (copied in whole-file mode); and attributes of shapes h5shuf once read past its buffers: a CLASS of
100 strings on a plain dataset (and an integer CLASS), a DIMENSION_LIST of more values than its
dataset's rank beside a dimension scale, and h5shuf's provenance attributes as arrays on the root
(copied into the output, which the target verifies).  Every one must pass the target (replay_file) before it is committed.
"""
import os
import sys

import h5py
import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)


def f(name):
    return h5py.File(os.path.join(d, name), "w", libver="latest")


with f("contig") as h:
    h["x"] = np.arange(32, dtype=np.int32).reshape(8, 4)
    h["y"] = np.arange(8, dtype=np.uint8)
with f("chunked-gzip") as h:
    h.create_dataset("x", data=np.arange(48, dtype=np.float32).reshape(12, 4), chunks=(4, 4), compression="gzip",
                     shuffle=True)
with f("compact") as h:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    sp = h5py.h5s.create_simple((6, 2))
    ds = h5py.h5d.create(h.id, b"x", h5py.h5t.STD_I16BE, sp, dcpl=dcpl)
    ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(12, dtype=">i2").reshape(6, 2))
with f("compound") as h:
    dt = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")])
    h["x"] = np.array([(i, i / 2, b"ab%d" % (i % 10)) for i in range(5)], dtype=dt)
with f("vlen-str") as h:
    h.create_dataset("s", data=["", "a", "zürich", "xyz", "q" * 20], dtype=h5py.string_dtype())
with f("vlen-seq") as h:
    v = h.create_dataset("v", (4,), dtype=h5py.vlen_dtype(np.int32), chunks=(2,))
    for i in range(4):
        v[i] = np.arange(i, dtype=np.int32)
    h["y"] = np.arange(4, dtype=np.int64)
with f("attrs-group") as h:
    h["x"] = np.arange(6, dtype=np.int8)
    h["x"].attrs["units"] = "m"
    g = h.create_group("meta")
    g.attrs["n"] = 3
    g["scalar"] = np.float64(2.5)  # (not rows: copied)
with f("scale") as h:  # a dimension scale: DIMENSION_LIST (global heap) read by H5DS before anything
    h["x"] = np.arange(16, dtype=np.int32).reshape(8, 2)
    h["t"] = np.arange(8, dtype=np.float64)
    h["t"].make_scale("t")
    h["x"].dims[0].attach_scale(h["t"])
rec = np.dtype([("a", "<i4"), ("s", h5py.string_dtype())])
with f("compound-vlen-attr") as h:  # an attribute of compounds with a vlen string member (copied: H5Aread)
    h["x"] = np.arange(8, dtype=np.int32)
    h["x"].attrs.create("meta", np.array([(1, "alpha"), (2, "beta gamma")], dtype=rec))
with f("compound-vlen-copied") as h:  # a dataset of such compounds, not rows (copied: H5Ocopy)
    h["x"] = np.arange(8, dtype=np.int32)
    h["y"] = np.arange(8, dtype=np.int64)
    h.create_dataset("meta", data=np.array([(1, "alpha"), (2, "beta"), (3, "")], dtype=rec))
with f("array-vlen-rows") as h:  # rows of arrays of vlen strings (the descriptors read as one opaque run)
    tid = h5py.h5t.array_create(h5py.h5t.py_create(h5py.string_dtype(), logical=True), (3,))
    h5py.h5d.create(h.id, b"a", tid, h5py.h5s.create_simple((6,)))
    a = np.empty(6, dtype=h["a"].dtype)
    for i in range(6):
        a[i] = ["s%d" % i, "" if i % 3 else "three", "ü" * (i % 4)]
    h["a"][...] = a
try:
    with f("zstd-split") as h:  # issue 48: chunks that split rows, whose filter HDF5 or h5shuf's codec runs
        h.create_dataset("x", data=(np.arange(96, dtype="<i4").reshape(8, 12) * 37) % 101, chunks=(2, 5),
                         compression=32015, compression_opts=(3,), allow_unknown_filter=True)
except (OSError, ValueError) as e:
    os.unlink(os.path.join(d, "zstd-split"))
    print("corpus_file.py: zstd-split skipped (no zstd plugin: HDF5_PLUGIN_PATH=build/plugins): %s" % e,
          file=sys.stderr)
with f("array-class") as h:
    h["x"] = np.arange(8, dtype=np.int32)
    h["x"].attrs["CLASS"] = np.array([b"DIMENSION_SCALE"] * 100, dtype="S16")
    h["y"] = np.arange(8, dtype=np.uint8)
    h["y"].attrs["CLASS"] = np.arange(3)
with f("dimlist-long") as h:
    t = h.create_dataset("t", data=np.arange(6, dtype=np.float32))
    h["x"] = np.arange(6, dtype=np.int16)
    t.make_scale("t")
    h["x"].dims[0].attach_scale(t)
    v = np.empty(5, dtype=object)
    for i in range(5):
        v[i] = np.array([t.ref], dtype=h5py.ref_dtype)
    del h["x"].attrs["DIMENSION_LIST"]
    h["x"].attrs.create("DIMENSION_LIST", v, dtype=h5py.vlen_dtype(h5py.ref_dtype))
with f("array-provenance") as h:
    h["x"] = np.arange(8, dtype=np.int64)
    h.attrs["h5shuf_seed"] = np.arange(50, dtype=np.uint64)
    h.attrs.create("h5shuf_index", ["/x"] * 50, dtype=h5py.string_dtype())
    h.attrs["h5shuf_source_index"] = np.array([b"/x"] * 50)
    h.attrs["h5shuf_stratify"] = np.arange(50)
