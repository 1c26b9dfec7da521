# SPDX-License-Identifier: BSD-3-Clause
"""Compare an HDF5 output with its input through h5py: the independent reader of every corpus case.

What "equal" means here, object by object (objects are matched by path; an object reached through several
hard links is named by the smallest of its paths, its canonical path):
- links: the same names, kinds and targets (a hard link to the object of the same canonical path, a soft
  link to the same string, an external link to the same file and path);
- datasets: the same file datatype (H5Tequal), shape, maximum shape, storage layout, chunk shape, filter
  pipeline (filter ids, flags and parameters) and fill value; the data equal, or, for the datasets shuffled,
  equal to the input's rows in the contract's order (one order for all of them);
- attributes of every object: the same names in the same order, each with an equal datatype, dataspace and
  value; h5shuf's provenance attributes (h5shuf_*) on the root group are the only ones allowed in addition.
Values are compared after normalising: numbers and fixed-size data by their bytes (so NaN payloads and -0.0
count), variable-length data element by element, object references by the canonical path of the object
they point at in their own file (so a reference copied raw, still holding an address of the input, fails),
region references by that path and the selection; a region into a shuffled dataset by the multiset of rows
it selects (a remapped selection is as good as the original).  DIMENSION_LIST and REFERENCE_LIST
(dimension scales) are compared as sets: the order of attaching does not carry meaning.

Each comparison returns a list of differences (strings); an empty list means equal.
"""

import h5py
import numpy as np

PROVENANCE_PREFIX = "h5shuf_"


# --------------------------------------------------------------------------------------------------------
# The link tree of a file


class Tree:
    """Every link of an open h5py.File, and every object with all of its paths."""

    def __init__(self, f):
        self.f = f
        self.links = {}  # path -> ("hard", addr) | ("soft", target) | ("external", (file, path))
        self.paths = {}  # addr -> [paths]
        self.kind = {}  # addr -> "group" | "dataset" | "datatype"
        root = h5py.h5o.get_info(f.id).addr
        self.links["/"] = ("hard", root)
        self._add(root, "/", "group")
        self._walk(f, "/", {root})

    def _add(self, addr, path, kind):
        self.paths.setdefault(addr, []).append(path)
        self.kind[addr] = kind

    def _walk(self, group, prefix, seen):
        for name in group:
            path = prefix.rstrip("/") + "/" + name
            link = group.get(name, getlink=True)
            if isinstance(link, h5py.SoftLink):
                self.links[path] = ("soft", link.path)
            elif isinstance(link, h5py.ExternalLink):
                self.links[path] = ("external", (link.filename, link.path))
            else:
                info = h5py.h5o.get_info(group.id, name=name.encode())
                kind = {h5py.h5o.TYPE_GROUP: "group", h5py.h5o.TYPE_DATASET: "dataset",
                        h5py.h5o.TYPE_NAMED_DATATYPE: "datatype"}.get(info.type, "other")
                self.links[path] = ("hard", info.addr)
                self._add(info.addr, path, kind)
                if kind == "group" and info.addr not in seen:
                    seen.add(info.addr)
                    self._walk(group[name], path, seen)

    def canon(self, addr):
        """The canonical path of the object at addr, or None when no link of the file reaches it."""
        p = self.paths.get(addr)
        return min(p) if p else None

    def canon_of(self, obj):
        return self.canon(h5py.h5o.get_info(obj.id).addr)

    def objects(self):
        """{canonical path: kind} of every object reached by a hard link."""
        return {self.canon(a): k for a, k in self.kind.items()}


# --------------------------------------------------------------------------------------------------------
# Normalised values


class Ctx:
    """What normalising a value needs: its file's tree, the canonical paths of the shuffled datasets, and
    (for an input whose references to other objects the output drops, --drop-references) the paths kept."""

    def __init__(self, tree, shuffled=(), kept=None):
        self.tree = tree
        self.shuffled = set(shuffled)
        self.kept = kept


def _deref(ref, ctx):
    """The canonical path of the object ref points at, or a description of why it points nowhere."""
    if not ref:
        return "<null reference>"
    try:
        obj = ctx.tree.f[ref]
    except Exception as exc:  # noqa: BLE001 - a dangling reference is a value, not an error
        return "<reference to nothing: %s>" % exc
    path = ctx.tree.canon_of(obj)
    if ctx.kept is not None and path not in ctx.kept:
        return "<null reference>"  # dropped on request: expected null in the output
    return path if path is not None else "<reference to an unlinked object %s>" % obj.name


