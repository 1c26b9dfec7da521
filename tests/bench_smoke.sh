#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench_smoke: bench/run.sh end to end on a 4 MiB matrix (no settling sleep, one round): every method runs
# and every output passes the harness's check; then an h5shuf whose output has two rows swapped must make
# the harness fail.  Asserts no timing.
#   bash tests/bench_smoke.sh BUILD_DIR     (BUILD_DIR holds h5shuf, h5shuf_gendata and plugins/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; [ -f "$work/log" ] && cat "$work/log"; exit 1; }
bench() { env REPS=1 SETTLE=0 WORK="$work" RESULTS="$work/res" BUILD="$build" NO_BUILD=1 "$@" \
  bash "$root/bench/run.sh" >"$work/log" 2>&1; }

# Every method on a raw 1 KiB-row dataset (text methods included) and a zstd 64 KiB-row one.
bench MATRIX="4M:none:1K 4M:zstd3:64K" || fail "run.sh exited $?"
want=(4M-none-1K:h5shuf 4M-none-1K:h5repack 4M-none-1K:h5py 4M-none-1K:shuf
      4M-zstd3-64K:h5shuf 4M-zstd3-64K:h5repack 4M-zstd3-64K:h5py)
for w in "${want[@]}"; do
  grep -Eq "^${w%%:*} +${w#*:} +round 1: .* check ok: " "$work/log" || fail "no checked run of $w"
done
[ "$(grep -c ' round 1: ' "$work/log")" -eq ${#want[@]} ] || fail "runs other than the ${#want[@]} expected"
grep -q '^| 4M-none-1K | h5shuf --memory 128M | 1 |' "$work/res.md" || fail "no h5shuf row in the table"
grep -q '^| 4M-zstd3-64K | [0-9.]* | [0-9.]* | [0-9.]* |' "$work/res.md" || fail "no ratio row in the table"
echo "PASS every method's output passed its check, the table has the runs and the ratios"

# The check must catch a wrong order: this h5shuf swaps output rows 0 and 1 after a correct run.
cat >"$work/swapping_h5shuf" <<SH
#!/bin/sh
"$build/h5shuf" "\$@" || exit
for a; do last=\$a; done
/usr/bin/python3 -c 'import sys, h5py
x = h5py.File(sys.argv[1], "r+")["x"]
x[0:2] = x[0:2][::-1]' "\${last%:/x}"
SH
chmod +x "$work/swapping_h5shuf"
if bench MATRIX="4M:none:1K" METHODS=h5shuf H5SHUF="$work/swapping_h5shuf"; then
  fail "run.sh passed an output with two rows swapped"
fi
if ! grep -q "check FAILED: check-h5shuf .*: output row 0 is not input row" "$work/log" ||
   ! grep -q "h5shuf on 4M-none-1K: the output failed its check" "$work/log"; then
  fail "run.sh failed, but not on the order check"
fi
echo "PASS an output with two rows swapped fails the harness's check"
