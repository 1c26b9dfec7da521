#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""external_h5py: datasets whose rows HDF5 keeps in another file are not read unless --allow-external.

usage: /usr/bin/python3 tests/external_h5py.py PATH/TO/h5shuf

h5py writes, beside a "secret" file of the runner's (random bytes, 0600):
  ext.h5   /X (N, 70) uint8 with external storage in the secret (h5py's external=), /y its labels;
  vds.h5   /X a virtual dataset over /data of src.h5 (another file), /y;
  own.h5   /X a virtual dataset over /data of its own file (".");
  whole.h5 a whole-file input (/x, /y shuffled) whose other dataset /meta is external storage in the
           secret (copied, not shuffled).
Without --allow-external each is refused (exit 1, one line naming the file:dataset and the file it points
at), nothing is written in the output directory, and the secret's bytes appear in no file there.  With
it: exit 0, one warning naming the external file, the rows in the contract's order (numpy's Philox,
tests/corpus/oracle.py).  A virtual dataset over its own file needs no option.  verify refuses and
accepts the same way (it reads only the shuffled datasets, so whole.h5's copied /meta does not matter).  The last line is "N passed, M failed".
"""

import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
import oracle  # noqa: E402

H5SHUF = os.path.abspath(sys.argv[1])
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS", name)
    else:
        failed += 1
        print("FAIL", name + (": " + str(detail) if detail else ""))
    return ok


def run(args):
    r = subprocess.run([H5SHUF] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stderr


def refused(name, args, outdir, dataset, target, secret):
    rc, err = run(args)
    lines = err.strip().splitlines()
    check("%s: refused (exit 1, one line naming %s and %s)" % (name, dataset, target),
          rc == 1 and len(lines) == 1 and dataset in lines[0] and target in lines[0]
          and "--allow-external" in lines[0], "exit %s: %r" % (rc, err))
    left = os.listdir(outdir)
    leaked = [f for f in left if secret in open(os.path.join(outdir, f), "rb").read()]
    check("%s: nothing left in the output directory, the secret in no file" % name, not left and not leaked, left)


def main():
    with tempfile.TemporaryDirectory(prefix="h5shuf-external.") as d:
        rng = np.random.default_rng(5)
        n, seed = 40, 9
        secret_path = os.path.join(d, "secret.bin")
        secret = rng.integers(0, 256, n * 70, dtype=np.uint8)
        secret.tofile(secret_path)
        os.chmod(secret_path, 0o600)
        secret_bytes = secret.tobytes()[:64]  # (a run of it that a leak would copy)
        perm = oracle.order(seed, n)
        y = np.arange(n, dtype=np.int64)
        with h5py.File(os.path.join(d, "ext.h5"), "w") as f:
            f.create_dataset("X", (n, 70), "u1", external=[(secret_path, 0, n * 70)])
            f["y"] = y
        with h5py.File(os.path.join(d, "src.h5"), "w") as f:
            f["data"] = secret.reshape(n, 70)
        layout = h5py.VirtualLayout((n, 70), "u1")
        layout[:] = h5py.VirtualSource(os.path.join(d, "src.h5"), "data", shape=(n, 70))
        with h5py.File(os.path.join(d, "vds.h5"), "w") as f:
            f.create_virtual_dataset("X", layout)
            f["y"] = y
        with h5py.File(os.path.join(d, "own.h5"), "w") as f:
            f["data"] = secret.reshape(n, 70)
            own = h5py.VirtualLayout((n, 70), "u1")
            own[:] = h5py.VirtualSource(".", "data", shape=(n, 70))
            f.create_virtual_dataset("X", own)
            f["y"] = y
        with h5py.File(os.path.join(d, "whole.h5"), "w") as f:
            f["x"] = np.arange(n * 3, dtype=np.int32).reshape(n, 3)
            f["y"] = y
            f.create_dataset("meta", (7,), "u1", external=[(secret_path, 0, 7)])
        out = os.path.join(d, "out")
        os.makedirs(out)
        o = os.path.join(out, "o.h5")
        cases = [("external storage", ["ext.h5:/X,/y"], "ext.h5:/X", secret_path),
                 ("a virtual dataset over another file", ["vds.h5:/X,/y"], "vds.h5:/X", "src.h5"),
                 ("whole-file mode, an external dataset copied", ["whole.h5"], "whole.h5:/meta", secret_path)]
        for name, inputs, dataset, target in cases:
            ins = [os.path.join(d, i) for i in inputs]
            refused(name, ["-q", "-s", seed] + ins + [o], out, dataset, target, secret_bytes)
            rc, err = run(["-q", "-s", seed, "--allow-external"] + ins + [o])
            lines = err.strip().splitlines()
            if check("%s: --allow-external runs (exit 0), one warning naming the file" % name,
                     rc == 0 and len(lines) == 1 and lines[0].startswith("h5shuf: warning: ") and target in lines[0],
                     "exit %s: %r" % (rc, err)):
                with h5py.File(o, "r") as fo:
                    if name.startswith("whole"):
                        ok = np.array_equal(fo["x"][()], np.arange(n * 3, dtype=np.int32).reshape(n, 3)[perm])
                    else:
                        ok = np.array_equal(fo["X"][()], secret.reshape(n, 70)[perm])
                    check("%s: the rows in the contract's order" % name, ok and np.array_equal(fo["y"][()], y[perm]))
            rc, err = run(["verify", "-q"] + ins + [o])
            if name.startswith("whole"):  # verify reads the shuffled datasets only: /meta is not read
                check("%s: verify (which reads only the shuffled rows) passes" % name, rc == 0, err)
            else:
                check("%s: verify refuses without --allow-external" % name, rc == 1 and "--allow-external" in err, err)
            rc, err = run(["verify", "-q", "--allow-external"] + ins + [o])
            check("%s: verify --allow-external passes" % name, rc == 0, err)
            for f in os.listdir(out):
                os.unlink(os.path.join(out, f))
        rc, err = run(["-q", "-s", seed, os.path.join(d, "own.h5") + ":/X,/y", o])
        if check("a virtual dataset over its own file: runs without the option (exit 0, silent)", rc == 0 and not err,
                 err):
            with h5py.File(o, "r") as fo:
                check("a virtual dataset over its own file: the rows in the contract's order",
                      np.array_equal(fo["X"][()], secret.reshape(n, 70)[perm]))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
