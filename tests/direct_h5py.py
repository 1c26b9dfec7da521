#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""direct_h5py: the direct path (rows read in output order, no scratch) against the two passes.

usage: /usr/bin/python3 tests/direct_h5py.py PATH/TO/h5shuf

Files are written here by h5py: large records (256 KiB and 1 MiB float32 rows, one row a chunk, gzip +
shuffle) beside small labels and a variable-length dataset of large rows.  The checks:
  - the plan's choice and its reason (--plan, -v, --json), each rule of the choice once;
  - byte identity: every feature run with --strategy direct and with --strategy two-pass (at a roomy
    budget) writes the same bytes, file by file (one output, shards, splits, head, index and source
    index over two inputs, whole-file mode, vlen rows, other filters and chunks, -j 1, forced windows);
  - the direct output against the independent oracle (numpy Philox keys: input[rows sorted by (key, i)]);
  - the minimum budget the error names is the real one: the run succeeds at it and fails one byte below;
  - no scratch file is made, and nothing is left behind.
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import json
import os
import re
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (the oracle and the check/run helpers)

check = O.check


def make_records(path, n, side, chunk_rows=1, vlen=False, first=0):
    """/x (n, 16, side) float32 (64*side bytes a row), gzip-1 + shuffle in chunks of chunk_rows rows;
    /y (n,) int64 = the global row id; /v (n,) vlen float32 of about side*16 elements (optional).
    Every row distinct, compressible about 2x like real measurements."""
    rng = np.random.default_rng(first + 11)
    with h5py.File(path, "w") as h:
        x = h.create_dataset("x", (n, 16, side), dtype="<f4", chunks=(chunk_rows, 16, side), compression="gzip",
                             compression_opts=1, shuffle=True)
        for i in range(n):
            x[i] = (np.round(rng.normal(size=(16, side)) * 64) / 64 + (first + i)).astype("<f4")
        x.attrs["units"] = "counts"
        h.create_dataset("y", data=np.arange(first, first + n, dtype="<i8"), chunks=(min(16, n),))
        if vlen:
            v = h.create_dataset("v", (n,), dtype=h5py.vlen_dtype(np.dtype("<f4")), chunks=(4,))
            for i in range(n):
                v[i] = np.full(side * 16 - 7 * (i % 5), first + i, dtype="<f4")


def shuf_ok(*args):
    return O.run([O.H5SHUF] + [str(a) for a in args])


def same_files(tag, a, b):
    ok = os.path.exists(a) and os.path.exists(b) and O.file_hash(a) == O.file_hash(b)
    return check("%s: direct and two-pass outputs are the same bytes" % tag, ok, "%s vs %s" % (a, b))


def both(tmp, tag, inputs, args, out_spec="", multi=False):
    """Run the same shuffle with --strategy direct and with two-pass (-m 1G); compare every file."""
    outs = {}
    for strategy in ("direct", "two-pass"):
        sub = os.path.join(tmp, "%s-%s" % (tag, strategy))
        os.mkdir(sub)
        out = os.path.join(sub, "out.h5")
        given = list(args)
        if strategy == "two-pass" and "-m" in given:  # the two passes at a roomy budget
            k = given.index("-m")
            del given[k:k + 2]
        mem = [] if "-m" in given else ["-m", "1G"]
        # the direct run's scratch directory does not exist: it must make no scratch file
        nowhere = ["-t", os.path.join(tmp, "nowhere")] if strategy == "direct" else []
        shuf_ok("-q", "--strategy", strategy, *(mem + nowhere + given), *inputs, out + out_spec)
        outs[strategy] = sorted(os.path.join(sub, f) for f in os.listdir(sub))
    names = [os.path.basename(f) for f in outs["direct"]]
    check("%s: the same files" % tag, names == [os.path.basename(f) for f in outs["two-pass"]] and
          (len(names) > 1) == multi, "%s vs %s" % (names, outs["two-pass"]))
    for a, b in zip(outs["direct"], outs["two-pass"]):
        same_files("%s %s" % (tag, os.path.basename(a)), a, b)
    return outs["direct"]


def plan_text(*args):
    out, _ = shuf_ok("--plan", *args)
    m = re.search(r"^h5shuf: strategy (.*)$", out, re.M)
    return m.group(1) if m else ""


