#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""fillnever_h5py: storage never written, with no fill value, reads as zero bytes; never as h5shuf's memory.

usage: /usr/bin/python3 tests/fillnever_h5py.py PATH/TO/h5shuf [PATH/TO/h5shuf-mpi]

A dataset created with fill time H5D_FILL_TIME_NEVER (netCDF-4's NC_NOFILL, fill_value=False in
netCDF4-python) has undefined values where it was never written: HDF5's read leaves the caller's buffer
as it was.  h5shuf zeroes such buffers first (hdf5/rows.c h5shuf__read_may_skip), as HDF5 itself zeroes
the unwritten part of a chunk it stores under that fill time; a dataset copied whole (H5Ocopy) keeps its
unwritten storage unwritten, as h5repack does.  Files are written here by h5py (low-level API: fill time
NEVER; contiguous and chunked, never written; chunked with half its chunks written, gzip; chunks that
split rows, half written; a chunk written in part; copied datasets of another length, one never written,
one in part; and variable-length rows, half written, with the fill time patched to NEVER, which HDF5
refuses to create) and by netCDF4-python (fill_value=False).  For each file and strategy (auto: one pass
but for variable-length rows; two passes with split piles; direct; and h5shuf-mpi at P = 2 when given),
runs with one seed under MALLOC_PERTURB_ unset, 0xA5 and 0x3C (glibc fills allocated memory with the
byte's complement and freed memory with the byte itself) must give:
  - the same bytes, and the same as every other strategy (the contract; h5shuf-mpi's single output: the
    same objects and stored chunks, tests/h5same.py);
  - no run of 8 perturbation bytes anywhere in the output file;
  - each shuffled dataset equal to the oracle (the input read by h5py into zeroes, rows in the order of
    (K(seed, i), i)) and all its storage written (the output's fill time is NEVER too), each copied one
    equal to the input read so, its storage unwritten when the input's is;
  - h5shuf verify passing under another MALLOC_PERTURB_ than the run's (its reads of the input are
    zeroed the same way).
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
from h5py import h5d, h5p, h5s, h5t

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (the oracle and the check/run helpers)

check = O.check
SEED = 7
N = 24
PERTURB = (None, 0xA5, 0x3C)  # none of them, nor their complements, is 0x00 or 0xff (HDF5's own fill bytes)
MPI = None


def never(f, name, shape, dtype, chunks=None, gzip=False):
    """A dataset of f created with fill time NEVER, nothing written; its h5py Dataset."""
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_fill_time(h5d.FILL_TIME_NEVER)
    if chunks:
        dcpl.set_chunk(chunks)
    if gzip:
        dcpl.set_deflate(1)
    dsid = h5d.create(f.id, name.encode(), h5t.py_create(dtype, logical=True), h5s.create_simple(shape, shape),
                      dcpl=dcpl)
    return h5py.Dataset(dsid)


def make_h5py(path):
    """The h5py file: N rows in /y (written) and in datasets never (or partly) written; two copied ones."""
    with h5py.File(path, "w") as f:
        f.create_dataset("y", data=np.arange(N, dtype="<i8") + 1000, chunks=(8,))
        never(f, "contig", (N,), np.dtype("<i4"))
        never(f, "chunked", (N, 3), np.dtype("<i4"), chunks=(4, 3))
        half = never(f, "half", (N, 2), np.dtype("<f8"), chunks=(2, 2), gzip=True)
        for c in range(0, N, 4):  # every other chunk
            half[c:c + 2] = np.arange(c * 2, c * 2 + 4, dtype="<f8").reshape(2, 2) + 0.5
        split = never(f, "split", (N, 4), np.dtype("<i2"), chunks=(4, 2))  # a row spans two chunks
        for c in range(0, N, 8):  # half the chunks: the left ones of every other chunk row
            split[c:c + 4, 0:2] = np.arange(c * 2, c * 2 + 8, dtype="<i2").reshape(4, 2) + 1
        part = never(f, "part", (N,), np.dtype("<u2"), chunks=(6,))
        part[7] = 77  # one element of chunk 1 written: HDF5 zeroes the rest of that chunk itself
        # (variable-length types: HDF5 refuses fill time NEVER, "Dataset doesn't support VL datatype when
        # fill value is not defined")
        never(f, "copied_contig", (7, 2), np.dtype("<i4"))
        cc = never(f, "copied_chunked", (9,), np.dtype("<i8"), chunks=(2,))
        cc[0:2] = [5, 6]


def make_netcdf(path):
    """The netCDF-4 file: a dimension of N rows, variables without a fill value (fill_value=False), never
    or partly written, one written in full, and one on another dimension (copied)."""
    import netCDF4
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("n", N)
        d.createDimension("m", 5)
        made = [d.createVariable("var2", "i4", ("n",), fill_value=False),  # contiguous, never written
                d.createVariable("varc", "i4", ("n",), fill_value=False, chunksizes=(4,)),
                d.createVariable("varh", "f8", ("n",), fill_value=False, chunksizes=(2,), zlib=True),
                d.createVariable("var1", "i8", ("n",)),
                d.createVariable("varm", "i4", ("m",), fill_value=False)]
        for v in made:
            v.set_auto_mask(False)
        made[3][:] = np.arange(N) + 1000
        for c in range(0, N, 4):
            made[2][c:c + 2] = [c + 0.5, c + 1.5]


def zero_view(ds):
    """ds as a reader sees it that reads into zeroes: storage never written (fill NEVER) stays zero."""
    a = np.zeros(ds.shape, dtype=ds.dtype)
    if ds.size:
        ds.read_direct(a)
    return a


def perturbed(p):
    env = dict(os.environ)
    env.pop("MALLOC_PERTURB_", None)
    if p is not None:
        env["MALLOC_PERTURB_"] = str(p)
    return env


def run(args, p):
    proc = subprocess.run([str(a) for a in args], env=perturbed(p), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)
    if proc.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(str(a) for a in args), proc.returncode,
                                                 proc.stderr.decode("utf-8", "replace").strip()[:400]))


