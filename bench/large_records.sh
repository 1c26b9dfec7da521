#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/large_records.sh - large records (issue 13): the direct path against the two passes, a plain copy
# (bench/seqcopy.py: one sequential libhdf5 read+write pass, same filters) and h5py + numpy in memory,
# interleaved in the same run, following docs/benchmark.md's "Protocol" (settle before each command, the input
# re-read, medians of REPS rounds).  docs/benchmark.md ("Large records") has the results.
#
#   bash bench/large_records.sh                                  1 GiB and 4 GiB of 4 MiB and 16 MiB rows
#   MATRIX="640M:16M 4G:4M" REPS=3 bash bench/large_records.sh   the issue's two acceptance cases
#
# Settings (environment):
#   MATRIX   datasets as SIZE:ROW (default "1G:4M 1G:16M 4G:4M 4G:16M"): /x (N, ROW/4) float32 rows, one row a
#            chunk, FILTER; /y (N,) int64 labels beside it.  Data: a normal sample rounded to 1/256 (gzip-1
#            about 2x), each row different
#   FILTER=gzip1 (gzip1 or none)   METHODS="direct two-pass seqcopy h5py"   REPS=3   SETTLE=25 seconds
#   MEMORY=64M (direct)   TWO_PASS_MEMORY=1G (two-pass)   SEED=1   WORK=/tmp/h5shuf-large (data kept, reused)
#   BUILD=build (scripts/build.sh runs first unless NO_BUILD=1)
# Every output is checked: the direct output byte-identical to the two passes' (same seed), seqcopy's and
# h5py's row multisets equal to the input's (bench.py check-copy / a row-hash multiset).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
MATRIX=${MATRIX:-"1G:4M 1G:16M 4G:4M 4G:16M"}
FILTER=${FILTER:-gzip1}
METHODS=${METHODS:-"direct two-pass seqcopy h5py"}
REPS=${REPS:-3}
SETTLE=${SETTLE:-25}
MEMORY=${MEMORY:-64M}
TWO_PASS_MEMORY=${TWO_PASS_MEMORY:-1G}
SEED=${SEED:-1}
WORK=${WORK:-/tmp/h5shuf-large}
BUILD=$(cd "$root" && mkdir -p "${BUILD:-build}" && cd "${BUILD:-build}" && pwd)
RESULTS=${RESULTS:-$root/bench/results/large-$(date -u +%Y%m%dT%H%M%SZ)}
die() { echo "large_records.sh: $*" >&2; exit 1; }
bytes_of() { local n=${1%[KMGkmg]}; case ${1: -1} in K|k) echo $((n << 10));; M|m) echo $((n << 20));; G|g) echo $((n << 30));; *) die "bad size '$1'";; esac; }
case $FILTER in gzip1|none) ;; *) die "FILTER is gzip1 or none";; esac
[ "${NO_BUILD:-0}" = 1 ] || H5SHUF_BUILD_TESTS=ON H5SHUF_BUILD_DIR=$BUILD bash "$root/scripts/build.sh" >/dev/null
H=$BUILD/h5shuf
mkdir -p "$WORK" "$(dirname "$RESULTS")"
out=$WORK/out

make_h5() { # size row -> the file's path (made once)
  local f=$WORK/x-$1-$2-$FILTER.h5
  if [ ! -f "$f" ]; then
    echo "== making $f" >&2
    "$PY" - "$f" "$(bytes_of "$1")" "$(bytes_of "$2")" "$FILTER" <<'PY' >&2
import sys, h5py, numpy as np
path, total, row, filt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
n, cols = total // row, row // 4
rng = np.random.default_rng(7)
base = (np.round(rng.normal(size=cols) * 256) / 256).astype('f4')
kw = dict(compression='gzip', compression_opts=1) if filt == 'gzip1' else {}
with h5py.File(path + '.tmp', 'w') as f:
    x = f.create_dataset('x', (n, cols), dtype='f4', chunks=(1, cols), **kw)
    for i in range(n):
        x[i] = np.roll(base, i * 7919) + np.float32(i % 4096)
    f.create_dataset('y', data=np.arange(n, dtype='i8'), chunks=(min(n, 65536),))
PY
    mv "$f.tmp" "$f"
  fi
  echo "$f"
}

# The check of seqcopy's and h5py's outputs: the same row multiset as the input's.
cat >"$WORK/check.py" <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, 'r') for p in sys.argv[1:3])
def hashes(d):  # one hash per row, sorted: the row multiset
    return np.sort(np.array([hash(d[i].tobytes()) for i in range(d.shape[0])]))
ok = a['x'].shape == b['x'].shape and np.array_equal(hashes(a['x']), hashes(b['x'])) and \
    np.array_equal(np.sort(a['y'][()]), np.sort(b['y'][()]))
