#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# symlink_attack.sh - a neighbour who can write the directory h5shuf works in (a group project directory,
# mode 2775, no sticky bit) swaps h5shuf's temporary names for symbolic links to one of the runner's own
# files (victim.txt, 0600, elsewhere).  Three attacks, TRIALS runs each (default 50), an attacker process
# (Python: inotify, or polling the directory for sizes) running beside every run:
#   scratch    the scratch file in -t proj, swapped once it holds more than 1 MiB;
#   creation   the output's temporary file in proj, swapped as soon as it appears;
#   mid-run    the output's temporary file, swapped once it holds more than 1 MiB.
# After every run: the victim is unchanged (bytes and size), and either the run exited 0 with its own
# output at the final name (a regular file, the bytes of an unattacked run) or it exited 1 with one line;
# nothing of h5shuf's is left (the attacker's links aside).  The attacker must have swapped a name in most
# runs (else the test proves nothing): the counts are printed.
# (Attacker and runner are the same user here: what is tested is that h5shuf never writes, truncates or
# moves through a name, which does not depend on who swapped it.)
# Usage: bash tests/symlink_attack.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata [TRIALS]
set -u
H=$1 GEN=$2 TRIALS=${3:-50}
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-attack.XXXXXX")
apid=""
trap '[ -n "$apid" ] && kill "$apid" 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/proj" "$W/home" "$W/out"
chmod 2775 "$W/proj"
chmod 0700 "$W/home"
head -c 4096 /dev/urandom >"$W/victim.orig"
cp "$W/victim.orig" "$W/home/victim.txt"
chmod 0600 "$W/home/victim.txt"
victim_md5=$(md5sum <"$W/home/victim.txt")
"$GEN" floats "$W/in.h5" 200000 16 1 || exit 1 # 12.8 MB: two passes at -m 5M, an output that grows for a while
failed=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }

# The unattacked outputs, the reference bytes.
"$H" -q -s 7 -m 5M -t "$W/out" "$W/in.h5" "$W/out/ref.h5" || { bad "the unattacked run failed"; exit 1; }
ref_md5=$(md5sum <"$W/out/ref.h5")

# attacker DIR PREFIX MINSIZE LOG VICTIM: swap every new name in DIR starting with PREFIX (MINSIZE 0: the
# instant it is created, woken by inotify(7); else once it holds more than MINSIZE bytes, polled) for a
# symbolic link to VICTIM, atomically (symlink, then rename over the name); one line in LOG a swap.  Runs
# until killed.
attacker() {
    /usr/bin/python3 - "$@" <<'PY' &
import ctypes, os, select, struct, sys
d, prefix, minsize, log, victim = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
tmp = os.path.join(d, '.attacker-%d' % os.getpid())
out = open(log, 'a', buffering=1)
def swap(n):
    try:
        os.symlink(victim, tmp)
        os.rename(tmp, os.path.join(d, n))
        out.write(n + '\n')
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
seen = set()
if minsize == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init()
    IN_CREATE = 0x100
    libc.inotify_add_watch(fd, d.encode(), IN_CREATE)
    while True:
        buf = os.read(fd, 65536)
        i = 0
        while i < len(buf):
            _, _, _, ln = struct.unpack_from('iIII', buf, i)
            n = buf[i + 16:i + 16 + ln].rstrip(b'\0').decode()
            i += 16 + ln
            if n.startswith(prefix) and n not in seen:
                seen.add(n)
                swap(n)
else:
    while True:
        for e in os.scandir(d):
            n = e.name
            if n.startswith(prefix) and n not in seen:
                try:
                    if e.stat(follow_symlinks=False).st_size <= minsize:
                        continue
                except OSError:
                    continue
                seen.add(n)
                swap(n)
PY
    apid=$!
}

# attack NAME PREFIX MINSIZE OUTPUT ARGS...: TRIALS runs of h5shuf ARGS beside the attacker.
attack() {
    local name=$1 prefix=$2 minsize=$3 out=$4 swapped=0 passed=0 exits0=0 t rc lines left
    shift 4
    : >"$W/log"
    attacker "$W/proj" "$prefix" "$minsize" "$W/log" "$W/home/victim.txt"
    sleep 0.5 # (the attacker's interpreter starts)
    for t in $(seq 1 "$TRIALS"); do
        rm -f "$out"
        local before after
        before=$(wc -l <"$W/log")
        "$H" -q "$@" >/dev/null 2>"$W/err"
        rc=$?
        sleep 0.05 # (a swap of the last instant is logged)
        after=$(wc -l <"$W/log")
        [ "$after" -gt "$before" ] && swapped=$((swapped + 1))
        lines=$(wc -l <"$W/err")
        local good=1
        [ "$(md5sum <"$W/home/victim.txt")" = "$victim_md5" ] && [ "$(stat -c %s "$W/home/victim.txt")" = 4096 ] || {
            echo "#   $name, run $t: the victim changed"; good=0; cp "$W/victim.orig" "$W/home/victim.txt"; }
        if [ "$rc" = 0 ]; then
            exits0=$((exits0 + 1))
            { [ -f "$out" ] && [ ! -L "$out" ] && [ "$(md5sum <"$out")" = "$ref_md5" ]; } || {
                echo "#   $name, run $t: exit 0 without its own output at $out"; good=0; }
        elif [ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -q '^h5shuf: ' "$W/err"; then
            { [ ! -e "$out" ] || [ -L "$out" ]; } || { echo "#   $name, run $t: failed, but left $out"; good=0; }
        else
            echo "#   $name, run $t: exit $rc, $lines lines on stderr"; sed 's/^/#     /' "$W/err" | head -3; good=0
        fi
        # nothing of h5shuf's left: any name left by the run is the attacker's link
        left=$(find "$W/proj" "$W/out" -mindepth 1 \( -name '*h5shuf*' -o -name '.attacker-*' \) ! -type l | head -3)
        [ -z "$left" ] || { echo "#   $name, run $t: left $left"; good=0; }
        find "$W/proj" -mindepth 1 -type l -delete # the attacker's links, before the next run
        passed=$((passed + good))
    done
    kill "$apid" 2>/dev/null
    wait "$apid" 2>/dev/null
    apid=""
    echo "# $name: $TRIALS runs, $swapped with a name swapped, $exits0 exited 0, $passed safe"
    [ "$passed" = "$TRIALS" ] && ok "$name: no file outside h5shuf's own changed, every run safe" || bad "$name: $((TRIALS - passed)) unsafe runs"
    [ $((swapped * 2)) -ge "$TRIALS" ] && ok "$name: the attacker swapped a name in $swapped of $TRIALS runs" ||
        bad "$name: the attacker swapped a name in only $swapped of $TRIALS runs (the test would prove nothing)"
}

attack "scratch in a shared -t" "h5shuf-scratch-" 1048576 "$W/out/o.h5" -s 7 -m 5M -t "$W/proj" "$W/in.h5" "$W/out/o.h5"
attack "output temporary at creation" ".o.h5.h5shuf-" 0 "$W/proj/o.h5" -s 7 -m 5M -t "$W/out" "$W/in.h5" "$W/proj/o.h5"
attack "output temporary mid-run" ".o.h5.h5shuf-" 1048576 "$W/proj/o.h5" -s 7 -m 5M -t "$W/out" "$W/in.h5" "$W/proj/o.h5"
[ "$failed" -eq 0 ]
