#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""python_epochs: h5shuf.Epochs against the tool's own outputs, read with h5py.

usage: /usr/bin/python3 tests/python_epochs.py H5SHUF LIBH5SHUF.so LAYOUT_PROBE PYTHON_DIR HEADER
       [--sanitized RT]

What it pins down:
- the seed function: h5shuf.epoch_seed(seed, e) is K(seed, e) as numpy's own Philox computes it (the
  oracle's keys_np, not h5shuf.keys), for seeds up to 2**64-1;
- epochs 0, 1, 2 of one Epochs: each epoch's rows, batch after batch, are the rows of `h5shuf -s S_e IN OUT`
  read with h5py, S_e the oracle's K(seed, e); the three orders differ; also over 3 ranks (each its own
  Epochs: every rank the same order) and 2 workers (merged as a DataLoader takes them); several piles;
- files: at every batch of epochs 0 to 2, at most two pile files (the epoch's, the next one being
  written; files, not names: a commit links the temporary file under its final name before it removes
  the temporary name); the previous epoch's pile file gone by the end of an epoch; close() removes the
  directory and stops the running scatter (no process left);
- the background scatter: epoch e+1's scatter runs while epoch e is read (its interval and the reading's
  are printed, with set_epoch's waits: measured, not asserted);
- resume: a state saved after k batches of epoch 1 (through JSON), loaded into a new Epochs, gives the
  remaining batches of the uninterrupted run exactly, for several k, one process and 2 workers; a state of
  another seed is refused;
- another world size: states of 2 ranks after k batches restored at 3 ranks (and 3 at 2, and 2 -> 3 -> 1,
  and drop_last): the new ranks read exactly the rows the old ones had not, each once, each rank a
  contiguous part of those rows in the epoch's order (computed here from the tool's output); the same for
  ShuffledReader over the tool's output.
Each check prints PASS or FAIL; the last line is "N passed, M failed".
"""

import json
import os
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_env  # noqa: E402
from python_env import dataloader_order  # noqa: E402
import oracle_h5py as orc  # noqa: E402

check = orc.check
A = python_env.setup()
import h5shuf  # noqa: E402

SEED = 0xFEEDFACECAFEBEEF
N = 60000
NAMES = ["/x", "/y"]


def cli(*args):
    return orc.run([A.h5shuf] + [str(a) for a in args])


def oracle_seed(seed, e):
    """K(seed, e) from numpy's Philox (oracle_h5py.keys_np), independent of h5shuf.keys."""
    return int(orc.keys_np(seed, e, 1)[0])


def write_input(path, n=N):
    """/x (n, 4) float32 = 4i .. 4i+3, /y (n,) int64 = i: each row says which input row it is."""
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(4 * n, dtype=np.float32).reshape(n, 4), chunks=(4096, 4),
                         compression="gzip", compression_opts=1)
        f.create_dataset("y", data=np.arange(n, dtype=np.int64), chunks=(4096,))
    return path


_TOOL = {}


def tool_order(d, src, e):
    """The rows of `h5shuf -s K(SEED, e) src out.h5`, read with h5py: {name: array} (cached)."""
    if e not in _TOOL:
        out = os.path.join(d, "tool-%d.h5" % e)
        cli("-q", "-s", oracle_seed(SEED, e), src, out)
        with h5py.File(out, "r") as f:
            _TOOL[e] = {"/x": f["x"][()], "/y": f["y"][()]}
        os.unlink(out)
    return _TOOL[e]


def cat(batches, name="/y"):
    return np.concatenate([b[name] for b in batches]) if batches else np.zeros(0, dtype=np.int64)


def same_batches(got, want):
    if len(got) != len(want):
        return False, "%d batches, expected %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        for n in g:
            ok, why = orc.same_array(g[n], w[n])
            if not ok:
                return False, "batch %d %s: %s" % (i, n, why)
    return True, ""


def make(d, **kw):
    args = dict(batch_size=500, memory="6M", scratch_compression="none")
    args.update(kw)
    return h5shuf.Epochs([os.path.join(d, "in.h5")], d, SEED, NAMES, **args)


# --------------------------------------------------------------------------------------------------------


