#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""lazy_h5py: `h5shuf scatter` + `h5shuf gather` (the lazy second pass) against the one-shot run and an
independent reading of the pile file with h5py and numpy.

usage: /usr/bin/python3 tests/lazy_h5py.py H5SHUF H5SHUF_GENDATA READ_PILE_EXE PLUGIN_DIR EXAMPLES_DIR

What it pins down (docs/lazy.md):
- scatter then gather writes the one-shot output byte for byte (md5 of the whole file), in several
  configurations (whole file, several inputs with renamed outputs, forced splits and restarts, --index,
  output filters and chunks, options given to gather instead of scatter, N = 0 and N = 1);
- gathering twice gives the same bytes and leaves the pile file unchanged;
- the pile file says what it holds: N, M, the seed, pile rows that add up to N, key ranges that partition
  [0, 2^64) in order, each pile's ids increasing with keys inside its range (keys computed with numpy's
  Philox, as in oracle_h5py.py), each pile's rows equal to the input rows its ids name;
- the loader snippets of docs/examples (C and h5py) give each pile's rows in the one-shot output's order;
- errors: missing, foreign, damaged and newer-version pile files, changed inputs, a wrong seed, a budget
  too small, an output that is the pile file, scatter failures: exit status, one line, nothing left.
Each check prints PASS or FAIL; the last line is "N passed, M failed".
"""

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as orc  # noqa: E402  (check(), run(), keys_np(): the independent Philox)

check = orc.check
H5SHUF = GENDATA = READ_PILE = PLUGINS = EXAMPLES = None


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def shuf(*args, rc=0):
    return orc.run([H5SHUF] + list(args), expect_rc=rc)


def leftovers(d):
    """Temporary files h5shuf may have left in d (output or pile file under its temporary name)."""
    return sorted(glob.glob(os.path.join(d, ".*h5shuf*")) + glob.glob(os.path.join(d, "h5shuf-scratch-*")))


def same_as_oneshot(tag, tmp, inputs, output_spec, scatter_opts, gather_opts=(), oneshot_opts=None):
    """One-shot run vs scatter + gather: byte-identical outputs; gather twice; pile file unchanged.
    Returns the pile file path."""
    if oneshot_opts is None:
        oneshot_opts = list(scatter_opts) + list(gather_opts)
    d = os.path.join(tmp, tag.replace(" ", "_"))
    os.makedirs(d)
    paths = output_spec.split(":", 1)
    one = os.path.join(d, "one.h5") + (":" + paths[1] if len(paths) > 1 else "")
    two = os.path.join(d, "two.h5") + (":" + paths[1] if len(paths) > 1 else "")
    piles = os.path.join(d, "piles.h5")
    shuf(*(list(oneshot_opts) + inputs + [one]))
    shuf(*(["scatter"] + list(scatter_opts) + inputs + [piles]))
    before = md5(piles)
    shuf(*(["gather"] + list(gather_opts) + [piles, two]))
    a, b = md5(os.path.join(d, "one.h5")), md5(os.path.join(d, "two.h5"))
    check("%s: scatter + gather == one-shot, byte for byte" % tag, a == b, "md5 %s vs %s" % (b, a))
    os.rename(os.path.join(d, "two.h5"), os.path.join(d, "first.h5"))
    shuf(*(["gather"] + list(gather_opts) + [piles, two]))
    check("%s: a second gather gives the same bytes, the pile file unchanged" % tag,
          md5(os.path.join(d, "two.h5")) == b and md5(piles) == before)
    check("%s: nothing left behind" % tag, not leftovers(d), "%s" % leftovers(d))
    return piles


def input_rows(specs, names):
    """{dataset index: all input rows concatenated} for the pile file's datasets, read with h5py."""
    out = {}
    for k, name in enumerate(names):
        parts = []
        for spec in specs:
            file, _, paths = spec.partition(":")
            path = paths.split(",")[k] if paths else name
            with h5py.File(file, "r") as f:
                parts.append(f[path][()])
        out[k] = np.concatenate(parts).astype(parts[0].dtype)  # concatenate would make it native-endian
    return out