def case_choice(tmp):
    big = os.path.join(tmp, "choice-1m.h5")
    make_records(big, 12, 16384)  # 1 MiB rows, one a chunk
    out = os.path.join(tmp, "choice-out.h5")
    why = plan_text("-m", "64M", big + ":/x,/y", out)
    check("1 MiB rows in chunks of one row: direct", why.startswith("direct: rows of 1048576 bytes"), why)
    four = os.path.join(tmp, "choice-4rows.h5")
    make_records(four, 100, 16384, chunk_rows=4)
    why = plan_text("-m", "64M", four + ":/x,/y", out)  # 100 MiB: more than one pass holds
    check("1 MiB rows in chunks of 4 rows: two-pass, and says why",
          why == "two-pass: a row read alone would decode a chunk of 4 rows", why)
    small = os.path.join(tmp, "choice-256k.h5")
    make_records(small, 40, 4096)  # 256 KiB rows
    more = os.path.join(tmp, "choice-256k-400.h5")
    make_records(more, 400, 4096)
    why = plan_text("-m", "64M", more + ":/x,/y", out)  # 100 MiB: more than one pass holds
    check("256 KiB rows: two-pass (under the threshold)",
          why == "two-pass: rows of 262144 bytes (under 1048576) are read faster in slabs", why)
    why = plan_text("-m", "5M", small + ":/x,/y", out)
    check("256 KiB rows, a budget only the direct path fits: direct",
          why == "direct: the two passes need more memory than the budget; the direct path fits", why)
    why = plan_text("-m", "1G", small + ":/x,/y", out)
    check("256 KiB rows that fit the budget: the two passes in one",
          why == "two-pass in one: the rows fit the budget, so they are read once, sorted in memory and written, "
                 "no scratch", why)
    why = plan_text("--strategy", "direct", "-m", "1G", small + ":/x,/y", out)
    check("--strategy direct: direct", why == "direct: asked for (--strategy direct)", why)
    why = plan_text("--strategy", "two-pass", "-m", "64M", big + ":/x,/y", out)
    check("--strategy two-pass: two-pass", why == "two-pass: asked for (--strategy two-pass)", why)
    js, _ = shuf_ok("--plan", "--json", "-m", "64M", big + ":/x,/y", out)
    plan = json.loads(js)["plan"]
    check("--json says the strategy and the direct minimum",
          plan["strategy"] == "direct" and plan["direct_windows"] == 1 and plan["direct_min_bytes"] > 1 << 20, plan)
    _, err = shuf_ok("-v", "-s", "1", "-m", "64M", big + ":/x,/y", out)
    check("-v says the strategy and the run's path",
          "strategy direct: rows of 1048576 bytes" in err and "direct, 1 window of keys, no scratch" in err, err)
    _, err = O.run([O.H5SHUF, "scatter", "--strategy", "direct", big, os.path.join(tmp, "p.h5")], expect_rc=2)
    check("scatter --strategy: a usage error", "strategy" in err, err)
    _, err = O.run([O.H5SHUF, "--strategy", "sideways", big, out], expect_rc=2)
    check("--strategy sideways: a usage error naming the choices", "auto, two-pass or direct" in err, err)


def case_identity(tmp):
    a = os.path.join(tmp, "id-a.h5")
    b = os.path.join(tmp, "id-b.h5")
    make_records(a, 30, 4096, vlen=True)  # 256 KiB rows (x), 256 KiB vlen rows (v)
    make_records(b, 18, 4096, vlen=True, first=30)
    both(tmp, "x,y", [a + ":/x,/y"], ["-s", "7"])
    both(tmp, "-j 1", [a + ":/x,/y"], ["-s", "7", "-j", "1"])
    both(tmp, "a budget of 17 rows (15 of them the band of whole output chunks)", [a + ":/x,/y"],
         ["-s", "7", "-j", "2", "-m", str(17 * 262144 + 4096)])
    both(tmp, "shards", [a + ":/x,/y"], ["-s", "7", "--shards", "3"], multi=True)
    both(tmp, "split", [a + ":/x,/y"], ["-s", "7", "--split", "train=0.7,val=0.3"], multi=True)
    both(tmp, "head", [a + ":/x,/y"], ["-s", "7", "--head", "11"])
    both(tmp, "two inputs, index, source index", [a + ":/x,/y", b], ["-s", "8", "--index", "/idx",
                                                                     "--source-index", "/src"])
    both(tmp, "whole file (x, y, v discovered)", [a, b], ["-s", "9"])
    both(tmp, "vlen rows alone", [a + ":/v"], ["-s", "9"])
    both(tmp, "zstd, chunks of 2 rows", [a + ":/x,/y"], ["-s", "7", "-c", "zstd:3", "--chunk-rows", "2"])
    both(tmp, "windows halved (bound 4)", [a + ":/x,/y", b], ["-s", "3", "--debug-pile-bound", "4"])
    both(tmp, "--check", [a + ":/x,/y"], ["-s", "7", "--check"])
    # small rows held whole, many windows (the in-memory form of the direct path)
    c = os.path.join(tmp, "id-small.h5")
    with h5py.File(c, "w") as h:
        h.create_dataset("x", data=np.arange(3000 * 4, dtype="<i4").reshape(3000, 4), chunks=(256, 4))
    both(tmp, "small rows held, windows halved (bound 40)", [c + ":/x"], ["-s", "5", "--debug-pile-bound", "40"])


