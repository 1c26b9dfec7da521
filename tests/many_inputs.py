#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""many_inputs: thousands of input files, within the memory budget and the default descriptor limit.

usage: /usr/bin/python3 tests/many_inputs.py [--sanitized] PATH/TO/h5shuf

Corpora come as thousands of files.  h5shuf opens an input only while it reads it (inputs.c): each open
HDF5 file costs about 0.6 MiB and a descriptor, so holding them all open took 0.6 MiB per input outside
the budget (3 GB for 5000 inputs) and failed past about 1020 inputs under `ulimit -n 1024`.  Inputs are
written here by h5py (an independent writer), and every run is under `ulimit -n 1024`:
  - 5000 inputs of 1..4 rows (/data gzip, /label the global row id), two passes at -m 32M: the output
    against the oracle (numpy Philox: rows sorted by (key, i)), peak RSS within the bound below;
  - h5shuf verify over the 5000 inputs, within the same bound;
  - the direct path (--strategy direct) over 1100 inputs of 32 KiB rows, read in key order from any input
    (a few kept open), against the oracle, within the bound;
  - the whole-file form (inputs that name no dataset) over the same 1100 inputs, against the oracle;
  - out of descriptors (a tiny `ulimit -n`): the one-line error says "too many open files (ulimit -n is
    N)" and names the file, exit 1, nothing left in the output directory;
  - inputs mapped when scanned and read with pread() in pass 1 (inmap.c), mixed with inputs that are not:
    contiguous, chunked with gzip (decoded on the pool, a partial last chunk), more chunks than the map's
    cap and other pipelines (read through HDF5), in one pass and in two, against the oracle; under strace
    (when installed), which inputs were opened for pread and which by HDF5 again.  A mapped input changed
    between the scan and its read is refused: tests/test_inmap.c checks that deterministically (here the
    moment cannot be chosen).

The RSS bound, derived (docs/guide.md, section 6): -m 32 MiB, plus the fixed overhead the guide states
(24 MiB: HDF5, codec contexts and buffers), plus what inputs cost: at most 1 + H5SHUF_INPUTS_OPEN_MAX = 5
open at a time, 0.6 to 0.9 MiB each (4.5 MiB), and about 0.3 KiB per input of names and bookkeeping
(1.5 MiB for 5000; both measured with massif and /usr/bin/time -v), 6 MiB: 62 MiB in all.  Measured on
this VM: 21 to 40 MiB for the runs below (the data is small), 3 GB for the 5000 inputs before inputs were
closed after reading.  --sanitized (ASan builds) skips the RSS checks.
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (the oracle and the check/run helpers)

check = O.check
BUDGET_MIB = 32
RSS_BOUND_MIB = BUDGET_MIB + 24 + 6  # the derivation is in the docstring
NOFILE = 1024  # the usual default soft limit
SANITIZED = False
H5SHUF = None


def limit_fds(n):
    """A preexec_fn: the child's soft descriptor limit n (as `ulimit -n n`)."""
    def set_limit():
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (n if hard == resource.RLIM_INFINITY else min(n, hard), hard))
    return set_limit


def run(args, nofile=NOFILE, cwd=None):
    """Run h5shuf ARGS under /usr/bin/time -v with the descriptor limit; (exit status, stderr without
    time's report, peak RSS in MiB)."""
    proc = subprocess.run(["/usr/bin/time", "-v", H5SHUF] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, preexec_fn=limit_fds(nofile), cwd=cwd, timeout=600)
    err = proc.stderr.decode("utf-8", "replace")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    ours = err[:err.find("\tCommand being timed")] if "\tCommand being timed" in err else err
    ours = "\n".join(line for line in ours.splitlines() if not line.startswith("Command exited with non-zero status"))
    return proc.returncode, ours.strip(), (int(m.group(1)) / 1024.0 if m else float("nan"))


