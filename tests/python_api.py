#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""python_api: the Python package's functions (python/h5shuf) against the command-line tool.

usage: /usr/bin/python3 tests/python_api.py H5SHUF LIBH5SHUF.so LAYOUT_PROBE PYTHON_DIR HEADER [--sanitized RT]

What it pins down:
- the ctypes mirrors of h5shuf_options, h5shuf_plan and h5shuf_mixing have the C compiler's offsets and
  sizes (tests/layout_probe.c); the package's version, status list and messages are the header's;
- h5shuf.keys equals h5shuf_key (the library, one id at a time) and numpy's Philox (consecutive ids);
- shuffle, scatter + gather, plan and verify write the CLI's bytes (cmp) and return the dict its --json
  prints (same keys in the same order, same values but times, free space and peak memory), over one
  dataset (the issue's acceptance run), whole files, several inputs, filters, index, shards, splits, a
  head, the mixing report; weights, --mix and --stratify;
- errors raise the Error subclass of their status with the CLI's message, leaving nothing behind;
- Ctrl-C (SIGINT sent to the process mid-run), KeyboardInterrupt or another exception raised by a progress
  callable cancel the run: the exception comes out, no output, no temporary or scratch file; the SIGINT
  handler is restored; a later run works;
- SIGTERM, SIGHUP, SIGQUIT (and SIGPIPE) at their default disposition, sent to a process mid-run, end it of
  that signal after the run removed its files, as the tool does; ignored, the run finishes;
- file names that are not valid UTF-8 (bytes >= 0x80 outside a valid sequence) and that are: the tool's
  --json is valid UTF-8 (each stray byte as "\\udcXX", valid UTF-8 kept), json.loads gives os.fsdecode of
  each name; the package takes such names as bytes or str and its report (and its json.dumps round trip)
  holds the same strings;
- progress=True draws a tqdm bar (when tqdm is installed) or plain summary lines (tqdm hidden);
- the library is found through $H5SHUF_LIBRARY, and a wrong one is reported, naming it.
Each check prints PASS or FAIL; the last line is "N passed, M failed".
"""

import io
import json
import os
import re
import signal
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_env  # noqa: E402
from lazy_h5py import leftovers  # noqa: E402
import oracle_h5py as orc  # noqa: E402

check = orc.check
A = python_env.setup()
import h5shuf  # noqa: E402
from h5shuf import _lib  # noqa: E402

VOLATILE = {"seconds", "peak_rss_bytes", "scratch_free_bytes", "output_free_bytes"}


def cli(*args, rc=0):
    return orc.run([A.h5shuf] + [str(a) for a in args], expect_rc=rc)


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def report_diff(py, ref, where="report"):
    """Differences between two reports: keys (and their order) and values, VOLATILE keys excepted."""
    if isinstance(ref, dict):
        if not isinstance(py, dict) or list(py) != list(ref):
            return ["%s: keys %s, the CLI's %s" % (where, list(py) if isinstance(py, dict) else py, list(ref))]
        out = []
        for k in ref:
            if k not in VOLATILE:
                out += report_diff(py[k], ref[k], "%s.%s" % (where, k))
        return out
    if isinstance(ref, list):
        if not isinstance(py, list) or len(py) != len(ref):
            return ["%s: %r, the CLI's %r" % (where, py, ref)]
        return [d for i, (a, b) in enumerate(zip(py, ref)) for d in report_diff(a, b, "%s[%d]" % (where, i))]
    if isinstance(ref, float):
        return [] if abs(py - ref) <= 1e-5 * max(1.0, abs(ref)) else ["%s: %r, the CLI's %r" % (where, py, ref)]
    return [] if py == ref else ["%s: %r, the CLI's %r" % (where, py, ref)]


def write_inputs(d):
    rng = np.random.default_rng(16)
    a, b = os.path.join(d, "a.h5"), os.path.join(d, "b.h5")
    with h5py.File(a, "w") as f:
        f.create_dataset("x", data=rng.standard_normal((900, 5)).astype("<f4"), chunks=(64, 5), compression="gzip")
        f.create_dataset("y", data=rng.integers(0, 10 ** 6, 900).astype(np.int64))
        f["x"].attrs["units"] = "m"
        f["names"] = np.array([b"alpha", b"beta"])
    with h5py.File(b, "w") as f:
        f.create_dataset("x", data=rng.standard_normal((411, 5)).astype("<f4"), chunks=(50, 5))
        f.create_dataset("y", data=rng.integers(0, 10 ** 6, 411).astype(np.int64))
    return a, b


# --------------------------------------------------------------------------------------------------------


def case_layout(d):
    out = subprocess.run([A.probe], stdout=subprocess.PIPE, check=True).stdout.decode().split("\n")
    mirrors = {"h5shuf_options": _lib.Options, "h5shuf_plan": _lib.Plan, "h5shuf_mixing": _lib.Mixing,
               "h5shuf_mixing_windows": _lib.MixingWindows}
    seen = {name: [] for name in mirrors}
    bad = []
    for line in filter(None, out):
        struct, field, *nums = line.split()
        cls = mirrors[struct]
        if field == "sizeof":
            if ctypes_sizeof(cls) != int(nums[0]):
                bad.append("sizeof %s: C %s, ctypes %d" % (struct, nums[0], ctypes_sizeof(cls)))
            continue
        seen[struct].append(field)
        desc = getattr(cls, field, None)
        if desc is None:
            bad.append("%s.%s missing in the mirror" % (struct, field))
        elif (desc.offset, desc.size) != (int(nums[0]), int(nums[1])):
            bad.append("%s.%s: C offset %s size %s, ctypes %d %d" % (struct, field, nums[0], nums[1], desc.offset,
                                                                     desc.size))
    for struct, cls in mirrors.items():
        if [f[0] for f in cls._fields_] != seen[struct]:
            bad.append("%s: fields %s, the probe's %s" % (struct, [f[0] for f in cls._fields_], seen[struct]))
    check("ctypes mirrors of h5shuf_options, h5shuf_plan, h5shuf_mixing(_windows): the C compiler's offsets and sizes",
          not bad and all(seen.values()), "; ".join(bad))


def ctypes_sizeof(cls):
    import ctypes
    return ctypes.sizeof(cls)


def case_header(d):
    text = open(A.header).read()
    version = re.search(r'#define H5SHUF_VERSION_STRING "([^"]+)"', text).group(1)
    L = _lib.lib()
    check("package version == header's == library's", h5shuf.__version__ == version == L.h5shuf_version().decode(),
          "%s, %s, %s" % (h5shuf.__version__, version, L.h5shuf_version()))
    parts = [int(re.search(r"#define H5SHUF_VERSION_%s (\d+)" % p, text).group(1)) for p in ("MAJOR", "MINOR", "PATCH")]
    number = parts[0] * 10000 + parts[1] * 100 + parts[2]
    check("h5shuf_version_number() == the header's MAJOR * 10000 + MINOR * 100 + PATCH == the version string's",
          L.h5shuf_version_number() == number and version == "%d.%d.%d" % tuple(parts),
          "%s, %s, %s" % (L.h5shuf_version_number(), number, version))
    listed = re.findall(r'X\((H5SHUF_\w+), (\d+), "([^"]*)"\)', text)
    bad = []
    for name, value, msg in listed:
        v = int(value)
        if v == 0:
            continue
        cls = h5shuf.errors.BY_STATUS.get(v)
        if cls is None or cls.status_name != name or not issubclass(cls, h5shuf.Error):
            bad.append("%s = %d: %r" % (name, v, cls))
        if L.h5shuf_strerror(v).decode() != msg:
            bad.append("strerror(%d) %r, header %r" % (v, L.h5shuf_strerror(v), msg))
    check("every status of the header has its Error subclass (same number and name)",
          len(listed) > 10 and not bad and len(h5shuf.errors.BY_STATUS) == len(listed) - 1, "; ".join(bad))


def case_keys(d):
    L = _lib.lib()
    rng = np.random.default_rng(7)
    ids = np.concatenate([rng.integers(0, 2 ** 64 - 1, 20000, dtype=np.uint64, endpoint=True),
                          np.array([0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 63, 2 ** 64 - 1], dtype=np.uint64)])
    bad = []
    for seed in (0, 1, 9, 2 ** 32 + 5, 2 ** 64 - 1, int(rng.integers(0, 2 ** 63))):
        got = h5shuf.keys(seed, ids)
        want = np.array([L.h5shuf_key(seed, int(i)) for i in ids], dtype=np.uint64)
        if not np.array_equal(got, want):
            bad.append("seed %d: %d of %d differ" % (seed, int((got != want).sum()), len(ids)))
        if not np.array_equal(h5shuf.keys(seed, np.arange(5000, 9000)), orc.keys_np(seed, 5000, 4000)):
            bad.append("seed %d: consecutive ids differ from numpy's Philox" % seed)
    check("h5shuf.keys == h5shuf_key (20006 ids x 6 seeds) and numpy's Philox (consecutive ids)", not bad,
          "; ".join(bad))


def case_acceptance(d):
    """The issue's acceptance run: h5shuf.shuffle(["in.h5:/x"], "py.h5:/x", seed=9) == h5shuf -s 9 ..."""
    a, _ = write_inputs(d)
    inp = os.path.join(d, "in.h5")
    os.rename(a, inp)
    py, ref = os.path.join(d, "py.h5"), os.path.join(d, "cli.h5")
    r = h5shuf.shuffle([inp + ":/x"], py + ":/x", seed=9)
    cli("-s", 9, inp + ":/x", ref + ":/x")
    check("shuffle(['in.h5:/x'], 'py.h5:/x', seed=9) writes the bytes of h5shuf -s 9 in.h5:/x cli.h5:/x",
          same_bytes(py, ref))
    with h5py.File(inp, "r") as f, h5py.File(py, "r") as g:
        ok, why = orc.same_array(g["x"][()], f["x"][()][orc.oracle_order(9, 900)])
    check("acceptance: the rows are in the oracle's order", ok, why)
    check("acceptance: the report's seed and rows", r["seed"] == 9 and r["plan"]["rows"] == 900 and
          r["datasets"] == ["/x"], "%r" % r)


def against_cli(d, tag, inputs, output, py_kwargs, cli_args, files=("out.h5",), fn="shuffle"):
    """Run the package and the CLI into d/py and d/cli; same bytes for each file; same report."""
    dp, dc = os.path.join(d, tag.replace(" ", "_"), "py"), os.path.join(d, tag.replace(" ", "_"), "cli")
    os.makedirs(dp)
    os.makedirs(dc)
    out_py, out_cli = os.path.join(dp, output), os.path.join(dc, output)
    r = getattr(h5shuf, fn)(inputs, out_py, **py_kwargs)
    sub = [] if fn == "shuffle" else [fn]
    ref = json.loads(cli(*(sub + ["--json"] + list(cli_args) + list(inputs) + [out_cli]))[0])
    same = [f for f in files if same_bytes(os.path.join(dp, f), os.path.join(dc, f))]
    check("%s: the package writes the CLI's bytes (%s)" % (tag, ", ".join(files)), len(same) == len(files),
          "differ: %s" % sorted(set(files) - set(same)))
    py_json = json.loads(json.dumps(r).replace(dp, dc))
    diff = report_diff(py_json, ref)
    check("%s: the report is the CLI's --json (keys, order, values)" % tag, not diff, "; ".join(diff[:4]))
    check("%s: nothing left behind" % tag, not leftovers(dp) and not leftovers(os.environ["TMPDIR"]))
    return r


def case_against_cli(d):
    a, b = write_inputs(d)
    against_cli(d, "whole file, defaults", [a], "out.h5", dict(seed=3), ["-s", 3])
    against_cli(d, "two inputs, renamed, gzip, index, 8M, chunk rows, threads 1, mixing",
                [a + ":/x,/y", b], "out.h5:/feat,/label",
                dict(seed=11, memory="8M", compression="gzip:3+shuffle", index="/order", chunk_rows=37, threads=1,
                     mixing_window=100),
                ["-s", 11, "-m", "8M", "-c", "gzip:3+shuffle", "--index", "/order", "--chunk-rows", 37, "-j", 1,
                 "--mixing-window", 100])
    against_cli(d, "shards 3, source index, zstd", [a + ":/x", b], "out.h5",
                dict(seed=5, shards=3, source_index="/src", compression="zstd:2", memory=64 << 20),
                ["-s", 5, "--shards", 3, "--source-index", "/src", "-c", "zstd:2", "-m", "64M"],
                files=("out-00000-of-00003.h5", "out-00001-of-00003.h5", "out-00002-of-00003.h5"))
    against_cli(d, "split, restart", [a], "out.h5",
                dict(seed=2 ** 64 - 1, split={"train": 0.75, "val": 0.25}, on_oversize="restart"),
                ["-s", 2 ** 64 - 1, "--split", "train=0.75,val=0.25", "--on-oversize", "restart"],
                files=("out-train.h5", "out-val.h5"))
    against_cli(d, "head", [a + ":/x,/y"], "out.h5", dict(seed=8, head=100), ["-s", 8, "-n", 100])
    r = against_cli(d, "strategy direct, check", [a + ":/x,/y"], "out.h5", dict(seed=8, strategy="direct",
                                                                               check=True),
                    ["-s", 8, "--strategy", "direct", "--check"])
    check("strategy direct: the report says direct and check ok", r["plan"]["strategy"] == "direct" and
          r["check"] == "ok", "%r" % r["plan"]["strategy"])
    # weights (docs/algorithm.md, "Mixtures"): (spec, weight) pairs and a {spec: weight} dict are the CLI's "@W"
    dw = os.path.join(d, "weights")
    os.makedirs(dw)
    h5shuf.shuffle([(a + ":/x,/y", 2.5), (b, 0.25)], os.path.join(dw, "pairs.h5"), seed=4)
    h5shuf.shuffle({a + ":/x,/y": "2.5", b: 1 / 4}, os.path.join(dw, "dict.h5"), seed=4)
    cli("-s", 4, a + ":/x,/y@2.5", b + "@0.25", os.path.join(dw, "cli.h5"))
    check("weights: pairs and a dict write the CLI's @W bytes",
          same_bytes(os.path.join(dw, "pairs.h5"), os.path.join(dw, "cli.h5")) and
          same_bytes(os.path.join(dw, "dict.h5"), os.path.join(dw, "cli.h5")))
    h5shuf.shuffle(["one=" + a + ":/x,/y", "two=" + b], os.path.join(dw, "mix.h5"), seed=4, mix={"one": 0.75, "two": 0.25},
                   rows=300, allow_repeat=True)
    cli("-s", 4, "--mix", "one=0.75,two=0.25", "--rows", 300, "--allow-repeat", "one=" + a + ":/x,/y", "two=" + b,
        os.path.join(dw, "mix-cli.h5"))
    check("mix: a dict of shares, rows and allow_repeat write the CLI's --mix bytes",
          same_bytes(os.path.join(dw, "mix.h5"), os.path.join(dw, "mix-cli.h5")))
    h5shuf.shuffle(["one=" + a + ":/x,/y", "two=" + b], os.path.join(dw, "st.h5"), seed=4, mix={"one": 0.75, "two": 0.25},
                   rows=300, allow_repeat=True, shards=3, stratify=True)
    cli("-s", 4, "--mix", "one=0.75,two=0.25", "--rows", 300, "--allow-repeat", "--shards", 3, "--stratify",
        "one=" + a + ":/x,/y", "two=" + b, os.path.join(dw, "st-cli.h5"))
    check("stratify: shards=3, stratify=True write the CLI's --shards 3 --stratify bytes",
          all(same_bytes(os.path.join(dw, "st-%05d-of-00003.h5" % k), os.path.join(dw, "st-cli-%05d-of-00003.h5" % k))
              for k in range(3)))
    planned = h5shuf.plan(["one=" + a + ":/x,/y", "two=" + b], os.path.join(dw, "p.h5"), seed=4,
                          mix={"one": 0.75, "two": 0.25}, rows=300, allow_repeat=True)
    ref = json.loads(cli("--json", "--plan", "-s", 4, "--mix", "one=0.75,two=0.25", "--rows", 300, "--allow-repeat",
                         "one=" + a + ":/x,/y", "two=" + b, os.path.join(dw, "p.h5"))[0])
    check("mix: the plan's report says what it chose, as the CLI's --json (a line a domain and an input)",
          planned.get("mix") == ref.get("mix") and len(ref.get("mix", [])) == 4, "%r" % planned.get("mix"))
    try:
        h5shuf.shuffle([(a, -1)], os.path.join(dw, "negative.h5"), seed=4)
        check("weights: a negative weight raises InvalidArgumentError", False, "no error")
    except h5shuf.InvalidArgumentError as e:
        check("weights: a negative weight raises InvalidArgumentError", "0 or more" in str(e), str(e))


def case_split_exact(d):
    """split= counts as the CLI does, exactly (issue 50): {"train": 0.9, "val": 0.1} of 200000 rows is
    180000/20000; Fraction and Decimal fractions are passed exactly ("1/3", "0.7") and write the CLI's bytes."""
    import decimal
    import fractions
    big, small = os.path.join(d, "big.h5"), os.path.join(d, "small.h5")
    with h5py.File(big, "w") as f:
        f["y"] = np.arange(200000, dtype="<u4")
    with h5py.File(small, "w") as f:
        f["y"] = np.arange(1000, dtype="<u4")

    def rows(pattern, names):
        out = []
        for n in names:
            with h5py.File(pattern.replace("{split}", n), "r") as f:
                out.append(f["y"].shape[0])
        return out
    h5shuf.shuffle([big], os.path.join(d, "b_{split}.h5"), seed=3, split={"train": 0.9, "val": 0.1})
    got = rows(os.path.join(d, "b_{split}.h5"), ["train", "val"])
    check("split={'train': 0.9, 'val': 0.1} of 200000 rows: 180000/20000", got == [180000, 20000], "%r" % got)
    h5shuf.shuffle([small], os.path.join(d, "s_{split}.h5"), seed=3,
                   split={"train": decimal.Decimal("0.7"), "val": 0.2, "test": "0.1"})
    got = rows(os.path.join(d, "s_{split}.h5"), ["train", "val", "test"])
    check("split= Decimal 0.7, 0.2, '0.1' of 1000 rows: 700/200/100", got == [700, 200, 100], "%r" % got)
    third = fractions.Fraction(1, 3)
    h5shuf.shuffle([small], os.path.join(d, "t_{split}.h5"), seed=3, split={"a": third, "b": third, "c": third})
    cli("-s", 3, "--split", "a=1/3,b=1/3,c=1/3", small, os.path.join(d, "c_{split}.h5"))
    got = rows(os.path.join(d, "t_{split}.h5"), "abc")
    check("split= Fraction(1, 3) three times: 333/333/334, the bytes of the CLI's a=1/3,b=1/3,c=1/3",
          got == [333, 333, 334] and all(same_bytes(os.path.join(d, "t_%s.h5" % n), os.path.join(d, "c_%s.h5" % n))
                                         for n in "abc"), "%r" % got)


def case_plan(d):
    a, b = write_inputs(d)
    out = os.path.join(d, "out.h5")
    r = h5shuf.plan([a, b], out, seed=4, memory="2M", mixing_window=50)
    ref = json.loads(cli("--plan", "--json", "-s", 4, "-m", "2M", "--mixing-window", 50, a, b, out)[0])
    diff = report_diff(r, ref)
    check("plan() is the CLI's --plan --json (keys, order, values)", not diff, "; ".join(diff[:4]))
    check("plan() writes nothing", not os.path.exists(out) and not leftovers(d))


def case_scatter_gather(d):
    a, b = write_inputs(d)
    specs = [a + ":/x,/y", b]
    # One thread: a pile file's content is the same for any thread count, but with several the order in
    # which piles reach the file (hence a few chunk addresses) follows the threads' timing.
    against_cli(d, "scatter", specs, "piles.h5", dict(seed=21, memory="4M", index="/i", threads=1),
                ["-s", 21, "-m", "4M", "--index", "/i", "-j", 1], files=("piles.h5",), fn="scatter")
    dp = os.path.join(d, "scatter", "py")
    piles = os.path.join(dp, "piles.h5")
    r = h5shuf.gather(piles, os.path.join(dp, "gathered.h5"), compression="gzip:1")
    cli("-s", 21, "-m", "4M", "--index", "/i", "-c", "gzip:1", *specs, os.path.join(dp, "oneshot.h5"))
    check("gather() of scatter()'s pile file == the one-shot run's bytes",
          same_bytes(os.path.join(dp, "gathered.h5"), os.path.join(dp, "oneshot.h5")))
    ref = json.loads(cli("gather", "--json", "-c", "gzip:1", piles, os.path.join(dp, "cligather.h5"))[0])
    diff = report_diff(json.loads(json.dumps(r).replace("gathered.h5", "cligather.h5")), ref)
    check("gather()'s report is the CLI's gather --json", not diff, "; ".join(diff[:4]))
    check("scatter + gather: nothing left behind", not leftovers(dp))


def case_verify(d):
    a, b = write_inputs(d)
    out = os.path.join(d, "out.h5")
    h5shuf.shuffle([a + ":/x,/y", b], out, seed=1, index="/order")
    r = h5shuf.verify([a + ":/x,/y", b], out)
    check("verify() of a good output", r["status"] == "ok" and r["output"] == out, "%r" % r)
    with h5py.File(out, "r+") as f:
        x = f["x"][5]
        x[0] += 1
        f["x"][5] = x
    try:
        h5shuf.verify([a + ":/x,/y", b], out)
        check("verify() of a changed row raises MismatchError", False, "no exception")
    except h5shuf.MismatchError as exc:
        _, err = cli("verify", a + ":/x,/y", b, out, rc=1)
        check("verify() of a changed row raises MismatchError with the CLI's message",
              err.strip() == "h5shuf: verify: " + str(exc) and "/x" in str(exc), "%r vs %r" % (str(exc), err))


def case_verify_sets(d):
    """verify() of a set of shards (one file or the list), a head; "checked" says what; a missing shard raises."""
    a, b = write_inputs(d)
    ins = [a + ":/x,/y", b]
    sh, hd = os.path.join(d, "sh.h5"), os.path.join(d, "hd.h5")
    h5shuf.shuffle(ins, sh, seed=6, shards=3)
    h5shuf.shuffle(ins, hd, seed=6, head=50)
    files = [os.path.join(d, "sh-%05d-of-00003.h5" % k) for k in range(3)]
    r = h5shuf.verify(ins, files[1])
    check("verify() of one shard checks the set of 3", r["status"] == "ok" and r["checked"].startswith("3 shards"),
          "%r" % r)
    r = h5shuf.verify(ins, files[::-1])
    check("verify() of the list of the shards", r["status"] == "ok" and r["output"] == files[::-1], "%r" % r)
    r = h5shuf.verify(ins, hd)
    check("verify() of a head of 50", "the first 50 rows" in r["checked"], "%r" % r)
    os.rename(files[2], files[2] + ".x")
    try:
        h5shuf.verify(ins, files[0])
        check("verify() of a set with a shard missing raises MismatchError", False, "no exception")
    except h5shuf.MismatchError as exc:
        _, err = cli("verify", *ins, files[0], rc=1)
        check("verify() of a set with a shard missing raises MismatchError with the CLI's message",
              "shard 2 of 3 is missing" in str(exc) and err.strip() == "h5shuf: verify: " + str(exc), str(exc))
    os.rename(files[2] + ".x", files[2])


def expect_error(tag, cls, fn, cli_args=None, needle=None, where=None):
    """fn() raises cls (an h5shuf.Error); its message is the CLI's line for cli_args, naming needle."""
    try:
        fn()
        check("%s raises %s" % (tag, cls.__name__), False, "no exception")
        return None
    except h5shuf.Error as exc:
        msg = str(exc)
        ok = type(exc) is cls and exc.status == cls.status and (needle is None or needle in msg)
        check("%s raises %s naming %s" % (tag, cls.__name__, needle), ok, "%s: %s" % (type(exc).__name__, msg))
        if cli_args is not None:
            _, err = cli(*cli_args, rc=None)
            line = err.strip().splitlines()[0] if err.strip() else ""
            cli_line = "h5shuf: " + msg.replace("pass force=True", "use --force")  # the keyword for the option
            check("%s: the message is the CLI's" % tag, line == cli_line, "%r vs %r" % (msg, line))
        if where is not None:
            check("%s: nothing left behind" % tag, not leftovers(where) and not leftovers(os.environ["TMPDIR"]))
        return exc


def case_errors(d):
    a, _ = write_inputs(d)
    out = os.path.join(d, "out.h5")
    missing = os.path.join(d, "missing.h5")
    exc = expect_error("a missing input", h5shuf.NotFoundError, lambda: h5shuf.shuffle([missing + ":/x"], out),
                       [missing + ":/x", out], "missing.h5", d)
    check("NotFoundError is an h5shuf.Error and a FileNotFoundError",
          isinstance(exc, h5shuf.Error) and isinstance(exc, FileNotFoundError) and not os.path.exists(out))
    expect_error("a missing dataset", h5shuf.NotFoundError, lambda: h5shuf.shuffle([a + ":/nothing"], out),
                 [a + ":/nothing", out], "/nothing", d)
    text = os.path.join(d, "text.h5")
    with open(text, "w") as f:
        f.write("not hdf5\n")
    expect_error("not an HDF5 file", h5shuf.NotHDF5Error, lambda: h5shuf.shuffle([text], out), [text, out],
                 "text.h5", d)
    expect_error("a malformed spec", h5shuf.InvalidArgumentError, lambda: h5shuf.shuffle([a + ":/x,,/y"], out),
                 [a + ":/x,,/y", out], "dataset path 2 is empty", d)
    expect_error("a bad compression", h5shuf.InvalidArgumentError,
                 lambda: h5shuf.shuffle([a], out, compression="lzma"), None, "lzma", d)
    expect_error("a memory size that is not one", h5shuf.InvalidArgumentError,
                 lambda: h5shuf.shuffle([a], out, memory="12Q"), None, "12Q", d)
    expect_error("a budget too small", h5shuf.BudgetError, lambda: h5shuf.shuffle([a], out, memory="1K"),
                 ["-m", "1K", a, out], None, d)
    h5shuf.shuffle([a], out, seed=1)
    exc = expect_error("an existing output", h5shuf.OutputExistsError, lambda: h5shuf.shuffle([a], out, seed=2),
                       [a, out], "out.h5", d)
    check("an existing output: the message says force=True, not the tool's --force",
          exc is not None and "pass force=True to replace it" in str(exc) and "--force" not in str(exc), str(exc))
    check("an existing output: force=True replaces it",
          h5shuf.shuffle([a], out, seed=2, force=True)["seed"] == 2)
    expect_error("the output is an input", h5shuf.SameFileError, lambda: h5shuf.shuffle([a], a, force=True),
                 ["-f", a, a], None, d)
    try:
        h5shuf.shuffle([a], out, seeed=3)
        check("an unknown option raises TypeError", False)
    except TypeError as exc:
        check("an unknown option raises TypeError naming it", "seeed" in str(exc), str(exc))


def big_input(d):
    """About 48 MB of rows: several slabs and bands at memory='16M', so each phase reports many times."""
    p = os.path.join(d, "big.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.random.default_rng(3).integers(0, 255, (12000, 4096), dtype=np.uint8),
                         chunks=(64, 4096))
    return p


def case_cancel(d):
    src = big_input(d)
    out = os.path.join(d, "out.h5")
    seen = []

    def stop_at(phase, nth, exc):
        def progress(name, done, total):
            seen.append(name)
            if name == phase and seen.count(phase) == nth:
                raise exc
        return progress

    for phase, exc in (("gather", KeyboardInterrupt()), ("scatter", ValueError("stop"))):
        seen.clear()
        try:
            h5shuf.shuffle([src], out, seed=1, memory="16M", progress=stop_at(phase, 2, exc))
            check("%s raised by progress in %s cancels" % (type(exc).__name__, phase), False, "no exception")
        except BaseException as got:  # noqa: B902 - KeyboardInterrupt is the point
            check("%s raised by progress at the 2nd report of %s comes out of shuffle()" % (type(exc).__name__, phase),
                  got is exc and seen.count(phase) == 2, "%r, reports %s" % (got, seen[-3:]))
        check("... and the run was cancelled there: no output, no temporary or scratch file",
              not os.path.exists(out) and not leftovers(d) and not leftovers(os.environ["TMPDIR"]),
              "%s %s" % (leftovers(d), leftovers(os.environ["TMPDIR"])))

    # Ctrl-C: SIGINT sent to this process in the middle of pass 1.
    seen.clear()
    before = signal.getsignal(signal.SIGINT)

    def ctrl_c(name, done, total):
        seen.append(name)
        if len(seen) == 2:
            os.kill(os.getpid(), signal.SIGINT)
    try:
        h5shuf.shuffle([src], out, seed=1, memory="16M", progress=ctrl_c)
        check("SIGINT during a run raises KeyboardInterrupt", False, "no exception")
    except KeyboardInterrupt:
        check("SIGINT during a run raises KeyboardInterrupt, after at most one more report", len(seen) <= 3,
              "reports %s" % seen)
    check("SIGINT: no output, no temporary or scratch file",
          not os.path.exists(out) and not leftovers(d) and not leftovers(os.environ["TMPDIR"]))
    check("SIGINT: the previous handler is back", signal.getsignal(signal.SIGINT) is before)
    r = h5shuf.shuffle([src], out, seed=1, memory="16M")
    cli("-s", 1, "-m", "16M", src, os.path.join(d, "cli.h5"))
    check("a run after the cancels writes the CLI's bytes", r["status"] == "ok" and
          same_bytes(out, os.path.join(d, "cli.h5")))


SIGNAL_CHILD = """
import os, resource, signal, sys
import h5shuf
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # (SIGQUIT's default action dumps core)
sig, ignored, src, out = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3], sys.argv[4]
signal.signal(sig, signal.SIG_IGN if ignored else signal.SIG_DFL)  # (Python ignores SIGPIPE at start)
reports = []
def progress(name, done, total):
    reports.append(name)
    if len(reports) == 2:
        os.kill(os.getpid(), sig)
h5shuf.shuffle([src], out, seed=1, memory="16M", progress=progress)
print("finished after %d reports" % len(reports))
"""


def case_signals(d):
    """The signals the tool handles like SIGINT, sent to a Python process in the middle of pass 1."""
    src = big_input(d)
    out = os.path.join(d, "sig.h5")
    env = dict(os.environ, PYTHONPATH=A.pydir)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
        for ignored in (0, 1):
            p = subprocess.run([sys.executable, "-c", SIGNAL_CHILD, str(int(sig)), str(ignored), src, out], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d)
            name = "%s%s" % (signal.Signals(sig).name, " ignored" if ignored else "")
            left = leftovers(d) + leftovers(os.environ["TMPDIR"])
            if ignored:
                check("%s in the middle of a run: it finishes, nothing but its output left" % name,
                      p.returncode == 0 and os.path.exists(out) and not left,
                      "exit %d, left %s: %s" % (p.returncode, left, p.stderr.decode()[-300:]))
            else:
                check("%s in the middle of a run: the process ends of it, no output, nothing left" % name,
                      p.returncode == -sig and not os.path.exists(out) and not left,
                      "exit %d, left %s: %s" % (p.returncode, left, p.stderr.decode()[-300:]))
            if os.path.exists(out):
                os.remove(out)


def case_resume(d):
    """resume=True: a run cancelled with it keeps its state, the next call continues it to the bytes of an
    uninterrupted run (the CLI's with the same --checkpoint), and nothing is left."""
    src = big_input(d)
    out = os.path.join(d, "res.h5")
    seen = []

    def stop(name, done, total):
        seen.append(name)
        if name == "gather" and seen.count("gather") == 3:
            raise KeyboardInterrupt()
    try:
        h5shuf.shuffle([src], out, seed=4, memory="16M", resume=True, checkpoint="4M", progress=stop)
        check("resume: the cancel comes out of shuffle()", False, "no exception")
    except KeyboardInterrupt:
        pass
    state = [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("h5shuf-resume-res.h5-")]
    check("resume: a run cancelled with resume=True keeps its state", len(state) == 1 and not os.path.exists(out),
          "%s" % os.listdir(os.environ["TMPDIR"]))
    expect_error("resume: a call without resume=True refuses the state", h5shuf.OutputExistsError,
                 lambda: h5shuf.shuffle([src], out, seed=4, memory="16M", checkpoint="4M"),
                 needle="add --resume to continue")
    r = h5shuf.shuffle([src], out, seed=4, memory="32M", threads=1, resume=True, checkpoint="4M")
    cli("-s", 4, "-m", "16M", "--checkpoint", "4M", src, os.path.join(d, "res-cli.h5"))
    check("resume: the resumed call writes the uninterrupted CLI run's bytes (other memory and threads)",
          r["status"] == "ok" and same_bytes(out, os.path.join(d, "res-cli.h5")))
    check("resume: nothing left behind", not leftovers(d) and not leftovers(os.environ["TMPDIR"]) and
          not [n for n in os.listdir(os.environ["TMPDIR"]) if n.startswith("h5shuf-resume-")],
          "%s" % os.listdir(os.environ["TMPDIR"]))


def case_names(d):
    """File names as bytes that are not UTF-8: the tool's --json and the package's report agree."""
    src, _ = write_inputs(d)
    db = os.fsencode(d)
    names = {"stray bytes": b"in-\xff\xfe.h5", "a cut sequence": b"in-\xe2\x82.h5", "a surrogate's bytes":
             b"in-\xed\xa0\x80.h5", "an overlong NUL": b"in-\xc0\x80.h5", "valid UTF-8": "in-\u00e9\u4e2d.h5".encode()}
    for what, name in names.items():
        inp = os.path.join(db, name)
        with open(src, "rb") as f, open(inp, "wb") as g:
            g.write(f.read())
        out = os.path.join(db, b"out-" + name)
        p = subprocess.run([os.fsencode(A.h5shuf), b"--json", b"-s", b"3", inp, out], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        try:
            text = p.stdout.decode("utf-8")  # (strict: the report is valid UTF-8)
            r = json.loads(text)
        except ValueError as exc:
            check("%s: the tool's --json is valid UTF-8 and JSON" % what, False, "%s: %r" % (exc, p.stdout[:300]))
            continue
        check("%s: the tool's --json parses, its names are os.fsdecode's (stray bytes as \\udcXX)" % what,
              p.returncode == 0 and r["inputs"] == [os.fsdecode(inp)] and r["output"] == os.fsdecode(out) and
              r["outputs"][0]["file"] == os.fsdecode(out) and os.fsencode(r["output"]) == out and
              ("\\udc" in text) == (what != "valid UTF-8"), "%r" % text[:300])
        out_py = os.path.join(db, b"py-" + name)
        rp = h5shuf.shuffle([inp], out_py, seed=3)
        ok = rp["inputs"] == [os.fsdecode(inp)] and rp["output"] == os.fsdecode(out_py) and \
            rp["outputs"][0]["file"] == os.fsdecode(out_py) and json.loads(json.dumps(rp)) == rp and same_bytes(out, out_py)
        check("%s: the package takes the bytes, writes the CLI's bytes; its report and json round trip agree" % what,
              ok, "%r" % {k: rp[k] for k in ("inputs", "output")})
        rs = h5shuf.shuffle([os.fsdecode(inp)], os.fsdecode(out_py) + "2", seed=3)
        check("%s: ... and the same names as str (os.fsdecode)" % what, rs["output"] == os.fsdecode(out_py) + "2")
    missing = os.path.join(db, b"no-\xff.h5")
    p = subprocess.run([os.fsencode(A.h5shuf), b"--json", missing, os.path.join(db, b"o.h5")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    r = json.loads(p.stdout.decode("utf-8"))
    check("a failed run's --json error names the file as os.fsdecode does", os.fsdecode(missing) in r.get("error", ""),
          "%r" % r)
    try:
        h5shuf.shuffle([missing], os.path.join(db, b"o.h5"))
        check("the package: a missing input raises NotFoundError", False, "no exception")
    except h5shuf.NotFoundError as exc:
        check("the package's error names the file as os.fsdecode does (the CLI's message)", str(exc) == r["error"],
              "%r vs %r" % (str(exc), r["error"]))


def case_progress(d):
    a, _ = write_inputs(d)
    modes = []
    try:
        import tqdm  # noqa: F401
        modes.append("tqdm")
    except ImportError:
        print("SKIP progress=True with tqdm: python3-tqdm is not installed (the plain line is tested)", flush=True)
    modes.append("plain")
    for mode in modes:
        saved_err, saved_tqdm = sys.stderr, sys.modules.get("tqdm")
        sys.stderr = io.StringIO()
        if mode == "plain":
            sys.modules["tqdm"] = None  # `from tqdm import tqdm` then raises ImportError
        try:
            h5shuf.shuffle([a], os.path.join(d, "out-%s.h5" % mode), seed=1, progress=True)
            text = sys.stderr.getvalue()
        finally:
            sys.stderr = saved_err
            if mode == "plain":
                if saved_tqdm is None:
                    del sys.modules["tqdm"]
                else:
                    sys.modules["tqdm"] = saved_tqdm
        if mode == "tqdm":
            ok = re.search(r"scatter: 100%.*\|", text) and re.search(r"gather: 100%.*\|", text)
        else:
            ok = re.search(r"^h5shuf: scatter: 900 rows, ", text, re.M) and \
                re.search(r"^h5shuf: gather: 900 rows, ", text, re.M)
        check("progress=True, %s: a bar or line per pass on stderr" % mode, bool(ok), repr(text[-300:]))


def case_library(d):
    code = "import h5shuf\ntry:\n    h5shuf.shuffle(['a.h5'], 'b.h5')\nexcept h5shuf.LibraryNotFound as e:\n" \
           "    print('NOTFOUND', e)\n"
    env = dict(os.environ, H5SHUF_LIBRARY=os.path.join(d, "nolib.so"), PYTHONPATH=A.pydir)
    out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=d).stdout.decode()
    check("a wrong $H5SHUF_LIBRARY raises LibraryNotFound naming it", "NOTFOUND" in out and "nolib.so" in out, out)
    check("$H5SHUF_LIBRARY is the library loaded", os.path.samefile(h5shuf.library_path(), A.library))
    env = dict(os.environ)
    env.pop("H5SHUF_LIBRARY")
    code = "from h5shuf import _lib\nprint(_lib.candidates()[-1][1])\n"
    env["PYTHONPATH"] = A.pydir
    last = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, check=True).stdout.decode()
    want = os.path.join(os.path.dirname(A.pydir), "build", "libh5shuf.so")
    check("without it, the last place tried is the source tree's build/libh5shuf.so",
          os.path.normpath(last.strip()) == os.path.normpath(want), "%r vs %r" % (last, want))


if __name__ == "__main__":
    sys.exit(python_env.main([
        ("layout", case_layout), ("header", case_header), ("keys", case_keys), ("acceptance", case_acceptance),
        ("against the CLI", case_against_cli), ("split counted exactly", case_split_exact), ("plan", case_plan),
        ("scatter and gather", case_scatter_gather),
        ("verify", case_verify), ("verify of sets", case_verify_sets), ("errors", case_errors), ("cancel", case_cancel),
        ("signals", case_signals), ("resume", case_resume),
        ("names", case_names), ("progress", case_progress),
        ("library", case_library)]))
