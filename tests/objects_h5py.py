#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""objects_h5py: what a file holds besides its rows arrives whole, or the run is refused; h5py reads back.

usage: /usr/bin/python3 tests/objects_h5py.py PATH/TO/h5shuf

Each case writes its input with h5py (hdf5plugin's ZFP options and Debian's ZFP plugin for the lossy
one), runs h5shuf, and checks the output with h5py against values computed here: the rows in the
contract's order (tests/corpus/oracle.py: numpy's Philox, checked against Random123), attributes by
value, dimension scales through h5py's own H5DS calls (`.dims`, `is_scale`), references by the path of
the object they point at.
  large-attributes  a 100 KiB root attribute and 1 MiB attributes on a shuffled and on a copied dataset
                    (dense attribute storage), whole-file and dataset mode
  scales            whole-file mode decides the rows by the scale on dim 0, not by length: /x, /z and
                    their scale /t shuffle; /w, of the same length on another scale /s, is copied; the
                    scales stay attached both ways (REFERENCE_LIST and DIMENSION_LIST consistent)
  references        object references in attributes and in a dataset rewritten to the output's objects;
                    a region reference into a shuffled dataset refused, then written null with
                    --drop-references (with a warning)
  group-references  references to /, a group and a dataset kept in whole-file mode; in dataset mode to / and
                    the groups on the way to an output dataset (a scale in a group of its own copied with
                    its group), one to a group on no output path refused
  lossy             a ZFP (32013) input: refused by default, naming the file, the dataset, the filter and
                    -c; -c gzip keeps the decoded values exactly; --allow-lossy warns and records
                    h5shuf_lossy; --check with it fails and leaves nothing at the final path
  provenance        h5shuf_inputs names each input's own datasets (names longer than the first input's)