def pattern_runs(path):
    """The perturbation bytes found in the file as runs of 8."""
    data = open(path, "rb").read()
    return ["0x%02x" % b for p in PERTURB if p is not None for b in (p, p ^ 0xFF) if bytes([b]) * 8 in data]


def check_output(tag, src, out, shuffled, copied):
    """shuffled: names, or a dict of names and their rows as written (variable-length rows)."""
    order = O.oracle_order(SEED, N)
    with h5py.File(src, "r") as fi, h5py.File(out, "r") as fo:
        for name in shuffled:
            if isinstance(shuffled, dict):
                got, want = list(fo[name][()]), [shuffled[name][i] for i in order]
                ok = len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))
                detail = "" if ok else "%r vs %r" % (got[:6], want[:6])
            else:
                ok, detail = O.same_array(zero_view(fo[name]), zero_view(fi[name])[order])
            check("%s: %s is the input's rows (unwritten: zeroes) in the contract's order" % (tag, name), ok, detail)
            ds = fo[name]  # (the output has fill time NEVER too: a reader sees its zeroes only if they are stored)
            if ds.chunks:
                want = int(np.prod([-(-n // c) for n, c in zip(ds.shape, ds.chunks)]))
                got = ds.id.get_num_chunks()
            else:
                want, got = ds.nbytes, ds.id.get_storage_size()
            check("%s: %s's storage all written in the output" % (tag, name), got == want, "%d of %d" % (got, want))
        for name in copied:
            ok, detail = O.same_array(zero_view(fo[name]), zero_view(fi[name]))
            check("%s: %s copied as it is" % (tag, name), ok, detail)
            if fi[name].id.get_storage_size() == 0:
                got = fo[name].id.get_storage_size()
                check("%s: %s's storage still unwritten (H5Ocopy, as h5repack)" % (tag, name), got == 0,
                      "%d bytes" % got)


def strategies(tmp, vlen):
    """(name, command, what --plan says of its strategy); variable-length rows are never read in one pass."""
    yield "auto", [O.H5SHUF, "-q", "-m", "1G"], "strategy two-pass:" if vlen else "strategy two-pass in one"
    yield "two passes", [O.H5SHUF, "-q", "--strategy", "two-pass", "-m", "1M", "--debug-pile-bound", "5"], \
        "strategy two-pass: asked for"
    yield "direct", [O.H5SHUF, "-q", "--strategy", "direct", "-j", "1"], "strategy direct: asked for"
    if MPI:
        for r in range(2):
            os.makedirs(os.path.join(tmp, "r%d" % r), exist_ok=True)
        yield "mpi P=2", ["mpirun", "--oversubscribe", "-x", "MALLOC_PERTURB_", "-n", "2", MPI, "-q",
                          "-t", os.path.join(tmp, "r%r")], None


def case_file(tmp, tag, src, spec, shuffled, copied):
    """Every strategy under every perturbation: one output, the oracle's, verified."""
    first = None
    for sname, cmd, plan in strategies(tmp, isinstance(shuffled, dict)):
        if plan:
            said = O.run(cmd[:1] + ["--plan"] + cmd[2:] + [src + spec, os.path.join(tmp, "plan.h5")])[0]
            check("%s, %s: the plan says %r" % (tag, sname, plan), plan in said, said)
        outs = []
        for p in PERTURB:
            out = os.path.join(tmp, "%s-%s-%s.h5" % (tag.replace(" ", "_"), sname.replace(" ", ""), p))
            env_p = p if p is not None or "mpirun" not in cmd else 0  # (mpirun -x needs it set)
            run(cmd + ["-s", SEED, src + spec, out], env_p)
            outs.append(out)
        sums = [O.file_hash(o) for o in outs]
        check("%s, %s: the same bytes under MALLOC_PERTURB_ unset, 0xa5, 0x3c" % (tag, sname),
              len(set(sums)) == 1, " ".join(s[:12] for s in sums))
        if first is None:
            first = (sname, sums[0], outs[0])
        elif "mpirun" not in cmd:
            check("%s, %s: the same bytes as the %s" % (tag, sname, first[0]), sums[0] == first[1])
        else:  # (h5shuf-mpi's single output holds the same chunks, not the same file: tests/mpi.sh)
            same = subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                    "h5same.py"), first[2], outs[0]],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
            check("%s, %s: the same objects and stored chunks as the %s (h5same.py)" % (tag, sname, first[0]),
                  same.returncode == 0, same.stdout.decode("utf-8", "replace").strip())
        for out in outs[1:]:
            found = pattern_runs(out)
            check("%s, %s: no perturbation bytes in %s" % (tag, sname, os.path.basename(out)), not found,
                  "runs of %s" % ", ".join(found))
        check_output("%s, %s" % (tag, sname), src, outs[1], shuffled, copied)
        # verify reads the input with other heap contents than the run that wrote the output had
        for out, vp in ((outs[1], 0x3C), (outs[2], 0xA5)):
            try:
                run([O.H5SHUF, "verify", src + spec, out], vp)
                ok, detail = True, ""
            except RuntimeError as exc:
                ok, detail = False, str(exc)
            check("%s, %s: h5shuf verify of %s under MALLOC_PERTURB_=0x%02x" % (tag, sname, os.path.basename(out), vp),
                  ok, detail)


def case_h5py(tmp):
    src = os.path.join(tmp, "never.h5")
    make_h5py(src)
    with h5py.File(src, "r") as f:
        for name in ("contig", "chunked", "half", "split", "part", "copied_contig", "copied_chunked"):
            plist = f[name].id.get_create_plist()
            check("h5py: %s has fill time NEVER" % name, plist.get_fill_time() == h5d.FILL_TIME_NEVER)
        check("h5py: contig and chunked never written",
              f["contig"].id.get_storage_size() == 0 and f["chunked"].id.get_storage_size() == 0)
        n = f["half"].id.get_num_chunks()
        check("h5py: half has half its chunks written", n == N // 4, "%d chunks" % n)
    shuffled = ["y", "contig", "chunked", "half", "split", "part"]
    case_file(tmp, "h5py whole file", src, "", shuffled, ["copied_contig", "copied_chunked"])
    case_file(tmp, "h5py datasets", src, ":/contig,/half,/split", ["contig", "half", "split"], [])


def case_vlen_patched(tmp):
    """Variable-length rows, half their chunks written, in a file whose fill time says NEVER (HDF5 refuses
    to create such a dataset: the byte is patched, as a hostile or foreign writer may leave it).  HDF5
    skips the unwritten chunks, so the descriptors h5shuf reads to bound the read (hdf5/vlenbound.c) are
    whatever its buffer held unless it zeroes it: nil descriptors, read as empty rows."""
    src = os.path.join(tmp, "vlen.h5")
    rows = [np.arange(i % 5 + 1, dtype="<i4") + i if i % 8 < 4 else np.zeros(0, "<i4") for i in range(N)]
    with h5py.File(src, "w") as f:  # (the earliest format: an object header without a checksum)
        v = f.create_dataset("v", (N,), dtype=h5py.vlen_dtype(np.dtype("<i4")), chunks=(4,))
        for i in range(N):
            if len(rows[i]):
                v[i] = rows[i]
    data = bytearray(open(src, "rb").read())
    # the fill value message (type 5, 8 bytes, constant): version 2, allocation INCR, fill time ALLOC, defined
    at = [k for k in range(len(data) - 12)
          if data[k:k + 4] == b"\x05\x00\x08\x00" and data[k + 8:k + 12] == b"\x02\x03\x00\x01"]
    if not check("vlen: one fill value message found to patch", len(at) == 1, "%d found" % len(at)):
        return
    data[at[0] + 10] = 1  # H5D_FILL_TIME_NEVER
    open(src, "wb").write(bytes(data))
    with h5py.File(src, "r") as f:
        check("vlen: the patched dataset has fill time NEVER",
              f["v"].id.get_create_plist().get_fill_time() == h5d.FILL_TIME_NEVER)
    case_file(tmp, "vlen", src, "", {"v": rows}, [])


def case_netcdf(tmp):
    try:
        import netCDF4  # noqa: F401
    except ImportError:
        check("netCDF4-python is installed (python3-netcdf4)", False)
        return
    src = os.path.join(tmp, "nofill.nc")
    make_netcdf(src)
    with h5py.File(src, "r") as f:
        for name in ("var2", "varc", "varh", "varm"):
            check("netCDF-4: %s has fill time NEVER" % name,
                  f[name].id.get_create_plist().get_fill_time() == h5d.FILL_TIME_NEVER)
        check("netCDF-4: var2 never written", f["var2"].id.get_storage_size() == 0)
    case_file(tmp, "netCDF-4", src, "", ["var1", "var2", "varc", "varh"], ["varm"])


def main():
    global MPI
    if len(sys.argv) not in (2, 3):
        print("usage: %s H5SHUF [H5SHUF_MPI]" % sys.argv[0], file=sys.stderr)
        return 2
    O.H5SHUF = os.path.abspath(sys.argv[1])
    MPI = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else None
    if MPI:  # (as tests/mpi.sh: CI runs as root in its containers)
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(prefix="fillnever_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        O.run_case("h5py files", case_h5py, tmp)
        O.run_case("netCDF-4 file", case_netcdf, tmp)
        O.run_case("patched vlen file", case_vlen_patched, tmp)
    print("%d passed, %d failed" % (O.PASSED, O.FAILED), flush=True)
    return 0 if O.FAILED == 0 and O.PASSED > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
