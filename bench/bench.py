#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench.py: the untimed helpers of bench/run.sh (docs/benchmark.md).

  check-input  DATA.h5 FILTER ROWS COLS       a generated dataset: /x (ROWS, COLS) float32, FILTER, ~1 MiB chunks
  totext       DATA.h5 OUT.txt                /x as text, one base64 line per row (fixed width); also writes
                                              OUT.txt.mhash, the multiset hash of its lines
  check-h5shuf IN.h5 OUT.h5 FILTER SEED       OUT /x == IN /x in the permutation contract's order for SEED
  check-h5py   IN.h5 OUT.h5 FILTER SEED       OUT /x == IN /x[default_rng(SEED).permutation(N)]
  check-copy   IN.h5 OUT.h5 FILTER            OUT /x == IN /x, row for row (h5repack)
  check-text   IN.txt OUT.txt                 OUT's lines are a permutation of IN's (count + multiset hash)
  table        RESULTS.tsv HEADER.md          the results as markdown: medians, MB/s, peak RSS, ratios

Every HDF5 check also compares shape, datatype, chunk shape and the filter pipeline (FILTER: none, gzip4,
zstd3) with what the method was asked to write.  A check prints one line, "check ok: ..." or
"check FAILED: ...", and exits 0 only when it passed.  Nothing here is timed.
"""

import binascii
import os
import statistics
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from oracle_h5py import oracle_order  # noqa: E402  (numpy Philox: the contract's order)

# The filter pipeline each FILTER name stands for: [(HDF5 filter id, client data)].
PIPELINES = {"none": [], "gzip4": [(1, (4,))], "zstd3": [(32015, (3,))]}
BLOCK_BYTES = 64 << 20  # rows are read and compared in blocks of about this many bytes


class CheckFailed(Exception):
    pass


def require(cond, what):
    if not cond:
        raise CheckFailed(what)


def pipeline(ds):
    dcpl = ds.id.get_create_plist()
    return [(f[0], tuple(f[2])) for f in (dcpl.get_filter(i) for i in range(dcpl.get_nfilters()))]


def block_rows(ds):
    """Rows per block: a multiple of the chunk rows, about BLOCK_BYTES."""
    row_bytes = ds.dtype.itemsize * int(np.prod(ds.shape[1:], dtype=np.int64))
    chunk = ds.chunks[0] if ds.chunks else 1
    return max(1, BLOCK_BYTES // max(row_bytes, 1) // chunk) * chunk


def check_layout(inp, out, filt):
    """Shape, datatype, chunk shape the input's, and the pipeline FILTER asks for."""
    require(out.shape == inp.shape, "shape %s, input %s" % (out.shape, inp.shape))
    require(out.dtype == inp.dtype, "dtype %s, input %s" % (out.dtype, inp.dtype))
    require(out.chunks == inp.chunks, "chunks %s, input %s" % (out.chunks, inp.chunks))
    got = pipeline(out)
    require(got == PIPELINES[filt], "filters %s, expected %s (%s)" % (got, PIPELINES[filt], filt))


def compare_order(inp, out, order):
    """out[r] == inp[order[r]] for every row r; the input is read whole, the output in blocks."""
    data = inp[()]
    step = block_rows(out)
    for s in range(0, out.shape[0], step):
        got = out[s:s + step]
        want = data[order[s:s + step]]
        if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
            bad = np.nonzero((got != want).reshape(len(got), -1).any(axis=1))[0]
            raise CheckFailed("output row %d is not input row %d (%d rows differ in rows %d..%d)" % (
                s + bad[0], order[s + bad[0]], len(bad), s, s + len(got) - 1))


# ---------------------------------------------------------------------------------------------------
# Multiset hash of fixed-width rows: each row gets a 64-bit hash (a random odd linear form of its 64-bit
# words, then the SplitMix64 finaliser), and the digest is (count, sum of mix(h), sum of mix(h ^ C)) mod
# 2^64.  Any reordering of the rows gives the same digest; a changed, lost or repeated row changes it
# except with probability about 2^-64.


def _mix(h):
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


