#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vlen_h5py: variable-length rows (vlen sequences, vlen strings) against an independent h5py/numpy oracle.

usage: /usr/bin/python3 tests/vlen_h5py.py PATH/TO/h5shuf

Inputs are written by h5py; the expected order comes from oracle_h5py's numpy Philox (rows sorted by
(K(seed, i), i)), never from h5shuf.  Each output row must equal the input row the oracle names, element
for element and with the same dtype; datasets shuffled together stay aligned; the output's datatypes are
the inputs' (base type and byte order, string encoding).  The bytes of the output file must not depend on
the memory budget, forced pile splits (--debug-pile-bound) or restarts.  Each check prints one line,
PASS or FAIL; the last line is "N passed, M failed"; the exit status is 0 only when nothing failed.
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


def same_rows(got, want, order):
    """got[r] == want[order[r]] for every r, element for element, same dtype.  Returns (ok, detail)."""
    if len(got) != len(want):
        return False, "%d rows, expected %d" % (len(got), len(want))
    for r in range(len(got)):
        g, w = got[r], want[order[r]]
        if isinstance(w, np.ndarray):
            ok = isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
        else:
            ok = g == w
        if not ok:
            return False, "row %d: %r, expected input row %d: %r" % (r, g, order[r], w)
    return True, ""


def seq_rows(rng, n, base, long_rows):
    """n rows of a vlen sequence: lengths 0..40, plus some long rows (far over an input chunk's bytes,
    a scratch chunk and a band's share)."""
    lens = rng.integers(0, 41, n)
    lens[0] = 0
    for i in long_rows:
        lens[i] = 30000
    return [rng.integers(-(1 << 30), 1 << 30, l).astype(base) for l in lens]


def str_rows(n):
    """n strings: empty ones, ASCII, non-ASCII UTF-8 (2, 3 and 4-byte characters), a long one."""
    words = ["", "a", "zürich", "東京 ✓", "emoji 🎲🎲", "ŝtono", "x" * 3000]
    return [("%s %d" % (words[i % len(words)], i)) if i % 5 else "" for i in range(n)]