def _region(ref, ctx):
    path = _deref(ref, ctx)
    if path.startswith("<"):
        return ("regref", "<null reference>" if path == "<null reference>" else path)
    try:
        ds = ctx.tree.f[ref]
        if path in ctx.shuffled:
            rows = np.asarray(ds[ref])
            flat = rows.reshape(len(rows), -1) if rows.ndim else rows.reshape(1, -1)
            return ("regref-rows", path, sorted(np.ascontiguousarray(r).tobytes() for r in flat))
        sp = h5py.h5r.get_region(ref, ctx.tree.f.id)
        st = sp.get_select_type()
        if st == h5py.h5s.SEL_POINTS:
            sel = sp.get_select_elem_pointlist().tolist()
        elif st == h5py.h5s.SEL_HYPERSLABS:
            sel = sp.get_select_hyper_blocklist().tolist()
        else:
            sel = None
        return ("regref", path, int(st), sel, sp.get_simple_extent_dims())
    except Exception as exc:  # noqa: BLE001
        return ("regref", path, "<unreadable region: %s>" % exc)


def norm(v, ctx):
    """A value that compares with == and prints readably, references replaced by what they point at."""
    if isinstance(v, h5py.h5r.RegionReference):
        return _region(v, ctx)
    if isinstance(v, h5py.h5r.Reference):
        return ("ref", _deref(v, ctx))
    if isinstance(v, h5py.Empty):
        return ("empty", np.dtype(v.dtype).str)
    if isinstance(v, np.ndarray):
        if not v.dtype.hasobject:
            return ("array", v.dtype.descr, v.shape, np.ascontiguousarray(v).tobytes())
        if v.dtype.names:
            return ("records", v.shape, [norm(x, ctx) for x in v.reshape(-1)])
        return ("objects", v.shape, [norm(x, ctx) for x in v.reshape(-1)])
    if isinstance(v, np.void):
        if v.dtype.names and v.dtype.hasobject:
            return tuple(norm(v[n], ctx) for n in v.dtype.names)
        return ("void", v.dtype.descr, v.tobytes())
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.descr, v.tobytes())
    return v


def _sorted_list(nv):
    """A normalised array as a sorted list of its elements (for values that are sets)."""
    if isinstance(nv, tuple) and nv and nv[0] in ("records", "objects"):
        return ("set", sorted(nv[2], key=repr))
    return nv


def attr_value(obj, name, ctx):
    """An attribute, normalised; DIMENSION_LIST and REFERENCE_LIST as sets."""
    v = norm(obj.attrs[name], ctx)
    if name == "REFERENCE_LIST":
        v = _sorted_list(v)
    elif name == "DIMENSION_LIST" and isinstance(v, tuple) and v[0] == "objects":
        v = ("dims", [_sorted_list(x) for x in v[2]])
    return v


def short(v, limit=160):
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + "...(%d chars)" % len(s)


# --------------------------------------------------------------------------------------------------------
# Comparisons


def _reference_list_in(v, present):
    """A normalised REFERENCE_LIST (a set of (dataset, dimension) records) reduced to the datasets present."""
    if isinstance(v, tuple) and v and v[0] == "set":
        return ("set", [x for x in v[1] if isinstance(x, tuple) and x and x[0] == ("ref", x[0][1])
                        and x[0][1] in present])
    return v


def attrs_diff(oi, oo, ci, co, extra_ok=(), missing_ok=False, present=None):
    """Differences between the attributes of input object oi and output object oo.

    extra_ok: a predicate on names allowed on the output only; missing_ok: output attributes may be a
    subset of the input's (a dataset-mode output need not carry the root's); present: in a dataset-mode
    output, the canonical paths of its objects: a scale's REFERENCE_LIST must then list exactly the input's
    entries for the datasets present (the rest are not in the file to point back at)."""
    diffs = []
    ni = list(oi.attrs)
    no = [n for n in oo.attrs if not (extra_ok and extra_ok(n))]
    for n in ni:
        if n not in no and not missing_ok:
            diffs.append("attribute %r missing" % n)
    for n in no:
        if n not in ni:
            diffs.append("attribute %r is new" % n)
    common = [n for n in ni if n in no]
    if [n for n in no if n in common] != common:
        diffs.append("attribute order %s, input %s" % (no, ni))
    for n in common:
        try:
            ti, to = oi.attrs.get_id(n), oo.attrs.get_id(n)
            if ti.get_type() != to.get_type():
                diffs.append("attribute %r: datatype %s, input %s" % (n, to.dtype, ti.dtype))
                continue
            reduced = present is not None and n == "REFERENCE_LIST"
            if ti.shape != to.shape and not reduced:
                diffs.append("attribute %r: shape %s, input %s" % (n, to.shape, ti.shape))
                continue
            vi, vo = attr_value(oi, n, ci), attr_value(oo, n, co)
            if reduced:
                vi = _reference_list_in(vi, present)
        except Exception as exc:  # noqa: BLE001 - an unreadable attribute is a difference
            diffs.append("attribute %r unreadable: %s: %s" % (n, type(exc).__name__, exc))
            continue
        if vi != vo:
            diffs.append("attribute %r: %s, input %s" % (n, short(vo), short(vi)))
    return diffs


