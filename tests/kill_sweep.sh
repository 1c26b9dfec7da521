#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kill_sweep.sh - a resumable run killed at every one of its checkpoint and write points in turn, then
# continued with --resume (issue 26).  With a tool built with fault points (h5shuf-fault), H5SHUF_KILL_AT=N
# makes the run SIGKILL itself at its Nth point (a journal record, a step of a commit, a write of the
# scratch or an output: fault.h), and H5SHUF_KILL_COUNT=FILE counts the points of a whole run.  For every
# N of a small run of each kind (two passes, with recursion and with restarts, one pass, the direct path,
# shards, a split with a head and an index, variable-length rows from h5py): the run is killed at N; the
# same command with --resume and another memory budget and thread count, killed again at a later point
# every third time, then resumed to the end, must write the files an uninterrupted run writes (md5 of
# every one), and leave nothing else in the scratch and output directories.  Prints the points swept.
# Points repeated at one site one after the other (H5SHUF_KILL_TRACE: the writes between two journal
# records) are visited at the first and the last of each run only: the middle ones leave the same state
# with more or fewer of the same writes, which the resume discards alike.
# Usage: bash tests/kill_sweep.sh PATH/TO/h5shuf-fault PATH/TO/h5shuf_gendata [STRIDE]
# STRIDE (default 1): every STRIDE-th point only, and the last (a sanitizer build's runs are slower).
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2 STRIDE=${3:-1}
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-kill.XXXXXX")
trap 'rm -rf "$W"' EXIT
failed=0 swept=0 kinds=0 visited=0 total=0
"$GEN" floats "$W/in.h5" 24000 16 4 >/dev/null || exit 1
"$GEN" floats "$W/in2.h5" 9000 16 0 >/dev/null || exit 1
have_h5py=0
if "$PY" -c 'import h5py, numpy' 2>/dev/null; then
    have_h5py=1
    "$PY" - "$W/v.h5" <<'EOF' || exit 1
import sys, h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File(sys.argv[1], "w") as f:
    t = h5py.vlen_dtype(np.int32)
    rows = [rng.integers(0, 50000, rng.integers(1, 40), dtype=np.int32) for i in range(20000)]
    d = f.create_dataset("tok", (20000,), dtype=t, chunks=(500,), compression="gzip")
    d[:] = np.array(rows, dtype=object)
    f.create_dataset("len", data=np.array([len(x) for x in d[:]], dtype=np.int64), chunks=(1000,))
EOF
fi
isum=$(cat "$W/in.h5" "$W/in2.h5" | md5sum)
P=$(nproc 2>/dev/null || echo 1)
[ "$P" -gt 4 ] && P=4

# outputs DIR: md5 of every file in DIR (sorted by name), one line.  With CMP=gather (a scatter's pile
# file, whose bytes depend on the run's budget, threads and checkpoints): each file's name and the md5 of
# what `h5shuf gather` writes from it, which must be the uninterrupted scatter's.
outputs() {
    (cd "$1" && for f in *; do
        if [ "${CMP:-}" = gather ] && [ "${f%.h5}" != "$f" ]; then
            rm -f "$1.g.h5"
            "$H" -q gather -j 1 "$f" "$1.g.h5" >/dev/null 2>"$1.g.err" || head -c 200 "$1.g.err"
            echo "$f gathered $(md5sum <"$1.g.h5" 2>&1)"
            rm -f "$1.g.h5" "$1.g.err"
        else
            echo "$f $(md5sum <"$f")"
        fi
    done) | tr '\n' ' '
}

