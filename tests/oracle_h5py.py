#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""oracle_h5py: check the h5shuf CLI against an independent oracle written with h5py and numpy.

usage: /usr/bin/python3 tests/oracle_h5py.py PATH/TO/h5shuf PATH/TO/h5shuf_gendata
       /usr/bin/python3 tests/oracle_h5py.py --real PATH/TO/shared/real PATH/TO/h5shuf PATH/TO/h5shuf_gendata

The first form runs the synthetic cases, which need nothing but this machine and never skip (ctest test
oracle_h5py).  The second runs only the real files of ../shared/real (ctest test oracle_real): when that
directory is absent it says so and exits 77, which ctest reports as a skip; a directory without one of
the expected files is a failure.

The contract under test (docs/design.md section 2, include/h5shuf.h): row i, numbered over all inputs in
command-line order, gets the key K(seed, i) = word 0 of Philox4x64-10 with counter (i, 0, 0, 0) and key
(seed, 0); the output is the input rows sorted by (key, i).  The oracle computes the keys twice, with a
pure-Python Philox4x64-10 checked against the Random123 known-answer vectors and with numpy's Philox
(vectorised), and never looks at anything h5shuf computes except the seed it stores when none is given.

Every input file is written by h5py (an independent writer), except the generator's example and the
real files.  Each check prints one line, PASS or FAIL; the last line is "N passed, M failed" and the exit
status is 0 only when nothing failed (77 for a skipped --real run, 1 when anything failed).
"""

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import traceback

import h5py
import numpy as np

M64 = (1 << 64) - 1
PASSED = 0
FAILED = 0


# --------------------------------------------------------------------------------------------------------
# Reporting


def check(name, ok, detail=""):
    """Record one check: print one line, count it."""
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("PASS %s" % name, flush=True)
    else:
        FAILED += 1
        print("FAIL %s%s" % (name, (": " + detail) if detail else ""), flush=True)
    return ok


def run_case(name, fn, *args):
    """Run one case; an exception (h5shuf failing, a missing dataset...) is one failed check."""
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - any error in a case is a test failure
        tb = traceback.format_exc().strip().splitlines()
        where = tb[-3].strip() if len(tb) >= 3 else ""
        check("%s (case aborted)" % name, False, "%s: %s [%s]" % (type(exc).__name__, exc, where))


# --------------------------------------------------------------------------------------------------------
# The oracle


def philox4x64_10(ctr, key):
    """Philox4x64-10 (Salmon et al., SC'11) in plain Python integers: 4 counter words, 2 key words."""
    c = list(ctr)
    k = list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B97F4A7C15) & M64, (k[1] + 0xBB67AE8584CAA73B) & M64]
        p0 = 0xD2E7470EE14C6C93 * c[0]
        p1 = 0xCA5A826395121157 * c[2]
        c = [(p1 >> 64) ^ c[1] ^ k[0], p1 & M64, (p0 >> 64) ^ c[3] ^ k[1], p0 & M64]
    return c


def key_ref(seed, i):
    """K(seed, i) from the pure-Python generator."""
    return philox4x64_10([i, 0, 0, 0], [seed, 0])[0]


def keys_np(seed, i0, n):
    """K(seed, i) for i = i0 .. i0+n-1, vectorised with numpy's Philox (it increments before use)."""
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    gen = np.random.Philox(key=seed, counter=(i0 - 1) % (1 << 256))
    return gen.random_raw(4 * n)[::4].copy()


def oracle_order(seed, n):
    """The output order: row indices sorted by (key, i)."""
    keys = keys_np(seed, 0, n)
    return np.lexsort((np.arange(n, dtype=np.uint64), keys))


# --------------------------------------------------------------------------------------------------------
# Helpers


def run(args, expect_rc=0):
    """Run a command; return (stdout, stderr).  A different exit status raises."""
    proc = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if expect_rc is not None and proc.returncode != expect_rc:
        raise RuntimeError("%s exited %d (expected %d): %s" % (
            " ".join(str(a) for a in args), proc.returncode, expect_rc, (err or out).strip()[:400]))
    return out, err


def shuf(*args):
    return run([H5SHUF] + list(args))


