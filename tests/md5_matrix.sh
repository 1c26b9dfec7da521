#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# md5_matrix.sh - the output bytes of a fixed matrix of runs must not change.
#
# The contract says a seed and an input decide the output bytes; this pins them across changes to the
# code that are not meant to change any output (restructurings, speed-ups).  Each run of the matrix
# (whole-file mode, several inputs, --shards, --split, --head, --index/--source-index, vlen rows,
# gzip and zstd, chunks that split rows under gzip (deflated by libdeflate since 2026-11-25, recorded
# then), forced recursion and restart, scatter + gather, -j 1 and -j 2) writes its output files
# in a fresh directory under fixed relative names (the provenance attributes hold the names as given);
# the md5 of every output file is compared with tests/md5_matrix.expected.
#
# The expected md5s are not derived independently: they were recorded with --record from the build of
# commit 262a3ca, whose outputs the independent oracles of this suite (oracle_h5py, outputs_h5py,
# vlen_h5py, lazy_h5py: numpy's Philox order) checked.  This test adds an independent check of its own:
# every output holding all the rows is also checked with `h5shuf verify` (the exact order where it has an
# index).  An output that should change (a new format, a deliberate change of layout) is re-recorded with
# --record in the commit that changes it, and the note says why.  The zstd runs' md5s are recorded per
# libzstd version (1.5.4: Debian 12; 1.5.7: Debian 13 and forky, recorded 2026-11-28 in those chroots after
# their outputs decoded to the same values as Debian 12's, h5diff).
#
# Usage: bash tests/md5_matrix.sh H5SHUF GENDATA [--record FILE]
set -u
H=$(realpath "$1") GEN=$(realpath "$2")
RECORD=${4:-}
[ "${3:-}" = --record ] && RECORD=$(realpath "$RECORD") || RECORD=
EXPECTED="$(cd "$(dirname "$0")" && pwd)/md5_matrix.expected"
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-md5.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

"$GEN" example ex.h5 && "$GEN" floats f1.h5 20000 16 4 && "$GEN" floats f2.h5 7000 16 0 || exit 1
/usr/bin/python3 - <<'PY' || { echo "not ok - h5py is needed to write the vlen input"; exit 1; }
import h5py, numpy as np
with h5py.File('vl.h5', 'w', libver='earliest') as f:  # (the format every HDF5 writes alike)
    t = f.create_dataset('t', (300,), dtype=h5py.vlen_dtype(np.dtype('int32')), chunks=(8,))
    t[:] = np.array([np.arange(i % 37 + (300 if i == 5 else 0), dtype=np.int32) * 3 for i in range(300)], dtype=object)
    f.create_dataset('s', (300,), dtype=h5py.string_dtype())[:] = ['' if i % 4 == 0 else 'z\u00fcrich %d' % i for i in range(300)]
    f['y'] = np.arange(300, dtype=np.int64)
with h5py.File('im.h5', 'w', libver='earliest') as f:  # images in chunks that split rows (as h5py's automatic chunks), gzip
    rng = np.random.default_rng(3)
    f.create_dataset('x', data=(np.cumsum(rng.integers(-2, 3, 900 * 192)) % 251).astype('u1').reshape(900, 8, 8, 3),
                     chunks=(100, 4, 4, 1), compression='gzip', compression_opts=4)
    f['y'] = np.arange(900, dtype=np.int64)
PY

results=()  # "name md5" lines
failed=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }

# run NAME VERIFY -- ARGS... : run h5shuf ARGS in a clean out/; record the md5 of every file it wrote as
# NAME/FILE; unless VERIFY is "-", check each output with h5shuf verify against the inputs VERIFY names
# ("INPUTS" or "INPUTS@:/PATHS" when the output renames the datasets).
run() {
    local name=$1 vin=${2%@*} opaths=
    [[ $2 == *@* ]] && opaths=${2#*@}
    shift 3
    rm -rf out && mkdir out || exit 1
    local sub=()
    case $1 in scatter | gather) sub=("$1"); shift ;; esac
    if ! "$H" "${sub[@]}" -q "$@" 2>err; then
        fail "$name: h5shuf $* exited $?: $(head -1 err)"
        return
    fi
    local f
    for f in $(cd out && ls); do
        results+=("$name/$f $(md5sum <"out/$f" | cut -d' ' -f1)")
        if [ "$vin" != - ] && ! "$H" verify -q $vin "out/$f$opaths" 2>err; then
            fail "$name: verify $f: $(head -1 err)"
        fi
    done
}

