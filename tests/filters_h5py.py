#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""filters_h5py: the filters users have, out of the box, checked against independent writers and readers.

usage: /usr/bin/python3 tests/filters_h5py.py MODE PATH/TO/h5shuf PLUGIN_DIR
  MODE lzf         h5py writes compression="lzf" (its own built-in filter, 32000)
  MODE lzo         PyTables writes complib="lzo" (its own built-in filter, 305: a Table, a CArray, an
                   EArray; with and without shuffle and fletcher32; chunks that compress and chunks
                   that do not) and reads h5shuf's output back; h5py reads it through our plugin
  MODE bitshuffle  Debian's bitshuffle 0.3.5 plugin (the reference implementation, 32008) writes through
                   h5py with hdf5plugin.Bitshuffle()'s options, LZ4 and none; zstd mode through our plugin
  MODE plugins     Debian's HDF5 filter plugins (lz4 32004, bzip2 307, blosc 32001) write through h5py
                   with hdf5plugin's options, from HDF5's default plugin directory; lz4, built into h5shuf,
                   also with every plugin off (its chunks byte for byte the reference's), and h5shuf's
                   -c lz4+shuffle read back by the reference

In every mode h5shuf runs with no HDF5_PLUGIN_PATH in its environment (env -u); for lzf, lzo and
bitshuffle also with HDF5_PLUGIN_PRELOAD=:: (every plugin off), so the filters used are the ones built
into h5shuf.
The output, read back by the independent reader (h5py's lzf, Debian's bitshuffle plugin), must be the
input's rows in the contract's order (numpy's Philox, as tests/oracle_h5py.py computes it), for -j 1 and
-j 2 (byte-identical files), with the input's filters kept (-c keep, the default).  A mode whose
independent writer is not installed exits 77 (skipped) and says why.  The last line is
"N passed, M failed".
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
import oracle  # noqa: E402

PASSED = 0
FAILED = 0
SKIP = 77


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("PASS %s" % name, flush=True)
    else:
        FAILED += 1
        print("FAIL %s%s" % (name, (": " + str(detail)) if detail else ""), flush=True)
    return ok


order = oracle.order  # the contract's output order (tests/corpus/oracle.py, checked against Random123)


def shuffle(h5shuf, args, plugins_off, env_extra=None):
    """Run h5shuf with no HDF5_PLUGIN_PATH (and every plugin off when plugins_off)."""
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    if plugins_off:
        env["HDF5_PLUGIN_PRELOAD"] = "::"
    env.update(env_extra or {})
    r = subprocess.run([h5shuf, "-q"] + args, env=env, capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


def bitshuffle_version():
    """(major, minor) of Debian's bitshuffle package, the reference plugin (None when dpkg cannot tell)."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "bitshuffle"], capture_output=True, text=True)
        m = re.match(r"(?:\d+:)?(\d+)\.(\d+)", r.stdout) if r.returncode == 0 else None
        return (int(m.group(1)), int(m.group(2))) if m else None
    except OSError:
        return None


def filters_of(ds):
    """(id, cd_values) of every filter of ds, from the file (no filter needs to be loadable)."""
    dcpl = ds.id.get_create_plist()
    return [(f[0], tuple(f[2])) for f in (dcpl.get_filter(i) for i in range(dcpl.get_nfilters()))]


def masked_chunks(ds):
    return sum(ds.id.get_chunk_info(i).filter_mask != 0 for i in range(ds.id.get_num_chunks()))


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def values(rng, dtype, shape):
    """Smooth values with noise in the low bits: what these filters are for."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "V" or dtype.names:
        raw = (np.arange(n * dtype.itemsize) // 7 % 5).astype(np.uint8) ^ rng.integers(0, 2, n * dtype.itemsize, dtype=np.uint8)
        return raw.view(dtype).reshape(shape)
    base = np.cumsum(rng.integers(-2, 3, n)) + 1000
    if dtype.kind == "c":
        return (base + 1j * base[::-1]).astype(dtype).reshape(shape)
    return base.astype(dtype).reshape(shape)


def run_cases(tag, h5shuf, w, path, want, plugins_off_runs, reader_env=None, extra_checks=None):
    """Shuffle path with -j 1 and -j 2 (and plugins off when asked), then check every output."""
    n = next(iter(want.values())).shape[0]
    outs = []
    for plugins_off in plugins_off_runs:
        for j in (1, 2):
            out = os.path.join(w, "%s-j%d%s.h5" % (tag, j, "-noplugins" if plugins_off else ""))
            rc, err = shuffle(h5shuf, ["-s", "11", "-j", str(j), path, out], plugins_off)
            label = "%s: h5shuf -j %d, no HDF5_PLUGIN_PATH%s" % (tag, j, ", every plugin off" if plugins_off else "")
            if check(label, rc == 0, err):
                outs.append(out)
    if not outs:
        return
    check("%s: every run wrote the same bytes" % tag, all(same_bytes(outs[0], o) for o in outs[1:]))
    o = order(11, n)
    # Read back in a fresh process with the reader's environment (its plugins), as a user would.
    code = r"""
import sys, json, h5py, numpy as np
%s
f = h5py.File(sys.argv[1], "r")
res = {}
for name in f:
    d = f[name]
    res[name] = d[...].tobytes().hex()
print(json.dumps(res))
""" % ("import hdf5plugin" if reader_env is None else "")
    env = dict(os.environ)
    env.update(reader_env or {})
    r = subprocess.run([sys.executable, "-c", code, outs[0]], env=env, capture_output=True, text=True)
    if not check("%s: the independent reader opens h5shuf's output" % tag, r.returncode == 0, r.stderr[-500:]):
        return
    import json
    got = json.loads(r.stdout)
    with h5py.File(path, "r") as fi, h5py.File(outs[0], "r") as fo:
        for name, a in want.items():
            check("%s: /%s is the input permuted in the contract's order" % (tag, name),
                  bytes.fromhex(got[name]) == np.ascontiguousarray(a[o]).tobytes())
            fin, fout = filters_of(fi[name]), filters_of(fo[name])
            check("%s: /%s keeps the input's filters %s" % (tag, name, fin), fin == fout, fout)
        if extra_checks:
            extra_checks(fi, fo)


def mode_lzf(h5shuf, plugin_dir, w):
    rng = np.random.default_rng(5)
    n = 5003
    want = {
        "u8": values(rng, "u1", (n, 33)),
        "i2": values(rng, "<i2", (n,)),
        "f4": values(rng, "<f4", (n, 4, 3)),
        "i8": values(rng, "<i8", (n, 2)),
        "c16": values(rng, "<c16", (n,)),
        "v3": values(rng, "V3", (n,)),
        "noise": rng.integers(0, 256, (n, 40), dtype=np.uint8),  # chunks lzf cannot shrink
    }
    path = os.path.join(w, "lzf.h5")
    with h5py.File(path, "w") as f:
        for name, a in want.items():
            kw = dict(shuffle=True, fletcher32=True) if name == "f4" else {}
            f.create_dataset(name, data=a, chunks=(997,) + a.shape[1:], compression="lzf", **kw)
    with h5py.File(path, "r") as f:
        check("lzf: h5py wrote filter 32000 with cd_values [4, LZF_VERSION, chunk bytes]",
              filters_of(f["i2"]) == [(32000, (4, 261, 997 * 2))], filters_of(f["i2"]))
        check("lzf: h5py stored some incompressible chunks with lzf skipped", masked_chunks(f["noise"]) > 0)

    def extra(fi, fo):
        check("lzf: h5shuf also stores incompressible chunks with lzf skipped", masked_chunks(fo["noise"]) > 0)
        check("lzf: h5shuf compresses the compressible chunks", masked_chunks(fo["u8"]) == 0
              and fo["u8"].id.get_storage_size() < fo["u8"].size)

    run_cases("lzf", h5shuf, w, path, want, (False, True), reader_env={}, extra_checks=extra)

    # Our plugin in h5py, instead of h5py's own lzf: reads h5py's file, and h5py reads what it writes.
    code = r"""
import sys, h5py, numpy as np
assert h5py.h5z.unregister_filter(32000)
a = (np.arange(20000) // 9).astype('<i4')
with h5py.File(sys.argv[1], 'r') as f:
    assert np.array_equal(f['i2'][...], np.frombuffer(bytes.fromhex(sys.argv[3]), '<i2'))
with h5py.File(sys.argv[2], 'w') as f:
    f.create_dataset('a', data=a, chunks=(1000,), compression='lzf')
    assert 'h5shuf' in f['a'].id.get_create_plist().get_filter(0)[3].decode()
print('ok')
"""
    r = subprocess.run([sys.executable, "-c", code, path, os.path.join(w, "ours.h5"), want["i2"].tobytes().hex()],
                       env=dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir), capture_output=True, text=True)
    check("lzf: our plugin (libh5shuf_lzf.so) in h5py reads h5py's lzf and writes lzf", r.stdout.strip() == "ok",
          r.stderr[-400:])
    with h5py.File(os.path.join(w, "ours.h5"), "r") as f:
        check("lzf: h5py's own lzf reads what our plugin wrote", np.array_equal(f["a"][...], (np.arange(20000) // 9).astype("<i4")))


def mode_lzo(h5shuf, plugin_dir, w):
    import hashlib
    import json

    try:
        import tables
    except ImportError:
        print("SKIP lzo: python3-tables (PyTables) is not installed: no independent LZO writer and reader")
        return SKIP
    if not tables.which_lib_version("lzo"):
        print("SKIP lzo: this PyTables was built without LZO: no independent LZO writer and reader")
        return SKIP

    rng = np.random.default_rng(8)
    n = 6007  # not a multiple of any chunk's rows: partial last chunks
    desc = np.dtype([("id", "<i8"), ("name", "S8"), ("pos", "<f4", (3,)), ("flag", "u1")])
    table = np.zeros(n, dtype=desc)
    table["id"] = np.arange(n) * 7
    table["name"] = [("r%d" % (i % 300)).encode() for i in range(n)]
    table["pos"] = values(rng, "<f4", (n, 3))
    table["flag"] = np.arange(n) % 3
    half = values(rng, "<i4", (n, 16))
    half[n // 2:] = rng.integers(-2**31, 2**31 - 1, (n - n // 2, 16), dtype=np.int64).astype("<i4")
    want = {
        "table": table,                                              # a Table, lzo + shuffle (PyTables' default)
        "smooth": values(rng, "<i2", (n, 5)),                        # a CArray, lzo without shuffle
        "half": half,                                                # an EArray: its later chunks do not compress
        "noise": rng.integers(0, 256, (n, 24), dtype=np.uint8),      # a CArray no chunk of which compresses
        "sum": values(rng, "<f8", (n,)),                             # a CArray, shuffle + lzo + fletcher32
    }
    fl = {
        "table": tables.Filters(complevel=5, complib="lzo"),
        "smooth": tables.Filters(complevel=1, complib="lzo", shuffle=False),
        "half": tables.Filters(complevel=9, complib="lzo", shuffle=False),
        "noise": tables.Filters(complevel=3, complib="lzo"),
        "sum": tables.Filters(complevel=5, complib="lzo", fletcher32=True),
    }
    chunks = {"table": (500,), "smooth": (700, 5), "half": (256, 16), "noise": (1000, 24), "sum": (999,)}

    def write(path, data):
        """The datasets with PyTables, each in the chunk shape given (the last chunk partial)."""
        with tables.open_file(path, "w") as h:
            h.create_table("/", "table", description=desc, filters=fl["table"], chunkshape=chunks["table"],
                           expectedrows=n).append(data["table"])
            e = h.create_earray("/", "half", atom=tables.Int32Atom(), shape=(0, 16), filters=fl["half"],
                                chunkshape=chunks["half"])
            e.append(data["half"])
            for name, atom in (("smooth", tables.Int16Atom()), ("noise", tables.UInt8Atom()),
                               ("sum", tables.Float64Atom())):
                c = h.create_carray("/", name, atom=atom, shape=data[name].shape, filters=fl[name],
                                    chunkshape=chunks[name])
                c[:] = data[name]

    path = os.path.join(w, "lzo.h5")
    write(path, want)
    with h5py.File(path, "r") as f:
        fin = {name: filters_of(f[name]) for name in want}
        check("lzo: PyTables wrote filter 305 with [level, VERSION x 10, kind] (Table 0, EArray 2, CArray 4)",
              fin["table"][-1][0] == 305 and fin["table"][-1][1][0] == 5 and fin["table"][-1][1][2] == 0
              and fin["half"][-1][1][2] == 2 and fin["smooth"][-1][1][2] == 4, fin)
        # (noise's last chunk, 7 rows and zero padding, compresses)
        check("lzo: PyTables stored the incompressible chunks with lzo skipped, the others compressed",
              masked_chunks(f["noise"]) == f["noise"].id.get_num_chunks() - 1 and 0 < masked_chunks(f["half"])
              < f["half"].id.get_num_chunks() and masked_chunks(f["smooth"]) == 0,
              [(k, masked_chunks(f[k]), f[k].id.get_num_chunks()) for k in want])

    # -j and -m: one file; the budgets give one pass in memory and two passes over several piles
    runs = [("-j", "1"), ("-j", "2"), ("-j", "2", "-m", "3M"), ("-j", "1", "-m", "1500K"), ("-j", "2", "-m", "64M")]
    outs = []
    for k, extra in enumerate(runs):
        out = os.path.join(w, "lzo-out%d.h5" % k)
        rc, err = shuffle(h5shuf, ["-s", "11", "--index", "/index"] + list(extra) + [path, out], True)
        if check("lzo: h5shuf %s, every plugin off" % " ".join(extra), rc == 0, err):
            outs.append(out)
    if not outs:
        return 0
    md5 = {hashlib.md5(open(o, "rb").read()).hexdigest() for o in outs}
    check("lzo: one md5 for every -j and -m (%d runs)" % len(outs), len(md5) == 1, md5)
    o = order(11, n)
    out = outs[0]

    # PyTables reads the output back in a fresh process, as a user would (its own LZO, no plugin)
    code = r"""
import sys, json, tables
res = {}
with tables.open_file(sys.argv[1]) as h:
    for node in h.walk_nodes("/", "Leaf"):
        shape = [int(c) for c in node.chunkshape or ()]
        res[node._v_pathname] = [node.read().tobytes().hex(), repr(node.filters), shape]
print(json.dumps(res))
"""
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    r = subprocess.run([sys.executable, "-c", code, out], env=env, capture_output=True, text=True)
    if check("lzo: PyTables opens h5shuf's output", r.returncode == 0, r.stderr[-500:]):
        got = json.loads(r.stdout)
        with tables.open_file(path) as h:
            for name, a in want.items():
                node = h.get_node("/" + name)
                check("lzo: /%s read by PyTables is the input permuted in the contract's order" % name,
                      bytes.fromhex(got["/" + name][0]) == np.ascontiguousarray(a[o]).tobytes())
                check("lzo: /%s: PyTables sees the input's filters (%s)" % (name, node.filters),
                      got["/" + name][1] == repr(node.filters), got["/" + name][1])
                check("lzo: /%s keeps its chunk shape" % name, got["/" + name][2] == list(node.chunkshape))
        index = np.frombuffer(bytes.fromhex(got["/index"][0]), "<u8")
        check("lzo: --index is the input row of each output row", np.array_equal(index, o))
        check("lzo: the table's id column is the input's ids in the order of --index",
              np.array_equal(np.frombuffer(bytes.fromhex(got["/table"][0]), desc)["id"], table["id"][index]))

    # the filters as stored: id, flags, cd_values; incompressible chunks still skipped; and every chunk
    # byte for byte what PyTables writes for the same rows (LZO1X-1 of the same liblzo2)
    ref = os.path.join(w, "lzo-pytables.h5")
    write(ref, {name: a[o] for name, a in want.items()})
    with h5py.File(path, "r") as fi, h5py.File(out, "r") as fo, h5py.File(ref, "r") as fr:
        for name in want:
            fout = filters_of(fo[name])
            check("lzo: /%s keeps filter 305 with the input's cd_values %s" % (name, fin[name]), fout == fin[name],
                  fout)
            dcpl = fo[name].id.get_create_plist()
            check("lzo: /%s: the filter is named 'lzo' and optional, as PyTables stores it" % name,
                  [(f[3], f[1]) for f in (dcpl.get_filter(i) for i in range(dcpl.get_nfilters())) if f[0] == 305]
                  == [(b"lzo", 1)])
            a, b = fo[name].id, fr[name].id
            same = a.get_num_chunks() == b.get_num_chunks()
            for i in range(a.get_num_chunks() if same else 0):
                ca, cb = a.get_chunk_info(i), b.get_chunk_info(i)
                same = same and ca.filter_mask == cb.filter_mask and a.read_direct_chunk(ca.chunk_offset) == \
                    b.read_direct_chunk(ca.chunk_offset)
            check("lzo: /%s: h5shuf's chunks and filter masks are PyTables', byte for byte" % name, same)
        check("lzo: h5shuf stores the incompressible chunks with lzo skipped, compresses the others",
              masked_chunks(fo["noise"]) == fo["noise"].id.get_num_chunks() - 1 and masked_chunks(fo["table"]) == 0
              and fo["table"].id.get_storage_size() < fo["table"].size * desc.itemsize / 2)

    # h5py (which has no LZO of its own) reads both files through our plugin, and writes LZO that
    # PyTables reads: the filter's in-process path, HDF5's, against PyTables
    code = r"""
import sys, json, h5py, numpy as np
res = {}
for p in sys.argv[1:3]:
    with h5py.File(p, "r") as f:
        res[p] = {k: f[k][...].tobytes().hex() for k in ("smooth", "half", "sum")}
with h5py.File(sys.argv[3], "w") as f:
    f.create_dataset("a", data=(np.arange(50000) // 7).astype("<i4"), chunks=(4096,), compression=305,
                     compression_opts=(5, 11, 4))
    f.create_dataset("r", data=np.random.default_rng(1).integers(0, 255, 9000, dtype=np.uint8), chunks=(3000,),
                     compression=305, compression_opts=(5, 11, 4))
print(json.dumps(res))
"""
    ours = os.path.join(w, "lzo-h5py.h5")
    r = subprocess.run([sys.executable, "-c", code, path, out, ours], capture_output=True, text=True,
                       env=dict(env, HDF5_PLUGIN_PATH=plugin_dir))
    if check("lzo: h5py reads PyTables' and h5shuf's LZO through our plugin (libh5shuf_lzo.so)", r.returncode == 0,
             r.stderr[-400:]):
        got = json.loads(r.stdout)
        check("lzo: h5py reads PyTables' file as written, and h5shuf's output as the input permuted",
              all(bytes.fromhex(got[path][k]) == want[k].tobytes()
                  and bytes.fromhex(got[out][k]) == np.ascontiguousarray(want[k][o]).tobytes()
                  for k in ("smooth", "half", "sum")))
        code = r"""
import sys, tables, numpy as np
with tables.open_file(sys.argv[1]) as h:
    assert np.array_equal(h.root.a[:], (np.arange(50000) // 7).astype("<i4"))
    assert np.array_equal(h.root.r[:], np.random.default_rng(1).integers(0, 255, 9000, dtype=np.uint8))
print("ok")
"""
        r = subprocess.run([sys.executable, "-c", code, ours], capture_output=True, text=True, env=env)
        with h5py.File(ours, "r") as f:
            masks = masked_chunks(f["a"]), masked_chunks(f["r"])
        check("lzo: PyTables reads what our plugin wrote through h5py (incompressible chunks skipped)",
              r.stdout.strip() == "ok" and masks == (0, 3), (r.stderr[-400:], masks))

    # a corrupt chunk: one line naming the file and the dataset, exit 1, nothing left behind
    bad = os.path.join(w, "lzo-bad.h5")
    shutil.copyfile(path, bad)
    with h5py.File(bad, "r+") as f:
        d = f["smooth"].id
        off = d.get_chunk_info(2).chunk_offset
        raw = d.read_direct_chunk(off)[1]
        d.write_direct_chunk(off, raw[: len(raw) // 2], filter_mask=0)  # cut: the stream runs out
    for way, extra in (("-j 2", ["-j", "2"]), ("-j 1", ["-j", "1"])):
        outdir = os.path.join(w, "bad-out-%s" % extra[1])
        os.makedirs(outdir)
        rc, err = shuffle(h5shuf, ["-s", "1"] + extra + [bad + ":/smooth", os.path.join(outdir, "o.h5")], True)
        lines = err.splitlines()
        check("lzo: a corrupt LZO chunk is refused (%s): exit 1, one line naming file, dataset and cause" % way,
              rc == 1 and len(lines) == 1 and lines[0].startswith("h5shuf: ") and bad in lines[0]
              and ":/smooth: " in lines[0] and ": lzo: " in lines[0].split(":/smooth: ", 1)[-1]
              and "corrupt" in lines[0], (rc, err))
        check("lzo: nothing left behind by the refused run (%s)" % way, os.listdir(outdir) == [], os.listdir(outdir))
    return 0


def mode_bitshuffle(h5shuf, plugin_dir, w):
    default_dir = h5py.h5pl.get(0).decode() if h5py.h5pl.size() else ""
    ref = os.path.join(default_dir, "libh5bshuf.so")
    if "HDF5_PLUGIN_PATH" in os.environ or not os.path.exists(ref):
        print("SKIP bitshuffle: Debian's bitshuffle plugin (package 'bitshuffle') is not in HDF5's default plugin "
              "directory %s, so there is no independent writer and reader" % (default_dir or "(none)"))
        return SKIP
    import hdf5plugin

    rng = np.random.default_rng(6)
    n = 4099  # not a multiple of 8
    want = {
        "u1": values(rng, "u1", (n, 64)),
        "i2": values(rng, "<i2", (n,)),
        "f4": values(rng, "<f4", (n, 5)),
        "i8": values(rng, "<i8", (n,)),
        "c16": values(rng, "<c16", (n,)),
        "v3": values(rng, "V3", (n,)),
        "v12": values(rng, np.dtype([("a", "<i4"), ("b", "<f8")]), (n,)),
    }
    path = os.path.join(w, "bshuf.h5")
    opts = {}
    with h5py.File(path, "w") as f:
        for k, (name, a) in enumerate(want.items()):
            cname = "none" if name in ("i8", "v3") else "lz4"
            nelems = 64 if name == "f4" else 0
            opts[name] = hdf5plugin.Bitshuffle(nelems=nelems, cname=cname)
            f.create_dataset(name, data=a, chunks=(333 + 8 * k,) + a.shape[1:], **opts[name])
    with h5py.File(path, "r") as f:
        fl = filters_of(f["u1"])
        # (cd_values[0:2] are the writing plugin's own version: 0.3 in Debian 12, 0.5 in Debian 13)
        ver = bitshuffle_version()
        want_cd = (32008, (ver[0], ver[1], 1, 0, 2)) if ver else None
        check("bitshuffle: the reference wrote filter 32008 as bitshuffle %s (%s)" % (
              "%d.%d" % ver if ver else "of any version", list(want_cd[1]) if ver else "[M, N, 1, 0, 2]"),
              len(fl) == 1 and fl[0][0] == 32008 and fl[0][1][2:] == (1, 0, 2) and (not ver or fl[0] == want_cd), fl)

    def extra(fi, fo):
        # Encode the expected rows with the reference, chunk for chunk: our chunks are byte-identical.
        o = order(11, n)
        ref_path = os.path.join(w, "ref-encoded.h5")
        with h5py.File(ref_path, "w") as fr:
            for name, a in want.items():
                fr.create_dataset(name, data=a[o], chunks=fi[name].chunks, **opts[name])
        with h5py.File(ref_path, "r") as fr:
            for name in want:
                a, b = fo[name], fr[name]
                same = a.id.get_num_chunks() == b.id.get_num_chunks()
                for i in range(a.id.get_num_chunks()):
                    off = a.id.get_chunk_info(i).chunk_offset
                    same = same and a.id.read_direct_chunk(off) == b.id.read_direct_chunk(off)
                check("bitshuffle: /%s: h5shuf's chunks are the reference's, byte for byte" % name, same)

    run_cases("bitshuffle", h5shuf, w, path, want, (False, True), reader_env={}, extra_checks=extra)

    # zstd mode (bitshuffle >= 0.4; Debian's 0.3.5 has none): written by h5py through our plugin, shuffled
    # with plugins off, read back through our plugin.  Not independent: a round trip through HDF5.
    zpath = os.path.join(w, "bshuf-zstd.h5")
    code = r"""
import sys, h5py, numpy as np
a = (np.arange(3001 * 3) // 5).astype('<f8').reshape(3001, 3)
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('z', data=a, chunks=(500, 3), compression=32008, compression_opts=(0, 3, 2))
"""
    r = subprocess.run([sys.executable, "-c", code, zpath], env=dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir),
                       capture_output=True, text=True)
    if check("bitshuffle: our plugin writes the zstd mode from h5py", r.returncode == 0, r.stderr[-400:]):
        zwant = {"z": (np.arange(3001 * 3) // 5).astype("<f8").reshape(3001, 3)}
        run_cases("bitshuffle+zstd", h5shuf, w, zpath, zwant, (True,), reader_env={"HDF5_PLUGIN_PATH": plugin_dir})
    return 0


def mode_plugins(h5shuf, plugin_dir, w):
    if "HDF5_PLUGIN_PATH" in os.environ:
        del os.environ["HDF5_PLUGIN_PATH"]
    import hdf5plugin

    default_dir = h5py.h5pl.get(0).decode() if h5py.h5pl.size() else ""
    wanted = [("lz4", "libh5lz4.so", "hdf5-filter-plugin", hdf5plugin.LZ4()),
              ("bzip2", "libh5bz2.so", "hdf5-filter-plugin", hdf5plugin.BZip2()),
              ("blosc", "libH5Zblosc.so", "hdf5-filter-plugin-blosc-serial", hdf5plugin.Blosc(cname="zstd", clevel=3))]
    present = [x for x in wanted if os.path.exists(os.path.join(default_dir, x[1]))]
    for name, lib, pkg, _ in wanted:
        if (name, lib, pkg) not in [x[:3] for x in present]:
            print("SKIP %s: %s (package %s) is not in HDF5's default plugin directory %s" % (name, lib, pkg, default_dir))
    if not present:
        return SKIP
    rng = np.random.default_rng(7)
    n = 3001
    for name, lib, pkg, opts in present:
        want = {"x": values(rng, "<f4", (n, 6)), "y": values(rng, "<i8", (n,))}
        path = os.path.join(w, "%s.h5" % name)
        with h5py.File(path, "w") as f:
            for k, a in want.items():
                f.create_dataset(k, data=a, chunks=(250,) + a.shape[1:], **opts)
        with h5py.File(path, "r") as f:
            check("%s: hdf5plugin wrote filter %d through %s/%s" % (name, opts["compression"], default_dir, lib),
                  filters_of(f["x"])[0][0] == opts["compression"], filters_of(f["x"]))
        if name != "lz4":
            run_cases(name, h5shuf, w, path, want, (False,), reader_env={})
            continue

        # lz4 is built into h5shuf: its runs with every plugin off use h5shuf's codec, whose chunks must be
        # the reference's (Debian's plugin, writing through h5py) byte for byte, chunk for chunk.
        def extra(fi, fo, want=want, opts=opts):
            o = order(11, n)
            ref_path = os.path.join(w, "lz4-ref-encoded.h5")
            with h5py.File(ref_path, "w") as fr:
                for k, a in want.items():
                    fr.create_dataset(k, data=a[o], chunks=fi[k].chunks, **opts)
            with h5py.File(ref_path, "r") as fr:
                for k in want:
                    a, b = fo[k], fr[k]
                    same = a.id.get_num_chunks() == b.id.get_num_chunks() > 0
                    for i in range(a.id.get_num_chunks()):
                        off = a.id.get_chunk_info(i).chunk_offset
                        same = same and a.id.read_direct_chunk(off) == b.id.read_direct_chunk(off)
                    check("lz4: /%s: h5shuf's chunks are the reference's, byte for byte" % k, same)

        run_cases(name, h5shuf, w, path, want, (False, True), reader_env={}, extra_checks=extra)
        # h5shuf's own -c lz4+shuffle, read back by the reference
        out = os.path.join(w, "lz4-made.h5")
        rc, err = shuffle(h5shuf, ["-s", "11", "-c", "lz4+shuffle", path, out], True)
        if check("lz4: h5shuf -c lz4+shuffle, every plugin off", rc == 0, err):
            code = ("import sys, h5py, numpy as np\nf = h5py.File(sys.argv[1], 'r')\n"
                    "sys.stdout.write(repr([(k, f[k].id.get_create_plist().get_filter(1)[0]) for k in sorted(f)]) + '\\n')\n"
                    "sys.stdout.write(''.join(f[k][...].tobytes().hex() for k in sorted(f)))")
            r = subprocess.run([sys.executable, "-c", code, out], capture_output=True, text=True)
            o = order(11, n)
            if check("lz4: the reference reads h5shuf's lz4+shuffle output", r.returncode == 0, r.stderr[-400:]):
                head, body = r.stdout.split("\n", 1)
                check("lz4: -c lz4+shuffle wrote shuffle then filter 32004", head == repr([("x", 32004), ("y", 32004)]), head)
                check("lz4: -c lz4+shuffle holds the input permuted in the contract's order",
                      body == "".join(np.ascontiguousarray(want[k][o]).tobytes().hex() for k in sorted(want)))
    return 0


def main():
    mode, h5shuf, plugin_dir = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    with tempfile.TemporaryDirectory(prefix="h5shuf-filters-") as w:
        fn = {"lzf": mode_lzf, "lzo": mode_lzo, "bitshuffle": mode_bitshuffle, "plugins": mode_plugins}[mode]
        rc = fn(h5shuf, plugin_dir, w)
    if rc == SKIP and FAILED == 0 and PASSED == 0:
        return SKIP
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