def s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check_pile_file(tag, piles, specs):
    """The pile file read independently: attributes, table, ranges, keys, rows."""
    with h5py.File(piles, "r") as f:
        a = f.attrs
        check("%s: format h5shuf-piles version 1" % tag,
              s(a["h5shuf_format"]) == "h5shuf-piles" and int(a["h5shuf_format_version"]) == 1)
        seed, n, m = int(a["h5shuf_seed"]), int(a["h5shuf_rows"]), int(a["h5shuf_piles"])
        names = [s(x) for x in a["h5shuf_datasets"]]
        in_rows = [int(x) for x in a["h5shuf_input_rows"]]
        rows_by_ds = input_rows(specs, names)
        check("%s: N is the inputs' rows" % tag, n == sum(in_rows) == len(rows_by_ds[0]),
              "N %d, inputs %s, read %d" % (n, in_rows, len(rows_by_ds[0])))
        check("%s: input specs recorded in order" % tag,
              [s(x) for x in a["h5shuf_input_specs"]] == specs, "%s" % list(a["h5shuf_input_specs"]))
        t = f["pile_table"][()]
        check("%s: M piles in the table and in /piles" % tag,
              len(t) == m and sorted(f["piles"].keys()) == ["%06d" % j for j in range(m)],
              "M %d, table %d, groups %s" % (m, len(t), list(f["piles"].keys())[:5]))
        lo, last, rows, offset = (t[c].astype(object) for c in ("lo", "last", "rows", "offset"))
        hi = [int(x) + 1 for x in last]  # stored inclusive: the last pile's hi is 2^64
        part = int(lo[0]) == 0 and hi[-1] == 2 ** 64 and all(int(lo[j + 1]) == hi[j] for j in range(m - 1)) \
            and all(int(lo[j]) < hi[j] for j in range(m))
        check("%s: key ranges partition [0, 2^64) in order" % tag, part)
        check("%s: pile rows add up to N, offsets are their prefix sums" % tag,
              sum(int(x) for x in rows) == n and [int(x) for x in offset] == list(np.cumsum([0] + [int(x) for x in rows[:-1]])))
        keys = orc.keys_np(seed, 0, n).astype(object) if n else []
        seen = np.zeros(n, dtype=bool)
        bad = []
        for j in range(m):
            g = f["piles/%06d" % j]
            ids = g["index"][()]
            if len(ids) != int(rows[j]):
                bad.append("pile %d holds %d rows, table says %d" % (j, len(ids), int(rows[j])))
                continue
            if len(ids) and (np.any(np.diff(ids.astype(np.int64)) <= 0)):
                bad.append("pile %d: ids not increasing" % j)
            for i in ids:
                k = keys[int(i)]
                if not (int(lo[j]) <= k < hi[j]):
                    bad.append("pile %d: id %d key %x outside [%x, %x)" % (j, i, k, int(lo[j]), hi[j]))
                    break
            seen[ids] = True
            for k in range(len(names)):
                ok, why = orc.same_array(g["d%d" % k][()], rows_by_ds[k][ids])
                if not ok:
                    bad.append("pile %d d%d: %s" % (j, k, why))
        check("%s: every pile's ids increase, keys inside its range, rows equal the inputs'" % tag, not bad,
              "; ".join(bad[:3]))
        check("%s: every row is in exactly one pile" % tag, bool(seen.all()) and sum(int(x) for x in rows) == n)
    return seed


def check_loaders(tag, piles, out, index_path):
    """docs/examples/read_pile.{c,py}: pile j in shuffled order == output rows offset_j .. + rows_j."""
    sys.path.insert(0, EXAMPLES)
    import read_pile  # noqa: E402  (docs/examples/read_pile.py, as the doc shows it)
    with h5py.File(piles, "r") as p, h5py.File(out, "r") as o:
        t = p["pile_table"][()]
        names = [s(x) for x in p.attrs["h5shuf_datasets"]]
        index = o[index_path][()]
        d0 = o[names[0]][()]
        row_bytes = d0.dtype.itemsize * int(np.prod(d0.shape[1:], dtype=np.int64))
        bad_py, bad_c = [], []
        for j in range(len(t)):
            off, n = int(t[j]["offset"]), int(t[j]["rows"])
            rows, ids = read_pile.read_pile(piles, j)
            if not np.array_equal(ids, index[off:off + n]):
                bad_py.append("pile %d: ids" % j)
            for name in names:
                ok, why = orc.same_array(rows[name], o[name][off:off + n])
                if not ok:
                    bad_py.append("pile %d %s: %s" % (j, name, why))
            raw = subprocess.run([READ_PILE, piles, str(j)], stdout=subprocess.PIPE, check=True).stdout
            rec = np.frombuffer(raw, dtype=np.uint8).reshape(n, 8 + row_bytes) if n else np.zeros((0, 8 + row_bytes), np.uint8)
            cids = rec[:, :8].copy().view("<u8").reshape(-1)
            if not np.array_equal(cids, index[off:off + n]):
                bad_c.append("pile %d: ids" % j)
            if rec[:, 8:].tobytes() != np.ascontiguousarray(d0[off:off + n]).tobytes():
                bad_c.append("pile %d: rows of %s" % (j, names[0]))
        check("%s: docs/examples/read_pile.py gives each pile in the output's order" % tag, not bad_py,
              "; ".join(bad_py[:3]))
        check("%s: docs/examples/read_pile.c gives each pile in the output's order" % tag, not bad_c,
              "; ".join(bad_c[:3]))


