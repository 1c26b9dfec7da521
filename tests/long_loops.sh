#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# long_loops.sh - loops over all N rows answer a signal: a 1.4 KB file that declares 2^40 rows (a chunked
# uint8 dataset with a fill value, never written) makes every scan of N rows last hours.  Each case starts
# a run, lets it get under way, sends one SIGINT (or SIGTERM) and polls for its end: it must stop within
# 1.0 s of the signal (a correctness bound, generously measured: 2^20 rows between two checks take tens of
# ms), exit 130 (143), and leave nothing behind.  Cases:
#   --head 10 --progress=always: the plan's scan of keys (head.c) is shown ("select", rows of N) and stops;
#   verify of the file against itself: the rows hashed (verify.c) stop;
#   --plan with the mixing report of two such inputs (-vv): its windows' scan of keys (mixing.c) stops;
#   a FIFO (with no writer) as an input, a verify's output or input, a gather's pile file: refused at once
#   with one line "is a FIFO", exit 1 (HDF5 would open it and wait for a writer forever).
# The stop latencies are printed ("stopped in N ms").
# Usage: bash tests/long_loops.sh PATH/TO/h5shuf
set -u
set -m # job control: without it a background job starts with SIGINT ignored (and h5shuf keeps it so)
shopt -s nullglob dotglob
H=$1
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-long-loops.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/out" "$W/scratch"
"$PY" - "$W" <<'EOF' || exit 1
import sys, h5py
for name in ("huge.h5", "huge2.h5"):
    with h5py.File(sys.argv[1] + "/" + name, "w") as f:
        f.create_dataset("x", shape=(2**40,), dtype="u1", chunks=(1 << 20,), fillvalue=7)
EOF
now_us() { echo "${EPOCHREALTIME//[.,]/}"; }
failed=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }

# interrupt NAME SIGNAL WANT_RC CMD...: run CMD in the background, signal it after 1 s, and check that it
# ends within 1.0 s with WANT_RC, leaving nothing in $W/out or $W/scratch; its stderr in $W/err.
interrupt() {
    local name=$1 sig=$2 want=$3 pid t0 t1 rc left ms
    shift 3
    "$@" >/dev/null 2>"$W/err" &
    pid=$!
    sleep 1
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        fail "$name: ended (exit $?) before the signal"
        sed 's/^/#   /' "$W/err"
        return
    fi
    t0=$(now_us)
    kill -"$sig" "$pid"
    while kill -0 "$pid" 2>/dev/null && [ $(($(now_us) - t0)) -lt 1000000 ]; do sleep 0.005; done
    t1=$(now_us)
    ms=$(((t1 - t0) / 1000))
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        wait "$pid"
        fail "$name: still running ${ms} ms after SIG$sig (killed)"
        rm -rf "${W:?}/out/"* "${W:?}/scratch/"*
        return
    fi
    wait "$pid"
    rc=$?
    left=$(find "$W/out" "$W/scratch" -mindepth 1)
    rm -rf "${W:?}/out/"* "${W:?}/scratch/"*
    if [ "$rc" != "$want" ] || [ -n "$left" ]; then
        fail "$name: exit $rc (want $want), left: $left"
        sed 's/^/#   /' "$W/err"
        return
    fi
    echo "ok - $name: stopped in ${ms} ms after SIG$sig, exit $rc, nothing left"
}

interrupt "--head 10 of 2^40 rows" INT 130 "$H" -n 10 --progress=always -t "$W/scratch" "$W/huge.h5" "$W/out/o.h5"
# the bar drew the scan of keys: phase "select", rows done of N (2^40 rows: 1099512 M)
if tr '\r' '\n' <"$W/err" | grep -q '^select .*/1099512 M rows'; then
    echo "ok - --head 10: the progress bar shows the scan of keys (select, rows of N)"
else
    fail "--head 10: no progress of the scan of keys under --progress=always"
    tr '\r' '\n' <"$W/err" | tail -3 | sed 's/^/#   /'
fi
interrupt "--head 10 of 2^40 rows" TERM 143 "$H" -n 10 -q -t "$W/scratch" "$W/huge.h5" "$W/out/o.h5"
interrupt "verify of 2^40 rows" INT 130 "$H" verify "$W/huge.h5" "$W/huge.h5"
interrupt "verify of 2^40 rows" TERM 143 "$H" verify "$W/huge.h5" "$W/huge.h5"
interrupt "--plan's mixing report of 2 x 2^40 rows" INT 130 "$H" --plan -vv --mixing-window 10 "$W/huge.h5" \
    "$W/huge2.h5" "$W/out/o.h5"

# refused: one line naming the FIFO, exit 1, at once (no signal needed)
mkfifo "$W/fifo"
refused() { # NAME CMD...
    local name=$1 t0 rc ms
    shift
    t0=$(now_us)
    timeout -s KILL 5 "$@" >/dev/null 2>"$W/err"
    rc=$? ms=$((($(now_us) - t0) / 1000))
    if [ "$rc" = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q "fifo: is a FIFO" "$W/err" &&
        [ -z "$(find "$W/out" -mindepth 1)" ]; then
        echo "ok - $name: refused in ${ms} ms: $(cat "$W/err")"
    else
        fail "$name: exit $rc after ${ms} ms (want 1, one line naming the FIFO)"
        sed 's/^/#   /' "$W/err"
    fi
    rm -rf "${W:?}/out/"*
}
refused "a FIFO as the input" "$H" "$W/fifo" "$W/out/o.h5"
refused "a FIFO as a later input" "$H" "$W/huge.h5" "$W/fifo" "$W/out/o.h5"
refused "a FIFO as verify's output" "$H" verify "$W/huge.h5" "$W/fifo"
refused "a FIFO as verify's input" "$H" verify "$W/fifo" "$W/huge.h5"
refused "a FIFO as gather's pile file" "$H" gather "$W/fifo" "$W/out/o.h5"
[ "$failed" -eq 0 ] && echo "all ok" || echo "$failed failed"
[ "$failed" -eq 0 ]
