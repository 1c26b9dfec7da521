#!/usr/bin/env bash
# bench/mpi.sh - h5shuf-mpi on one machine: P = 1, 2, 4 processes against the serial h5shuf, the single
# output and --shards 4, interleaved in the same run after ../shared/BENCHMARKING.md (settle before each
# command, the input re-read, medians of REPS rounds).  Each process gets -m MEMORY and a scratch
# directory of its own; peak RSS is measured per process (/usr/bin/time around each).  docs/benchmark.md
# ("MPI") has the results and docs/distributed.md the model they feed.
#
#   bash bench/mpi.sh                       1 GiB of 1 KiB float32 rows, gzip-4, 1 MiB chunks, with labels
# Settings (environment): SIZE=1G  REPS=3  SETTLE=10  MEMORY=256M  PROCS="1 2 4"  SEED=1
#   WORK=/tmp/h5shuf-mpi-bench (the input kept and reused)   BUILD=build (NO_BUILD=1: do not build first)
# Every output is checked against the serial run's of the same seed: the single output by
# tests/h5same.py (data, attributes, stored chunks byte for byte), shards by md5.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
SIZE=${SIZE:-1G}
REPS=${REPS:-3}
SETTLE=${SETTLE:-10}
MEMORY=${MEMORY:-256M}
PROCS=${PROCS:-"1 2 4"}
SEED=${SEED:-1}
WORK=${WORK:-/tmp/h5shuf-mpi-bench}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
RESULTS=${RESULTS:-$root/bench/results/mpi-$(date -u +%Y%m%dT%H%M%SZ)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ "${NO_BUILD:-0}" = 1 ] || H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
H=$BUILD/h5shuf HM=$BUILD/h5shuf-mpi
[ -x "$HM" ] || { echo "mpi.sh: $HM was not built (install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
mkdir -p "$WORK" "$(dirname "$RESULTS")"
in=$WORK/in-$SIZE.h5
if [ ! -f "$in" ]; then
  echo "== making $in" >&2
  "$PY" - "$in" "$SIZE" <<'PY'
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
  mv "$in.tmp" "$in"
fi
out=$WORK/out
settle() { rm -rf "$out"; mkdir -p "$out"; sync; sleep "$SETTLE"; cat "$in" >/dev/null; sync; }
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
peak() { sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$1"; }
elapsed() { seconds "$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1")"; }

run_one() { # procs (0: serial h5shuf) shards round
  local p=$1 k=$2 rep=$3 label extra=() rss=0 wall
  [ "$k" -gt 0 ] && extra=(--shards "$k")
  label=$([ "$p" = 0 ] && echo serial || echo "P=$p")$([ "$k" -gt 0 ] && echo " shards $k" || echo "")
  settle
  if [ "$p" = 0 ]; then
    /usr/bin/time -v -o "$WORK/t.0" "$H" -q -s "$SEED" -m "$MEMORY" -t "$out" "${extra[@]}" "$in:/data,/label" "$out/o.h5"
    wall=$(elapsed "$WORK/t.0"); rss=$(peak "$WORK/t.0")
  else
    for r in $(seq 0 $((p - 1))); do mkdir -p "$out/tmp$r"; done
    /usr/bin/time -v -o "$WORK/t.all" mpirun --oversubscribe -n "$p" sh -c \
      'exec /usr/bin/time -v -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$WORK/t" \
      "$HM" -q -s "$SEED" -m "$MEMORY" -t "$out/tmp%r" "${extra[@]}" "$in:/data,/label" "$out/o.h5"
    wall=$(elapsed "$WORK/t.all")
    for r in $(seq 0 $((p - 1))); do v=$(peak "$WORK/t.$r"); [ "$v" -gt "$rss" ] && rss=$v; done
  fi
  local verdict=reference
  if [ "$p" = 0 ]; then
    rm -rf "$WORK/ref$k"; mkdir -p "$WORK/ref$k"; mv "$out"/o*.h5 "$WORK/ref$k/"
  elif [ "$k" -gt 0 ]; then
    (cd "$out" && md5sum o-*.h5) | sed "s#  #  #" >"$WORK/m.txt"
    (cd "$WORK/ref$k" && md5sum -c --quiet "$WORK/m.txt") >/dev/null && verdict="shards md5-identical to serial" ||
      { echo "mpi.sh: $label: shards differ from the serial run's" >&2; exit 1; }
  else
    "$PY" "$root/tests/h5same.py" "$WORK/ref0/o.h5" "$out/o.h5" >/dev/null && verdict="chunks byte-identical to serial" ||
      { echo "mpi.sh: $label: output differs from the serial run's" >&2; exit 1; }
  fi
  printf '%s\t%s\t%s\t%s\n' "$label" "$rep" "$wall" "$rss" >>"$RESULTS.tsv"
  printf '%-18s round %d: %7.2f s  peak RSS per process %5d MiB   %s\n' "$label" "$rep" "$wall" $((rss / 1024)) "$verdict"
}

echo "== $in ($(du -h "$in" | cut -f1) stored), -m $MEMORY per process, $REPS rounds, SETTLE=$SETTLE s, $(nproc) cores"
: >"$RESULTS.tsv"
for rep in $(seq 1 "$REPS"); do
  for k in 0 4; do
    run_one 0 "$k" "$rep"
    for p in $PROCS; do run_one "$p" "$k" "$rep"; done
  done
done
echo "== medians (ratios against the serial run of the same output)"
"$PY" - "$RESULTS.tsv" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
rss = collections.defaultdict(int)
for line in open(sys.argv[1]):
    label, rep, wall, kb = line.rstrip("\n").split("\t")
    rows[label].append(float(wall)); rss[label] = max(rss[label], int(kb))
print(f"| run | wall (median) | vs serial | peak RSS per process |")
print(f"|---|---|---|---|")
for label, v in rows.items():
    ref = statistics.median(rows["serial" + (" shards 4" if "shards" in label else "")])
    m = statistics.median(v)
    print(f"| {label} | {m:.2f} s | {m / ref:.2f} | {rss[label] // 1024} MiB |")
PY
