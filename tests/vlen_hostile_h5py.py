#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vlen_hostile_h5py: variable-length rows whose metadata lies are refused in one line, not a crash or a runaway.

usage: /usr/bin/python3 tests/vlen_hostile_h5py.py [--sanitized] PATH/TO/h5shuf

HDF5 1.10 trusts a vlen element's descriptor (length, global heap collection, object index) and the heap
object's header: an inflated object size is a SIGSEGV in H5HG_read, an inflated length a runaway
allocation in H5T__conv_vlen.  Each case writes a small vlen file with h5py, patches its bytes (the 'GCOL'
collection's object headers: index u16, references u16, reserved u32, size u64, then the data; or a
descriptor of the contiguous dataset: length u32, collection address u64, index u32), runs h5shuf -m 2M
on it, and checks: exit status 1, exactly one line on stderr naming the file and the dataset and the
cause, peak RSS under 500 MB and under 60 s (the child runs under a 4 GiB address-space limit, so that an
old build's runaway cannot take the machine; not with --sanitized, a sanitizer build, whose shadow memory
is reserved as address space).  The unpatched files shuffle (exit 0, the same rows).
Each check prints one line, PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing
failed.
"""

import os
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

PASSED = FAILED = 0
RSS_MAX_KB = 500 * 1024
TIME_MAX_S = 60


def check(name, ok, detail=""):
    global PASSED, FAILED
    if ok:
        PASSED += 1
        print("PASS %s" % name, flush=True)
    else:
        FAILED += 1
        print("FAIL %s%s" % (name, (": " + detail) if detail else ""), flush=True)
    return ok


SANITIZED = False


def limit_child():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(args):
    """(exit status or -signal, stderr, peak RSS in KiB, seconds) of one h5shuf run."""
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit_child)
    timer_killed = []

    def kill():
        timer_killed.append(1)
        p.send_signal(signal.SIGKILL)

    import threading
    timer = threading.Timer(TIME_MAX_S, kill)
    timer.start()
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = 0  # (reaped here; keeps Popen from waiting again)
    rc = os.waitstatus_to_exitcode(status)
    return rc, err, ru.ru_maxrss, time.monotonic() - t0


def write_seq(path, n=64, first_len=None):
    """n rows of int32 sequences (lengths 1..7; the first first_len long when given), contiguous; returns the
    file offset of the descriptors."""
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", (n,), dtype=h5py.vlen_dtype(np.int32))  # contiguous
        for i in range(n):
            d[i] = np.arange(first_len if i == 0 and first_len else i % 7 + 1, dtype=np.int32) + 100 * i
        f["y"] = np.arange(n, dtype=np.int64)
        off = d.id.get_offset()
    return off


def write_str(path, n=64):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("s", (n,), dtype=h5py.string_dtype(), chunks=(16,), compression="gzip")
        d[:] = ["row %d %s" % (i, "z" * (i % 5)) for i in range(n)]


def heap_objects(b):
    """[(file offset of the object header, index, size)] of the first global heap collection in bytes b."""
    at = b.find(b"GCOL")
    size = struct.unpack_from("<Q", b, at + 8)[0]
    objs, p = [], at + 16
    while p + 16 <= at + size:
        idx, _, _, sz = struct.unpack_from("<HHIQ", b, p)
        if idx == 0:
            break
        objs.append((p, idx, sz))
        p += 16 + (sz + 7) // 8 * 8
    return at, objs


def heap_collections(b):
    """[(HDF5 address, [(file offset of the object header, index, size)])] of every global heap collection in
    bytes b (no user block: addresses are file offsets)."""
    out, at = [], b.find(b"GCOL")
    while at >= 0:
        _, objs = heap_objects(b[at:])
        out.append((at, [(p + at, i, sz) for p, i, sz in objs]))
        at = b.find(b"GCOL", at + 4)
    return out


def patched(src, dst, fn):
    b = bytearray(open(src, "rb").read())
    fn(b)
    open(dst, "wb").write(b)


def refused(name, args, path, dsname, want):
    """The run exits 1 with one line naming path, dsname and containing want, within RSS and time; its
    output (the last argument) is not left behind."""
    if args[1] != "verify" and os.path.exists(args[-1]):  # (verify reads its last argument)
        os.unlink(args[-1])
    rc, err, rss, secs = run(args)
    lines = err.splitlines()
    check("%s: exit status 1 (not a crash)" % name, rc == 1, "exit %d: %s" % (rc, err.strip()[-300:]))
    check("%s: one line on stderr" % name, len(lines) == 1, repr(err[-500:]))
    check("%s: the line names the file, the dataset and the cause" % name,
          len(lines) >= 1 and path in lines[0] and dsname in lines[0] and want in lines[0], repr(err[-500:]))
    check("%s: peak RSS %d MB < %d MB, %.1f s < %d s" % (name, rss >> 10, RSS_MAX_KB >> 10, secs, TIME_MAX_S),
          rss < RSS_MAX_KB and secs < TIME_MAX_S)
    if args[1] != "verify":
        check("%s: no output left" % name, not os.path.exists(args[-1]))


def patch_all_objects(src, dst, size):
    """dst: src with the size of every object of every global heap collection set to size."""
    b = bytearray(open(src, "rb").read())
    n = 0
    for _, objs in heap_collections(b):
        for p, _, _ in objs:
            struct.pack_into("<Q", b, p + 8, size)
            n += 1
    open(dst, "wb").write(b)
    return n


def case_nested_and_members(d, out):
    """Global-heap data HDF5 reads on its own, beyond a dataset's rows and a vlen attribute: a dimension
    scale's DIMENSION_LIST (read by H5DSget_num_scales before anything is copied), an attribute of
    compounds with a vlen string member (H5Aread), a copied dataset of such compounds (H5Ocopy), an array of
    vlen strings as an attribute; each with its heap objects' sizes patched to 100000 (more than their
    collection holds): exit 1, one line.  And nested vlen data (a sequence of sequences) as an attribute:
    refused in one line, the unpatched file too (its inner descriptors lie in the heap, unchecked)."""
    o = os.path.join(d, "o.h5")
    rec = np.dtype([("a", "<i4"), ("s", h5py.string_dtype())])

    def scale(f):
        f["x"] = np.arange(16, dtype=np.int32).reshape(8, 2)
        f["t"] = np.arange(8, dtype=np.float64)
        f["t"].make_scale("t")
        f["x"].dims[0].attach_scale(f["t"])

    def member_attr(f):
        f["x"] = np.arange(8, dtype=np.int32)
        f["x"].attrs.create("meta", np.array([(1, "alpha"), (2, "beta gamma")], dtype=rec))

    def member_copy(f):
        f["x"] = np.arange(8, dtype=np.int32)
        f["y"] = np.arange(8, dtype=np.int64)
        f.create_dataset("meta", data=np.array([(1, "alpha"), (2, "beta"), (3, "")], dtype=rec))

    def array_attr(f):
        f["x"] = np.arange(8, dtype=np.int32)
        tid = h5py.h5t.array_create(h5py.h5t.py_create(h5py.string_dtype(), logical=True), (3,))
        a = h5py.h5a.create(f["x"].id, b"names", tid, h5py.h5s.create_simple((2,)))
        v = np.empty(2, dtype=a.dtype)
        v[0], v[1] = ["one", "two", "three"], ["four", "", "six"]
        a.write(v, mtype=tid)

    cases = [("a dimension scale's DIMENSION_LIST", scale, [[], [":/x"]], "global heap"),
             ("an attribute of compounds with a vlen string member", member_attr, [[]], "global heap"),
             ("a copied dataset of compounds with a vlen string member", member_copy, [[]], "global heap"),
             ("an attribute of arrays of vlen strings", array_attr, [[]], "global heap")]
    for name, make, specs, want in cases:
        good = os.path.join(d, "heap-ok.h5")
        with h5py.File(good, "w") as f:
            make(f)
        rc, err, _, _ = run([H5SHUF, "-q", "-f", "-m", "2M", good, out])
        check("%s: the unpatched file shuffles (exit 0, silent)" % name, rc == 0 and not err, err)
        bad = os.path.join(d, "heap-bad.h5")
        check("%s: heap objects patched" % name, patch_all_objects(good, bad, 100000) > 0)
        for spec in specs:
            arg = bad + (spec[0] if spec else "")
            refused("%s%s: object sizes 100000" % (name, " (dataset mode)" if spec else ""),
                    [H5SHUF, "-f", "-m", "2M", arg, o], bad, "", want)
    # a collection HDF5 walks forever (found by fuzz_file): an object whose size runs past the collection
    # (2^64 - 1: H5HG_ALIGN wraps to 0, so HDF5 steps one header on, into the object) over a free-space
    # header of 0 bytes (HDF5 steps 0 bytes on it: an endless loop in H5HG__cache_heap_deserialize); the
    # element read names another object of the collection, which h5shuf's own walk finds before the bad one
    wrap = os.path.join(d, "heap-wrap.h5")
    with h5py.File(wrap, "w") as f:
        scale(f)
    wb = bytearray(open(wrap, "rb").read())
    (_, wobjs), = heap_collections(wb)
    p_last = wobjs[-1][0]
    struct.pack_into("<HHIQ", wb, p_last, wobjs[-1][1], 0, 0, (1 << 64) - 1)
    struct.pack_into("<HHIQ", wb, p_last + 16, 0, 0, 0, 0)
    open(wrap, "wb").write(wb)
    refused("a heap collection HDF5 walks forever (an object past its end over free space of 0 bytes)",
            [H5SHUF, "-f", "-m", "2M", wrap, o], wrap, "", "past the end of the collection")
    # nested: a vlen of vlen int32 attribute (h5py's low-level API), refused before HDF5 reads it
    nest = os.path.join(d, "nested.h5")
    with h5py.File(nest, "w") as f:
        f["x"] = np.arange(8, dtype=np.int32)
        tid = h5py.h5t.vlen_create(h5py.h5t.vlen_create(h5py.h5t.NATIVE_INT32))
        a = h5py.h5a.create(f["x"].id, b"nest", tid, h5py.h5s.create_simple((2,)))
        data = np.empty(2, dtype=object)
        for i in range(2):
            inner = np.empty(2, dtype=object)
            inner[0], inner[1] = np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32)
            data[i] = inner
        a.write(data)
    refused("an attribute of nested vlen data", [H5SHUF, "-f", "-m", "2M", nest, o], nest, "nest", "nested")


def main():
    global H5SHUF, SANITIZED
    args = sys.argv[1:]
    if args and args[0] == "--sanitized":
        SANITIZED = True
        args = args[1:]
    H5SHUF = args[0]
    with tempfile.TemporaryDirectory(prefix="vlen_hostile.") as d:
        ok = os.path.join(d, "ok.h5")
        off = write_seq(ok)
        out = os.path.join(d, "out.h5")
        rc, err, rss, _ = run([H5SHUF, "-q", "-f", "-s", "3", "-m", "2M", ok, out])
        if check("the unpatched sequences shuffle (exit 0, silent)", rc == 0 and not err, err):
            with h5py.File(ok, "r") as fi, h5py.File(out, "r") as fo:
                want = sorted(tuple(r) for r in fi["x"][()])
                got = sorted(tuple(r) for r in fo["x"][()])
                check("the unpatched sequences: the same rows", got == want)
        b = open(ok, "rb").read()
        gcol, objs = heap_objects(b)
        check("the file has a global heap collection of 64 objects", len(objs) == 64, "%d" % len(objs))
        h3 = objs[2][0]

        def case(name, fn, want, extra=(), dsname=":/x"):
            bad = os.path.join(d, name.replace(" ", "_") + ".h5")
            patched(ok, bad, fn)
            refused(name, [H5SHUF, "-f", "-s", "3", "-m", "2M"] + list(extra) + [bad, os.path.join(d, "o.h5")],
                    bad, dsname, want)
            return bad

        # the input: one object's size 2^40 (H5HG_read copied 2^40 bytes: SIGSEGV)
        big = case("object size 2^40", lambda b: struct.pack_into("<Q", b, h3 + 8, 1 << 40), "global heap")
        refused("object size 2^40, direct strategy",
                [H5SHUF, "-f", "-s", "3", "-m", "2M", "--strategy", "direct", big, os.path.join(d, "o.h5")],
                big, ":/x", "global heap")
        refused("object size 2^40, verify", [H5SHUF, "verify", "-m", "2M", big, out], big, ":/x", "global heap")
        # within its collection but more than the element's 12 bytes (an overflow of HDF5's buffer)
        case("object size 1000", lambda b: struct.pack_into("<Q", b, h3 + 8, 1000), "global heap")
        # a length of 0 (HDF5 reads the object all the same: H5T__vlen_disk_read asks only the address)
        case("length 0, object size 2^40", lambda b: (struct.pack_into("<Q", b, h3 + 8, 1 << 40),
                                                      struct.pack_into("<I", b, off + 16 * 2, 0)), "global heap")
        # a descriptor naming an object the collection does not hold (HDF5 indexes past its table)
        case("missing object index", lambda b: struct.pack_into("<I", b, off + 16 * 5 + 12, 999), "no object 999")
        # a descriptor naming a collection past the end of the file
        case("collection past the end", lambda b: struct.pack_into("<Q", b, off + 16 * 5 + 4, 1 << 40),
             "past the end of the file")
        # a length of 2^31 elements (H5T__conv_vlen allocated and zeroed 8 GiB: the runaway)
        case("length 2^31", lambda b: struct.pack_into("<I", b, off + 16 * 7, 1 << 31), "more than the file holds")
        # every descriptor naming one object of 8000 bytes (the first row's, in a collection of its own),
        # with a length to match: 512 KB of payload from a file of a few KB
        lok = os.path.join(d, "long.h5")
        loff = write_seq(lok, first_len=2000)
        lb = bytearray(open(lok, "rb").read())
        addr, idx = [(a, i) for a, objs_ in heap_collections(lb) for p, i, sz in objs_ if sz == 8000][0]
        for i in range(64):
            struct.pack_into("<IQI", lb, loff + 16 * i, 2000, addr, idx)
        lbad = os.path.join(d, "alias.h5")
        open(lbad, "wb").write(lb)
        check("64 descriptors sharing one object: the file is smaller than their payload",
              os.path.getsize(lbad) < 64 * 8000, "%d bytes" % os.path.getsize(lbad))
        refused("64 descriptors sharing one object", [H5SHUF, "-f", "-m", "2M", lbad, os.path.join(d, "o.h5")], lbad,
                ":/x", "more than the file holds")
        # a valid file whose first 64 rows (the sample's first read) need 6 MB: -m 512K allows a read 4 MiB
        big = os.path.join(d, "big.h5")
        write_seq(big, first_len=1500000)
        refused("rows of 6 MB under -m 512K", [H5SHUF, "-f", "-m", "512K", big, os.path.join(d, "o.h5")], big, ":/x",
                "more than one read may take under the memory budget")

        # variable-length strings, chunked and compressed
        sok = os.path.join(d, "sok.h5")
        write_str(sok)
        rc, err, _, _ = run([H5SHUF, "-q", "-f", "-m", "2M", sok, out])
        check("the unpatched strings shuffle (exit 0, silent)", rc == 0 and not err, err)
        sb = bytearray(open(sok, "rb").read())
        _, sobjs = heap_objects(sb)
        struct.pack_into("<Q", sb, sobjs[10][0] + 8, 1 << 40)
        sbad = os.path.join(d, "sbad.h5")
        open(sbad, "wb").write(sb)
        refused("strings: object size 2^40", [H5SHUF, "-f", "-m", "2M", sbad, os.path.join(d, "o.h5")], sbad, ":/s",
                "global heap")
        # what whole-file mode copies: a vlen string attribute (H5Aread) and a scalar vlen string dataset (H5Ocopy)
        for what, want in (("attribute", "attribute note"), ("scalar dataset", "/s")):
            cok = os.path.join(d, "copy-ok.h5")
            with h5py.File(cok, "w") as f:
                f["x"] = np.arange(8, dtype=np.int32)
                if what == "attribute":
                    f["x"].attrs["note"] = "a note of some length"
                else:
                    f.create_dataset("s", data="a string of some length", dtype=h5py.string_dtype())
            rc, err, _, _ = run([H5SHUF, "-q", "-f", "-m", "2M", cok, out])
            check("a %s of a vlen string: the unpatched file shuffles (exit 0, silent)" % what, rc == 0 and not err, err)
            cb = bytearray(open(cok, "rb").read())
            _, cobjs = heap_objects(cb)
            struct.pack_into("<Q", cb, cobjs[0][0] + 8, 1 << 40)
            cbad = os.path.join(d, "copy-bad.h5")
            open(cbad, "wb").write(cb)
            refused("a %s of a vlen string: object size 2^40" % what, [H5SHUF, "-f", "-m", "2M", cbad,
                                                                        os.path.join(d, "o.h5")], "h5", want, "global heap")
        case_nested_and_members(d, out)
    print("%d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
