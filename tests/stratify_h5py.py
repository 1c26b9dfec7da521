#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""stratify_h5py: --stratify, every output file holding each group's share within one row, checked with
h5py + numpy.

usage: /usr/bin/python3 tests/stratify_h5py.py PATH/TO/h5shuf

The expectations are computed here from the definitions in docs/algorithm.md ("Stratified mixtures") and
docs/guide.md, not from the library's code: a group of n_t of the R output rows gets floor or ceil of
n_t L / R rows of every output file of L rows; the groups are --mix's domains (each exactly its
largest-remainder share of the rows, computed here), else the inputs as given; within a file the rows
are sorted by (K(seed, i), i), i the row's number in the permutation (--index) and K from numpy's
Philox as in oracle_h5py.py.  Which rows of a group go to which file is a seeded permutation (its
uniformity is test_strata's, over many seeds).  Checked:
  - --mix over three domains of token sequences (h5py vlen int32, two or three files each) into 8 shards:
    each shard's domain counts within one row of their targets, each domain's total and each file's count
    exact, every row once, tokens aligned with their ids, each shard's order by (K, i);
  - the same bytes (md5 of every shard) on one pass, two passes with a small budget, one thread;
  - fixed-size rows on the direct path too; --split with uneven parts; groups = inputs without --mix;
  - killed (SIGKILL) and resumed: the uninterrupted run's bytes;
  - the provenance says the order is stratified (h5shuf_key, h5shuf_stratify);
  - h5shuf verify of a stratified set passes (its order by the stratified keys) and fails with two rows swapped;
  - refused in one line: without --shards or --split, with --head, with scatter;
  - unstratified runs unchanged (the same command without --stratify gives hypergeometric shard counts,
    at least one shard off its target by more than a row: what --stratify is for).
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import hashlib
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (numpy keys, check/run helpers)
from weights_h5py import largest_remainder, make_domains  # noqa: E402  (Hamilton's apportionment, domain files)

check = O.check


def md5s(paths):
    h = hashlib.md5()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def within_one(count, n_t, L, R):
    """count is floor or ceil of n_t L / R (exact integers)."""
    return n_t * L // R <= count <= -(-n_t * L // R)


def read_shards(paths, tok=True):
    """Per file: (ids, index); tokens checked against ids."""
    out, aligned = [], True
    for p in paths:
        with h5py.File(p, "r") as h:
            x, idx = h["id"][()], h["idx"][()]
            if tok:
                t = h["tok"]
                aligned &= all(np.array_equal(t[i], np.full(int(x[i]) % 5 + 1, int(x[i]), dtype="<i4"))
                               for i in range(len(x)))
            out.append((x, idx))
    return out, aligned


def ordered(seed, idx, R):
    """idx sorted by (K(seed, i), i)."""
    k = O.keys_np(seed, 0, R)[idx.astype(np.int64)]
    order = np.lexsort((idx, k))
    return bool(np.array_equal(order, np.arange(len(idx))))


def shard_paths(tmp, stem, k):
    return [os.path.join(tmp, "%s-%05d-of-%05d.h5" % (stem, s, k)) for s in range(k)]


def case_mix(tmp):
    doms = {"web": [3000, 1700, 900], "code": [800, 1300], "books": [450, 260]}
    ins, files, dom_of = make_domains(tmp, doms)
    share = {"web": 7, "code": 2, "books": 1}
    R, K, seed = 6007, 8, 11  # (shares of every shard not whole: floors and ceilings)
    mix = ["--mix", "web=0.7,code=0.2,books=0.1", "--rows", R]
    out = os.path.join(tmp, "m.h5")
    O.shuf("-q", "-s", seed, *mix, "--shards", K, "--stratify", "--index", "/idx", *ins, out)
    paths = shard_paths(tmp, "m", K)
    shards, aligned = read_shards(paths)
    check("mix: tokens aligned with their ids in every shard", aligned)
    targets = dict(zip(doms, largest_remainder(R, [share[d] for d in doms])))
    worst, ok = 0.0, True
    for s, (x, idx) in enumerate(shards):
        L = len(x)
        ok &= L == (s + 1) * R // K - s * R // K
        for d in doms:
            c = sum(1 for i in x.tolist() if dom_of[i] == d)
            ok &= within_one(c, targets[d], L, R)
            worst = max(worst, abs(c - targets[d] * L / R))
    check("mix: every shard within one row of each domain's share (largest off by %.3f rows)" % worst, ok and worst < 1)
    allx = np.concatenate([x for x, _ in shards])
    got = {d: sum(1 for i in allx.tolist() if dom_of[i] == d) for d in doms}
    check("mix: each domain exactly its largest-remainder share %s" % targets, got == targets, str(got))
    for d in doms:
        per = largest_remainder(targets[d], doms[d])
        fs = [p for p in files if os.path.basename(p).startswith(d)]
        cnt = [int(((allx >= files[p][0]) & (allx < files[p][0] + files[p][1])).sum()) for p in fs]
        check("mix: %s's rows over its files by their rows %s" % (d, per), cnt == per, str(cnt))
    alli = np.concatenate([i for _, i in shards])
    check("mix: every row of the permutation once (--index)", np.array_equal(np.sort(alli), np.arange(R)))
    check("mix: each shard's rows in the order (K(seed, i), i)", all(ordered(seed, i, R) for _, i in shards))
    with h5py.File(paths[0], "r") as h:
        key = h.attrs["h5shuf_key"]
        key = key.decode() if isinstance(key, bytes) else str(key)
        st = h.attrs.get("h5shuf_stratify")
        st = st.decode() if isinstance(st, bytes) else str(st)
    check("mix: the provenance says stratified, and which groups", key.startswith("stratified") and
          "web: inputs 0 1 2" in st and "books: inputs 5 6" in st, "%s | %s" % (key, st))
    plain = [x.split("=", 1)[1] for x in ins]
    proc = subprocess.run([O.H5SHUF, "verify"] + plain + [paths[3]], stderr=subprocess.PIPE)
    check("mix: h5shuf verify of one shard (the set found by name, the mix's weights from the output) passes, the "
          "order by the stratified keys", proc.returncode == 0, proc.stderr.decode().strip())
    ref = md5s(paths)
    for opts in (["-m", "500K"], ["-m", "500K", "-j", 1], ["-j", 1], ["--strategy", "two-pass", "-m", "700K"]):
        O.shuf("-q", "-f", "-s", seed, *opts, *mix, "--shards", K, "--stratify", "--index", "/idx", *ins, out)
        check("mix: %s gives the same bytes" % " ".join(map(str, opts)), md5s(paths) == ref)
    # the same without --stratify: shards' counts are hypergeometric, some off by more than a row
    O.shuf("-q", "-f", "-s", seed, *mix, "--shards", K, "--index", "/idx", *ins, out)
    shards, _ = read_shards(paths, tok=False)
    off = max(abs(sum(1 for i in x.tolist() if dom_of[i] == d) - targets[d] * len(x) / R)
              for x, _ in shards for d in doms)
    check("mix without --stratify: uniform order, a shard off its share by %.1f rows" % off, off > 1)


def case_fixed(tmp):
    """Fixed-size rows, groups = the inputs (no --mix), the direct path and --split."""
    doms = {"a": [1000], "b": [613], "c": [211, 97]}
    ins, files, dom_of = make_domains(tmp, doms, vlen=False)
    plain = [s.split("=", 1)[1] for s in ins]
    R, seed = sum(n for _, n in files.values()), 5
    out = os.path.join(tmp, "f.h5")
    K = 5
    O.shuf("-q", "-s", seed, "--shards", K, "--stratify", "--index", "/idx", *plain, out)
    paths = shard_paths(tmp, "f", K)
    ok, order = True, True
    for p in paths:
        with h5py.File(p, "r") as h:
            x, idx, xs = h["id"][()], h["idx"][()], h["x"][()]
            ok &= np.array_equal(xs[:, 0], x.astype("<f8")) and np.array_equal(xs[:, 1], (x * 3).astype("<f8"))
            for f, (b, n) in files.items():
                c = int(((x >= b) & (x < b + n)).sum())
                ok &= within_one(c, n, len(x), R)
            order &= ordered(seed, idx, R)
    check("inputs as groups: every input within one row of its share in every shard", ok)
    check("inputs as groups: each shard in the order (K, i)", order)
    ref = md5s(paths)
    O.shuf("-q", "-f", "-s", seed, "--strategy", "direct", "--shards", K, "--stratify", "--index", "/idx", *plain, out)
    check("the direct path gives the same bytes", md5s(paths) == ref)
    O.shuf("-q", "-f", "-s", seed, "-m", "160K", "--shards", K, "--stratify", "--index", "/idx", *plain, out)
    check("two passes at -m 160K give the same bytes", md5s(paths) == ref)
    O.shuf("-q", "-s", seed, "--split", "train=0.83,val=0.17", "--stratify", "--index", "/idx", *plain,
           os.path.join(tmp, "sp.h5"))
    ok = True
    for name in ("train", "val"):
        with h5py.File(os.path.join(tmp, "sp-%s.h5" % name), "r") as h:
            x = h["id"][()]
            for f, (b, n) in files.items():
                ok &= within_one(int(((x >= b) & (x < b + n)).sum()), n, len(x), R)
    check("--split train=0.83,val=0.17: each split within one row of every input's share", ok)
    proc = subprocess.run([O.H5SHUF, "verify"] + plain + [os.path.join(tmp, "sp-val.h5")], stderr=subprocess.PIPE)
    check("h5shuf verify of the stratified split (groups = the inputs) passes", proc.returncode == 0,
          proc.stderr.decode().strip())
    with h5py.File(os.path.join(tmp, "sp-train.h5"), "r+") as h:  # two rows of one split swapped, index too
        for ds in ("id", "x", "idx"):
            v = h[ds][()]
            v[[0, 1]] = v[[1, 0]]
            h[ds][...] = v
    proc = subprocess.run([O.H5SHUF, "verify"] + plain + [os.path.join(tmp, "sp-val.h5")], stderr=subprocess.PIPE)
    check("h5shuf verify of the stratified split fails with two rows swapped", proc.returncode == 1 and
          b"order differs" in proc.stderr, proc.stderr.decode().strip())


def case_resume(tmp):
    ins, files, dom_of = make_domains(tmp, {"p": [800000], "q": [400000]}, vlen=False)
    ref_dir, out_dir = os.path.join(tmp, "ref"), os.path.join(tmp, "res")
    os.mkdir(ref_dir)
    os.mkdir(out_dir)
    args = ["-q", "-s", 3, "-m", "6M", "-j", 1, "--checkpoint", "1M", "--mix", "p=0.5,q=0.5", "--shards", 4,
            "--stratify", *ins]
    O.shuf(*args, os.path.join(ref_dir, "o.h5"))
    out = os.path.join(out_dir, "o.h5")
    for wait in (0.4, 0.2, 0.1, 0.05):  # (a machine fast enough to finish first: kill sooner)
        p = subprocess.Popen([O.H5SHUF] + [str(a) for a in args] + [out])
        try:
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            break
        for f in shard_paths(out_dir, "o", 4):
            os.unlink(f)
    check("killed after %.2f s (exit %s)" % (wait, p.returncode), p.returncode == -9)
    q = subprocess.run([O.H5SHUF] + [str(a) for a in args if a != "--stratify"] + ["--resume", out], capture_output=True)
    e = q.stderr.decode().splitlines()
    check("the same run without --stratify does not resume the stratified one: %s" % e[:1],
          q.returncode != 0 and e and "stratify" in e[0], e)
    O.shuf(*args, "--resume", out)
    check("resumed: the uninterrupted run's bytes",
          md5s(shard_paths(out_dir, "o", 4)) == md5s(shard_paths(ref_dir, "o", 4)))


def case_refused(tmp):
    ins, _, _ = make_domains(tmp, {"r": [100], "s": [50]}, vlen=False)
    plain = [s.split("=", 1)[1] for s in ins]
    out = os.path.join(tmp, "no.h5")
    for extra, word in ((["--stratify"], "--shards"), (["--stratify", "--shards", 2, "--head", 10], "--head")):
        p = subprocess.run([O.H5SHUF, "-q"] + [str(a) for a in extra] + plain + [out], capture_output=True)
        e = p.stderr.decode().splitlines()
        check("refused in one line naming %s: %s" % (word, e[:1]), p.returncode != 0 and len(e) >= 1 and word in e[0])
    p = subprocess.run([O.H5SHUF, "scatter", "-q", "--stratify"] + plain + [os.path.join(tmp, "piles.h5")],
                       capture_output=True)
    e = p.stderr.decode().splitlines()
    check("scatter --stratify refused in one line: %s" % e[:1], p.returncode != 0 and len(e) >= 1)
    check("nothing left at the refused outputs", not os.path.exists(out) and
          not os.path.exists(os.path.join(tmp, "piles.h5")))


def main():
    if len(sys.argv) != 2:
        print("usage: %s H5SHUF" % sys.argv[0], file=sys.stderr)
        return 2
    O.H5SHUF = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="stratify_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        for name, fn in (("mix", case_mix), ("fixed", case_fixed), ("resume", case_resume), ("refused", case_refused)):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            O.run_case(name, fn, d)
    print("%d passed, %d failed" % (O.PASSED, O.FAILED), flush=True)
    return 0 if O.FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