def check_rss(name, rss):
    if SANITIZED:
        return
    check("%s: peak RSS %.1f MiB within %d MiB (-m %dM + fixed overhead + inputs)" % (name, rss, RSS_BOUND_MIB,
                                                                                       BUDGET_MIB),
          rss <= RSS_BOUND_MIB)


def make_inputs(d, files, rows_of, cols, compression):
    """files inputs d/in-NNNNN.h5, input k of rows_of(k) rows: /data (rows, cols) float32 whose row i
    (global id) is i * cols + 0..cols-1, /label (rows,) int64 = i.  Returns their paths and N."""
    os.makedirs(d)
    paths, first = [], 0
    for k in range(files):
        r = rows_of(k)
        ids = np.arange(first, first + r, dtype=np.int64)
        p = os.path.join(d, "in-%05d.h5" % k)
        with h5py.File(p, "w") as h:
            h.create_dataset("data", data=(ids[:, None] * cols + np.arange(cols)).astype("<f4"), chunks=(r, cols),
                             **compression)
            h.create_dataset("label", data=ids, chunks=(r,))
        paths.append(p)
        first += r
    return paths, first


def check_output(name, out, seed, n, cols):
    """out's /label and /data are the rows in the oracle's order."""
    order = O.oracle_order(seed, n)
    with h5py.File(out, "r") as h:
        label, data = h["label"][:], h["data"][:]
    want = (order[:, None] * cols + np.arange(cols)).astype("<f4")
    check("%s: /label in the oracle's order (N=%d)" % (name, n), np.array_equal(label, order.astype(np.int64)))
    check("%s: /data rows in the oracle's order" % name, data.shape == want.shape and np.array_equal(data, want))


def check_clean(name, d, keep=()):
    left = sorted(set(os.listdir(d)) - set(keep))
    check("%s: nothing else left in the output directory" % name, not left, " ".join(left))


def case_two_pass(tmp):
    """5000 inputs of a few rows, the two passes, and verify."""
    paths, n = make_inputs(os.path.join(tmp, "small"), 5000, lambda k: 1 + k % 4, 16,
                           {"compression": "gzip", "compression_opts": 1})
    outdir = os.path.join(tmp, "out1")
    os.makedirs(outdir)
    out = os.path.join(outdir, "out.h5")
    seed = 15
    specs = [p + ":/data,/label" for p in paths]
    rc, err, rss = run(["-m", "%dM" % BUDGET_MIB, "-s", seed, "-t", outdir] + specs + [out])
    if not check("5000 inputs, two passes: exit 0 under ulimit -n %d" % NOFILE, rc == 0, err[-400:]):
        return
    check_output("5000 inputs", out, seed, n, 16)
    check_rss("5000 inputs", rss)
    check_clean("5000 inputs", outdir, ["out.h5"])
    rc, err, rss = run(["verify", "-m", "%dM" % BUDGET_MIB] + specs + [out])
    check("verify over 5000 inputs: exit 0", rc == 0, err[-400:])
    check_rss("verify over 5000 inputs", rss)


def case_direct(tmp):
    """1100 inputs (more than ulimit -n) of 32 KiB rows: the direct path reads rows in key order, from any
    input; the whole-file form over the same inputs."""
    cols = 8192
    paths, n = make_inputs(os.path.join(tmp, "large"), 1100, lambda k: 1 + k % 2, cols, {})
    outdir = os.path.join(tmp, "out2")
    os.makedirs(outdir)
    out = os.path.join(outdir, "direct.h5")
    seed = 16
    rc, err, rss = run(["--strategy", "direct", "-m", "%dM" % BUDGET_MIB, "-s", seed] +
                       [p + ":/data,/label" for p in paths] + [out])
    if check("1100 inputs, --strategy direct: exit 0 under ulimit -n %d" % NOFILE, rc == 0, err[-400:]):
        check_output("direct path", out, seed, n, cols)
        check_rss("direct path", rss)
        rc, err, _ = run(["verify", "-m", "%dM" % BUDGET_MIB] + [p + ":/data,/label" for p in paths] + [out])
        check("verify of the direct output: exit 0", rc == 0, err[-400:])
        os.unlink(out)
    out = os.path.join(outdir, "whole.h5")
    rc, err, rss = run(["-m", "%dM" % BUDGET_MIB, "-s", seed, "-t", outdir] + paths + [out])
    if check("1100 inputs, whole-file form: exit 0", rc == 0, err[-400:]):
        check_output("whole-file form", out, seed, n, cols)
        check_rss("whole-file form", rss)
    check_clean("direct and whole-file", outdir, ["whole.h5"])


