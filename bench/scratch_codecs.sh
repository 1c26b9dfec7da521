#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/scratch_codecs.sh - the scratch's codec candidates on the rows bench/outofcore.sh shuffles (issue 52):
# 262144 rows of float32 x 256 (normal draws rounded to 1/256, bench/outofcore.py's blocks 0-3: 256 MiB),
# byte-shuffled in chunks of 1 MiB as the scratch's "+shuffle" stores them, then each codec's single-thread
# speed and ratio by its own command-line benchmark on blocks of 1 MiB (zstd -b, lz4 -b; 3 iterations).
# The scratch is written once and read once, so a codec costs its compression plus its decompression.
# Usage: bash bench/scratch_codecs.sh   (needs /usr/bin/python3 with numpy and h5py, and the zstd and lz4 tools)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for t in zstd lz4; do command -v $t >/dev/null || { echo "scratch_codecs.sh: $t not found (apt-get install $t)" >&2; exit 1; }; done
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-codecs.XXXXXX")
trap 'rm -rf "$W"' EXIT
/usr/bin/python3 - "$root/bench" "$W/shuf.bin" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from outofcore import block_rows  # noqa: E402
x = np.concatenate([block_rows(b, 1 << 30)[0] for b in range(4)])
c = x.view(np.uint8).reshape(-1, (1 << 20) // 4, 4)  # 1 MiB chunks of 4-byte elements
open(sys.argv[2], "wb").write(np.ascontiguousarray(c.transpose(0, 2, 1)).tobytes())
PY
echo "# $(zstd --version | head -1); $(lz4 --version 2>&1 | head -1); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "| codec | ratio | compress MB/s | decompress MB/s |"
echo "|---|---:|---:|---:|"
row() { # name, then the tool's last result line
  local name=$1 line=$2
  echo "$line" | sed -E 's/.*\(x?([0-9.]+)\), *([0-9.]+) MB\/s *, *([0-9.]+) MB\/s.*/| '"$name"' | \1 | \2 | \3 |/'
}
for lvl in 1 --fast=1 --fast=3; do
  flag=$lvl; [ "$lvl" = 1 ] && flag=-1
  row "zstd $lvl + shuffle" "$(zstd -b $flag -i3 -B1048576 "$W/shuf.bin" 2>&1 | tr '\r' '\n' | grep 'MB/s.*MB/s' | tail -1)"
done
row "lz4 + shuffle" "$(lz4 -b1 -i3 -B1048576 "$W/shuf.bin" 2>&1 | tr '\r' '\n' | grep 'MB/s.*MB/s' | tail -1)"
