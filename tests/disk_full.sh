#!/usr/bin/env bash
# disk_full.sh - the disk fills up during pass 1 (scratch on a 3 MiB tmpfs) and during pass 2 (output on
# a 3 MiB tmpfs): exit 1, one line saying "No space left on device" and naming the file, nothing partial
# left on either side, the input unchanged.  The up-front free-space check is skipped
# (--debug-no-space-check), else the run would refuse to start.  Then the output under a path near PATH_MAX:
# the one line ends with the system's cause.  Needs to mount tmpfs: skipped (77)
# where that is not allowed.
# Usage: bash tests/disk_full.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
H=$1 GEN=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-full.XXXXXX")
cleanup() { for m in "$W/small" "$W/big"; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done; rm -rf "$W"; }
trap cleanup EXIT
mkdir "$W/small" "$W/big"
if ! mount -t tmpfs -o size=3m tmpfs "$W/small" 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs here"
    exit 77
fi
passed=0 failed=0
"$GEN" floats "$W/in.h5" 80000 64 1 || exit 1 # 20 MB of rows
sum=$(md5sum <"$W/in.h5")
check() { # NAME RC ERRFILE PATTERN
    local left; left=$(find "$W/small" "$W/big" -mindepth 1 -not -name in.h5)
    if [ "$2" = 1 ] && [ "$(wc -l <"$3")" = 1 ] && grep -qi "no space left on device" "$3" && grep -q "$4" "$3" \
        && [ -z "$left" ] && [ "$(md5sum <"$W/in.h5")" = "$sum" ]; then
        echo "ok - $1: $(cat "$3")"; passed=$((passed + 1))
    else
        echo "not ok - $1 (exit $2, left: $left)"; sed 's/^/#   /' "$3"; failed=$((failed + 1))
    fi
}
"$H" --debug-no-space-check --strategy two-pass -s 1 -t "$W/small" "$W/in.h5" "$W/big/o.h5" 2>"$W/err1"
check "disk full during pass 1 (scratch)" $? "$W/err1" "$W/small/h5shuf-scratch"
"$H" --debug-no-space-check -s 1 -c none -t "$W/big" "$W/in.h5" "$W/small/o.h5" 2>"$W/err2"
check "disk full during pass 2 (output)" $? "$W/err2" "$W/small/o.h5"
# The output under a path of about 3900 characters (near PATH_MAX): the whole message fits, and it ends
# with the system's cause (HDF5's driver text, which repeats the file name, was cut at 256 characters).
long="$W/small/$(printf 'd%.0s' {1..200})"
for k in $(seq 1 18); do long="$long/$(printf "%02d" "$k")$(printf 'e%.0s' {1..200})"; done
mkdir -p "$long"
"$H" --debug-no-space-check -s 1 -c none -t "$W/big" "$W/in.h5" "$long/o.h5" 2>"$W/err3"
rc=$?
if [ "$(tail -c 24 "$W/err3")" = "No space left on device" ] && [ "$(wc -c <"$W/err3")" -gt ${#long} ]; then
    rm -rf "${W:?}/small/"d*
    check "disk full under a path of ${#long} characters (the message ends with the cause)" "$rc" "$W/err3" "$long/o.h5"
else
    echo "not ok - disk full under a path of ${#long} characters: exit $rc, the message does not end with the cause"
    sed 's/^/#   /' "$W/err3" | cut -c 1-300
    tail -c 300 "$W/err3" | sed 's/^/#   .../'
    failed=$((failed + 1))
    rm -rf "${W:?}/small/"d*
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
