#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""corpus: h5shuf on files written by real-world writers, each output checked by an independent reader.

usage: /usr/bin/python3 tests/corpus/run.py [--only WRITER,...] [--case NAME,...] [--keep DIR] H5SHUF GENDATA
       /usr/bin/python3 tests/corpus/run.py --self-test [--only ...] [--case ...] H5SHUF GENDATA

WRITER is h5py, netcdf, pytables or tools (gen_<writer>.py writes its files at test time, nothing large is
committed).  Every file is shuffled twice: whole-file mode (h5shuf -s SEED in.h5 out.h5) and dataset mode
(h5shuf -s SEED in.h5:/a,/b out.h5, naming the file's record datasets).  Each file declares its record
datasets: the ones whose rows are the examples (for netCDF, the variables on the record dimension and the
time coordinate, decided by the dimension scales, not by lengths).  Then, for each output:
 (a) the record datasets are the input's rows in the contract's order for the seed, one permutation for
     all of them (oracle.py: numpy's Philox, checked against Random123);
 (b) every other dataset's data is equal;
 (c) every attribute of every object is there with an equal datatype, shape and value, in the same order;
     object references point at the corresponding object of the output (compared by path), region
     references at the same selection; links (hard, soft, external), objects, datatypes, shapes, chunks,
     filters and fill values are equal;
 (d) netCDF: `ncdump -h` of the output equals the input's but for its first line and h5shuf's provenance
     attributes (h5shuf_*, and history, which may record the run if it keeps the input's), `ncdump -hs`
     likewise (storage: chunks, deflate, shuffle, endianness, fill mode), and netCDF4-python reads every
     variable (records and the time coordinate in the one order, the others equal), dimension and
     attribute (a dataset-mode output, checked so when it holds every object, but for the root group's
     attributes: no named dataset's); a netCDF dimension without a variable keeps its shape and stays
     unwritten (its storage bytes); PyTables: tables.open_file reads the output, every leaf, its filters as PyTables reads them
     (by name: an LZO stored under another name reads as no compression) and every attribute (CLASS,
     VERSION, TITLE, NROWS... and the user's) is equal, the records in the order;
 (e) a run h5shuf refuses exits nonzero (not by a signal) with one line on stderr, "h5shuf: ...", naming
     the input file, and leaves nothing in the output's directory.  A refusal is itself a failure ("not
     ok - ... refused"), except for the cases that declare it allowed (refusal_ok).
h5shuf runs with HDF5_PLUGIN_PATH set to an empty directory (--plugins system: inherited), as for a user
whose h5py or PyTables brings its own filters (LZF, Blosc) and whose HDF5 has no plugins: h5shuf must
then bring the filters it supports itself.  The readers run in the inherited environment.
A dataset-mode output may hold only the named datasets, or more: whatever it holds is checked like the
input object of the same path (attributes it has must be the input's), every reference in it must resolve
in the output, and the netCDF reader checks run when it holds every object of the input.

Output: one line per check, "ok - CASE MODE: check" or "not ok - CASE MODE: check: what differs", then
"N ok, M not ok".  Exit 0 when nothing failed, 1 when something did, 77 (after running the rest) when an
optional writer (python3-netcdf4, python3-tables, hdf5-tools) is missing and nothing failed.

--self-test replaces h5shuf by ref_shuf.py, a trivially correct shuffle (copy the file, permute the records
in place with h5py): every check must pass.  Then it runs ref_shuf's mutations (a second permutation, an
unshuffled record, a changed, dropped or reordered attribute, a retargeted reference, a swapped dimension
scale, a changed byte, a lost link, lost filters, dirty and noisy refusals, a crash) and requires each to
be caught by the check it breaks.
"""

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
import zlib

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import oracle  # noqa: E402

WRITERS = ("h5py", "netcdf", "pytables", "tools")
TIMEOUT = 300
PLUGINS = None  # HDF5_PLUGIN_PATH of the shuffler's runs (None: inherited)


class Report:
    """Counts and prints check lines; the self-test can capture them instead."""

    def __init__(self):
        self.ok = self.bad = 0
        self.lines = []
        self.quiet = False

    def check(self, name, ok, diffs=()):
        if isinstance(diffs, str):
            diffs = [diffs] if diffs else []
        if ok:
            self.ok += 1
            line = "ok - %s" % name
        else:
            self.bad += 1
            shown = "; ".join(diffs[:6]) + ("; (+%d more)" % (len(diffs) - 6) if len(diffs) > 6 else "")
            shown = " | ".join(l.strip() for l in shown.splitlines())  # one line per check
            line = "not ok - %s%s" % (name, (": " + shown) if shown else "")
        self.lines.append(line)
        if not self.quiet:
            print(line, flush=True)
        return ok

    def note(self, text):
        self.lines.append("# " + text)
        if not self.quiet:
            print("# " + text, flush=True)


R = Report()


# --------------------------------------------------------------------------------------------------------
# The corpus


def load_writers(only):
    """{writer: (module, reason it is missing or None)} for the writers asked for."""
    mods = {}
    for w in only:
        try:
            mod = __import__("gen_" + w)
        except ImportError as exc:
            mods[w] = (None, "gen_%s: %s" % (w, exc))
            continue
        mods[w] = (mod, getattr(mod, "MISSING", None))
    return mods


def generate(mods, d, gendata):
    cases = []
    for w, (mod, missing) in mods.items():
        if missing:
            continue
        wd = os.path.join(d, w)
        os.makedirs(wd, exist_ok=True)
        cases += mod.generate(wd, gendata) if w == "tools" else mod.generate(wd)
    return cases


# --------------------------------------------------------------------------------------------------------
# One run of the shuffler


def shuffle(cmd, case, mode, seed, outdir, scratch, plugins, extra=()):
    """Run the shuffler on case in mode (with the options extra); returns (rc, stderr, output path)."""
    out = os.path.join(outdir, "shuffled-" + os.path.basename(case["file"]))
    src = case["file"] if mode == "whole" else "%s:%s" % (case["file"], ",".join(case["named"]))
    env = dict(os.environ, TMPDIR=scratch)
    if plugins is not None:
        env["HDF5_PLUGIN_PATH"] = plugins
    argv = [str(a) for a in cmd(case) + ["-q", "-s", str(seed)] + list(extra) + [src, out]]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=TIMEOUT)
        return p.returncode, p.stderr.decode("utf-8", "replace"), out
    except subprocess.TimeoutExpired:
        return "timeout", "", out


def contract_objects(f, named):
    """The canonical paths of the objects a dataset-mode output holds by the contract (README, docs/guide.md):
    the named datasets and the dimension scales attached to them (DIMENSION_LIST, read here with h5py)."""
    tree = compare.Tree(f)
    objs = set(named)
    for p in named:
        if "DIMENSION_LIST" in f[p].attrs:
            for refs in f[p].attrs["DIMENSION_LIST"]:
                objs.update(tree.canon_of(f[r]) for r in refs if r)
    return objs


def _targets(v):
    """The paths the references of a normalised value point at (compare.norm's ("ref", path) and
    ("regref", path, ...) items, at any depth)."""
    if isinstance(v, tuple) and len(v) >= 2 and v[0] in ("ref", "regref", "regref-rows") and isinstance(v[1], str):
        return [v[1]]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _targets(x)]
    return []


def outside_refs(f, objs):
    """(object, attribute, target paths) for every reference held by an attribute of the objects objs whose
    target is not one of them (dimension-scale bookkeeping excepted: h5shuf reduces REFERENCE_LIST, and a
    dataset's scales are in objs).  An object reached by several links may be named by any of them."""
    tree = compare.Tree(f)
    ctx = compare.Ctx(tree)
    found = []
    for p in sorted(objs):
        for name in f[p].attrs:
            if name in ("DIMENSION_LIST", "REFERENCE_LIST"):
                continue
            for t in _targets(compare.norm(f[p].attrs[name], ctx)):
                if t not in objs and not t.startswith("<"):
                    found.append((p, name, sorted(tree.paths[tree.links[t][1]])))
    return found


def check_refusal(tag, case, rc, err, outdir, allowed=None):
    """(e): a refusal exits nonzero with one line naming the input and leaves nothing behind.  allowed: why
    this run may refuse (a regular expression its message must match), or None."""
    lines = err.splitlines()
    left = sorted(os.listdir(outdir))
    problems = []
    if rc == "timeout":
        problems.append("no exit within %d s" % TIMEOUT)
    elif rc < 0:
        problems.append("killed by signal %d (%s)" % (-rc, signal.Signals(-rc).name))
    if len(lines) != 1:
        problems.append("%d lines on stderr: %r" % (len(lines), err[:300]))
    elif not lines[0].startswith("h5shuf: ") or not re.search(re.escape(case["file"]) + r"($|[^\w.-])", lines[0]):
        # The input as given on the command line (an absolute path); the output's name does not count.
        problems.append("the message does not start with 'h5shuf: ' and name the input %s: %r" % (
            case["file"], lines[0][:300]))
    if left:
        problems.append("left in the output directory: %s" % left)
    R.check("%s: (e) refusal is clean (nonzero exit, one line naming the file, nothing left)" % tag,
            not problems, problems)
    msg = lines[0] if len(lines) == 1 else err.strip().replace("\n", " | ")[:300]
    if allowed:
        R.check("%s: refused, as it must (exit %s: %s)" % (tag, rc, msg), bool(re.search(allowed, msg)),
                "the message does not match %r" % allowed)
    elif case.get("refusal_ok"):
        R.check("%s: refused, which is allowed for this file (exit %s: %s)" % (tag, rc, msg), not problems)
    else:
        R.check("%s: h5shuf ran" % tag, False, "exit %s: %s" % (rc, msg))


# --------------------------------------------------------------------------------------------------------
# netCDF checks


def ncdump(args, path):
    p = subprocess.run(["ncdump"] + args + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("ncdump %s failed (exit %d): %s" % (" ".join(args), p.returncode,
                                                               p.stderr.decode("utf-8", "replace").strip()[:300]))
    return p.stdout.decode("utf-8", "replace")


GLOBAL_SKIP = re.compile(r"^\t\t(\w+ )?:(h5shuf_\w*|history|_SuperblockVersion) = ")


GLOBAL_ANY = re.compile(r"^\t\t(\w+ )?:\w+ = ")


def ncdump_body(text, globals_too=True):
    """ncdump output without its first line (the file name), the root group's h5shuf_* and history
    attributes (history is checked on its own) and _SuperblockVersion (how HDF5 writes the file), and
    without the heading of global attributes when none is left.  globals_too False: without any of the
    root group's attributes (a dataset-mode output: they are no named dataset's)."""
    out, skipping, root = [], False, False
    for line in text.splitlines()[1:]:
        root = root or line == "// global attributes:"
        root = root and not line.startswith(("data:", "group:", "}"))
        if not skipping and (GLOBAL_SKIP.match(line) or (root and not globals_too and GLOBAL_ANY.match(line))):
            skipping = True
        if skipping:
            skipping = not line.rstrip().endswith(" ;")
            continue
        out.append(line)
    for i in range(len(out) - 1, 0, -1):  # a heading left without attributes, and the blank line before it
        if out[i] == "// global attributes:" and (i + 1 == len(out) or not GLOBAL_ANY.match(out[i + 1])):
            del out[i - (out[i - 1] == ""):i + 1]
    return out


def check_ncdump(tag, inp, out, flags, what, globals_too=True):
    try:
        a, b = ncdump_body(ncdump(flags, inp), globals_too), ncdump_body(ncdump(flags, out), globals_too)
    except Exception as exc:  # noqa: BLE001
        R.check("%s: (d) ncdump %s %s" % (tag, " ".join(flags), what), False, str(exc))
        return
    diff = [l for l in difflib.unified_diff(a, b, "input", "output", n=0, lineterm="")
            if not l.startswith(("---", "+++", "@@"))]
    R.check("%s: (d) ncdump %s %s" % (tag, " ".join(flags), what), not diff, [l.strip() for l in diff])


def nc_walk(grp, prefix="/"):
    yield prefix, grp
    for name, g in grp.groups.items():
        yield from nc_walk(g, prefix + name + "/")


def nc_attrs(obj, root):
    out = {}
    for n in obj.ncattrs():
        if root and (n.startswith("h5shuf_") or n == "history"):
            continue
        out[n] = compare.norm(np.asarray(obj.getncattr(n)), None) if not isinstance(obj.getncattr(n), str) \
            else obj.getncattr(n)
    return out


def nc_values(var):
    var.set_auto_maskandscale(False)
    v = var[:]
    return np.asarray(v)


def check_netcdf4(tag, case, inp, out, perm, whole=True):
    """netCDF4-python reads the output: dimensions, variables, attributes; records in the order perm."""
    import netCDF4
    diffs = []
    try:
        di, do = netCDF4.Dataset(inp), netCDF4.Dataset(out)
    except Exception as exc:  # noqa: BLE001
        R.check("%s: (d) netCDF4-python reads the output" % tag, False, "%s: %s" % (type(exc).__name__, exc))
        return
    try:
        gi, go = dict(nc_walk(di)), dict(nc_walk(do))
        if sorted(gi) != sorted(go):
            diffs.append("groups %s, input %s" % (sorted(go), sorted(gi)))
        for gp in sorted(set(gi) & set(go)):
            a, b = gi[gp], go[gp]
            dims_a = [(n, len(d), d.isunlimited()) for n, d in a.dimensions.items()]
            dims_b = [(n, len(d), d.isunlimited()) for n, d in b.dimensions.items()]
            if dims_a != dims_b:
                diffs.append("%s dimensions %s, input %s" % (gp, dims_b, dims_a))
            if (whole or gp != "/") and nc_attrs(a, gp == "/") != nc_attrs(b, gp == "/"):
                diffs.append("%s group attributes %s, input %s" % (gp, compare.short(nc_attrs(b, gp == "/")),
                                                                   compare.short(nc_attrs(a, gp == "/"))))
            if list(a.variables) != list(b.variables):
                diffs.append("%s variables %s, input %s" % (gp, list(b.variables), list(a.variables)))
            for name in a.variables:
                if name not in b.variables:
                    continue
                va, vb = a.variables[name], b.variables[name]
                path = gp + name
                if va.dimensions != vb.dimensions or va.dtype != vb.dtype:
                    diffs.append("%s %s%s, input %s%s" % (path, vb.dtype, vb.dimensions, va.dtype, va.dimensions))
                    continue
                if nc_attrs(va, False) != nc_attrs(vb, False):
                    diffs.append("%s attributes %s, input %s" % (path, compare.short(nc_attrs(vb, False)),
                                                                 compare.short(nc_attrs(va, False))))
                xa, xb = nc_values(va), nc_values(vb)
                if path in case["nc_records"]:
                    xa = xa[perm]
                if xa.shape != xb.shape or compare.norm(xa, None) != compare.norm(xb, None):
                    first = ""
                    if xa.shape == xb.shape and xa.ndim:
                        bad = [k for k in range(len(xa)) if compare.norm(xa[k:k + 1], None) !=
                               compare.norm(xb[k:k + 1], None)]
                        first = ", %d of %d records differ, first %d" % (len(bad), len(xa), bad[0]) if bad else ""
                    diffs.append("%s values differ%s%s" % (path, first, " (as a record variable)"
                                                          if path in case["nc_records"] else ""))
        hi = getattr(di, "history", None)
        ho = getattr(do, "history", None)
        if whole and hi is not None and (ho is None or hi not in ho):
            diffs.append("history %r does not keep the input's %r" % (ho, hi))
    finally:
        di.close()
        do.close()
    R.check("%s: (d) netCDF4-python reads the output; %s follow one permutation, the rest equal" % (
        tag, ", ".join(v.strip("/") for v in case["nc_records"])), not diffs, diffs)


NC_DIM_ONLY = b"This is a netCDF dimension but not a netCDF variable"


def check_dim_only(tag, inp, out):
    """A netCDF dimension without a variable (its scale's NAME says so) holds no rows: the output, where it
    has it, has it as the input does, of the same length and written no more than there (storage bytes)."""
    diffs, seen = [], []
    with h5py.File(inp, "r") as fi, h5py.File(out, "r") as fo:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and "NAME" in obj.attrs:
                v = obj.attrs["NAME"]
                if isinstance(v, (bytes, np.bytes_)) and bytes(v).startswith(NC_DIM_ONLY):
                    seen.append(name)
                    if name not in fo:
                        return
                    o = fo[name]
                    if o.shape != obj.shape or o.id.get_storage_size() != obj.id.get_storage_size():
                        diffs.append("/%s: shape %s, %d bytes stored; input %s, %d" % (
                            name, o.shape, o.id.get_storage_size(), obj.shape, obj.id.get_storage_size()))
        fi.visititems(visit)
    if seen:
        R.check("%s: (d) netCDF dimensions without a variable (%s) kept as they are" % (tag, ", ".join(seen)),
                not diffs, diffs)


# --------------------------------------------------------------------------------------------------------
# PyTables check


def pt_value(v):
    if isinstance(v, np.ndarray) or isinstance(v, np.generic):
        return compare.norm(np.asarray(v), None)
    if isinstance(v, list):
        return [pt_value(x) for x in v]
    return v


def check_pytables(tag, case, inp, out, perm, whole):
    import tables
    import warnings
    warnings.simplefilter("ignore", tables.FlavorWarning)  # a FLAVOR attribute that differs is reported below
    diffs = []
    try:
        hi, ho = tables.open_file(inp, "r"), tables.open_file(out, "r")
    except Exception as exc:  # noqa: BLE001
        R.check("%s: (d) tables.open_file reads the output" % tag, False, "%s: %s" % (type(exc).__name__, exc))
        return
    try:
        for node in ho.walk_nodes("/"):
            path = node._v_pathname
            if path not in hi:
                diffs.append("%s not in the input" % path)
        for node in hi.walk_nodes("/"):
            path = node._v_pathname
            if path not in ho:
                if whole or path in case["records"]:
                    diffs.append("%s missing" % path)
                continue
            other = ho.get_node(path)
            if type(node) is not type(other):
                diffs.append("%s is a %s, input a %s" % (path, type(other).__name__, type(node).__name__))
                continue
            ai, ao = node._v_attrs, other._v_attrs
            names_i = [n for n in ai._f_list("all")]
            names_o = [n for n in ao._f_list("all") if not (path == "/" and n.startswith("h5shuf_"))]
            if sorted(names_i) != sorted(names_o) and (whole or path != "/"):
                diffs.append("%s attributes %s, input %s" % (path, names_o, names_i))
            for n in set(names_i) & set(names_o):
                if pt_value(getattr(ai, n)) != pt_value(getattr(ao, n)):
                    diffs.append("%s attribute %s: %s, input %s" % (path, n, compare.short(getattr(ao, n)),
                                                                   compare.short(getattr(ai, n))))
            if isinstance(node, tables.Leaf):
                if repr(node.filters) != repr(other.filters):  # PyTables finds its filters by their names
                    diffs.append("%s filters as PyTables reads them: %s, input %s"
                                 % (path, other.filters, node.filters))
                a, b = node.read(), other.read()
                if path in case["records"]:
                    a = [a[k] for k in perm] if isinstance(a, list) else a[perm]
                if pt_value(a) != pt_value(b):
                    diffs.append("%s data differ%s" % (path, " (as records)" if path in case["records"] else ""))
    finally:
        hi.close()
        ho.close()
    R.check("%s: (d) tables.open_file reads the output; every leaf (records in the order) and attribute equal"
            % tag, not diffs, diffs)


# --------------------------------------------------------------------------------------------------------
# One case in one mode


CATEGORIES = [
    ("records", "(a) %s == input rows in the order of seed %d (one permutation)"),
    ("data", "(b) every other dataset's data equal"),
    ("attrs", "(c) every attribute of every object equal (references by target)"),
    ("structure", "(c) links and objects equal (hard, soft, external)"),
    ("layout", "(c) datatypes, shapes, layouts, chunks, filters, fill values equal"),
]


def run_case(cmd, case, mode, seed, work):
    tag = "%s %s" % (case["name"], "whole-file" if mode == "whole" else "dataset-mode")
    outdir = os.path.join(work, "out", "%s-%s" % (case["name"], mode))
    scratch = os.path.join(work, "scratch")
    os.makedirs(outdir)
    os.makedirs(scratch, exist_ok=True)
    extra, kept = [], None
    if mode == "dataset":
        with h5py.File(case["file"], "r") as fi:
            kept = contract_objects(fi, case["named"])
            outside = outside_refs(fi, kept)
    else:
        outside = []
    rc, err, out = shuffle(cmd, case, mode, seed, outdir, scratch, PLUGINS)
    if rc != 0 and outside:
        # An attribute refers to an object the output will not hold: refused, naming one such attribute and
        # its target; then --drop-references must run, warn, and write null references there instead.
        allowed = "|".join("attribute %s: refers to (%s)," % (re.escape(a), "|".join(map(re.escape, t)))
                           for _, a, t in outside)
        check_refusal(tag, case, rc, err, outdir, allowed)
        tag += " --drop-references"
        extra = ["--drop-references"]
        shutil.rmtree(outdir)
        os.makedirs(outdir)
        rc, err, out = shuffle(cmd, case, mode, seed, outdir, scratch, PLUGINS, extra)
        if rc == 0:
            R.check("%s: warns (one line per attribute)" % tag,
                    all(re.search(r"^h5shuf: warning: .*%s" % re.escape(a), err, re.M) for _, a, _ in outside),
                    "stderr: %r" % err[:300])
    if rc != 0:
        check_refusal(tag, case, rc, err, outdir)
        return
    R.check("%s: h5shuf ran (exit 0)" % tag, True)
    failed_before = R.bad
    left = [x for x in os.listdir(outdir) if x != os.path.basename(out)]
    R.check("%s: (e) nothing but the output left in its directory" % tag, os.path.exists(out) and not left,
            "output %s, also %s" % ("present" if os.path.exists(out) else "MISSING", left))
    if not os.path.exists(out):
        return
    records = case["records"] if mode == "whole" else case["named"]
    with h5py.File(case["file"], "r") as fi:
        n = fi[records[0]].shape[0]
    perm = oracle.order(seed, n)
    whole = mode == "whole"
    complete = whole
    try:
        with h5py.File(case["file"], "r") as fi, h5py.File(out, "r") as fo:
            res = compare.compare(fi, fo, records, perm, whole, kept, dropped=bool(extra))
            complete = whole or set(compare.Tree(fi).links) <= set(compare.Tree(fo).links)
    except Exception as exc:  # noqa: BLE001 - an unreadable output is a failure, not a crash of the test
        tb = traceback.format_exc().strip().splitlines()
        R.check("%s: (a-c) h5py reads and compares the output" % tag, False,
                "%s: %s [%s]" % (type(exc).__name__, exc, tb[-3].strip() if len(tb) >= 3 else ""))
        res = None
    if res is not None:
        for key, what in CATEGORIES:
            name = what % (", ".join(records), seed) if key == "records" else what
            R.check("%s: %s" % (tag, name), not res[key], res[key])
    if case["kind"] == "netcdf":
        if complete:
            check_ncdump(tag, case["file"], out, ["-h"], "equal but for line 1 and h5shuf_*/history%s"
                         % ("" if whole else " (and global attributes: dataset mode)"), whole)
            check_ncdump(tag, case["file"], out, ["-hs"], "(storage attributes) equal", whole)
            check_netcdf4(tag, case, case["file"], out, perm, whole)
        else:
            R.note("%s: the output holds part of the file: the netCDF reader checks do not apply" % tag)
        check_dim_only(tag, case["file"], out)
    if case["kind"] == "pytables":
        check_pytables(tag, case, case["file"], out, perm, whole)
    silent = R.bad - failed_before
    R.check("%s: (e) exit 0 only when nothing changed" % tag, not silent,
            "exit 0, yet %d of the checks above failed" % silent)


def seeds_for(name):
    """Seeds of a case, from its name (the same whatever subset runs): a small one for whole-file mode,
    one near 2^64 for dataset mode."""
    h = zlib.crc32(name.encode())
    return 20240601 + h % 100000, oracle.M64 - h


def prepare(cases):
    """Canonical record paths (an alias names its object by the smallest path) and the named datasets."""
    for c in cases:
        with h5py.File(c["file"], "r") as f:
            t = compare.Tree(f)
            c["records"] = [t.canon_of(f[p]) for p in c["records"]]
        c.setdefault("named", list(c["records"]))
        c.setdefault("nc_records", [])


def run_all(cmd, cases, work):
    for case in cases:
        for mode, seed in zip(("whole", "dataset"), seeds_for(case["name"])):
            try:
                run_case(cmd, case, mode, seed, work)
            except Exception as exc:  # noqa: BLE001 - report and go on with the next case
                tb = traceback.format_exc().strip().splitlines()
                R.check("%s %s: checks ran" % (case["name"], mode), False,
                        "%s: %s [%s]" % (type(exc).__name__, exc, tb[-3].strip() if len(tb) >= 3 else ""))


# --------------------------------------------------------------------------------------------------------
# Self-test: the checks pass a correct shuffle and catch broken ones


MUTANTS = [
    # mutation, case, mode, a substring of the not-ok line that must catch it
    ("second-perm", "h5py-rich", "whole", "(a)"),
    ("unshuffled", "h5py-train", "dataset", "(a)"),
    ("unshuffled", "netcdf-met", "whole", "(d) netCDF4-python"),
    ("unshuffled", "pytables-zlib", "whole", "(d) tables.open_file"),
    ("attr-value", "h5py-rich", "whole", "(c) every attribute"),
    ("attr-value", "pytables-zlib", "whole", "(d) tables.open_file"),
    ("attr-drop", "h5py-rich", "dataset", "(c) every attribute"),
    ("attr-drop", "netcdf-met", "dataset", "(c) every attribute"),
    ("attr-order", "netcdf-met", "whole", "(d) ncdump -h equal"),
    ("ref-retarget", "h5py-rich", "whole", "(c) every attribute"),
    ("dimlist", "netcdf-met", "whole", "(c) every attribute"),
    ("copied-data", "netcdf-classic", "whole", "(b)"),
    ("copied-data", "h5py-rich", "dataset", "(b)"),
    ("drop-link", "h5py-rich", "whole", "links and objects"),
    ("filter", "tools-repack", "whole", "filters"),
    ("filter", "netcdf-classic", "whole", "(d) ncdump -hs"),
    ("refuse-dirty", "h5py-train", "whole", "(e) refusal is clean"),
    ("refuse-noisy", "h5py-train", "whole", "(e) refusal is clean"),
    ("crash", "h5py-lzf", "dataset", "signal 11"),
]


def ref_cmd(mutation):
    def cmd(case):
        return [sys.executable, os.path.join(HERE, "ref_shuf.py"), "--records", ",".join(case["records"]),
                "--mutate", mutation]
    return cmd


def self_test(cases, work):
    print("# self-test 1: ref_shuf.py, a correct shuffle, passes every check", flush=True)
    run_all(ref_cmd("none"), cases, work)
    print("# self-test 2: each mutation of ref_shuf.py is caught", flush=True)
    by_name = {c["name"]: c for c in cases}
    for j, (mutation, name, mode, expect) in enumerate(MUTANTS):
        if name not in by_name:
            continue
        case = by_name[name]
        seed = seeds_for(name)[0 if mode == "whole" else 1]
        mwork = os.path.join(work, "mutant%02d" % j)
        saved_ok, saved_bad, saved_lines = R.ok, R.bad, R.lines
        R.lines, R.quiet = [], True
        try:
            run_case(ref_cmd(mutation), case, mode, seed, mwork)
        except Exception as exc:  # noqa: BLE001
            R.lines.append("not ok - checks raised %s: %s" % (type(exc).__name__, exc))
        caught = [l for l in R.lines if l.startswith("not ok") and expect in l]
        R.ok, R.bad, R.lines, R.quiet = saved_ok, saved_bad, saved_lines, False
        R.check("self-test: --mutate %s on %s %s is caught by '%s'" % (mutation, name, mode, expect), bool(caught),
                "nothing caught it")
        if caught:
            print("#   %s" % caught[0][:300], flush=True)


# --------------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(WRITERS), help="writers to run, comma-separated: %s" % ", ".join(WRITERS))
    ap.add_argument("--case", default="", help="case names to run, comma-separated (default: all)")
    ap.add_argument("--keep", help="write the corpus and outputs under this directory and keep them")
    ap.add_argument("--self-test", action="store_true", help="check the checks with ref_shuf.py instead of h5shuf")
    ap.add_argument("--plugins", choices=("none", "system"), default="none",
                    help="HDF5 plugins h5shuf may load: none (default: HDF5_PLUGIN_PATH is an empty directory, so "
                         "h5shuf must bring every filter it needs) or system (the inherited environment)")
    ap.add_argument("h5shuf")
    ap.add_argument("gendata")
    a = ap.parse_args()
    only = [w for w in a.only.split(",") if w]
    unknown = [w for w in only if w not in WRITERS]
    if unknown:
        print("run.py: unknown writer %s (writers: %s)" % (", ".join(unknown), ", ".join(WRITERS)), file=sys.stderr)
        return 2
    bad = oracle.selftest()
    R.check("oracle: numpy's Philox agrees with Random123's known answers", not bad, bad)

    mods = load_writers(only)
    missing = {w: why for w, (_, why) in mods.items() if why}
    for w, why in missing.items():
        print("# SKIP writer %s: %s" % (w, why), flush=True)
    if a.keep:
        work = os.path.abspath(a.keep)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    else:
        work = tempfile.mkdtemp(prefix="h5shuf-corpus.")
    global PLUGINS
    if a.plugins == "none" and not a.self_test:  # ref_shuf.py writes with h5py, in the inherited environment
        PLUGINS = os.path.join(work, "no-plugins")
        os.makedirs(PLUGINS)
    try:
        cases = generate(mods, os.path.join(work, "corpus"), os.path.abspath(a.gendata))
        if a.case:
            wanted = set(a.case.split(","))
            cases = [c for c in cases if c["name"] in wanted]
        prepare(cases)
        for c in cases:
            print("# %s (%s): %s, records %s" % (c["name"], c["writer"], c["file"], ",".join(c["records"])), flush=True)
        if a.self_test:
            self_test(cases, work)
        else:
            h5shuf = os.path.abspath(a.h5shuf)
            run_all(lambda case: [h5shuf], cases, work)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("%d ok, %d not ok%s" % (R.ok, R.bad, (", writers skipped: " + ", ".join(missing)) if missing else ""),
          flush=True)
    if R.bad:
        return 1
    return 77 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
