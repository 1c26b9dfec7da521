#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# codec_alloc_sweep.sh - every allocation of the codec libraries h5shuf calls (libzstd, libdeflate, liblz4,
# liblzf, libxxhash) fails in turn, through tests/failmalloc.c preloaded (FAILMALLOC_AT=1, 2, ... until a
# run counts no more of them), in shuffles that use each codec: gzip in and out (libdeflate), zstd output,
# zstd scratch, LZF input (h5py), bitshuffle+LZ4 and bitshuffle+zstd inputs (hdf5plugin's filter, when
# installed), and a verify of variable-length rows (xxhash).  Every run must exit 1 with one line "h5shuf:
# ..." and leave nothing in its output and scratch directories, or exit 0 with an output that verifies (a
# failed allocation a codec recovers from).  h5shuf's own allocations are swept by fault_sweep.sh (fault
# points of the H5SHUF_FAULT_INJECTION build); libhdf5's are not failed (HDF5 crashes on them).
# Skipped (77) in a sanitizer build, whose allocator cannot be preloaded over.
# Usage: bash tests/codec_alloc_sweep.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata PATH/TO/libfailmalloc.so
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2 SHIM=$3
PY=/usr/bin/python3
if ldd "$H" 2>/dev/null | grep -q -E 'lib(a|t|ub)san'; then
    echo "skipped: a sanitizer build (its allocator cannot be preloaded over)"
    exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-failmalloc.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/out" "$W/scratch"
"$GEN" floats "$W/raw.h5" 50000 16 >/dev/null || exit 1
"$GEN" floats "$W/gz.h5" 50000 16 4 >/dev/null || exit 1
"$PY" - "$W" <<'EOF' || exit 1
import sys, h5py, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(3)
x = rng.integers(0, 1000, (20000, 8)).astype(np.float32)
with h5py.File(w + "/lzf.h5", "w") as f:
    f.create_dataset("x", data=x, chunks=(1000, 8), compression="lzf")
with h5py.File(w + "/vl.h5", "w") as f:
    d = f.create_dataset("v", (3000,), dtype=h5py.vlen_dtype(np.int32))
    for i in range(3000):
        d[i] = np.arange(i % 40, dtype=np.int32)
try:
    import hdf5plugin
    with h5py.File(w + "/bslz4.h5", "w") as f:
        f.create_dataset("x", data=x, chunks=(1000, 8), **hdf5plugin.Bitshuffle(cname="lz4"))
except ImportError:
    pass
EOF
failed=0 points=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }

# sweep NAME ARGS...: h5shuf ARGS (its output $W/out/o.h5, scratch in $W/scratch) with the codec
# allocations failing one at a time.  With ARGS starting with "verify", the run is a verify (no output).
sweep() {
    local name=$1 n=1 total rc
    shift
    local ins=()
    for a in "$@"; do [[ $a == "$W"/*.h5 && $a != "$W/out/"* ]] && ins+=("$a"); done
    local sums
    sums=$(md5sum "${ins[@]}")
    while :; do
        rm -rf "$W/out/"* "$W/scratch/"*
        rm -f "$W/count"
        FAILMALLOC_AT=$n FAILMALLOC_REPORT=$W/count LD_PRELOAD=$SHIM "$H" "$@" >/dev/null 2>"$W/err"
        rc=$?
        total=$(sed 's/^0*\([0-9]\)/\1/' "$W/count" 2>/dev/null)
        mapfile -t err <"$W/err"
        local left=("$W/scratch"/*)
        if [ -z "$total" ]; then
            fail "$name, allocation $n: no count (exit $rc): ${err[*]}"
            return
        fi
        if [ "$n" -gt "$total" ]; then # past the last allocation: the run passed them all
            [ "$rc" = 0 ] || fail "$name: exit $rc with no allocation failed: ${err[*]}"
            echo "# $name: $total codec allocations"
            break
        fi
        points=$((points + 1))
        if [ "$rc" = 1 ]; then
            left+=("$W/out"/*)
            if [ ${#err[@]} != 1 ] || [[ ${err[0]} != "h5shuf: "* ]]; then
                fail "$name, allocation $n of $total: exit 1 with ${#err[@]} lines"
                printf '#   %s\n' "${err[@]}" | head -5
            fi
        elif [ "$rc" = 0 ] && [ "$1" != verify ]; then
            left+=("$W/out"/.*h5shuf*)
            "$H" verify "${ins[@]}" "$W/out/o.h5" >/dev/null 2>"$W/verr" ||
                fail "$name, allocation $n of $total: exit 0 but: $(cat "$W/verr")"
        elif [ "$rc" != 0 ]; then
            fail "$name, allocation $n of $total: exit $rc"
            printf '#   %s\n' "${err[@]}" | head -5
        fi
        [ ${#left[@]} = 0 ] || fail "$name, allocation $n of $total: left ${left[*]}"
        n=$((n + 1))
    done
    [ "$(md5sum "${ins[@]}")" = "$sums" ] || fail "$name: an input changed"
}

O=$W/out/o.h5
sweep gzip -s 1 -m 4M -j 2 -t "$W/scratch" "$W/gz.h5" "$O"
sweep gzip-j1 -s 1 -m 4M -j 1 -t "$W/scratch" "$W/gz.h5" "$O"
sweep zstd-out -s 1 -m 4M -j 2 -c zstd:3+shuffle -t "$W/scratch" "$W/raw.h5" "$O"
sweep zstd-scratch -s 1 -m 4M -j 2 --strategy two-pass --scratch-compression zstd:1+shuffle -t "$W/scratch" "$W/raw.h5" "$O"
sweep lzf -s 1 -m 4M -j 2 -t "$W/scratch" "$W/lzf.h5" "$O"
[ -f "$W/bslz4.h5" ] && sweep bitshuffle-lz4 -s 1 -m 4M -j 2 -t "$W/scratch" "$W/bslz4.h5" "$O"
"$H" -s 1 -q "$W/vl.h5" "$W/vl_out.h5" || exit 1
sweep verify-vlen verify "$W/vl.h5" "$W/vl_out.h5"
echo "# $points codec allocations failed in turn"
[ "$points" -ge 10 ] || fail "only $points codec allocations were failed: is the preloaded library intercepting?"
if [ "$failed" = 0 ]; then
    echo "ok - every failed codec allocation: exit 1 and one line, or a verified output; nothing left"
    exit 0
fi
echo "$failed failed"
exit 1
