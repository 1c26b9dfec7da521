#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""netcdf_dims: netCDF-4 dimensions without a coordinate variable hold no rows (issue 49).

usage: /usr/bin/python3 tests/netcdf_dims.py PATH/TO/h5shuf

netCDF-C stores a dimension that has no coordinate variable as a dimension scale that is no variable:
a float dataset of the dimension's length when it is defined (an unlimited one: (0,), extendible, never
extended), never written, whose NAME begins "This is a netCDF dimension but not a netCDF variable"
(libhdf5/nc4hdf.c, nc4_create_dim_wo_var).  Files made here with netCDF4-python:
  rec.nc   rec (unlimited, no variable) with ce(rec) int32 and dd(rec, n) float64 zlib on it; n (3) no
           variable either;
  fix.nc   sample (7, fixed, no variable) with X(sample, f) float32 and y(sample) int64.
Each is shuffled in whole-file mode and in dataset mode (rec.nc:/ce alone, which brings its dim-0 scale
along; rec.nc:/ce,/dd; fix.nc:/y), and each output must: have the variables' values in the oracle's order
(numpy Philox, oracle_h5py.py), one permutation for all; keep each dimension-only scale as it is (shape,
maxshape, no storage written, still attached both ways: DIMENSION_LIST and REFERENCE_LIST); read in
netCDF4-python (dimensions, unlimited flag and length, variables, attributes); have `ncdump -h` equal to
the input's but for line 1 and h5shuf's provenance (dataset mode: but for the variables and dimensions
not named);
and pass `h5shuf verify`.  One line per check, PASS or FAIL; the last line "N passed, M failed".
"""

import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as o  # noqa: E402  (the oracle, the checks' bookkeeping)

check = o.check
DIM_ONLY = b"This is a netCDF dimension but not a netCDF variable"


def shuf(*args, rc=0):
    return o.run([H5SHUF] + [str(a) for a in args], expect_rc=rc)


def make_rec(path):
    import netCDF4
    rng = np.random.default_rng(49)
    ds = netCDF4.Dataset(path, "w", format="NETCDF4")
    ds.createDimension("rec", None)
    ds.createDimension("n", 3)
    ce = ds.createVariable("ce", "i4", ("rec",))
    ce.long_name = "count"
    dd = ds.createVariable("dd", "f8", ("rec", "n"), zlib=True)
    ce[:] = rng.integers(-1000, 1000, 5).astype(np.int32)
    dd[:] = rng.random((5, 3))
    ds.close()


def make_fix(path):
    import netCDF4
    rng = np.random.default_rng(50)
    ds = netCDF4.Dataset(path, "w", format="NETCDF4")
    ds.createDimension("sample", 7)
    ds.createDimension("f", 2)
    x = ds.createVariable("X", "f4", ("sample", "f"))
    y = ds.createVariable("y", "i8", ("sample",))
    x[:] = rng.random((7, 2)).astype(np.float32)
    y[:] = np.arange(7) * 10
    ds.close()


def ncdump_h(path, drop=()):
    """ncdump -h without line 1, h5shuf's provenance and the lines of the variables in drop (with their
    attributes), and without a heading of global attributes left empty."""
    text = subprocess.run(["ncdump", "-h", path], stdout=subprocess.PIPE, check=True).stdout.decode()
    out, skip, section = [], False, ""
    for line in text.splitlines()[1:]:
        if line.startswith("\t\t:h5shuf_"):
            continue
        words = line.strip().split(" ")
        if line.startswith("\t") and not line.startswith("\t\t") and len(words) > 1:
            skip = (words[0] if section == "dimensions:" else words[1].split("(")[0]) in drop
        elif not line.startswith("\t"):
            skip, section = False, line
        if not skip:
            out.append(line)
    if "// global attributes:" in out and not any(l.startswith("\t\t:") for l in out[out.index("// global attributes:"):]):
        i = out.index("// global attributes:")
        del out[i - 1:i + 1]
    return out


def scale_state(f, path):
    """What a dimension-only scale is: shape, maxshape, storage bytes, and the datasets it lists."""
    d = f[path]
    refs = sorted(f[r].name for r, _ in d.attrs["REFERENCE_LIST"]) if "REFERENCE_LIST" in d.attrs else []
    return (d.shape, d.maxshape, d.id.get_storage_size(), bytes(d.attrs["NAME"]).startswith(DIM_ONLY), refs)


def attached(f, var, dim, scale):
    return any(f[r].name == scale for r in f[var].attrs["DIMENSION_LIST"][dim])


def case(tmp, make, name, spec, records, scales, dropped, seed):
    """Shuffle name (spec: "" for the whole file, else ":/a,/b") and check the output."""
    inp = os.path.join(tmp, name)
    if not os.path.exists(inp):
        make(inp)
    tag = "%s%s" % (name, spec or " (whole file)")
    out = os.path.join(tmp, "out-%s-%d.nc" % (name, seed))
    shuf("-q", "-s", seed, inp + spec, out)
    with h5py.File(inp, "r") as fi, h5py.File(out, "r") as fo:
        n = fi[records[0]].shape[0]
        perm = o.oracle_order(seed, n)
        ok = all(np.array_equal(fo[p][...], fi[p][...][perm]) for p in records)
        check("%s: %s in the oracle's order, one permutation" % (tag, ",".join(records)), ok)
        for s, users in scales.items():
            want = scale_state(fi, s)
            want = want[:4] + ([u for u in want[4] if u in users],)
            got = scale_state(fo, s) if s in fo else None
            check("%s: %s kept as it is (shape, maxshape, nothing stored, its NAME, listing %s)" % (tag, s, users),
                  got == want, "output %s, want %s" % (got, want))
            check("%s: %s still attached to %s" % (tag, s, users),
                  s in fo and all(attached(fo, u, d, s) for u, d in users.items()))
        check("%s: %s not in the output" % (tag, ", ".join(dropped) or "nothing"),
              all(p not in fo for p in dropped))
    import netCDF4
    with netCDF4.Dataset(inp) as di, netCDF4.Dataset(out) as do:
        dims = lambda d, keep: [(k, len(v), v.isunlimited()) for k, v in d.dimensions.items() if k in keep]
        keep = set(do.dimensions)
        why = []
        if dims(di, keep) != dims(do, keep) or not keep:
            why.append("dimensions %s, input %s" % (dims(do, keep), dims(di, keep)))
        for v in do.variables:
            a, b = di.variables[v], do.variables[v]
            a.set_auto_maskandscale(False)
            b.set_auto_maskandscale(False)
            want = a[:][perm] if "/" + v in records else a[:]
            if a.dimensions != b.dimensions or not np.array_equal(np.asarray(b[:]), np.asarray(want)):
                why.append("%s differs" % v)
            if {k: a.getncattr(k) for k in a.ncattrs()} != {k: b.getncattr(k) for k in b.ncattrs()}:
                why.append("%s attributes differ" % v)
        check("%s: netCDF4-python reads it (dimensions, variables in the order, attributes)" % tag, not why,
              "; ".join(why))
    a, b = ncdump_h(inp, [p.strip("/") for p in dropped]), ncdump_h(out)
    check("%s: ncdump -h equal but for line 1 and h5shuf's provenance" % tag, a == b,
          "input %s | output %s" % (a, b))
    _, err = shuf("verify", inp + spec, out)
    check("%s: h5shuf verify passes" % tag, "a permutation" in err, err.strip())


def main():
    global H5SHUF
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    H5SHUF = os.path.abspath(sys.argv[1])
    try:
        import netCDF4  # noqa: F401
    except ImportError:
        print("SKIP netCDF4-python is not installed")
        return 77
    with tempfile.TemporaryDirectory(prefix="h5shuf-ncdims.") as tmp:
        rec = {"/rec": {"/ce": 0, "/dd": 0}, "/n": {"/dd": 1}}
        o.run_case("whole file, unlimited", case, tmp, make_rec, "rec.nc", "", ["/ce", "/dd"], rec, [], 1)
        o.run_case("dataset mode, ce alone", case, tmp, make_rec, "rec.nc", ":/ce", ["/ce"],
                   {"/rec": {"/ce": 0}}, ["/dd", "/n"], 2)
        o.run_case("dataset mode, ce and dd", case, tmp, make_rec, "rec.nc", ":/ce,/dd", ["/ce", "/dd"], rec, [], 3)
        fix = {"/sample": {"/X": 0, "/y": 0}, "/f": {"/X": 1}}
        o.run_case("whole file, fixed", case, tmp, make_fix, "fix.nc", "", ["/X", "/y"], fix, [], 4)
        o.run_case("dataset mode, y alone", case, tmp, make_fix, "fix.nc", ":/y", ["/y"],
                   {"/sample": {"/y": 0}}, ["/X", "/f"], 5)
    print("%d passed, %d failed" % (o.PASSED, o.FAILED), flush=True)
    return 0 if o.FAILED == 0 and o.PASSED > 0 else 1


H5SHUF = None

if __name__ == "__main__":
    sys.exit(main())
