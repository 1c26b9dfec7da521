#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""python_readers: h5shuf.ShuffledReader and h5shuf.PileReader against h5py's reading of the files.

usage: /usr/bin/python3 tests/python_readers.py H5SHUF LIBH5SHUF.so LAYOUT_PROBE PYTHON_DIR HEADER
       [--sanitized RT]

What it pins down:
- the split (python/h5shuf/_split.py), over many row counts, batch sizes, ranks and drop_last: ranks
  disjoint and, without drop_last, complete; with it, the same number of full batches on every rank;
- ShuffledReader over 1, 2 and 3 ranks and 1, 2, 3 workers (each worker's iteration run as a DataLoader
  worker would, merged in the DataLoader's turn order): every row exactly once, each rank's batches the
  file's rows in order (h5py slices), the same sequence for every number of workers; over the shards of
  a --shards run, the rows of the unsharded run; zstd outputs read without HDF5_PLUGIN_PATH;
- resume: state_dict() after k batches, loaded into a new reader, gives the remaining batches exactly,
  for every k of a small file (directly and through workers); the issue's 2 ranks and 10 batches;
- PileReader over the pile file of a scatter with forced splits: row for row the gathered output (every
  dataset), over ranks, workers and resumes; refusals of other files and of variable-length rows;
- a torch DataLoader with 2 workers, when python3-torch is installed (skipped with the reason otherwise):
  the one-process batches, a resume, and every rank of 2 and 3 in its own DataLoader as DistributedSampler
  splits a dataset (disjoint, complete, each rank's rows in order, equal batch counts with drop_last).
Each check prints PASS or FAIL; the last line is "N passed, M failed".
"""

import os
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_env  # noqa: E402
from python_env import dataloader_order  # noqa: E402
import oracle_h5py as orc  # noqa: E402

check = orc.check
A = python_env.setup()
import h5shuf  # noqa: E402
from h5shuf import _split  # noqa: E402


def cli(*args):
    return orc.run([A.h5shuf] + [str(a) for a in args])


def batches(reader, workers=1):
    if workers == 1:
        return list(reader)
    return dataloader_order([reader._iterate(w, workers) for w in range(workers)])


def same_batches(got, want, names):
    if len(got) != len(want):
        return False, "%d batches, expected %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        for n in names:
            ok, why = orc.same_array(g[n], w[n])
            if not ok:
                return False, "batch %d %s: %s" % (i, n, why)
    return True, ""


def write_file(path, n):
    """/x (n, 3) float32 with rows 3i..3i+2 (row i recognisable), /y (n,) int64 = 1000 + i, gzip chunks."""
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(3 * n, dtype=np.float32).reshape(n, 3), chunks=(16, 3),
                         compression="gzip")
        f.create_dataset("y", data=1000 + np.arange(n, dtype=np.int64), chunks=(16,))
    return path


# --------------------------------------------------------------------------------------------------------


def case_split(d):
    bad = []
    for n in (0, 1, 7, 100, 1001):
        for b in (1, 3, 64, 2000):
            for p in (1, 2, 3, 5):
                for drop in (False, True):
                    s = [_split.Schedule(n, b, r, p, drop) for r in range(p)]
                    rows = [list(range(*x.batch(k))) for x in s for k in range(x.count)]
                    flat = [i for r in rows for i in r]
                    if len(flat) != len(set(flat)):
                        bad.append("n %d b %d p %d drop %s: overlap" % (n, b, p, drop))
                    if not drop and sorted(flat) != list(range(n)):
                        bad.append("n %d b %d p %d: rows %d of %d" % (n, b, p, len(flat), n))
                    if drop and (len({x.count for x in s}) != 1 or any(len(r) != b for r in rows)
                                 or s[0].count != n // p // b):
                        bad.append("n %d b %d p %d drop: counts %s" % (n, b, p, [x.count for x in s]))
                    if not drop and max(x.count for x in s) - min(x.count for x in s) > 1:
                        bad.append("n %d b %d p %d: counts %s" % (n, b, p, [x.count for x in s]))
    check("split: ranks disjoint; complete without drop_last; equal counts of full batches with it", not bad,
          "; ".join(bad[:4]))


def case_all_datasets(d):
    """datasets=None: the datasets h5shuf shuffled, for ShuffledReader as for PileReader (issue 50); the lazy
    names are listed by dir(h5shuf) and __all__."""
    lazy = ("ShuffledReader", "PileReader", "Epochs", "epoch_seed")
    check("dir(h5shuf) and __all__ list %s" % ", ".join(lazy),
          all(n in dir(h5shuf) and n in h5shuf.__all__ for n in lazy), str([n for n in lazy if n not in dir(h5shuf)]))
    src = write_file(os.path.join(d, "in.h5"), 500)
    with h5py.File(src, "a") as f:
        f["classes"] = np.arange(3)  # another row count: copied, not shuffled
    out, sh = os.path.join(d, "all.h5"), os.path.join(d, "allsh.h5")
    cli("-s", 3, "--index", "/idx", "--source-index", "/src", src, out)
    cli("-s", 3, "--shards", 2, src, sh)
    shards = [os.path.join(d, "allsh-%05d-of-00002.h5" % k) for k in range(2)]
    for tag, path in (("a whole output with its index", out), ("shards", shards)):
        r = h5shuf.ShuffledReader(path, None, 64)
        ok = r.datasets == ["/x", "/y"]
        ok = ok and same_batches(list(r), list(h5shuf.ShuffledReader(path, ["/x", "/y"], 64)), ["/x", "/y"])[0]
        check("ShuffledReader(%s, None, 64): /x and /y, as named" % tag, ok, "%r" % r.datasets)
    piles = os.path.join(d, "allpiles.h5")
    cli("scatter", "-s", 3, src + ":/x,/y", piles)
    check("PileReader(piles, None, 64): its datasets", h5shuf.PileReader(piles, None, 64).datasets == ["/x", "/y"])
    tie = os.path.join(d, "tie.h5")
    with h5py.File(tie, "w") as f:
        f["a"], f["b"] = np.arange(10), np.arange(20)
    try:
        h5shuf.ShuffledReader(tie, None, 4)
        check("ShuffledReader(None) of a file whose rows cannot be told raises ValueError", False)
    except ValueError as exc:
        check("ShuffledReader(None) of a file whose rows cannot be told raises ValueError naming both",
              "/a" in str(exc) and "/b" in str(exc), str(exc))


def case_shuffled(d):
    src = write_file(os.path.join(d, "in.h5"), 1000)
    out = os.path.join(d, "out.h5")
    cli("-s", 7, src, out)
    with h5py.File(out, "r") as f:
        x, y = f["x"][()], f["y"][()]
    names = ["/x", "/y"]
    for p in (1, 2, 3):
        for b in (1, 64, 333):
            per_rank = []
            for r in range(p):
                want = None
                for w in (1, 2, 3):
                    got = batches(h5shuf.ShuffledReader(out, names, b, rank=r, world_size=p), w)
                    if want is None:
                        want = got
                        lo, hi = r * 1000 // p, (r + 1) * 1000 // p
                        ok = len(got) == -(-(hi - lo) // b) and all(len(g["/y"]) <= b for g in got)
                        cat = {n: np.concatenate([g[n] for g in got]) for n in names}
                        ok = ok and orc.same_array(cat["/x"], x[lo:hi])[0] and orc.same_array(cat["/y"], y[lo:hi])[0]
                        check("ShuffledReader rank %d of %d, batch %d: the file's rows %d..%d in order" % (
                            r, p, b, lo, hi - 1), ok)
                    else:
                        ok, why = same_batches(got, want, names)
                        check("ShuffledReader rank %d of %d, batch %d, %d workers: the one-process sequence" % (
                            r, p, b, w), ok, why)
                per_rank.append(np.concatenate([g["/y"] for g in want]))
            ids = np.concatenate(per_rank) - 1000
            check("ShuffledReader over %d ranks, batch %d: every row exactly once" % (p, b),
                  np.array_equal(np.sort(ids), np.arange(1000)))
    # The input rows are i at 1000 + i: the output's /y is the oracle's order, so the reader's too.
    got = np.concatenate([g["/y"] for g in h5shuf.ShuffledReader(out, "/y", 100)]) - 1000
    check("ShuffledReader: the rows come in the contract's order (numpy's Philox)",
          np.array_equal(got, orc.oracle_order(7, 1000)))
    last = list(h5shuf.ShuffledReader(out, names, 64, rank=1, world_size=3, drop_last=True))
    check("drop_last: floor(floor(1000/3)/64) = 5 full batches",
          len(last) == 5 and all(len(g["/x"]) == 64 for g in last))


def case_shards(d):
    src = write_file(os.path.join(d, "in.h5"), 777)
    cli("-s", 3, "--shards", 4, "-c", "zstd:1", src, os.path.join(d, "out.h5"))
    cli("-s", 3, src, os.path.join(d, "whole.h5"))
    shards = [os.path.join(d, "out-%05d-of-00004.h5" % s) for s in range(4)]
    env_path = os.environ.pop("HDF5_PLUGIN_PATH", None)
    got = list(h5shuf.ShuffledReader(shards, ["/x", "/y"], 50, rank=1, world_size=2))
    if env_path is not None:
        os.environ["HDF5_PLUGIN_PATH"] = env_path
    want = list(h5shuf.ShuffledReader(os.path.join(d, "whole.h5"), ["/x", "/y"], 50, rank=1, world_size=2))
    ok, why = same_batches(got, want, ["/x", "/y"])
    check("ShuffledReader over 4 zstd shards (no HDF5_PLUGIN_PATH), rank 1 of 2: the unsharded run's batches",
          ok, why)


def case_wide_rows(d):
    """Rows of 8 KiB, batches of 1 MiB: one worker reads blocks of two batches, workers read batch by batch."""
    src = os.path.join(d, "wide.h5")
    rng = np.random.default_rng(5)
    with h5py.File(src, "w") as f:
        f.create_dataset("w", data=rng.standard_normal((700, 2048)).astype(np.float32), chunks=(96, 2048),
                         compression="gzip", compression_opts=1)
    out = os.path.join(d, "out.h5")
    cli("-s", 12, src, out)
    with h5py.File(out, "r") as f:
        want = f["w"][()]
    for w in (1, 2, 3):
        got = batches(h5shuf.ShuffledReader(out, "/w", 128), w)
        ok = [len(g["/w"]) for g in got] == [128] * 5 + [60] and \
            orc.same_array(np.concatenate([g["/w"] for g in got]), want)[0]
        check("wide rows, %d worker%s: the file's rows in batches of 128" % (w, "s" if w > 1 else ""), ok)


def resume_every_position(tag, make, names, workers=(1, 2)):
    full = list(make())
    bad = []
    for k in range(len(full) + 1):
        r = make()
        it = iter(r)
        for _ in range(k):
            next(it)
        state = r.state_dict()
        it.close()
        for w in workers:
            fresh = make()
            fresh.load_state_dict(state)
            if len(fresh) != len(full) - k:
                bad.append("k %d: len %d" % (k, len(fresh)))
            ok, why = same_batches(batches(fresh, w), full[k:], names)
            if not ok:
                bad.append("k %d, %d workers: %s" % (k, w, why))
    check("%s: resuming from state_dict() after every k of %d batches gives the rest (1 and 2 workers)" % (
        tag, len(full)), not bad and len(full) > 5, "; ".join(bad[:3]))


def case_resume(d):
    src = write_file(os.path.join(d, "in.h5"), 203)
    out = os.path.join(d, "out.h5")
    cli("-s", 1, src, out)
    names = ["/x", "/y"]
    for r in (0, 1):
        resume_every_position("ShuffledReader rank %d of 2, batch 9" % r,
                              lambda: h5shuf.ShuffledReader(out, names, 9, rank=r, world_size=2), names)
    # The acceptance: 2 ranks, resume after 10 batches.
    src = write_file(os.path.join(d, "big.h5"), 5000)
    out = os.path.join(d, "big-out.h5")
    cli("-s", 2, src, out)
    seen = []
    for r in range(2):
        reader = h5shuf.ShuffledReader(out, names, 32, rank=r, world_size=2)
        full = list(reader)
        seen.append(np.concatenate([g["/y"] for g in full]))
        reader = h5shuf.ShuffledReader(out, names, 32, rank=r, world_size=2)
        it = iter(reader)
        for _ in range(10):
            next(it)
        state = reader.state_dict()
        again = h5shuf.ShuffledReader(out, names, 32, rank=r, world_size=2)
        again.load_state_dict(state)
        ok, why = same_batches(list(again), full[10:], names)
        check("rank %d of 2: resuming from state_dict() after 10 batches gives the same remaining batches" % r,
              ok and state["batches_done"] == 10, why)
    ids = np.concatenate(seen) - 1000
    check("2 ranks cover every row exactly once", np.array_equal(np.sort(ids), np.arange(5000)))
    try:
        h5shuf.ShuffledReader(out, names, 16).load_state_dict(state)
        check("a state of another batch size is refused", False)
    except ValueError as exc:
        check("a state of another batch size is refused", "batch_size" in str(exc), str(exc))


def case_piles(d):
    src = write_file(os.path.join(d, "in.h5"), 1500)
    piles, out = os.path.join(d, "piles.h5"), os.path.join(d, "out.h5")
    cli("scatter", "-s", 99, "--debug-pile-bound", 120, src, piles)
    cli("gather", "--index", "/order", piles, out)
    with h5py.File(piles, "r") as f:
        check("the pile file has split piles (many, some empty or small)", int(f.attrs["h5shuf_splits"]) > 0 and
              int(f.attrs["h5shuf_piles"]) > 10, "splits %s" % f.attrs["h5shuf_splits"])
    with h5py.File(out, "r") as f:
        want = {"/x": f["x"][()], "/y": f["y"][()]}
    env_path = os.environ.pop("HDF5_PLUGIN_PATH", None)  # zstd piles: through libh5shuf's filters
    reader = h5shuf.PileReader(piles, batch_size=64)
    got = list(reader)
    if env_path is not None:
        os.environ["HDF5_PLUGIN_PATH"] = env_path
    bad = [n for n in ("/x", "/y") if not orc.same_array(np.concatenate([g[n] for g in got]), want[n])[0]]
    check("PileReader's rows equal the gathered output's, row for row (/x and /y)", not bad and
          reader.datasets == ["/x", "/y"] and len(got) == 24, "differ: %s" % bad)
    names = ["/x", "/y"]
    for p in (2, 3):
        for b in (7, 100):
            for r in range(p):
                lo, hi = r * 1500 // p, (r + 1) * 1500 // p
                one = list(h5shuf.PileReader(piles, None, b, rank=r, world_size=p))
                ok = all(orc.same_array(np.concatenate([g[n] for g in one]), want[n][lo:hi])[0] for n in names)
                two = batches(h5shuf.PileReader(piles, None, b, rank=r, world_size=p), 3)
                ok2, why = same_batches(two, one, names)
                check("PileReader rank %d of %d, batch %d: the gathered rows %d..%d; 3 workers the same" % (
                    r, p, b, lo, hi - 1), ok and ok2, why)
    resume_every_position("PileReader rank 1 of 2, batch 50", lambda: h5shuf.PileReader(
        piles, ["/y"], 50, rank=1, world_size=2), ["/y"])
    sub = list(h5shuf.PileReader(piles, "y", 500))
    check("PileReader of one dataset (named without its '/')", list(sub[0]) == ["y"] and
          np.array_equal(np.concatenate([g["y"] for g in sub]), want["/y"]))
    # weighted inputs (copies and a sample): the pile file's rows in the gather's order
    wp, wo = os.path.join(d, "wpiles.h5"), os.path.join(d, "wout.h5")
    cli("scatter", "-s", 5, "--debug-pile-bound", 300, src + "@1.5", src + "@0.25", wp)
    cli("gather", wp, wo)
    with h5py.File(wo, "r") as f:
        wx = f["x"][()]
    got = list(h5shuf.PileReader(wp, ["/x"], 100))
    check("PileReader over weighted inputs (@1.5, @0.25): the gathered rows (%d)" % len(wx),
          len(wx) == 1500 + 750 + 375 and orc.same_array(np.concatenate([g["/x"] for g in got]), wx)[0])


def case_pile_errors(d):
    src = write_file(os.path.join(d, "in.h5"), 50)
    for tag, path, cls in (("an output, not a pile file", src, h5shuf.UnsupportedError),):
        try:
            h5shuf.PileReader(path, None, 4)
            check("PileReader of %s is refused" % tag, False)
        except cls as exc:
            check("PileReader of %s raises %s" % (tag, cls.__name__), "pile file" in str(exc), str(exc))
    vlen = os.path.join(d, "vlen.h5")
    with h5py.File(vlen, "w") as f:
        f.create_dataset("t", data=np.array([np.arange(i % 5, dtype=np.int32) for i in range(40)], dtype=object),
                         dtype=h5py.vlen_dtype(np.int32))
    piles = os.path.join(d, "vpiles.h5")
    cli("scatter", "-s", 1, vlen, piles)
    try:
        h5shuf.PileReader(piles, None, 4)
        check("PileReader of variable-length piles is refused", False)
    except h5shuf.UnsupportedError as exc:
        check("PileReader of variable-length piles raises UnsupportedError", "variable-length" in str(exc), str(exc))
    try:
        h5shuf.PileReader(os.path.join(d, "vpiles.h5"), "/nothing", 4)
        check("PileReader of a dataset the file lacks raises KeyError", False)
    except KeyError as exc:
        check("PileReader of a dataset the file lacks raises KeyError naming it", "/nothing" in str(exc))


def case_torch(d):
    try:
        import torch
        from torch.utils.data import DataLoader
    except ImportError as exc:
        print("SKIP DataLoader with 2 workers: python3-torch is not installed (%s)" % exc, flush=True)
        return
    src = write_file(os.path.join(d, "in.h5"), 1000)
    out, piles = os.path.join(d, "out.h5"), os.path.join(d, "piles.h5")
    cli("-s", 5, src, out)
    cli("scatter", "-s", 5, "--debug-pile-bound", 150, src, piles)
    names = ["/x", "/y"]
    for tag, make in (("ShuffledReader", lambda: h5shuf.ShuffledReader(out, names, 30, rank=1, world_size=2)),
                      ("PileReader", lambda: h5shuf.PileReader(piles, names, 30, rank=1, world_size=2))):
        reader = make()
        check("%s is a torch IterableDataset" % tag, isinstance(reader, torch.utils.data.IterableDataset))
        want = list(make())
        got = [{n: b[n].numpy() for n in names} for b in DataLoader(reader, batch_size=None, num_workers=2)]
        ok, why = same_batches(got, want, names)
        check("%s in a DataLoader with 2 workers: the one-process batches, in order" % tag, ok, why)
        reader.load_state_dict(make().state_dict(batches_done=5))
        got = [{n: b[n].numpy() for n in names} for b in DataLoader(reader, batch_size=None, num_workers=2)]
        ok, why = same_batches(got, want[5:], names)
        check("%s in a DataLoader with 2 workers, resumed after 5 batches: the rest" % tag, ok, why)
        reader.set_epoch(1)
        got = list(DataLoader(reader, batch_size=None, num_workers=2))
        check("%s: set_epoch(1) starts the next epoch from its first batch" % tag, len(got) == len(want))
    # Every rank as DistributedSampler splits a dataset: P processes, each its own reader (rank r of P) in its
    # own DataLoader with 2 workers; together every row once, disjoint, each rank the file's rows
    # [floor(r R / P), floor((r + 1) R / P)) in order; with drop_last the same number of full batches.
    with h5py.File(out, "r") as f:
        ys = f["y"][()]
    for P in (2, 3):
        for drop_last in (False, True):
            seen, counts, in_order = [], [], True
            for r in range(P):
                reader = h5shuf.ShuffledReader(out, names, 30, rank=r, world_size=P, drop_last=drop_last)
                got = np.concatenate([b["/y"].numpy() for b in DataLoader(reader, batch_size=None, num_workers=2)])
                lo, hi = r * len(ys) // P, (r + 1) * len(ys) // P
                want = ys[lo:hi][:(hi - lo) // 30 * 30] if drop_last else ys[lo:hi]
                in_order &= np.array_equal(got, want)
                counts.append(len(got) // 30)
                seen.append(got)
            allseen = np.concatenate(seen)
            disjoint = len(np.unique(allseen)) == len(allseen)
            complete = drop_last or np.array_equal(np.sort(allseen), np.sort(ys))
            check("DataLoader(num_workers=2) on each of %d ranks%s: rows disjoint%s, each rank's range of the file "
                  "in order%s" % (P, ", drop_last" if drop_last else "", "" if drop_last else " and complete",
                                  ", the same batch count %s" % counts if drop_last else ""),
                  disjoint and complete and in_order and (not drop_last or len(set(counts)) == 1),
                  "disjoint %s complete %s in order %s counts %s" % (disjoint, complete, in_order, counts))


def case_doc_example(d):
    """docs/examples/train_loop.py, as docs/python.md shows it: stopped and resumed, it sees the batches of
    an uninterrupted run, which are rank 1's rows of the shuffled file in batches of 32."""
    example = os.path.join(os.path.dirname(A.pydir), "docs", "examples", "train_loop.py")
    doc = open(os.path.join(os.path.dirname(A.pydir), "docs", "python.md")).read()
    start = doc.find('```python\n"""A training loop')
    block = doc[start + 10:doc.find("```\n", start + 10)] if start >= 0 else None
    text = open(example).read()
    if text.startswith("# SPDX-License-Identifier:"):  # the file's licence line, which the doc leaves out
        text = text.partition("\n")[2]
    check("docs/python.md's training loop is docs/examples/train_loop.py", block == text)
    n = 2000
    src = os.path.join(d, "train.h5")
    with h5py.File(src, "w") as f:
        f["X"] = np.zeros((n, 4, 4), dtype=np.uint8)
        f["y"] = np.arange(n, dtype=np.int64)
    shuffled = os.path.join(d, "shuffled.h5")
    cli("-s", 4, src, shuffled)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [A.pydir, os.environ.get("PYTHONPATH")])),
               RANK="1", WORLD_SIZE="2")

    def run(ckpt, *extra):
        return subprocess.run([sys.executable, example, shuffled, os.path.join(d, ckpt)] + list(extra), env=env,
                              stdout=subprocess.PIPE, check=True, timeout=300).stdout.decode().splitlines()

    full = run("a.json")
    with h5py.File(shuffled, "r") as f:
        y = f["y"][()]
    lo = n // 2
    want = ["epoch %d batch %d: 32 rows, first label %d" % (e, b, y[lo + 32 * b]) for e in (0, 1) for b in range(31)]
    check("the example, rank 1 of 2: 31 full batches an epoch, rank 1's rows of the file", full == want,
          "%s ... vs %s ..." % (full[:2], want[:2]))
    first = run("b.json", "--stop-after", "25")
    rest = run("b.json")
    check("the example stopped after 25 steps and restarted from its checkpoint (step 20): the same batches",
          len(first) == 25 and first[:20] + rest == full, "%d + %d lines; resumed at %s" % (
              len(first), len(rest), rest[:1]))


if __name__ == "__main__":
    sys.exit(python_env.main([
        ("split", case_split), ("all datasets", case_all_datasets), ("shuffled", case_shuffled),
        ("shards", case_shards), ("wide rows", case_wide_rows),
        ("resume", case_resume),
        ("piles", case_piles), ("pile errors", case_pile_errors), ("torch", case_torch),
        ("doc example", case_doc_example)]))
