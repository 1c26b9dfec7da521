#!/usr/bin/env bash
# The core issue's acceptance measurement: 1 GiB of float32 rows (1M x 256, gzip-4, 1 MiB chunks)
# shuffled with --memory 64M and --memory 2G (outputs must be byte-identical), against h5repack -f GZIP=4
# on the same file, interleaved, following ../shared/BENCHMARKING.md (sync, settle, re-read the input).
#   bash bench/core_1g.sh [WORKDIR] [ROUNDS]     (build/ must be built)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/h5shuf-bench}
rounds=${2:-2}
mkdir -p "$work"
in=$work/floats-1g-gzip4.h5
[ -f "$in" ] || "$here/build/h5shuf_gendata" floats "$in" 1048576 256 4

settle() { rm -f "$work"/out-*.h5; sync; sleep 25; cat "$in" >/dev/null; sync; }
measure() { # name, command...: prints "name wall_s peak_rss_kib"
  local name=$1; shift
  settle
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/err.txt" || { cat "$work/err.txt"; exit 1; }
  echo "$name $(cat "$work/time.txt")"
}
{
  for r in $(seq 1 "$rounds"); do
    measure h5shuf-64M "$here/build/h5shuf" -f -s 1 -m 64M -t "$work" "$in" "$work/out-64m.h5"
    md5_64=$(md5sum <"$work/out-64m.h5")
    /usr/bin/python3 - "$in" "$work/out-64m.h5" <<'PY'
import sys, h5py, numpy as np
from numpy.random import Philox
a, b = h5py.File(sys.argv[1])['x'][...], h5py.File(sys.argv[2])['x']
seed = int(h5py.File(sys.argv[2]).attrs['h5shuf_seed']); n = a.shape[0]
order = np.lexsort((np.arange(n), Philox(key=seed, counter=2**256 - 1).random_raw(4 * n)[::4]))
for s in range(0, n, 131072):  # output block == the input's rows in the contract's order
    assert (b[s:s + 131072] == a[order[s:s + 131072]]).all(), s
print("check: output is the contract's permutation of the input", file=sys.stderr)
PY
    measure h5repack-gzip4 h5repack -f GZIP=4 "$in" "$work/out-repack.h5"
    measure h5shuf-2G "$here/build/h5shuf" -f -s 1 -m 2G -t "$work" "$in" "$work/out-2g.h5"
    md5_2g=$(md5sum <"$work/out-2g.h5")
    [ "$md5_64" = "$md5_2g" ] && echo "identical: --memory 64M and 2G outputs have the same bytes ($md5_64)" \
      || { echo "DIFFERENT outputs for 64M and 2G"; exit 1; }
  done
} | tee "$work/results.txt"