def make_mixed(path, n, seed):
    """/tokens vlen int32 (chunks of 16 rows, gzip), /feats vlen >f8 (big-endian base), /label int64,
    /s vlen UTF-8 strings, /grid (n, 2, 3) vlen int16 (a row of 6 vlen elements)."""
    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as f:
        t = f.create_dataset("tokens", (n,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(16,),
                             compression="gzip")
        t[:] = np.array(seq_rows(rng, n, np.int32, [3, n // 2]) + [], dtype=object)
        fe = f.create_dataset("feats", (n,), dtype=h5py.vlen_dtype(np.dtype(">f8")))
        fe[:] = np.array([rng.standard_normal(int(k)).astype(">f8") for k in rng.integers(0, 9, n)], dtype=object)
        f["label"] = np.arange(n, dtype=np.int64) + 1000 * seed
        s = f.create_dataset("s", (n,), dtype=h5py.string_dtype("utf-8"))
        s[:] = str_rows(n)
        g = f.create_dataset("grid", (n, 2, 3), dtype=h5py.vlen_dtype(np.dtype("int16")))
        cells = np.empty((n, 2, 3), dtype=object)
        for idx in np.ndindex(n, 2, 3):
            cells[idx] = rng.integers(0, 100, int(rng.integers(0, 5))).astype(np.int16)
        g[:] = cells
        t.attrs["note"] = "token ids"


def read_all(path):
    with h5py.File(path, "r") as f:
        return {k: f[k][()] for k in ("tokens", "feats", "label", "s", "grid")}


def check_output(tag, out, inputs, seed, names=None):
    """out's datasets are the inputs' rows in the oracle's order, with the inputs' datatypes."""
    names = names or ["tokens", "feats", "label", "s", "grid"]
    parts = [read_all(p) for p in inputs]
    want = {k: np.concatenate([p[k] for p in parts]) for k in names}
    n = len(want[names[0]])
    order = o.oracle_order(seed, n)
    with h5py.File(out, "r") as f, h5py.File(inputs[0], "r") as fi:
        for k in names:
            got = f[k][()]
            if k == "grid":
                ok = got.shape == want[k].shape and all(
                    got[r][idx].dtype == want[k][order[r]][idx].dtype and
                    np.array_equal(got[r][idx], want[k][order[r]][idx]) for r in range(n) for idx in np.ndindex(2, 3))
                why = "" if ok else "rows differ"
            else:
                ok, why = same_rows(got, want[k], order)
            check("%s: %s rows in the oracle's order" % (tag, k), ok, why)
            ti, to = fi[k].id.get_type(), f[k].id.get_type()
            check("%s: %s keeps its datatype" % (tag, k), ti == to, "%s vs %s" % (f[k].dtype, fi[k].dtype))
        if "s" in names:
            enc = h5py.check_string_dtype(f["s"].dtype)
            check("%s: strings stay UTF-8" % tag, enc is not None and enc.encoding == "utf-8", str(enc))
        if "tokens" in names:
            check("%s: attributes of a vlen dataset kept" % tag, f["tokens"].attrs.get("note") == "token ids")


def case_mixed(tmp):
    """Whole-file mode over vlen sequences, strings, rank-3 vlen and a fixed dataset; budgets, splits and
    restarts give the same bytes; verify and --check accept it."""
    inp = os.path.join(tmp, "mixed.h5")
    make_mixed(inp, 600, 1)
    ref = os.path.join(tmp, "ref.h5")
    shuf("-s", 11, "-m", "4M", inp, ref)
    check_output("whole file", ref, [inp], 11)
    out, err = shuf("verify", inp, ref)
    check("verify accepts the vlen output", "permutation" in err, err.strip())
    runs = [("-m", "1M"), ("-m", "1M", "--debug-pile-bound", "9"),
            ("-m", "1M", "--debug-pile-bound", "9", "--on-oversize", "restart"),
            ("-m", "2M", "--scratch-compression", "none"), ("-m", "1M", "--check"), ("-m", "1M", "-j", "1"),
            ("-m", "1M", "-j", "3", "--debug-pile-bound", "9")]
    for extra in runs:
        p = os.path.join(tmp, "o.h5")
        shuf("-f", "-s", 11, *extra, "--json", inp, p)
        check("bytes equal with %s" % " ".join(extra), o.file_hash(p) == o.file_hash(ref))
    out, _ = shuf("-f", "-s", 11, "-m", "1M", "--debug-pile-bound", "9", "--json", inp, os.path.join(tmp, "o.h5"))
    check("the forced bound split piles", '"piles_split": 0' not in out, out[-200:])
    out, _ = shuf("-f", "-s", 11, "-m", "1M", "--json", inp, os.path.join(tmp, "o.h5"))
    check("-m 1M makes several piles", '"piles": 1,' not in out, out[:400])
    piles, lazy = os.path.join(tmp, "piles.h5"), os.path.join(tmp, "lazy.h5")
    shuf("scatter", "-s", 11, "-m", "1M", "--debug-pile-bound", "9", inp, piles)
    shuf("gather", "-m", "1M", piles, lazy)
    check("scatter + gather: same bytes as the one-shot run", o.file_hash(lazy) == o.file_hash(ref))
    shards = os.path.join(tmp, "sh.h5")
    shuf("-s", 11, "-m", "1M", "--shards", 3, inp, shards)
    head = os.path.join(tmp, "head.h5")
    shuf("-s", 11, "-m", "1M", "-n", 50, inp, head)
    with h5py.File(ref, "r") as f:
        want_t, want_s = list(f["tokens"][()]), list(f["s"][()])
    got_t, got_s = [], []
    for k in range(3):
        with h5py.File(os.path.join(tmp, "sh-%05d-of-00003.h5" % k), "r") as f:
            got_t += list(f["tokens"][()])
            got_s += list(f["s"][()])
    check("--shards 3: the shards concatenated are the single output", got_s == want_s and len(got_t) == len(want_t)
          and all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got_t, want_t)))
    with h5py.File(head, "r") as f:
        ht, hs = list(f["tokens"][()]), list(f["s"][()])
    check("-n 50: the first 50 rows of the output", hs == want_s[:50] and len(ht) == 50 and
          all(np.array_equal(a, b) for a, b in zip(ht, want_t[:50])))


def case_direct_read(tmp):
    """Pass 1 reads sequences straight from the global heap (vlen.c h5shuf__vlen_read_arena) and hands a
    slab to HDF5 when any element is past it (here a row of 1.2 MB, whose collection is over 1 MiB): every
    output is the bytes HDF5's own read gives (H5SHUF_DEBUG_VLEN_HDF5=1), rows in the oracle's order."""
    for name, big in (("direct", []), ("fallback", [5, 333])):
        p = os.path.join(tmp, "%s.h5" % name)
        rng = np.random.default_rng(29)
        n = 700
        lens = rng.integers(0, 3000, n)
        lens[7] = 0
        for i in big:
            lens[i] = 300000
        rows = [rng.integers(-(1 << 31), 1 << 31, k, dtype=np.int64).astype("<i4") for k in lens]
        with h5py.File(p, "w") as f:
            d = f.create_dataset("t", (n,), dtype=h5py.vlen_dtype(np.dtype("<i4")), chunks=(64,))
            d[:] = np.array(rows + [None], dtype=object)[:-1]
            e = f.create_dataset("be", (n,), dtype=h5py.vlen_dtype(np.dtype(">u2")), chunks=(64,))
            e[:] = np.array([r[: k % 50].astype(">u2") for k, r in enumerate(rows)] + [None], dtype=object)[:-1]
        got, want = os.path.join(tmp, "%s-out.h5" % name), os.path.join(tmp, "%s-hdf5.h5" % name)
        shuf("-s", 5, "-m", "16M", p, got)
        os.environ["H5SHUF_DEBUG_VLEN_HDF5"] = "1"
        try:
            shuf("-s", 5, "-m", "16M", p, want)
        finally:
            del os.environ["H5SHUF_DEBUG_VLEN_HDF5"]
        check("%s: the same bytes as HDF5's own read of the rows" % name, o.file_hash(got) == o.file_hash(want))
        with h5py.File(got, "r") as f, h5py.File(p, "r") as fi:
            for ds in ("t", "be"):
                ok, why = same_rows(f[ds][()], fi[ds][()], o.oracle_order(5, n))
                check("%s: /%s rows in the oracle's order" % (name, ds), ok, why)


def case_paths_and_concat(tmp):
    """Explicit paths with renaming, two inputs concatenated."""
    a, b = os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5")
    make_mixed(a, 120, 2)
    make_mixed(b, 77, 3)
    out = os.path.join(tmp, "cat.h5")
    shuf("-s", 5, "-m", "1M", a + ":/tokens,/label,/s", b + ":/tokens,/label,/s", out)
    check_output("two inputs, named paths", out, [a, b], 5, ["tokens", "label", "s"])
    out2 = os.path.join(tmp, "ren.h5")
    shuf("-s", 5, a + ":/s,/tokens", out2 + ":/text,/ids")
    with h5py.File(out2, "r") as f, h5py.File(a, "r") as fi:
        order = o.oracle_order(5, 120)
        ok1, why1 = same_rows(f["text"][()], fi["s"][()], order)
        ok2, why2 = same_rows(f["ids"][()], fi["tokens"][()], order)
        check("renamed output datasets", ok1 and ok2, why1 + why2)


def case_verify_catches(tmp):
    """verify fails when one element of one vlen row is changed (so the check can fail)."""
    inp = os.path.join(tmp, "mixed.h5")
    ref = os.path.join(tmp, "ref.h5")
    bad = os.path.join(tmp, "bad.h5")
    with open(ref, "rb") as f, open(bad, "wb") as g:
        g.write(f.read())
    with h5py.File(bad, "r+") as f:
        row = f["tokens"][5]
        if len(row) == 0:
            row = np.array([1], dtype=np.int32)
        else:
            row[-1] ^= 1
        f["tokens"][5] = row
    _, err = shuf("verify", inp, bad, rc=1)
    check("verify rejects a changed vlen element", "tokens" in err and "differ" in err, err.strip())
    with h5py.File(bad, "r+") as f:  # a string one byte longer
        f["s"][7] = f["s"][7].decode() + "!"
    _, err = shuf("verify", inp, bad, rc=1)
    check("verify rejects a changed string", "differ" in err, err.strip())


def case_empty_and_tiny(tmp):
    """N = 0 and N = 1 vlen datasets; all rows empty."""
    for n in (0, 1, 40):
        p = os.path.join(tmp, "t%d.h5" % n)
        with h5py.File(p, "w") as f:
            d = f.create_dataset("v", (n,), dtype=h5py.vlen_dtype(np.dtype("uint8")), maxshape=(None,), chunks=(4,))
            for i in range(n):
                d[i] = np.zeros(0 if n == 40 else 3, dtype=np.uint8)
        out = os.path.join(tmp, "t%d-out.h5" % n)
        shuf("-s", 2, p, out)
        with h5py.File(out, "r") as f, h5py.File(p, "r") as fi:
            ok, why = same_rows(f["v"][()], fi["v"][()], o.oracle_order(2, n))
            check("N=%d vlen uint8%s" % (n, " (all rows empty)" if n == 40 else ""), ok, why)


def case_refusals(tmp):
    """Nested vlen is refused with one clear line, nothing written (vlen inside a compound: cvlen_h5py)."""
    p = os.path.join(tmp, "nested.h5")
    with h5py.File(p, "w") as f:
        tid = h5py.h5t.vlen_create(h5py.h5t.vlen_create(h5py.h5t.NATIVE_INT32))
        h5py.h5d.create(f.id, b"vv", tid, h5py.h5s.create_simple((4,)))
        f.create_dataset("vs", (4,), dtype=h5py.vlen_dtype(h5py.string_dtype("utf-8")))
    q = os.path.join(tmp, "mixed.h5")
    out = os.path.join(tmp, "refused.h5")
    # fletcher32 on vlen data: HDF5 1.10 and 1.14 refuse it (h5shuf then says so in one line, with a hint);
    # HDF5 2.x takes it (h5shuf then writes it).  Which one this HDF5 does, h5py tells independently.
    try:
        with h5py.File(os.path.join(tmp, "probe.h5"), "w") as f:
            f.create_dataset("t", (4,), dtype=h5py.vlen_dtype(np.int32), chunks=(2,), fletcher32=True,
                             compression="gzip")
        takes = True
    except (ValueError, OSError, RuntimeError):
        takes = False
    if takes:
        shuf("-s", 3, "-c", "fletcher32+gzip", q + ":/tokens", out)
        with h5py.File(out, "r") as f, h5py.File(q, "r") as fi:
            ok, why = same_rows(f["tokens"][()], fi["tokens"][()], o.oracle_order(3, 600))
            check("fletcher32+gzip on vlen data, which this HDF5 takes: the rows, the filters", ok and
                  f["tokens"].fletcher32 and f["tokens"].compression == "gzip", why)
        os.unlink(out)
    else:
        _, err = shuf("-c", "fletcher32+gzip", q + ":/tokens", out, rc=1)
        check("filters HDF5 refuses on vlen data: one line with a hint", len(err.strip().splitlines()) == 1 and
              "-c gzip" in err and not os.path.exists(out), err.strip())
    shuf("-s", 3, "-c", "gzip:6+shuffle", "--chunk-rows", "50", q + ":/tokens,/s", out)
    with h5py.File(out, "r") as f, h5py.File(q, "r") as fi:
        order = o.oracle_order(3, 600)
        ok1, why1 = same_rows(f["tokens"][()], fi["tokens"][()], order)
        ok2, why2 = same_rows(f["s"][()], fi["s"][()], order)
        check("-c gzip:6+shuffle --chunk-rows 50 on vlen datasets", ok1 and ok2 and f["s"].chunks == (50,) and
              f["s"].compression == "gzip", why1 + why2)
    os.unlink(out)
    for path, what in (("/vv", "nested"), ("/vs", "nested")):
        out = os.path.join(tmp, "refused.h5")
        _, err = shuf(p + ":" + path, out, rc=1)
        lines = err.strip().splitlines()
        check("%s refused (%s)" % (path, what), len(lines) == 1 and what in lines[0] and path in lines[0] and
              not os.path.exists(out), err.strip())


def case_missed_by_sample(tmp):
    """Long rows the plan's sample misses (N > 1024: 16 blocks of 64 rows at k*N/16): the piles' real
    bytes exceed the byte bound, so they are split (same bytes as a roomy run); one row alone larger
    than a pile may use is refused cleanly."""
    n, longs = 2000, [70 + 5 * k for k in range(10)]  # rows 70..115: between the sampled blocks
    p = os.path.join(tmp, "missed.h5")
    with h5py.File(p, "w") as f:
        d = f.create_dataset("v", (n,), dtype=h5py.vlen_dtype(np.dtype("int32")))
        d[:] = np.array([np.arange(150000 if i in longs else 3, dtype=np.int32) for i in range(n)], dtype=object)
    roomy, tight = os.path.join(tmp, "missed-64M.h5"), os.path.join(tmp, "missed-4M.h5")
    shuf("-s", 1, "-m", "64M", p, roomy)
    out, _ = shuf("-s", 1, "-m", "4M", "--json", p, tight)
    check("piles over the byte bound are split", '"piles_split": 0' not in out, out[-200:])
    check("split by bytes: same output bytes as -m 64M", o.file_hash(roomy) == o.file_hash(tight))
    with h5py.File(tight, "r") as f, h5py.File(p, "r") as fi:
        ok, why = same_rows(f["v"][()], fi["v"][()], o.oracle_order(1, n))
        check("split by bytes: rows in the oracle's order", ok, why)
    with h5py.File(p, "r+") as f:
        f["v"][90] = np.arange(1500000, dtype=np.int32)  # 6 MB: more than -m 2M gives a pile
    out = os.path.join(tmp, "huge-out.h5")
    _, err = shuf("-s", 1, "-m", "2M", p, out, rc=1)
    lines = err.strip().splitlines()
    check("a row larger than a pile's bytes is refused", len(lines) == 1 and "does not fit the memory budget" in err
          and "missed.h5:/v" in err and not os.path.exists(out), err.strip())


def main():
    global H5SHUF
    if len(sys.argv) != 2:
        print("usage: %s H5SHUF" % sys.argv[0], file=sys.stderr)
        return 2
    H5SHUF = os.path.abspath(sys.argv[1])
    o.H5SHUF = H5SHUF
    with tempfile.TemporaryDirectory(prefix="vlen_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        o.run_case("mixed vlen file", case_mixed, tmp)
        o.run_case("direct read of the heap", case_direct_read, tmp)
        o.run_case("verify catches changes", case_verify_catches, tmp)
        o.run_case("paths and concatenation", case_paths_and_concat, tmp)
        o.run_case("empty and tiny", case_empty_and_tiny, tmp)
        o.run_case("refusals", case_refusals, tmp)
        o.run_case("long rows the sample missed", case_missed_by_sample, tmp)
        left = [n for n in os.listdir(tmp) if "scratch" in n or n.startswith(".")]
        check("no scratch or temporary files left", not left, " ".join(left))
    print("%d passed, %d failed" % (o.PASSED, o.FAILED), flush=True)
    return 0 if o.FAILED == 0 else 1


H5SHUF = None

if __name__ == "__main__":
    sys.exit(main())
