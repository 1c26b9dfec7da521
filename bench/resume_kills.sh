#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/resume_kills.sh - real kills (issue 26's acceptance): a 1 GiB gzip-4 run (X with its labels) at
# -m 32M is SIGKILLed at KILLS (default 20) random times spread over the run, each time continued with
# --resume (the resumes themselves are killed too, until the count is reached), then run to its end.  The
# output must have the uninterrupted run's md5 and nothing may be left beside it or in the scratch
# directory.  Prints, for each kill, when it came and what the next resume took over (its plan line), and
# the work redone: the time of all runs together less the uninterrupted run's, per kill.
#
#   bash bench/resume_kills.sh
#   SIZE=64M KILLS=5 bash bench/resume_kills.sh      a quick look
#
# Settings: SIZE=1G, FILTER=gzip4, MEMORY=32M, KILLS=20, SEED=1 (of the kill times), CHECKPOINT (default:
# the tool's), WORK=/tmp/h5shuf-kills, BUILD=build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-1G} FILTER=${FILTER:-gzip4} MEMORY=${MEMORY:-32M} KILLS=${KILLS:-20} SEED=${SEED:-1}
WORK=${WORK:-/tmp/h5shuf-kills} BUILD=${BUILD:-$root/build}
H5SHUF=$BUILD/h5shuf GENDATA=$BUILD/h5shuf_gendata PY=/usr/bin/python3
mkdir -p "$WORK/data"
rm -rf "$WORK/out" "$WORK/s"
mkdir "$WORK/out" "$WORK/s"
trap 'rm -rf "$WORK/out" "$WORK/s"' EXIT
bytes_of() { local n=${1%[KMG]}; case ${1: -1} in K) echo $((n << 10));; M) echo $((n << 20));; G) echo $((n << 30));; esac; }
in=$WORK/data/x-$SIZE-$FILTER.h5
if [ ! -e "$in" ]; then
    "$GENDATA" floats "$in.tmp" $(( $(bytes_of "$SIZE") / 1024 )) 256 $([ "$FILTER" = gzip4 ] && echo 4) >&2
    $PY -c 'import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    n = f["x"].shape[0]
    f.create_dataset("label", data=np.arange(n, dtype=np.int64) % 1000, chunks=(min(n, 65536),))' "$in.tmp"
    mv "$in.tmp" "$in"
fi
A=(-s 1 -m "$MEMORY" -t "$WORK/s" ${CHECKPOINT:+--checkpoint "$CHECKPOINT"} "$in:/x,/label" "$WORK/out/o.h5")
now() { date +%s.%N; }
t0=$(now)
"$H5SHUF" -q "${A[@]}"
whole=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
ref=$(md5sum <"$WORK/out/o.h5")
rm -f "$WORK/out/o.h5"
echo "# $KILLS kills of a $SIZE $FILTER run at -m $MEMORY ($("$H5SHUF" --version | head -1)); uninterrupted: $whole s"
# the kill times: each run (the first, then each resume) is killed after a delay drawn uniformly (seeded)
# from [0.5, 3 x the run's time / KILLS] s, so that the KILLS kills are spread over the whole run
mapfile -t at < <($PY -c "import random,sys; r=random.Random($SEED); print('\n'.join('%.2f' % r.uniform(0.5, max(0.6, 3 * $whole / $KILLS)) for _ in range($KILLS)))")
total0=$(now)
for ((k = 0; k < KILLS; k++)); do
    "$H5SHUF" --resume "${A[@]}" >/dev/null 2>"$WORK/err.$k" &
    pid=$!
    sleep "${at[$k]}"
    if kill -9 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null || true
        echo "kill $((k + 1)) at ${at[$k]} s into the run; it had taken over: $(grep -o 'resuming from [^:]*: .*' "$WORK/err.$k" | sed 's/^resuming from [^:]*: //' || echo 'nothing (a fresh start)')"
    else
        wait "$pid" || true
        echo "kill $((k + 1)) at ${at[$k]} s: the run had finished" && break
    fi
done
[ -e "$WORK/out/o.h5" ] || "$H5SHUF" --resume "${A[@]}" 2>"$WORK/err.last" >/dev/null
total=$(awk -v a="$total0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
left=$(ls -A "$WORK/s" | wc -l)
echo "finished: $(grep -o 'resuming from [^:]*: .*' "$WORK/err.last" 2>/dev/null | sed 's/^resuming from [^:]*: //')"
if [ "$(md5sum <"$WORK/out/o.h5")" = "$ref" ] && [ "$left" = 0 ] && [ "$(ls -A "$WORK/out")" = o.h5 ]; then
    echo "ok: the uninterrupted run's md5, nothing left"
else
    echo "NOT OK: md5 $(md5sum <"$WORK/out/o.h5") vs $ref, left $left"
    exit 1
fi
echo "all runs together: $total s; the kills cost $(awk -v t="$total" -v w="$whole" -v k="$KILLS" 'BEGIN { printf "%.2f s of redone work each (%.2f s in all, beyond the %.2f s of the run)", (t - w) / k, t - w, w }')"