def case_no_fds(tmp):
    """Out of descriptors: a limit so small that an open fails somewhere; the error says so."""
    d = os.path.join(tmp, "small")
    specs = [os.path.join(d, "in-%05d.h5:/data,/label" % k) for k in range(3)]
    outdir = os.path.join(tmp, "out3")
    os.makedirs(outdir)
    out = os.path.join(outdir, "out.h5")
    at_input = 0
    failed = 0
    for nofile in range(4, 17):
        rc, err, _ = run(["-m", "%dM" % BUDGET_MIB, "-s", 1, "-t", outdir] + specs + [out], nofile=nofile)
        if rc != 0 and "loading shared libraries" in err:
            continue  # (too few for the loader: the run never started)
        if rc == 0:
            os.unlink(out)
            continue
        failed += 1
        lines = err.splitlines()
        check("ulimit -n %d: exit 1, one line saying \"too many open files (ulimit -n is %d)\"" % (nofile, nofile),
              rc == 1 and len(lines) == 1 and ("too many open files (ulimit -n is %d)" % nofile) in lines[0]
              and lines[0].startswith("h5shuf: "), "exit %d: %s" % (rc, err[-400:]))
        if re.match(r"h5shuf: \S*in-0000\d\.h5: cannot open: too many open files", lines[0] if lines else ""):
            at_input += 1
        check_clean("ulimit -n %d" % nofile, outdir)
    check("some limits failed a run (%d), at least one at an input, naming it (%d)" % (failed, at_input),
          failed > 0 and at_input > 0)
    rc, err, _ = run(["-m", "%dM" % BUDGET_MIB, "-s", 1, "-t", outdir] + specs + [out], nofile=64)
    check("the same run succeeds with 64 descriptors", rc == 0, err[-400:])


MAPPED_KINDS = [
    # (name, rows, /data's h5py options, /label's, mapped): the first input (kind 0) is never mapped; the
    # pipeline of the first mapped chunked /data (kind 1: gzip, chunks of 4 rows) is the one others must have
    ("contiguous", 6, {}, {}, True),
    ("gzip, 3 chunks", 10, {"chunks": (4, 16), "compression": "gzip", "compression_opts": 1}, {}, True),
    ("gzip, 20 chunks (over the cap)", 77,
     {"chunks": (4, 16), "compression": "gzip", "compression_opts": 1}, {}, False),
    ("gzip, another chunk shape", 9, {"chunks": (3, 16), "compression": "gzip", "compression_opts": 1}, {}, False),
    ("chunked /label, contiguous /data", 5, {}, {"chunks": (2,)}, True),
]


def make_mixed(d, files):
    """files inputs d/mix-NNNNN.h5 of the kinds above in turn, rows as make_inputs writes them.  Returns
    their paths, N and whether each should be mapped."""
    os.makedirs(d)
    paths, mapped, first = [], [], 0
    for k in range(files):
        _, r, xo, yo, m = MAPPED_KINDS[k % len(MAPPED_KINDS)]
        ids = np.arange(first, first + r, dtype=np.int64)
        p = os.path.join(d, "mix-%05d.h5" % k)
        with h5py.File(p, "w") as h:
            h.create_dataset("data", data=(ids[:, None] * 16 + np.arange(16)).astype("<f4"), **xo)
            h.create_dataset("label", data=ids, **yo)
        paths.append(p)
        mapped.append(m and k > 0)
        first += r
    return paths, first, mapped