def _filters(dcpl):
    out = []
    for k in range(dcpl.get_nfilters()):
        fid, flags, cd, _name = dcpl.get_filter(k)
        out.append((fid, flags, tuple(cd)))
    return out


def _fill(ds, dcpl):
    status = dcpl.fill_value_defined()
    if status != h5py.h5d.FILL_VALUE_USER_DEFINED or ds.dtype.hasobject:
        return status
    buf = np.zeros((1,), dtype=ds.dtype)
    dcpl.get_fill_value(buf)
    return (status, buf.tobytes())


def layout_diff(di, do):
    """Differences in datatype, shape and storage between input dataset di and output dataset do."""
    diffs = []
    if di.id.get_type() != do.id.get_type():
        diffs.append("datatype %s, input %s" % (do.dtype, di.dtype))
    if di.shape != do.shape:
        diffs.append("shape %s, input %s" % (do.shape, di.shape))
    if di.maxshape != do.maxshape:
        diffs.append("maxshape %s, input %s" % (do.maxshape, di.maxshape))
    pi, po = di.id.get_create_plist(), do.id.get_create_plist()
    if pi.get_layout() != po.get_layout():
        diffs.append("layout %d, input %d (0 compact, 1 contiguous, 2 chunked)" % (po.get_layout(), pi.get_layout()))
    if di.chunks != do.chunks:
        diffs.append("chunks %s, input %s" % (do.chunks, di.chunks))
    if _filters(pi) != _filters(po):
        diffs.append("filters %s, input %s (id, flags, parameters)" % (_filters(po), _filters(pi)))
    if _fill(di, pi) != _fill(do, po):
        diffs.append("fill value %s, input %s" % (short(_fill(do, po)), short(_fill(di, pi))))
    if pi.get_attr_creation_order() != po.get_attr_creation_order():
        diffs.append("attribute creation order flags %d, input %d" % (po.get_attr_creation_order(),
                                                                      pi.get_attr_creation_order()))
    return diffs


def read_all(ds):
    """The whole dataset (h5py.Empty for a null dataspace, a numpy scalar for a scalar one)."""
    return ds[()]


def data_diff(di, do, ci, co, perm=None):
    """Differences between the data of do and di (rows of di in the order perm when given)."""
    try:
        vi = read_all(di)
        vo = read_all(do)
    except Exception as exc:  # noqa: BLE001
        return ["data unreadable: %s: %s" % (type(exc).__name__, exc)]
    if perm is not None:
        if isinstance(vi, h5py.Empty) or np.ndim(vi) == 0:
            return ["a shuffled dataset without rows"]
        if len(vi) != len(perm):
            return ["%d rows, the permutation has %d" % (len(vi), len(perm))]
        vi = vi[perm]
    if isinstance(vi, np.ndarray) and isinstance(vo, np.ndarray) and not vi.dtype.hasobject:
        if vi.dtype != vo.dtype or vi.shape != vo.shape:
            return ["data %s %s, expected %s %s" % (vo.dtype, vo.shape, vi.dtype, vi.shape)]
        if vi.size == 0:  # (no element to compare: netCDF's unlimited dimension without a variable, (0,))
            return []
        bi = np.ascontiguousarray(vi).view(np.uint8).reshape(len(vi) if vi.ndim else 1, -1)
        bo = np.ascontiguousarray(vo).view(np.uint8).reshape(len(vo) if vo.ndim else 1, -1)
        bad = np.nonzero((bi != bo).any(axis=1))[0]
        if len(bad):
            what = "rows" if vi.ndim else "bytes"
            hint = ""
            if perm is not None and vi.ndim:
                # Name the order the output does have, when it is a simple one: it makes failures legible.
                raw = np.ascontiguousarray(read_all(di)).view(np.uint8).reshape(len(vi), -1)
                if bo.tobytes() == raw.tobytes():
                    hint = " (the output is the input unshuffled)"
            return ["%d of %d %s differ, first %d%s" % (len(bad), len(bi), what, bad[0], hint)]
        return []
    ni, no = norm(vi, ci), norm(vo, co)
    if ni != no:
        if isinstance(ni, tuple) and isinstance(no, tuple) and len(ni) == 3 and len(no) == 3 \
                and isinstance(ni[2], list) and isinstance(no[2], list) and len(ni[2]) == len(no[2]):
            bad = [k for k in range(len(ni[2])) if ni[2][k] != no[2][k]]
            return ["%d of %d elements differ, first %d: %s, expected %s" % (
                len(bad), len(ni[2]), bad[0], short(no[2][bad[0]]), short(ni[2][bad[0]]))]
        return ["data %s, expected %s" % (short(no), short(ni))]
    return []


