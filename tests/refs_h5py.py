#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""refs_h5py: datasets of references shuffled as rows, each reference rewritten to the output's object.

usage: /usr/bin/python3 tests/refs_h5py.py PATH/TO/h5shuf

The input is written here by h5py: beside /data/x (row i holds i) and a padding dataset, datasets whose
rows hold references (row i's targets chosen by i): /data/r (object references), /data/r2 (two a row),
/data/c (a compound of an int and an object reference) and /data/reg (region references into /tab, which
has other rows and is copied).  The checks, by h5py:
  - whole-file mode: every reference of output row j points at the output's object of the path that input
    row x[j, 0] pointed at (a region at the same selection, by its values), and /data/x is the input's
    rows in the contract's order (tests/corpus/oracle.py);
  - one output for every strategy, budget and thread count (auto, two-pass at -m 3M with several piles,
    direct, -j 1 and 2): the same bytes; --check passes; with --shards 2 each file's references point at
    its own objects; h5shuf verify fails an output whose reference was made to point elsewhere;
  - dataset mode: a reference to an object the output does not hold is refused with one line naming the
    file, the dataset and the target (nothing left), and written null with --drop-references (a warning
    with the count); a region reference into a shuffled dataset is refused, and nulled on request;
  - rows of references from two input files, and variable-length sequences of references, are refused
    with one line.
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
import oracle  # noqa: E402

PASSED = FAILED = 0
N = 3000
SEED = 5
# the objects row i's references point at, by path: /data/r row i -> TARGETS[i % 6]
TARGETS = ["/", "/data", "/data/x", "/meta", "/meta/info", "/tab"]
TAB_ROWS = 7


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
    r = subprocess.run([h5shuf] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def refused(name, rc, err, infile, outdir, pattern):
    """A clean refusal: exit 1, one line naming infile and matching pattern, nothing in outdir."""
    lines = err.strip().splitlines()
    left = os.listdir(outdir)
    ok = rc == 1 and len(lines) == 1 and infile in lines[0] and re.search(pattern, lines[0]) and not left
    return check(name, ok, "exit %s, stderr %r, left %s" % (rc, err, left))


def region(i):
    """The selection of /tab row i's region reference points at: (row, columns)."""
    return i % TAB_ROWS, slice(0, i % 4 + 1)


def make(path):
    with h5py.File(path, "w") as f:
        g = f.create_group("data")
        x = g.create_dataset("x", data=np.stack([np.arange(N), -np.arange(N)], 1), chunks=(500, 2))
        g.create_dataset("pad", data=np.ones((N, 96)), chunks=(500, 96))  # rows large enough for several piles
        meta = f.create_group("meta")
        info = meta.create_dataset("info", data=np.arange(5))
        tab = f.create_dataset("tab", data=np.arange(TAB_ROWS * 4).reshape(TAB_ROWS, 4))  # other rows: copied
        objs = {"/": f, "/data": g, "/data/x": x, "/meta": meta, "/meta/info": info, "/tab": tab}
        refs = [objs[p].ref for p in TARGETS]
        k = len(refs)
        r = g.create_dataset("r", (N,), dtype=h5py.ref_dtype, chunks=(500,))
        r[...] = np.array([refs[i % k] for i in range(N)], dtype=h5py.ref_dtype)
        r2 = g.create_dataset("r2", (N, 2), dtype=h5py.ref_dtype, chunks=(500, 2))
        r2[...] = np.array([[refs[i % k], refs[(i + 1) % k]] for i in range(N)], dtype=h5py.ref_dtype)
        ct = np.dtype([("id", "<i4"), ("ref", h5py.ref_dtype)])
        c = np.zeros(N, dtype=ct)
        c["id"] = np.arange(N)
        c["ref"] = [refs[(i + 2) % k] for i in range(N)]
        g.create_dataset("c", data=c, chunks=(500,))
        reg = g.create_dataset("reg", (N,), dtype=h5py.regionref_dtype, chunks=(500,))
        regs = [tab.regionref[region(i)] for i in range(TAB_ROWS * 4)]
        reg[...] = np.array([regs[i % len(regs)] for i in range(N)], dtype=h5py.regionref_dtype)


def targets_of(f):
    """The output's TARGETS by address, for name()."""
    return {h5py.h5o.get_info(f[p].id).addr: p for p in TARGETS if p in f}


def name(f, ref, by_addr):
    """The path of ref's target among TARGETS (by address: H5Iget_name searches the file each time)."""
    if not ref:
        return None
    return by_addr.get(h5py.h5o.get_info(h5py.h5r.dereference(ref, f.id)).addr, "?")


def check_rows(tag, fi, fo, paths, rows=None):
    """Every reference of the output's rows points at the output's object of the input row's target path
    (paths: the datasets to check); rows: the input row of each output row (else /data/x[:, 0])."""
    src = fo["data/x"][:, 0] if rows is None else rows
    k = len(TARGETS)
    bad = []
    data = {p: fo["data/" + p][()] for p in paths}
    tab_in, tab, at = fi["tab"][()], fo["tab"], targets_of(fo)
    for j, i in enumerate(src):
        i = int(i)
        if "r" in paths and name(fo, data["r"][j], at) != TARGETS[i % k]:
            bad.append(("r", j, name(fo, data["r"][j], at), TARGETS[i % k]))
        if "r2" in paths and [name(fo, q, at) for q in data["r2"][j]] != [TARGETS[i % k], TARGETS[(i + 1) % k]]:
            bad.append(("r2", j))
        if "c" in paths:
            row = data["c"][j]
            if row["id"] != i or name(fo, row["ref"], at) != TARGETS[(i + 2) % k]:
                bad.append(("c", j))
        if "reg" in paths:  # the selection by its bounds; the first rows' also by the values h5py reads
            q = data["reg"][j]
            row, cols = region(i % (TAB_ROWS * 4))
            bounds = h5py.h5r.get_region(q, tab.id).get_select_bounds()
            if name(fo, q, at) != "/tab" or bounds != ((row, 0), (row, cols.stop - 1)) or (
                    j < 20 and not np.array_equal(np.ravel(tab[q]), np.ravel(tab_in[row, cols]))):
                bad.append(("reg", j, bounds))
        if len(bad) > 3:
            break
    return check("%s: each reference points at the output's object of its input row's target" % tag, not bad, bad)


def whole_file(h5shuf, d, src):
    perm = oracle.order(SEED, N)
    outs = {}
    runs = {"auto": [], "two-pass -m 3M": ["--strategy", "two-pass", "-m", "3M"],
            "two-pass -m 3M -j 1": ["--strategy", "two-pass", "-m", "3M", "-j", "1"],
            "direct -j 2": ["--strategy", "direct", "-j", "2"], "auto -j 1": ["-j", "1"]}
    for tag, extra in runs.items():
        out = os.path.join(d, "wf-%d.h5" % len(outs))
        rc, err = run(h5shuf, ["-v", "-s", SEED] + extra + [src, out])
        if check("whole-file, %s: exit 0" % tag, rc == 0, err):
            outs[tag] = out
            if "two-pass" in tag:
                m = re.search(r"piles (\d+)", err)
                check("whole-file, %s: several piles" % tag, m and int(m.group(1)) > 1, err)
    sums = {tag: md5(p) for tag, p in outs.items()}
    check("whole-file: one output for every strategy, budget and thread count (md5)",
          len(sums) == len(runs) and len(set(sums.values())) == 1, sums)
    if "auto" not in outs:
        return
    out = outs["auto"]
    with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
        check("whole-file: /data/x is the input's rows in the contract's order",
              np.array_equal(fo["data/x"][()], fi["data/x"][()][perm]))
        check_rows("whole-file", fi, fo, ("r", "r2", "c", "reg"))
    rc, err = run(h5shuf, ["-q", "-s", SEED, "--check", src, os.path.join(d, "checked.h5")])
    check("whole-file: --check passes (references compared by target)", rc == 0, err)
    # A reference made to point elsewhere (row 0's at its second target in /data/r2): verify fails the output.
    bad = os.path.join(d, "tampered.h5")
    shutil.copy(out, bad)
    with h5py.File(bad, "r+") as fo:
        fo["data/r"][0] = fo["data/r2"][0][1]
    rc, err = run(h5shuf, ["verify", src, bad])
    check("whole-file: verify fails an output with a reference pointing elsewhere", rc == 1 and "differ" in err, err)
    rc, err = run(h5shuf, ["verify", src, out])
    check("whole-file: verify passes the output", rc == 0, err)
    # Shards: each file's references are made to its own objects.
    sd = os.path.join(d, "shards")
    os.makedirs(sd)
    rc, err = run(h5shuf, ["-q", "-s", SEED, "--shards", "2", src, os.path.join(sd, "s.h5")])
    if check("whole-file, --shards 2: exit 0", rc == 0, err):
        files = sorted(os.listdir(sd))
        with h5py.File(src, "r") as fi:
            for fn in files:
                with h5py.File(os.path.join(sd, fn), "r") as fo:
                    check_rows("whole-file, shard %s" % fn, fi, fo, ("r", "r2", "c", "reg"))


def dataset_mode(h5shuf, d, src):
    perm = oracle.order(SEED, N)
    outdir = os.path.join(d, "ds")
    os.makedirs(outdir)
    out = os.path.join(outdir, "o.h5")
    rc, err = run(h5shuf, ["-q", "-s", SEED, src + ":/data/x,/data/r", out])
    refused("dataset mode: a reference to an object the output does not hold is refused, naming the target",
            rc, err, src, outdir, r":/data/r: refers to /meta, which is not in the output.*--drop-references")
    rc, err = run(h5shuf, ["-q", "-s", SEED, "--drop-references", "--check", src + ":/data/x,/data/r,/data/c", out])
    lines = err.strip().splitlines()
    if check("dataset mode: --drop-references runs (exit 0) and warns once a dataset with the count",
             rc == 0 and len(lines) == 2 and re.search(r"/data/r: refers to /meta, .*null reference, and 1499 more", err),
             "exit %s: %r" % (rc, err)):
        kept = {"/", "/data", "/data/x"}
        with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
            check("dataset mode: /data/x is the input's rows in the contract's order",
                  np.array_equal(fo["data/x"][()], fi["data/x"][()][perm]))
            k = len(TARGETS)
            at = targets_of(fo)
            got = [name(fo, q, at) for q in fo["data/r"][()]]
            want = [TARGETS[int(i) % k] if TARGETS[int(i) % k] in kept else None for i in fo["data/x"][:, 0]]
            check("dataset mode: references to /, /data and /data/x point at the output's, the others are null",
                  got == want, [(a, b) for a, b in zip(got, want) if a != b][:4])
            got = [name(fo, q, at) for q in fo["data/c"]["ref"]]
            want = [TARGETS[(int(i) + 2) % k] if TARGETS[(int(i) + 2) % k] in kept else None for i in fo["data/c"]["id"]]
            check("dataset mode: the compound's references likewise, its ids in the rows' order",
                  got == want and np.array_equal(fo["data/c"]["id"], fo["data/x"][:, 0]))
    os.unlink(out) if os.path.exists(out) else None
    rc, err = run(h5shuf, ["-q", "-s", SEED, src + ":/data/x,/data/reg", out])
    refused("dataset mode: a region reference into a dataset the output does not hold is refused", rc, err, src, outdir,
            r":/data/reg: holds a region reference into /tab, which is not in the output")
    # A region reference into a shuffled dataset: its rows moved.
    src2 = os.path.join(d, "self.h5")
    with h5py.File(src2, "w") as f:
        x = f.create_dataset("x", data=np.arange(40))
        reg = f.create_dataset("reg", (40,), dtype=h5py.regionref_dtype)
        reg[...] = np.array([x.regionref[i:i + 2] for i in range(40)], dtype=h5py.regionref_dtype)
    rc, err = run(h5shuf, ["-q", "-s", SEED, src2, out])
    refused("region rows into a shuffled dataset are refused", rc, err, src2, outdir,
            r":/reg: holds a region reference into /x, a shuffled dataset: its rows moved")
    rc, err = run(h5shuf, ["-q", "-s", SEED, "--drop-references", "--check", src2, out])
    if check("region rows into a shuffled dataset: --drop-references nulls them (exit 0, --check passes)",
             rc == 0 and "null" in err, err):
        with h5py.File(out, "r") as fo:
            check("region rows into a shuffled dataset: every one null", not any(bool(q) for q in fo["reg"][()]))
    os.unlink(out) if os.path.exists(out) else None
    src3 = os.path.join(d, "vlenrefs.h5")
    with h5py.File(src3, "w") as f:
        x = f.create_dataset("x", data=np.arange(4))
        v = f.create_dataset("v", (4,), dtype=h5py.vlen_dtype(h5py.ref_dtype))
        v[0] = np.array([x.ref], dtype=h5py.ref_dtype)
    rc, err = run(h5shuf, ["-q", "-s", SEED, src3 + ":/v", out])
    refused("variable-length sequences of references are refused", rc, err, src3, outdir,
            r":/v: unsupported variable-length sequences of references")
    rc, err = run(h5shuf, ["-q", "-s", SEED, src, src, out])
    refused("rows of references from two input files are refused", rc, err, src, outdir,
            r"/data/\w+: rows of references from more than one input file are not supported")


def main():
    h5shuf = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="h5shuf-refs.") as d:
        src = os.path.join(d, "refs.h5")
        make(src)
        for case in (whole_file, dataset_mode):
            sub = os.path.join(d, case.__name__)
            os.makedirs(sub)
            try:
                case(h5shuf, sub, src)
            except Exception as exc:  # noqa: BLE001 - an unreadable output fails its case, the rest go on
                check("%s: h5py reads the output" % case.__name__, False, "%s: %s" % (type(exc).__name__, exc))
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
