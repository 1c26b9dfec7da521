#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""filter_bombs: chunks that decode to more (decompression bombs) or fewer bytes than a chunk holds,
for every filter h5shuf registers with HDF5 (zstd 32015, lzf 32000, lzo 305, bitshuffle 32008, lz4 32004).

usage: /usr/bin/python3 tests/filter_bombs.py PATH/TO/h5shuf PLUGIN_DIR

Each input is written by h5py (lzf built in; zstd, lzo and bitshuffle through h5shuf's plugins in
PLUGIN_DIR, lz4 through Debian's (hdf5-filter-plugin, skipped when absent), with the cd_values
hdf5plugin, PyTables and bitshuffle write), int32 rows of 96 in chunks
of 4 x 48 that split rows (768 bytes), then one chunk is replaced with H5Dwrite_chunk by:
  - issue 48's bomb: a 32 KiB zstd frame without a content size that decodes to 1 GiB;
  - a stream of each filter that decodes to 64 KiB (stored small: h5shuf's own codec path decodes it);
  - one that decodes to 1 to 16 MiB, stored larger than any encoding of a 768-byte chunk, so that
    h5shuf hands the chunk to HDF5, whose pipeline runs h5shuf's registered filter;
  - one that decodes to 384 bytes (fewer than the chunk's).
h5shuf (no HDF5_PLUGIN_PATH: its built-in filters) must exit 1 within 60 s and 256 MiB of RSS
(/usr/bin/time), print one line naming the file, the dataset and the chunk ("chunk at (4, 48)") as
corrupt, and leave no output; never a signal.  The same files before the chunk is replaced shuffle
(with --check) to the input's rows.  And a zstd dataset of vlen strings copied whole (whole-file
form: HDF5 decodes it in H5Dread and H5Ocopy): copied intact, refused with the bomb in a chunk.  The last line is "N passed, M failed".
"""

import os
import struct
import subprocess
import sys
import tempfile
import time

H5SHUF, PLUGINS = sys.argv[1], sys.argv[2]
# h5py writes zstd, lzo and bitshuffle through h5shuf's plugins, lz4 through Debian's (HDF5's default directory)
DEBIAN_PLUGINS = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
os.environ["HDF5_PLUGIN_PATH"] = PLUGINS + ":" + DEBIAN_PLUGINS
import h5py  # noqa: E402
import numpy as np  # noqa: E402

PASSED = 0
FAILED = 0
CHUNK = (4, 48)
CHUNK_BYTES = 4 * 48 * 4
RSS_MAX_KIB = 256 * 1024
# (name, compression, compression_opts): the cd_values other writers store
FILTERS = [("zstd", 32015, (3,)), ("lzf", "lzf", None), ("lzo", 305, (5, 11, 4)), ("bitshuffle", 32008, (0, 2))]
if os.environ.get("H5SHUF_TEST_NO_LZO") == "1":  # a build without LZO (-DH5SHUF_LZO=OFF): no codec, no plugin
    print("SKIP lzo: h5shuf is built without LZO (H5SHUF_TEST_NO_LZO=1)", flush=True)
    FILTERS = [f for f in FILTERS if f[0] != "lzo"]
if os.path.exists(os.path.join(DEBIAN_PLUGINS, "libh5lz4.so")):
    FILTERS.append(("lz4", 32004, (0,)))  # hdf5plugin.LZ4()'s cd_values
else:
    print("SKIP lz4: Debian's LZ4 plugin (package hdf5-filter-plugin) is not in %s" % DEBIAN_PLUGINS, flush=True)


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("PASS %s" % name, flush=True)
    else:
        FAILED += 1
        print("FAIL %s%s" % (name, (": " + str(detail)) if detail else ""), flush=True)
    return ok


def zstd_rle_frame(total):
    """A zstd frame without a content size: total zero bytes as RLE blocks of 128 KiB (4 bytes each)."""
    out = bytearray(struct.pack("<I", 0xFD2FB528)) + bytes([0x00, (17 - 10) << 3])
    while total:
        n = min(total, 128 * 1024)
        total -= n
        out += struct.pack("<I", (1 if total == 0 else 0) | 1 << 1 | n << 3)[:3] + b"\0"
    return bytes(out)


def create(f, name, flt, shape, chunks):
    _, comp, opts = flt
    return f.create_dataset(name, shape=shape, dtype="<i4", chunks=chunks, compression=comp,
                            compression_opts=opts, allow_unknown_filter=comp != "lzf")


def stream(work, flt, nbytes):
    """flt's stored chunk for nbytes zero bytes, as its writer makes it."""
    if flt[0] == "zstd":
        return zstd_rle_frame(nbytes)
    path = os.path.join(work, "stream.h5")
    with h5py.File(path, "w") as f:
        d = create(f, "s", flt, (1, nbytes // 4), (1, nbytes // 4))
        d[...] = 0
    with h5py.File(path, "r") as f:
        mask, raw = f["s"].id.read_direct_chunk((0, 0))
    assert mask == 0, (flt[0], nbytes, mask)
    return raw


def rows():
    return (np.arange(16 * 96, dtype="<i4").reshape(16, 96) * 7) % 1000


def write_input(path, flt, raw=None):
    with h5py.File(path, "w") as f:
        d = create(f, "x", flt, (16, 96), CHUNK)
        d[...] = rows()
        if raw is not None:
            d.id.write_direct_chunk((4, 48), raw)


def run(args, work):
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    rss = os.path.join(work, "rss")
    t0 = time.monotonic()
    try:
        r = subprocess.run(["/usr/bin/time", "-o", rss, "-f", "%M", H5SHUF, "-q"] + args, env=env,
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timed out after 120 s", 0, 120.0
    took = time.monotonic() - t0
    with open(rss) as fr:
        kib = int(fr.read().split()[-1])
    err = r.stderr
    # /usr/bin/time adds "Command exited with non-zero status N" to its output file, not to stderr
    return r.returncode, err, kib, took


def copied(work):
    """A zstd dataset of vlen strings that is copied, not shuffled (whole-file form): HDF5 decodes its
    chunks to check and copy them (H5Dread, H5Ocopy).  Intact it is copied as it is; with the bomb in a
    chunk the run is refused naming it."""
    names = ["a", "bb", "ccc", "d", "e", "f"]
    for bomb in (False, True):
        path = os.path.join(work, "copied-%d.h5" % bomb)
        with h5py.File(path, "w") as f:
            f["x"] = rows()
            f["y"] = np.arange(16, dtype="<i4")
            d = f.create_dataset("names", shape=(6,), dtype=h5py.string_dtype(), chunks=(2,), compression=32015,
                                 compression_opts=(3,), allow_unknown_filter=True)
            d[...] = names
            if bomb:
                d.id.write_direct_chunk((2,), zstd_rle_frame(1 << 30))
        out = os.path.join(work, "copied-%d-out.h5" % bomb)
        rc, err, kib, took = run(["-s", "3", path, out], work)
        lines = err.strip().splitlines()
        if not bomb:
            ok = rc == 0 and not lines
            if ok:
                with h5py.File(out, "r") as fo:
                    ok = [v.decode() for v in fo["names"][...]] == names
            check("zstd vlen strings copied whole (H5Ocopy): exit 0, the same strings", ok, (rc, err))
        else:
            ok = (rc == 1 and len(lines) == 1 and path + ":/names:" in lines[0] and "chunk at (2)" in lines[0]
                  and "corrupt chunk" in lines[0] and kib < RSS_MAX_KIB and took < 60 and not os.path.exists(out))
            check("zstd vlen strings copied whole, a 1 GiB bomb in a chunk: exit 1, one line naming it, %.1f s, "
                  "%d MiB" % (took, kib >> 10), ok, (rc, err, kib))


def main():
    with tempfile.TemporaryDirectory(prefix="h5shuf-bombs.") as work:
        for flt in FILTERS:
            name = flt[0]
            good = os.path.join(work, name + ".h5")
            write_input(good, flt)
            out = os.path.join(work, name + "-out.h5")
            rc, err, kib, took = run(["--check", "-s", "3", good, out], work)
            ok = rc == 0
            if ok:
                with h5py.File(out, "r") as fo:
                    got = fo["x"][...]
                ok = np.array_equal(np.sort(got.view("V384").ravel()), np.sort(rows().view("V384").ravel()))
            check("%s: the intact file shuffles (--check), its rows kept" % name, ok, (rc, err))
            big = {"zstd": 1 << 30, "lzf": 1 << 20, "lzo": 16 << 20, "bitshuffle": 4 << 20, "lz4": 16 << 20}[name]
            cases = [("decodes to 64 KiB (h5shuf's codec path)", 64 << 10, "more than"),
                     ("decodes to %d MiB, stored large (HDF5's pipeline)" % (big >> 20), big, "more than"),
                     ("decodes to 384 bytes", 384, "384")]
            for what, nbytes, want in cases:
                raw = stream(work, flt, nbytes)
                bound = CHUNK_BYTES + CHUNK_BYTES // 16 + 4096  # h5shuf__codec_bound: larger goes to HDF5
                if nbytes > 1 << 19 and len(raw) <= bound:
                    check("%s %s: stored beyond the codec's bound" % (name, what), False, len(raw))
                    continue
                bad = os.path.join(work, "%s-%d.h5" % (name, nbytes))
                write_input(bad, flt, raw)
                out = os.path.join(work, "%s-%d-out.h5" % (name, nbytes))
                rc, err, kib, took = run(["-s", "3", bad, out], work)
                lines = err.strip().splitlines()
                line = lines[0] if lines else ""
                ok = (rc == 1 and len(lines) == 1 and bad in line and ":/x:" in line and "chunk at (4, 48)" in line
                      and "corrupt chunk" in line and want in line and kib < RSS_MAX_KIB and took < 60
                      and not os.path.exists(out))
                check("%s chunk (%d bytes stored) that %s: exit 1, one line naming file, dataset and chunk, "
                      "%.1f s, %d MiB" % (name, len(raw), what, took, kib >> 10), ok, (rc, err, kib))
        copied(work)
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
