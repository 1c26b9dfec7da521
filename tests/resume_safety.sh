#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# resume_safety.sh - what --resume refuses, and what a run without it does with an interrupted run's state
# (issue 26 item 4).  A two-pass run is killed (H5SHUF_KILL_AT, h5shuf-fault) in its pass 2, leaving its
# state; then, each time checking exit 1, one line naming the cause, and the state and output directory
# unchanged (md5 of every file): a run without --resume; an input with one value rewritten in place by
# h5py (same size); a dataset appended to; another seed; other shards; a state directory open to others;
# a restart of the machine since unsynced checkpoints (simulated).  Synced checkpoints survive that.
# After each change is undone (the bytes and the mtime put back), --resume writes the uninterrupted run's
# bytes.  A torn last journal record is ignored.  --resume with no state runs from the beginning.
# Another user's directory (as root: chown nobody) or a symbolic link at a run's state name (issue 48
# item 5: anyone can make one in a shared /tmp): a run without --resume warns once, exits 0, keeps no state
# and writes the bytes of the checkpointed run it would have been (token sequences, whose bytes depend on
# the checkpoint interval); --resume is refused in one line.  An input under a path of over 1100
# characters, changed in place (same size): the identity line that holds its size and time after the path
# is compared whole, and --resume refuses.
# Usage: bash tests/resume_safety.sh PATH/TO/h5shuf-fault PATH/TO/h5shuf_gendata
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2
PY=/usr/bin/python3
"$PY" -c 'import h5py' 2>/dev/null || { echo "ok - # SKIP no h5py"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-resume.XXXXXX")
trap 'rm -rf "$W"' EXIT
failed=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; failed=$((failed + 1)); }
"$PY" - "$W/in.h5" <<'EOF' || exit 1
import sys, h5py, numpy as np
x = np.random.default_rng(1).standard_normal((30000, 16)).astype(np.float32)
with h5py.File(sys.argv[1], "w") as f:  # appendable, as a user's growing dataset is
    f.create_dataset("x", data=x, maxshape=(None, 16), chunks=(1000, 16), compression="gzip")
    f.create_dataset("y", data=np.arange(30000), maxshape=(None,), chunks=(4096,))
