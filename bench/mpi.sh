#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/mpi.sh - h5shuf-mpi on one machine: P = 1, 2, 4 processes against the serial h5shuf, the single
# output and --shards 4, interleaved in the same run after docs/benchmark.md's "Protocol" (settle before each
# command, the input re-read, medians of REPS rounds).  Each process gets -m MEMORY and a scratch
# directory of its own; peak RSS is measured per process (/usr/bin/time around each).  mpirun runs with
# --bind-to none: its default binds each of 1 or 2 processes to one core, which halves a process's -j
# threads (h5shuf-mpi warns of it), as a user with one process per node must avoid too.  docs/benchmark.md
# ("MPI") has the results and docs/distributed.md the model they feed.
#
#   bash bench/mpi.sh                       1 GiB of 1 KiB float32 rows, gzip-4, 1 MiB chunks, with labels
#   CASE=tokens bash bench/mpi.sh           2 GiB of token sequences (vlen int32) with a domain label
#   CASE=records bash bench/mpi.sh          1 GiB of 8 MiB records (the direct path) with labels
#   CASES="x tokens records" bash bench/mpi.sh    the three, one after the other (x: the first line)
#   CASE=sweep bash bench/mpi.sh            P = 1, 2, 4, 8, 16, 32 (oversubscribed, -j 1) for fixed rows and
#                                           token sequences, --shards 16 and the single output, each run once;
#                                           then bench/mpi_model.py's prediction of every run
# The cases (CASE or CASES: x is the default):
#   x        /data (N, 256) float32 gzip-4, chunks of 1024 rows, /label (N,) int64; single output and
#            --shards 4; -m 256M
#   tokens   /tok (N,) vlen int32 (h5py vlen_dtype), lengths uniform in 1..2047 (mean 1024 tokens, 4 KiB),
#            token ids uniform in 0..50256, the heap ids in gzip-4 chunks of 1024 rows; /domain (N,) int16
#            in 0..15; N = SIZE / 4 KiB; --shards 4 only (vlen single output is written by process 0
#            alone); -m 256M
#   records  /x (N, 2048, 1024) float32 = 8 MiB a record, one a chunk, RECORDS_FILTER (gzip1: gzip-1,
#            about 2x; none); /label (N,) int64; N = SIZE / 8 MiB; single output and --shards 4; -m 64M:
#            the plan must choose the direct path (its "strategy" line is printed, for h5shuf and
#            h5shuf-mpi, and anything else stops the run)
#   sweep    262144 rows of 264 bytes (/x (N, 64) float32 normals and /y (N,) int64, gzip-1, 63 MB stored)
#            and 65536 token sequences (/tok vlen int32, 1..255 tokens, ids in 0..50256, /domain int16;
#            34 MB of rows), -m 16M, --shards 16 and the single output, P in SWEEP_PROCS (1 2 4 8 16 32),
#            mpirun --oversubscribe --bind-to none, -j 1: one round, each output checked against the serial
#            run's (md5: shards and the vlen single output; tests/h5same.py: the fixed single output).
#            Prints, for each run, the wall time, the bytes pass 2 sent over the rows' bytes (bound: (P-1)/P
#            + 0.05), the largest peak RSS of a process, the messages (all, the most of one process, per
#            process per round) and the bytes read; keeps each --json report in RESULTS-sweep/, and runs
#            bench/mpi_model.py validate over them (predicted and measured bytes sent and read)
# Settings (environment): SIZE (default 1G, tokens 2G; applies to every case listed)  REPS=3  SETTLE=10
#   MEMORY (default per case, above; applies to every case listed)  PROCS="1 2 4"  SEED=1
#   RECORDS_FILTER=gzip1  WORK=/tmp/h5shuf-mpi-bench (the inputs kept and reused)
#   BUILD=build (NO_BUILD=1: do not build first)  RESULTS=bench/results/mpi-TIME (x: RESULTS.tsv,
#   the others RESULTS-CASE.tsv: label, round, wall s, peak RSS KiB, read, written, disk write, sent bytes)
# Every output is checked against the serial run's of the same seed: the single output by
# tests/h5same.py (data, attributes, stored chunks byte for byte), shards by md5.
#
# Bytes per run, summed over the processes of the run (the serial run: its one process):
#   read, written  rchar and wchar of /proc/PID/io, taken by bench/procio.py when the process has exited
#                  (before it is reaped): the bytes through read/write/pread/pwrite system calls, which is
#                  how HDF5 (sec2) and h5shuf reach every file (input, scratch, outputs; no mmap), page-cache
#                  hits included - the settle re-reads the input, so the block-device counters would show
#                  hardly any reads.  Open MPI's messages between the processes of one machine go through
#                  shared memory and are not in them (over TCP they would be)
#   disk write     write_bytes - cancelled_write_bytes: bytes dirtied for the disk and not cancelled by
#                  deleting the file first (the scratch, deleted at the end, may partly cancel)
#   sent           exchanged_bytes of h5shuf-mpi's --json report: pass 2's rows (and vlen payload) sent to
#                  other processes, summed over the processes; 0 for the serial run and the direct path;
#                  the single output's assembly (every part sent to process 0) is not in it
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
REPS=${REPS:-3}
SETTLE=${SETTLE:-10}
PROCS=${PROCS:-"1 2 4"}
SEED=${SEED:-1}
CASES=${CASES:-${CASE:-x}}
RECORDS_FILTER=${RECORDS_FILTER:-gzip1}
WORK=${WORK:-/tmp/h5shuf-mpi-bench}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
RESULTS=${RESULTS:-$root/bench/results/mpi-$(date -u +%Y%m%dT%H%M%SZ)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for c in $CASES; do case $c in x|tokens|records|sweep) ;; *) echo "mpi.sh: unknown case '$c' (x, tokens, records, sweep)" >&2; exit 1;; esac; done
case $RECORDS_FILTER in gzip1|none) ;; *) echo "mpi.sh: RECORDS_FILTER is gzip1 or none" >&2; exit 1;; esac
[ "${NO_BUILD:-0}" = 1 ] || H5SHUF_BUILD_TESTS=ON H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
H=$BUILD/h5shuf HM=$BUILD/h5shuf-mpi IO=$root/bench/procio.py
[ -x "$HM" ] || { echo "mpi.sh: $HM was not built (install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
mkdir -p "$WORK" "$(dirname "$RESULTS")"

make_x() { # path size
  "$PY" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
path, size = sys.argv[1], sys.argv[2]
total = int(size[:-1]) << {"M": 20, "G": 30}[size[-1]]
n = total // 1024
rng = np.random.default_rng(7)
with h5py.File(path + ".tmp", "w") as f:
    x = f.create_dataset("data", (n, 256), dtype="f4", chunks=(1024, 256), compression="gzip", compression_opts=4)
    for s in range(0, n, 1 << 18):
        e = min(n, s + (1 << 18))  # rounded normals: gzip-4 stores about 60% of the bytes
        x[s:e] = np.round(rng.standard_normal((e - s, 256)) * 64) / 64
    f.create_dataset("label", data=rng.integers(0, 1000, n), chunks=(65536,), compression="gzip", compression_opts=4)
PY
}
make_tokens() { # path size: token sequences written 65536 rows at a time (numpy object arrays)
  "$PY" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
path, size = sys.argv[1], sys.argv[2]
total = int(size[:-1]) << {"M": 20, "G": 30}[size[-1]]
n = total // 4096  # mean 1024 int32 tokens a row
rng = np.random.default_rng(7)
with h5py.File(path + ".tmp", "w") as f:
    tok = f.create_dataset("tok", (n,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(1024,),
                           compression="gzip", compression_opts=4)
    for s in range(0, n, 65536):
        e = min(n, s + 65536)
        lens = rng.integers(1, 2048, e - s)
        flat = rng.integers(0, 50257, int(lens.sum()), dtype=np.int32)
        rows = np.empty(e - s, dtype=object)
        for i, r in enumerate(np.split(flat, np.cumsum(lens)[:-1])):
            rows[i] = r
        tok[s:e] = rows
    f.create_dataset("domain", data=rng.integers(0, 16, n).astype("i2"), chunks=(min(n, 65536),),
                     compression="gzip", compression_opts=4)
PY
}
make_records() { # path size: 8 MiB records, one a chunk
  "$PY" - "$1" "$2" "$RECORDS_FILTER" <<'PY'
import sys, h5py, numpy as np
path, size, filt = sys.argv[1], sys.argv[2], sys.argv[3]
total = int(size[:-1]) << {"M": 20, "G": 30}[size[-1]]
n = total // (8 << 20)
rng = np.random.default_rng(7)
base = (np.round(rng.normal(size=2048 * 1024) * 256) / 256).astype("f4")  # gzip-1: about 2x
kw = dict(compression="gzip", compression_opts=1) if filt == "gzip1" else {}
with h5py.File(path + ".tmp", "w") as f:
    x = f.create_dataset("x", (n, 2048, 1024), dtype="f4", chunks=(1, 2048, 1024), **kw)
    for i in range(n):  # each record different
        x[i] = (np.roll(base, i * 7919) + np.float32(i % 4096)).reshape(2048, 1024)
    f.create_dataset("label", data=rng.integers(0, 1000, n), chunks=(min(n, 65536),))
PY
}

out=$WORK/out
settle() { rm -rf "$out"; mkdir -p "$out"; sync; sleep "$SETTLE"; cat "$in" >/dev/null; sync; }
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
peak() { sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$1"; }
elapsed() { seconds "$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1")"; }
iofield() { sed -n "s/^$2: //p" "$1"; } # file counter
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }
exchanged() { # the --json report on stdout -> exchanged_bytes (top level, else summed over "passes")
  "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["exchanged_bytes"] if "exchanged_bytes" in r else sum(p.get("exchanged_bytes", 0) for p in r.get("passes", [])))' "$1"
}

run_one() { # procs (0: serial h5shuf) shards round
  local p=$1 k=$2 rep=$3 label extra=() rss=0 wall rd=0 wr=0 dw=0 sent f
  [ "$k" -gt 0 ] && extra=(--shards "$k")
  label=$([ "$p" = 0 ] && echo serial || echo "P=$p")$([ "$k" -gt 0 ] && echo " shards $k" || echo "")
  settle
  rm -f "$WORK"/t.io.*
  if [ "$p" = 0 ]; then
    "$PY" "$IO" "$WORK/t.io.0" /usr/bin/time -v -o "$WORK/t.0" \
      "$H" -q --json -s "$SEED" -m "$mem" -t "$out" "${extra[@]}" "$spec" "$out/o.h5" >"$WORK/j.json"
    wall=$(elapsed "$WORK/t.0"); rss=$(peak "$WORK/t.0")
  else
    for r in $(seq 0 $((p - 1))); do mkdir -p "$out/tmp$r"; done
    /usr/bin/time -v -o "$WORK/t.all" mpirun --oversubscribe --bind-to none -n "$p" sh -c \
      'io=$1; shift; exec /usr/bin/python3 "$io" "$0.io.$OMPI_COMM_WORLD_RANK" /usr/bin/time -v -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
      "$WORK/t" "$IO" "$HM" -q --json -s "$SEED" -m "$mem" -t "$out/tmp%r" "${extra[@]}" "$spec" "$out/o.h5" \
      >"$WORK/j.json"
    wall=$(elapsed "$WORK/t.all")
    for r in $(seq 0 $((p - 1))); do v=$(peak "$WORK/t.$r"); [ "$v" -gt "$rss" ] && rss=$v; done
  fi
  for f in "$WORK"/t.io.*; do
    rd=$((rd + $(iofield "$f" rchar))) wr=$((wr + $(iofield "$f" wchar)))
    dw=$((dw + $(iofield "$f" write_bytes) - $(iofield "$f" cancelled_write_bytes)))
  done
  sent=$(exchanged "$WORK/j.json")
  local verdict=reference ref=$WORK/ref$tag$k
  if [ "$p" = 0 ]; then
    rm -rf "$ref"; mkdir -p "$ref"; mv "$out"/o*.h5 "$ref/"
  elif [ "$k" -gt 0 ]; then
    (cd "$out" && md5sum o-*.h5) | sed "s#  #  #" >"$WORK/m.txt"
    (cd "$ref" && md5sum -c --quiet "$WORK/m.txt") >/dev/null && verdict="shards md5-identical to serial" ||
      { echo "mpi.sh: $label: shards differ from the serial run's" >&2; exit 1; }
  else
    "$PY" "$root/tests/h5same.py" "$ref/o.h5" "$out/o.h5" >/dev/null && verdict="chunks byte-identical to serial" ||
      { echo "mpi.sh: $label: output differs from the serial run's" >&2; exit 1; }
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$rep" "$wall" "$rss" "$rd" "$wr" "$dw" "$sent" >>"$tsv"
  if [ "$case" = x ]; then
    printf '%-18s round %d: %7.2f s  peak RSS per process %5d MiB   %s\n' "$label" "$rep" "$wall" $((rss / 1024)) "$verdict"
  else
    printf '%-18s round %d: %7.2f s  peak RSS per process %5d MiB  read %s written %s sent %s   %s\n' "$label" "$rep" \
      "$wall" $((rss / 1024)) "$(gib "$rd")" "$(gib "$wr")" "$(gib "$sent")" "$verdict"
  fi
}

check_direct() { # the plan of every output kind, serial and at the largest P, must be the direct path
  local k extra line pmax=0 p
  for p in $PROCS; do [ "$p" -gt "$pmax" ] && pmax=$p; done
  for k in $shards; do
    extra=(); [ "$k" -gt 0 ] && extra=(--shards "$k")
    rm -rf "$out"; mkdir -p "$out"
    line=$("$H" --plan -s "$SEED" -m "$mem" -t "$out" "${extra[@]}" "$spec" "$out/o.h5" 2>&1 | grep 'strategy' || true)
    echo "   plan (h5shuf${extra[*]:+ ${extra[*]}}): ${line:-no strategy line}"
    [[ $line == *"strategy direct"* ]] || { echo "mpi.sh: records: the plan did not choose the direct path" >&2; exit 1; }
    [ "$pmax" -gt 0 ] || continue
    line=$(mpirun --oversubscribe -n "$pmax" "$HM" --plan -s "$SEED" -m "$mem" -t "$out" "${extra[@]}" "$spec" \
      "$out/o.h5" 2>&1 | grep 'strategy' | head -1 || true)
    echo "   plan (h5shuf-mpi P=$pmax${extra[*]:+ ${extra[*]}}): ${line:-no strategy line}"
    [[ $line == *"strategy direct"* ]] || { echo "mpi.sh: records: the MPI plan did not choose the direct path" >&2; exit 1; }
  done
}

summary() { # tsv case
  "$PY" - "$1" "$2" <<'PY'
import sys, statistics, collections
path, case = sys.argv[1], sys.argv[2]
rows = collections.defaultdict(list)
rss = collections.defaultdict(int)
io = collections.defaultdict(list)
for line in open(path):
    label, rep, wall, kb, rd, wr, dw, sent = line.rstrip("\n").split("\t")
    rows[label].append(float(wall)); rss[label] = max(rss[label], int(kb))
    io[label].append((int(rd), int(wr), int(dw), int(sent)))
def ref(label):
    return statistics.median(rows["serial" + (" shards 4" if "shards" in label else "")])
def gib(b):
    return f"{b / 2**30:.2f} GiB"
def med(label, i):
    return statistics.median(v[i] for v in io[label])
if case == "x":  # the table as it always was, then the bytes
    print(f"| run | wall (median) | vs serial | peak RSS per process |")
    print(f"|---|---|---|---|")
    for label, v in rows.items():
        m = statistics.median(v)
        print(f"| {label} | {m:.2f} s | {m / ref(label):.2f} | {rss[label] // 1024} MiB |")
    print("== bytes per run (medians, summed over the processes: read/written = rchar/wchar, disk write ="
          " write_bytes - cancelled_write_bytes, sent = --json exchanged_bytes: pass 2 only, not the assembly)")
    print(f"| run | read | written | disk write | sent |")
    print(f"|---|---|---|---|---|")
    for label in rows:
        print(f"| {label} | {gib(med(label, 0))} | {gib(med(label, 1))} | {gib(med(label, 2))} | {gib(med(label, 3))} |")
else:
    print(f"| case | run | wall (median) | vs serial | peak RSS per process | read | written | disk write | sent |")
    print(f"|---|---|---|---|---|---|---|---|---|")
    for label, v in rows.items():
        m = statistics.median(v)
        print(f"| {case} | {label} | {m:.2f} s | {m / ref(label):.2f} | {rss[label] // 1024} MiB | "
              f"{gib(med(label, 0))} | {gib(med(label, 1))} | {gib(med(label, 2))} | {gib(med(label, 3))} |")
PY
}

make_sweep() { # dir: the sweep's two inputs, and their rows' bytes (rows.txt: fixed, tokens)
  "$PY" - "$1" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
n = 262144
with h5py.File(d + "/fix.h5", "w") as f:
    f.create_dataset("x", data=rng.standard_normal((n, 64)).astype("f4"), chunks=(1024, 64), compression="gzip",
                     compression_opts=1)
    f.create_dataset("y", data=rng.integers(0, 1 << 40, n), chunks=(8192,), compression="gzip", compression_opts=1)
n = 65536
with h5py.File(d + "/tok.h5", "w") as f:
    tok = f.create_dataset("tok", (n,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(1024,), compression="gzip",
                           compression_opts=1)
    lens = rng.integers(1, 256, n)
    flat = rng.integers(0, 50257, int(lens.sum()), dtype=np.int32)
    rows = np.empty(n, dtype=object)
    for i, r in enumerate(np.split(flat, np.cumsum(lens)[:-1])):
        rows[i] = r
    tok[:] = rows
    f.create_dataset("domain", data=rng.integers(0, 16, n).astype("i2"), chunks=(8192,), compression="gzip",
                     compression_opts=1)
open(d + "/rows.txt", "w").write(f"{262144 * 264} {int(lens.sum()) * 4 + 2 * n}\n")
PY
}

sweep() { # the P sweep: every kind at every P, once
  local dir=$WORK/sweep res=$RESULTS-sweep kind p spec k rb ref t0 wall verdict
  mkdir -p "$dir" "$res"
  [ -f "$dir/rows.txt" ] || make_sweep "$dir"
  read -r rb_fix rb_tok <"$dir/rows.txt"
  echo "== sweep: P in ${SWEEP_PROCS:-1 2 4 8 16 32}, -m 16M, -j 1, mpirun --oversubscribe --bind-to none, $(nproc) cores"
  printf '| kind | P | wall | sent / rows | bound | peak RSS a process | messages (most of one; a process a round) | rounds | read |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  for kind in fix-shards fix-single tok-shards tok-single; do
    case $kind in
      fix-*) spec=$dir/fix.h5:/x,/y rb=$rb_fix ;;
      tok-*) spec=$dir/tok.h5:/tok,/domain rb=$rb_tok ;;
    esac
    k=(); [[ $kind == *shards ]] && k=(--shards 16)
    ref=$dir/ref-$kind; rm -rf "$ref"; mkdir -p "$ref"
    "$H" -q -s "$SEED" -m 16M -j 1 -t "$ref" "${k[@]}" "$spec" "$ref/o.h5"
    for p in ${SWEEP_PROCS:-1 2 4 8 16 32}; do
      rm -rf "$out"; mkdir -p "$out"
      for r in $(seq 0 $((p - 1))); do mkdir -p "$out/tmp$r"; done
      t0=$(date +%s.%N)
      mpirun --oversubscribe --bind-to none -n "$p" "$HM" -q --json -s "$SEED" -m 16M -j 1 -t "$out/tmp%r" "${k[@]}" \
        "$spec" "$out/o.h5" >"$res/$kind-P$p.json"
      wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
      if [ "$kind" = fix-single ]; then
        "$PY" "$root/tests/h5same.py" "$ref/o.h5" "$out/o.h5" >/dev/null && verdict=h5same ||
          { echo "mpi.sh: sweep $kind P=$p: output differs from the serial run's" >&2; exit 1; }
      else
        [ "$(cd "$ref" && md5sum o*.h5)" = "$(cd "$out" && md5sum o*.h5)" ] && verdict=md5 ||
          { echo "mpi.sh: sweep $kind P=$p: output differs from the serial run's" >&2; exit 1; }
      fi
      "$PY" - "$res/$kind-P$p.json" "$kind" "$p" "$wall" "$rb" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
kind, p, wall, rb = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
sent = d.get("exchanged_bytes", 0)
rounds = d.get("rounds", 0)
per = d["messages_sent"] / p / rounds if rounds else 0
print(f"| {kind} | {p} | {wall} s | {sent / rb:.3f} | {(p - 1) / p + 0.05:.3f} | {d['peak_rss_bytes_max'] >> 20} MiB | "
      f"{d['messages_sent']} ({d['messages_sent_max']}; {per:.1f}) | {rounds} | {d['io_read_bytes'] / 1e6:.0f} MB |")
PY
    done
  done
  echo "== the model (bench/mpi_model.py) against the runs: each process reads what \`h5shuf --plan\` reads"
  echo "   (procio.py: the inputs' metadata, a sample of vlen rows), the scratch's bytes a row from P = 1"
  for kind in fix-shards fix-single tok-shards tok-single; do
    case $kind in fix-*) spec=$dir/fix.h5:/x,/y ;; tok-*) spec=$dir/tok.h5:/tok,/domain ;; esac
    "$PY" "$IO" "$dir/plan.io" "$H" --plan -s "$SEED" -m 16M "$spec" "$out/o.h5" >/dev/null
    "$PY" "$root/bench/mpi_model.py" validate --label "$kind" --plan-read "$(iofield "$dir/plan.io" rchar)" \
      $(for p in ${SWEEP_PROCS:-1 2 4 8 16 32}; do echo "$res/$kind-P$p.json"; done) || true
  done
}

