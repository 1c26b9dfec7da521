# SPDX-License-Identifier: BSD-3-Clause
"""Corpus files written by h5py, the way ML and analysis code writes them.

- h5py-train: the plain training file, X (N, 32, 32, 3) uint8 gzip, y (N,) int64, list_classes (3,) S8;
- h5py-rich: dimension scales (make_scale, attach_scale, labels), attributes of many types on the root,
  groups and datasets (integers of both byte orders, floats incl. NaN payloads, float16, complex, bool,
  enum, compound, fixed and variable-length strings, UTF-8, variable-length sequences, an empty (null)
  attribute, object references to shuffled and copied objects, region references to a copied dataset, a
  100 KiB root attribute and a 1 MiB attribute on a shuffled dataset), hard links (an alias of a shuffled
  dataset and of a copied one), soft links (to a dataset, to a group, dangling), an external link, nested
  groups, a committed datatype, a dataset of object references, a scalar dataset; written with
  libver="latest" (large attributes need it; SWMR writers use it too);
- h5py-refs: h5py-rich without the two large attributes, in the default (earliest) file format: the
  references, scales, links and attribute types on their own;
- h5py-autochunk: create_dataset(compression="gzip") without chunks=: h5py's guessed chunks, which split
  the row dimensions (e.g. (N, 7, 5) -> chunks (250, 2, 3)), and a resizable dataset (maxshape None);
- h5py-lzf: compression="lzf" (filter 32000, which h5py brings and plain HDF5 has not; h5shuf runs without
  HDF5 plugins unless the runner is told otherwise, so it must bring LZF itself);
- h5py-regref-records: a region reference into a shuffled dataset: remapping it (same rows selected) and
  refusing cleanly are both correct;
- h5py-ref-records: a dataset of object references shuffled as rows beside /runs/x (to the root, the group
  /runs, the shuffled /runs/x itself, null): each must point at the output's object of the same path.

Every case: whole-file mode shuffles exactly "records"; dataset mode names "records".
"""

import os

import h5py
import numpy as np

N = 600


def _train(d):
    path = os.path.join(d, "h5py-train.h5")
    rng = np.random.default_rng(1)
    with h5py.File(path, "w") as f:
        f.create_dataset("X", data=rng.integers(0, 256, (N, 32, 32, 3), dtype=np.uint8), chunks=(64, 32, 32, 3),
                         compression="gzip", compression_opts=4)
        f.create_dataset("y", data=rng.integers(0, 3, N, dtype=np.int64))
        f.create_dataset("list_classes", data=np.array([b"cat", b"dog", b"bird"], dtype="S8"))
        f.attrs["description"] = "toy training set"
    return {"name": "h5py-train", "file": path, "records": ["/X", "/y"]}


