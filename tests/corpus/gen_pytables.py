# SPDX-License-Identifier: BSD-3-Clause
"""Corpus files written by PyTables (its own attributes on every node: CLASS, VERSION, TITLE, NROWS,
FIELD_k_NAME/FILL, EXTDIM, PYTABLES_FORMAT_VERSION; user attributes, some pickled).

- pytables-zlib: a Table /readings (compound rows: int64, S16, float64, float32[3]) zlib 5, an EArray
  /images (N, 8, 8) uint8 zlib (extendible, EXTDIM 0), a CArray /labels (N,) int32 zlib, a VLArray
  /tokens (N,) of int32 sequences, an Array /classes (not a record), a group /meta with attributes.
- pytables-blosc: an EArray /X (N, 16) float32 blosc:lz4 with shuffle and a Table /t blosc:zstd (filter
  32001, which PyTables brings and plain HDF5 has not).  Blosc is not among h5shuf's filters (docs/filters.md:
  zstd, lzf, lzo, bitshuffle) and h5shuf runs without HDF5 plugins, so refusing it cleanly is allowed.
- pytables-lzo: LZO (filter 305, which PyTables brings and plain HDF5 has not; h5shuf builds it in): a
  Table /events (int64, S12, float64, uint8[4]) lzo 5 with shuffle, an EArray /X (N, 16) float32 lzo 1
  without shuffle, a CArray /noise (N, 32) uint8 of random bytes (its chunks do not compress: stored with
  lzo skipped) and a CArray /y (N,) int16 lzo + fletcher32.  Only when PyTables was built with LZO.  An
  h5shuf built without LZO (H5SHUF_TEST_NO_LZO=1) may refuse it cleanly.

The PyTables-level check opens the output with tables.open_file, reads every leaf and compares it
(the records in the contract's order) and every attribute, the system ones included.
"""

import os

import numpy as np

try:
    import tables
except ImportError:  # the runner reports the skip
    tables = None

MISSING = None if tables else "python3-tables is not installed (PyTables)"


def _zlib(d):
    path = os.path.join(d, "pytables-zlib.h5")
    rng = np.random.default_rng(21)
    n = 500
    zlib = tables.Filters(complevel=5, complib="zlib")
    with tables.open_file(path, "w", title="PyTables corpus file") as h:
        desc = np.dtype([("id", "<i8"), ("name", "S16"), ("value", "<f8"), ("pos", "<f4", (3,))])
        t = h.create_table("/", "readings", description=desc, title="Readings", filters=zlib, expectedrows=n)
        rows = np.zeros(n, dtype=desc)
        rows["id"] = np.arange(n) * 3
        rows["name"] = [("r%d" % i).encode() for i in range(n)]
        rows["value"] = rng.standard_normal(n)
        rows["pos"] = rng.standard_normal((n, 3))
        t.append(rows)
        t.attrs.units = "K"
        t.attrs.calibration = np.array([1.0, 0.5])
        t.attrs.settings = {"gain": 2, "mode": "fast"}  # pickled by PyTables
        e = h.create_earray("/", "images", atom=tables.UInt8Atom(), shape=(0, 8, 8), title="Images", filters=zlib,
                            expectedrows=n)
        e.append(rng.integers(0, 256, (n, 8, 8), dtype=np.uint8))
        c = h.create_carray("/", "labels", atom=tables.Int32Atom(), shape=(n,), title="Labels", filters=zlib)
        c[:] = rng.integers(0, 10, n).astype(np.int32)
        v = h.create_vlarray("/", "tokens", atom=tables.Int32Atom(), title="Token ids")
        for i in range(n):
            v.append(rng.integers(0, 30000, i % 9, dtype=np.int32))
        h.create_array("/", "classes", obj=np.array([b"a", b"b", b"c"]), title="Class names")
        g = h.create_group("/", "meta", title="Metadata")
        g._v_attrs.author = "gen_pytables.py"
        g._v_attrs.created = np.int64(1717200000)
        h.root._v_attrs.dataset_version = "1.2"
    return {"name": "pytables-zlib", "file": path, "records": ["/readings", "/images", "/labels", "/tokens"]}


