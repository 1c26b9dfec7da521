#!/usr/bin/env bash
# leftovers.sh - a run finds what an interrupted run (SIGKILL) left for the same output and says so, once,
# without reusing or removing it (issue 26's first step; the names come from issue 25):
#   a two-pass run killed with SIGKILL once its scratch file has grown: the next run for the same output
#   exits 0 with one warning naming 2 files, their size in MiB and one of them; both are still there,
#   unchanged; --plan says it too;
#   a run for another output in the same directory says nothing; nor does one whose leftover's process
#   is alive (a name with this shell's PID), nor one owned by another user (when run as root);
#   a file set aside by --force (".NAME.h5shuf-PID-old-XXXXXX", PID gone) is named first, with what to do.
# Usage: bash tests/leftovers.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata
set -u
H=$1 GEN=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-leftovers.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/out" "$W/scratch"
"$GEN" floats "$W/big.h5" 2000000 16 >/dev/null || exit 1
"$GEN" floats "$W/small.h5" 20000 16 >/dev/null || exit 1
failed=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }
warnings() { grep -c '^h5shuf: warning: ' "$1"; }

# A pid that is gone: a child that has exited and been reaped.
sleep 0 &
dead=$!
wait "$dead"

"$H" -s 1 -m 16M -j 1 --strategy two-pass -t "$W/scratch" "$W/big.h5" "$W/out/o.h5" &
pid=$!
for _ in $(seq 1 200); do
    s=("$W/scratch"/h5shuf-scratch-o.h5-"$pid"-*)
    [ -f "${s[0]}" ] && [ "$(stat -c %s "${s[0]}")" -gt 1000000 ] && break
    sleep 0.02
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
left=("$W/out"/.o.h5.h5shuf-"$pid"-* "$W/scratch"/h5shuf-scratch-o.h5-"$pid"-*)
if [ ${#left[@]} != 2 ] || [ ! -f "${left[0]}" ] || [ ! -f "${left[1]}" ]; then
    fail "the killed run left ${left[*]} (expected its temporary and its scratch file)"
else
    sums=$(md5sum "${left[@]}")
    "$H" -s 1 -m 16M -t "$W/scratch" "$W/small.h5" "$W/out/o.h5" >/dev/null 2>"$W/err"
    rc=$?
    if [ "$rc" != 0 ] || [ "$(wc -l <"$W/err")" != 1 ] || [ "$(warnings "$W/err")" != 1 ] ||
        ! grep -q "an interrupted run left 2 files of [0-9.]* MiB for this output, such as $W/" "$W/err"; then
        fail "the next run for o.h5: exit $rc: $(cat "$W/err")"
    else
        named=$(sed 's/.*such as \(.*\): h5shuf neither.*/\1/' "$W/err")
        [ -f "$named" ] || fail "the warning names $named, which is not there"
        echo "# $(cat "$W/err")"
    fi
    [ "$(md5sum "${left[@]}")" = "$sums" ] || fail "the leftovers were changed or removed"
    "$H" --plan -s 1 -m 16M -t "$W/scratch" "$W/small.h5" "$W/out/o.h5" >/dev/null 2>"$W/err"
    [ "$(warnings "$W/err")" = 1 ] || fail "--plan does not warn: $(cat "$W/err")"
    "$H" -s 1 -m 16M -t "$W/scratch" "$W/small.h5" "$W/out/other.h5" >/dev/null 2>"$W/err"
    [ ! -s "$W/err" ] || fail "a run for another output warns: $(cat "$W/err")"
    rm -f "${left[@]}" "$W/out/o.h5" "$W/out/other.h5"
fi

# A leftover of a live process (this shell's pid) is no one's leftover yet.
: >"$W/out/.o.h5.h5shuf-$$-AbCdEf"
"$H" -s 1 -m 16M -t "$W/scratch" "$W/small.h5" "$W/out/o.h5" >/dev/null 2>"$W/err"
[ ! -s "$W/err" ] || fail "a live run's temporary is reported: $(cat "$W/err")"
rm -f "$W/out/.o.h5.h5shuf-$$-AbCdEf" "$W/out/o.h5"

# Another user's file is not reported (it cannot be ours).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    : >"$W/out/.o.h5.h5shuf-$dead-GhIjKl"
    chown nobody "$W/out/.o.h5.h5shuf-$dead-GhIjKl"
    "$H" -s 1 -m 16M -t "$W/scratch" "$W/small.h5" "$W/out/o.h5" >/dev/null 2>"$W/err"
    [ ! -s "$W/err" ] || fail "another user's file is reported: $(cat "$W/err")"
    rm -f "$W/out/.o.h5.h5shuf-$dead-GhIjKl" "$W/out/o.h5"
fi

# A file --force set aside, and a temporary: the set-aside one is named.
echo old >"$W/out/.o.h5.h5shuf-$dead-old-MnOpQr"
: >"$W/out/.o.h5.h5shuf-$dead-StUvWx"
"$H" -s 1 -m 16M -t "$W/scratch" "$W/small.h5" "$W/out/o.h5" >/dev/null 2>"$W/err"
if [ "$(warnings "$W/err")" != 2 ] ||
    ! grep -q "an interrupted run set 1 file aside, such as $W/out/.o.h5.h5shuf-$dead-old-MnOpQr: .*move it back" "$W/err"; then
    fail "a set-aside file: $(cat "$W/err")"
fi
[ "$(cat "$W/out/.o.h5.h5shuf-$dead-old-MnOpQr")" = old ] || fail "the set-aside file changed"

if [ "$failed" = 0 ]; then
    echo "ok - leftovers of interrupted runs are reported once, and kept"
    exit 0
fi
echo "$failed failed"
exit 1
