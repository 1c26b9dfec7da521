#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# leftovers.sh - what a run does with the files an interrupted run (SIGKILL) left for the same output
# (issue 26's first step, issue 48 item 4: the names say whose they are, tempfile.h):
#   a two-pass run without state killed with SIGKILL once its scratch file has grown: --plan then says
#   the next run removes its 2 files (still there after it); the same command again exits 0 with one
#   warning "removed 2 files of N MiB that an interrupted run (process PID) left for this output, such as
#   PATH" and leaves the directories as a clean run does (the output alone, the scratch directory empty);
#   a run for another output in the same directory says nothing and removes nothing; nor does a run that
#   finds a live process's temporary (this shell's PID), or another user's file (when run as root);
#   what is reported and kept: a file --force set aside (".NAME.h5shuf-PID-TAG-old-XXXXXX", named first,
#   with what to do), a resumable run's temporary ("-state-": its state is elsewhere), a name from another
#   machine, boot or container (another TAG) and an older h5shuf's name (no TAG); a set-aside name of the
#   very file the output's name holds (a kill within --force's commit) is only a second name: removed.
# Usage: bash tests/leftovers.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
shopt -s nullglob dotglob
H=$1 GEN=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-leftovers.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/out" "$W/scratch"
"$GEN" floats "$W/big.h5" 2000000 16 >/dev/null || exit 1
"$GEN" floats "$W/small.h5" 20000 16 >/dev/null || exit 1
failed=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }
ok() { echo "ok - $*"; }
warnings() { grep -c '^h5shuf: warning: ' "$1"; }
listing() { (cd "$W" && find out scratch -mindepth 1 | sort | tr '\n' ' '); }
run() { "$H" -s 1 -m 16M -j 1 --strategy two-pass -t "$W/scratch" "$@" >/dev/null 2>"$W/err"; }

# A pid that is gone: a child that has exited and been reaped.
sleep 0 &
dead=$!
wait "$dead"