def case_seed(d):
    bad = []
    for seed in (0, 1, 42, SEED, 2 ** 64 - 1):
        for e in (0, 1, 2, 3, 1000, 2 ** 40):
            if h5shuf.epoch_seed(seed, e) != oracle_seed(seed, e):
                bad.append((seed, e))
    seeds = [h5shuf.epoch_seed(SEED, e) for e in range(100)]
    check("epoch_seed(seed, e) = K(seed, e), numpy's Philox (counter e, key seed), word 0", not bad, str(bad[:3]))
    check("100 epochs: 100 different seeds", len(set(seeds)) == 100)
    for bad_arg in (None, -1, 2 ** 64):
        try:
            h5shuf.Epochs([os.path.join(d, "none.h5")], d, bad_arg)
            check("Epochs refuses seed %r" % (bad_arg,), False)
        except ValueError as exc:
            check("Epochs refuses seed %r (ValueError)" % (bad_arg,), "seed" in str(exc), str(exc))


def distinct_files(directory, names):
    """The names that are distinct files (inodes): a scatter commits its pile file by linking the temporary
    file's inode under the final name and then removing the temporary name (tempfile.c), so for a moment
    one file has both names.  A name gone before its stat is not counted."""
    seen = {}
    for n in names:
        try:
            st = os.stat(os.path.join(directory, n))
        except FileNotFoundError:
            continue
        seen.setdefault((st.st_dev, st.st_ino), n)
    return sorted(seen.values())


