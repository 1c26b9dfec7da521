#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""weights_h5py: inputs with weights (FILE:/paths@W), checked with h5py + numpy against an oracle.

usage: /usr/bin/python3 tests/weights_h5py.py PATH/TO/h5shuf

The oracle, written from docs/algorithm.md ("Mixtures") and independent of the library's code: an input of
n rows and weight W = q + num/den is q copies of its rows and a sample of e = floor((2 num n + den) /
(2 den)) of them (round half up), drawn by selection sampling (Knuth's Algorithm S) from the deviates of
the pure-Python Philox4x64-10 of oracle_h5py.py (word t % 4 of the block with counter (t // 4, input, 1,
0), key (seed, 0); row t taken when (U * (n - t)) >> 64 < e - m).  Rows are numbered over the copies in
order (each copy, then the sample in row order); the output is every row sorted by (K(seed, i), i), K from
numpy's Philox as in oracle_h5py.py.  Checked:
  - each row's copies: floor(W) or floor(W) + 1, the extra ones exactly e (counted from the output);
  - the output equals the oracle's rows, on the one pass, two passes, direct and with 1 or 2 threads,
    every output the same bytes (md5 over the file), --index and --source-index as the oracle says;
  - h5shuf verify and --check pass; a head, shards, a scatter/gather with weights give the oracle's rows;
  - variable-length rows (h5py vlen int32) sampled, and the whole-file form (FILE@W);
  - copies land independently: the positions of a row's two copies (W = 2) binned 4 x 4 over the
    output, chi-square against the exact expectation for two distinct uniform positions, at 0.001;
  - --mix over three domains of token sequences: each domain exactly its share of the rows (largest
    remainders, computed here), spread over its files by their rows, shards' concatenation; --plan prints
    the weights; too few rows refused unless --allow-repeat;
  - the mixing of every window (--json) against the windows counted from the output's index and source
    index;
  - killed (SIGKILL) and resumed: the uninterrupted run's bytes;
  - @0 takes no row and keeps the inputs' numbers; bad weights refused with one line: 19 digits after the
    point, 65536 copies; "x@2.h5" is a file.
Each check prints PASS or FAIL; the last line is "N passed, M failed"; exit 0 only when nothing failed.
"""

import hashlib
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_h5py as O  # noqa: E402  (Philox, numpy keys, check/run helpers)

check = O.check
M64 = (1 << 64) - 1


def parse_weight(w):
    """'2.5' -> (q, num, den)."""
    if "." in w:
        a, b = w.split(".")
        return int(a or "0"), int(b or "0"), 10 ** len(b)
    return int(w), 0, 1


def sample_rows(seed, stream, n, e):
    """Algorithm S over Philox deviates, as docs/algorithm.md defines the sample: the rows taken, sorted."""
    taken, m, u = [], 0, None
    for t in range(n):
        if m == e:
            break
        if t % 4 == 0:
            u = O.philox4x64_10([t // 4, stream, 1, 0], [seed, 0])
        if (u[t % 4] * (n - t)) >> 64 < e - m:
            taken.append(t)
            m += 1
    return taken


def oracle(seed, inputs):
    """inputs: [(rows array, weight text)].  Returns (order of global ids, rows of all ids, input of
    each id, copy of each id, input row of each id)."""
    rows, src, copy, irow = [], [], [], []
    for k, (data, w) in enumerate(inputs):
        n = len(data)
        q, num, den = parse_weight(w)
        for c in range(q):
            rows.append(data)
            src += [k] * n
            copy += [c] * n
            irow += list(range(n))
        if num:
            e = (2 * num * n + den) // (2 * den)
            t = sample_rows(seed, k, n, e)
            rows.append(data[t] if len(t) else data[:0])
            src += [k] * len(t)
            copy += [q] * len(t)
            irow += t
    allrows = np.concatenate(rows)
    N = len(allrows)
    keys = O.keys_np(seed, 0, N)
    order = np.lexsort((np.arange(N, dtype=np.uint64), keys))
    return order, allrows, np.array(src), np.array(copy), np.array(irow)


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def make(tmp, name, n, base, chunk=64, vlen=False):
    p = os.path.join(tmp, name)
    with h5py.File(p, "w") as h:
        ids = np.arange(base, base + n, dtype="<i8")
        h.create_dataset("x", data=ids, chunks=(chunk,), compression="gzip")
        h.create_dataset("y", data=np.stack([ids * 2, ids * 3], axis=1).astype("<f4"), chunks=(chunk, 2))
        if vlen:
            v = h.create_dataset("v", (n,), dtype=h5py.vlen_dtype(np.dtype("<i4")))
            for i in range(n):
                v[i] = np.arange(int(ids[i]) % 7 + 1, dtype="<i4") + int(ids[i])
    return p


def case_counts_and_paths(tmp):
    seed = 11
    a = make(tmp, "a.h5", 3000, 0)
    b = make(tmp, "b.h5", 1000, 10000)
    c = make(tmp, "c.h5", 501, 20000)
    weights = ["2.5", "0.25", "1.333"]
    ins = ["%s:/x,/y@%s" % (p, w) for p, w in zip((a, b, c), weights)]
    datas = []
    for p in (a, b, c):
        with h5py.File(p, "r") as h:
            datas.append(h["x"][()])
    order, allx, src, copy, irow = oracle(seed, list(zip(datas, weights)))
    want = allx[order]
    outs = {}
    runs = {"one pass": [], "two passes -m 256K": ["-m", "256K", "--strategy", "two-pass"],
            "two passes -j 1": ["-m", "256K", "--strategy", "two-pass", "-j", "1"],
            "direct": ["--strategy", "direct"], "one pass --check": ["--check"]}
    for name, extra in runs.items():
        out = os.path.join(tmp, "o-%d.h5" % len(outs))
        O.shuf("-q", "-s", seed, "--index", "/idx", "--source-index", "/src", *extra, *ins, out)
        outs[name] = out
        with h5py.File(out, "r") as h:
            x, y = h["x"][()], h["y"][()]
            ok, why = O.same_array(x, want)
            check("weights %s: /x is the oracle's rows (%d)" % (name, len(want)), ok, why)
            check("weights %s: /y aligned with /x" % name,
                  np.array_equal(y, np.stack([x * 2, x * 3], axis=1).astype("<f4")))
            check("weights %s: --index is the oracle's order" % name, np.array_equal(h["idx"][()], order))
            s = h["src"][()]
            check("weights %s: --source-index is each row's (input, copy, input row)" % name,
                  s.dtype.names == ("input", "copy", "row") and np.array_equal(s["input"], src[order]) and
                  np.array_equal(s["copy"], copy[order]) and np.array_equal(s["row"], irow[order]), str(s.dtype))
    sums = {md5(p) for p in outs.values()}
    check("weights: every strategy, budget and thread count gives the same bytes", len(sums) == 1, str(outs))
    # exact copy counts, from the output alone
    x = want
    for k, (d, w) in enumerate(zip(datas, weights)):
        q, num, den = parse_weight(w)
        e = (2 * num * len(d) + den) // (2 * den)
        counts = np.zeros(len(d), dtype=np.int64)
        np.add.at(counts, x[(x >= d[0]) & (x <= d[-1])] - d[0], 1)
        ok = set(np.unique(counts)) <= {q, q + 1} and int((counts - q).sum()) == e
        check("weights: input %d @%s: every row %d or %d times, %d extra (round(%s x %d))"
              % (k, w, q, q + 1, e, w, len(d)), ok, "counts %s" % np.bincount(counts))
    O.run([O.H5SHUF, "verify", *ins, outs["one pass"]])
    check("weights: h5shuf verify passes (order checked through the index)", True)
    bad = os.path.join(tmp, "bad.h5")
    O.shuf("-q", "-s", seed + 1, *ins, bad)
    p = subprocess.run([O.H5SHUF, "verify", ins[0], ins[1], ins[2].replace("@1.333", "@1.5"), bad],
                       capture_output=True)
    check("weights: verify against other weights fails", p.returncode != 0, p.stderr.decode()[-200:])
    # a head, shards, scatter/gather
    head = os.path.join(tmp, "head.h5")
    O.shuf("-q", "-s", seed, "-n", 777, *ins, head)
    with h5py.File(head, "r") as h:
        check("weights: -n 777 is the first 777 rows", np.array_equal(h["x"][()], want[:777]))
    O.shuf("-q", "-s", seed, "--shards", 3, *ins, os.path.join(tmp, "sh.h5"))
    parts = []
    for s in range(3):
        with h5py.File(os.path.join(tmp, "sh-%05d-of-00003.h5" % s), "r") as h:
            parts.append(h["x"][()])
    check("weights: --shards 3 concatenated is the oracle's rows", np.array_equal(np.concatenate(parts), want))
    piles = os.path.join(tmp, "piles.h5")
    O.shuf("scatter", "-q", "-s", seed, "-m", "256K", *ins, piles)
    lazy = os.path.join(tmp, "lazy.h5")
    O.shuf("gather", "-q", piles, lazy)
    with h5py.File(lazy, "r") as h:
        check("weights: scatter then gather is the oracle's rows", np.array_equal(h["x"][()], want))
        check("weights: provenance keeps the weights",
              h.attrs["h5shuf_inputs"].splitlines()[1].endswith("@0.25"), h.attrs["h5shuf_inputs"])


def case_vlen_and_whole_file(tmp):
    seed = 5
    a = make(tmp, "va.h5", 700, 0, vlen=True)
    b = make(tmp, "vb.h5", 300, 1000, vlen=True)
    ins = ["%s@0.5" % a, "%s@1.5" % b]  # the whole-file form: /x, /y and /v found
    with h5py.File(a, "r") as h:
        da = h["x"][()]
    with h5py.File(b, "r") as h:
        db = h["x"][()]
    order, allx, _, _, _ = oracle(seed, [(da, "0.5"), (db, "1.5")])
    want = allx[order]
    sums = set()
    for k, extra in enumerate(([], ["-m", "256K", "--strategy", "two-pass"], ["--strategy", "direct"])):
        out = os.path.join(tmp, "vo-%d.h5" % k)
        O.shuf("-q", "-s", seed, *extra, *ins, out)
        with h5py.File(out, "r") as h:
            x, v = h["x"][()], h["v"]
            ok = np.array_equal(x, want) and all(
                np.array_equal(v[i], np.arange(int(x[i]) % 7 + 1, dtype="<i4") + int(x[i])) for i in range(len(x)))
            check("weights, vlen rows, whole file %s: rows and vlen rows are the oracle's" % (extra or "one pass"), ok)
        sums.add(md5(out))
    check("weights, vlen rows: one set of bytes for every strategy", len(sums) == 1)


def case_independent_copies(tmp):
    """Where a row's two copies land: 4 x 4 bins of (position of copy 0, of copy 1) over 4 seeds of 2000
    rows; under independence (two distinct uniform positions of N = 4000) a cell on the diagonal has
    probability b (b - 1) / (N (N - 1)), another b^2 / (N (N - 1)), b = N / 4."""
    a = os.path.join(tmp, "ind.h5")
    n = 2000
    with h5py.File(a, "w") as h:
        h["x"] = np.arange(n, dtype="<i8")
    N, bins = 2 * n, 4
    b = N // bins
    cells = np.zeros((bins, bins))
    for seed in (1, 2, 3, 4):
        out = os.path.join(tmp, "ind-o%d.h5" % seed)
        O.shuf("-q", "-s", seed, "--index", "/idx", "%s:/x@2" % a, out)
        with h5py.File(out, "r") as h:
            idx = h["idx"][()]
        pos = np.empty(N, dtype=np.int64)
        pos[idx] = np.arange(N)
        p0, p1 = pos[:n], pos[n:]  # copy 0 of row r is id r, copy 1 is id n + r
        np.add.at(cells, (p0 // b, p1 // b), 1)
    total = cells.sum()
    exp = np.full((bins, bins), total * b * b / (N * (N - 1)))
    np.fill_diagonal(exp, total * b * (b - 1) / (N * (N - 1)))
    exp *= total / exp.sum()
    chi2 = float(((cells - exp) ** 2 / exp).sum())
    df = bins * bins - 1
    # P(X >= chi2), df odd: 1 - P(df/2, chi2/2) by the series of the regularized lower gamma
    x, s = chi2 / 2, df / 2
    term = summ = 1 / s
    k = 1
    while term > 1e-15 * summ:
        term *= x / (s + k)
        summ += term
        k += 1
    p = 1 - math.exp(-x + s * math.log(x) - math.lgamma(s)) * summ
    check("weights @2: copies of a row land independently (chi-square %.1f, df %d, p %.3f > 0.001)" % (chi2, df, p),
          p > 0.001)


def case_resume(tmp):
    """Killed in the sampled copy's pass 1 (or later) and resumed: the uninterrupted run's bytes."""
    a = os.path.join(tmp, "big.h5")
    with h5py.File(a, "w") as h:
        h.create_dataset("x", data=np.arange(1 << 20, dtype="<i8"), chunks=(1 << 14,), compression="gzip")
    ref, out = os.path.join(tmp, "res-ref.h5"), os.path.join(tmp, "res.h5")
    args = ["-q", "-s", 3, "-m", "5M", "-j", 1, "--checkpoint", "1M", a + ":/x@1.5"]
    O.shuf(*args, ref)
    p = subprocess.Popen([O.H5SHUF] + [str(x) for x in args] + [out])
    try:
        p.wait(timeout=0.25)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if not os.path.exists(out):
        O.shuf(*args, "--resume", out)
    check("weights: killed (exit %s) and resumed, the uninterrupted run's bytes" % p.returncode, md5(out) == md5(ref))


def make_domains(tmp, doms, vlen=True):
    """Files NAME0.h5, NAME1.h5, ... of each domain {NAME: [rows, ...]}: /id (ids unique over all files) and
    /tok, token sequences of id % 5 + 1 copies of the id (h5py vlen int32), or /x (id, 3 id) as float64.
    Returns the inputs "NAME=FILE", {file: (first id, rows)} and the domain of every id."""
    ins, files, dom_of = [], {}, {}
    base = 0
    for d, sizes in doms.items():
        for k, n in enumerate(sizes):
            p = os.path.join(tmp, "%s%d.h5" % (d, k))
            with h5py.File(p, "w") as h:
                ids = np.arange(base, base + n, dtype="<i8")
                h.create_dataset("id", data=ids, chunks=(min(n, 4096),))
                if vlen:
                    t = h.create_dataset("tok", (n,), dtype=h5py.vlen_dtype(np.dtype("<i4")))
                    t[...] = np.array([np.full(int(i) % 5 + 1, int(i), dtype="<i4") for i in ids], dtype=object)
                else:
                    h.create_dataset("x", data=np.stack([ids, ids * 3], axis=1).astype("<f8"), chunks=(min(n, 4096), 2))
            files[p] = (base, n)
            dom_of.update({i: d for i in range(base, base + n)})
            ins.append("%s=%s" % (d, p))
            base += n
    return ins, files, dom_of


def largest_remainder(total, weights):
    """Hamilton's apportionment: floor shares, then one more to the largest remainders (ties: earlier)."""
    s = sum(weights)
    base = [total * w // s for w in weights]
    rem = [total * w % s for w in weights]
    for j in sorted(range(len(weights)), key=lambda j: (-rem[j], j))[:total - sum(base)]:
        base[j] += 1
    return base


def case_mix(tmp):
    """--mix over three domains of token sequences (vlen int32), two or three files each."""
    doms = {"web": [3000, 1700, 900], "code": [800, 1300], "books": [450, 260]}
    ins, files, dom_of = make_domains(tmp, doms)
    base = sum(n for _, n in files.values())
    share = {"web": 7, "code": 2, "books": 1}  # 0.7, 0.2, 0.1
    have = {d: sum(s) for d, s in doms.items()}
    # the default rows: the most the shares allow without a repeat
    rows = min(have[d] * 10 // share[d] for d in doms)
    while any(t > have[d] for t, d in zip(largest_remainder(rows, [share[d] for d in doms]), doms)):
        rows -= 1
    out = os.path.join(tmp, "mix.h5")
    mixarg = "web=0.7,code=0.2,books=0.1"
    plan, err = O.run([O.H5SHUF, "--plan", "-s", 3, "--mix", mixarg] + ins + [out])
    O.shuf("-q", "-s", 3, "--mix", mixarg, "--shards", 4, *ins, out)
    ids = []
    for s in range(4):
        with h5py.File(os.path.join(tmp, "mix-%05d-of-00004.h5" % s), "r") as h:
            x = h["id"][()]
            t = h["tok"]
            ok = all(np.array_equal(t[i], np.full(int(x[i]) % 5 + 1, int(x[i]), dtype="<i4")) for i in range(len(x)))
            check("--mix: shard %d: token sequences aligned with their ids" % s, ok)
            ids.append(x)
    ids = np.concatenate(ids)
    targets = largest_remainder(rows, [share[d] for d in doms])
    got = {d: sum(1 for i in ids.tolist() if dom_of[i] == d) for d in doms}
    check("--mix (default rows %d): each domain exactly its largest-remainder share %s" % (rows, targets),
          len(ids) == rows and [got[d] for d in doms] == targets, "%s" % got)
    for d, t in zip(doms, targets):  # the domain's rows over its files, by their rows
        per = largest_remainder(t, doms[d])
        fs = [p for p in files if os.path.basename(p).startswith(d)]
        cnt = [int(((ids >= files[p][0]) & (ids < files[p][0] + files[p][1])).sum()) for p in fs]
        check("--mix: %s's %d rows over its files by their rows: %s" % (d, t, per), cnt == per, str(cnt))
    text = err + plan
    check("--plan prints each domain's rows and each input's weight",
          "mix: web: 0.700000 of %d rows = %d rows" % (rows, targets[0]) in text and "weight" in text, text[-600:])
    p = subprocess.run([O.H5SHUF, "-q", "-s", "3", "--mix", mixarg, "--rows", str(2 * rows)] + ins + [out + "2"],
                       capture_output=True)
    e = p.stderr.decode().splitlines()
    check("--mix --rows past a domain's rows: refused in one line naming it", p.returncode != 0 and e and
          "needs" in e[0] and "--allow-repeat" in e[0], e)
    O.shuf("-q", "-s", 3, "--mix", mixarg, "--rows", 2 * rows, "--allow-repeat", *ins, out + "3")
    with h5py.File(out + "3", "r") as h:
        x = h["id"][()]
        got = [sum(1 for i in x.tolist() if dom_of[i] == d) for d in doms]
        check("--mix --allow-repeat --rows %d: exact shares %s" % (2 * rows, got),
              got == largest_remainder(2 * rows, [share[d] for d in doms]))
        c = np.bincount(x - 0, minlength=base)
        check("--mix --allow-repeat: a repeated domain's rows each 1 or 2 times (books: 2 or 3)",
              set(c[[i for i in range(base) if dom_of[i] == "code"]].tolist()) <= {1, 2})


def case_windows(tmp):
    """The mixing of every window (--json's mixing_windows) against a count from the output itself: its
    index gives each row's key, K(seed, i), and so its window floor(key K / 2^64); its source index the
    input; chi-square per window with each input's weighted share."""
    a = make(tmp, "wa.h5", 3000, 0)
    b = make(tmp, "wb.h5", 1000, 10000)
    out = os.path.join(tmp, "win.h5")
    text, _ = O.run([O.H5SHUF, "--json", "-s", 21, "--mixing-window", 250, "--index", "/idx", "--source-index", "/src",
                     a + ":/x@1.5", b + ":/x@0.75", out])
    import json
    rep = json.loads(text)["mixing_windows"]
    with h5py.File(out, "r") as h:
        idx, src = h["idx"][()], h["src"][()]["input"]
    n = len(idx)
    k = -(-n // 250)
    keys = O.keys_np(21, 0, n)[idx]
    win = np.array([(int(x) * k) >> 64 for x in keys])
    share = np.array([4500, 750]) / n
    chi, worst, below, rows = 0.0, (-1, 0), 0, []
    for j in range(k):
        c = np.bincount(src[win == j], minlength=2)
        m = c.sum()
        rows.append(m)
        x = float(((c - m * share) ** 2 / (m * share)).sum()) if m else 0.0
        chi += x
        p = math.erfc(math.sqrt(x / 2)) if m else 1.0  # df 1: P(X >= x) = erfc(sqrt(x / 2))
        below += p < 0.001
        if x > worst[0]:
            worst = (x, int(np.argmax(win == j)))
    ok = (rep["windows"] == k and rep["rows_min"] == min(rows) and rep["rows_max"] == max(rows) and
          abs(rep["chi2"] - chi) < 1e-5 * max(chi, 1) and rep["df"] == sum(1 for m in rows if m) and
          rep["below_001"] == below and rep["worst_first_row"] == worst[1] and abs(rep["worst_chi2"] - worst[0]) < 1e-5 * max(worst[0], 1))
    check("mixing of every window: %d windows, chi-square %.1f (df %d, p %.3g), as counted from the output"
          % (k, chi, rep["df"], rep["p_value"]), ok, "%s vs chi %s below %s worst %s" % (rep, chi, below, worst))
    check("mixing of every window: a uniform shuffle is not flagged (p > 0.001 over all windows)",
          rep["p_value"] > 0.001, str(rep))


def case_refused(tmp):
    a = os.path.join(tmp, "r.h5")
    with h5py.File(a, "w") as h:
        h["x"] = np.arange(10, dtype="<i8")
    out = os.path.join(tmp, "ro.h5")
    for w, why in (("1." + "0" * 18 + "1", "18 digits"), ("65536", "65535 copies")):
        p = subprocess.run([O.H5SHUF, "-q", "%s:/x@%s" % (a, w), out], capture_output=True)
        err = p.stderr.decode().strip().splitlines()  # (then the usage hint of every bad argument)
        check("weights: @%s refused with one line naming the input (%s)" % (w, why),
              p.returncode != 0 and err and why in err[0] and a in err[0] and not os.path.exists(out), err)
    zero = os.path.join(tmp, "zero.h5")
    O.shuf("-q", "-s", 1, "--source-index", "/src", "%s:/x@2" % a, "%s:/x@0" % a, "%s:/x@0.5" % a, zero)
    with h5py.File(zero, "r") as h:
        src = h["src"][()]["input"]
        check("weights: @0 takes no row and the input after it keeps its number",
              len(src) == 25 and sorted(set(src.tolist())) == [0, 2] and (src == 2).sum() == 5, str(src))
    odd = os.path.join(tmp, "odd@2.h5")
    with h5py.File(odd, "w") as h:
        h["x"] = np.arange(10, dtype="<i8")
    O.shuf("-q", "-s", 1, odd + ":/x", out)
    with h5py.File(out, "r") as h:
        check("weights: a file named odd@2.h5 is a file, not a weight", len(h["x"]) == 10)


def main():
    if len(sys.argv) != 2:
        print("usage: %s H5SHUF" % sys.argv[0], file=sys.stderr)
        return 2
    O.H5SHUF = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="weights_h5py.") as tmp:
        os.environ["TMPDIR"] = tmp
        O.run_case("counts, strategies, outputs", case_counts_and_paths, tmp)
        O.run_case("vlen rows and whole files", case_vlen_and_whole_file, tmp)
        O.run_case("copies independent", case_independent_copies, tmp)
        O.run_case("resume", case_resume, tmp)
        O.run_case("mix", case_mix, tmp)
        O.run_case("windows", case_windows, tmp)
        O.run_case("refused", case_refused, tmp)
    print("%d passed, %d failed" % (O.PASSED, O.FAILED), flush=True)
    return 0 if O.FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