# one K N2 NAME OUTNAME ARGS...: kill at point N, resume (killed again at N2 when N2 > 0), resume to the end,
# in worker K's directories; prints "ok" or what went wrong.
one() {
    local k=$1 n=$2 n2=$3 name=$4 out=$5
    shift 5
    local S="$W/s.$k" O="$W/o.$k" rc rc2 left
    rm -rf "$S" "$O"
    mkdir "$S" "$O"
    H5SHUF_KILL_AT=$n "$H" -q -t "$S" "$@" "$O/$out" >/dev/null 2>"$W/e.$k"
    rc=$?
    rc2=137
    if [ "$n2" -gt 0 ]; then # (a resume may finish before its point n2: then it is the last run)
        H5SHUF_KILL_AT=$n2 "$H" -q -t "$S" --resume $RESUME "$@" "$O/$out" >/dev/null 2>>"$W/e.$k"
        rc2=$?
    fi
    if [ "$rc2" = 137 ]; then
        "$H" -q -t "$S" --resume $RESUME "$@" "$O/$out" >/dev/null 2>>"$W/e.$k"
        rc2=$?
    fi
    left=("$S"/*)
    local got
    got=$(outputs "$O")
    if [ "$rc" != 137 ] && [ "$rc" != 0 ]; then
        echo "first run exit $rc: $(head -c 300 "$W/e.$k")"
    elif [ "$rc2" != 0 ]; then
        echo "resume exit $rc2: $(head -c 300 "$W/e.$k")"
    elif [ "$got" != "$ref" ]; then
        echo "outputs differ: $got"
    elif [ ${#left[@]} != 0 ]; then
        echo "left in the scratch directory: ${left[*]}"
    else
        echo ok
    fi
}

# sweep NAME OUTNAME ARGS...: every point of the kind.
sweep() {
    local name=$1 out=$2
    shift 2
    local R="$W/ref"
    rm -rf "$R" "$W/sref"
    mkdir "$R" "$W/sref"
    # the uninterrupted run (checkpointing as the killed ones, with --resume and nothing to resume)
    rm -f "$W/trace"
    H5SHUF_KILL_COUNT="$W/count" H5SHUF_KILL_TRACE="$W/trace" "$H" -q -t "$W/sref" --resume "$@" "$R/$out" 2>"$W/eref" || {
        echo "not ok - $name: the uninterrupted run failed: $(head -c 300 "$W/eref")"
        failed=$((failed + 1))
        return
    }
    ref=$(outputs "$R")
    local points
    points=$(cat "$W/count")
    # The points to visit: of each run of consecutive points at the same site (the trace's "N SITE" lines:
    # e.g. the pile writes, or the log writes, between two journal records), the first and the last;
    # every other point (journal records, syncs, commit steps) itself.  A kill inside such a run leaves
    # the state its first or last point leaves with fewer or more of the same writes after the last
    # record, which the resume discards alike.  Without a trace (a tool without it): every point.
    local all=()
    if [ -s "$W/trace" ] && [ "$(wc -l <"$W/trace")" = "$points" ]; then
        mapfile -t all < <(sort -n "$W/trace" |
            awk '$2 != site { if (n > 1) print last; print $1; site = $2; n = 0 } { n++; last = $1 } END { if (n > 1) print last }')
    else
        mapfile -t all < <(seq 1 "$points")
    fi
    local sel=() i
    for ((i = 0; i < ${#all[@]}; i += STRIDE)); do sel+=("${all[$i]}"); done
    [ "${sel[-1]}" = "${all[-1]}" ] || sel+=("${all[-1]}") # (the last point too)
    local bad=0 k j
    for ((j = 0; j < ${#sel[@]}; j += P)); do
        for ((k = 1; k <= P && j + k - 1 < ${#sel[@]}; k++)); do
            local at=${sel[$((j + k - 1))]} n2=0
            [ $((at % 3)) = 0 ] && n2=$(((at * 7) % points + 1))
            (one "$k" "$at" "$n2" "$name" "$out" --resume "$@" >"$W/r.$k") &
        done
        wait
        for ((k = 1; k <= P && j + k - 1 < ${#sel[@]}; k++)); do
            local at=${sel[$((j + k - 1))]} r
            r=$(cat "$W/r.$k")
            if [ "$r" != ok ]; then
                [ "$bad" -lt 5 ] && echo "not ok - $name: killed at point $at of $points: $r"
                bad=$((bad + 1))
            fi
            swept=$((swept + 1))
        done
    done
    visited=$((visited + ${#sel[@]})) total=$((total + points))
    kinds=$((kinds + 1))
    if [ "$bad" = 0 ]; then
        echo "ok - $name: killed at ${#sel[@]} of its $points points (${#all[@]} once runs of one site keep their ends; every $STRIDE), resumed: the uninterrupted run's md5, nothing left"
    else
        echo "not ok - $name: $bad of ${#sel[@]} points failed"
        failed=$((failed + 1))
    fi
}

# Each kind: small checkpoints (128 KiB of rows), so that both passes commit several times.  The resumes
# run with another budget and one thread (RESUME), but a scatter's: its pile file's piles are its budget's.
RESUME="-m 24M -j 1"
C=(--checkpoint 128K -s 11)
T=(--strategy two-pass -m 8M)
sweep "two passes" o.h5 "${C[@]}" "${T[@]}" "$W/in.h5" "$W/in2.h5"
sweep "two passes, recursion" o.h5 "${C[@]}" "${T[@]}" --debug-pile-bound 6000 "$W/in.h5"
sweep "two passes, restarts" o.h5 "${C[@]}" "${T[@]}" --on-oversize restart --debug-pile-bound 6000 "$W/in.h5"
sweep "two passes, synced checkpoints" o.h5 --checkpoint 128K,sync -s 11 "${T[@]}" "$W/in.h5"
sweep "one pass" o.h5 "${C[@]}" -m 64M "$W/in.h5"
sweep "direct path" o.h5 "${C[@]}" -m 8M --strategy direct "$W/in.h5"
sweep "shards" o.h5 "${C[@]}" "${T[@]}" --shards 3 -c zstd:1 "$W/in.h5"
sweep "split, head, index" o.h5 "${C[@]}" -m 8M --split a=0.7,b=0.3 --head 15000 --index /i "$W/in.h5" "$W/in2.h5"
CMP=gather sweep "scatter" p.h5 scatter "${C[@]}" -m 8M "$W/in.h5" "$W/in2.h5"
"$H" -q scatter -s 11 -m 8M -t "$W" "$W/in.h5" "$W/in2.h5" "$W/piles.h5" || exit 1
psum=$(md5sum <"$W/piles.h5")
sweep "gather" o.h5 gather --checkpoint 128K -m 8M --shards 2 "$W/piles.h5"
[ "$(md5sum <"$W/piles.h5")" = "$psum" ] || { echo "not ok - gather changed its pile file"; failed=$((failed + 1)); }
if [ "$have_h5py" = 1 ]; then
    sweep "variable-length rows" o.h5 --checkpoint 32K -s 3 -m 8M "$W/v.h5"
else
    echo "ok - variable-length rows # SKIP no h5py"
fi
[ "$(cat "$W/in.h5" "$W/in2.h5" | md5sum)" = "$isum" ] || { echo "not ok - an input changed"; failed=$((failed + 1)); }
echo "# $swept kill points swept over $kinds kinds of run ($visited of their $total points)"
[ "$failed" = 0 ]
