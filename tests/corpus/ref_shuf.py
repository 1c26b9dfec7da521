#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ref_shuf: a trivially correct shuffle, to show that the corpus checks pass a correct output (and, with
--mutate, that they catch a wrong one).

usage: ref_shuf.py --records /a,/b [--mutate KIND] [-q] -s SEED INPUT[:/p,/q] OUTPUT

It copies INPUT byte for byte and overwrites, in place with h5py, the data of the shuffled datasets with
their rows in the contract's order (the paths given in INPUT, else --records, which the corpus declares);
nothing else of the file changes, so it is the "every other object unchanged" output by construction.  It
adds the provenance attributes h5shuf writes (h5shuf_seed, _version, _inputs, _key) and renames the file
into place.  --mutate breaks one thing, as a faulty shuffler would:
  second-perm   the last shuffled dataset gets another seed's order (two permutations in one file)
  unshuffled    nothing is permuted
  attr-value    one attribute of a copied object gets another value
  attr-drop     one attribute of a shuffled dataset is deleted
  attr-order    one attribute of a shuffled dataset is deleted and written again (its creation order
                changes where the file tracks it, as netCDF does)
  ref-retarget  an object reference attribute points at the root group instead
  dimlist       a shuffled dataset's dim 0 is detached from its scale and attached to another
  copied-data   one byte of a copied dataset changes
  drop-link     a soft link (or, without one, a copied object's link) is removed
  filter        a shuffled dataset is written again without its filters
  refuse-dirty  exit 1 with a one-line message, leaving the output file behind
  refuse-noisy  exit 1 with two lines on stderr, no output
  crash         die of SIGSEGV after writing part of the output
"""

import argparse
import os
import shutil
import signal
import sys

import h5py
import numpy as np

try:  # PyTables registers its Blosc filter with HDF5 on import: ref_shuf then reads and writes Blosc
    import tables  # noqa: F401 - without HDF5 plugins installed
except ImportError:
    pass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

MUTATIONS = ("none", "second-perm", "unshuffled", "attr-value", "attr-drop", "attr-order", "ref-retarget",
             "dimlist", "copied-data", "drop-link", "filter", "refuse-dirty", "refuse-noisy", "crash")


def _objects(f):
    """(path, object) of every dataset and group, sorted by path, links followed once."""
    out = []
    f.visititems(lambda name, obj: out.append(("/" + name, obj)) if not isinstance(obj, h5py.Datatype) else None)
    return sorted(out, key=lambda po: po[0])


def _plain_attr(obj):
    """The name of an attribute of obj holding a number or a string, or None."""
    for n in obj.attrs:
        if n.startswith("h5shuf_") or n.startswith("_Netcdf4") or n in ("CLASS", "NAME", "REFERENCE_LIST",
                                                                         "DIMENSION_LIST", "_NCProperties"):
            continue
        dt = obj.attrs.get_id(n).dtype
        if dt.kind in "iufSU" or h5py.check_string_dtype(dt):
            return n
    return None


def _rewrite_attr(obj, name, value=None):
    """Delete attribute name and create it again (same type and shape), with value when given."""
    aid = obj.attrs.get_id(name)
    tid, shape = aid.get_type(), aid.shape
    old = obj.attrs[name]
    del obj.attrs[name]
    obj.attrs.create(name, data=old if value is None else value, shape=shape, dtype=h5py.Datatype(tid).dtype)


def mutate(f, kind, records, seed):
    """Apply mutation kind to the open output f (records: the shuffled paths, already permuted)."""
    copied = [(p, o) for p, o in _objects(f) if p not in records]
    shuffled = [f[p] for p in records]
    if kind == "second-perm":
        ds = shuffled[-1]
        n = ds.shape[0]
        # Undo the right order, then apply another seed's.
        data = np.empty_like(ds[()])
        data[oracle.order(seed, n)] = ds[()]
        ds[...] = data[oracle.order(seed ^ 1, n)]
    elif kind == "attr-value":
        for _, obj in copied + [("/", f)]:
            n = _plain_attr(obj)
            if n:
                v = obj.attrs[n]
                if isinstance(v, (bytes, str)) or (isinstance(v, np.ndarray) and v.dtype.kind in "SUO"):
                    new = np.asarray(v).astype(object) if isinstance(v, np.ndarray) else v
                    new = "changed" if isinstance(v, str) else (b"changed" if isinstance(v, bytes) else
                                                                np.full(np.shape(v), "changed", dtype=object))
                else:
                    new = np.asarray(v) + 1
                _rewrite_attr(obj, n, new)
                return
        raise SystemExit("ref_shuf: no attribute to change")
    elif kind in ("attr-drop", "attr-order"):
        for ds in shuffled:
            names = [n for n in ds.attrs]
            if len(names) >= 2 and _plain_attr(ds):
                if kind == "attr-drop":
                    del ds.attrs[names[-1]]
                else:
                    _rewrite_attr(ds, _plain_attr(ds))
                return
        raise SystemExit("ref_shuf: no shuffled dataset with two attributes")
    elif kind == "ref-retarget":
        for _, obj in [("/", f)] + copied + [(p, f[p]) for p in records]:
            for n in obj.attrs:
                aid = obj.attrs.get_id(n)
                if h5py.check_dtype(ref=aid.dtype) is h5py.Reference and aid.shape == ():
                    del obj.attrs[n]
                    obj.attrs.create(n, data=f.ref, dtype=h5py.ref_dtype)
                    return
        raise SystemExit("ref_shuf: no scalar object reference attribute")
    elif kind == "dimlist":
        for ds in shuffled:
            if len(ds.dims[0]):
                scale = ds.dims[0][0]
                other = [f[p] for p, o in copied if isinstance(o, h5py.Dataset) and h5py.h5ds.is_scale(o.id)
                         and o.name != scale.name]
                if other:
                    ds.dims[0].detach_scale(scale)
                    ds.dims[0].attach_scale(other[0])
                    return
        raise SystemExit("ref_shuf: no dimension scale to swap")
    elif kind == "copied-data":
        for _, obj in copied:
            if isinstance(obj, h5py.Dataset) and obj.shape and obj.dtype.kind in "iuf" and obj.size:
                v = obj[()]
                v.reshape(-1).view(np.uint8)[0] ^= 1
                obj[...] = v
                return
        raise SystemExit("ref_shuf: no numeric copied dataset")
    elif kind == "drop-link":
        for path in sorted(_links(f)):
            if isinstance(f.get(path, getlink=True), h5py.SoftLink):
                del f[path]
                return
        del f[copied[-1][0]]
    elif kind == "filter":
        ds = shuffled[0]
        data, attrs, path = ds[()], [(n, ds.attrs[n]) for n in ds.attrs], ds.name
        del f[path]
        nd = f.create_dataset(path, data=data, maxshape=ds.maxshape if ds.chunks else None)
        for n, v in attrs:
            nd.attrs[n] = v


def remap_regions(f, records, seed):
    """Scalar region-reference attributes into a shuffled dataset select, after the shuffle, the output
    positions of the rows they selected (the same rows, in their new places)."""
    shuffled = {h5py.h5o.get_info(f[p].id).addr: f[p] for p in records}
    for _, obj in [("/", f)] + _objects(f):
        for n in list(obj.attrs):
            aid = obj.attrs.get_id(n)
            if h5py.check_dtype(ref=aid.dtype) is not h5py.RegionReference or aid.shape != ():
                continue
            ref = obj.attrs[n]
            ds = shuffled.get(h5py.h5o.get_info(f[ref].id).addr)
            if ds is None:
                continue
            sel = h5py.h5r.get_region(ref, f.id)
            blocks = sel.get_select_hyper_blocklist()
            if len(blocks) != 1 or any(blocks[0][0][1:] != 0) or any(blocks[0][1][1:] != np.array(ds.shape[1:]) - 1):
                raise SystemExit("ref_shuf: only regions of whole consecutive rows are remapped")
            rows = np.arange(int(blocks[0][0][0]), int(blocks[0][1][0]) + 1)
            inv = np.empty(ds.shape[0], dtype=np.int64)
            inv[oracle.order(seed, ds.shape[0])] = np.arange(ds.shape[0])
            del obj.attrs[n]
            obj.attrs[n] = ds.regionref[np.sort(inv[rows]).tolist()]


def _links(f):
    out = []

    def walk(g, prefix):
        for name in g:
            path = prefix.rstrip("/") + "/" + name
            out.append(path)
            if isinstance(g.get(name, getlink=True), h5py.HardLink) and isinstance(g[name], h5py.Group):
                walk(g[name], path)
    walk(f, "/")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", default="")
    ap.add_argument("--mutate", default="none", choices=MUTATIONS)
    ap.add_argument("-q", action="store_true")
    ap.add_argument("-s", type=int, required=True)
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    infile, _, paths = a.input.partition(":")
    records = paths.split(",") if paths else [p for p in a.records.split(",") if p]
    if a.mutate == "refuse-noisy":
        sys.stderr.write("h5shuf: %s: refused\nsecond line\n" % infile)
        return 1
    tmp = a.output + ".ref_shuf.tmp"
    shutil.copyfile(infile, tmp)
    if a.mutate == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    with h5py.File(tmp, "r+") as f:
        for p in records:
            ds = f[p]
            ds[...] = ds[()] if a.mutate == "unshuffled" else ds[()][oracle.order(a.s, ds.shape[0])]
        remap_regions(f, records, a.s)
        mutate(f, a.mutate, [f[p].name for p in records], a.s)
        # netCDF's classic model has neither 64-bit unsigned integers nor variable-length strings: such a
        # root attribute makes ncdump refuse the whole file.  Fixed-length strings are its NC_CHAR.
        text = np.bytes_ if "_nc3_strict" in f.attrs else str
        f.attrs["h5shuf_seed"] = text(str(a.s)) if text is np.bytes_ else np.uint64(a.s)
        f.attrs["h5shuf_version"] = text("ref_shuf")
        f.attrs["h5shuf_inputs"] = text(a.input)
        f.attrs["h5shuf_key"] = text("philox4x64-10")
    os.rename(tmp, a.output)
    if a.mutate == "refuse-dirty":
        sys.stderr.write("h5shuf: %s: refused\n" % infile)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