print("rows: the input's multiset" if ok else "ROWS DIFFER")
sys.exit(0 if ok else 1)
PY

settle() { rm -rf "$out"; mkdir -p "$out"; sync; sleep "$SETTLE"; cat "$1" >/dev/null; sync; }
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }

run_one() { # label input method round
  local label=$1 in=$2 m=$3 rep=$4 cmd
  case $m in
    direct)   cmd=("$H" -q -s "$SEED" -m "$MEMORY" --strategy direct -t "$out" "$in:/x,/y" "$out/o.h5") ;;
    two-pass) cmd=("$H" -q -s "$SEED" -m "$TWO_PASS_MEMORY" --strategy two-pass -t "$out" "$in:/x,/y" "$out/o.h5") ;;
    seqcopy)  cmd=("$PY" "$root/bench/seqcopy.py" "$in" "$out/o.h5" /x /y) ;;
    h5py)     cmd=("$PY" - "$in" "$out/o.h5" "$SEED") ;;
  esac
  settle "$in"
  if [ "$m" = h5py ]; then # the in-memory script a user would write: read all, permute, write all
    /usr/bin/time -v -o "$WORK/time.txt" "${cmd[@]}" <<'PY' >"$WORK/cmd.err" 2>&1 || die "$m on $label failed"
import sys, h5py, numpy as np
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(src, 'r') as f, h5py.File(dst, 'w') as g:
    perm = np.random.default_rng(seed).permutation(f['y'].shape[0])
    for name in ('x', 'y'):
        d = f[name]
        g.create_dataset(name, data=d[()][perm], chunks=d.chunks, compression=d.compression,
                         compression_opts=d.compression_opts)
PY
  else
    /usr/bin/time -v -o "$WORK/time.txt" "${cmd[@]}" >"$WORK/cmd.err" 2>&1 || { tail -3 "$WORK/cmd.err"; die "$m on $label failed"; }
  fi
  local elapsed rss wall verdict
  elapsed=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
  wall=$(seconds "$elapsed")
  case $m in
    direct)   mv "$out/o.h5" "$WORK/direct.h5"; verdict="kept for the byte check" ;;
    two-pass) if [ -f "$WORK/direct.h5" ]; then
                cmp -s "$out/o.h5" "$WORK/direct.h5" || die "$label: the direct output differs from the two passes'"
                verdict="byte-identical to the direct output"
              else verdict="-"; fi ;;
    *)        verdict=$("$PY" "$WORK/check.py" "$in" "$out/o.h5") || die "$m on $label: $verdict" ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$m" "$rep" "$wall" "$rss" >>"$RESULTS.tsv"
  printf '%-12s %-9s round %d: %8.2f s %7d MiB   %s\n' "$label" "$m" "$rep" "$wall" $((rss / 1024)) "$verdict"
}

echo "== runs: $MATRIX, $FILTER, $REPS rounds, SETTLE=$SETTLE s; direct -m $MEMORY, two-pass -m $TWO_PASS_MEMORY"
: >"$RESULTS.tsv"
for spec in $MATRIX; do
  IFS=: read -r size row <<<"$spec"
  in=$(make_h5 "$size" "$row")
  for rep in $(seq 1 "$REPS"); do
    rm -f "$WORK/direct.h5"
    for m in $METHODS; do run_one "$size/$row" "$in" "$m" "$rep"; done
  done
done
rm -rf "$out" "$WORK/direct.h5"
"$PY" - "$RESULTS.tsv" <<'PY' | tee "$RESULTS.md"
import sys, statistics
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
labels = list(dict.fromkeys(r[0] for r in rows))
methods = list(dict.fromkeys(r[1] for r in rows))
med = lambda l, m, k: statistics.median(float(r[k]) for r in rows if r[0] == l and r[1] == m)
print("| records | " + " | ".join(methods) + " | direct / seqcopy | direct / two-pass | peak RSS (MiB): " +
      ", ".join(methods) + " |")
print("|---" * (len(methods) + 4) + "|")
for l in labels:
    t = {m: med(l, m, 3) for m in methods if any(r[0] == l and r[1] == m for r in rows)}
    rss = {m: med(l, m, 4) / 1024 for m in t}
    ratio = lambda a, b: "%.2f" % (t[a] / t[b]) if a in t and b in t else "-"
    print("| %s | %s | %s | %s | %s |" % (l, " | ".join("%.2f s" % t[m] if m in t else "-" for m in methods),
          ratio("direct", "seqcopy"), ratio("direct", "two-pass"), ", ".join("%.0f" % rss[m] for m in t)))
PY
echo "results: $RESULTS.md (every run: $RESULTS.tsv)"
