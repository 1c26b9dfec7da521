#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fault_sweep.sh - with a tool built with fault points (H5SHUF_FAULT_INJECTION: the h5shuf-fault that
# tests/CMakeLists.txt builds in every build), make each failure point of a small shuffle fail in turn
# (H5SHUF_FAULT_AT=1, 2, ... until a run passes them all) and check every time: exit 1, one line on
# stderr, the input unchanged, no output, no temporary output, no scratch file.  The same for the direct
# path, `h5shuf scatter` (no pile file left), `h5shuf gather` (the pile file unchanged), variable-length
# rows and several inputs reopened as they are read, or read with pread() when mapped (which need h5py to
# write the inputs) and real files
# (netCDF-4; references, links, dimension scales and a large attribute from h5py), every 2nd point of these.  An HDF5 object left open aborts the run
# (h5shuf_job_free in a fault-injection build); in the ASan build a leak or memory error also fails it.
# Prints how many points it walked.
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
# Every failing run must exit 1 with one error line (warnings aside), leave the input ($input, md5 $isum) and the pile file
# unchanged and nothing in its scratch and output directories.  The run that passes them all leaves its output in
# $W/out.  With stride=S (for the time budget), every S-th point (1, 1 + S, ...), then each point between the last
# of those and the run that passed them all: the first and the last points are always walked.
sweep() {
    local name=$1 passed=0 walked=0 n=1 step=${stride:-1} last=0 k point rc left of=""
    shift
    while [ "$last" = 0 ]; do
        for k in $(seq 1 "$P"); do
            local args=("${@//@S/$W/scratch.$k}")
            args=("${args[@]//@O/$W/out.$k}")
            (H5SHUF_FAULT_AT=$((n + (k - 1) * step)) "$H" "${args[@]}" >/dev/null 2>"$W/err.$k"; echo $? >"$W/rc.$k") &
        done
        wait
        for k in $(seq 1 "$P"); do
            point=$((n + (k - 1) * step))
            read -r rc <"$W/rc.$k"
            left=("$W/scratch.$k"/* "$W/out.$k"/*) # (nullglob, dotglob: hidden temporary files too)
            if [ "$last" = 0 ] && [ "$rc" = 0 ]; then
                last=$point # past the last point: the run passed them all
                mv "$W/out.$k/"* "$W/out/"
            elif [ "$last" = 0 ]; then
                walked=$((walked + 1))
                mapfile -t err < <(grep -v '^h5shuf: warning: ' "$W/err.$k") # (--drop-references warns)
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
        n=$((n + P * step))
        if [ "$last" -gt 1 ] && [ "$step" -gt 1 ]; then # the points skipped just before the run that passed
            n=$((last - step + 1)) step=1 last=0
            [ $n -lt 2 ] && n=2
        fi
        [ "$last" = 0 ] && [ $n -gt 20000 ] && { echo "not ok - $name: more than 20000 fault points: runaway"; failed=$((failed + 1)); break; }
    done
    [ "$walked" = $((last - 1)) ] || of=" of $((last - 1))"
    echo "$name: walked $walked$of fault points ($passed failed cleanly); the run with none failing succeeded"
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
# the direct path (direct.c): /X read row by row through the ring (-m 600K holds only /y and /ids whole),
# windows halved at the bound of 300; its output must be the two passes' bytes.  Every 4th point and the last
# ones (a row's points repeat 1000 times).
stride=4
sweep direct "${opts[@]}" -m 600K --strategy direct -t @S "$W/ex.h5" @O/o.h5
cmp -s "$W/one.h5" "$W/out/o.h5" || { echo "not ok - the final direct run's output differs from the two passes'"; failed=$((failed + 1)); }
rm -f "$W/out/o.h5"
stride=1
sweep scatter scatter "${opts[@]}" "$W/ex.h5" @O/p.h5
[ -f "$W/out/p.h5" ] || { echo "not ok - the final scatter's pile file"; failed=$((failed + 1)); }
rm -f "$W/out/p.h5"
sweep gather gather "$W/piles.h5" @O/o.h5
cmp -s "$W/one.h5" "$W/out/o.h5" || { echo "not ok - the final gather's output differs from the one-shot run's"; failed=$((failed + 1)); }
rm -f "$W/out/o.h5"
# variable-length rows (vlen.c): sequences with a row longer than a scratch chunk, strings, a fixed dataset
if ! /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    echo "not ok - vlen: /usr/bin/python3 cannot import h5py (python3-h5py, which scripts/test.sh installs)"
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
    # several inputs (inputs.c): each checked then closed, reopened when read; the direct path reads rows of
    # 64 KiB (not held) in key order from 6 inputs, more than stay open at a time, so they are closed and
    # reopened at every turn; --check reads them all again.  Every 2nd point and the last ones.
    /usr/bin/python3 -c "
import h5py, numpy as np
for k in range(6):
    with h5py.File('$W/m%d.h5' % k, 'w') as f:
        f.create_dataset('x', data=np.arange(4 * 16384, dtype='f4').reshape(4, 16384) + k, chunks=(1, 16384),
                         compression='gzip', compression_opts=1)
        f['y'] = np.arange(4) + 4 * k" || exit 1
    input=$W/m3.h5 isum=$(md5sum <"$W/m3.h5")
    stride=2
    sweep inputs -s 7 -m 4M --strategy direct --check -t @S "$W"/m[0-5].h5 @O/o.h5
    stride=1
    [ -f "$W/out/o.h5" ] && "$H" verify -q "$W"/m[0-5].h5 "$W/out/o.h5" || { echo "not ok - the final inputs run's output"; failed=$((failed + 1)); }
    rm -f "$W/out/o.h5"
    # the same inputs through pass 1, where all but the first are mapped when scanned and read with pread()
    # (inmap.c: 4 gzip chunks and a contiguous /y each): the opens, fstat checks and reads of the map fail
    # in turn too.  Every 2nd point and the last ones.
    stride=2
    sweep inputs-pread -s 7 -m 4M --strategy two-pass -t @S "$W"/m[0-5].h5 @O/o.h5
    stride=1
    [ -f "$W/out/o.h5" ] && "$H" verify -q "$W"/m[0-5].h5 "$W/out/o.h5" || { echo "not ok - the final pread run's output"; failed=$((failed + 1)); }
    rm -f "$W/out/o.h5"
fi
# Real files (objcopy, refmap, attrs, discover): a netCDF-4 file from netCDF4-python (CI installs python3-netcdf4:
# without it the sweep fails) and an h5py file with references, links, dimension scales and an attribute too
# large for an object header, whole-file; then one of its datasets, whose attributes refer to objects not in
# the output, with --drop-references.  Every 2nd point and the last ones (the time budget).
if ! /usr/bin/python3 -c 'import h5py, netCDF4' 2>/dev/null; then
    echo "not ok - real files: /usr/bin/python3 cannot import h5py and netCDF4 (python3-netcdf4, which scripts/test.sh installs)"
    failed=$((failed + 1))
else
    /usr/bin/python3 - "$W" <<'PY' || exit 1
import sys, h5py, netCDF4, numpy as np
w = sys.argv[1]
with netCDF4.Dataset(w + '/nc.nc', 'w') as f:  # time(time) a coordinate; elev(station) as long, not a record
    f.title = 'sweep'
    f.createDimension('time', None)
    f.createDimension('lat', 3)
    f.createDimension('station', 40)
    f.createVariable('time', 'f8', ('time',))[:] = np.arange(40.0)
    v = f.createVariable('temp', 'f4', ('time', 'lat', 'station'), zlib=True, complevel=1, chunksizes=(8, 3, 40))
    v.long_name = 'temperature \u00b0C'  # (not ASCII: a variable-length string)
    v[:] = np.arange(40 * 3 * 40, dtype='f4').reshape(40, 3, 40)
    f.createVariable('elev', 'i4', ('station',))[:] = np.arange(40) * 10
    g = f.createGroup('obs')
    g.source = 'sensor'
    g.createVariable('wind', 'f4', ('time',))[:] = np.arange(40, dtype='f4')
with h5py.File(w + '/refs.h5', 'w', libver=('v108', 'v108')) as f:
    # chunks that split rows, with edge chunks in both dimensions: chunkio's chunk rows (chunkio.c)
    x = f.create_dataset('x', data=np.arange(240, dtype='i4').reshape(60, 4), chunks=(16, 3), compression='gzip')
    y = f.create_dataset('y', data=np.arange(60.0))
    t = f.create_dataset('t', data=np.arange(60))
    c = f.create_dataset('col', data=np.arange(4, dtype='i2'))
    t.make_scale('t')
    c.make_scale('col')
    x.dims[0].attach_scale(t)
    x.dims[1].attach_scale(c)
    y.dims[0].attach_scale(t)
    other = f.create_group('meta').create_dataset('other', data=np.arange(5))
    f['meta/alias'] = y  # a second hard link to a shuffled dataset
    f['xalias'] = other  # and to a copied one
    f['soft'] = h5py.SoftLink('/meta/other')
    x.attrs['see'] = other.ref
    x.attrs['refs'] = np.array([y.ref, f['meta'].ref], dtype=h5py.ref_dtype)
    f['reflist'] = np.array([x.ref, other.ref, f['meta'].ref], dtype=h5py.ref_dtype)
    f.attrs['big'] = np.arange(100 * 1024 // 8)  # 100 KiB: dense attribute storage
PY
    stride=2
    for case in "netcdf nc.nc" "references refs.h5" "drop-references refs.h5:/x --drop-references"; do
        read -r name spec drop <<<"$case"
        input=$W/${spec%%:*}
        isum=$(md5sum <"$input")
        sweep "$name" -s 7 $drop -t @S "$W/$spec" @O/o.h5
        [ -f "$W/out/o.h5" ] && "$H" verify -q "$W/$spec" "$W/out/o.h5" || { echo "not ok - the final $name run's output"; failed=$((failed + 1)); }
        rm -f "$W/out/o.h5"
    done
    stride=1
fi
echo "$total passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$total" -gt 0 ]
