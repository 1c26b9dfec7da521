#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""cases.py: the data, the in-memory alternative and the checks of bench/cases.sh (issues 15 and 28).

  gen xy PATH FILTER            /data (1048576, 256) float32 in chunks of (1024, 256) (1 MiB) and /label
                                (1048576,) int64 in chunks of 65536, both FILTER (none, gzip4): X with its labels
  gen small PATH                /data (67108864, 4) float32, chunks of (65536, 4), no filter: 16-byte rows, 1 GiB
  gen rows PATH COLS FILTER     /data (1 GiB / (4 COLS), COLS) float32 in 1 MiB chunks, FILTER (none, gzip4):
                                rows of 4 COLS bytes (case rowsizes: COLS 2, 16, 64)
  gen tokens PATH FILTER [TOKENS]   /tokens (N,) vlen int32 (h5py.vlen_dtype(np.int32)), chunks of 1024 rows,
                                FILTER (none, gzip4): TOKENS token ids in all (default 2^29, 2 GiB), uniform
                                on 0..50256 (GPT-2's vocabulary), in rows of lengths 1..4096 of mean 1024: a
                                lognormal (mu 6.6833, sigma 1) rounded up, redrawn above 4096 (median about 750,
                                1st-99th percentile 77-3766); the last row is cut so the total is exact (N about
                                TOKENS / 1024); written 16384 rows at a time
  gen images PATH CHUNKS        /images (40000, 64, 64, 3) uint8 and /labels (40000,) int64, gzip-4, chunked
                                as h5py chooses by itself (CHUNKS=auto, h5py's guess: (2500, 4, 8, 1)) or in
                                whole rows (CHUNKS=rows: (64, 64, 64, 3), labels (40000,))
  gen many DIR FILES ROWS       FILES inputs DIR/in-NNNNN.h5 of ROWS rows each: /data (ROWS, 256) float32
                                chunks (min(ROWS, 1024), 256), /label (ROWS,) int64; and DIR/one.h5, the same
                                rows in one file
  perm IN OUT SEED DSET...      the in-memory alternative: every DSET of IN read whole, its rows permuted by
                                numpy.random.default_rng(SEED).permutation (one permutation for all), written
                                to OUT with the input's datatype, chunks and gzip filter (vlen rows too)
  check IN OUT SEED DSET...     OUT's DSETs hold IN's rows in the permutation contract's order for SEED
                                (oracle_h5py's numpy Philox keys, computed in blocks, stably sorted: the
                                order of its oracle_order; IN may be a directory of in-*.h5 inputs,
                                concatenated in name order); vlen rows are compared element for element
                                (each row's length and tokens), with the input's base type
  check-perm IN OUT SEED DSET...   OUT's DSETs are IN's permuted by default_rng(SEED) (the alternative's output)
  check-same IN OUT SEED DSET...   OUT's DSETs are IN's rows in their order (bench/seqcopy.py's output)
  table TSV HEADER              bench/cases.sh's results as markdown: medians, the issues' ratios and targets

With SMALL=1 in the environment every generated file is about 16 MiB (xy, small, rows, tokens: 2^22
token ids; images: 1000 rows), for smoke tests of the harness: the times then mean nothing.
Data is random but compressible as users' data is: floats are normal draws rounded to 1/256 (gzip-4 about
2.0x), images are 16x16 random colour blocks upscaled 4x with a little noise (gzip-4 about 3x); token ids
are uniform (and a vlen dataset's filter compresses only its chunks of 16-byte heap ids: HDF5 keeps the
tokens themselves in the global heap, uncompressed, so gzip4 barely changes the tokens file).
A check prints one line "check ok: ..." or "check FAILED: ..." and exits 0 only when it passed.
"""

import glob
import os
import statistics
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from oracle_h5py import keys_np  # noqa: E402  (numpy Philox: the contract's keys)

FILTERS = {"none": {}, "gzip4": {"compression": "gzip", "compression_opts": 4}}
BLOCK = 1 << 16  # rows generated at a time (xy, many); images in blocks of 2000
SMALL = os.environ.get("SMALL", "0") == "1"  # every generated file about 16 MiB (smoke tests)
GiB = (16 << 20) if SMALL else (1 << 30)  # the size of a "1 GiB" file


class CheckFailed(Exception):
    pass


def floats(rng, rows, cols):
    return (np.round(rng.standard_normal((rows, cols), dtype=np.float32) * 256) / 256).astype(np.float32)


def gen_xy(path, filt):
    cols = 256
    n = GiB // (4 * cols)
    block = min(BLOCK, n)
    rng = np.random.default_rng(15)
    with h5py.File(path + ".tmp", "w") as f:
        x = f.create_dataset("data", (n, cols), "<f4", chunks=(1024, cols), **FILTERS[filt])
        y = f.create_dataset("label", (n,), "<i8", chunks=(min(n, 65536),), **FILTERS[filt])
        for s in range(0, n, block):
            x[s:s + block] = floats(rng, block, cols)
            y[s:s + block] = rng.integers(0, 1000, block)
    os.rename(path + ".tmp", path)


def gen_rows(path, cols, filt, seed):
    """1 GiB of rows of COLS float32 in 1 MiB chunks, written 64 MiB at a time."""
    rowb = 4 * cols
    n, chunk = GiB // rowb, (1 << 20) // rowb
    step = min(n, (64 << 20) // rowb)
    rng = np.random.default_rng(seed)
    with h5py.File(path + ".tmp", "w") as f:
        x = f.create_dataset("data", (n, cols), "<f4", chunks=(chunk, cols), **FILTERS[filt])
        for s in range(0, n, step):
            x[s:s + step] = floats(rng, step, cols)
    os.rename(path + ".tmp", path)


def gen_small(path):
    gen_rows(path, 4, "none", 16)  # the bytes it always wrote: chunks of 65536 rows, 2^22 rows a step


TOKEN_MU, TOKEN_SIGMA, TOKEN_MAX, VOCAB = 6.6833, 1.0, 4096, 50257


def token_lengths(rng, total):
    """Row lengths on 1..TOKEN_MAX, mean about 1024, summing to exactly `total`."""
    parts, have = [], 0
    while have < total:
        x = np.ceil(rng.lognormal(TOKEN_MU, TOKEN_SIGMA, 1 << 16)).astype(np.int64)
        x = x[x <= TOKEN_MAX]
        parts.append(x)
        have += int(x.sum())
    lens = np.concatenate(parts)
    ends = np.cumsum(lens)
    n = int(np.searchsorted(ends, total)) + 1  # rows up to the one that reaches total
    lens = lens[:n]
    lens[-1] -= int(ends[n - 1]) - total
    assert lens.min() >= 1 and lens.max() <= TOKEN_MAX and int(lens.sum()) == total
    return lens


def gen_tokens(path, filt, total=None):
    total = int(total) if total else (1 << 22) if SMALL else (1 << 29)
    rng = np.random.default_rng(28)
    lens = token_lengths(rng, total)
    n, step = len(lens), 16384
    with h5py.File(path + ".tmp", "w") as f:
        t = f.create_dataset("tokens", (n,), dtype=h5py.vlen_dtype(np.dtype("<i4")), chunks=(1024,),
                             **FILTERS[filt])
        for s in range(0, n, step):
            ln = lens[s:s + step]
            flat = rng.integers(0, VOCAB, int(ln.sum()), dtype=np.int32)
            rows = np.empty(len(ln), dtype=object)
            rows[:] = np.split(flat, np.cumsum(ln)[:-1])
            t[s:s + len(ln)] = rows
            del flat, rows
    os.rename(path + ".tmp", path)


def gen_images(path, chunks):
    n, step = (1000, 500) if SMALL else (40000, 2000)
    rng = np.random.default_rng(17)
    gz = FILTERS["gzip4"]
    with h5py.File(path + ".tmp", "w") as f:
        if chunks == "auto":  # what create_dataset(..., compression="gzip") picks without chunks=
            im = f.create_dataset("images", (n, 64, 64, 3), "u1", **gz)
            lb = f.create_dataset("labels", (n,), "<i8", **gz)
        else:
            im = f.create_dataset("images", (n, 64, 64, 3), "u1", chunks=(64, 64, 64, 3), **gz)
            lb = f.create_dataset("labels", (n,), "<i8", chunks=(n,), **gz)
        for s in range(0, n, step):
            base = rng.integers(0, 248, (step, 16, 16, 3), dtype=np.uint8)
            img = np.repeat(np.repeat(base, 4, axis=1), 4, axis=2) + rng.integers(0, 8, (step, 64, 64, 3),
                                                                                  dtype=np.uint8)
            im[s:s + step] = img
            lb[s:s + step] = rng.integers(0, 10, step)
    os.rename(path + ".tmp", path)


def gen_many(d, files, rows):
    files, rows = int(files), int(rows)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(18)
    x = floats(rng, files * rows, 256)
    y = rng.integers(0, 1000, files * rows)
    for k in range(files):
        with h5py.File(os.path.join(d, "in-%05d.h5" % k), "w") as f:
            f.create_dataset("data", data=x[k * rows:(k + 1) * rows], chunks=(min(rows, 1024), 256))
            f.create_dataset("label", data=y[k * rows:(k + 1) * rows], chunks=(rows,))
    with h5py.File(os.path.join(d, "one.h5.tmp"), "w") as f:
        f.create_dataset("data", data=x, chunks=(min(len(x), 1024), 256))
        f.create_dataset("label", data=y, chunks=(min(len(y), 65536),))
    os.rename(os.path.join(d, "one.h5.tmp"), os.path.join(d, "one.h5"))


def perm(src, dst, seed, names):
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        p = None
        for name in names:
            ds = f[name]
            data = ds[()]
            if p is None:
                p = np.random.default_rng(int(seed)).permutation(data.shape[0])
            dcpl = ds.id.get_create_plist()
            kw = {"compression": "gzip", "compression_opts": ds.compression_opts} if ds.compression == "gzip" else {}
            out = data[p]
            del data
            g.create_dataset(name, data=out, dtype=ds.dtype, chunks=ds.chunks, **kw)
            del out, dcpl


def inputs_of(src):
    return sorted(glob.glob(os.path.join(src, "in-*.h5"))) if os.path.isdir(src) else [src]


def read_all(paths, name):
    parts = []
    for p in paths:
        with h5py.File(p, "r") as f:
            parts.append(f[name][()])
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def contract_order(seed, n):
    """oracle_h5py.oracle_order(seed, n) (rows sorted by (K(seed, i), i)) with the keys made 2^24 at a
    time: a stable sort of the keys keeps ties in row order, so it is the same order, without
    random_raw's 4 words a row for every row at once (4 GiB for 128M rows)."""
    step = 1 << 24
    keys = np.empty(n, dtype=np.uint64)
    for s in range(0, n, step):
        keys[s:s + step] = keys_np(seed, s, min(step, n - s))
    return np.argsort(keys, kind="stable")


def vlen_base(paths, name):
    with h5py.File(paths[0], "r") as f:
        return h5py.check_vlen_dtype(f[name].dtype)


def same_rows(got, want):
    """Fixed rows: equal arrays.  Vlen rows (object arrays of 1-D arrays): the same length row by row and
    the same elements, of the same dtype."""
    if want.dtype != object:
        return np.array_equal(got, want)
    if len(got) != len(want):
        return False
    lg = np.fromiter((len(r) for r in got), np.int64, len(got))
    lw = np.fromiter((len(r) for r in want), np.int64, len(want))
    if not np.array_equal(lg, lw):
        return False
    if any(r.dtype != w.dtype for r, w in zip(got, want)):
        return False
    return len(got) == 0 or np.array_equal(np.concatenate(list(got)), np.concatenate(list(want)))


def first_wrong(got, want):
    """The first row r of a block with got[r] != want[r] (a failed block's message)."""
    return next((r for r in range(len(want)) if not same_rows(got[r:r + 1], want[r:r + 1])), len(want))


def check(src, dst, seed, names, order_of):
    paths = inputs_of(src)
    order = None
    with h5py.File(dst, "r") as g:
        for name in names:
            data = read_all(paths, name)
            if order is None:
                order = order_of(int(seed), data.shape[0])
            out = g[name]
            base, obase = vlen_base(paths, name), h5py.check_vlen_dtype(out.dtype)
            if out.shape != data.shape or out.dtype != data.dtype or base != obase:
                raise CheckFailed("%s: shape %s %s (vlen of %s), input %s %s (vlen of %s)" % (
                    name, out.shape, out.dtype, obase, data.shape, data.dtype, base))
            step = 16384 if base is not None else max(1, (64 << 20) // max(1, data[:1].nbytes))
            for s in range(0, data.shape[0], step):
                got, want = out[s:s + step], data[order[s:s + step]]
                if not same_rows(got, want):
                    r = s + first_wrong(got, want)
                    raise CheckFailed("%s: row %d is not input row %d (every row before it is right)" % (
                        name, r, order[r]))
    return "%s: %s in order (%d input%s)" % (os.path.basename(dst), ",".join(names), len(paths),
                                            "" if len(paths) == 1 else "s")


# The ratios issues 15, 28 and 52 set targets for: (case, numerator, denominator, target or None, what[, factor[,
# "rounds"]]), the ratio median(numerator) / (factor * median(denominator)) (factor 1 when left out; with
# "rounds", the largest of the rounds' ratios, each round's numerator over its own denominator); a command is the
# case's, or "CASE/NAME", another case's (cases.sh runs xy's X+y in case floor when xy is not run); a
# target None is printed "-" (measured, no target).
RATIOS = [
    ("xy", "X+y", "X", 1.05, "gzip-4 X+y / X alone"),
    ("xy", "X+y", "h5repack", 0.25, "gzip-4 X+y / h5repack -f GZIP=4"),
    ("floor", "xy/X+y", "floor", 1.15, "gzip-4 X+y / CPU floor (libdeflate inflate+deflate on all cores)"),
    ("raw", "X+y-128M", "in-memory", 0.9, "raw X+y -m 128M / in-memory permutation"),
    ("raw", "X+y-2G", "in-memory", 0.6, "raw X+y -m 2G / in-memory permutation"),
    ("raw", "X+y-2G", "X+y-128M", 1.0, "raw -m 2G / -m 128M (every round)", 1, "rounds"),
    ("xy", "X+y-2G", "X+y", 1.0, "gzip-4 X+y -m 2G / -m 128M (every round)", 1, "rounds"),
    ("raw", "X+y-128M", "seqcopy", 1.1, "raw X+y -m 128M / two sequential copies", 2),
    ("small", "16B-128M", "seqcopy", 1.5, "16-byte rows -m 128M / two sequential copies", 2),
    ("rowsizes", "64B-128M", "64B-seqcopy", 1.0, "64-byte rows -m 128M / two sequential copies", 2),
    # the same yardsticks made durable as h5shuf's output is (bench/seqcopy.py --durable: two copies, the
    # second fsynced; h5shuf fsyncs its output at commit, which the plain copies never do)
    ("small", "16B-128M", "seqcopy2-durable", None, "16-byte rows -m 128M / two sequential copies, the second fsynced"),
    ("rowsizes", "64B-128M", "64B-seqcopy2-durable", None, "64-byte rows -m 128M / two sequential copies, the second fsynced"),
    ("rowsizes", "8B-128M", "8B-in-memory", None, "8-byte rows -m 128M / in-memory permutation"),
    ("small", "16B-128M", "in-memory", 0.35, "16-byte rows -m 128M / in-memory permutation"),
    ("rowsizes", "64B-128M", "64B-in-memory", 0.3, "64-byte rows -m 128M / in-memory permutation"),
    ("rowsizes", "256B-128M", "256B-in-memory", None, "256-byte rows -m 128M / in-memory permutation"),
    ("tokens", "tok-1G", "in-memory", 0.5, "vlen int32 tokens -m 1G / in-memory permutation"),
    ("images", "auto-j2", "rows-j2", 1.1, "h5py auto chunks / whole-row chunks"),
    ("images", "auto-j2", "auto-j1", 1.0, "auto chunks -j 2 / -j 1"),
    # the codec alone (bench/cpufloor.c on each file): h5py's 80 KB chunks cost libdeflate more a byte than
    # whole-row chunks of 786 KB, and the ratio above cannot be below this one by much
    ("images", "floor-auto", "floor-rows", None, "images CPU floor: auto chunks / whole-row chunks"),
    ("images", "auto-j2", "floor-auto", 1.15, "images auto chunks -j 2 / their CPU floor"),
    ("images", "rows-j2", "floor-rows", None, "images whole-row chunks -j 2 / their CPU floor"),
    ("many", None, "one-file", 2.0, "many inputs / one file of the same rows"),
]


def cmd_table(tsv, header):
    runs = {}  # (case, name): [(wall, rss, cpu or None, rep)]
    for line in open(tsv):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")  # case name rep wall rss [user sys]: older runs lack the CPU
        cpu = float(f[5]) + float(f[6]) if len(f) >= 7 and f[5] and f[6] else None
        runs.setdefault((f[0], f[1]), []).append((float(f[3]), int(f[4]), cpu, f[2]))
    med = {k: statistics.median(w for w, *_ in v) for k, v in runs.items()}
    rss = {k: max(r for _, r, *_ in v) / 1024 for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, _, c, _ in v) if all(c is not None for _, _, c, _ in v) else None
           for k, v in runs.items()}
    fmt_cpu = lambda k: "%.2f" % cpu[k] if cpu.get(k) is not None else "-"
    out = [open(header).read().rstrip("\n"), "",
           "| case | command | rounds | median s (min-max) | user+sys CPU s (median) | peak RSS MiB |",
           "|---|---|---:|---:|---:|---:|"]
    for (case, name), v in runs.items():
        ws = [w for w, *_ in v]
        out.append("| %s | %s | %d | %.2f (%.2f-%.2f) | %s | %.0f |" % (
            case, name, len(v), med[(case, name)], min(ws), max(ws), fmt_cpu((case, name)), rss[(case, name)]))
    out += ["", "| ratio | s (CPU s) | against s (CPU s) | value | target | met |", "|---|---:|---:|---:|---:|---|"]
    def command(case, name):  # "NAME" of the case or "CASE/NAME"
        return tuple(name.split("/", 1)) if name and "/" in name else (case, name)

    for case, num, den, target, what, *more in RATIOS:
        factor = more[0] if more else 1
        rounds = len(more) > 1 and more[1] == "rounds"  # the target holds in every round, not the medians'
        if num is None:  # the many-inputs command is named after the number of files
            num = next((n for (c, n) in med if c == case and n.endswith("-inputs")), None)
        num, den = command(case, num), command(case, den)
        if num not in med or den not in med:
            continue
        r = med[num] / (med[den] * factor)
        what_r = what
        if rounds:  # the worst round's ratio
            by_rep = {rep: w for w, _, _, rep in runs[den]}
            per = [w / (by_rep[rep] * factor) for w, _, _, rep in runs[num] if rep in by_rep]
            if per:
                r = max(per)
                what_r = "%s: worst of %d (%s)" % (what, len(per), ", ".join("%.2f" % x for x in per))
        times = "%.2f (%s) | %s%.2f (%s)" % (med[num], fmt_cpu(num), "%g x " % factor if factor != 1 else "",
                                            med[den], fmt_cpu(den))
        if target is None:
            out.append("| %s | %s | %.2f | - | - |" % (what_r, times, r))
        else:
            out.append("| %s | %s | %.2f | <= %.2f | %s |" % (what_r, times, r, target, "yes" if r <= target else "**no**"))
    olds = [(c, n[4:]) for (c, n) in med if n.startswith("old:") and (c, n[4:]) in med]
    if olds:
        out += ["", "| command | old s (CPU s) | new s (CPU s) | new / old |", "|---|---:|---:|---:|"]
        for c, n in olds:
            out.append("| %s %s | %.2f (%s) | %.2f (%s) | %.2f |" % (
                c, n, med[(c, "old:" + n)], fmt_cpu((c, "old:" + n)), med[(c, n)], fmt_cpu((c, n)),
                med[(c, n)] / med[(c, "old:" + n)]))
    return "\n".join(out)


def main(argv):
    try:
        if argv[:2] == ["gen", "xy"]:
            gen_xy(argv[2], argv[3])
        elif argv[:2] == ["gen", "small"]:
            gen_small(argv[2])
        elif argv[:2] == ["gen", "rows"]:
            gen_rows(argv[2], int(argv[3]), argv[4], 16 + int(argv[3]))
        elif argv[:2] == ["gen", "tokens"]:
            gen_tokens(argv[2], argv[3], *argv[4:5])
        elif argv[:2] == ["gen", "images"]:
            gen_images(argv[2], argv[3])
        elif argv[:2] == ["gen", "many"]:
            gen_many(argv[2], argv[3], argv[4])
        elif argv[0] == "perm":
            perm(argv[1], argv[2], argv[3], argv[4:])
        elif argv[0] == "check":
            print("check ok: " + check(argv[1], argv[2], argv[3], argv[4:], contract_order))
        elif argv[0] == "table":
            print(cmd_table(argv[1], argv[2]))
        elif argv[0] == "check-perm":
            print("check ok: " + check(argv[1], argv[2], argv[3], argv[4:],
                                       lambda seed, n: np.random.default_rng(seed).permutation(n)))
        elif argv[0] == "check-same":
            print("check ok: " + check(argv[1], argv[2], argv[3], argv[4:], lambda seed, n: np.arange(n)))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except CheckFailed as e:
        print("check FAILED: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