def _blosc(d):
    path = os.path.join(d, "pytables-blosc.h5")
    rng = np.random.default_rng(22)
    n = 400
    with tables.open_file(path, "w", title="blosc") as h:
        e = h.create_earray("/", "X", atom=tables.Float32Atom(), shape=(0, 16), title="features",
                            filters=tables.Filters(complevel=5, complib="blosc:lz4", shuffle=True), expectedrows=n)
        e.append(rng.standard_normal((n, 16)).astype(np.float32))
        desc = np.dtype([("label", "<i4"), ("weight", "<f4")])
        t = h.create_table("/", "t", description=desc, title="labels",
                           filters=tables.Filters(complevel=3, complib="blosc:zstd"), expectedrows=n)
        rows = np.zeros(n, dtype=desc)
        rows["label"] = rng.integers(0, 5, n)
        rows["weight"] = rng.random(n)
        t.append(rows)
    return {"name": "pytables-blosc", "file": path, "records": ["/X", "/t"], "refusal_ok": True}


def _lzo(d):
    path = os.path.join(d, "pytables-lzo.h5")
    rng = np.random.default_rng(23)
    n = 700
    lzo = tables.Filters(complevel=5, complib="lzo")  # PyTables' default: shuffle on
    with tables.open_file(path, "w", title="lzo") as h:
        desc = np.dtype([("id", "<i8"), ("tag", "S12"), ("value", "<f8"), ("hist", "u1", (4,))])
        t = h.create_table("/", "events", description=desc, title="Events", filters=lzo, expectedrows=n,
                           chunkshape=(128,))
        rows = np.zeros(n, dtype=desc)
        rows["id"] = np.arange(n) * 5
        rows["tag"] = [("ev-%d" % (i % 40)).encode() for i in range(n)]
        rows["value"] = np.cumsum(rng.standard_normal(n))
        rows["hist"] = rng.integers(0, 4, (n, 4))
        t.append(rows)
        t.attrs.detector = "lzo-test"
        e = h.create_earray("/", "X", atom=tables.Float32Atom(), shape=(0, 16), title="features",
                            filters=tables.Filters(complevel=1, complib="lzo", shuffle=False), chunkshape=(100, 16))
        e.append(np.repeat(np.arange(n, dtype=np.float32)[:, None] // 3, 16, axis=1))
        c = h.create_carray("/", "noise", atom=tables.UInt8Atom(), shape=(n, 32), title="noise",
                            filters=tables.Filters(complevel=9, complib="lzo"), chunkshape=(64, 32))
        c[:] = rng.integers(0, 256, (n, 32), dtype=np.uint8)
        y = h.create_carray("/", "y", atom=tables.Int16Atom(), shape=(n,), title="labels",
                            filters=tables.Filters(complevel=5, complib="lzo", fletcher32=True), chunkshape=(256,))
        y[:] = (np.arange(n) % 10).astype(np.int16)
    case = {"name": "pytables-lzo", "file": path, "records": ["/events", "/X", "/noise", "/y"]}
    if os.environ.get("H5SHUF_TEST_NO_LZO") == "1":
        case["refusal_ok"] = True  # a build without LZO (-DH5SHUF_LZO=OFF) refuses it, as HDF5 has no LZO
    return case


def generate(d):
    """Write the PyTables corpus into directory d; return its cases (pytables-lzo when PyTables has LZO)."""
    cases = [_zlib(d), _blosc(d)]
    if tables.which_lib_version("lzo"):
        cases.append(_lzo(d))
    else:
        print("# pytables-lzo not generated: this PyTables was built without LZO", flush=True)
    return [dict(c, writer="pytables", kind="pytables") for c in cases]