def group_diff(gi, go):
    diffs = []
    pi, po = gi.id.get_create_plist(), go.id.get_create_plist()
    if pi.get_link_creation_order() != po.get_link_creation_order():
        diffs.append("link creation order flags %d, input %d" % (po.get_link_creation_order(),
                                                                 pi.get_link_creation_order()))
    if pi.get_attr_creation_order() != po.get_attr_creation_order():
        diffs.append("attribute creation order flags %d, input %d" % (po.get_attr_creation_order(),
                                                                      pi.get_attr_creation_order()))
    return diffs


def compare(fi, fo, shuffled, perm, whole, kept=None, dropped=False):
    """Compare output file fo with input file fi (both open h5py.File).

    shuffled: the paths of the datasets that must be the input rows in the order perm; whole: a whole-file
    output (every input object must be there), else a dataset-mode output (the shuffled datasets and
    whatever the output holds besides them, each equal to the input object of the same path); kept and
    dropped: the run was told to drop references to objects outside kept (canonical paths), which must
    then be null in the output.
    Returns {"records": [...], "data": [...], "attrs": [...], "structure": [...], "layout": [...]}: the
    differences found, per category, each a string starting with the object's path."""
    ti, to = Tree(fi), Tree(fo)
    res = {"records": [], "data": [], "attrs": [], "structure": [], "layout": []}
    ci = Ctx(ti, shuffled, kept if dropped else None)
    co = Ctx(to, shuffled)
    present = None if whole else set(to.objects())

    # Links: in a whole-file output every link of the input, and no other; in a dataset-mode output each
    # link it has is one of the input.  Hard links compare by the canonical path of their target.
    def link_desc(tree, path):
        kind, val = tree.links[path]
        return (kind, tree.canon(val)) if kind == "hard" else (kind, val)

    for path in sorted(ti.links):
        if path not in to.links:
            if whole or path in shuffled:
                res["structure"].append("%s: link missing" % path)
            continue
        a, b = link_desc(ti, path), link_desc(to, path)
        if a != b:
            res["structure"].append("%s: link %s, input %s" % (path, b, a))
    for path in sorted(to.links):
        if path not in ti.links:
            res["structure"].append("%s: link %s not in the input" % (path, link_desc(to, path)))

    # Objects: every object of the output against the input object of the same canonical path.
    for path, kind in sorted(to.objects().items()):
        if path not in ti.links or ti.links[path][0] != "hard":
            continue  # reported above
        oi, oo = fi[path], fo[path]
        if ti.kind[ti.links[path][1]] != kind:
            res["structure"].append("%s: a %s, input a %s" % (path, kind, ti.kind[ti.links[path][1]]))
            continue
        extra = (lambda n: n.startswith(PROVENANCE_PREFIX)) if path == "/" else None
        missing_ok = not whole and path not in shuffled
        res["attrs"] += ["%s: %s" % (path, d) for d in attrs_diff(oi, oo, ci, co, extra, missing_ok, present)]
        if kind == "group" and whole:  # a dataset-mode output makes its own groups
            res["layout"] += ["%s: %s" % (path, d) for d in group_diff(oi, oo)]
        elif kind == "dataset":
            res["layout"] += ["%s: %s" % (path, d) for d in layout_diff(oi, oo)]
            if path in shuffled:
                res["records"] += ["%s: %s" % (path, d) for d in data_diff(oi, oo, ci, co, perm)]
            else:
                res["data"] += ["%s: %s" % (path, d) for d in data_diff(oi, oo, ci, co)]
        elif kind == "datatype":
            if oi.id != oo.id and oi.dtype != oo.dtype:
                res["layout"].append("%s: named datatype %s, input %s" % (path, oo.dtype, oi.dtype))
    for path in shuffled:
        if path not in to.links:
            res["records"].append("%s: not in the output" % path)
    if whole:
        for path in sorted(set(ti.objects()) - set(to.objects())):
            res["structure"].append("%s: object missing" % path)
    return res
