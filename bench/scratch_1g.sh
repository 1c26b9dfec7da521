#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 3's measurement: scratch bytes and wall time with and without scratch compression on the 1 GiB
# benchmark data (bench/run.sh's 1G:gzip4:1K file, generated here when missing), output -c zstd:3+shuffle,
# interleaved, following docs/benchmark.md's "Protocol"; also checks the output through h5py + the plugin (a
# permutation, the contract's order) and reads it whole with h5dump.
#   bash bench/scratch_1g.sh [WORKDIR] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/h5shuf-bench}
rounds=${2:-2}
in=$work/data/floats-1G-1K-gzip4.h5
mkdir -p "$work/data"
[ -f "$in" ] || { "$here/build/h5shuf_gendata" floats "$in.tmp" 1048576 256 4 && mv "$in.tmp" "$in"; }
settle() { rm -f "$work"/out-*.h5; sync; sleep 25; cat "$in" >/dev/null; sync; }
for r in $(seq 1 "$rounds"); do
  for scratch in none zstd:1 zstd:1+shuffle; do
    settle
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$here/build/h5shuf" -v -f -s 1 -m 64M -t "$work" \
      --scratch-compression "$scratch" -c zstd:3+shuffle "$in:/x" "$work/out-z.h5:/x" 2>"$work/err.txt"
    bytes=$(sed -n 's/.* \([0-9]*\) scratch bytes/\1/p' "$work/err.txt")
    echo "scratch=$scratch wall_s=$(cut -d' ' -f1 "$work/time.txt") peak_rss_kib=$(cut -d' ' -f2 "$work/time.txt") scratch_bytes=$bytes output_bytes=$(stat -c %s "$work/out-z.h5")"
  done
done
HDF5_PLUGIN_PATH=$here/build/plugins /usr/bin/python3 - "$in" "$work/out-z.h5" <<'PY'
import sys, h5py, numpy as np
from numpy.random import Philox
a, b = h5py.File(sys.argv[1])['x'][...], h5py.File(sys.argv[2])['x']
seed = int(h5py.File(sys.argv[2]).attrs['h5shuf_seed']); n = a.shape[0]
order = np.lexsort((np.arange(n), Philox(key=seed, counter=2**256 - 1).random_raw(4 * n)[::4]))
for s in range(0, n, 131072):
    assert (b[s:s + 131072] == a[order[s:s + 131072]]).all(), s
print("h5py: zstd output is the contract's permutation of the input")
PY
s=$(date +%s); HDF5_PLUGIN_PATH=$here/build/plugins h5dump -d /x "$work/out-z.h5" | tail -c 300 | grep -q "}" \
  && echo "h5dump: read the whole zstd dataset ($(( $(date +%s) - s )) s)"