def _rich(d, big):
    name = "h5py-rich" if big else "h5py-refs"
    path = os.path.join(d, name + ".h5")
    rng = np.random.default_rng(2)
    n = 250
    # Attributes over 64 KiB need the 1.8 object header format (dense attribute storage).
    with h5py.File(path, "w", libver="latest" if big else "earliest") as f:
        # Dimension scales: /t is the record coordinate, /feature the columns of X.
        t = f.create_dataset("t", data=np.arange(n, dtype=np.float64) * 0.5)
        t.make_scale("time")
        t.attrs["units"] = "s"
        feat = f.create_dataset("feature", data=np.arange(16, dtype=np.int32))
        feat.make_scale("feature")
        X = f.create_dataset("X", data=rng.standard_normal((n, 16)).astype(np.float32), chunks=(50, 16),
                             compression="gzip", shuffle=True, fletcher32=True)
        X.dims[0].attach_scale(t)
        X.dims[0].label = "time"
        X.dims[1].attach_scale(feat)
        X.dims[1].label = "feature"
        y = f.create_dataset("y", data=rng.integers(-5, 5, n).astype(">i2"))
        y.dims[0].attach_scale(t)
        meta = f.create_dataset("meta", data=np.arange(12, dtype=np.int64).reshape(4, 3))
        meta.attrs["note"] = "copied, not shuffled"
        g = f.create_group("grp")
        sub = g.create_group("sub")
        z = g.create_dataset("z", data=rng.integers(0, 1000, (n, 2), dtype=np.uint32), maxshape=(None, 2),
                             chunks=(32, 2))
        z.dims[0].attach_scale(t)
        sub.create_dataset("lut", data=np.linspace(0, 1, 7))
        sub.attrs["depth"] = np.int32(2)

        # A committed datatype, used by a copied dataset.
        f["rgb_t"] = np.dtype([("r", "u1"), ("g", "u1"), ("b", "u1")])
        pal = f.create_dataset("palette", shape=(3,), dtype=f["rgb_t"])
        pal[...] = np.array([(255, 0, 0), (0, 255, 0), (0, 0, 255)], dtype=f["rgb_t"].dtype)
        f.create_dataset("scalar", data=np.float64(3.25))
        refs = f.create_dataset("refs", shape=(3,), dtype=h5py.ref_dtype)
        refs[...] = [X.ref, g.ref, meta.ref]

        # Links: a hard alias of a shuffled dataset and of a copied one; soft and external links.
        f["X_alias"] = X
        g["meta_alias"] = meta
        f["soft_X"] = h5py.SoftLink("/X")
        f["soft_grp"] = h5py.SoftLink("/grp/sub")
        f["dangling"] = h5py.SoftLink("/no/such/object")
        f["ext"] = h5py.ExternalLink("elsewhere.h5", "/data")

        # Attributes of many types.
        a = f.attrs
        a["title"] = "rich h5py file"
        a["bytes"] = np.bytes_("fixed ascii")
        a["utf8"] = "température ✓"
        a["strs"] = np.array(["a", "bb", "ccc"], dtype=h5py.string_dtype())
        a["fixed_strs"] = np.array([b"ab", b"cd"], dtype="S2")
        a["i8"] = np.int8(-7)
        a["u64"] = np.uint64(2 ** 64 - 1)
        a["be_i32"] = np.array([1, -2, 3], dtype=">i4")
        a["f16"] = np.array([0.5, -1.0], dtype=np.float16)
        a["f32_special"] = np.array([0x7fc00001, 0x80000000, 0x7f800000], dtype=np.uint32).view(np.float32)
        a["f64"] = np.float64(np.pi)
        a["c128"] = np.complex128(1 - 2j)
        a["flag"] = np.bool_(True)
        a.create("color", data=np.int8(1), dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="i1"))
        a["compound"] = np.array([(1, 2.5, b"x")], dtype=[("a", "<i2"), ("b", ">f8"), ("c", "S3")])
        a["matrix"] = np.arange(6, dtype=np.int16).reshape(2, 3)
        a["empty"] = h5py.Empty("f4")
        vl = np.empty(2, dtype=object)
        vl[0] = np.arange(3, dtype=np.int32)
        vl[1] = np.arange(1, dtype=np.int32)
        a.create("vlen_seq", data=vl, dtype=h5py.vlen_dtype(np.int32))
        a["obj_refs"] = np.array([g.ref, y.ref, pal.ref], dtype=h5py.ref_dtype)
        a["ref_meta"] = meta.ref
        a["roi"] = meta.regionref[1:3, 0:2]
        a["rois"] = np.array([meta.regionref[0, :], meta.regionref[:, 2]], dtype=h5py.regionref_dtype)
        if big:
            a["big_100k"] = rng.integers(0, 256, 100 * 1024, dtype=np.uint8)
            X.attrs["big_1m"] = rng.standard_normal(1024 * 1024 // 8)
        X.attrs["self"] = X.ref
        X.attrs["source"] = meta.ref
        X.attrs["units"] = np.bytes_("arbitrary")
        y.attrs["coord"] = t.ref
        g.attrs["group_note"] = "kept?"
        g.attrs["first"] = z.ref
        meta.attrs["shuffled_neighbour"] = y.ref
    return {"name": name, "file": path, "records": ["/X", "/y", "/t", "/grp/z"]}


def _autochunk(d):
    path = os.path.join(d, "h5py-autochunk.h5")
    rng = np.random.default_rng(3)
    n = 1000
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=rng.standard_normal((n, 7, 5)), compression="gzip")
        f.create_dataset("b", data=rng.integers(0, 2 ** 31, n, dtype=np.int64), compression="gzip")
        f.create_dataset("c", data=rng.integers(0, 255, (n, 40), dtype=np.uint8), compression="gzip",
                         shuffle=True, maxshape=(None, 40))
        f.create_dataset("other", data=np.arange(10), compression="gzip")
    return {"name": "h5py-autochunk", "file": path, "records": ["/a", "/b", "/c"]}


def _lzf(d):
    path = os.path.join(d, "h5py-lzf.h5")
    rng = np.random.default_rng(4)
    n = 800
    with h5py.File(path, "w") as f:
        f.create_dataset("X", data=rng.integers(0, 50, (n, 64), dtype=np.int16), compression="lzf", shuffle=True)
        f.create_dataset("y", data=rng.integers(0, 2, n, dtype=np.uint8), compression="lzf")
    return {"name": "h5py-lzf", "file": path, "records": ["/X", "/y"]}


def _regref_records(d):
    path = os.path.join(d, "h5py-regref-records.h5")
    n = 100
    with h5py.File(path, "w") as f:
        x = f.create_dataset("x", data=np.arange(n * 2, dtype=np.int32).reshape(n, 2))
        f.create_dataset("y", data=np.arange(n, dtype=np.float64))
        f.attrs["first_ten"] = x.regionref[0:10, :]
    return {"name": "h5py-regref-records", "file": path, "records": ["/x", "/y"], "refusal_ok": True}


def _ref_records(d):
    path = os.path.join(d, "h5py-ref-records.h5")
    n = 300
    with h5py.File(path, "w") as f:
        g = f.create_group("runs")
        x = g.create_dataset("x", data=np.arange(n, dtype=np.int64), chunks=(64,), compression="gzip")
        # the root and /runs (on the output's paths in either mode), the shuffled /runs/x, null
        targets = [f.ref, g.ref, x.ref, h5py.Reference()]
        r = g.create_dataset("source", shape=(n,), dtype=h5py.ref_dtype, chunks=(64,))
        r[...] = [targets[i % len(targets)] for i in range(n)]
    return {"name": "h5py-ref-records", "file": path, "records": ["/runs/source", "/runs/x"]}


def generate(d):
    """Write the h5py corpus into directory d; return its cases."""
    return [dict(c, writer="h5py", kind="hdf5") for c in
            (_train(d), _rich(d, True), _rich(d, False), _autochunk(d), _lzf(d), _regref_records(d), _ref_records(d))]
