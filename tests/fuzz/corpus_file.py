#!/usr/bin/python3
"""Write the seed corpus of fuzz_file (tests/fuzz/corpus/file): small valid HDF5 files written by h5py.

usage: /usr/bin/python3 tests/fuzz/corpus_file.py DIR

One file per layout h5shuf reads differently: fixed-size rows contiguous, chunked with gzip+shuffle,
compact, a compound, vlen strings, vlen int32 sequences beside a fixed-size dataset, attributes and a
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
