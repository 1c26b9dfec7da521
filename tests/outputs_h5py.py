#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""outputs_h5py: shards, splits, heads, the source index and the mixing report, checked with h5py + numpy.

usage: /usr/bin/python3 tests/outputs_h5py.py PATH/TO/h5shuf

The oracle is oracle_h5py.py's (numpy Philox keys, the order = rows sorted by (key, i)); this file only
adds what the several-outputs features promise:
  - shards and splits: consecutive ranges of the one-file output (their concatenation equals it byte for
    byte), with the documented boundaries (shard s: floor(s*N/K); split k: floor(N * cumulative fraction /
    sum), in exact rationals: fractions.Fraction of the fractions' text, so 0.9/0.1 of 200000 is 180000/20000);
  - a head of n rows: the first n rows of the full output, the same rows for the same seed on any file
    of N rows;
  - --source-index: the input file of each output row, from the oracle's order and the inputs' sizes;
  - h5shuf verify of a whole set (shards, splits; given whole or by one file, the rest found by name), a
    head, with weights and --mix taken from the output: passes the run's files and fails each after one
    changed value, a missing file, a head of another seed, rows swapped in an indexed set;
  - the mixing report: counts per input in the first/last window, chi-square and its p-value (closed
    form for even degrees of freedom: Q(k, x/2) = exp(-x/2) * sum_{j<k} (x/2)^j / j!).
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import fractions
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (the oracle and the check/run helpers)

check = O.check


def make_inputs(tmp, sizes, tag, attr=True):
    """Files tag-0.h5 ... with /x (n, 3) int32 chunked, /y (n,) float64 and an attribute; distinct values."""
    paths = []
    base = 0
    for f, n in enumerate(sizes):
        p = os.path.join(tmp, "%s-%d.h5" % (tag, f))
        with h5py.File(p, "w") as h:
            ids = np.arange(base, base + n)
            x = h.create_dataset("x", data=(ids[:, None] * 3 + np.arange(3)).astype("<i4").reshape(n, 3),
                                 chunks=(64, 3) if n else None, maxshape=(None, 3))
            if attr:
                x.attrs["units"] = "counts"
            h.create_dataset("y", data=(ids * 0.5).astype("<f8"))
            h.create_dataset("meta", data=np.arange(7, dtype="<i2"))  # other dim 0: copied, not shuffled
        base += n
        paths.append(p)
    return paths


def concat_inputs(paths, name):
    arrs = []
    for p in paths:
        with h5py.File(p, "r") as h:
            arrs.append(h[name][()])
    return np.concatenate(arrs) if arrs else None


def read_all(path, names):
    with h5py.File(path, "r") as h:
        return {n: h[n][()] for n in names if n in h}


def concat_files(paths, names):
    parts = [read_all(p, names) for p in paths]
    return {n: np.concatenate([q[n] for q in parts]) for n in names}


def source_of(order, sizes):
    """The input file of each output row, from the global ids (independent of h5shuf's search)."""
    starts = np.cumsum([0] + list(sizes))[:-1]
    return (np.searchsorted(starts, order, side="right") - 1).astype(np.uint16)


def shard_names(out, k):
    stem, ext = os.path.splitext(out)
    w = max(5, len(str(k)))
    return ["%s-%0*d-of-%0*d%s" % (stem, w, s, w, k, ext) for s in range(k)]


NAMES = ["/x", "/y", "/idx", "/src"]


def case_shards_acceptance(tmp, nfiles=8, rows=2000, k=20):
    """The issue's acceptance, scaled: nfiles x rows into k shards == the one-file run; index maps back.
    (k > 16: the outputs park their descriptors between uses, targets.c TARGETS_OPEN.)"""
    sizes = [rows] * nfiles
    ins = make_inputs(tmp, sizes, "acc")
    n = sum(sizes)
    seed = 20261122
    one = os.path.join(tmp, "acc_one.h5")
    O.shuf("-q", "-s", seed, "--index", "/idx", "--source-index", "/src", *[p + ":/x,/y" for p in ins], one)
    out = os.path.join(tmp, "acc.h5")
    # the shards with another budget and many small piles: shard boundaries fall inside piles and bands
    O.shuf("-q", "-s", seed, "--shards", k, "--index", "/idx", "--source-index", "/src",
           "-m", "4M" if n < 100000 else "32M",
           "--debug-pile-bound", max(50, n // 40), *[p + ":/x,/y" for p in ins], out)
    names = shard_names(out, k)
    check("shards: %d files named out-SSSSS-of-KKKKK.h5" % k, all(os.path.exists(p) for p in names))
    whole = read_all(one, NAMES)
    cat = concat_files(names, NAMES)
    for name in NAMES:
        ok, why = O.same_array(cat[name], whole[name])
        check("shards: concatenated %s == one-file output %s" % (name, name), ok, why)
    order = O.oracle_order(seed, n)
    ok, why = O.same_array(whole["/idx"], order.astype("<u8"))
    check("one-file index == oracle order (numpy Philox)", ok, why)
    x = concat_inputs(ins, "x")
    ok, why = O.same_array(cat["/x"], x[cat["/idx"]])
    check("shards: every row maps back through its index to its input row", ok, why)
    ok, why = O.same_array(cat["/src"], source_of(order, sizes))
    check("shards: source index == input file of the oracle's ids (uint16)", ok, why)
    bad = []
    for s, p in enumerate(names):
        with h5py.File(p, "r") as h:
            lo, hi = s * n // k, (s + 1) * n // k
            if h["x"].shape != (hi - lo, 3) or list(h.attrs["h5shuf_row_range"]) != [lo, hi]:
                bad.append("%s rows/range" % p)
            if int(h.attrs["h5shuf_shard"]) != s or int(h.attrs["h5shuf_shards"]) != k:
                bad.append("%s shard attrs" % p)
            if int(h.attrs["h5shuf_seed"]) != seed or "h5shuf_inputs" not in h.attrs:
                bad.append("%s provenance" % p)
            if h["x"].attrs.get("units") != "counts":
                bad.append("%s dataset attribute" % p)
    check("shards: rows floor(s*N/K)..floor((s+1)*N/K), range/shard/provenance attributes", not bad, ", ".join(bad))


def case_shards_edges(tmp):
    """K > N (empty shards), K = 1, uneven N/K, a {shard} pattern, whole-file mode."""
    ins = make_inputs(tmp, [5], "tiny")
    seed = 5
    one = os.path.join(tmp, "tiny_one.h5")
    O.shuf("-q", "-s", seed, "--index", "/idx", ins[0] + ":/x,/y", one)
    out = os.path.join(tmp, "tiny.h5")
    O.shuf("-q", "-s", seed, "--shards", 8, "--index", "/idx", ins[0] + ":/x,/y", out)
    names = shard_names(out, 8)
    rows = []
    for p in names:
        with h5py.File(p, "r") as h:
            rows.append(h["x"].shape[0])
    check("K=8 > N=5: 8 files, shard sizes floor(s*5/8)", rows == [(s + 1) * 5 // 8 - s * 5 // 8 for s in range(8)],
          str(rows))
    check("K > N: some shards hold 0-row datasets", rows.count(0) == 3, str(rows))
    cat = concat_files(names, ["/x", "/y", "/idx"])
    whole = read_all(one, ["/x", "/y", "/idx"])
    check("K > N: concatenation == one-file output",
          all(O.same_array(cat[nm], whole[nm])[0] for nm in whole))

    out1 = os.path.join(tmp, "k1.h5")
    O.shuf("-q", "-s", seed, "--shards", 1, "--index", "/idx", ins[0] + ":/x,/y", out1)
    p1 = shard_names(out1, 1)[0]
    got = read_all(p1, ["/x", "/y", "/idx"])
    check("K=1: one file %s equal to the one-file output" % os.path.basename(p1),
          all(O.same_array(got[nm], whole[nm])[0] for nm in whole))

    ins = make_inputs(tmp, [100, 37], "unev")
    seed = 77
    one = os.path.join(tmp, "unev_one.h5")
    O.shuf("-q", "-s", seed, *[p + ":/x,/y" for p in ins], one)
    pat = os.path.join(tmp, "part_{shard}_of_{shards}.h5")
    O.shuf("-q", "-s", seed, "--shards", 4, *[p + ":/x,/y" for p in ins], pat)
    names = [os.path.join(tmp, "part_%05d_of_00004.h5" % s) for s in range(4)]
    check("{shard}/{shards} pattern names", all(os.path.exists(p) for p in names))
    rows = [read_all(p, ["/x"])["/x"].shape[0] for p in names]
    check("uneven N=137, K=4: sizes 34,34,34,35", rows == [34, 34, 34, 35], str(rows))
    cat = concat_files(names, ["/x", "/y"])
    whole = read_all(one, ["/x", "/y"])
    check("uneven: concatenation == one-file output", all(O.same_array(cat[nm], whole[nm])[0] for nm in whole))

    # Whole-file mode: the other objects (/meta) are copied into each shard.
    wf = os.path.join(tmp, "wf.h5")
    O.shuf("-q", "-s", seed, "--shards", 3, ins[0], wf)
    ok = True
    for p in shard_names(wf, 3):
        with h5py.File(p, "r") as h:
            ok = ok and O.same_array(h["meta"][()], np.arange(7, dtype="<i2"))[0] and h["x"].attrs["units"] == "counts"
    check("whole-file mode: /meta and attributes in every shard", ok)


def exact_bounds(n, fractions_text):
    """[0, b_1, ..., n]: b_k = floor(n * (F_0 + ... + F_{k-1}) / sum F) in exact rationals."""
    fr = [fractions.Fraction(f) for f in fractions_text]
    return [0] + [n * sum(fr[:i + 1]) // sum(fr) for i in range(len(fr) - 1)] + [n]


def case_split_exact(tmp):
    """--split counts as people do (issue 50): 0.9/0.1 of 200000 is 180000/20000, 0.7/0.2/0.1 of 1000 is
    700/200/100, 1/3 and 0.333333 three times, 1e-6; every split against the exact boundaries."""
    cases = [(200000, [("train", "0.9"), ("val", "0.1")], [180000, 20000]),
             (1000, [("train", "0.7"), ("val", "0.2"), ("test", "0.1")], [700, 200, 100]),
             (1000, [("a", "1/3"), ("b", "1/3"), ("c", "1/3")], [333, 333, 334]),
             (1000, [("a", "0.333333"), ("b", "0.333333"), ("c", "0.333333")], [333, 333, 334]),
             (1000000, [("big", "0.999999"), ("tiny", "1e-6")], [999999, 1]),
             (997, [("a", "0.15"), ("b", "0.35"), ("c", "0.5")], None)]
    for n, parts, want in cases:
        src = os.path.join(tmp, "ex%d.h5" % n)
        if not os.path.exists(src):
            with h5py.File(src, "w") as h:
                h.create_dataset("y", data=np.arange(n, dtype="<u4"))
        out = os.path.join(tmp, "ex%d_{split}.h5" % n)
        spec = ",".join("%s=%s" % p for p in parts)
        O.shuf("-q", "-s", 5, "--force", "--split", spec, src, out)
        rows = []
        for name, _ in parts:
            with h5py.File(out.replace("{split}", name), "r") as h:
                rows.append(h["y"].shape[0])
        b = exact_bounds(n, [f for _, f in parts])
        exact = [b[i + 1] - b[i] for i in range(len(parts))]
        check("split %s of %d rows: %s" % (spec, n, exact), rows == exact and (want is None or rows == want),
              "wrote %s, expected %s" % (rows, want or exact))


def verify(*args, rc=0):
    """h5shuf verify ARGS: (exit status as expected, its stderr)."""
    proc = subprocess.run([O.H5SHUF, "verify"] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    return proc.returncode == rc, proc.stderr.decode("utf-8", "replace").strip()


def bump(path, name="/y", row=3):
    """Change one value of dataset name in file path."""
    with h5py.File(path, "r+") as h:
        v = h[name][row]
        h[name][row] = v + 1


def case_verify_sets(tmp):
    """h5shuf verify of a 4-shard set, a 3-way split and a head of the same seed (issue 50): each passes, by
    all its files or by one of them, and fails after one changed value or with a file missing."""
    ins = [p + ":/x,/y" for p in make_inputs(tmp, [600, 400, 137], "vs")]
    d = os.path.join(tmp, "vsets")
    os.makedirs(d)
    sh, sp, hd = os.path.join(d, "sh.h5"), os.path.join(d, "sp.h5"), os.path.join(d, "hd.h5")
    O.shuf("-q", "-s", 11, "--shards", 4, *ins, sh)
    O.shuf("-q", "-s", 11, "--split", "train=0.7,val=0.2,test=0.1", *ins, sp)
    O.shuf("-q", "-s", 11, "-n", 300, *ins, hd)
    shards, splits = shard_names(sh, 4), [os.path.join(d, "sp-%s.h5" % n) for n in ("train", "val", "test")]
    for what, args in (("4 shards, all given", shards), ("4 shards, all given out of order", shards[::-1]),
                       ("4 shards, the first given", shards[:1]), ("4 shards, the third given", shards[2:3]),
                       ("3 splits, all given", splits), ("3 splits, val given", splits[1:2]),
                       ("a head of 300", [hd])):
        ok, err = verify(*ins, *args)
        check("verify passes %s" % what, ok, err)
    ok, err = verify("-v", *ins, shards[0])
    check("verify -v names the set it checked", ok and "4 shards" in err and shards[3] in err and "together" in err,
          err)
    ok, err = verify("-v", *ins, hd)
    check("verify -v says a head is the first 300 rows of the seed's shuffle",
          ok and "the first 300 rows of the shuffle of the inputs' 1137 (seed 11)" in err, err)
    # one changed value: each fails
    for what, path, args in (("a shard", shards[2], shards[:1]), ("a split", splits[2], splits[:1]),
                             ("the head", hd, [hd])):
        bump(path)
        ok, err = verify(*ins, *args, rc=1)
        check("verify fails after one value of %s changed" % what, ok and "rows differ" in err, err)
        bump(path)  # (+1 again: still changed, so re-made below)
    O.shuf("-q", "-f", "-s", 11, "--shards", 4, *ins, sh)
    O.shuf("-q", "-f", "-s", 11, "--split", "train=0.7,val=0.2,test=0.1", *ins, sp)
    O.shuf("-q", "-f", "-s", 11, "-n", 300, *ins, hd)
    ok, err = verify(*ins, shards[0])
    check("verify passes the shards made again", ok, err)
    # a file missing
    os.rename(shards[1], shards[1] + ".away")
    ok, err = verify(*ins, shards[0], rc=1)
    check("verify fails with a shard missing, naming it", ok and "shard 1 of 4 is missing" in err and
          os.path.basename(shards[1]) in err, err)
    ok, err = verify(*ins, shards[0], shards[2], shards[3], rc=1)
    check("verify fails with a shard missing from the files given", ok and "shard 1 of 4 is missing" in err, err)
    os.rename(shards[1] + ".away", shards[1])
    os.rename(splits[2], splits[2] + ".away")
    ok, err = verify(*ins, splits[0], rc=1)
    check("verify fails with a split missing, naming it", ok and "split 'test'" in err, err)
    os.rename(splits[2] + ".away", splits[2])
    # a file of another run in its place, a file given twice
    other = os.path.join(d, "other.h5")
    O.shuf("-q", "-s", 12, "--shards", 4, *ins, other)
    os.rename(shards[3], shards[3] + ".away")
    os.rename(shard_names(other, 4)[3], shards[3])
    ok, err = verify(*ins, shards[0], rc=1)
    check("verify fails when a shard of another seed stands in for one", ok and "shard 3 of 4 is missing" in err, err)
    os.rename(shards[3] + ".away", shards[3])
    ok, err = verify(*ins, shards[0], shards[0], rc=1)
    check("verify fails with a file of the set given twice", ok and "given twice" in err, err)
    # a head of another seed: its attribute says 11, its rows are 12's
    hd12 = os.path.join(d, "hd12.h5")
    O.shuf("-q", "-s", 12, "-n", 300, *ins, hd12)
    with h5py.File(hd12, "r+") as h:
        h.attrs["h5shuf_seed"] = np.uint64(11)
    ok, err = verify(*ins, hd12, rc=1)
    check("verify fails a head whose rows are another seed's first 300", ok and "rows differ" in err, err)
    # with an index: the order across the files of a set, rows swapped between two shards
    shi = os.path.join(d, "shi.h5")
    O.shuf("-q", "-s", 11, "--shards", 4, "--index", "/i", *ins, shi)
    names = shard_names(shi, 4)
    ok, err = verify(*ins, names[0])
    check("verify passes an indexed set (the order across its files)", ok, err)
    with h5py.File(names[1], "r+") as a, h5py.File(names[2], "r+") as b:
        for ds in ("x", "y", "i"):
            ra, rb = a[ds][0], b[ds][0]
            a[ds][0], b[ds][0] = rb, ra
    ok, err = verify(*ins, names[0], rc=1)
    check("verify fails an indexed set with a row swapped between two shards", ok and "order differs" in err, err)
    with h5py.File(shards[1], "r+") as a, h5py.File(shards[2], "r+") as b:  # the same without an index
        for ds in ("x", "y"):
            ra, rb = a[ds][0], b[ds][0]
            a[ds][0], b[ds][0] = rb, ra
    ok, err = verify(*ins, shards[0])
    check("verify passes that swap in a set without an index (any permutation of the set's rows, as documented)",
          ok, err)


def case_verify_weights(tmp):
    """verify takes the weights (and --mix's) of the run from the output's h5shuf_inputs."""
    a, b = make_inputs(tmp, [500, 300], "vw")
    d = os.path.join(tmp, "vweights")
    os.makedirs(d)
    w = os.path.join(d, "w.h5")
    O.shuf("-q", "-s", 4, "--shards", 2, "-n", 700, a + ":/x,/y@1.5", b + ":/x,/y@0.5", w)
    ok, err = verify(a + ":/x,/y", b + ":/x,/y", shard_names(w, 2)[1])
    check("verify of weighted inputs' head in 2 shards, the weights from the output", ok, err)
    ok, err = verify(a + ":/x,/y@2", b + ":/x,/y", shard_names(w, 2)[1], rc=1)
    check("verify with weights of its own uses them (and fails with wrong ones)", ok, err)
    m = os.path.join(d, "m.h5")
    O.shuf("-q", "-s", 4, "--mix", "one=0.25,two=0.75", "--split", "tr=0.5,te=0.5", "one=" + a + ":/x,/y",
           "two=" + b + ":/x,/y", m)
    ok, err = verify(a + ":/x,/y", b + ":/x,/y", os.path.join(d, "m-te.h5"))
    check("verify of a --mix split, its weights from the output", ok, err)


def case_split(tmp):
    """--split: consecutive, disjoint, complete; boundaries floor(N * cumulative fraction)."""
    ins = make_inputs(tmp, [600, 400, 137], "spl")
    n = 1137
    seed = 99
    one = os.path.join(tmp, "spl_one.h5")
    O.shuf("-q", "-s", seed, "--index", "/idx", *[p + ":/x,/y" for p in ins], one)
    out = os.path.join(tmp, "spl.h5")
    O.shuf("-q", "-s", seed, "--split", "train=0.7,val=0.2,test=0.1", "--index", "/idx",
           *[p + ":/x,/y" for p in ins], out)
    names = [os.path.join(tmp, "spl-%s.h5" % s) for s in ("train", "val", "test")]
    check("split: files spl-train.h5, spl-val.h5, spl-test.h5", all(os.path.exists(p) for p in names))
    bounds = exact_bounds(n, ["0.7", "0.2", "0.1"])
    rows = [read_all(p, ["/x"])["/x"].shape[0] for p in names]
    check("split: sizes from floor(N * cumulative fraction)", rows == [bounds[i + 1] - bounds[i] for i in range(3)],
          "%s vs bounds %s" % (rows, bounds))
    cat = concat_files(names, ["/x", "/y", "/idx"])
    whole = read_all(one, ["/x", "/y", "/idx"])
    check("split: concatenation == one-file output", all(O.same_array(cat[nm], whole[nm])[0] for nm in whole))
    ids = [read_all(p, ["/idx"])["/idx"] for p in names]
    allids = np.concatenate(ids)
    check("split: disjoint and complete (every input row exactly once)",
          np.array_equal(np.sort(allids), np.arange(n, dtype=allids.dtype)))
    pat = os.path.join(tmp, "sp_{split}_x.h5")
    O.shuf("-q", "-s", seed, "--split", "a=0.5,b=0.5", *[p + ":/x,/y" for p in ins], pat)
    check("split: {split} pattern names", all(os.path.exists(os.path.join(tmp, "sp_%s_x.h5" % s)) for s in "ab"))
    with h5py.File(names[1], "r") as h:
        check("split: h5shuf_split attribute and row range", h.attrs["h5shuf_split"] == "val" and
              list(h.attrs["h5shuf_row_range"]) == bounds[1:3])


def case_head(tmp):
    """-n: the first n rows of the full shuffle; the same seed and n pick the same rows of another file."""
    ins = make_inputs(tmp, [3000, 1000], "head")
    seed = 4242
    one = os.path.join(tmp, "head_one.h5")
    O.shuf("-q", "-s", seed, "--index", "/idx", "--source-index", "/src", *[p + ":/x,/y" for p in ins], one)
    whole = read_all(one, NAMES)
    for case, (n_head, extra) in enumerate(((100, []), (1500, ["--debug-pile-bound", "60", "-m", "1M"]),
                          (1500, ["--debug-pile-bound", "60", "--on-oversize", "restart"]))):
        out = os.path.join(tmp, "head_%d.h5" % case)
        O.shuf("-q", "-s", seed, "-n", n_head, "--index", "/idx", "--source-index", "/src", *extra,
               *[p + ":/x,/y" for p in ins], out)
        got = read_all(out, NAMES)
        ok = all(O.same_array(got[nm], whole[nm][:n_head])[0] for nm in NAMES)
        check("head -n %d %s == first rows of the full shuffle" % (n_head, " ".join(extra)), ok)
        with h5py.File(out, "r") as h:
            check("head -n %d: root attribute h5shuf_row_range [0, n)" % n_head,
                  list(h.attrs["h5shuf_row_range"]) == [0, n_head] and "h5shuf_shard" not in h.attrs)
    out = os.path.join(tmp, "head_all.h5")
    O.shuf("-q", "-s", seed, "-n", 99999, *[p + ":/x,/y" for p in ins], out)
    check("head larger than N: the whole shuffle", O.same_array(read_all(out, ["/x"])["/x"], whole["/x"])[0])
    out = os.path.join(tmp, "head_zero.h5")
    O.shuf("-q", "-s", seed, "-n", 0, "--index", "/idx", *[p + ":/x,/y" for p in ins], out)
    check("head 0: empty datasets", read_all(out, ["/x"])["/x"].shape == (0, 3))
    # head + shards: the shards divide the head
    out = os.path.join(tmp, "head_sh.h5")
    O.shuf("-q", "-s", seed, "-n", 777, "--shards", 3, *[p + ":/x,/y" for p in ins], out)
    cat = concat_files(shard_names(out, 3), ["/x"])
    check("head 777 in 3 shards: concatenation == first 777 rows", O.same_array(cat["/x"], whole["/x"][:777])[0])
    # Side data made later: another file of the same N rows, same seed and n -> the same rows, same order.
    side = os.path.join(tmp, "side.h5")
    with h5py.File(side, "w") as h:
        h.create_dataset("z", data=(np.arange(4000) * 7 % 1000).astype("<u2"))
    sout = os.path.join(tmp, "side_head.h5")
    O.shuf("-q", "-s", seed, "-n", 100, "--index", "/idx", side + ":/z", sout)
    sg = read_all(sout, ["/z", "/idx"])
    check("head on side data: same index as the head of the data",
          O.same_array(sg["/idx"], whole["/idx"][:100])[0])
    check("head on side data: z rows are z[index]",
          O.same_array(sg["/z"], (np.arange(4000) * 7 % 1000).astype("<u2")[whole["/idx"][:100]])[0])


def chi2_upper_even(x, df):
    """P(X >= x), X ~ chi-square(df), df even: exp(-x/2) * sum_{j<df/2} (x/2)^j / j!."""
    h = x / 2
    return math.exp(-h) * sum(h ** j / math.factorial(j) for j in range(df // 2))


def case_head_maxshape(tmp):
    """A head of fewer rows than the input's chunks (h5py's automatic chunks of a large dataset): its maxshape
    is its shape, as the whole output's is its shape (a fixed input), or unlimited as the whole output's (an
    extendible input); its rows are still the whole output's first (issue 50)."""
    for tag, maxshape in (("fixed", None), ("extendible", (None, 64))):
        src = os.path.join(tmp, "hm_%s.h5" % tag)
        with h5py.File(src, "w") as h:
            kw = {"maxshape": maxshape} if maxshape else {}
            h.create_dataset("x", data=np.arange(20000 * 64, dtype="<f4").reshape(20000, 64), chunks=(4096, 64), **kw)
        full, head = os.path.join(tmp, "hm_%s_full.h5" % tag), os.path.join(tmp, "hm_%s_head.h5" % tag)
        O.shuf("-q", "-s", 3, src, full)
        O.shuf("-q", "-s", 3, "-n", 1000, src, head)
        with h5py.File(full, "r") as f, h5py.File(head, "r") as g:
            want = (1000, 64) if maxshape is None else (None, 64)
            fm = f["x"].maxshape
            check("head of %s input, chunks of 4096 rows: maxshape %s (the whole output's %s)" % (
                tag, g["x"].maxshape, fm),
                  g["x"].maxshape == want and fm == ((20000, 64) if maxshape is None else (None, 64)),
                  "chunks %s" % (g["x"].chunks,))
            check("head of %s input: the whole output's first 1000 rows" % tag,
                  O.same_array(g["x"][()], f["x"][:1000])[0])


def case_mixing(tmp):
    """The mixing report's counts, chi-square and p-value against numpy; also with a head."""
    sizes = [3000, 1000, 500]  # df = 2
    ins = make_inputs(tmp, sizes, "mix", attr=False)
    n = sum(sizes)
    seed = 31337
    for w, head in ((200, None), (4500, None), (150, 1000)):
        out = os.path.join(tmp, "mix_%d_%s.h5" % (w, head))
        args = ["--json", "-q", "-s", seed, "--mixing-window", w]
        if head:
            args += ["-n", head]
        stdout, _ = O.shuf(*args, *[p + ":/x,/y" for p in ins], out)
        rep = json.loads(stdout)
        order = O.oracle_order(seed, n)[: head or n]
        src = source_of(order, sizes).astype(np.int64)
        for win, part in (("first", src[:w]), ("last", src[-w:])):
            m = [x for x in rep["mixing"] if x["window"] == win][0]
            counts = np.bincount(part, minlength=3)
            exp = np.array(sizes, dtype=float) * w / n
            chi2 = float(((counts - exp) ** 2 / exp).sum())
            tag = "mixing W=%d%s %s:" % (w, " head %d" % head if head else "", win)
            check(tag + " counts == numpy", m["counts"] == counts.tolist(), "%s vs %s" % (m["counts"], counts.tolist()))
            check(tag + " expected == W * rows_f / N", np.allclose(m["expected"], exp, rtol=1e-5))
            check(tag + " chi-square == numpy", abs(m["chi2"] - chi2) <= 1e-5 * max(1, chi2), "%s vs %s" % (m["chi2"], chi2))
            check(tag + " df == 2 and p == exp(-chi2/2)", m["df"] == 2 and
                  abs(m["p_value"] - chi2_upper_even(chi2, 2)) <= 1e-5 * max(1e-300, chi2_upper_even(chi2, 2)) + 1e-12)
    # df = 4 (five inputs), and -v prints the report
    sizes = [50, 60, 70, 80, 90]
    ins = make_inputs(tmp, sizes, "mix5", attr=False)
    out = os.path.join(tmp, "mix5.h5")
    stdout, err = O.shuf("--json", "-s", 3, *[p + ":/x,/y" for p in ins], out)
    check("mixing: not computed without -v or --mixing-window", "mixing" not in json.loads(stdout))
    O.run(["rm", "-f", out])
    _, err = O.shuf("-v", "-s", 3, *[p + ":/x,/y" for p in ins], out)
    order = O.oracle_order(3, sum(sizes))
    line = [l for l in err.splitlines() if "mixing, first" in l]
    check("-v prints the mixing report (whole output as the window: chi-square 0)", bool(line) and "chi-square 0.000, df 4, p 1" in line[0],
          line[0] if line else err[-300:])
    rep = json.loads(O.shuf("--json", "-s", 3, "--plan", "--mixing-window", 100, *[p + ":/x,/y" for p in ins], out)[0])
    m = rep["mixing"][0]
    counts = np.bincount(source_of(order, sizes)[:100].astype(np.int64), minlength=5)
    exp = np.array(sizes, dtype=float) * 100 / 350
    chi2 = float(((counts - exp) ** 2 / exp).sum())
    check("mixing W=100, 5 inputs (--plan, keys only): counts, chi2, p (df 4) == numpy",
          m["counts"] == counts.tolist() and abs(m["chi2"] - chi2) < 1e-6 * max(1, chi2) and m["df"] == 4 and
          abs(m["p_value"] - chi2_upper_even(chi2, 4)) < 1e-6, "%s vs %s %s" % (m, counts.tolist(), chi2))


def case_lazy(tmp):
    """h5shuf gather writes shards and a source index too; scatter refuses output-shaping options."""
    ins = make_inputs(tmp, [300, 200], "lazy")
    seed = 6
    one = os.path.join(tmp, "lazy_one.h5")
    O.shuf("-q", "-s", seed, "--index", "/idx", "--source-index", "/src", *[p + ":/x,/y" for p in ins], one)
    piles = os.path.join(tmp, "lazy_piles.h5")
    O.shuf("scatter", "-q", "-s", seed, "--index", "/idx", "--debug-pile-bound", 60,
           *[p + ":/x,/y" for p in ins], piles)
    out = os.path.join(tmp, "lazy_sh.h5")
    O.shuf("gather", "-q", "--shards", 3, "--source-index", "/src", piles, out)
    cat = concat_files(shard_names(out, 3), NAMES)
    whole = read_all(one, NAMES)
    check("gather --shards 3 --source-index: concatenation == one-shot output",
          all(O.same_array(cat[nm], whole[nm])[0] for nm in NAMES))
    _, err = O.run([O.H5SHUF, "scatter", "--shards", 2, ins[0], os.path.join(tmp, "lazy_p2.h5")], expect_rc=2)
    check("scatter --shards: usage error", "give them to the gather" in err, err.strip())
    _, err = O.run([O.H5SHUF, "gather", "-n", 5, piles, os.path.join(tmp, "lazy_h.h5")], expect_rc=2)
    check("gather --head: usage error", "one-shot shuffle only" in err, err.strip())


def case_source_one_input(tmp):
    ins = make_inputs(tmp, [50], "one")
    out = os.path.join(tmp, "one_src.h5")
    O.shuf("-q", "-s", 1, "--source-index", "/src", ins[0] + ":/x", out)
    with h5py.File(out, "r") as h:
        src = h["src"][()]
        check("source index with one input: (N,) uint16 zeros, root attribute names it",
              src.dtype == np.dtype("<u2") and src.shape == (50,) and not src.any() and
              h.attrs["h5shuf_source_index"] == "/src")


def main():
    if len(sys.argv) != 2:
        print("usage: %s H5SHUF" % sys.argv[0], file=sys.stderr)
        return 2
    O.H5SHUF = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="outputs_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        O.run_case("shards acceptance (8 x 2000 rows, 16 shards)", case_shards_acceptance, tmp)
        O.run_case("shard edges", case_shards_edges, tmp)
        O.run_case("split", case_split, tmp)
        O.run_case("split counted exactly", case_split_exact, tmp)
        O.run_case("head", case_head, tmp)
        O.run_case("head's maxshape", case_head_maxshape, tmp)
        O.run_case("verify of sets, splits and heads", case_verify_sets, tmp)
        O.run_case("verify with the run's weights", case_verify_weights, tmp)
        O.run_case("mixing report", case_mixing, tmp)
        O.run_case("source index, one input", case_source_one_input, tmp)
        O.run_case("scatter/gather with several outputs", case_lazy, tmp)
        left = [f for f in os.listdir(tmp) if ".h5shuf-" in f]
        check("no temporary file left behind", not left, str(left))
    print("%d passed, %d failed" % (O.PASSED, O.FAILED), flush=True)
    return 0 if O.FAILED == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] == "--acceptance":  # the full-size run, by hand
        O.H5SHUF = os.path.abspath(sys.argv[1])
        with tempfile.TemporaryDirectory(prefix="outputs_acc.") as t:
            os.environ["TMPDIR"] = t
            case_shards_acceptance(t, 8, 200000, 16)
        print("%d passed, %d failed" % (O.PASSED, O.FAILED))
        sys.exit(0 if O.FAILED == 0 else 1)
    sys.exit(main())
