#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/fsync_cost.sh - what the durable commit costs (issue 12): h5shuf as it is (the output fsync'ed
# before its rename, the directory after) against the same binary under eatmydata (Debian's libeatmydata,
# an LD_PRELOAD that makes fsync a no-op), interleaved, following docs/benchmark.md's "Protocol": before each
# timed command the old output is removed, sync, sleep SETTLE s, the input is read, sync.  Both commands
# must write the same bytes (md5 compared every round): the only difference is the syncs.
#
#   bash bench/fsync_cost.sh                  1 GiB raw and 1 GiB gzip-4 (X with its labels), 64 MiB raw
#   CASES="64M:none" REPS=1 SETTLE=1 bash bench/fsync_cost.sh    a quick look
#
# Settings: CASES (SIZE:FILTER, FILTER none|gzip4; rows of 1 KiB), REPS=3, SETTLE=25, MEMORY=128M,
# WORK=/tmp/h5shuf-fsync, BUILD=build.  Prints a table of medians (min-max) and the ratio synced/unsynced.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CASES=${CASES:-"1G:none 1G:gzip4 64M:none"}
REPS=${REPS:-3} SETTLE=${SETTLE:-25} MEMORY=${MEMORY:-128M}
WORK=${WORK:-/tmp/h5shuf-fsync} BUILD=${BUILD:-$root/build}
H5SHUF=$BUILD/h5shuf GENDATA=$BUILD/h5shuf_gendata PY=/usr/bin/python3
command -v eatmydata >/dev/null || { echo "fsync_cost.sh: eatmydata is not installed (apt-get install eatmydata)" >&2; exit 1; }
mkdir -p "$WORK/data"
rm -rf "$WORK/out"
mkdir "$WORK/out"
trap 'rm -rf "$WORK/out"' EXIT

bytes_of() { local n=${1%[KMG]}; case ${1: -1} in K) echo $((n << 10));; M) echo $((n << 20));; G) echo $((n << 30));; esac; }
data_of() { # SIZE FILTER: float32 rows of 1 KiB (/x) with int64 labels (/label, chunks of 65536 rows)
    local path=$WORK/data/x-$1-$2.h5 rows=$(( $(bytes_of "$1") / 1024 ))
    if [ ! -e "$path" ]; then
        "$GENDATA" floats "$path.tmp" "$rows" 256 $([ "$2" = gzip4 ] && echo 4) >&2
        $PY -c 'import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    n = f["x"].shape[0]
    f.create_dataset("label", data=np.arange(n, dtype=np.int64) % 1000, chunks=(min(n, 65536),))' "$path.tmp"
        mv "$path.tmp" "$path"
    fi
    echo "$path"
}
timed() { # OUT INPUT CMD...: protocol, then the wall seconds of CMD
    local out=$1 in=$2; shift 2
    rm -f "$out"; sync; sleep "$SETTLE"; cat "$in" >/dev/null; sync
    local t0 t1; t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f (%.2f-%.2f)", m, v[1], v[NR] }'; }

echo "# fsync cost, $(date -u '+%Y-%m-%d %H:%M UTC'), $("$H5SHUF" --version 2>&1 | head -1), -m $MEMORY, $REPS rounds, settle $SETTLE s"
echo
echo "| case | output MB | synced s | unsynced (eatmydata) s | synced / unsynced |"
echo "|---|---:|---:|---:|---:|"
for c in $CASES; do
    IFS=: read -r size filt <<<"$c"
    in=$(data_of "$size" "$filt")
    synced="" unsynced=""
    for ((r = 0; r < REPS; r++)); do
        a=$(timed "$WORK/out/a.h5" "$in" "$H5SHUF" -q -f -s 1 -m "$MEMORY" -t "$WORK/out" "$in" "$WORK/out/a.h5")
        ma=$(md5sum <"$WORK/out/a.h5")
        b=$(timed "$WORK/out/b.h5" "$in" eatmydata "$H5SHUF" -q -f -s 1 -m "$MEMORY" -t "$WORK/out" "$in" "$WORK/out/b.h5")
        mb=$(md5sum <"$WORK/out/b.h5")
        [ "$ma" = "$mb" ] || { echo "fsync_cost.sh: $c: the two outputs differ" >&2; exit 1; }
        synced+="$a " unsynced+="$b "
    done
    mbytes=$(( $(stat -c %s "$WORK/out/a.h5") / 1000000 ))
    ms=$(echo "$synced" | median) mu=$(echo "$unsynced" | median)
    ratio=$(awk -v a="${ms%% *}" -v b="${mu%% *}" 'BEGIN { printf "%.2f", a / b }')
    echo "| $size $filt, /x + /label | $mbytes | $ms | $mu | $ratio |"
done
