#!/usr/bin/env bash
# fault_sweep.sh - with a tool built with fault points (H5SHUF_FAULT_INJECTION: the h5shuf-fault that
# tests/CMakeLists.txt builds in every build), make each failure point of a small shuffle fail in turn
# (H5SHUF_FAULT_AT=1, 2, ... until a run passes them all) and check every time: exit 1, one line on
# stderr, the input unchanged, no output, no temporary output, no scratch file.  The same for
# `h5shuf scatter` (no pile file left), `h5shuf gather` (the pile file unchanged) and variable-length
# rows (which need h5py to write the input).  In the ASan build a leak or memory error also fails the
# run.  Prints how many points it walked.
# Usage: bash tests/fault_sweep.sh PATH/TO/h5shuf-fault PATH/TO/h5shuf_gendata
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-fault.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$GEN" example "$W/ex.h5" || exit 1
sum=$(md5sum <"$W/ex.h5")
mkdir "$W/out"
# Fault points are walked by P workers at a time (one per CPU, at most 4), each with its own scratch and
# output directories: the runs are independent, so this only shortens the wall time.
P=$(nproc 2>/dev/null || echo 1)
[ "$P" -gt 4 ] && P=4
[ "$P" -lt 1 ] && P=1
for k in $(seq 1 "$P"); do mkdir "$W/scratch.$k" "$W/out.$k"; done
# sweep NAME ARGS...: run h5shuf ARGS with each fault point failing in turn until a run passes them all.
# In ARGS, @S stands for the scratch directory and @O for the output directory (a worker's own).
# Every failing run must exit 1 with one line, leave the input ($input, md5 $isum) and the pile file
# unchanged and nothing in its scratch and output directories.  The run that passes them all leaves its output in
# $W/out.
sweep() {
    local name=$1 passed=0 n=1 last=0 k point rc left
    shift
    while [ "$last" = 0 ]; do
        for k in $(seq 1 "$P"); do
            local args=("${@//@S/$W/scratch.$k}")
            args=("${args[@]//@O/$W/out.$k}")
            (H5SHUF_FAULT_AT=$((n + k - 1)) "$H" "${args[@]}" >/dev/null 2>"$W/err.$k"; echo $? >"$W/rc.$k") &
        done
        wait
        for k in $(seq 1 "$P"); do
            point=$((n + k - 1))
            read -r rc <"$W/rc.$k"
            left=("$W/scratch.$k"/* "$W/out.$k"/*) # (nullglob, dotglob: hidden temporary files too)
            if [ "$last" = 0 ] && [ "$rc" = 0 ]; then
                last=$point # past the last point: the run passed them all
                mv "$W/out.$k/"* "$W/out/"
            elif [ "$last" = 0 ]; then
                mapfile -t err <"$W/err.$k"
                if [ "$rc" = 1 ] && [ ${#err[@]} = 1 ] && [[ ${err[0]} == "h5shuf: "* ]] && [ ${#left[@]} = 0 ] \
                    && [ "$(md5sum <"$input")" = "$isum" ] && [ "$(md5sum <"$W/piles.h5")" = "$psum" ]; then
                    passed=$((passed + 1))
                else
                    echo "not ok - $name: fault point $point: exit $rc, left: ${left[*]}"
                    sed 's/^/#   /' "$W/err.$k" | head -20
                    failed=$((failed + 1))
                fi
            fi
            left=("$W/scratch.$k"/* "$W/out.$k"/*)
            [ ${#left[@]} = 0 ] || rm -rf "${left[@]}"
        done
        n=$((n + P))
        [ "$last" = 0 ] && [ $n -gt 20000 ] && { echo "not ok - $name: more than 20000 fault points: runaway"; failed=$((failed + 1)); break; }
    done
    echo "$name: walked $((last - 1)) fault points ($passed failed cleanly); the run with none failing succeeded"
    total=$((total + passed))
}

failed=0 total=0
# a whole file (copies, attributes), a few piles, and a split: most code paths in a few hundred points
opts=(-s 7 -m 5M --debug-pile-bound 300 -c zstd:1+shuffle --index /index)
# the lazy second pass: a pile file made without faults, which failing gathers must leave as it is
"$H" scatter "${opts[@]}" "$W/ex.h5" "$W/piles.h5" || exit 1
psum=$(md5sum <"$W/piles.h5")
input=$W/ex.h5 isum=$sum
sweep shuffle "${opts[@]}" -t @S "$W/ex.h5" @O/o.h5
[ -f "$W/out/o.h5" ] && "$H" verify -q "$W/ex.h5" "$W/out/o.h5" || { echo "not ok - the final run's output"; failed=$((failed + 1)); }
mv "$W/out/o.h5" "$W/one.h5"
sweep scatter scatter "${opts[@]}" "$W/ex.h5" @O/p.h5
[ -f "$W/out/p.h5" ] || { echo "not ok - the final scatter's pile file"; failed=$((failed + 1)); }
rm -f "$W/out/p.h5"
sweep gather gather "$W/piles.h5" @O/o.h5
cmp -s "$W/one.h5" "$W/out/o.h5" || { echo "not ok - the final gather's output differs from the one-shot run's"; failed=$((failed + 1)); }
rm -f "$W/out/o.h5"
# variable-length rows (vlen.c): sequences with a row longer than a scratch chunk, strings, a fixed dataset
if ! /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    echo "not ok - vlen: /usr/bin/python3 cannot import h5py (python3-h5py, which scripts/build.sh installs)"
    failed=$((failed + 1))
else
    /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('$W/vl.h5', 'w') as f:
    t = f.create_dataset('t', (60,), dtype=h5py.vlen_dtype(np.dtype('int32')), chunks=(8,))
    t[:] = np.array([np.arange(i * (i % 7) + (400 if i == 5 else 0), dtype=np.int32) for i in range(60)], dtype=object)
    f.create_dataset('s', (60,), dtype=h5py.string_dtype())[:] = ['' if i % 4 == 0 else 'z\u00fcrich %d' % i for i in range(60)]
    f['y'] = np.arange(60)" || exit 1
    vsum=$(md5sum <"$W/vl.h5")
    input=$W/vl.h5 isum=$vsum
    sweep vlen -s 7 -m 1M --debug-pile-bound 20 -t @S "$W/vl.h5" @O/o.h5
    [ -f "$W/out/o.h5" ] && "$H" verify -q "$W/vl.h5" "$W/out/o.h5" || { echo "not ok - the final vlen run's output"; failed=$((failed + 1)); }
    [ "$(md5sum <"$W/vl.h5")" = "$vsum" ] || { echo "not ok - the vlen input changed"; failed=$((failed + 1)); }
fi
echo "$total passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$total" -gt 0 ]
