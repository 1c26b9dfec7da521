#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/checkpoint_cost.sh - what checkpoints cost and what a resume saves (issue 26), following
# docs/benchmark.md's "Protocol": before each timed command the old outputs and state are removed, sync, sleep
# SETTLE s, the input is read, sync; the commands of a case are interleaved, REPS rounds, medians.
#
#   bash bench/checkpoint_cost.sh                1 GiB raw and 1 GiB gzip-4 (X with its labels)
#   CASES="64M:none" REPS=1 SETTLE=1 bash bench/checkpoint_cost.sh    a quick look
#
# Per case, interleaved: h5shuf as it runs by default (checkpoints every --checkpoint, default 1G,60: a
# 1 GiB X with its labels is over one interval, so it keeps a state and commits, not synced), the same
# with --checkpoint off (no state), with synced checkpoints (1G,60,sync: every checkpoint fsync'ed, the
# scratch written to the disk) and with CHECKPOINT (default 128M: about eight commits a pass);
# every output must have the first one's md5.  Then the resume: a run killed (SIGKILL) at KILL1 (default
# 0.3) and at KILL2 (0.75) of the default run's median time, and the --resume that follows, timed (the
# work it redoes is the interval, the work it saves the rest), with its output's md5 checked.
#
# Settings: CASES (SIZE:FILTER, FILTER none|gzip4; rows of 1 KiB), REPS=3, SETTLE=25, MEMORY=128M,
# CHECKPOINT=128M, KILL1, KILL2, WORK=/tmp/h5shuf-ckpt, BUILD=build.
# MPI=P: the same with `mpirun -n P h5shuf-mpi` (each process's scratch in out/r%r, -m per process; the
# kill is SIGKILL to the newest process, then mpirun ends the others).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
CASES=${CASES:-"1G:none 1G:gzip4"}
REPS=${REPS:-3} SETTLE=${SETTLE:-25} MEMORY=${MEMORY:-128M} CHECKPOINT=${CHECKPOINT:-128M}
KILL1=${KILL1:-0.3} KILL2=${KILL2:-0.75}
WORK=${WORK:-/tmp/h5shuf-ckpt} BUILD=${BUILD:-$root/build}
H5SHUF=$BUILD/h5shuf GENDATA=$BUILD/h5shuf_gendata PY=/usr/bin/python3
MPI=${MPI:-}
if [ -n "$MPI" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    H=(mpirun --oversubscribe --bind-to none -n "$MPI" "$BUILD/h5shuf-mpi") TMP="$WORK/out/r%r"
else
    H=("$H5SHUF") TMP="$WORK/out"
fi
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
clean() { rm -rf "$WORK/out"/* "$WORK/out"/.[!.]*; for ((r = 0; r < ${MPI:-0}; r++)); do mkdir "$WORK/out/r$r"; done; }
settle() { clean; sync; sleep "$SETTLE"; cat "$1" >/dev/null; sync; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
timed() { # INPUT CMD...: protocol, then the wall seconds of CMD
    local in=$1; shift
    settle "$in"
    local t0; t0=$(now)
    "$@" >/dev/null
    since "$t0"
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f (%.2f-%.2f)", m, v[1], v[NR] }'; }
first() { echo "${1%% *}"; }

echo "# checkpoint cost, $(date -u '+%Y-%m-%d %H:%M UTC'), $("$H5SHUF" --version 2>&1 | head -1)${MPI:+, h5shuf-mpi P=$MPI}, -m $MEMORY, $REPS rounds, settle $SETTLE s"
echo
echo "| case | default s | --checkpoint off s | default / off | --checkpoint 1G,60,sync s | sync / off | --checkpoint $CHECKPOINT s | $CHECKPOINT / off |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
declare -A defaults
for c in $CASES; do
    IFS=: read -r size filt <<<"$c"
    in=$(data_of "$size" "$filt")
    A=(-q -s 1 -m "$MEMORY" -t "$TMP" "$in:/x,/label" "$WORK/out/o.h5")
    on="" off="" small="" synced="" ref=""
    for ((r = 0; r < REPS; r++)); do
        a=$(timed "$in" "${H[@]}" "${A[@]}")
        m=$(md5sum <"$WORK/out/o.h5")
        [ -n "$ref" ] || ref=$m
        b=$(timed "$in" "${H[@]}" --checkpoint off "${A[@]}")
        mb=$(md5sum <"$WORK/out/o.h5")
        y=$(timed "$in" "${H[@]}" --checkpoint 1G,60,sync "${A[@]}")
        my=$(md5sum <"$WORK/out/o.h5")
        [ "$my" = "$ref" ] || { echo "checkpoint_cost.sh: $c: synced checkpoints write other bytes" >&2; exit 1; }
        synced+="$y "
        s=$(timed "$in" "${H[@]}" --checkpoint "$CHECKPOINT" "${A[@]}")
        ms=$(md5sum <"$WORK/out/o.h5")
        [ "$m" = "$ref" ] && [ "$mb" = "$ref" ] || { echo "checkpoint_cost.sh: $c: outputs differ" >&2; exit 1; }
        [ "$ms" = "$ref" ] || echo "checkpoint_cost.sh: $c: --checkpoint $CHECKPOINT writes other bytes (allowed: documented)" >&2
        on+="$a " off+="$b " small+="$s "
    done
    mo=$(echo "$on" | median) mf=$(echo "$off" | median) msm=$(echo "$small" | median) msy=$(echo "$synced" | median)
    defaults[$c]=$(first "$mo")
    r1=$(awk -v a="$(first "$mo")" -v b="$(first "$mf")" 'BEGIN { printf "%.3f", a / b }')
    r2=$(awk -v a="$(first "$msm")" -v b="$(first "$mf")" 'BEGIN { printf "%.3f", a / b }')
    r3=$(awk -v a="$(first "$msy")" -v b="$(first "$mf")" 'BEGIN { printf "%.3f", a / b }')
    echo "| $size $filt, /x + /label | $mo | $mf | $r1 | $msy | $r3 | $msm | $r2 |"
done
echo
echo "Resume after a SIGKILL (--checkpoint $CHECKPOINT; killed at a fraction of the default run's median time):"
echo
echo "| case | killed at | state kept MB | resume s | whole run s | resume / whole |"
echo "|---|---:|---:|---:|---:|---:|"
for c in $CASES; do
    IFS=: read -r size filt <<<"$c"
    in=$(data_of "$size" "$filt")
    A=(-q -s 1 -m "$MEMORY" -t "$TMP" --checkpoint "$CHECKPOINT" "$in:/x,/label" "$WORK/out/o.h5")
    whole=$(timed "$in" "${H[@]}" "${A[@]}")
    ref=$(md5sum <"$WORK/out/o.h5")
    for f in $KILL1 $KILL2; do
        settle "$in"
        at=$(awk -v t="${defaults[$c]}" -v f="$f" 'BEGIN { printf "%.2f", t * f }')
        "${H[@]}" "${A[@]}" --resume >/dev/null 2>&1 &
        pid=$!
        sleep "$at"
        if [ -n "$MPI" ]; then pkill -9 -n -f "$BUILD/h5shuf-mpi" || true; else kill -9 "$pid" 2>/dev/null || true; fi
        wait "$pid" 2>/dev/null || true
        kept=$(du -sm "$WORK/out" | cut -f1)
        sync; sleep "$SETTLE"; cat "$in" >/dev/null; sync
        t0=$(now)
        "${H[@]}" "${A[@]:1}" --resume 2>"$WORK/resume.err" >/dev/null
        t=$(since "$t0")
        [ "$(md5sum <"$WORK/out/o.h5")" = "$ref" ] || { echo "checkpoint_cost.sh: $c: the resumed output differs" >&2; exit 1; }
        took=$(grep -o 'resuming from [^:]*: .*' "$WORK/resume.err" | sed 's/^resuming from [^:]*: //' | head -1)
        echo "| $size $filt | ${at} s ($f): ${took:-nothing taken over} | $kept | $t | $whole | $(awk -v a="$t" -v b="$whole" 'BEGIN { printf "%.2f", a / b }') |"
    done
done
