#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""split_chunks_h5py: datasets whose chunks split rows (h5py's automatic chunks) on h5shuf's own codec path.

usage: /usr/bin/python3 tests/split_chunks_h5py.py PATH/TO/h5shuf PLUGIN_DIR

h5py writes inputs whose chunks hold a block of each row, not whole rows ((N, 64, 64, 3) images get
(2500, 4, 8, 1) from h5py), with edge chunks in dim 0 and in the other dimensions, under gzip, gzip +
shuffle, zstd (our plugin from PLUGIN_DIR), lzf, fletcher32 and no filter.  For each, h5shuf runs with
-j 1 and -j 2 (the second with --check) and must give:
  (a) the input's rows in the contract's order (numpy's Philox, tests/corpus/oracle.py), read by h5py;
  (b) the chunks HDF5 itself stores for those rows: h5py writes the expected rows with the same chunks
      and filters, and every stored chunk (read_direct_chunk: filter mask and bytes; under gzip the bytes
      decoded by this test's own zlib and unshuffle, since h5shuf deflates with libdeflate) must be the
      same, edge chunks included (their part beyond the extent is zero, as HDF5 stores it);
  (c) byte-identical files for -j 1 and -j 2.
A chunk shape of one row per chunk row also runs the direct path (--strategy direct), whose output must be
the two-pass run's, byte for byte.  Chunks of more rows than pass 1's slab (and a label's that do not tile
it) are decoded once into the plan's chunk cache: the same rows and the same file at every budget.  The last line is "N passed, M failed".
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zlib

if len(sys.argv) != 3:
    sys.exit(__doc__)
H5SHUF, PLUGINS = sys.argv[1], sys.argv[2]
os.environ["HDF5_PLUGIN_PATH"] = PLUGINS  # h5py writes and reads zstd (32015) through our plugin

import h5py  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
import oracle  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (the check helper and its counts)

SEED = 21
check = O.check


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def shuffle(args):
    r = subprocess.run([H5SHUF, "-q", "-f", "-s", str(SEED)] + args, capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


def filter_kwargs(name):
    return {
        "gzip": dict(compression="gzip", compression_opts=4),
        "gzip+shuffle": dict(compression="gzip", compression_opts=6, shuffle=True),
        "zstd": dict(compression=32015, compression_opts=(3,)),
        "lzf": dict(compression="lzf"),
        "fletcher32+gzip": dict(compression="gzip", compression_opts=1, fletcher32=True),
        "none": dict(),
    }[name]


def values(rng, dtype, shape):
    """Smooth values with noise: compressible, but not trivially."""
    n = int(np.prod(shape))
    base = np.cumsum(rng.integers(-2, 3, n)) + 1000
    if np.dtype(dtype).kind == "u" and np.dtype(dtype).itemsize == 1:
        base = base % 251
    return base.astype(dtype).reshape(shape)


def decode_chunk(ds, raw, mask):
    """A stored chunk of ds decoded by this test's own code (zlib, HDF5's shuffle and fletcher32 as
    H5Zshuffle.c and H5checksum.c define them), independent of h5shuf's codec and of HDF5's; None for a
    pipeline it does not know (zstd, lzf: their bytes are compared as stored)."""
    plist = ds.id.get_create_plist()
    data = raw
    for i in reversed(range(plist.get_nfilters())):
        fid, _, cd, _ = plist.get_filter(i)
        if mask & (1 << i):
            continue
        if fid == h5py.h5z.FILTER_DEFLATE:
            data = zlib.decompress(data)
        elif fid == h5py.h5z.FILTER_FLETCHER32:
            data = data[:-4]
        elif fid == h5py.h5z.FILTER_SHUFFLE:
            es = cd[0] if cd else 1
            ne = len(data) // es
            body = np.frombuffer(data[:ne * es], np.uint8).reshape(es, ne).T.tobytes()
            data = body + data[ne * es:]
        else:
            return None
    return data


def chunks_equal(a, b):
    """Every stored chunk of datasets a and b: the same offsets and filter masks, and the same bytes, decoded
    for a gzip pipeline (h5shuf deflates with libdeflate, HDF5 with zlib: their streams differ, the chunks
    they hold do not), as stored for any other."""
    if a.id.get_num_chunks() != b.id.get_num_chunks():
        return False, "%d chunks, HDF5 stores %d" % (a.id.get_num_chunks(), b.id.get_num_chunks())
    gzip = a.compression == "gzip"
    for i in range(b.id.get_num_chunks()):
        off = b.id.get_chunk_info(i).chunk_offset
        ma, ba = a.id.read_direct_chunk(off)
        mb, bb = b.id.read_direct_chunk(off)
        if gzip and ma == mb:
            ba, bb = decode_chunk(a, ba, ma), decode_chunk(b, bb, mb)
        if ma != mb or ba is None or ba != bb:
            return False, "chunk at %s differs (mask %d/%d, %s/%s bytes)" % (
                off, ma, mb, ba and len(ba), bb and len(bb))
    return True, ""


def case(w, tag, dtype, shape, chunks, filt, direct=False):
    rng = np.random.default_rng(abs(hash(tag)) % (1 << 32))
    x = values(rng, dtype, shape)
    n = shape[0]
    src = os.path.join(w, tag + "-in.h5")
    kw = filter_kwargs(filt)
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=x, chunks=chunks, **kw)
        f.create_dataset("y", data=np.arange(n, dtype=np.int64) * 3, chunks=(max(1, n // 3),), compression="gzip")
    want = oracle.order(SEED, n)
    outs = []
    for j in (1, 2):
        out = os.path.join(w, "%s-j%d.h5" % (tag, j))
        extra = ["--check"] if j == 2 else []
        rc, err = shuffle(["-j", str(j), "-m", "8M"] + extra + [src + ":/x,/y", out])
        if check("%s: h5shuf -j %d" % (tag, j), rc == 0, err):
            outs.append(out)
    if len(outs) != 2:
        return
    # (c) one file for every thread count
    check("%s: -j 1 and -j 2 byte-identical" % tag, md5(outs[0]) == md5(outs[1]))
    # (a) the contract's order, read by h5py
    with h5py.File(outs[0], "r") as f:
        got_x, got_y = f["x"][...], f["y"][...]
        ok = f["x"].chunks == chunks
    check("%s: rows in the contract's order" % tag, ok and np.array_equal(got_x, x[want]) and
          np.array_equal(got_y, (np.arange(n, dtype=np.int64) * 3)[want]))
    # (b) the chunks HDF5 stores for these rows
    exp = os.path.join(w, tag + "-hdf5.h5")
    with h5py.File(exp, "w") as f:
        f.create_dataset("x", data=x[want], chunks=chunks, **kw)
    with h5py.File(outs[0], "r") as fo, h5py.File(exp, "r") as fe:
        ok, detail = chunks_equal(fo["x"], fe["x"])
    check("%s: every stored chunk is HDF5's" % tag, ok, detail)
    if direct:
        out = os.path.join(w, tag + "-direct.h5")
        rc, err = shuffle(["-j", "2", "--strategy", "direct", src + ":/x,/y", out])
        check("%s: the direct path writes the same file" % tag, rc == 0 and md5(out) == md5(outs[0]), err)


def slab_cache(w):
    """Chunks that span several slabs: pass 1 keeps one decoded chunk row of each such dataset (the plan's
    slab_cache_bytes) and must give the same rows, and the same file, as runs that keep none."""
    n, chunks, ychunk = 6000, (1500, 4, 8, 1), 4096
    rng = np.random.default_rng(5)
    x, y = values(rng, "u1", (n, 16, 16, 3)), rng.integers(0, 1 << 40, n)
    src = os.path.join(w, "cache-in.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=x, chunks=chunks, compression="gzip", compression_opts=4)
        f.create_dataset("y", data=y, chunks=(ychunk,), compression="gzip")
    runs = {"8M -j 1": ["-m", "8M", "-j", "1"], "8M -j 2": ["-m", "8M", "-j", "2"],
            "64M -j 2": ["-m", "64M", "-j", "2"]}  # at 64M the slab is all 6000 rows: only /y's are kept
    want = oracle.order(SEED, n)
    md5s = {}
    for name, args in runs.items():
        args = args + ["--strategy", "two-pass", src + ":/x,/y"]
        r = subprocess.run([H5SHUF, "--plan", "--json", "-s", str(SEED)] + args + [os.path.join(w, "p.h5")],
                           capture_output=True, text=True)
        plan = json.loads(r.stdout)["plan"] if r.returncode == 0 else {}
        slab = plan.get("slab_rows", 0)
        # one chunk row of each dataset whose chunks do not tile the slabs, from the chunk shapes
        kept = (chunks[0] * 16 * 16 * 3 if slab % chunks[0] else 0) + (ychunk * 8 if slab % ychunk else 0)
        check("slab cache %s: the plan keeps a chunk row of each dataset the slabs cut (%s)" % (name, plan.get("slab_cache_bytes")),
              r.returncode == 0 and plan.get("slab_cache_bytes") == kept and kept > 0, r.stderr.strip())
        out = os.path.join(w, "cache-%s.h5" % name.replace(" ", ""))
        rc, err = shuffle(args + [out])
        if not check("slab cache %s: h5shuf" % name, rc == 0, err):
            continue
        md5s[name] = md5(out)
        with h5py.File(out, "r") as f:
            check("slab cache %s: rows in the contract's order" % name,
                  np.array_equal(f["x"][...], x[want]) and np.array_equal(f["y"][...], y[want]))
    check("slab cache: one file for every budget and thread count", len(set(md5s.values())) == 1 and len(md5s) == 3)


def main():
    with tempfile.TemporaryDirectory(prefix="h5shuf-split.") as w:
        # h5py's automatic chunks of small images (edge chunks in dim 0 only: 2500 does not divide 5100)
        auto = h5py.File(os.path.join(w, "probe.h5"), "w").create_dataset(
            "x", (5100, 16, 16, 3), dtype="u1", compression="gzip").chunks
        for filt in ("gzip", "gzip+shuffle", "zstd", "lzf", "fletcher32+gzip", "none"):
            t = filt.replace("+", "_")
            # edge chunks in dim 0 (103 = 12 * 8 + 7) and in every other dimension
            case(w, "u1-" + t, "u1", (103, 10, 7, 3), (8, 4, 3, 2), filt)
            case(w, "i4-" + t, "<i4", (250, 9, 5), (16, 4, 5), filt)
        case(w, "auto-gzip", "u1", (5100, 16, 16, 3), auto, "gzip")
        case(w, "f8-rank2-gzip+shuffle", "<f8", (301, 13), (7, 5), "gzip+shuffle")
        case(w, "i2-onerow-zstd", "<i2", (60, 20, 30), (1, 8, 16), "zstd", direct=True)
        slab_cache(w)
    print("%d passed, %d failed" % (O.PASSED, O.FAILED))
    return 1 if O.FAILED or not O.PASSED else 0


if __name__ == "__main__":
    sys.exit(main())
