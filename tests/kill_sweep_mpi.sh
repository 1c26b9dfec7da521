#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kill_sweep_mpi.sh - a resumable h5shuf-mpi run with one of its processes killed at every one of its
# checkpoint and write points in turn, then continued with `mpirun ... --resume` (issue 26, item 5).
# h5shuf-mpi-fault is h5shuf-mpi over the library's fault-point objects: H5SHUF_KILL_AT=N, given to one
# process only (rank K, through a wrapper that reads Open MPI's OMPI_COMM_WORLD_RANK), makes that process
# SIGKILL itself at its Nth point; mpirun then ends the others.  For each kind (the single output, whose
# parts process 0 assembles, with P = 2 and 3; shards; restarts and recursion of pass 1, which the
# processes decide together; split + head + index), for each rank K and every STRIDE-th of its points N:
# the run is killed there (or, every 4th time, the process is stopped there with SIGSTOP, the others go
# on until they wait for it, having checkpointed further, then all are killed); the same command with --resume, another memory budget and one thread (every
# third time killed again, in the next rank, at another point; the direct path's kind too), then resumed to the end, must write the
# files the uninterrupted run with the same P writes (md5 of every one), which are the serial run's (md5,
# or for the single output its objects, attributes and stored chunks: tests/h5same.py), and leave nothing
# in any process's scratch directory nor beside the outputs.  Then the refusals, and a process slow to
# start (strace delays its mkdir) while another is killed after its first commit.  Prints the points swept.
# Usage: bash tests/kill_sweep_mpi.sh PATH/TO/h5shuf PATH/TO/h5shuf-mpi-fault [STRIDE]
# STRIDE (default 1; H5SHUF_MPI_KILL_STRIDE overrides it): every STRIDE-th point of each process, and its
# last.  ONLY=TEXT runs the kinds whose name holds TEXT (and the refusals).  mpirun ends the other processes at once (odls_base_sigkill_timeout 0: they are SIGKILLed too).
set -u
shopt -s nullglob dotglob
H=$1 HM=$2 STRIDE=${H5SHUF_MPI_KILL_STRIDE:-${3:-1}}
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_odls_base_sigkill_timeout=0
"$PY" -c 'import h5py, numpy' 2>/dev/null || { echo "ok - # SKIP no h5py"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-killmpi.XXXXXX")
trap 'rm -rf "$W"' EXIT
failed=0 swept=0 kinds=0
# X with its labels, chunked so that every process has rows of the single output (cuts at 2000 rows)
"$PY" - "$W/a.h5" <<'EOF' || exit 1
import sys, h5py, numpy as np
rng = np.random.default_rng(11)
with h5py.File(sys.argv[1], "w") as f:
    n = 12000
    f.create_dataset("x", data=rng.standard_normal((n, 16)).astype("f4"), chunks=(1000, 16), compression="gzip")
    f.create_dataset("y", data=rng.integers(0, 10, n), chunks=(2000,), compression="gzip")
    f["x"].attrs["units"] = "volts"
with h5py.File(sys.argv[1].replace("a.h5", "tok.h5"), "w") as f:  # token sequences and their domain
    n = 3000
    t = f.create_dataset("tok", (n,), dtype=h5py.vlen_dtype(np.dtype("int32")), chunks=(100,), compression="gzip")
    t[:] = np.array([rng.integers(0, 50000, int(k), dtype=np.int32) for k in rng.integers(1, 300, n)], dtype=object)
    f.create_dataset("domain", data=rng.integers(0, 3, n).astype("i2"), chunks=(500,))
EOF
isum=$(md5sum <"$W/a.h5")
# The wrapper: rank KILL_RANK is killed at its KILL_AT-th point; COUNT_DIR gets each rank's point count.
cat >"$W/wrap.sh" <<EOF
#!/usr/bin/env bash
r=\${OMPI_COMM_WORLD_RANK:-0}
if [ -n "\${KILL_RANK:-}" ] && [ "\$r" = "\$KILL_RANK" ]; then export H5SHUF_KILL_AT=\$KILL_AT H5SHUF_KILL_SIGNAL=\${KILL_SIGNAL:-}; fi
if [ -n "\${COUNT_DIR:-}" ]; then export H5SHUF_KILL_COUNT=\$COUNT_DIR/count.\$r; fi
if [ -n "\${TRACE_DIR:-}" ]; then export H5SHUF_KILL_TRACE=\$TRACE_DIR/trace.\$r; fi
if [ -n "\${SLOW_RANK:-}" ] && [ "\$r" = "\$SLOW_RANK" ]; then # slow to start, as under load: each mkdir 3 s late
  exec strace -f -qq -o /dev/null -e trace=mkdir -e inject=mkdir:delay_enter=3000000 "$HM" "\$@"
fi
exec "$HM" "\$@"
EOF
chmod +x "$W/wrap.sh"
WORKERS=$(nproc 2>/dev/null || echo 1)
[ "$WORKERS" -gt 2 ] && WORKERS=2

outputs() { (cd "$1" && for f in *; do echo "$f $(md5sum <"$f")"; done) | tr '\n' ' '; }
mpi() { local p=$1; shift; timeout 120 mpirun --oversubscribe -n "$p" "$W/wrap.sh" "$@"; }

# one J P K N K2 N2 OUT ARGS...: in worker J's directories, kill rank K at point N; resume (rank K2
# killed again at N2 when N2 > 0), resume to the end; prints "ok" or what went wrong.
one() {
    local j=$1 p=$2 k=$3 n=$4 k2=$5 n2=$6 out=$7
    shift 7
    local S="$W/s.$j" O="$W/o.$j" rc rc2 left
    rm -rf "$S" "$O"
    mkdir -p "$O" "$S/r0" "$S/r1" "$S/r2" "$W/t.$j"
    export TMPDIR="$W/t.$j" # (Open MPI's session directory: one per worker, two mpiruns race for one)
    if [ -n "${STOP:-}" ]; then # held at the point, the others go on until they wait for it; then all killed
        KILL_RANK=$k KILL_AT=$n KILL_SIGNAL=STOP mpi "$p" -q -t "$S/r%r" --resume "$@" "$O/$out" >/dev/null 2>"$W/e.$j" &
        local pid=$!
        sleep 0.4
        pkill -9 -f -- "$S/r%r"
        wait "$pid"
    else
        KILL_RANK=$k KILL_AT=$n mpi "$p" -q -t "$S/r%r" --resume "$@" "$O/$out" >/dev/null 2>"$W/e.$j"
    fi
    rc=$?
    rc2=137
    if [ "$n2" -gt 0 ]; then
        KILL_RANK=$k2 KILL_AT=$n2 mpi "$p" -q -t "$S/r%r" --resume $RESUME "$@" "$O/$out" >/dev/null 2>>"$W/e.$j"
        rc2=$?
    fi
    if [ "$rc2" = 137 ]; then
        mpi "$p" -q -t "$S/r%r" --resume $RESUME "$@" "$O/$out" >/dev/null 2>>"$W/e.$j"
        rc2=$?
    fi
    left=("$S"/r0/* "$S"/r1/* "$S"/r2/*)
    local got
    got=$(outputs "$O")
    if [ "$rc" != 137 ] && [ "$rc" != 0 ]; then
        echo "first run exit $rc: $(grep -v '^$' "$W/e.$j" | head -c 300)"
    elif [ "$rc2" != 0 ]; then
        echo "resume exit $rc2: $(grep -v -e '^$' -e '^---' "$W/e.$j" | head -c 400)"
    elif [ "$got" != "$ref" ]; then
        echo "outputs differ: $got"
    elif [ ${#left[@]} != 0 ]; then
        echo "left in a scratch directory: ${left[*]}"
    else
        echo ok
    fi
}

# sweep NAME P HOW OUT ARGS...: every STRIDE-th point of every rank.  HOW: md5 (the serial run's files) or
# h5same (the single output).
sweep() {
    local name=$1 p=$2 how=$3 out=$4
    shift 4
    case "$name" in *"${ONLY:-}"*) ;; *) return ;; esac # (ONLY=TEXT: the kinds whose name holds it)
    local R="$W/ref" SR="$W/ser"
    rm -rf "$R" "$SR" "$W/sref" "$W"/count.*
    mkdir -p "$R" "$SR" "$W/sref/r0" "$W/sref/r1" "$W/sref/r2"
    if ! COUNT_DIR="$W" mpi "$p" -q -t "$W/sref/r%r" --resume "$@" "$R/$out" 2>"$W/eref"; then
        echo "not ok - $name: the uninterrupted run failed: $(head -c 300 "$W/eref")"
        failed=$((failed + 1))
        return
    fi
    ref=$(outputs "$R")
    # the uninterrupted distributed run writes the serial run's outputs
    "$H" -q -t "$W/sref" "$@" "$SR/$out" 2>"$W/eref" || { echo "not ok - $name: the serial run failed"; failed=$((failed + 1)); return; }
    if [ "$how" = md5 ]; then
        [ "$(outputs "$SR")" = "$ref" ] || { echo "not ok - $name: not the serial run's files"; failed=$((failed + 1)); return; }
    else
        "$PY" "$HERE/h5same.py" "$SR/$out" "$R/$out" >/dev/null || { echo "not ok - $name: not the serial run's output"; failed=$((failed + 1)); return; }
    fi
    local bad=0 total=0 k
    local -a jobs=()
    for k in $(seq 0 $((p - 1))); do
        local points n
        points=$(cat "$W/count.$k")
        for n in $(seq 1 "$STRIDE" "$points") "$points"; do
            [ "$n" = "$points" ] && [ "${jobs[-1]:-}" = "$k $n" ] && continue
            jobs+=("$k $n")
        done
    done
    local i=0
    while [ "$i" -lt "${#jobs[@]}" ]; do
        local w
        for w in $(seq 1 "$WORKERS"); do
            [ $((i + w - 1)) -lt "${#jobs[@]}" ] || continue
            local kn=(${jobs[$((i + w - 1))]})
            local k2=$(((kn[0] + 1) % p)) n2=0
            [ $((kn[1] % 3)) = 0 ] && n2=$(((kn[1] * 7) % $(cat "$W/count.$k2") + 1))
            local stop=
            [ $(((i + w - 1) % STOP_EVERY)) = $((2 % STOP_EVERY)) ] && stop=1 # (held, not killed, then all killed)
            (STOP=$stop one "$w" "$p" "${kn[0]}" "${kn[1]}" "$k2" "$n2" "$out" "$@" >"$W/r.$w") &
        done
        wait
        for w in $(seq 1 "$WORKERS"); do
            [ $((i + w - 1)) -lt "${#jobs[@]}" ] || continue
            local r
            r=$(cat "$W/r.$w")
            if [ "$r" != ok ]; then
                [ "$bad" -lt 5 ] && echo "not ok - $name: rank/point ${jobs[$((i + w - 1))]}$([ $(((i + w - 1) % 4)) = 2 ] && echo " (stopped)"): $r"
                bad=$((bad + 1))
            fi
            total=$((total + 1))
        done
        i=$((i + WORKERS))
    done
    swept=$((swept + total))
    kinds=$((kinds + 1))
    if [ "$bad" = 0 ]; then
        echo "ok - $name: $total kills (every $STRIDE point of each of its $p processes: $(cat "$W"/count.* | tr '\n' ' ')), each resumed: the uninterrupted run's md5, the serial run's $how, nothing left"
    else
        echo "not ok - $name: $bad of $total kills failed"
        failed=$((failed + 1))
    fi
}

RESUME="-m 24M -j 1"
STOP_EVERY=${STOP_EVERY:-4} # every 4th kill (of the list) is a stop
C=(--checkpoint 128K -s 11 -m 8M)
sweep "single output, P=2" 2 h5same o.h5 "${C[@]}" "$W/a.h5"
sweep "single output, P=3" 3 h5same o.h5 "${C[@]}" "$W/a.h5"
sweep "3 shards (zstd), P=2" 2 md5 o.h5 "${C[@]}" --shards 3 -c zstd:1 "$W/a.h5"
sweep "restarts of pass 1, P=3" 3 h5same o.h5 "${C[@]}" --on-oversize restart --debug-pile-bound 6000 "$W/a.h5"
sweep "recursion of pass 1, P=2" 2 h5same o.h5 "${C[@]}" --debug-pile-bound 6000 "$W/a.h5"
sweep "direct path, P=2" 2 h5same o.h5 "${C[@]}" --strategy direct --debug-pile-bound 3000 "$W/a.h5"
sweep "split, head, index, P=3" 3 md5 o.h5 "${C[@]}" --split a=0.7,b=0.3 --head 15000 --index /i "$W/a.h5"
sweep "token sequences, 3 shards, P=2" 2 md5 o.h5 "${C[@]}" --shards 3 "$W/tok.h5:/tok,/domain"
sweep "token sequences, single output, P=3" 3 md5 o.h5 "${C[@]}" -m 2M --index /i "$W/tok.h5:/tok,/domain"

# Refusals: a P = 2 run killed in pass 2 (rank 1 at its last point but 10), then run again without
# --resume, with P = 3, and with rank 1's state gone: each exits nonzero with one line of h5shuf-mpi's,
# every state directory unchanged; then the P = 2 resume writes the uninterrupted run's file.
refusals() {
    local S="$W/s.x" O="$W/o.x" R="$W/ref" p
    rm -rf "$S" "$O" "$R" "$W"/count.*
    mkdir -p "$S/r0" "$S/r1" "$S/r2" "$O" "$R" "$W/sref/r0" "$W/sref/r1"
    COUNT_DIR="$W" mpi 2 -q -t "$W/sref/r%r" --resume "${C[@]}" "$W/a.h5" "$R/o.h5" 2>/dev/null || return 1
    local at=$(($(cat "$W/count.1") - 10)) ref0
    # (with --resume, as the sweeps' runs: rank 1's kill ends rank 0 with SIGTERM, which a run without it
    # answers by removing its state, or not, as the race with mpirun's SIGKILL goes)
    KILL_RANK=1 KILL_AT=$at mpi 2 -q -t "$S/r%r" --resume "${C[@]}" "$W/a.h5" "$O/o.h5" >/dev/null 2>&1
    state() { (cd "$S" && find . -type f | sort | xargs md5sum; ls -A "$O") | md5sum; }
    ref0=$(state)
    local name args
    for name in "without --resume" "with P = 3" "rank 1's state removed"; do
        args=(2 -q -t "$S/r%r" --resume)
        [ "$name" = "without --resume" ] && args=(2 -q -t "$S/r%r")
        [ "$name" = "with P = 3" ] && args=(3 -q -t "$S/r%r" --resume)
        if [ "$name" = "rank 1's state removed" ]; then
            mv "$S/r1" "$W/r1.kept" && mkdir "$S/r1"
            ref0=$(state)
        fi
        mpi "${args[@]}" "${C[@]}" "$W/a.h5" "$O/o.h5" >/dev/null 2>"$W/e.x"
        p=$?
        local lines
        lines=$(grep -c '^h5shuf-mpi' "$W/e.x")
        if [ "$p" != 0 ] && [ "$lines" = 1 ] && [ "$(state)" = "$ref0" ]; then
            echo "ok - refused $name: exit $p, one line: $(grep '^h5shuf-mpi' "$W/e.x" | cut -c1-240)"
        else
            echo "not ok - refused $name: exit $p, $lines lines: $(head -c 300 "$W/e.x")"
            failed=$((failed + 1))
        fi
    done
    rm -rf "$S/r1" && mv "$W/r1.kept" "$S/r1"
    mpi 2 -q -t "$S/r%r" --resume "${C[@]}" "$W/a.h5" "$O/o.h5" >/dev/null 2>"$W/e.x"
    p=$?
    local left=("$S"/r0/* "$S"/r1/*)
    if [ "$p" = 0 ] && [ "$(outputs "$O")" = "$(outputs "$R")" ] && [ ${#left[@]} = 0 ]; then
        echo "ok - the P = 2 resume after the refusals: the uninterrupted run's md5, nothing left"
    else
        echo "not ok - the P = 2 resume after the refusals: exit $p: $(head -c 300 "$W/e.x") ${left[*]}"
        failed=$((failed + 1))
    fi
}
refusals || { echo "not ok - refusals: the uninterrupted run failed"; failed=$((failed + 1)); }

# A process slow to start: the direct path, P = 2, rank 1's state directory made 3 s late (its mkdir
# delayed under strace, as a loaded machine once did), rank 0 killed just after its first commit (the
# commit's log applied: its first unlink), rank 1 ended with it.  The resume (once refused: rank 1 had
# no state, rank 0's had gone on) must write the uninterrupted run's file and leave nothing.
slow_start() {
    local S="$W/s.y" O="$W/o.y" R="$W/ref" at rc rc2 made=no
    local args=("${C[@]}" --strategy direct --debug-pile-bound 3000 "$W/a.h5")
    rm -rf "$S" "$O" "$R" "$W"/trace.*
    mkdir -p "$S/r0" "$S/r1" "$O" "$R" "$W/sref/r0" "$W/sref/r1"
    TRACE_DIR="$W" mpi 2 -q -t "$W/sref/r%r" --resume "${args[@]}" "$R/o.h5" 2>/dev/null || return 1
    at=$(awk '$2 == "unlink" { print $1; exit }' "$W/trace.0")
    [ -n "$at" ] || return 1
    SLOW_RANK=1 KILL_RANK=0 KILL_AT=$at mpi 2 -q -t "$S/r%r" --resume "${args[@]}" "$O/o.h5" >/dev/null 2>"$W/e.y"
    rc=$?
    local made1=("$S"/r1/*)
    [ ${#made1[@]} != 0 ] && made=yes
    mpi 2 -q -t "$S/r%r" --resume $RESUME "${args[@]}" "$O/o.h5" >/dev/null 2>>"$W/e.y"
    rc2=$?
    local left=("$S"/r0/* "$S"/r1/*)
    if [ "$rc" = 137 ] && [ "$rc2" = 0 ] && [ "$(outputs "$O")" = "$(outputs "$R")" ] && [ ${#left[@]} = 0 ]; then
        echo "ok - direct path, P = 2, rank 1 slow to start, rank 0 killed at its point $at (rank 1's state made: $made): resumed, the uninterrupted run's md5, nothing left"
    else
        echo "not ok - direct path, P = 2, rank 1 slow to start, rank 0 killed at its point $at: exit $rc, resume exit $rc2: $(grep '^h5shuf-mpi' "$W/e.y" | head -c 300) ${left[*]}"
        failed=$((failed + 1))
    fi
}
case "direct path, slow start" in
*"${ONLY:-}"*)
    if command -v strace >/dev/null; then
        slow_start || { echo "not ok - slow start: the uninterrupted run failed"; failed=$((failed + 1)); }
    else
        echo "ok - direct path, slow start # SKIP strace is not installed (scripts/test.sh installs it)"
    fi
    ;;
esac
[ "$(md5sum <"$W/a.h5")" = "$isum" ] || { echo "not ok - the input changed"; failed=$((failed + 1)); }
echo "# $swept kills swept over $kinds kinds of distributed run"
[ "$failed" = 0 ]