def file_hash(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def same_array(got, want):
    """Exact equality: dtype (with byte order), shape and every byte.  Returns (ok, detail)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype != want.dtype:
        return False, "dtype %s, expected %s" % (got.dtype.descr, want.dtype.descr)
    if got.shape != want.shape:
        return False, "shape %s, expected %s" % (got.shape, want.shape)
    gb = np.ascontiguousarray(got).view(np.uint8).reshape(-1) if got.size else np.zeros(0, np.uint8)
    wb = np.ascontiguousarray(want).view(np.uint8).reshape(-1) if want.size else np.zeros(0, np.uint8)
    if gb.tobytes() == wb.tobytes():
        return True, ""
    rb = want.dtype.itemsize * int(np.prod(want.shape[1:], dtype=np.int64)) if want.ndim else 1
    diff = np.nonzero(gb != wb)[0]
    first = int(diff[0]) // max(rb, 1)
    return False, "%d of %d bytes differ, first in row %d" % (diff.size, gb.size, first)


def read(ds):
    return ds[()]


def attr_items(obj):
    """{name: (dtype, shape, value)} of an object's attributes, read without conversion."""
    out = {}
    for name in obj.attrs:
        aid = obj.attrs.get_id(name)
        out[name] = (aid.dtype, aid.shape, obj.attrs[name])
    return out


def attrs_kept(src, dst, skip=()):
    """Every attribute of src is on dst with the same type, shape and value.  Returns (ok, detail)."""
    a = attr_items(src)
    b = attr_items(dst)
    for name, (dt, shape, val) in a.items():
        if name in skip:
            continue
        if name not in b:
            return False, "attribute %r missing" % name
        dt2, shape2, val2 = b[name]
        if dt != dt2 or shape != shape2:
            return False, "attribute %r: %s %s, expected %s %s" % (name, dt2, shape2, dt, shape)
        if dt.kind == "O":
            if not np.array_equal(np.asarray(val, dtype=object), np.asarray(val2, dtype=object)):
                return False, "attribute %r: %r, expected %r" % (name, val2, val)
        elif np.asarray(val).tobytes() != np.asarray(val2).tobytes():
            return False, "attribute %r: %r, expected %r" % (name, val2, val)
    return True, ""


def layout(ds):
    return {"chunks": ds.chunks, "compression": ds.compression, "compression_opts": ds.compression_opts,
            "shuffle": ds.shuffle, "fletcher32": ds.fletcher32}


def check_dataset(tag, out_ds, in_ds, want, check_layout=True):
    """Data bitwise, HDF5 file type, attributes and (optionally) storage layout of one output dataset."""
    ok, why = same_array(read(out_ds), want)
    check("%s: data == input[oracle order]" % tag, ok, why)
    same_type = out_ds.id.get_type() == in_ds.id.get_type()
    check("%s: file datatype and shape identical" % tag,
          same_type and out_ds.dtype == in_ds.dtype and out_ds.shape == in_ds.shape,
          "type %s shape %s, expected %s %s (H5Tequal %s)" % (
              out_ds.dtype.descr, out_ds.shape, in_ds.dtype.descr, in_ds.shape, same_type))
    ok, why = attrs_kept(in_ds, out_ds)
    check("%s: dataset attributes kept" % tag, ok, why)
    if check_layout:
        lo, li = layout(out_ds), layout(in_ds)
        check("%s: chunks/filters kept" % tag, lo == li, "output %s, input %s" % (lo, li))


def check_provenance(tag, path, seed, input_names):
    with h5py.File(path, "r") as f:
        a = f.attrs
        aid = a.get_id("h5shuf_seed") if "h5shuf_seed" in a else None
        ok = aid is not None and aid.dtype == np.dtype("uint64") and aid.shape in ((), (1,)) \
            and int(np.asarray(a["h5shuf_seed"]).reshape(-1)[0]) == seed
        check("%s: root attribute h5shuf_seed is uint64 %d" % (tag, seed), ok,
              "got %r" % (((aid.dtype, a["h5shuf_seed"]) if aid is not None else None),))
        bad = []
        for name in ("h5shuf_inputs", "h5shuf_version", "h5shuf_key"):
            if name not in a:
                bad.append("%s missing" % name)
                continue
            v = a[name]
            if isinstance(v, bytes):
                v = v.decode("utf-8", "replace")
            if not isinstance(v, str) or not v:
                bad.append("%s is %r, not a string" % (name, v))
            elif name == "h5shuf_inputs":
                for n in input_names:
                    if n not in v:
                        bad.append("h5shuf_inputs %r does not name %s" % (v, n))
        check("%s: provenance strings h5shuf_inputs/_version/_key" % tag, not bad, "; ".join(bad))


def stored_seed(path):
    with h5py.File(path, "r") as f:
        return int(np.asarray(f.attrs["h5shuf_seed"]).reshape(-1)[0])


# --------------------------------------------------------------------------------------------------------
# Case 0: the oracle itself


def case_oracle_selftest():
    # Random123 kat_vectors, philox4x64 10 rounds.
    kat = [
        ([0, 0, 0, 0], [0, 0],
         [0x16554d9eca36314c, 0xdb20fe9d672d0fdc, 0xd7e772cee186176b, 0x7e68b68aec7ba23b]),
        ([M64] * 4, [M64, M64],
         [0x87b092c3013fe90b, 0x438c3c67be8d0224, 0x9cc7d7c69cd777b6, 0xa09caebf594f0ba0]),
        ([0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89],
         [0x452821e638d01377, 0xbe5466cf34e90c6c],
         [0xa528f45403e61d95, 0x38c72dbd566e9788, 0xa5a1610e72fd18b5, 0x57bd43b5e52b7fe6]),
    ]
    bad = [i for i, (c, k, w) in enumerate(kat) if philox4x64_10(c, k) != w]
    check("oracle: pure-Python Philox4x64-10 matches the Random123 known answers", not bad,
          "vectors %s differ" % bad)
    cases = [(0, 0), (1, 0), (1, 1), (42, 7), (M64, M64), (M64, 0), (123456789, 10 ** 12), (7, 2 ** 63)]
    bad = []
    for seed, i in cases:
        if int(keys_np(seed, i, 1)[0]) != key_ref(seed, i):
            bad.append((seed, i))
    # A vectorised run across a block boundary agrees with one-at-a-time.
    seed, i0 = 987654321, 5
    vec = keys_np(seed, i0, 9)
    if [int(v) for v in vec] != [key_ref(seed, i0 + j) for j in range(9)]:
        bad.append(("vector", seed, i0))
    check("oracle: numpy Philox(counter=i-1).random_raw(4n)[::4] == K(seed, i)", not bad, "%s" % bad)


# --------------------------------------------------------------------------------------------------------
# Case 1: files written by h5py, one dataset each


def case_h5py_types(tmp):
    rng = np.random.default_rng(20240601)

    f32 = rng.standard_normal((3000, 5)).astype(np.float32)
    # Special values whose bits must survive (no conversion): NaN payloads, -0.0, infinities.
    specials = np.array([0x7fc00001, 0xffc12345, 0x80000000, 0x7f800000, 0xff800000], dtype=np.uint32)
    f32.reshape(-1)[:5] = specials.view(np.float32)
    f32.reshape(-1)[-5:] = specials.view(np.float32)

    comp_dt = np.dtype([("a", "<i4"), ("b", ">f8"), ("s", "S5")])
    comp = np.zeros(400, dtype=comp_dt)
    comp["a"] = rng.integers(-2 ** 31, 2 ** 31, 400, dtype=np.int64).astype(np.int32)
    comp["b"] = rng.standard_normal(400)
    comp["s"] = [("r%d" % i).encode()[:5] for i in range(400)]

    s7 = np.array([("s%06d" % (i * 7919 % 1000003)).encode()[:7] for i in range(300)], dtype="S7")

    specs = [
        # name, path, data, create_dataset kwargs, seed
        ("int64 1-D", "/i64", rng.integers(-2 ** 63, 2 ** 63 - 1, 1000, dtype=np.int64, endpoint=True),
         {}, 1),
        ("float32 2-D gzip+shuffle", "/f32", f32,
         {"chunks": (256, 5), "compression": "gzip", "compression_opts": 6, "shuffle": True}, 0),
        ("uint8 4-D contiguous", "/u8", rng.integers(0, 256, (700, 8, 8, 3), dtype=np.uint8),
         {}, 3141592653589793238),
        ("big-endian float64", "/deep/nested/f8be", rng.standard_normal((500, 3)).astype(">f8"),
         {"chunks": (64, 3), "fletcher32": True}, M64),
        ("compound", "/comp", comp, {"chunks": (50,), "compression": "gzip", "compression_opts": 1}, 99),
        ("strings S7", "/s7", s7, {}, 12345),
    ]
    for k, (name, path, data, kw, seed) in enumerate(specs):
        inp = os.path.join(tmp, "t1_%d_in.h5" % k)
        out = os.path.join(tmp, "t1_%d_out.h5" % k)
        with h5py.File(inp, "w") as f:
            ds = f.create_dataset(path, data=data, **kw)
            ds.attrs["units"] = np.bytes_("furlongs")
            ds.attrs["scale"] = np.float64(0.125)
            ds.attrs["vec"] = np.arange(4, dtype=">i2")
            ds.attrs["label"] = "a variable-length string"
            ds.attrs["big"] = np.uint64(M64)
        try:
            shuf("-q", "-s", seed, "%s:%s" % (inp, path), "%s:%s" % (out, path))
        except Exception as exc:  # noqa: BLE001
            check("h5py %s: h5shuf ran" % name, False, str(exc))
            continue
        order = oracle_order(seed, len(data))
        with h5py.File(inp, "r") as fi, h5py.File(out, "r") as fo:
            check_dataset("h5py %s (seed %d)" % (name, seed), fo[path], fi[path], data[order])
        if k == 0:
            check_provenance("h5py %s" % name, out, seed, [os.path.basename(inp)])
        else:
            ok = stored_seed(out) == seed
            check("h5py %s: h5shuf_seed == %d" % (name, seed), ok, "stored %d" % stored_seed(out))


# --------------------------------------------------------------------------------------------------------
# Case 2: several inputs concatenated


def case_concat(tmp):
    rng = np.random.default_rng(7)
    lens = [100, 1, 57]
    parts = []
    names = []
    for k, n in enumerate(lens):
        p = os.path.join(tmp, "t2_%s.h5" % "abc"[k])
        data = rng.integers(-1000, 1000, (n, 3), dtype=np.int32)
        with h5py.File(p, "w") as f:
            f.create_dataset("x", data=data, chunks=(16, 3) if n > 1 else None)
        parts.append(data)
        names.append(p)
    whole = np.concatenate(parts)
    for seed in (17, 2 ** 40 + 3):
        out = os.path.join(tmp, "t2_out_%d.h5" % seed)
        shuf("-q", "-s", seed, *["%s:/x" % p for p in names], "%s:/x" % out)
        with h5py.File(out, "r") as fo:
            ok, why = same_array(fo["x"][()], whole[oracle_order(seed, len(whole))])
        check("concat 100+1+57 rows (seed %d): out == concat(a,b,c)[order]" % seed, ok, why)
    # The numbering follows the command line: reversing the inputs numbers the rows differently.
    seed = 17
    out = os.path.join(tmp, "t2_out_rev.h5")
    shuf("-q", "-s", seed, *["%s:/x" % p for p in reversed(names)], out)
    whole_rev = np.concatenate(parts[::-1])
    with h5py.File(out, "r") as fo:
        ok, why = same_array(fo["x"][()], whole_rev[oracle_order(seed, len(whole_rev))])
    check("concat in reverse order c,b,a: rows numbered in command-line order", ok, why)
    # An empty input in the middle contributes no rows and shifts no numbers.
    empty = os.path.join(tmp, "t2_empty.h5")
    with h5py.File(empty, "w") as f:
        f.create_dataset("x", shape=(0, 3), dtype=np.int32, maxshape=(None, 3), chunks=(16, 3))
    out = os.path.join(tmp, "t2_out_empty.h5")
    shuf("-q", "-s", seed, "%s:/x" % names[0], "%s:/x" % empty, "%s:/x" % names[2], out)
    w = np.concatenate([parts[0], parts[2]])
    with h5py.File(out, "r") as fo:
        ok, why = same_array(fo["x"][()], w[oracle_order(seed, len(w))])
    check("concat 100+0+57 rows: an empty input shifts nothing", ok, why)


# --------------------------------------------------------------------------------------------------------
# Case 3: whole-file mode, co-shuffled datasets


def case_whole_file(tmp):
    rng = np.random.default_rng(33)
    n = 500
    inp = os.path.join(tmp, "t3_in.h5")
    out = os.path.join(tmp, "t3_out.h5")
    X = rng.integers(0, 256, (n, 4, 4), dtype=np.uint8)
    y = rng.integers(-2 ** 62, 2 ** 62, n, dtype=np.int64)
    z = rng.standard_normal((n, 2)).astype(np.float32)
    meta = np.array([b"alpha", b"beta", b"gamma"], dtype="S10")
    with h5py.File(inp, "w") as f:
        f.attrs["title"] = "whole-file test"
        f.attrs["revision"] = np.int32(3)
        f.attrs["weights"] = np.array([0.5, 0.25], dtype="<f4")
        dx = f.create_dataset("X", data=X, chunks=(32, 4, 4), compression="gzip", shuffle=True)
        dx.attrs["description"] = np.bytes_("4x4 patches")
        f.create_dataset("y", data=y)
        dm = f.create_dataset("meta", data=meta)
        dm.attrs["kind"] = "names"
        g = f.create_group("g")
        g.attrs["group_note"] = "kept?"
        dz = g.create_dataset("z", data=z, chunks=(100, 2))
        dz.attrs["units"] = np.bytes_("m/s")
    seed = 424242
    shuf("-q", "-s", seed, inp, out)
    order = oracle_order(seed, n)
    with h5py.File(inp, "r") as fi, h5py.File(out, "r") as fo:
        check_dataset("whole-file /X", fo["X"], fi["X"], X[order])
        check_dataset("whole-file /y", fo["y"], fi["y"], y[order])
        check_dataset("whole-file /g/z", fo["g/z"], fi["g/z"], z[order])
        ok, why = same_array(fo["meta"][()], meta)
        check("whole-file /meta copied unchanged", ok and fo["meta"].id.get_type() == fi["meta"].id.get_type(),
              why or "file datatype differs")
        ok, why = attrs_kept(fi["meta"], fo["meta"])
        check("whole-file /meta attributes kept", ok, why)
        ok, why = attrs_kept(fi, fo)
        check("whole-file root attributes of the input kept", ok, why)
        ok, why = attrs_kept(fi["g"], fo["g"])
        check("whole-file group /g attributes kept", ok, why)
        names_in, names_out = [], []
        fi.visit(names_in.append)
        fo.visit(names_out.append)
        check("whole-file: same set of objects", sorted(names_in) == sorted(names_out),
              "input %s, output %s" % (sorted(names_in), sorted(names_out)))
    check_provenance("whole-file", out, seed, [os.path.basename(inp)])


# --------------------------------------------------------------------------------------------------------
# Case 4: memory-budget invariance


def done_counts(err):
    m = re.search(r"(\d+) restarts?, (\d+) piles? split", err)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def plan_piles(err):
    m = re.search(r"piles (\d+)", err)
    return int(m.group(1)) if m else None


def case_memory(tmp):
    rng = np.random.default_rng(44)
    n = 200000
    data = rng.standard_normal((n, 16)).astype(np.float32)
    inp = os.path.join(tmp, "t4_in.h5")
    with h5py.File(inp, "w") as f:
        f.create_dataset("x", data=data, chunks=(4096, 16), compression="gzip", compression_opts=1,
                         shuffle=True)
    seed = 2718281828
    runs = [
        ("-m 1G", ["-m", "1G"], None),
        ("-m 5M", ["-m", "5M"], "piles"),
        ("-m 5M --debug-pile-bound 1000", ["-m", "5M", "--debug-pile-bound", "1000"], "split"),
        ("-m 5M --debug-pile-bound 1000 --on-oversize restart",
         ["-m", "5M", "--debug-pile-bound", "1000", "--on-oversize", "restart"], "restart"),
    ]
    hashes = {}
    for label, opts, expect in runs:
        out = os.path.join(tmp, "t4_out_%d.h5" % len(hashes))
        _, err = shuf("-v", "-s", seed, *opts, "%s:/x" % inp, "%s:/x" % out)
        hashes[label] = file_hash(out)
        restarts, splits = done_counts(err)
        if expect == "piles":
            p = plan_piles(err)
            check("memory %s: the plan has several piles" % label, p is not None and p > 1,
                  "plan says piles %s" % p)
        elif expect == "split":
            check("memory %s: recursion happened" % label, splits is not None and splits > 0,
                  "restarts %s, splits %s" % (restarts, splits))
        elif expect == "restart":
            check("memory %s: a restart happened" % label, restarts is not None and restarts > 0,
                  "restarts %s, splits %s" % (restarts, splits))
        if label == "-m 1G":
            with h5py.File(out, "r") as fo:
                ok, why = same_array(fo["x"][()], data[oracle_order(seed, n)])
            check("memory -m 1G: 200000x16 float32 == input[oracle order]", ok, why)
    base = hashes["-m 1G"]
    for label, _, _ in runs[1:]:
        check("memory %s: output file bytes == -m 1G's" % label, hashes[label] == base,
              "sha256 %s vs %s" % (hashes[label][:16], base[:16]))

    # The brief's smallest bound, 20 rows, on a smaller input (very many sub-piles: deep recursion).
    n2 = 4000
    data2 = rng.integers(0, 2 ** 32, (n2, 16), dtype=np.uint32)
    inp2 = os.path.join(tmp, "t4_in2.h5")
    with h5py.File(inp2, "w") as f:
        f.create_dataset("x", data=data2, chunks=(512, 16))
    seed2 = 5
    hashes2 = []
    for k, opts in enumerate([["-m", "1G"], ["-m", "5M", "--debug-pile-bound", "20"],
                              ["-m", "5M", "--debug-pile-bound", "20", "--on-oversize", "restart"]]):
        out = os.path.join(tmp, "t4_out2_%d.h5" % k)
        shuf("-q", "-s", seed2, *opts, "%s:/x" % inp2, "%s:/x" % out)
        hashes2.append(file_hash(out))
        if k == 0:
            with h5py.File(out, "r") as fo:
                ok, why = same_array(fo["x"][()], data2[oracle_order(seed2, n2)])
            check("memory 4000x16 uint32 -m 1G == input[oracle order]", ok, why)
    check("memory --debug-pile-bound 20 (recurse): file bytes == -m 1G's", hashes2[1] == hashes2[0])
    check("memory --debug-pile-bound 20 --on-oversize restart: file bytes == -m 1G's",
          hashes2[2] == hashes2[0])

    # Small rows on scratch: the rows' ids (8 bytes each, half again a 16-byte row) are packed (shuffle +
    # zstd-1) even when h5shuf leaves the rows uncompressed; only --scratch-compression none stores them
    # raw.  The two scratch files hold the same piles, chunks and rows, so packing must save at least
    # half of the ids' 8 bytes a row; the outputs are the same bytes, the oracle's order.
    n3 = 100000
    data3 = rng.integers(0, 2 ** 32, (n3, 4), dtype=np.uint32)  # random: no codec shrinks the rows
    inp3 = os.path.join(tmp, "t4_in3.h5")
    with h5py.File(inp3, "w") as f:
        f.create_dataset("x", data=data3, chunks=(8192, 4))
    scratch, hashes3 = [], []
    for k, opts in enumerate([[], ["--scratch-compression", "none"]]):
        out = os.path.join(tmp, "t4_out3_%d.h5" % k)
        js, _ = shuf("--json", "-s", 3, "-m", "2M", "--strategy", "two-pass", *opts, "%s:/x" % inp3, out)
        m = re.search(r'"scratch_bytes": (\d+)', js)
        scratch.append(int(m.group(1)) if m else None)
        hashes3.append(file_hash(out))
    with h5py.File(os.path.join(tmp, "t4_out3_0.h5"), "r") as fo:
        ok, why = same_array(fo["x"][()], data3[oracle_order(3, n3)])
    check("memory 100000x16-byte rows, two passes: == input[oracle order]", ok, why)
    check("memory 16-byte rows: --scratch-compression none writes the same bytes", hashes3[0] == hashes3[1])
    check("memory 16-byte rows: the scratch's ids packed by default (scratch bytes %s, ids raw %s)" % tuple(scratch),
          None not in scratch and scratch[1] >= n3 * 24 and scratch[0] <= scratch[1] - n3 * 4)


# --------------------------------------------------------------------------------------------------------
# Case 5: no seed given


def case_random_seed(tmp):
    rng = np.random.default_rng(55)
    n = 3000
    data = rng.integers(0, 2 ** 16, (n, 2), dtype=np.uint16)
    inp = os.path.join(tmp, "t5_in.h5")
    with h5py.File(inp, "w") as f:
        f.create_dataset("x", data=data)
    seeds = []
    for k in range(2):
        out = os.path.join(tmp, "t5_out_%d.h5" % k)
        _, err = shuf("-v", "%s:/x" % inp, "%s:/x" % out)
        seed = stored_seed(out)
        seeds.append(seed)
        with h5py.File(out, "r") as fo:
            ok, why = same_array(fo["x"][()], data[oracle_order(seed, n)])
        check("no -s, run %d: stored seed %d reproduces the order" % (k + 1, seed), ok, why)
        m = re.search(r"seed (\d+)", err)
        check("no -s, run %d: the seed printed by -v is the stored one" % (k + 1),
              m is not None and int(m.group(1)) == seed, "printed %s" % (m.group(1) if m else None))
    check("no -s: two runs store different seeds", seeds[0] != seeds[1], "both %d" % seeds[0])
    # Rerunning with the stored seed gives the same file bytes.
    out = os.path.join(tmp, "t5_rerun.h5")
    shuf("-q", "-s", seeds[0], "%s:/x" % inp, "%s:/x" % out)
    with h5py.File(out, "r") as a, h5py.File(os.path.join(tmp, "t5_out_0.h5"), "r") as b:
        ok, why = same_array(a["x"][()], b["x"][()])
    check("no -s: -s STORED_SEED repeats the run's data", ok, why)


# --------------------------------------------------------------------------------------------------------
# Case 6: N = 0 and N = 1


def case_tiny(tmp):
    specs = [
        ("N=0 int64 1-D", np.zeros(0, dtype=np.int64), {}),
        ("N=0 float32 (0,4) chunked", np.zeros((0, 4), dtype=np.float32),
         {"chunks": (8, 4), "maxshape": (None, 4)}),
        ("N=1 float64 (1,3)", np.array([[1.5, -0.0, np.inf]]), {}),
        ("N=1 S7", np.array([b"only"], dtype="S7"), {"chunks": (1,), "compression": "gzip"}),
    ]
    for k, (name, data, kw) in enumerate(specs):
        inp = os.path.join(tmp, "t6_%d_in.h5" % k)
        out = os.path.join(tmp, "t6_%d_out.h5" % k)
        with h5py.File(inp, "w") as f:
            f.create_dataset("d", data=data, **kw)
        try:
            shuf("-q", "-s", 11, "%s:/d" % inp, "%s:/d" % out)
        except Exception as exc:  # noqa: BLE001
            check("%s: h5shuf ran" % name, False, str(exc))
            continue
        if not check("%s: output file exists" % name, os.path.exists(out)):
            continue
        with h5py.File(out, "r") as fo:
            ok, why = same_array(fo["d"][()], data[oracle_order(11, len(data))])
            check("%s: shape, dtype and data equal" % name, ok, why)


# --------------------------------------------------------------------------------------------------------
# Case 7: the generator's example


def case_gendata(tmp):
    ex = os.path.join(tmp, "ex.h5")
    out = os.path.join(tmp, "ex_out.h5")
    run([GENDATA, "example", ex])
    seed = 8675309
    shuf("-q", "-s", seed, ex, out)
    with h5py.File(ex, "r") as fi, h5py.File(out, "r") as fo:
        ids_in = fi["ids"][()]
        n = len(ids_in)
        check("gendata example: input /ids is 0..N-1", np.array_equal(ids_in, np.arange(n)))
        order = oracle_order(seed, n)
        ids = fo["ids"][()]
        ok, why = same_array(ids, ids_in[order])
        check("gendata example: /ids == oracle order", ok, why)
        ok1, why1 = same_array(fo["X"][()], fi["X"][()][ids.astype(np.int64)])
        check("gendata example: /X[r] == input /X[ids[r]]", ok1, why1)
        ok2, why2 = same_array(fo["y"][()], fi["y"][()][ids.astype(np.int64)])
        check("gendata example: /y[r] == input /y[ids[r]]", ok2, why2)
        ok3, why3 = same_array(fo["classes"][()], fi["classes"][()])
        check("gendata example: /classes unchanged", ok3, why3)
        ok4, why4 = attrs_kept(fi["X"], fo["X"])
        check("gendata example: /X attributes kept", ok4, why4)


# --------------------------------------------------------------------------------------------------------
# Case 8: the real files


REAL_FILES = ("train_catvnoncat.h5", "test_catvnoncat.h5", "test_signs.h5")


def case_real(tmp, realdir):
    for fname in REAL_FILES:
        path = os.path.join(realdir, fname)
        if not check("real %s: present in %s" % (fname, realdir), os.path.exists(path)):
            continue
        out = os.path.join(tmp, "real_" + fname)
        try:
            shuf("-q", "-s", 1, path, out)
        except Exception as exc:  # noqa: BLE001
            check("real %s: h5shuf ran" % fname, False, str(exc))
            continue
        with h5py.File(path, "r") as fi, h5py.File(out, "r") as fo:
            xname = [k for k in fi if k.endswith("_x")][0]
            yname = [k for k in fi if k.endswith("_y")][0]
            x, y = fi[xname][()], fi[yname][()]
            order = oracle_order(1, len(y))
            ox, oy = fo[xname][()], fo[yname][()]
            ok, why = same_array(ox, x[order])
            check("real %s: %s == input[oracle order]" % (fname, xname), ok, why)
            ok, why = same_array(oy, y[order])
            check("real %s: %s == input[oracle order]" % (fname, yname), ok, why)
            # Each output (image, label) pair is a pair of the input, as a multiset.
            pairs_in = sorted(x[i].tobytes() + y[i].tobytes() for i in range(len(y)))
            pairs_out = sorted(ox[i].tobytes() + oy[i].tobytes() for i in range(len(oy)))
            check("real %s: (image, label) pairs are the input's pairs" % fname, pairs_in == pairs_out)
            ok, why = same_array(fo["list_classes"][()], fi["list_classes"][()])
            check("real %s: /list_classes unchanged" % fname, ok, why)


# --------------------------------------------------------------------------------------------------------


SKIPPED = 77  # ctest's SKIP_RETURN_CODE for oracle_real (tests/CMakeLists.txt)


def main():
    global H5SHUF, GENDATA
    args = sys.argv[1:]
    realdir = None
    if args[:1] == ["--real"] and len(args) == 4:
        realdir, args = args[1], args[2:]
    if len(args) != 2:
        print("usage: %s [--real REALDIR] H5SHUF H5SHUF_GENDATA" % sys.argv[0], file=sys.stderr)
        return 2
    H5SHUF = os.path.abspath(args[0])
    GENDATA = os.path.abspath(args[1])
    if realdir is not None and not os.path.isdir(realdir):
        print("SKIP real files: directory %s not found (the real inputs live beside the project, in "
              "../shared/real)" % os.path.abspath(realdir), flush=True)
        return SKIPPED
    with tempfile.TemporaryDirectory(prefix="oracle_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp  # h5shuf's scratch files go here too
        if realdir is not None:
            run_case("oracle self-test", case_oracle_selftest)  # the oracle these checks rely on
            run_case("real files", case_real, tmp, realdir)
        else:
            run_case("oracle self-test", case_oracle_selftest)
            run_case("h5py-written files", case_h5py_types, tmp)
            run_case("concatenated inputs", case_concat, tmp)
            run_case("whole-file mode", case_whole_file, tmp)
            run_case("memory invariance", case_memory, tmp)
            run_case("random seed", case_random_seed, tmp)
            run_case("N=0 and N=1", case_tiny, tmp)
            run_case("gendata example", case_gendata, tmp)
    print("%d passed, %d failed" % (PASSED, FAILED), flush=True)
    return 0 if FAILED == 0 and PASSED > 0 else 1


H5SHUF = GENDATA = None

if __name__ == "__main__":
    sys.exit(main())
