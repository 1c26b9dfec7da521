#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/epochs.py - h5shuf.Epochs over a 1 GiB file: does the loop wait for the next epoch's piles?

    PYTHONPATH=python H5SHUF_LIBRARY=build/libh5shuf.so /usr/bin/python3 bench/epochs.py [--dir DIR]
        [--step-ms 0,20] [--epochs 3] [--memory 1G] [--check] [--h5shuf build/h5shuf]

Writes (once, in DIR; default a fresh directory under $TMPDIR, removed at the end) in.h5: /X (N, 64, 64, 3)
uint8 random images in chunks of about 1 MiB and /y (N,) int64 = the row number, N = 87381 rows of 12296
bytes = 1.0 GiB.  For each step time S (milliseconds of a simulated training step per batch of 256: a
sleep, as a GPU step leaves the CPU to the loader and the scatter), runs an Epochs of --epochs epochs and
prints, per epoch: the wait in set_epoch(e) for the epoch's pile file (epoch 0: its whole scatter; later:
what the background scatter had not finished), the epoch's loop time (from the first batch's request to
the last batch), the time inside next() (the lazy pass's reading and sorting), the next epoch's scatter
time in the background and how much of it overlapped the loop, and wait / loop time.  With --check, each
epoch's /y order is compared with `h5shuf -s K(seed, e)`'s output (the tool's, read with h5py).
Nothing is asserted: docs/python.md quotes the table.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

ROWS = 87381
SHAPE = (64, 64, 3)


def make_input(path):
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        x = f.create_dataset("X", shape=(ROWS,) + SHAPE, dtype=np.uint8, chunks=(85,) + SHAPE)
        for a in range(0, ROWS, 8160):
            e = min(ROWS, a + 8160)
            x[a:e] = rng.integers(0, 256, size=(e - a,) + SHAPE, dtype=np.uint8)
        f.create_dataset("y", data=np.arange(ROWS, dtype=np.int64), chunks=(65536,))


def run(h5shuf, src, tmpdir, step, epochs, memory, seed, check, tool):
    rows = []
    with h5shuf.Epochs([src], tmpdir, seed, ["/X", "/y"], 256, memory=memory, epochs=epochs) as ep:
        for e in range(epochs):
            ep.set_epoch(e)
            ys, inside = [], 0.0
            t0 = time.monotonic()
            it = iter(ep)
            while True:
                a = time.monotonic()
                try:
                    b = next(it)
                except StopIteration:
                    inside += time.monotonic() - a
                    break
                inside += time.monotonic() - a
                ys.append(b["/y"])
                if step:
                    time.sleep(step)
            t1 = time.monotonic()
            rows.append({"epoch": e, "wait": ep.waits[e], "loop": t1 - t0, "inside": inside, "t0": t0, "t1": t1,
                         "y": np.concatenate(ys)})
        scat = dict(ep.scatters)
    for r in rows:
        s = scat.get(r["epoch"] + 1)
        r["next_scatter"] = s["t1"] - s["t0"] if s and "t1" in s else None
        r["overlap"] = max(0.0, min(s["t1"], r["t1"]) - max(s["t0"], r["t0"])) if s and "t1" in s else None
        if check:
            out = os.path.join(tmpdir, "tool.h5")
            subprocess.run([tool, "-q", "-f", "-s", str(h5shuf.epoch_seed(seed, r["epoch"])), "-m", memory, src, out],
                           check=True)
            with h5py.File(out, "r") as f:
                r["same"] = bool(np.array_equal(f["y"][()], r["y"]))
            os.unlink(out)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir")
    ap.add_argument("--step-ms", default="0,20")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--memory", default="1G")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--h5shuf", default=os.path.join(os.path.dirname(__file__), "..", "build", "h5shuf"))
    a = ap.parse_args()
    import h5shuf
    own = a.dir is None
    d = tempfile.mkdtemp(prefix="h5shuf-bench-epochs.") if own else a.dir
    try:
        src = os.path.join(d, "in.h5")
        if not os.path.exists(src):
            t = time.monotonic()
            make_input(src)
            print("wrote %s: %.2f GiB in %.1f s" % (src, os.path.getsize(src) / 2 ** 30, time.monotonic() - t))
        print("| step/batch | epoch | set_epoch wait (s) | loop (s) | in next() (s) | next epoch's scatter (s) | "
              "overlap with loop (s) | wait / loop | order = tool's |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for ms in [float(x) for x in a.step_ms.split(",")]:
            for r in run(h5shuf, src, d, ms / 1000.0, a.epochs, a.memory, a.seed, a.check, a.h5shuf):
                f = lambda v: "-" if v is None else "%.2f" % v  # noqa: E731
                print("| %g ms | %d | %.2f | %.2f | %.2f | %s | %s | %.1f%% | %s |" % (
                    ms, r["epoch"], r["wait"], r["loop"], r["inside"], f(r["next_scatter"]), f(r["overlap"]),
                    100 * r["wait"] / r["loop"], {True: "yes", False: "NO"}.get(r.get("same"), "-")), flush=True)
    finally:
        if own:
            shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
