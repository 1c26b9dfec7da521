#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# commit_safety.sh - how finished outputs take their names, and what they never do to other files:
# - --force over three existing shards is all or nothing: a fault at each of the last points of the run
#   (the commit: keeping the old shards aside, placing each new one, syncing; h5shuf-fault) and a
#   directory that appears at shard 2's name during the run both leave the old shards' bytes (md5) and
#   nothing else; the run that passes every point leaves the new shards and nothing else;
# - a dangling symbolic link at the output's name is refused before any work (it exists), and replaced as
#   a name with --force (its missing target is not created);
# - an output name 14 characters short of NAME_MAX (its temporary name is cut to fit) works;
# - the output's mode is the inputs' read and write bits less the umask, as cp makes a new file: a 0600
#   input gives a 0600 output, a 0644 input 0644 (umask 022) or 0600 (umask 077), 0600 and 0644 inputs
#   together 0600; a gather's output takes its pile file's; the umask is read (/proc/self/status), never
#   set, not even set back at once (a library's caller's other threads would see it change): under
#   strace, a run makes no umask(2) call.
# Usage: bash tests/commit_safety.sh PATH/TO/h5shuf PATH/TO/h5shuf-fault PATH/TO/h5shuf_gendata
set -u
shopt -s nullglob dotglob
H=$1 HF=$2 GEN=$3
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-commit.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$GEN" floats "$W/in.h5" 20000 16 1 || exit 1
failed=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }
mkdir "$W/d" "$W/s"
shards=("$W/d/s-00000-of-00003.h5" "$W/d/s-00001-of-00003.h5" "$W/d/s-00002-of-00003.h5")
sums() { md5sum "${shards[@]}" 2>/dev/null | awk '{print $1}' | tr '\n' ' '; }
others() { # names in d other than the three shards
    local f left=()
    for f in "$W/d"/*; do case " ${shards[*]} " in *" $f "*) ;; *) left+=("$(basename "$f")") ;; esac; done
    echo "${left[*]}"
}

# --- forced shards, all or nothing ------------------------------------------------------------------
"$H" -q -s 1 -m 4M -t "$W/s" --shards 3 "$W/in.h5" "$W/d/s.h5" || bad "the first shards run failed"
old=$(sums)
args=(-q -s 2 -m 4M -j 1 -t "$W/s" --force --shards 3 "$W/in.h5" "$W/d/s.h5") # (-j 1: the points in one order)
# the number of fault points: the first N at which a run passes them all
total=0
for n in 1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192; do
    H5SHUF_FAULT_AT=$n "$HF" "${args[@]}" 2>/dev/null && { total=$n; break; }
    [ "$(sums)" = "$old" ] || { bad "a fault at point $n changed the old shards"; break; }
done
lo=$((total / 2))
while [ $((total - lo)) -gt 1 ]; do # bisect: the last failing point is total - 1
    mid=$(((lo + total) / 2))
    if H5SHUF_FAULT_AT=$mid "$HF" "${args[@]}" 2>/dev/null; then total=$mid; else lo=$mid; fi
    if [ "$(sums)" != "$old" ]; then # a passing run replaced them: put the old ones back
        "$H" -q -s 1 -m 4M -t "$W/s" --force --shards 3 "$W/in.h5" "$W/d/s.h5"
    fi
    rm -f "$W/s"/*
done
walked=0 kept=0
for n in $(seq $((total > 40 ? total - 40 : 1)) $((total - 1))); do
    walked=$((walked + 1))
    H5SHUF_FAULT_AT=$n "$HF" "${args[@]}" 2>"$W/err"
    rc=$?
    if [ "$rc" = 1 ] && [ "$(sums)" = "$old" ] && [ -z "$(others)" ] && [ -z "$(ls -A "$W/s")" ] &&
        [ "$(wc -l <"$W/err")" = 1 ]; then
        kept=$((kept + 1))
    else
        echo "#   fault point $n of $total: exit $rc, left: $(others) $(ls -A "$W/s")"; sed 's/^/#     /' "$W/err"
        [ "$(sums)" = "$old" ] || "$H" -q -s 1 -m 4M -t "$W/s" --force --shards 3 "$W/in.h5" "$W/d/s.h5"
    fi
done
[ "$walked" -gt 0 ] && [ "$kept" = "$walked" ] &&
    ok "--force --shards 3: a fault at each of the last $walked points (of $total) leaves the old shards, nothing else" ||
    bad "--force --shards 3: $((walked - kept)) of the last $walked fault points lost or changed the old shards"
H5SHUF_FAULT_AT=$total "$HF" "${args[@]}" 2>/dev/null && [ "$(sums)" != "$old" ] && [ -z "$(others)" ] &&
    ok "--force --shards 3: the run past every point replaces all three, nothing else left" ||
    bad "--force --shards 3: the run past every point did not replace the shards cleanly ($(others))"
"$H" -q -s 1 -m 4M -t "$W/s" --force --shards 3 "$W/in.h5" "$W/d/s.h5" && old=$(sums)
# a directory appears at shard 2's name while the run goes on
"$GEN" floats "$W/big.h5" 400000 16 1 || exit 1
"$H" -q -s 3 -m 8M -t "$W/s" --force --shards 3 "$W/big.h5" "$W/d/s.h5" 2>"$W/err" &
pid=$!
for _ in $(seq 1 400); do
    t=("$W/d"/.s-00002-of-00003.h5.h5shuf-*)
    [ ${#t[@]} -gt 0 ] && break
    sleep 0.01
done
mv "${shards[2]}" "$W/old2.h5" && mkdir "${shards[2]}"
wait "$pid"
rc=$?
rmdir "${shards[2]}" && mv "$W/old2.h5" "${shards[2]}"
[ "$rc" = 1 ] && [ "$(wc -l <"$W/err")" = 1 ] && grep -q "s-00002-of-00003.h5: " "$W/err" && [ "$(sums)" = "$old" ] &&
    [ -z "$(others)" ] &&
    ok "--force --shards 3, a directory at shard 2's name: exit 1, one line naming it, the old shards unchanged, nothing left" ||
    { bad "--force --shards 3, a directory at shard 2's name: exit $rc, left: $(others)"; sed 's/^/#   /' "$W/err"; }

# --- a dangling link at the output's name --------------------------------------------------------------
ln -s "$W/nowhere/x.h5" "$W/link.h5"
"$H" -q -s 1 "$W/in.h5" "$W/link.h5" 2>"$W/err"
rc=$?
[ "$rc" = 1 ] && grep -q "symbolic link" "$W/err" && [ -L "$W/link.h5" ] && [ -z "$(ls "$W/s")" ] &&
    ok "a dangling link at the output: refused before any work ($(cat "$W/err"))" ||
    { bad "a dangling link at the output: exit $rc"; cat "$W/err"; }
"$H" -q -s 1 --force "$W/in.h5" "$W/link.h5" && [ -f "$W/link.h5" ] && [ ! -L "$W/link.h5" ] && [ ! -e "$W/nowhere" ] &&
    ok "--force over a dangling link: the link replaced, its target not made" || bad "--force over a dangling link"

# --- a long name -------------------------------------------------------------------------------------
long=$(printf 'n%.0s' $(seq 1 238)).h5 # 241 characters: NAME_MAX - 14
mkdir "$W/long"
"$H" -q -s 1 "$W/in.h5" "$W/long/$long" 2>"$W/err" && [ -f "$W/long/$long" ] && [ "$(ls -A "$W/long" | wc -l)" = 1 ] &&
    ok "an output name of 241 characters" || { bad "an output name of 241 characters"; cat "$W/err"; }

# --- the output's mode -------------------------------------------------------------------------------
mode_of() { stat -c %a "$1"; }
cp "$W/in.h5" "$W/private.h5" && chmod 600 "$W/private.h5"
cp "$W/in.h5" "$W/public.h5" && chmod 644 "$W/public.h5"
check_mode() { # NAME UMASK EXPECTED INPUT...
    local name=$1 mask=$2 want=$3
    shift 3
    rm -f "$W/m.h5"
    (umask "$mask" && "$H" -q -s 1 "$@" "$W/m.h5") && [ "$(mode_of "$W/m.h5")" = "$want" ] &&
        ok "mode: $name: $want" || bad "mode: $name: $(mode_of "$W/m.h5" 2>/dev/null), expected $want"
}
check_mode "0600 input, umask 022" 022 600 "$W/private.h5"
check_mode "0644 input, umask 022" 022 644 "$W/public.h5"
check_mode "0644 input, umask 077" 077 600 "$W/public.h5"
check_mode "0600 and 0644 inputs" 022 600 "$W/public.h5" "$W/private.h5"
rm -f "$W/p.h5" "$W/g.h5"
(umask 022 && "$H" scatter -q -s 1 "$W/private.h5" "$W/p.h5" && "$H" gather -q "$W/p.h5" "$W/g.h5") &&
    [ "$(mode_of "$W/p.h5")" = 600 ] && [ "$(mode_of "$W/g.h5")" = 600 ] &&
    ok "mode: a scatter's pile file and its gather's output take the input's 0600" ||
    bad "mode: scatter/gather of a 0600 input: $(mode_of "$W/p.h5") $(mode_of "$W/g.h5")"
if command -v strace >/dev/null; then
    rm -f "$W/m.h5"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=umask -o "$W/trace" \
        "$H" -q -s 1 "$W/public.h5" "$W/m.h5" && [ ! -s "$W/trace" ] && [ "$(mode_of "$W/m.h5")" = 644 ] &&
        ok "mode: the umask read without a umask(2) call" || bad "mode: umask(2) called: $(head -3 "$W/trace")"
fi
[ "$failed" -eq 0 ]