class MultisetHash:
    def __init__(self, width):
        self.width = width
        self.words = (width + 7) // 8
        self.form = np.random.default_rng(20261122).integers(0, 2 ** 63, self.words, dtype=np.uint64) * \
            np.uint64(2) + np.uint64(1)
        self.count = 0
        self.sums = [0, 0]

    def add(self, rows):
        """rows: (k, width) uint8."""
        require(rows.ndim == 2 and rows.shape[1] == self.width, "row width %s, expected %d" % (
            rows.shape[1:], self.width))
        if self.width % 8:
            rows = np.pad(rows, ((0, 0), (0, 8 * self.words - self.width)))
        x = np.ascontiguousarray(rows).view(np.uint64)
        with np.errstate(over="ignore"):
            h = (x * self.form).sum(axis=1, dtype=np.uint64)
            for k, salt in enumerate((0, 0x5851F42D4C957F2D)):
                self.sums[k] = (self.sums[k] + int(_mix(h ^ np.uint64(salt)).sum(dtype=np.uint64))) % 2 ** 64
        self.count += len(rows)

    def digest(self):
        return "%d %d %016x %016x" % (self.count, self.width, self.sums[0], self.sums[1])


def text_rows(path, width):
    """The lines of a fixed-width text file, as (k, width) uint8 blocks; checks every line's newline."""
    size = os.path.getsize(path)
    require(width > 0 and size % width == 0, "%s: %d bytes, not whole lines of %d" % (path, size, width))
    per = max(1, BLOCK_BYTES // width)
    with open(path, "rb") as f:
        while True:
            buf = f.read(per * width)
            if not buf:
                break
            rows = np.frombuffer(buf, dtype=np.uint8).reshape(-1, width)
            require((rows[:, -1] == 10).all() and not (rows[:, :-1] == 10).any(),
                    "%s: a line is not %d bytes long" % (path, width))
            yield rows


# ---------------------------------------------------------------------------------------------------
# Commands


def cmd_check_input(path, filt, rows, cols):
    with h5py.File(path, "r") as f:
        ds = f["x"]
        require(ds.shape == (int(rows), int(cols)), "shape %s, expected (%s, %s)" % (ds.shape, rows, cols))
        require(ds.dtype == np.dtype("<f4"), "dtype %s, expected float32" % ds.dtype)
        chunk_bytes = ds.chunks[0] * ds.chunks[1] * 4
        require(ds.chunks[1] == ds.shape[1] and (chunk_bytes == 1 << 20 or ds.chunks[0] == ds.shape[0]),
                "chunks %s, expected 1 MiB of whole rows" % (ds.chunks,))
        require(pipeline(ds) == PIPELINES[filt], "filters %s, expected %s" % (pipeline(ds), filt))
        head = ds[:min(ds.shape[0], 64)]
        require(np.array_equal(head, np.round(head * 256) / 256) and len(np.unique(head)) > 16,
                "values are not the generator's (multiples of 1/256, varied)")
    return "%s: /x (%s, %s) float32, chunks %s, %s" % (os.path.basename(path), rows, cols, ds.chunks, filt)


def cmd_totext(path, out):
    tmp = out + ".tmp"
    with h5py.File(path, "r") as f, open(tmp, "wb") as g:
        ds = f["x"]
        row_bytes = ds.dtype.itemsize * ds.shape[1]
        width = len(binascii.b2a_base64(bytes(row_bytes)))
        mh = MultisetHash(width)
        step = block_rows(ds)
        for s in range(0, ds.shape[0], step):
            mv = memoryview(np.ascontiguousarray(ds[s:s + step]).view(np.uint8).reshape(-1))
            lines = b"".join([binascii.b2a_base64(mv[i:i + row_bytes]) for i in range(0, len(mv), row_bytes)])
            mh.add(np.frombuffer(lines, dtype=np.uint8).reshape(-1, width))
            g.write(lines)
    with open(out + ".mhash", "w") as h:
        h.write(mh.digest() + "\n")
    os.replace(tmp, out)
    return "%s: %d lines of %d bytes" % (os.path.basename(out), mh.count, width)


def cmd_check_text(inp, out):
    with open(inp + ".mhash") as h:
        want = h.read().split()
    count, width = int(want[0]), int(want[1])
    mh = MultisetHash(width)
    for rows in text_rows(out, width):
        mh.add(rows)
    require(mh.count == count, "%d lines, input %d" % (mh.count, count))
    require(mh.digest().split() == want, "the lines are not a permutation of the input's (multiset hash "
            "%s, input %s)" % (mh.digest(), " ".join(want)))
    return "%d lines, a permutation of the input's (multiset hash)" % count


def cmd_check_h5shuf(inp, out, filt, seed):
    with h5py.File(inp, "r") as f, h5py.File(out, "r") as g:
        a, b = f["x"], g["x"]
        check_layout(a, b, filt)
        require("h5shuf_seed" in g.attrs, "no root attribute h5shuf_seed")
        stored = int(np.asarray(g.attrs["h5shuf_seed"]).reshape(-1)[0])
        require(stored == int(seed), "h5shuf_seed %d, expected %s" % (stored, seed))
        compare_order(a, b, oracle_order(int(seed), a.shape[0]))
    return "%d rows in the contract's order for seed %s (numpy Philox), %s" % (b.shape[0], seed, filt)


def cmd_check_h5py(inp, out, filt, seed):
    with h5py.File(inp, "r") as f, h5py.File(out, "r") as g:
        a, b = f["x"], g["x"]
        check_layout(a, b, filt)
        compare_order(a, b, np.random.default_rng(int(seed)).permutation(a.shape[0]))
    return "%d rows, the input permuted by default_rng(%s).permutation, %s" % (b.shape[0], seed, filt)


def cmd_check_copy(inp, out, filt):
    with h5py.File(inp, "r") as f, h5py.File(out, "r") as g:
        a, b = f["x"], g["x"]
        check_layout(a, b, filt)
        step = block_rows(a)
        for s in range(0, a.shape[0], step):
            got, want = b[s:s + step], a[s:s + step]
            if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
                bad = np.nonzero((got != want).reshape(len(got), -1).any(axis=1))[0]
                raise CheckFailed("row %d differs from the input's (%d rows differ in rows %d..%d)" % (
                    s + bad[0], len(bad), s, s + len(got) - 1))
    return "%d rows equal to the input's, %s" % (b.shape[0], filt)


# ---------------------------------------------------------------------------------------------------
# The table

METHODS = ["h5shuf", "h5repack", "h5py", "shuf", "terashuf"]
NAMES = {"h5shuf": "h5shuf --memory {mem}", "h5repack": "h5repack -f {filt}",
         "h5py": "h5py+numpy in memory", "shuf": "GNU shuf (text)", "terashuf": "terashuf {mem} (text)"}
REPACK = {"none": "NONE", "gzip4": "GZIP=4", "zstd3": "UD=32015,0,1,3"}


def fmt(x, digits=1):
    return "—" if x is None else ("%.*f" % (digits, x))


def cmd_table(tsv, header):
    runs = {}
    order = []
    nbytes = {}
    memory = "128M"
    with open(tsv) as f:
        for line in f:
            if line.startswith("#memory"):
                memory = line.split()[1]
            if line.startswith("#") or not line.strip():
                continue
            ds, size, method, _rep, wall, rss = line.split("\t")[:6]
            if ds not in nbytes:
                order.append(ds)
                nbytes[ds] = int(size)
            runs.setdefault((ds, method), []).append((float(wall), int(rss)))

    def med(ds, m):
        r = runs.get((ds, m))
        return statistics.median(w for w, _ in r) if r else None

    def peak(ds, m):
        r = runs.get((ds, m))
        return max(k for _, k in r) / 1024 if r else None

    def ratio(a, b):
        return a / b if a is not None and b else None

    out = [open(header).read().rstrip("\n"), ""]
    out += ["## Runs", "",
            "Wall seconds: median of the runs (min–max); MB/s: uncompressed bytes (10^6) per median second; "
            "peak RSS: the largest of the runs.", "",
            "| dataset | method | runs | wall s | min–max s | MB/s | peak RSS MiB |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for ds in order:
        filt = ds.split("-")[1]
        for m in METHODS:
            r = runs.get((ds, m))
            if not r:
                continue
            w = [x for x, _ in r]
            # a run too short for the clock (a tiny smoke matrix) has no rate
            rate = "%.0f" % (nbytes[ds] / 1e6 / med(ds, m)) if med(ds, m) else "—"
            out.append("| %s | %s | %d | %.2f | %.2f–%.2f | %s | %.0f |" % (
                ds, NAMES[m].format(mem=memory, filt=REPACK.get(filt, filt)), len(r), med(ds, m), min(w),
                max(w), rate, peak(ds, m)))
    out += ["", "## Ratios (h5shuf / the alternative; below 1: h5shuf is faster or smaller)", "",
            "| dataset | wall / h5repack | wall / in-memory | RSS / in-memory | wall / shuf | wall / terashuf |",
            "|---|---:|---:|---:|---:|---:|"]
    for ds in order:
        h = med(ds, "h5shuf")
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            ds, fmt(ratio(h, med(ds, "h5repack")), 2), fmt(ratio(h, med(ds, "h5py")), 2),
            fmt(ratio(peak(ds, "h5shuf"), peak(ds, "h5py")), 3), fmt(ratio(h, med(ds, "shuf")), 2),
            fmt(ratio(h, med(ds, "terashuf")), 2)))
    scal = []
    for ds in order:
        size, rest = ds.split("-", 1)
        if size == "1G" and "4G-" + rest in nbytes:
            a = nbytes[ds] / 1e6 / med(ds, "h5shuf") if med(ds, "h5shuf") else None
            d4 = "4G-" + rest
            b = nbytes[d4] / 1e6 / med(d4, "h5shuf") if med(d4, "h5shuf") else None
            scal.append("| %s | %s | %s | %s |" % (rest, fmt(a, 0), fmt(b, 0), fmt(ratio(b, a), 2)))
    if scal:
        out += ["", "## Scaling (h5shuf MB/s, 4 GiB against 1 GiB)", "",
                "| filter, row | 1 GiB | 4 GiB | 4 GiB / 1 GiB |", "|---|---:|---:|---:|"] + scal

    # The targets, read off the same run (information, not an assertion).
    def target(ds, what, val, limit):
        if ds not in nbytes or val is None:
            return "- %s: not measured in this run" % what
        return "- %s: %.2f (target <= %.2f: %s)" % (what, val, limit, "met" if val <= limit else "NOT met")
    g, n = "1G-gzip4-1K", "1G-none-1K"
    out += ["", "## Issue 5 targets", "",
            target(g, "gzip-4, 1 GiB: h5shuf / h5repack wall", ratio(med(g, "h5shuf"), med(g, "h5repack")), 0.5),
            target(g, "gzip-4, 1 GiB: h5shuf / in-memory wall", ratio(med(g, "h5shuf"), med(g, "h5py")), 0.6),
            target(g, "gzip-4, 1 GiB: h5shuf / in-memory peak RSS", ratio(peak(g, "h5shuf"), peak(g, "h5py")), 0.1),
            target(n, "raw, 1 GiB: h5shuf / in-memory wall", ratio(med(n, "h5shuf"), med(n, "h5py")), 1.0),
            target(n, "raw, 1 GiB: h5shuf / terashuf wall", ratio(med(n, "h5shuf"), med(n, "terashuf")), 0.7)
            if (n, "terashuf") in runs or n not in nbytes else "- raw, 1 GiB: h5shuf / terashuf wall: terashuf "
            "did not run (not on PATH); h5shuf / GNU shuf: %s" % fmt(ratio(med(n, "h5shuf"), med(n, "shuf")), 2)]
    for ds in order:
        size, rest = ds.split("-", 1)
        if size == "4G" and "1G-" + rest in nbytes and med(ds, "h5shuf") and med("1G-" + rest, "h5shuf"):
            r = (nbytes[ds] / med(ds, "h5shuf")) / (nbytes["1G-" + rest] / med("1G-" + rest, "h5shuf"))
            out.append("- %s: h5shuf MB/s at 4 GiB / at 1 GiB: %.2f (target within 15%%: %s)" % (
                rest, r, "met" if r >= 0.85 else "NOT met"))
    return "\n".join(out)


COMMANDS = {"check-input": (cmd_check_input, 4), "totext": (cmd_totext, 2), "check-text": (cmd_check_text, 2),
            "check-h5shuf": (cmd_check_h5shuf, 4), "check-h5py": (cmd_check_h5py, 4),
            "check-copy": (cmd_check_copy, 3), "table": (cmd_table, 2)}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or len(sys.argv) - 2 != COMMANDS[sys.argv[1]][1]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    fn = COMMANDS[sys.argv[1]][0]
    try:
        msg = fn(*sys.argv[2:])
    except CheckFailed as exc:
        print("check FAILED: %s %s: %s" % (sys.argv[1], " ".join(os.path.basename(a) for a in sys.argv[2:4]),
                                           exc), flush=True)
        return 1
    print(msg if sys.argv[1] == "table" else "%s: %s" % ("check ok" if "check" in sys.argv[1] else "ok", msg),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