Every refusal must exit 1 with one line naming the input and leave nothing in the output's directory.
The last line is "N passed, M failed".
"""

import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
import oracle  # noqa: E402

PASSED = FAILED = 0


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("PASS %s" % name, flush=True)
    else:
        FAILED += 1
        print("FAIL %s%s" % (name, (": " + str(detail)[:400]) if detail else ""), flush=True)
    return ok


def run(h5shuf, args):
    r = subprocess.run([h5shuf] + args, capture_output=True, text=True)
    return r.returncode, r.stderr


def refused(name, rc, err, infile, outdir, pattern):
    """A clean refusal: exit 1, one line naming infile and matching pattern, nothing in outdir."""
    lines = err.strip().splitlines()
    left = os.listdir(outdir)
    ok = rc == 1 and len(lines) == 1 and infile in lines[0] and re.search(pattern, lines[0]) and not left
    return check(name, ok, "exit %s, stderr %r, left %s" % (rc, err, left))


def attrs_equal(a, b):
    """Names in order and values equal (arrays by bytes)."""
    if list(a.attrs) != list(b.attrs):
        return "names %s, input %s" % (list(b.attrs), list(a.attrs))
    for n in a.attrs:
        va, vb = np.asarray(a.attrs[n]), np.asarray(b.attrs[n])
        if va.dtype != vb.dtype or va.shape != vb.shape or va.tobytes() != vb.tobytes():
            return "attribute %s differs" % n
    return ""


def large_attributes(h5shuf, d):
    src = os.path.join(d, "big.h5")
    rng = np.random.default_rng(5)
    n = 1000
    x = rng.random((n, 4)).astype(np.float32)
    with h5py.File(src, "w", libver="v108") as f:  # dense attribute storage needs the 1.8 format
        f.attrs["root_100k"] = rng.integers(0, 255, 100 * 1024, dtype=np.uint8)
        f.attrs["small"] = "after the large one"
        dx = f.create_dataset("x", data=x, chunks=(100, 4))
        dx.attrs["mib"] = rng.random(1024 * 1024 // 8)  # 1 MiB of float64
        dx.attrs["units"] = "m"
        dm = f.create_dataset("meta", data=np.float64(2.5))  # scalar: no rows, copied
        dm.attrs["mib_copied"] = rng.integers(0, 1 << 30, 1024 * 1024 // 4, dtype=np.int32)
    perm = oracle.order(17, n)
    for mode, arg in (("whole-file", src), ("dataset mode", src + ":/x")):
        out = os.path.join(d, "big-out-%s.h5" % mode[0])
        rc, err = run(h5shuf, ["-q", "-s", "17", arg, out])
        if not check("large attributes, %s: exit 0" % mode, rc == 0, err):
            continue
        with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
            check("large attributes, %s: /x is the input's rows in the contract's order" % mode,
                  np.array_equal(fo["x"][()], x[perm]))
            check("large attributes, %s: /x's attributes (1 MiB, then a small one) equal" % mode,
                  not attrs_equal(fi["x"], fo["x"]), attrs_equal(fi["x"], fo["x"]))
            if mode == "whole-file":
                ri = {k: fi.attrs[k] for k in fi.attrs}
                ro = {k: fo.attrs[k] for k in fo.attrs if not k.startswith("h5shuf_")}
                check("large attributes, whole-file: the 100 KiB root attribute and the one after it equal",
                      list(ri) == list(ro) and all(np.array_equal(ri[k], ro[k]) for k in ri), list(ro))
                check("large attributes, whole-file: the copied dataset's 1 MiB attribute equal",
                      not attrs_equal(fi["meta"], fo["meta"]) and np.array_equal(fi["meta"][()], fo["meta"][()]),
                      attrs_equal(fi["meta"], fo["meta"]))


def scales(h5shuf, d):
    src = os.path.join(d, "scales.h5")
    n = 60
    rng = np.random.default_rng(9)
    with h5py.File(src, "w") as f:
        t = f.create_dataset("t", data=np.arange(n, dtype=np.float64) * 0.5)
        t.make_scale("time")
        s = f.create_dataset("s", data=np.arange(n, dtype=np.int32) + 100)  # same length, another dimension
        s.make_scale("station")
        c = f.create_dataset("c", data=np.array([1.0, 2.0, 3.0]))
        c.make_scale("channel")
        t2 = f.create_dataset("t2", data=np.arange(n, dtype=np.int64) * 7)  # a second scale of dim 0
        t2.make_scale("time index")
        c2 = f.create_dataset("c2", data=np.array([b"r", b"g", b"b"]))  # a second scale of dim 1
        c2.make_scale("colour")
        x = f.create_dataset("x", data=rng.random((n, 3)))
        x.dims[0].attach_scale(t)
        x.dims[0].attach_scale(t2)
        x.dims[1].attach_scale(c)
        x.dims[1].attach_scale(c2)
        z = f.create_dataset("z", data=rng.integers(0, 9, n))
        z.dims[0].attach_scale(t)
        w = f.create_dataset("w", data=rng.random(n))
        w.dims[0].attach_scale(s)
    out = os.path.join(d, "scales-out.h5")
    rc, err = run(h5shuf, ["-q", "-s", "3", src, out])
    if not check("scales: whole-file mode runs on a file whose dim-0 lengths tie (exit 0)", rc == 0, err):
        return
    perm = oracle.order(3, n)
    with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
        for p in ("t", "t2", "x", "z"):
            check("scales: /%s (on the time scale) is permuted" % p, np.array_equal(fo[p][()], fi[p][()][perm]))
        for p in ("s", "w", "c", "c2"):
            check("scales: /%s (not on the time scale) is copied" % p, np.array_equal(fo[p][()], fi[p][()]))
        check("scales: /t, /s, /c are still dimension scales with their names",
              all(h5py.h5ds.is_scale(fo[p].id) for p in "tsc")
              and [fo[p].dims[0].label if False else h5py.h5ds.get_scale_name(fo[p].id) for p in "tsc"]
              == [b"time", b"station", b"channel"])
        check("scales: /x's dims are attached to /t, /t2 and /c, /c2, /z's to /t, /w's to /s",
              [[s.name for s in fo["x"].dims[0].values()], [s.name for s in fo["x"].dims[1].values()], fo["z"].dims[0][0].name,
               fo["w"].dims[0][0].name] == [["/t", "/t2"], ["/c", "/c2"], "/t", "/s"])
        attached = []
        for p in ("x", "z", "w"):
            for k in range(fo[p].ndim):
                for sc in ("t", "t2", "s", "c", "c2"):
                    if h5py.h5ds.is_attached(fo[p].id, fo[sc].id, k):
                        attached.append((p, k, sc))
        check("scales: H5DSis_attached agrees both ways (REFERENCE_LIST and DIMENSION_LIST consistent)",
              attached == [("x", 0, "t"), ("x", 0, "t2"), ("x", 1, "c"), ("x", 1, "c2"), ("z", 0, "t"),
                           ("w", 0, "s")], attached)
    # Dataset mode on /x: its dim-0 scales /t, /t2 shuffle with it; /c, /c2 are copied; nothing else.
    out3 = os.path.join(d, "scales-x.h5")
    rc, err = run(h5shuf, ["-q", "-s", "3", src + ":/x", out3])
    if check("scales: dataset mode on /x runs (exit 0)", rc == 0, err):
        with h5py.File(src, "r") as fi, h5py.File(out3, "r") as fo:
            check("scales: dataset mode keeps every scale of /x: /t, /t2 shuffled with it, /c, /c2 copied",
                  sorted(fo) == ["c", "c2", "t", "t2", "x"]
                  and all(np.array_equal(fo[p][()], fi[p][()][perm]) for p in ("x", "t", "t2"))
                  and all(np.array_equal(fo[p][()], fi[p][()]) for p in ("c", "c2"))
                  and [[s.name for s in fo["x"].dims[k].values()] for k in (0, 1)] == [["/t", "/t2"], ["/c", "/c2"]],
                  sorted(fo))
    # Dataset mode on /w: its scale /s (dim 0) shuffles with it; /t and the others are not in the output.
    out2 = os.path.join(d, "scales-w.h5")
    rc, err = run(h5shuf, ["-q", "-s", "3", src + ":/w", out2])
    if check("scales: dataset mode on /w runs (exit 0)", rc == 0, err):
        with h5py.File(src, "r") as fi, h5py.File(out2, "r") as fo:
            check("scales: dataset mode keeps /w's scale /s, shuffled with it, and nothing else",
                  sorted(fo) == ["s", "w"] and np.array_equal(fo["s"][()], fi["s"][()][perm])
                  and np.array_equal(fo["w"][()], fi["w"][()][perm]) and fo["w"].dims[0][0].name == "/s",
                  sorted(fo))


def references(h5shuf, d):
    src = os.path.join(d, "refs.h5")
    n = 40
    with h5py.File(src, "w") as f:
        x = f.create_dataset("x", data=np.arange(n * 2).reshape(n, 2))
        f.create_dataset("y", data=np.arange(n))
        g = f.create_group("g")
        meta = g.create_dataset("meta", data=np.arange(7))
        f["alias"] = meta  # a second hard link: created before the group walk reaches /g
        f.attrs["points_to"] = meta.ref
        x.attrs["sibling"] = f["y"].ref
        table = f.create_dataset("table", (3,), dtype=h5py.ref_dtype)
        table[0], table[1], table[2] = x.ref, g.ref, meta.ref
    out = os.path.join(d, "refs-out.h5")
    rc, err = run(h5shuf, ["-q", "-s", "8", src, out])
    if check("references: whole-file mode runs (exit 0)", rc == 0, err):
        with h5py.File(out, "r") as fo:
            def name(ref):
                return fo[ref].name if ref else None
            got = [name(fo.attrs["points_to"]), name(fo["x"].attrs["sibling"])] + [name(r) for r in fo["table"][()]]
            # an object reached by two links may be named by either
            check("references: attributes and a dataset of references point at the output's objects",
                  got[0] in ("/g/meta", "/alias") and got[1] == "/y" and got[2] == "/x" and got[3] == "/g"
                  and got[4] in ("/g/meta", "/alias"), got)
            check("references: the alias is a hard link to the same object",
                  h5py.h5o.get_info(fo["alias"].id).addr == h5py.h5o.get_info(fo["g/meta"].id).addr)
    # A region reference into a shuffled dataset: its rows moved, so it is refused, or dropped on request.
    src2 = os.path.join(d, "regref.h5")
    with h5py.File(src2, "w") as f:
        x = f.create_dataset("x", data=np.arange(n))
        f.attrs["first_ten"] = x.regionref[0:10]
    outdir = os.path.join(d, "regref-out")
    os.makedirs(outdir)
    out2 = os.path.join(outdir, "o.h5")
    rc, err = run(h5shuf, ["-q", "-s", "8", src2, out2])
    refused("references: a region reference into a shuffled dataset is refused, naming the attribute", rc, err,
            src2, outdir, r"first_ten.*region reference.*/x.*--drop-references")
    rc, err = run(h5shuf, ["-q", "-s", "8", "--drop-references", src2, out2])
    if check("references: --drop-references runs (exit 0) and warns naming the attribute",
             rc == 0 and re.search(r"^h5shuf: warning: .*first_ten.*null", err, re.M), "exit %s: %r" % (rc, err)):
        with h5py.File(out2, "r") as fo:
            check("references: the dropped region reference is null", not fo.attrs["first_ten"])


def group_references(h5shuf, d):
    """References to the root group, a group and a dataset (a jhdf test file's attribute of references to
    / and /test_group was refused: "refers to /, which is not in the output"), whole-file and dataset mode."""
    src = os.path.join(d, "grouprefs.h5")
    n = 30
    with h5py.File(src, "w") as f:
        x = f.create_dataset("x", data=np.arange(n * 3).reshape(n, 3))
        f.create_dataset("y", data=np.arange(n))
        g = f.create_group("test_group")
        g.create_dataset("meta", data=np.arange(4))
        x.attrs["1D_object_references"] = np.array([f.ref, g.ref, f["y"].ref], dtype=h5py.ref_dtype)
        f["y"].attrs["root"] = f.ref
    perm = oracle.order(6, n)
    out = os.path.join(d, "grouprefs-out.h5")
    rc, err = run(h5shuf, ["-q", "-s", "6", src, out])
    if check("group references: whole-file mode runs (exit 0)", rc == 0, err):
        with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
            got = [fo[r].name for r in fo["x"].attrs["1D_object_references"]]
            check("group references: whole-file: references to /, /test_group and /y point at the output's objects",
                  got == ["/", "/test_group", "/y"] and fo[fo["y"].attrs["root"]].name == "/", got)
            check("group references: whole-file: the rows are shuffled in the contract's order",
                  np.array_equal(fo["x"][()], fi["x"][()][perm]) and np.array_equal(fo["y"][()], fi["y"][()][perm]))
    outdir = os.path.join(d, "grouprefs-ds")
    os.makedirs(outdir)
    out2 = os.path.join(outdir, "o.h5")
    rc, err = run(h5shuf, ["-q", "-s", "6", src + ":/y", out2])
    if check("group references: dataset mode, a reference to / only, runs (exit 0)", rc == 0, err):
        with h5py.File(out2, "r") as fo:
            check("group references: dataset mode: the reference to / points at the output's root",
                  fo[fo["y"].attrs["root"]].name == "/")
    os.unlink(out2)
    rc, err = run(h5shuf, ["-q", "-s", "6", src + ":/x,/y", out2])
    refused("group references: dataset mode: a reference to /test_group (not in the output) is refused, naming it",
            rc, err, src, outdir, r"1D_object_references.*refers to /test_group, which is not in the output")
    # Dataset mode: the groups on the way to an output dataset are in the output, so references to them are
    # kept (and to a group on no output path refused); a scale in a group of its own is copied with its group.
    src3 = os.path.join(d, "nested.h5")
    with h5py.File(src3, "w") as f:
        g = f.create_group("g")
        h = g.create_group("h")
        other = f.create_group("other")
        z = h.create_dataset("z", data=np.arange(n * 2).reshape(n, 2))
        z.attrs["groups"] = np.array([f.ref, g.ref, h.ref, z.ref], dtype=h5py.ref_dtype)
        c = f.create_group("dims").create_dataset("c", data=np.array([1.0, 2.0]))
        c.make_scale("channel")
        z.dims[1].attach_scale(c)
        w = h.create_dataset("w", data=np.arange(n))
        w.attrs["elsewhere"] = other.ref
    out3 = os.path.join(outdir, "nested.h5")
    rc, err = run(h5shuf, ["-q", "-s", "6", src3 + ":/g/h/z", out3])
    if check("group references: dataset mode, references to /, /g, /g/h (on the output's path) and the dataset "
             "run (exit 0)", rc == 0, err):
        with h5py.File(src3, "r") as fi, h5py.File(out3, "r") as fo:
            got = [fo[r].name for r in fo["g/h/z"].attrs["groups"]]
            check("group references: dataset mode: each reference points at the output's object of its path",
                  got == ["/", "/g", "/g/h", "/g/h/z"], got)
            check("group references: dataset mode: the rows are shuffled in the contract's order",
                  np.array_equal(fo["g/h/z"][()], fi["g/h/z"][()][perm]))
            check("group references: dataset mode: the scale in a group of its own (/dims/c) is copied, attached",
                  np.array_equal(fo["dims/c"][()], fi["dims/c"][()]) and fo["g/h/z"].dims[1][0].name == "/dims/c")
    if os.path.exists(out3):
        os.unlink(out3)
    rc, err = run(h5shuf, ["-q", "-s", "6", src3 + ":/g/h/w", out3])
    refused("group references: dataset mode: a reference to a group on no output path (/other) is refused",
            rc, err, src3, outdir, r"/g/h/w: attribute elsewhere: refers to /other, which is not in the output")


def provenance(h5shuf, d):
    """h5shuf_inputs names each input's own datasets, however long (a second input's name of 3000
    characters overflowed a buffer sized from the first input's names)."""
    a, b = os.path.join(d, "a.h5"), os.path.join(d, "b.h5")
    long_name = "/" + "q" * 3000
    with h5py.File(a, "w") as f:
        f["x"] = np.arange(10)
    with h5py.File(b, "w") as f:
        f[long_name] = np.arange(10, 20)
    out = os.path.join(d, "o.h5")
    rc, err = run(h5shuf, ["-q", "-s", "1", a + ":/x", b + ":" + long_name, out])
    if check("provenance: inputs with datasets of other names run (exit 0)", rc == 0, err):
        with h5py.File(out, "r") as fo:
            got = fo.attrs["h5shuf_inputs"]
            got = got.decode() if isinstance(got, bytes) else got
            check("provenance: h5shuf_inputs lists each input with its own dataset",
                  got == "%s:/x\n%s:%s" % (a, b, long_name), got[:200])