def without_spdx(text):
    """text without its first line when that is the SPDX licence line (tests/licence.py)."""
    first, _, rest = text.partition("\n")
    return rest if "SPDX-License-Identifier:" in first else text


def case_doc_snippets():
    """docs/lazy.md shows the example files verbatim (but for their first line, the SPDX licence line), so the
    code a reader copies is the code tested."""
    doc = open(os.path.join(EXAMPLES, "..", "lazy.md")).read()
    for lang, name in (("python", "read_pile.py"), ("c", "read_pile.c")):
        start = doc.find("```%s\n" % lang)
        block = doc[start + len(lang) + 4:doc.find("```\n", start + 4)] if start >= 0 else None
        check("docs/lazy.md's %s snippet is docs/examples/%s" % (lang, name),
              block == without_spdx(open(os.path.join(EXAMPLES, name)).read()))


def write_inputs(tmp):
    rng = np.random.default_rng(4242)
    a = os.path.join(tmp, "a.h5")
    b = os.path.join(tmp, "b.h5")
    with h5py.File(a, "w") as f:
        f.create_dataset("x", data=rng.standard_normal((700, 6)).astype(">f4"), chunks=(64, 6), compression="gzip")
        f.create_dataset("y", data=rng.integers(0, 1000, 700).astype(np.int64))
        f["x"].attrs["units"] = "m"
    with h5py.File(b, "w") as f:
        f.create_dataset("x", data=rng.standard_normal((333, 6)).astype(">f4"), chunks=(50, 6))
        f.create_dataset("y", data=rng.integers(0, 1000, 333).astype(np.int64))
    return a, b


def case_configurations(tmp):
    ex = os.path.join(tmp, "ex.h5")
    orc.run([GENDATA, "example", ex])
    # whole-file mode, defaults
    piles = same_as_oneshot("whole file", tmp, [ex], "out", ["-s", "5"])
    check_pile_file("whole file", piles, [ex])
    # whole file, forced split, --index, output filters and chunks, a small budget
    opts = ["-s", "77", "-m", "6M", "--debug-pile-bound", "90", "--index", "/order", "-c", "gzip:3+shuffle",
            "--chunk-rows", "37"]
    piles = same_as_oneshot("split, index, filters", tmp, [ex], "out", opts)
    check_pile_file("split, index, filters", piles, [ex])
    with h5py.File(piles, "r") as f:
        check("split, index, filters: the recursion ran (splits recorded) and every pile is within the bound",
              int(f.attrs["h5shuf_splits"]) > 0 and int(f["pile_table"]["rows"].max()) <= 90,
              "splits %d, largest %d" % (int(f.attrs["h5shuf_splits"]), int(f["pile_table"]["rows"].max())))
    check_loaders("split, index, filters", piles, os.path.join(os.path.dirname(piles), "two.h5"), "/order")
    # several inputs, explicit and renamed paths, restart on oversize, gzip scratch (no plugin needed)
    a, b = write_inputs(tmp)
    specs = [a + ":/x,/y", b]
    opts = ["-s", "123", "--debug-pile-bound", "60", "--on-oversize", "restart", "--scratch-compression",
            "gzip:1+shuffle", "--index", "/i"]
    piles = same_as_oneshot("several inputs, restart", tmp, specs, "out:/feat,/label", opts)
    check_pile_file("several inputs, restart", piles, specs)
    with h5py.File(piles, "r") as f:
        check("several inputs, restart: restarts recorded, gzip piles",
              int(f.attrs["h5shuf_restarts"]) > 0 and f["piles/000000/d0"].compression == "gzip"
              and f["piles/000000/index"].compression == "gzip")
    env = dict(os.environ)
    env.pop("HDF5_PLUGIN_PATH", None)
    # output options given to gather, not scatter: the one-shot with all of them
    same_as_oneshot("options at gather", tmp, specs, "out", ["-s", "9", "--debug-pile-bound", "100"],
                    ["--index", "/idx", "-c", "zstd:2+shuffle"])
    # ... and gather's replace scatter's
    same_as_oneshot("gather overrides scatter", tmp, specs, "out", ["-s", "9", "-c", "gzip:1"], ["-c", "none"],
                    oneshot_opts=["-s", "9", "-c", "none"])
    # N = 0 and N = 1
    for n in (0, 1):
        p = os.path.join(tmp, "n%d.h5" % n)
        with h5py.File(p, "w") as f:
            f.create_dataset("v", data=np.arange(n, dtype=np.uint16).reshape(n, 1) + 7)
        piles = same_as_oneshot("N=%d" % n, tmp, [p + ":/v"], "out", ["-s", "3"])
        check_pile_file("N=%d" % n, piles, [p + ":/v"])


