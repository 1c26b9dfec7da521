#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# disk_full.sh - the disk fills up during pass 1 (scratch on a 3 MiB tmpfs) and during pass 2 (output on
# a 3 MiB tmpfs): exit 1, one line "no space left on DIR: N MiB more needed (...)" naming the full
# directory, --json's status "not enough disk space" (H5SHUF_ENOSPC, not an HDF5 error), nothing partial
# left on either side, the input unchanged.  The up-front free-space check is skipped
# (--debug-no-space-check), else the run would refuse to start.  Then the output under a path near
# PATH_MAX: the one line holds the whole directory and its end.  Then a resumable run (--resume
# --checkpoint 1M, issue 48 item 6) that runs out of space in pass 1 (scratch) and in pass 2 (output):
# its state is kept and the line says so; once the tmpfs is grown (mount -o remount) the same command
# with --resume writes the uninterrupted run's md5 and leaves nothing.  The same for a disk that fails
# (EIO at the Nth write of the checkpointed files, H5SHUF_DEBUG_WAL_EIO_AT of the fault build), where the
# state is kept too.  Needs to mount tmpfs: skipped (77) where that is not allowed.
# Usage: bash tests/disk_full.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata [PATH/TO/h5shuf-fault]
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2 HF=${3:-}
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
leftover() { find "$W/small" "$W/big" -mindepth 1 -not -name in.h5; }
check() { # NAME RC ERRFILE DIR: one line "no space left on DIR: N MiB more needed", nothing left
    local left; left=$(leftover)
    if [ "$2" = 1 ] && [ "$(wc -l <"$3")" = 1 ] && grep -q "^h5shuf: no space left on $4: [1-9][0-9]* MiB more needed (" "$3" \
        && [ -z "$left" ] && [ "$(md5sum <"$W/in.h5")" = "$sum" ]; then
        echo "ok - $1: $(cut -c 1-300 "$3")"; passed=$((passed + 1))
    else
        echo "not ok - $1 (exit $2, left: $left)"; sed 's/^/#   /' "$3" | cut -c 1-400; failed=$((failed + 1))
    fi
}
"$H" --debug-no-space-check --strategy two-pass -s 1 -t "$W/small" "$W/in.h5" "$W/big/o.h5" 2>"$W/err1"
check "disk full during pass 1 (scratch)" $? "$W/err1" "$W/small"
"$H" --debug-no-space-check -s 1 -c none -t "$W/big" "$W/in.h5" "$W/small/o.h5" 2>"$W/err2"
check "disk full during pass 2 (output)" $? "$W/err2" "$W/small"
"$H" --json --debug-no-space-check -s 1 -c none -t "$W/big" "$W/in.h5" "$W/small/o.h5" >"$W/json" 2>/dev/null
if /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r["status"] != "not enough disk space" or not r["error"].startswith("no space left on "))' "$W/json"; then
    echo "ok - --json: status \"not enough disk space\""; passed=$((passed + 1))
else
    echo "not ok - --json: $(cut -c 1-300 "$W/json")"; failed=$((failed + 1))
fi
rm -rf "${W:?}/big/"*
# The output under a path of about 3900 characters (near PATH_MAX): the whole message fits, the directory
# whole in it.
long="$W/small/$(printf 'd%.0s' {1..200})"
for k in $(seq 1 18); do long="$long/$(printf "%02d" "$k")$(printf 'e%.0s' {1..200})"; done
mkdir -p "$long"
"$H" --debug-no-space-check -s 1 -c none -t "$W/big" "$W/in.h5" "$long/o.h5" 2>"$W/err3"
rc=$?
if grep -qF "no space left on $long: " "$W/err3" && [ "$(tail -c 7 "$W/err3")" = " free)" ]; then
    rm -rf "${W:?}/small/"d*
    check "disk full under a path of ${#long} characters (the message holds it whole)" "$rc" "$W/err3" "$W/small/d.*"
