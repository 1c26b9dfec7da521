#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""h5same.py A.h5 B.h5: exit 0 when two HDF5 files hold the same objects, the same attributes, the same
data, and for every chunked dataset the same stored chunks, byte for byte (offset, filter mask and
bytes, read with h5py's read_direct_chunk), whatever order the chunks were written in.  Independent of
h5shuf: h5py only.  Prints the first difference and exits 1 otherwise."""
import sys

import h5py
import numpy as np


def fail(msg):
    print("h5same: " + msg)
    sys.exit(1)


def plain(f, v):
    """v with every object reference replaced by the path of its target in f (references are addresses
    in their own file; what they point at is what must match)."""
    if isinstance(v, h5py.Reference):
        return f[v].name if v else None
    if isinstance(v, np.void):
        return tuple(plain(f, v[i]) for i in range(len(v)))
    if isinstance(v, np.ndarray) and (v.dtype.kind == "O" or v.dtype.names):
        return [plain(f, x) for x in v.ravel()]
    if isinstance(v, np.ndarray):
        return (v.shape, v.dtype.str, v.tobytes())
    return v


def attrs_same(path, a, b):
    if sorted(a.attrs.keys()) != sorted(b.attrs.keys()):
        fail(f"{path}: attributes {sorted(a.attrs.keys())} vs {sorted(b.attrs.keys())}")
    for k in a.attrs.keys():
        x, y = plain(a.file, a.attrs.get(k)), plain(b.file, b.attrs.get(k))
        if x != y:
            fail(f"{path}: attribute {k}: {x!r} vs {y!r}")


def chunks(d):
    out = {}
    for i in range(d.id.get_num_chunks()):
        info = d.id.get_chunk_info(i)
        mask, data = d.id.read_direct_chunk(info.chunk_offset)
        out[tuple(info.chunk_offset)] = (mask, bytes(data))
    return out


def main(pa, pb):
    with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
        names_a, names_b = [], []
        fa.visit(names_a.append)
        fb.visit(names_b.append)
        if names_a != names_b:
            fail(f"objects differ: {names_a} vs {names_b}")
        attrs_same("/", fa, fb)
        nchunks = 0
        for name in names_a:
            a, b = fa[name], fb[name]
            attrs_same(name, a, b)
            if not isinstance(a, h5py.Dataset):
                continue
            if a.shape != b.shape or a.dtype != b.dtype or a.chunks != b.chunks:
                fail(f"{name}: shape/type/chunks {a.shape} {a.dtype} {a.chunks} vs {b.shape} {b.dtype} {b.chunks}")
            if a.compression != b.compression or a.shuffle != b.shuffle:
                fail(f"{name}: filters differ")
            if a.dtype.kind != "O" and a.size and not np.array_equal(a[()], b[()]):
                fail(f"{name}: data differ")
            if a.chunks:
                ca, cb = chunks(a), chunks(b)
                if ca.keys() != cb.keys():
                    fail(f"{name}: chunk offsets differ")
                for off in ca:
                    if ca[off] != cb[off]:
                        fail(f"{name}: chunk at {off} differs (mask {ca[off][0]} vs {cb[off][0]}, "
                             f"{len(ca[off][1])} vs {len(cb[off][1])} bytes)")
                nchunks += len(ca)
        print(f"h5same: {pa} and {pb}: {len(names_a)} objects, {nchunks} chunks byte-identical")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