def case_netcdf(tmp):
    """A netCDF-4 file of large records (netCDF4-python): an unlimited time dimension with its coordinate,
    a (time, y, x) variable of 1 MiB records in chunks of one record, attributes; whole-file mode.  The
    plan takes the direct path by itself; the output is the two passes' bytes, and netCDF4-python reads
    the same variables, attributes and dimensions back, the records in the oracle's order."""
    try:
        import netCDF4
    except ImportError:
        check("netCDF4-python is installed (python3-netcdf4)", False)
        return
    src = os.path.join(tmp, "nc-records.nc")
    n = 9
    with netCDF4.Dataset(src, "w") as f:
        f.title = "large records"
        f.createDimension("time", None)
        f.createDimension("y", 256)
        f.createDimension("x", 1024)
        t = f.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        v = f.createVariable("field", "f4", ("time", "y", "x"), zlib=True, complevel=1, chunksizes=(1, 256, 1024))
        v.long_name = "a field \u00b0C"
        rng = np.random.default_rng(3)
        for i in range(n):
            t[i] = i * 0.5
            v[i] = (np.round(rng.normal(size=(256, 1024)) * 64) / 64 + i).astype("f4")
    why = plan_text("-m", "64M", src, os.path.join(tmp, "nc-out.nc"))
    check("netCDF-4 records of 1 MiB: the plan takes the direct path", why.startswith("direct: rows of"), why)
    out = both(tmp, "netCDF-4 whole file", [src], ["-s", "4"])[0]
    order = O.oracle_order(4, n)
    with netCDF4.Dataset(src) as a, netCDF4.Dataset(out) as b:
        check("netCDF-4: the same dimensions (time unlimited)",
              {k: (len(d), d.isunlimited()) for k, d in a.dimensions.items()} ==
              {k: (len(d), d.isunlimited()) for k, d in b.dimensions.items()})
        mine = {k: v for k, v in b.__dict__.items() if not k.startswith("h5shuf_")}  # the provenance added
        check("netCDF-4: the same global and variable attributes (besides h5shuf's provenance)",
              a.__dict__ == mine and all(a[k].__dict__ == b[k].__dict__ for k in a.variables),
              "%s vs %s" % (a.__dict__, b.__dict__))
        check("netCDF-4: records in the oracle's order",
              np.array_equal(b["field"][:], a["field"][:][order]) and np.array_equal(b["time"][:], a["time"][:][order]))


def case_oracle(tmp):
    a = os.path.join(tmp, "or-a.h5")
    make_records(a, 25, 4096, vlen=True)
    out = os.path.join(tmp, "or-out.h5")
    shuf_ok("-q", "-s", "21", "--strategy", "direct", "-m", "6M", a + ":/x,/y,/v", out)
    order = O.oracle_order(21, 25)
    with h5py.File(a, "r") as i, h5py.File(out, "r") as o:
        for name in ("x", "y"):
            ok, why = O.same_array(o[name][()], i[name][()][order])
            check("oracle: %s == input[rows sorted by (key, i)]" % name, ok, why)
        vi, vo = i["v"][()], o["v"][()]
        check("oracle: vlen v == input[order]", all(np.array_equal(vo[r], vi[order[r]]) for r in range(25)))
        check("oracle: attributes kept", o["x"].attrs["units"] == "counts")


def case_min_budget(tmp):
    big = os.path.join(tmp, "min-1m.h5")
    make_records(big, 10, 16384)
    out = os.path.join(tmp, "min-out.h5")
    _, err = O.run([O.H5SHUF, "-s", "1", "-m", "1M", big + ":/x,/y", out], expect_rc=1)
    m = re.search(r"too small for the direct path: at least (\d+) bytes", err)
    check("too small a budget: the error names the direct path's minimum, the file and dataset",
          m is not None and err.startswith("h5shuf: %s:/x: " % big) and len(err.strip().splitlines()) == 1, err)
    if not m:
        return
    need = int(m.group(1))
    check("that minimum is a few rows (1 MiB each): under 5", need < 5 << 20, str(need))
    shuf_ok("-q", "-s", "1", "-m", str(need), big + ":/x,/y", out)
    check("the run succeeds at the minimum", os.path.exists(out))
    os.unlink(out)
    O.run([O.H5SHUF, "-q", "-s", "1", "-m", str(need - 1), big + ":/x,/y", out], expect_rc=1)
    check("one byte below it fails, and leaves no output", not os.path.exists(out))
    why = plan_text("-m", str(need), big + ":/x,/y", out)
    check("at the minimum the plan is direct", why.startswith("direct:"), why)


def main():
    if len(sys.argv) != 2:
        print("usage: %s H5SHUF" % sys.argv[0], file=sys.stderr)
        return 2
    O.H5SHUF = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="direct_h5py.") as tmp:
        scratch = os.path.join(tmp, "scratch")
        os.mkdir(scratch)
        os.environ["TMPDIR"] = scratch
        O.run_case("the plan's choice", case_choice, tmp)
        O.run_case("byte identity with the two passes", case_identity, tmp)
        O.run_case("the oracle", case_oracle, tmp)
        O.run_case("a netCDF-4 file of large records", case_netcdf, tmp)
        O.run_case("the minimum budget", case_min_budget, tmp)
        left = [f for f in os.listdir(tmp) if ".h5shuf-" in f] + os.listdir(scratch)
        check("no temporary or scratch file left behind", not left, str(left))
    print("%d passed, %d failed" % (O.PASSED, O.FAILED), flush=True)
    return 0 if O.FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
