#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""outofcore.py: the data, checks and table of bench/outofcore.sh (issue 52: larger than memory).

  gen PATH ROWS FILTER       /data (ROWS, 256) float32 in chunks of (1024, 256) (1 MiB) and /label (ROWS,)
                             int64 in chunks of 65536, FILTER none or gzip4 (HDF5's deflate at level 4, no
                             shuffle): 1032-byte rows, X with its labels.  Floats are normal draws rounded to
                             1/256 (gzip-4 about 2x), labels uniform on 0..999; block b of 65536 rows is drawn
                             from numpy.random.default_rng([52, b]), so any block can be made alone.  Chunks are
                             made on every core and written with write_direct_chunk.
  text PATH ROWS             the same rows as text lines of the same length (1032 bytes): the row's number in 12
                             digits, a space, 1018 printable bytes made of the row's first 1018 bytes
                             (33 + byte % 94), a newline; writes PATH.sum, the lines' count and an
                             order-free sum of their hashes
  check-text IN OUT          OUT (terashuf's) holds IN's lines in some order: every line 1032 bytes, every row
                             number once, the same sum of hashes as IN.sum
  check-h5 IN OUT SEED [K]   OUT's /data and /label are IN's rows in the contract's order for SEED at K (default
                             4096) positions spread over the output (the first and last rows among them), and
                             OUT's shapes are IN's: a check that reads a few MB, where the full check of
                             bench/cases.py would read the input in the output's order
  table TSV HEADER           bench/outofcore.sh's results as markdown
"""

import multiprocessing as mp
import os
import statistics
import sys
import zlib

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from oracle_h5py import keys_np  # noqa: E402  (numpy Philox: the contract's keys)

COLS, CHUNK, LCHUNK, BLOCK = 256, 1024, 65536, 65536
ROW = 4 * COLS + 8
WIDTH = ROW  # a text line: as many bytes as a row
DIGITS = 12


class CheckFailed(Exception):
    pass


def block_rows(b, rows):
    """Block b's (floats, labels): rows b*BLOCK .. min(rows, (b+1)*BLOCK) - 1."""
    n = min(BLOCK, rows - b * BLOCK)
    rng = np.random.default_rng([52, b])
    x = (np.round(rng.standard_normal((n, COLS), dtype=np.float32) * 256) / 256).astype(np.float32)
    y = rng.integers(0, 1000, n, dtype=np.int64)
    return x, y


def gen_block(args):
    """Block b's stored chunks: [(row offset, bytes)] of /data and of /label."""
    b, rows, filt = args
    x, y = block_rows(b, rows)
    # a stored chunk decodes to the whole chunk, the rows past the dataset's end included: pad the last
    if len(x) % CHUNK:
        x = np.concatenate([x, np.zeros((CHUNK - len(x) % CHUNK, COLS), dtype=x.dtype)])
    if len(y) < min(rows, LCHUNK):
        y = np.concatenate([y, np.zeros(min(rows, LCHUNK) - len(y), dtype=y.dtype)])
    pack = (lambda a: zlib.compress(a, 4)) if filt == "gzip4" else (lambda a: a)
    xs = [(b * BLOCK + s, pack(x[s:s + CHUNK].tobytes())) for s in range(0, len(x), CHUNK)]
    return b, xs, pack(y.tobytes())


def gen(path, rows, filt):
    rows = int(rows)
    assert filt in ("none", "gzip4")
    kw = {"compression": "gzip", "compression_opts": 4} if filt == "gzip4" else {}
    nblocks = (rows + BLOCK - 1) // BLOCK
    with h5py.File(path + ".tmp", "w") as f, mp.Pool(os.cpu_count()) as pool:
        x = f.create_dataset("data", (rows, COLS), "<f4", chunks=(CHUNK, COLS), **kw)
        y = f.create_dataset("label", (rows,), "<i8", chunks=(min(rows, LCHUNK),), **kw)
        for b, xs, ys in pool.imap(gen_block, [(b, rows, filt) for b in range(nblocks)], chunksize=1):
            for off, c in xs:
                x.id.write_direct_chunk((off, 0), c)
            y.id.write_direct_chunk((b * BLOCK,), ys)
    os.rename(path + ".tmp", path)
    return "%s: %d rows, %s, %d bytes" % (os.path.basename(path), rows, filt, os.path.getsize(path))