for case in $CASES; do
  if [ "$case" = sweep ]; then sweep; continue; fi
  case $case in
    x) size=${SIZE:-1G} mem=${MEMORY:-256M} in=$WORK/in-$size.h5 tag= shards="0 4" tsv=$RESULTS.tsv
       spec=$in:/data,/label ;;
    tokens) size=${SIZE:-2G} mem=${MEMORY:-256M} in=$WORK/tokens-$size.h5 tag=-tokens- shards=4
       tsv=$RESULTS-tokens.tsv spec=$in:/tok,/domain ;;
    records) size=${SIZE:-1G} mem=${MEMORY:-64M} in=$WORK/records-$size-$RECORDS_FILTER.h5 tag=-records-
       shards="0 4" tsv=$RESULTS-records.tsv spec=$in:/x,/label ;;
  esac
  if [ ! -f "$in" ]; then
    echo "== making $in" >&2
    "make_$case" "$in" "$size"
    mv "$in.tmp" "$in"
  fi
  if [ "$case" = x ]; then
    echo "== $in ($(du -h "$in" | cut -f1) stored), -m $mem per process, $REPS rounds, SETTLE=$SETTLE s, $(nproc) cores"
  else
    echo "== $case: $in ($(du -h "$in" | cut -f1) stored), -m $mem per process, $REPS rounds, SETTLE=$SETTLE s, $(nproc) cores"
  fi
  [ "$case" = records ] && check_direct
  : >"$tsv"
  for rep in $(seq 1 "$REPS"); do
    for k in $shards; do
      run_one 0 "$k" "$rep"
      for p in $PROCS; do run_one "$p" "$k" "$rep"; done
    done
  done
  if [ "$case" = x ]; then
    echo "== medians (ratios against the serial run of the same output)"
  else
    echo "== $case: medians (ratios against the serial run of the same output; bytes: medians, summed over the processes:"
    echo "   read/written = rchar/wchar, disk write = write_bytes - cancelled_write_bytes, sent = --json exchanged_bytes:"
    echo "   pass 2 only, not the single output's assembly at process 0)"
  fi
  summary "$tsv" "$case"
done
