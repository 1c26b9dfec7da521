#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# clock.sh - no wall clock in any file h5shuf writes, nor in what the unit suites compare byte for byte.
# Under tests/clockshift.c (LD_PRELOAD: every time(2) and gettimeofday(2) one second after the last, so
# a second boundary falls between any two reads) the outputs of a one-pass and a two-pass run, with one
# and two threads, and of scatter then gather, are the same bytes as under the real clock; test_chunkio,
# which compares files HDF5 wrote with files chunkio wrote beside them, passes.  First, the module is
# shown to move HDF5's clock: an h5py file whose dataset has its time tracked (track_times=True) made
# under it differs from the same file made under the real clock (the module's clock starts in 2023).
# Usage: bash tests/clock.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata PATH/TO/libclockshift.so PATH/TO/test_chunkio
set -u
H=$1 GEN=$2 SHIM=$3 CHUNKIO=$4
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-clock.XXXXXX")
trap 'rm -rf "$W"' EXIT
failed=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }
# PROGRAM ARGS... under the module (a sanitized program's runtime must be the first library loaded)
asan=$(ldd "$H" | awk '/libasan/ {print $3}')
shifted() { LD_PRELOAD="${asan:+$asan }$SHIM" "$@"; }

stamped() { # PATH: an h5py file whose dataset's header records the time
    /usr/bin/python3 -c 'import h5py, sys
h5py.File(sys.argv[1], "w").create_dataset("x", data=[1], track_times=True)' "$1"
}
stamped "$W/g1.h5" && LD_PRELOAD=$SHIM stamped "$W/g2.h5" || exit 1
if cmp -s "$W/g1.h5" "$W/g2.h5"; then bad "the module does not move HDF5's clock (h5py's files are equal)"
else ok "the module moves HDF5's clock"; fi

"$GEN" floats "$W/in.h5" 60000 64 1 || exit 1
in_md5=$(md5sum <"$W/in.h5")
mkdir "$W/real" "$W/shifted" "$W/scratch"
same() { # NAME ARGS...: h5shuf ARGS with OUT as the output, under the real clock, then under the module
    local name=$1; shift
    "$H" -q -s 7 -t "$W/scratch" "$@" "$W/real/$name.h5" || { bad "$name: failed"; return; }
    shifted "$H" -q -s 7 -t "$W/scratch" "$@" "$W/shifted/$name.h5" ||
        { bad "$name: failed under the module"; return; }
    cmp -s "$W/real/$name.h5" "$W/shifted/$name.h5" && ok "$name: the same bytes" ||
        bad "$name: the output carries the clock"
}
same one-pass -m 1G "$W/in.h5"
same two-pass -m 5M -j 1 "$W/in.h5"
same two-pass-j2 -m 5M -j 2 "$W/in.h5"
same gzip -m 5M -c gzip:1+shuffle "$W/in.h5"
"$H" scatter -q -s 7 -m 5M -t "$W/scratch" "$W/in.h5" "$W/real/piles.h5" &&
    shifted "$H" scatter -q -s 7 -m 5M -t "$W/scratch" "$W/in.h5" "$W/shifted/piles.h5" || bad "scatter failed"
cmp -s "$W/real/piles.h5" "$W/shifted/piles.h5" && ok "scatter: the same bytes" ||
    bad "scatter: the pile file carries the clock"
"$H" gather -q -m 5M -t "$W/scratch" "$W/real/piles.h5" "$W/real/gathered.h5" &&
    shifted "$H" gather -q -m 5M -t "$W/scratch" "$W/real/piles.h5" "$W/shifted/gathered.h5" || bad "gather failed"
cmp -s "$W/real/gathered.h5" "$W/shifted/gathered.h5" && ok "gather: the same bytes" ||
    bad "gather: the output carries the clock"
[ "$(md5sum <"$W/in.h5")" = "$in_md5" ] && ok "input unchanged" || bad "input changed"

(cd "$W" && TMPDIR=$W shifted "$CHUNKIO" >"$W/chunkio.log" 2>&1) && ok "test_chunkio under the module" ||
    { grep -E "FAIL|differ|asserts" "$W/chunkio.log" | sed 's/^/#   /'; bad "test_chunkio under the module"; }
[ "$failed" -eq 0 ]