HASH_W = np.random.default_rng(5252).integers(1, 1 << 63, WIDTH // 8, dtype=np.uint64) | np.uint64(1)


def line_hashes(lines):
    """A 64-bit hash of each line ((k, WIDTH) uint8)."""
    with np.errstate(over="ignore"):
        h = (lines.view(np.uint64).reshape(len(lines), WIDTH // 8) * HASH_W).sum(axis=1, dtype=np.uint64)
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xbf58476d1ce4e5b9)
        h ^= h >> np.uint64(32)
    return h


def text_block(args):
    b, rows = args
    x, y = block_rows(b, rows)
    raw = np.concatenate([x.view(np.uint8).reshape(len(x), -1), y.view(np.uint8).reshape(len(y), 8)], axis=1)
    lines = np.empty((len(x), WIDTH), dtype=np.uint8)
    ids = np.arange(b * BLOCK, b * BLOCK + len(x), dtype=np.int64)
    for d in range(DIGITS):
        lines[:, DIGITS - 1 - d] = 48 + (ids // 10 ** d) % 10
    lines[:, DIGITS] = 32
    lines[:, DIGITS + 1:WIDTH - 1] = 33 + raw[:, :WIDTH - DIGITS - 2] % 94
    lines[:, WIDTH - 1] = 10
    h = line_hashes(lines)
    with np.errstate(over="ignore"):
        return lines.tobytes(), int(h.sum(dtype=np.uint64)), int(np.bitwise_xor.reduce(h))


def text(path, rows):
    rows = int(rows)
    nblocks = (rows + BLOCK - 1) // BLOCK
    total, xor = 0, 0
    with open(path + ".tmp", "wb") as f, mp.Pool(os.cpu_count()) as pool:
        for data, s, x in pool.imap(text_block, [(b, rows) for b in range(nblocks)], chunksize=1):
            f.write(data)
            total = (total + s) % (1 << 64)
            xor ^= x
    with open(path + ".sum", "w") as g:
        g.write("%d %d %d\n" % (rows, total, xor))
    os.rename(path + ".tmp", path)
    return "%s: %d lines of %d bytes" % (os.path.basename(path), rows, WIDTH)


def check_text(inp, out):
    with open(inp + ".sum") as g:
        rows, want_sum, want_xor = (int(v) for v in g.read().split())
    size = os.path.getsize(out)
    if size != rows * WIDTH:
        raise CheckFailed("%s: %d bytes, not %d lines of %d" % (out, size, rows, WIDTH))
    seen = np.zeros(rows, dtype=np.uint8)
    total, xor = 0, 0
    per = (64 << 20) // WIDTH
    pow10 = (10 ** np.arange(DIGITS - 1, -1, -1)).astype(np.int64)
    with open(out, "rb") as f:
        while True:
            buf = f.read(per * WIDTH)
            if not buf:
                break
            lines = np.frombuffer(buf, dtype=np.uint8).reshape(-1, WIDTH)
            if not (lines[:, -1] == 10).all() or (lines[:, :-1] == 10).any():
                raise CheckFailed("%s: a line is not %d bytes long" % (out, WIDTH))
            ids = (lines[:, :DIGITS].astype(np.int64) - 48) @ pow10
            if ids.min() < 0 or ids.max() >= rows:
                raise CheckFailed("%s: a line's row number is out of range" % out)
            np.add.at(seen, ids, 1)
            h = line_hashes(lines)
            with np.errstate(over="ignore"):
                total = (total + int(h.sum(dtype=np.uint64))) % (1 << 64)
            xor ^= int(np.bitwise_xor.reduce(h))
    if (seen != 1).any():
        raise CheckFailed("%s: row %d appears %d times" % (out, int(np.argmax(seen != 1)), seen[np.argmax(seen != 1)]))
    if (total, xor) != (want_sum, want_xor):
        raise CheckFailed("%s: every row number once, but the lines' bytes differ from the input's" % out)
    return "%s: a permutation of the %d input lines" % (os.path.basename(out), rows)


def check_h5(inp, out, seed, k=4096):
    with h5py.File(inp, "r") as f, h5py.File(out, "r") as g:
        n = f["data"].shape[0]
        for name in ("data", "label"):
            if g[name].shape != f[name].shape or g[name].dtype != f[name].dtype:
                raise CheckFailed("%s: /%s is %s %s, input %s %s" % (out, name, g[name].shape, g[name].dtype,
                                                                     f[name].shape, f[name].dtype))
        keys = keys_np(int(seed), 0, n)
        order = np.argsort(keys, kind="stable")  # ties by row number: the contract's (key, i)
        del keys
        k = min(int(k), n)
        pos = np.unique(np.concatenate([np.linspace(0, n - 1, k // 2).astype(np.int64),
                                        np.random.default_rng(7).integers(0, n, k - k // 2)]))
        src = order[pos]
        del order
        by_src = np.argsort(src)  # read the input in its order
        for name in ("data", "label"):
            want = np.stack([f[name][int(src[i])] for i in by_src])
            got = np.stack([g[name][int(pos[i])] for i in by_src])
            bad = np.flatnonzero([not np.array_equal(a, b) for a, b in zip(got, want)])
            if len(bad):
                i = by_src[bad[0]]
                raise CheckFailed("%s: /%s row %d is not input row %d" % (out, name, pos[i], src[i]))
    return "%s: %d positions in the contract's order" % (os.path.basename(out), len(pos))


def fmt_bytes(v):
    return "%.1f" % (v / 1e9) if v != "" else "-"


def table(tsv, header):
    """The results as markdown: one row a command; the ratios of the acceptance."""
    rows = []
    with open(tsv) as f:
        names = f.readline().lstrip("#").rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(names, line.rstrip("\n").split("\t"))))
    out = [open(header).read().rstrip("\n"), ""]
    out.append("| case | command | wall s | user s | sys s | user+sys s | pass 1 s | pass 2 s | read GB | written GB "
               "| disk read GB | disk written GB | peak RSS MiB | load | check |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        if r["check"].startswith("not run"):
            out.append("| %s | %s | %s |" % (r["case"], r["command"], " | ".join(["-"] * 12) + " | " + r["check"]))
            continue
        out.append("| %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %d | %s | %s |" % (
            r["case"], r["command"], float(r["wall_s"]), float(r["user_s"]), float(r["sys_s"]),
            float(r["user_s"]) + float(r["sys_s"]), r["pass1_s"] or "-", r["pass2_s"] or "-",
            fmt_bytes(int(float(r["rchar"]))), fmt_bytes(int(float(r["wchar"]))), fmt_bytes(int(float(r["read_bytes"]))),
            fmt_bytes(int(float(r["write_bytes"]))), int(r["rss_kib"]) // 1024, r["load"], r["check"]))

    def wall(case, cmd):
        v = [float(r["wall_s"]) for r in rows if r["case"] == case and r["command"] == cmd]
        return statistics.median(v) if v else None

    def rss(case, cmd):
        v = [int(r["rss_kib"]) for r in rows if r["case"] == case and r["command"] == cmd]
        return max(v) if v else None

    out += ["", "| ratio | h5shuf s | against s | value | goal | met |", "|---|---:|---:|---:|---:|---|"]
    mem = [r["command"] for r in rows if r["command"].startswith("h5shuf ")]
    main = mem[0] if mem else "h5shuf"
    floor = lambda c: (wall(c, "disk floor: copy 1") or 0) + (wall(c, "disk floor: copy 2") or 0) or None
    for what, num, den, goal in (
            ("raw: h5shuf / terashuf", wall("raw", main), wall("text", "terashuf"), 0.8),
            ("raw: h5shuf / disk floor (two cold copies)", wall("raw", main), floor("raw"), 1.3),
            ("gzip-4: h5shuf / CPU floor", wall("gzip4", main), wall("gzip4", "CPU floor"), 1.15),
            ("gzip-4: h5shuf / disk floor (two cold copies)", wall("gzip4", main), floor("gzip4"), None),
            ("gzip-4: h5shuf / terashuf (of the raw rows)", wall("gzip4", main), wall("text", "terashuf"), None)):
        if num is None or den is None:
            continue
        v = num / den
        out.append("| %s | %.1f | %.1f | %.2f | %s | %s |" % (what, num, den, v, "<= %.2f" % goal if goal else "-",
                                                              ("yes" if v <= goal else "**no**") if goal else ""))
    limit = None
    for line in open(header):
        if line.startswith("- budget bytes:"):
            limit = int(line.split(":")[1]) + (24 << 20)
    for case in ("raw", "gzip4"):
        v = rss(case, main)
        if v is not None and limit:
            out.append("| %s: peak RSS / (budget + 24 MiB) | %d MiB | %d MiB | %.3f | <= 1 | %s |" % (
                case, v // 1024, limit >> 20, v * 1024 / limit, "yes" if v * 1024 <= limit else "**no**"))
    return "\n".join(out)


def main():
    cmds = {"gen": (gen, 3), "text": (text, 2), "check-text": (check_text, 2), "check-h5": (check_h5, 3),
            "table": (table, 2)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    fn, nargs = cmds[sys.argv[1]]
    args = sys.argv[2:]
    if len(args) < nargs:
        sys.exit(__doc__)
    try:
        print(fn(*args))
    except CheckFailed as e:
        print("check FAILED: %s" % e)
        sys.exit(1)


if __name__ == "__main__":
    main()
