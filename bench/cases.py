#!/usr/bin/python3
"""cases.py: the data, the in-memory alternative and the checks of bench/cases.sh (issue 15's cases).

  gen xy PATH FILTER            /data (1048576, 256) float32 in chunks of (1024, 256) (1 MiB) and /label
                                (1048576,) int64 in chunks of 65536, both FILTER (none, gzip4): X with its labels
  gen small PATH                /data (67108864, 4) float32, chunks of (65536, 4), no filter: 16-byte rows, 1 GiB
  gen images PATH CHUNKS        /images (40000, 64, 64, 3) uint8 and /labels (40000,) int64, gzip-4, chunked
                                as h5py chooses by itself (CHUNKS=auto, h5py's guess: (2500, 4, 8, 1)) or in
                                whole rows (CHUNKS=rows: (64, 64, 64, 3), labels (40000,))
  gen many DIR FILES ROWS       FILES inputs DIR/in-NNNNN.h5 of ROWS rows each: /data (ROWS, 256) float32
                                chunks (min(ROWS, 1024), 256), /label (ROWS,) int64; and DIR/one.h5, the same
                                rows in one file
  perm IN OUT SEED DSET...      the in-memory alternative: every DSET of IN read whole, its rows permuted by
                                numpy.random.default_rng(SEED).permutation (one permutation for all), written
                                to OUT with the input's chunks and filters
  check IN OUT SEED DSET...     OUT's DSETs hold IN's rows in the permutation contract's order for SEED
                                (oracle_h5py's numpy Philox; IN may be a directory of in-*.h5 inputs,
                                concatenated in name order)
  check-perm IN OUT SEED DSET...   OUT's DSETs are IN's permuted by default_rng(SEED) (the alternative's output)
  table TSV HEADER              bench/cases.sh's results as markdown: medians, the issue's ratios and targets

Data is random but compressible as users' data is: floats are normal draws rounded to 1/256 (gzip-4 about
2.0x), images are 16x16 random colour blocks upscaled 4x with a little noise (gzip-4 about 3x).
A check prints one line "check ok: ..." or "check FAILED: ..." and exits 0 only when it passed.
"""

import glob
import os
import statistics
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from oracle_h5py import oracle_order  # noqa: E402  (numpy Philox: the contract's order)

FILTERS = {"none": {}, "gzip4": {"compression": "gzip", "compression_opts": 4}}
BLOCK = 1 << 16  # rows generated at a time (xy, many); images in blocks of 2000


class CheckFailed(Exception):
    pass


def floats(rng, rows, cols):
    return (np.round(rng.standard_normal((rows, cols), dtype=np.float32) * 256) / 256).astype(np.float32)


def gen_xy(path, filt):
    n, cols = 1 << 20, 256
    rng = np.random.default_rng(15)
    with h5py.File(path + ".tmp", "w") as f:
        x = f.create_dataset("data", (n, cols), "<f4", chunks=(1024, cols), **FILTERS[filt])
        y = f.create_dataset("label", (n,), "<i8", chunks=(65536,), **FILTERS[filt])
        for s in range(0, n, BLOCK):
            x[s:s + BLOCK] = floats(rng, BLOCK, cols)
            y[s:s + BLOCK] = rng.integers(0, 1000, BLOCK)
    os.rename(path + ".tmp", path)


def gen_small(path):
    n, cols, step = 1 << 26, 4, 1 << 22
    rng = np.random.default_rng(16)
    with h5py.File(path + ".tmp", "w") as f:
        x = f.create_dataset("data", (n, cols), "<f4", chunks=(65536, cols))
        for s in range(0, n, step):
            x[s:s + step] = floats(rng, step, cols)
    os.rename(path + ".tmp", path)


def gen_images(path, chunks):
    n, step = 40000, 2000
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
        f.create_dataset("data", data=x, chunks=(1024, 256))
        f.create_dataset("label", data=y, chunks=(65536,))
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
            g.create_dataset(name, data=out, chunks=ds.chunks, **kw)
            del out, dcpl


def inputs_of(src):
    return sorted(glob.glob(os.path.join(src, "in-*.h5"))) if os.path.isdir(src) else [src]