run whole_j1 ex.h5 -- -j 1 -s 11 -m 8M ex.h5 out/o.h5
run whole_j2 ex.h5 -- -j 2 -s 11 -m 8M ex.h5 out/o.h5
run whole_recurse ex.h5 -- -s 11 -m 8M --debug-pile-bound 150 ex.h5 out/o.h5
run whole_restart ex.h5 -- -s 11 -m 8M --on-oversize restart --debug-pile-bound 150 ex.h5 out/o.h5
run multi_j1 "f1.h5:/x f2.h5:/x" -- -j 1 -s 12 -m 4M f1.h5:/x f2.h5:/x out/o.h5
run multi_j2 "f1.h5:/x f2.h5:/x" -- -j 2 -s 12 -m 4M f1.h5:/x f2.h5:/x out/o.h5
run multi_index "f1.h5:/x f2.h5:/x" -- -s 12 --index /idx --source-index /src f1.h5:/x f2.h5:/x out/o.h5
run rename "f1.h5:/x@:/data/features" -- -s 12 f1.h5:/x out/o.h5:/data/features
run gzip_j1 f1.h5:/x -- -j 1 -s 13 -c gzip:6+shuffle --chunk-rows 1000 f1.h5:/x out/o.h5
run gzip_j2 f1.h5:/x -- -j 2 -s 13 -c gzip:6+shuffle --chunk-rows 1000 f1.h5:/x out/o.h5
run zstd_j1 f1.h5:/x -- -j 1 -s 13 -c zstd:3+shuffle+fletcher32 f1.h5:/x out/o.h5
run zstd_j2 f1.h5:/x -- -j 2 -s 13 -c zstd:3+shuffle+fletcher32 f1.h5:/x out/o.h5
run none f1.h5:/x -- -s 13 -c none --scratch-compression none f1.h5:/x out/o.h5
run shards - -- -s 14 -m 4M --shards 3 f1.h5:/x f2.h5:/x out/o.h5
run split - -- -s 14 --split train=0.7,val=0.2,test=0.1 --index /idx ex.h5 out/o.h5
run head - -- -s 15 -n 777 ex.h5 out/o.h5
run head_shards - -- -s 15 -n 5000 --shards 2 --debug-pile-bound 900 f1.h5:/x out/o.h5
run vlen_j1 vl.h5:/t,/s,/y -- -j 1 -s 16 -m 2M --debug-pile-bound 40 vl.h5:/t,/s,/y out/o.h5
run vlen_j2 vl.h5:/t,/s,/y -- -j 2 -s 16 -m 2M --debug-pile-bound 40 vl.h5:/t,/s,/y out/o.h5
run split_j1 im.h5 -- -j 1 -s 18 -m 2M im.h5 out/o.h5
run split_j2 im.h5 -- -j 2 -s 18 -m 2M --debug-pile-bound 100 im.h5 out/o.h5
run split_one im.h5 -- -j 2 -s 18 im.h5 out/o.h5
run one_shot ex.h5 -- -s 17 --index /idx ex.h5 out/o.h5
"$H" scatter -q -s 17 --index /idx --debug-pile-bound 150 ex.h5 p.h5 || fail "scatter exited $?"
# a pile file holds no clock: the same scatter a second later writes the same bytes (objects made
# without modification times)
sleep 1.1
"$H" scatter -q -s 17 --index /idx --debug-pile-bound 150 ex.h5 p2.h5 || fail "scatter exited $?"
if cmp -s p.h5 p2.h5; then echo "ok - a scatter a second later wrote the same pile file"; else fail "pile files of the same scatter differ"; fi
run gather ex.h5 -- gather p.h5 out/o.h5
run gather_shards - -- gather --shards 2 p.h5 out/o.h5

if [ -n "$RECORD" ]; then
    printf '%s\n' "${results[@]}" >"$RECORD"
    echo "recorded ${#results[@]} md5s in $RECORD"
    exit "$([ "$failed" -eq 0 ] && echo 0 || echo 1)"
fi

# Runs that must agree with each other whatever was recorded: thread counts, recursion, restart, and
# scatter + gather against the one-shot run.
same() {
    local a b
    a=$(printf '%s\n' "${results[@]}" | awk -v k="$1/o.h5" '$1 == k {print $2}')
    b=$(printf '%s\n' "${results[@]}" | awk -v k="$2/o.h5" '$1 == k {print $2}')
    if [ -n "$a" ] && [ "$a" = "$b" ]; then echo "ok - $1 and $2 wrote the same bytes"; else fail "$1 ($a) and $2 ($b) differ"; fi
}
same whole_j1 whole_j2
same whole_j1 whole_recurse
same whole_j1 whole_restart
same multi_j1 multi_j2
same gzip_j1 gzip_j2
same zstd_j1 zstd_j2
same vlen_j1 vlen_j2
same split_j1 split_j2
same split_j1 split_one
same one_shot gather

# A line "KEY MD5 LIB=VERSION" holds for builds whose codec library LIB (zstd: its version as h5shuf -V
# prints it) is that version: a codec's compressed bytes may differ between its versions (the contract
# allows that; the decoded values may not, which verify checked above, and runs of one build agree, which
# same checked).  A key whose lines are all for other versions is reported as skipped.
zstd_version=$("$H" -V | sed -n 's/.*zstd \([0-9.]*\).*/\1/p')
declare -A checked
while read -r key want cond; do
    if [ -n "$cond" ] && [ "$cond" != "zstd=$zstd_version" ]; then
        checked[$key]=${checked[$key]:-other}
        continue
    fi
    checked[$key]=yes
    got=$(printf '%s\n' "${results[@]}" | awk -v k="$key" '$1 == k {print $2}')
    if [ "$got" = "$want" ]; then
        echo "ok - $key $got${cond:+ ($cond)}"
    else
        fail "$key: md5 ${got:-missing}, expected $want${cond:+ ($cond)}"
    fi
done <"$EXPECTED"
for key in "${!checked[@]}"; do
    [ "${checked[$key]}" = yes ] ||
        echo "ok - $key # SKIP no md5 recorded for zstd $zstd_version (its values checked by verify, its runs agree)"
done
[ "${#checked[@]}" -eq "${#results[@]}" ] || fail "the runs wrote ${#results[@]} files, ${#checked[@]} expected"
echo "$failed failed"
[ "$failed" -eq 0 ]
