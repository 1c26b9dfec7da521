#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fatal_signals.sh - a run killed by SIGSEGV, SIGBUS, SIGABRT or SIGFPE (sent from outside, as a crash in
# HDF5 or a codec would raise it) leaves nothing behind: its handler unlinks the temporary output and the
# scratch file and re-raises, so the exit status is still the signal's (128 + N) and a core dump, where
# enabled, still happens.  Each signal is sent once the run's scratch file exists (during the scatter)
# and once its temporary output has grown past its first megabyte (during the gather); a run that
# finished first is tried again later, and the test fails unless every signal interrupted both phases.
# One more trial shards the output (--shards 3): all three temporary shards exist from the start (the
# library reports each as it makes it), so a signal in the gather of the first must remove the others too.
# Usage: bash tests/fatal_signals.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
set -m # job control: the background run gets default signal dispositions
H=$1 GEN=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-fatal.XXXXXX")
trap 'rm -rf "$W"' EXIT
ulimit -c 0 # no core files in the test's directory
"$GEN" floats "$W/in.h5" 150000 256 1 || exit 1
sum=$(md5sum <"$W/in.h5")
mkdir "$W/scratch" "$W/out"
passed=0 failed=0
# wait_for PHASE PID: return once the run reached PHASE (scatter: scratch exists; gather: the temporary
# output is past 1 MiB and the scratch file is still there), 1 when the run ended first
wait_for() {
    local phase=$1 pid=$2 i
    for ((i = 0; i < 2000; i++)); do
        kill -0 "$pid" 2>/dev/null || return 1
        local s t
        s=$(find "$W/scratch" -mindepth 1 -type f | head -1)
        t=$(find "$W/out" -name '.o*.h5.h5shuf-*' -size +1M | head -1)
        if [ "$phase" = scatter ] && [ -n "$s" ]; then return 0; fi
        if [ "$phase" = gather ] && [ -n "$t" ]; then return 0; fi
        sleep 0.005
    done
    return 1
}
trial() { # SIGNAL NUMBER PHASE [OPTION...]
    local sig=$1 num=$2 phase=$3 try
    shift 3
    for try in 1 2 3; do
        "$H" -s 1 -m 16M -j 1 -t "$W/scratch" "$@" "$W/in.h5" "$W/out/o.h5" 2>"$W/err" &
        local pid=$!
        if ! wait_for "$phase" $pid; then
            wait $pid; rm -rf "$W/out"/* "$W/out"/.o* "$W/scratch"/*; continue
        fi
        kill -"$sig" $pid
        wait $pid
        local rc=$? left
        left=$(find "$W/scratch" "$W/out" -mindepth 1)
        if [ "$rc" = $((128 + num)) ] && [ -z "$left" ] && [ "$(md5sum <"$W/in.h5")" = "$sum" ]; then
            echo "ok - SIG$sig during the $phase${1:+ ($*)}: exit $rc, nothing left, input unchanged"
            passed=$((passed + 1))
        else
            echo "not ok - SIG$sig during the $phase${1:+ ($*)}: exit $rc (want $((128 + num))), left: $left"
            sed 's/^/#   /' "$W/err"
            failed=$((failed + 1)); rm -rf "$W/out"/* "$W/out"/.o* "$W/scratch"/*
        fi
        return
    done
    echo "not ok - SIG$sig during the $phase${1:+ ($*)}: the run always finished first"; failed=$((failed + 1))
}
for s in "SEGV 11" "BUS 7" "ABRT 6" "FPE 8"; do
    set -- $s
    trial "$1" "$2" scatter
    trial "$1" "$2" gather
done
trial SEGV 11 gather --shards 3
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