def case_errors(tmp):
    d = os.path.join(tmp, "errors")
    os.makedirs(d)
    ex = os.path.join(d, "ex.h5")
    orc.run([GENDATA, "example", ex])
    piles = os.path.join(d, "piles.h5")
    out = os.path.join(d, "out.h5")
    shuf("scatter", "-s", "1", "--debug-pile-bound", "200", ex, piles)

    def fails(tag, args, rc, needle):
        _, err = shuf(*args, rc=rc)
        lines = err.strip().splitlines()
        check("%s: exit %d, one line naming the cause" % (tag, rc),
              len(lines) == 1 and lines[0].startswith("h5shuf: ") and needle in lines[0], "stderr: %r" % err)
        check("%s: no output, nothing left behind" % tag, not os.path.exists(out) and not leftovers(d),
              "%s" % leftovers(d))

    fails("missing pile file", ["gather", os.path.join(d, "nope.h5"), out], 1, "nope.h5")
    text = os.path.join(d, "text.h5")
    with open(text, "w") as f:
        f.write("not hdf5\n")
    fails("not an HDF5 file", ["gather", text, out], 1, "not an HDF5 file")
    fails("an HDF5 file but not a pile file", ["gather", ex, out], 1, "not a pile file")
    newer = os.path.join(d, "newer.h5")
    shutil.copy(piles, newer)
    with h5py.File(newer, "r+") as f:
        f.attrs.modify("h5shuf_format_version", np.uint32(2))
    fails("a newer format version", ["gather", newer, out], 1, "format version 2")
    damaged = os.path.join(d, "damaged.h5")
    shutil.copy(piles, damaged)
    with h5py.File(damaged, "r+") as f:
        del f["pile_table"]
    fails("a damaged pile file (no table)", ["gather", damaged, out], 1, "damaged pile file")
    _, err = shuf("gather", "-s", "2", piles, out, rc=2)
    check("a seed other than the pile file's: a usage error naming both seeds",
          err.startswith("h5shuf: ") and "seed 1, not 2" in err.splitlines()[0] and "Try 'h5shuf --help'" in err, err)
    fails("a budget too small for the largest pile", ["gather", "-m", "40K", piles, out], 1, "budget")
    fails("the output is the pile file", ["gather", "-f", piles, piles], 1, "pile file")
    before = md5(piles)
    check("errors: the pile file is unchanged by failed gathers", md5(piles) == before and os.path.exists(piles))
    # an input changed between scatter and gather: touched (same bytes), then rewritten
    st = os.stat(ex)
    os.utime(ex, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    fails("an input touched since the scatter", ["gather", piles, out], 1, "modification time")
    with h5py.File(ex, "r+") as f:
        f.attrs["new"] = np.arange(100)
    fails("an input rewritten since the scatter", ["gather", piles, out], 1, "changed since")
    # scatter failures leave no pile file and no temporary file
    fails("scatter over an existing file without -f", ["scatter", "-s", "1", ex, piles], 1, "exists")
    bad = os.path.join(d, "bad.h5")
    fails("scatter of a missing input", ["scatter", os.path.join(d, "missing.h5"), bad], 1, "missing.h5")
    check("scatter of a missing input: no pile file", not os.path.exists(bad))
    fails("scatter of a missing dataset", ["scatter", ex + ":/nothing", bad], 1, "/nothing")
    check("scatter of a missing dataset: no pile file", not os.path.exists(bad))
    _, err = shuf("scatter", "--check", ex, bad, rc=2)
    check("scatter --check is a usage error", "Try 'h5shuf --help'" in err, err)
    _, err = shuf("gather", piles, rc=2)
    check("gather without OUTPUT is a usage error", "Try 'h5shuf --help'" in err, err)


def main():
    global H5SHUF, GENDATA, READ_PILE, PLUGINS, EXAMPLES
    if len(sys.argv) != 6:
        print("usage: %s H5SHUF GENDATA READ_PILE_EXE PLUGIN_DIR EXAMPLES_DIR" % sys.argv[0], file=sys.stderr)
        return 2
    H5SHUF, GENDATA, READ_PILE, PLUGINS, EXAMPLES = (os.path.abspath(x) for x in sys.argv[1:])
    # h5py reads the zstd piles through h5shuf's plugin: first in this process's search path (HDF5 1.14
    # reads HDF5_PLUGIN_PATH once, when the library loads, which import h5py did above), and for the
    # processes this one starts (the loader snippets) through the environment
    h5py.h5pl.prepend(PLUGINS.encode())
    os.environ["HDF5_PLUGIN_PATH"] = PLUGINS
    with tempfile.TemporaryDirectory(prefix="lazy_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        orc.run_case("scatter + gather configurations", case_configurations, tmp)
        orc.run_case("errors", case_errors, tmp)
        orc.run_case("doc snippets", case_doc_snippets)
    print("%d passed, %d failed" % (orc.PASSED, orc.FAILED), flush=True)
    return 0 if orc.FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