def read_all(paths, name):
    parts = []
    for p in paths:
        with h5py.File(p, "r") as f:
            parts.append(f[name][()])
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def check(src, dst, seed, names, order_of):
    paths = inputs_of(src)
    order = None
    with h5py.File(dst, "r") as g:
        for name in names:
            data = read_all(paths, name)
            if order is None:
                order = order_of(int(seed), data.shape[0])
            out = g[name]
            if out.shape != data.shape or out.dtype != data.dtype:
                raise CheckFailed("%s: shape %s %s, input %s %s" % (name, out.shape, out.dtype, data.shape, data.dtype))
            step = max(1, (64 << 20) // max(1, data[:1].nbytes))
            for s in range(0, data.shape[0], step):
                if not np.array_equal(out[s:s + step], data[order[s:s + step]]):
                    raise CheckFailed("%s: rows %d.. are not in the expected order" % (name, s))
    return "%s: %s in order (%d input%s)" % (os.path.basename(dst), ",".join(names), len(paths),
                                            "" if len(paths) == 1 else "s")


# The ratios issue 15 sets targets for: (case, numerator, denominator, target or None, what).
RATIOS = [
    ("xy", "X+y", "X", 1.05, "gzip-4 X+y / X alone"),
    ("xy", "X+y", "h5repack", 0.25, "gzip-4 X+y / h5repack -f GZIP=4"),
    ("raw", "X+y-128M", "in-memory", 0.9, "raw X+y -m 128M / in-memory permutation"),
    ("raw", "X+y-2G", "in-memory", 0.6, "raw X+y -m 2G / in-memory permutation"),
    ("raw", "X+y-2G", "X+y-128M", 1.0, "raw -m 2G / -m 128M"),
    ("small", "16B-128M", "in-memory", 0.5, "16-byte rows -m 128M / in-memory permutation"),
    ("images", "auto-j2", "rows-j2", 1.2, "h5py auto chunks / whole-row chunks"),
    ("images", "auto-j2", "auto-j1", 1.0, "auto chunks -j 2 / -j 1"),
    ("many", None, "one-file", 2.0, "many inputs / one file of the same rows"),
]


def cmd_table(tsv, header):
    runs = {}
    for line in open(tsv):
        if line.startswith("#") or not line.strip():
            continue
        case, name, _rep, wall, rss = line.rstrip("\n").split("\t")
        runs.setdefault((case, name), []).append((float(wall), int(rss)))
    med = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    rss = {k: max(r for _, r in v) / 1024 for k, v in runs.items()}
    out = [open(header).read().rstrip("\n"), "", "| case | command | rounds | median s (min-max) | peak RSS MiB |",
           "|---|---|---:|---:|---:|"]
    for (case, name), v in runs.items():
        ws = [w for w, _ in v]
        out.append("| %s | %s | %d | %.2f (%.2f-%.2f) | %.0f |" % (case, name, len(v), med[(case, name)], min(ws),
                                                                   max(ws), rss[(case, name)]))
    out += ["", "| ratio | value | target | met |", "|---|---:|---:|---|"]
    for case, num, den, target, what in RATIOS:
        if num is None:  # the many-inputs command is named after the number of files
            num = next((n for (c, n) in med if c == case and n.endswith("-inputs")), None)
        if (case, num) not in med or (case, den) not in med:
            continue
        r = med[(case, num)] / med[(case, den)]
        out.append("| %s | %.2f | <= %.2f | %s |" % (what, r, target, "yes" if r <= target else "**no**"))
    olds = [(c, n[4:]) for (c, n) in med if n.startswith("old:") and (c, n[4:]) in med]
    if olds:
        out += ["", "| command | old s | new s | new / old |", "|---|---:|---:|---:|"]
        for c, n in olds:
            out.append("| %s %s | %.2f | %.2f | %.2f |" % (c, n, med[(c, "old:" + n)], med[(c, n)],
                                                           med[(c, n)] / med[(c, "old:" + n)]))
    return "\n".join(out)


def main(argv):
    try:
        if argv[:2] == ["gen", "xy"]:
            gen_xy(argv[2], argv[3])
        elif argv[:2] == ["gen", "small"]:
            gen_small(argv[2])
        elif argv[:2] == ["gen", "images"]:
            gen_images(argv[2], argv[3])
        elif argv[:2] == ["gen", "many"]:
            gen_many(argv[2], argv[3], argv[4])
        elif argv[0] == "perm":
            perm(argv[1], argv[2], argv[3], argv[4:])
        elif argv[0] == "check":
            print("check ok: " + check(argv[1], argv[2], argv[3], argv[4:], oracle_order))
        elif argv[0] == "table":
            print(cmd_table(argv[1], argv[2]))
        elif argv[0] == "check-perm":
            print("check ok: " + check(argv[1], argv[2], argv[3], argv[4:],
                                       lambda seed, n: np.random.default_rng(seed).permutation(n)))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except CheckFailed as e:
        print("check FAILED: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
