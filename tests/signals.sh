#!/usr/bin/env bash
# signals.sh - SIGINT and SIGTERM at random moments of a ~150 MB shuffle, once and twice in a row: exit
# 130/143, the input byte-identical, no output, no temporary output, no scratch file.  The time to stop
# is printed (not asserted: machines here are shared and noisy).
# Usage: bash tests/signals.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
set -m # job control: without it a background job starts with SIGINT ignored (and h5shuf keeps it so)
H=$1 GEN=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-signals.XXXXXX")
trap 'rm -rf "$W"' EXIT
passed=0 failed=0
"$GEN" floats "$W/in.h5" 150000 256 1 || exit 1
sum=$(md5sum <"$W/in.h5")
mkdir "$W/scratch" "$W/out"
trial() { # NAME SIGNAL DELAY_MS TWICE
    local name=$1 sig=$2 delay=$3 twice=$4 want
    "$H" -s 1 -m 16M -t "$W/scratch" "$W/in.h5" "$W/out/o.h5" 2>/dev/null &
    local pid=$!
    sleep "$(awk "BEGIN{print $delay/1000}")"
    local t0; t0=$(date +%s%N)
    kill -"$sig" $pid 2>/dev/null
    [ "$twice" = 1 ] && sleep 0.02 && kill -"$sig" $pid 2>/dev/null
    wait $pid
    local rc=$? t1; t1=$(date +%s%N)
    [ "$sig" = INT ] && want=130 || want=143
    local left; left=$(find "$W/scratch" "$W/out" -mindepth 1)
    if [ "$rc" = 0 ]; then
        echo "ok - $name: finished before the signal (${delay} ms) # SKIP too late"; rm -f "$W/out/o.h5"
    elif [ "$rc" = "$want" ] && [ -z "$left" ] && [ "$(md5sum <"$W/in.h5")" = "$sum" ]; then
        echo "ok - $name at ${delay} ms: exit $rc, nothing left, input unchanged (stopped in $(( (t1 - t0) / 1000000 )) ms)"
        passed=$((passed + 1))
    else
        echo "not ok - $name at ${delay} ms: exit $rc (want $want), left: $left"; failed=$((failed + 1))
    fi
}
for k in 1 2 3 4; do trial "SIGINT" INT $((RANDOM % 1500 + 50)) 0; done
for k in 1 2; do trial "SIGTERM" TERM $((RANDOM % 1500 + 50)) 0; done
for k in 1 2; do trial "SIGTERM twice" TERM $((RANDOM % 1500 + 50)) 1; done
trial "SIGINT twice" INT $((RANDOM % 1500 + 50)) 1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
