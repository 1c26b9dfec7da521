#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scratch_release.sh - pass 2 gives back the blocks of each pile of the run's own scratch file once it is
# loaded (piles.c h5shuf__pile_release), and never a byte of anything else.  Under strace: a two-pass run
# punches holes (fallocate FALLOC_FL_PUNCH_HOLE) only through a descriptor of its scratch file, and its
# output is the same bytes as the one-pass run's (no scratch) of the same seed, with one and two threads;
# a gather punches nothing in the user's pile file, which it leaves unchanged; inputs are unchanged.
# Usage: bash tests/scratch_release.sh PATH/TO/h5shuf PATH/TO/h5shuf_gendata   (needs strace)
set -u
H=$1 GEN=$2
command -v strace >/dev/null || { echo "not ok - strace is not installed (scripts/test.sh installs it)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/h5shuf-release.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$GEN" floats "$W/in.h5" 60000 64 1 || exit 1
mkdir "$W/out" "$W/scratch"
in_md5=$(md5sum <"$W/in.h5")
failed=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; failed=$((failed + 1)); }
# punches TRACE: "N PATH..." the number of hole punches, then the files they went to (by descriptor: the
# trace is made with strace -y, which names the file of each descriptor argument)
punches() {
    /usr/bin/python3 - "$1" <<'PY'
import re, sys
n, where = 0, set()
for line in open(sys.argv[1]):
    m = re.match(r'(\d+)\s+fallocate\((\d+)<([^>]*)>, (.*)\)\s+=\s+(-?\d+)', line)
    if m and 'FALLOC_FL_PUNCH_HOLE' in m.group(4):
        n += 1
        where.add(m.group(3))
print(n, *sorted(where))
PY
}
traced() { # TRACE COMMAND...: (LeakSanitizer cannot run under ptrace: off for the traced run)
    local t=$1; shift
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -y -e trace=fallocate \
        -o "$t" "$@" >/dev/null 2>"$W/err" || { sed 's/^/#   /' "$W/err"; return 1; }
}
"$H" -q -s 7 -m 1G "$W/in.h5" "$W/out/one-pass.h5" || bad "the one-pass run failed"
for j in 1 2; do
    name="two-pass run, -j $j"
    if ! traced "$W/trace" "$H" -q -s 7 -m 5M -j "$j" -t "$W/scratch" "$W/in.h5" "$W/out/two-pass.h5"; then
        bad "$name: the run failed"; continue
    fi
    read -r n files <<<"$(punches "$W/trace")"
    if [ "$n" -lt 10 ]; then bad "$name: $n hole punches (expected one or more a pile)"; else ok "$name: $n hole punches"; fi
    case $files in
        "$W"/scratch/h5shuf-scratch-*) [[ $files != *" "* ]] && ok "$name: only in the scratch file" || bad "$name: punched $files" ;;
        *) bad "$name: punched $files" ;;
    esac
    cmp -s "$W/out/one-pass.h5" "$W/out/two-pass.h5" && ok "$name: the one-pass run's bytes" || bad "$name: output differs"
    rm -f "$W/out/two-pass.h5"
done
"$H" scatter -q -s 7 -m 5M -t "$W/scratch" "$W/in.h5" "$W/out/piles.h5" || bad "scatter failed"
piles_md5=$(md5sum <"$W/out/piles.h5")
if traced "$W/trace" "$H" gather -q -m 5M -t "$W/scratch" "$W/out/piles.h5" "$W/out/gathered.h5"; then
    read -r n files <<<"$(punches "$W/trace")"
    [ "$n" -eq 0 ] && ok "gather: no hole punched" || bad "gather: $n hole punches in $files"
    [ "$(md5sum <"$W/out/piles.h5")" = "$piles_md5" ] && ok "gather: the pile file unchanged" || bad "gather changed the pile file"
    cmp -s "$W/out/one-pass.h5" "$W/out/gathered.h5" && ok "gather: the one-pass run's bytes" || bad "gather: output differs"
else
    bad "gather failed"
fi
[ "$(md5sum <"$W/in.h5")" = "$in_md5" ] && ok "input unchanged" || bad "input changed"
[ -z "$(ls -A "$W/scratch")" ] && ok "no scratch file left" || bad "scratch files left: $(ls "$W/scratch")"
[ "$failed" -eq 0 ]