# The run killed once its scratch file has grown past 1 MB.
"$H" -s 1 -m 16M -j 1 --strategy two-pass -t "$W/scratch" "$W/big.h5" "$W/out/o.h5" &
pid=$!
for _ in $(seq 1 200); do
    s=("$W/scratch"/h5shuf-scratch-o.h5-"$pid"-*)
    [ -f "${s[0]:-}" ] && [ "$(stat -c %s "${s[0]}")" -gt 1000000 ] && break
    sleep 0.02
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
left=("$W/out"/.o.h5.h5shuf-"$pid"-* "$W/scratch"/h5shuf-scratch-o.h5-"$pid"-*)
tag=
if [ ${#left[@]} != 2 ] || [ ! -f "${left[0]}" ] || [ ! -f "${left[1]}" ]; then
    fail "the killed run left ${left[*]} (expected its temporary and its scratch file)"
else
    tag=$(basename "${left[0]}" | sed "s/^\.o\.h5\.h5shuf-$pid-\([0-9a-f]\{8\}\)-.\{6\}\$/\1/")
    [ ${#tag} = 8 ] || fail "the temporary's name has no tag of its process's space: ${left[0]}"
    run --plan "$W/small.h5" "$W/out/o.h5"
    if [ "$(warnings "$W/err")" = 1 ] && grep -q "an interrupted run (process $pid) left 2 files of [0-9.]* MiB for this output, such as $W/.*: a run removes them" "$W/err" &&
        [ -f "${left[0]}" ] && [ -f "${left[1]}" ]; then
        ok "--plan says the run removes the killed run's 2 files, and keeps them: $(cat "$W/err")"
    else
        fail "--plan: $(cat "$W/err"), left: $(listing)"
    fi
    run "$W/small.h5" "$W/out/other.h5"
    [ ! -s "$W/err" ] && [ -f "${left[0]}" ] && [ -f "${left[1]}" ] || fail "a run for another output warns or removes: $(cat "$W/err")"
    rm -f "$W/out/other.h5"
    run "$W/big.h5" "$W/out/o.h5" # the same command
    rc=$?
    if [ "$rc" = 0 ] && [ "$(wc -l <"$W/err")" = 1 ] &&
        grep -q "^h5shuf: warning: removed 2 files of [0-9.]* MiB that an interrupted run (process $pid) left for this output, such as $W/" "$W/err" &&
        [ "$(listing)" = "out/o.h5 " ]; then
        ok "the same command again: exit 0, the directories as a clean run leaves them, one line: $(cat "$W/err")"
    else
        fail "the same command again: exit $rc, $(cat "$W/err"), left: $(listing)"
    fi
    rm -f "$W/out/o.h5"
fi
[ -n "$tag" ] || tag=00000001

# A leftover of a live process (this shell's pid) is no one's leftover yet, with or without a tag.
: >"$W/out/.o.h5.h5shuf-$$-$tag-AbCdEf"
: >"$W/out/.o.h5.h5shuf-$$-AbCdEf"
run "$W/small.h5" "$W/out/o.h5"
[ ! -s "$W/err" ] && [ "$(listing)" = "out/.o.h5.h5shuf-$$-$tag-AbCdEf out/.o.h5.h5shuf-$$-AbCdEf out/o.h5 " ] &&
    ok "a live process's temporaries: not reported, kept" || fail "a live run's temporary: $(cat "$W/err"), left: $(listing)"
rm -f "$W/out/.o.h5.h5shuf-$$-"* "$W/out/o.h5"

# Another user's file is not reported, nor removed (it cannot be ours).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    : >"$W/out/.o.h5.h5shuf-$dead-$tag-GhIjKl"
    chown nobody "$W/out/.o.h5.h5shuf-$dead-$tag-GhIjKl"
    run "$W/small.h5" "$W/out/o.h5"
    [ ! -s "$W/err" ] && [ -f "$W/out/.o.h5.h5shuf-$dead-$tag-GhIjKl" ] && ok "another user's file: not reported, kept" ||
        fail "another user's file: $(cat "$W/err"), left: $(listing)"
    rm -f "$W/out/.o.h5.h5shuf-$dead-$tag-GhIjKl" "$W/out/o.h5"
fi

# Reported and kept: a file --force set aside, a resumable run's temporary, another machine's, an older
# h5shuf's; removed: a set-aside second name of what the output's name holds.
other=$(printf '%08x' $((0x$tag ^ 1)))
echo old >"$W/out/.o.h5.h5shuf-$dead-$tag-old-MnOpQr"
: >"$W/out/.o.h5.h5shuf-$dead-$tag-state-StUvWx"
: >"$W/out/.o.h5.h5shuf-$dead-$other-YzAbCd"
: >"$W/out/.o.h5.h5shuf-$dead-EfGhIj"
kept=$(listing)
run "$W/small.h5" "$W/out/o.h5"
if [ "$(warnings "$W/err")" = 3 ] &&
    grep -q "an interrupted run set 1 file aside, such as $W/out/.o.h5.h5shuf-$dead-$tag-old-MnOpQr: .*move it back" "$W/err" &&
    grep -q "left 2 files of 0.0 MiB for this output, such as its temporaries and scratch, made on another machine, boot or container" "$W/err" &&
    grep -q "an interrupted resumable run left 1 temporary file for this output, such as $W/out/.o.h5.h5shuf-$dead-$tag-state-StUvWx, and its state is not in $W/scratch" "$W/err" &&
    [ "$(listing)" = "${kept}out/o.h5 " ] && [ "$(cat "$W/out/.o.h5.h5shuf-$dead-$tag-old-MnOpQr")" = old ]; then
    ok "set aside, resumable, another machine's and an older h5shuf's files: 3 warnings, all kept"
else
    fail "reported files: $(cat "$W/err"), left: $(listing)"
fi
rm -f "$W/out"/.o.h5.h5shuf-*
ln "$W/out/o.h5" "$W/out/.o.h5.h5shuf-$dead-$tag-old-KlMnOp"
run -f "$W/small.h5" "$W/out/o.h5"
if grep -q "removed 1 file of [0-9.]* MiB that an interrupted run (process $dead) left for this output, such as $W/out/.o.h5.h5shuf-$dead-$tag-old-KlMnOp" "$W/err" &&
    [ "$(listing)" = "out/o.h5 " ]; then
    ok "a set-aside second name of the output's file: removed"
else
    fail "a set-aside second name: $(cat "$W/err"), left: $(listing)"
fi

if [ "$failed" = 0 ]; then
    echo "ok - leftovers of interrupted runs: a dead run's of this machine removed with one line, the rest reported once and kept"
    exit 0
fi
echo "$failed failed"
exit 1