def lossy(h5shuf, d):
    try:
        import hdf5plugin
        src = os.path.join(d, "zfp.h5")
        x = np.random.default_rng(2).random((500, 8)).astype(np.float32)
        with h5py.File(src, "w") as f:
            f.create_dataset("x", data=x, chunks=(50, 8), **hdf5plugin.Zfp(rate=10))
        with h5py.File(src, "r") as f:
            decoded = f["x"][()]
    except Exception as exc:  # noqa: BLE001
        check("lossy: h5py writes a ZFP dataset (Debian's hdf5-filter-plugin-zfp-serial, python3-hdf5plugin)",
              False, "%s: %s" % (type(exc).__name__, exc))
        return
    check("lossy: the ZFP input is lossy at this rate (else the case proves nothing)", not np.array_equal(decoded, x))
    perm = oracle.order(4, len(x))
    outdir = os.path.join(d, "zfp-out")
    os.makedirs(outdir)
    out = os.path.join(outdir, "o.h5")
    rc, err = run(h5shuf, ["-q", "-s", "4", src, out])
    refused("lossy: -c keep (the default) on a ZFP input is refused, naming the filter and -c", rc, err, src, outdir,
            r"/x: filter 32013 \(ZFP\) may be lossy.*-c none, gzip or zstd.*--allow-lossy")
    rc, err = run(h5shuf, ["-q", "-s", "4", "-c", "gzip", src, out])
    if check("lossy: -c gzip runs (exit 0)", rc == 0, err):
        with h5py.File(out, "r") as fo:
            check("lossy: -c gzip keeps the decoded values exactly, in the contract's order",
                  np.array_equal(fo["x"][()], decoded[perm]))
        os.unlink(out)
    rc, err = run(h5shuf, ["-q", "-s", "4", "--allow-lossy", "--check", src, out])
    lines = err.strip().splitlines()
    check("lossy: --allow-lossy --check fails the check (exit 1, one line: no warning for an output that is not "
          "there) and leaves nothing at the final path",
          rc == 1 and len(lines) == 1 and "differ" in lines[0] and not os.listdir(outdir),
          "exit %s, stderr %r, left %s" % (rc, err, os.listdir(outdir)))
    rc, err = run(h5shuf, ["-q", "-s", "4", "--allow-lossy", src, out])
    if check("lossy: --allow-lossy runs (exit 0) and warns", rc == 0 and "warning" in err and "32013" in err, err):
        with h5py.File(out, "r") as fo:
            rec = fo.attrs.get("h5shuf_lossy")
            check("lossy: --allow-lossy records the filter in h5shuf_lossy", rec is not None and "32013" in str(rec),
                  rec)
            check("lossy: the re-encoded rows are close to the decoded input's, in the contract's order",
                  np.allclose(fo["x"][()], decoded[perm], atol=0.05))


def main():
    h5shuf = os.path.abspath(sys.argv[1])
    bad = oracle.selftest()
    check("oracle: numpy's Philox agrees with Random123's known answers", not bad, bad)
    with tempfile.TemporaryDirectory(prefix="h5shuf-objects.") as d:
        for case in (large_attributes, scales, references, group_references, provenance, lossy):
            sub = os.path.join(d, case.__name__)
            os.makedirs(sub)
            try:
                case(h5shuf, sub)
            except Exception as exc:  # noqa: BLE001 - an unreadable output fails its case, the rest go on
                check("%s: h5py reads the output" % case.__name__, False, "%s: %s" % (type(exc).__name__, exc))
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
