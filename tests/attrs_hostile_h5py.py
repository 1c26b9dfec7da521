#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""attrs_hostile_h5py: attributes of any shape and type where h5shuf reads one: never a crash.

usage: /usr/bin/python3 tests/attrs_hostile_h5py.py [--sanitized] PATH/TO/h5shuf PYTHON_DIR

HDF5 lets an attribute hold any number of values of any type, and H5Aread writes all of them into the
caller's buffer: a CLASS of 2000 strings on a plain dataset, an h5shuf_seed of 1000 integers in an
output, a pile file's h5shuf_rows of 3 values are valid files, which overran h5shuf's fixed buffers
(a stack overflow in discover.c's is_scale, heap ones in verify.c).  HDF5's own H5DSget_num_scales and
H5DSiterate_scales read DIMENSION_LIST with its own type into one hvl_t per dimension, so h5shuf checks
it first.  Each file here is written with h5py (valid HDF5, no byte patches) and run as a user would:
  - whole-file and dataset shuffles of files with hostile CLASS, DIMENSION_LIST, REFERENCE_LIST, NAME
    and DIMENSION_LABELS attributes: exit 0 with every dataset's rows kept (sorted rows equal to the
    input's, and h5shuf verify passes), or exit 1 with one line naming the file;
  - h5shuf verify of an output whose h5shuf_seed or h5shuf_index is an array, empty, of another type, or
    negative: exit 1, one line naming the output and the attribute (the well-formed digits of a netCDF
    seed still pass); a --check run of an input carrying such attributes: exit 0 (the output's provenance
    is its own);
  - h5shuf gather of a pile file with each root attribute (and /pile_table) of another shape or type:
    exit 1, one line "damaged pile file" naming the file and the attribute;
  - the Python package's PileReader on the same pile files: h5shuf.UnsupportedError naming the file and
    the attribute, never a TypeError or IndexError from numpy.
Every run must end within 60 s and not by a signal (the child under a 4 GiB address-space limit, except
with --sanitized, a sanitizer build).  Each check prints PASS or FAIL; the last line is "N passed, M
failed"; exit 0 only when nothing failed.
"""

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

import h5py
import numpy as np

PASSED = FAILED = 0
TIME_MAX_S = 60
SANITIZED = False
H5SHUF = None
N = 10


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("PASS %s" % name, flush=True)
    else:
        FAILED += 1
        print("FAIL %s%s" % (name, (": " + detail) if detail else ""), flush=True)
    return ok


def limit_child():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(args):
    """(exit status or -signal, stderr) of one h5shuf run, killed past TIME_MAX_S."""
    p = subprocess.Popen([H5SHUF] + [str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=limit_child)
    timer = threading.Timer(TIME_MAX_S, lambda: p.send_signal(signal.SIGKILL))
    timer.start()
    err = p.stderr.read().decode(errors="replace")
    rc = p.wait()
    timer.cancel()
    return rc, err


def rows_kept(src, out, only=None):
    """Every dataset of src (or those named in only) is in out with the same shape, type and multiset of
    rows (''), or what differs."""
    bad = []
    with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset) or (only and "/" + name not in only):
                return
            if name not in fo:
                bad.append("%s missing" % name)
                return
            a, b = obj[()], fo[name][()]
            if a.dtype != b.dtype or a.shape != b.shape:
                bad.append("%s: %s %s, not %s %s" % (name, b.dtype, b.shape, a.dtype, a.shape))
            elif a.ndim and sorted(map(bytes, a.reshape(len(a), -1).view(np.uint8).reshape(len(a), -1))) != \
                    sorted(map(bytes, b.reshape(len(b), -1).view(np.uint8).reshape(len(b), -1))):
                bad.append("%s: rows differ" % name)
        fi.visititems(visit)
    return "; ".join(bad)


def one_line(name, rc, err, names):
    """The run exited 1 with one line on stderr holding every string of names."""
    lines = err.splitlines()
    check("%s: exit 1 with one line naming %s" % (name, ", ".join(names)),
          rc == 1 and len(lines) == 1 and all(n in lines[0] for n in names), "exit %d: %r" % (rc, err[-400:]))


def shuffled(name, src, spec, d):
    """h5shuf -s 1 spec: exit 0 with the rows kept (and verify passing), or exit 1 with one line naming src."""
    out = os.path.join(d, "o.h5")
    rc, err = run(["-f", "-q", "-s", 1, spec, out])
    if rc == 0:
        only = spec[len(src) + 1:].split(",") if spec != src else None
        why = rows_kept(src, out, only)
        check("%s: exit 0, every dataset's rows kept" % name, not why, why)
        rc2, err2 = run(["verify", spec, out])
        check("%s: verify passes" % name, rc2 == 0, "exit %d: %s" % (rc2, err2.strip()))
    else:
        one_line(name, rc, err, [os.path.basename(src)])


# ---- the files ----------------------------------------------------------------------------------------

def base(path):
    """x (N,) int64 and y (N, 3) float32, with a dimension scale t attached to dim 0 of both (h5py's dims
    API: H5DSset_scale, H5DSattach_scale), and z (N,) with no scale."""
    f = h5py.File(path, "w")
    t = f.create_dataset("t", data=np.arange(N, dtype=np.float64) / 2)
    x = f.create_dataset("x", data=np.arange(N, dtype=np.int64) * 3)
    y = f.create_dataset("y", data=np.arange(3 * N, dtype=np.float32).reshape(N, 3))
    f.create_dataset("z", data=np.arange(N, dtype=np.int16))
    t.make_scale("time")
    x.dims[0].attach_scale(t)
    y.dims[0].attach_scale(t)
    return f


def refs(f, n, target="t"):
    """n elements (n None: a scalar) of a variable-length sequence of object references, each [ref to
    target]."""
    v = np.empty(() if n is None else n, dtype=object)
    for i in np.ndindex(v.shape):
        v[i] = np.array([f[target].ref], dtype=h5py.ref_dtype)
    return v


def seqs(*arrays):
    """A 1-D object array of the given arrays (h5py's form of a variable-length sequence's values)."""
    v = np.empty(len(arrays), dtype=object)
    for i, a in enumerate(arrays):
        v[i] = a
    return v


def replace(obj, name, value, dtype=None):
    if name in obj.attrs:
        del obj.attrs[name]
    obj.attrs.create(name, value, dtype=dtype)


REFLIST = np.dtype([("dataset", h5py.ref_dtype), ("dimension", "<i4")])


def reflist(f, shape):
    v = np.zeros(shape, dtype=REFLIST)
    v["dataset"] = f["x"].ref
    return v


# (name, what to do to the file of base(), the datasets named in the dataset-mode run)
ATTR_CASES = [
    ("CLASS of 2000 S16 on a plain dataset",
     lambda f: replace(f["z"], "CLASS", np.array([b"DIMENSION_SCALE"] * 2000, dtype="S16")), "/z"),
    ("CLASS of 2000 S16 on the scale", lambda f: replace(f["t"], "CLASS", np.array([b"DIMENSION_SCALE"] * 2000,
                                                                                   dtype="S16")), "/x"),
    ("CLASS an int", lambda f: replace(f["z"], "CLASS", 7), "/z"),
    ("CLASS of 2000 ints", lambda f: replace(f["z"], "CLASS", np.arange(2000)), "/z"),
    ("CLASS of 2000 vlen strings", lambda f: replace(f["z"], "CLASS", ["DIMENSION_SCALE"] * 2000,
                                                     dtype=h5py.string_dtype()), "/z"),
    ("CLASS a vlen string", lambda f: replace(f["z"], "CLASS", "DIMENSION_SCALE", dtype=h5py.string_dtype()), "/z"),
    ("CLASS empty", lambda f: replace(f["z"], "CLASS", h5py.Empty("S16")), "/z"),
    ("CLASS of 5000 bytes", lambda f: replace(f["z"], "CLASS", np.bytes_(b"D" * 5000)), "/z"),
    ("CLASS of 50x50 floats", lambda f: replace(f["z"], "CLASS", np.zeros((50, 50))), "/z"),
    ("DIMENSION_LIST of 5 on rank 1", lambda f: replace(f["x"], "DIMENSION_LIST", refs(f, 5),
                                                        h5py.vlen_dtype(h5py.ref_dtype)), "/x"),
    ("DIMENSION_LIST of 1000 on rank 1", lambda f: replace(f["x"], "DIMENSION_LIST", refs(f, 1000),
                                                           h5py.vlen_dtype(h5py.ref_dtype)), "/x"),
    ("DIMENSION_LIST of 1 on rank 2", lambda f: replace(f["y"], "DIMENSION_LIST", refs(f, 1),
                                                        h5py.vlen_dtype(h5py.ref_dtype)), "/y"),
    ("DIMENSION_LIST scalar on rank 2", lambda f: replace(f["y"], "DIMENSION_LIST", refs(f, None),
                                                          h5py.vlen_dtype(h5py.ref_dtype)), "/y"),
    ("DIMENSION_LIST of 1000 ints", lambda f: replace(f["x"], "DIMENSION_LIST", np.arange(1000)), "/x"),
    ("DIMENSION_LIST of 1 S100", lambda f: replace(f["x"], "DIMENSION_LIST", np.array([b"q" * 100])), "/x"),
    ("DIMENSION_LIST of vlen int32", lambda f: replace(f["x"], "DIMENSION_LIST",
                                                       seqs(np.arange(1000, dtype=np.int32)),
                                                       h5py.vlen_dtype(np.int32)), "/x"),
    ("DIMENSION_LIST of vlen uint8", lambda f: replace(f["x"], "DIMENSION_LIST",
                                                       seqs(np.arange(3, dtype=np.uint8)),
                                                       h5py.vlen_dtype(np.uint8)), "/x"),
    ("DIMENSION_LIST of plain references", lambda f: replace(f["x"], "DIMENSION_LIST",
                                                             np.array([f["t"].ref] * 8, dtype=h5py.ref_dtype)), "/x"),
    ("REFERENCE_LIST of 1000 ints", lambda f: replace(f["t"], "REFERENCE_LIST", np.arange(1000)), "/x"),
    ("REFERENCE_LIST scalar", lambda f: replace(f["t"], "REFERENCE_LIST", reflist(f, ())), "/x"),
    ("REFERENCE_LIST of 3x3", lambda f: replace(f["t"], "REFERENCE_LIST", reflist(f, (3, 3))), "/x"),
    ("REFERENCE_LIST of 500", lambda f: replace(f["t"], "REFERENCE_LIST", reflist(f, (500,))), "/x"),
    ("NAME of 2000 ints", lambda f: replace(f["t"], "NAME", np.arange(2000)), "/x"),
    ("NAME of 2000 S16", lambda f: replace(f["t"], "NAME", np.array([b"time"] * 2000, dtype="S16")), "/x"),
    ("DIMENSION_LABELS of 2000 ints", lambda f: replace(f["x"], "DIMENSION_LABELS", np.arange(2000)), "/x"),
    ("DIMENSION_LABELS of 1 S300 on rank 2", lambda f: replace(f["y"], "DIMENSION_LABELS",
                                                               np.array([b"l" * 300])), "/y"),
]


def attr_cases(d):
    ok = os.path.join(d, "scaled.h5")
    base(ok).close()
    shuffled("the unchanged file", ok, ok, d)
    for name, fn, dsets in ATTR_CASES:
        path = os.path.join(d, "attr.h5")
        shutil.copy(ok, path)
        with h5py.File(path, "r+") as f:
            fn(f)
        shuffled(name + ", whole file", path, path, d)
        shuffled(name + ", dataset " + dsets, path, path + ":" + dsets, d)


# ---- verify: an output's provenance -------------------------------------------------------------------

PROVENANCE_CASES = [
    ("h5shuf_seed of 1000 uint64", "h5shuf_seed", np.arange(1000, dtype=np.uint64), None),
    ("h5shuf_seed of 1000 vlen strings", "h5shuf_seed", ["5"] * 1000, h5py.string_dtype()),
    ("h5shuf_seed of 1000 S60", "h5shuf_seed", np.array([b"5" * 60] * 1000), None),
    ("h5shuf_seed empty", "h5shuf_seed", h5py.Empty("<u8"), None),
    ("h5shuf_seed a float", "h5shuf_seed", 5.0, None),
    ("h5shuf_seed negative", "h5shuf_seed", np.int64(-3), None),
    ("h5shuf_seed of 16 bytes", "h5shuf_seed", np.array([5], dtype=np.uint64).view("V8")[0], None),
    ("h5shuf_seed digits and more", "h5shuf_seed", np.bytes_(b"5x"), None),
    ("h5shuf_seed a minus sign", "h5shuf_seed", np.bytes_(b"-5"), None),
    ("h5shuf_seed digits and a newline", "h5shuf_seed", np.bytes_(b"5\nfive"), None),
    ("h5shuf_index of 1000 vlen strings", "h5shuf_index", ["/idx"] * 1000, h5py.string_dtype()),
    ("h5shuf_index of 1000 S64", "h5shuf_index", np.array([b"/idx"] * 1000, dtype="S64"), None),
    ("h5shuf_index an int", "h5shuf_index", 7, None),
    ("h5shuf_index empty", "h5shuf_index", h5py.Empty("S4"), None),
]


def provenance_cases(d):
    src = os.path.join(d, "plain.h5")
    with h5py.File(src, "w") as f:
        f["x"] = np.arange(N, dtype=np.int64) * 7
        f["y"] = np.arange(2 * N, dtype=np.uint8).reshape(N, 2)
    out = os.path.join(d, "out.h5")
    rc, err = run(["-f", "-q", "-s", 5, "--index", "/idx", src, out])
    check("the output with an index is written", rc == 0, err)
    rc, err = run(["verify", src, out])
    check("its verify passes", rc == 0, err)
    for name, attr, value, dtype in PROVENANCE_CASES:
        bad = os.path.join(d, "prov.h5")
        shutil.copy(out, bad)
        with h5py.File(bad, "r+") as f:
            replace(f, attr, value, dtype)
        rc, err = run(["verify", src, bad])
        one_line("verify, " + name, rc, err, ["prov.h5", attr])
    # the seed as netCDF holds it: its decimal digits, a fixed-length string
    digits = os.path.join(d, "digits.h5")
    shutil.copy(out, digits)
    with h5py.File(digits, "r+") as f:
        replace(f, "h5shuf_seed", np.bytes_(b"5"))
    rc, err = run(["verify", src, digits])
    check("verify, h5shuf_seed as its digits: passes", rc == 0, err)
    with h5py.File(digits, "r+") as f:
        replace(f, "h5shuf_seed", np.bytes_(b"6"))
    rc, err = run(["verify", src, digits])
    one_line("verify, h5shuf_seed digits of another seed", rc, err, ["digits.h5", "order differs"])
    # an input carrying such attributes (whole-file mode copies the root's): the output's are its own
    carrier = os.path.join(d, "carrier.h5")
    shutil.copy(src, carrier)
    with h5py.File(carrier, "r+") as f:
        for attr in ("h5shuf_seed", "h5shuf_index", "h5shuf_source_index", "h5shuf_stratify", "h5shuf_lossy"):
            replace(f, attr, ["/x"] * 1000, h5py.string_dtype())
    rc, err = run(["-f", "-q", "--check", "-s", 3, carrier, out])
    if check("--check of an input with array provenance attributes: exit 0", rc == 0, err):
        with h5py.File(out, "r") as f:
            a = f.attrs
            check("... its output's seed is its own, and it names no index", int(a["h5shuf_seed"]) == 3 and
                  not any(k in a for k in ("h5shuf_index", "h5shuf_source_index", "h5shuf_stratify", "h5shuf_lossy")),
                  repr(dict(a)))
        rc, err = run(["verify", carrier, out])
        check("... and verify passes", rc == 0, err)
    # an output of h5shuf shuffled again: its index dataset is rows now, its h5shuf_index not carried over
    again = os.path.join(d, "again.h5")
    rc, err = run(["-f", "-q", "--check", "-s", 8, os.path.join(d, "digits.h5"), again])
    check("an output with an index shuffled again with --check: exit 0", rc == 0, err)


# ---- gather and PileReader: a pile file's records -----------------------------------------------------

# (attribute, its value, its dtype for h5py, what gather's line says besides the file (None: "damaged pile
# file" and the attribute), whether PileReader reads it: "refuses" (UnsupportedError naming the attribute)
# or "ignores" (it reads the rows, or refuses in an h5shuf.Error))
PILE_CASES = [
    ("h5shuf_format", ["h5shuf-piles"] * 3, h5py.string_dtype(), ["not a pile file"], "refuses"),
    ("h5shuf_format", 1, None, ["not a pile file"], "refuses"),
    ("h5shuf_format_version", np.array([1, 1, 1], dtype=np.uint32), None, None, "refuses"),
    ("h5shuf_format_version", "1", h5py.string_dtype(), None, "refuses"),
    ("h5shuf_rows", np.arange(1000, dtype=np.uint64), None, None, "refuses"),
    ("h5shuf_rows", float(N), None, None, "refuses"),
    ("h5shuf_rows", np.int64(-N), None, None, "refuses"),
    ("h5shuf_rows", h5py.Empty("<u8"), None, None, "refuses"),
    ("h5shuf_piles", np.arange(3, dtype=np.uint64), None, None, "refuses"),
    ("h5shuf_seed", np.arange(1000, dtype=np.uint64), None, None, "refuses"),
    ("h5shuf_seed", ["1"] * 1000, h5py.string_dtype(), None, "refuses"),
    ("h5shuf_whole_file", np.ones(100, dtype=np.uint8), None, None, "ignores"),
    ("h5shuf_pile_bound_rows", "many", h5py.string_dtype(), None, "ignores"),
    ("h5shuf_splits", np.zeros(7, dtype=np.uint64), None, None, "ignores"),
    ("h5shuf_restarts", np.zeros((2, 2), dtype=np.uint64), None, None, "ignores"),
    ("h5shuf_datasets", np.arange(1), None, None, "refuses"),
    ("h5shuf_datasets", "/x", h5py.string_dtype(), ["no inputs or datasets"], "refuses"),
    ("h5shuf_datasets", ["/x"] * 1000, h5py.string_dtype(), ["1000 when"], "ignores"),
    ("h5shuf_input_specs", ["in.h5"] * 1000, h5py.string_dtype(), ["damaged pile file", "h5shuf_input_files"],
     "ignores"),
    ("h5shuf_input_specs", np.arange(1000), None, None, "ignores"),
    ("h5shuf_input_files", np.arange(1), None, None, "ignores"),
    ("h5shuf_input_files", ["/in.h5"] * 5, h5py.string_dtype(), None, "ignores"),
    ("h5shuf_input_rows", np.arange(5, dtype=np.uint64), None, None, "ignores"),
    ("h5shuf_input_bytes", ["1"], h5py.string_dtype(), None, "ignores"),
    ("h5shuf_input_mtime_ns", np.arange(2000, dtype=np.uint64), None, None, "ignores"),
    ("h5shuf_input_mtime_ns", np.array([-1], dtype=np.int64), None, None, "ignores"),
    ("h5shuf_compression", np.arange(1000), None, None, "ignores"),
    ("h5shuf_chunk_shape", ["5"] * 1000, h5py.string_dtype(), None, "ignores"),
    ("h5shuf_index", np.array([b"/idx"] * 1000), None, None, "ignores"),
]


def pile_reader(path):
    """('', n rows) when PileReader opens path and reads all its batches; else (the exception's text, class)."""
    import h5shuf
    try:
        return "", sum(len(b["/x"]) for b in h5shuf.PileReader(path, batch_size=4))
    except h5shuf.Error as exc:
        return str(exc), type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - what the check is about
        return "not an h5shuf.Error: %s: %s" % (type(exc).__name__, exc), None


def pile_cases(d):
    src = os.path.join(d, "pin.h5")
    with h5py.File(src, "w") as f:
        f["x"] = np.arange(N, dtype=np.int64) * 11
    piles = os.path.join(d, "piles.h5")
    rc, err = run(["scatter", "-q", "-s", 4, "--scratch-compression", "none", src, piles])
    check("the pile file is written", rc == 0, err)
    out = os.path.join(d, "pout.h5")
    rc, err = run(["gather", "-f", "-q", piles, out])
    check("the unchanged pile file gathers", rc == 0, err)
    why, rows = pile_reader(piles)
    check("PileReader reads the unchanged pile file", not why and rows == N, why)
    for attr, value, dtype, want, reader in PILE_CASES:
        name = "%s %s" % (attr, "empty" if isinstance(value, h5py.Empty) else
                          "of %s %s" % (np.shape(value) or "scalar", np.asarray(value).dtype))
        bad = os.path.join(d, "bad-piles.h5")
        shutil.copy(piles, bad)
        with h5py.File(bad, "r+") as f:
            replace(f, attr, value, dtype)
        if os.path.exists(out):
            os.unlink(out)
        rc, err = run(["gather", "-f", bad, out])
        one_line("gather, " + name, rc, err, ["bad-piles.h5"] + (want or ["damaged pile file", attr]))
        check("gather, %s: no output" % name, not os.path.exists(out))
        why, got = pile_reader(bad)
        if reader == "refuses":
            check("PileReader, %s: UnsupportedError naming the file and the attribute" % name,
                  got == "UnsupportedError" and "bad-piles.h5" in why and (want[0] if want else attr) in why
                  if attr == "h5shuf_format" else got == "UnsupportedError" and "bad-piles.h5" in why and attr in why,
                  why)
        else:
            check("PileReader, %s: reads the rows, or an h5shuf.Error" % name, got == N if not why else
                  isinstance(got, str), why)
    for name, fn in (("/pile_table of 2x2 ints", lambda f: f.create_dataset("pile_table", data=np.zeros((2, 2)))),
                     ("/pile_table of 5 rows", lambda f: f.create_dataset("pile_table", data=np.zeros(5, dtype=[
                         ("lo", "<u8"), ("last", "<u8"), ("rows", "<u8"), ("offset", "<u8")]))),
                     ("/pile_table a group", lambda f: f.create_group("pile_table"))):
        bad = os.path.join(d, "bad-piles.h5")
        shutil.copy(piles, bad)
        with h5py.File(bad, "r+") as f:
            del f["pile_table"]
            fn(f)
        rc, err = run(["gather", "-f", bad, out])
        one_line("gather, " + name, rc, err, ["bad-piles.h5", "pile_table"])
        why, cls = pile_reader(bad)
        check("PileReader, %s: UnsupportedError naming it" % name, cls == "UnsupportedError" and "pile_table" in why,
              why)


def main():
    global H5SHUF, SANITIZED
    args = sys.argv[1:]
    if args and args[0] == "--sanitized":
        SANITIZED = True
        args = args[1:]
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    H5SHUF = os.path.abspath(args[0])
    sys.path.insert(0, os.path.abspath(args[1]))
    os.environ["H5SHUF_LIBRARY"] = "/nonexistent/libh5shuf.so"  # PileReader needs no library (no filters here)
    with tempfile.TemporaryDirectory(prefix="attrs_hostile.") as d:
        attr_cases(d)
        provenance_cases(d)
        pile_cases(d)
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