def case_epochs(d):
    src = write_input(os.path.join(d, "in.h5"))
    ep = make(d)
    check("Epochs: the plan's rows and datasets", ep.rows == N and ep.datasets == NAMES, "%d %s" % (ep.rows, ep.datasets))
    orders, max_files, most_files, leftovers, intervals = [], 0, [], [], {}
    for e in range(3):
        ep.set_epoch(e)
        got, t0 = [], time.monotonic()
        for b in ep:
            got.append(b)
            files = distinct_files(ep.directory, ep.pile_files())
            if len(files) > max_files:
                max_files, most_files = len(files), files
            time.sleep(0.003)  # a training step: the background scatter overlaps these
        intervals[e] = (t0, time.monotonic())
        prev = os.path.join(ep.directory, "epoch-%d.h5" % (e - 1))
        if e and os.path.exists(prev):
            leftovers.append(prev)
        want = tool_order(d, src, e)
        ok = all(orc.same_array(cat(got, n), want[n])[0] for n in NAMES)
        check("epoch %d: the rows of `h5shuf -s K(seed, %d)` (%d), batch after batch, /x and /y" % (e, e, N), ok and
              len(got) == -(-N // 500))
        orders.append(cat(got))
        with h5py.File(os.path.join(ep.directory, "epoch-%d.h5" % e), "r") as f:
            piles = int(f.attrs["h5shuf_piles"])
        check("epoch %d's pile file: %d piles (more than one)" % (e, piles), piles > 1)
    check("the three epochs' orders differ", not np.array_equal(orders[0], orders[1]) and
          not np.array_equal(orders[1], orders[2]) and not np.array_equal(orders[0], orders[2]))
    check("at most two pile files at any batch (%d seen); the previous epoch's gone by the end of an epoch" % max_files,
          max_files <= 2 and not leftovers, "the most at once: %s; left over: %s" % (most_files, leftovers))
    for e in (1, 2):
        s = ep.scatters[e]
        r0, r1 = intervals[e - 1]
        overlap = max(0.0, min(s["t1"], r1) - max(s["t0"], r0))
        print("  epoch %d's scatter ran %.3f .. %.3f s, epoch %d was read %.3f .. %.3f s: %.3f s of overlap; "
              "set_epoch(%d) waited %.3f s (reading epoch %d: %.3f s)" % (
                  e, s["t0"] - r0, s["t1"] - r0, e - 1, 0.0, r1 - r0, overlap, e, ep.waits[e], e, intervals[e][1] -
                  intervals[e][0]), flush=True)
    check("epochs 1 and 2 were scattered in the background, epoch 0 in the foreground",
          [ep.scatters[e]["background"] for e in range(3)] == [False, True, True])
    bg = ep._own.get("bg")
    directory = ep.directory
    ep.close()
    time.sleep(0.2)
    check("close(): the directory removed, the running scatter (epoch 3) stopped",
          not os.path.exists(directory) and bg is not None and bg.proc.poll() is not None,
          "dir %s, scatter %s" % (os.path.exists(directory), bg and bg.proc.poll()))
    check("nothing left in tmpdir but the input", sorted(os.listdir(d)) == ["in.h5"], str(os.listdir(d)))


def case_ranks_workers(d):
    src = write_input(os.path.join(d, "in.h5"))
    want = tool_order(d, src, 1)
    parts = []
    for r in range(3):
        with make(d, batch_size=700, rank=r, world_size=3, epochs=2) as ep:
            ep.set_epoch(1)
            one = list(ep)
            two = dataloader_order([ep._iterate(w, 2) for w in range(2)])
            ok, why = same_batches(two, one)
            lo, hi = r * N // 3, (r + 1) * N // 3
            check("rank %d of 3, epoch 1: rows %d..%d of the tool's order; 2 workers the same batches" % (r, lo, hi - 1),
                  ok and all(orc.same_array(cat(one, n), want[n][lo:hi])[0] for n in NAMES), why)
            check("rank %d: epochs=2: no scatter started past the last epoch" % r, 2 not in ep.scatters)
            parts.append(cat(one))
    check("3 ranks: every row exactly once", np.array_equal(np.sort(np.concatenate(parts)), np.arange(N)))


def case_resume(d):
    write_input(os.path.join(d, "in.h5"))
    with make(d, batch_size=600, rank=1, world_size=2) as ep:
        ep.set_epoch(1)
        full = list(ep)
    n = len(full)
    bad = []
    # One Epochs stopped at each k (its pile file made once) and one resuming them all: a loaded state
    # must act alone, whatever the object did before.
    with make(d, batch_size=600, rank=1, world_size=2) as ep, make(d, batch_size=600, rank=1, world_size=2) as again:
        for k in (0, 1, n // 2, n - 1, n):
            ep.set_epoch(1)
            it = iter(ep)
            for _ in range(k):
                next(it)
            state = json.loads(json.dumps(ep.state_dict()))
            it.close()
            for w in (1, 2):
                again.load_state_dict(state)
                again.set_epoch(state["epoch"])
                got = list(again) if w == 1 else dataloader_order([again._iterate(i, w) for i in range(w)])
                ok, why = same_batches(got, full[k:])
                if not ok or state["batches_done"] != k:
                    bad.append("k %d, %d workers: %s" % (k, w, why))
        fresh = make(d, batch_size=600, rank=1, world_size=2)
        fresh.load_state_dict(state)
        check("a new Epochs loading a state goes on in the state's epoch (%d), its scatter then" % state["epoch"],
              fresh.epoch == 1 and len(list(fresh)) == 0 and fresh.scatters[1]["background"] is False)
        fresh.close()
    check("resume in epoch 1 after k of %d batches (k = 0, 1, half, all but one, all; 1 and 2 workers): "
          "the rest of the uninterrupted run" % n, not bad and n > 4, "; ".join(bad[:3]))
    with make(d, batch_size=600) as ep:
        other = dict(ep.state_dict(), seed=SEED + 1)
        try:
            ep.load_state_dict(other)
            check("a state of another seed is refused", False)
        except ValueError as exc:
            check("a state of another seed is refused (ValueError)", "seed" in str(exc), str(exc))


def consumed_and_rest(order, P, B, k, drop):
    """From the epoch's order alone: the rows P ranks read in k batches each, and the rest in epoch order."""
    pos = []
    for r in range(P):
        lo, hi = r * len(order) // P, (r + 1) * len(order) // P
        pos.extend(range(lo, min(lo + k * B, hi)))
    done = np.zeros(len(order), dtype=bool)
    done[pos] = True
    return order[done], order[~done]


def expected_split(rest, P, B, drop):
    """Rank r of P after the resize: positions floor(r*T/P) .. of the rest, full batches only with drop."""
    out = []
    for r in range(P):
        part = rest[r * len(rest) // P:(r + 1) * len(rest) // P]
        if drop:
            part = part[:len(rest) // P // B * B]
        out.append(part)
    return out


def resized(make_rank, state, P):
    """Each of P new ranks loads `state` and reads the rest of its epoch: [(batches, reader)]."""
    out = []
    for r in range(P):
        reader = make_rank(r, P)
        reader.load_state_dict(json.loads(json.dumps(state)))
        reader.set_epoch(state["epoch"])
        out.append((list(reader), reader))
    return out


def elastic_cases(tag, make_rank, order, B, cases):
    for P, k, P2, drop in cases:
        first = make_rank(0, P, drop)
        first.set_epoch(1)
        it = iter(first)
        for _ in range(k):
            next(it)
        state = first.state_dict()
        it.close()
        if hasattr(first, "close"):
            first.close()
        done, rest = consumed_and_rest(order, P, B, k, drop)
        got = resized(lambda r, p: make_rank(r, p, drop), state, P2)
        want = expected_split(rest, P2, B, drop)
        ok = all(np.array_equal(cat(b), w) for (b, _), w in zip(got, want))
        seen = np.concatenate([done] + [cat(b) for b, _ in got])
        once = len(seen) == len(set(seen.tolist())) and (drop or len(seen) == len(order))
        counts = {len(b) for b, _ in got}
        check("%s: %d ranks stopped after %d batches of epoch 1, resumed at %d ranks%s: each new rank its part of "
              "the rows not read, in the epoch's order; every row %s" % (
                  tag, P, k, P2, " (drop_last: the same count of full batches)" if drop else "",
                  "at most once" if drop else "exactly once"), ok and once and (not drop or len(counts) == 1),
              "ok %s once %s counts %s" % (ok, once, counts))
        for _, reader in got:
            if hasattr(reader, "close"):
                reader.close()


def case_world_size(d):
    src = write_input(os.path.join(d, "in.h5"))
    order = tool_order(d, src, 1)["/y"]
    B = 400

    def epochs_rank(r, P, drop=False):
        return make(d, batch_size=B, rank=r, world_size=P, drop_last=drop, epochs=2)

    elastic_cases("Epochs", epochs_rank, order, B, [(2, 7, 3, False), (3, 5, 2, True)])
    # 2 -> 3 -> 1: the second resize splits the rest's rest.
    a = epochs_rank(0, 2)
    a.set_epoch(1)
    it = iter(a)
    for _ in range(6):
        next(it)
    s1 = a.state_dict()
    it.close()
    a.close()
    mids = []
    for r in range(3):
        b = epochs_rank(r, 3)
        b.load_state_dict(s1)
        b.set_epoch(1)
        it = iter(b)
        mids.append([next(it) for _ in range(4)])
        s2 = b.state_dict()
        it.close()
        b.close()
    c = epochs_rank(0, 1)
    c.load_state_dict(json.loads(json.dumps(s2)))
    c.set_epoch(1)
    tail = list(c)
    c.close()
    done, _ = consumed_and_rest(order, 2, B, 6, False)
    seen = np.concatenate([done] + [cat(m) for m in mids] + [cat(tail)])
    check("Epochs 2 ranks -> 3 ranks (4 batches each) -> 1 rank: every row of epoch 1 exactly once (state version %d)"
          % s2["version"], np.array_equal(np.sort(seen), np.arange(N)) and s2["version"] == 2)
    # The same rule for ShuffledReader, over the tool's output.
    out = os.path.join(d, "shuffled.h5")
    cli("-q", "-s", 5, src, out)
    with h5py.File(out, "r") as f:
        sorder = f["y"][()]

    def shuffled_rank(r, P, drop=False):
        return h5shuf.ShuffledReader(out, NAMES, 300, rank=r, world_size=P, drop_last=drop)

    elastic_cases("ShuffledReader", shuffled_rank, sorder, 300, [(2, 9, 3, False), (4, 3, 3, True), (3, 10, 5, False)])


if __name__ == "__main__":
    sys.exit(python_env.main([
        ("seed", case_seed), ("epochs", case_epochs), ("ranks workers", case_ranks_workers), ("resume", case_resume),
        ("world size", case_world_size)]))