def strace_opens(trace, paths):
    """From an strace -f -e trace=openat log: per path, (opens without O_CLOEXEC: HDF5's, opens with it:
    h5shuf's own for pread)."""
    counts = {p: [0, 0] for p in paths}
    with open(trace) as fh:
        for line in fh:
            m = re.search(r'openat\(AT_FDCWD, "([^"]+)", ([A-Z_|]+)', line)
            if m and m.group(1) in counts and "= -1" not in line:
                counts[m.group(1)][1 if "O_CLOEXEC" in m.group(2) else 0] += 1
    return counts


def case_mapped(tmp):
    """Inputs mapped at scan time and read with pread(), mixed with inputs read through HDF5."""
    paths, n, mapped = make_mixed(os.path.join(tmp, "mixed"), 600)
    outdir = os.path.join(tmp, "out4")
    os.makedirs(outdir)
    specs = [p + ":/data,/label" for p in paths]
    for strategy, seed in (("two-pass", 21), ("auto", 22)):
        out = os.path.join(outdir, "mixed-%s.h5" % strategy)
        rc, err, rss = run(["--strategy", strategy, "-m", "%dM" % BUDGET_MIB, "-s", seed, "-t", outdir] + specs +
                           [out])
        if check("mixed inputs, --strategy %s: exit 0 under ulimit -n %d" % (strategy, NOFILE), rc == 0, err[-400:]):
            check_output("mixed inputs, --strategy %s" % strategy, out, seed, n, 16)
            check_rss("mixed inputs, --strategy %s" % strategy, rss)
            os.unlink(out)
    check_clean("mixed inputs", outdir)
    if not shutil.which("strace"):
        print("SKIP: strace is not installed: which inputs were mapped is not checked")
        return
    out = os.path.join(outdir, "traced.h5")
    trace = os.path.join(tmp, "strace.log")
    env = dict(os.environ)
    if SANITIZED:  # LeakSanitizer does not work under ptrace: the leak checks are the other runs'
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, H5SHUF, "--strategy",
                           "two-pass", "-m", "%dM" % BUDGET_MIB, "-s", "23", "-t", outdir] + specs + [out],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit_fds(NOFILE), env=env,
                          timeout=600)
    if not check("mixed inputs under strace: exit 0", proc.returncode == 0, proc.stderr.decode()[-400:]):
        return
    check_output("mixed inputs under strace", out, 23, n, 16)
    counts = strace_opens(trace, paths)
    wrong = [(os.path.basename(p), counts[p]) for p, m in zip(paths, mapped)
             if counts[p] != ([1, 1] if m else [2, 0] if p != paths[0] else [1, 0])]
    kinds = {MAPPED_KINDS[k][0]: 0 for k in range(len(MAPPED_KINDS))}
    for k, m in enumerate(mapped):
        kinds[MAPPED_KINDS[k % len(MAPPED_KINDS)][0]] += m
    check("mapped inputs opened once by HDF5 and once for pread, the others twice by HDF5 (mapped: %s)" %
          ", ".join("%s %d" % kv for kv in kinds.items()), not wrong, str(wrong[:5]))


def main():
    global H5SHUF, SANITIZED
    args = sys.argv[1:]
    if args and args[0] == "--sanitized":
        SANITIZED = True
        args = args[1:]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    H5SHUF = os.path.abspath(args[0])
    tmp = tempfile.mkdtemp(prefix="h5shuf-many.")
    try:
        O.run_case("5000 inputs, two passes, verify", case_two_pass, tmp)
        O.run_case("out of descriptors", case_no_fds, tmp)
        O.run_case("1100 inputs, direct path, whole-file form", case_direct, tmp)
        O.run_case("inputs mapped and read with pread, mixed with others", case_mapped, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (O.PASSED, O.FAILED), flush=True)
    return 0 if O.FAILED == 0 and O.PASSED > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