else
    echo "not ok - disk full under a path of ${#long} characters: exit $rc, the message does not hold it whole"
    tail -c 300 "$W/err3" | sed 's/^/#   .../'
    failed=$((failed + 1))
    rm -rf "${W:?}/small/"d*
fi

# A resumable run out of space, then resumed once there is room: the uninterrupted run's bytes.
"$H" -q --checkpoint 1M --strategy two-pass -s 1 -m 8M -t "$W/big" "$W/in.h5" "$W/big/ref.h5" || exit 1
ref=$(md5sum <"$W/big/ref.h5")
rm -f "$W/big/ref.h5"
resumed() { # NAME FULLDIR SCRATCH OUT: the run fails for want of room on FULLDIR, keeps its state, resumes
    local name=$1 full=$2 scratch=$3 out=$4 rc state
    local A=(--checkpoint 1M --strategy two-pass -s 1 -m 8M -t "$scratch" "$W/in.h5" "$out")
    "$H" --debug-no-space-check --resume "${A[@]}" 2>"$W/err"
    rc=$?
    state=("$scratch"/h5shuf-resume-*)
    if [ "$rc" = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && [ ${#state[@]} = 1 ] &&
        grep -q "^h5shuf: no space left on $full: [1-9][0-9]* MiB more needed (.*); the run's state is kept in ${state[0]}: once there is room, run it again with --resume" "$W/err" &&
        [ ! -e "$out" ]; then
        echo "ok - $name: exit 1, the state kept: $(cut -c 1-250 "$W/err")..."; passed=$((passed + 1))
    else
        echo "not ok - $name: exit $rc, state: ${state[*]}"; sed 's/^/#   /' "$W/err" | cut -c 1-400; failed=$((failed + 1))
    fi
    mount -o remount,size=64m "$W/small"
    "$H" -q --resume "${A[@]}" 2>"$W/err"
    rc=$?
    if [ "$rc" = 0 ] && [ "$(md5sum <"$out")" = "$ref" ] && [ "$(leftover)" = "$out" ]; then
        echo "ok - ... resumed once there is room: the uninterrupted run's md5, nothing else left"; passed=$((passed + 1))
    else
        echo "not ok - ... resumed: exit $rc, left: $(leftover)"; sed 's/^/#   /' "$W/err" | cut -c 1-400
        failed=$((failed + 1))
    fi
    rm -rf "${W:?}/small/"* "${W:?}/big/"*
    mount -o remount,size=3m "$W/small"
}
resumed "--resume, out of space in pass 1 (scratch)" "$W/small" "$W/small" "$W/big/o.h5"
resumed "--resume, out of space in pass 2 (output)" "$W/small" "$W/big" "$W/small/o.h5"

# A disk that fails (EIO at the 40th write of the checkpointed files) in a run that checkpoints without
# --resume on its command line: the state is kept all the same, and the resume gives the same bytes.
if [ -n "$HF" ]; then
    A=(--checkpoint 1M --strategy two-pass -s 1 -m 8M -t "$W/big" "$W/in.h5" "$W/big/o.h5")
    H5SHUF_DEBUG_WAL_EIO_AT=40 "$HF" "${A[@]}" 2>"$W/err"
    rc=$?
    state=("$W/big"/h5shuf-resume-*)
    if [ "$rc" = 1 ] && [ ${#state[@]} = 1 ] && grep -q "Input/output error.*; the run's state is kept in ${state[0]}: once the disk is mended, run it again with --resume" "$W/err" &&
        "$HF" -q --resume "${A[@]}" && [ "$(md5sum <"$W/big/o.h5")" = "$ref" ] && [ "$(leftover)" = "$W/big/o.h5" ]; then
        echo "ok - an I/O error mid-run: the state kept, the resume writes the uninterrupted md5"; passed=$((passed + 1))
    else
        echo "not ok - an I/O error mid-run: exit $rc, left: $(leftover)"; sed 's/^/#   /' "$W/err" | cut -c 1-400
        failed=$((failed + 1))
    fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
