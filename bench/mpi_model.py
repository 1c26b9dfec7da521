#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mpi_model.py - docs/distributed.md's model of h5shuf-mpi as a small simulation: given the rows (N, their
bytes), the processes P, -m and the outputs (--shards K, or the single output), it plans the piles as
src/lib/core/plan.c does, cuts the output among the processes as src/mpi/dist.c does, and follows pass 2's
rounds (src/mpi/exchange.c, cuts.c) pile by pile to count what each process reads, writes and sends, the
messages it sends and the memory it holds.  Nothing is measured here; the data's compression ratios are
inputs (they are properties of the data, the same at every P).

  mpi_model.py predict --rows N --row-bytes B --procs P --memory 16M [--shards K] [...]
      one configuration: per process (mean and most) and in all
  mpi_model.py validate RUN.json ...
      each --json report of h5shuf-mpi (printed with -j 1, as bench/mpi.sh's sweep runs it) against the
      model's prediction for its configuration (rows, row bytes, P, -m, shards from the report itself; the
      ratios from --input-ratio/--scratch-ratio/--output-ratio or the report's plan): measured and
      predicted bytes sent (exchanged_bytes) and read (io_read_bytes), the difference in per cent
  mpi_model.py table [--corpus 1e12] [--procs 64,256,1024] [...]
      the extrapolation: a token corpus (vlen int32 rows, --mean-tokens a row) at each P, per process:
      rows, bytes read, written and sent, messages, memory, and the network's time at 10 and 100 Gbit/s
      a node (one process a node; sending and receiving at once, as a full-duplex link does)

Terms (per process r of P; "part" = r's rows of a pile, about pile/P):
  read     startup (--startup-read: Open MPI's and HDF5's reads at start, the plan's input metadata) +
           its share of the inputs (N/P rows at --input-ratio) + pass 2: every part loaded once for each
           process that gathers rows of its pile (a pile cut by the output ranges is loaded once per
           gatherer) and the ids of the cut piles once more (finding the cuts) + the single output's part
           read back to send it to process 0
  written  its scratch (its share at --scratch-ratio, the ids) + its outputs (shards, or its part of the
           single output; process 0 also every other part)
  sent     to each process gathering part of a pile, its rows of that process's range: decoded (row
           bytes, 8-byte id, 8 bytes a vlen length) or as stored chunks (scratch bytes), whichever the run
           chooses (the smaller summed over the run) + each round's counts + the cuts' sums + the single
           output's parts (to process 0, counted apart: assembled_bytes)
  messages each round's all-to-all (one) and, to each process gathering a pile in it, one message a
           dataset (decoded rows: its rows, the ids, vlen payload) or two (stored chunks: size, chunks);
           the collectives of the run; the assembly's two a chunk
  memory   -m (the plan holds every buffer within it) + --overhead (libraries, MPI: measured at P = 2)
"""
import argparse
import json
import math
import sys

MIB = 1 << 20
BAND_BYTES_MAX = 4 << 20          # plan.h H5SHUF_BAND_BYTES_MAX
PASS2_ROW_OVERHEAD = 40           # plan.h H5SHUF_PASS2_ROW_OVERHEAD
PASS2_BYTES_MAX = 256 << 20       # plan.h H5SHUF_PASS2_BYTES_MAX
PILE_CHUNK_BYTES_MAX = 1 << 20    # plan.h H5SHUF_PILE_CHUNK_BYTES_MAX
PASS1_ROW_OVERHEAD = 8            # plan.h H5SHUF_PASS1_ROW_OVERHEAD
SLAB_BYTES_MAX = 32 << 20         # plan.h H5SHUF_SLAB_BYTES_MAX
CUT_POINTS = 31                   # cuts.c: PARTS - 1 points a step


def size(text):
    """'16M' -> bytes."""
    text = str(text).strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:].upper())
    return int(float(text[:-1]) * mult) if mult else int(float(text))


def bound_for_target(s):
    return s + math.ceil(6 * math.sqrt(s))


def target_for_bound(bound):
    r = math.sqrt(bound + 9.0) - 3.0
    s = int(r * r)
    while s > 0 and bound_for_target(s) > bound:
        s -= 1
    while bound_for_target(s + 1) <= bound:
        s += 1
    return s


def plan(c):
    """The piles and the scratch's chunk rows as plan.c makes them (without overlap: -j 1 or vlen rows)."""
    row = c.plan_row_bytes
    band = min(BAND_BYTES_MAX, c.memory // 4)
    budget2 = c.memory - band
    if c.procs > 1:
        budget2 = budget2 // 2  # plan.c pass2_budget: half at every P (issue 51)
    per_row2 = row + PASS2_ROW_OVERHEAD

    def target(budget):
        s = target_for_bound(budget // per_row2)
        if c.vlen_var > 0:  # vlen rows: a pile's bytes have a spread (plan.c target_for_budget)
            k = per_row2 / (row + PASS2_ROW_OVERHEAD)
            r = math.sqrt(1.0 + c.vlen_var * k * k / (per_row2 * per_row2))
            t = math.sqrt(9.0 * r * r + budget / per_row2) - 3.0 * r
            s = int(t * t) if t > 0 else 0
            while s > 0 and s * per_row2 + 6.0 * math.sqrt(s * (per_row2 ** 2 + c.vlen_var)) > budget:
                s -= 1
        return max(s, 1)
    s = target(budget2)
    if budget2 > PASS2_BYTES_MAX:
        s = min(s, target(PASS2_BYTES_MAX))
    s = min(s, c.rows)
    piles = math.ceil(c.rows / s)
    slab = min(c.memory // 4, SLAB_BYTES_MAX)
    avail = max(c.memory - slab - piles * 256, 0)
    chunk = min(avail // piles // (row + PASS1_ROW_OVERHEAD), PILE_CHUNK_BYTES_MAX // (c.row_bytes + 1),
                bound_for_target(s))
    return piles, max(chunk, 1)


def ranges(c):
    """Each process's output rows [a, b): whole shards, or the single output cut at chunk rows (process 0
    alone for vlen rows, whose chunks hold the file's addresses)."""
    N, P = c.rows, c.procs
    if c.shards > 1:
        first = [k * N // c.shards for k in range(c.shards + 1)]  # (h5shuf's shards: equal, the rest last)
        return [(first[q * c.shards // P], first[(q + 1) * c.shards // P]) for q in range(P)]
    if c.vlen:
        return [(0, N)] + [(N, N)] * (P - 1)
    u = c.out_chunk_rows
    cut = [0] + [N * q // P // u * u for q in range(1, P)] + [N]
    return [(cut[q], cut[q + 1]) for q in range(P)]


def simulate(c):
    """Every figure of one configuration: a dict of per-process lists and totals."""
    N, P, B = c.rows, c.procs, c.row_bytes
    piles, chunk = plan(c)
    # piles of equal rows (the keys are uniform), their edges half a row off the rows: a range's edge is
    # inside a pile, as it is (but by chance) in a run, whose piles' sizes vary
    start = [0] + [j * N / piles + 0.5 for j in range(1, piles)] + [N]
    rg = ranges(c)
    # the processes gathering rows of each pile, and their rows of it
    gather = [[(q, min(b, start[j + 1]) - max(a, start[j])) for q, (a, b) in enumerate(rg)
               if a < b and a < start[j + 1] and b > start[j]] for j in range(piles)]
    rounds = max(sum(1 for g in gather if any(q == x for x, _ in g)) for q in range(P)) if P > 1 else 0
    cuts = sum(len(g) - 1 for g in gather)
    steps = math.ceil(math.log(max(N / piles / P, 2), 32)) + 1 if cuts else 0  # (cuts.c: 32 parts a step)
    compressed = c.scratch_ratio < 1.0

    def part(j):  # a process's rows of pile j
        return (start[j + 1] - start[j]) / P

    def stored(rows):  # a part's bytes in the scratch, and read: uncompressed fixed-size rows fill their last
        # chunk, stored and read whole (vlen rows are read and written by HDF5, which moves only their bytes)
        data = (math.ceil(rows / chunk) * chunk if not compressed and not c.vlen else rows) * B * c.scratch_ratio
        return data + rows * c.scratch_extra

    loaded = stored

    decoded_row = B + 8 + 8 * c.vlen_elems
    scratch_all = P * sum(stored(part(j)) for j in range(piles))
    packed = P > 1 and scratch_all < N * decoded_row  # (exchange.c send_stored)
    nsets = c.datasets + 1 + (1 if c.vlen_elems else 0)
    out = {k: [0.0] * P for k in ("read", "written", "sent", "assembled", "messages")}
    for r in range(P):
        share = N * (r + 1) // P - N * r // P
        a, b = rg[r]
        rd = c.startup_read + c.plan_read + share * B * c.input_ratio
        wr = c.startup_write + sum(stored(part(j)) for j in range(piles)) + (b - a) * B * c.output_ratio
        # pass 2: every part loaded for each process gathering rows of its pile; the cut piles' ids
        rd += sum(len(gather[j]) * loaded(part(j)) for j in range(piles)) if P > 1 else loaded(N)
        rd += sum(part(j) * 8 for j in range(piles) if len(gather[j]) > 1)  # (ids: at most 8 bytes a row)
        sent = msgs = 0.0
        for j in range(P > 1 and piles or 0):
            for q, rows in gather[j]:
                if q == r:
                    continue
                mine = rows / P  # this process's rows of q's share
                whole = len(gather[j]) == 1
                if packed:
                    sent += (stored(part(j)) if whole else mine * (B * c.scratch_ratio + c.scratch_extra)) + 8
                    msgs += 2
                else:
                    sent += mine * decoded_row
                    msgs += nsets
        if P > 1:
            sent += rounds * (P - 1) * 8 + cuts * (CUT_POINTS * 8 * steps + 8)
            msgs += rounds + steps + (1 if cuts else 0) + 10  # (the run's other collectives)
        if c.shards <= 1 and not c.vlen and P > 1 and b > a:  # the single output's assembly at process 0
            part_bytes = (b - a) * B * c.output_ratio
            chunks = math.ceil((b - a) / c.out_chunk_rows) * c.datasets
            if r > 0:
                rd += part_bytes
                out["assembled"][r] = part_bytes + chunks * 40
                msgs += 2 * chunks + 1
                out["written"][0] += part_bytes
        out["read"][r] += rd
        out["written"][r] += wr
        out["sent"][r], out["messages"][r] = sent, msgs
    out.update(piles=piles, chunk_rows=chunk, rounds=rounds, cuts=cuts, packed=packed, scratch=scratch_all,
               memory=c.memory + c.overhead)
    return out


def config(**kw):
    c = argparse.Namespace(rows=0, row_bytes=0, procs=1, memory=16 * MIB, shards=0, vlen=False, vlen_elems=0,
                           vlen_var=0.0, datasets=1, input_ratio=1.0, scratch_ratio=1.0, output_ratio=1.0,
                           id_bytes=8.0, out_chunk_rows=1024, startup_read=0.0, startup_write=0.0, plan_read=0.0, scratch_extra=None,
                           overhead=30 * MIB,
                           plan_row_bytes=0)
    for k, v in kw.items():
        setattr(c, k, v)
    if c.scratch_extra is None:  # the scratch's bytes a row besides its data: its id, vlen lengths
        c.scratch_extra = c.id_bytes + 8 * c.vlen_elems
    if not c.plan_row_bytes:
        c.plan_row_bytes = c.row_bytes + (16 * c.vlen_elems if c.vlen else 0)
    return c


def fmt(b):
    for unit, div in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(b) >= div:
            return f"{b / div:.2f} {unit}"
    return f"{b:.0f} B"


def add_data_args(p):
    p.add_argument("--input-ratio", type=float, default=1.0, help="stored input bytes / row bytes")
    p.add_argument("--scratch-ratio", type=float, default=1.0,
                   help="stored scratch bytes of a row's data / row bytes (1: no compression, the default when "
                        "the scratch fits in half the memory)")
    p.add_argument("--output-ratio", type=float, default=1.0, help="stored output bytes / row bytes")
    p.add_argument("--id-bytes", type=float, default=2.0, help="stored scratch bytes of a row's id (zstd-1)")
    p.add_argument("--startup-read", default="200K", help="bytes each process reads to start (Open MPI, HDF5)")
    p.add_argument("--plan-read", default="0", help="bytes each process reads to plan (the inputs' metadata, a "
                   "sample of vlen rows: what `h5shuf --plan` reads)")
    p.add_argument("--scratch-extra", type=float, default=None,
                   help="the scratch's stored bytes a row besides its data: its id, a vlen row's lengths "
                        "(validate: from the P = 1 report's scratch_bytes; default: --id-bytes + 8 a vlen length)")
    p.add_argument("--overhead", default="30M", help="a process's memory besides -m (libraries, MPI)")
    p.add_argument("--out-chunk-rows", type=int, default=1024, help="the single output's chunk rows (its cut unit)")


def cmd_predict(a):
    c = config(rows=a.rows, row_bytes=a.row_bytes, procs=a.procs, memory=size(a.memory), shards=a.shards,
               vlen=a.vlen_elems > 0, vlen_elems=a.vlen_elems, datasets=a.datasets, input_ratio=a.input_ratio,
               scratch_ratio=a.scratch_ratio, output_ratio=a.output_ratio, id_bytes=a.id_bytes,
               startup_read=size(a.startup_read), plan_read=size(a.plan_read), scratch_extra=a.scratch_extra,
               overhead=size(a.overhead), out_chunk_rows=a.out_chunk_rows)
    o = simulate(c)
    print(f"N={c.rows} rows of {c.row_bytes} bytes, P={c.procs}, -m {a.memory}, "
          f"{'--shards %d' % c.shards if c.shards > 1 else 'single output'}: {o['piles']} piles, "
          f"{o['rounds']} rounds, {o['cuts']} cuts, pass 2 sends {'stored chunks' if o['packed'] else 'decoded rows'}")
    for k in ("read", "written", "sent", "assembled", "messages"):
        v = o[k]
        print(f"  {k:10s} per process mean {fmt(sum(v) / len(v)):>10s}  most {fmt(max(v)):>10s}  all {fmt(sum(v))}"
              if k != "messages" else f"  {k:10s} per process mean {sum(v) / len(v):10.0f}  most {max(v):10.0f}"
              f"  all {sum(v):.0f}")
    print(f"  memory     per process {fmt(o['memory'])}")


def from_report(d, a, extra):
    """The configuration of a --json report of h5shuf-mpi."""
    p = d["plan"]
    outs = d.get("outputs", [])
    rows = p["rows"]
    vlen = p.get("pile_bound_bytes", 0) > 0
    row = p["row_bytes"] - (16 if vlen else 0)  # (a vlen row's plan bytes count its record: 16 bytes)
    return config(rows=rows, row_bytes=row, procs=d["processes"], memory=p["mem_limit_bytes"],
                  shards=len(outs) if len(outs) > 1 else 0, vlen=vlen, vlen_elems=1 if vlen else 0,
                  datasets=len(d["datasets"]), input_ratio=p["input_stored_bytes"] / (rows * row),
                  scratch_ratio=a.scratch_ratio, output_ratio=p["output_estimate_bytes"] / (rows * row),
                  id_bytes=a.id_bytes, scratch_extra=extra, startup_read=size(a.startup_read),
                  plan_read=size(a.plan_read), overhead=size(a.overhead), out_chunk_rows=a.out_chunk_rows,
                  plan_row_bytes=p["row_bytes"])


def cmd_validate(a):
    reports = [(path, json.load(open(path))) for path in a.reports]
    # the scratch's bytes a row besides the rows' data (ids, vlen lengths): a property of the data, from the
    # P = 1 run when there is one (its scratch_bytes less the model's data bytes of its scratch)
    one = [d for _, d in reports if d["processes"] == 1]
    extra = a.scratch_extra
    if extra is None and one:
        c1 = from_report(one[0], a, 0.0)
        extra = (one[0]["scratch_bytes"] - simulate(c1)["scratch"]) / c1.rows
    print("| run | P | piles (plan, model) | sent: measured | predicted | diff | read: measured | predicted | diff | "
          "written: measured | predicted | diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for path, d in reports:
        c = from_report(d, a, extra)
        o = simulate(c)
        sent, read = d.get("exchanged_bytes", 0), d["io_read_bytes"]
        ps, pr = sum(o["sent"]), sum(o["read"])
        ds = (ps - sent) / sent * 100 if sent else 0.0
        dr = (pr - read) / read * 100
        worst = max(worst, abs(ds), abs(dr))
        wr, pw = d["io_written_bytes"], sum(o["written"])
        print(f"| {a.label or path} | {c.procs} | {d['plan']['piles']}, {o['piles']} | {fmt(sent)} | {fmt(ps)} | "
              f"{ds:+.1f}% | {fmt(read)} | {fmt(pr)} | {dr:+.1f}% | {fmt(wr)} | {fmt(pw)} | {(pw - wr) / wr * 100:+.1f}% |")
    print(f"# worst difference (sent, read) {worst:.1f}%")
    return 0 if worst <= a.tolerance else 1


def cmd_table(a):
    mean_bytes = a.mean_tokens * 4
    n = int(float(a.corpus) / mean_bytes)
    print(f"A token corpus of {float(a.corpus) / 1e12:g} TB of rows: {n} rows of {a.mean_tokens} int32 tokens on average "
          f"({mean_bytes} bytes) and an int16 label, -m {a.memory} a process, "
          f"{'--shards P' if a.shards == 0 else '--shards %d' % a.shards}, inputs, scratch and output stored at "
          f"{a.input_ratio:g}, {a.scratch_ratio:g} and {a.output_ratio:g} of the rows, one process a node")
    print("| P | rows a process | piles | rounds | cuts | read a process | written a process | sent a process | "
          "messages a process | memory a process | network at 10 Gbit/s | at 100 Gbit/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for P in [int(x) for x in a.procs.split(",")]:
        c = config(rows=n, row_bytes=mean_bytes + 2, procs=P, memory=size(a.memory), shards=a.shards or P,
                   vlen=True, vlen_elems=1, vlen_var=(mean_bytes / math.sqrt(3)) ** 2, datasets=2,
                   input_ratio=a.input_ratio, scratch_ratio=a.scratch_ratio, output_ratio=a.output_ratio,
                   id_bytes=a.id_bytes, startup_read=size(a.startup_read), plan_read=size(a.plan_read),
                   scratch_extra=a.scratch_extra, overhead=size(a.overhead), plan_row_bytes=mean_bytes + 2 + 16)
        o = simulate(c)
        sent = max(o["sent"])
        # a node sends its share and receives as much at once (a full-duplex link)
        t10, t100 = sent * 8 / 10e9, sent * 8 / 100e9
        print(f"| {P} | {n // P} | {o['piles']} | {o['rounds']} | {o['cuts']} | {fmt(max(o['read']))} | "
              f"{fmt(max(o['written']))} | {fmt(sent)} | {max(o['messages']):.0f} | {o['memory'] / 2**30:.2f} GiB | "
              f"{t10:.1f} s | {t100:.2f} s |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict")
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--row-bytes", type=int, required=True, help="a row's bytes (vlen: its mean payload)")
    p.add_argument("--procs", type=int, required=True)
    p.add_argument("--memory", default="16M")
    p.add_argument("--shards", type=int, default=0)
    p.add_argument("--datasets", type=int, default=1)
    p.add_argument("--vlen-elems", type=int, default=0, help="vlen elements a row (token rows: 1)")
    add_data_args(p)
    v = sub.add_parser("validate")
    v.add_argument("reports", nargs="+")
    v.add_argument("--label", default="")
    v.add_argument("--tolerance", type=float, default=10.0)
    add_data_args(v)
    t = sub.add_parser("table")
    t.add_argument("--corpus", default="1e12", help="the rows' bytes (decimal: 1e12 is 1 TB)")
    t.add_argument("--mean-tokens", type=int, default=1024)
    t.add_argument("--procs", default="64,256,1024")
    t.add_argument("--memory", default="8G")
    t.add_argument("--shards", type=int, default=0, help="0: as many shards as processes")
    add_data_args(t)
    a = ap.parse_args()
    return {"predict": cmd_predict, "validate": cmd_validate, "table": cmd_table}[a.cmd](a) or 0


if __name__ == "__main__":
    sys.exit(main())
