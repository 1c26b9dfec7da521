#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""cvlen_h5py: rows of compound or array types with variable-length members, against h5py and PyTables.

usage: /usr/bin/python3 tests/cvlen_h5py.py PATH/TO/h5shuf

Inputs are written by h5py (a table with variable-length UTF-8 and ASCII string fields, a vlen int32
field and a fixed f8[2] field; a rank-2 dataset of compounds holding arrays of vlen strings and vlen
float32 sequences; a top-level array of vlen strings) and PyTables (a Table with string columns beside a
VLArray of strings, shuffled together).  Each output row must be the input row that --index names and
that the independent oracle (oracle_h5py: numpy Philox) names, field by field and element by element,
with the input's datatype.  The output's bytes must be the same over one pass, two passes with several
piles, forced pile splits, restarts, the direct path, -j 1/2 and scatter + gather; --check and verify
must accept it, and verify must reject a changed string, a changed sequence and a changed fixed field.
(netCDF4-python cannot make compounds with variable-length members: "Unsupported compound type
element"; PyTables Tables have fixed-size columns only.)  One line per check, PASS or FAIL; the last
line is "N passed, M failed"; the exit status is 0 only when nothing failed.
"""

import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as o  # noqa: E402  (the oracle, the checks' bookkeeping)

check = o.check


def shuf(*args, rc=0):
    return o.run([H5SHUF] + [str(a) for a in args], expect_rc=rc)


def same(g, w):
    """Exact equality of two values h5py read: numeric arrays by dtype, shape and bytes; object arrays
    and records element by element; strings and scalars by value and type."""
    if isinstance(w, np.void) or (isinstance(w, np.ndarray) and w.dtype.names):
        return (type(g) is type(w) and g.dtype == w.dtype and
                all(same(g[k], w[k]) for k in w.dtype.names))
    if isinstance(w, np.ndarray):
        if not isinstance(g, np.ndarray) or g.dtype != w.dtype or g.shape != w.shape:
            return False
        if w.dtype == object:
            return all(same(a, b) for a, b in zip(g.ravel(), w.ravel()))
        return g.tobytes() == w.tobytes()
    return type(g) is type(w) and g == w


def same_rows(got, want, order):
    if len(got) != len(want):
        return False, "%d rows, expected %d" % (len(got), len(want))
    for r in range(len(got)):
        if not same(got[r], want[order[r]]):
            return False, "row %d: %r, expected input row %d: %r" % (r, got[r], order[r], want[order[r]])
    return True, ""


TABLE = np.dtype([("id", "<i4"), ("text", h5py.string_dtype("utf-8")), ("tok", h5py.vlen_dtype(np.dtype("<i4"))),
                  ("pos", "<f8", (2,)), ("tag", h5py.string_dtype("ascii"))])


def make_table(path, n, seed):
    """/t: a table of n rows (chunks of 64, gzip) with text of 0..3000 bytes (UTF-8 of 1..4-byte
    characters, empty strings), token rows of 0..40 ids and two of 30000; /label int64 beside it."""
    rng = np.random.default_rng(seed)
    words = ["", "a", "zürich", "東京 ✓", "emoji 🎲🎲", "x" * 3000]
    rows = np.empty(n, dtype=TABLE)
    for i in range(n):
        k = 30000 if i in (3, n // 2) else int(rng.integers(0, 41))
        rows[i] = (i, "%s %d" % (words[i % len(words)], i) if i % 7 else "",
                   rng.integers(-(1 << 30), 1 << 30, k).astype("<i4"), (i * 0.5, -float(i)),
                   ("tag%d" % (i % 13)).encode() if i % 4 else b"")
    with h5py.File(path, "w") as f:
        t = f.create_dataset("t", (n,), dtype=TABLE, chunks=(64,), compression="gzip")
        t[...] = rows
        t.attrs["note"] = "a table with text columns"
        f["label"] = np.arange(n, dtype=np.int64) + 1000 * seed


ARR = np.dtype([("n", "<i2"), ("w", h5py.string_dtype("utf-8"), (2,)), ("v", h5py.vlen_dtype(np.dtype("<f4")), (2,))])


def make_arrays(path, n, seed):
    """/c: (n, 2) compounds holding an array of 2 vlen strings and an array of 2 vlen float32 sequences;
    /a: (n,) arrays of 3 vlen strings (h5py's low-level API: numpy has no such dtype)."""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as f:
        c = f.create_dataset("c", (n, 2), dtype=ARR, chunks=(16, 2))
        v = np.zeros((n, 2), dtype=ARR)
        for i, j in np.ndindex(n, 2):
            v[i, j] = (i * 2 + j, ["w%d" % i, "ÿ" * int(rng.integers(0, 5))],
                       [rng.standard_normal(int(rng.integers(0, 6))).astype("<f4"),
                        np.arange(int(rng.integers(0, 3)), dtype="<f4")])
        c[...] = v
        tid = h5py.h5t.array_create(h5py.h5t.py_create(h5py.string_dtype("utf-8"), logical=True), (3,))
        h5py.h5d.create(f.id, b"a", tid, h5py.h5s.create_simple((n,)))
        a = np.empty(n, dtype=f["a"].dtype)
        for i in range(n):
            a[i] = ["s%d" % i, "" if i % 3 else "three", "ü" * (i % 5)]
        f["a"][...] = a


def check_output(tag, out, inp, seed, names):
    n = None
    with h5py.File(out, "r") as f, h5py.File(inp, "r") as fi:
        for k in names:
            want = fi[k][()]
            n = len(want)
            got = f[k][()]
            ok, why = same_rows(got, want, o.oracle_order(seed, n))
            check("%s: %s rows in the oracle's order" % (tag, k), ok, why)
            check("%s: %s keeps its datatype" % (tag, k), fi[k].id.get_type() == f[k].id.get_type(),
                  "%s vs %s" % (f[k].dtype, fi[k].dtype))
            check("%s: %s keeps its shape" % (tag, k), f[k].shape == fi[k].shape, str(f[k].shape))


def case_table(tmp):
    """A table with text and token columns (and a label): every path gives the same bytes."""
    inp = os.path.join(tmp, "table.h5")
    make_table(inp, 700, 1)
    ref = os.path.join(tmp, "ref.h5")
    shuf("-s", 11, "-m", "64M", inp, ref)
    check_output("table", ref, inp, 11, ["t", "label"])
    with h5py.File(ref, "r") as f:
        check("table: its attribute kept", f["t"].attrs.get("note") == "a table with text columns")
    _, err = shuf("verify", inp, ref)
    check("verify accepts the table", "permutation" in err, err.strip())
    runs = [("--strategy", "two-pass", "-m", "1M"), ("--strategy", "two-pass", "-m", "1M", "--debug-pile-bound", "9"),
            ("--strategy", "two-pass", "-m", "1M", "--debug-pile-bound", "9", "--on-oversize", "restart"),
            ("--strategy", "two-pass", "-m", "2M", "--scratch-compression", "none"),
            ("--strategy", "direct", "-m", "4M"), ("-m", "1M", "--check"), ("-m", "1M", "-j", "1"),
            ("-m", "1M", "-j", "2", "--debug-pile-bound", "9"), ("--strategy", "direct", "-j", "1")]
    for extra in runs:
        p = os.path.join(tmp, "o.h5")
        out, _ = shuf("-f", "-s", 11, *extra, "--json", inp, p)
        check("table: bytes equal with %s" % " ".join(extra), o.file_hash(p) == o.file_hash(ref))
        if extra[:4] == ("--strategy", "two-pass", "-m", "1M") and len(extra) == 4:
            check("table: -m 1M two-pass makes several piles", '"piles": 1,' not in out and '"piles": 0,' not in out,
                  out[:400])
        if "--debug-pile-bound" in extra and "restart" not in extra and "two-pass" in extra:
            check("table: the forced bound split piles", '"piles_split": 0' not in out, out[-300:])
    piles, lazy = os.path.join(tmp, "piles.h5"), os.path.join(tmp, "lazy.h5")
    shuf("scatter", "-s", 11, "-m", "1M", "--debug-pile-bound", "9", inp, piles)
    shuf("gather", "-m", "1M", piles, lazy)
    check("table: scatter + gather gives the same bytes", o.file_hash(lazy) == o.file_hash(ref))
    idx = os.path.join(tmp, "idx.h5")
    shuf("-s", 11, "-m", "1M", "--strategy", "two-pass", "--index", "/index", inp + ":/t", idx)
    with h5py.File(idx, "r") as f, h5py.File(inp, "r") as fi:
        index = f["index"][()]
        ok, why = same_rows(f["t"][()], fi["t"][()], index)
        check("table: row r is input row index[r], every field", ok, why)
        check("table: --index is the oracle's order", np.array_equal(index, o.oracle_order(11, 700)))
    _, err = shuf("verify", inp + ":/t", idx)
    check("verify accepts the table with its index", "permutation" in err, err.strip())


def case_arrays(tmp):
    """Arrays of vlen members, in a rank-2 dataset of compounds and as a top-level array type."""
    inp = os.path.join(tmp, "arrays.h5")
    make_arrays(inp, 300, 2)
    ref = os.path.join(tmp, "aref.h5")
    shuf("-s", 5, inp, ref)
    check_output("arrays", ref, inp, 5, ["c", "a"])
    for extra in (("--strategy", "two-pass", "-m", "1M", "--debug-pile-bound", "7"), ("--strategy", "direct"),
                  ("-j", "1", "--check"), ("-j", "2", "--strategy", "two-pass", "-m", "1M")):
        p = os.path.join(tmp, "ao.h5")
        shuf("-f", "-s", 5, *extra, inp, p)
        check("arrays: bytes equal with %s" % " ".join(extra), o.file_hash(p) == o.file_hash(ref))
    _, err = shuf("verify", inp, ref)
    check("verify accepts the arrays", "permutation" in err, err.strip())


def case_verify_catches(tmp):
    """verify rejects one changed string, sequence element or fixed field of one row."""
    inp, ref = os.path.join(tmp, "table.h5"), os.path.join(tmp, "ref.h5")
    def tok_changed(t):
        return np.append(t[:-1], t[-1:] ^ 1) if len(t) else np.array([1], "<i4")

    def tok_dropped(t):
        return t[:-1] if len(t) else np.array([0], "<i4")

    edits = [("a string one character longer", lambda r: r.__setitem__("text", r["text"].decode() + "!")),
             ("a string of the same length", lambda r: r.__setitem__("tag", b"zzzz" if r["tag"] != b"zzzz" else b"yy")),
             ("a token changed", lambda r: r.__setitem__("tok", tok_changed(r["tok"]))),
             ("a token dropped", lambda r: r.__setitem__("tok", tok_dropped(r["tok"]))),
             ("a fixed field", lambda r: r.__setitem__("pos", r["pos"] + 1))]
    for what, edit in edits:
        bad = os.path.join(tmp, "bad.h5")
        with open(ref, "rb") as f, open(bad, "wb") as g:
            g.write(f.read())
        with h5py.File(bad, "r+") as f:
            row = f["t"][5]
            edit(row)
            f["t"][5] = row
        _, err = shuf("verify", inp, bad, rc=1)
        check("verify rejects %s" % what, "differ" in err and "/t" in err, err.strip())


def case_pytables(tmp):
    """A PyTables file: a Table with string columns and a VLArray of strings of the same rows, shuffled
    together in whole-file mode and read back by PyTables."""
    import tables
    p, out = os.path.join(tmp, "pt.h5"), os.path.join(tmp, "pt-out.h5")
    n = 257

    class Row(tables.IsDescription):
        name = tables.StringCol(16)
        label = tables.Int32Col()
        score = tables.Float64Col(shape=(2,))

    with tables.open_file(p, "w") as f:
        t = f.create_table("/", "table", Row)
        r = t.row
        for i in range(n):
            r["name"], r["label"], r["score"] = ("n%d" % i).encode(), i, (i, -i)
            r.append()
        t.flush()
        v = f.create_vlarray("/", "text", tables.VLUnicodeAtom())
        for i in range(n):
            v.append("text %d %s" % (i, "é" * (i % 9)))
    shuf("-s", 3, "--check", p, out)
    shuf("-f", "-s", 3, "--strategy", "two-pass", "-m", "1M", p, out + ".2")
    check("pytables: two passes give the same bytes", o.file_hash(out) == o.file_hash(out + ".2"))
    order = o.oracle_order(3, n)
    with tables.open_file(p) as fi, tables.open_file(out) as fo:
        tin, tout = fi.root.table.read(), fo.root.table.read()
        check("pytables: table rows in the oracle's order", tout.dtype == tin.dtype and
              tout.tobytes() == tin[order].tobytes())
        vin, vout = fi.root.text.read(), fo.root.text.read()
        check("pytables: VLArray rows in the oracle's order, aligned with the table",
              vout == [vin[k] for k in order] and
              all(vout[r].startswith("text %d " % tout[r]["label"]) for r in range(n)))


def case_refusals(tmp):
    """What still cannot move: a vlen sequence of compounds with vlen members (nested), references in a
    compound with vlen members.  One line naming the dataset, nothing written."""
    p = os.path.join(tmp, "refused.h5")
    with h5py.File(p, "w") as f:
        inner = h5py.h5t.py_create(np.dtype([("a", "<i4"), ("s", h5py.string_dtype())]), logical=True)
        h5py.h5d.create(f.id, b"vc", h5py.h5t.vlen_create(inner), h5py.h5s.create_simple((4,)))
        f.create_dataset("g", data=1)
        f.create_dataset("cr", (4,), dtype=np.dtype([("r", h5py.ref_dtype), ("s", h5py.string_dtype())]))
    for path, what in (("/vc", "nested"), ("/cr", "references inside")):
        out = os.path.join(tmp, "r-out.h5")
        _, err = shuf(p + ":" + path, out, rc=1)
        lines = err.strip().splitlines()
        check("%s refused (%s)" % (path, what), len(lines) == 1 and what in lines[0] and path in lines[0] and
              not os.path.exists(out), err.strip())


def case_bounded(tmp):
    """A compound row whose text alone is more than a read may take under -m is refused before HDF5
    reads it (the descriptors of the members are read and bounded), in one line."""
    p, out = os.path.join(tmp, "big.h5"), os.path.join(tmp, "big-out.h5")
    rows = np.zeros(40, dtype=TABLE)
    for i in range(40):
        rows[i] = (i, "x" * (12 << 20 if i == 7 else 10), np.arange(3, dtype="<i4"), (0, 0), b"")
    with h5py.File(p, "w") as f:
        f.create_dataset("t", data=rows, chunks=(8,))
    _, err = shuf("-s", 1, "-m", "1M", p, out, rc=1)
    lines = err.strip().splitlines()
    check("a 12 MB text field under -m 1M: refused in one line", len(lines) == 1 and "big.h5:/t" in err and
          "under the memory budget" in err and not os.path.exists(out), err.strip())


def main():
    global H5SHUF
    if len(sys.argv) != 2:
        print("usage: %s H5SHUF" % sys.argv[0], file=sys.stderr)
        return 2
    H5SHUF = os.path.abspath(sys.argv[1])
    o.H5SHUF = H5SHUF
    with tempfile.TemporaryDirectory(prefix="cvlen_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        o.run_case("a table with text columns", case_table, tmp)
        o.run_case("arrays of vlen members", case_arrays, tmp)
        o.run_case("verify catches changes", case_verify_catches, tmp)
        o.run_case("PyTables", case_pytables, tmp)
        o.run_case("refusals", case_refusals, tmp)
        o.run_case("reads bounded", case_bounded, tmp)
        left = [n for n in os.listdir(tmp) if "scratch" in n or n.startswith(".")]
        check("no scratch or temporary files left", not left, " ".join(left))
    print("%d passed, %d failed" % (o.PASSED, o.FAILED), flush=True)
    return 0 if o.FAILED == 0 else 1


H5SHUF = None

if __name__ == "__main__":
    sys.exit(main())