EOF
mkdir "$W/s" "$W/o" "$W/ref"
A=(-q -t "$W/s" -s 5 -m 8M --strategy two-pass --checkpoint 128K)
"$H" "${A[@]}" "$W/in.h5" "$W/ref/o.h5" || exit 1
rm -rf "$W/s"/*
ref=$(md5sum <"$W/ref/o.h5")
# kill in pass 2: at the point where the second commit of an output file is recorded
H5SHUF_KILL_COUNT="$W/count" "$H" "${A[@]}" --resume "$W/in.h5" "$W/o/x.h5" && rm -rf "$W/s"/* "$W/o"/*
H5SHUF_KILL_AT=$(($(cat "$W/count") - 12)) "$H" "${A[@]}" --resume "$W/in.h5" "$W/o/o.h5" 2>/dev/null
state=("$W/s"/h5shuf-resume-*)
[ ${#state[@]} = 1 ] && ok "a killed run leaves its state ($(basename "${state[0]}"))" || bad "no state left: ${state[*]}"
snapshot() { (cd "$W" && find s o -type f -print0 | sort -z | xargs -0 md5sum | md5sum); }
before=$(snapshot)

# refused ARGS... WORD: exit 1, one line containing WORD, nothing changed
refused() {
    local what=$1 word=$2
    shift 2
    "$H" "$@" 2>"$W/err"
    local rc=$?
    if [ "$rc" = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q -- "$word" "$W/err" && [ "$(snapshot)" = "$before" ]; then
        ok "$what: refused, one line: $(cat "$W/err")"
    else
        bad "$what: exit $rc, $(cat "$W/err"), state $( [ "$(snapshot)" = "$before" ] && echo unchanged || echo changed)"
    fi
}
refused "a run without --resume" "add --resume to continue, or remove it" "${A[@]}" "$W/in.h5" "$W/o/o.h5"
refused "--plan without --resume" "add --resume" "${A[@]}" --plan "$W/in.h5" "$W/o/o.h5"

# change_input PYTHON: run PYTHON on the input (h5py as f), check --resume refuses, put the input back
mtime=$("$PY" -c 'import os,sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$W/in.h5")
cp "$W/in.h5" "$W/in.orig"
change_input() {
    local what=$1 code=$2
    "$PY" -c "import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'r+') as f:
    $code" "$W/in.h5" || { bad "$what: h5py failed"; return; }
    refused "$what" "in.h5: changed since the interrupted run" "${A[@]}" --resume "$W/in.h5" "$W/o/o.h5"
    cp "$W/in.orig" "$W/in.h5" # (the same inode: cp writes into it)
    "$PY" -c 'import os,sys; os.utime(sys.argv[1], ns=(int(sys.argv[2]), int(sys.argv[2])))' "$W/in.h5" "$mtime"
}
change_input "one value of a chunk rewritten in place" "f['x'][12345, 3] = 42.0"
change_input "a dataset appended to" "[f[n].resize(30001, axis=0) for n in ('x', 'y')]"
refused "another seed" "seed differs" "${A[@]/-s/-s}" --resume -s 6 "$W/in.h5" "$W/o/o.h5"
refused "other shards" "shards differs" "${A[@]}" --resume --shards 2 "$W/in.h5" "$W/o/o.h5"
chmod 0755 "${state[0]}"
refused "a state directory others can read" "this user's directory but open to others" "${A[@]}" --resume "$W/in.h5" "$W/o/o.h5"
chmod 0700 "${state[0]}"

# a restart of the machine (simulated: another boot_id, H5SHUF_DEBUG_BOOT_ID of the test build): the
# unsynced checkpoints are refused
H5SHUF_DEBUG_BOOT_ID=another-boot refused "the machine restarted since unsynced checkpoints" \
    "this machine has restarted since" "${A[@]}" --resume "$W/in.h5" "$W/o/o.h5"

# a torn last record (half of a record's bytes at the end): ignored
printf '\x43\x45\x52\x4a\x04\x00\x00\x00\xff' >>"${state[0]}/journal"
if "$H" "${A[@]}" --resume -m 16M -j 1 "$W/in.h5" "$W/o/o.h5" 2>"$W/err" && [ "$(md5sum <"$W/o/o.h5")" = "$ref" ]; then
    left=("$W/s"/* "$W/o"/.o*)
    [ ${#left[@]} = 0 ] && ok "resumed after the refusals (and a torn journal record): the uninterrupted run's md5, nothing left" \
        || bad "left: ${left[*]}"
else
    bad "the resume failed: $(cat "$W/err")"
fi
rm -f "$W/o/o.h5"
# synced checkpoints (--checkpoint SIZE,sync) survive a restart: killed, then resumed on "another boot"
S=(-q -t "$W/s" -s 5 -m 8M --strategy two-pass --checkpoint 128K,sync)
H5SHUF_KILL_COUNT="$W/count" "$H" "${S[@]}" --resume "$W/in.h5" "$W/o/y.h5" && rm -rf "$W/s"/* "$W/o"/*
H5SHUF_KILL_AT=$(($(cat "$W/count") - 12)) "$H" "${S[@]}" --resume "$W/in.h5" "$W/o/o.h5" 2>/dev/null
if H5SHUF_DEBUG_BOOT_ID=another-boot "$H" "${S[@]}" --resume "$W/in.h5" "$W/o/o.h5" 2>"$W/err" &&
    [ "$(md5sum <"$W/o/o.h5")" = "$ref" ] && [ -z "$(ls -A "$W/s")" ]; then
    ok "synced checkpoints resumed after a (simulated) restart: the uninterrupted md5, nothing left"
else
    bad "synced checkpoints after a restart: $(cat "$W/err")"
fi
rm -f "$W/o/o.h5"
# --resume with nothing to resume: from the beginning
if "$H" "${A[@]}" --resume "$W/in.h5" "$W/o/o.h5" 2>"$W/err" && [ "$(md5sum <"$W/o/o.h5")" = "$ref" ] && [ -z "$(ls -A "$W/s")" ]; then
    ok "--resume with no state: a whole run, the same md5, no state left"
else
    bad "--resume with no state: $(cat "$W/err")"
fi
rm -f "$W/o/o.h5"
# A state whose removal was cut short (h5shuf__resume_remove takes the journal first; a failed run removes
# its state before the outputs it names): no journal, its other files left.  It is no state: a run without
# --resume removes it and runs from the beginning (before, "cannot open the journal", or a refusal).
H5SHUF_KILL_AT=$(($(cat "$W/count") - 12)) "$H" "${A[@]}" --resume "$W/in.h5" "$W/o/o.h5" 2>/dev/null
cut=("$W/s"/h5shuf-resume-o.h5-*)
if [ ${#cut[@]} = 1 ] && [ -e "${cut[0]}/journal" ] && [ "$(ls -A "${cut[0]}" | wc -l)" -gt 1 ]; then
    rm -f "${cut[0]}/journal"
    if "$H" "${A[@]}" "$W/in.h5" "$W/o/o.h5" 2>"$W/err" && [ "$(md5sum <"$W/o/o.h5")" = "$ref" ] && [ ! -e "${cut[0]}" ]; then
        ok "a state without its journal (a removal cut short) is removed, the run goes on: the uninterrupted md5"
    else
        bad "a state without its journal: exit or md5 or $(ls -A "$W/s"): $(head -c 300 "$W/err")"
    fi
else
    bad "the killed run left no state with files beside its journal: $(ls -A "$W/s" "${cut[@]}")"
fi
rm -rf "$W/s"/* "$W/o"/*

# A foreign directory or a symbolic link at the state's name.
rm -f "$W/o"/*
"$PY" - "$W/v.h5" <<'PYEOF' || exit 1
import sys, h5py, numpy as np
rng = np.random.default_rng(2)
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("tok", (5000,), dtype=h5py.vlen_dtype(np.int32), chunks=(256,))
    for i in range(5000):
        d[i] = rng.integers(0, 1000, rng.integers(1, 40)).astype(np.int32)
PYEOF
V=(-q -t "$W/s" -s 3 -m 8M --checkpoint 32K)
"$H" "${V[@]}" "$W/v.h5" "$W/ref/v.h5" && "$H" "${V[@]/32K/off}" "$W/v.h5" "$W/ref/v-off.h5" || exit 1
[ "$(md5sum <"$W/ref/v.h5")" != "$(md5sum <"$W/ref/v-off.h5")" ] ||
    bad "the token sequences' bytes do not depend on the checkpoint interval: the test below proves nothing"
H5SHUF_KILL_AT=20 "$H" "${V[@]}" --resume "$W/v.h5" "$W/o/v.h5" 2>/dev/null
vstate=("$W/s"/h5shuf-resume-v.h5-*-uid"$(id -u)")
[ ${#vstate[@]} = 1 ] || bad "no state named with the user's id: $(ls "$W/s")"
rm -rf "$W/s"/* "$W/o"/.v.h5*
squat() { # WHAT: a run without --resume goes on, one warning, no state kept, the checkpointed run's bytes
    local what=$1
    "$H" "${V[@]}" "$W/v.h5" "$W/o/v.h5" 2>"$W/err"
    local rc=$?
    if [ "$rc" = 0 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q "^h5shuf: warning: ${vstate[0]}: $what, not a state of this user's: ignored; this run keeps no state" "$W/err" &&
        [ "$(md5sum <"$W/o/v.h5")" = "$(md5sum <"$W/ref/v.h5")" ] && [ "$(ls -A "$W/s")" = "$(basename "${vstate[0]}")" ] &&
        [ -z "$(ls -A "$W/o" | grep -v '^v.h5$')" ]; then
        ok "$what at the state's name: the run goes on, warns once, keeps no state, the checkpointed bytes"
    else
        bad "$what at the state's name: exit $rc, $(cat "$W/err"), $(ls -A "$W/s" "$W/o")"
    fi
    rm -f "$W/o/v.h5"
    "$H" "${V[@]}" --resume "$W/v.h5" "$W/o/v.h5" 2>"$W/err"
    rc=$?
    [ "$rc" = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q "$what, not a state of this user's: refusing" "$W/err" &&
        [ -z "$(ls -A "$W/o")" ] && ok "... --resume refuses it: $(cat "$W/err")" || bad "... --resume: exit $rc, $(cat "$W/err")"
}
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -m 0700 "${vstate[0]}" && chown nobody "${vstate[0]}"
    squat "another user's directory (uid $(id -u nobody))"
    rmdir "${vstate[0]}"
else
    echo "ok - # SKIP another user's directory: not root"
fi
ln -s "$W/ref" "${vstate[0]}"
squat "a symbolic link"
rm -f "${vstate[0]}"

# An input under a long path, changed after the kill: found out, however long the identity line.
long="$W/$(printf 'd%.0s' {1..200})"
for k in 1 2 3 4 5; do long="$long/$k$(printf 'e%.0s' {1..200})"; done
mkdir -p "$long" && cp "$W/in.orig" "$long/in.h5"
H5SHUF_KILL_AT=20 "$H" "${A[@]}" --resume "$long/in.h5" "$W/o/l.h5" 2>/dev/null
"$PY" -c "import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f:
    f['x'][12345, 3] = 42.0" "$long/in.h5"
"$H" "${A[@]}" --resume "$long/in.h5" "$W/o/l.h5" 2>"$W/err"
rc=$?
if [ "$rc" = 1 ] && grep -qF "$long/in.h5: changed since the interrupted run" "$W/err" && [ ! -e "$W/o/l.h5" ]; then
    ok "an input under a path of ${#long} characters changed in place: --resume refuses"
else
    bad "an input under a path of ${#long} characters changed in place: exit $rc, $(cut -c 1-200 "$W/err")"
fi
rm -rf "$W/s"/* "$W/o"/* "$W/o"/.l.h5*
[ "$failed" = 0 ]
